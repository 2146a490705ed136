"""Elementwise math beside exp/log/tanh: the smooth sin, cos, tan, sinh, cosh, log1p, expm1,
log2, log10, exp2, atan2 (each a Function with its derivative beside it); the
piecewise-constant sign, floor, ceil, round, trunc (`Step`: gradient 0) and frac; % and //
(remainder, floor_divide), fmod and div's rounding modes; nan_to_num; the compositions lerp, addcmul, addcdiv;
and the comparisons isclose, allclose, equal. Integer inputs follow PyTorch: the smooth
functions give float32, the rounding ones give the integers back unchanged."""
import math

from minigrad import backend
from minigrad.args import check_broadcast, number_arg
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.elementwise import _floating, _pair, where, lift, exp


class Sin(Function):
    def forward(self, a): return self.xp.sin(a)          # d sin x = cos x dx
    def backward(self, g): return g * cos(self.inputs[0])


class Cos(Function):
    def forward(self, a): return self.xp.cos(a)          # d cos x = -sin x dx
    def backward(self, g): return -g * sin(self.inputs[0])


class Tan(Function):
    reads_inputs = False                                 # see Function.reads_inputs
    def forward(self, a): return self.xp.tan(a)          # d tan x = (1 + tan²x) dx
    def backward(self, g):
        y = self.output()
        return g * (1 + y * y)


class Sinh(Function):
    def forward(self, a): return self.xp.sinh(a)         # d sinh x = cosh x dx
    def backward(self, g): return g * cosh(self.inputs[0])


class Cosh(Function):
    def forward(self, a): return self.xp.cosh(a)         # d cosh x = sinh x dx
    def backward(self, g): return g * sinh(self.inputs[0])


# log2, log10, exp2 as Functions, not log(x)/ln 2: the library's own are more exact (in
# float64 log10(1000) is 3, where ln(1000)/ln(10) is 2.9999999999999996)
class Log2(Function):
    def forward(self, a): return _rounded_once(self.xp.log2, a)   # d log₂x = dx / (x ln 2)
    def backward(self, g): return g / (self.inputs[0] * math.log(2))


class Log10(Function):
    def forward(self, a): return _rounded_once(self.xp.log10, a)  # d log₁₀x = dx / (x ln 10)
    def backward(self, g): return g / (self.inputs[0] * math.log(10))


def _rounded_once(fn, a):
    """fn(a), a float32 or float16 `a` computed in float64 and rounded once: NumPy's own
    float32 log10 and log2 are an ulp or more off on many inputs (log10(100) 2.0000002,
    log10(1000) 3.0000002; PyTorch's 2 and 3)."""
    return fn(a) if a.dtype.itemsize >= 8 else fn(a.astype("float64")).astype(a.dtype)


class Exp2(Function):
    reads_inputs = False                                 # see Function.reads_inputs
    def forward(self, a): return self.xp.exp2(a)         # d 2ˣ = 2ˣ ln 2 dx
    def backward(self, g): return g * self.output() * math.log(2)


class Atan2(Function):
    def forward(self, a, b): return self.xp.arctan2(a, b)   # θ of the point (b, a)
    def backward(self, g):                               # dθ = (b da - a db) / (a² + b²)
        a, b = self.inputs
        # 0 at the origin, where θ has no gradient, as PyTorch: not 0/0 = NaN, which would
        # poison a parameter through e.g. the angle of a zero (padding) vector. Filled
        # after the division too, so that a second derivative there is the 0 of a constant
        origin = (a == 0) & (b == 0)
        r2 = (a * a + b * b).masked_fill(origin, 1.0)
        return (g * b / r2).masked_fill(origin, 0.0), (-g * a / r2).masked_fill(origin, 0.0)


class Log1p(Function):
    def forward(self, a): return self.xp.log1p(a)        # d ln(1 + x) = dx / (1 + x)
    def backward(self, g): return g / (1 + self.inputs[0])


class Expm1(Function):
    def forward(self, a): return self.xp.expm1(a)        # d (eˣ - 1) = eˣ dx
    # eˣ from x, not the output + 1, which cancels for x ≪ 0 (float32: -1 + 1 = 0 at -20)
    def backward(self, g): return g * exp(self.inputs[0])


class Step(Function):
    """sign, floor, ceil, round, trunc (and "nonzero", x ≠ 0 as 0/1, for the 0-norm): flat
    between their jumps, so the gradient is 0 there; PyTorch takes 0 at the jumps too (no
    delta), and so do we. The gradient is a zero tensor, not None: x.grad is zeros."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, kind, decimals):
        self.shape = a.shape
        if kind == "sign":         # 0 at NaN, as PyTorch and CuPy (NumPy's sign gives NaN)
            return (a > 0).astype(a.dtype) - (a < 0).astype(a.dtype)
        if kind == "nonzero":
            return (a != 0).astype(a.dtype)
        if kind == "round":
            return _round(self.xp, a, decimals)
        return getattr(self.xp, kind)(a)
    def backward(self, g): return self.const(self.xp.zeros(self.shape, g.dtype))


def _round(xp, a, decimals):
    """Half to even (rint), at `decimals` places as PyTorch computes it: rint(x·10ᵈ)/10ᵈ, and
    for d < 0 rint(x/10⁻ᵈ)·10⁻ᵈ (an exact power of ten, not an inexact 10ᵈ). Done in the
    tensor's dtype (float16 in float32, PyTorch's opmath), so every device rounds alike."""
    if decimals == 0:
        return xp.rint(a)
    x = a.astype(xp.float32) if a.dtype == xp.float16 else a
    f = 10.0 ** abs(decimals)
    out = xp.rint(x * f) / f if decimals > 0 else xp.rint(x / f) * f
    return out.astype(a.dtype, copy=False)


class Remainder(Function):
    """a % b floored, the sign of b (Python's and PyTorch's): a - (a // b)·b, so between
    its jumps d/da = 1 and d/db = -(a // b), the quotient floor_divide gives (floor(a/b) can
    round to the next integer: 1 % 0.1 has quotient 9, floor(1/0.1) is 10), computed only
    when b wants a gradient."""
    def forward(self, a, b):
        if a.dtype.kind != "f":
            return self.xp.remainder(a, b)
        # PyTorch's formula: C's fmod (exact, the sign of a), plus b where its sign is not
        # b's (elsewhere plus -0.0, which changes nothing, not even a -0.0; and adds no b
        # that could overflow). Faster than NumPy's remainder, which computes the quotient
        # too; a zero keeps fmod's sign (-4 % 2 is -0.0), as PyTorch's (NumPy's takes b's)
        xp = self.xp
        out = xp.fmod(a, b)
        return out + xp.where((out != 0) & ((out < 0) != (b < 0)), b,
                              xp.asarray(-0.0, dtype=b.dtype))
    def backward(self, g):
        if not self.needs_input_grad[1]:
            return g, None
        a, b = self.inputs
        return g, -g * _step_value(self.inputs, self.xp.floor_divide(a._data, b._data))


class FloorDivide(Function):
    """a // b floored (Python's and PyTorch's): a step function, so its gradient is 0, as
    floor's (PyTorch refuses a backward through it)."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, b):
        self.shapes = a.shape, b.shape
        return self.xp.floor_divide(a, b)
    def backward(self, g): return tuple(self.const(self.xp.zeros(s, g.dtype)) for s in self.shapes)


class Fmod(Function):
    """C's fmod, the sign of a (torch.fmod): a - q·b with q = a/b truncated, so between its
    jumps d/da = 1 and d/db = -q, the q forward used (read back from the result: trunc(a/b)
    can round to the next integer, as for remainder), computed only when b wants a gradient."""
    def forward(self, a, b): return self.xp.fmod(a, b)
    def backward(self, g):
        if not self.needs_input_grad[1]:
            return g, None
        a, b = self.inputs[0]._data, self.inputs[1]._data
        quotient = self.xp.rint((a - self.output()._data) / b)
        return g, -g * _step_value(self.inputs, quotient)


class StepValue(Function):
    """An array that is a step function of the inputs (remainder's and fmod's integer
    quotient): its gradient is 0, but it stays in the graph, so a second derivative through
    it is 0 (as PyTorch's), where a constant would cut the graph off from the inputs."""
    needs_values = False
    def forward(self, *inputs, value):
        self.shapes = [a.shape for a in inputs]
        return value
    def backward(self, g): return tuple(self.const(self.xp.zeros(s, g.dtype)) for s in self.shapes)


def _step_value(inputs, value):
    return StepValue.apply(*inputs, value=value)


class NanToNum(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, nan, posinf, neginf):           # gradient 1 where x was finite, else 0
        self.finite = self.xp.isfinite(a)
        return self.xp.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)
    # g·[x finite], a product as PyTorch's (an inf in g at a replaced place gives NaN there)
    def backward(self, g): return g * self.const(self.finite.astype(g.dtype))


# ---- what users call -------------------------------------------------------------------
def sin(input): return Sin.apply(_floating(input))
def cos(input): return Cos.apply(_floating(input))
def log1p(input): return Log1p.apply(_floating(input))
def expm1(input): return Expm1.apply(_floating(input))
def tan(input): return Tan.apply(_floating(input))
def sinh(input): return Sinh.apply(_floating(input))
def cosh(input): return Cosh.apply(_floating(input))
def log2(input): return Log2.apply(_floating(input))
def log10(input): return Log10.apply(_floating(input))
def exp2(input): return Exp2.apply(_floating(input))


def remainder(input, other): return Remainder.apply(*_division_operands(input, other, "%"))
def fmod(input, other): return Fmod.apply(*_division_operands(input, other, "fmod"))
def floor_divide(input, other): return FloorDivide.apply(*_division_operands(input, other, "//"))


def div(input, other, *, rounding_mode=None):
    """a / b, as torch.div: rounding_mode None divides exactly (integers give float32),
    "floor" rounds the quotient down (a // b), "trunc" toward zero (C's integer division);
    those two keep integers integers, and their gradient is 0."""
    if rounding_mode is None:
        return input / other if isinstance(input, Tensor) else lift(input, other) / other
    if rounding_mode == "floor":
        return floor_divide(input, other)
    if rounding_mode != "trunc":
        raise ValueError(f"div: rounding_mode must be None, 'trunc' or 'floor', got "
                         f"{rounding_mode!r}")
    return TruncDivide.apply(*_division_operands(input, other, "div"))


class TruncDivide(FloorDivide):
    """a / b rounded toward zero (div's rounding_mode="trunc"): a step function, gradient
    0 (even where b is 0, which a composition trunc(a / b) would make NaN)."""
    def forward(self, a, b):
        self.shapes = a.shape, b.shape
        if a.dtype.kind == "f":
            return self.xp.trunc(a / b)
        # a - fmod(a, b) (fmod has a's sign) is the multiple of b truncation gives: exact
        return self.xp.floor_divide(a - self.xp.fmod(a, b), b)


def _division_operands(a, b, op):
    """As PyTorch: not two bool operands (one beside an integer counts as 0/1), and an
    integer divisor of 0 is an error (NumPy gives 0 with a warning); the check reads the
    divisor back, for integer tensors only."""
    a, b = _pair(a, b, op)
    if a.dtype == b.dtype == backend.bool_:
        raise TypeError(f"{op}: not implemented for two bool tensors; convert with .long() "
                        f"or .float() first")
    if not backend.is_floating(b.dtype) and bool((b._data == 0).any()):
        raise ZeroDivisionError(f"{op}: integer division by zero (a divisor holds 0)")
    return a, b


def atan2(input, other):
    """The angle of the point (b, a) in (-π, π], as torch.atan2 (integers give float32)."""
    input, other = _pair(input, other)
    return Atan2.apply(_floating(input), _floating(other))


def sign(input):
    """-1, 0 or 1 in x's dtype (0 at NaN, as PyTorch); a bool tensor gives itself back."""
    if input.dtype == backend.bool_:
        return input.clone()
    return Step.apply(input, kind="sign", decimals=0)


def _step(x, kind, decimals=0):
    """floor, ceil, trunc, round: bools refused, integers returned as they are (whole)."""
    if x.dtype == backend.bool_:                        # PyTorch: "not implemented for 'Bool'"
        raise TypeError(f"{kind}: not implemented for bool tensors; convert with .long() or "
                        f".float() first")
    if not backend.is_floating(x.dtype):
        if decimals:
            raise TypeError(f"round: decimals={decimals} needs a floating-point tensor, got "
                            f"{x.dtype} (as PyTorch); convert with .float() first, or use "
                            f"decimals=0")
        return x.clone()                               # integers are already whole
    return Step.apply(x, kind=kind, decimals=decimals)


def floor(input): return _step(input, "floor")
def ceil(input): return _step(input, "ceil")
def trunc(input): return _step(input, "trunc")


def frac(input):
    """x - trunc(x), the sign of x (gradient 1), as torch.frac: floating tensors only."""
    if not backend.is_floating(input.dtype):
        raise TypeError(f"frac: needs a floating-point tensor, got {input.dtype} (as PyTorch); "
                        f"convert with .float() first")
    return input - trunc(input)


def round(input, *, decimals=0):  # noqa: A001  (PyTorch's name)
    """Round half to even (2.5 -> 2, 3.5 -> 4), at `decimals` places (negative: tens,
    hundreds, ...), as torch.round."""
    if not backend.is_integer(decimals):
        raise TypeError(f"round: decimals must be an int, got {decimals!r}")
    return _step(input, "round", int(decimals))


def nonzero_indicator(x):
    """1 where x ≠ 0 (NaN included), else 0, in x's dtype, with gradient 0: the 0-"norm"."""
    return Step.apply(x, kind="nonzero", decimals=0)


def nan_to_num(input, nan=0.0, posinf=None, neginf=None):
    """NaN -> nan, +inf -> posinf, -inf -> neginf; posinf/neginf default to the largest
    finite values of x's dtype (float32: ±3.4028e38), as torch.nan_to_num. The gradient
    passes where x was finite and is 0 at the replaced places. Integers come back as they
    are."""
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and not backend.is_scalar(v):
            raise TypeError(f"nan_to_num: {name} must be a number or None, got {v!r}")
    if not backend.is_floating(input.dtype):
        return input.clone()
    nan = 0.0 if nan is None else nan                   # as PyTorch: None means 0
    nan, posinf, neginf = (None if v is None else float(v) for v in (nan, posinf, neginf))
    return NanToNum.apply(input, nan=nan, posinf=posinf, neginf=neginf)


# ---- compositions: their gradients come from the ops they are made of -------------------
def lerp(input, end, weight):
    """start + weight·(end - start), as torch.lerp; like PyTorch's, from the nearer end
    (end - (end - start)·(1 - weight) for weight ≥ 0.5), so weight 1 gives end exactly."""
    if not isinstance(input, Tensor) or not isinstance(end, Tensor):
        raise TypeError(f"lerp: start and end must be tensors, got "
                        f"{type(input).__name__} and {type(end).__name__}")
    if input.dtype != end.dtype or (isinstance(weight, Tensor) and weight.dtype != input.dtype):
        dtypes = [t.dtype for t in (input, end, weight) if isinstance(t, Tensor)]
        raise TypeError(f"lerp: start, end (and a tensor weight) must share one dtype, got "
                        f"{', '.join(map(str, dtypes))}; convert with .to(dtype) first")
    d = end - input
    if backend.is_scalar(weight) and not isinstance(weight, bool):
        return input + weight * d if abs(weight) < 0.5 else end - d * (1 - weight)
    if not isinstance(weight, Tensor):
        raise TypeError(f"lerp: weight must be a number or a tensor, got {weight!r}")
    return where(weight.abs() < 0.5, input + weight * d, end - d * (1 - weight))


def addcmul(input, tensor1, tensor2, *, value=1):
    """x + value·tensor1·tensor2, as torch.addcmul (value is keyword-only, as there; an
    integer result takes an integer value only)."""
    return input + _times(input, tensor1 * tensor2, value, "addcmul")


def addcdiv(input, tensor1, tensor2, *, value=1):
    """x + value·tensor1/tensor2, as torch.addcdiv; integers are refused, as PyTorch does
    (its old integer division is gone)."""
    if not any(backend.is_floating(t.dtype) for t in (input, tensor1, tensor2)
               if isinstance(t, Tensor)):
        raise TypeError("addcdiv: integer tensors are not supported (as PyTorch); use "
                        "x + value * (tensor1 / tensor2), or convert with .float() first")
    return input + _times(input, tensor1 / tensor2, value, "addcdiv")


def _times(x, t, value, op):
    """value·t, the term added to x. Where x + t is integral, value must be an integer: PyTorch
    would truncate 0.5 to 0 there, a float result would silently change the dtype."""
    if not backend.is_scalar(value) or isinstance(value, bool):
        raise TypeError(f"{op}: value must be a number, got {value!r}")
    if not backend.is_integer(value) and not any(
            isinstance(v, Tensor) and backend.is_floating(v.dtype) for v in (x, t)):
        raise TypeError(f"{op}: value={value!r}, but the tensors are integers, so value must "
                        f"be an integer (as PyTorch); convert them with .float() first")
    return t if value == 1 else t * value


# ---- comparisons of whole tensors: plain results, outside the graph ----------------------
def isclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """|a - b| ≤ atol + rtol·|b| elementwise (a boolean tensor; equal infinities are close),
    as torch.isclose: a and b broadcast, and must share a dtype (as PyTorch)."""
    other = lift(other, input) if isinstance(input, Tensor) else other
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"isclose: expected tensors, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    if input.dtype != other.dtype:
        raise TypeError(f"isclose: the tensors have dtypes {input.dtype} and {other.dtype}; they "
                        f"must match (as PyTorch): convert one with .to(dtype)")
    if input.device != other.device:
        raise RuntimeError(f"isclose: tensors on different devices ({input.device}, {other.device})")
    rtol, atol = number_arg("isclose", "rtol", rtol), number_arg("isclose", "atol", atol)
    if rtol < 0 or atol < 0:
        raise ValueError(f"isclose: rtol and atol must be non-negative, got rtol={rtol}, "
                         f"atol={atol}")
    check_broadcast("isclose", input.shape, other.shape)
    xp = input.backend.xp
    if input.dtype == backend.bool_:                       # close means equal
        return Tensor._make(xp.asarray(xp.equal(input._data, other._data)), input.device)
    if input.dtype.kind in "iu":
        # the gap computed in integers, exactly: NumPy's isclose would first round both to
        # float64, where 2**62 + 1 is 2**62
        gap = xp.maximum(input._data, other._data) - xp.minimum(input._data, other._data)
        return Tensor._make(xp.asarray(gap <= atol + rtol * xp.abs(other._data.astype(
            backend.float64))), input.device)
    return Tensor._make(xp.asarray(xp.isclose(input._data, other._data, rtol=rtol, atol=atol,
                                              equal_nan=equal_nan)), input.device)


def allclose(input, other, rtol=1e-05, atol=1e-08, equal_nan=False):
    """Whether every element of isclose(a, b, ...) holds: a Python bool, as torch.allclose."""
    return bool(isclose(input, other, rtol, atol, equal_nan)._data.all())


def equal(input, other):
    """True if a and b have the same shape and the same elements (a Python bool), as
    torch.equal; NaN equals nothing, and dtypes may differ (values are compared)."""
    if not isinstance(input, Tensor) or not isinstance(other, Tensor):
        raise TypeError(f"equal: expected two tensors, got {type(input).__name__} and "
                        f"{type(other).__name__}")
    if input.device != other.device:
        raise RuntimeError(f"equal: tensors on different devices ({input.device}, {other.device})")
    return input.shape == other.shape and bool((input._data == other._data).all())
