"""PyTorch's in-place methods on a Tensor (x.zero_(), x.add_(y), x.clamp_(0, 1),
x.normal_()): the op's result written into the tensor's own memory, then counted in its
`_version` (ops/inplace.py checks each may); recorded by autograd where the tensor or an
argument requires grad (ops/inplace_autograd.py). The shape changes (t_, squeeze_,
resize_ ...) make the tensor another view of its memory (ops/inplace_shape.py). `Tensor`
inherits them."""
import builtins

from minigrad import backend

ops = nn = None     # the packages minigrad.ops and minigrad.nn, bound by tensor.py once
                    # Tensor exists: they import Tensor, whose class statement needs this


class TensorInplace:
    __slots__ = ()          # Tensor's own __slots__ stay the only attributes

    def zero_(self): return ops.inplace.fill(self, 0, "zero_")
    def fill_(self, value): return ops.inplace.fill(self, value, "fill_")   # a number, 0-d tensor
    def copy_(self, src):                      # t[...] = src, src's shape broadcast to t's
        ops.inplace.check_copy_shape(self, src)
        return ops.inplace.setitem(self, ..., src, "copy_") or self
    # alpha·o inside the op: recorded, x.add_(x, alpha=2) scales x's old value
    def add_(self, other, *, alpha=1):
        return ops.inplace.method(self, "add_", lambda x, o: ops.elementwise.add(
            x, times_alpha(x, o, alpha, "add_")), other)
    def sub_(self, other, *, alpha=1):
        return ops.inplace.method(self, "sub_", lambda x, o: ops.elementwise.sub(
            x, times_alpha(x, o, alpha, "sub_")), other)
    def mul_(self, other): return ops.inplace.method(self, "mul_", ops.elementwise.mul, other)
    def div_(self, other, *, rounding_mode=None):
        if rounding_mode is None:
            return ops.inplace.method(self, "div_", ops.elementwise.div, other)
        return ops.inplace.method(self, "div_", lambda x, o: ops.math.div(
            x, o, rounding_mode=rounding_mode), other)
    def pow_(self, exponent): return ops.inplace.method(self, "pow_", ops.elementwise.pow, exponent)
    def neg_(self): return ops.inplace.method(self, "neg_", ops.elementwise.neg)
    def exp_(self): return ops.inplace.method(self, "exp_", ops.elementwise.exp)
    def log_(self): return ops.inplace.method(self, "log_", ops.elementwise.log)
    def sqrt_(self): return ops.inplace.method(self, "sqrt_", ops.elementwise.sqrt)
    def abs_(self): return ops.inplace.method(self, "abs_", ops.elementwise.abs)
    def relu_(self): return ops.inplace.method(self, "relu_", ops.elementwise.relu)
    def clamp_(self, min=None, max=None):
        return ops.inplace.method(self, "clamp_", ops.elementwise.clip, min, max)
    clip_ = clamp_
    def index_fill_(self, dim, index, value):
        return ops.inplace.index_fill(self, dim, index, value)
    def fill_diagonal_(self, fill_value, wrap=False):
        return ops.inplace.fill_diagonal(self, fill_value, wrap)
    def masked_fill_(self, mask, value):
        return ops.inplace.method(self, "masked_fill_", ops.elementwise.masked_fill, mask, value)
    def scatter_(self, dim, index, src=None, *, value=None, reduce=None):
        return ops.inplace.method(self, "scatter_", lambda x, s: ops.scatter.scatter(
            x, dim, index, s, value=value, reduce=reduce), src)
    def scatter_add_(self, dim, index, src):
        return ops.inplace.method(self, "scatter_add_", ops.scatter.scatter_add, dim, index, src)
    def index_add_(self, dim, index, source, *, alpha=1):
        return ops.inplace.method(self, "index_add_", lambda x, s: ops.scatter.index_add(
            x, dim, index, s, alpha=alpha), source)
    def normal_(self, mean=0.0, std=1.0, *, generator=None):   # drawn as nn.init's
        return ops.inplace.fill_random(self, "normal_", lambda t: nn.init.normal_(
            t, mean, std, generator))
    def uniform_(self, a=0.0, b=1.0, *, generator=None):
        return ops.inplace.fill_random(self, "uniform_", lambda t: nn.init.uniform_(
            t, a, b, generator))
    def bernoulli_(self, p=0.5, *, generator=None):
        from minigrad import draws                     # draws.py imports Tensor
        return draws.bernoulli_(self, p, generator)
    def exponential_(self, lambd=1.0, *, generator=None):
        from minigrad import draws
        return draws.exponential_(self, lambd, generator)
    def cauchy_(self, median=0.0, sigma=1.0, *, generator=None):
        from minigrad import draws
        return draws.cauchy_(self, median, sigma, generator)
    def log_normal_(self, mean=1.0, std=2.0, *, generator=None):
        from minigrad import draws
        return draws.log_normal_(self, mean, std, generator)
    def geometric_(self, p, *, generator=None):
        from minigrad import draws
        return draws.geometric_(self, p, generator)
    def apply_(self, callable):
        """Each element x becomes callable(x) (a Python number in, one out), in a Python
        loop over a CPU tensor, as PyTorch's: slow, for tests and small tensors."""
        return _map_elements(self, "apply_", callable)
    def map_(self, tensor, callable):
        """Each element x becomes callable(x, y), y tensor's element there (tensor, of
        self's dtype, broadcast to self's shape), as apply_."""
        return _map_elements(self, "map_", callable, tensor)
    def random_(self, *bounds, to=None, generator=None):  # random_(), (to), (from, to)
        from minigrad import draws
        return draws.random_(self, *(bounds + (to,) if to is not None else bounds),
                             generator=generator)

    # shape changes in place: the tensor becomes a view of its own memory, recorded as
    # the view op (ops/inplace_shape.py)
    def t_(self): return ops.inplace_shape.view_(self, "t_", ops.layout.t)
    def transpose_(self, dim0, dim1):
        return ops.inplace_shape.view_(self, "transpose_",
                                       lambda x: ops.shape.transpose(x, dim0, dim1))
    swapdims_ = transpose_
    def swapaxes_(self, axis0, axis1): return self.transpose_(axis0, axis1)
    def squeeze_(self, dim=None):
        return ops.inplace_shape.view_(self, "squeeze_", lambda x: ops.shape.squeeze(x, dim))
    def unsqueeze_(self, dim):
        return ops.inplace_shape.view_(self, "unsqueeze_",
                                       lambda x: ops.shape.unsqueeze(x, dim))
    def resize_(self, *sizes): return ops.inplace_shape.resize(self, sizes)
    def resize_as_(self, other):
        if not isinstance(other, TensorInplace):               # a Tensor
            raise TypeError(f"resize_as_: expected a Tensor, got {type(other).__name__}")
        return ops.inplace_shape.resize(self, other.shape, "resize_as_")


# The rest of PyTorch's in-place twins: x.f_(...) is x.f(...) written into x (or recorded),
# by ops.inplace.method, as add_ and the others above. The comparisons and logical ones
# give values with no gradient, so a tensor with a history has none after them (PyTorch
# keeps one that gives zeros).
_TWINS = ("sigmoid tanh sin cos tan sinh cosh exp2 expm1 log1p log2 log10 erf erfinv lgamma "
          "digamma polygamma logit xlogy reciprocal rsqrt square sign floor ceil trunc round "
          "frac nan_to_num clamp_min clamp_max lerp addcmul addcdiv addmm atan2 arctan2 fmod "
          "remainder floor_divide true_divide divide multiply subtract negative absolute "
          "cumsum cumprod tril triu eq ne lt le gt ge greater greater_equal less less_equal "
          "not_equal logical_not logical_and logical_or logical_xor "
          "asin arcsin acos arccos atan arctan asinh arcsinh acosh arccosh atanh arctanh erfc "
          "sinc deg2rad rad2deg hypot copysign heaviside sgn fix ldexp bitwise_and bitwise_or "
          "bitwise_xor bitwise_not bitwise_left_shift bitwise_right_shift gcd lcm "
          "i0 nextafter igamma igammac mvlgamma renorm addmv addr addbmm baddbmm put "
          "index_reduce").split()


def _twin(name):
    def inplace(self, *args, **kwargs):
        dtype = kwargs.get("dtype")             # cumsum_'s, cumprod_'s: as PyTorch, only x's
        if dtype is not None and backend.dtype(dtype) != self.dtype:
            raise TypeError(f"{name}_: dtype={dtype} differs from the tensor's {self.dtype}, "
                            f"which an in-place result keeps; write x = x.{name}(..., "
                            f"dtype=...) instead")
        keys = tuple(kwargs)

        def op(x, *values):          # method() passes x's old value for x given as an arg
            n = len(values) - len(keys)
            return getattr(x, name)(*values[:n], **dict(zip(keys, values[n:])))
        return ops.inplace.method(self, name + "_", op, *args, *kwargs.values())
    inplace.__name__ = inplace.__qualname__ = name + "_"
    inplace.__doc__ = f"x.{name}(...) written into x (PyTorch's Tensor.{name}_)"
    return inplace


for _name in _TWINS:
    setattr(TensorInplace, _name + "_", _twin(_name))


def _float_power_(self, exponent):
    """x.float_power(exponent) written into x, which must be float64, the result's dtype
    (as PyTorch: a float32 x would silently lose the precision asked for)."""
    if self.dtype != backend.float64:
        raise TypeError(f"float_power_: x has dtype {self.dtype}, but the result is float64; "
                        f"use x = x.float_power(...), or x.double() first")
    return _twin("float_power")(self, exponent)


TensorInplace.float_power_ = _float_power_


def times_alpha(x, o, alpha, op):
    """alpha·o for x.add/sub's (and index_add's) alpha= (o itself when alpha is 1, so no op
    is added). o becomes a tensor first: a Python list times 2 would repeat the list. As
    PyTorch, an integer or bool x takes an integer alpha only (a float would silently make
    the result float, or be truncated)."""
    if not backend.is_scalar(alpha) or isinstance(alpha, builtins.bool):
        raise TypeError(f"{op}: alpha must be a number, got {type(alpha).__name__}")
    if alpha == 1:
        return o
    # o in the dtype x + o computes in, then scaled: alpha takes no part in the promotion
    # (as PyTorch: float64 x.add(float32 o, alpha=0.5) is float64, int x.add(float o, alpha=
    # 0.5) is float)
    _, o = ops.elementwise._pair(x, ops.elementwise.lift(o, x))
    if o.dtype.kind == "f" and x.dtype.kind == "f" and o.dtype != x.dtype and x.ndim:
        o = o.to(dtype=backend.promote_float(x.dtype, o.dtype))   # float32 o, float64 x
    if not backend.is_floating(o.dtype) and not backend.is_integer(alpha):
        raise TypeError(f"{op}: alpha={alpha!r}, but for a tensor of dtype {o.dtype} alpha "
                        f"must be an integer (as PyTorch); convert the tensor with .float()")
    return o * alpha


def _map_elements(t, op, fn, *others):
    """apply_'s, map_'s and map2_'s loop: host values through fn, written into t in place."""
    if t.device != "cpu":
        raise RuntimeError(f"{op}: only for CPU tensors (it calls a Python function on each "
                           f"element), got one on {t.device}; move it with .cpu() first")
    if t.requires_grad:
        raise RuntimeError(f"{op}: cannot be called on a tensor that requires grad (the "
                           f"function's gradient is unknown); use x.detach().{op}() instead")
    args = [t._data.reshape(-1).tolist()]
    for other in others:
        if not isinstance(other, type(t)) or other.dtype != t.dtype or other.device != "cpu":
            raise TypeError(f"{op}: expected a CPU tensor of {t.dtype}, got "
                            f"{getattr(other, 'dtype', type(other).__name__)} on "
                            f"{getattr(other, 'device', '-')}")
        try:
            y = t.backend.xp.broadcast_to(other._data, t.shape)
        except ValueError:
            raise ValueError(f"{op}: tensor of shape {other.shape} does not broadcast to "
                             f"self's shape {t.shape}") from None
        args.append(y.reshape(-1).tolist())
    out = [fn(*xs) for xs in zip(*args)]
    for r in out:                     # (None too: NumPy would make it a NaN)
        if not backend.is_scalar(r):
            raise TypeError(f"{op}: the function must return a number, got "
                            f"{type(r).__name__}")
    if t.dtype.kind in "iu" and out:  # a cast would wrap round silently; PyTorch refuses
        info = t.backend.xp.iinfo(t.dtype)
        bad = next((r for r in out if not info.min <= r <= info.max), None)
        if bad is not None:
            raise RuntimeError(f"{op}: the function returned {bad}, which {t.dtype} cannot "
                               f"hold ({info.min} .. {info.max})")
    values = t.backend.xp.asarray(out, dtype=backend.float64 if t.dtype.kind == "f"
                                  else None).reshape(t.shape)
    return ops.inplace.fill_random(t, op, lambda target: nn.init._fill(target, values))
