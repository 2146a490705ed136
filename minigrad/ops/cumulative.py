"""Ops along one dim that look at neighbours: the running product cumprod (cumsum lives in
reduce.py) and diff, the differences of neighbours."""
from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.reduce import (normalize_dim, normalize_dims, _exclusive_cumprod,
                                 running_accumulator)
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
        if not bool((x.data == 0).any()):
            return _reversed_cumsum(g * self.output(), d) / x
        return _exclusive_cumprod(x, d) * _suffix_products_sum(g, x, d)

    def backward_arrays(self, g):
        """The same without graph, from where each slice's first zero z stands: before it,
        dx_j = Σ_{j≤i<z} g_i y_i / x_j; at it, dx_z = y_{z-1}·Σ_{i≥z} g_i Π_{z<k≤i} x_k
        (the products stop at the next zero); after it, 0. No product of the doubling
        above is formed, whose partial products may overflow to inf and meet a 0 (NaN)."""
        xp, x, d = self.xp, self.inputs[0].data, self.dim
        zero = x == 0
        if not bool(zero.any()):
            return ((_reversed_cumsum_array(xp, g * self.output().data, d) /
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


def cumprod(x, dim, *, dtype=None):
    """Running products along dim, as torch.cumprod (integers and bools multiply as int64;
    dtype= converts x first). The gradient is exact where x holds zeros."""
    if not backend.is_integer(dim):
        raise TypeError(f"cumprod: dim must be an int, got {dim!r}")
    if dtype is not None:
        x = x.to(dtype=dtype)
    if x.ndim == 0:
        normalize_dims(dim, 0, "cumprod")
        return x.clone() if backend.is_floating(x.dtype) else Tensor._make(
            x.data.astype(backend.int64), x.device)
    d = normalize_dim(dim, x.ndim, "cumprod")
    if not backend.is_floating(x.dtype):
        return Tensor._make(x.backend.xp.cumprod(x.data, axis=d, dtype=backend.int64), x.device)
    return CumProd.apply(x, dim=d)


def diff(x, n=1, dim=-1, prepend=None, append=None):
    """The n-th forward difference along dim, out_i = x_{i+1} - x_i applied n times, as
    torch.diff; prepend/append (tensors with x's number of dims) are joined on first. Bool
    tensors give x_{i+1} != x_i (as PyTorch). Slices and a subtraction, so differentiable."""
    if not backend.is_integer(n) or n < 0:
        raise ValueError(f"diff: n (the order) must be a non-negative int, got {n!r}")
    if x.ndim == 0:
        raise ValueError("diff: needs a tensor with at least 1 dim, got a 0-d one")
    d = normalize_dim(dim, x.ndim, "diff")
    for name, extra in (("prepend", prepend), ("append", append)):
        if extra is not None and (not isinstance(extra, Tensor) or extra.ndim != x.ndim):
            raise ValueError(f"diff: {name} must be a tensor with the input's {x.ndim} dims, "
                             f"got {getattr(extra, 'shape', type(extra).__name__)}")
    parts = [t for t in (prepend, x, append) if t is not None]
    out = cat(parts, d) if len(parts) > 1 else x
    lead = (slice(None),) * d
    for _ in range(n):
        m = out.shape[d]
        if m == 0:
            break
        hi, lo = out[lead + (slice(1, m),)], out[lead + (slice(0, m - 1),)]
        out = hi != lo if out.dtype == backend.bool_ else hi - lo
    return out
