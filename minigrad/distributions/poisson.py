"""Poisson(rate), as torch.distributions.Poisson: draws by mg.poisson (the host generator,
so a seed gives the same counts on every device); not reparameterisable."""
import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all
from minigrad.distributions.distribution import expand_as


class Poisson(Distribution):
    """Counts k >= 0 with probability rate^k e^-rate / k!."""
    arg_constraints = {"rate": constraints.nonnegative}
    support = constraints.nonnegative_integer

    def __init__(self, rate, validate_args=None):
        self.rate, = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, rate=self.rate)

    @property
    def mean(self):
        return self.rate

    @property
    def mode(self):
        return self.rate.floor()

    @property
    def variance(self):
        return self.rate

    def sample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        with mg.no_grad():
            return mg.poisson(self.rate.detach().expand(shape), generator=generator)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # k log(rate) - rate - log k!, with 0 log 0 = 0 (a rate of 0 gives k = 0 surely)
        return mg.xlogy(value, self.rate) - self.rate - (value + 1).lgamma()
