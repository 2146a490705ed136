"""The rest of torch.nn.functional's losses: the margin losses (margin_ranking,
hinge_embedding, cosine_embedding, soft_margin, multilabel_soft_margin, multi_margin,
triplet_margin) and the likelihoods poisson_nll and gaussian_nll. Each is composed from
differentiable ops (gradients of gradients come from those), with PyTorch's arguments (the
deprecated size_average and reduce too, mapped by loss_legacy.py), its reductions and its
side
at each kink: a hinge max(z, 0) is clip(z, min=0), whose gradient at z = 0 is 1, as
PyTorch's clamp_min (multi_margin_loss's, as PyTorch's, is 0 there)."""
import math

from minigrad import backend
from minigrad.args import check_broadcast, number_arg
from minigrad.grad_mode import autocast_float32
from minigrad.ops.activations import logsigmoid, softplus
from minigrad.ops.elementwise import where, log, exp, clip, relu, minimum
from minigrad.ops.index import gather, raw_index
from minigrad.ops.loss import check_reduction, _reduce, _class_weight
from minigrad.ops.loss_legacy import legacy_reduction
from minigrad.ops.norms import pairwise_distance
from minigrad.ops.promotion import lift
from minigrad.tensor import Tensor


def _floating_input(x, op, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: {name} must be floating-point, got {x.dtype}")
    return x


def _target(target, input):
    """target as a tensor beside input, of input's dtype where it is integer or bool (class
    labels ±1, 0/1), as PyTorch's promotion."""
    target = lift(target, input)
    return target if target.dtype.kind == "f" else target.to(dtype=input.dtype)


def margin_ranking_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                        reduction="mean"):
    """max(0, -y·(x1 - x2) + margin): y = 1 asks x1 to rank above x2 by the margin, y = -1
    below. The three must have the same number of dims (and broadcast), as PyTorch."""
    op = "margin_ranking_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, op)
    _floating_input(input1, op, "input1")
    check_reduction(reduction, op)
    margin = number_arg(op, "margin", margin)
    target = _target(target, input1)
    input1, input2 = autocast_float32(input1), autocast_float32(input2)   # (float32 list)
    if not input1.ndim == input2.ndim == target.ndim:
        raise ValueError(f"{op}: input1, input2 and target must have the same number of "
                         f"dims, got shapes {input1.shape}, {input2.shape} and "
                         f"{target.shape}")
    check_broadcast(op, input1.shape, input2.shape, target.shape)
    return _reduce(clip(-target * (input1 - input2) + margin, min=0), reduction)


def hinge_embedding_loss(input, target, margin=1.0, size_average=None, reduce=None,
                         reduction="mean"):
    """x where y = 1, max(0, margin - x) where y = -1 (x a distance, y whether the pair is
    alike), as PyTorch (a y other than ±1 counts both terms)."""
    op = "hinge_embedding_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, op)
    _floating_input(input, op)
    check_reduction(reduction, op)
    margin = number_arg(op, "margin", margin)
    target = lift(target, input)
    check_broadcast(op, input.shape, target.shape)
    input = autocast_float32(input)     # (on torch's float32 autocast list)
    # where, not a product with a 0/1 mask: an inf distance must not give inf·0
    apart = where(target != 1, clip(margin - input, min=0), 0.0)
    alike = where(target != -1, input, 0.0)
    return _reduce(apart + alike, reduction)


def soft_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """log(1 + e^(-y·x)) for labels y = ±1, as PyTorch, but overflow-free: PyTorch's is inf
    (and its gradient NaN) where -y·x passes ~89 in float32; here it is -y·x."""
    op = "soft_margin_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, op)
    _floating_input(input, op)
    check_reduction(reduction, op)
    target = _target(target, input)
    if tuple(check_broadcast(op, input.shape, target.shape)) != input.shape:
        raise ValueError(f"{op}: target of shape {target.shape} must broadcast to the "
                         f"input's shape {input.shape}")
    return _reduce(softplus(-target * input, 1.0, math.inf), reduction)


def multilabel_soft_margin_loss(input, target, weight=None, size_average=None, reduce=None,
                                reduction="mean"):
    """-(y·log σ(x) + (1 - y)·log(1 - σ(x))) for 0/1 targets y, times weight (if given),
    averaged over the classes (the last dim): one loss per sample, then reduced, as
    PyTorch."""
    op = "multilabel_soft_margin_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, op)
    _floating_input(input, op)
    check_reduction(reduction, op)
    if input.ndim == 0:
        raise ValueError(f"{op}: input must have a class dim (the last), got a 0-d tensor")
    target = _target(target, input)
    shapes = [input.shape, target.shape] + ([] if weight is None else [weight.shape])
    if tuple(check_broadcast(op, *shapes)) != input.shape:
        raise ValueError(f"{op}: target (and weight) of shapes {shapes[1:]} must broadcast "
                         f"to the input's shape {input.shape}")
    loss = -(target * logsigmoid(input) + (1 - target) * logsigmoid(-input))
    if weight is not None:
        loss = loss * weight
    return _reduce(loss.sum(-1) / input.shape[-1], reduction)


def multi_margin_loss(input, target, p=1, margin=1.0, weight=None, size_average=None,
                      reduce=None, reduction="mean"):
    """Σ_{j ≠ y} max(0, margin - x[y] + x[j])^p / C for each row x of (N, C) logits (or one
    (C,) row) and its class y, times weight[y] if given: the multi-class hinge loss, as
    PyTorch (p 1 or 2; the gradient at the hinge is 0, as PyTorch's)."""
    op = "multi_margin_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, op)
    if p not in (1, 2) or isinstance(p, bool):
        raise ValueError(f"{op}: only p == 1 and p == 2 are supported, got p={p!r}")
    margin = number_arg(op, "margin", margin)
    _floating_input(input, op)
    check_reduction(reduction, op)
    if input.ndim > 2 or (input.ndim and input.shape[-1] == 0):
        raise ValueError(f"{op}: expected a non-empty (C,) vector or (N, C) matrix (N may "
                         f"be 0), got shape {input.shape}")
    input = autocast_float32(input)     # (on torch's float32 autocast list)
    rows = input.reshape(1, 1) if input.ndim == 0 else \
        input.reshape(1, -1) if input.ndim == 1 else input
    target = target if isinstance(target, Tensor) else lift(target, input)
    if target.dtype.kind not in "iu":
        raise TypeError(f"{op}: target must hold integer class indices, got {target.dtype}")
    if target.numel() != rows.shape[0] or target.ndim > 1:
        raise ValueError(f"{op}: target should hold one class per sample, {rows.shape[0]} "
                         f"for an input of shape {input.shape}, got shape {target.shape}")
    if weight is not None and (not isinstance(weight, Tensor) or weight.ndim != 1):
        raise ValueError(f"{op}: weight must be one-dimensional (one per class), got "
                         f"{getattr(weight, 'shape', type(weight).__name__)}")
    xp, c = rows.backend.xp, rows.shape[1]
    t = raw_index(target, rows, op, "target")            # (on the input's device)
    t = t.reshape(-1).astype(backend.int64, copy=False)
    bad = (t < 0) | (t >= c)
    if bool(bad.any()):                          # (one device sync, as cross_entropy's)
        raise IndexError(f"{op}: target {int(t[bad][0])} is out of range for {c} classes "
                         f"(valid: 0..{c - 1})")
    z = margin - gather(rows, 1, t[:, None]) + rows                  # (N, C)
    hinge = relu(z) if p == 1 else relu(z) ** 2
    own = xp.arange(c) == t[:, None]                                 # the target's column
    hinge = where(Tensor._make(own, rows.device), 0.0, hinge)
    if weight is not None:
        w = _class_weight(weight, rows, op)._data[t]
        hinge = hinge * Tensor._make(w[:, None], rows.device)
    loss = hinge.sum(1) / c
    if reduction == "none":
        return loss.reshape(target.shape if input.ndim < 2 else (rows.shape[0],))
    return _reduce(loss, reduction)


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2, eps=1e-6, swap=False,
                        size_average=None, reduce=None, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0), d the pairwise p-norm distance (with eps, as
    pairwise_distance), over the last dim: the anchor nearer its positive than its
    negative by the margin. swap takes the smaller of d(a, n) and d(p, n) (Balntas et al.
    2016). As PyTorch: margin > 0, the three of one number of dims."""
    op = "triplet_margin_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, op)
    if not number_arg(op, "margin", margin) > 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    for name, x in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        _floating_input(x, op, name)
    check_reduction(reduction, op)
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ValueError(f"{op}: anchor, positive and negative must have the same number of "
                         f"dims, got shapes {anchor.shape}, {positive.shape} and "
                         f"{negative.shape}")
    if anchor.ndim == 0:
        raise ValueError(f"{op}: the inputs need a feature dim (the last), got 0-d tensors")
    check_broadcast(op, anchor.shape, positive.shape, negative.shape)
    d_pos = pairwise_distance(anchor, positive, p, eps)
    d_neg = pairwise_distance(anchor, negative, p, eps)
    if swap:
        d_neg = minimum(d_neg, pairwise_distance(positive, negative, p, eps))
    return _reduce(clip(margin + d_pos - d_neg, min=0), reduction)


def poisson_nll_loss(input, target, log_input=True, full=False, size_average=None, eps=1e-8,
                     reduce=None, reduction="mean"):
    """The Poisson negative log-likelihood of counts `target` under the rate λ = e^input
    (log_input=True: e^input - target·input) or λ = input (input - target·log(input + eps)),
    as PyTorch; full adds Stirling's approximation of log(target!), target·log(target) -
    target + ½log(2π·target), where target > 1."""
    op = "poisson_nll_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, op)
    _floating_input(input, op)
    check_reduction(reduction, op)
    eps = number_arg(op, "eps", eps)
    target = _target(target, input)
    check_broadcast(op, input.shape, target.shape)
    input, target = autocast_float32(input), autocast_float32(target)   # (float32 list)
    if log_input:
        loss = exp(input) - target * input
    else:
        loss = input - target * log(input + eps)
    if full:
        big = target > 1                        # log only of those: no log(0), no warning
        t = where(big, target, 2.0)
        stirling = t * log(t) - t + 0.5 * log(2 * math.pi * t)
        loss = loss + where(big, stirling, 0.0)
    return _reduce(loss, reduction)


def gaussian_nll_loss(input, target, var, full=False, eps=1e-6, reduction="mean"):
    """½(log v + (input - target)²/v), v = max(var, eps), the Gaussian negative
    log-likelihood of target under mean input and variance var, as PyTorch; full adds
    ½log(2π). var has input's shape, or one dim fewer (or that dim 1): one variance for
    the last dim's entries; a number is one for all. Where eps clamps var the gradient
    still reaches it (PyTorch clamps without recording)."""
    op = "gaussian_nll_loss"
    _floating_input(input, op)
    if backend.is_scalar(var) and not isinstance(var, bool):
        if not var >= 0:
            raise ValueError(f"{op}: var has negative entry/entries, got {var}")
        var = lift(float(var), input)                 # 0-d: it broadcasts
    elif not isinstance(var, Tensor):
        raise TypeError(f"{op}: var must be a tensor or a number, got {type(var).__name__}")
    elif bool((var._data < 0).any()):
        raise ValueError(f"{op}: var has negative entry/entries")
    if var.ndim and var.shape != input.shape:
        if input.ndim and var.shape == input.shape[:-1]:      # one variance per row
            var = var.unsqueeze(-1)
        elif not (var.ndim == input.ndim and sum(
                v for i, v in zip(input.shape, var.shape) if i != v) == 1):
            raise ValueError(f"{op}: var is of incorrect size: {var.shape} for an input of "
                             f"shape {input.shape} (give the input's shape, that shape less "
                             f"its last dim, or with one dim of size 1)")
    check_reduction(reduction, op)
    eps = number_arg(op, "eps", eps)
    target = _target(target, input)
    check_broadcast(op, input.shape, target.shape)
    # var - var.detach() is 0 with var's gradient: v is eps there and the gradient passes
    v = where(var < eps, (var - var.detach()) + eps, var)
    loss = 0.5 * (log(v) + (input - target) ** 2 / v)
    if full:
        loss = loss + 0.5 * math.log(2 * math.pi)
    return _reduce(loss, reduction)


def cosine_embedding_loss(input1, input2, target, margin=0.0, size_average=None, reduce=None,
                          reduction="mean"):
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1 (0 for any
    other y), the cosine over the last dim of (N, D) inputs with (N,) targets, or of (D,)
    inputs with a 0-d target; as PyTorch, whose cosine adds 1e-12 to each squared norm."""
    op = "cosine_embedding_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, op)
    _floating_input(input1, op, "input1")
    _floating_input(input2, op, "input2")
    check_reduction(reduction, op)
    margin = number_arg(op, "margin", margin)
    target = lift(target, input1)
    if target.ndim > 1:
        raise ValueError(f"{op}: expected a 0-d or 1-d target, got shape {target.shape} "
                         f"(multi-target is not supported)")
    want = target.ndim + 1
    if input1.ndim != want or input2.ndim != want:
        raise ValueError(f"{op}: a {target.ndim}-d target expects {want}-d inputs, got "
                         f"shapes {input1.shape} and {input2.shape}")
    check_broadcast(op, input1.shape, input2.shape)
    check_broadcast(op, input1.shape[:-1], input2.shape[:-1], target.shape)
    d = want - 1
    input1, input2 = autocast_float32(input1), autocast_float32(input2)   # (float32 list:
    dot = (input1 * input2).sum(d)                      # the products too, not just sums)
    norms = ((input1 * input1).sum(d) + 1e-12) * ((input2 * input2).sum(d) + 1e-12)
    cos = dot / norms.sqrt()
    loss = where(target == 1, 1 - cos, 0.0) + where(target == -1, clip(cos - margin, min=0),
                                                    0.0)
    return _reduce(loss, reduction)
