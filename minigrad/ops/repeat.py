"""Copies of elements and their opposite: repeat_interleave (each element, or slice, repeated
in place) and unique (each distinct value once, with where each element went and how often
each value occurs). Neither is an op of its own: repeat_interleave is expand or indexing,
whose gradients sum the copies back; unique is not differentiable (as PyTorch)."""
from minigrad import backend
from minigrad.memory_format import contiguous_format
from minigrad.tensor import Tensor
from minigrad.ops.index import GetItem
from minigrad.ops.reduce import normalize_dim


def repeat_interleave(x, repeats=None, dim=None, *, output_size=None):
    """Each slice of x along dim repeated `repeats` times in place, as
    torch.repeat_interleave: [a, b] with repeats 2 is [a, a, b, b]. `repeats` is an int, or
    integers one per slice (a 1-D tensor, array or list; a single one applies to all).
    Without dim, x is flattened first. With repeats=None, x itself is the repeats and the
    result the indices 0, 1, ... each repeated so often (mg.repeat_interleave(r), as torch)."""
    op = "repeat_interleave"
    if repeats is None:
        counts = _counts(op, x, None)
        return repeat_interleave(Tensor._make(x.backend.xp.arange(counts.size), x.device),
                                 counts, 0, output_size=output_size)
    if dim is None or x.ndim == 0:
        if dim is not None:
            normalize_dim(dim, 1, op)          # a 0-d tensor accepts dim 0 and -1
        x, d = x.reshape(-1), 0
    else:
        d = normalize_dim(dim, x.ndim, op)
    n = x.shape[d]
    if not backend.is_integer(repeats):
        counts = _counts(op, repeats, n)
        if counts.size == 1:                   # one count for every slice
            repeats = int(counts[0])
    if backend.is_integer(repeats):
        if repeats < 0:
            raise ValueError(f"{op}: repeats must be non-negative, got {repeats}")
        _check_output_size(op, output_size, n * repeats)
        # a new dim of `repeats` copies after d (an expand, a view) merged into d: the
        # gradient of expand sums the copies back
        shape = x.shape[:d + 1] + (repeats,) + x.shape[d + 1:]
        out = x.unsqueeze(d + 1).expand(shape).reshape(
            x.shape[:d] + (n * repeats,) + x.shape[d + 1:])
        # a new tensor, never x's memory: the reshape copies, except where it can stay a
        # view (repeats 1, or n 1: the expanded dim merged with size-1 dims), whose
        # count of in-place changes it then shares with x
        return out.clone(memory_format=contiguous_format) \
            if out._version_counter is x._version_counter else out
    _check_output_size(op, output_size, int(counts.sum()))
    # the position each output slice comes from (0, 0, 1, 2, 2, ... for counts 2, 1, 2, ...):
    # indexing, whose gradient adds the copies' gradients back into their source
    xp = x.backend.xp
    positions = xp.repeat(xp.arange(n), counts.tolist())
    return GetItem.apply(x, index=(slice(None),) * d + (positions,))


def _counts(op, repeats, n):
    """repeats (a Tensor, array or list of integers) as a host array, checked: 1-D (or one
    number), non-negative, and one per slice (n of them) or a single one. Read to the host
    once: the output's size depends on the values."""
    if isinstance(repeats, Tensor):
        repeats = repeats._data
    try:
        counts = backend.to_host(repeats)
    except TypeError:
        raise TypeError(f"{op}: repeats must be an int or a 1-D tensor of integers, got "
                        f"{type(repeats).__name__}") from None
    if counts.dtype.kind not in "iu" and not (counts.size == 0 and counts.dtype.kind == "f"):
        raise TypeError(f"{op}: repeats must be integers, got {counts.dtype}")
    if counts.ndim > 1:
        raise ValueError(f"{op}: repeats must be an int or a 1-D tensor, got shape "
                         f"{counts.shape}")
    counts = counts.reshape(-1).astype(backend.int64)
    if n is not None and counts.size not in (1, n):
        raise ValueError(f"{op}: repeats has {counts.size} entries, but the dim repeated has "
                         f"{n} slices; give one count per slice, or a single one")
    if counts.size and counts.min() < 0:
        raise ValueError(f"{op}: repeats must be non-negative, got {int(counts.min())} among "
                         f"them")
    return counts


def _check_output_size(op, output_size, total):
    if output_size is not None and output_size != total:
        raise ValueError(f"{op}: output_size={output_size}, but the repeats make {total}")


def unique(x, sorted=True, return_inverse=False, return_counts=False, dim=None):
    """The distinct values of x, flattened, in ascending order, as torch.unique (NaNs last,
    each one apart: NaN != NaN); with return_inverse also, for each element of x, the
    position of its value among them (x's shape), and with return_counts how often each
    value occurs. Not differentiable: the result is a new tensor outside the graph.
    sorted=False is accepted and still sorts (an order is allowed then, as PyTorch's CPU
    also sorts).

    With `dim`, the distinct slices along it, in lexicographic order, as torch.unique(dim=):
    the inverse is then each slice's position among them (shape (x.shape[dim],)) and the
    counts are per slice. Worked out on the host (the result's size depends on the values,
    so PyTorch's GPU version waits for them too); slices with NaNs compare as NumPy's do."""
    if dim is not None:
        return _unique_slices(x, normalize_dim(dim, x.ndim, "unique"), return_inverse,
                              return_counts)
    xp = x.backend.xp
    # equal_nan=False: each NaN is a value of its own, as PyTorch (NumPy and CuPy would
    # collapse them into one)
    found = xp.unique(x._data.reshape(-1), return_inverse=return_inverse,
                      return_counts=return_counts, equal_nan=False)
    if not (return_inverse or return_counts):
        return Tensor._make(found, x.device)
    values, rest = found[0], list(found[1:])
    if return_inverse:   # from the flattened input: back to x's shape (NumPy versions differ)
        rest[0] = rest[0].reshape(x.shape)
    return (Tensor._make(values, x.device),) + tuple(
        Tensor._make(a.astype(backend.int64), x.device) for a in rest)


def _unique_slices(x, dim, return_inverse, return_counts):
    be = x.backend
    hx = backend.get("cpu").xp
    values, inverse, counts = hx.unique(backend.to_host(x._data), axis=dim,
                                        return_inverse=True, return_counts=True)
    out = [hx.ascontiguousarray(values)]
    out += [inverse.reshape(-1).astype(backend.int64)] if return_inverse else []
    out += [counts.astype(backend.int64)] if return_counts else []
    out = tuple(Tensor._make(be.from_numpy(a), x.device) for a in out)
    return out if len(out) > 1 else out[0]
