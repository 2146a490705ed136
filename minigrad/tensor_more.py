"""More of PyTorch's Tensor spellings: unfold, sum_to_size, the dtype casts with
memory_format=, mH/H, new_empty_strided, new, the memory queries storage_offset/data_ptr
and the flags of what minigrad's tensors never are (conjugate, sparse, pinned...),
triangular_solve and ormqr.
TensorMethods (tensor_methods.py) inherits them; they inherit tensor_rest.py's."""
from collections import namedtuple

from minigrad import backend
from minigrad import memory_format as _mf
from minigrad.tensor_rest import TensorRest

TriangularSolveResult = namedtuple("TriangularSolveResult", ("solution", "cloned_coefficient"))


class _Layout:
    """A tensor's memory layout, as torch.layout: minigrad has only `mg.strided` (dense
    arrays with strides; no sparse or MKL-DNN layouts)."""
    __slots__ = ("name",)

    def __init__(self, name): self.name = name
    def __repr__(self): return f"minigrad.{self.name}"
    def __reduce__(self): return self.name       # pickles as the module-level singleton


strided = _Layout("strided")


class TensorMore(TensorRest):      # (tensor_rest.py: as_strided, set_, storage...)
    __slots__ = ()

    def unfold(self, dimension, size, step):
        from minigrad.ops.windows import unfold
        return unfold(self, dimension, size, step)

    def sum_to_size(self, *size):
        from minigrad.ops.size_helpers import sum_to_size
        return sum_to_size(self, *size)

    # the dtype casts, as PyTorch's: self.to(dtype, memory_format=...), so self itself where
    # the dtype and layout are already those
    def float(self, *, memory_format=_mf.preserve_format):
        return self.to(dtype=backend.float32, memory_format=memory_format)

    def double(self, *, memory_format=_mf.preserve_format):
        return self.to(dtype=backend.float64, memory_format=memory_format)

    def half(self, *, memory_format=_mf.preserve_format):
        return self.to(dtype=backend.float16, memory_format=memory_format)

    def int(self, *, memory_format=_mf.preserve_format):
        return self.to(dtype=backend.int32, memory_format=memory_format)

    def long(self, *, memory_format=_mf.preserve_format):
        return self.to(dtype=backend.int64, memory_format=memory_format)

    def bool(self, *, memory_format=_mf.preserve_format):
        return self.to(dtype=backend.bool_, memory_format=memory_format)

    def byte(self, *, memory_format=_mf.preserve_format):
        return self.to(dtype=backend.dtype("uint8"), memory_format=memory_format)

    def short(self, *, memory_format=_mf.preserve_format):
        return self.to(dtype=backend.dtype("int16"), memory_format=memory_format)

    def char(self, *, memory_format=_mf.preserve_format):
        return self.to(dtype=backend.dtype("int8"), memory_format=memory_format)

    # minigrad's tensors are real, so the conjugate transposes are the transposes
    @property
    def mH(self):
        if self.ndim < 2 and self.ndim != 0:
            raise RuntimeError(f"tensor.mH is only supported on matrices or batches of "
                               f"matrices. Got {self.ndim}-D tensor.")
        return self if self.ndim == 0 else self.mT

    @property
    def H(self):
        if self.ndim not in (0, 2):
            hint = " For batches of matrices, consider using tensor.mH" if self.ndim > 2 \
                else ""
            raise RuntimeError(f"tensor.H is only supported on matrices (2-D tensors). Got "
                               f"{self.ndim}-D tensor.{hint}")
        return self if self.ndim == 0 else self.mT

    def new_empty_strided(self, size, stride, *, dtype=None, device=None,
                          requires_grad=False):
        """An uninitialised tensor of `size`, as new_empty. `stride` is checked (one per
        dim) but not followed: the memory is always laid out contiguously (PyTorch lays it
        out as asked), so x.stride() may differ from `stride`."""
        size = tuple(size)
        if len(tuple(stride)) != len(size):
            raise RuntimeError(f"new_empty_strided: mismatch in length of strides and "
                               f"shape: {len(tuple(stride))} strides for size {size}")
        return self.new_empty(size, dtype=dtype, device=device, requires_grad=requires_grad)

    def new(self, *args, device=None):
        """PyTorch's legacy constructor: new() an empty 1-D tensor, new(2, 3) an
        uninitialised one of that size (as new_empty), new(data) a tensor of a list or tuple
        (as new_tensor), new(t) an alias of t (t of self's dtype: a view sharing its memory and,
        as PyTorch's, its graph, so gradients flow back to t); in self's dtype. A tuple is
        data, as PyTorch's; minigrad's shapes are plain tuples, so new(y.shape) gives y's
        sizes as values (PyTorch's torch.Size means sizes): write new(*y.shape)."""
        if len(args) == 1 and not backend.is_integer(args[0]):
            data = args[0]
            if isinstance(data, type(self)):
                if data.dtype != self.dtype:
                    raise TypeError(f"new: expected a tensor of {self.dtype}, got "
                                    f"{data.dtype}; convert it with .to() first")
                alias = data.view(data.shape)
                return alias if device is None else alias.to(device)
            if not isinstance(data, (list, tuple)):
                raise TypeError(f"new(): data must be a sequence (a list or tuple), got "
                                f"{type(data).__name__}; give sizes as ints: new(2, 3)")
            return self.new_tensor(data, device=device)
        if not all(backend.is_integer(n) for n in args):
            raise TypeError(f"new: sizes must be ints, got {args}")
        return self.new_empty(*(args or (0,)), device=device)

    def bfloat16(self):
        raise TypeError("bfloat16: minigrad has no bfloat16 (NumPy and CuPy have none); use "
                        "half() for float16")

    # ---- operations under their Tensor spellings ----------------------------------------
    def hardshrink(self, lambd=0.5):
        from minigrad.ops.activations_more import hardshrink
        return hardshrink(self, lambd)

    def prelu(self, weight):
        from minigrad.ops.activations import prelu
        return prelu(self, weight)

    def narrow_copy(self, dim, start, length):
        """narrow, copied (row-major, as PyTorch's): it shares no memory with self."""
        from minigrad.memory_format import contiguous_format
        return self.narrow(dim, start, length).clone(memory_format=contiguous_format)

    # PyTorch's unsafe_ spellings skip its check on in-place changes of the pieces (views);
    # minigrad's pieces are checked views too, so these are chunk and split
    def unsafe_chunk(self, chunks, dim=0): return self.chunk(chunks, dim)
    def unsafe_split(self, split_size, dim=0): return self.split(split_size, dim)
    def unsafe_split_with_sizes(self, split_sizes, dim=0):
        return self.split_with_sizes(split_sizes, dim)

    def triangular_solve(self, A, upper=True, transpose=False, unitriangular=False):
        """PyTorch's deprecated solve of TX = self (T A's upper or lower triangle; Tᵀ if
        transpose), as a named tuple (solution, cloned_coefficient: a copy of A broadcast to
        the solution's batch dims). Prefer mg.linalg.solve_triangular(A, B, upper=...),
        which this calls (so it is differentiable in both)."""
        from minigrad import linalg
        if self.ndim < 2:
            raise ValueError(f"triangular_solve: expected b (self) to have at least 2 dims, "
                             f"got shape {self.shape}")
        T = A.mT if transpose else A
        x = linalg.solve_triangular(T, self, upper=bool(upper) != bool(transpose),
                                    unitriangular=unitriangular)
        return TriangularSolveResult(x, A.expand(x.shape[:-2] + A.shape[-2:]).clone())

    def ormqr(self, input2, input3, left=True, transpose=False):
        from minigrad.ops.linalg_householder import ormqr
        return ormqr(self, input2, input3, left, transpose)

    # ---- what minigrad's tensors never are: real, dense, in ordinary memory -------------
    def resolve_conj(self): return self                  # (no complex: nothing to resolve)
    def resolve_neg(self): return self                   # (no lazy negation bit)
    def is_conj(self): return False
    def is_neg(self): return False
    def is_inference(self): return False     # (mg.inference_mode is no_grad: no such tensors)
    is_sparse = is_quantized = is_meta = is_nested = is_mkldnn = property(lambda self: False)
    layout = property(lambda self: strided)

    def is_pinned(self):
        """False: minigrad has no page-locked host memory (see pin_memory)."""
        return False

    def pin_memory(self):
        """A copy (clone: differentiable, as PyTorch's), in ordinary host memory: minigrad
        does not page-lock memory (CuPy copies from any host array), and PyTorch without a
        GPU refuses instead. For a CPU tensor only, as PyTorch."""
        if self.device != "cpu":
            raise RuntimeError(f"pin_memory: only CPU tensors can be pinned, got one on "
                               f"{self.device}")
        return self.clone()

    def is_shared(self):
        """False: minigrad keeps no tensor in shared memory (see share_memory_)."""
        return False

    def share_memory_(self):
        """A no-op returning self: PyTorch moves the memory to shared memory for its
        multiprocessing; minigrad's tensors are not shared between processes that way, so
        is_shared() stays False."""
        return self

    def storage_offset(self):
        """How many elements into the memory it views (that of the array owning it) the
        tensor's first element lies: 0 unless a view (x[1:] of a 2x3 x: 3), as PyTorch's."""
        owner = a = self._data
        # (as_strided's views, unfold's, have a non-array base holding the array)
        while getattr(a, "base", None) is not None:
            a = a.base
            owner = a if isinstance(a, type(self._data)) else owner
        if owner is self._data or self._data.size == 0:
            return 0
        return (_address(self._data) - _address(owner)) // self.dtype.itemsize

    def data_ptr(self):
        """The address of the tensor's first element (NumPy's or CuPy's data pointer)."""
        return _address(self._data)


def _address(a):
    return a.__array_interface__["data"][0] if hasattr(a, "__array_interface__") \
        else a.data.ptr
