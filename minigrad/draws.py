"""Random draws beyond the factories of creation.py, as torch's: normal(mean, std) with
tensors or numbers, bernoulli(probabilities), binomial(count, prob), poisson(rates), and the
in-place fills bernoulli_, exponential_, random_, cauchy_, log_normal_ and geometric_
(Tensor methods). None of them is differentiable: for a draw that gradients flow through,
write mean + std * mg.randn_like(mean) (the reparameterisation).

Each draws on the host, from `generator` (mg.Generator, a NumPy Generator or an int seed)
or else from the CPU generator that mg.manual_seed seeds, and copies the values to the
tensor's device, as nn.init does: a seed gives the same numbers on every device.
"""
from minigrad import backend
from minigrad.creation import _exact_integers, _shape, tensor
from minigrad.nn.init import _fill
from minigrad.ops import inplace
from minigrad.tensor import Tensor


def _host(v):
    """A tensor's values, or a number, as a host array."""
    return backend.to_host(v._data if isinstance(v, Tensor) else v)


def normal(mean, std=1.0, size=None, *, generator=None, dtype=None, device=None,
           requires_grad=False):
    """Normal draws of mean `mean` and standard deviation `std`. Either may be a floating
    tensor (the result has their broadcast shape, dtype and device) or a number; with two
    numbers, give `size` (float32 unless `dtype` says otherwise), on the default device
    without device= as the other factories (torch.normal's goes to the CPU there)."""
    tensors = [v for v in (mean, std) if isinstance(v, Tensor)]
    for name, v in (("mean", mean), ("std", std)):
        if not isinstance(v, Tensor) and (not backend.is_scalar(v) or isinstance(v, bool)):
            raise TypeError(f"normal: {name} must be a floating tensor or a number, got "
                            f"{type(v).__name__}")
    if tensors:
        if size is not None:
            raise TypeError("normal: size= goes with a number mean and std only; with a "
                            "tensor, the result takes its shape")
        if any(not backend.is_floating(t.dtype) for t in tensors) or \
                len({t.dtype for t in tensors}) > 1 or len({t.device for t in tensors}) > 1:
            raise TypeError(f"normal: mean and std tensors must be floating, of one dtype and "
                            f"one device, got {[f'{t.dtype} on {t.device}' for t in tensors]}")
        try:
            shape = backend.broadcast_shapes(*(t.shape for t in tensors))
        except ValueError:
            raise ValueError(f"normal: mean of shape {mean.shape} and std of shape "
                             f"{std.shape} do not broadcast together") from None
        dtype, device = dtype or tensors[0].dtype, device or tensors[0].device
    elif size is None:
        raise TypeError("normal: with a number mean and std, give size= (the result's shape)")
    else:
        shape = _shape((size,))
    m, s = _host(mean), _host(std)
    if not (s >= 0).all():                               # NaN fails too
        raise ValueError(f"normal: std must be >= 0 everywhere, got {std!r}")
    z = backend.host_rng(generator, "normal").standard_normal(shape)
    return tensor(m + s * z, dtype=dtype or backend.DEFAULT_FLOAT, device=device,
                  requires_grad=requires_grad)


def _probabilities(p, op):
    """p (a number or a tensor) as a host float64 array, checked to lie in [0, 1]."""
    if isinstance(p, Tensor):
        if not backend.is_floating(p.dtype):
            raise TypeError(f"{op}: the probabilities must be a floating tensor, got {p.dtype}")
    elif not backend.is_scalar(p) or isinstance(p, bool):
        raise TypeError(f"{op}: p must be a number or a floating tensor, got "
                        f"{type(p).__name__}")
    q = _host(p).astype(backend.float64)
    if not ((q >= 0) & (q <= 1)).all():                  # NaN fails too
        raise ValueError(f"{op}: probabilities must lie in [0, 1], got {p!r}")
    return q


def bernoulli(input, p=None, *, generator=None):
    """1 with probability `input` (element by element), else 0, in input's dtype; with p
    (a number), that probability everywhere and input gives only the shape."""
    if not isinstance(input, Tensor) or not backend.is_floating(input.dtype):
        raise TypeError(f"bernoulli: input must be a floating tensor of probabilities, got "
                        f"{getattr(input, 'dtype', type(input).__name__)}")
    q = _probabilities(input if p is None else p, "bernoulli")
    u = backend.host_rng(generator, "bernoulli").random(input.shape)
    return Tensor._make(input.backend.from_numpy((u < q).astype(input.dtype)), input.device)


def _fill_checked(t, op, draw):
    """t filled with draw()'s values; drawn only once t may be written (a refused fill
    leaves the generator as it was, as PyTorch's)."""
    return inplace.fill_random(t, op, lambda target: _fill(target, draw()))


def bernoulli_(t, p=0.5, generator=None):
    """t's elements each 1 with probability p (a number, or a tensor that broadcasts to t),
    else 0; t may be of any dtype."""
    q = _probabilities(p, "bernoulli_")
    try:
        q = backend.get("cpu").xp.broadcast_to(q, t.shape)
    except ValueError:
        raise ValueError(f"bernoulli_: p of shape {q.shape} does not broadcast to the "
                         f"tensor's shape {t.shape}") from None
    rng = backend.host_rng(generator, "bernoulli_")
    return _fill_checked(t, "bernoulli_", lambda: rng.random(t.shape) < q)


def exponential_(t, lambd=1.0, generator=None):
    """t filled with draws of the exponential distribution of rate lambd (mean 1/lambd)."""
    if not backend.is_floating(t.dtype):
        raise TypeError(f"exponential_: needs a floating-point tensor, got {t.dtype}")
    if not backend.is_scalar(lambd) or not lambd > 0:
        raise ValueError(f"exponential_: lambd must be a number > 0, got {lambd!r}")
    rng = backend.host_rng(generator, "exponential_")
    return _fill_checked(t, "exponential_", lambda: rng.exponential(1 / lambd, t.shape))


def random_(t, *bounds, generator=None):
    """t filled with integers, as torch's random_: random_() from 0 to the largest integer
    t's dtype holds exactly (2²⁴ for float32, 1 for bool: both ends included);
    random_(to) from [0, to); random_(from, to) from [from, to) (to None: as random_())."""
    if len(bounds) > 2:
        raise TypeError(f"random_: takes at most (from, to), got {len(bounds)} bounds")
    lowest, highest = _exact_integers(t.dtype)
    low, high = (0, None) if not bounds else (0, bounds[0]) if len(bounds) == 1 else bounds
    high = highest + 1 if high is None else high
    if not (backend.is_integer(low) and backend.is_integer(high)):
        raise TypeError(f"random_: from and to must be integers, got {low!r} and {high!r}")
    if not low < high:
        raise ValueError(f"random_: needs from < to, got from={low}, to={high}")
    if low < lowest or high - 1 > highest:
        raise ValueError(f"random_: [{low}, {high}) does not fit {t.dtype} ({lowest} .. "
                         f"{highest})")
    rng = backend.host_rng(generator, "random_")
    dtype = t.dtype if t.dtype.kind in "iu" else backend.int64
    return _fill_checked(t, "random_", lambda: rng.integers(low, high, size=t.shape,
                                                            dtype=dtype))


def _rates(x, op, what):
    """A floating tensor's values as a host float64 array, or a TypeError naming it."""
    if not isinstance(x, Tensor) or not backend.is_floating(x.dtype):
        raise TypeError(f"{op}: {what} must be a floating tensor (as PyTorch), got "
                        f"{getattr(x, 'dtype', type(x).__name__)}")
    return _host(x).astype(backend.float64)


def binomial(count, prob, generator=None):
    """The number of successes in `count` trials of probability `prob` (element by element;
    the two broadcast), as torch.binomial: floats, in count's dtype. A negative count gives
    0, as PyTorch; a probability outside [0, 1] is an error, and so is a count of inf or
    NaN (PyTorch's runs for ever or gives NaN)."""
    xp = backend.get("cpu").xp
    n, p = _rates(count, "binomial", "count"), _rates(prob, "binomial", "prob")
    if not ((p >= 0) & (p <= 1)).all():
        raise ValueError(f"binomial: prob must lie in [0, 1], got {prob!r}")
    if not xp.isfinite(n).all():
        raise ValueError(f"binomial: count must be finite, got {count!r}")
    try:
        n, p = xp.broadcast_arrays(n, p)
    except ValueError:
        raise ValueError(f"binomial: count of shape {count.shape} and prob of shape "
                         f"{prob.shape} do not broadcast together") from None
    k = backend.host_rng(generator, "binomial").binomial(
        xp.maximum(n, 0).astype(backend.int64), p)
    # (0-d arguments: NumPy gives a Python int, not an array)
    return Tensor._make(count.backend.from_numpy(xp.asarray(k, dtype=count.dtype)),
                        count.device)


def poisson(input, generator=None):
    """A Poisson draw of rate `input` (element by element), as torch.poisson: floats, in
    input's dtype; rates must be >= 0 and finite (PyTorch's gives nonsense for inf)."""
    xp = backend.get("cpu").xp
    rate = _rates(input, "poisson", "input")
    if not (rate >= 0).all():
        raise ValueError(f"poisson: rates must be >= 0, got {input!r}")
    try:
        k = backend.host_rng(generator, "poisson").poisson(rate)
    except ValueError:               # NumPy's "lam value too large" (inf, or past ~1e19)
        raise ValueError(f"poisson: rates must be finite and below 1e19, got a maximum of "
                         f"{rate.max()}") from None
    # (a 0-d rate: NumPy gives a Python int, not an array)
    return Tensor._make(input.backend.from_numpy(xp.asarray(k, dtype=input.dtype)),
                        input.device)


def cauchy_(t, median=0.0, sigma=1.0, generator=None):
    """t filled with draws of the Cauchy distribution of that median and scale sigma."""
    _check_fill(t, "cauchy_", True, (("median", median, False), ("sigma", sigma, True)))
    rng = backend.host_rng(generator, "cauchy_")
    return _fill_checked(t, "cauchy_",
                         lambda: median + sigma * rng.standard_cauchy(t.shape))


def log_normal_(t, mean=1.0, std=2.0, generator=None):
    """t filled with exp of normal draws of that mean and std (those of the log, as
    PyTorch's)."""
    _check_fill(t, "log_normal_", True, (("mean", mean, False), ("std", std, True)))
    rng = backend.host_rng(generator, "log_normal_")
    return _fill_checked(t, "log_normal_", lambda: rng.lognormal(mean, std, t.shape))


def geometric_(t, p, generator=None):
    """t filled with the number of trials of success probability p up to the first success
    (1, 2, ...), as PyTorch's; t may be floating or integer (not bool)."""
    _check_fill(t, "geometric_", False, ())
    if not backend.is_scalar(p) or isinstance(p, bool) or not 0 < p < 1:
        raise ValueError(f"geometric_: p must be a number in (0, 1), got {p!r}")
    rng = backend.host_rng(generator, "geometric_")
    return _fill_checked(t, "geometric_", lambda: rng.geometric(p, t.shape))


def _check_fill(t, op, floating, numbers):
    """Refuse a dtype the fill cannot hold, or a parameter that is no number, or (positive
    ones) not > 0, before anything is drawn."""
    if floating and not backend.is_floating(t.dtype) or t.dtype == backend.bool_:
        raise TypeError(f"{op}: needs a {'floating-point' if floating else 'numeric'} "
                        f"tensor, got {t.dtype}")
    for name, v, positive in numbers:
        if not backend.is_scalar(v) or isinstance(v, bool) or v != v or \
                (positive and not v > 0):
            raise ValueError(f"{op}: {name} must be a {'number > 0' if positive else 'number'}"
                             f", got {v!r}")
