"""More elementwise transforms, as torch.distributions.transforms: AbsTransform,
SoftplusTransform, CumulativeDistributionTransform and identity_transform."""
import minigrad.functional as F
from minigrad.distributions import constraints
from minigrad.distributions.transforms import ComposeTransform, Transform


class AbsTransform(Transform):
    """y = |x|: not bijective; the inverse gives y itself, the non-negative preimage."""
    domain, codomain = constraints.real, constraints.positive

    def _call(self, x):
        return x.abs()

    def _inverse(self, y):
        return y

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else AbsTransform(cache_size)

    def __eq__(self, other):
        return isinstance(other, AbsTransform)

    __hash__ = object.__hash__


class SoftplusTransform(Transform):
    """y = log(1 + exp(x)); the inverse x = y + log(1 - exp(-y)) and the log-det
    log sigmoid(x) = -softplus(-x), both in forms that stay finite for large |x|."""
    domain, codomain, bijective, sign = constraints.real, constraints.positive, True, 1

    def _call(self, x):
        return F.softplus(x)

    def _inverse(self, y):
        return y + (-(-y).expm1()).log()

    def log_abs_det_jacobian(self, x, y):
        return -F.softplus(-x)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else SoftplusTransform(cache_size)

    def __eq__(self, other):
        return isinstance(other, SoftplusTransform)

    __hash__ = object.__hash__


class CumulativeDistributionTransform(Transform):
    """y = distribution.cdf(x), onto (0, 1); its log-det is the density log_prob(x)."""
    bijective, sign, codomain = True, 1, constraints.unit_interval

    def __init__(self, distribution, cache_size=0):
        super().__init__(cache_size)
        self.distribution = distribution

    @property
    def domain(self):
        return self.distribution.support

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            CumulativeDistributionTransform(self.distribution, cache_size)

    def _call(self, x):
        return self.distribution.cdf(x)

    def _inverse(self, y):
        return self.distribution.icdf(y)

    def log_abs_det_jacobian(self, x, y):
        return self.distribution.log_prob(x)

    def __repr__(self):
        return f"CumulativeDistributionTransform({self.distribution!r})"


identity_transform = ComposeTransform([])
