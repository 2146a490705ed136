"""HalfCauchy(scale), as torch.distributions.HalfCauchy: |x| for x ~ Cauchy(0, scale)."""
import math

import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all
from minigrad.distributions.distribution import expand_as


class HalfCauchy(Distribution):
    """Density 2 / (pi scale (1 + (x / scale)^2)) on [0, inf); mean and variance inf."""
    arg_constraints = {"scale": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, scale, validate_args=None):
        self.scale, = broadcast_all(scale)
        super().__init__(self.scale.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, scale=self.scale)

    @property
    def mean(self):
        return mg.full_like(self.scale, float("inf"))

    @property
    def mode(self):
        return mg.zeros_like(self.scale)

    @property
    def variance(self):
        return mg.full_like(self.scale, float("inf"))

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        u = mg.rand(shape, dtype=self.scale.dtype, device=self.scale.device,
                    generator=generator)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        log_prob = math.log(2 / math.pi) - self.scale.log() - ((value / self.scale) ** 2).log1p()
        return mg.where(value >= 0, log_prob, mg.full_like(log_prob, -float("inf")))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (value / self.scale).atan() * (2 / math.pi)

    def icdf(self, value):
        return self.scale * (value * (math.pi / 2)).tan()

    def entropy(self):
        return math.log(2 * math.pi) + self.scale.log()
