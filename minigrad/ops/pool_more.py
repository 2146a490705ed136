"""Average, Lp and adaptive pools, as torch.nn.functional's (the max pools, the window
geometry and the way a pool runs over the grid are pool.py's: its docstring says how)."""
import math

from minigrad import backend
from minigrad.args import number_arg
from minigrad.autograd import Function
from minigrad.ops.shape import clone
from minigrad.tensor import Tensor
from minigrad.ops.pool import _ints, _check_input, Windows, _first_max, _result, np

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


def _adaptive_avg_pool(n, input, output_size):
    op = f"adaptive_avg_pool{n}d"
    x, unbatched = _check_input(op, input, n)
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
        x = (x.movedim(axis, -1) @ a).movedim(-1, axis)
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


def _adaptive_max_pool(n, input, output_size, return_indices):
    op = f"adaptive_max_pool{n}d"
    x, unbatched = _check_input(op, input, n)
    sizes = _output_size(op, output_size, x, n)
    xp, windows, tables = x.backend.xp, x.data, []
    for d, (L, out) in enumerate(zip(x.shape[2:], sizes)):
        start, stop = _bounds(L, out)
        width = int((stop - start).max()) if out else 1
        at = start[:, None] + np.arange(width)
        table = np.where(at < stop[:, None], at, stop[:, None] - 1)   # (out, width)
        tables.append(table)
        axis = 2 + 2 * d                 # each gathered dim before it became (out, width)
        windows = windows[(slice(None),) * axis + (xp.asarray(table),)]
    lead = windows.ndim - 2 * n          # (..., o1, w1, o2, w2, ...) -> (..., *out, *width)
    order = tuple(range(lead)) + tuple(lead + 2 * d for d in range(n)) + \
        tuple(lead + 2 * d + 1 for d in range(n))
    windows = windows.transpose(order)
    if 0 in sizes:                       # nothing to pick: an empty result
        position = xp.zeros(x.shape[:2] + sizes, dtype=backend.int64)
    else:
        position = _first_max(xp, windows, tables, x.shape[2:])
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
