"""Tensor factories: tensor, as_tensor, from_numpy, zeros, ones, empty, full, eye, arange,
linspace, randn, rand, randint, randperm, *_like, and multinomial (sampling indices from
weights); is_tensor and numel."""
import math
import operator
import warnings

from minigrad import backend
from minigrad.args import check_fill_value, refuse_complex
from minigrad.memory_format import like_factory, new_factory
from minigrad.tensor import Tensor


def from_other_library(data):
    """Another library's tensor (PyTorch's: it has .detach() and .cpu()) as a host NumPy
    array of its dtype, without importing that library; anything else as it is."""
    if not isinstance(data, Tensor) and hasattr(data, "detach") and hasattr(data, "cpu"):
        try:
            return data.detach().cpu().numpy()
        except TypeError as e:                  # a dtype NumPy lacks: bfloat16, complex32
            raise TypeError(f"cannot copy a {type(data).__name__} of dtype "
                            f"{getattr(data, 'dtype', '?')} ({e}); convert it first, e.g. "
                            f"t.float()") from None
    return data


def tensor(data, dtype=None, device=None, requires_grad=False):
    """A new tensor from a Python scalar or list (floats -> float32, ints -> int64), a NumPy
    or CuPy array (keeps its dtype), a PyTorch tensor (the same) or another tensor (copied
    out of its graph). Without device=: on the default device if one was set (an array's or
    tensor's own device too, as torch.tensor), else on the data's own device (the CPU's
    for lists and numbers). A tensor as data warns, as torch.tensor: the copy is cut from the
    graph, which t.detach().clone() says plainly."""
    if isinstance(data, Tensor):
        warnings.warn("To copy construct from a tensor, it is recommended to use "
                      "sourceTensor.detach().clone() (or .requires_grad_(True) after it) "
                      "rather than tensor(sourceTensor)", UserWarning, stacklevel=2)
    data = from_other_library(data)
    source = data._data if isinstance(data, Tensor) else data
    device = backend.chosen_default_device() if device is None else device
    t = Tensor(data, dtype=dtype, device=device, requires_grad=requires_grad)
    if t._data is source:  # a copy, as torch.tensor: never the caller's array or tensor's data
        t._data, t._version_counter = t._data.copy(), [0]
    return t


def as_tensor(data, dtype=None, device=None):
    """data as a tensor, copying only when it must (as torch.as_tensor): a tensor already of
    that dtype and device is returned itself (else converted, differentiably, as .to()); an
    array on the target device of that dtype is shared, not copied (so a write to one is
    seen by the other), and so is a PyTorch CPU tensor's memory, as torch.as_tensor shares a
    NumPy array's; anything else (lists, scalars, other devices or dtypes) is a copy.
    Without device=, a default device that was set is the target (as torch.as_tensor)."""
    device = backend.chosen_default_device() if device is None else device
    if isinstance(data, Tensor):
        return data.to(device=device, dtype=dtype)
    return Tensor(from_other_library(data), dtype=dtype, device=device)


def from_numpy(ndarray):
    """A CPU tensor sharing the NumPy array's memory and keeping its dtype (as
    torch.from_numpy): a write to either is seen by the other. A read-only array gives a
    tensor that cannot be written (PyTorch warns and leaves writes undefined)."""
    if not isinstance(ndarray, backend.get("cpu").xp.ndarray):
        raise TypeError(f"from_numpy: expected a numpy.ndarray, got {type(ndarray).__name__}"
                        f"; use mg.tensor(data) (a copy) or mg.as_tensor(data) for others")
    if ndarray.dtype.kind not in "biuf":
        raise TypeError(f"from_numpy: cannot make a tensor of dtype {ndarray.dtype}; "
                        f"supported: bool, integer and floating-point arrays")
    return Tensor._make(backend.plain_array(ndarray, share=True), backend.device_name("cpu"))


def is_tensor(obj):
    """Whether obj is a minigrad Tensor (a Parameter is one)."""
    return isinstance(obj, Tensor)


def numel(input):
    """The number of elements of a tensor."""
    if not isinstance(input, Tensor):
        raise TypeError(f"numel: expected a Tensor, got {type(input).__name__}")
    return input.numel()


def _shape(shape):
    if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
        shape = tuple(shape[0])
    try:
        if any(isinstance(s, bool) for s in shape):      # True is an int to Python only
            raise TypeError
        shape = tuple(operator.index(s) for s in shape)  # ints (or NumPy ints), not 3.5
    except TypeError:
        raise TypeError(f"sizes must be integers, got shape {tuple(shape)}") from None
    if any(s < 0 for s in shape):
        raise ValueError(f"negative dimension in shape {shape}")
    return shape


def _new(fill, shape, dtype, device, requires_grad):
    device = backend.default_device(device)
    dtype = backend.dtype(dtype) or backend.DEFAULT_FLOAT
    try:
        data = fill(backend.get(device), _shape(shape), dtype)
    except MemoryError as e:        # CuPy's: as torch.cuda.OutOfMemoryError
        from minigrad.cuda_memory import raise_if_out_of_memory
        raise_if_out_of_memory(e)
        raise
    t = Tensor._make(data, device)
    return t.requires_grad_(True) if requires_grad else t


def zeros(*shape, dtype=None, device=None, requires_grad=False):
    return _new(lambda b, s, d: b.xp.zeros(s, dtype=d), shape, dtype, device, requires_grad)


def ones(*shape, dtype=None, device=None, requires_grad=False):
    return _new(lambda b, s, d: b.xp.ones(s, dtype=d), shape, dtype, device, requires_grad)


@new_factory
def empty(*shape, dtype=None, device=None, requires_grad=False):
    """A tensor whose values are to be overwritten. PyTorch leaves them uninitialised;
    here they are zeros, which cost about as little and make a read-before-write bug
    reproducible instead of random."""
    return zeros(*shape, dtype=dtype, device=device, requires_grad=requires_grad)


def full(size, fill_value, dtype=None, device=None, requires_grad=False):
    """A tensor of `fill_value`; without dtype, the value's kind decides (as PyTorch): a
    bool gives bool, an int int64, a float float32. A 0-d tensor gives its value."""
    if isinstance(fill_value, Tensor) and fill_value.ndim == 0:
        fill_value = fill_value.item()
    if not backend.is_scalar(fill_value):
        refuse_complex("full", fill_value)
        raise TypeError(f"full: fill_value must be a number (or a 0-d tensor), got "
                        f"{type(fill_value).__name__} {fill_value!r}")
    if dtype is None and isinstance(fill_value, bool):
        dtype = backend.bool_
    elif dtype is None and backend.is_integer(fill_value):
        dtype = backend.int64                            # NumPy's integers too (PyTorch's
                                                         # answer; np.bool_ gives float32)

    def fill(b, s, d):
        return b.xp.full(s, check_fill_value("full", fill_value, d), dtype=d)
    return _new(fill, (size,), dtype, device, requires_grad)


def drawn(op, draw, shape, dtype, device, requires_grad, generator):
    """A tensor of random draws, draw(rng, xp, shape, dtype): from the device's generator
    (seeded by mg.manual_seed), or from `generator` (mg.Generator, a NumPy Generator or an
    int seed) on the host, the values then copied to the device."""
    def fill(b, s, d):
        if generator is None:
            return draw(b.rng, b.xp, s, d)
        return b.from_numpy(draw(backend.host_rng(generator, op), backend.get("cpu").xp, s, d))
    return _new(fill, shape, dtype, device, requires_grad)


def randn(*shape, dtype=None, device=None, requires_grad=False, generator=None):
    """Standard normal samples from the device's generator (seeded by mg.manual_seed)."""
    def draw(rng, xp, s, d):
        if not backend.is_floating(d):
            raise TypeError(f"randn: needs a floating dtype, got {d}")
        return rng.standard_normal(s, dtype=d if d != backend.float16 else backend.float32
                                   ).astype(d, copy=False)
    return drawn("randn", draw, shape, dtype, device, requires_grad, generator)


def rand(*shape, dtype=None, device=None, requires_grad=False, generator=None):
    """Uniform samples in [0, 1)."""
    def draw(rng, xp, s, d):
        if not backend.is_floating(d):
            raise TypeError(f"rand: needs a floating dtype, got {d}")
        if d == backend.float16:     # a float32 draw rounded down: to nearest, draws from
            # 0.99976 become 1.0, which [0, 1) excludes (PyTorch wraps them to 0 instead)
            u = rng.random(s, dtype=backend.float32)
            h = u.astype(d)
            return xp.where(h.astype(backend.float32) > u, xp.nextafter(h, d.type(0)), h)
        return rng.random(s, dtype=d)
    return drawn("rand", draw, shape, dtype, device, requires_grad, generator)


def randint(low=0, high=None, size=None, dtype=None, device=None, generator=None):
    """Integers uniform in [low, high): randint(low, high, size), randint(high, size) or
    randint(high, size=size), as PyTorch."""
    if size is None and high is not None and not backend.is_integer(high):
        low, high, size = 0, low, high                   # randint(high, size)
    elif high is None:
        low, high = 0, low                               # randint(high, size=...)
    if size is None:
        raise TypeError("randint: give randint(high, size) or randint(low, high, size)")
    low, high = (v.item() if isinstance(v, Tensor) and v.ndim == 0 and v.dtype.kind in "iu"
                 else v for v in (low, high))            # 0-d integer tensors, as PyTorch
    if not (backend.is_integer(low) and backend.is_integer(high)):
        raise TypeError(f"randint: low and high must be integers, got {low!r} and {high!r}")
    dtype = backend.dtype(dtype) or backend.int64
    if not low < high:
        raise ValueError(f"randint: needs low < high, got low={low}, high={high}")
    # the draws must fit the dtype: astype would wrap integers and round floats silently
    # (float16 holds every integer only up to 2048; PyTorch warns there, this refuses)
    lowest, highest = _exact_integers(dtype)
    if low < lowest or high - 1 > highest:
        raise ValueError(f"randint: [{low}, {high}) does not fit {dtype} ({lowest} .. "
                         f"{highest}); use a wider dtype")
    return drawn("randint", lambda rng, xp, s, d: rng.integers(low, high, size=s).astype(d),
                 (size,), dtype, device, False, generator)


def arange(start, end=None, step=1, dtype=None, device=None, requires_grad=False):
    """Like range(): integers give int64, any float gives float32. A bound or step may be a
    0-d tensor (its value)."""
    start, end, step = (v.item() if isinstance(v, Tensor) and v.ndim == 0 else v
                        for v in (start, end, step))
    if end is None:
        start, end = 0, start
    for name, v in (("start", start), ("end", end), ("step", step)):
        if not backend.is_scalar(v) or isinstance(v, bool):
            raise TypeError(f"arange: {name} must be a number, got {type(v).__name__} {v!r}")
    if step == 0:
        raise ValueError(f"arange: step must be nonzero, got {step} (start={start}, "
                         f"end={end})")
    if (end - start) * step < 0:
        raise ValueError(f"arange: a step of {step} never gets from {start} to {end} (the step's "
                         f"sign must be that of end - start)")
    ints = all(backend.is_integer(v) for v in (start, end, step))   # NumPy ints too
    if not ints and not all(math.isfinite(v) for v in (start, end, step)):
        raise ValueError(f"arange: start, end and step must be finite numbers, got start="
                         f"{start}, end={end}, step={step}")
    if dtype is None:
        dtype = backend.int64 if ints else backend.DEFAULT_FLOAT
    device, dtype = backend.default_device(device), backend.dtype(dtype)
    xp = backend.get(device).xp
    if backend.is_floating(dtype):
        values = _float_range(xp, start, end, step, dtype)
    else:
        if not ints:   # into an integer dtype: each number truncated first, as PyTorch
            start, end, step = (int(v) for v in (start, end, step))
            if step == 0:
                raise ValueError(f"arange: the step truncates to 0 in {dtype}; give an "
                                 f"integer step (or a floating dtype)")
        values = xp.arange(start, end, step, dtype=dtype)
    t = Tensor._make(values, device)
    return t.requires_grad_(True) if requires_grad else t


def _float_range(xp, start, end, step, dtype):
    """Value i is start + i·step computed in float64, then cast, as PyTorch: NumPy's
    float32 arange steps in float32, so arange(0, 10, 0.1)[-1] came out 9.900001."""
    n = max(0, math.ceil((end - start) / step))
    return (start + step * xp.arange(n, dtype=backend.float64)).astype(dtype, copy=False)


def eye(n, m=None, dtype=None, device=None, requires_grad=False):
    """The (n, m) identity matrix (m defaults to n): ones where row == column."""
    n = _count("eye", "n", n)
    m = n if m is None else _count("eye", "m", m)
    return _new(lambda b, s, d: (b.xp.arange(n)[:, None] == b.xp.arange(m)).astype(d),
                (n, m), dtype, device, requires_grad)


def linspace(start, end, steps, dtype=None, device=None, requires_grad=False):
    """`steps` values evenly spaced from start to end, both included (float32 unless dtype
    says otherwise, even for integer ends). PyTorch's values bit for bit: the first half
    counts up from start, the second half down from end, so both ends are exact (see
    minigrad/linspace_rule.py)."""
    start, end = (v.item() if isinstance(v, Tensor) and v.ndim == 0 else v
                  for v in (start, end))
    if not all(backend.is_scalar(v) and not isinstance(v, bool) for v in (start, end)):
        raise TypeError(f"linspace: start and end must be numbers (or 0-d tensors), got "
                        f"{type(start).__name__} and {type(end).__name__}")
    steps = _count("linspace", "steps", steps)

    def fill(b, s, d):
        if d == backend.bool_:
            raise TypeError("linspace: needs a numeric dtype (float16/32/64, int32/64), "
                            "got bool")
        from minigrad.linspace_rule import linspace_values
        return linspace_values(b.xp, start, end, steps, d)
    return _new(fill, (steps,), dtype, device, requires_grad)


def randperm(n, dtype=backend.int64, device=None, requires_grad=False, generator=None):
    """A random permutation of 0..n-1 from the device's generator (seeded by
    mg.manual_seed). Sorting uniform draws gives every order with equal chance, and needs
    only random() and argsort, which every device's library has (CuPy's generator has no
    permutation())."""
    n = _count("randperm", "n", n)
    dtype = backend.dtype(dtype) or backend.int64        # dtype=None: still int64

    def draw(rng, xp, s, d):
        if d == backend.bool_:
            raise TypeError("randperm: needs a numeric dtype (int64 by default), got bool")
        if n - 1 > _exact_integers(d)[1]:                # float16: 2048 at most, as PyTorch
            raise ValueError(f"randperm: {d} cannot hold every integer below {n}; use a "
                             f"wider dtype")
        return xp.argsort(rng.random(s)).astype(d)
    return drawn("randperm", draw, (n,), dtype, device, requires_grad, generator)


def _exact_integers(dtype):
    """(lowest, highest): the range in which the dtype holds every integer."""
    if backend.is_floating(dtype):
        top = int(2 / backend.machine_eps(dtype))        # 2048 for float16, 2²⁴ float32
        return -top, top
    return backend.value_range(dtype)                    # bool: 0 .. 1


def _count(fn, name, value):
    """A size argument: a non-negative int (a NumPy int too, never a bool or a float)."""
    if not backend.is_integer(value):
        raise TypeError(f"{fn}: {name} must be an int, got {type(value).__name__} {value!r}")
    if value < 0:
        raise ValueError(f"{fn}: {name} must be >= 0, got {value}")
    return int(value)


@like_factory
def zeros_like(input, dtype=None, device=None, requires_grad=False):
    return zeros(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


@like_factory
def ones_like(input, dtype=None, device=None, requires_grad=False):
    return ones(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad)


@like_factory
def randn_like(input, dtype=None, device=None, requires_grad=False, generator=None):
    return randn(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad, generator=generator)


@like_factory
def rand_like(input, dtype=None, device=None, requires_grad=False, generator=None):
    return rand(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                requires_grad=requires_grad, generator=generator)


@like_factory
def full_like(input, fill_value, dtype=None, device=None, requires_grad=False):
    """input's shape filled with fill_value, in its dtype unless given (as PyTorch: not the
    value's kind, so full_like(int_tensor, 2.7) holds 2)."""
    return full(input.shape, fill_value, dtype=dtype or input.dtype,
                device=device or input.device, requires_grad=requires_grad)


@like_factory
def empty_like(input, dtype=None, device=None, requires_grad=False):
    return empty(input.shape, dtype=dtype or input.dtype, device=device or input.device,
                 requires_grad=requires_grad)


def multinomial(input, num_samples, replacement=False, *, generator=None):
    """Indices drawn from each row of non-negative weights `input`, (K,) or (N, K), which need
    not sum to 1 (as PyTorch): int64 of shape (num_samples,) or (N, num_samples).

    With replacement each draw inverts the row's cumulative weights at a uniform number; all
    rows go through one sorted search, row r's cumulative weights (scaled to end at 1) shifted
    by r. Without it, the draws are the num_samples largest keys log(u)/w (Efraimidis and
    Spirakis): the same distribution as drawing one at a time and removing what was drawn,
    and in that order. A zero weight is never drawn."""
    if not isinstance(input, Tensor) or not backend.is_floating(input.dtype):
        raise TypeError(f"multinomial: needs a tensor of floating-point weights, got "
                        f"{getattr(input, 'dtype', type(input).__name__)}")
    if input.ndim not in (1, 2) or input.shape[-1] == 0:
        raise ValueError(f"multinomial: the weights must have shape (K,) or (N, K) with "
                         f"K >= 1, got {input.shape}")
    try:
        if isinstance(num_samples, bool):               # True would be 1
            raise TypeError
        num_samples = operator.index(num_samples)
    except TypeError:
        raise TypeError(f"multinomial: num_samples must be an int, got "
                        f"{type(num_samples).__name__}") from None
    b, xp = input.backend, input.backend.xp
    w = input._data.reshape(-1, input.shape[-1]).astype(backend.float64)
    n, k = w.shape
    if n == 0 and 1 <= num_samples and (replacement or num_samples <= k):
        # no rows, no draws, as PyTorch (which still refuses more samples than categories)
        return Tensor._make(xp.zeros((0, num_samples), dtype=backend.int64), input.device)
    total = w.sum(axis=1, keepdims=True)
    positive = (w > 0).sum(axis=1)
    if not bool(xp.isfinite(w).all()) or bool((w < 0).any()) or bool((total <= 0).any()):
        raise ValueError("multinomial: the weights must be finite and >= 0, with a positive "
                         "sum in every row")
    fewest = int(positive.min()) if n else k
    if num_samples < 1 or (not replacement and num_samples > fewest):
        raise ValueError(f"multinomial: cannot draw {num_samples} samples "
                         f"{'with' if replacement else 'without'} replacement from a row with "
                         f"{fewest} categor{'y' if fewest == 1 else 'ies'} of positive weight "
                         f"(needs 1 <= num_samples{'' if replacement else ' <= that number'})")
    if replacement:
        rows = xp.arange(n, dtype=backend.float64)[:, None]
        cdf = xp.cumsum(w, axis=1) / total + rows        # row r rises from r to r + 1
        u = _uniform(b, (n, num_samples), generator) + rows
        ids = xp.searchsorted(cdf.reshape(-1), u.reshape(-1), side="right").reshape(u.shape)
        ids = ids - xp.arange(n)[:, None] * k
        # rounding may put u at its row's very end: the last category of positive weight
        last = k - 1 - xp.argmax(w[:, ::-1] > 0, axis=1)[:, None]
        ids = xp.minimum(ids, last)
    else:
        u = 1.0 - _uniform(b, (n, k), generator)         # in (0, 1]: log(u) is finite
        keys = xp.where(w > 0, xp.log(u) / xp.where(w > 0, w, 1.0), -xp.inf)   # w = 0: never
        ids = xp.argsort(-keys, axis=1)[:, :num_samples]
    ids = ids.astype(backend.int64)
    return Tensor._make(ids.reshape(input.shape[:-1] + (num_samples,)), input.device)


def _uniform(b, shape, generator):
    """float64 draws from [0, 1) on backend b: from its generator, or from `generator`."""
    if generator is None:
        return b.rng.random(shape)
    return b.from_numpy(backend.host_rng(generator, "multinomial").random(shape))
