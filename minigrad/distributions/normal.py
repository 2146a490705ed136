"""Normal(loc, scale), as torch.distributions.Normal: reparameterised draws loc + scale * z."""
import math

import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import (Distribution, LOG_SQRT_2PI, broadcast_all,
                                                 expand_as)


class Normal(Distribution):
    """The normal distribution of mean loc and standard deviation scale (they broadcast)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, loc=self.loc, scale=self.scale)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale ** 2

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        z = mg.randn(shape, dtype=self.loc.dtype, device=self.loc.device, generator=generator)
        return self.loc + z * self.scale

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # -(x - mu)^2 / (2 sigma^2) - log sigma - log sqrt(2 pi)
        return -((value - self.loc) ** 2) / (2 * self.variance) - self.scale.log() - \
            LOG_SQRT_2PI

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 0.5 * (1 + mg.erf((value - self.loc) / (self.scale * math.sqrt(2))))

    def icdf(self, value):
        return self.loc + self.scale * mg.erfinv(2 * value - 1) * math.sqrt(2)

    def entropy(self):
        return 0.5 + LOG_SQRT_2PI + self.scale.log()
