"""HalfNormal(scale), as torch.distributions.HalfNormal: |x| for x ~ Normal(0, scale)."""
import math

import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all
from minigrad.distributions.distribution import expand_as
from minigrad.distributions.normal import Normal


class HalfNormal(Distribution):
    """Density 2 N(x; 0, scale) on [0, inf)."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        self.scale, = broadcast_all(scale)
        self.base_dist = Normal(mg.zeros_like(self.scale), self.scale, validate_args=False)
        super().__init__(self.scale.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, scale=self.scale)

    @property
    def mean(self):
        return self.scale * math.sqrt(2 / math.pi)

    @property
    def mode(self):
        return mg.zeros_like(self.scale)

    @property
    def variance(self):
        return self.scale ** 2 * (1 - 2 / math.pi)

    def rsample(self, sample_shape=(), generator=None):
        return self.base_dist.rsample(sample_shape, generator=generator).abs()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = self.base_dist.log_prob(value) + math.log(2)
        return mg.where(value >= 0, log_prob, mg.full_like(log_prob, -float("inf")))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 2 * self.base_dist.cdf(value) - 1

    def icdf(self, prob):
        return self.base_dist.icdf((prob + 1) / 2)

    def entropy(self):
        return self.base_dist.entropy() - math.log(2)
