"""torch's top-level reductions over groups of rows, bins and found positions:
segment_reduce (contiguous segments of given lengths, reduced by sum, mean, max or min;
differentiable through scatter_reduce), histogramdd (histogram's D-dimensional kin) and
nonzero_static (nonzero padded or cut to a fixed number of rows)."""
import builtins
import math
from collections import namedtuple

from minigrad import backend
from minigrad.creation import arange, full, zeros
from minigrad.tensor import Tensor

_SEGMENT_REDUCE = {"sum": "sum", "mean": "mean", "max": "amax", "amax": "amax",
                   "min": "amin", "amin": "amin", "prod": "prod"}
_EMPTY = {"sum": 0.0, "mean": float("nan"), "amax": float("-inf"), "amin": float("inf"),
          "prod": 1.0}


def _lengths(data, lengths, offsets):
    """The segments' lengths, an int64 tensor on data's device, from lengths or offsets."""
    if (lengths is None) == (offsets is None):
        raise ValueError("mg.segment_reduce: give exactly one of lengths= and offsets=")
    given, name = (lengths, "lengths") if lengths is not None else (offsets, "offsets")
    if not isinstance(given, Tensor) or given.dtype.kind not in "iu" or given.ndim != 1:
        raise TypeError(f"mg.segment_reduce: {name} must be a 1-D integer tensor (segments "
                        f"along axis 0), got {getattr(given, 'dtype', type(given).__name__)} "
                        f"{tuple(getattr(given, 'shape', ()))}")
    given = given.to(device=data.device, dtype="int64")
    if offsets is not None:
        if given.numel() < 1:
            raise ValueError("mg.segment_reduce: offsets must hold at least one value")
        given = given[1:] - given[:-1]
    if given.numel() and bool((given < 0).any()):
        raise ValueError(f"mg.segment_reduce: {name} describe a segment of negative length")
    return given


def segment_reduce(data, reduce, *, lengths=None, indices=None, offsets=None, axis=0,
                   unsafe=False, initial=None):
    """Reduce data's rows (axis 0) in contiguous segments, one output row each: lengths
    (S,) gives each segment's row count (or offsets (S+1,), its boundaries). An empty
    segment gives `initial`, else sum 0, mean NaN, max -inf, min inf; with `initial`
    each segment's reduction also takes it in (mean: (initial + sum) / count, as torch's).
    unsafe=True skips checking that the lengths cover data's rows exactly."""
    if not isinstance(data, Tensor) or not data.dtype.kind == "f":
        raise TypeError(f"mg.segment_reduce: data must be a float tensor, got "
                        f"{getattr(data, 'dtype', type(data).__name__)}")
    if reduce not in _SEGMENT_REDUCE:
        raise ValueError(f"mg.segment_reduce: reduce must be one of "
                         f"{sorted(_SEGMENT_REDUCE)}, got {reduce!r}")
    if indices is not None:
        raise ValueError("mg.segment_reduce: indices= is not supported (as torch's); give "
                         "lengths= or offsets=")
    if axis not in (0, -data.ndim) or data.ndim == 0:
        raise ValueError(f"mg.segment_reduce: with 1-D lengths the segments run along axis "
                         f"0 of a tensor of at least one dimension, got axis={axis} for "
                         f"shape {tuple(data.shape)}")
    how, lens = _SEGMENT_REDUCE[reduce], _lengths(data, lengths, offsets)
    count = int(lens.sum().item()) if lens.numel() else 0
    if count != data.shape[0] and not unsafe:
        raise ValueError(f"mg.segment_reduce: the lengths sum to {count}, not to data's "
                         f"{data.shape[0]} rows along axis 0")
    rows = data[:count] if count <= data.shape[0] else data
    nseg = lens.shape[0]
    ids = arange(nseg, device=data.device).repeat_interleave(lens)[:rows.shape[0]]
    index = ids.reshape(-1, *([1] * (data.ndim - 1))).expand(*rows.shape)
    shape = (nseg, *data.shape[1:])
    empty = (lens == 0).reshape(-1, *([1] * (data.ndim - 1)))
    if initial is None:
        out = zeros(*shape, dtype=data.dtype, device=data.device).scatter_reduce(
            0, index, rows, how, include_self=False)
        from minigrad.ops.elementwise import where
        return where(empty, _EMPTY[how], out)
    base = full(shape, initial, dtype=data.dtype, device=data.device)
    if how != "mean":
        return base.scatter_reduce(0, index, rows, how, include_self=True)
    total = base.scatter_reduce(0, index, rows, "sum", include_self=True)
    return total / lens.clip(min=1).to(dtype=data.dtype).reshape(empty.shape)


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
        e = histogram(col, per_dim[d], range=r).bin_edges.data
        v, nbins = col.data, e.shape[0] - 1
        inside &= (v >= e[0]) & (v <= e[-1])
        pos = xp.clip(xp.searchsorted(e, v, side="right") - 1, 0, nbins - 1)
        flat, edges = flat * nbins + pos, edges + [e]
    sizes = tuple(e.shape[0] - 1 for e in edges)
    w = xp.ones(points.shape[0], input.dtype) if weight is None else \
        weight.detach().to(dtype=input.dtype).data.reshape(-1)
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
