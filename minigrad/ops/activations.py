"""Activations beside relu/gelu — SiLU, leaky ReLU, softplus, ELU, SELU, GLU, hardtanh,
ReLU6, log-sigmoid, Mish, softsign and PReLU — composed from the differentiable
elementwise ops, so their gradients and gradients of gradients come from those ops and need
no backward of their own. The care is in keeping every branch finite (a `where` sends a zero
gradient into the branch it drops, and 0·inf there would be NaN) and in taking PyTorch's
side at each kink."""
import functools

from minigrad import backend
from minigrad.args import number_arg
from minigrad.ops.elementwise import where, exp, log, tanh, sigmoid, relu, clip
from minigrad.ops.math import expm1
from minigrad.ops.reduce import normalize_dim
from minigrad.ops.shape import split
from minigrad.tensor import Tensor


def _floating(x, op):
    """PyTorch computes these activations for floating tensors only (its error for an
    integer or bool one is NotImplementedError; a TypeError here, as for other dtypes)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: needs a floating-point tensor, got {x.dtype}; convert "
                        f"with .float() or .double() first")
    return x


def _float32_inside(fn):
    """float16 in, float16 out, float32 in between, as PyTorch's CPU kernels compute: each
    of a composed activation's ops would round to float16 (mish's gradient was 54% off
    near its minimum, softsign's 13x at x = 1000)."""
    @functools.wraps(fn)
    def wrapped(x, *args, **kwargs):
        if isinstance(x, Tensor) and x.dtype == backend.float16:
            return fn(x.to(dtype=backend.float32), *args, **kwargs).to(dtype=x.dtype)
        return fn(x, *args, **kwargs)
    return wrapped


def log1p(u):
    """log(1 + u), accurate for tiny u too (where log(1 + u) rounds to log(1) = 0), from
    ops that exist: w = 1 + u rounds, c = (w - 1) - u is exactly what the rounding added,
    and log(1 + u) = log(w - c) = log(w) - c/w to below rounding. dc/du = 0, so the
    gradient autograd finds, 1/w + c/w², is 1/(1 + u) to the same precision."""
    w = 1 + u
    c = (w - 1) - u
    return log(w) - c / w


def log1p_exp_parts(z):
    """log(1 + eᶻ) = relu(z) + log(1 + e^-|z|), as those two parts: neither overflows, and
    a caller may add the large one to something it cancels before adding the small one.
    -|z| is a `where` that sends z = 0 to the smooth branch, so the sum's gradient there
    is σ(0) = ½ and its second derivative ¼, as the function's (abs and relu give 0)."""
    return relu(z), log1p(exp(where(z > 0, -z, z)))


def log1p_exp(z):
    """log(1 + eᶻ) for any z, without overflow."""
    large, small = log1p_exp_parts(z)
    return large + small


@_float32_inside
def silu(x):
    """SiLU (swish): x·σ(x)."""
    return x * sigmoid(_floating(x, "silu"))


def leaky_relu(x, negative_slope=0.01):
    """x where x > 0, else negative_slope·x; at 0 the gradient is negative_slope, as
    PyTorch."""
    _floating(x, "leaky_relu")
    return where(x > 0, x, x * negative_slope)


@_float32_inside
def softplus(x, beta=1.0, threshold=20.0):
    """log(1 + e^(βx))/β, and x itself where βx > threshold (as PyTorch; there the two agree
    to float precision). The other branch is the overflow-free log1p_exp, so no inf sits
    under the `where`."""
    z = _floating(x, "softplus") * beta
    return where(z > threshold, x, log1p_exp(z) / beta)


@_float32_inside
def elu(x, alpha=1.0):
    """x where x > 0, else α(eˣ - 1). At 0 exactly it is the line α·x: gradient α and
    second derivative 0, PyTorch's values there (its backward takes x ≤ 0 as the left
    branch, its double backward only x < 0). eˣ - 1 is expm1: full precision near 0, where
    exp(x) - 1 loses digits, and its gradient eˣ keeps them for x ≪ 0 too. That branch
    sees min(x, 0), so a large x puts no inf (and no 0·inf gradient) under the `where`."""
    positive = _floating(x, "elu") > 0
    return where(positive, x, where(x < 0, alpha * expm1(where(positive, 0.0, x)), x * alpha))


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


def selu(x):
    """Self-normalising ELU (Klambauer et al. 2017): scale·elu(x, α) with PyTorch's fixed
    α ≈ 1.6733 and scale ≈ 1.0507; at 0 the gradient is scale·α, as PyTorch."""
    return _SELU_SCALE * elu(_floating(x, "selu"), _SELU_ALPHA)


def glu(x, dim=-1):
    """Gated linear unit: x split in halves a, b along dim, then a·σ(b)."""
    _floating(x, "glu")
    if x.ndim == 0:
        raise ValueError("glu: does not support a 0-d tensor (scalar): the halving dim "
                         "must have an even size")
    d = normalize_dim(dim, x.ndim, "glu")
    if x.shape[d] % 2:
        raise ValueError(f"glu: halving dimension must be even, but dimension {d} is size "
                         f"{x.shape[d]} (input shape {x.shape})")
    half = x.shape[d] // 2
    a, b = split(x, [half, half], d)                     # (sizes: an empty dim halves too)
    return a * sigmoid(b)


def hardtanh(x, min_val=-1.0, max_val=1.0):
    """x limited to [min_val, max_val]. The gradient is 1 strictly inside and 0 at the
    bounds, as PyTorch (clip's is 1 at them): outside the open interval the result is a
    constant. An integer tensor stays integer, its bounds truncated, as PyTorch."""
    min_val, max_val = (number_arg("hardtanh", n, v) for n, v in (("min_val", min_val),
                                                                  ("max_val", max_val)))
    if min_val > max_val:
        raise ValueError(f"hardtanh: min_val cannot be greater than max_val, got "
                         f"min_val={min_val}, max_val={max_val}")
    if x.dtype.kind == "b":
        raise TypeError("hardtanh: bool inputs are not supported; convert with .float() "
                        "or .long() first")
    if x.dtype.kind != "f":
        return clip(x, int(min_val), int(max_val))       # no gradient to take
    return where(x <= min_val, float(min_val), where(x >= max_val, float(max_val), x))


def relu6(x):
    """min(max(x, 0), 6): hardtanh(x, 0, 6), so the gradient at 0 and at 6 is 0."""
    return hardtanh(x, 0.0, 6.0)


@_float32_inside
def logsigmoid(x):
    """log σ(x) = -log(1 + e⁻ˣ), as the overflow-free -(relu(-x) + log(1 + e^-|x|)): exact
    for large |x| in both directions (-x on the left, -e⁻ˣ on the right)."""
    large, small = log1p_exp_parts(-_floating(x, "logsigmoid"))
    return -(large + small)


@_float32_inside
def mish(x):
    """Mish (Misra 2019): x·tanh(softplus(x)), softplus without a threshold (as PyTorch's
    mish) but overflow-free."""
    return x * tanh(log1p_exp(_floating(x, "mish")))


@_float32_inside
def softsign(x):
    """x / (1 + |x|), as x·(1 + |x|)⁻¹: the derivative of the power, -(1 + |x|)⁻², goes
    quietly to 0 for a huge x, where a quotient's derivative, x/(1 + |x|)², would square
    the denominator and overflow. An integer tensor gives float32, as PyTorch."""
    x = x if x.dtype.kind == "f" else x.to(dtype=backend.DEFAULT_FLOAT)
    return x * (x.abs() + 1) ** -1.0


def prelu(x, weight):
    """x where x > 0, else weight·x, with a learnable slope: one for all (weight.numel() ==
    1) or one per channel (dim 1 of x, as PyTorch). At 0 the gradient is the slope and the
    slope's gradient 0, as PyTorch; so are both mixed second derivatives there (PyTorch's
    double backward counts x = 0 as positive), hence the detached slope at x = 0 exactly."""
    _floating(x, "prelu")
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu: weight must be a tensor, got {type(weight).__name__}")
    if weight.dtype != x.dtype:
        raise TypeError(f"prelu: type promoting is not supported: input is {x.dtype}, "
                        f"weight {weight.dtype}; give both the same dtype")
    if weight.ndim > 1:
        raise ValueError(f"prelu: expected weight to be a 0-d or 1-d tensor, got shape "
                         f"{weight.shape}")
    n = weight.numel()
    channels = x.shape[1] if x.ndim > 1 else 1
    if n != 1 and (x.ndim == 0 or n != channels):
        where_ = "its dim 1" if x.ndim > 1 else "an input of fewer than 2 dims has 1"
        raise ValueError(f"prelu: weight has {n} parameters, but the input of shape "
                         f"{x.shape} has {channels} channel{'s' * (channels != 1)} "
                         f"({where_}); give 1 parameter, or one per channel")
    if weight.ndim != x.ndim:                            # (C,) -> (1, C, 1, ...)
        weight = weight.reshape([n if i == 1 else 1 for i in range(x.ndim)])
    return where(x > 0, x, where(x < 0, weight * x, weight.detach() * x))
