"""Cauchy(loc, scale), as torch.distributions.Cauchy: reparameterised draws
loc + scale * tan(pi (u - 1/2)) of uniform u."""
import math

import minigrad as mg
from minigrad.distributions.loc_scale import LocScale


class Cauchy(LocScale):
    """Density 1 / (pi scale (1 + ((x - loc) / scale)^2)); no mean or variance (NaN and
    inf, as PyTorch)."""

    @property
    def mean(self):
        return mg.full_like(self.loc, float("nan"))

    @property
    def variance(self):
        return mg.full_like(self.loc, float("inf"))

    def _standard_sample(self, shape, generator):
        u = mg.rand(shape, dtype=self.loc.dtype, device=self.loc.device, generator=generator)
        return (math.pi * (u - 0.5)).tan()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = (value - self.loc) / self.scale
        return -math.log(math.pi) - self.scale.log() - (z ** 2).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return ((value - self.loc) / self.scale).atan() / math.pi + 0.5

    def icdf(self, value):
        return (math.pi * (value - 0.5)).tan() * self.scale + self.loc

    def entropy(self):
        return math.log(4 * math.pi) + self.scale.log()
