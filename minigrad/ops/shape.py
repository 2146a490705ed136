"""Ops that move elements without arithmetic: reshape, permute, cat/stack/split, narrow,
roll, unflatten, tril/triu, dtype and device changes (indexing has its own file, index.py;
F.pad has pad.py). Most forwards are views; each backward puts gradients back."""
from minigrad import backend
from minigrad.args import as_int, int_arg, is_0d_integer
from minigrad.autograd import Function, record_outputs
from minigrad.tensor import Tensor
from minigrad.ops.reduce import normalize_dims, normalize_dim, expand  # noqa: F401 (expand)
from minigrad.ops.promotion import common_float


class Reshape(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, shape):                         # same elements, new shape
        self.in_shape = a.shape
        return a.reshape(shape)
    def backward(self, g): return g.reshape(self.in_shape)
    # the same as a view of g's array, without an op (a reshape in every attention layer)
    def backward_arrays(self, g): return (g.reshape(self.in_shape),)


class Permute(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, dims):                          # a view with reordered axes
        self.dims = dims
        return a.transpose(dims)
    def backward(self, g): return g.permute(*self._inverse())
    def backward_arrays(self, g): return (g.transpose(self._inverse()),)   # as Reshape's
    def _inverse(self):
        inverse = [0] * len(self.dims)
        for i, d in enumerate(self.dims):
            inverse[d] = i
        return inverse


class Cat(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, *arrays, dim):
        self.dim, self.sizes = dim, [a.shape[dim] for a in arrays]
        return self.xp.concatenate(arrays, axis=dim)
    def backward(self, g):
        return tuple(g[index] for index in self._pieces())
    # the same as views of g's array, without an op each (a thousand pieces: ~20 ms less)
    def backward_arrays(self, g): return tuple(g[index] for index in self._pieces())
    def _pieces(self):
        start, lead = 0, (slice(None),) * self.dim
        for n in self.sizes:
            yield lead + (slice(start, start + n),)
            start += n


class Stack(Function):
    """Join same-shaped tensors along a new dim. Backward hands out g's slices; under
    create_graph through unbind, one node for all of them."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, *arrays, dim):
        self.dim = dim
        return self.xp.stack(arrays, axis=dim)
    def backward(self, g): return unbind(g, self.dim)
    def backward_arrays(self, g):
        lead = (slice(None),) * self.dim
        return tuple(g[lead + (i,)] for i in range(g.shape[self.dim]))


class Unbind(Function):
    """The slices of x along dim: views, each an output of this one node (Function.
    output_ids), so backward gets all their gradients at once and stacks them: O(T), where
    T slices each scattering into a zero array the size of x would cost O(T²) under
    create_graph. Made by unbind(), not apply (which makes one output)."""
    needs_values = False                                 # see Function.needs_values
    def release(self):
        """Kept: it holds no array of its own (its outputs view its input, and keep that
        alive anyway), so each slice may be backpropagated on its own, as PyTorch's. Marked
        released, so detach_ may cut its input loose (tensor.py)."""
        self.released = True
    def backward(self, grads):
        x = self.inputs[0]
        shape = x.shape[:self.dim] + x.shape[self.dim + 1:]
        zeros = None
        parts = []
        for g in grads:                  # a slice that got no gradient: zeros
            if g is None:
                if zeros is None:
                    zeros = Tensor._make(x.backend.xp.zeros(shape, x.dtype), x.device)
                g = zeros
            parts.append(g)
        return stack(parts, self.dim)


class Triangle(Function):
    """tril/triu: keep the lower/upper triangle of the last two dims (mask is constant).
    Outside it a zero is chosen, not multiplied in: -inf * 0 would be NaN, and
    full(-inf).triu(1) is the causal mask, 0 on and below the diagonal."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, upper, diagonal):
        n, m = a.shape[-2:]
        tri = self.xp.triu if upper else self.xp.tril
        self.upper, self.diagonal = upper, diagonal
        self.mask = tri(self.xp.ones((n, m), dtype=bool), diagonal)
        return self.xp.where(self.mask, a, self.xp.zeros((), a.dtype))
    def backward(self, g):   # the same triangle of the gradient (an inf in it stays out)
        return Triangle.apply(g, upper=self.upper, diagonal=self.diagonal)


class Flip(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, dims):                          # reverse the order along dims
        self.dims = dims
        return self.xp.flip(a, axis=dims).copy()         # a copy, as PyTorch's (not a view)
    def backward(self, g): return flip(g, self.dims)


class AsType(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, dtype):
        self.in_dtype = a.dtype
        return a.astype(dtype)
    def backward(self, g): return g.to(dtype=self.in_dtype)


class ToDevice(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, device):
        self.in_device = self.device
        self.device = device  # results of this op live on the new device
        src, dst = backend.get(self.in_device), backend.get(device)
        self.xp = dst.xp
        return dst.from_numpy(src.to_numpy(a))
    def backward(self, g): return g.to(self.in_device)


class Clone(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a): return a.copy()
    def backward(self, g): return g


# ---- what users call -------------------------------------------------------------------
def reshape(x, shape):
    n = 1
    for s in shape:
        n *= s if s != -1 else 1
    if shape.count(-1) > 1 or (-1 not in shape and n != x.numel()) or \
            (-1 in shape and (n == 0 or x.numel() % n)):
        raise ValueError(f"reshape: cannot view a tensor of shape {x.shape} ({x.numel()} "
                         f"elements) as {tuple(shape)} (the sizes must multiply to "
                         f"{x.numel()}; each >= 0 but one -1 at most, inferred, not beside a 0)")
    return Reshape.apply(x, shape=tuple(shape))  # a new view even of the same shape


def view(x, shape):
    """reshape that refuses to copy, as PyTorch's view: the result shares x's memory, so a
    write to one shows in the other; where x's strides do not allow that (a transpose, a
    permute), reshape copies and view says so."""
    out = reshape(x, shape)
    if out.numel() and not x.backend.xp.may_share_memory(out._data, x._data):
        raise RuntimeError(f"view: a tensor of shape {x.shape} laid out as it is (a transpose "
                           f"or permute of another) cannot be viewed as {tuple(shape)} "
                           f"without a copy; use .reshape(...) (which copies), or "
                           f".contiguous() first")
    return out


def permute(x, dims):
    n, given = x.ndim, tuple(dims)
    order = tuple(range(n))
    dims = tuple(d % n for d in given) if all(-n <= d < n for d in given) else None
    if dims is None or len(dims) != n or set(dims) != set(order):
        raise ValueError(f"permute: dims {given} are not a permutation of the {n} dims of a "
                         f"tensor of shape {x.shape}")
    return Permute.apply(x, dims=dims)


def transpose(x, d0, d1):
    d0, d1 = normalize_dim(d0, x.ndim, "transpose"), normalize_dim(d1, x.ndim,
                                                                             "transpose")
    dims = list(range(x.ndim))
    if dims:                                 # (a 0-d tensor's dim 0 is itself: no swap)
        dims[d0], dims[d1] = d1, d0
    return Permute.apply(x, dims=tuple(dims))


def squeeze(x, dim=None):
    if dim is None:
        return reshape(x, tuple(s for s in x.shape if s != 1))
    dims = normalize_dims(dim, x.ndim, "squeeze")
    return reshape(x, tuple(s for i, s in enumerate(x.shape) if not (i in dims and s == 1)))


def unsqueeze(x, dim):
    if not backend.is_integer(dim):
        if not is_0d_integer(dim):
            raise TypeError(f"unsqueeze: dim must be an int, got {dim!r}")
        dim = int(dim)
    if not -x.ndim - 1 <= dim <= x.ndim:
        raise IndexError(f"unsqueeze: dim {dim} out of range for a tensor with {x.ndim} dims "
                         f"(valid: {-x.ndim - 1}..{x.ndim})")
    dim = dim % (x.ndim + 1)
    return reshape(x, x.shape[:dim] + (1,) + x.shape[dim:])


def flatten(x, start_dim=0, end_dim=-1):
    s, e = (normalize_dim(d, x.ndim, "flatten") for d in (start_dim, end_dim))
    if x.ndim == 0:                          # (its dims 0 and -1 are checked, as PyTorch)
        return reshape(x, (1,))
    if s > e:  # x.shape[s:e + 1] would be empty and insert a new dim of 1
        raise ValueError(f"flatten: start_dim {start_dim} comes after end_dim {end_dim} "
                         f"(dims {s} > {e} of a tensor of shape {x.shape})")
    if s == e:  # nothing to merge: the tensor itself, as PyTorch
        return x
    n = 1
    for d in x.shape[s:e + 1]:
        n *= d
    return reshape(x, x.shape[:s] + (n,) + x.shape[e + 1:])


def cat(tensors, dim=0):
    tensors = _tensor_list(tensors, "cat")
    if not tensors:
        raise ValueError("cat: expected a non-empty list of tensors")
    for i, t in enumerate(tensors):
        if t.ndim == 0:
            raise ValueError(f"cat: the tensor at position {i} is 0-d, and a 0-d tensor has "
                             f"no dim to join along; use mg.stack to join 0-d tensors")
    if any(t.shape == (0,) for t in tensors):
        # PyTorch's legacy rule: a 1-D empty tensor joins tensors of any shape (out = [] then
        # out = cat([out, x]) in a loop), as the empty slice of the others
        ref = next((t.shape for t in tensors if t.shape != (0,)), (0,))
        if len(ref) > 1:
            d = normalize_dim(dim, len(ref), "cat")
            empty = ref[:d] + (0,) + ref[d + 1:]
            tensors = [reshape(t, empty) if t.shape == (0,) else t for t in tensors]
    d = normalize_dim(dim, tensors[0].ndim, "cat")
    tensors = common_float(tensors)
    ref = tensors[0].shape
    for t in tensors[1:]:
        if t.ndim != len(ref) or any(a != b for i, (a, b) in enumerate(zip(t.shape, ref))
                                     if i != d):
            raise ValueError(f"cat: shapes {[x.shape for x in tensors]} must match except in "
                             f"dim {dim}")
    return Cat.apply(*tensors, dim=d)


def stack(tensors, dim=0):
    tensors = _tensor_list(tensors, "stack")
    if not tensors:
        raise ValueError("stack: expected a non-empty list of tensors")
    if any(t.shape != tensors[0].shape for t in tensors):
        raise ValueError(f"stack: all tensors must have the same shape, got "
                         f"{[t.shape for t in tensors]}")
    return Stack.apply(*common_float(tensors),
                       dim=normalize_dim(dim, tensors[0].ndim + 1, "stack"))


def split(tensor, split_size_or_sections, dim=0):
    """Pieces of `split_size` along dim (the last may be smaller), or of the given sizes."""
    d = normalize_dim(dim, _need_dims(tensor, "split", 1).ndim, "split")
    n = tensor.shape[d]
    split_size_or_sections = as_int(split_size_or_sections)     # (a 0-d integer tensor)
    if isinstance(split_size_or_sections, bool):
        raise TypeError(f"split: split_size must be an int or a list of ints, got "
                        f"{split_size_or_sections!r}")
    if isinstance(split_size_or_sections, int):
        if split_size_or_sections < 0 or (split_size_or_sections == 0 and n):    # (0 fits an empty dim only)
            raise ValueError(f"split: split_size must be a positive integer, got {split_size_or_sections}")
        # an empty dim still gives one (empty) piece, as PyTorch
        sizes = [min(split_size_or_sections, n - i) for i in range(0, n, split_size_or_sections)] if n else [0]
    elif not isinstance(split_size_or_sections, (list, tuple)):
        raise TypeError(f"split: split_size must be an int or a list of ints, got "
                        f"{split_size_or_sections!r}")
    else:
        sizes = [as_int(s) for s in split_size_or_sections]
        if any(not isinstance(s, int) or s < 0 for s in sizes):
            raise ValueError(f"split: sizes must be non-negative integers (no -1), got {sizes}")
        if sum(sizes) != n:
            raise ValueError(f"split: sizes {sizes} sum to {sum(sizes)}, but dim {dim} has {n}")
    out, start = [], 0
    for s in sizes:
        out.append(tensor[(slice(None),) * d + (slice(start, start + s),)])
        start += s
    return tuple(out)


def narrow(x, dim, start, length):
    """The `length` slices of x along dim from `start` on, as torch.narrow: a view (it
    shares x's memory), the slice x[..., start:start + length]. A negative start counts
    from the end; start and length must stay within the dim (no clipping, unlike a slice)."""
    if x.ndim == 0:
        raise IndexError("narrow: a 0-d tensor has no dim to narrow; give it a shape first")
    d = normalize_dim(dim, x.ndim, "narrow")
    start, length = as_int(start), as_int(length)      # 0-d integer tensors count as ints
    if not (backend.is_integer(start) and backend.is_integer(length)):
        raise TypeError(f"narrow: start and length must be ints, got {start!r} and "
                        f"{length!r}")
    n = x.shape[d]
    if not -n <= start <= n:
        raise IndexError(f"narrow: start {start} is out of range for dim {d} of size {n} "
                         f"(tensor of shape {x.shape}; valid: {-n}..{n})")
    start = start + n if start < 0 else start
    if length < 0 or start + length > n:
        raise IndexError(f"narrow: length {length} from start {start} does not fit dim {d} "
                         f"of size {n} (tensor of shape {x.shape}; valid lengths: "
                         f"0..{n - start})")
    return x[(slice(None),) * d + (slice(start, start + length),)]


def chunk(input, chunks, dim=0):
    chunks = as_int(chunks)                                 # (a 0-d integer tensor)
    if not backend.is_integer(chunks) or isinstance(chunks, bool) or chunks <= 0:
        raise ValueError(f"chunk: chunks must be a positive integer, got {chunks!r}")
    n = input.shape[normalize_dim(dim, _need_dims(input, "chunk", 1).ndim, "chunk")]
    if n == 0:  # an empty dim: `chunks` empty pieces, as PyTorch
        return split(input, [0] * chunks, dim)
    return split(input, -(-n // chunks), dim)


def unbind(input, dim=0):
    """The slices of x along `dim`, as a tuple: (x[0], x[1], ..., x[T-1]) for dim 0 (PyTorch's
    unbind), views of x. An RNN takes its time steps this way."""
    if input.ndim == 0:
        raise IndexError("unbind: a 0-d tensor has no dim to unbind; give it a shape first")
    d = normalize_dim(dim, input.ndim, "unbind")
    lead, data = (slice(None),) * d, input._data
    # (..., i, ...): a view even of a 1-d x's element (0-d), where data[i] gives a copy
    slices = tuple(Tensor._make(data[lead + (i, Ellipsis)], input.device)
                   for i in range(input.shape[d]))
    for t in slices:
        t._version_counter = input._version_counter         # views: they count x's changes
    if slices:
        node = Unbind()
        node.dim = d
        record_outputs(node, [input], slices)
    return slices


def tril(input, diagonal=0):
    _need_dims(input, "tril")
    return Triangle.apply(input, upper=False, diagonal=int_arg("tril", "diagonal", diagonal))


def triu(input, diagonal=0):
    _need_dims(input, "triu")
    return Triangle.apply(input, upper=True, diagonal=int_arg("triu", "diagonal", diagonal))


def _tensor_list(tensors, op):
    """cat's and stack's argument as a list, each item a Tensor (or a clear error)."""
    if isinstance(tensors, Tensor):
        raise TypeError(f"{op}: expected a list or tuple of tensors, got one Tensor; write "
                        f"{op}([t, ...])")
    tensors = list(tensors)
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: item {i} of the sequence is a {type(t).__name__}, not a "
                            f"Tensor")
    return tensors


def _need_dims(x, op, n=2):
    if x.ndim < n:
        raise ValueError(f"{op}: needs a tensor with at least {n} dim{'s' * (n > 1)}, got "
                         f"shape {x.shape}")
    return x


def astype(x, dtype):
    if x.requires_grad and not backend.is_floating(dtype):
        return Tensor._make(x._data.astype(dtype), x.device)  # integer results leave the graph
    return AsType.apply(x, dtype=dtype)


def to_device(x, device):
    return ToDevice.apply(x, device=device)


def clone(x):
    return Clone.apply(x)


def flip(input, dims):
    """The elements in reverse order along each of `dims` (an int or a tuple), as
    torch.flip."""
    dims = normalize_dims(dims, input.ndim, "flip")
    return Flip.apply(input, dims=dims) if input.ndim else clone(input)


def repeat(x, sizes):
    """x tiled sizes[i] times along dim i, as torch.Tensor.repeat (numpy.tile): extra
    leading sizes add dims. Built from reshape and expand, so the gradient sums the tiles."""
    sizes = tuple(sizes)
    if len(sizes) < x.ndim or any(not isinstance(r, int) or r < 0 for r in sizes):
        raise ValueError(f"repeat: needs one non-negative int per dim of the tensor "
                         f"(shape {x.shape}), or more for new leading dims; got {sizes}")
    shape = (1,) * (len(sizes) - x.ndim) + x.shape
    # (s0, s1) -> (1, s0, 1, s1) -> (r0, s0, r1, s1) -> (r0·s0, r1·s1)
    spread = tuple(d for s in shape for d in (1, s))
    tiled = tuple(d for r, s in zip(sizes, shape) for d in (r, s))
    out = x.reshape(spread).expand(tiled).reshape(tuple(r * s for r, s in zip(sizes, shape)))
    # a copy, as PyTorch's always is: the last reshape copies, except where it can stay a
    # view (every size 1, or tiles of a size-1 dim merged: a broadcast view of x), whose
    # count of in-place changes it then shares with x
    return clone(out) if out._version_counter is x._version_counter else out  # row-major


def roll(input, shifts, dims=None):
    """x's elements moved `shifts` places along `dims`, cyclically (what falls off one end
    comes back at the other), as torch.roll; without dims, along x flattened, then back to
    x's shape. Two slices and a cat per dim, so the gradient rolls back. Always a copy."""
    listed = lambda v: tuple(map(as_int, v if isinstance(v, (tuple, list)) else (v,)))  # noqa: E731
    shifts, dims = listed(shifts), () if dims is None else listed(dims)
    if not all(backend.is_integer(v) for v in shifts + dims):
        raise TypeError(f"roll: shifts and dims must be ints or tuples of ints, got shifts="
                        f"{shifts}, dims={dims}")
    if not shifts or len(shifts) != max(len(dims), 1):
        raise ValueError(f"roll: shifts and dims must align (one shift per dim, or a single "
                         f"shift without dims), got shifts={shifts}, dims={dims}")
    if not dims:
        return reshape(roll(flatten(input), shifts, 0), input.shape)
    if input.ndim == 0:
        raise IndexError(f"roll: a 0-d tensor has no dim {dims[0]}; roll it without dims")
    out = input
    for shift, dim in zip(shifts, dims):
        d = normalize_dim(dim, input.ndim, "roll")
        n = input.shape[d]
        k = shift % n if n else 0
        if k:
            lead = (slice(None),) * d
            out = cat([out[lead + (slice(n - k, None),)], out[lead + (slice(0, n - k),)]], d)
    return clone(input) if out is input else out


def unflatten(input, dim, sizes):
    """Dim `dim` split into dims of `sizes` (one of them may be -1, inferred), as
    torch.unflatten: a reshape, so a view."""
    if input.ndim == 0:
        raise IndexError("unflatten: a 0-d tensor has no dim to unflatten")
    d = normalize_dim(dim, input.ndim, "unflatten")
    if not isinstance(sizes, (tuple, list)) or not all(backend.is_integer(s) for s in sizes):
        raise TypeError(f"unflatten: sizes must be a tuple of ints, got {sizes!r}")
    sizes, n = tuple(sizes), input.shape[d]
    known = 1
    for s in sizes:
        known *= s if s != -1 else 1
    if not sizes or sizes.count(-1) > 1 or any(s < -1 for s in sizes) or (
            known != n if -1 not in sizes else known == 0 or n % known):
        raise ValueError(f"unflatten: sizes {sizes} do not multiply up to the size of dim "
                         f"{dim} ({n}) of the tensor of shape {input.shape} (give at least one "
                         f"size; one -1 at most, which is inferred, and not beside a 0)")
    sizes = tuple(n // known if s == -1 else s for s in sizes)
    return reshape(input, input.shape[:d] + sizes + input.shape[d + 1:])
