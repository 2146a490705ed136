"""What PyTorch answers about dtypes: finfo and iinfo (a dtype's limits; a mask filled with
finfo(x.dtype).min stays finite where -inf would make an all-masked row NaN), the default
floating dtype (what Python floats, mg.zeros and new layers' weights get), promote_types,
result_type and can_cast."""
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


def _kind(d):
    """0 for bool, 1 for the integers, 2 for the floats: PyTorch's categories."""
    return 0 if d == backend.bool_ else 2 if backend.is_floating(d) else 1


def can_cast(from_, to):
    """Whether PyTorch's casting rule allows from_ into to: within a category (bool,
    integers, floats) always, and up it (bool to int, int to float), never down."""
    return _kind(backend.dtype(from_)) <= _kind(backend.dtype(to))


def _either(a, b):
    return b if a is None else a if b is None else promote_types(a, b)


def _combine(higher, lower):
    """PyTorch's rule for two priority groups: the higher one's dtype wins unless the lower
    one is of a higher category (a float 0-d tensor or number beside an integer tensor)."""
    if higher is not None and backend.is_floating(higher):
        return higher
    if higher == backend.bool_ or (lower is not None and backend.is_floating(lower)):
        return _either(higher, lower)
    return lower if higher is None else higher


def result_type(tensor, other):
    """The dtype an elementwise op on these (tensors or numbers) gives, as
    torch.result_type: tensors with dims decide, then 0-d tensors, then numbers (an int
    is int64, a float the default dtype), each group overruled by a later one only where
    that is of a higher category (int64 tensor with 1.0: float32; uint8 with a 0-d int8:
    uint8)."""
    return result_type_of((tensor, other), "result_type")


def result_type_of(values, op):
    """result_type's rule over any number of tensors and numbers (as PyTorch's ops that
    take a list, such as block_diag, promote them)."""
    from minigrad.tensor import Tensor
    groups = [None, None, None]                          # dims, 0-d, numbers
    for v in values:
        if isinstance(v, Tensor):
            k, d = (0 if v.ndim else 1), v.dtype
        elif backend.is_scalar(v):
            v = backend.python_scalar(v)
            k = 2
            d = backend.bool_ if isinstance(v, bool) else backend.int64 if isinstance(
                v, int) else backend.DEFAULT_FLOAT
        else:
            raise TypeError(f"{op}: expected tensors or numbers, got {type(v).__name__}")
        groups[k] = _either(groups[k], d)
    return _combine(groups[0], _combine(groups[1], groups[2]))
