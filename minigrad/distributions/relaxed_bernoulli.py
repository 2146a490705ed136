"""RelaxedBernoulli(temperature, probs or logits), as torch's: the Concrete / binary
Gumbel-softmax relaxation of Bernoulli, values in (0, 1), reparameterised: sigmoid of
LogitRelaxedBernoulli's (logits + logistic noise) / temperature."""
import minigrad as mg
import minigrad.functional as F
from minigrad.distributions import constraints
from minigrad.distributions.bernoulli import one_of
from minigrad.distributions.distribution import (Distribution, broadcast_all, lazy_property,
                                                 probs_to_logits)
from minigrad.distributions.transformed_distribution import TransformedDistribution
from minigrad.distributions.transforms import SigmoidTransform


class LogitRelaxedBernoulli(Distribution):
    """The logit of a RelaxedBernoulli draw: (logits + log u - log(1 - u)) / temperature."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.real
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        name, value = one_of(probs, logits, type(self).__name__)
        self.temperature, param = broadcast_all(temperature, value)
        setattr(self, name, param)
        super().__init__(param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        given = "probs" if "probs" in self.__dict__ else "logits"
        new = type(self)(self.temperature,
                         **{given: self.__dict__[given].expand(tuple(batch_shape))},
                         validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return self.logits.sigmoid()

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        logits = self.logits
        info = mg.finfo(logits.dtype)
        u = mg.rand(shape, dtype=logits.dtype, device=logits.device, generator=generator)
        u = u.clamp(info.tiny, 1 - info.eps)
        return (logits + u.log() - (-u).log1p()) / self.temperature

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # the logistic density of (value * temperature - logits), times temperature
        diff = self.logits - value * self.temperature
        return self.temperature.log() + diff - 2 * F.softplus(diff)


class RelaxedParams:
    """A mixin: what the relaxed distributions share, a transformed base whose temperature,
    logits and probs are theirs, and expand (the base expanded, the same transform)."""

    @property
    def temperature(self):
        return self.base_dist.temperature

    @property
    def logits(self):
        return self.base_dist.logits

    @property
    def probs(self):
        return self.base_dist.probs

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        TransformedDistribution.__init__(new, self.base_dist.expand(batch_shape),
                                         type(self.transforms[0])(), validate_args=False)
        new._validate_args = self._validate_args
        return new


class RelaxedBernoulli(RelaxedParams, TransformedDistribution):
    """Values in (0, 1) that approach Bernoulli(probs) draws as temperature goes to 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.unit_interval
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = LogitRelaxedBernoulli(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, SigmoidTransform(), validate_args=validate_args)

    __repr__ = Distribution.__repr__
