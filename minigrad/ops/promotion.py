"""How operands of different kinds meet, as PyTorch: a Python number is weak (it takes
the tensor's dtype), a float beside an integer tensor makes the result float, a 0-d tensor
of the same kind counts as a number; and a float16 tensor beside a number float16 cannot
hold computes in float32. The binary elementwise ops (elementwise.py) and the matmul family
share these rules; cat and stack join tensors in their widest float (common_float)."""
import math

from minigrad import backend
from minigrad.tensor import Tensor


def lift(x, like, op=None):
    """A Python or NumPy scalar, list or array as a constant Tensor beside `like`. A scalar is
    weak, as in PyTorch: it takes `like`'s dtype (float32 stays float32, np.float64(2) too),
    except a float next to an integer/bool tensor (float32) and an int next to a bool (int64).
    Anything else (None, a string) is refused in words naming `op`."""
    if isinstance(x, Tensor):
        return x
    if backend.is_scalar(x):
        x = backend.python_scalar(x)
        dt = like.dtype
        if isinstance(x, float) and not backend.is_floating(dt):
            dt = backend.DEFAULT_FLOAT
        elif not isinstance(x, bool) and dt == backend.bool_:
            dt = backend.int64
        elif isinstance(x, int) and not isinstance(x, bool) and dt.kind in "iu":
            lo, hi = backend.value_range(dt)
            if not lo <= x <= hi:   # wrapped into the dtype, as PyTorch (NumPy refuses with
                # a bare OverflowError): uint8 - 1 is + 255; but no 64-bit integer holds it
                if not -2 ** 63 <= x < 2 ** 64:
                    raise OverflowError(f"{x} is too big for any 64-bit integer; give it as "
                                        f"a float if it is meant as one")
                x = (x - lo) % (hi - lo + 1) + lo
        be = like.backend
        # on a GPU a fill kernel, not a host-to-device copy of one number (which may wait)
        try:
            value = be.xp.asarray(x, dtype=dt) if be.host else be.xp.full((), x, dtype=dt)
        except OverflowError:       # bool + 2**63 (computed in int64), float32 + 10**400
            raise OverflowError(f"the number {x} cannot be converted to {dt}, the dtype "
                                f"the op computes in beside a {like.dtype} tensor, without "
                                f"overflow (as PyTorch refuses it)") from None
        return Tensor._make(value, like.device)
    try:
        return Tensor(x, device=like.device)
    except TypeError as e:                     # (its words name no op: `x < None`, x + "a")
        raise TypeError(f"{op}: {e}" if op else str(e)) from None


def _pair(a, b, op=None):
    """Both operands as Tensors. A float beside an integer/bool operand casts that operand to
    the float's dtype (as PyTorch), where NumPy would compute int64 + float32 in float64."""
    if not isinstance(a, Tensor):
        a = lift(a, b, op)
    elif not isinstance(b, Tensor):
        b = lift(b, a, op)
    da, db = a.dtype, b.dtype
    if da == db:                                         # the common case
        return a, b
    if (da.kind == "f") != (db.kind == "f"):
        if da.kind == "f":
            b = b.to(dtype=da)
        else:
            a = a.to(dtype=db)
    elif (a.ndim == 0) != (b.ndim == 0) and da.kind == db.kind:
        # a 0-d tensor of the same kind counts as a scalar (as PyTorch): float32 times a
        # 0-d float64 stays float32
        if a.ndim == 0:
            a = a.to(dtype=db)
        else:
            b = b.to(dtype=da)
    return a, b


def half_meets_big(a, b):
    """Whether a float16 tensor meets a number float16 cannot hold (beyond ±65504, or so
    small it would round to 0): cast to float16 first, as NumPy does, x * 65536 would be
    inf even where the product fits (a small loss scaled for float16 training). Only a
    tensor-and-number pair pays for this check."""
    if isinstance(a, Tensor):
        if isinstance(b, Tensor) or a.dtype is not backend.float16:   # (`is`: NumPy's
            return False                                             # dtypes are singletons)
        v = b
    elif not isinstance(b, Tensor) or b.dtype is not backend.float16:
        return False
    else:
        v = a
    if not backend.is_scalar(v) or isinstance(v, bool):
        return False
    try:
        v = math.fabs(float(v))
    except OverflowError:          # an int beyond any float: lift says so
        return False
    return v != math.inf and (v > 65504 or 0 < v < 2 ** -24)


def in_float32(op, a, b):
    """op(a, b) with the float16 tensor taken to float32, rounded to float16 once at the
    end: PyTorch's float16 ops compute so (a product that fits float16 is kept)."""
    up = [x.to(dtype=backend.float32) if isinstance(x, Tensor) else x for x in (a, b)]
    return op(*up).to(dtype=backend.float16)


def common_float(tensors):
    """cat's and stack's tensors in one dtype where floats are among them: as PyTorch, the
    widest float (NumPy would make int64 + float32 float64)."""
    floats = [t.dtype for t in tensors if t.dtype.kind == "f"]
    if floats and any(t.dtype != floats[0] for t in tensors):
        wide = max(floats, key=lambda dt: dt.itemsize)
        tensors = [t if t.dtype == wide else t.to(dtype=wide) for t in tensors]
    return tensors
