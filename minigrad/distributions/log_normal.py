"""LogNormal(loc, scale), as torch.distributions.LogNormal: Normal(loc, scale) pushed
through ExpTransform (log_prob, cdf, icdf, rsample from TransformedDistribution: the same
floats as the direct log N(log x) - log x), with the closed-form moments and entropy."""
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all
from minigrad.distributions.distribution import expand_as
from minigrad.distributions.normal import Normal
from minigrad.distributions.transformed_distribution import TransformedDistribution
from minigrad.distributions.transforms import ExpTransform


class LogNormal(TransformedDistribution):
    """X with log X ~ Normal(loc, scale): loc and scale are the log's mean and deviation."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(Normal(self.loc, self.scale, validate_args=False), ExpTransform(),
                         validate_args=validate_args)

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

    def entropy(self):
        return self.base_dist.entropy() + self.loc

    __repr__ = Distribution.__repr__
