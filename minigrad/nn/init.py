"""Weight initialisers (in place, like torch.nn.init). Values are drawn on the host from the
CPU generator (or the `generator` given: an mg.Generator, a NumPy Generator or an int
seed), so one seed gives the same weights on every device."""
import math
import threading

from minigrad import backend
from minigrad.args import is_device_array, number_arg
from minigrad.autograd import no_grad
from minigrad.tensor import Tensor


def _fill(tensor, values):
    """Write `values` (a host array, a number or a 0-d tensor) into the tensor's memory,
    in place."""
    values = values.item() if hasattr(values, "item") and getattr(values, "ndim", 1) == 0 \
        else values
    with no_grad():
        tensor[...] = values if backend.is_scalar(values) else tensor.backend.from_numpy(
            values.astype(tensor.dtype))
    return tensor


def fans(tensor):  # (PyTorch's _calculate_fan_in_and_fan_out, the name kept below)
    """(fan_in, fan_out) as PyTorch computes them: weight (out, in, *receptive field)."""
    if tensor.ndim < 2:
        raise ValueError(f"fan in/out need a tensor with at least 2 dims, got {tensor.shape}")
    receptive = 1
    for s in tensor.shape[2:]:
        receptive *= s
    return tensor.shape[1] * receptive, tensor.shape[0] * receptive


def _check_float(tensor, name):
    if not backend.is_floating(tensor.dtype):     # random floats would truncate to integers
        raise TypeError(f"init.{name}: needs a floating-point tensor, got dtype "
                        f"{tensor.dtype}")


def uniform_(tensor, a=0.0, b=1.0, generator=None):
    _check_float(tensor, "uniform_")
    if not a <= b:
        raise ValueError(f"init.uniform_: needs a <= b, got a={a}, b={b}")
    lowest, highest = backend.value_range(tensor.dtype)
    if not (lowest <= a and b <= highest):           # (±inf, or beyond float32's 3.4e38)
        raise ValueError(f"init.uniform_: the bounds a={a}, b={b} must be finite values "
                         f"of {tensor.dtype} ({lowest:g} .. {highest:g})")
    values = backend.host_rng(generator, "init").uniform(a, b, tensor.shape)
    if a < b:               # [a, b), as PyTorch: a draw just under b may round up to b in
        values = values.astype(tensor.dtype)           # the tensor's dtype; it takes the
        d, host = tensor.dtype, backend.get("cpu").xp  # value just below b instead
        values[values >= b] = host.nextafter(d.type(b), d.type(a))
    return _fill(tensor, values)


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    _check_float(tensor, "normal_")
    if not std >= 0:
        raise ValueError(f"init.normal_: std must be >= 0, got {std}")
    return _fill(tensor, backend.host_rng(generator, "init").normal(mean, std, tensor.shape))


def zeros_(tensor):
    return _fill(tensor, 0)


def ones_(tensor):
    return _fill(tensor, 1)


_calculate_fan_in_and_fan_out = fans    # the name PyTorch's reset_parameters code calls


def constant_(tensor, value):
    return _fill(tensor, number_arg("init.constant_", "val", value))


_UNIT_GAIN = ("linear", "sigmoid", "conv1d", "conv2d", "conv3d",
              "conv_transpose1d", "conv_transpose2d", "conv_transpose3d")


def calculate_gain(nonlinearity, param=None):
    """PyTorch's recommended gains: how much a nonlinearity shrinks the spread of what
    passes through it, which the init functions' `gain` undoes."""
    if nonlinearity in _UNIT_GAIN:
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "selu":
        return 3.0 / 4          # PyTorch's choice, for self-normalising networks
    if nonlinearity == "leaky_relu":
        if param is not None and (isinstance(param, bool) or
                                  not isinstance(param, (int, float))):
            raise ValueError(f"calculate_gain: negative_slope {param!r} is not a valid number")
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError(f"calculate_gain: unknown nonlinearity {nonlinearity!r}; valid: "
                     f"{', '.join(_UNIT_GAIN + ('tanh', 'relu', 'selu', 'leaky_relu'))}")


def xavier_uniform_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = fans(tensor)
    bound = gain * math.sqrt(6.0 / (fan_in + fan_out)) if fan_in + fan_out else 0.0
    return uniform_(tensor, -bound, bound, generator)


def xavier_normal_(tensor, gain=1.0, generator=None):
    fan_in, fan_out = fans(tensor)
    std = gain * math.sqrt(2.0 / (fan_in + fan_out)) if fan_in + fan_out else 0.0
    return normal_(tensor, 0.0, std, generator)


def _kaiming_std(tensor, a, mode, nonlinearity):
    if mode not in ("fan_in", "fan_out"):
        raise ValueError(f"kaiming init: mode must be 'fan_in' or 'fan_out', got {mode!r}")
    fan_in, fan_out = fans(tensor)
    fan = fan_in if mode == "fan_in" else fan_out
    # a zero-size weight (nn.Linear(0, n)) has nothing to fill: any finite std will do
    return calculate_gain(nonlinearity, a) / math.sqrt(fan) if fan else 0.0


def kaiming_uniform_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    bound = math.sqrt(3.0) * _kaiming_std(tensor, a, mode, nonlinearity)
    return uniform_(tensor, -bound, bound, generator)


def kaiming_normal_(tensor, a=0.0, mode="fan_in", nonlinearity="leaky_relu", generator=None):
    return normal_(tensor, 0.0, _kaiming_std(tensor, a, mode, nonlinearity), generator)


def trunc_normal_(tensor, mean=0.0, std=1.0, a=-2.0, b=2.0, generator=None):
    """N(mean, std²) truncated to [a, b]: a normal draw conditioned on a <= x <= b (a and b
    are values, not numbers of std), as torch.nn.init.trunc_normal_. PyTorch maps uniform
    draws through the normal's inverse CDF (erfinv), which NumPy lacks; rejection sampling
    (_truncated_standard_normal) draws from the same distribution, exactly."""
    _check_float(tensor, "trunc_normal_")
    if not std > 0:
        raise ValueError(f"init.trunc_normal_: std must be > 0, got {std}")
    if not a < b:
        raise ValueError(f"init.trunc_normal_: needs a < b, got a={a}, b={b}")
    z = _truncated_standard_normal(backend.host_rng(generator, "init"), (a - mean) / std,
                                   (b - mean) / std, tensor.numel(), (a, b, mean, std))
    # mean + std·z is in [a, b] but for the last bit of rounding: clip that bit, as PyTorch
    return _fill(tensor, (mean + std * z).clip(a, b).reshape(tensor.shape))


def _truncated_standard_normal(rng, alpha, beta, n, given):
    """n draws of a standard normal z conditioned on alpha <= z <= beta, by rejection from
    whichever of three proposals keeps the most draws (Robert 1995, "Simulation of
    truncated normal variables"), so that an interval far in a tail, where a normal draw
    almost never lands, costs no more than one around 0:
      normal:      z ~ N(0, 1), kept if alpha <= z <= beta;
      uniform:     z ~ U(alpha, beta), kept with probability exp((m² - z²)/2), m the point
                   of [alpha, beta] nearest 0 (best for a narrow interval);
      exponential: z = alpha + Exp(rate λ), kept if z <= beta, with probability
                   exp(-(z - λ)²/2), λ = (alpha + √(alpha² + 4))/2 (best for a tail).
    Each keeps a draw with a probability known in closed form (`kept` below), which picks
    the proposal and sizes each batch of draws."""
    if alpha + beta < 0:      # an interval mostly below 0 is the mirror of one above it
        return -_truncated_standard_normal(rng, -beta, -alpha, n, given)
    xp = backend.get("cpu").xp
    # P(alpha <= z <= beta) with erfc, which keeps its digits in the upper tail
    mass = 0.5 * (math.erfc(alpha / math.sqrt(2)) - math.erfc(beta / math.sqrt(2)))
    nearest = max(alpha, 0.0)                  # beta >= 0 here, so 0 is inside if alpha < 0
    lam = (alpha + math.sqrt(alpha * alpha + 4)) / 2 if alpha > 0 else 0.0
    with_density = mass * math.sqrt(2 * math.pi)
    try:
        kept = {"normal": mass,
                "uniform": with_density * math.exp(nearest ** 2 / 2) / (beta - alpha)
                if beta > alpha else 0.0,
                "exponential": with_density * lam * math.exp(lam * alpha - lam * lam / 2)}
    except OverflowError:
        kept = {}
    proposal = max(kept, key=kept.get, default=None)
    if proposal is None or not kept[proposal] > 0:
        a, b, mean, std = given
        raise ValueError(f"init.trunc_normal_: [a, b] = [{a}, {b}] lies so far in a tail of "
                         f"N({mean}, {std}²) ({min(abs(alpha), abs(beta)):.1f} std from "
                         f"the mean) that float64 cannot represent its probability")
    pieces, filled = [], 0
    while filled < n:
        k = int((n - filled) / kept[proposal] * 1.1) + 16   # enough to finish, most times
        if proposal == "normal":
            z = rng.standard_normal(k)
            keep = (alpha <= z) & (z <= beta)
        elif proposal == "uniform":
            z = rng.uniform(alpha, beta, k)
            keep = rng.random(k) < xp.exp((nearest ** 2 - z * z) / 2)
        else:
            z = alpha + rng.exponential(1 / lam, k)
            keep = (z <= beta) & (rng.random(k) < xp.exp(-(z - lam) ** 2 / 2))
        pieces.append(z[keep][:n - filled])
        filled += len(pieces[-1])
    return xp.concatenate(pieces) if pieces else xp.zeros(0)


def orthogonal_(tensor, gain=1.0, generator=None):
    """A (semi-)orthogonal matrix times `gain`, as torch.nn.init.orthogonal_ (Saxe et al.
    2013): Q of the QR decomposition of a standard normal matrix, each column's sign set by
    R's diagonal so that Q is uniformly distributed over orthogonal matrices. Its rows are
    orthonormal if there are fewer rows than columns, else its columns. A tensor of more
    than 2 dims is taken as the matrix (shape[0], the product of the rest)."""
    _check_float(tensor, "orthogonal_")
    gain = number_arg("init.orthogonal_", "gain", gain)
    if tensor.ndim < 2:
        raise ValueError(f"init.orthogonal_: needs a tensor with at least 2 dims, got shape "
                         f"{tensor.shape}; rows or columns can be orthonormal only in a "
                         f"matrix")
    if tensor.numel() == 0:
        return tensor
    xp = backend.get("cpu").xp
    rows = tensor.shape[0]
    cols = tensor.numel() // rows
    flat = backend.host_rng(generator, "init").standard_normal((rows, cols))
    if rows < cols:            # QR of the tall transpose: Q's orthonormal columns are rows
        flat = flat.T
    q, r = xp.linalg.qr(flat)                  # q: (tall, short) with orthonormal columns
    q = q * xp.sign(xp.diag(r))                # makes the result Haar-distributed
    if rows < cols:
        q = q.T
    return _fill(tensor, gain * q.reshape(tensor.shape))


def eye_(tensor):
    """The identity matrix in a 2-D tensor (ones on the diagonal, zeros elsewhere; a
    rectangular one too), as torch.nn.init.eye_."""
    if tensor.ndim != 2:
        raise ValueError(f"init.eye_: needs a 2-D tensor, got shape {tensor.shape}")
    return _fill(tensor, backend.get("cpu").xp.eye(*tensor.shape))


from minigrad.nn.init_more import dirac_, sparse_, _deprecated  # noqa: E402

_skipping = threading.local()      # utils.skip_init's switch (nn/utils_more.py), per thread


def _skippable(fn):
    """fn, except that under utils.skip_init it draws and writes nothing. It also takes a
    raw NumPy/CuPy array (a tensor's `._data`), writing into that array in place; PyTorch's
    DCGAN idiom `init.normal_(m.weight.data, 0.0, 0.02)` passes a Tensor, as there."""
    def init_fn(tensor, *args, **kwargs):
        if getattr(_skipping, "on", False):
            return tensor
        if not isinstance(tensor, Tensor) and is_device_array(tensor):
            fn(Tensor._make(tensor, backend.device_of_array(tensor)), *args, **kwargs)
            return tensor
        return fn(tensor, *args, **kwargs)
    init_fn.__name__ = init_fn.__qualname__ = fn.__name__
    init_fn.__doc__, init_fn.__wrapped__ = fn.__doc__, fn
    return init_fn


_IN_PLACE = ("uniform_", "normal_", "zeros_", "ones_", "constant_", "xavier_uniform_",
             "xavier_normal_", "kaiming_uniform_", "kaiming_normal_", "trunc_normal_",
             "orthogonal_", "eye_", "dirac_", "sparse_")
for _name in _IN_PLACE:
    globals()[_name] = _skippable(globals()[_name])
# PyTorch's old names, without the underscore
for _name in ("uniform", "normal", "constant", "xavier_uniform", "xavier_normal",
              "kaiming_uniform", "kaiming_normal", "orthogonal", "eye", "dirac", "sparse"):
    globals()[_name] = _deprecated(_name, globals()[_name + "_"])
