"""Weibull(scale, concentration), as torch.distributions.Weibull: reparameterised draws
scale * (-log(1 - u))^(1 / concentration) of uniform u (the inverse cdf)."""
import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all
from minigrad.distributions.distribution import expand_as
from minigrad.distributions.gumbel import EULER_GAMMA


class Weibull(Distribution):
    """Density (k/λ) (x/λ)^(k-1) exp(-(x/λ)^k) on x > 0, λ the scale and k the
    concentration (they broadcast)."""
    arg_constraints = {"scale": constraints.positive, "concentration": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, scale, concentration, validate_args=None):
        self.scale, self.concentration = broadcast_all(scale, concentration)
        super().__init__(self.scale.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, scale=self.scale,
                         concentration=self.concentration)

    @property
    def mean(self):
        return self.scale * (1 + 1 / self.concentration).lgamma().exp()

    @property
    def mode(self):
        # λ ((k-1)/k)^(1/k) for k > 1, else 0 (PyTorch's formula gives λ at k = 1/2: wrong)
        k = self.concentration
        ratio = ((k - 1) / k).clamp(min=0)
        return self.scale * ratio ** (1 / k)

    @property
    def variance(self):
        k = self.concentration
        return self.scale ** 2 * ((1 + 2 / k).lgamma().exp() - (1 + 1 / k).lgamma().exp() ** 2)

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        u = mg.rand(shape, dtype=self.scale.dtype, device=self.scale.device,
                    generator=generator)
        u = u.clamp(min=mg.finfo(u.dtype).tiny)          # keep draws > 0 (the support)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k, z = self.concentration, value / self.scale
        return (k / self.scale).log() + (k - 1) * z.log() - z ** k

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -(-(value / self.scale) ** self.concentration).expm1()

    def icdf(self, value):
        return self.scale * (-(-value).log1p()) ** (1 / self.concentration)

    def entropy(self):
        k = self.concentration
        return EULER_GAMMA * (1 - 1 / k) + (self.scale / k).log() + 1
