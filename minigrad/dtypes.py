"""What PyTorch answers about dtypes: finfo and iinfo (a dtype's limits; a mask filled with
finfo(x.dtype).min stays finite where -inf would make an all-masked row NaN), the default
floating dtype (what Python floats, mg.zeros and new layers' weights get), and
promote_types."""
from minigrad import backend

_np = backend.get("cpu").xp


def finfo(type=None):  # noqa: A002  (PyTorch's name)
    """A floating dtype's limits: .min, .max, .eps, .tiny (smallest normal), .bits,
    .resolution (NumPy's finfo; PyTorch's has the same fields). None: the default dtype."""
    d = get_default_dtype() if type is None else backend.dtype(type)
    if not backend.is_floating(d):
        raise TypeError(f"finfo: needs a floating dtype (float16, float32, float64), got {d}; "
                        f"for integers use mg.iinfo")
    return _np.finfo(d)


def iinfo(type):  # noqa: A002
    """An integer dtype's limits: .min, .max, .bits (NumPy's iinfo)."""
    d = backend.dtype(type)
    if d.kind not in "iu":
        raise TypeError(f"iinfo: needs an integer dtype (int8 ... int64, uint8), got {d}; for "
                        f"floating dtypes use mg.finfo")
    return _np.iinfo(d)


def get_default_dtype():
    """The dtype Python floats and new floating tensors get: float32 unless set."""
    return backend.DEFAULT_FLOAT


def set_default_dtype(d):
    """Make `d` (float16, float32 or float64) the default floating dtype, as
    torch.set_default_dtype: mg.tensor([1.0]), mg.zeros(2), mg.arange(0.5, 2), a float
    beside an integer tensor, and the weights of layers built afterwards take it."""
    d = backend.dtype(d)
    if d is None or not backend.is_floating(d):
        raise TypeError(f"set_default_dtype: only floating dtypes (float16, float32, float64) "
                        f"can be the default, got {d}")
    backend.DEFAULT_FLOAT = d


def promote_types(type1, type2):
    """The dtype an op on tensors of these two dtypes computes in, by PyTorch's rule: a
    floating dtype wins over any integer or bool one (int64 with float16 is float16,
    where NumPy says float64); otherwise the wider, as NumPy (uint8 with int8 is int16)."""
    a, b = backend.dtype(type1), backend.dtype(type2)
    if backend.is_floating(a) != backend.is_floating(b):
        return a if backend.is_floating(a) else b
    return _np.promote_types(a, b)


def is_floating_point(input):  # noqa: A002
    """Whether the tensor's dtype is floating (float16, float32, float64)."""
    return backend.is_floating(input.dtype)
