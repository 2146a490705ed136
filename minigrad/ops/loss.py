"""Fused cross-entropy: log-softmax and negative log-likelihood in one op, with PyTorch's
`ignore_index` and `label_smoothing`."""
from minigrad import backend
from minigrad.autograd import Function
from minigrad.ops.softmax import softmax, log_softmax_array
from minigrad.ops.index import raw_index


class CrossEntropy(Function):
    """loss_i = -(1-ε)·log p[target_i] - ε/C·Σ_c log p[c], p = softmax(logits_i); rows whose
    target is ignore_index count for nothing; 'mean' divides by the rows that count."""

    def forward(self, logits, target, ignore_index, label_smoothing, reduction):
        xp = self.xp
        n, c = logits.shape
        logp = log_softmax_array(xp, logits, 1)
        valid = target != ignore_index
        t = xp.where(valid, target, 0)
        nll = -xp.take_along_axis(logp, t[:, None], axis=1)[:, 0]
        if label_smoothing:
            nll = (1 - label_smoothing) * nll - label_smoothing * logp.mean(axis=1)
        nll = nll * valid
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

    def backward(self, g):
        logits = self.inputs[0]
        p = softmax(logits, 1)          # a graph of the logits: gradients of gradients
        w = self.const(self.weight[:, None])
        g = g.reshape(-1, 1) if self.reduction == "none" else g
        return (p - self.const(self.q)) * (w * g)

    def backward_arrays(self, g):
        w = self.weight[:, None] * (g.reshape(-1, 1) if self.reduction == "none" else g)
        return ((self.probs - self.q) * w,)


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    """Cross-entropy of (N, C) logits against (N,) integer class targets: the mean over the
    targets that are not ignore_index (reduction="mean"), their sum ("sum"), or one loss per
    row ("none"); label_smoothing mixes in the uniform distribution, as PyTorch."""
    t = raw_index(target, logits, "cross_entropy", "target")
    if not hasattr(t, "dtype"):
        t = logits.backend.from_numpy(backend.to_host(t))
    if logits.ndim != 2 or t.ndim != 1 or t.shape[0] != logits.shape[0]:
        raise ValueError(f"cross_entropy: expected logits (N, C) and targets (N,), got "
                         f"{logits.shape} and {tuple(t.shape)}; reshape (B, T, C) logits to "
                         f"(B*T, C) and targets to (B*T,) first")
    if t.dtype.kind not in "iu":
        raise TypeError(f"cross_entropy: targets must be integer class indices, got {t.dtype}")
    if not 0.0 <= label_smoothing <= 1.0:
        raise ValueError(f"cross_entropy: label_smoothing must be in [0, 1], got "
                         f"{label_smoothing}")
    check_reduction(reduction, "cross_entropy")
    c = logits.shape[1]
    bad = (t != ignore_index) & ((t < 0) | (t >= c))
    if bool(bad.any()):
        raise IndexError(f"cross_entropy: target {int(t[bad][0])} is out of range for {c} "
                         f"classes (valid: 0..{c - 1}, or ignore_index={ignore_index})")
    return CrossEntropy.apply(logits, target=t, ignore_index=ignore_index,
                              label_smoothing=float(label_smoothing), reduction=reduction)


def check_reduction(reduction, op):
    """Every loss takes reduction='mean', 'sum' or 'none'; anything else is an error, not
    silently 'none'."""
    if reduction not in ("mean", "sum", "none"):
        raise ValueError(f"{op}: reduction must be 'mean', 'sum' or 'none', got "
                         f"{reduction!r}")
