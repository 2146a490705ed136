"""How Tensor's methods read their arguments: PyTorch's spellings and NumPy's (axis=,
keepdims=), shapes given as f(2, 3) or f((2, 3)), .to()'s device-or-dtype, lists of tensors."""
import functools
import operator
import warnings

from minigrad import backend


def split_device_dtype(device, dtype):
    """(device, dtype) from .to()'s arguments, where a dtype may come first: t.to("float64"),
    t.to(mg.float64)."""
    if isinstance(device, str) and (device in backend._DTYPE_NAMES or device == "bfloat16"):
        return None, device                    # (bfloat16: refused as a dtype, by name)
    from minigrad.tensor import Tensor               # tensor.py imports this module
    if isinstance(device, Tensor):                   # t.to(other): other's device and dtype
        return device.device, device.dtype
    if device is not None and not isinstance(device, str):
        try:
            return None, backend.dtype(device)
        except TypeError:
            # a dtype minigrad lacks (np.complex64, torch.uint16): that error, not the one of
            # an unknown device named 'torch.uint16'
            if isinstance(device, (type, backend.DTYPE_CLASS)) or \
                    type(device).__module__ == "torch" and type(device).__name__ == "dtype":
                raise
            return str(device), dtype
    return device, dtype


def stack_values(items):
    """[t0, t1, ...] (tensors of one element or of one shape, or numbers) as one host array
    of their values, in their dtype: mg.tensor([mg.tensor(1.), mg.tensor(2.)]) as
    torch.tensor."""
    from minigrad.tensor import Tensor               # tensor.py imports this module
    # (plain_array: a masked array's mask would be lost, as for mg.tensor(masked) itself)
    values = [x.numpy() if isinstance(x, Tensor) else backend.plain_array(x) for x in items]
    # PyTorch takes each tensor in the list as a number (t.item()): one of a single element
    # is one, whatever its shape (torch.tensor([t.view(1), ...]) is 1-D, not n x 1); those
    # of more elements PyTorch refuses, and minigrad stacks
    if all(v.size == 1 for v, x in zip(values, items) if isinstance(x, Tensor)):
        values = [v.reshape(()) if isinstance(x, Tensor) else v for v, x in zip(values, items)]
    shapes = {tuple(getattr(v, "shape", ())) for v in values}
    if len(shapes) > 1:
        raise ValueError(f"tensor: a list of tensors is stacked, so they must all have one "
                         f"shape; got shapes {sorted(shapes)}")
    # PyTorch's dtype: each tensor's own, a Python number's default (float32, int64), then
    # a float beats an integer beats a bool, the widest within a kind (NumPy would widen
    # float32 with an integer, or with a Python float, to float64)
    kinds = [v.dtype if hasattr(v, "dtype") else
             backend.bool_ if isinstance(v, bool) else
             backend.int64 if isinstance(v, int) else backend.DEFAULT_FLOAT for v in values]
    rank = {"b": 0, "u": 1, "i": 1, "f": 2}
    top = max(rank.get(k.kind, 3) for k in kinds)
    # within the kind, the dtype that holds them all (NumPy's promote_types: int8 with uint8
    # is int16, as PyTorch; the larger itemsize alone would wrap the uint8's 200 to -56)
    widest = functools.reduce(backend.promote_float,
                              [k for k in kinds if rank.get(k.kind, 3) == top])
    if rank.get(widest.kind, 3) != top:               # uint64 with a signed integer
        raise TypeError(f"tensor: no integer dtype holds both uint64 and signed integer "
                        f"values (dtypes {sorted({str(k) for k in kinds})}; PyTorch refuses "
                        f"to mix them too); convert them to one dtype first")
    try:
        return backend.to_host(values).astype(widest, copy=False)
    except OverflowError:                          # a Python int beyond int64
        raise OverflowError("tensor: an integer beyond int64's range (-2**63 .. 2**63 - 1) "
                            "in the list; give it as a float if it is meant as one") from None


def host_values(data, dtype=None):
    """mg.tensor's data (a number, nested lists, a NumPy array) as a host array of numbers,
    or an error that says what could not become one (a huge integer is one only as a float:
    with a floating `dtype`)."""
    try:
        arr = backend.to_host(data)
    except ValueError as e:                              # NumPy's ragged-nesting message
        raise ValueError(f"tensor: the nested lists must be rectangular (every row of one "
                         f"length, as a tensor's shape needs): {e}") from None
    # only integers beyond int64 make NumPy choose uint64 or objects for Python data (so
    # the values are scanned only then)
    if arr.dtype.kind in "uO" and not hasattr(data, "dtype") and _has_big_int(data):
        if dtype is not None and dtype.kind == "f":
            return arr.astype(dtype)
        raise OverflowError("tensor: an integer beyond int64's range (-2**63 .. 2**63 - 1, "
                            "PyTorch's default integer); give it as a float if it is meant "
                            "as one")
    return check_numbers(arr, data)


def check_numbers(arr, data):
    """arr as a plain array (backend.plain_array), if it holds numbers or bools; else an
    error naming what it holds."""
    if arr.dtype.kind in "OUSVMm":          # objects, strings, records, dates
        raise TypeError(f"tensor: cannot make a tensor of {arr.dtype} values (from "
                        f"{type(data).__name__}); a tensor holds numbers or bools")
    if arr.dtype.kind == "c":               # else ops would drop the imaginary part unseen
        raise TypeError(f"tensor: cannot make a tensor of {arr.dtype} values: minigrad's "
                        f"tensors are real (bool, integer or floating-point); keep the real "
                        f"and imaginary parts as two real tensors (e.g. x.real, x.imag of a "
                        f"NumPy array)")
    if arr.dtype.kind == "f" and arr.dtype.itemsize > 8:   # np.longdouble: no op keeps it
        raise TypeError(f"tensor: cannot make a tensor of {arr.dtype} values (NumPy's long "
                        f"double); the floating dtypes are float16, float32 and float64: "
                        f"convert first, e.g. a.astype(np.float64)")
    return backend.plain_array(arr)


def check_values_fit(arr, dtype):
    """Python numbers going into an integer dtype must fit it, as PyTorch checks
    (torch.tensor([2**40], dtype=torch.int32) is an error): NumPy's astype would wrap them,
    or make ±inf and NaN -2⁶³. (A float's fraction is dropped, as PyTorch.)"""
    if dtype is None or dtype.kind not in "iu" or arr.dtype.kind not in "iuf" or not arr.size:
        return
    low, high = _fit_range(dtype)
    if arr.dtype.kind == "f" and high >= 2 ** 53:  # float(2⁶³ - 1) rounds up to 2⁶³
        fits = bool(((arr >= low) & (arr < float(high))).all())     # NaN fails
    else:
        fits = bool(((arr >= low) & (arr <= high)).all())
    if not fits:
        raise ValueError(f"tensor: a value cannot be converted to {dtype} without overflow "
                         f"(it holds {backend.value_range(dtype)[0]} .. {high}); pass values "
                         f"the dtype can hold, or a wider dtype")


def _has_big_int(data):
    if isinstance(data, (list, tuple)):
        return any(_has_big_int(x) for x in data)
    return isinstance(data, int) and not -2 ** 63 <= data < 2 ** 63


def is_device_array(a):
    try:
        backend.device_of_array(a)
        return True
    except TypeError:
        return False


def data_value(t, array, given):
    """The array `t.data = given` stores (`array`: given's own array if it is a Tensor):
    one of t's device, floating if t requires grad, as PyTorch; anything else would break t
    far from here, so it is refused."""
    where = backend.device_of_array(array) if is_device_array(array) else None
    if where != t.device or type(array) is not t.backend.xp.ndarray:  # (no masked arrays)
        got = f"an array on {where}" if where not in (None, t.device) else \
            f"a {type(given).__name__}"
        raise TypeError(f"Tensor.data: assign a Tensor or a {t.device} array (got {got}); "
                        f"for a Tensor on another device, .to('{t.device}') it first")
    if t.requires_grad and not backend.is_floating(array.dtype):
        raise TypeError(f"Tensor._data: the tensor requires grad, so its data must be "
                        f"floating-point, got {array.dtype}; convert with .float() first")
    return array


def cast_to(x, dtype):
    """x in `dtype` (differentiably) before an op: the dtype= of softmax and the
    reductions, which, as PyTorch's, convert the input first so the op runs in that dtype
    (float16 logits softmaxed in float32, int sums in float64). None: x as it is."""
    return x if dtype is None else x.to(dtype=dtype)


def number_arg(op, name, value):
    """A number argument (an int or a float, NumPy's too, or a one-element tensor's value),
    or a TypeError naming it: None or "0.1" would fail later in a comparison, or deep inside
    NumPy, with words that do not say which argument was wrong."""
    if callable(getattr(value, "numel", None)) and value.numel() == 1:
        value = value.item()
    if not backend.is_scalar(value):
        raise TypeError(f"{op}: {name} must be a number, got {type(value).__name__} "
                        f"{value!r}")
    return value


def int_arg(op, name, value, low=None):
    """An integer argument (a NumPy integer too, never a bool or a float, which would be
    truncated without a word), at least `low` if given."""
    try:
        if isinstance(value, bool) or getattr(value, "dtype", None) == backend.bool_:
            raise TypeError
        value = operator.index(value)          # ints, NumPy ints, 0-d integer tensors
    except TypeError:
        raise TypeError(f"{op}: {name} must be an int, got {type(value).__name__} "
                        f"{value!r}") from None
    if low is not None and value < low:
        raise ValueError(f"{op}: {name} must be >= {low}, got {value}")
    return value


def not_a_tensor(op, name, value):
    """The TypeError for an argument that should be a Tensor (a list, a NumPy array, None):
    without it the op fails later on a missing .ndim or .dtype, in words naming neither
    the op nor the argument. Callers test isinstance themselves (hot paths: one check)."""
    return TypeError(f"{op}: {name} must be a Tensor, got {type(value).__name__}; make one "
                     f"with mg.tensor(...)")


def tensor_args(op, **named):
    """Each named argument a Tensor, or not_a_tensor's error."""
    from minigrad.tensor import Tensor               # tensor.py imports this module
    for name, value in named.items():
        if not isinstance(value, Tensor):
            raise not_a_tensor(op, name, value)


def optional_tensor_args(op, **named):
    """tensor_args for optional arguments: None (left out) allowed too."""
    tensor_args(op, **{name: value for name, value in named.items() if value is not None})


def same_float_params(op, input, **params):
    """A normalisation's parameters and statistics (weight, bias, running_mean ...) of the
    input's dtype where either is float64, as PyTorch requires ("mixed dtype"): NumPy
    would otherwise promote a float64 input's float32 weight and return float64, or
    quietly compute with float64 statistics. float16 with float32 stays allowed (PyTorch's
    mixed precision, and autocast's)."""
    dt = input.dtype
    for name, p in params.items():
        if p is not None and p.dtype != dt and \
                (p.dtype == backend.float64 or dt == backend.float64):
            raise TypeError(f"{op}: {name} has dtype {p.dtype} but the input {dt}; convert "
                            f"one (input.to(dtype), or module.to(dtype=...)), as PyTorch "
                            f"requires")


def dim_arg(dim, axis):
    """dim, or NumPy's spelling axis."""
    return axis if dim is None else dim


def keepdim_arg(keepdim, keepdims):
    """keepdim, or NumPy's spelling keepdims."""
    return keepdim if keepdims is None else keepdims


def is_0d_integer(n):
    """A 0-d integer tensor or array: PyTorch takes one wherever an int goes (a size, a dim:
    x.view(n) with n = t.sum()); int(n) is its value. Never a bool."""
    return getattr(n, "ndim", None) == 0 and \
        getattr(getattr(n, "dtype", None), "kind", None) in ("i", "u")


def as_int(n):
    """n as an int where it is a 0-d integer tensor or array (k = t.argmax() as topk's k,
    split's size, roll's shift), else n unchanged: the caller's own check then names what
    is wrong with it (a bool or float tensor stays refused)."""
    return int(n) if is_0d_integer(n) else n


def shape_args(shape, op):
    """Accept both f(2, 3) and f((2, 3)); each size (or dim) an integer (or a 0-d integer
    tensor), as PyTorch: 2.5 is an error, not a silent 2."""
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    for s in shape:
        if not backend.is_integer(s) and not is_0d_integer(s):
            raise TypeError(f"{op}: sizes and dims must be integers, got {s!r} in "
                            f"{tuple(shape)}")
    return tuple(int(s) for s in shape)


def check_broadcast(op, *shapes):
    """The broadcast shape of `shapes`, or a ValueError naming the op (for the functions
    that are not Functions, whose errors Function.apply would otherwise name)."""
    try:
        return backend.broadcast_shapes(*shapes)
    except ValueError:
        raise ValueError(f"{op}: shapes {' and '.join(str(tuple(s)) for s in shapes)} do not "
                         f"broadcast (each dim, counted from the last, must be equal or "
                         f"1)") from None


def warn_if_broadcast(op, input, target):
    """A loss's target of another shape than its input: PyTorch's warning (the loss then
    broadcasts, (N,) against (N, 1) giving (N, N)), or an error naming the loss where the
    shapes do not broadcast at all (else the subtraction's words would be the message)."""
    shape = tuple(target.shape if hasattr(target, "shape") else backend.to_host(target).shape)
    if shape != input.shape:
        check_broadcast(op, input.shape, shape)
        warnings.warn(f"{op}: using a target size {shape} that is different to the input "
                      f"size {input.shape}; this will likely lead to incorrect results due "
                      f"to broadcasting. Please ensure they have the same size.", stacklevel=3)


def check_fill_value(op, value, dtype):
    """A fill value the dtype can hold, as PyTorch checks: NaN, ±inf or 1e300 would become
    garbage in an integer tensor (NumPy writes -2⁶³) and inf in a float32 one."""
    refuse_complex(op, value)
    if not backend.is_scalar(value) or isinstance(backend.python_scalar(value), bool):
        return value
    if dtype.kind == "b":              # any number is a bool (NumPy refuses ints past int64)
        return bool(value)
    if dtype.kind not in "iuf":
        return value
    v = float(value) if not backend.is_integer(value) else int(value)
    low, high = _fit_range(dtype)
    if dtype.kind in "iu":
        ok = v == v and low <= v <= high                     # v == v: not NaN
    else:
        ok = v != v or abs(v) == float("inf") or abs(v) <= high
    if not ok:
        raise ValueError(f"{op}: value {value!r} cannot be converted to {dtype} without "
                         f"overflow; pass a value the dtype can hold")
    if dtype.kind == "u" and v < 0:                   # wrapped, as PyTorch: -1 is 255
        return v % (high + 1)
    return value


def one_value(op, value):
    """A fill value that is one number: a number, or a tensor or array of one element (0-d,
    as PyTorch; a tensor keeps its place in the graph), else a clear error (a list, None, a
    tensor of several elements would reach NumPy's broadcasting words)."""
    if backend.is_scalar(value) or getattr(value, "size", None) == 1 or \
            callable(getattr(value, "numel", None)) and value.numel() == 1:
        return value
    got = f"shape {tuple(value.shape)}" if hasattr(value, "shape") else type(value).__name__
    raise TypeError(f"{op}: value must be a number or a tensor of one element, got {got}; "
                    f"for a value per element, use where(mask, values, x)")


def refuse_complex(op, value):
    """A complex fill value is an error that says so (float() would drop the imaginary
    part)."""
    if isinstance(value, complex) or getattr(value, "dtype", None) is not None and \
            value.dtype.kind == "c":
        raise TypeError(f"{op}: value {value!r} is complex; minigrad's tensors are real, so "
                        f"pass a real number")


def _fit_range(dtype):
    """The values PyTorch lets into an integer dtype: its range, and for an unsigned one
    also -max..-1, which wrap (uint8 takes -1 as 255, refuses -256)."""
    low, high = backend.value_range(dtype)
    return (-high if dtype.kind == "u" else low), high


# PyTorch's legacy type names (torch.FloatTensor ...), spelled with minigrad's name
_TYPE_NAMES = {"float32": "FloatTensor", "float64": "DoubleTensor", "float16": "HalfTensor",
               "int64": "LongTensor", "int32": "IntTensor", "int16": "ShortTensor",
               "int8": "CharTensor", "uint8": "ByteTensor", "bool": "BoolTensor"}


def type_name(t):
    """t.type(): 'minigrad.FloatTensor' for float32 on the CPU, 'minigrad.cuda.FloatTensor'
    on a GPU (PyTorch's 'torch.FloatTensor', 'torch.cuda.FloatTensor')."""
    where = "" if t.device == "cpu" else f"{t.device.split(':')[0]}."
    return f"minigrad.{where}{_TYPE_NAMES.get(str(t.dtype), str(t.dtype))}"


def type_target(dtype):
    """(device or None, dtype) that t.type(dtype) converts to: a dtype, a dtype's name, or a
    type name as type() gives ('minigrad.DoubleTensor'; PyTorch's 'torch.DoubleTensor' too;
    with 'cuda.' in it, to the GPU), or a legacy type (mg.LongTensor: to its device)."""
    from minigrad.legacy_types import TensorType          # (it imports this module)
    if isinstance(dtype, TensorType):
        return dtype.device_type, dtype.dtype
    if isinstance(dtype, str) and dtype.split(".")[0] in ("minigrad", "torch"):
        parts = dtype.split(".")
        names = {v: k for k, v in _TYPE_NAMES.items()}
        if len(parts) not in (2, 3) or parts[-1] not in names or \
                (len(parts) == 3 and parts[1] != "cuda"):
            raise TypeError(f"type: unknown type name {dtype!r}; valid: "
                            f"'minigrad.<T>' or 'minigrad.cuda.<T>' with <T> one of "
                            f"{sorted(names)}")
        return ("cuda" if len(parts) == 3 else None), backend.dtype(names[parts[-1]])
    return None, backend.dtype(dtype)

def spread_args(op, dim, unbiased, correction):
    """(dim, correction) from var's and std's arguments in torch's overloads: a bool first
    is `unbiased` over every element (t.var(False)); `unbiased` and `correction` are two
    spellings of one setting (Bessel's n - 1 by default)."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None:
        if not isinstance(unbiased, bool):
            raise TypeError(f"{op}: unbiased (the second argument, as torch's) must be a "
                            f"bool, got {unbiased!r}; keepdim goes by name: "
                            f"t.{op}(dim, keepdim=True)")
        if correction is not None:
            raise TypeError(f"{op}: give unbiased or correction, not both")
        return dim, 1 if unbiased else 0
    return dim, 1 if correction is None else correction
