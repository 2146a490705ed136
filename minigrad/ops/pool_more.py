"""Average, Lp and adaptive pools, as torch.nn.functional's (the max pools, the window
geometry and the way a pool runs over the grid are pool.py's: its docstring says how)."""
import math

from minigrad import backend
from minigrad.args import number_arg
from minigrad.autograd import Function, is_grad_enabled
from minigrad.ops.shape import clone
from minigrad.tensor import Tensor
from minigrad.ops.pool import (_ints, _check_input, Windows, _first_max, _grid_max,
                               _place_of_max, _result, np)

# ---- average pools -----------------------------------------------------------------------
class AvgPool(Function):
    """y = Σ window / divisor, per window. Linear: its gradient is AvgPoolSpread of g, whose
    own gradient is this op again."""
    needs_values = False                                 # see Function.needs_values

    def forward(self, x, geo, divisor):
        self.geo, self.divisor = geo, divisor
        # float16 sums in float32, as PyTorch's: a window's sum leaves float16's range
        # (65504) long before its mean does (5×5 values of 3000 would average to inf)
        dt = backend.float32 if x.dtype == backend.float16 else x.dtype
        sums = geo.sums(self.xp, x, dt)
        return (sums / self.xp.asarray(divisor, dtype=dt)).astype(x.dtype, copy=False)

    def backward(self, g):
        return (AvgPoolSpread.apply(g, geo=self.geo, divisor=self.divisor),)

    def backward_arrays(self, g):
        return (_spread(self.xp, g, self.geo, self.divisor),)


class AvgPoolSpread(Function):
    """g / divisor spread back over each window: the gradient of AvgPool."""
    needs_values = False

    def forward(self, g, geo, divisor):
        self.geo, self.divisor = geo, divisor
        return _spread(self.xp, g, geo, divisor)

    def backward(self, gg):
        return (AvgPool.apply(gg, geo=self.geo, divisor=self.divisor),)


def _spread(xp, g, geo, divisor):
    return geo.spread(xp, g / xp.asarray(divisor, dtype=g.dtype))


def _avg_pool(n, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
              divisor_override):
    op = f"avg_pool{n}d"
    x, unbatched = _check_input(op, input, n)
    if not backend.is_floating(x.dtype):
        raise TypeError(f"{op}: needs a floating-point input, got dtype {x.dtype}; convert "
                        f"with .float() first")
    kernel = _ints(op, "kernel_size", kernel_size, n, 1)
    stride = kernel if stride is None or stride == [] or stride == () else \
        _ints(op, "stride", stride, n, 1)
    geo = Windows(op, x.shape[2:], kernel, stride, _ints(op, "padding", padding, n, 0),
                  (1,) * n, ceil_mode)
    if divisor_override is None:
        divisor = geo.divisor(count_include_pad)
    else:
        divisor_override = number_arg(op, "divisor_override", divisor_override)
        if divisor_override == 0:
            raise ValueError(f"{op}: divisor_override must not be zero")
        divisor = np.asarray(divisor_override)
    out = AvgPool.apply(x, geo=geo, divisor=divisor)
    return out[0] if unbatched else out


def avg_pool1d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True):
    """The mean of each window of kernel_size along the last dim (stride: kernel_size
    unless given; padding: zeros at both ends, counted in the mean unless
    count_include_pad=False)."""
    return _avg_pool(1, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     None)


def avg_pool2d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """avg_pool1d over the last two dims; divisor_override divides every window's sum by
    that number instead."""
    return _avg_pool(2, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


def avg_pool3d(input, kernel_size, stride=None, padding=0, ceil_mode=False,
               count_include_pad=True, divisor_override=None):
    """avg_pool2d over the last three dims."""
    return _avg_pool(3, input, kernel_size, stride, padding, ceil_mode, count_include_pad,
                     divisor_override)


# ---- Lp pools ----------------------------------------------------------------------------
def _lp_pool(n, input, norm_type, kernel_size, stride, ceil_mode):
    """(Σ xᵖ over each window)^(1/p), as PyTorch: the mean of xᵖ (avg_pool, so a ceil_mode
    window cut short is scaled up to the full kernel) times the kernel's size. sign·relu(|m|)
    is m itself, but as PyTorch's its gradient is 0 where m is 0 (a window of zeros, after a
    ReLU), not the NaN of ∞·0."""
    op = f"lp_pool{n}d"
    norm_type = number_arg(op, "norm_type", norm_type)
    if norm_type == 0:                   # (its root, 1/norm_type, would divide by zero)
        raise ValueError(f"{op}: norm_type must be nonzero (the p of the p-norm), got 0")
    kernel = _ints(op, "kernel_size", kernel_size, n, 1)
    mean = _avg_pool(n, input ** norm_type, kernel, stride, 0, ceil_mode, True, None)
    return (mean.sign() * mean.abs().relu() * math.prod(kernel)) ** (1.0 / norm_type)


def lp_pool1d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """The p-norm (p = norm_type) of each window along the last dim."""
    return _lp_pool(1, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool2d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """lp_pool1d over the last two dims."""
    return _lp_pool(2, input, norm_type, kernel_size, stride, ceil_mode)


def lp_pool3d(input, norm_type, kernel_size, stride=None, ceil_mode=False):
    """lp_pool1d over the last three dims."""
    return _lp_pool(3, input, norm_type, kernel_size, stride, ceil_mode)


# ---- adaptive pools ----------------------------------------------------------------------
def _output_size(op, output_size, x, n):
    """output_size: an int or a tuple of n ints, None in a place keeping the input's size."""
    items = tuple(output_size) if isinstance(output_size, (tuple, list)) else (output_size,)
    if len(items) not in (1, n):
        raise ValueError(f"{op}: output_size must be an int or a tuple of {n} ints (None "
                         f"keeps a dim's size), got {output_size!r}")
    items = items * (n if len(items) == 1 else 1)
    sizes = []
    for v, L in zip(items, x.shape[x.ndim - n:]):
        if v is None:
            v = L
        if not backend.is_integer(v) or isinstance(v, bool) or v < 0:
            raise TypeError(f"{op}: output_size must hold non-negative ints (or None), got "
                            f"{output_size!r}")
        sizes.append(int(v))
    return tuple(sizes)


def _bounds(L, out):
    """Adaptive windows along a dim of length L: [⌊i·L/out⌋, ⌈(i+1)·L/out⌉) for i < out."""
    i = np.arange(out)
    return i * L // out, -(-(i + 1) * L // out)


class AdaptiveAverage(Function):
    """y = x·A along the last dim, A (L, out) the windows' averaging matrix (a constant),
    where an infinite or NaN x reaches only the windows that hold it, as PyTorch's (in
    the product, its 0·inf elsewhere is NaN): the finite values' product, and where a
    window holds inf, -inf or NaN, what their sum is (counted by 0/1 products). Linear:
    the gradient is g·Aᵀ, a product again."""

    def forward(self, x, a):
        xp = self.xp
        finite = xp.isfinite(x)
        if bool(finite.all()):
            return x @ a
        y = xp.where(finite, x, 0) @ a
        hits = (a > 0).astype(a.dtype)
        pos, neg = ((x == v).astype(a.dtype) @ hits > 0 for v in (math.inf, -math.inf))
        nan = (xp.isnan(x).astype(a.dtype) @ hits > 0) | (pos & neg)
        y = xp.where(pos, math.inf, xp.where(neg, -math.inf, y))
        return xp.where(nan, math.nan, y).astype(x.dtype, copy=False)

    def backward(self, g):
        return g @ self.inputs[1].mT, None


def _empty_channels(input, n, avg):
    """Whether an adaptive pool may be given no channels, as PyTorch 2.13: unbatched always
    (its channels are the batch there), batched only in the 1d and 2d average pools (whose
    backward there PyTorch refuses; minigrad's gives the empty gradient)."""
    return isinstance(input, Tensor) and (input.ndim == n + 1 or (avg and n < 3))


def _adaptive_avg_pool(n, input, output_size):
    op = f"adaptive_avg_pool{n}d"
    x, unbatched = _check_input(op, input, n, _empty_channels(input, n, True))
    if not backend.is_floating(x.dtype):
        raise TypeError(f"{op}: needs a floating-point input, got dtype {x.dtype}; convert "
                        f"with .float() first")
    sizes = _output_size(op, output_size, x, n)
    for d, (L, out) in enumerate(zip(x.shape[2:], sizes)):
        if L == out:
            continue
        start, stop = _bounds(L, out)
        at = np.arange(L)
        inside = (at >= start[:, None]) & (at < stop[:, None])
        averaging = inside / (stop - start)[:, None]       # (out, L): 1/length in a window
        a = Tensor._make(x.backend.xp.asarray(averaging.T, dtype=x.dtype), x.device)
        axis = 2 + d                                       # y·A along that axis
        x = AdaptiveAverage.apply(x.movedim(axis, -1), a).movedim(-1, axis)
    if sizes == input.shape[input.ndim - n:]:      # nothing pooled: a copy, not input itself
        x = clone(x)                               # (PyTorch's is a new tensor too)
    return x[0] if unbatched else x


def adaptive_avg_pool1d(input, output_size):
    """The mean over output_size windows of (nearly) equal length along the last dim."""
    return _adaptive_avg_pool(1, input, output_size)


def adaptive_avg_pool2d(input, output_size):
    """adaptive_avg_pool1d over the last two dims."""
    return _adaptive_avg_pool(2, input, output_size)


def adaptive_avg_pool3d(input, output_size):
    """adaptive_avg_pool1d over the last three dims."""
    return _adaptive_avg_pool(3, input, output_size)


def _adaptive_tables(spatial, sizes):
    """Per dim the (out, width) table of the input coordinates each adaptive window reads,
    width its longest: its own, then its last one repeated (which leaves its first
    maximum, and its last NaN, at the same coordinates)."""
    tables = []
    for L, out in zip(spatial, sizes):
        start, stop = _bounds(L, out)
        at = start[:, None] + np.arange(int((stop - start).max()))
        tables.append(np.where(at < stop[:, None], at, stop[:, None] - 1))
    return tables


def _adaptive_windows(xp, x, tables):
    """x's adaptive windows (..., *out, *width), gathered by the tables (a copy)."""
    n = len(tables)
    for d, table in enumerate(tables):   # each gathered dim becomes (out, width) in place
        x = x[(Ellipsis, xp.asarray(table)) + (slice(None),) * (n - 1 - d)]
    lead = x.ndim - 2 * n                # (..., o1, w1, o2, w2, ...) -> (..., *out, *width)
    return x.transpose(tuple(range(lead)) + tuple(lead + 2 * d for d in range(n)) +
                       tuple(lead + 2 * d + 1 for d in range(n)))


def _adaptive_first_max(xp, x, sizes):
    """The reference: the flat place (..., *out) of each adaptive window's first maximum
    (its last NaN), by pool.py's running first maximum over the gathered windows."""
    tables = _adaptive_tables(x.shape[-len(sizes):], sizes)
    return _first_max(xp, _adaptive_windows(xp, x, tables), tables, x.shape[-len(sizes):])


def _adaptive_max(xp, x, sizes, where, host):
    """Each adaptive window's maximum (..., *out) and, with `where`, the flat place of its
    first maximum (_adaptive_first_max's answer; else None). Where each size divides its
    input's, the windows are max pool's (kernel = stride = the ratio): its separable
    reduction on the grid (pool.py). Else the windows are gathered place-major, (*width,
    *out, ...) from x with its spatial dims first, so that each place's values are one
    contiguous block: the maximum is a pass per place, and the places are found by
    matching it as max pool does (_place_of_max; over the reference's layout, whose
    blocks are strided rows of a few, this took ~2x as long)."""
    n, spatial = len(sizes), x.shape[-len(sizes):]
    if all(L % out == 0 for L, out in zip(spatial, sizes)):
        kernel = tuple(L // out for L, out in zip(spatial, sizes))
        geo = Windows("adaptive_max_pool", spatial, kernel, kernel, (0,) * n, (1,) * n, False)
        return _grid_max(xp, geo, x, None, where, host)       # (no padding: no fill)
    tables = _adaptive_tables(spatial, sizes)
    lead = x.ndim - n
    front = xp.ascontiguousarray(x.transpose(tuple(range(lead, x.ndim)) + tuple(range(lead))))
    index = []                           # per dim, its table as (*width, *out) broadcasts
    for d, table in enumerate(tables):
        shape = [1] * 2 * n
        shape[d], shape[n + d] = table.shape[::-1]
        index.append(xp.asarray(table.T.reshape(shape)))
    windows = front[tuple(index)]        # (*width, *out, ...)
    best = windows.max(tuple(range(n)))  # (*out, ...); a NaN wins
    back = tuple(range(n, best.ndim)) + tuple(range(n))       # -> (..., *out)
    if not where:
        return best.transpose(back), None
    place = _place_of_max(xp, windows.transpose(tuple(range(n, windows.ndim)) +
                                                tuple(range(n))), best, host)
    position = 0
    for d, table in enumerate(tables):   # the place's coordinate along each dim, flat
        k = (place // math.prod(t.shape[1] for t in tables[d + 1:])) % table.shape[1]
        o = xp.arange(table.shape[0]).reshape((-1,) + (1,) * (place.ndim - 1 - d))
        position = position + xp.asarray(table)[o, k] * math.prod(spatial[d + 1:])
    return best.transpose(back), position.astype(backend.int64).transpose(back)


def _adaptive_max_pool(n, input, output_size, return_indices):
    op = f"adaptive_max_pool{n}d"
    x, unbatched = _check_input(op, input, n, _empty_channels(input, n, False))
    sizes = _output_size(op, output_size, x, n)
    xp = x.backend.xp
    if 0 in sizes:                       # nothing to pick: an empty result
        position = xp.zeros(x.shape[:2] + sizes, dtype=backend.int64)
        return _result(x, position, n, unbatched, return_indices)
    where = return_indices or (x.requires_grad and is_grad_enabled())
    values, position = _adaptive_max(xp, x._data, sizes, where, x.backend.host)
    if not where:                        # nothing to pick by: the maxima are the answer
        out = Tensor._make(values, x.device)
        return out[0] if unbatched else out
    return _result(x, position, n, unbatched, return_indices)


def adaptive_max_pool1d(input, output_size, return_indices=False):
    """The maximum over output_size windows of (nearly) equal length along the last dim."""
    return _adaptive_max_pool(1, input, output_size, return_indices)


def adaptive_max_pool2d(input, output_size, return_indices=False):
    """adaptive_max_pool1d over the last two dims."""
    return _adaptive_max_pool(2, input, output_size, return_indices)


def adaptive_max_pool3d(input, output_size, return_indices=False):
    """adaptive_max_pool1d over the last three dims."""
    return _adaptive_max_pool(3, input, output_size, return_indices)
