"""More of torch's tensor factories: logspace, the signal windows (hann, hamming, blackman,
bartlett, kaiser), tril_indices/triu_indices, scalar_tensor, asarray, frombuffer and
randint_like. The windows are computed on the host in float64 (a few dozen values) and
cast once, so every device gives the same numbers."""
import math

from minigrad import backend
from minigrad.args import is_device_array, number_arg
from minigrad.creation import _count, as_tensor, from_numpy, randint, tensor
from minigrad.tensor import Tensor

_host = backend.get("cpu").xp


def _real(op, name, value):
    """A number argument (a 0-d tensor's value too), not a bool (PyTorch refuses those)."""
    value = number_arg(op, name, value)
    if isinstance(value, bool):
        raise TypeError(f"{op}: {name} must be a number, got {value!r}")
    return float(value)


def _made(values, dtype, device, requires_grad):
    """A host array as a tensor of dtype on device (None: the default device)."""
    device = backend.default_device(device)
    t = Tensor._make(backend.get(device).from_numpy(_host.ascontiguousarray(
        values.astype(dtype))), device)
    return t.requires_grad_(True) if requires_grad else t


def logspace(start, end, steps, base=10.0, *, dtype=None, device=None, requires_grad=False):
    """base ** (steps values evenly spaced from start to end), as torch.logspace, bit for
    bit (float32 unless dtype says otherwise). PyTorch's rule: the ends cast to the dtype
    (an integer dtype truncates them: logspace(0.5, 2.5, 5, 3, dtype=int64) is
    3 ** [0, 0.5, 1, 1.5, 2]), their difference taken there, then the step, the exponents
    (the first half up from start, the second down from end) and the powers in float64,
    cast once; steps=1 gives base ** start, start not cast."""
    base = _real("logspace", "base", base)
    dtype = backend.dtype(dtype) or backend.DEFAULT_FLOAT
    start, end = (_real("logspace", k, v) for k, v in (("start", start), ("end", end)))
    steps = _count("logspace", "steps", steps)
    if dtype == backend.bool_:
        raise TypeError("logspace: needs a numeric dtype (float16/32/64, int32/64), got bool")
    f64 = backend.float64
    if steps == 1:
        exponents = _host.full(1, start, dtype=f64)
    else:
        from minigrad.linspace_rule import checked_ends      # ends that do not fit: refused
        checked_ends("logspace", start, end, steps, dtype)
        lo, hi = (_cast(v, dtype) for v in (start, end))
        step = f64.type(hi - lo) / f64.type(steps - 1)
        i = _host.arange(steps)
        exponents = _host.where(i < steps // 2, f64.type(lo) + step * i,
                                f64.type(hi) - step * (steps - 1 - i))
    return _made(_cast(_libm_pow(base, exponents), dtype), dtype, device, requires_grad)


def _libm_pow(base, exponents):
    """base ** exponents (float64) through the C library's pow, one value at a time, as
    PyTorch's logspace: NumPy's vectorised pow (SIMD on AVX-512 machines) differs from it in
    the last bit for ~5% of values. Where pow fails (overflow, a negative base's fraction)
    NumPy's inf or NaN stays."""
    with _host.errstate(over="ignore", invalid="ignore"):
        out = backend.float64.type(base) ** exponents
    for k, e in enumerate(exponents.tolist()):
        try:
            out[k] = math.pow(base, e)
        except (OverflowError, ValueError):
            pass
    return out


def _cast(values, dtype):
    """values (float64) in dtype as PyTorch casts a double: to half through float32."""
    if dtype == backend.float16:
        values = _host.asarray(values, dtype=backend.float32)
    return _host.asarray(values).astype(dtype)[()]


def _window(op, window_length, periodic, dtype, device, requires_grad, shape):
    """shape(n, N): the window's value at n = 0..N-1 of a symmetric window of N points; a
    periodic window is the first `window_length` of one a point longer (for spectral
    analysis), as PyTorch's."""
    n = _count(op, "window_length", window_length)
    dtype = backend.dtype(dtype) or backend.DEFAULT_FLOAT
    if not backend.is_floating(dtype):
        raise TypeError(f"{op}: needs a floating dtype (float16/32/64), got {dtype}")
    if not isinstance(periodic, bool):
        raise TypeError(f"{op}: periodic must be a bool, got {periodic!r}")
    if n <= 1:
        values = _host.ones(n)
    else:
        size = n + 1 if periodic else n
        values = shape(_host.arange(n, dtype=backend.float64), size)
    return _made(values, dtype, device, requires_grad)


def hann_window(window_length, periodic=True, *, dtype=None, device=None,
                requires_grad=False):
    """½ - ½cos(2πn/(N-1)), as torch.hann_window."""
    return _window("hann_window", window_length, periodic, dtype, device, requires_grad,
                   lambda i, N: 0.5 - 0.5 * _host.cos(2 * math.pi * i / (N - 1)))


def hamming_window(window_length, periodic=True, alpha=0.54, beta=0.46, *, dtype=None,
                   device=None, requires_grad=False):
    """alpha - beta·cos(2πn/(N-1)), as torch.hamming_window."""
    alpha, beta = (_real("hamming_window", k, v) for k, v in (("alpha", alpha), ("beta", beta)))
    return _window("hamming_window", window_length, periodic, dtype, device, requires_grad,
                   lambda i, N: alpha - beta * _host.cos(2 * math.pi * i / (N - 1)))


def blackman_window(window_length, periodic=True, *, dtype=None, device=None,
                    requires_grad=False):
    """0.42 - ½cos(2πn/(N-1)) + 0.08cos(4πn/(N-1)), as torch.blackman_window."""
    return _window("blackman_window", window_length, periodic, dtype, device, requires_grad,
                   lambda i, N: 0.42 - 0.5 * _host.cos(2 * math.pi * i / (N - 1))
                   + 0.08 * _host.cos(4 * math.pi * i / (N - 1)))


def bartlett_window(window_length, periodic=True, *, dtype=None, device=None,
                    requires_grad=False):
    """The triangle 1 - |2n/(N-1) - 1|, as torch.bartlett_window."""
    return _window("bartlett_window", window_length, periodic, dtype, device, requires_grad,
                   lambda i, N: 1 - _host.abs(2 * i / (N - 1) - 1))


def kaiser_window(window_length, periodic=True, beta=12.0, *, dtype=None, device=None,
                  requires_grad=False):
    """I₀(beta·√(1 - (2n/(N-1) - 1)²)) / I₀(beta), as torch.kaiser_window (NumPy's i0)."""
    beta = _real("kaiser_window", "beta", beta)
    return _window("kaiser_window", window_length, periodic, dtype, device, requires_grad,
                   lambda i, N: _host.i0(beta * _host.sqrt(_host.maximum(
                       0.0, 1 - (2 * i / (N - 1) - 1) ** 2))) / _host.i0(beta))


def _triangle(op, pick, row, col, offset, dtype, device):
    row, col = _count(op, "row", row), _count(op, "col", col)
    if not backend.is_integer(offset) or isinstance(offset, bool):
        raise TypeError(f"{op}: offset must be an int, got {offset!r}")
    dtype = backend.dtype(dtype) or backend.int64
    if dtype.kind not in "iu" or dtype == backend.bool_:
        raise TypeError(f"{op}: dtype must be an integer dtype (int64 by default), got {dtype}")
    rows, cols = pick(row, int(offset), col)
    return _made(_host.stack([rows, cols]).reshape(2, -1), dtype, device, False)


def tril_indices(row, col, offset=0, *, dtype=None, device=None):
    """The (row, column) coordinates of the lower triangle (on and below the diagonal
    `offset`) of a row × col matrix, row by row, as a (2, N) tensor, as torch.tril_indices."""
    return _triangle("tril_indices", _host.tril_indices, row, col, offset, dtype, device)


def triu_indices(row, col, offset=0, *, dtype=None, device=None):
    """The coordinates of the upper triangle (on and above the diagonal `offset`), as
    torch.triu_indices."""
    return _triangle("triu_indices", _host.triu_indices, row, col, offset, dtype, device)


def scalar_tensor(s, *, dtype=None, device=None, requires_grad=False):
    """A 0-d tensor of the number s, float32 (the default dtype) unless dtype says
    otherwise, whatever the kind of s, as torch.scalar_tensor."""
    s = number_arg("scalar_tensor", "s", s)
    return tensor(s, dtype=backend.dtype(dtype) or backend.DEFAULT_FLOAT, device=device,
                  requires_grad=requires_grad)


def asarray(obj, *, dtype=None, device=None, copy=None, requires_grad=False):
    """obj as a tensor, sharing memory where it can, as torch.asarray: a tensor of that dtype
    and device comes back itself, a NumPy (CuPy) array on its own device is shared; copy=True
    always copies, copy=False refuses where a copy is needed. Lists and numbers are always
    new (and so refuse copy=False). Without device=, a default device that was set is the
    target (as torch.asarray)."""
    dtype = backend.dtype(dtype)
    device = backend.chosen_default_device() if device is None else backend.device_name(device)
    if isinstance(obj, Tensor):
        # (not `dtype in (None, ...)`: NumPy's float64 == None is True, dtype(None) being it)
        same = (dtype is None or dtype == obj.dtype) and device in (None, obj.device)
        if copy is False and not same:
            raise ValueError(f"asarray: copy=False, but converting a {obj.dtype} tensor on "
                             f"{obj.device} to {dtype or obj.dtype} on {device or obj.device} "
                             f"needs a copy")
        out = obj.to(device=device or obj.device, dtype=dtype or obj.dtype)
        if copy and out is obj:
            out = obj.clone()
    elif is_device_array(obj):                            # a NumPy (or CuPy) array
        where = backend.device_of_array(obj)
        shared = (dtype is None or dtype == obj.dtype) and device in (None, where)
        if copy is False and not shared:
            raise ValueError(f"asarray: copy=False, but an array of {obj.dtype} on {where} "
                             f"cannot be shared as {dtype} on {device}")
        out = as_tensor(obj) if shared and not copy else tensor(obj, dtype=dtype,
                                                                device=device)
    else:
        if copy is False:
            raise ValueError(f"asarray: copy=False, but a {type(obj).__name__} has no memory "
                             f"a tensor can share; it is always copied")
        out = tensor(obj, dtype=dtype, device=device)
    return out.requires_grad_(True) if requires_grad else out


def frombuffer(buffer, *, dtype, count=-1, offset=0, requires_grad=False):
    """A 1-D CPU tensor over the memory of an object with the buffer protocol (bytes,
    bytearray, array.array, mmap), as torch.frombuffer: `count` elements (-1: all) of dtype
    from byte `offset`, shared with the buffer (a read-only one gives a tensor that cannot be
    written)."""
    op = "frombuffer"
    dtype = backend.dtype(dtype)
    if dtype is None:
        raise TypeError(f"{op}: give dtype=")
    try:
        size = memoryview(buffer).nbytes
    except TypeError:
        raise TypeError(f"{op}: expected an object with the buffer protocol (bytes, "
                        f"bytearray, array.array), got {type(buffer).__name__}") from None
    count, offset = int(count), int(offset)
    if size == 0 or count == 0:
        raise ValueError(f"{op}: the buffer's length ({size} bytes) and count ({count}) must "
                         f"not be 0")
    if not 0 <= offset < size:
        raise ValueError(f"{op}: offset ({offset} bytes) must be in [0, {size - 1}], the "
                         f"buffer's length minus 1")
    if count < 0 and (size - offset) % dtype.itemsize:
        raise ValueError(f"{op}: the buffer's length after offset ({size - offset} bytes) "
                         f"must be a multiple of the element size ({dtype.itemsize})")
    if count > 0 and count * dtype.itemsize > size - offset:
        raise ValueError(f"{op}: {count} elements of {dtype.itemsize} bytes need more than the "
                         f"{size - offset} bytes after offset")
    t = from_numpy(_host.frombuffer(buffer, dtype=dtype, count=count, offset=offset))
    return t.requires_grad_(True) if requires_grad else t


def randint_like(input, low=0, high=None, *, dtype=None, device=None, requires_grad=False,
                 generator=None):
    """Integers uniform in [low, high) in input's shape (and dtype and device unless given),
    as torch.randint_like: randint_like(x, high) or randint_like(x, low, high)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"randint_like: input must be a Tensor, got {type(input).__name__}")
    if high is None:
        low, high = 0, low
    t = randint(low, high, input.shape, dtype=dtype or input.dtype,
                device=device or input.device, generator=generator)
    return t.requires_grad_(True) if requires_grad else t
