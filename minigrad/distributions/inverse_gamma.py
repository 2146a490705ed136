"""InverseGamma(concentration, rate), as torch.distributions.InverseGamma: 1 / y for
y ~ Gamma(concentration, rate), reparameterised through Gamma's draws."""
import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all
from minigrad.distributions.distribution import expand_as
from minigrad.distributions.gamma import Gamma


def _inf_unless(ok, value):
    return mg.where(ok, value, mg.full_like(value, float("inf")))


class InverseGamma(Distribution):
    """Density rate^a x^(-a-1) e^(-rate / x) / Γ(a) on x > 0, a the concentration; the mean
    is inf for a <= 1 and the variance for a <= 2, as PyTorch."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        self.base_dist = Gamma(self.concentration, self.rate, validate_args=False)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, concentration=self.concentration, rate=self.rate)

    @property
    def mean(self):
        a = self.concentration
        safe = mg.where(a > 1, a, mg.full_like(a, 2.0))   # no 0-division warning at a = 1
        return _inf_unless(a > 1, self.rate / (safe - 1))

    @property
    def mode(self):
        return self.rate / (self.concentration + 1)

    @property
    def variance(self):
        a = self.concentration
        safe = mg.where(a > 2, a, mg.full_like(a, 3.0))
        return _inf_unless(a > 2, self.rate ** 2 / ((safe - 1) ** 2 * (safe - 2)))

    def rsample(self, sample_shape=(), generator=None):
        return self.base_dist.rsample(sample_shape, generator=generator).reciprocal()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, r = self.concentration, self.rate
        return mg.xlogy(a, r) - a.lgamma() - (a + 1) * value.log() - r / value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return mg.igammac(self.concentration, self.rate / value)     # P(Y >= 1 / x)

    def entropy(self):
        a = self.concentration
        return a + self.rate.log() + a.lgamma() - (1 + a) * a.digamma()
