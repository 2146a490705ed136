"""GeneralizedPareto(loc, scale, concentration), as torch.distributions.GeneralizedPareto:
survival (1 + ξ z)^(-1/ξ) of z = (x - loc) / scale, exp(-z) at ξ = 0; reparameterised draws
through the inverse cdf. ξ = 0 is the Exponential, ξ = -1 a Uniform and ξ > 0 a shifted
Pareto. Near ξ = 0 the ξ-divided terms take their series, so values and gradients in ξ stay
right there (torch switches to ξ = 0's formula, whose ξ-gradient is 0)."""
import math

import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all
from minigrad.distributions.distribution import expand_as

_SERIES = 1e-5          # |ξ t| below this: three series terms, error ~ (ξ t)^3 relative


def _log1p_over(xi, t):
    """log(1 + ξ t) / ξ, t at ξ = 0."""
    small = (xi * t).abs() < _SERIES
    safe = mg.where(small, mg.ones_like(xi), xi)
    series = t - xi * t ** 2 / 2 + xi ** 2 * t ** 3 / 3
    return mg.where(small, series, (safe * t).log1p() / safe)


def _expm1_over(xi, t):
    """(exp(ξ t) - 1) / ξ, t at ξ = 0."""
    small = (xi * t).abs() < _SERIES
    safe = mg.where(small, mg.ones_like(xi), xi)
    series = t + xi * t ** 2 / 2 + xi ** 2 * t ** 3 / 6
    return mg.where(small, series, (safe * t).expm1() / safe)


class GeneralizedPareto(Distribution):
    """Support [loc, inf) for ξ >= 0 and [loc, loc - scale / ξ] for ξ < 0 (so it depends
    on the parameters, as Pareto's). The mean is inf for ξ >= 1 and the variance for
    ξ >= 1/2 (torch gives NaN there; inf is what the integrals are, and what Pareto gives)."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive,
                       "concentration": constraints.real}
    has_rsample = True

    def __init__(self, loc, scale, concentration, validate_args=None):
        self.loc, self.scale, self.concentration = broadcast_all(loc, scale, concentration)
        super().__init__(self.loc.shape, validate_args=validate_args)

    @property
    def support(self):
        xi = self.concentration
        safe = mg.where(xi < 0, xi, -mg.ones_like(xi))
        upper = mg.where(xi < 0, self.loc - self.scale / safe, mg.full_like(xi, math.inf))
        return constraints.interval(self.loc, upper)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, loc=self.loc, scale=self.scale,
                         concentration=self.concentration)

    def _z(self, value):
        return (value - self.loc) / self.scale

    @property
    def mean(self):
        xi = self.concentration
        safe = mg.where(xi < 1, xi, mg.zeros_like(xi))
        mean = self.loc + self.scale / (1 - safe)
        return mg.where(xi < 1, mean, mg.full_like(mean, math.inf))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        xi = self.concentration
        safe = mg.where(xi < 0.5, xi, mg.zeros_like(xi))
        var = self.scale ** 2 / ((1 - safe) ** 2 * (1 - 2 * safe))
        return mg.where(xi < 0.5, var, mg.full_like(var, math.inf))

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        u = mg.rand(shape, dtype=self.loc.dtype, device=self.loc.device, generator=generator)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        xi, z = self.concentration, self._z(value)
        # -log scale - (1 + ξ) log(1 + ξ z) / ξ; ξ = -1 is a uniform, whose density
        # 1/scale holds up to the far end, where the log is -inf (0 * inf there)
        uniform = xi == -1
        tail = (1 + xi) * _log1p_over(xi, mg.where(uniform, mg.zeros_like(z), z))
        return -self.scale.log() - mg.where(uniform, mg.zeros_like(tail), tail)

    def log_survival_function(self, value):
        return -_log1p_over(self.concentration, self._z(value))

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return -self.log_survival_function(value).expm1()

    def icdf(self, value):
        # with t = -log(1 - u): loc + scale (exp(ξ t) - 1) / ξ
        return self.loc + self.scale * _expm1_over(self.concentration, -(-value).log1p())

    def entropy(self):
        return self.scale.log() + self.concentration + 1
