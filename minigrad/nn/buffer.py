"""nn.Buffer (PyTorch ≥ 2.5): a tensor that, assigned to a Module's attribute, registers
itself as a buffer, saved in state_dict unless persistent=False (Module.__setattr__ reads
the mark)."""
from minigrad import creation
from minigrad.tensor import Tensor


class Buffer(Tensor):
    """Buffer(data=None, *, persistent=True): an alias of `data`'s memory (an empty float32
    tensor for None) that keeps its requires_grad, marked to become a buffer where it is
    assigned (`self.running = nn.Buffer(mg.zeros(3))`), as PyTorch's (whose Buffer is a
    plain Tensor underneath; here it stays a Tensor subclass)."""
    __slots__ = ("persistent",)

    def __init__(self, data=None, *, persistent=True):
        if data is None:
            data = creation.empty(0)
        if not isinstance(data, Tensor):
            raise TypeError(f"Buffer: data must be a Tensor (or None), got "
                            f"{type(data).__name__}; make one with mg.tensor(...)")
        super().__init__(data, requires_grad=data.requires_grad)
        self.persistent = bool(persistent)
