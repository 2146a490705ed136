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

    def _safe_logits(self):
        """logits outside lims, logit(lims[0]) inside (where only the Taylor branch is
        read). The exact branches use logits, not probs: sigmoid(logits) rounds to 1 from
        logits ~ 37 (float64), where forms in p give inf or NaN (PyTorch clamps p to
        1 - eps there instead, so its values stop following the logits)."""
        lo = math.log(self._lims[0]) - math.log1p(-self._lims[0])
        return mg.where(self._outside_lims(), self.logits, mg.full_like(self.logits, lo))

    def _log_normalizer(self):
        # C = 2 atanh(1 - 2p) / (1 - 2p) = l / tanh(l / 2) for l the logits; near 1/2,
        # with s = (p - 1/2)^2: log C = log 2 + 4/3 s + 104/45 s^2
        l = self._safe_logits()
        exact = l.abs().log() - (0.5 * l).tanh().abs().log()
        s = (self.probs - 0.5) ** 2
        taylor = math.log(2.0) + (4.0 / 3.0 + 104.0 / 45.0 * s) * s
        return mg.where(self._outside_lims(), exact, taylor)

    @property
    def mean(self):
        # p / (2p - 1) + 1 / (2 atanh(1 - 2p)) = sigmoid(l) / tanh(l / 2) - 1 / l
        l = self._safe_logits()
        exact = l.sigmoid() / (0.5 * l).tanh() - 1 / l
        s = self.probs - 0.5
        taylor = 0.5 + (1.0 / 3.0 + 16.0 / 45.0 * s ** 2) * s
        return mg.where(self._outside_lims(), exact, taylor)

    @property
    def variance(self):
        # p (p - 1) / (1 - 2p)^2 + 1 / (2 atanh(1 - 2p))^2, in l
        l = self._safe_logits()
        exact = 1 / l ** 2 - l.sigmoid() * (-l).sigmoid() / (0.5 * l).tanh() ** 2
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
        # (e^(l x) - 1) / (e^l - 1), with a = |l| and no overflow: expm1(-a x) / expm1(-a)
        # for l < 0, times e^(a (x - 1)) for l > 0
        l = self._safe_logits()
        a = l.abs()
        ratio = (-a * value).expm1() / (-a).expm1()
        exact = mg.where(l > 0, (a * (value - 1)).exp() * ratio, ratio)
        cdf = mg.where(self._outside_lims(), exact, value)
        return mg.where(value <= 0, mg.zeros_like(cdf),
                        mg.where(value >= 1, mg.ones_like(cdf), cdf))

    def icdf(self, value):
        # log1p(u expm1(l)) / l, with a = |l|: for l > 0 through 1 - X ~ CB(-l)
        l = self._safe_logits()
        a = l.abs()
        exact = mg.where(l > 0, 1 + ((1 - value) * (-a).expm1()).log1p() / a,
                         -(value * (-a).expm1()).log1p() / a)
        return mg.where(self._outside_lims(), exact, value)

    def entropy(self):
        # -E[x l - softplus(l) + log C]
        return F.softplus(self.logits) - self.mean * self.logits - self._log_normalizer()
