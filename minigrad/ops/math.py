"""Elementwise math beside exp/log/tanh: the smooth sin, cos, log1p, expm1 (each a Function
with its derivative beside it); the piecewise-constant sign, floor, ceil, round, trunc
(`Step`: gradient 0); % and // (remainder, floor_divide); and nan_to_num. Integer inputs
follow PyTorch: the smooth functions give float32, the rounding ones give the integers back
unchanged."""
from minigrad import backend
from minigrad.autograd import Function
from minigrad.ops.elementwise import _floating, _pair


class Sin(Function):
    def forward(self, a): return self.xp.sin(a)          # d sin x = cos x dx
    def backward(self, g): return g * cos(self.inputs[0])


class Cos(Function):
    def forward(self, a): return self.xp.cos(a)          # d cos x = -sin x dx
    def backward(self, g): return -g * sin(self.inputs[0])


class Log1p(Function):
    def forward(self, a): return self.xp.log1p(a)        # d ln(1 + x) = dx / (1 + x)
    def backward(self, g): return g / (1 + self.inputs[0])


class Expm1(Function):
    def forward(self, a): return self.xp.expm1(a)        # d (eˣ - 1) = eˣ dx
    def backward(self, g): return g * (self.output() + 1)


class Step(Function):
    """sign, floor, ceil, round, trunc (and "nonzero", x ≠ 0 as 0/1, for the 0-norm): flat
    between their jumps, so the gradient is 0 there; PyTorch takes 0 at the jumps too (no
    delta), and so do we. The gradient is a zero tensor, not None: x.grad is zeros."""
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
    its jumps d/da = 1 and d/db = -(a // b), the quotient forward used (floor(a/b) can
    round to the next integer: 1 % 0.1 has quotient 9, floor(1/0.1) is 10)."""
    def forward(self, a, b):
        self.quotient = self.xp.floor_divide(a, b)
        return self.xp.remainder(a, b)
    def backward(self, g): return g, -g * self.const(self.quotient)


class FloorDivide(Function):
    """a // b floored (Python's and PyTorch's): a step function, so its gradient is 0, as
    floor's (PyTorch refuses a backward through it)."""
    def forward(self, a, b):
        self.shapes = a.shape, b.shape
        return self.xp.floor_divide(a, b)
    def backward(self, g): return tuple(self.const(self.xp.zeros(s, g.dtype)) for s in self.shapes)


class NanToNum(Function):
    def forward(self, a, nan, posinf, neginf):           # gradient 1 where x was finite, else 0
        self.finite = self.xp.isfinite(a)
        return self.xp.nan_to_num(a, nan=nan, posinf=posinf, neginf=neginf)
    # g·[x finite], a product as PyTorch's (an inf in g at a replaced place gives NaN there)
    def backward(self, g): return g * self.const(self.finite.astype(g.dtype))


# ---- what users call -------------------------------------------------------------------
def remainder(a, b): return Remainder.apply(*_division_operands(a, b, "%"))
def floor_divide(a, b): return FloorDivide.apply(*_division_operands(a, b, "//"))


def _division_operands(a, b, op):
    """As PyTorch: no bool operands, and an integer divisor of 0 is an error (NumPy gives 0
    with a warning); the check reads the divisor back, for integer tensors only."""
    a, b = _pair(a, b)
    if backend.bool_ in (a.dtype, b.dtype):
        raise TypeError(f"{op}: not implemented for bool tensors; convert with .long() or "
                        f".float() first")
    if not backend.is_floating(b.dtype) and bool((b.data == 0).any()):
        raise ZeroDivisionError(f"{op}: integer division by zero (a divisor holds 0)")
    return a, b
def sin(x): return Sin.apply(_floating(x))
def cos(x): return Cos.apply(_floating(x))
def log1p(x): return Log1p.apply(_floating(x))
def expm1(x): return Expm1.apply(_floating(x))


def sign(x):
    """-1, 0 or 1 in x's dtype (0 at NaN, as PyTorch); a bool tensor gives itself back."""
    if x.dtype == backend.bool_:
        return x.clone()
    return Step.apply(x, kind="sign", decimals=0)


def _step(x, kind, decimals=0):
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


def floor(x): return _step(x, "floor")
def ceil(x): return _step(x, "ceil")
def trunc(x): return _step(x, "trunc")


def round(x, *, decimals=0):  # noqa: A001  (PyTorch's name)
    """Round half to even (2.5 -> 2, 3.5 -> 4), at `decimals` places (negative: tens,
    hundreds, ...), as torch.round."""
    if not backend.is_integer(decimals):
        raise TypeError(f"round: decimals must be an int, got {decimals!r}")
    return _step(x, "round", int(decimals))


def nonzero_indicator(x):
    """1 where x ≠ 0 (NaN included), else 0, in x's dtype, with gradient 0: the 0-"norm"."""
    return Step.apply(x, kind="nonzero", decimals=0)


def nan_to_num(x, nan=0.0, posinf=None, neginf=None):
    """NaN -> nan, +inf -> posinf, -inf -> neginf; posinf/neginf default to the largest
    finite values of x's dtype (float32: ±3.4028e38), as torch.nan_to_num. The gradient
    passes where x was finite and is 0 at the replaced places. Integers come back as they
    are."""
    for name, v in (("nan", nan), ("posinf", posinf), ("neginf", neginf)):
        if v is not None and not backend.is_scalar(v):
            raise TypeError(f"nan_to_num: {name} must be a number or None, got {v!r}")
    if not backend.is_floating(x.dtype):
        return x.clone()
    nan = 0.0 if nan is None else nan                   # as PyTorch: None means 0
    nan, posinf, neginf = (None if v is None else float(v) for v in (nan, posinf, neginf))
    return NanToNum.apply(x, nan=nan, posinf=posinf, neginf=neginf)

