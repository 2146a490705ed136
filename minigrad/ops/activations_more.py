"""The rest of torch.nn.functional's activations: CELU (the fused ELU op with an input scale),
hardswish (a small fused op, for PyTorch's gradient at its kinks), and composed from the
differentiable ops hardsigmoid, hardshrink, softshrink, tanhshrink, threshold and softmin;
and the two that draw random numbers, from the device's generator (mg.manual_seed):
gumbel_softmax and rrelu. Each takes PyTorch's side at its kinks and at NaN."""
import warnings

from minigrad import backend, creation
from minigrad.autograd import Function
from minigrad.dtypes import finfo
from minigrad.ops.activations import Elu, _floating, _float32_inside, leaky_relu, hardtanh
from minigrad.ops.elementwise import where, tanh
from minigrad.ops.reduce import normalize_dim
from minigrad.args import cast_to, check_fill_value, number_arg
from minigrad.ops.softmax import Softmax, along_dim, implicit_dim, softmax
from minigrad.tensor import Tensor


@_float32_inside
def celu(x, alpha=1.0):
    """x where x > 0, else α(e^(x/α) - 1): ELU continuously differentiable at 0 for any α
    (Barron 2017), as PyTorch's, whose gradient at 0 is 1 and second derivative 0. (PyTorch's
    backward rounds 1/α to float32, so its float64 gradient is ~1e-8 off for α = 0.7; this
    one is exact.)"""
    _floating(x, "celu")
    alpha = float(number_arg("celu", "alpha", alpha))
    if alpha == 0:
        raise ValueError("celu: alpha cannot be 0 (the input is divided by it)")
    return Elu.apply(x, alpha=alpha, scale=1.0, input_scale=1 / alpha)


class Hardswish(Function):
    """x·relu6(x + 3)/6 (MobileNetV3). Its gradient is x/3 + ½ strictly inside (-3, 3), 0
    from -3 down and 1 from 3 up (and at NaN), its second derivative 1/3 strictly inside
    and 0 elsewhere, as PyTorch's. (Composed, x·hardtanh(x + 3, 0, 6)/6 would agree but
    at ±inf and NaN, where x·0 gives the gradient NaN.)"""

    def forward(self, x):
        return x * self.xp.clip(x + 3, 0, 6) / 6

    def backward(self, g):
        x = self.inputs[0]
        slope = where(x < 3, x / 3 + 0.5, 1.0)                      # (NaN: 1)
        return where(x <= -3, 0.0, g * slope)                        # 0 even where g is inf


@_float32_inside
def hardswish(x):
    """x·relu6(x + 3)/6; float16 is computed in float32, as PyTorch's CPU kernels."""
    return Hardswish.apply(_floating(x, "hardswish"))


@_float32_inside
def hardsigmoid(x):
    """relu6(x + 3)/6, as PyTorch (the gradient 1/6 strictly inside (-3, 3), 0 at the
    ends and at NaN: hardtanh's; PyTorch's is 1/6 rounded to float32, in float64 too)."""
    return hardtanh(_floating(x, "hardsigmoid") + 3, 0.0, 6.0) / 6


def hardshrink(input, lambd=0.5):
    """0 where -λ ≤ x ≤ λ, else x (the gradient there 0, else 1; NaN stays NaN with
    gradient 1), as PyTorch; a negative λ leaves x as it is."""
    _floating(input, "hardshrink")
    lambd = number_arg("hardshrink", "lambd", lambd)
    return where((input >= -lambd) & (input <= lambd), 0.0, input)


@_float32_inside
def softshrink(x, lambd=0.5):
    """x - λ where x > λ, x + λ where x < -λ, else 0 (the gradient there exactly 0, an inf
    upstream one too; NaN stays NaN with gradient 1), as PyTorch; float16 is compared and
    computed in float32, as PyTorch's kernel. (λ is subtracted as a number, in x's dtype:
    a tensor of ±λ would be float32, rounding λ for float64 and promoting float16.)"""
    _floating(x, "softshrink")
    if not number_arg("softshrink", "lambd", lambd) >= 0:
        raise ValueError(f"softshrink: lambd must be >= 0, got {lambd}")
    return where((x >= -lambd) & (x <= lambd), 0.0, where(x > 0, x - lambd, x + lambd))


def tanhshrink(input):
    """x - tanh(x); an integer tensor gives float32, as PyTorch."""
    input = input if input.dtype.kind == "f" else input.to(dtype=backend.DEFAULT_FLOAT)
    return input - tanh(input)


def threshold(x, threshold, value):
    """x where x > threshold, else value (the gradient there 0; NaN stays NaN with gradient
    1), as PyTorch. An integer tensor stays integer, value truncated, as PyTorch."""
    threshold, value = (number_arg("threshold", n, v) for n, v in (("threshold", threshold),
                                                                   ("value", value)))
    if not isinstance(x, Tensor) or x.dtype.kind not in "iuf":
        raise TypeError(f"threshold: needs an integer or floating tensor, got "
                        f"{getattr(x, 'dtype', type(x).__name__)}")
    # a value x's dtype cannot hold is refused, as PyTorch (NaN or inf into an integer
    # tensor, 1e6 into float16: int() or the cast would fail bare or give inf)
    check_fill_value("threshold", value, x.dtype)
    if x.dtype.kind != "f":
        value = int(value)
    return where(x <= threshold, value, x)


def softmin(input, dim=None, *, dtype=None):
    """softmax(-x) along dim (dim None: PyTorch's deprecated implicit choice, with its
    warning); `dtype` casts x first, as softmax's."""
    input = cast_to(input, dtype)
    return along_dim(Softmax, -input, implicit_dim(input, dim, "softmin"), "softmin")


def gumbel_softmax(logits, tau=1.0, hard=False, eps=1e-10, dim=-1):
    """softmax((logits + g)/tau) along dim, g Gumbel(0, 1) noise drawn from the device's
    generator (as -log E, E = -log U exponential): a differentiable sample of the
    categorical distribution softmax(logits). hard=True gives the one-hot of its largest
    entry, with the soft sample's gradient (straight-through). eps is deprecated and
    unused, as in PyTorch (with its warning). Unlike PyTorch, tau must be > 0 (PyTorch
    returns NaN for 0)."""
    _floating(logits, "gumbel_softmax")
    if eps != 1e-10:
        warnings.warn("`eps` parameter is deprecated and has no effect.", stacklevel=2)
    if not number_arg("gumbel_softmax", "tau", tau) > 0:
        raise ValueError(f"gumbel_softmax: tau (the temperature) must be > 0, got {tau}")
    d = normalize_dim(dim, max(logits.ndim, 1), "gumbel_softmax")
    xp = logits.backend.xp
    u = creation.rand_like(logits)._data                  # [0, 1): log(u) < 0, so E > 0
    tiny = finfo(u.dtype).tiny
    gumbels = -xp.log(-xp.log(xp.maximum(u, tiny)))      # (u = 0 would give log(0))
    y = softmax((logits + Tensor._make(gumbels, logits.device)) / tau, d)
    if not hard:
        return y
    if y.ndim == 0:
        hot = xp.ones((), y.dtype)
    else:
        top = xp.expand_dims(xp.argmax(y._data, axis=d), d)
        classes = xp.arange(y.shape[d]).reshape([-1 if i == d else 1 for i in range(y.ndim)])
        hot = (classes == top).astype(y.dtype)
    return Tensor._make(hot, y.device) - y.detach() + y


def rrelu(x, lower=1.0 / 8, upper=1.0 / 3, training=False):
    """Randomised leaky ReLU (Xu et al. 2015): x where x > 0, else a·x. Training, a is drawn
    from U(lower, upper) for each element (from the device's generator), and is also the
    gradient there; otherwise a is the mean slope (lower + upper)/2, leaky_relu's."""
    _floating(x, "rrelu")
    lower, upper = (float(number_arg("rrelu", n, v)) for n, v in (("lower", lower),
                                                                  ("upper", upper)))
    if not lower <= upper:
        raise ValueError(f"rrelu: lower must be <= upper, got lower={lower}, upper={upper}")
    if not training:
        return leaky_relu(x, (lower + upper) / 2)
    xp = x.backend.xp
    a = creation.rand_like(x)._data * (upper - lower) + lower
    # x·k, k the slope where x <= 0 and exactly 1 elsewhere (NaN too, as PyTorch): k is the
    # gradient, a constant (the second derivative is 0)
    k = xp.where(x._data <= 0, a, 1).astype(x.dtype, copy=False)
    return x * Tensor._make(k, x.device)
