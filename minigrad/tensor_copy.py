"""Copies and pickles of a Tensor, as PyTorch's: copy.copy shares the values; deepcopy and
pickle give a new leaf holding the values and requires_grad (and a user subclass's own
attributes). deepcopy copies a plain tensor's .grad, not a Parameter's, and keeps tensors that
shared memory (views of one tensor) sharing the copied memory, as PyTorch's keeps storages
shared (on the CPU; on a GPU each is copied on its own); a tensor inside a graph cannot be
deep-copied with its graph. `Tensor` inherits them."""
import copy

from minigrad import backend


class TensorCopy:
    __slots__ = ()          # Tensor's own __slots__ stay the only attributes

    def __reduce_ex__(self, protocol):
        # a dense layout other than row-major (channels_last) pickles as its memory in
        # order and the dims' order to see it in, so it comes back laid out so, as torch's
        array, dims = _in_memory_order(self._data)
        args = (type(self), array, self.device, self.requires_grad) + \
            ((dims,) if dims is not None else ())
        return rebuild, args, getattr(self, "__dict__", None)   # a subclass's attributes

    def __deepcopy__(self, memo):
        from minigrad.tensor import Tensor               # tensor.py imports this module
        if self._ctx is not None:
            raise RuntimeError("deepcopy: only tensors made by the user (graph leaves) can be "
                               "deep-copied, not the result of an op inside a graph; "
                               "copy t.detach() (or t.detach().clone())")
        array = _copied_array(self._data, memo) if self.backend.host else self._data.copy()
        new = rebuild(type(self), array, self.device, self.requires_grad)
        memo[id(self)] = new                  # before the grad and attributes, which may
        if self._grad is not None and type(self) is Tensor:     # refer back to it
            new._grad = copy.deepcopy(self._grad, memo)    # (a grad copied once, if shared)
        if getattr(self, "__dict__", None):
            new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new


def _copied_array(a, memo):
    """A NumPy array's values in new memory, for deepcopy: the whole memory it views is
    copied once per deepcopy (memo remembers it), and the copy of `a` is the same view of
    that, so arrays that shared memory still share it afterwards."""
    root = a
    while isinstance(root.base, type(a)):            # the array owning the memory
        root = root.base
    if a.size == 0 or not (root.flags.c_contiguous or root.flags.f_contiguous):
        return a.copy()                  # no memory to share, or no layout to copy as is
    new_root = memo.get(id(root))
    if new_root is None:
        new_root = memo[id(root)] = root.copy(order="K")    # K: the same strides
        memo.setdefault(id(memo), []).append(root)  # alive while its id is in memo (as copy's)
    if not isinstance(new_root, type(a)) or new_root.strides != root.strides or \
            new_root.shape != root.shape:
        return a.copy()
    if a is root:
        return new_root
    offset = a.__array_interface__["data"][0] - root.__array_interface__["data"][0]
    new = type(a)(a.shape, a.dtype, buffer=new_root, offset=offset, strides=a.strides)
    new.flags.writeable = a.flags.writeable        # an expand()ed view stays read-only
    return new


def _in_memory_order(a):
    """(a, None) for a row-major or non-dense array a; else (a's dims transposed into their
    order in memory: a row-major array of a's memory; the dims that see a in it)."""
    if a.flags.c_contiguous or a.size == 0:
        return a, None
    outer_first = sorted(range(a.ndim), key=lambda d: -a.strides[d])
    root = a.transpose(outer_first)
    if not root.flags.c_contiguous:
        return a, None
    return root, tuple(outer_first.index(d) for d in range(a.ndim))


def rebuild(cls, array, device, requires_grad, dims=None):
    """A leaf of class cls (Tensor, Parameter, a user's subclass) holding `array` (pickle's
    and copy's end), seen through dims where given (see _in_memory_order): Tensor._make's
    fields on a new cls."""
    array = array if dims is None else array.transpose(dims)
    t = cls.__new__(cls)
    t._data, t.device, t._grad, t._ctx = array, backend.device_name(device), None, None
    t.requires_grad = requires_grad
    t._version_counter, t._hooks, t._retains_grad, t._uses = [0], None, False, None
    return t
