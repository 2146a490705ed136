"""More of PyTorch's Tensor spellings: unfold, sum_to_size, the byte/short/char casts, mH/H,
new_empty_strided, and the memory queries storage_offset/data_ptr. TensorMethods
(tensor_methods.py) inherits them."""
from minigrad import backend


class TensorMore:
    __slots__ = ()

    def unfold(self, dimension, size, step):
        from minigrad.ops.windows import unfold
        return unfold(self, dimension, size, step)

    def sum_to_size(self, *size):
        from minigrad.ops.size_helpers import sum_to_size
        return sum_to_size(self, *size)

    def byte(self): return self.to(dtype=backend.dtype("uint8"))
    def short(self): return self.to(dtype=backend.dtype("int16"))
    def char(self): return self.to(dtype=backend.dtype("int8"))

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
