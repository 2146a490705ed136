"""Normal(loc, scale), as torch.distributions.Normal: reparameterised draws loc + scale * z."""
import math

import minigrad as mg
from minigrad.distributions.distribution import LOG_SQRT_2PI
from minigrad.distributions.loc_scale import LocScale


class Normal(LocScale):
    """The normal distribution of mean loc and standard deviation scale (they broadcast)."""

    @property
    def mean(self):
        return self.loc

    @property
    def stddev(self):
        return self.scale

    @property
    def variance(self):
        return self.scale ** 2

    def _standard_sample(self, shape, generator):
        return mg.randn(shape, dtype=self.loc.dtype, device=self.loc.device, generator=generator)

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
