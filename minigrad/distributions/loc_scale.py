"""LocScale: the base of the location-scale families on the real line (Normal, Laplace,
Cauchy, Gumbel), X = loc + scale * Z for Z the family's standard variate. Broadcasting the
two parameters, expand, the mode and the reparameterised draw are written once here; each
family gives its standard draw and its own mean, variance, log_prob, cdf, icdf and
entropy."""
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, broadcast_all, expand_as


class LocScale(Distribution):
    """loc real and scale positive, broadcast to the batch shape; a subclass gives
    _standard_sample(shape, generator), draws of Z, which rsample shifts and scales."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        self.loc, self.scale = broadcast_all(loc, scale)
        super().__init__(self.loc.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, loc=self.loc, scale=self.scale)

    @property
    def mode(self):
        return self.loc                 # each family's Z peaks at 0

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        return self.loc + self.scale * self._standard_sample(shape, generator)

    def _standard_sample(self, shape, generator):
        """Draws of Z (loc 0, scale 1) of the given shape, in loc's dtype and device."""
        raise NotImplementedError(f"{type(self).__name__} has no _standard_sample")
