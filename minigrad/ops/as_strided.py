"""as_strided(x, size, stride, storage_offset): the elements of x's storage at
offset + Σ i_k·stride_k (in elements), as PyTorch's; as_strided_scatter, as_strided_copy and
empty_strided beside it.

x's storage is the memory of the array that owns x's (x itself, or the array x views, as
storage_offset() counts): a view x = h[1:] reaches h's first element with storage_offset=0.
The result is made by the backend's as_strided (NumPy's or CuPy's stride_tricks).

A view or a copy: windows that do not overlap (every element its own memory location) are a
view, sharing x's version count, so an in-place write into them reaches x and its other
views, as PyTorch's (ops/inplace_views.py records it), and windows that repeat only along a
stride-0 dim are a view too, refused as a written-to broadcast view (expand) is. Windows that
overlap otherwise (unfold-like sliding windows) are a copy, deliberately, as unfold's: one
memory location would be several elements, which minigrad's writes cannot record (PyTorch
refuses most writes there too). A copy also where x requires grad and the tensor owning its
memory in the graph does not cover the windows (a hidden intermediate's memory): the write's
record could not place them.

Gradient, as PyTorch's: g added (overlapping windows summing) into a zero storage-sized
buffer at the windows' places, then read at x's places; storage elements outside x get
none. Where x's own elements share places (x a broadcast view), each gets an equal share."""
import math

from minigrad import backend
from minigrad.autograd import Function, is_grad_enabled
from minigrad.memory_format import contiguous_format
from minigrad.backend import np        # host index arithmetic (sizes and strides only)
from minigrad.tensor import Tensor


# ---- storage: where an array's memory lies ----------------------------------------------
def storage_of(a, xp):
    """(flat, start, shift): the memory array `a` lies in (that of the array owning it, from
    its lowest element to its highest) as a flat array of a's dtype, the index of a's first
    element in it, and that element's byte offset from flat's first (backward places a's
    elements with it)."""
    owner = top = a
    while getattr(top, "base", None) is not None:     # (as_strided's base is no array)
        top = top.base
        owner = top if isinstance(top, type(a)) else owner
    if owner is a and a.flags.c_contiguous:           # (a spy array's base is always None)
        return a.reshape(-1), 0, 0
    if owner.size == 0:
        return xp.empty(0, a.dtype), 0, 0
    lowest = owner[tuple(0 if s >= 0 else n - 1 for s, n in zip(owner.strides, owner.shape))
                   + (Ellipsis,)]
    nbytes = sum((n - 1) * abs(s) for s, n in zip(owner.strides, owner.shape)) + \
        owner.dtype.itemsize
    flat = xp.lib.stride_tricks.as_strided(lowest, shape=(nbytes // owner.dtype.itemsize,),
                                           strides=(owner.dtype.itemsize,))
    if owner.dtype != a.dtype:                        # a views it as another dtype
        if nbytes % a.dtype.itemsize and owner.dtype.itemsize != a.dtype.itemsize:
            raise RuntimeError(f"as_strided: the tensor views memory of dtype {owner.dtype} "
                               f"as {a.dtype}, whose size does not divide it; clone() it "
                               f"first")
        flat = flat.view(a.dtype)
    shift = _address(a) - _address(lowest)
    return flat, shift // a.dtype.itemsize, shift


def _address(a):
    return a.__array_interface__["data"][0] if hasattr(a, "__array_interface__") \
        else a.data.ptr


def _places(shape, strides, start):
    """Host int64 array of `shape`: start + Σ i_k·strides_k, each element's place."""
    out = np.full(shape, start, dtype=np.int64)
    for k, (n, s) in enumerate(zip(shape, strides)):
        out += (np.arange(n, dtype=np.int64) * s).reshape((n,) + (1,) * (len(shape) - k - 1))
    return out


def _layout(size, stride):
    """'distinct' (every element its own place), 'broadcast' (repeats along stride-0 dims
    only) or 'overlap'."""
    dims = sorted((st, n) for n, st in zip(size, stride) if n > 1)
    if math.prod(size) == 0:
        return "distinct"
    kind = "broadcast" if any(st == 0 for st, _ in dims) else "distinct"
    dims = [(st, n) for st, n in dims if st]
    reach = 1                                 # the places the inner dims span
    for st, n in dims:
        if st < reach:                        # interleaved, maybe repeating: count them
            places = _places(tuple(n for _, n in dims), tuple(s for s, _ in dims), 0)
            return kind if np.unique(places).size == places.size else "overlap"
        reach = st * (n - 1) + reach
    return kind


# ---- the ops ----------------------------------------------------------------------------
class AsStrided(Function):
    """out = storage[offset + Σ i_k·stride_k] (see above). Backward: Restride."""
    needs_values = False                      # linear: reads places only

    def forward(self, x, size, stride, offset, view):
        flat, _, shift = storage_of(x, self.xp)
        self.geometry = (size, stride, offset, flat.size, x.shape, x.strides, shift,
                         x.dtype.itemsize, backend.shares_elements(x))
        out = self.xp.lib.stride_tricks.as_strided(
            flat[offset:], shape=size, strides=tuple(s * flat.dtype.itemsize for s in stride))
        return out if view else out.copy()

    def backward(self, g):
        size, stride, offset, n, shape, strides, shift, itemsize, shared = self.geometry
        be = backend.get(self.device)
        out_pos = be.from_numpy(_places(size, stride, offset))
        x_pos, scale = None, None
        if not (shift == 0 and n == math.prod(shape) and
                strides == _contiguous_strides(shape, itemsize)):
            host = _places(shape, strides, shift) // itemsize
            if shared:                         # x's elements sharing a place split its grad
                count = np.bincount(host.reshape(-1), minlength=n)
                scale = be.from_numpy((1.0 / np.maximum(count, 1)).astype(g.dtype))
            x_pos = be.from_numpy(host)
        return Restride.apply(g, src=out_pos, dst=x_pos, n=n, scale=scale, shape=shape,
                              src_unique=_layout(size, stride) == "distinct",
                              dst_unique=not shared)


def _contiguous_strides(shape, itemsize):
    out, step = [], itemsize
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


class Restride(Function):
    """a added into zeros(n) at places `src` (a's shape; None: all, in order), times
    `scale` (None: 1), read at places `dst` (None: all), as `shape`. Linear: its gradient
    is itself with src and dst swapped."""
    needs_values = False

    def forward(self, a, src, dst, n, scale, shape, src_unique, dst_unique):
        self.params = dict(src=dst, dst=src, n=n, scale=scale, shape=a.shape,
                           src_unique=dst_unique, dst_unique=src_unique)
        buf = self.xp.zeros(n, a.dtype)
        if src is None:
            buf[...] = a.reshape(-1)
        elif src_unique:
            buf[src] = a
        else:                                  # overlapping windows: their values sum
            backend.get(self.device).index_add(buf, src, a)
        if scale is not None:
            buf *= scale
        return (buf if dst is None else buf[dst]).reshape(shape)

    def backward(self, gg):
        return Restride.apply(gg, **self.params)


def as_strided(input, size, stride, storage_offset=None, op="as_strided"):
    """The elements of x's storage at storage_offset + Σ i_k·stride_k (see above); the
    offset defaults to x's own, x.storage_offset()."""
    size, stride = _ints(size, "size", op), _ints(stride, "stride", op)
    flat, start, _ = storage_of(input._data, input.backend.xp)
    offset = start if storage_offset is None else _check_offset(storage_offset, op)
    _check_bounds(size, stride, offset, flat.size, input.dtype.itemsize, op)
    kind = _layout(size, stride)
    view = kind != "overlap" and _covered(input, size, stride, offset, start)
    out = AsStrided.apply(input, size=size, stride=stride, offset=offset, view=view)
    if view:
        out._version_counter = input._version_counter      # (its base is no tensor's array)
    return out


def as_strided_copy(input, size, stride, storage_offset=None):
    """as_strided, copied: the result shares no memory with x."""
    return as_strided(input, size, stride, storage_offset, "as_strided_copy").clone(
        memory_format=contiguous_format)                 # row-major, as torch's


def as_strided_scatter(input, src, size, stride, storage_offset=None):
    """A copy of x whose elements at the places as_strided(size, stride, storage_offset)
    picks in x's storage hold src's values, as PyTorch's: the offset and places count in
    x's storage, as as_strided's (default offset x's own); places that hold no element of
    x are dropped. An x whose elements share places (expand) is taken as its contiguous
    copy, offset 0 (PyTorch clones it so). Differentiable in x (0 at the written places)
    and src (0 for its dropped values)."""
    op = "as_strided_scatter"
    if not isinstance(src, Tensor):
        raise TypeError(f"{op}: src must be a Tensor, got {type(src).__name__}")
    size, stride = _ints(size, "size", op), _ints(stride, "stride", op)
    a, itemsize = input._data, input.dtype.itemsize
    if backend.shares_elements(a):             # its contiguous copy: elements in order
        n, start, x_places = input.numel(), 0, np.arange(input.numel(), dtype=np.int64)
    else:
        flat, start, shift = storage_of(a, input.backend.xp)
        n, x_places = flat.size, _places(input.shape, a.strides, shift).reshape(-1) // itemsize
    offset = start if storage_offset is None else _check_offset(storage_offset, op)
    _check_bounds(size, stride, offset, n, itemsize, op)
    if src.shape != size:
        raise RuntimeError(f"{op}: expected src to have a size equal to the slice of self. "
                           f"src size = {list(src.shape)}, slice size = {list(size)}")
    if _layout(size, stride) != "distinct":
        raise RuntimeError(f"{op}: unsupported operation: more than one element of the "
                           f"written-to tensor refers to a single memory location (sizes "
                           f"{list(size)}, strides {list(stride)}); give strides that place "
                           f"every element apart")
    # which src element (if any) lands on each of x's elements: written places, sorted
    written = _places(size, stride, offset).reshape(-1)
    by_place = np.argsort(written)
    k = np.minimum(np.searchsorted(written[by_place], x_places), max(written.size - 1, 0))
    hit = np.flatnonzero(written[by_place][k] == x_places) if written.size else \
        np.zeros(0, np.int64)
    be = input.backend
    pos = Tensor._make(be.from_numpy(hit), input.device)
    which = Tensor._make(be.from_numpy(by_place[k[hit]]), input.device)
    values = src.reshape(-1).to(dtype=input.dtype)[which]
    return input.reshape(-1).index_put((pos,), values).reshape(input.shape)


def empty_strided(size, stride, *, dtype=None, device=None, requires_grad=False):
    """A tensor of `size` laid out with `stride` (elements) in fresh memory of zeros (as
    mg.empty: PyTorch leaves it uninitialised). A layout whose elements overlap other than
    along stride-0 dims is laid out contiguously instead (x.stride() then differs); one
    with a stride-0 dim is a broadcast view, which (as expand's) refuses writes."""
    from minigrad.creation import zeros
    op = "empty_strided"
    size, stride = _ints(size, "size", op), _ints(stride, "stride", op)
    n = _needed(size, stride, 0, op)
    memory = zeros(n, dtype=dtype, device=device)
    data = memory._data
    if _layout(size, stride) == "overlap":
        data = memory.backend.xp.zeros(size, data.dtype)
    elif n:
        data = memory.backend.xp.lib.stride_tricks.as_strided(
            data, shape=size, strides=tuple(s * data.dtype.itemsize for s in stride))
    else:
        data = data.reshape(size)
    return Tensor._make(data, memory.device, requires_grad)


# ---- checks -----------------------------------------------------------------------------
def _ints(v, what, op):
    v = (v,) if backend.is_integer(v) else v
    try:
        v = tuple(v)
    except TypeError:
        raise TypeError(f"{op}: {what} must be a sequence of ints, got "
                        f"{type(v).__name__}") from None
    if not all(backend.is_integer(i) for i in v):
        raise TypeError(f"{op}: {what} must be a sequence of ints, got {v}")
    return tuple(int(i) for i in v)


def _check_offset(offset, op):
    if not backend.is_integer(offset):
        raise TypeError(f"{op}: storage_offset must be an int, got {type(offset).__name__}")
    if offset < 0:
        raise RuntimeError(f"{op}: invalid storage offset {offset}; it must be >= 0")
    return int(offset)


def _needed(size, stride, offset, op):
    """The storage elements the layout reaches (0 for no elements), after checking it."""
    if len(size) != len(stride):
        raise RuntimeError(f"mismatch in length of strides and shape: sizes {list(size)}, "
                           f"strides {list(stride)}")
    if any(n < 0 for n in size):
        raise RuntimeError(f"Trying to create tensor with negative dimension: sizes "
                           f"{list(size)}")
    if any(s < 0 for s in stride):
        raise RuntimeError(f"{op}: Negative strides are not supported at the moment, "
                           f"got strides: {list(stride)}")
    if math.prod(size) == 0:
        return 0
    return offset + sum((n - 1) * s for n, s in zip(size, stride)) + 1


def _check_bounds(size, stride, offset, have, itemsize, op):
    need = _needed(size, stride, offset, op)
    if need > have:
        raise RuntimeError(f"{op}: sizes {list(size)}, strides {list(stride)}, storage offset "
                           f"{offset}, and itemsize {itemsize} requiring a storage size of "
                           f"{need * itemsize} are out of bounds for storage of size "
                           f"{have * itemsize} ({have} elements)")


def _covered(x, size, stride, offset, start):
    """Whether, where a write could be recorded (x in a graph), the tensor owning x's
    memory in the graph covers the windows, so that the write can be placed in it."""
    if not (is_grad_enabled() and x.requires_grad) or math.prod(size) == 0:
        return True
    r = x                                     # through x's view nodes (ops/inplace_views.py)
    while r._ctx is not None and r._ctx.inputs is not None and r._ctx.output_ids is None:
        base = next((p for p in r._ctx.inputs if p._version_counter is r._version_counter),
                    None)
        if base is None:
            break
        r = base
    a = r._data
    if getattr(a, "base", None) is None and (a.flags.c_contiguous or a.flags.f_contiguous):
        return True                           # r owns the memory, all of it elements
    if not a.flags.c_contiguous or a.dtype.itemsize != x.dtype.itemsize or a.size == 0:
        return False
    first = start + (_address(a) - _address(x._data)) // a.dtype.itemsize
    last = offset + sum((n - 1) * s for n, s in zip(size, stride))
    return first <= offset and last < first + a.size
