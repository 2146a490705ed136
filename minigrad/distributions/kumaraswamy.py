"""Kumaraswamy(concentration1, concentration0), as torch.distributions.Kumaraswamy: a
Beta-like law on (0, 1) with a closed-form cdf, so reparameterised draws
(1 - (1 - u)^(1/b))^(1/a) of uniform u (the inverse cdf)."""
import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all
from minigrad.distributions.distribution import expand_as
from minigrad.distributions.gumbel import EULER_GAMMA


def _moment(a, b, n):
    """E[x^n] = b B(1 + n/a, b)."""
    return (b.log() + (1 + n / a).lgamma() + b.lgamma() - (1 + n / a + b).lgamma()).exp()


class Kumaraswamy(Distribution):
    """Density a b x^(a-1) (1 - x^a)^(b-1) on (0, 1), a = concentration1 and
    b = concentration0 (they broadcast)."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        super().__init__(self.concentration1.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, concentration1=self.concentration1,
                         concentration0=self.concentration0)

    @property
    def mean(self):
        return _moment(self.concentration1, self.concentration0, 1)

    @property
    def mode(self):
        # ((a-1) / (ab-1))^(1/a) where a, b >= 1 (not both 1), else NaN. PyTorch's formula
        # gives NaN everywhere (torch 2.x); this is the textbook mode
        a, b = self.concentration1, self.concentration0
        ok = (a >= 1) & (b >= 1) & ((a > 1) | (b > 1))
        ab = mg.where(ok, a * b, mg.full_like(a, 2.0))     # no 0/0 warning where it is NaN
        mode = ((a - 1) / (ab - 1)).clamp(min=0) ** (1 / a)
        return mg.where(ok, mode, mg.full_like(mode, float("nan")))

    @property
    def variance(self):
        a, b = self.concentration1, self.concentration0
        return _moment(a, b, 2) - _moment(a, b, 1) ** 2

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        dtype = self.concentration1.dtype
        u = mg.rand(shape, dtype=dtype, device=self.concentration1.device,
                    generator=generator)
        finfo = mg.finfo(dtype)
        return self.icdf(u.clamp(finfo.tiny, 1 - finfo.eps))     # keep draws inside (0, 1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return (a * b).log() + mg.xlogy(a - 1, value) + (b - 1) * (-value ** a).log1p()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        a, b = self.concentration1, self.concentration0
        return -(b * (-value ** a).log1p()).expm1()

    def icdf(self, value):
        a, b = self.concentration1, self.concentration0
        return (-((-value).log1p() / b).expm1()) ** (1 / a)

    def entropy(self):
        a, b = self.concentration1, self.concentration0
        harmonic_b = (b + 1).digamma() + EULER_GAMMA
        return (1 - 1 / b) + (1 - 1 / a) * harmonic_b - (a * b).log()
