"""LogNormal(loc, scale), as torch.distributions.LogNormal: exp of Normal(loc, scale)
draws (written directly, not as a TransformedDistribution)."""
import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all
from minigrad.distributions.exponential import expand_as
from minigrad.distributions.normal import Normal


class LogNormal(Distribution):
    """X with log X ~ Normal(loc, scale): loc and scale are the log's mean and deviation."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        self.base_dist = Normal(self.loc, self.scale, validate_args=False)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, loc=self.loc, scale=self.scale)

    @property
    def mean(self):
        return (self.loc + self.scale ** 2 / 2).exp()

    @property
    def mode(self):
        return (self.loc - self.scale ** 2).exp()

    @property
    def variance(self):
        s2 = self.scale ** 2
        return s2.expm1() * (2 * self.loc + s2).exp()

    def rsample(self, sample_shape=(), generator=None):
        return self.base_dist.rsample(sample_shape, generator=generator).exp()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        y = value.log()
        return self.base_dist.log_prob(y) - y            # the change of variables' |dy/dx|

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self.base_dist.cdf(value.log())

    def icdf(self, value):
        return self.base_dist.icdf(value).exp()

    def entropy(self):
        return self.base_dist.entropy() + self.loc
