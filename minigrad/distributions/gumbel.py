"""Gumbel(loc, scale), as torch.distributions.Gumbel: reparameterised draws
loc - scale log(-log u) of uniform u."""
import math

import minigrad as mg
from minigrad.distributions.loc_scale import LocScale

EULER_GAMMA = 0.57721566490153286061


class Gumbel(LocScale):
    """CDF exp(-exp(-(x - loc) / scale)) (they broadcast)."""

    @property
    def mean(self):
        return self.loc + self.scale * EULER_GAMMA

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev ** 2

    def _standard_sample(self, shape, generator):
        u = mg.rand(shape, dtype=self.loc.dtype, device=self.loc.device, generator=generator)
        info = mg.finfo(u.dtype)
        return -(-u.clamp(info.tiny, 1 - info.eps).log()).log()    # no log(0) at either end

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -(z + (-z).exp()) - self.scale.log()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return (-(-(value - self.loc) / self.scale).exp()).exp()

    def icdf(self, value):
        return self.loc - self.scale * (-value.log()).log()

    def entropy(self):
        return self.scale.log() + (1 + EULER_GAMMA)
