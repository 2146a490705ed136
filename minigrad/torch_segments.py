"""torch's top-level reductions over groups of rows, bins and found positions:
segment_reduce (contiguous segments of given lengths along an axis, reduced by sum, mean,
max, min or prod; differentiable: through scatter_reduce, max's and min's as torch's), histogramdd (histogram's D-dimensional kin) and
nonzero_static (nonzero padded or cut to a fixed number of rows)."""
import builtins
import math
from collections import namedtuple

from minigrad import backend
from minigrad.autograd import Function
from minigrad.creation import arange, full, zeros
from minigrad.ops.elementwise import where
from minigrad.ops.index import GetItem, IndexAdd
from minigrad.ops.scatter import _checked
from minigrad.tensor import Tensor

_SEGMENT_REDUCE = {"sum": "sum", "mean": "mean", "max": "amax", "amax": "amax",
                   "min": "amin", "amin": "amin", "prod": "prod"}
_EMPTY = {"sum": 0.0, "mean": float("nan"), "amax": float("-inf"), "amin": float("inf"),
          "prod": 1.0}


def _lengths(data, lengths, offsets, axis):
    """The segments' lengths, an int64 tensor data.shape[:axis] + (S,) on data's device,
    from lengths or offsets (data.shape[:axis] + (S + 1,))."""
    if (lengths is None) == (offsets is None):
        raise ValueError("mg.segment_reduce: give exactly one of lengths= and offsets=")
    given, name = (lengths, "lengths") if lengths is not None else (offsets, "offsets")
    lead = tuple(data.shape[:axis])
    if not isinstance(given, Tensor) or given.dtype.kind not in "iu" or \
            tuple(given.shape[:-1]) != lead or given.ndim != axis + 1:
        raise TypeError(f"mg.segment_reduce: {name} must be an integer tensor of shape "
                        f"{lead + ('S',)} (data's dims before axis {axis}, then one value "
                        f"per segment), got {getattr(given, 'dtype', type(given).__name__)} "
                        f"{tuple(getattr(given, 'shape', ()))}")
    given = given.to(device=data.device, dtype="int64")
    if offsets is not None:
        if given.shape[-1] < 1:
            raise ValueError("mg.segment_reduce: offsets must hold at least one value")
        given = given[..., 1:] - given[..., :-1]
    if given.numel() and bool((given < 0).any()):
        raise ValueError(f"mg.segment_reduce: {name} describe a segment of negative length")
    return given


class _SegmentExtreme(Function):
    """The max or min `value` (computed outside) of data's segments, with PyTorch's
    segment_reduce gradient: each segment's g shared evenly among its elements equal to
    the result (its NaNs where the result is NaN; `initial` takes no share)."""
    def forward(self, data, value, index, members):
        self.index, self.members = index, members
        return value

    def backward(self, g):
        count = IndexAdd.apply(self.const(self.members.astype(g.dtype)), index=self.index,
                               shape=g.shape)
        share = GetItem.apply(g / count.clip(min=1), index=self.index)
        return where(self.const(self.members), share, 0.0)


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduce data along `axis` in contiguous segments, one output slot each: lengths
    (data.shape[:axis] + (S,)) gives each segment's length, for each index before axis
    (or offsets, (..., S+1), their boundaries); the result is data.shape[:axis] + (S,) +
    data.shape[axis+1:]. An empty segment gives `initial`, else sum 0, mean NaN, max -inf,
    min inf; with `initial` each segment's reduction also takes it in (mean: (initial +
    sum) / count, as torch's). unsafe=True skips checking that the lengths cover the axis
    exactly."""
    if not isinstance(data, Tensor) or not data.dtype.kind == "f":
        raise TypeError(f"mg.segment_reduce: data must be a float tensor, got "
                        f"{getattr(data, 'dtype', type(data).__name__)}")
    if reduce not in _SEGMENT_REDUCE:
        raise ValueError(f"mg.segment_reduce: reduce must be one of "
                         f"{sorted(_SEGMENT_REDUCE)}, got {reduce!r}")
    if indices is not None:
        raise ValueError("mg.segment_reduce: indices= is not supported (as torch's); give "
                         "lengths= or offsets=")
    if data.ndim == 0 or not -data.ndim <= axis < data.ndim:
        raise ValueError(f"mg.segment_reduce: axis must name one of data's dims, got "
                         f"axis={axis} for shape {tuple(data.shape)}")
    axis %= data.ndim
    how, lens = _SEGMENT_REDUCE[reduce], _lengths(data, lengths, offsets, axis)
    n, nseg = data.shape[axis], lens.shape[-1]
    lead, rest = math.prod(data.shape[:axis]), math.prod(data.shape[axis + 1:])
    ends = lens.reshape(lead, nseg).cumsum(-1)
    if not unsafe and (nseg == 0 and n or nseg and bool((ends[:, -1] != n).any())):
        count = int(ends[0, -1].item()) if nseg and lead else 0
        raise ValueError(f"mg.segment_reduce: the lengths sum to {count}, not to data's "
                         f"{n} rows along axis {axis}" if lead == 1 else
                         f"mg.segment_reduce: the lengths of some row sum to other than "
                         f"data's {n} along axis {axis}")
    # each element's segment: how many ends lie at or before it (nseg: past them, dropped)
    at = arange(n, device=data.device).reshape(1, n, 1)
    ids = (ends.reshape(lead, 1, nseg) <= at).sum(-1)
    rows = data.reshape(lead, n, rest)
    index = ids.reshape(lead, n, 1).expand(lead, n, rest)
    shape = (lead, nseg + 1, rest)
    out = _reduced(rows, index, shape, how, initial)[:, :nseg]
    if initial is None:
        empty = (lens == 0).reshape(lead, nseg, 1)
        out = where(empty, _EMPTY[how], out)
    return out.reshape(*data.shape[:axis], nseg, *data.shape[axis + 1:])


def _reduced(rows, index, shape, how, initial):
    """rows (B, N, R) reduced by `how` along dim 1 into `shape` (B, S + 1, R) at index."""
    if initial is None:
        base, include = zeros(*shape, dtype=rows.dtype, device=rows.device), False
    else:
        base, include = full(shape, initial, dtype=rows.dtype, device=rows.device), True
    if how == "mean" and initial is not None:
        ones = full(rows.shape, 1.0, dtype=rows.dtype, device=rows.device)
        count = zeros(*shape, dtype=rows.dtype, device=rows.device).scatter_reduce(
            1, index, ones, "sum", include_self=False)
        return base.scatter_reduce(1, index, rows, "sum", include_self=True) / count.clip(min=1)
    if how not in ("amax", "amin"):
        return base.scatter_reduce(1, index, rows, how, include_self=include)
    value = base.scatter_reduce(1, index, rows.detach(), how, include_self=include)
    grid, _ = _checked("segment_reduce", base, 1, index, rows, number_ok=False)
    xp, at = rows.backend.xp, value._data[grid]
    members = (rows._data == at) | (xp.isnan(rows._data) & xp.isnan(at))
    return _SegmentExtreme.apply(rows, value=value._data, index=grid, members=members)


Histogramdd = namedtuple("histogramdd", ["hist", "bin_edges"])


def histogramdd(input, bins=10, *, range=None, weight=None, density=False):  # noqa: A002
    """(hist, bin_edges) of the D-dimensional points input (..., D), as torch.histogramdd:
    `bins` an int for every dim, D ints, or D 1-D tensors of edges; `range` D (min, max)
    pairs flattened [min0, max0, min1, max1, ...]. Each dim's bins are as histogram's
    (the last closed on the right); a point outside any dim's range is not counted.
    weight (input.shape[:-1]) weights each point; density=True divides by the total
    times each bin's volume. Floats only; not differentiable (as PyTorch's)."""
    from minigrad.ops.torch_extra_index import histogram
    if not isinstance(input, Tensor) or input.dtype.kind != "f" or input.ndim < 1:
        raise TypeError(f"mg.histogramdd: input must be a float tensor of points (..., D), "
                        f"got {getattr(input, 'dtype', type(input).__name__)} "
                        f"{tuple(getattr(input, 'shape', ()))}")
    ndim = input.shape[-1]
    points = input.detach().reshape(-1, ndim)
    per_dim = bins if isinstance(bins, (list, tuple)) else [bins] * ndim
    if len(per_dim) != ndim:
        raise ValueError(f"mg.histogramdd: bins must give {ndim} values (one per dim), got "
                         f"{len(per_dim)}")
    if range is not None and len(range) != 2 * ndim:
        raise ValueError(f"mg.histogramdd: range must hold {2 * ndim} values (min, max per "
                         f"dim), got {len(range)}")
    if weight is not None and (not isinstance(weight, Tensor) or
                               tuple(weight.shape) != tuple(input.shape[:-1])):
        raise ValueError(f"mg.histogramdd: weight must be a tensor of shape "
                         f"{tuple(input.shape[:-1])}, got "
                         f"{tuple(getattr(weight, 'shape', ())) or type(weight).__name__}")
    xp = input.backend.xp
    edges, flat = [], xp.zeros(points.shape[0], "int64")
    inside = xp.ones(points.shape[0], bool)
    for d in builtins.range(ndim):     # (range is an argument here)
        col = points[:, d]
        r = None if range is None else (range[2 * d], range[2 * d + 1])
        e = histogram(col, per_dim[d], range=r).bin_edges._data
        v, nbins = col._data, e.shape[0] - 1
        inside &= (v >= e[0]) & (v <= e[-1])
        pos = xp.clip(xp.searchsorted(e, v, side="right") - 1, 0, nbins - 1)
        flat, edges = flat * nbins + pos, edges + [e]
    sizes = tuple(e.shape[0] - 1 for e in edges)
    w = xp.ones(points.shape[0], input.dtype) if weight is None else \
        weight.detach().to(dtype=input.dtype)._data.reshape(-1)
    hist = xp.zeros(math.prod(sizes), input.dtype)
    input.backend.index_add(hist, flat[inside], w[inside])
    hist = hist.reshape(sizes)
    if density:
        volume = xp.ones((), input.dtype)
        for d, e in enumerate(edges):
            volume = volume * (e[1:] - e[:-1]).reshape((-1,) + (1,) * (ndim - 1 - d))
        hist = hist / (hist.sum() * volume)
    return Histogramdd(Tensor._make(hist, input.device),
                       tuple(Tensor._make(e, input.device) for e in edges))


def nonzero_static(input, *, size, fill_value=-1):
    """input.nonzero(), padded with rows of fill_value (or cut) to `size` rows: an int64
    tensor (size, input.ndim) whose shape is known before the values are."""
    if not isinstance(input, Tensor):
        raise TypeError(f"mg.nonzero_static: expected a Tensor, got {type(input).__name__}")
    if not backend.is_integer(size) or isinstance(size, bool) or size < 0:
        raise ValueError(f"mg.nonzero_static: size must be a non-negative integer, got "
                         f"{size!r}")
    found = input.nonzero()[:size]
    pad = size - found.shape[0]
    if not pad:
        return found
    from minigrad.ops.shape import cat
    return cat([found, full((pad, input.ndim), fill_value, dtype="int64",
                            device=input.device)])
