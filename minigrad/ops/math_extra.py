"""The rest of torch's elementwise math: the inverse trigonometric and hyperbolic functions
(asin ... atanh), erfc, sinc, hypot, copysign, logaddexp(2), the NaN-ignoring fmax/fmin and
heaviside (each a Function with its derivative beside it), the predicates signbit, isposinf,
isneginf (boolean, outside the graph), and the compositions deg2rad, rad2deg, float_power,
ldexp, positive, sgn, fix. Integer and bool inputs give float32 where PyTorch's do; where
PyTorch refuses integers (hypot, logaddexp), so do we."""
import math

from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.elementwise import _floating, exp, sigmoid, where
from minigrad.ops.math import cos, sign, trunc
from minigrad.ops.promotion import _pair
from minigrad.ops.special import _computed


# ---- inverse trigonometric and hyperbolic functions ------------------------------------
# The derivatives' 1 - x² as (1 - x)(1 + x): exact near ±1, where x·x rounds away the
# digits that matter (float32 asin'(0.9999) 2.5e-5 off, 400 ulps). At ±1 it is +0, so the
# gradient is +inf (-inf for acos) there, as PyTorch's
class Asin(Function):
    def forward(self, a): return self.xp.arcsin(a)       # d asin x = dx / √(1 - x²)
    def backward(self, g):
        x = self.inputs[0]
        return g * ((1 - x) * (1 + x)).rsqrt()


class Acos(Function):
    def forward(self, a): return self.xp.arccos(a)       # d acos x = -dx / √(1 - x²)
    def backward(self, g):
        x = self.inputs[0]
        return -g * ((1 - x) * (1 + x)).rsqrt()


class Atan(Function):
    def forward(self, a): return self.xp.arctan(a)       # d atan x = dx / (1 + x²)
    def backward(self, g):
        x = self.inputs[0]
        return g / (1 + x * x)


class Asinh(Function):
    def forward(self, a): return self.xp.arcsinh(a)      # d asinh x = dx / √(x² + 1)
    def backward(self, g):
        x = self.inputs[0]
        return g * (x * x + 1).rsqrt()


class Acosh(Function):
    def forward(self, a): return self.xp.arccosh(a)      # d acosh x = dx / √(x² - 1)
    def backward(self, g):
        x = self.inputs[0]
        # + 0.0 turns the -0 of x = -1 into +0: the gradient there is +inf, as PyTorch's
        return g * ((x - 1) * (x + 1) + 0.0).rsqrt()


class Atanh(Function):
    def forward(self, a): return self.xp.arctanh(a)      # d atanh x = dx / (1 - x²)
    def backward(self, g):
        x = self.inputs[0]
        return g / ((1 - x) * (1 + x))


class Erfc(Function):
    """1 - erf(x), the library's own (1 - erf(x) cancels to 0 for x > 4 in float32)."""
    def forward(self, a): return _computed(self, "erfc", "erfc", a)
    def backward(self, g):                               # d erfc x = -2/√π e^(-x²) dx
        x = self.inputs[0]
        return g * (-2 / math.sqrt(math.pi)) * exp(-x * x)


class Sinc(Function):
    """sin(πx)/(πx), 1 at 0 (float16 computed in float32, as PyTorch)."""
    def forward(self, a):
        xp = self.xp
        x = a.astype(xp.float32) if a.dtype == backend.float16 else a
        zero = x == 0
        y = xp.where(zero, 1, x) * math.pi               # no 0/0 computed at 0
        return xp.where(zero, 1, xp.sin(y) / y).astype(a.dtype, copy=False)
    def backward(self, g):                               # d sinc x = (cos πx - sinc x)/x dx
        x = self.inputs[0]
        # near 0 that difference cancels (torch's gradient at 1e-8 is 36% off), and at 0 it
        # is 0/0: there the series π·(-y/3 + y³/30 - y⁵/840 + y⁷/45360) in y = πx, exact to
        # float64 for |y| < 0.1, whose derivative at 0 is the true -π²/3 (torch's is NaN)
        small = self.const(self.xp.abs(x._data) < 0.1 / math.pi)
        far = where(small, 1.0, x)                       # no 0/0 in the branch not taken
        y = where(small, x, 0.0) * math.pi
        y2 = y * y
        series = y * (-1 / 3 + y2 * (1 / 30 + y2 * (-1 / 840 + y2 / 45360))) * math.pi
        return g * where(small, series, (cos(far * math.pi) - Sinc.apply(far)) / far)


# ---- binary ------------------------------------------------------------------------------
class Hypot(Function):
    """√(a² + b²) without overflow or underflow (the library's hypot: 1e200 and 1e-200 stay
    finite, where the squares would not)."""
    def forward(self, a, b): return self.xp.hypot(a, b)  # dh = (a da + b db) / h
    def backward(self, g):
        a, b = self.inputs
        h = self.output()
        # 0 at the origin, where h has no gradient (PyTorch gives 0/0 = NaN; 0 is what
        # norm gives at a zero vector): filled after the division, as atan2's
        origin = self.const((a._data == 0) & (b._data == 0))
        h = h.masked_fill(origin, 1.0)
        return (g * a / h).masked_fill(origin, 0.0), (g * b / h).masked_fill(origin, 0.0)


class Copysign(Function):
    """|a| with the sign of b (-0.0 counts as negative). d/da = ±1, 0 at a = 0 (as PyTorch),
    and NaN where a is NaN; at a = ±inf ±1, where PyTorch's result/a is inf/inf = NaN.
    d/db = 0, the gradient of a sign (zeros, as PyTorch)."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, b):
        xp = self.xp
        out = xp.copysign(a, b)
        ratio = xp.where(xp.signbit(a) == xp.signbit(out), 1.0, -1.0)
        self.ratio = xp.where(a == 0, 0.0, xp.where(xp.isnan(a), xp.nan, ratio)).astype(
            a.dtype, copy=False)
        self.b_shape = b.shape
        return out
    def backward(self, g):
        return g * self.const(self.ratio), self.const(self.xp.zeros(self.b_shape, g.dtype))


class Logaddexp(Function):
    """log(eᵃ + eᵇ) without overflow (the library's logaddexp: max + log1p(e^-|a-b|)); base
    2 with base=2. d/da = σ((a - b)·ln base), PyTorch's (NaN where a = b = ±inf, as there)."""
    def forward(self, a, b, base):
        self.scale = 1.0 if base == math.e else math.log(base)
        return (self.xp.logaddexp if base == math.e else self.xp.logaddexp2)(a, b)
    def backward(self, g):
        a, b = self.inputs
        d = a - b if self.scale == 1.0 else (a - b) * self.scale
        return g * sigmoid(d), g * sigmoid(-d)


class Fmax(Function):
    """The larger of a and b, or the one that is not NaN (NaN only where both are). The
    gradient, as PyTorch's, goes all to a where a >= b (ties too) or b is NaN, else to b."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, b, smaller):
        xp = self.xp
        wins = (a <= b) if smaller else (a >= b)
        self.to_a = wins | xp.isnan(b) if a.dtype.kind == "f" else wins
        return (xp.fmin if smaller else xp.fmax)(a, b)
    def backward(self, g):
        m = self.const(self.to_a)
        return where(m, g, 0.0), where(m, 0.0, g)


class Heaviside(Function):
    """0 where x < 0, `values` where x = 0, 1 where x > 0 (0 at NaN, as PyTorch). A step: the
    gradient to x is 0 (as floor's; PyTorch refuses this backward), to values 1 where x = 0."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, x, values):
        self.x_shape, self.zero = x.shape, x == 0
        return self.xp.where(self.zero, values, x > 0).astype(x.dtype, copy=False)
    def backward(self, g):
        return (self.const(self.xp.zeros(self.x_shape, g.dtype)),
                where(self.const(self.zero), g, 0.0))


# ---- what users call -------------------------------------------------------------------
def asin(input): return Asin.apply(_floating(input))
def acos(input): return Acos.apply(_floating(input))
def atan(input): return Atan.apply(_floating(input))
def asinh(input): return Asinh.apply(_floating(input))
def acosh(input): return Acosh.apply(_floating(input))
def atanh(input): return Atanh.apply(_floating(input))
def erfc(input): return Erfc.apply(_floating(input))
def sinc(input): return Sinc.apply(_floating(input))
arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh


def deg2rad(input): return _floating(input) * (math.pi / 180)
def rad2deg(input): return _floating(input) * (180 / math.pi)


def _promoted(a, b):
    """Both operands in one dtype, as PyTorch promotes them (a Python number is weak): a
    float16 or float32 tensor beside a float64 one is cast, so each gradient comes back to
    its input's dtype through the cast."""
    a, b = _pair(a, b)
    if a.dtype != b.dtype and a.dtype.kind == b.dtype.kind == "f":
        wide = backend.promote_float(a.dtype, b.dtype)
        a, b = a.to(dtype=wide), b.to(dtype=wide)
    return a, b


def _floats(a, b, op, integers=True):
    """_promoted's operands as floats (integers give float32); with integers=False two
    integer/bool operands are refused, as PyTorch refuses them for op."""
    a, b = _promoted(a, b)
    if not integers and not backend.is_floating(a.dtype) and not backend.is_floating(b.dtype):
        raise TypeError(f"{op}: not implemented for integer or bool tensors (as PyTorch; got "
                        f"{a.dtype} and {b.dtype}); convert with .float() first")
    return _floating(a), _floating(b)


def hypot(input, other): return Hypot.apply(*_floats(input, other, "hypot", integers=False))
def copysign(input, other): return Copysign.apply(*_floats(input, other, "copysign"))
def logaddexp(input, other): return Logaddexp.apply(*_floats(input, other, "logaddexp", False), base=math.e)
def logaddexp2(input, other): return Logaddexp.apply(*_floats(input, other, "logaddexp2", False), base=2)


def fmax(input, other):
    """The elementwise maximum, ignoring NaN (the other value), as torch.fmax; integers stay
    integers."""
    return Fmax.apply(*_promoted(input, other), smaller=False)


def fmin(input, other):
    """The elementwise minimum, ignoring NaN, as torch.fmin."""
    return Fmax.apply(*_promoted(input, other), smaller=True)


def heaviside(input, values):
    """The step function: 0 where x < 0, values where x == 0, 1 where x > 0, as
    torch.heaviside; x and values (a tensor that broadcasts, or a number) share a dtype."""
    if not isinstance(input, Tensor):
        raise TypeError(f"heaviside: expected a Tensor, got {type(input).__name__}")
    if isinstance(values, Tensor) and values.dtype != input.dtype:
        raise TypeError(f"heaviside: x and values must have the same dtype (as PyTorch), got "
                        f"{input.dtype} and {values.dtype}; convert values with .to(x.dtype)")
    dtype = input.dtype
    input, values = _pair(input, values)
    if input.dtype != dtype:                             # a float number beside integers
        raise TypeError(f"heaviside: values {values.dtype} for x of dtype {dtype}; they "
                        f"must share a dtype (as PyTorch)")
    return Heaviside.apply(input, values)


def float_power(input, exponent):
    """a ** b computed in float64, the result float64 (as torch.float_power); the gradients
    come back in the inputs' dtypes."""
    if isinstance(input, Tensor):
        input = input.to(dtype=backend.float64)
    if isinstance(exponent, Tensor):
        exponent = exponent.to(dtype=backend.float64)
    elif backend.is_scalar(exponent) and not isinstance(exponent, bool):
        exponent = float(exponent)                                 # an int too: no integer power
    if not isinstance(input, Tensor):
        if not isinstance(exponent, Tensor):
            raise TypeError(f"float_power: expected a Tensor, got {type(input).__name__} and "
                            f"{type(exponent).__name__}")
        input = float(input) if backend.is_scalar(input) and not isinstance(input, bool) else input
    return input ** exponent


def ldexp(input, other):
    """x · 2^other, as torch.ldexp (other may be fractional): an integer exponent takes x's
    float dtype (float16 stays float16), and two integer tensors give float32. A float16 or
    float32 x meets an integer exponent in float64, where 2^other is exact (in float16 2^17
    is inf, but 1e-4·2^17 = 13.1), then is rounded back once."""
    if not isinstance(input, Tensor):
        raise TypeError(f"ldexp: expected a Tensor, got {type(input).__name__}")
    if not isinstance(other, Tensor):
        return input * 2.0 ** other
    if backend.is_floating(other.dtype):
        return input * other.exp2()
    dtype = input.dtype if backend.is_floating(input.dtype) else backend.DEFAULT_FLOAT
    wide = input.to(dtype=backend.float64) * other.to(dtype=backend.float64).exp2()
    return wide.to(dtype=dtype)


def positive(input):
    """x itself, as torch.positive (and unary +); refused for a bool tensor, as there."""
    if _tensor(input, "positive").dtype == backend.bool_:
        raise TypeError("positive (unary +): not supported for a bool tensor (as PyTorch); "
                        "convert with .long() or .float() first")
    return input


def sgn(input): return sign(_tensor(input, "sgn"))          # sign, for real tensors
def fix(input): return trunc(_tensor(input, "fix"))


def _tensor(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x


def _predicate(x, test):
    xp = _tensor(x, test).backend.xp
    if x.dtype.kind != "f":                              # integers are finite
        out = xp.zeros(x.shape, dtype=backend.bool_) if test != "signbit" else x._data < 0
    else:
        out = {"signbit": xp.signbit, "isposinf": lambda a: a == math.inf,
               "isneginf": lambda a: a == -math.inf}[test](x._data)
    return Tensor._make(xp.asarray(out), x.device)


def signbit(input):
    """Whether the sign bit is set (-0.0 and -NaN too), as torch.signbit: boolean."""
    return _predicate(input, "signbit")


def isposinf(input): return _predicate(input, "isposinf")
def isneginf(input): return _predicate(input, "isneginf")
