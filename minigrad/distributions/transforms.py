"""Transforms, as torch.distributions.transforms: invertible maps y = t(x) with
log|dy/dx| (log_abs_det_jacobian), which TransformedDistribution pushes a distribution
through. Each has a domain and codomain (constraints), event_dim (how many rightmost dims
one application couples: 1 for Softmax), sign (of dy/dx, for monotone maps) and bijective.
cache_size=1 keeps the last (x, y) pair so t.inv(t(x)) gives x back exactly, not from the
inverse formula (what a tanh-squashed policy needs where tanh(x) rounds to +-1)."""
import math

import minigrad as mg
import minigrad.functional as F
from minigrad import backend
from minigrad.distributions import constraints
from minigrad.distributions.distribution import sum_rightmost
from minigrad.tensor import Tensor


class Transform:
    """The base: subclasses give _call, _inverse and log_abs_det_jacobian(x, y)."""
    domain = constraints.real
    codomain = constraints.real
    bijective = False

    def __init__(self, cache_size=0):
        if cache_size not in (0, 1):
            raise ValueError(f"{type(self).__name__}: cache_size must be 0 or 1, got "
                             f"{cache_size!r}")
        self._cache_size = cache_size
        self._cached_x_y = None, None
        self._inv = None

    @property
    def event_dim(self):
        if self.domain.event_dim != self.codomain.event_dim:
            raise ValueError("Please use either .domain.event_dim or .codomain.event_dim")
        return self.domain.event_dim

    @property
    def sign(self):
        raise NotImplementedError(f"{type(self).__name__} has no sign (not monotone)")

    @property
    def inv(self):
        """The inverse transform (y -> x), sharing this one's cache."""
        if self._inv is None:
            self._inv = _InverseTransform(self)
        return self._inv

    def with_cache(self, cache_size=1):
        if self._cache_size == cache_size:
            return self
        raise NotImplementedError(f"{type(self).__name__}.with_cache is not implemented")

    def __call__(self, x):
        if self._cache_size == 0:
            return self._call(x)
        x_old, y_old = self._cached_x_y
        if x is x_old:
            return y_old
        y = self._call(x)
        self._cached_x_y = x, y
        return y

    def _inv_call(self, y):
        if self._cache_size == 0:
            return self._inverse(y)
        x_old, y_old = self._cached_x_y
        if y is y_old:
            return x_old
        x = self._inverse(y)
        self._cached_x_y = x, y
        return x

    def _call(self, x):
        raise NotImplementedError(f"{type(self).__name__} has no forward")

    def _inverse(self, y):
        raise NotImplementedError(f"{type(self).__name__} has no inverse")

    def log_abs_det_jacobian(self, x, y):
        raise NotImplementedError(f"{type(self).__name__} has no log_abs_det_jacobian")

    def forward_shape(self, shape):
        return shape

    def inverse_shape(self, shape):
        return shape

    def __eq__(self, other):
        return self is other

    __hash__ = object.__hash__

    def __repr__(self):
        return type(self).__name__ + "()"


class _InverseTransform(Transform):
    """t.inv: swaps t's directions, domains, and negates its log-det."""
    def __init__(self, transform):
        super().__init__(transform._cache_size)
        self._inv = transform

    @property
    def domain(self):
        return self._inv.codomain

    @property
    def codomain(self):
        return self._inv.domain

    @property
    def bijective(self):
        return self._inv.bijective

    @property
    def sign(self):
        return self._inv.sign

    @property
    def inv(self):
        return self._inv

    def with_cache(self, cache_size=1):
        return self._inv.with_cache(cache_size).inv

    def __call__(self, x):
        return self._inv._inv_call(x)

    def _inv_call(self, y):
        return self._inv(y)

    def log_abs_det_jacobian(self, x, y):
        return -self._inv.log_abs_det_jacobian(y, x)

    def __eq__(self, other):
        return isinstance(other, _InverseTransform) and self._inv == other._inv

    __hash__ = object.__hash__

    def __repr__(self):
        return f"{self._inv!r}.inv"


def _check_transform(t, who):
    if not isinstance(t, Transform):
        raise ValueError(f"{who}: expected a Transform, got {type(t).__name__}")


class ComposeTransform(Transform):
    """parts applied in order (parts[0] first); log-dets summed over a common event dim."""
    def __init__(self, parts, cache_size=0):
        parts = list(parts)
        for t in parts:
            _check_transform(t, "ComposeTransform")
        if cache_size:
            parts = [t.with_cache(cache_size) for t in parts]
        super().__init__(cache_size)
        self.parts = parts

    @property
    def domain(self):
        if not self.parts:
            return constraints.real
        event_dim = self.parts[-1].codomain.event_dim      # walk back from the output
        for t in reversed(self.parts):
            event_dim += t.domain.event_dim - t.codomain.event_dim
            event_dim = max(event_dim, t.domain.event_dim)
        return _at_event_dim(self.parts[0].domain, event_dim)

    @property
    def codomain(self):
        if not self.parts:
            return constraints.real
        event_dim = self.parts[0].domain.event_dim
        for t in self.parts:
            event_dim += t.codomain.event_dim - t.domain.event_dim
            event_dim = max(event_dim, t.codomain.event_dim)
        return _at_event_dim(self.parts[-1].codomain, event_dim)

    @property
    def bijective(self):
        return all(t.bijective for t in self.parts)

    @property
    def sign(self):
        sign = 1
        for t in self.parts:
            sign = sign * t.sign
        return sign

    @property
    def inv(self):
        if self._inv is None:
            self._inv = ComposeTransform([t.inv for t in reversed(self.parts)])
            self._inv._inv = self
        return self._inv

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            ComposeTransform(self.parts, cache_size=cache_size)

    def __call__(self, x):
        for t in self.parts:
            x = t(x)
        return x

    def _inv_call(self, y):
        return self.inv(y)

    def log_abs_det_jacobian(self, x, y):
        if not self.parts:
            return mg.zeros_like(x)
        xs = [x]                        # the intermediate values (cached parts reuse theirs)
        for t in self.parts[:-1]:
            xs.append(t(xs[-1]))
        xs.append(y)
        total, event_dim = 0, self.domain.event_dim
        for t, a, b in zip(self.parts, xs[:-1], xs[1:]):
            term = t.log_abs_det_jacobian(a, b)
            total = total + sum_rightmost(term, event_dim - t.domain.event_dim)
            event_dim += t.codomain.event_dim - t.domain.event_dim
        return total

    def forward_shape(self, shape):
        for t in self.parts:
            shape = t.forward_shape(shape)
        return shape

    def inverse_shape(self, shape):
        for t in reversed(self.parts):
            shape = t.inverse_shape(shape)
        return shape

    def __eq__(self, other):
        return isinstance(other, ComposeTransform) and self.parts == other.parts

    __hash__ = object.__hash__

    def __repr__(self):
        return "ComposeTransform(\n    " + ",\n    ".join(map(repr, self.parts)) + "\n)"


def _at_event_dim(constraint, event_dim):
    extra = event_dim - constraint.event_dim
    return constraints.independent(constraint, extra) if extra > 0 else constraint


class ExpTransform(Transform):
    """y = exp(x)."""
    domain, codomain, bijective, sign = constraints.real, constraints.positive, True, 1

    def _call(self, x):
        return x.exp()

    def _inverse(self, y):
        return y.log()

    def log_abs_det_jacobian(self, x, y):
        return x

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else ExpTransform(cache_size)

    def __eq__(self, other):
        return isinstance(other, ExpTransform)

    __hash__ = object.__hash__


class PowerTransform(Transform):
    """y = x ** exponent on the positive reals."""
    domain, codomain, bijective = constraints.positive, constraints.positive, True

    def __init__(self, exponent, cache_size=0):
        super().__init__(cache_size)
        self.exponent = exponent if isinstance(exponent, Tensor) else _number(
            exponent, "PowerTransform", "exponent")

    @property
    def sign(self):
        e = self.exponent
        return e.sign() if isinstance(e, Tensor) else (e > 0) - (e < 0)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            PowerTransform(self.exponent, cache_size)

    def _call(self, x):
        return x ** self.exponent

    def _inverse(self, y):
        return y ** (1 / self.exponent)

    def log_abs_det_jacobian(self, x, y):
        return (self.exponent * y / x).abs().log()       # |e x^(e-1)| = |e y / x|

    def __repr__(self):
        return f"PowerTransform(exponent={self.exponent})"


class SigmoidTransform(Transform):
    """y = sigmoid(x), kept inside (0, 1) by the dtype's tiny and eps as PyTorch."""
    domain, codomain, bijective, sign = constraints.real, constraints.unit_interval, True, 1

    def _call(self, x):
        info = mg.finfo(x.dtype)
        return x.sigmoid().clamp(info.tiny, 1 - info.eps)

    def _inverse(self, y):
        info = mg.finfo(y.dtype)
        y = y.clamp(info.tiny, 1 - info.eps)
        return y.log() - (-y).log1p()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x) - F.softplus(x)           # log s(x) (1 - s(x))

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else SigmoidTransform(cache_size)

    def __eq__(self, other):
        return isinstance(other, SigmoidTransform)

    __hash__ = object.__hash__


class TanhTransform(Transform):
    """y = tanh(x). Its log-det log(1 - tanh(x)^2) is written 2 (log 2 - x - softplus(-2x)),
    exact where tanh(x) rounds to +-1 (the naive form gives -inf there)."""
    domain, codomain, bijective, sign = constraints.real, constraints.interval(-1.0, 1.0), \
        True, 1

    def _call(self, x):
        return x.tanh()

    def _inverse(self, y):
        return y.atanh()    # +-inf at +-1: pass cache_size=1 to get the pre-tanh x back

    def log_abs_det_jacobian(self, x, y):
        return 2 * (math.log(2) - x - F.softplus(-2 * x))

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else TanhTransform(cache_size)

    def __eq__(self, other):
        return isinstance(other, TanhTransform)

    __hash__ = object.__hash__


class AffineTransform(Transform):
    """y = loc + scale * x; event_dim > 0 sums the log-det over that many rightmost dims."""
    bijective = True

    def __init__(self, loc, scale, event_dim=0, cache_size=0):
        super().__init__(cache_size)
        self.loc = loc if isinstance(loc, Tensor) else _number(loc, "AffineTransform", "loc")
        self.scale = scale if isinstance(scale, Tensor) else _number(
            scale, "AffineTransform", "scale")
        if not isinstance(event_dim, int) or isinstance(event_dim, bool) or event_dim < 0:
            raise ValueError(f"AffineTransform: event_dim must be an int >= 0, got "
                             f"{event_dim!r}")
        self._event_dim = event_dim

    @property
    def event_dim(self):
        return self._event_dim

    @property
    def domain(self):
        return _at_event_dim(constraints.real, self._event_dim)

    codomain = domain

    @property
    def sign(self):
        s = self.scale
        return s.sign() if isinstance(s, Tensor) else (s > 0) - (s < 0)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            AffineTransform(self.loc, self.scale, self._event_dim, cache_size)

    def _call(self, x):
        return self.loc + self.scale * x

    def _inverse(self, y):
        return (y - self.loc) / self.scale

    def log_abs_det_jacobian(self, x, y):
        s = self.scale
        if isinstance(s, Tensor):
            result = s.abs().log()
            result = result.expand(mg.broadcast_shapes(result.shape, x.shape))
        else:
            result = mg.full_like(x, math.log(abs(s)))
        return sum_rightmost(result, self._event_dim)

    def forward_shape(self, shape):
        return mg.broadcast_shapes(shape, getattr(self.loc, "shape", ()),
                                   getattr(self.scale, "shape", ()))

    inverse_shape = forward_shape

    def __repr__(self):
        return f"AffineTransform(loc={self.loc}, scale={self.scale}, event_dim={self._event_dim})"


class SoftmaxTransform(Transform):
    """y = softmax(x) over the last dim: not bijective (x + c gives the same y); the
    inverse gives log y, one of the preimages, and there is no log-det."""
    domain, codomain = constraints.real_vector, constraints.simplex

    def _call(self, x):
        return x.softmax(-1)

    def _inverse(self, y):
        return y.log()

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else SoftmaxTransform(cache_size)

    def __eq__(self, other):
        return isinstance(other, SoftmaxTransform)

    __hash__ = object.__hash__


def _number(value, who, name):
    if not backend.is_scalar(value) or isinstance(value, bool):
        raise TypeError(f"{who}: {name} must be a tensor or a number, got "
                        f"{type(value).__name__}")
    return float(value)


# the rest of torch's transforms live in files by concept; re-exported here as torch has them
from minigrad.distributions.transforms_elementwise import (  # noqa: E402,F401
    AbsTransform, CumulativeDistributionTransform, SoftplusTransform, identity_transform)
from minigrad.distributions.transforms_structural import (  # noqa: E402,F401
    CatTransform, IndependentTransform, ReshapeTransform, StackTransform)
from minigrad.distributions.transforms_matrix import (  # noqa: E402,F401
    CorrCholeskyTransform, LowerCholeskyTransform, PositiveDefiniteTransform,
    StickBreakingTransform)
