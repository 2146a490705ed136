"""ContinuousBernoulli(probs or logits), as torch.distributions.ContinuousBernoulli
(Loaiza-Ganem and Cunningham, 2019): density C(p) p^x (1-p)^(1-x) on [0, 1]. C(p) and
the moments are 0/0 at p = 1/2, so within lims they use their Taylor series in p - 1/2
(the parameter being swapped for a safe one there keeps the gradients finite)."""
import math

import minigrad as mg
import minigrad.functional as F
from minigrad.distributions import constraints
from minigrad.distributions.bernoulli import TrialParams, one_of
from minigrad.distributions.distribution import Distribution, broadcast_all


class ContinuousBernoulli(TrialParams, Distribution):
    """probs (or sigmoid(logits)) in (0, 1); lims: the interval around 1/2 where the
    normaliser and moments take their Taylor series."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, probs=None, logits=None, lims=(0.499, 0.501), validate_args=None):
        name, value = one_of(probs, logits, "ContinuousBernoulli")
        param, = broadcast_all(value)
        setattr(self, name, param)
        self._lims = tuple(lims)
        super().__init__(param.shape, validate_args=validate_args)
        if name == "probs":                              # as PyTorch: p in [eps, 1 - eps]
            eps = mg.finfo(param.dtype).eps
            self.probs = param.clamp(eps, 1 - eps)

    def expand(self, batch_shape, _instance=None):
        new = self._expanded(ContinuousBernoulli, batch_shape)
        new._lims = self._lims
        return new

    def _outside_lims(self):
        return (self.probs <= self._lims[0]) | (self.probs >= self._lims[1])

    def _safe_probs(self):
        """probs outside lims, lims[0] inside (where only the Taylor branch is read)."""
        return mg.where(self._outside_lims(), self.probs, mg.full_like(self.probs,
                                                                        self._lims[0]))

    def _log_normalizer(self):
        p = self._safe_probs()
        # log C = log |2 atanh(1 - 2p)| - log |1 - 2p|; near 1/2, with s = (p - 1/2)^2:
        # log 2 + 4/3 s + 104/45 s^2
        exact = (2 * (1 - 2 * p).atanh()).abs().log() - (1 - 2 * p).abs().log()
        s = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * s) * s
        return mg.where(self._outside_lims(), exact, taylor)

    @property
    def mean(self):
        p = self._safe_probs()
        exact = p / (2 * p - 1) + 1 / (2 * (1 - 2 * p).atanh())
        s = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * s ** 2) * s
        return mg.where(self._outside_lims(), exact, taylor)

    @property
    def variance(self):
        p = self._safe_probs()
        exact = p * (p - 1) / (1 - 2 * p) ** 2 + 1 / (2 * (1 - 2 * p).atanh()) ** 2
        s = (self.probs - 0.5) ** 2
        taylor = 1.0 / 12.0 - (1.0 / 15.0 - 128.0 / 945.0 * s) * s
        return mg.where(self._outside_lims(), exact, taylor)

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        u = mg.rand(shape, dtype=self.probs.dtype, device=self.probs.device,
                    generator=generator)
        return self.icdf(u)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # x log p + (1 - x) log(1 - p) = x logits - softplus(logits)
        return value * self.logits - F.softplus(self.logits) + self._log_normalizer()

    def cdf(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self._safe_probs()
        exact = ((p ** value) * (1 - p) ** (1 - value) + p - 1) / (2 * p - 1)
        cdf = mg.where(self._outside_lims(), exact, value)
        return cdf.clamp(0.0, 1.0)

    def icdf(self, value):
        p = self._safe_probs()
        exact = ((-p + value * (2 * p - 1)).log1p() - (-p).log1p()) / \
            (p.log() - (-p).log1p())
        return mg.where(self._outside_lims(), exact, value)

    def entropy(self):
        log_p0, log_p1 = (-self.probs).log1p(), self.probs.log()
        return self.mean * (log_p0 - log_p1) - self._log_normalizer() - log_p0
