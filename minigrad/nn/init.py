"""Weight initialisers (in place, like torch.nn.init). Values are drawn on the host from the
CPU generator (or the `generator` given: a NumPy Generator or an int seed), so one seed
gives the same weights on every device."""
import math

from minigrad import backend
from minigrad.autograd import no_grad


def _fill(tensor, values):
    """Write `values` (a host array or a number) into the tensor's memory, in place."""
    with no_grad():
        tensor[...] = values if backend.is_scalar(values) else tensor.backend.from_numpy(
            values.astype(tensor.dtype))
    return tensor


def fans(tensor):
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
    return _fill(tensor, backend.host_rng(generator, "init").uniform(a, b, tensor.shape))


def normal_(tensor, mean=0.0, std=1.0, generator=None):
    _check_float(tensor, "normal_")
    if not std >= 0:
        raise ValueError(f"init.normal_: std must be >= 0, got {std}")
    return _fill(tensor, backend.host_rng(generator, "init").normal(mean, std, tensor.shape))


def zeros_(tensor):
    return _fill(tensor, 0)


def ones_(tensor):
    return _fill(tensor, 1)


def constant_(tensor, value):
    return _fill(tensor, value)


def calculate_gain(nonlinearity, param=None):
    if nonlinearity in ("linear", "sigmoid", "conv1d", "conv2d"):
        return 1.0
    if nonlinearity == "tanh":
        return 5.0 / 3
    if nonlinearity == "relu":
        return math.sqrt(2.0)
    if nonlinearity == "leaky_relu":
        slope = 0.01 if param is None else param
        return math.sqrt(2.0 / (1 + slope ** 2))
    raise ValueError(f"calculate_gain: unknown nonlinearity {nonlinearity!r}")


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
