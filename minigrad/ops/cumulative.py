"""Ops along one dim that look at neighbours: the running product cumprod (cumsum lives in
reduce.py), the running log-sum-exp logcumsumexp, the running extremes cummax/cummin with
their indices, and diff, the differences of neighbours."""
from minigrad import backend
from minigrad.autograd import Function
from minigrad.grad_mode import _state, autocast_off
from minigrad.tensor import Tensor
from minigrad.ops.index import GetItem, position_grid
from minigrad.ops.reduce import (normalize_dim, normalize_dims, _exclusive_cumprod,
                                 running_accumulator, ValuesIndices)
from minigrad.ops.shape import cat, flip


class CumProd(Function):
    """y_i = Π_{j≤i} x_j along dim. dx_j = Σ_{i≥j} g_i · Π_{k≤i, k≠j} x_k. Without zeros in x
    that is Σ_{i≥j} g_i y_i / x_j, a reversed running sum (as PyTorch's). With zeros the
    division reads 0/0, so it is split into products only: (Π_{k<j} x_k) · S_j, where
    S_j = Σ_{i≥j} g_i Π_{j<k≤i} x_k = g_j + x_{j+1} S_{j+1}; exact with any number of zeros,
    and, built of differentiable ops, exact to second order too (PyTorch's double backward
    with zeros is O(n²); this is O(n log n))."""
    def forward(self, a, dim):
        self.dim = dim
        acc = running_accumulator(a.dtype, self.device)   # as cumsum's (and PyTorch's)
        return self.xp.cumprod(a, axis=dim, dtype=acc).astype(a.dtype, copy=False)
    def backward(self, g):
        x, d = self.inputs[0], self.dim
        if not bool((x._data == 0).any()):
            return _reversed_cumsum(g * self.output(), d) / x
        return _exclusive_cumprod(x, d) * _suffix_products_sum(g, x, d)

    def backward_arrays(self, g):
        """The same without graph, from where each slice's first zero z stands: before it,
        dx_j = Σ_{j≤i<z} g_i y_i / x_j; at it, dx_z = y_{z-1}·Σ_{i≥z} g_i Π_{z<k≤i} x_k
        (the products stop at the next zero); after it, 0. No product of the doubling
        above is formed, whose partial products may overflow to inf and meet a 0 (NaN)."""
        xp, x, d = self.xp, self.inputs[0]._data, self.dim
        zero = x == 0
        if not bool(zero.any()):
            return ((_reversed_cumsum_array(xp, g * self.output()._data, d) /
                     x).astype(x.dtype, copy=False),)
        acc = running_accumulator(x.dtype, self.device) or x.dtype
        x, g = x.astype(acc), g.astype(acc)
        one = xp.ones((), acc)
        seen = xp.cumsum(zero, axis=d)                   # zeros up to and including i
        before, first = seen == 0, zero & (seen == 1)
        y = xp.cumprod(xp.where(before, x, one), axis=d)   # y_i where i < z
        dx = xp.where(before, _reversed_cumsum_array(xp, xp.where(before, g * y, 0), d) /
                      xp.where(before, x, one), 0)
        run = xp.cumprod(xp.where((seen == 1) & ~zero, x, one), axis=d)  # Π_{z<k≤i} x_k
        s = xp.where(seen == 1, g * run, 0).sum(axis=d, keepdims=True)
        pre = xp.where(before, x, one).prod(axis=d, keepdims=True)       # y_{z-1}
        dx = xp.where(first, pre * s, dx)
        return (dx.astype(self.inputs[0].dtype, copy=False),)


def _reversed_cumsum(t, d):
    return flip(flip(t, d).cumsum(d), d)                  # Σ_{i≥j} t_i along d


def _reversed_cumsum_array(xp, a, d):
    return xp.flip(xp.cumsum(xp.flip(a, d), axis=d), d)


def _shift_left(t, s, d):
    """t moved s places toward the start of dim d, zeros coming in at the end."""
    n, lead = t.shape[d], (slice(None),) * d
    zeros = t.backend.xp.zeros(t.shape[:d] + (s,) + t.shape[d + 1:], dtype=t.dtype)
    return cat([t[lead + (slice(s, n),)], Tensor._make(zeros, t.device)], d)


def _suffix_products_sum(g, x, d):
    """S_j = Σ_{i≥j} g_i Π_{j<k≤i} x_k along d: the recurrence S_j = g_j + A_j S_{j+1} with
    A_j = x_{j+1}, solved by doubling (log₂ n rounds): after the round with step s, S_j sums
    i in [j, j + 2s) and A_j is Π_{j<k≤j+2s} x_k. Sums and products only."""
    s_, a_ = g, _shift_left(x, 1, d)
    step, n = 1, x.shape[d]
    while step < n:
        s_ = s_ + a_ * _shift_left(s_, step, d)
        a_ = a_ * _shift_left(a_, step, d)
        step *= 2
    return s_


def cumprod(input, dim, *, dtype=None):
    """Running products along dim, as torch.cumprod (integers and bools multiply as int64;
    dtype= converts x first). The gradient is exact where x holds zeros."""
    if not backend.is_integer(dim):
        raise TypeError(f"cumprod: dim must be an int, got {dim!r}")
    if dtype is not None:
        if _state.autocast is not None:     # the dtype asked for wins over autocast, as torch's
            return autocast_off(cumprod, input, dim, dtype=dtype)
        input = input.to(dtype=dtype)
    if dtype is not None and input.dtype == backend.bool_:
        raise TypeError("cumprod: dtype=bool is not supported (as PyTorch); bools multiply as "
                        "int64 without a dtype")
    acc = backend.int64 if dtype is None else input.dtype   # dtype=int8: int8 products
    if input.ndim == 0:
        normalize_dims(dim, 0, "cumprod")
        return input.clone() if backend.is_floating(input.dtype) else Tensor._make(
            input._data.astype(acc), input.device)
    d = normalize_dim(dim, input.ndim, "cumprod")
    if not backend.is_floating(input.dtype):
        return Tensor._make(input.backend.xp.cumprod(input._data, axis=d, dtype=acc),
                            input.device)
    return CumProd.apply(input, dim=d)


def diff(input, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim, out_i = x_{i+1} - x_i applied n times, as
    torch.diff; prepend/append (tensors with x's number of dims) are joined on first. Bool
    tensors give x_{i+1} != x_i (as PyTorch). Slices and a subtraction, so differentiable."""
    if not backend.is_integer(n) or n < 0:
        raise ValueError(f"diff: n (the order) must be a non-negative int, got {n!r}")
    if input.ndim == 0:
        raise ValueError("diff: needs a tensor with at least 1 dim, got a 0-d one")
    d = normalize_dim(dim, input.ndim, "diff")
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is not None and (not isinstance(extra, Tensor) or extra.ndim != input.ndim):
            raise ValueError(f"diff: {name} must be a tensor with the input's {input.ndim} dims, "
                             f"got {getattr(extra, 'shape', type(extra).__name__)}")
    parts = [t for t in (prepend, input, append) if t is not None]
    out = cat(parts, d) if len(parts) > 1 else input
    lead = (slice(None),) * d
    for _ in range(n):
        m = out.shape[d]
        if m == 0:
            break
        hi, lo = out[lead + (slice(1, m),)], out[lead + (slice(0, m - 1),)]
        out = hi != lo if out.dtype == backend.bool_ else hi - lo
    return out


def running(xp, a, d, name):
    """The running `name` (a binary ufunc of xp: logaddexp, maximum, minimum) along dim d:
    out_i = a_0 ∘ a_1 ∘ ... ∘ a_i. NumPy has it in one sequential pass (ufunc.accumulate);
    elsewhere (CuPy accumulates add and multiply only) by doubling: log₂ n passes, each
    combining every element with the one `step` places before it (Hillis-Steele)."""
    op = getattr(xp, name)
    if backend.is_numpy(xp):
        return op.accumulate(a, axis=d)
    return running_by_doubling(xp, a, d, op)


def running_by_doubling(xp, a, d, op):
    """running() for any associative op; NumPy's accumulate is tested to match it."""
    n, lead = a.shape[d], (slice(None),) * d
    out, step = a, 1
    while step < n:
        later, earlier = lead + (slice(step, None),), lead + (slice(0, n - step),)
        out = xp.concatenate([out[lead + (slice(0, step),)],
                              op(out[earlier], out[later])], axis=d)
        step *= 2
    return out


class LogCumSumExp(Function):
    """y_i = log Σ_{j≤i} exp(x_j) along dim, as a running logaddexp (stable: no exp of a
    large x), accumulated as cumsum's are (float64 for float32 on the CPU, as PyTorch).
    dx_j = Σ_{i≥j} g_i exp(x_j - y_i), by SuffixTerms (differentiable to any order)."""
    def forward(self, a, dim):
        self.dim = dim
        acc = running_accumulator(a.dtype, self.device) or a.dtype
        return running(self.xp, a.astype(acc, copy=False), dim, "logaddexp").astype(
            a.dtype, copy=False)
    def backward(self, g):
        return SuffixTerms.apply(g, self.inputs[0], self.output(), dim=self.dim)


def _signed_log_sums(xp, v, shift, d, reverse, device):
    """(Σ v_k exp(shift_k) over k ≤ i, or k ≥ i with reverse) in log space, the positive
    and the negative v apart: log|v| + shift through a running logaddexp, so nothing
    overflows (PyTorch's formula). Where v is not of a part's sign its log is a finite
    lowest, not -inf, which would meet an inf shift as NaN; exp of it is still 0."""
    acc = running_accumulator(v.dtype, device) or v.dtype     # as the forward's
    v, shift = v.astype(acc, copy=False), shift.astype(acc, copy=False)
    lowest = backend.value_range(v.dtype)[0] / 4      # room to add a shift and subtract y
    log_v = xp.log(xp.where(v == 0, 1, xp.abs(v)))     # (no log 0: masked below)
    run = (lambda a: xp.flip(running(xp, xp.flip(a, d), d, "logaddexp"), d)) if reverse \
        else (lambda a: running(xp, a, d, "logaddexp"))
    return [run(xp.where(part, log_v, lowest) + shift) for part in (v > 0, v < 0)]


class SuffixTerms(Function):
    """logcumsumexp's backward, B(g, x, y)_j = Σ_{i≥j} g_i exp(x_j - y_i) along dim, each
    exp(x_j - y_i) ≤ 1 (y_i ≥ x_j). An op of its own, not ops on log|g|: B is linear in g,
    and its derivative in g must be so at g = 0 too (through log|g| it came out 0 there).
    Its partials: dg = PrefixTerms(h), dx = h·B, dy = -g·PrefixTerms(h)."""
    def forward(self, g, x, y, dim):
        self.dim = dim
        xp = self.xp
        pos, neg = _signed_log_sums(xp, g, -y, dim, True, self.device)
        return (xp.exp(pos + x) - xp.exp(neg + x)).astype(g.dtype, copy=False)
    def backward(self, h):
        g, x, y = self.inputs
        want_g, want_x, want_y = self.needs_input_grad
        back = PrefixTerms.apply(h, x, y, dim=self.dim) if want_g or want_y else None
        return (back, h * self.output() if want_x else None,
                -g * back if want_y else None)


class PrefixTerms(Function):
    """B's adjoint in g, A(h, x, y)_i = Σ_{j≤i} h_j exp(x_j - y_i) along dim. Its partials:
    dh = B(k), dx = h·B(k), dy = -k·A; with B's, closed under differentiation."""
    def forward(self, h, x, y, dim):
        self.dim = dim
        xp = self.xp
        pos, neg = _signed_log_sums(xp, h, x, dim, False, self.device)
        return (xp.exp(pos - y) - xp.exp(neg - y)).astype(h.dtype, copy=False)
    def backward(self, k):
        h, x, y = self.inputs
        want_h, want_x, want_y = self.needs_input_grad
        back = SuffixTerms.apply(k, x, y, dim=self.dim) if want_h or want_x else None
        return (back, h * back if want_x else None,
                -k * self.output() if want_y else None)


def logcumsumexp(input, dim):
    """log Σ_{j≤i} exp(x_j) along dim, as torch.logcumsumexp: -inf stays -inf until a
    finite value comes, +inf stays +inf, NaN spreads. Floating tensors only, as PyTorch."""
    if not backend.is_integer(dim):
        raise TypeError(f"logcumsumexp: dim must be an int, got {dim!r}")
    if not backend.is_floating(input.dtype):
        raise TypeError(f"logcumsumexp: not implemented for {input.dtype} tensors (as PyTorch); "
                        f"convert with .float() first")
    if input.ndim == 0:
        normalize_dims(dim, 0, "logcumsumexp")
        return input.clone()
    return LogCumSumExp.apply(input, dim=normalize_dim(dim, input.ndim, "logcumsumexp"))


def _running_extreme(kind, x, dim):
    """cummax/cummin: (values, indices). The index is the last place where the running
    extreme was reached (ties: the later one, as PyTorch), and after a NaN the last NaN
    (a NaN is the extreme from there on). The values are x read at those indices, so the
    gradient goes to them (repeated indices add up), as PyTorch's."""
    if not backend.is_integer(dim):
        raise TypeError(f"{kind}: dim must be an int, got {dim!r}")
    xp = x.backend.xp
    if x.ndim == 0:
        normalize_dims(dim, 0, kind)
        return ValuesIndices(x.clone(), Tensor._make(xp.zeros((), backend.int64), x.device))
    d = normalize_dim(dim, x.ndim, kind)
    a = x._data
    best = running(xp, a, d, "maximum" if kind == "cummax" else "minimum")
    reached = a == best
    if a.dtype.kind == "f":
        reached |= xp.isnan(a)
    n = a.shape[d]
    positions = xp.arange(n, dtype=backend.int64).reshape((n,) + (1,) * (a.ndim - d - 1))
    index = running(xp, xp.where(reached, positions, 0), d, "maximum")
    values = GetItem.apply(x, index=position_grid(xp, index, d))
    return ValuesIndices(values, Tensor._make(index, x.device))


def cummax(input, dim):
    """The running maximum along dim and where it stands, as torch.cummax: a (values,
    indices) named tuple."""
    return _running_extreme("cummax", input, dim)


def cummin(input, dim):
    """The running minimum along dim and where it stands, as torch.cummin."""
    return _running_extreme("cummin", input, dim)
