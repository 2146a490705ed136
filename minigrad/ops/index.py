"""Indexing: t[index] and its gradient, a scatter-add back (IndexAdd), and what is indexing
underneath: gather, index_select and masked_select (sort, topk and median, which pick by
sorted order, are ops/order.py; the embedding lookup is ops/embedding.py).
Indices follow PyTorch: Tensors, NumPy arrays or lists of ints or bools, with integer indices
applied before array ones."""
from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.reduce import normalize_dim, expand


class GetItem(Function):
    needs_values = False                 # reads the index and shape only: see Function's
    def forward(self, a, index):                         # gradient: scatter-add back
        self.index, self.in_shape = index, a.shape
        out = a[index]
        # NumPy's x[0, 1] is a scalar, a copy; x[0, 1, ...] a 0-d view, as PyTorch's x[0, 1]
        if not isinstance(out, self.xp.ndarray):
            out = a[(index if isinstance(index, tuple) else (index,)) + (Ellipsis,)]
        elif not out.flags.c_contiguous and _has_array_index(index):
            # an array index (a copy, never a view) along a middle dim comes out of NumPy
            # laid out index-first; PyTorch's is row-major, so .view() works on it
            out = self.xp.ascontiguousarray(out)
        return out
    def backward(self, g): return IndexAdd.apply(g, index=self.index, shape=self.in_shape)

    def scatter_backward(self, buf, g):
        """The same, added straight into the input's gradient buffer (no zeros(shape) per
        use): slicing a tensor T times then costs O(T), not O(T²), in backward."""
        _scatter_add(self.device, buf, self.index, g)


def _scatter_add(device, buf, index, g):
    if _has_array_index(index):
        backend.get(device).index_add(buf, index, g)   # repeated indices accumulate
    else:                                              # slices, ints, masks: no repeats
        buf[index] += g


class IndexAdd(Function):
    """zeros(shape) with g added at `index`; repeated indices accumulate. The gradient of
    indexing, and itself differentiable (its gradient is indexing again)."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, g, index, shape):
        self.index = index
        out = self.xp.zeros(shape, dtype=g.dtype)
        _scatter_add(self.device, out, index, g)
        return out
    def backward(self, gg): return GetItem.apply(gg, index=self.index)


# ---- what users call -------------------------------------------------------------------
def _has_array_index(index):
    items = index if isinstance(index, tuple) else (index,)
    return any(hasattr(i, "dtype") and i.dtype != bool for i in items)


def raw_index(index, x, op="getitem", what="index"):
    """An index with any Tensors in it replaced by copies of their arrays (on x's device),
    host arrays and lists moved there, and NumPy scalars as Python ones (np.int64(1) indexes
    like 1); for t[...] (getitem, setitem) a 0-d integer array too.
    `op` and `what` name the op and the argument in the error for one on another device."""
    def conv(i):
        if backend.is_scalar(i):
            return backend.python_scalar(i)
        if isinstance(i, Tensor):
            device, i = i.device, i._data
        elif isinstance(i, list):
            a = backend.to_host(i)
            if a.size == 0:                       # t[[]]: no indices (NumPy reads [] as float)
                a = a.astype(backend.int64)
            return x.backend.from_numpy(a)
        elif hasattr(i, "dtype"):
            device = backend.device_of_array(i)
            if device == "cpu" and x.device != "cpu":
                return x.backend.from_numpy(i)    # a host array moves to the tensor's device
        else:
            return i                              # slices, None, Ellipsis
        if device != x.device:
            raise RuntimeError(f"{op}: {what} on {device}, tensor on {x.device}; move the "
                               f"{what} with .to({x.device!r}) first")
        if i.dtype == backend.uint8 and op in ("getitem", "setitem"):
            raise IndexError(f"{op}: an index of dtype uint8 is a mask to PyTorch (deprecated) "
                             f"and integer positions to NumPy; say which: .bool() for a "
                             f"mask, .long() for positions")
        if i.ndim == 0 and i.dtype.kind in "iu" and op in ("getitem", "setitem"):
            return int(i)                         # t[mg.tensor(1)] is t[1]: a view (PyTorch)
        # a copy: ops keep the index for backward, and a later in-place change of the
        # caller's array must not move the gradient (PyTorch refuses that backward)
        return i.copy()
    if not isinstance(index, tuple):
        return conv(index)
    index = tuple(conv(i) for i in index)
    return _explicit_ellipsis(index, x.ndim) if op in ("getitem", "setitem") else index


def _explicit_ellipsis(index, ndim):
    """An Ellipsis beside array indices written out as the slices it stands for. PyTorch
    reads arrays on either side of an Ellipsis that stands for no dim as adjacent (their
    result dims stay in place); NumPy reads any Ellipsis as a separator and moves the
    arrays' dims to the front: x[:, [0, 2], ..., [1, 0]] of shape (2, 3, 2) came out
    transposed."""
    dots = [n for n, i in enumerate(index) if i is Ellipsis]    # (`in` would compare arrays)
    if len(dots) != 1 or not any(hasattr(i, "ndim") and i.ndim for i in index):
        return index
    consumed = sum(i.ndim if hasattr(i, "dtype") and i.dtype == backend.bool_ else
                   0 if i is None or i is Ellipsis or isinstance(i, bool) else 1
                   for i in index)
    if consumed > ndim:
        return index                              # check_index says what is wrong
    at = dots[0]
    return index[:at] + (slice(None),) * (ndim - consumed) + index[at + 1:]


def getitem(x, index):
    index = raw_index(index, x, "getitem")
    check_index(x, index, "getitem")
    parts = ints_first(index)
    if parts is not None:
        return GetItem.apply(GetItem.apply(x, index=parts[0]), index=parts[1])
    return GetItem.apply(x, index=index)


def ints_first(index):
    """PyTorch applies integer indices first (each selects, as basic indexing) and then the
    arrays; NumPy counts an int beside an array as one more array, and when a slice stands
    between them moves the arrays' dims to the front: for x of shape (2, 3, 4),
    x[0, :, [0, 1]] is (3, 2) in PyTorch, (2, 3) in NumPy. So an index with both ints and
    arrays is split in two: (the ints and slices, arrays as whole slices), then (the arrays,
    at the dims that remain). None when there is nothing to split (NumPy's meaning is
    PyTorch's)."""
    items = index if isinstance(index, tuple) else (index,)
    ints = [_is_int(i) for i in items]
    # a Python bool is an array to both: a 0-d mask (True adds a dim of 1, False of 0)
    arrays = [not n and (hasattr(i, "dtype") or isinstance(i, bool))
              for i, n in zip(items, ints)]
    if not any(ints) or not any(arrays):
        return None
    first, second = [], []
    for i, is_int, is_array in zip(items, ints, arrays):
        if is_int:                                # selects: its dim is gone in step two
            first.append(i)
        elif is_array:                            # an array: a mask covers its ndim dims
            mask = isinstance(i, bool) or i.dtype == backend.bool_
            first += [slice(None)] * (getattr(i, "ndim", 0) if mask else 1)
            second.append(i)
        else:                                     # slice, None (a new dim), Ellipsis
            first.append(i)
            second.append(Ellipsis if i is Ellipsis else slice(None))
    return tuple(first), tuple(second)


def _is_int(i):
    """A Python int or a 0-d integer array (a 0-d integer tensor indexes as an int)."""
    return backend.is_integer(i) or (hasattr(i, "dtype") and i.ndim == 0 and
                                     i.dtype.kind in "iu")


def check_index(x, index, op):
    """Raise a clear IndexError for an index (from raw_index) that does not fit x: NumPy's
    words plus the shape, a bounds check of integer arrays (CuPy would wrap them) and a
    shape check of boolean masks."""
    items = index if isinstance(index, tuple) else (index,)
    # validate cheaply: every array index replaced by whole slices is basic indexing (a view)
    trial, arrays = [], []  # arrays: (position in trial, integer array or mask)
    for i in items:
        if hasattr(i, "dtype") and i.dtype == backend.bool_:
            if i.ndim:
                arrays.append((len(trial), i))
            trial += [slice(None)] * i.ndim       # a mask covers as many dims as it has
        elif hasattr(i, "dtype") and i.dtype.kind in "iu":
            arrays.append((len(trial), i))
            trial.append(slice(None))
        else:
            trial.append(i)
    try:
        x._data[tuple(trial)]
    except (IndexError, TypeError) as e:
        raise IndexError(f"{op}: index {_show(index)} is invalid for a tensor of shape "
                         f"{x.shape}: {e}") from None
    if arrays:
        consumes = [t is not None and t is not Ellipsis and not isinstance(t, bool)
                    for t in trial]
        spread = x.ndim - sum(consumes)           # the dims an Ellipsis stands for
        for pos, a in arrays:
            dim = sum(consumes[:pos]) + (spread if Ellipsis in trial[:pos] else 0)
            if a.dtype != backend.bool_:
                _check_in_bounds(a, dim, x.shape, op)
            elif a.shape != x.shape[dim:dim + a.ndim]:    # (NumPy's words name an axis)
                raise IndexError(f"{op}: a boolean mask of shape {tuple(a.shape)} must have "
                                 f"the shape of the dims it covers, {x.shape[dim:dim + a.ndim]}"
                                 f" from dim {dim} of the tensor of shape {x.shape}")


def _check_in_bounds(a, dim, shape, op):
    """One vectorised check (one device sync) that integer indices fit dim `dim`; CuPy would
    wrap an out-of-range index silently instead of raising."""
    n = shape[dim]
    bad = a >= n
    if a.dtype.kind == "i":
        bad = bad | (a < -n)
    if a.size and bool(bad.any()):
        value = int(a[bad][0])
        raise IndexError(f"{op}: index {value} is out of range for dim {dim} of size {n} "
                         f"(tensor of shape {tuple(shape)}; valid: {-n}..{n - 1})")


def _show(index):
    if hasattr(index, "shape"):
        return f"array of shape {tuple(index.shape)}"
    if isinstance(index, tuple):
        return "(" + ", ".join(_show(i) for i in index) + ")"
    return repr(index)


def gather(input, dim, index, *, sparse_grad=False):
    """out[i][j][k] = x[index[i][j][k]][j][k] for dim 0 (likewise for the others), as
    torch.gather: `index` has x's number of dims and is no larger in the others; the output
    has its shape. Indexing with index along `dim` and a position grid along every other dim,
    so the gradient is indexing's scatter-add (repeated indices accumulate). sparse_grad is
    taken for ported calls; the gradient is dense either way (same values)."""
    d = normalize_dim(dim, max(input.ndim, 1), "gather")
    idx = raw_index(index, input, "gather", "index")
    if not hasattr(idx, "dtype") or idx.dtype.kind not in "iu":
        raise TypeError(f"gather: index must be a tensor of integers, got "
                        f"{getattr(idx, 'dtype', type(idx).__name__)}")
    if idx.ndim != input.ndim or idx.size and any(i > s for k, (i, s) in
                                              enumerate(zip(idx.shape, input.shape)) if k != d):
        raise ValueError(f"gather: index of shape {tuple(idx.shape)} must have the {input.ndim} "
                         f"dims of the input {input.shape}, each no larger except dim {d}")
    n = input.shape[d] if input.ndim else 1
    if idx.size and bool(((idx < 0) | (idx >= n)).any()):   # no wrapping, as PyTorch
        raise IndexError(f"gather: index values must lie in [0, {n}) (the size of dim {d} of "
                         f"the input {input.shape}), got values from {int(idx.min())} to "
                         f"{int(idx.max())}")
    return GetItem.apply(input, index=position_grid(input.backend.xp, idx, d))


def position_grid(xp, idx, d):
    """The index that picks, for each element of `idx`, x[..., idx[i, j, k], ...] (idx's
    value along dim d, the element's own position along every other dim): idx itself and
    the positions 0..size-1 along each other dim, broadcast. Gather reads with it; scatter
    writes with it."""
    return tuple(idx if k == d else
                 xp.arange(size).reshape((size,) + (1,) * (idx.ndim - k - 1))
                 for k, size in enumerate(idx.shape))


def nonzero(x, as_tuple=False):
    """Where x is nonzero, as torch.nonzero: an (N, x.ndim) int64 tensor of indices in
    row-major order, or with as_tuple=True one (N,) tensor per dim (x[t.nonzero(as_tuple=
    True)] picks those elements). N depends on the values: on a GPU, a wait for them."""
    a = x._data if x.ndim or not as_tuple else x._data.reshape(1)
    idx = x.backend.xp.argwhere(a).astype(backend.int64)
    if not as_tuple:
        return Tensor._make(idx, x.device)
    return tuple(Tensor._make(x.backend.xp.ascontiguousarray(idx[:, d]), x.device)
                 for d in range(idx.shape[1]))


def index_select(input, dim, index):
    """The slices of x along dim at `index` (1-D integers, or one as a 0-d tensor), in that
    order, as torch.index_select; a repeated index repeats its slice, and the slice's
    gradients add up (indexing's scatter-add)."""
    d = normalize_dim(dim, input.ndim, "index_select")
    idx = raw_index(index, input, "index_select", "index")
    if not hasattr(idx, "dtype") or idx.dtype.kind not in "iu":
        raise TypeError(f"index_select: index must be a tensor of integers (int32 or int64), "
                        f"got {getattr(idx, 'dtype', type(idx).__name__)}")
    if idx.ndim > 1:
        raise IndexError(f"index_select: index must be a vector (1-D) or a 0-d tensor, got "
                         f"shape {tuple(idx.shape)}")
    n = input.shape[d] if input.ndim else 1
    if idx.size and bool(((idx < 0) | (idx >= n)).any()):    # no wrapping, as PyTorch
        raise IndexError(f"index_select: index values must lie in [0, {n}) (the size of dim "
                         f"{d} of the input {input.shape}), got values from {int(idx.min())} to "
                         f"{int(idx.max())}")
    if input.ndim == 0:
        if idx.size != 1:
            raise IndexError(f"index_select: a 0-d tensor takes one index (0), got "
                             f"{idx.size}")
        return input.clone()
    return GetItem.apply(input, index=(slice(None),) * d + (idx.reshape(-1),))


def masked_select(input, mask):
    """The elements of x where the boolean `mask` is True, as a 1-D tensor in row-major
    order, as torch.masked_select: x and mask broadcast against each other (either may
    grow). The gradient goes back to the places picked (summed where x was broadcast)."""
    m = raw_index(mask, input, "masked_select", "mask")
    if getattr(m, "dtype", None) != backend.bool_:
        raise TypeError(f"masked_select: mask must be a bool tensor, got "
                        f"{getattr(m, 'dtype', type(m).__name__)}; compare first (x > 0)")
    try:
        shape = tuple(backend.broadcast_shapes(input.shape, m.shape))
    except ValueError:
        raise ValueError(f"masked_select: mask of shape {tuple(m.shape)} and tensor of shape "
                         f"{input.shape} do not broadcast (each dim, counted from the last, must "
                         f"be equal or 1)") from None
    if m.shape != shape:
        m = input.backend.xp.broadcast_to(m, shape)
    return GetItem.apply(input if input.shape == shape else expand(input, shape), index=m)
