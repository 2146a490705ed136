"""Tensor factories: tensor, zeros, ones, full, arange, randn, rand, randint, *_like."""
import operator

from minigrad import backend
from minigrad.tensor import Tensor


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor from a Python scalar or list (floats -> float32, ints -> int64), a NumPy
    or CuPy array (keeps its dtype) or another tensor (copied out of its graph)."""
    source = data.data if isinstance(data, Tensor) else data
    t = Tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
    if t.data is source:  # a copy, as torch.tensor: never the caller's array or tensor's data
        t.data = t.data.copy()
    return t


def _shape(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        shape = tuple(operator.index(s) for s in shape)  # ints (or NumPy ints), not 3.5
    except TypeError:
        raise TypeError(f"sizes must be integers, got shape {tuple(shape)}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    return shape


def _new(fill, shape, dtype, device, requires_grad):
    device = backend.device_name(device)
    dtype = backend.dtype(dtype) or backend.DEFAULT_FLOAT
    data = fill(backend.get(device), _shape(shape), dtype)
    t = Tensor._make(data, device)
    return t.requires_grad_(True) if requires_grad else t


def zeros(*shape, dtype=None, device=None, requires_grad=False):
    return _new(lambda b, s, d: b.xp.zeros(s, dtype=d), shape, dtype, device, requires_grad)


def ones(*shape, dtype=None, device=None, requires_grad=False):
    return _new(lambda b, s, d: b.xp.ones(s, dtype=d), shape, dtype, device, requires_grad)


def full(shape, fill_value, dtype=None, device=None, requires_grad=False):
    """A tensor of `fill_value`; without dtype, the value's kind decides (as PyTorch): a
    bool gives bool, an int int64, a float float32."""
    if dtype is None and isinstance(fill_value, (bool, int)):
        dtype = backend.bool_ if isinstance(fill_value, bool) else backend.int64
    return _new(lambda b, s, d: b.xp.full(s, fill_value, dtype=d), (shape,), dtype, device,
                requires_grad)


def randn(*shape, dtype=None, device=None, requires_grad=False):
    """Standard normal samples from the device's generator (seeded by mg.manual_seed)."""
    def fill(b, s, d):
        if not backend.is_floating(d):
            raise TypeError(f"randn: needs a floating dtype, got {d}")
        return b.rng.standard_normal(s, dtype=d if d != backend.float16 else backend.float32
                                     ).astype(d, copy=False)
    return _new(fill, shape, dtype, device, requires_grad)


def rand(*shape, dtype=None, device=None, requires_grad=False):
    """Uniform samples in [0, 1)."""
    def fill(b, s, d):
        if not backend.is_floating(d):
            raise TypeError(f"rand: needs a floating dtype, got {d}")
        return b.rng.random(s, dtype=d if d != backend.float16 else backend.float32
                            ).astype(d, copy=False)
    return _new(fill, shape, dtype, device, requires_grad)


def randint(low, high=None, size=None, dtype=None, device=None):
    """Integers uniform in [low, high): randint(low, high, size) or randint(high, size), as
    PyTorch."""
    if size is None:
        if high is None:
            raise TypeError("randint: give randint(high, size) or randint(low, high, size)")
        low, high, size = 0, low, high
    dtype = backend.dtype(dtype) or backend.int64
    return _new(lambda b, s, d: b.rng.integers(low, high, size=s).astype(d), (size,), dtype,
                device, False)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """Like range(): integers give int64, any float gives float32."""
    if end is None:
        start, end = 0, start
    if step == 0:
        raise ValueError(f"arange: step must be nonzero, got {step} (start={start}, "
                         f"end={end})")
    if dtype is None:
        ints = all(isinstance(v, int) for v in (start, end, step))
        dtype = backend.int64 if ints else backend.DEFAULT_FLOAT
    device = backend.device_name(device)
    t = Tensor._make(backend.get(device).xp.arange(start, end, step, dtype=backend.dtype(dtype)),
                     device)
    return t.requires_grad_(True) if requires_grad else t


def zeros_like(x, dtype=None, device=None, requires_grad=False):
    return zeros(x.shape, dtype=dtype or x.dtype, device=device or x.device,
                 requires_grad=requires_grad)


def ones_like(x, dtype=None, device=None, requires_grad=False):
    return ones(x.shape, dtype=dtype or x.dtype, device=device or x.device,
                requires_grad=requires_grad)


def randn_like(x, dtype=None, device=None, requires_grad=False):
    return randn(x.shape, dtype=dtype or x.dtype, device=device or x.device,
                 requires_grad=requires_grad)
