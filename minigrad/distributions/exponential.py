"""Exponential(rate), as torch.distributions.Exponential: reparameterised draws
-log(1 - u) / rate of uniform u."""
import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all, expand_as


class Exponential(Distribution):
    """The exponential distribution of rate `rate` (mean 1 / rate) on [0, inf)."""
    arg_constraints = {"rate": constraints.positive}
    support = constraints.nonnegative
    has_rsample = True

    def __init__(self, rate, validate_args=None):
        self.rate, = broadcast_all(rate)
        super().__init__(self.rate.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, rate=self.rate)

    @property
    def mean(self):
        return self.rate.reciprocal()

    @property
    def mode(self):
        return mg.zeros_like(self.rate)

    @property
    def stddev(self):
        return self.rate.reciprocal()

    @property
    def variance(self):
        return self.rate ** -2

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        u = mg.rand(shape, dtype=self.rate.dtype, device=self.rate.device, generator=generator)
        return -(-u).log1p() / self.rate

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.rate.log() - self.rate * value

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return 1 - (-self.rate * value).exp()

    def icdf(self, value):
        return -(-value).log1p() / self.rate

    def entropy(self):
        return 1.0 - self.rate.log()
