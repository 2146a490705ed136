"""Elementwise ops. Broadcasting is NumPy's; the engine sums each gradient back to its
input's shape (backward.py's _propagate, with reduce.sum_to), so no backward here deals with
broadcasting. The functions users call (add, mul, ...) first make both operands Tensors
(promotion.py's _pair, PyTorch's rules: a Python number becomes a constant Tensor)."""
import math

from minigrad import backend
from minigrad.args import check_broadcast, check_fill_value, number_arg, one_value
from minigrad.autograd import Function, is_grad_enabled
from minigrad.tensor import Tensor
from minigrad.ops.matmul import matmul
from minigrad.ops.promotion import lift, _pair, half_meets_big, in_float32  # noqa: F401


class Add(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, b): return a + b                 # d(a+b) = da + db
    def backward(self, g): return g, g


class Sub(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, b): return a - b                 # d(a-b) = da - db
    def backward(self, g): return g, -g


class Mul(Function):
    product = True                                       # see Function.product
    def forward(self, a, b): return a * b                 # d(ab) = b da + a db
    def backward(self, g):
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad
        return g * b if need_a else None, g * a if need_b else None


class Div(Function):
    def forward(self, a, b): return a / b                 # d(a/b) = da/b - a db/b²
    def backward(self, g):
        a, b = self.inputs
        gb = g / b
        # (g/b)·(a/b), not g·a/b²: b² leaves float16's range from |b| > 256 (and
        # underflows below 2.4e-4)
        return gb, -gb * (a / b) if self.needs_input_grad[1] else None


class Pow(Function):
    def forward(self, a, b): return a ** b                # d(aᵇ) = b aᵇ⁻¹ da + aᵇ ln(a) db
    def backward(self, g):
        a, b = self.inputs
        # at a = 0 the formulas read 0·∞ (da, b = 0) and 0·(-∞) or 1·(-∞) (db, b > 0 or
        # b = 0): PyTorch takes 0 there, not NaN or -inf, and so do we. The inner where
        # gives the discarded branch a base of 1: its value is dropped, but a higher
        # derivative still sends it a 0, and 0·∞ there would be NaN
        ga = gb = None
        if self.needs_input_grad[0]:
            b0 = self.const(b._data == 0)
            ga = where(b0, 0.0, g * b * where(b0, 1.0, a) ** (b - 1))
        if self.needs_input_grad[1]:
            at_zero = self.const((a._data == 0) & (b._data >= 0))
            base = where(at_zero, 1.0, a)
            gb = where(at_zero, 0.0, g * base ** b * log(base))
        return ga, gb


class Neg(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a): return -a
    def backward(self, g): return -g


class Exp(Function):
    reads_inputs = False                                 # see Function.reads_inputs
    def forward(self, a): return self.xp.exp(a)          # d eˣ = eˣ dx
    def backward(self, g): return g * self.output()


class Log(Function):
    def forward(self, a): return self.xp.log(a)          # d ln x = dx / x
    def backward(self, g): return g / self.inputs[0]


class Sqrt(Function):
    reads_inputs = False                                 # see Function.reads_inputs
    def forward(self, a): return self.xp.sqrt(a)         # d √x = dx / (2√x)
    def backward(self, g): return g / (2 * self.output())


class Abs(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a):
        s = self.xp.sign(a)                              # d|x| = sign(x) dx
        # 0 at NaN, as mg.sign and PyTorch (NumPy's sign is NaN there)
        self.sign = self.xp.where(s == s, s, 0) if a.dtype.kind == "f" else s
        return self.xp.abs(a)
    def backward(self, g): return g * self.const(self.sign)


class Tanh(Function):
    reads_inputs = False                                 # see Function.reads_inputs
    def forward(self, a): return self.xp.tanh(a)         # d tanh x = (1 - tanh²x) dx
    def backward(self, g):
        y = self.output()
        return g * (1 - y * y)


class Sigmoid(Function):
    reads_inputs = False                                 # see Function.reads_inputs
    def forward(self, a):                                # d σ(x) = σ(x)(1 - σ(x)) dx
        # e^-|x| never overflows, and each branch keeps full relative precision in the
        # tails (0.5·(1 + tanh(x/2)) rounds σ(-20) to 0 in float32)
        e = self.xp.exp(-self.xp.abs(a))
        return self.xp.where(a >= 0, 1 / (1 + e), e / (1 + e))
    def backward(self, g):
        y = self.output()
        return g * y * (1 - y)


class Relu(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a):
        # d relu(x) = [x > 0] dx; at a NaN (relu passes it on) the gradient passes too, as
        # PyTorch's (it zeroes only where x <= 0)
        self.mask = ~(a <= 0)
        return self.xp.maximum(a, 0)                     # not a·mask: -inf·0 would be NaN
    # where, not g·mask: a NaN or inf in g stays out of the masked-off places (as PyTorch)
    def backward(self, g): return where(self.const(self.mask), g, 0.0)


class Erf(Function):
    def forward(self, a):                                # d erf x = 2/√π · exp(-x²) dx
        return self.backend_erf(a).astype(a.dtype, copy=False)  # SciPy's float16 erf: float64
    def backward(self, g):
        x = self.inputs[0]
        return g * (2 / math.sqrt(math.pi)) * exp(-x * x)

    def backend_erf(self, a):
        return backend.get(self.device).erf(a)


class Maximum(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, b):
        self.a_loses, self.b_loses, self.tie = a < b, a > b, a == b
        return self.xp.maximum(a, b)
    def backward(self, g): return _split(self, g)


class Minimum(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, b):
        self.a_loses, self.b_loses, self.tie = a > b, a < b, a == b
        return self.xp.minimum(a, b)
    def backward(self, g): return _split(self, g)


def _split(ctx, g):
    """Each input's share of g, as PyTorch's: all of it to the winner, half each on a tie,
    and all to both where a NaN leaves the order unknown (no comparison holds); exactly 0
    to a loser (a NaN in g reaches only the inputs it belongs to)."""
    mine = where(ctx.const(ctx.tie), g * 0.5, g)
    return (where(ctx.const(ctx.a_loses), 0.0, mine), where(ctx.const(ctx.b_loses), 0.0, mine))


class Clip(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, lo, hi):                        # gradient 1 inside [lo, hi], else 0
        self.inside = (a >= (-math.inf if lo is None else lo)) & \
                      (a <= (math.inf if hi is None else hi))
        return self.xp.clip(a, lo, hi)
    def backward(self, g): return where(self.const(self.inside), g, 0.0)


class ClipBounds(Function):
    """clip with bounds that require grad: out = min(max(a, lo), hi); the gradient goes to
    whichever is the result (to a on a tie), and nowhere at a NaN, as PyTorch's."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, *bounds, has_lo, has_hi):
        xp = self.xp
        lo, hi = bounds[0] if has_lo else None, bounds[-1] if has_hi else None
        m = a if lo is None else xp.maximum(a, lo)
        out = m if hi is None else xp.minimum(m, hi)
        kept = xp.ones(out.shape, bool) if hi is None else m <= hi   # False at NaN
        self.masks = [kept if lo is None else (a >= lo) & kept]      # to a
        if lo is not None:
            self.masks.append((a < lo) & kept)                       # to lo
        if hi is not None:
            self.masks.append(m > hi)                                # to hi
        return out
    def backward(self, g): return tuple(where(self.const(m), g, 0.0) for m in self.masks)


class Where(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, b, cond):                       # cond picks a, else b
        self.cond = cond
        return self.xp.where(cond, a, b)
    def backward(self, g):
        c = self.const(self.cond)
        return where(c, g, 0.0), where(c, 0.0, g)


# ---- what users call -------------------------------------------------------------------
def add(a, b):
    if half_meets_big(a, b):
        return in_float32(add, a, b)
    return Add.apply(*_pair(a, b, "add (+)"))
def sub(a, b):
    _no_bool([t for t in (a, b) if isinstance(t, Tensor)], "subtraction, the `-` operator,")
    if half_meets_big(a, b):
        return in_float32(sub, a, b)
    return Sub.apply(*_pair(a, b, "sub (-)"))
def mul(a, b):
    if half_meets_big(a, b):
        return in_float32(mul, a, b)
    return Mul.apply(*_pair(a, b, "mul (*)"))
def div(a, b):
    if half_meets_big(a, b):
        return in_float32(div, a, b)
    # an integer tensor becomes float32 before a number is lifted beside it: lifted beside the
    # integer tensor, an int would wrap into its dtype (u8 / -1 would divide by 255)
    if isinstance(a, Tensor) and a.dtype.kind != "f" and backend.is_scalar(b):
        a = a.to(dtype=backend.DEFAULT_FLOAT)
    elif isinstance(b, Tensor) and b.dtype.kind != "f" and backend.is_scalar(a):
        b = b.to(dtype=backend.DEFAULT_FLOAT)
    a, b = _pair(a, b, "div (/)")
    if not backend.is_floating(a.dtype):  # true division of integers gives float32 (as PyTorch)
        a, b = a.to(dtype=backend.DEFAULT_FLOAT), b.to(dtype=backend.DEFAULT_FLOAT)
    return Div.apply(a, b)
def pow(a, b):
    if isinstance(a, Tensor) and a.dtype == backend.bool_ and isinstance(b, bool):
        return a.clone() if b else a | True       # x ** True is x, x ** False is 1: bools
    if isinstance(a, Tensor) and a.dtype.kind in "iu" and backend.is_integer(b):
        _integer_exponent(b, a.dtype)           # lifted, it would wrap into a's dtype
    a, b = _pair(a, b, "pow (**)")
    if a.dtype == b.dtype == backend.bool_:   # NumPy would answer int8, not one of ours
        raise TypeError("pow: bool ** bool is not supported (PyTorch refuses two bool tensors "
                        "too); convert with .long() or .float() first")
    if b.dtype.kind == "i" and a.dtype.kind in "iu" and bool((b._data < 0).any()):
        raise ValueError("pow: an integer tensor to a negative integer power (PyTorch gives "
                         "C's truncated 0 for 2 ** -1); convert the base to float first")
    return Pow.apply(a, b)


def _integer_exponent(n, dtype):
    """An integer tensor's integer exponent must be one its dtype holds, as PyTorch checks:
    wrapped into it, u8 ** 256 would be u8 ** 0 and u8 ** -1 would be u8 ** 255."""
    if n < 0:
        raise ValueError("pow: an integer tensor to a negative integer power (PyTorch refuses "
                         "it too); convert the base to float first")
    if n > backend.value_range(dtype)[1]:
        raise ValueError(f"pow: exponent {n} cannot be converted to the base's {dtype} "
                         f"without overflow (as PyTorch refuses it); convert the base to a "
                         f"wider dtype or to float first")


def neg(a): return Neg.apply(*_no_bool((a,), "negation, the `-` operator,"))


def _no_bool(tensors, what):
    """Refuse a bool operand of - (as PyTorch; NumPy raises for one, computes int for the
    other): inverting a mask is ~mask."""
    if any(t.dtype == backend.bool_ for t in tensors):
        raise TypeError(f"{what} on a bool tensor is not supported (dtypes "
                        f"{', '.join(str(t.dtype) for t in tensors)}); to invert a mask use ~ "
                        f"(logical_not), or convert with .long() / .float() first")
    return tensors
def exp(input): return Exp.apply(_floating(input))
def log(input): return Log.apply(_floating(input))
def sqrt(input): return Sqrt.apply(_floating(input))
def abs(a):
    if isinstance(a, Tensor) and a.dtype == backend.bool_:
        raise TypeError("abs: not supported for a bool tensor (as PyTorch); convert with "
                        ".long() or .float() first")
    return Abs.apply(a)
def tanh(input): return Tanh.apply(_floating(input))
def sigmoid(input):
    input = _floating(input)
    if input.dtype == backend.float16:   # σ(1 - σ) in float16 loses its digits (18% at x = 6):
        return Sigmoid.apply(input.to(dtype=backend.float32)).to(dtype=input.dtype)  # as PyTorch
    return Sigmoid.apply(input)
def relu(input): return Relu.apply(input)
def erf(input): return Erf.apply(_floating(input))
def maximum(input, other): return Maximum.apply(*_pair(input, other, "maximum"))
def minimum(input, other): return Minimum.apply(*_pair(input, other, "minimum"))


def _floating(a):
    """An integer or bool tensor as float32 (as PyTorch: exp of an int64 tensor is float32,
    where NumPy would give float64)."""
    try:
        floating = a.dtype.kind == "f"
    except AttributeError:                                # None, a number, a string
        raise TypeError(f"expected a Tensor, got {type(a).__name__}") from None
    return a if floating else a.to(dtype=backend.DEFAULT_FLOAT)


def clip(input, min=None, max=None):
    """a limited to [min, max]; a bound may be a number or a tensor that broadcasts against
    a. A bound that requires grad (a learned range) gets its gradient where it is the
    result, as PyTorch's; otherwise the bounds are constants of one fused op."""
    if min is None and max is None:
        raise ValueError("clip: give at least one of min and max")
    min, max = (v if v is None or isinstance(v, Tensor) else number_arg("clip", n, v)
                for v, n in ((min, "min"), (max, "max")))
    min, max = (backend.python_scalar(v) for v in (min, max))  # NumPy scalars are weak
    if not backend.is_floating(input.dtype) and any(isinstance(v, float) or (
            isinstance(v, Tensor) and backend.is_floating(v.dtype)) for v in (min, max)):
        input = input.to(dtype=backend.DEFAULT_FLOAT)  # a float bound on integers: float32, as PyTorch
    # a number bound an integer dtype holds (u8: -1 wraps to 255; beside bools: int64's), as
    # PyTorch; NumPy would fail on 2**70 (or 10**400 beside floats) with words naming neither
    kind = input.dtype.kind
    if kind != "f" or backend.is_integer(min) or backend.is_integer(max):
        held = backend.int64 if kind == "b" else input.dtype
        min, max = (check_fill_value("clamp", v, held) if backend.is_scalar(v) else v
                    for v in (min, max))
    if is_grad_enabled() and any(isinstance(v, Tensor) and v.requires_grad for v in (min, max)):
        named = [(lift(v, input), n) for v, n in ((min, "min"), (max, "max")) if v is not None]
        for v, name in named:
            _bound(v, input, name)                           # the same checks as below
        return ClipBounds.apply(input, *(v.to(dtype=input.dtype) for v, _ in named),
                                has_lo=min is not None, has_hi=max is not None)
    return Clip.apply(input, lo=_bound(min, input, "min"), hi=_bound(max, input, "max"))


def _bound(v, like, name):
    if not isinstance(v, Tensor):
        return v
    if v.device != like.device:
        raise RuntimeError(f"clip: {name} on {v.device}, tensor on {like.device}; move it "
                           f"with .to({like.device!r}) first")
    return v._data.astype(like.dtype, copy=False)          # the tensor's dtype, as PyTorch


def _cond_array(cond, like, op):
    # a copy: Where keeps it for backward, and a later in-place change of the caller's mask
    # must not move the gradient (PyTorch refuses that backward)
    c = (cond._data if isinstance(cond, Tensor) else
         like.backend.xp.asarray(backend.to_host(cond))).copy()
    if isinstance(cond, Tensor) and cond.device != like.device:
        raise RuntimeError(f"{op}: condition on {cond.device}, tensor on {like.device}")
    if c.dtype != backend.bool_:
        raise TypeError(f"{op}: the condition/mask must be boolean, got dtype {c.dtype}")
    return c


def where(condition, input=None, other=None):
    """Elementwise `input if condition else other`, condition a boolean tensor or array (two
    scalars: float32/int64 tensors on its device); alone, condition.nonzero(as_tuple=True)."""
    if input is None and other is None and isinstance(condition, Tensor):
        return condition.nonzero(as_tuple=True)
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        device = condition.device if isinstance(condition, Tensor) else "cpu" if backend.is_scalar(
            condition) or not hasattr(condition, "shape") else backend.device_of_array(condition)
        input = Tensor(backend.python_scalar(input), device=device)
    like = input if isinstance(input, Tensor) else other
    # an integer beside an integer tensor must fit it, as PyTorch (lift would wrap it)
    for value, beside in ((input, other), (other, input)):
        if backend.is_integer(value) and isinstance(beside, Tensor) and beside.dtype.kind in "iu":
            check_fill_value("where", value, beside.dtype)
    input, other = _pair(input, other, "where")
    return Where.apply(input, other, cond=_cond_array(condition, like, "where"))


def masked_fill(input, mask, value):
    """x with `value` wherever `mask` is True (mask broadcasts to x)."""
    m = _cond_array(mask, input, "masked_fill")
    # the mask broadcasts to x, never x to a bigger mask: the result keeps x's shape, as
    # PyTorch's in-place masked_fill_ (its out-of-place masked_fill would also grow x)
    try:
        fits = tuple(backend.broadcast_shapes(m.shape, input.shape)) == input.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"masked_fill: mask of shape {tuple(m.shape)} cannot broadcast to "
                         f"the tensor's shape {input.shape}")
    value = check_fill_value("masked_fill", one_value("masked_fill", value), input.dtype)
    return Where.apply(lift(value, input).to(dtype=input.dtype), input, cond=m)  # x's dtype, as PyTorch


def compare(name, a, b):
    """A comparison or logical op: a boolean tensor, outside the graph."""
    a, b = _pair(a, b, name)
    if a.device != b.device:
        raise RuntimeError(f"{name}: tensors on different devices ({a.device}, {b.device})")
    check_broadcast(name, a.shape, b.shape)
    xp = a.backend.xp                    # asarray: NumPy gives 0-d inputs a scalar, not an array
    return Tensor._make(xp.asarray(getattr(xp, name)(a._data, b._data)), a.device)


def logical_not(a):
    return Tensor._make(a.backend.xp.asarray(a.backend.xp.logical_not(a._data)), a.device)


def predicate(name, a):
    """isnan/isinf/isfinite: a boolean tensor, outside the graph."""
    return Tensor._make(a.backend.xp.asarray(getattr(a.backend.xp, name)(a._data)), a.device)


_SYMBOLS = {"bitwise_and": "&", "bitwise_or": "|", "bitwise_xor": "^", "invert": "~"}


def _bool_or_int(tensors, name):
    for t in tensors:
        if t.dtype.kind not in "biu":
            raise TypeError(f"{_SYMBOLS[name]} needs bool or integer tensors, got {t.dtype}; "
                            f"compare first (x > 0) or convert with .long()")


def bitwise(name, a, b):
    """&, |, ^: logical on bools, bitwise on integers (as PyTorch); outside the graph."""
    a, b = _pair(a, b, name)
    _bool_or_int((a, b), name)
    return compare(name, a, b)


def invert(a):
    """~: logical not of a bool tensor, bitwise not of an integer one (as PyTorch)."""
    _bool_or_int((a,), "invert")
    return logical_not(a) if a.dtype == backend.bool_ else \
        Tensor._make(a.backend.xp.asarray(a.backend.xp.invert(a._data)), a.device)


def numpy_ufunc(ufunc, method, inputs, kwargs):
    """A NumPy ufunc called with a Tensor among its inputs (Tensor.__array_ufunc__). An
    operator with an array on its left (`array + tensor`) is the tensor op, as with the array
    on the right; anything else (`np.exp(t)`, `array += t`) runs on the tensors' values."""
    op = _NUMPY_OPERATORS.get(ufunc.__name__)
    if op is not None and method == "__call__" and not kwargs and len(inputs) == 2:
        return op(*inputs)
    if any(isinstance(o, Tensor) for o in kwargs.get("out", ())):
        raise TypeError(f"numpy.{ufunc.__name__}: cannot write into a Tensor through out=; "
                        f"use tensor operators (x += y under mg.no_grad())")
    values = [x.numpy() if isinstance(x, Tensor) else x for x in inputs]
    return getattr(ufunc, method)(*values, **kwargs)


def _math():
    from minigrad.ops import math   # it imports this module
    return math


_NUMPY_OPERATORS = {
    "add": add, "subtract": sub, "multiply": mul, "divide": div, "true_divide": div,
    "power": pow, "matmul": matmul,
    "remainder": lambda a, b: _math().remainder(a, b),
    "floor_divide": lambda a, b: _math().floor_divide(a, b),
    **{name: (lambda a, b, name=name: bitwise(name, a, b)) for name in
       ("bitwise_and", "bitwise_or", "bitwise_xor")},
    **{name: (lambda a, b, name=name: compare(name, a, b)) for name in
       ("less", "less_equal", "greater", "greater_equal", "equal", "not_equal")}}
