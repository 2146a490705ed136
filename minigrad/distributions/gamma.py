"""Gamma(concentration, rate), as torch.distributions.Gamma: reparameterised draws
standard_gamma(concentration) / rate, differentiable in the concentration by the implicit
reparameterisation of ops/gamma_sample.py."""
import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all
from minigrad.distributions.distribution import expand_as
from minigrad.ops.gamma_sample import standard_gamma


class Gamma(Distribution):
    """Density rate^a x^(a-1) e^(-rate x) / Γ(a), a the concentration (they broadcast)."""
    arg_constraints = {"concentration": constraints.positive, "rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, concentration, rate, validate_args=None):
        self.concentration, self.rate = broadcast_all(concentration, rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, concentration=self.concentration, rate=self.rate)

    @property
    def mean(self):
        return self.concentration / self.rate

    @property
    def mode(self):
        return ((self.concentration - 1) / self.rate).clamp(min=0)

    @property
    def variance(self):
        return self.concentration / self.rate ** 2

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        x = standard_gamma(self.concentration.expand(shape), generator=generator)
        return (x / self.rate).clamp(min=mg.finfo(x.dtype).tiny)   # as PyTorch's

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, r = self.concentration, self.rate
        return mg.xlogy(a, r) + mg.xlogy(a - 1, value) - r * value - a.lgamma()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return mg.igamma(self.concentration, self.rate * value)

    def entropy(self):
        a = self.concentration
        return a - self.rate.log() + a.lgamma() + (1 - a) * a.digamma()
