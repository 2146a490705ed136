"""StudentT(df, loc, scale), as torch.distributions.StudentT: draws loc + scale z / sqrt(c /
df) of z ~ Normal(0, 1) and c ~ Chi2(df), reparameterised in all three (c by Gamma's
implicit reparameterisation)."""
import math

import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.chi2 import Chi2
from minigrad.distributions.distribution import Distribution, broadcast_all, one_stream
from minigrad.distributions.distribution import expand_as


class StudentT(Distribution):
    """Student's t of df degrees of freedom, shifted by loc and scaled by scale."""
    arg_constraints = {"df": constraints.positive, "loc": constraints.real,
                       "scale": constraints.positive}
    support = constraints.real
    has_rsample = True

    def __init__(self, df, loc=0.0, scale=1.0, validate_args=None):
        self.df, self.loc, self.scale = broadcast_all(df, loc, scale)
        super().__init__(self.df.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, df=self.df, loc=self.loc, scale=self.scale)

    def _nan_where(self, mask, value):
        return mg.where(mask, mg.full_like(value, float("nan")), value)

    @property
    def mean(self):
        return self._nan_where(self.df <= 1, self.loc.expand(self.batch_shape))

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        df = self.df
        # scale^2 df / (df - 2) above 2, inf on (1, 2], undefined (NaN) at or below 1
        var = self.scale ** 2 * df / mg.where(df > 2, df - 2, mg.ones_like(df))
        var = mg.where((df <= 2) & (df > 1), mg.full_like(var, float("inf")), var)
        return self._nan_where(df <= 1, var)

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        gen = one_stream(generator)
        z = mg.randn(shape, dtype=self.df.dtype, device=self.df.device, generator=gen)
        c = Chi2(self.df, validate_args=False).rsample(sample_shape, generator=gen)
        return self.loc + self.scale * z * (c / self.df).rsqrt()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        df = self.df
        y = (value - self.loc) / self.scale
        z = (self.scale.log() + 0.5 * df.log() + 0.5 * math.log(math.pi)
             + (0.5 * df).lgamma() - (0.5 * (df + 1)).lgamma())
        return -0.5 * (df + 1) * (y ** 2 / df).log1p() - z

    def entropy(self):
        df = self.df
        log_beta = (0.5 * df).lgamma() + math.lgamma(0.5) - (0.5 * (df + 1)).lgamma()
        return (self.scale.log() + 0.5 * (df + 1) * ((0.5 * (df + 1)).digamma()
                                                     - (0.5 * df).digamma())
                + 0.5 * df.log() + log_beta)
