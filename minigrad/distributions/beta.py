"""Beta(concentration1, concentration0), as torch.distributions.Beta: the first coordinate
of a Dirichlet of (concentration1, concentration0), so its draws are g1 / (g1 + g0) of two
Gamma draws, differentiable in both concentrations."""
import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.dirichlet import Dirichlet
from minigrad.distributions.distribution import Distribution, broadcast_all
from minigrad.distributions.distribution import expand_as


class Beta(Distribution):
    """Density x^(c1 - 1) (1 - x)^(c0 - 1) / B(c1, c0) on [0, 1] (they broadcast)."""
    arg_constraints = {"concentration1": constraints.positive,
                       "concentration0": constraints.positive}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, concentration1, concentration0, validate_args=None):
        self.concentration1, self.concentration0 = broadcast_all(concentration1,
                                                                 concentration0)
        self._dirichlet = Dirichlet(mg.stack([self.concentration1, self.concentration0], -1),
                                    validate_args=False)
        super().__init__(self.concentration1.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, concentration1=self.concentration1,
                         concentration0=self.concentration0)

    @property
    def mean(self):
        return self.concentration1 / (self.concentration1 + self.concentration0)

    @property
    def mode(self):
        return self._dirichlet.mode[..., 0]

    @property
    def variance(self):
        total = self.concentration1 + self.concentration0
        return self.concentration1 * self.concentration0 / (total ** 2 * (total + 1))

    def rsample(self, sample_shape=(), generator=None):
        return self._dirichlet.rsample(sample_shape, generator=generator)[..., 0]

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._dirichlet.log_prob(mg.stack([value, 1 - value], -1))

    def entropy(self):
        return self._dirichlet.entropy()
