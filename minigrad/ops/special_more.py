"""torch.special's functions that torch's top level lacks (mg.special is their namespace):
the scaled Bessel functions i0e and i1e, erfcx, the normal distribution's ndtr, log_ndtr
and ndtri, entr, xlog1py and the Hurwitz zeta function, each differentiable as PyTorch's,
and the Bessel and Airy functions PyTorch gives no gradient (bessel_j0, ...,
scaled_modified_bessel_k1, spherical_bessel_j0, airy_ai). SciPy's special functions on the
CPU, cupyx.scipy.special's on a GPU, through the backend (ops/special.py's _computed)."""
import math

from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.elementwise import _floating, exp, where
from minigrad.ops.promotion import _pair, in_float32
from minigrad.ops.special import _computed
from minigrad.ops.torch_extra import I1, _tensor

_SQRT_2PI = math.sqrt(2 * math.pi)


# erfcx'(x) = -1/(√π x²)·Σₖ (-1)ᵏ (2k+1)!!/(2x²)ᵏ, asymptotically; past x = 10 these 16
# terms give it to float64's last bit
_ERFCX_BIG = 10.0
_ERFCX_SERIES = [1.0]
for _k in range(1, 16):
    _ERFCX_SERIES.append(-_ERFCX_SERIES[-1] * (2 * _k + 1) / 2)


class Erfcx(Function):
    """exp(x²)·erfc(x): d erfcx(x) = (2x·erfcx(x) - 2/√π) dx. The two terms nearly cancel
    for large x (erfcx's rounding grows by 2x²: float32's gradient at x = 1e3 was 27% off,
    PyTorch's too), so past _ERFCX_BIG the asymptotic series instead; below it float32
    and float16 compute in float64. Still differentiable (Tensor ops throughout)."""
    def forward(self, a): return _computed(self, "erfcx", "erfcx", a)
    def backward(self, g):
        x = self.inputs[0]
        wide = x if x.dtype == backend.float64 else x.to(dtype=backend.float64)
        big = self.const(wide._data > _ERFCX_BIG)
        near = 2 * wide * Erfcx.apply(wide) - 2 / math.sqrt(math.pi)
        u = 1 / where(big, wide, _ERFCX_BIG) ** 2      # the branch not taken stays finite
        series = _ERFCX_SERIES[-1]
        for c in reversed(_ERFCX_SERIES[:-1]):
            series = series * u + c
        grad = where(big, series * u * (-1 / math.sqrt(math.pi)), near)
        return g * (grad if grad.dtype == x.dtype else grad.to(dtype=x.dtype))


class Ndtr(Function):
    """The standard normal CDF Φ(x): dΦ = φ(x) dx, φ(x) = e^(-x²/2)/√(2π)."""
    def forward(self, a): return _computed(self, "ndtr", "ndtr", a)
    def backward(self, g):
        x = self.inputs[0]
        return g * exp(x * x * -0.5) / _SQRT_2PI


class LogNdtr(Function):
    """log Φ(x): d log Φ = φ(x)/Φ(x) dx = √(2/π) / erfcx(-x/√2), since Φ(x) =
    e^(-x²/2)·erfcx(-x/√2)/2. Far below 0, where φ and Φ underflow, the ratio (about -x)
    stays finite and exact; exp(-x²/2 - log Φ(x)) (PyTorch's) cancels two huge terms and
    is 6.5 times too big at x = -1e4 in float32. +inf at -inf (the limit; PyTorch's NaN)."""
    def forward(self, a): return _computed(self, "log_ndtr", "log_ndtr", a)
    def backward(self, g):
        x = self.inputs[0]
        return g * math.sqrt(2 / math.pi) / Erfcx.apply(x * -math.sqrt(0.5))


class Ndtri(Function):
    """Φ⁻¹(p): dy = dp / φ(y) = √(2π)·e^(y²/2) dp."""
    reads_inputs = False                                 # see Function.reads_inputs
    def forward(self, a): return _computed(self, "ndtri", "ndtri", a)
    def backward(self, g):
        y = self.output()
        return g * _SQRT_2PI * exp(y * y * 0.5)


class I0e(Function):
    """e^(-|x|)·i0(x): d i0e(x) = (i1e(x) - sign(x)·i0e(x)) dx."""
    def forward(self, a): return _computed(self, "i0e", "i0e", a)
    def backward(self, g):
        x = self.inputs[0]
        return g * (I1e.apply(x) - x.sign() * I0e.apply(x))


class I1e(Function):
    """e^(-|x|)·i1(x): d i1e(x) = (i0e(x) - i1e(x)·(sign(x) + 1/x)) dx, 1/2 at x = 0 (the
    limit)."""
    def forward(self, a): return _computed(self, "i1e", "i1e", a)
    def backward(self, g):
        x = self.inputs[0]
        zero = self.const(x._data == 0)
        safe = where(zero, 1.0, x)                       # no 0/0 in the branch not taken
        return g * where(zero, 0.5, I0e.apply(x) - I1e.apply(safe) * (safe.sign() + 1 / safe))


class Entr(Function):
    """-x·log x: 0 at 0, -inf below 0 (NaN stays NaN), as torch.special.entr. Gradient
    -(1 + log x), as PyTorch's (+inf at 0, NaN below 0)."""
    def forward(self, a):
        xp = self.xp
        positive = a > 0
        inside = -a * xp.log(xp.where(positive, a, 1))
        return xp.where(positive, inside, xp.where(a == 0, 0, xp.where(a < 0, -math.inf, a))
                        ).astype(a.dtype, copy=False)
    def backward(self, g): return g * -(1 + self.inputs[0].log())


class Xlog1py(Function):
    """x·log1p(y), 0 where x = 0 (unless y is NaN), as torch.special.xlog1py. Gradients as
    PyTorch's: d/dx = log1p(y) (as xlog1py(g, y); 0 where x = 0 and y <= -1), d/dy =
    x / (1 + y)."""
    def forward(self, a, b):
        xp = self.xp
        skip = (a == 0) & ~xp.isnan(b)                   # log1p(0) = 0 there: no log(0)
        return a * xp.log1p(xp.where(skip, 0, b))
    def backward(self, g):
        x, y = self.inputs
        gx = gy = None
        if self.needs_input_grad[0]:
            gx = where(self.const((x._data == 0) & (y._data <= -1)), 0.0, Xlog1py.apply(g, y))
        if self.needs_input_grad[1]:
            gy = g * x / (1 + y)
        return gx, gy


class Zeta(Function):
    """The Hurwitz zeta function ζ(x, q) = Σₖ (k + q)⁻ˣ, SciPy's zeta. d/dq = -x·ζ(x + 1, q);
    d/dx is not implemented, as PyTorch's."""
    def forward(self, a, b):
        return _computed(self, "zeta", "zeta", b, a)     # SciPy's zeta(a, b), in b's dtype
    def backward(self, g):
        x, q = self.inputs
        if self.needs_input_grad[0]:
            raise NotImplementedError("zeta: the derivative with respect to input (x) is not "
                                      "implemented, as PyTorch's; detach() it")
        return None, g * -x * Zeta.apply(x + 1, q)


# ---- without a gradient, as PyTorch's -------------------------------------------------------
def _no_grad(x, op, name, pick=None):
    """SciPy's special.name of x (its output `pick` where it gives several), as a tensor that
    does not require grad: PyTorch defines no derivative for these."""
    x = _floating(_tensor(x, op))
    wide = x._data.astype(backend.float32) if x.dtype == backend.float16 else x._data
    special = x.backend.special
    fn = getattr(special, name, None) if special is not None else None
    if fn is None:
        raise RuntimeError(f"{op}: needs the special function {name} (scipy.special's, or "
                           f"cupyx.scipy.special's on a GPU), which this device's library "
                           f"lacks; pip install scipy, or compute it on the CPU")
    out = fn(wide) if pick is None else fn(wide)[pick]
    return Tensor._make(out.astype(x.dtype, copy=False), x.device)


def bessel_j0(input):
    """The Bessel function of the first kind of order 0, as torch.special.bessel_j0 (no
    gradient, as PyTorch's)."""
    return _no_grad(input, "bessel_j0", "j0")


def bessel_j1(input):
    """The Bessel function of the first kind of order 1 (no gradient, as PyTorch's)."""
    return _no_grad(input, "bessel_j1", "j1")


def bessel_y0(input):
    """The Bessel function of the second kind of order 0 (no gradient, as PyTorch's)."""
    return _no_grad(input, "bessel_y0", "y0")


def bessel_y1(input):
    """The Bessel function of the second kind of order 1 (no gradient, as PyTorch's)."""
    return _no_grad(input, "bessel_y1", "y1")


def modified_bessel_i0(input):
    """The modified Bessel function of the first kind of order 0 (no gradient, as
    PyTorch's; torch.special.i0 is the differentiable one)."""
    return _no_grad(input, "modified_bessel_i0", "i0")


def modified_bessel_i1(input):
    """The modified Bessel function of the first kind of order 1 (no gradient, as
    PyTorch's; torch.special.i1 is the differentiable one)."""
    return _no_grad(input, "modified_bessel_i1", "i1")


def modified_bessel_k0(input):
    """The modified Bessel function of the second kind of order 0 (no gradient)."""
    return _no_grad(input, "modified_bessel_k0", "k0")


def modified_bessel_k1(input):
    """The modified Bessel function of the second kind of order 1 (no gradient)."""
    return _no_grad(input, "modified_bessel_k1", "k1")


def scaled_modified_bessel_k0(input):
    """eˣ·K₀(x), the scaled modified Bessel function of the second kind (no gradient)."""
    return _no_grad(input, "scaled_modified_bessel_k0", "k0e")


def scaled_modified_bessel_k1(input):
    """eˣ·K₁(x), the scaled modified Bessel function of the second kind (no gradient)."""
    return _no_grad(input, "scaled_modified_bessel_k1", "k1e")


def airy_ai(input):
    """The Airy function Ai(x), as torch.special.airy_ai (no gradient, as PyTorch's)."""
    return _no_grad(input, "airy_ai", "airy", pick=0)


def spherical_bessel_j0(input):
    """sin(x)/x, the spherical Bessel function of the first kind of order 0: 1 at 0, 0 at
    ±inf (no gradient, as PyTorch's)."""
    x = _floating(_tensor(input, "spherical_bessel_j0"))
    xp, a = x.backend.xp, x._data
    safe = xp.where((a == 0) | xp.isinf(a), 1, a)
    out = xp.where(a == 0, 1, xp.where(xp.isinf(a), 0, xp.sin(safe) / safe))
    return Tensor._make(out.astype(x.dtype, copy=False), x.device)


# ---- what users call ------------------------------------------------------------------------
def _unary(cls, input, op):
    return cls.apply(_floating(_tensor(input, op)))


def erfcx(input):
    """The scaled complementary error function exp(x²)·erfc(x), as torch.special.erfcx."""
    return _unary(Erfcx, input, "erfcx")


def ndtr(input):
    """The standard normal CDF, as torch.special.ndtr."""
    return _unary(Ndtr, input, "ndtr")


def log_ndtr(input):
    """The log of the standard normal CDF, accurate far below 0, as torch.special.log_ndtr."""
    return _unary(LogNdtr, input, "log_ndtr")


def ndtri(input):
    """The inverse of the standard normal CDF (±inf at 1 and 0, NaN outside [0, 1]), as
    torch.special.ndtri."""
    return _unary(Ndtri, input, "ndtri")


def i0e(input):
    """The exponentially scaled modified Bessel function of order 0, e^(-|x|)·i0(x)."""
    return _unary(I0e, input, "i0e")


def i1(input):
    """The modified Bessel function of the first kind of order 1, as torch.special.i1."""
    return _unary(I1, input, "i1")


def i1e(input):
    """The exponentially scaled modified Bessel function of order 1, e^(-|x|)·i1(x)."""
    return _unary(I1e, input, "i1e")


def entr(input):
    """The elementwise entropy -x·log x (0 at 0, -inf below 0), as torch.special.entr."""
    return _unary(Entr, input, "entr")


def _binary(cls, input, other, op):
    """cls on input and other broadcast (either may be a number, not both), in their
    promoted floating dtype; float16 through float32."""
    for name, v in (("input", input), ("other", other)):
        if not isinstance(v, Tensor) and not backend.is_scalar(v):
            raise TypeError(f"{op}: {name} must be a tensor or a number, got "
                            f"{type(v).__name__}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError(f"{op}: at least one of input and other must be a tensor")
    x, y = _pair(input, other)
    x, y = _floating(x), _floating(y)
    wide = backend.promote_float(x.dtype, y.dtype)
    if wide == backend.float16:
        return in_float32(lambda a, b: cls.apply(a, b), x, y)
    return cls.apply(x.to(dtype=wide), y.to(dtype=wide))


def xlog1py(input, other):
    """input·log1p(other), 0 where input = 0 (unless other is NaN), as
    torch.special.xlog1py: the two broadcast; either may be a number."""
    return _binary(Xlog1py, input, other, "xlog1py")


def zeta(input, other):
    """The Hurwitz zeta function ζ(input, other), as torch.special.zeta: differentiable in
    other only, as PyTorch's."""
    return _binary(Zeta, input, other, "zeta")
