"""torch's remaining elementwise top-level functions: frexp and nextafter (the library's
own), the Bessel function i0 (and i1, its derivative), the regularised incomplete gammas
igamma/igammac (SciPy's on the CPU, as ops/special.py), and, built on existing ops,
mvlgamma, renorm and the real-valued forms of torch's complex helpers (angle, real, imag,
conj, isreal). The indexing ones are torch_extra_index.py's."""
import math
from collections import namedtuple

from minigrad import backend
from minigrad.args import number_arg
from minigrad.autograd import Function
from minigrad.grad_mode import autocast_float32
from minigrad.tensor import Tensor
from minigrad.ops.activations import _overflow_quietly
from minigrad.ops.elementwise import _floating, exp, where
from minigrad.ops.promotion import _pair, in_float32
from minigrad.ops.reduce import normalize_dim
from minigrad.ops.special import _computed, lgamma, xlogy

Frexp = namedtuple("frexp", ("mantissa", "exponent"))


def _tensor(x, op, name="input"):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    return x


def _flag(op, name, value):
    """A bool argument, as PyTorch's (accumulate=1 is refused there too)."""
    if not isinstance(value, bool):
        raise TypeError(f"{op}: {name} must be a bool, got {value!r}")
    return value


def _int(op, name, value):
    """An int argument: never a float or a bool (both refused by PyTorch)."""
    if not backend.is_integer(value) or isinstance(value, bool):
        raise TypeError(f"{op}: {name} must be an int, got {value!r}")
    return int(value)


def _float_only(x, op):
    if not backend.is_floating(_tensor(x, op).dtype):
        raise TypeError(f"{op}: needs a floating-point tensor, got {x.dtype} (as PyTorch); "
                        f"convert with .float() first")
    return x


# ---- elementwise ---------------------------------------------------------------------------
class Mantissa(Function):
    """m of x = m·2ᵉ, |m| in [0.5, 1) (x itself at 0, ±inf, NaN); e is saved, a constant of
    the graph: dm = dx / 2ᵉ, as PyTorch's."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, a):
        m, e = self.xp.frexp(a)
        self.exponent = e.astype(backend.int32)
        return m
    def backward(self, g):
        # times 2⁻ᵉ, exact: in float16, 2ᵉ itself would overflow where 2⁻ᵉ does not. Past a
        # subnormal's 2⁻ᵉ overflows to inf, as PyTorch's g / 2ᵉ (quietly, as there)
        wide = backend.promote_float(g.dtype, backend.float32)
        with _overflow_quietly(self.xp):
            scale = self.xp.exp2(-self.exponent.astype(wide)).astype(g.dtype)
        return g * self.const(scale)


class Nextafter(Function):
    """The next representable value after a toward b. Its gradient is PyTorch's: g for a
    (the step is below rounding) where a != b, 0 where a == b (the result is b there, not
    a step from a); zeros for b."""
    needs_values = False
    def forward(self, a, b):
        self.b_shape, self.moves = b.shape, a != b          # (NaN: != everything, as there)
        return self.xp.nextafter(a, b)
    def backward(self, g):
        return (where(self.const(self.moves), g, 0.0),
                self.const(self.xp.zeros(self.b_shape, g.dtype)))


class I0(Function):
    """The modified Bessel function of the first kind, order 0: d i0(x) = i1(x) dx."""
    def forward(self, a): return _computed(self, "i0", "i0", a)
    def backward(self, g): return g * I1.apply(self.inputs[0])


class I1(Function):
    """Order 1 (i0's derivative): d i1(x) = (i0(x) - i1(x)/x) dx, 1/2 at x = 0 (the limit)."""
    def forward(self, a): return _computed(self, "i1", "i0", a)
    def backward(self, g):
        x = self.inputs[0]
        zero = self.const(x._data == 0)
        safe = where(zero, 1.0, x)                       # no 0/0 in the branch not taken
        return g * where(zero, 0.5, I0.apply(x) - I1.apply(safe) / safe)


class Igamma(Function):
    """P(a, x) = γ(a, x)/Γ(a) (upper=False) or Q(a, x) = 1 - P (upper=True), SciPy's
    gammainc/gammaincc. d/dx P = xᵃ⁻¹e⁻ˣ/Γ(a); d/da is not implemented, as PyTorch's."""
    def forward(self, a, x, upper):
        self.upper = upper
        name = "gammaincc" if upper else "gammainc"
        return _computed(self, name, "igammac" if upper else "igamma", x, a)
    def backward(self, g):
        a, x = self.inputs
        op = "igammac" if self.upper else "igamma"
        if self.needs_input_grad[0]:
            raise NotImplementedError(f"{op}: the derivative with respect to input (a) is not "
                                      f"implemented, as PyTorch's; detach() it")
        density = exp(xlogy(a - 1, x) - x - lgamma(a))
        return None, (-g if self.upper else g) * density


def frexp(input):
    """(mantissa, exponent) with x = mantissa·2^exponent, as torch.frexp: |mantissa| in
    [0.5, 1) (0, ±inf and NaN as they are, exponent 0), the exponent int32. Floats only;
    the mantissa is differentiable (dm = dx / 2^exponent)."""
    m = Mantissa.apply(_float_only(input, "frexp"))
    exponent = input.backend.xp.frexp(input._data)[1].astype(backend.int32)
    return Frexp(m, Tensor._make(exponent, input.device))


def nextafter(input, other):
    """The next floating-point value after input toward other, elementwise, as
    torch.nextafter: the two broadcast (float32 with float64 in float64); floats only."""
    x, y = _pair(_tensor(input, "nextafter"), other)
    if not (backend.is_floating(x.dtype) and backend.is_floating(y.dtype)):
        raise TypeError(f"nextafter: needs floating-point tensors, got {x.dtype} and "
                        f"{y.dtype} (as PyTorch)")
    wide = backend.promote_float(x.dtype, y.dtype)
    return Nextafter.apply(x.to(dtype=wide), y.to(dtype=wide))


def i0(input):
    """The modified Bessel function of the first kind of order 0, as torch.i0 (integers give
    float32). SciPy's on the CPU."""
    return I0.apply(_floating(_tensor(input, "i0")))


def _igamma(input, other, upper):
    op = "igammac" if upper else "igamma"
    a, x = _pair(_tensor(input, op), _tensor(other, op, "other"))
    if not (backend.is_floating(a.dtype) and backend.is_floating(x.dtype)):
        raise TypeError(f"{op}: needs floating-point tensors, got {a.dtype} and {x.dtype} (as "
                        f"PyTorch); convert with .float() first")
    wide = backend.promote_float(a.dtype, x.dtype)
    if wide == backend.float16:
        return in_float32(lambda p, q: Igamma.apply(p, q, upper=upper), a, x)
    return Igamma.apply(a.to(dtype=wide), x.to(dtype=wide), upper=upper)


def igamma(input, other):
    """The regularised lower incomplete gamma function P(input, other), as torch.igamma;
    differentiable in other only (as PyTorch's)."""
    return _igamma(input, other, False)


def igammac(input, other):
    """The regularised upper incomplete gamma function Q = 1 - P, as torch.igammac."""
    return _igamma(input, other, True)


def mvlgamma(input, p):
    """The log of the multivariate gamma function of dimension p, as torch.mvlgamma:
    Σᵢ₌₀^(p-1) lgamma(x - i/2) + p(p-1)/4·log π (integers give float32)."""
    if _int("mvlgamma", "p", p) < 1:
        raise ValueError(f"mvlgamma: p must be >= 1, got {p!r}")
    if _tensor(input, "mvlgamma").dtype == backend.bool_:
        raise TypeError("mvlgamma: the input may not be a bool tensor (as PyTorch)")
    input = _floating(input)
    shifts = Tensor._make(input.backend.xp.arange(int(p), dtype=input.dtype) * -0.5, input.device)
    return lgamma(input.unsqueeze(-1) + shifts).sum(-1) + p * (p - 1) / 4 * math.log(math.pi)


def renorm(input, p, dim, maxnorm):
    """x with each slice along dim whose p-norm exceeds maxnorm scaled down to it, as
    torch.renorm (by maxnorm / (norm + 1e-7), PyTorch's factor; the norm is differentiated
    through, as there)."""
    from minigrad.ops.norms import p_norm
    op = "renorm"
    _float_only(input, op)
    if input.ndim < 2:
        raise ValueError(f"{op}: needs a tensor with at least 2 dims, got shape {input.shape}")
    p, maxnorm = (float(number_arg(op, n, v)) for n, v in (("p", p), ("maxnorm", maxnorm)))
    if not p > 0:
        raise ValueError(f"{op}: p must be > 0 (the norm's order), got {p}")
    if not maxnorm >= 0:
        raise ValueError(f"{op}: maxnorm must be >= 0, got {maxnorm}")
    d = normalize_dim(dim, input.ndim, op)
    input = autocast_float32(input)             # (on torch's float32 autocast list)
    norms = p_norm(input, p, tuple(i for i in range(input.ndim) if i != d), True, op)
    return input * where(norms._data > maxnorm, maxnorm / (norms + 1e-7), 1.0)


# ---- torch's complex helpers, for real tensors (as PyTorch answers for real input) ---------
class Angle(Function):
    """The argument of a real number: π below 0, else 0 (NaN stays NaN); gradient 0."""
    needs_values = False
    def forward(self, a):
        return self.xp.where(a < 0, math.pi, self.xp.where(a != a, a, 0)).astype(a.dtype)
    def backward(self, g): return self.const(self.xp.zeros(g.shape, g.dtype))


def angle(input):
    """As torch.angle on real input: π where x < 0, 0 elsewhere, NaN at NaN (integers give
    float32)."""
    return Angle.apply(_floating(_tensor(input, "angle")))


def real(input):
    """x itself: a real tensor is its own real part (as torch.real)."""
    return _tensor(input, "real")


def conj(input):
    """x itself: a real tensor is its own conjugate (as torch.conj)."""
    return _tensor(input, "conj")


def imag(input):
    _tensor(input, "imag")
    raise RuntimeError("imag: not defined for a real tensor (minigrad has no complex "
                       "dtypes; PyTorch refuses it too for non-complex dtypes)")


def isreal(input):
    """True everywhere: every element of a real tensor is real (as torch.isreal)."""
    return Tensor._make(input.backend.xp.ones(_tensor(input, "isreal").shape, backend.bool_), input.device)
