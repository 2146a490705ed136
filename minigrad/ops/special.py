"""Special functions, as torch's: lgamma, digamma, polygamma and erfinv (each the library's
own, SciPy's scipy.special on the CPU and cupyx.scipy.special on a GPU, through the
backend's `special`), and the two guarded logarithms of statistics, xlogy (x·log y, 0 where
x = 0) and logit (log(p / (1 - p)), p clamped to [eps, 1 - eps] if asked). Each is a
Function whose backward is built of these same ops, so gradients of gradients work:
lgamma' = digamma, digamma' = polygamma(1), polygamma(n)' = polygamma(n + 1),
erfinv'(x) = √π/2 · exp(erfinv(x)²). Integer inputs give float32; float16 is computed in
float32 and rounded once, as PyTorch."""
import math

from minigrad import backend
from minigrad.args import number_arg
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.elementwise import _floating, exp, where
from minigrad.ops.promotion import _pair, in_float32


def _library(fn, name, op):
    """The backend's special function `name` (scipy.special's spelling) for op `op`."""
    special = backend.get(fn.device).special
    if special is None:
        raise RuntimeError(f"{op}: needs SciPy's special functions, and SciPy is not "
                           f"installed here; pip install scipy")
    return getattr(special, name)


def _computed(fn, name, op, a, *args):
    """special.name(*args, a) in a's dtype; float16 through float32 (SciPy's float16 loops
    go through float64, PyTorch's through float32: this rounds as PyTorch does)."""
    wide = a.astype(backend.float32) if a.dtype == backend.float16 else a
    return _library(fn, name, op)(*args, wide).astype(a.dtype, copy=False)


class Lgamma(Function):
    def forward(self, a):                                # d ln|Γ(x)| = ψ(x) dx
        out = _computed(self, "gammaln", "lgamma", a)
        return self.xp.where(a == -math.inf, math.inf, out)   # as PyTorch (SciPy: -inf)
    def backward(self, g): return g * digamma(self.inputs[0])


class Digamma(Function):
    def forward(self, a):                                # d ψ(x) = ψ⁽¹⁾(x) dx
        return _computed(self, "digamma", "digamma", a)
    def backward(self, g): return g * Polygamma.apply(self.inputs[0], n=1)


class Polygamma(Function):
    """ψ⁽ⁿ⁾(x), the n-th derivative of digamma (n ≥ 1 here; n = 0 is Digamma)."""
    def forward(self, a, n):                             # d ψ⁽ⁿ⁾(x) = ψ⁽ⁿ⁺¹⁾(x) dx
        self.n = n
        return _computed(self, "polygamma", "polygamma", a, self.xp.asarray(n))
    def backward(self, g): return g * Polygamma.apply(self.inputs[0], n=self.n + 1)


class Erfinv(Function):
    reads_inputs = False                                 # see Function.reads_inputs
    def forward(self, a):                # y = erf⁻¹(x): dy = dx / erf'(y) = √π/2 · e^(y²) dx
        return _computed(self, "erfinv", "erfinv", a)
    def backward(self, g):
        y = self.output()
        return g * (math.sqrt(math.pi) / 2) * exp(y * y)


class Xlogy(Function):
    """x·log(y), 0 where x = 0 (even where y is 0 or inf), NaN where y is NaN, as torch.xlogy.
    Gradients as PyTorch's: d/dx = log(y), as xlogy(g, y) (so a zero g gives 0 even where
    log y is -inf), and 0 where x = 0 and y <= 0; d/dy = x / y (0/0 = NaN where both are 0)."""
    def forward(self, a, b):
        xp = self.xp
        skip = (a == 0) & ~xp.isnan(b)                   # log(1) = 0 there: no log(0)
        return a * xp.log(xp.where(skip, 1, b))
    def backward(self, g):
        x, y = self.inputs
        gx = gy = None
        if self.needs_input_grad[0]:
            gx = where(self.const((x._data == 0) & (y._data <= 0)), 0.0, Xlogy.apply(g, y))
        if self.needs_input_grad[1]:
            gy = g * x / y
        return gx, gy


class Logit(Function):
    """log(z / (1 - z)), z = x clamped to [lo, hi] = [eps, 1 - eps] (with PyTorch's formula:
    x < lo ? lo : x > hi ? hi : x), or x itself without eps. Gradient g / (x(1 - x)) where x
    is inside the bounds (inclusive), else 0 with eps and NaN without, as PyTorch's."""
    def forward(self, a, bounds):
        xp = self.xp
        self.bounds = bounds
        if bounds is not None:
            lo, hi = bounds
            a = xp.where(a < lo, lo, xp.where(a > hi, hi, a)).astype(a.dtype)
        return xp.log(a / (1 - a))
    def backward(self, g):
        x = self.inputs[0]
        lo, hi = (0.0, 1.0) if self.bounds is None else self.bounds
        outside = self.const((x._data < lo) | (x._data > hi))
        # the inner where keeps the unused branch finite (x may be 0 or 1 there), so a
        # second derivative there is 0, not 0·∞
        inside = where(outside, 0.5, x)
        return where(outside, math.nan if self.bounds is None else 0.0,
                     g / (inside * (1 - inside)))


# ---- what users call -------------------------------------------------------------------
def lgamma(input):
    """ln|Γ(x)| elementwise, as torch.lgamma (+inf at 0, the negative integers and ±inf)."""
    return Lgamma.apply(_floating(input))


def digamma(input):
    """ψ(x) = Γ'(x)/Γ(x), as torch.digamma: -inf at 0 (+inf at -0.0), NaN at the negative
    integers."""
    return Digamma.apply(_floating(input))


def polygamma(n, input):
    """ψ⁽ⁿ⁾(x), the n-th derivative of digamma, as torch.polygamma (n = 0 is digamma)."""
    if not backend.is_integer(n) or n < 0:
        raise ValueError(f"polygamma: n (the order of the derivative) must be a non-negative "
                         f"int, got {n!r}")
    input = _floating(input)
    return Digamma.apply(input) if n == 0 else Polygamma.apply(input, n=int(n))


def erfinv(input):
    """The inverse error function, as torch.erfinv: ±inf at ±1, NaN outside [-1, 1]."""
    return Erfinv.apply(_floating(input))


def xlogy(input, other):
    """input·log(other) elementwise, 0 where input = 0 (unless other is NaN), as torch.xlogy:
    the two broadcast; either may be a number; integers and bools give float32."""
    for name, v in (("input", input), ("other", other)):
        if not isinstance(v, Tensor) and not backend.is_scalar(v):
            raise TypeError(f"xlogy: {name} must be a tensor or a number, got "
                            f"{type(v).__name__}")
    if not isinstance(input, Tensor) and not isinstance(other, Tensor):
        raise TypeError("xlogy: at least one of input and other must be a tensor")
    x, y = _pair(input, other)
    x, y = _floating(x), _floating(y)
    wide = backend.promote_float(x.dtype, y.dtype)       # float16 with float32: float32
    if wide == backend.float16:
        return in_float32(lambda a, b: Xlogy.apply(a, b), x, y)
    return Xlogy.apply(x.to(dtype=wide), y.to(dtype=wide))


def logit(input, eps=None):
    """log(p / (1 - p)), as torch.logit; with eps, p is first clamped to [eps, 1 - eps]
    (outside it the gradient is 0). eps None (or negative, as PyTorch) clamps nothing: then
    0 and 1 give ∓inf and values outside [0, 1] NaN."""
    if eps is not None:
        eps = float(number_arg("logit", "eps", eps))
        if eps < 0:
            eps = None
    input = _floating(input)
    # the bounds in x's dtype, as PyTorch's (in float16 1 - 1e-6 is 1, and 0.7 > 1 - 0.3 is
    # False); dtype.type(v) is a host scalar of that dtype
    half = input.dtype.type
    bounds = None if eps is None else (float(half(eps)), float(half(1) - half(eps)))
    if input.dtype == backend.float16:
        return Logit.apply(input.to(dtype=backend.float32), bounds=bounds).to(dtype=input.dtype)
    return Logit.apply(input, bounds=bounds)
