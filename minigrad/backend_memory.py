"""Where an array's elements lie in memory, worked out from addresses and strides (no
values read), for NumPy's and CuPy's arrays alike: whether a broadcast view shares
elements, where a view's elements lie in the array it views (in-place writes into views,
ops/inplace_views.py), and the memory from an element to the end of its block (resize_).
backend.py re-exports these."""
from minigrad.backend import np        # NumPy: the index arithmetic runs on the host


def shares_elements(a):
    """Whether some elements of `a` are one memory location (a broadcast view: a stride of 0
    along a dim of more than one). NumPy marks such a view read-only; CuPy does not, and a
    write would reach every element sharing the location."""
    return a.size > 0 and any(st == 0 and n > 1 for st, n in zip(a.strides, a.shape))


def view_positions(view, base):
    """Where the elements of array `view` lie in array `base`, whose memory it views: host
    index arrays of view's shape, one per dim of base (NumPy's or CuPy's arrays: worked out
    from their addresses and strides, no values read), or None where view's elements are
    all of base's, in base's order (a reshape of it)."""
    offsets = _byte_offsets(view.shape, view.strides, _address(view) - _address(base))
    if base.flags.c_contiguous:
        flat = offsets // base.itemsize
    else:                             # base's own layout: each offset found among base's
        mine = _byte_offsets(base.shape, base.strides, 0).reshape(-1)
        order = np.argsort(mine, kind="stable")
        flat = order[np.searchsorted(mine[order], offsets)]
    if flat.size == base.size and (flat.reshape(-1) == np.arange(base.size)).all():
        return None
    return np.unravel_index(flat, base.shape)


def memory_from(a):
    """The memory from array a's first element to the end of the block a lies in (the
    array that owns it), as a 1-D uint8 view, or None where that block is not known (a
    view of a foreign buffer laid out with gaps). For resize_, which reads memory in order
    as PyTorch's storage."""
    kind = np.ndarray if isinstance(a, np.ndarray) else type(a)
    owner = a
    while isinstance(owner.base, kind):
        owner = owner.base
    if owner.flags.c_contiguous:
        flat = owner.reshape(-1)
    elif owner.flags.f_contiguous:
        flat = owner.reshape(-1, order="F")
    else:
        return None
    return flat.view(np.uint8)[0 if owner is a else _address(a) - _address(owner):]


def _address(a):
    return a.__array_interface__["data"][0] if isinstance(a, np.ndarray) else a.data.ptr


def _byte_offsets(shape, strides, start):
    """The byte offset of each element of an array of that shape and strides."""
    out = np.full(shape, start, dtype=np.int64)
    for k, (n, s) in enumerate(zip(shape, strides)):
        out += (np.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (len(shape) - k - 1))
    return out
