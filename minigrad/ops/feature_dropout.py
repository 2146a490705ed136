"""Feature alpha dropout (torch.nn.functional.feature_alpha_dropout): alpha dropout
(ops/random.py's, for SELU networks) of whole channels, every value of a dropped channel set
to SELU's floor, then the same affine map that keeps a zero-mean, unit-variance input so."""
from minigrad import backend
from minigrad.args import number_arg
from minigrad.ops.random import _SELU_FLOOR
from minigrad.tensor import Tensor


def feature_alpha_dropout(x, p=0.5, training=False):
    """Each channel of each sample of an (N, C, *rest) input (a 2-D one: each value) set
    with probability p to -λα, then y = a·x' + b, a = ((1-p)(1 + p·(λα)²))^-½, b = a·λα·p;
    the identity when not training (PyTorch's default training=False)."""
    op = "feature_alpha_dropout"
    p = number_arg(op, "p", p)  # a one-element tensor too, as PyTorch
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: dropout probability has to be between 0 and 1, but got {p}")
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(x).__name__}")
    # as PyTorch, the dims matter only when channels are drawn: eval, p = 0, an empty input
    # and p = 1 take any shape
    if not training or p == 0.0 or x.numel() == 0:
        return x
    if not backend.is_floating(x.dtype):
        raise TypeError(f"{op}: needs a floating-point tensor, got {x.dtype}")
    if p == 1.0:
        return x * 0.0
    if x.ndim < 2:
        raise ValueError(f"{op}: feature dropout requires at least 2 dimensions in the "
                         f"input (N, C, ...), got shape {x.shape}")
    shape = x.shape[:2] + (1,) * (x.ndim - 2)
    keep = backend.get(x.device).keep_mask(shape, p).astype(x.dtype)
    a = ((1 - p) * (1 + p * _SELU_FLOOR ** 2)) ** -0.5
    shift = (1 - keep) * (a * _SELU_FLOOR) - a * _SELU_FLOOR * p   # a·floor where dropped, + b
    return x * Tensor._make(keep * a, x.device) + Tensor._make(shift, x.device)
