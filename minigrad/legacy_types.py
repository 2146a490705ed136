"""PyTorch's legacy tensor types: mg.FloatTensor, mg.LongTensor ... and mg.cuda.FloatTensor
... (torch.FloatTensor, torch.cuda.LongTensor). Older tutorials build tensors with them
(`torch.LongTensor([[0, 1, 2]])`, `torch.FloatTensor(2, 3)`), test with them
(`isinstance(t, torch.FloatTensor)`) and convert to them (`t.type(torch.LongTensor)`).

Each is a class, as torch's: calling it makes a Tensor of its dtype on its device, and a
Tensor of that dtype and device is an instance of it (its metaclass says so); no tensor
is of the class itself. The call takes what torch's does: nothing (an empty tensor),
sizes (uninitialised memory, as torch.empty), a sequence or NumPy array of values
(converted to the dtype; floats into an integer type truncate, as torch's), or a tensor of
exactly its dtype and device (an alias of its memory, as Tensor(t)). A tuple is values, as
torch's; torch takes its torch.Size as sizes, but a shape here is a plain tuple: unpack it,
mg.FloatTensor(*t.shape)."""
from minigrad import backend, creation
from minigrad.args import _TYPE_NAMES
from minigrad.tensor import Tensor


class TensorType(type):
    """The metaclass of the legacy types (torch.tensortype)."""

    def __instancecheck__(cls, obj):
        return isinstance(obj, Tensor) and obj.dtype == cls.dtype and \
            obj.device.split(":")[0] == cls.device_type

    def __call__(cls, *args, device=None):
        name = repr(cls)[8:-2]
        if device is not None and backend.device_name(device).split(":")[0] != \
                cls.device_type:
            raise RuntimeError(f"{name}: device {device!r} is not this type's "
                               f"({cls.device_type!r}); use {_other(cls)} there")
        device = cls.device_type if device is None else device
        if not args:
            return creation.empty(0, dtype=cls.dtype, device=device)
        if all(backend.is_integer(a) for a in args):          # sizes
            return creation.empty(*args, dtype=cls.dtype, device=device)
        if len(args) == 1:
            data = args[0]
            if isinstance(data, Tensor):
                if data in cls:
                    return Tensor(data)
                raise TypeError(f"{name}: expected a tensor of dtype {cls.dtype} on "
                                f"{cls.device_type}, got {data.dtype} on {data.device}; "
                                f"convert it with t.type({name}) instead")
            if isinstance(data, (list, tuple)) or hasattr(data, "__array__"):
                return creation.tensor(data, dtype=cls.dtype, device=device)
        got = ", ".join(type(a).__name__ for a in args)
        raise TypeError(f"{name}: expected sizes (ints), a sequence or array of values, "
                        f"or a tensor of its dtype; got ({got})")

    def __contains__(cls, t):                # (for the check above: `t in cls`)
        return isinstance(t, cls)

    def __repr__(cls):
        return f"<class '{cls.__module__}.{cls.__name__}'>"


def _other(cls):
    return ("minigrad." if cls.device_type == "cuda" else "minigrad.cuda.") + cls.__name__


def _types(device_type):
    module = "minigrad" if device_type == "cpu" else "minigrad.cuda"
    return {name: TensorType(name, (), {"dtype": backend.dtype(dt), "is_cuda":
                                        device_type == "cuda", "device_type": device_type,
                                        "__module__": module})
            for dt, name in _TYPE_NAMES.items()}


CPU_TYPES, CUDA_TYPES = _types("cpu"), _types("cuda")
