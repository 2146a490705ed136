"""Connectionist temporal classification (Graves et al. 2006), as torch.nn.functional's
ctc_loss: -log Σ over every alignment of a target with the T frames of log_probs, an
alignment being the target with blanks put between and around its labels and each symbol
repeated, so that it is T long.

The sum runs over the lattice of the extended target l' = (blank, l1, blank, l2, ...,
blank), S' = 2L + 1 states: α_t(s) = lse(α_{t-1}(s), α_{t-1}(s-1), α_{t-1}(s-2) where l'_s
is a label unlike l'_{s-2}) + lp_t(l'_s), from α_0 = (lp_0(blank), lp_0(l1)); the loss is
-lse(α_{T-1}(S'-1), α_{T-1}(S'-2)). β runs the same recursion from the end, so that
α_t(s) + β_t(s) - lp_t(l'_s) is the log-probability of every alignment through (t, s).

The gradient is PyTorch's: ∂/∂lp_t(c) = e^{lp_t(c)} - γ_t(c), γ_t(c) the posterior of class c
at frame t (Σ over the states labelled c of e^{α + β - lp + nll}). That is the gradient of
the logits under a log_softmax (e^{lp} sums to 1 over c, as γ does, so log_softmax passes it
unchanged), not of the log-probabilities themselves (-γ): PyTorch's choice, kept so that
models train and compare alike. The recursions are written twice, side by side: on arrays,
one NumPy pass per frame over the whole batch's lattice (the forward runs α, the fast
backward β and γ in closed form), and on Tensors, the readable reference that
create_graph's backward runs with a graph, so gradients of gradients work (PyTorch has
none); tests hold the two to the same numbers."""
import math

from minigrad import backend
from minigrad.autograd import Function
from minigrad.ops.elementwise import where, exp, log
from minigrad.ops.index import gather
from minigrad.ops.loss import check_reduction
from minigrad.ops.shape import cat, stack
from minigrad.tensor import Tensor

np = backend.get("cpu").xp          # NumPy: the lattice's small tables, on the host


def _logsumexp(x, dim):
    """log Σ e^x over dim, safe where every term is -inf: -inf there, with a zero gradient
    (not the NaN of log 0 · 0, which mg.logsumexp's gradient would give)."""
    xp = x.backend.xp
    m = x._data.max(axis=dim, keepdims=True)
    shift = Tensor._make(xp.where(xp.isinf(m), 0, m).astype(x.dtype), x.device)
    total = exp(x - shift).sum(dim, keepdim=True)
    some = Tensor._make(total._data > 0, x.device)
    return where(some, log(where(some, total, 1.0)) + shift, -math.inf).squeeze(dim)


def _shift(a, k):
    """a (N, S') moved k states along: out[:, s] = a[:, s - k], -inf where s < k."""
    if k == 0:
        return a
    n, s = a.shape
    pad = Tensor._make(a.backend.xp.full((n, min(k, s)), -math.inf, dtype=a.dtype), a.device)
    return cat([pad, a[:, :s - k]], 1) if s > k else pad


def _unshift(a, k):
    """a (N, S') moved k states back: out[:, s] = a[:, s + k], -inf where s + k >= S'."""
    n, s = a.shape
    pad = Tensor._make(a.backend.xp.full((n, min(k, s)), -math.inf, dtype=a.dtype), a.device)
    return cat([a[:, k:], pad], 1) if s > k else pad


class Lattice:
    """The extended targets of a batch and what the recursions need of them, on the device:
    ext (N, S') the states' classes, skip (N, S') where a state may be reached from two
    back, first/last the states where an alignment may start/end, and the lengths."""

    def __init__(self, ext, skip, in_len, tgt_len, device):
        be = backend.get(device)
        s = np.arange(ext.shape[1])
        ends = 2 * tgt_len[:, None]                              # the last state, S'_n - 1
        first = (s < 2) & (s <= ends)
        last = (s == ends) | ((s == ends - 1) & (tgt_len[:, None] > 0))
        skip_ahead = np.zeros_like(skip)                         # s+2 reachable from s
        skip_ahead[:, :-2] = skip[:, 2:]
        self.ext, self.skip, self.skip_ahead, self.first, self.last, self.ends = (
            be.from_numpy(a) for a in (ext, skip, skip_ahead, first, last, ends[:, 0]))
        self.in_len, self.tgt_len = be.from_numpy(in_len), be.from_numpy(tgt_len)
        self.shortest = int(in_len.min())
        # a sample of no frames: -log p is 0 for an empty target, else inf
        self.no_frames = be.from_numpy(np.where(tgt_len == 0, 0.0, math.inf))
        self.device = device

    def const(self, array):
        return Tensor._make(array, self.device)

    def inside(self, steps):
        """(T, N, 1): which frames lie inside each sample's input."""
        xp = backend.get(self.device).xp
        return (xp.arange(steps)[:, None] < self.in_len)[:, :, None]

    # ---- on arrays: the forward and the fast backward --------------------------------------
    # One pass per frame over the (N, S') lattice of the whole batch. A state is reached one
    # frame later from itself, from the state before, and from two before where that skips
    # a blank between two different labels (target "abb"; _ the blank):
    #
    #     s        0   1    2    3      4    5    6
    #     l'_s     _   a    _    b      _    b    _
    #     from     0   0,1  1,2  1,2,3  3,4  4,5  5,6      (5 not from 3: b, b need a blank)
    #
    # In log space (a long input's probabilities underflow), a move's sum a logaddexp. α is
    # kept with two states of -inf before state 0 (β two after the last), so that "one
    # back" and "two back" are slices of the previous frame rather than copies.
    def picked_arrays(self, lp):
        """picked(), on arrays."""
        xp = backend.get(self.device).xp
        return xp.where(self.inside(lp.shape[0]), lp[:, xp.arange(lp.shape[1])[:, None],
                                                    self.ext], -math.inf)

    def alpha_arrays(self, lpe):
        """α (T, N, S'), as alpha(): log Σ over the alignment prefixes that end in state s
        at frame t (-inf past each sample's last frame, as lp_t(l'_s) is there)."""
        xp, (steps, n, width) = backend.get(self.device).xp, lpe.shape
        may_skip = xp.where(self.skip, 0.0, -math.inf).astype(lpe.dtype)
        a = xp.full((steps, n, width + 2), -math.inf, dtype=lpe.dtype)
        a[0, :, 2:] = xp.where(self.first, lpe[0], -math.inf)
        for t in range(1, steps):
            before, now = a[t - 1], a[t, :, 2:]
            xp.logaddexp(before[:, 2:], before[:, 1:-1], out=now)           # stay, or one on
            xp.logaddexp(now, before[:, :-2] + may_skip, out=now)           # or over a blank
            now += lpe[t]
        return a[:, :, 2:]

    def beta_arrays(self, lpe):
        """β (T, N, S'), as beta(): log Σ over the alignment suffixes from state s at
        frame t, each sample's starting at its own last frame; -inf past it."""
        xp, (steps, n, width) = backend.get(self.device).xp, lpe.shape
        may_skip = xp.where(self.skip_ahead, 0.0, -math.inf).astype(lpe.dtype)
        frames = xp.arange(steps)[:, None]
        outside = (frames >= self.in_len - 1)[:, :, None]                   # (T, N, 1)
        # at a sample's last frame: lp there, in the states an alignment may end in
        start = xp.where((frames == self.in_len - 1)[:, :, None] & self.last, lpe, -math.inf)
        b = xp.full((steps + 1, n, width + 2), -math.inf, dtype=lpe.dtype)
        for t in range(steps - 1, -1, -1):
            after, now = b[t + 1], b[t, :, :width]
            xp.logaddexp(after[:, :width], after[:, 1:-1], out=now)
            xp.logaddexp(now, after[:, 2:] + may_skip, out=now)
            now += lpe[t]
            if t >= self.shortest - 1:                 # a sample ends here, or has
                xp.copyto(now, start[t], where=outside[t])
        return b[:steps, :, :width]

    def nll_arrays(self, alpha):
        """nll(), from α on arrays: α at each sample's last frame, in its last state and
        (for a nonempty target) the one before."""
        xp, n = backend.get(self.device).xp, alpha.shape[1]
        samples = xp.arange(n)
        at_end = alpha[xp.maximum(self.in_len - 1, 0), samples]                # (N, S')
        last_label = xp.where(self.tgt_len > 0, at_end[samples, self.ends - 1], -math.inf)
        total = xp.logaddexp(at_end[samples, self.ends], last_label)
        return xp.where(self.in_len > 0, -total, self.no_frames.astype(alpha.dtype))

    def posterior_arrays(self, lpe, alpha, beta, nll, classes):
        """posterior(), on arrays."""
        xp = backend.get(self.device).xp
        nll = xp.where(xp.isfinite(nll), nll, 0.0)
        occupancy = xp.exp(alpha + beta - xp.where(lpe > -math.inf, lpe, 0.0)
                           + nll[None, :, None])                              # (T, N, S')
        one_hot = (self.ext[:, :, None] == xp.arange(classes)).astype(lpe.dtype)
        return xp.matmul(occupancy.transpose(1, 0, 2), one_hot).transpose(1, 0, 2)

    # ---- on Tensors: the reference, differentiable (create_graph) ----------------------------
    def picked(self, lp):
        """lp_t(l'_s) for every frame and state: (T, N, S'); -inf past a sample's last frame
        (what lies there, NaN even, is no part of its loss)."""
        xp = lp.backend.xp
        picked = gather(lp, 2, xp.broadcast_to(self.ext[None], (lp.shape[0],) + self.ext.shape))
        return where(self.const(self.inside(lp.shape[0])), picked, -math.inf)

    def alpha(self, lpe):
        """α (T, N, S'): the forward recursion over the picked log-probabilities."""
        first, skip = self.const(self.first), self.const(self.skip)
        a = where(first, lpe[0], -math.inf)
        alphas = [a]
        for t in range(1, lpe.shape[0]):
            moves = stack([a, _shift(a, 1), where(skip, _shift(a, 2), -math.inf)], 0)
            a = _logsumexp(moves, 0) + lpe[t]
            alphas.append(a)
        return stack(alphas, 0)

    def beta(self, lpe):
        """β (T, N, S'): the backward recursion, from each sample's own last frame; -inf at
        the frames past it."""
        xp, steps = lpe.backend.xp, lpe.shape[0]
        last = self.const(self.last)
        skip_ahead = self.const(self.skip_ahead)
        b = self.const(xp.full(lpe.shape[1:], -math.inf, dtype=lpe.dtype))
        betas = [None] * steps
        for t in range(steps - 1, -1, -1):
            step = _logsumexp(stack([b, _unshift(b, 1),
                                     where(skip_ahead, _unshift(b, 2), -math.inf)], 0), 0)
            at_end = self.const((self.in_len == t + 1)[:, None])
            inside = self.const((self.in_len > t + 1)[:, None])
            b = where(at_end, where(last, lpe[t], -math.inf),
                      where(inside, step + lpe[t], -math.inf))
            betas[t] = b
        return stack(betas, 0)

    def nll(self, alpha):
        """-log p(target | input) per sample (N,) from α at each one's last frame (inf where
        no alignment fits; a sample of no frames: 0 for an empty target, else inf)."""
        xp = alpha.backend.xp
        n = alpha.shape[1]
        frame = xp.maximum(self.in_len - 1, 0)
        at_end = alpha[frame, xp.arange(n)]                                   # (N, S')
        total = _logsumexp(where(self.const(self.last), at_end, -math.inf), 1)
        return where(self.const(self.in_len > 0), -total,
                     self.const(self.no_frames.astype(alpha.dtype)))

    def posterior(self, lpe, alpha, beta, nll, classes):
        """γ (T, N, C): the posterior of each class at each frame, e^{α + β - lp + nll}
        summed over the states of that class (0 past a sample's last frame, and where no
        alignment fits)."""
        xp = lpe.backend.xp
        fits = self.const(xp.isfinite(nll._data))
        nll = where(fits, nll, 0.0)
        # α + β counts lp_t(l'_s) twice, so it is taken off once; where it is -inf (a class
        # masked out) so are α and β: the state's occupancy is 0, not e^(-inf + inf) = NaN
        possible = self.const(lpe._data > -math.inf)
        occupancy = exp(alpha + beta - where(possible, lpe, 0.0) + nll[None, :, None])
        one_hot = (self.ext[:, :, None] == xp.arange(classes)).astype(lpe.dtype)
        return (occupancy.transpose(0, 1) @ self.const(one_hot)).transpose(0, 1)


class CTCLoss(Function):
    """nll (N,) of the targets under log_probs (T, N, C); the gradient PyTorch's (see the
    module's docstring). zero_infinity: a sample no alignment fits costs 0, gradient 0
    (else inf, and a NaN gradient over its frames, as PyTorch)."""

    def forward(self, lp, lattice, zero_infinity):
        self.lattice, self.zero_infinity = lattice, zero_infinity
        self.lpe = lattice.picked_arrays(lp)
        self.alpha = lattice.alpha_arrays(self.lpe)           # β waits for the backward
        self.nll = lattice.nll_arrays(self.alpha)
        if zero_infinity:
            return self.xp.where(self.xp.isfinite(self.nll), self.nll, 0.0)
        return self.nll

    def _zeroed(self, value):
        """value (N, ...) with the samples no alignment fits set to 0 (zero_infinity)."""
        if not self.zero_infinity:
            return value
        fits = self.xp.isfinite(self.nll).reshape((-1,) + (1,) * (value.ndim - 1))
        return where(Tensor._make(fits, self.device), value, 0.0)

    def backward(self, g):
        lp, lattice = self.inputs[0], self.lattice
        lpe = lattice.picked(lp)
        alpha, beta = lattice.alpha(lpe), lattice.beta(lpe)
        gamma = lattice.posterior(lpe, alpha, beta, lattice.nll(alpha), lp.shape[2])
        nan = self.const(self.xp.where(self.xp.isfinite(self.nll), 0.0, self.xp.nan)
                         .astype(lp.dtype))[None, :, None]
        grad = where(self.const(lattice.inside(lp.shape[0])), exp(lp) - gamma + nan, 0.0)
        grad = self._zeroed(grad.transpose(0, 1)).transpose(0, 1)
        return (grad * g[None, :, None],)

    def backward_arrays(self, g):
        xp, lattice, lp = self.xp, self.lattice, self.inputs[0]._data
        beta = lattice.beta_arrays(self.lpe)
        gamma = lattice.posterior_arrays(self.lpe, self.alpha, beta, self.nll, lp.shape[2])
        nan = xp.where(xp.isfinite(self.nll), 0.0, xp.nan).astype(lp.dtype)[None, :, None]
        grad = xp.where(lattice.inside(lp.shape[0]), xp.exp(lp) - gamma + nan, 0.0)
        if self.zero_infinity:
            grad = xp.where(xp.isfinite(self.nll)[None, :, None], grad, 0.0)
        return ((grad * g[None, :, None]).astype(lp.dtype, copy=False),)


# ---- what users call ---------------------------------------------------------------------
def _lengths(op, name, value, n):
    """input_lengths / target_lengths: a tensor, array, sequence or (unbatched) int, as a
    host int64 array of n entries."""
    if isinstance(value, Tensor):
        if value.dtype.kind not in "iu":
            raise TypeError(f"{op}: {name} must hold integers, got dtype {value.dtype}")
        value = value.numpy()
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError):
        arr = np.asarray([])
    if arr.dtype.kind not in "iu" or arr.ndim > 1:
        raise TypeError(f"{op}: {name} must be a tensor, tuple or list of ints, got "
                        f"{value!r}")
    arr = arr.reshape(-1).astype(np.int64)
    if arr.size != n:
        raise ValueError(f"{op}: {name} must have one entry per batch element ({n}), got "
                         f"{arr.size}")
    if (arr < 0).any():
        raise ValueError(f"{op}: {name} must be >= 0, got {arr.tolist()}")
    return arr


def _extended(op, targets, tgt_len, batched, classes, blank):
    """The extended targets (N, S') (blank, l1, blank, ..., blank; blanks past a sample's
    own) and where a state may be reached from two back, on the host."""
    t = targets.numpy()
    n = tgt_len.size
    if batched and t.ndim == 1:                      # concatenated: (Σ target_lengths,)
        if t.size != tgt_len.sum():
            raise ValueError(f"{op}: concatenated targets hold {t.size} labels, but "
                             f"target_lengths sum to {int(tgt_len.sum())}")
        starts = np.concatenate([[0], np.cumsum(tgt_len)[:-1]]).astype(np.int64)
        rows = [t[s:s + k] for s, k in zip(starts, tgt_len)]
    else:
        if batched and t.shape[0] != n:
            raise ValueError(f"{op}: padded targets must have one row per batch element "
                             f"({n}), got shape {t.shape}")
        t = t.reshape(n, -1)
        if tgt_len.size and tgt_len.max() > t.shape[1]:
            raise ValueError(f"{op}: target_lengths up to {int(tgt_len.max())}, but the "
                             f"padded targets hold {t.shape[1]} labels per sample")
        rows = [t[i, :k] for i, k in enumerate(tgt_len)]
    width = 2 * int(tgt_len.max(initial=0)) + 1
    ext = np.full((n, width), blank, dtype=np.int64)
    for i, row in enumerate(rows):
        if row.size and (row.min() < 0 or row.max() >= classes):
            raise ValueError(f"{op}: target labels must lie in [0, {classes}), got "
                             f"{row.tolist()}")
        ext[i, 1:2 * row.size:2] = row
    # a label state (odd s) unlike the one two back; by position, not by class, as
    # PyTorch's: a target holding the blank class (which torch's docs forbid, unchecked)
    # then gives torch's value
    skip = np.zeros(ext.shape, dtype=bool)
    skip[:, 3::2] = ext[:, 3::2] != ext[:, 1:-2:2]
    return ext, skip


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction="mean",
             zero_infinity=False):
    """The CTC loss of log_probs (T, N, C) (log_softmax'ed over C; unbatched (T, C)) against
    targets padded (N, S) or concatenated (Σ target_lengths,) (unbatched (S,)), each sample
    using its first input_lengths[n] frames and target_lengths[n] labels, as PyTorch:
    'mean' divides each sample's loss by its target length (at least 1), then averages;
    zero_infinity sets the losses no alignment fits (and their gradients) to zero.
    Target labels must lie in [0, C) (PyTorch reads one outside unchecked)."""
    op = "ctc_loss"
    if not isinstance(log_probs, Tensor) or log_probs.ndim not in (2, 3) or \
            log_probs.dtype not in (backend.float32, backend.float64):
        raise TypeError(f"{op}: log_probs must be a float32 or float64 tensor (T, N, C) or "
                        f"(T, C), got "
                        f"{getattr(log_probs, 'shape', type(log_probs).__name__)}"
                        f"{' ' + str(log_probs.dtype) if isinstance(log_probs, Tensor) else ''}")
    if not isinstance(targets, Tensor) or targets.dtype.kind not in "iu":
        raise TypeError(f"{op}: targets must be a tensor of integer class labels, got "
                        f"{getattr(targets, 'dtype', type(targets).__name__)}")
    check_reduction(reduction, op)
    batched = log_probs.ndim == 3
    lp = log_probs if batched else log_probs.unsqueeze(1)
    steps, n, classes = lp.shape
    if steps == 0 or n == 0 or classes == 0:                     # (torch refuses them too)
        raise ValueError(f"{op}: log_probs needs at least one frame, one sample and one "
                         f"class, got shape {log_probs.shape}")
    if not backend.is_integer(blank) or not 0 <= blank < classes:
        raise ValueError(f"{op}: blank must be a class in [0, {classes}), got {blank!r}")
    if batched and targets.ndim not in (1, 2) or not batched and targets.ndim > 1:
        raise ValueError(f"{op}: targets must be (N, S) or concatenated (Σ target_lengths,) "
                         f"for (T, N, C) log_probs, (S,) for (T, C); got shape "
                         f"{targets.shape}")
    in_len = _lengths(op, "input_lengths", input_lengths, n)
    tgt_len = _lengths(op, "target_lengths", target_lengths, n)
    if in_len.size and in_len.max() > steps:
        raise ValueError(f"{op}: input_lengths must be at most the {steps} frames of "
                         f"log_probs, got {in_len.tolist()}")
    ext, skip = _extended(op, targets, tgt_len, batched, classes, int(blank))
    lattice = Lattice(ext, skip, in_len, tgt_len, lp.device)
    loss = CTCLoss.apply(lp, lattice=lattice, zero_infinity=bool(zero_infinity))
    if reduction == "mean":
        divisor = np.maximum(tgt_len, 1).astype(lp.dtype)
        return (loss / Tensor._make(lp.backend.xp.asarray(divisor), lp.device)).mean()
    if reduction == "sum":
        return loss.sum()
    return loss if batched else loss[0]
