"""Numerical calculus on sampled values, as torch's: the trapezoidal rule (trapezoid, its
old name trapz, and its running form cumulative_trapezoid) and finite-difference
derivatives (gradient: central differences inside, one-sided ones of order 1 or 2 at the
edges, on a uniform grid or at given coordinates). All are compositions of slices, sums
and products, so their gradients (and gradients of those) come with them."""
from minigrad import backend
from minigrad.tensor import Tensor
from minigrad.ops.elementwise import _floating
from minigrad.ops.reduce import normalize_dim
from minigrad.ops.shape import cat


def _samples(y, dim, op):
    if not isinstance(y, Tensor):
        raise TypeError(f"{op}: y must be a Tensor, got {type(y).__name__}")
    if y.ndim == 0:
        raise IndexError(f"{op}: y is 0-d; it needs a dim of samples (dim={dim})")
    return _floating(y), normalize_dim(dim, y.ndim, op)


def _along(t, d, ndim):
    """A 1-D tensor of steps shaped to broadcast along dim d of an ndim-dim tensor."""
    return t.reshape((1,) * d + (-1,) + (1,) * (ndim - d - 1))


def _widths(op, y, x, dx, d):
    """The widths of the n - 1 intervals along dim d: dx (a number), or the differences of
    the sample points x (1-D, one per sample, or broadcasting against y)."""
    if x is not None and dx is not None:
        raise TypeError(f"{op}: give x (the sample points) or dx (their spacing), not both")
    if x is None:
        dx = 1 if dx is None else dx
        if not backend.is_scalar(dx) or isinstance(dx, bool):
            raise TypeError(f"{op}: dx must be a number, got {dx!r}")
        return dx
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: x must be a Tensor of sample points, got {type(x).__name__}"
                        f" (for a spacing, pass dx=)")
    n = y.shape[d]
    if x.ndim == 1:
        if x.shape[0] != n:
            raise ValueError(f"{op}: there must be one x value per sample: x has {x.shape[0]}, "
                             f"y has {n} along dim {d}")
        return _along(x[1:] - x[:-1], d, y.ndim)
    if x.ndim != y.ndim:
        raise ValueError(f"{op}: x must be 1-D or have y's number of dims ({y.ndim}), got "
                         f"shape {x.shape}")
    m = x.shape[d]
    return x.narrow(d, 1, m - 1) - x.narrow(d, 0, m - 1) if m else x


def _pieces(y, d, widths):
    n = y.shape[d]
    if n == 0:
        return None
    return (y.narrow(d, 0, n - 1) + y.narrow(d, 1, n - 1)) * widths / 2


def trapezoid(y, x=None, *, dx=None, dim=-1):
    """∫ y along dim by the trapezoidal rule, as torch.trapezoid: samples spaced dx apart
    (1 unless given), or at the points x. Integers give float32; fewer than 2 samples
    give 0."""
    y, d = _samples(y, dim, "trapezoid")
    pieces = _pieces(y, d, _widths("trapezoid", y, x, dx, d))
    return (y * 0).sum(d) if pieces is None else pieces.sum(d)


trapz = trapezoid


def cumulative_trapezoid(y, x=None, *, dx=None, dim=-1):
    """The running trapezoidal integral along dim, as torch.cumulative_trapezoid: one value
    per interval (n - 1 of them for n samples)."""
    y, d = _samples(y, dim, "cumulative_trapezoid")
    pieces = _pieces(y, d, _widths("cumulative_trapezoid", y, x, dx, d))
    return y if pieces is None else pieces.cumsum(d)


# ---- gradient --------------------------------------------------------------------------
def _spacings(op, spacing, dims, x):
    """One spacing per dim: a number (a uniform step) or a 1-D tensor of coordinates."""
    if isinstance(spacing, Tensor):
        raise TypeError(f"{op}: spacing must be a number or a list (of numbers, or of 1-D "
                        f"coordinate tensors, one per dim); wrap a tensor in a list")
    if backend.is_scalar(spacing) and not isinstance(spacing, bool):
        return [spacing] * len(dims)
    if not isinstance(spacing, (list, tuple)):
        raise TypeError(f"{op}: spacing must be a number or a list, got {spacing!r}")
    if len(spacing) != len(dims):
        raise ValueError(f"{op}: spacing must be a number or a list with one entry per dim "
                         f"differentiated ({len(dims)}), got a list of {len(spacing)}")
    for s, d in zip(spacing, dims):
        if isinstance(s, Tensor):
            if s.ndim != 1 or s.shape[0] != x.shape[d]:
                raise ValueError(f"{op}: coordinates for dim {d} must be 1-D with "
                                 f"{x.shape[d]} values, got shape {s.shape}")
        elif not backend.is_scalar(s) or isinstance(s, bool):
            raise TypeError(f"{op}: each spacing must be a number or a 1-D tensor, got {s!r}")
    return list(spacing)


def _uniform(f, d, n, h, edge_order):
    """f' along dim d on a grid of step h."""
    def at(i, k=1): return f.narrow(d, i % n, k)
    inner = (f.narrow(d, 2, n - 2) - f.narrow(d, 0, n - 2)) / (2 * h)
    if edge_order == 1:
        first, last = (at(1) - at(0)) / h, (at(-1) - at(-2)) / h
    else:
        first = (-3 * at(0) + 4 * at(1) - at(2)) / (2 * h)
        last = (3 * at(-1) - 4 * at(-2) + at(-3)) / (2 * h)
    return cat([first, inner, last], d)


def _at_points(f, d, n, coords, edge_order):
    """f' along dim d at the coordinates `coords` (1-D): second-order differences on the
    uneven grid inside, one-sided ones at the edges."""
    steps = coords[1:] - coords[:-1]
    def at(i, k=1): return f.narrow(d, i % n, k)
    def step(i): return _along(steps.narrow(0, i % (n - 1), 1), d, f.ndim)
    hl, hr = (_along(s, d, f.ndim) for s in (steps[:-1], steps[1:]))
    inner = (-hr / (hl * (hl + hr)) * f.narrow(d, 0, n - 2)
             + (hr - hl) / (hl * hr) * f.narrow(d, 1, n - 2)
             + hl / (hr * (hl + hr)) * f.narrow(d, 2, n - 2))
    if edge_order == 1:
        first, last = (at(1) - at(0)) / step(0), (at(-1) - at(-2)) / step(-1)
    else:
        a, b = step(0), step(1)
        first = (-(2 * a + b) / (a * (a + b)) * at(0) + (a + b) / (a * b) * at(1)
                 - a / (b * (a + b)) * at(2))
        a, b = step(-2), step(-1)
        last = (b / (a * (a + b)) * at(-3) - (a + b) / (a * b) * at(-2)
                + (2 * b + a) / (b * (a + b)) * at(-1))
    return cat([first, inner, last], d)


def gradient(input, *, spacing=1, dim=None, edge_order=1):
    """The derivative of sampled values along each dim (or those in dim), as
    torch.gradient: a tuple, one tensor per dim, of input's shape. spacing is the grid step
    (a number, or one per dim) or, per dim, a 1-D tensor of the sample coordinates; inside,
    central differences (exact for quadratics), at the edges one-sided ones of edge_order
    1 or 2. Integers give float32."""
    op = "gradient"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if not backend.is_integer(edge_order) or isinstance(edge_order, bool):
        raise TypeError(f"{op}: edge_order must be an int (1 or 2), got {edge_order!r}")
    if edge_order not in (1, 2):
        raise ValueError(f"{op}: edge_order must be 1 or 2, got {edge_order!r}")
    if input.ndim == 0:
        raise ValueError(f"{op}: input is 0-d; it needs at least one dim of samples")
    if dim is None:
        dims = tuple(range(input.ndim))
    else:
        dims = tuple(normalize_dim(d, input.ndim, op) for d in (
            dim if isinstance(dim, (list, tuple)) else (dim,)))
        if len(set(dims)) != len(dims):
            raise ValueError(f"{op}: dim names a dim twice: {dim}")
    f = _floating(input)
    steps = _spacings(op, spacing, dims, f)
    out = []
    for d, h in zip(dims, steps):
        n = f.shape[d]
        if n < edge_order + 1:
            raise ValueError(f"{op}: each dim differentiated needs at least edge_order + 1 = "
                             f"{edge_order + 1} samples; dim {d} has {n}")
        out.append(_at_points(f, d, n, h, edge_order) if isinstance(h, Tensor)
                   else _uniform(f, d, n, h, edge_order))
    return tuple(out)
