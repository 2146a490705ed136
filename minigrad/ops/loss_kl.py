"""The Kullback-Leibler divergence loss, kl_div, as PyTorch's: pointwise, with the
'batchmean' reduction that is the maths' KL divergence per sample."""
import math
import warnings

from minigrad.args import check_broadcast
from minigrad.ops.elementwise import where, log, exp, lift
from minigrad.ops.loss import _reduce
from minigrad.ops.loss_legacy import legacy_reduction


_KL_MEAN = ("kl_div: reduction='mean' divides the total loss by both the batch size and the "
            "support size. 'batchmean' divides only by the batch size, and aligns with the KL "
            "div math definition. 'mean' will be changed to behave the same as 'batchmean' in "
            "the next major release (PyTorch's warning).")


def kl_div(input, target, size_average=None, reduce=None, reduction="mean",
           log_target=False):
    """Pointwise KL divergence of target from the distribution whose log-probabilities are
    `input`, as PyTorch: target·(log target - input), where a target of 0 contributes 0
    (xlogy: 0·log 0 = 0), or with log_target=True e^target·(target - input).
    reduction="batchmean" sums and divides by the batch size (input.shape[0]): the maths'
    KL divergence per sample; "mean" averages over every element, with PyTorch's warning.
    The target's gradient where it is 0 is -input (the 0·log 0 term counts as the constant
    0 there); PyTorch's is NaN (0/0). The deprecated size_average and reduce replace
    reduction, without the 'mean' warning, as PyTorch's."""
    legacy = size_average is not None or reduce is not None
    if legacy:
        reduction = legacy_reduction(size_average, reduce, "kl_div")
    if reduction not in ("mean", "batchmean", "sum", "none"):
        raise ValueError(f"kl_div: reduction must be 'mean', 'batchmean', 'sum' or 'none', "
                         f"got {reduction!r}")
    if input.dtype.kind != "f":
        raise TypeError(f"kl_div: input (log-probabilities) must be floating-point, got "
                        f"{input.dtype}")
    target = lift(target, input)
    check_broadcast("kl_div", input.shape, target.shape)
    if reduction == "mean" and not legacy:
        warnings.warn(_KL_MEAN, stacklevel=2)
    if log_target:
        loss = exp(target) * (target - input)
    else:
        positive = target > 0              # log only of those: no log(0), no warning
        t_log_t = target * log(where(positive, target, 1.0))
        # 0·log 0 = 0; a negative or NaN target gives NaN, as xlogy
        loss = where(target >= 0, t_log_t, math.nan) - target * input
    if reduction == "batchmean":
        if input.ndim and input.shape[0] == 0:           # no rows: NaN, as PyTorch, without
            return loss.sum() * math.nan                 # NumPy's 0/0 warnings
        return loss.sum() / input.shape[0] if input.ndim else loss.sum()
    return _reduce(loss, reduction)
