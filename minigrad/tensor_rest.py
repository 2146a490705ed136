"""The rest of PyTorch's Tensor spellings: as_strided and its in-place and scatter forms
(ops/as_strided.py), set_/is_set_to, the deprecated out-of-place resize, storage queries,
dim_order, nonzero_static, hash_tensor, map2_ and the no-ops of a dense, real, CPU-or-CuPy
tensor (to_dense, conj_physical, record_stream). TensorMore (tensor_more.py) inherits them.

Not here, deliberately: PyTorch 2's removed eig, symeig, lstsq and solve (they raise there
too: use mg.linalg), the sparse, quantized and complex ones (minigrad's tensors are dense
and real), and `index` (functorch's first-class dims, not a general Tensor API)."""
import math
import warnings

from minigrad import backend


class _Storage:
    """What x.untyped_storage() / x.storage() tell of the memory a tensor lies in (that of
    the array owning its array): its address, bytes, size and element size. No values: read
    them through the tensor. `typed`: counted in x's elements (storage()), else in bytes."""
    __slots__ = ("_ptr", "_nbytes", "_itemsize")

    def __init__(self, x, typed):
        from minigrad.ops.as_strided import storage_of, _address
        flat = storage_of(x._data, x.backend.xp)[0]
        self._ptr = _address(flat) if flat.size else 0
        self._nbytes, self._itemsize = flat.nbytes, flat.dtype.itemsize if typed else 1

    def data_ptr(self): return self._ptr
    def nbytes(self): return self._nbytes
    def size(self): return self._nbytes // self._itemsize
    def element_size(self): return self._itemsize
    def __len__(self): return self.size()
    def __repr__(self): return f"minigrad storage of {self.size()} elements at {self._ptr:#x}"


def _dense_strides(shape):
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= max(n, 1)
    return tuple(reversed(out))


def _channels_last(sizes, strides):
    """Whether a 4-d tensor lies channels-last: C innermost, then W, H, N (size-1 dims'
    strides not counted)."""
    step = 1
    for d in (1, 3, 2, 0):
        if sizes[d] != 1:
            if strides[d] != step:
                return False
            step *= sizes[d]
    return True


class TensorRest:
    __slots__ = ()

    # ---- as_strided (ops/as_strided.py) -------------------------------------------------
    def as_strided(self, size, stride, storage_offset=None):
        from minigrad.ops.as_strided import as_strided
        return as_strided(self, size, stride, storage_offset)

    def as_strided_(self, size, stride, storage_offset=None):
        """self becomes as_strided(size, stride, storage_offset) of its own memory, as
        PyTorch's (recorded as that view op in a graph; refused, as PyTorch, for a leaf
        that requires grad in grad mode). Windows that overlap other than along stride-0
        dims are refused: as_strided gives them as a copy, which self would not be."""
        from minigrad.ops.as_strided import as_strided, _layout, _ints
        from minigrad.ops.inplace_shape import view_
        if _layout(_ints(size, "size", "as_strided_"), _ints(stride, "stride",
                                                            "as_strided_")) == "overlap":
            raise RuntimeError(f"as_strided_: sizes {list(size)} and strides {list(stride)} "
                               f"make elements that share memory, which minigrad's tensors "
                               f"cannot be; use y = x.as_strided(...) (a copy there)")
        return view_(self, "as_strided_",
                     lambda t: as_strided(t, size, stride, storage_offset, "as_strided_"))

    def as_strided_scatter(self, src, size, stride, storage_offset=None):
        from minigrad.ops.as_strided import as_strided_scatter
        return as_strided_scatter(self, src, size, stride, storage_offset)

    # ---- memory ---------------------------------------------------------------------------
    def set_(self, source=None, *args, **kwargs):
        """self becomes an alias of tensor `source`: its memory, shape and strides, sharing
        its version count (set_() alone: an empty 1-D tensor), as PyTorch's. Not recorded by
        autograd: refused in grad mode where either requires grad (PyTorch refuses a leaf
        that does), and for a self with a history. Storage arguments are refused: minigrad
        has no Storage objects."""
        from minigrad.autograd import is_grad_enabled
        from minigrad.ops.inplace_shape import _check_unrecorded
        if args or kwargs or not (source is None or isinstance(source, TensorRest)):
            raise TypeError(f"set_: only set_(tensor) or set_() are supported (minigrad has no "
                            f"Storage objects), got {type(source).__name__} and "
                            f"{len(args) + len(kwargs)} more arguments; for a strided view "
                            f"of a tensor's memory use source.as_strided(size, stride, "
                            f"storage_offset)")
        if source is not None:
            if source.dtype != self.dtype:
                raise RuntimeError(f"set_: could not set a tensor of {self.dtype} to a tensor "
                                   f"of {source.dtype}; convert one with .to() first")
            if source.device != self.device:
                raise RuntimeError(f"set_: source on {source.device}, tensor on "
                                   f"{self.device}; move it with .to({self.device!r}) first")
        if is_grad_enabled() and (self.requires_grad or getattr(source, "requires_grad",
                                                                 False)):
            raise RuntimeError("set_: a tensor that requires grad is being used in an "
                               "in-place operation autograd does not record; do it under "
                               "mg.no_grad()")
        _check_unrecorded(self, "set_")
        self._version_counter[0] += 1          # its old memory's views see a change
        if source is None:
            self._data, self._version_counter = self.backend.xp.empty(0, self.dtype), [0]
        else:
            self._data, self._version_counter = source._data, source._version_counter
        return self

    def is_set_to(self, tensor):
        """Whether self and tensor are the same memory with the same dtype, shape and
        strides (as after a.set_(b))."""
        if not isinstance(tensor, TensorRest):
            raise TypeError(f"is_set_to: expected a Tensor, got {type(tensor).__name__}")
        return (self.device == tensor.device and self.dtype == tensor.dtype and
                self.shape == tensor.shape and self._data.strides == tensor._data.strides
                and self.data_ptr() == tensor.data_ptr())

    def untyped_storage(self):
        """The memory self lies in, counted in bytes (data_ptr, nbytes, size, element_size
        only)."""
        return _Storage(self, typed=False)

    def storage(self):
        """The memory self lies in, counted in self's elements (data_ptr, nbytes, size,
        element_size only)."""
        return _Storage(self, typed=True)

    def const_data_ptr(self): return self.data_ptr()

    def dim_order(self, *, ambiguity_check=False):
        """The dims from the outermost in memory to the innermost, as PyTorch's: a
        contiguous tensor's in order, else sorted by stride, where a stride of 0 (expand)
        tells nothing and of two equal strides the longer dim is outer.
        ambiguity_check=True refuses a tensor with more than one such order (a size-1 dim,
        neighbouring dims of one stride, a stride of 0)."""
        n, sizes = self.ndim, self.shape
        strides = self.stride() if self.numel() else _dense_strides(sizes)
        if ambiguity_check and (1 in sizes or any(a == b for a, b in zip(strides,
                                                                         strides[1:]))):
            raise RuntimeError(f"dim_order: the tensor does not have unique dim order (shape "
                               f"{sizes}, strides {strides})")
        if n < 2:
            return tuple(range(n))
        dense = not self.numel() or self.is_contiguous()
        last = n == 4 and _channels_last(sizes, strides)
        if dense != last:                           # PyTorch's shortcuts
            return tuple(range(n)) if dense else (0, 2, 3, 1)

        def outer(a, b):
            """1: dim a lies outside dim b, -1: inside, 0: the strides cannot tell."""
            if strides[a] == 0 or strides[b] == 0:
                return 0
            if strides[a] == strides[b]:
                return 1 if sizes[a] > sizes[b] else 0
            return 1 if strides[a] > strides[b] else -1
        inner_first = list(reversed(range(n)))      # an insertion sort that keeps the dims'
        for i in range(1, n):                       # order where the strides cannot tell
            j = i
            for k in reversed(range(i)):
                order = outer(inner_first[k], inner_first[j])
                if order < 0:
                    break
                if order > 0:
                    inner_first[k], inner_first[j] = inner_first[j], inner_first[k]
                    j = k
        if ambiguity_check and any(outer(a, b) != -1 for a, b in zip(inner_first,
                                                                    inner_first[1:])):
            raise RuntimeError(f"dim_order: the tensor does not have unique dim order (shape "
                               f"{sizes}, strides {strides})")
        return tuple(reversed(inner_first))

    def record_stream(self, stream):
        """A no-op: minigrad runs every op on one stream, so memory is never reused while
        another stream could still read it."""
        return None

    # ---- spellings of what a dense, real tensor already is ---------------------------------
    def to_dense(self, dtype=None, *, masked_grad=None):
        """self (a dense tensor), or self.to(dtype)."""
        return self if dtype is None or dtype == self.dtype else self.to(dtype=dtype)

    def conj_physical(self): return self                 # real: the conjugate is itself
    def conj_physical_(self): return self

    output_nr = property(lambda self: (self._ctx.output_ids.get(id(self), 0)
                                       if self._ctx is not None and self._ctx.output_ids
                                       else 0),
                         doc="Which output of its grad_fn the tensor is (0 but for unbind's "
                             "and other nodes of several outputs).")
    name = property(lambda self: None, doc="None: minigrad has no named tensors.")

    # ---- the rest -------------------------------------------------------------------------
    def resize(self, *sizes):
        """PyTorch's deprecated out-of-place resize: self reshaped to `sizes` (the same
        number of elements), differentiable. Prefer reshape."""
        from minigrad.args import shape_args
        warnings.warn("non-inplace resize is deprecated; use reshape", UserWarning,
                      stacklevel=2)
        shape = shape_args(sizes, "resize")
        if math.prod(shape) != self.numel() or any(n < 0 for n in shape):
            raise RuntimeError(f"resize: requested resize to {shape} ({math.prod(shape)} "
                               f"elements), but the tensor has shape {self.shape} "
                               f"({self.numel()} elements); resize can only change the shape, "
                               f"keeping the number of elements (resize_ can change it)")
        return self.reshape(shape)

    def resize_as(self, tensor):
        if not isinstance(tensor, TensorRest):
            raise TypeError(f"resize_as: expected a Tensor, got {type(tensor).__name__}")
        return self.resize(*tensor.shape)

    def nonzero_static(self, *, size, fill_value=-1):
        """nonzero()'s (n, ndim) indices cut or padded with fill_value to `size` rows, a
        shape known before the values (as PyTorch's)."""
        if not backend.is_integer(size) or size < 0:
            raise RuntimeError(f"nonzero_static: 'size' must be a non-negative int, got "
                               f"{size!r}")
        if not backend.is_integer(fill_value) or isinstance(fill_value, bool):
            raise TypeError(f"nonzero_static: 'fill_value' must be an int (the padding "
                            f"index), got {fill_value!r}")
        found = self.nonzero()[:size]
        if found.shape[0] == size:
            return found
        pad = found.new_full((size - found.shape[0], self.ndim), fill_value)
        from minigrad import cat
        return cat([found, pad])

    def module_load(self, other, assign=False):
        """What Module.load_state_dict makes of state-dict value `other` for this parameter
        or buffer, as PyTorch's default: other.detach() where assign, else
        self.copy_(other).detach()."""
        if not isinstance(other, TensorRest):
            raise TypeError(f"module_load: expected a Tensor, got {type(other).__name__}")
        return other.detach() if assign else self.copy_(other).detach()

    def map2_(self, x, y, callable):
        """Each element a becomes callable(a, b, c), b and c x's and y's there (x and y of
        self's dtype, broadcast to self's shape), as map_; CPU only."""
        from minigrad.tensor_inplace import _map_elements
        return _map_elements(self, "map2_", callable, x, y)

    def hash_tensor(self, dim=None, keepdim=False, *, mode=0):
        """The XOR of the elements' 64-bit patterns (floats as float64, integers and bools
        as int64) over `dim` (None or (): all), as PyTorch's. PyTorch's result is uint64,
        which minigrad lacks: this is int64 with the same bits (.view(uint64) there). An
        XOR over no element has no value: an empty tensor needs `dim`, and the dims it
        names a size, as PyTorch (a dim named twice: a ValueError, as minigrad's other
        reductions', where PyTorch's is a RuntimeError)."""
        from minigrad.ops.reduce import normalize_dims
        if mode != 0:
            raise RuntimeError(f"hash_tensor: only mode=0 (xor reduction) exists, got {mode}")
        a = self._data
        a = a.astype(backend.float64).view(backend.int64) if a.dtype.kind == "f" else \
            a.astype(backend.int64)
        every = dim is None or (isinstance(dim, (tuple, list)) and len(dim) == 0)
        if every and a.size == 0:
            raise RuntimeError(f"hash_tensor: an empty tensor (shape {self.shape}) needs "
                               f"dim, the dims to reduce (XOR over no element has no value)")
        dims = normalize_dims(None if every else dim, self.ndim, "hash_tensor")
        dims = list(dims) if self.ndim else []           # a 0-d tensor's dim 0: itself
        for d in dims:
            if self.shape[d] == 0:
                raise IndexError(f"hash_tensor: dim {d} has size 0 (shape {self.shape}): "
                                 f"nothing to XOR; reduce over dims of non-zero size")
        xp, keep = self.backend.xp, [d for d in range(self.ndim) if d not in dims]
        a = a.transpose(keep + dims).reshape(tuple(self.shape[d] for d in keep) + (
            math.prod(self.shape[d] for d in dims),))
        while a.shape[-1] > 1:                  # halves XORed together: log2(n) passes
            half = a.shape[-1] // 2
            rest = a[..., 2 * half:]
            a = xp.concatenate([xp.bitwise_xor(a[..., :half], a[..., half:2 * half]), rest],
                               axis=-1)
        out = a[..., 0]                         # (no reduced dim is empty: refused above)
        if keepdim:
            out = out.reshape(tuple(1 if d in dims else n for d, n in enumerate(self.shape)))
        return type(self)._make(out.copy(), self.device)
