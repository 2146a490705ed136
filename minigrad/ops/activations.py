"""Activations beside relu/gelu — SiLU, leaky ReLU, softplus, ELU — composed from the
differentiable elementwise ops, so their gradients and gradients of gradients come from
those ops and need no backward of their own. The care is in keeping every branch finite: a
`where` sends a zero gradient into the branch it drops, and 0·inf there would be NaN."""
from minigrad.ops.elementwise import where, exp, log, tanh, sigmoid, relu


def _floating(x, op):
    """PyTorch computes these activations for floating tensors only (its error for an
    integer or bool one is NotImplementedError; a TypeError here, as for other dtypes)."""
    if x.dtype.kind != "f":
        raise TypeError(f"{op}: needs a floating-point tensor, got {x.dtype}; convert "
                        f"with .float() or .double() first")
    return x


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


def silu(x):
    """SiLU (swish): x·σ(x)."""
    return x * sigmoid(_floating(x, "silu"))


def leaky_relu(x, negative_slope=0.01):
    """x where x > 0, else negative_slope·x; at 0 the gradient is negative_slope, as
    PyTorch."""
    _floating(x, "leaky_relu")
    return where(x > 0, x, x * negative_slope)


def softplus(x, beta=1.0, threshold=20.0):
    """log(1 + e^(βx))/β, and x itself where βx > threshold (as PyTorch; there the two agree
    to float precision). The other branch is the overflow-free log1p_exp, so no inf sits
    under the `where`."""
    z = _floating(x, "softplus") * beta
    return where(z > threshold, x, log1p_exp(z) / beta)


def elu(x, alpha=1.0):
    """x where x > 0, else α(eˣ - 1); at 0 the gradient is α, as PyTorch. eˣ - 1 is
    2t/(1 - t), t = tanh(x/2): full precision near 0 (as expm1; exp(x) - 1 loses digits
    there) and for x ≤ 0 never a division by a small number. That branch sees min(x, 0),
    so a large x puts no inf (and no 0·inf gradient) under the `where`."""
    positive = _floating(x, "elu") > 0
    t = tanh(where(positive, 0.0, x) * 0.5)
    return where(positive, x, (2 * alpha) * t / (1 - t))
