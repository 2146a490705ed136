"""Pareto(scale, alpha), as torch.distributions.Pareto: reparameterised draws
scale * (1 - u)^(-1 / alpha) of uniform u (the inverse cdf)."""
import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all
from minigrad.distributions.distribution import expand_as


def _inf_unless(ok, value):
    return mg.where(ok, value, mg.full_like(value, float("inf")))


class Pareto(Distribution):
    """Density alpha scale^alpha / x^(alpha + 1) on x >= scale (they broadcast); the mean
    is inf for alpha <= 1 and the variance for alpha <= 2, as PyTorch."""
    arg_constraints = {"scale": constraints.positive, "alpha": constraints.positive}
    has_rsample = True

    def __init__(self, scale, alpha, validate_args=None):
        self.scale, self.alpha = broadcast_all(scale, alpha)
        super().__init__(self.scale.shape, validate_args=validate_args)

    @property
    def support(self):
        return constraints.greater_than_eq(self.scale)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, scale=self.scale, alpha=self.alpha)

    @property
    def mean(self):
        a = self.alpha
        safe = mg.where(a > 1, a, mg.full_like(a, 2.0))   # no 0-division warning at a <= 1
        return _inf_unless(a > 1, safe * self.scale / (safe - 1))

    @property
    def mode(self):
        return self.scale

    @property
    def variance(self):
        a = self.alpha
        safe = mg.where(a > 2, a, mg.full_like(a, 3.0))
        return _inf_unless(a > 2, self.scale ** 2 * safe / ((safe - 1) ** 2 * (safe - 2)))

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        u = mg.rand(shape, dtype=self.scale.dtype, device=self.scale.device,
                    generator=generator)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a = self.alpha
        return a.log() + a * self.scale.log() - (a + 1) * value.log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (self.scale / value) ** self.alpha

    def icdf(self, value):
        return self.scale * (-(-value).log1p() / self.alpha).exp()

    def entropy(self):
        return (self.scale / self.alpha).log() + 1 / self.alpha + 1


