"""FisherSnedecor(df1, df2), as torch.distributions.FisherSnedecor: the F distribution,
(Y1 / df1) / (Y2 / df2) of chi-squared Y1, Y2, reparameterised through Gamma's draws."""
import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import (Distribution, broadcast_all, expand_as,
                                                 one_stream)
from minigrad.distributions.gamma import Gamma


def _nan_unless(ok, value):
    return mg.where(ok, value, mg.full_like(value, float("nan")))


def _safe(ok, value, fill):
    """value where ok, else fill: keeps the formula's 0-divisions (and warnings) away."""
    return mg.where(ok, value, mg.full_like(value, fill))


class FisherSnedecor(Distribution):
    """The F(df1, df2) law on x > 0 (they broadcast); mean NaN for df2 <= 2, variance NaN
    for df2 <= 4 and mode NaN for df1 <= 2, as PyTorch."""
    arg_constraints = {"df1": constraints.positive, "df2": constraints.positive}
    support = constraints.positive
    has_rsample = True

    def __init__(self, df1, df2, validate_args=None):
        self.df1, self.df2 = broadcast_all(df1, df2)
        self._gamma1 = Gamma(0.5 * self.df1, 0.5 * self.df1, validate_args=False)
        self._gamma2 = Gamma(0.5 * self.df2, 0.5 * self.df2, validate_args=False)
        super().__init__(self.df1.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, df1=self.df1, df2=self.df2)

    @property
    def mean(self):
        d2 = _safe(self.df2 > 2, self.df2, 3.0)
        return _nan_unless(self.df2 > 2, d2 / (d2 - 2))

    @property
    def mode(self):
        d1, d2 = _safe(self.df1 > 2, self.df1, 3.0), self.df2
        return _nan_unless(self.df1 > 2, (d1 - 2) / d1 * d2 / (d2 + 2))

    @property
    def variance(self):
        d1, d2 = self.df1, _safe(self.df2 > 4, self.df2, 5.0)
        return _nan_unless(self.df2 > 4, 2 * d2 ** 2 * (d1 + d2 - 2) /
                           (d1 * (d2 - 2) ** 2 * (d2 - 4)))

    def rsample(self, sample_shape=(), generator=None):
        generator = one_stream(generator)
        # Gamma(df/2, df/2) is chi2(df) / df
        x1 = self._gamma1.rsample(sample_shape, generator=generator)
        x2 = self._gamma2.rsample(sample_shape, generator=generator)
        tiny = mg.finfo(x2.dtype).tiny
        return (x1 / x2).clamp(min=tiny)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        h1, h2 = 0.5 * self.df1, 0.5 * self.df2
        log_beta = h1.lgamma() + h2.lgamma() - (h1 + h2).lgamma()
        return h1 * (self.df1 / self.df2).log() + mg.xlogy(h1 - 1, value) - log_beta - \
            (h1 + h2) * (self.df1 * value / self.df2).log1p()
