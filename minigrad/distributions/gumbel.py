"""Gumbel(loc, scale), as torch.distributions.Gumbel: reparameterised draws
loc - scale log(-log u) of uniform u."""
import math

import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all
from minigrad.distributions.distribution import expand_as

EULER_GAMMA = 0.57721566490153286061


class Gumbel(Distribution):
    """CDF exp(-exp(-(x - loc) / scale)) (they broadcast)."""
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
        return self.loc + self.scale * EULER_GAMMA

    @property
    def mode(self):
        return self.loc

    @property
    def stddev(self):
        return (math.pi / math.sqrt(6)) * self.scale

    @property
    def variance(self):
        return self.stddev ** 2

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        u = mg.rand(shape, dtype=self.loc.dtype, device=self.loc.device, generator=generator)
        info = mg.finfo(u.dtype)
        return self.icdf(u.clamp(info.tiny, 1 - info.eps))      # no log(0) at either end

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
