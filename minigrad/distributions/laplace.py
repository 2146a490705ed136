"""Laplace(loc, scale), as torch.distributions.Laplace: reparameterised draws by the
inverse CDF of uniform draws."""
import math

import minigrad as mg
from minigrad.distributions.loc_scale import LocScale


class Laplace(LocScale):
    """Density exp(-|x - loc| / scale) / (2 scale) (they broadcast)."""

    @property
    def mean(self):
        return self.loc

    @property
    def stddev(self):
        return math.sqrt(2) * self.scale

    @property
    def variance(self):
        return 2 * self.scale ** 2

    def _standard_sample(self, shape, generator):
        u = mg.rand(shape, dtype=self.loc.dtype, device=self.loc.device, generator=generator)
        # u in (-1, 1): -1 itself would be an infinite draw
        u = (2 * u - 1).clamp(min=mg.finfo(u.dtype).eps - 1)
        return -u.sign() * (-u.abs()).log1p()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(2 * self.scale).log() - (value - self.loc).abs() / self.scale

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        z = value - self.loc
        return 0.5 - 0.5 * z.sign() * (-z.abs() / self.scale).expm1()

    def icdf(self, value):
        term = value - 0.5
        return self.loc - self.scale * term.sign() * (-2 * term.abs()).log1p()

    def entropy(self):
        return 1 + (2 * self.scale).log()
