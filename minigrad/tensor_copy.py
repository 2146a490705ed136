"""Copies and pickles of a Tensor, as PyTorch's: copy.copy shares the values; deepcopy and
pickle give a new leaf holding the values and requires_grad (and a user subclass's own
attributes). deepcopy copies a plain tensor's .grad, not a Parameter's; a tensor inside a
graph cannot be deep-copied with its graph. `Tensor` inherits them."""
import copy

from minigrad import backend


class TensorCopy:
    __slots__ = ()          # Tensor's own __slots__ stay the only attributes

    def __reduce_ex__(self, protocol):
        return rebuild, (type(self), self.data, self.device, self.requires_grad), \
            getattr(self, "__dict__", None)              # a subclass's own attributes

    def __deepcopy__(self, memo):
        from minigrad.tensor import Tensor               # tensor.py imports this module
        if self._ctx is not None:
            raise RuntimeError("deepcopy: only tensors made by the user (graph leaves) can be "
                               "deep-copied, not the result of an op inside a graph; "
                               "copy t.detach() (or t.detach().clone())")
        new = rebuild(type(self), self.data.copy(), self.device, self.requires_grad)
        if self._grad is not None and type(self) is Tensor:
            new._grad = self._grad.__deepcopy__(memo)
        if getattr(self, "__dict__", None):
            new.__dict__.update(copy.deepcopy(self.__dict__, memo))
        return new


def rebuild(cls, array, device, requires_grad):
    """A leaf of class cls (Tensor, Parameter, a user's subclass) holding `array` (pickle's
    and copy's end): Tensor._make's fields on a new cls."""
    t = cls.__new__(cls)
    t._data, t.device, t._grad, t._ctx = array, backend.device_name(device), None, None
    t.requires_grad = requires_grad
    t._version_counter, t._hooks, t._retains_grad = [0], None, False
    return t
