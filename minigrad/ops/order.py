"""Sorted order and what goes with it, PyTorch's: kthvalue (the k-th smallest along a dim),
take_along_dim (reading x at indices such as argsort's or topk's, broadcasting), and the
binary searches searchsorted and bucketize (integer results, outside the graph). Values
read at indices are indexing (index.py's GetItem), so their gradient is its scatter-add."""
from minigrad import backend
from minigrad.args import check_broadcast
from minigrad.tensor import Tensor
from minigrad.ops.index import GetItem, position_grid, raw_index, _stable_argsort
from minigrad.ops.reduce import normalize_dim, ValuesIndices, expand


def kthvalue(x, k, dim=-1, keepdim=False):
    """The k-th smallest value (k from 1) along dim and its index, as torch.kthvalue: a
    (values, indices) named tuple; NaN counts as the largest. Of equal values the one a
    stable sort puts k-th is taken (PyTorch leaves which one open); the gradient goes to
    it."""
    d = normalize_dim(dim, max(x.ndim, 1), "kthvalue")
    n = x.shape[d] if x.ndim else 1
    if not backend.is_integer(k) or not 1 <= k <= n:
        raise ValueError(f"kthvalue: k must be an int in [1, {n}] (the size of dim {dim} of "
                         f"shape {x.shape}), got {k!r}")
    xp = x.backend.xp
    if x.ndim == 0:
        return ValuesIndices(x.clone(), Tensor._make(xp.zeros((), backend.int64), x.device))
    order = _stable_argsort(xp, x.data, d, descending=False)
    index = order[(slice(None),) * d + (slice(k - 1, k),)].astype(backend.int64)
    values = GetItem.apply(x, index=position_grid(xp, index, d))
    if not keepdim:
        values, index = values.squeeze(d), index.squeeze(d)
    return ValuesIndices(values, Tensor._make(index, x.device))


def take_along_dim(x, indices, dim=None):
    """x read at `indices` along dim, as torch.take_along_dim: x and indices (of x's number
    of dims) broadcast against each other in every other dim; without dim, x flattened at
    indices flattened. Indices must lie in [0, size) (no wrapping, as gather)."""
    idx = raw_index(indices, x, "take_along_dim", "indices")
    if not hasattr(idx, "dtype") or idx.dtype.kind not in "iu":
        raise TypeError(f"take_along_dim: indices must be a tensor of integers (int64, as "
                        f"argsort's), got {getattr(idx, 'dtype', type(idx).__name__)}")
    if dim is None:
        x, idx, d = x.reshape(-1), idx.reshape(-1), 0
    else:
        if idx.ndim != x.ndim:
            raise ValueError(f"take_along_dim: input and indices must have the same number "
                             f"of dims, got {x.ndim} (shape {x.shape}) and {idx.ndim} (shape "
                             f"{tuple(idx.shape)})")
        d = normalize_dim(dim, max(x.ndim, 1), "take_along_dim")
    n = x.shape[d] if x.ndim else 1
    if idx.size and bool(((idx < 0) | (idx >= n)).any()):
        raise IndexError(f"take_along_dim: indices must lie in [0, {n}) (the size of dim "
                         f"{d} of the input, shape {x.shape}), got values from "
                         f"{int(idx.min())} to {int(idx.max())}")
    if x.ndim:                          # broadcast every dim but d, each by the other
        idx_shape = check_broadcast("take_along_dim", _with(x.shape, d, idx.shape[d]),
                                    idx.shape)
        x_shape = _with(idx_shape, d, x.shape[d])
        if x.shape != x_shape:
            x = expand(x, x_shape)
        if tuple(idx.shape) != tuple(idx_shape):
            idx = x.backend.xp.broadcast_to(idx, idx_shape)
    return GetItem.apply(x, index=position_grid(x.backend.xp, idx, d))


def _with(shape, d, size):
    return tuple(shape[:d]) + (size,) + tuple(shape[d + 1:])


def searchsorted(sorted_sequence, input, *, out_int32=False, right=False, side=None,
                 sorter=None):
    """Where each value of `input` would go in `sorted_sequence` (sorted along its last
    dim) to keep it sorted, as torch.searchsorted: the first place whose value is >= it
    (side='left'), or > it (right=True or side='right'). A 1-D sequence serves every value;
    an N-D one a row per row of input (their leading dims equal). `sorter` holds the
    indices that sort an unsorted sequence. int64 results (out_int32: int32). NaN counts as
    larger than everything, as PyTorch's binary search reads it."""
    op = "searchsorted"
    if not isinstance(sorted_sequence, Tensor):
        raise TypeError(f"{op}: sorted_sequence must be a Tensor, got "
                        f"{type(sorted_sequence).__name__}")
    if side is not None and side not in ("left", "right"):
        raise ValueError(f"{op}: side must be 'left' or 'right', got {side!r}")
    if side == "left" and right:
        raise ValueError(f"{op}: side='left' and right=True contradict each other; give one")
    right = right or side == "right"
    seq, xp = sorted_sequence, sorted_sequence.backend.xp
    if seq.ndim == 0:
        raise ValueError(f"{op}: sorted_sequence must have at least 1 dim, got a 0-d tensor")
    if isinstance(input, Tensor):
        if input.device != seq.device:
            raise RuntimeError(f"{op}: input on {input.device}, sorted_sequence on "
                               f"{seq.device}; move one with .to(device)")
        values = input.data
    elif backend.is_scalar(input) and not isinstance(input, bool):
        if seq.ndim != 1:
            raise ValueError(f"{op}: a number as input needs a 1-D sorted_sequence, got "
                             f"shape {seq.shape}")
        values = xp.asarray(input)
    else:
        raise TypeError(f"{op}: input must be a Tensor or a number, got "
                        f"{type(input).__name__}")
    if seq.ndim > 1 and (values.ndim != seq.ndim or values.shape[:-1] != seq.shape[:-1]):
        raise ValueError(f"{op}: an N-D sorted_sequence needs input of its number of dims "
                         f"and the same leading dims (all but the last); got "
                         f"sorted_sequence of shape {seq.shape} and input of shape "
                         f"{tuple(values.shape)}, or give a 1-D sorted_sequence")
    rows = seq.data
    if sorter is not None:
        rows = _sorted_by(rows, sorter, seq)
    found = _binary_search(xp, rows, values, right)
    return Tensor._make(found.astype(backend.int32 if out_int32 else backend.int64),
                        seq.device)


def _sorted_by(rows, sorter, seq):
    """The sequence's rows put in order by `sorter` (checked: integers, one per element,
    each in [0, n))."""
    s = raw_index(sorter, seq, "searchsorted", "sorter")
    if getattr(s, "dtype", None) is None or s.dtype.kind not in "iu":
        raise TypeError(f"searchsorted: sorter must be a tensor of integers, got "
                        f"{getattr(s, 'dtype', type(s).__name__)}")
    if tuple(s.shape) != seq.shape:
        raise ValueError(f"searchsorted: sorter must have the shape of sorted_sequence "
                         f"{seq.shape}, got {tuple(s.shape)}")
    n = seq.shape[-1]
    if s.size and bool(((s < 0) | (s >= n)).any()):
        raise IndexError(f"searchsorted: sorter values must lie in [0, {n}), got values from "
                         f"{int(s.min())} to {int(s.max())}")
    xp = seq.backend.xp
    return rows[s] if rows.ndim == 1 else xp.take_along_axis(rows, s, axis=-1)


def _binary_search(xp, rows, values, right):
    """For every value, the first position i in its row with rows[i] > value (right) or
    rows[i] >= value (left), n if none: all values halve their ranges at once, ⌈log₂(n+1)⌉
    rounds. The comparisons are PyTorch's (`!(x >= v)` moves right), so a NaN on either
    side moves right."""
    n = rows.shape[-1]
    lo = xp.zeros(values.shape, backend.int64)
    if n == 0:
        return lo
    hi = xp.full(values.shape, n, backend.int64)
    for _ in range(n.bit_length()):
        mid = (lo + hi) // 2
        at = xp.minimum(mid, n - 1)                      # (a finished search's n: unread)
        m = rows[at] if rows.ndim == 1 else xp.take_along_axis(rows, at, axis=-1)
        move_right = ~(m > values) if right else ~(m >= values)
        active = lo < hi
        lo = xp.where(active & move_right, mid + 1, lo)
        hi = xp.where(active & ~move_right, mid, hi)
    return lo


def bucketize(input, boundaries, *, out_int32=False, right=False):
    """The bucket of each value of input among the 1-D sorted `boundaries`, as
    torch.bucketize: i with boundaries[i-1] < x <= boundaries[i] (right=True:
    boundaries[i-1] <= x < boundaries[i]); searchsorted with the arguments swapped."""
    if not isinstance(boundaries, Tensor) or boundaries.ndim != 1:
        raise ValueError(f"bucketize: boundaries must be a 1-D tensor, got "
                         f"{getattr(boundaries, 'shape', type(boundaries).__name__)}")
    return searchsorted(boundaries, input, out_int32=out_int32, right=right)
