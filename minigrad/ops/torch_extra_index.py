"""torch's remaining top-level indexing functions: writing one view of a tensor
(select_scatter, slice_scatter, diagonal_scatter: `Embed`), put and index_reduce (built on
index_put and scatter_reduce), and the answers outside the graph: isin,
unique_consecutive, histogram, unravel_index."""
import math
from collections import namedtuple

from minigrad import backend
from minigrad.args import number_arg
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.promotion import _pair
from minigrad.ops.reduce import normalize_dim
from minigrad.ops.torch_extra import _flag, _float_only, _tensor

Histogram = namedtuple("histogram", ("hist", "bin_edges"))


# ---- writing one view of a tensor ----------------------------------------------------------
class _Part:
    """A part of a tensor: `index` (slices and ints) or, with diagonal=(offset, d1, d2),
    that diagonal, moved last as torch.diagonal gives it."""
    def __init__(self, index=None, diagonal=None):
        self.index, self.diagonal = index, diagonal

    def write(self, xp, out, src):
        if self.diagonal is None:
            out[self.index] = src
            return
        offset, d1, d2 = self.diagonal
        n = src.shape[-1]
        rows = xp.arange(n) + max(-offset, 0)
        xp.moveaxis(out, (d1, d2), (-2, -1))[..., rows, rows + offset] = src

    def read(self, t):
        if self.diagonal is None:
            return t[self.index]
        return t.diagonal(*self.diagonal)


class Embed(Function):
    """a with src written over one part of it (a copy; a is unchanged). Linear: a's gradient
    is g with that part zeroed (Embed again), src's the part of g."""
    needs_values = False
    def forward(self, a, src, part):
        self.part = part
        out = a.copy()
        part.write(self.xp, out, src.astype(a.dtype, copy=False))
        return out
    def backward(self, g):
        src = self.inputs[1]
        ga = gs = None
        if self.needs_input_grad[0]:
            ga = Embed.apply(g, self.const(self.xp.zeros(src.shape, g.dtype)), part=self.part)
        if self.needs_input_grad[1]:
            gs = self.part.read(g)
            gs = gs if gs.dtype == src.dtype else gs.to(dtype=src.dtype)
        return ga, gs


def _embed(op, x, src, part, shape):
    _tensor(x, op)
    _tensor(src, op, "src")
    if tuple(src.shape) != tuple(shape):
        raise ValueError(f"{op}: src must have the shape of the part of input it replaces: "
                         f"src has shape {src.shape}, the part {tuple(shape)}")
    return Embed.apply(x, src, part=part)


def select_scatter(input, src, dim, index):
    """input with input.select(dim, index) replaced by src (a copy), as torch.select_scatter;
    src is cast to input's dtype."""
    from minigrad.ops.layout import select
    view = select(_tensor(input, "select_scatter"), dim, index)      # its checks, its shape
    d = normalize_dim(dim, input.ndim, "select_scatter")
    part = _Part(index=(slice(None),) * d + (int(index) % input.shape[d],))
    return _embed("select_scatter", input, src, part, view.shape)


def slice_scatter(input, src, dim=0, start=None, end=None, step=1):
    """input with input[..., start:end:step, ...] (along dim) replaced by src (a copy), as
    torch.slice_scatter; the bounds as Python's slices (clamped, negatives from the end)."""
    op = "slice_scatter"
    if _tensor(input, op).ndim == 0:
        raise IndexError(f"{op}: a 0-d tensor has no dim to slice")
    d = normalize_dim(dim, input.ndim, op)
    for name, v in (("start", start), ("end", end), ("step", step)):
        if v is not None and (not backend.is_integer(v) or isinstance(v, bool)):
            raise TypeError(f"{op}: {name} must be an int or None, got {v!r}")
    if step is None or step <= 0:
        raise ValueError(f"{op}: step must be positive, got {step}")
    cut = slice(start, end, step)
    shape = list(input.shape)
    shape[d] = len(range(*cut.indices(input.shape[d])))
    return _embed(op, input, src, _Part(index=(slice(None),) * d + (cut,)), shape)


def diagonal_scatter(input, src, offset=0, dim1=0, dim2=1):
    """input with input.diagonal(offset, dim1, dim2) replaced by src (a copy), as
    torch.diagonal_scatter."""
    from minigrad.ops.layout import diagonal
    view = diagonal(_tensor(input, "diagonal_scatter"), offset, dim1, dim2)
    d1, d2 = (normalize_dim(d, input.ndim, "diagonal_scatter") for d in (dim1, dim2))
    return _embed("diagonal_scatter", input, src, _Part(diagonal=(int(offset), d1, d2)),
                  view.shape)


# ---- indexing ------------------------------------------------------------------------------
def _indices(op, index, *, at_most_1d=False):
    _tensor(index, op, "index")
    if index.dtype.kind not in "iu":
        raise TypeError(f"{op}: index must be an integer tensor, got {index.dtype}")
    if at_most_1d and index.ndim > 1:
        raise ValueError(f"{op}: index must be 0-d or 1-D, got shape {index.shape}")
    return index


def _in_range(op, index, n, what):
    a = index._data
    bad = (a < -n) | (a >= n)
    if a.size and bool(bad.any()):
        raise IndexError(f"{op}: index {int(a[bad][0])} is out of range for {what} "
                         f"(valid: {-n}..{n - 1})")


def put(input, index, source, accumulate=False):
    """input (as if flattened) with the elements at `index` set to source's (added with
    accumulate=True), as torch.put: a copy, input's shape; negative indices count from the
    end. Differentiable in input and source."""
    from minigrad.ops.index_more import index_put
    op = "put"
    _tensor(input, op)
    _indices(op, index)
    _tensor(source, op, "source")
    if source.dtype != input.dtype:
        raise TypeError(f"{op}: input and source must have one dtype, got {input.dtype} and "
                        f"{source.dtype}")
    if source.numel() != index.numel():
        raise IndexError(f"{op}: source and index must have the same number of elements, got "
                         f"{source.numel()} and {index.numel()}")
    _flag(op, "accumulate", accumulate)
    _in_range(op, index, input.numel(), f"a tensor of {input.numel()} elements")
    flat = index_put(input.reshape(-1), (index.reshape(-1),), source.reshape(-1), accumulate)
    return flat.reshape(input.shape)


def index_reduce(input, dim, index, source, reduce, *, include_self=True):
    """input with source's slices along dim combined into input's slices at `index`, as
    torch.index_reduce: reduce 'prod', 'mean' (of integers rounded down), 'amax' or 'amin';
    include_self=False leaves out input's own value where a slice is reduced into.
    Differentiable as scatter_reduce, which it is with index spread over source's shape."""
    from minigrad.ops.index_more import scatter_reduce
    op = "index_reduce"
    if reduce not in ("prod", "mean", "amax", "amin"):
        raise ValueError(f"{op}: reduce must be one of 'prod', 'mean', 'amax', 'amin', got "
                         f"{reduce!r}")
    _tensor(input, op)
    _tensor(source, op, "source")
    _indices(op, index, at_most_1d=True)
    _flag(op, "include_self", include_self)
    if input.ndim == 0 or source.ndim != input.ndim:
        raise ValueError(f"{op}: input and source need the same number of dims (at least 1), "
                         f"got shapes {input.shape} and {source.shape}")
    d = normalize_dim(dim, input.ndim, op)
    expected = input.shape[:d] + (index.numel(),) + input.shape[d + 1:]
    if tuple(source.shape) != tuple(expected):
        raise ValueError(f"{op}: source must have shape {expected} (input's, with one slice "
                         f"per index along dim {d}), got {source.shape}")
    _in_range(op, index, input.shape[d], f"dim {d} of size {input.shape[d]}")
    grid = index.reshape((1,) * d + (-1,) + (1,) * (input.ndim - d - 1)).expand(*source.shape)
    return scatter_reduce(input, d, grid % input.shape[d], source, reduce,
                          include_self=include_self)


# ---- answers outside the graph -------------------------------------------------------------
def isin(elements, test_elements, *, assume_unique=False, invert=False):
    """Whether each element of `elements` occurs in test_elements, as torch.isin: either may
    be a number (not both); values compare after type promotion (1 is in [1.0]); NaN is in
    nothing. A bool tensor of elements' shape (invert=True: the opposite)."""
    if not isinstance(elements, Tensor) and not isinstance(test_elements, Tensor):
        raise TypeError("isin: at least one of elements and test_elements must be a tensor")
    e, t = _pair(elements, test_elements)
    xp = e.backend.xp
    pool = t._data.reshape(-1)
    if pool.size == 0:
        found = xp.zeros(e.shape, backend.bool_)
    else:
        pool = pool[xp.argsort(pool)]
        pos = xp.minimum(xp.searchsorted(pool, e._data), pool.size - 1)
        found = pool[pos] == e._data
    return Tensor._make(~found if invert else found, e.device)


def unique_consecutive(input, return_inverse=False, return_counts=False, dim=None):
    """The input with each run of equal consecutive values (or, with dim, slices along dim)
    kept once, as torch.unique_consecutive (flattened without dim; NaN equals nothing);
    with return_inverse each element's run number (input's shape; one per slice with dim),
    with return_counts each run's length. Not differentiable (as PyTorch's)."""
    x = _tensor(input, "unique_consecutive")
    xp = x.backend.xp
    if dim is None:
        rows, d = x._data.reshape(-1, 1), None
    else:
        if x.ndim == 0:
            raise IndexError("unique_consecutive: a 0-d tensor has no dim")
        d = normalize_dim(dim, x.ndim, "unique_consecutive")
        # the slice size spelled out: -1 cannot be inferred when there are no slices
        rows = xp.moveaxis(x._data, d, 0).reshape(x.shape[d], x.numel() // x.shape[d]
                                                 if x.shape[d] else 0)
    n = rows.shape[0]
    starts = xp.ones(n, backend.bool_)
    if n > 1:
        starts[1:] = (rows[1:] != rows[:-1]).any(axis=1) if rows.shape[1] else False
    first = xp.nonzero(starts)[0]
    if d is None:
        values = x._data.reshape(-1)[first]
    else:
        values = xp.moveaxis(xp.moveaxis(x._data, d, 0)[first], 0, d)
    out = [Tensor._make(xp.ascontiguousarray(values), x.device)]
    if return_inverse:
        inverse = xp.cumsum(starts.astype(backend.int64)) - 1
        out.append(Tensor._make(inverse.reshape(x.shape if d is None else (n,)), x.device))
    if return_counts:
        ends = xp.concatenate([first[1:], xp.full((1,), n, backend.int64)])
        out.append(Tensor._make((ends - first).astype(backend.int64), x.device))
    return out[0] if len(out) == 1 else tuple(out)


def histogram(input, bins=100, *, range=None, weight=None, density=False):
    """(hist, bin_edges) of input's values, as torch.histogram: `bins` equal bins over
    `range` (default: the data's min and max, widened by 0.5 each way when equal; [0, 1] for
    no data), or a 1-D tensor of increasing edges. Each bin holds [left, right), the last
    [left, right]; values outside, and NaN, are not counted. weight (input's shape) weights
    each value; density=True divides by the total times the bin width. Floats only; not
    differentiable (as PyTorch's)."""
    op, x = "histogram", _float_only(input, "histogram")
    xp, data = x.backend.xp, x._data.reshape(-1)
    if isinstance(bins, Tensor):
        if bins.ndim != 1 or bins.numel() < 2 or bins.dtype != x.dtype:
            raise ValueError(f"{op}: bins as a tensor must be 1-D edges (at least 2) of "
                             f"input's dtype {x.dtype}, got shape {bins.shape} of {bins.dtype}")
        edges = bins._data.copy()
    else:
        if not backend.is_integer(bins) or isinstance(bins, bool):
            raise TypeError(f"{op}: bins must be an int or a tensor of edges, got {bins!r}")
        if bins < 1:
            raise ValueError(f"{op}: bins must be positive, got {bins}")
        if range is not None:
            lo, hi = (float(number_arg(op, "range", v)) for v in range)
        elif data.size:
            lo, hi = float(data.min()), float(data.max())
        else:
            lo, hi = 0.0, 1.0
        if not (math.isfinite(lo) and math.isfinite(hi)):
            raise ValueError(f"{op}: the range [{lo}, {hi}] must be finite; give range=")
        if lo > hi:
            raise ValueError(f"{op}: range's min ({lo}) must not exceed its max ({hi})")
        if lo == hi:
            lo, hi = lo - 0.5, hi + 0.5
        from minigrad.creation import linspace
        edges = linspace(lo, hi, int(bins) + 1, dtype=x.dtype, device=x.device)._data
    if weight is not None:
        if _tensor(weight, op, "weight").shape != x.shape or weight.dtype != x.dtype:
            raise ValueError(f"{op}: weight must have input's shape {x.shape} and dtype "
                             f"{x.dtype}, got {weight.shape} of {weight.dtype}")
    nbins = edges.shape[0] - 1
    inside = (data >= edges[0]) & (data <= edges[-1])
    values = data[inside]
    pos = xp.minimum(xp.searchsorted(edges, values, side="right") - 1, nbins - 1)
    w = xp.ones(values.shape, x.dtype) if weight is None else weight._data.reshape(-1)[inside]
    hist = xp.zeros(nbins, x.dtype)
    x.backend.index_add(hist, pos, w)
    if density:
        hist = hist / (hist.sum() * (edges[1:] - edges[:-1]))
    return Histogram(Tensor._make(hist, x.device), Tensor._make(edges, x.device))


def unravel_index(indices, shape):
    """The coordinates in a tensor of `shape` of each flat index, as torch.unravel_index: a
    tuple of int64 tensors (one per dim) of indices' shape. As PyTorch's, indices are taken
    modulo each dim's size, so -1 is the last element (and one past the end wraps)."""
    op = "unravel_index"
    if not isinstance(indices, Tensor) or indices.dtype.kind not in "iu":
        raise TypeError(f"{op}: indices must be an integer tensor, got "
                        f"{getattr(indices, 'dtype', type(indices).__name__)}")
    dims = (shape,) if backend.is_integer(shape) else tuple(shape)
    if not all(backend.is_integer(s) and not isinstance(s, bool) for s in dims):
        raise TypeError(f"{op}: shape must be an int or a sequence of ints, got {shape!r}")
    if any(s < 0 for s in dims):
        raise ValueError(f"{op}: shape must not be negative, got {dims}")
    if any(s == 0 for s in dims) and indices.numel():
        raise ValueError(f"{op}: a shape with a zero-size dim {dims} has no elements to index")
    rest, out = indices._data.astype(backend.int64), []
    for s in reversed(dims):
        out.append(Tensor._make(rest % s, indices.device))
        rest = rest // s
    return tuple(reversed(out))
