"""Losses. Cross-entropy is fused (log-softmax and negative log-likelihood in one op, with
PyTorch's `ignore_index` and `label_smoothing`; with a class `weight` it is composed, as it
is against class probabilities, cross_entropy_probs.py); the others are compositions of
differentiable ops, so their gradients and gradients of gradients come from those ops.
kl_div is in loss_kl.py; the deprecated size_average and reduce map to a reduction in
loss_legacy.py."""
from minigrad import backend
from minigrad.autograd import Function
from minigrad.grad_mode import autocast_float32
from minigrad.tensor import Tensor
from minigrad.ops.softmax import softmax, log_softmax, log_softmax_array
from minigrad.ops.huber import huber
from minigrad.ops.index import raw_index, gather
from minigrad.args import int_arg, not_a_tensor, number_arg, warn_if_broadcast
from minigrad.ops.elementwise import where, log, lift, maximum
from minigrad.ops.math import log1p
from minigrad.ops.activations import log1p_exp_parts
from minigrad.ops.cross_entropy_probs import is_probabilities, probability_cross_entropy
from minigrad.ops.loss_legacy import legacy_reduction


class CrossEntropy(Function):
    """loss_i = -(1-ε)·log p[target_i] - ε/C·Σ_c log p[c], p = softmax(logits_i); rows whose
    target is ignore_index count for nothing; 'mean' divides by the rows that count."""
    fresh_grads = True                                   # see Function.fresh_grads

    def forward(self, logits, target, ignore_index, label_smoothing, reduction):
        xp = self.xp
        n, c = logits.shape
        logp = log_softmax_array(xp, logits, 1)
        valid = target != ignore_index
        t = xp.where(valid, target, 0)
        nll = -xp.take_along_axis(logp, t[:, None], axis=1)[:, 0]
        if label_smoothing:
            nll = (1 - label_smoothing) * nll - label_smoothing * logp.mean(axis=1)
        nll = xp.where(valid, nll, 0)   # not ·valid: an ignored row's log p may be -inf
        # gradient pieces: dloss/dlogits = (p - q) * weight, q the smoothed one-hot target
        # (a comparison, not put_along_axis: CuPy 13 lacks it)
        self.q = (xp.arange(c) == t[:, None]).astype(logits.dtype)
        if label_smoothing:
            self.q *= 1 - label_smoothing
            self.q += label_smoothing / c
        self.weight = valid.astype(logits.dtype)
        self.reduction = reduction
        self.probs = xp.exp(logp)
        if reduction == "none":
            return nll
        if reduction == "sum":
            return nll.sum()
        # mean over the rows that count, computed on the device (no sync to ask if any do);
        # none do: nan, as PyTorch (1/max(count, 1) keeps the division itself warning-free)
        count = valid.sum().astype(logits.dtype)  # an int64 count would upcast float32 to 64
        inv = xp.where(count > 0, 1 / xp.maximum(count, 1), xp.nan).astype(logits.dtype)
        # the gradient weight is 1/max(count, 1), not inv: with every target ignored the
        # loss is nan but its gradient is 0, as PyTorch (a batch of padding only must not
        # put NaN into every parameter)
        self.weight *= (1 / xp.maximum(count, 1)).astype(logits.dtype)
        return nll.sum() * inv

    # an ignored row's gradient is 0 even where g is NaN (the loss of a batch of padding
    # only, NaN, passed through another op), as PyTorch's: where, not a product with 0
    def backward(self, g):
        logits = self.inputs[0]
        p = softmax(logits, 1)          # a graph of the logits: gradients of gradients
        w = self.const(self.weight[:, None])
        g = g.reshape(-1, 1) if self.reduction == "none" else g
        ignored = self.const(self.weight[:, None] == 0)
        return where(ignored, 0.0, (p - self.const(self.q)) * (w * g))

    def backward_arrays(self, g):
        w = self.weight[:, None] * (g.reshape(-1, 1) if self.reduction == "none" else g)
        return (self.xp.where(self.weight[:, None] == 0, 0, (self.probs - self.q) * w),)


def cross_entropy(input, target, weight=None, size_average=None, ignore_index=-100,
                  reduce=None, reduction="mean", label_smoothing=0.0):
    """Cross-entropy of logits against integer class targets, as PyTorch: (N, C) against
    (N,), (N, C, d1, ...) against (N, d1, ...) (the class dim second), or (C,) against a 0-d
    target. The mean over the targets that are not ignore_index (reduction="mean"), their
    sum ("sum"), or one loss per target ("none"); label_smoothing mixes in the uniform
    distribution. With `weight` (one per class) the mean is weighted, as nll_loss's.
    A floating target of the input's shape holds class probabilities, as PyTorch's
    (probability_cross_entropy, in cross_entropy_probs.py)."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, 'cross_entropy')
    int_arg("cross_entropy", "ignore_index", ignore_index)
    if not isinstance(input, Tensor) or target is None:
        raise not_a_tensor("cross_entropy", *_missing(input, target))
    input = autocast_float32(input)     # (on torch's float32 autocast list)
    if not 0.0 <= number_arg("cross_entropy", "label_smoothing", label_smoothing) <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got "
                         f"{label_smoothing}")
    check_reduction(reduction, "cross_entropy")
    if is_probabilities(input.shape, target):
        return probability_cross_entropy(input, target, weight, ignore_index, reduction,
                                         float(label_smoothing))
    logits, t, shape = _class_targets(input, target, ignore_index, "cross_entropy")
    if weight is None:                               # the fused op: GPT's loss
        half = logits.dtype == backend.float16       # float32 inside, as softmax's
        loss = CrossEntropy.apply(logits.to(dtype=backend.float32) if half else logits,
                                  target=t, ignore_index=ignore_index,
                                  label_smoothing=float(label_smoothing), reduction=reduction)
        loss = loss.to(dtype=logits.dtype) if half else loss
    else:
        loss = _weighted_cross_entropy(logits, t, weight, ignore_index, reduction,
                                       float(label_smoothing))
    return loss.reshape(shape) if reduction == "none" else loss


def _weighted_cross_entropy(logits, t, weight, ignore_index, reduction, eps):
    """PyTorch's weighted (and smoothed) cross-entropy, composed: (1-ε)·nll + ε/C·smooth,
    smooth_i = -Σ_c w_c log p_ic, where 'mean' divides both sums by Σ w[t_i] over the rows
    that count."""
    w = _class_weight(weight, logits, "cross_entropy")
    logp = log_softmax(logits, 1)
    nll = nll_loss(logp, t, w, ignore_index=ignore_index, reduction=reduction)
    if not eps:
        return nll
    valid = t != ignore_index
    smooth = where(Tensor._make(valid, logits.device), -(logp * w).sum(1), 0.0)
    if reduction == "mean":                          # nll_loss's denominator, Σ w[t_i]
        smooth = _weighted_mean(smooth, _row_weights(w, t, valid), valid)
    elif reduction == "sum":
        smooth = smooth.sum()
    return (1 - eps) * nll + (eps / logits.shape[1]) * smooth


def nll_loss(input, target, weight=None, size_average=None, ignore_index=-100, reduce=None,
             reduction="mean"):
    """Negative log-likelihood of log-probabilities at integer class targets (the shapes of
    cross_entropy): loss_i = -weight[t_i]·input[i, t_i], and 0 where t_i is ignore_index.
    "mean" divides the sum by the summed weights of the targets that count (a weighted mean,
    as PyTorch); with none counting it is nan, with a zero gradient."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, 'nll_loss')
    if not isinstance(input, Tensor) or target is None:
        raise not_a_tensor("nll_loss", *_missing(input, target))
    input = autocast_float32(input)     # (on torch's float32 autocast list)
    input, t, shape = _class_targets(input, target, ignore_index, "nll_loss")
    check_reduction(reduction, "nll_loss")
    xp, dtype, device = input.backend.xp, input.dtype, input.device
    valid = t != ignore_index
    w = valid.astype(dtype) if weight is None else \
        _row_weights(_class_weight(weight, input, "nll_loss"), t, valid)
    t = xp.where(valid, t, 0)                       # an ignored row reads class 0, counts 0
    picked = gather(input, 1, t[:, None])[:, 0]     # log p of each row's target
    # a where, not ·0: an ignored row's log p may be -inf, and -inf·0 is NaN (and a warning)
    losses = -where(Tensor._make(valid, device), picked, 0.0) * Tensor._make(w, device)
    if reduction == "mean":
        return _weighted_mean(losses, w, valid)
    return losses.reshape(shape) if reduction == "none" else losses.sum()


def _row_weights(weight, t, valid):
    """weight[t_i] for each row (an array), 0 where the row is ignored."""
    return weight._data[weight.backend.xp.where(valid, t, 0)] * valid


def _weighted_mean(losses, w, valid):
    """Σ losses / Σ w, w the rows' weights (0 where a row does not count). No device sync to
    ask whether any row counts: when none does, the sum (0) is divided by 1 and a constant
    nan added, so the loss is nan and its gradient 0, as PyTorch (a batch of padding only
    must not put NaN into every weight)."""
    xp, dtype, device = losses.backend.xp, losses.dtype, losses.device
    none = ~valid.any()
    total = Tensor._make(xp.where(none, 1, w.sum()).astype(dtype), device)
    nan = Tensor._make(xp.where(none, xp.nan, 0).astype(dtype), device)
    return losses.sum() / total + nan


def _class_targets(input, target, ignore_index, op):
    """(input, targets, loss shape): input as (rows, C) and its integer targets as an int64
    (rows,) array on input's device, checked (shapes, dtypes, and every target that counts
    in 0..C-1: one device sync), and the shape of one loss per target."""
    int_arg(op, "ignore_index", ignore_index)
    t = raw_index(target, input, op, "target")
    if not hasattr(t, "dtype"):
        t = input.backend.from_numpy(backend.to_host(t))
    shape = tuple(t.shape)
    if input.ndim == 1 and shape == ():              # one row of C logits, one target
        input, t = input.reshape(1, input.shape[0]), t.reshape(1)
    elif input.ndim >= 2 and shape == (input.shape[0],) + input.shape[2:]:
        if input.ndim > 2:                           # (N, C, d1, ...) -> (N·d1·..., C)
            input = input.permute((0, *range(2, input.ndim), 1)).reshape(-1, input.shape[1])
            t = t.reshape(-1)
    else:
        probs = ("; targets of class probabilities (the input's shape) are cross_entropy's, "
                 "not nll_loss's (as PyTorch)") if shape == input.shape and op == "nll_loss" \
            else ""
        raise ValueError(f"{op}: expected input (N, C) with targets (N,), or (N, C, d1, ...) "
                         f"with targets (N, d1, ...) (the class dim second, as PyTorch), got "
                         f"{input.shape} and {shape}{probs}")
    if input.dtype.kind != "f":
        raise TypeError(f"{op}: the input must be floating-point, got {input.dtype}")
    if t.dtype.kind not in "iu":
        raise TypeError(f"{op}: targets must be integer class indices, got {t.dtype}")
    t = t.astype(backend.int64, copy=False)       # a uint8 t != -100 would not compare
    c = input.shape[1]
    bad = (t != ignore_index) & ((t < 0) | (t >= c))
    if bool(bad.any()):
        raise IndexError(f"{op}: target {int(t[bad][0])} is out of range for {c} classes "
                         f"(valid: 0..{c - 1}, or ignore_index={ignore_index})")
    return input, t, shape


def _class_weight(weight, input, op):
    """A (C,) weight per class, of input's dtype and device, as PyTorch requires (it is a
    constant here: PyTorch refuses a weight that requires grad, and so do we)."""
    c = input.shape[1]
    if not isinstance(weight, Tensor) or weight.shape != (c,) or weight.dtype != input.dtype \
            or weight.device != input.device:
        raise TypeError(f"{op}: weight must be a tensor of shape ({c},) (one per class), "
                        f"dtype {input.dtype} and device {input.device!r} as the input, got "
                        f"{_describe(weight)}")
    if weight.requires_grad:
        raise RuntimeError(f"{op}: weight requires grad, but the loss is not differentiable "
                           f"with respect to it (as PyTorch); pass weight.detach()")
    return weight


def _missing(input, target):
    return ("target", target) if isinstance(input, Tensor) else ("input", input)


def _describe(t):
    if not isinstance(t, Tensor):
        return type(t).__name__
    return f"shape {t.shape}, dtype {t.dtype}, device {t.device!r}"


def binary_cross_entropy_with_logits(input, target, weight=None, size_average=None,
                                     reduce=None, reduction="mean", pos_weight=None):
    """Binary cross-entropy of logits x against targets y in [0, 1], as PyTorch:
    (1 - y)·x + p·log(1 + e⁻ˣ), p = 1 + (pos_weight - 1)·y, with log(1 + e⁻ˣ) = -log σ(x)
    = relu(-x) + log(1 + e^-|x|), which never overflows. Without pos_weight this is the
    stable max(x, 0) - x·y + log(1 + e^-|x|): finite and exact for logits of any size.
    pos_weight weighs the positive term (one per class, broadcasting along the last dim);
    weight multiplies each element's loss."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, 'binary_cross_entropy_with_logits')
    op = "binary_cross_entropy_with_logits"
    target, weight, pos_weight = _binary_args(input, target, weight, pos_weight, op)
    check_reduction(reduction, op)
    if pos_weight is None:                          # w = 1: p = 1, the plain loss
        pos_weight = Tensor._make(input.backend.xp.ones((), input.dtype), input.device)
    loss = BCEWithLogits.apply(input, target, pos_weight)
    return _reduce(loss if weight is None else loss * weight, reduction)


class BCEWithLogits(Function):
    """The per-element loss (1 - y)·x + p·log(1 + e⁻ˣ), p = 1 + (w - 1)·y, w the
    pos_weight, as one op: its gradient in x, written pσ(x) - wy (σ(x) - y for w = 1),
    keeps its digits where the terms' own gradients, 1 - y and -pσ(-x), cancel (y = 0,
    x = -20 in float32: 2.1e-9 from one σ, where 1 - 1 + 2.1e-9 rounded to 0)."""
    def forward(self, x, y, w):
        xp = self.xp
        p = (w - 1) * y + 1
        small = xp.log1p(xp.exp(-xp.abs(x)))
        # relu(-x) first meets (1 - y)·x, which it cancels for y = 0, x < 0 (x = -50: 0,
        # then + e^-50, where PyTorch's order rounds the loss to 0)
        return ((1 - y) * x + p * xp.maximum(-x, 0)) + p * small

    def backward(self, g):                          # Tensor ops: twice differentiable
        x, y, w = self.inputs
        need_x, need_y, need_w = self.needs_input_grad
        gx = g * (((w - 1) * y + 1) * x.sigmoid() - w * y) if need_x else None
        softplus = None
        if need_y or need_w:                        # log(1 + e⁻ˣ), overflow-free
            large, small = log1p_exp_parts(-x)
            softplus = large + small
        gy = g * ((w - 1) * softplus - x) if need_y else None
        gw = g * y * softplus if need_w else None
        return gx, gy, gw


def binary_cross_entropy(input, target, weight=None, size_average=None, reduce=None,
                         reduction="mean"):
    """-weight·(y·log x + (1 - y)·log(1 - x)) for probabilities x and targets y, both in
    [0, 1] (checked, one device sync each), target of input's dtype (as PyTorch). Each log
    is at least -100, as PyTorch, so x = 0 or 1 gives a finite loss. On logits,
    binary_cross_entropy_with_logits is exact where σ then log loses digits."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, 'binary_cross_entropy')
    op = "binary_cross_entropy"
    target, weight, _ = _binary_args(input, target, weight, None, op)
    if target.dtype != input.dtype:
        raise TypeError(f"{op}: target must have the input's dtype {input.dtype}, got "
                        f"{target.dtype} (as PyTorch); convert it with .to(dtype=...)")
    check_reduction(reduction, op)
    for name, t in (("input", input), ("target", target)):
        if bool((~((t._data >= 0) & (t._data <= 1))).any()):     # NaN counts as outside
            raise ValueError(f"{op}: all elements of {name} should be between 0 and 1, got "
                             f"values from {float(t._data.min())} to {float(t._data.max())}")
    loss = BinaryCrossEntropy.apply(input, target)
    return _reduce(loss if weight is None else loss * weight, reduction)


_EPS = 9.999999960041972e-13           # PyTorch's floor 1e-12, as the float32 it stores it in


class BinaryCrossEntropy(Function):
    """-(y·log x + (1 - y)·log(1 - x)) per element, each log at least -100 (PyTorch's
    clamp), with PyTorch's gradient (x - y)/max(x(1 - x), 1e-12) rather than the clamped
    function's own: that is 0 where a log is clamped, so a confidently wrong x (0 where
    y = 1) would get no push at all; PyTorch's gives it a large one. The target's gradient
    is log(1 - x) - log x, as PyTorch's (unclamped)."""
    def forward(self, x, y):
        xp = self.xp
        # log x, and log(1 - x) as log1p(-x) (1 - x rounds away x < 6e-8 in float32), each
        # clamped at -100; the inner wheres keep log(0) and its warning out
        log_x = xp.where(x > 0, xp.maximum(xp.log(xp.where(x > 0, x, 1)), -100), -100)
        log_1mx = xp.where(x < 1, xp.maximum(xp.log1p(-xp.where(x < 1, x, 0)), -100), -100)
        return -(y * log_x + (1 - y) * log_1mx)
    def backward(self, g):
        x, y = self.inputs
        gx = g * (x - y) / maximum(x * (1 - x), _EPS)
        return gx, (g * (log1p(-x) - log(x)) if y.requires_grad else None)


def _binary_args(input, target, weight, pos_weight, op):
    """The checks both binary cross-entropies share: floating input and target (a NumPy
    array becomes a tensor) of the same shape (PyTorch does not broadcast the target
    here); weight and pos_weight, if given, broadcast to that shape and take input's dtype
    (PyTorch's result keeps it: no float32 -> float64 upcast)."""
    target = lift(target, input)
    if target.shape != input.shape:
        raise ValueError(f"{op}: target size {target.shape} must be the same as input size "
                         f"{input.shape}")
    if input.dtype.kind != "f" or target.dtype.kind != "f":
        raise TypeError(f"{op}: input and target must be floating-point, got {input.dtype} "
                        f"and {target.dtype}; convert targets with .float()")

    def fit(w, name):
        if w is None:
            return None
        w = lift(w, input)
        try:
            fits = tuple(backend.broadcast_shapes(w.shape, input.shape)) == input.shape
        except ValueError:
            fits = False
        if not fits:
            raise ValueError(f"{op}: {name} of shape {w.shape} must broadcast to the input's "
                             f"shape {input.shape}")
        return w.to(dtype=input.dtype)
    return target, fit(weight, "weight"), fit(pos_weight, "pos_weight")


def l1_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """|input - target|, averaged ('mean'), summed ('sum') or as it is ('none'); at
    input = target the gradient is 0, as PyTorch. target broadcasts against input, with
    PyTorch's warning when the shapes differ ((N,) against (N, 1) gives (N, N)). `weight`
    (input's shape) scales each element's loss, and 'mean' is then Σ weight·loss / Σ weight,
    as PyTorch's."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, 'l1_loss')
    check_reduction(reduction, "l1_loss")
    warn_if_broadcast("l1_loss", input, target)
    input, target = autocast_float32(input), autocast_float32(target)
    return _weighted((input - target).abs(), weight, input, "l1_loss", reduction)


def mse_loss(input, target, size_average=None, reduce=None, reduction="mean", weight=None):
    """Squared differences, averaged ('mean'), summed ('sum') or as they are ('none'); target
    broadcasts against input, with PyTorch's warning when the shapes differ. `weight` as
    l1_loss's."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, 'mse_loss')
    check_reduction(reduction, "mse_loss")
    warn_if_broadcast("mse_loss", input, target)
    return _weighted((input - target) ** 2, weight, input, "mse_loss", reduction)


def smooth_l1_loss(input, target, size_average=None, reduce=None, reduction="mean",
                   beta=1.0):
    """½d²/β where |d| < β, else |d| - ½β, d = input - target (Huber's loss divided by β),
    as PyTorch; beta=0 is l1_loss. At |d| = β the gradient is ±1 from either side and the
    second derivative 0 (the linear side), as PyTorch's double backward."""
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, 'smooth_l1_loss')
    check_reduction(reduction, "smooth_l1_loss")
    if not number_arg("smooth_l1_loss", "beta", beta) >= 0:
        raise ValueError(f"smooth_l1_loss: beta must be >= 0 (negative values are not "
                         f"supported), got {beta}")
    warn_if_broadcast("smooth_l1_loss", input, target)
    d = input - target
    if beta == 0:                     # the quadratic side would divide by 0
        return _reduce(d.abs(), reduction)
    return _reduce(huber(d, beta, smooth=True), reduction)      # one op (ops/huber.py)


def huber_loss(input, target, reduction="mean", delta=1.0, weight=None):
    """½d² where |d| < δ, else δ(|d| - ½δ), d = input - target, as PyTorch (δ·smooth_l1
    with β = δ). At |d| = δ the gradient is ±δ and the second derivative 0, as PyTorch.
    `weight` as l1_loss's, but 'mean' divides by the element count, not by Σ weight:
    PyTorch's huber_loss does, unlike its l1_loss and mse_loss."""
    check_reduction(reduction, "huber_loss")
    if not number_arg("huber_loss", "delta", delta) > 0:
        raise ValueError(f"huber_loss: delta must be > 0 (non-positive values are not "
                         f"supported), got {delta}")
    warn_if_broadcast("huber_loss", input, target)
    loss = huber(input - target, delta)                          # one op (ops/huber.py)
    return _weighted(loss, weight, input, "huber_loss", reduction, by_weight=False)


def _weighted(loss, weight, input, op, reduction, by_weight=True):
    """The elementwise loss times `weight`, which must have the input's shape (PyTorch's
    rule for mse_loss, l1_loss and huber_loss: no broadcasting of the weight), reduced;
    by_weight: 'mean' divides by Σ weight."""
    if weight is None:
        return _reduce(loss, reduction)
    if not isinstance(weight, Tensor) or weight.shape != input.shape:
        got = f"shape {weight.shape}" if isinstance(weight, Tensor) else type(weight).__name__
        raise ValueError(f"{op}: weight must be a tensor of the input's shape {input.shape}, "
                         f"got {got}")
    if reduction == "mean" and by_weight:
        return (loss * weight).sum() / weight.sum()
    return _reduce(loss * weight, reduction)


def _reduce(loss, reduction):
    return loss if reduction == "none" else loss.sum() if reduction == "sum" else loss.mean()


def check_reduction(reduction, op):
    """Every loss takes reduction='mean', 'sum' or 'none'; anything else is an error, not
    silently 'none'."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got "
                         f"{reduction!r}")
