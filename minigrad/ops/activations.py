"""Activations beside relu/gelu. Leaky ReLU, hardtanh (ReLU6), ELU (SELU), softplus and
log-sigmoid are fused ops: one Function each, whose forward takes a few NumPy passes and
whose fast backward (`backward_arrays`) as many, beside a readable, twice-differentiable
`backward`. SiLU, GLU, Mish, softsign and PReLU are composed from the differentiable
elementwise ops, so their gradients and gradients of gradients come from those ops. The care
is in keeping every branch finite (a `where` sends a zero gradient into the branch it drops,
and 0·inf there would be NaN) and in taking PyTorch's side at each kink (at a NaN
input PyTorch's own kernels differ from element to element; here each rule is one).

Two NumPy costs shape the fused ops: `where` (and every masked copy) stalls on a mask with
no pattern, ~5 ms per million elements, so a choice between two values is made with
boolean arithmetic (x·[x > 0] is exact: a product with 0 or 1, a sum with 0); and NumPy's
expm1 and log1p are scalar code, ~6x slower than its vectorised exp, log and tanh, so they
are computed from those, to a few units in the last place."""
import contextlib
import functools

from minigrad import backend
from minigrad.args import number_arg
from minigrad.autograd import Function
from minigrad.grad_mode import autocast_float32, autocast_half
from minigrad.ops.blocks import in_pieces, contiguous
from minigrad.ops.elementwise import where, exp, log, tanh, sigmoid, relu, clip
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


def _autocast_float32(fn):
    """x cast up first under autocast (grad_mode.autocast_float32): float32 out, as torch's
    autocast gives for the functions on its float32 list."""
    @functools.wraps(fn)
    def wrapped(x, *args, **kwargs):
        return fn(autocast_float32(x), *args, **kwargs)
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


def _in_pieces(op, chain, *arrays, outputs=1):
    """chain(*pieces of the arrays, *pieces of `outputs` new arrays, which it fills) for a
    fused op's forward or fast backward, a chain of in-place passes: on cache-sized pieces
    on the CPU (ops/blocks.py), so that its temporaries stay in cache, on whole arrays on a
    GPU. The new arrays are returned. Pieces are 1-d (a 0-d array's too, so that a chain may
    write into its temporaries: NumPy gives a scalar for a 0-d result)."""
    xp = op.xp
    flat = [contiguous(xp, a).reshape(-1) for a in arrays]
    new = [xp.empty(flat[0].shape, flat[0].dtype) for _ in range(outputs)]
    in_pieces(backend.get(op.device), chain, *flat, *new)
    return [a.reshape(arrays[0].shape) for a in new]


def _log1p_small(xp, u, out):
    """out = log(1 + u) for 0 ≤ u ≤ 1, as log(w) - c/w with w = 1 + u rounded and c =
    (w - 1) - u exactly what that rounding added (see log1p): 3.4 ulp at most in float32."""
    xp.add(u, 1, out=out)                                # w
    c = out - 1
    c -= u
    c /= out
    xp.log(out, out=out)
    out -= c


def _sigmoid_grad(xp, u, right, g, d):
    """d = g·σ(v) from u = e^-|v|: e^min(v, 0)/(1 + u), whose numerator is max(u, [v ≥ 0])
    (`right`), u left of 0 and 1 right of it; a NaN stays NaN."""
    xp.maximum(u, right, out=d)
    d /= u + 1
    d *= g


class LeakyRelu(Function):
    """x for x > 0, else slope·x (NaN too), as x·k with k exactly 1 or slope, which is also
    the gradient: slope at 0, as PyTorch's, and at NaN."""
    fresh_grads = True                                   # see Function.fresh_grads

    def forward(self, x, negative_slope):
        self.slope = negative_slope
        self.k, y = _in_pieces(self, self._forward, x, outputs=2)
        return y

    def _forward(self, x, k, y):
        positive = x > 0
        self.xp.copyto(k, ~positive)
        k *= self.slope
        k += positive                                    # 1 or slope, exactly
        self.xp.multiply(x, k, out=y)                    # (-inf·0 = NaN, as PyTorch's)

    def backward(self, g):                               # d/dx = 1 for x > 0, else slope
        return where(self.inputs[0] > 0, g, g * self.slope)

    def backward_arrays(self, g):
        return (g * self.k,)


@_float32_inside
def leaky_relu(x, negative_slope=0.01):
    """x where x > 0, else negative_slope·x; at 0 the gradient is negative_slope, as
    PyTorch (whose float16 result is that of float32, rounded once, as here: the slope
    rounded to float16 first was 1 ulp off)."""
    _floating(x, "leaky_relu")
    return LeakyRelu.apply(x, negative_slope=float(
        number_arg("leaky_relu", "negative_slope", negative_slope)))


class Softplus(Function):
    """log(1 + e^(βx))/β, and x itself where βx > threshold (as PyTorch)."""
    fresh_grads = True                                   # see Function.fresh_grads

    def forward(self, x, beta, threshold):
        self.beta, self.threshold = beta, threshold
        self.u, out = _in_pieces(self, self._forward, x, outputs=2)
        return out

    def _forward(self, x, u, out):
        xp = self.xp
        z = x if self.beta == 1 else x * self.beta
        # log(1 + eᶻ) = max(z, 0) + log(1 + e^-|z|): neither part overflows
        xp.abs(z, out=u)
        xp.negative(u, out=u)
        xp.exp(u, out=u)                                 # e^-|z|, for backward too
        _log1p_small(xp, u, out)
        out += xp.maximum(z, 0)
        if self.beta != 1:
            out /= self.beta
        xp.copyto(out, x, where=z > self.threshold)      # (seldom true: no stall)

    def backward(self, g):                               # d/dx = σ(βx), 1 above the threshold
        z = self.inputs[0] * self.beta
        # σ at the threshold itself taken at a constant: PyTorch's second derivative is 0 there
        s = sigmoid(where(z >= self.threshold, self.threshold, z))
        return g * where(z > self.threshold, 1.0, s)

    def backward_arrays(self, g):
        return tuple(_in_pieces(self, self._backward, self.inputs[0]._data, self.u, g))

    def _backward(self, x, u, g, d):
        z = x if self.beta == 1 else x * self.beta
        _sigmoid_grad(self.xp, u, z >= 0, g, d)
        self.xp.copyto(d, g, where=z > self.threshold)


@_autocast_float32
@_float32_inside
def softplus(input, beta=1.0, threshold=20.0):
    """log(1 + e^(βx))/β, and x itself where βx > threshold (as PyTorch; there the two agree
    to float precision)."""
    _floating(input, "softplus")
    beta, threshold = (float(number_arg("softplus", n, v))
                       for n, v in (("beta", beta), ("threshold", threshold)))
    return Softplus.apply(input, beta=beta, threshold=threshold)


def _overflow_quietly(xp, when=True):
    """NumPy's errstate without its overflow warning (a GPU's array module warns of none,
    and has no errstate)."""
    if when and hasattr(xp, "errstate"):
        return xp.errstate(over="ignore")
    return contextlib.nullcontext()


class Elu(Function):
    """scale·x for x > 0, else scale·α(e^(s·x) - 1), s the input scale: ELU (scale and s 1),
    SELU and CELU (s = 1/α), as PyTorch's one elu kernel. At 0 exactly it is the line
    scale·α·s·x: gradient scale·α·s and second derivative 0, PyTorch's values there (its
    backward takes x ≤ 0 as the left branch, its double backward only x < 0). A NaN gets a
    NaN gradient."""
    fresh_grads = True                                   # see Function.fresh_grads

    def forward(self, x, alpha, scale, input_scale=1.0):
        self.alpha, self.scale, self.input_scale = alpha, scale, input_scale
        return _in_pieces(self, self._forward, x)[0]

    def _forward(self, x, out):
        xp = self.xp
        t = xp.minimum(x, 0)
        if self.input_scale < 0:     # CELU with α < 0: e^(s·x) grows on the left, to inf
            t *= self.input_scale
            with _overflow_quietly(xp):
                xp.expm1(t, out=t)
            t *= self.alpha * self.scale
        else:
            # eˣ - 1 of min(x, 0) as 2t/(1 - t), t = tanh(x/2): full precision near 0, where
            # exp(x) - 1 loses digits (2.5 ulp in float32, as good as expm1, in one pass of
            # NumPy's vectorised tanh)
            t *= 0.5 * self.input_scale
            xp.tanh(t, out=t)
            xp.subtract(1, t, out=out)
            t *= 2 * self.alpha * self.scale
            t /= out                                     # scale·α(e^min(x, 0) - 1)
        xp.maximum(x, 0, out=out)
        if self.scale != 1:
            out *= self.scale
        out += t                                         # one of the two is 0

    def backward(self, g):                               # d/dx = scale, or scale·α·s·e^(s·x)
        x, s = self.inputs[0], self.input_scale
        # e^(s·x) sees 0 for x ≥ 0: no overflow on the right (no 0·inf in a second
        # derivative), and at 0 a constant, whose derivative, 0, is PyTorch's second
        # derivative there
        left = (self.alpha * self.scale * s) * exp(where(x >= 0, 0.0, x if s == 1 else x * s))
        return g * where(x > 0, self.scale, left)

    def backward_arrays(self, g):
        return tuple(_in_pieces(self, self._backward, self.inputs[0]._data, g))

    def _backward(self, x, g, d):
        xp = self.xp
        xp.minimum(x, 0, out=d)
        if self.input_scale != 1:
            d *= self.input_scale
        with _overflow_quietly(xp, self.input_scale < 0):    # (inf for CELU with α < 0)
            xp.exp(d, out=d)                             # e^(s·x) left of 0, 1 right of it
        d *= x <= 0                                      # (a NaN stays NaN)
        d *= self.alpha * self.input_scale
        d += x > 0                                       # α·s·e^(s·x), or exactly 1
        if self.scale != 1:
            d *= self.scale
        d *= g


@_float32_inside
def elu(x, alpha=1.0):
    """x where x > 0, else α(eˣ - 1), with expm1's precision near 0, and its gradient eˣ
    computed from x, so it keeps its digits for x ≪ 0 too (the output + 1 would not)."""
    _floating(x, "elu")
    return Elu.apply(x, alpha=float(number_arg("elu", "alpha", alpha)), scale=1.0)


_SELU_ALPHA = 1.6732632423543772848170429916717
_SELU_SCALE = 1.0507009873554804934193349852946


@_float32_inside
def selu(x):
    """Self-normalising ELU (Klambauer et al. 2017): scale·elu(x, α) with PyTorch's fixed
    α ≈ 1.6733 and scale ≈ 1.0507; at 0 the gradient is scale·α, as PyTorch."""
    return Elu.apply(_floating(x, "selu"), alpha=_SELU_ALPHA, scale=_SELU_SCALE)


def glu(input, dim=-1):
    """Gated linear unit: x split in halves a, b along dim, then a·σ(b)."""
    _floating(input, "glu")
    if input.ndim == 0:
        raise ValueError("glu: does not support a 0-d tensor (scalar): the halving dim "
                         "must have an even size")
    d = normalize_dim(dim, input.ndim, "glu")
    if input.shape[d] % 2:
        raise ValueError(f"glu: halving dimension must be even, but dimension {d} is size "
                         f"{input.shape[d]} (input shape {input.shape})")
    half = input.shape[d] // 2
    a, b = split(input, [half, half], d)                     # (sizes: an empty dim halves too)
    return a * sigmoid(b)


class Hardtanh(Function):
    """x limited to [lo, hi]; the gradient is 1 strictly inside, else 0 (at the bounds too,
    as PyTorch's; and at NaN)."""
    fresh_grads = True                                   # see Function.fresh_grads

    def forward(self, x, lo, hi):
        self.lo, self.hi = lo, hi
        return self.xp.clip(x, lo, hi)                   # (a NaN stays NaN)

    def backward(self, g):
        x = self.inputs[0]
        return where((x > self.lo) & (x < self.hi), g, 0.0)

    def backward_arrays(self, g):
        return tuple(_in_pieces(self, self._backward, self.inputs[0]._data, g))

    def _backward(self, x, g, d):
        # where(inside, g, 0) as g·inside, the same but where an inf or NaN of g meets a 0
        # (0·inf = NaN): 0 again there, with a mask almost always all False, no stall
        inside = (x > self.lo) & (x < self.hi)
        self.xp.multiply(g, inside, out=d)
        self.xp.copyto(d, 0, where=self.xp.isnan(d) & ~inside)


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
    return Hardtanh.apply(x, lo=float(min_val), hi=float(max_val))


def relu6(x):
    """min(max(x, 0), 6): hardtanh(x, 0, 6), so the gradient at 0 and at 6 is 0."""
    return hardtanh(x, 0.0, 6.0)


class LogSigmoid(Function):
    """log σ(x) = -log(1 + e⁻ˣ), as the overflow-free min(x, 0) - log(1 + e^-|x|): exact
    for large |x| in both directions (x on the left, -e⁻ˣ on the right)."""
    fresh_grads = True                                   # see Function.fresh_grads

    def forward(self, x):
        self.u, out = _in_pieces(self, self._forward, x, outputs=2)
        return out

    def _forward(self, x, u, out):
        xp = self.xp
        xp.abs(x, out=u)
        xp.negative(u, out=u)
        xp.exp(u, out=u)                                 # e^-|x|, for backward too
        _log1p_small(xp, u, out)
        xp.subtract(xp.minimum(x, 0), out, out=out)

    def backward(self, g):                               # d/dx = σ(-x)
        return g * sigmoid(-self.inputs[0])

    def backward_arrays(self, g):
        return tuple(_in_pieces(self, self._backward, self.inputs[0]._data, self.u, g))

    def _backward(self, x, u, g, d):
        _sigmoid_grad(self.xp, u, x <= 0, g, d)


@_float32_inside
def logsigmoid(input):
    """log σ(x), exact in both tails; its gradient is σ(-x)."""
    return LogSigmoid.apply(_floating(input, "logsigmoid"))


@_float32_inside
def mish(x):
    """Mish (Misra 2019): x·tanh(softplus(x)), softplus without a threshold (as PyTorch's
    mish) but overflow-free."""
    return x * tanh(log1p_exp(_floating(x, "mish")))


@_float32_inside
def softsign(input):
    """x / (1 + |x|), as x·(1 + |x|)⁻¹: the derivative of the power, -(1 + |x|)⁻², goes
    quietly to 0 for a huge x, where a quotient's derivative, x/(1 + |x|)², would square
    the denominator and overflow. An integer tensor gives float32, as PyTorch."""
    input = input if input.dtype.kind == "f" else input.to(dtype=backend.DEFAULT_FLOAT)
    return input * (input.abs() + 1) ** -1.0


def prelu(input, weight):
    """x where x > 0, else weight·x, with a learnable slope: one for all (weight.numel() ==
    1) or one per channel (dim 1 of x, as PyTorch). At 0 the gradient is the slope and the
    slope's gradient 0, as PyTorch; so are both mixed second derivatives there (PyTorch's
    double backward counts x = 0 as positive), hence the detached slope at x = 0 exactly."""
    _floating(input, "prelu")
    if not isinstance(weight, Tensor):
        raise TypeError(f"prelu: weight must be a tensor, got {type(weight).__name__}")
    input, weight = autocast_half(input), autocast_half(weight)     # on torch's float16 list
    if weight.dtype != input.dtype:
        raise TypeError(f"prelu: type promoting is not supported: input is {input.dtype}, "
                        f"weight {weight.dtype}; give both the same dtype")
    if weight.ndim > 1:
        raise ValueError(f"prelu: expected weight to be a 0-d or 1-d tensor, got shape "
                         f"{weight.shape}")
    n = weight.numel()
    channels = input.shape[1] if input.ndim > 1 else 1
    if n != 1 and (input.ndim == 0 or n != channels):
        where_ = "its dim 1" if input.ndim > 1 else "an input of fewer than 2 dims has 1"
        raise ValueError(f"prelu: weight has {n} parameters, but the input of shape "
                         f"{input.shape} has {channels} channel{'s' * (channels != 1)} "
                         f"({where_}); give 1 parameter, or one per channel")
    if weight.ndim != input.ndim:                            # (C,) -> (1, C, 1, ...)
        weight = weight.reshape([n if i == 1 else 1 for i in range(input.ndim)])
    return where(input > 0, input, where(input < 0, weight * input, weight.detach() * input))
