"""A Tensor's operators, as PyTorch's: arithmetic (+ - * / // % ** @, a Python number or
an array on either side becoming a constant) and its method spellings (x.add(y, alpha=),
x.div(y, rounding_mode=)), comparisons (boolean tensors, outside the graph), `in`, and
& | ^ ~ (logical on bools, bitwise on integers). `Tensor` inherits them."""
from minigrad import backend
from minigrad.args import is_device_array as _is_device_array
from minigrad.grad_mode import autocast_float32
from minigrad.tensor_inplace import times_alpha

ops = None      # the package minigrad.ops, bound by tensor.py once Tensor exists


class TensorOperators:
    __slots__ = ()          # Tensor's own __slots__ stay the only attributes

    # ---- arithmetic (a Python scalar or array on either side becomes a constant) -------
    def __add__(self, o): return ops.elementwise.add(self, o)
    def __radd__(self, o): return ops.elementwise.add(o, self)
    def __sub__(self, o): return ops.elementwise.sub(self, o)
    def __rsub__(self, o): return ops.elementwise.sub(o, self)
    def __mul__(self, other): return ops.elementwise.mul(self, other)
    def __rmul__(self, o): return ops.elementwise.mul(o, self)
    def __truediv__(self, o): return ops.elementwise.div(self, o)
    # number / x, reciprocal and rsqrt are on torch's float32 autocast list (x / y is not)
    def __rtruediv__(self, o): return ops.elementwise.div(o, autocast_float32(self))
    def __mod__(self, other): return ops.math.remainder(self, other)
    def __rmod__(self, o): return ops.math.remainder(o, self)
    def __floordiv__(self, other): return ops.math.floor_divide(self, other)
    def __rfloordiv__(self, o): return ops.math.floor_divide(o, self)
    remainder, floor_divide = __mod__, __floordiv__
    def __pow__(self, exponent): return ops.elementwise.pow(self, exponent)
    def __rpow__(self, o): return ops.elementwise.pow(o, self)
    def __neg__(self): return ops.elementwise.neg(self)
    def __matmul__(self, other): return ops.matmul.matmul(self, other)
    def __rmatmul__(self, o): return ops.matmul.matmul(o, self)
    # PyTorch's method spellings of the same ops: x.add(y), x.pow(2), x.matmul(w) ...
    mul, pow, matmul, neg = __mul__, __pow__, __matmul__, __neg__
    multiply, negative = mul, neg
    def div(self, other, *, rounding_mode=None):
        return ops.math.div(self, other, rounding_mode=rounding_mode)
    divide = true_divide = div
    def add(self, other, *, alpha=1):                                        # x + α·other
        return ops.elementwise.add(self, times_alpha(self, other, alpha, "add"))
    def sub(self, other, *, alpha=1):
        return ops.elementwise.sub(self, times_alpha(self, other, alpha, "sub"))
    subtract = sub
    def square(self):                   # of a bool tensor: int64 0/1, as PyTorch (not and)
        x = self.long() if self.dtype == backend.bool_ else self
        return ops.elementwise.mul(x, x)
    def reciprocal(self): return ops.elementwise.div(1.0, autocast_float32(self))
    def rsqrt(self):                                             # -0 -> -inf, as PyTorch
        return ops.elementwise.div(1.0, autocast_float32(self).sqrt())
    def mm(self, mat2): return ops.matmul.mm(self, mat2)
    def bmm(self, mat2): return ops.matmul.bmm(self, mat2)
    def dot(self, tensor): return ops.matmul.dot(self, tensor)
    def outer(self, vec2): return ops.matmul.outer(self, vec2)

    # comparisons give boolean tensors and are not differentiable
    def __lt__(self, other): return ops.elementwise.compare("less", self, other)
    def __le__(self, other): return ops.elementwise.compare("less_equal", self, other)
    def __gt__(self, other): return ops.elementwise.compare("greater", self, other)
    def __ge__(self, other): return ops.elementwise.compare("greater_equal", self, other)
    # t == None, t == "auto" are False, not errors (PyTorch's answer; `x == None`, `t in
    # [..., "auto"]` appear in user code): NotImplemented leaves them to Python's identity
    def __eq__(self, o):
        return ops.elementwise.compare("equal", self, o) if _comparable(o) else NotImplemented
    def __ne__(self, o):
        return ops.elementwise.compare("not_equal", self, o) if _comparable(o) else \
            NotImplemented
    def eq(self, other): return ops.elementwise.compare("equal", self, other)
    def ne(self, other): return ops.elementwise.compare("not_equal", self, other)
    lt, le, gt, ge = __lt__, __le__, __gt__, __ge__
    less, less_equal, greater, greater_equal, not_equal = lt, le, gt, ge, ne

    def __contains__(self, element):
        """`x in t`: whether any element of t equals x (a number or a tensor), as PyTorch
        (not Python's row-by-row search, which compares whole rows)."""
        if not (isinstance(element, TensorOperators) or backend.is_scalar(element)):
            raise TypeError(f"`in` a tensor takes a number or a tensor, got "
                            f"{type(element).__name__}")
        return bool((self == element).any())
    def isnan(self): return ops.elementwise.predicate("isnan", self)
    def isinf(self): return ops.elementwise.predicate("isinf", self)
    def isfinite(self): return ops.elementwise.predicate("isfinite", self)
    # &, |, ^, ~ on bool tensors are logical, on integer ones bitwise (as PyTorch)
    def __invert__(self): return ops.elementwise.invert(self)
    def __and__(self, o): return ops.elementwise.bitwise("bitwise_and", self, o)
    def __rand__(self, o): return ops.elementwise.bitwise("bitwise_and", o, self)
    def __or__(self, o): return ops.elementwise.bitwise("bitwise_or", self, o)
    def __ror__(self, o): return ops.elementwise.bitwise("bitwise_or", o, self)
    def __xor__(self, o): return ops.elementwise.bitwise("bitwise_xor", self, o)
    def __rxor__(self, o): return ops.elementwise.bitwise("bitwise_xor", o, self)


def _comparable(o):
    """Whether `t == o` compares elements: o a tensor, a number, a (nested) list or an
    array (PyTorch says False for a list; here it is compared as a tensor). Anything else
    (None, a string, a dict) is just not equal, as in PyTorch."""
    return isinstance(o, (TensorOperators, list, tuple)) or backend.is_scalar(o) or \
        hasattr(o, "__array__") or _is_device_array(o)
