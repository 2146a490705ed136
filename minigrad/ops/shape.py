"""Ops that move elements without arithmetic: reshape, permute, indexing, cat, tril/triu,
dtype and device changes. Most forwards are views; each backward puts gradients back."""
from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.reduce import normalize_dims, expand  # noqa: F401  (expand re-exported)


class Reshape(Function):
    def forward(self, a, shape):                         # same elements, new shape
        self.in_shape = a.shape
        return a.reshape(shape)
    def backward(self, g): return g.reshape(self.in_shape)


class Permute(Function):
    def forward(self, a, dims):                          # a view with reordered axes
        self.dims = dims
        return a.transpose(dims)
    def backward(self, g):
        inverse = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inverse[d] = i
        return g.permute(*inverse)


class GetItem(Function):
    def forward(self, a, index):                         # gradient: scatter-add back
        self.index, self.in_shape = index, a.shape
        return a[index]
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
    def forward(self, g, index, shape):
        self.index = index
        out = self.xp.zeros(shape, dtype=g.dtype)
        _scatter_add(self.device, out, index, g)
        return out
    def backward(self, gg): return GetItem.apply(gg, index=self.index)


class Cat(Function):
    def forward(self, *arrays, dim):
        self.dim, self.sizes = dim, [a.shape[dim] for a in arrays]
        return self.xp.concatenate(arrays, axis=dim)
    def backward(self, g):
        out, start = [], 0
        for n in self.sizes:
            index = (slice(None),) * self.dim + (slice(start, start + n),)
            out.append(g[index])
            start += n
        return tuple(out)


class Triangle(Function):
    """tril/triu: keep the lower/upper triangle of the last two dims (mask is constant)."""
    def forward(self, a, upper, diagonal):
        n, m = a.shape[-2:]
        tri = self.xp.triu if upper else self.xp.tril
        self.mask = tri(self.xp.ones((n, m), dtype=bool), diagonal)
        return a * self.mask if a.dtype != bool else a & self.mask
    def backward(self, g): return g * self.const(self.mask.astype(g.dtype))


class AsType(Function):
    def forward(self, a, dtype):
        self.in_dtype = a.dtype
        return a.astype(dtype)
    def backward(self, g): return g.to(dtype=self.in_dtype)


class ToDevice(Function):
    def forward(self, a, device):
        self.in_device = self.device
        self.device = device  # results of this op live on the new device
        src, dst = backend.get(self.in_device), backend.get(device)
        self.xp = dst.xp
        return dst.from_numpy(src.to_numpy(a))
    def backward(self, g): return g.to(self.in_device)


class Clone(Function):
    def forward(self, a): return a.copy()
    def backward(self, g): return g


class Embedding(Function):
    """weight[indices] with the gradient of the `padding_idx` row held at zero (as PyTorch)."""
    def forward(self, weight, indices, padding_idx):
        self.indices, self.padding_idx, self.shape = indices, padding_idx, weight.shape
        return weight[indices]
    def backward(self, g):
        if self.padding_idx is not None:
            keep = self.indices != self.padding_idx
            g = g * self.const(keep[..., None].astype(g.dtype))
        return IndexAdd.apply(g, index=self.indices, shape=self.shape)


# ---- what users call -------------------------------------------------------------------
def reshape(x, shape):
    n = 1
    for s in shape:
        n *= s if s != -1 else 1
    if shape.count(-1) > 1 or (-1 not in shape and n != x.numel()) or \
            (-1 in shape and (n == 0 or x.numel() % n)):
        raise ValueError(f"reshape: cannot view a tensor of shape {x.shape} ({x.numel()} "
                         f"elements) as {tuple(shape)} (the sizes must multiply to "
                         f"{x.numel()}; one -1 at most, and not beside a 0)")
    if tuple(shape) == x.shape:
        return x
    return Reshape.apply(x, shape=tuple(shape))


def permute(x, dims):
    n, given = x.ndim, tuple(dims)
    order = tuple(range(n))
    dims = tuple(d % n for d in given) if all(-n <= d < n for d in given) else None
    if dims is None or len(dims) != n or set(dims) != set(order):
        raise ValueError(f"permute: dims {given} are not a permutation of the {n} dims of a "
                         f"tensor of shape {x.shape}")
    return x if dims == order else Permute.apply(x, dims=dims)


def transpose(x, d0, d1):
    (d0,), (d1,) = normalize_dims(d0, x.ndim, "transpose"), normalize_dims(d1, x.ndim,
                                                                             "transpose")
    if d0 == d1 or x.ndim < 2:
        return x
    dims = list(range(x.ndim))
    dims[d0], dims[d1] = d1, d0
    return Permute.apply(x, dims=tuple(dims))


def squeeze(x, dim=None):
    if dim is None:
        return reshape(x, tuple(s for s in x.shape if s != 1))
    dims = normalize_dims(dim, x.ndim, "squeeze")
    return reshape(x, tuple(s for i, s in enumerate(x.shape) if not (i in dims and s == 1)))


def unsqueeze(x, dim):
    if not -x.ndim - 1 <= dim <= x.ndim:
        raise IndexError(f"unsqueeze: dim {dim} out of range for a tensor with {x.ndim} dims "
                         f"(valid: {-x.ndim - 1}..{x.ndim})")
    dim = dim % (x.ndim + 1)
    return reshape(x, x.shape[:dim] + (1,) + x.shape[dim:])


def flatten(x, start_dim=0, end_dim=-1):
    if x.ndim == 0:
        return reshape(x, (1,))
    s, e = (normalize_dims(d, x.ndim, "flatten")[0] for d in (start_dim, end_dim))
    if s > e:  # x.shape[s:e + 1] would be empty and insert a new dim of 1
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} "
                         f"(dims {s} > {e} of a tensor of shape {x.shape})")
    n = 1
    for d in x.shape[s:e + 1]:
        n *= d
    return reshape(x, x.shape[:s] + (n,) + x.shape[e + 1:])


def _has_array_index(index):
    items = index if isinstance(index, tuple) else (index,)
    return any(hasattr(i, "dtype") and i.dtype != bool for i in items)


def raw_index(index, x, op="getitem", what="index"):
    """An index with any Tensors in it replaced by their arrays (on x's device), host arrays
    and lists moved there, and NumPy scalars as Python ones (np.int64(1) indexes like 1).
    `op` and `what` name the op and the argument in the error for one on another device."""
    def conv(i):
        if backend.is_scalar(i):
            return backend.python_scalar(i)
        if isinstance(i, Tensor):
            device, i = i.device, i.data
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
        return i
    return tuple(conv(i) for i in index) if isinstance(index, tuple) else conv(index)


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
    if not any(ints) or not any(hasattr(i, "dtype") and not n for i, n in zip(items, ints)):
        return None
    first, second = [], []
    for i, is_int in zip(items, ints):
        if is_int:                                # selects: its dim is gone in step two
            first.append(i)
        elif hasattr(i, "dtype"):                 # an array: a mask covers its ndim dims
            first += [slice(None)] * (i.ndim if i.dtype == backend.bool_ else 1)
            second.append(i)
        else:                                     # slice, None (a new dim), Ellipsis
            first.append(i)
            second.append(Ellipsis if i is Ellipsis else slice(None))
    return tuple(first), tuple(second)


def _is_int(i):
    """A Python int or a 0-d integer array (a 0-d integer tensor indexes as an int)."""
    return type(i) is int or (hasattr(i, "dtype") and i.ndim == 0 and i.dtype.kind in "iu")


def check_index(x, index, op):
    """Raise a clear IndexError for an index (from raw_index) that does not fit x: NumPy's
    words plus the shape, and a bounds check of integer arrays (CuPy would wrap them)."""
    items = index if isinstance(index, tuple) else (index,)
    # validate cheaply: every array index replaced by whole slices is basic indexing (a view)
    trial, arrays = [], []  # arrays: (position in trial, integer array)
    for i in items:
        if hasattr(i, "dtype") and i.dtype == backend.bool_:
            trial += [slice(None)] * i.ndim       # a mask covers as many dims as it has
        elif hasattr(i, "dtype") and i.dtype.kind in "iu":
            arrays.append((len(trial), i))
            trial.append(slice(None))
        else:
            trial.append(i)
    try:
        x.data[tuple(trial)]
    except (IndexError, TypeError) as e:
        raise IndexError(f"{op}: index {_show(index)} is invalid for a tensor of shape "
                         f"{x.shape}: {e}") from None
    if arrays:
        consumes = [t is not None and t is not Ellipsis and not isinstance(t, bool)
                    for t in trial]
        spread = x.ndim - sum(consumes)           # the dims an Ellipsis stands for
        for pos, a in arrays:
            dim = sum(consumes[:pos]) + (spread if Ellipsis in trial[:pos] else 0)
            _check_in_bounds(a, dim, x.shape, op)


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


def cat(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ValueError("cat: expected a non-empty list of tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise ValueError(f"cat: the tensor at position {i} is 0-d, and a 0-d tensor has "
                             f"no dim to join along; use mg.stack to join 0-d tensors")
    d = normalize_dims(dim, tensors[0].ndim, "cat")[0]
    ref = tensors[0].shape
    for t in tensors[1:]:
        if t.ndim != len(ref) or any(a != b for i, (a, b) in enumerate(zip(t.shape, ref))
                                     if i != d):
            raise ValueError(f"cat: shapes {[x.shape for x in tensors]} must match except in "
                             f"dim {dim}")
    return Cat.apply(*tensors, dim=d)


def stack(tensors, dim=0):
    tensors = list(tensors)
    if not tensors:
        raise ValueError("stack: expected a non-empty list of tensors")
    if any(t.shape != tensors[0].shape for t in tensors):
        raise ValueError(f"stack: all tensors must have the same shape, got "
                         f"{[t.shape for t in tensors]}")
    return cat([unsqueeze(t, dim) for t in tensors], dim)


def split(x, split_size, dim=0):
    """Pieces of `split_size` along dim (the last may be smaller), or of the given sizes."""
    d = normalize_dims(dim, x.ndim, "split")[0]
    n = x.shape[d]
    if isinstance(split_size, int):
        if split_size <= 0:
            raise ValueError(f"split: split_size must be a positive integer, got {split_size}")
        # an empty dim still gives one (empty) piece, as PyTorch
        sizes = [min(split_size, n - i) for i in range(0, n, split_size)] or [0]
    elif not isinstance(split_size, (list, tuple)):
        raise TypeError(f"split: split_size must be an int or a list of ints, got "
                        f"{split_size!r}")
    else:
        sizes = list(split_size)
        if any(not isinstance(s, int) or s < 0 for s in sizes):
            raise ValueError(f"split: sizes must be non-negative integers (no -1), got {sizes}")
        if sum(sizes) != n:
            raise ValueError(f"split: sizes {sizes} sum to {sum(sizes)}, but dim {dim} has {n}")
    out, start = [], 0
    for s in sizes:
        out.append(x[(slice(None),) * d + (slice(start, start + s),)])
        start += s
    return tuple(out)


def chunk(x, chunks, dim=0):
    if not isinstance(chunks, int) or chunks <= 0:
        raise ValueError(f"chunk: chunks must be a positive integer, got {chunks!r}")
    n = x.shape[normalize_dims(dim, x.ndim, "chunk")[0]]
    if n == 0:  # an empty dim: `chunks` empty pieces, as PyTorch
        return split(x, [0] * chunks, dim)
    return split(x, -(-n // chunks), dim)


def unbind(x, dim=0):
    """The slices of x along `dim`, as a tuple: (x[0], x[1], ..., x[T-1]) for dim 0 (PyTorch's
    unbind). An RNN takes its time steps this way.

    Why halve x recursively instead of taking each x[t]: when backward records a graph
    (create_graph=True), the gradient of a slice is a zero array of its source's full shape
    with that slice filled in, so T direct slices cost O(T²) time and memory; halving slices
    each piece only twice, and the pieces at each level of the recursion add up to one x, so
    the cost is O(T log T). (A plain backward adds slice gradients into one buffer; there
    halving measures no slower than direct slices.)"""
    if x.ndim == 0:
        raise IndexError("unbind: a 0-d tensor has no dim to unbind; give it a shape first")
    d = normalize_dims(dim, x.ndim, "unbind")[0]
    lead = (slice(None),) * d

    def halves(p):
        n = p.shape[d]
        if n == 1:
            return (p,)
        return p[lead + (slice(None, n // 2),)], p[lead + (slice(n // 2, None),)]
    pieces = [x] if x.shape[d] else []
    while any(p.shape[d] > 1 for p in pieces):
        pieces = [h for p in pieces for h in halves(p)]
    return tuple(p[lead + (0,)] for p in pieces)


def tril(x, diagonal=0):
    _need_2d(x, "tril")
    return Triangle.apply(x, upper=False, diagonal=diagonal)


def triu(x, diagonal=0):
    _need_2d(x, "triu")
    return Triangle.apply(x, upper=True, diagonal=diagonal)


def _need_2d(x, op):
    if x.ndim < 2:
        raise ValueError(f"{op}: needs a tensor with at least 2 dims, got shape {x.shape}")


def astype(x, dtype):
    if x.requires_grad and not backend.is_floating(dtype):
        return Tensor._make(x.data.astype(dtype), x.device)  # integer results leave the graph
    return AsType.apply(x, dtype=dtype)


def to_device(x, device):
    return ToDevice.apply(x, device=device)


def clone(x):
    return Clone.apply(x)


def embedding(indices, weight, padding_idx=None):
    """Rows of `weight` picked by integer `indices` (any shape): out[..., :] = weight[i]."""
    idx = raw_index(indices, weight, "embedding", "indices")
    if not hasattr(idx, "dtype") or idx.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be an integer tensor, got "
                        f"{getattr(idx, 'dtype', type(idx).__name__)}")
    n = weight.shape[0]
    if padding_idx is not None:          # a negative padding_idx counts from the end
        if not -n <= padding_idx < n:
            raise ValueError(f"embedding: padding_idx {padding_idx} is outside the table of "
                             f"{n} rows (valid: {-n}..{n - 1}, or None)")
        padding_idx %= n
    out_of_range = (idx < 0) | (idx >= n)
    if idx.size and bool(out_of_range.any()):          # one check, one device sync
        bad = int(idx[out_of_range][0])
        raise IndexError(f"embedding: index {bad} is out of range for a table of {n} rows "
                         f"(valid: 0..{n - 1})")
    return Embedding.apply(weight, indices=idx, padding_idx=padding_idx)
