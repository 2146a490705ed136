"""Sorted order and what goes with it, PyTorch's: sort (stable), topk and median (which
select in O(n) with argpartition where that is faster, giving the stable sort's indices),
kthvalue (the k-th smallest along a dim), take_along_dim (reading x at indices such as
argsort's or topk's, broadcasting), and the binary searches searchsorted and bucketize
(integer results, outside the graph). Values read at indices are indexing (index.py's
GetItem and gather), so their gradient is its scatter-add."""
import math

from minigrad import backend
from minigrad.args import as_int, check_broadcast
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.elementwise import where
from minigrad.ops.index import GetItem, position_grid, raw_index, gather, getitem
from minigrad.ops.reduce import normalize_dim, ValuesIndices, expand


def sort(input, dim=-1, descending=False, *, stable=False):
    """(values, indices) along dim, as torch.sort; ties keep their order (a stable sort,
    whatever `stable` says: torch's keyword is taken so ported calls work).
    The values are differentiable: their gradient goes back to where each came from."""
    d = normalize_dim(dim, max(input.ndim, 1), "sort")
    xp = input.backend.xp
    if input.ndim == 0:
        return ValuesIndices(getitem(input, ()), Tensor._make(xp.zeros((), backend.int64), input.device))
    order = _stable_argsort(xp, input._data, d, descending)
    indices = Tensor._make(order.astype(backend.int64), input.device)
    return ValuesIndices(gather(input, d, indices), indices)


def _stable_argsort(xp, a, d, descending):
    """The order that sorts `a` along d with ties in their order (stable, also descending);
    NaN last, first when descending (NaN counts as the largest, as PyTorch's)."""
    # NumPy sorts stably when asked; CuPy always does, and refuses the `kind` argument
    stable = {"kind": "stable"} if backend.is_numpy(xp) else {}
    if not descending:
        return xp.argsort(a, axis=d, **stable)
    # stable descending without negating (ints, bools): sort the reversed array
    rev = xp.flip(a, axis=d)                          # ascending, then reverse back
    return a.shape[d] - 1 - xp.flip(xp.argsort(rev, axis=d, **stable), axis=d)


class Median(Function):
    """The lower median (of an even count the smaller middle value) along dim, as
    torch.median; a slice holding NaN has median NaN, its first NaN picked. With a dim the
    gradient goes to the picked element (its index is returned); over the whole tensor it
    is shared evenly by the elements equal to the median (ties, or the NaNs), as PyTorch's."""
    needs_values = False                 # backward reads the masks forward kept, not a value
    def forward(self, a, index, dim, keepdim):   # index: median_index's, which median returns
        xp = self.xp
        self.in_shape = a.shape
        if dim is None:
            out = xp.take_along_axis(a.reshape(-1), index, axis=0).reshape(())
            hit = (a == out) | (xp.isnan(a) & xp.isnan(out)) if a.dtype.kind == "f" else \
                a == out
            self.kept, self.weight, self.share = (1,) * a.ndim, hit, 1 / hit.sum()
            return out
        self.kept, self.share = index.shape, None
        positions = xp.arange(a.shape[dim]).reshape((-1,) + (1,) * (a.ndim - dim - 1))
        self.weight = positions == index                 # 1 at the picked index along dim
        out = xp.take_along_axis(a, index, axis=dim)
        return out if keepdim else out.squeeze(dim)
    def backward(self, g):
        # weight: the picked element (with a dim) or the elements equal to the median, which
        # share g evenly (without); where, not g·mask, so an inf or NaN in g stays out of
        # the elements not picked
        g = g.reshape(self.kept)
        if self.share is not None:
            g = g * self.const(self.xp.asarray(self.share, dtype=g.dtype))
        return where(self.const(self.weight), g, 0.0)


def median_index(xp, a, d):
    """Where the lower median of each slice along d lies (shaped as a keepdim result): the
    ((n - 1) // 2)-th in sorted order (stable: of equal values, the one a stable sort puts
    there), or the first NaN of a slice that has one."""
    if backend.is_numpy(xp) and a.shape[d] >= _SELECT_FROM:      # in O(n), not a sort
        return _along_last(xp, a, d, _median_positions)
    order = _stable_argsort(xp, a, d, descending=False)  # NaNs last, in their order
    n, kept = a.shape[d], a.shape[:d] + (1,) + a.shape[d + 1:]
    k = xp.full(kept, (n - 1) // 2, dtype=backend.int64)
    if a.dtype.kind == "f":
        nans = xp.isnan(a).sum(axis=d, keepdims=True)
        k = xp.where(nans > 0, n - nans, k)
    return xp.take_along_axis(order, k, axis=d).astype(backend.int64, copy=False)


# slices at least this long are selected in (CPU) O(n) by argpartition instead of sorted:
# shorter ones NumPy sorts as fast as it selects (the extra passes cost more per row)
_SELECT_FROM = 64


def _along_last(xp, a, d, positions, *args):
    """positions(xp, rows, *args) on array `a` with dim d made the last of a 2-d
    (rows, n) array, its (rows, k) answer put back at dim d: an int64 array shaped as a
    with k along d. (Contiguous rows: argpartition is several times faster along them.)"""
    rows = xp.ascontiguousarray(xp.moveaxis(a, d, -1)).reshape(-1, a.shape[d])
    out = positions(xp, rows, *args)
    lead = a.shape[:d] + a.shape[d + 1:]
    return xp.ascontiguousarray(xp.moveaxis(out.reshape(lead + out.shape[-1:]), -1, d),
                                dtype=backend.int64)


def _median_positions(xp, a):
    """median_index on the rows of a 2-d NumPy array, in O(n) each: argpartition places
    the (n - 1) // 2-th value m; of the elements equal to m the stable sort would take the
    j-th in index order, j = (n - 1) // 2 - #(elements < m)."""
    kth = (a.shape[1] - 1) // 2
    pos = xp.argpartition(a, kth, axis=1)[:, kth:kth + 1]
    m = xp.take_along_axis(a, pos, axis=1)
    ties = a == m
    if (ties.sum(1) > 1).any():
        j = kth - (a < m).sum(1, keepdims=True)
        pos = xp.argmax(xp.cumsum(ties, axis=1) > j, axis=1).reshape(-1, 1)
    if a.dtype.kind == "f":                              # the first NaN, where there is one
        nan_rows = xp.flatnonzero(xp.isnan(a.max(1)))
        if nan_rows.size:
            pos[nan_rows, 0] = xp.argmax(xp.isnan(a[nan_rows]), axis=1)
    return pos


def median(input, dim=None, keepdim=False):
    """Without dim the lower median of all elements (a 0-d tensor); with dim a (values,
    indices) named tuple along it, as torch.median."""
    xp = input.backend.xp
    if dim is None:
        if keepdim:
            raise TypeError("median: keepdim=True needs a dim (as torch.median)")
        if input.numel() == 0 and backend.is_floating(input.dtype):
            return input.sum() * math.nan        # NaN, as PyTorch (its gradient: nothing to hold)
        if input.numel() == 0:
            raise ValueError(f"median: the integer tensor is empty (shape {input.shape}); there "
                             f"is no median to take")
        index = median_index(xp, input._data.reshape(-1), 0)
        return Median.apply(input, index=index, dim=None, keepdim=False)
    if not backend.is_integer(dim):
        raise TypeError(f"median: dim must be an int, got {dim!r}")
    d = normalize_dim(dim, max(input.ndim, 1), "median")
    if input.ndim == 0:                         # the value itself, at index 0 (as PyTorch)
        return ValuesIndices(input.clone(), Tensor._make(xp.zeros((), backend.int64), input.device))
    if input.shape[d] == 0:
        raise ValueError(f"median: dim {dim} of shape {input.shape} has size 0, so there is no "
                         f"median to take along it")
    index = median_index(xp, input._data, d)
    values = Median.apply(input, index=index, dim=d, keepdim=keepdim)
    return ValuesIndices(values, Tensor._make(index if keepdim else index.squeeze(d),
                                              input.device))


def topk(input, k, dim=-1, largest=True, sorted=True):
    """The k largest (smallest with largest=False) values along dim and their indices, as
    torch.topk, largest first: the first k of the stable sort (ties: the lower index first;
    NaN counts as the largest). This implementation always sorts (also with sorted=False)."""
    d = normalize_dim(dim, max(input.ndim, 1), "topk")
    n, k = input.shape[d] if input.ndim else 1, as_int(k)     # (k: a 0-d integer tensor too)
    if not backend.is_integer(k) or not 0 <= k <= n:
        raise ValueError(f"topk: k must be an int in [0, {n}] (the size of dim {dim}), got "
                         f"{k!r}")
    if input.ndim and n >= _SELECT_FROM and 0 < k <= n // 4 and backend.is_numpy(input.backend.xp):
        # a few of many: select them in O(n), sort only those (CuPy's argpartition sorts
        # everything, so there the full sort below is as fast)
        at = _along_last(input.backend.xp, input._data, d, _topk_positions, k, largest)
        indices = Tensor._make(at, input.device)
        return ValuesIndices(gather(input, d, indices), indices)
    values, indices = sort(input, d, descending=largest)
    if input.ndim == 0 or k == n:
        return ValuesIndices(values, indices)
    # the first k as arrays of their own: slices of the sort would keep all n alive (and
    # a strided view of them is not the layout torch's topk gives)
    part = (slice(None),) * d + (slice(0, k),)
    indices = Tensor._make(input.backend.xp.ascontiguousarray(indices._data[part]), input.device)
    return ValuesIndices(gather(input, d, indices), indices)


def _topk_positions(xp, a, k, largest):
    """Along the rows of a 2-d NumPy array: the positions of the first k elements of the
    stable sort (descending if largest), in that order, as sort's first k columns. An
    argpartition selects k in O(n); it is not stable, so in a row where it kept only some
    of the elements tied with the k-th value, the row takes the first of them instead.
    Then only the k are sorted: in index order, then stably by value."""
    n = a.shape[1]
    kth = n - k if largest else k - 1
    part = xp.argpartition(a, kth, axis=1)
    picked = part[:, n - k:] if largest else part[:, :k]
    edge = xp.take_along_axis(a, part[:, kth:kth + 1], axis=1)        # the k-th value
    ties = a == edge
    if a.dtype.kind == "f" and xp.isnan(edge).any():                  # NaN ties NaN
        ties |= xp.isnan(a) & xp.isnan(edge)
    tied_kept = xp.take_along_axis(ties, picked, axis=1).sum(1)
    short = xp.flatnonzero(ties.sum(1) != tied_kept)
    if short.size:       # keep the strictly better ones and the first tied_kept of the tied
        tied = ties[short]
        keep = xp.zeros(tied.shape, backend.bool_)
        xp.put_along_axis(keep, picked[short], True, axis=1)
        keep &= ~tied
        keep |= tied & (xp.cumsum(tied, axis=1) <= tied_kept[short, None])
        picked = picked.copy()
        picked[short] = xp.nonzero(keep)[1].reshape(-1, k)
    picked = xp.sort(picked, axis=1)
    order = _stable_argsort(xp, xp.take_along_axis(a, picked, axis=1), 1, largest)
    return xp.take_along_axis(picked, order, axis=1)


def kthvalue(input, k, dim=-1, keepdim=False):
    """The k-th smallest value (k from 1) along dim and its index, as torch.kthvalue: a
    (values, indices) named tuple; NaN counts as the largest. Of equal values the one a
    stable sort puts k-th is taken (PyTorch leaves which one open); the gradient goes to
    it."""
    d = normalize_dim(dim, max(input.ndim, 1), "kthvalue")
    n, k = input.shape[d] if input.ndim else 1, as_int(k)     # (k: a 0-d integer tensor too)
    if not backend.is_integer(k) or not 1 <= k <= n:
        raise ValueError(f"kthvalue: k must be an int in [1, {n}] (the size of dim {dim} of "
                         f"shape {input.shape}), got {k!r}")
    xp = input.backend.xp
    if input.ndim == 0:
        return ValuesIndices(input.clone(), Tensor._make(xp.zeros((), backend.int64), input.device))
    order = _stable_argsort(xp, input._data, d, descending=False)
    index = order[(slice(None),) * d + (slice(k - 1, k),)].astype(backend.int64)
    values = GetItem.apply(input, index=position_grid(xp, index, d))
    if not keepdim:
        values, index = values.squeeze(d), index.squeeze(d)
    return ValuesIndices(values, Tensor._make(index, input.device))


def take_along_dim(input, indices, dim=None):
    """x read at `indices` along dim, as torch.take_along_dim: x and indices (of x's number
    of dims) broadcast against each other in every other dim; without dim, x flattened at
    indices flattened. Indices must lie in [0, size) (no wrapping, as gather)."""
    idx = raw_index(indices, input, "take_along_dim", "indices")
    if not hasattr(idx, "dtype") or idx.dtype.kind not in "iu":
        raise TypeError(f"take_along_dim: indices must be a tensor of integers (int64, as "
                        f"argsort's), got {getattr(idx, 'dtype', type(idx).__name__)}")
    if dim is None:
        input, idx, d = input.reshape(-1), idx.reshape(-1), 0
    else:
        if idx.ndim != input.ndim:
            raise ValueError(f"take_along_dim: input and indices must have the same number "
                             f"of dims, got {input.ndim} (shape {input.shape}) and {idx.ndim} (shape "
                             f"{tuple(idx.shape)})")
        d = normalize_dim(dim, max(input.ndim, 1), "take_along_dim")
    n = input.shape[d] if input.ndim else 1
    if idx.size and bool(((idx < 0) | (idx >= n)).any()):
        raise IndexError(f"take_along_dim: indices must lie in [0, {n}) (the size of dim "
                         f"{d} of the input, shape {input.shape}), got values from "
                         f"{int(idx.min())} to {int(idx.max())}")
    if input.ndim:                          # broadcast every dim but d, each by the other
        idx_shape = check_broadcast("take_along_dim", _with(input.shape, d, idx.shape[d]),
                                    idx.shape)
        x_shape = _with(idx_shape, d, input.shape[d])
        if input.shape != x_shape:
            input = expand(input, x_shape)
        if tuple(idx.shape) != tuple(idx_shape):
            idx = input.backend.xp.broadcast_to(idx, idx_shape)
    return GetItem.apply(input, index=position_grid(input.backend.xp, idx, d))


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
        values = input._data
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
    rows = seq._data
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
