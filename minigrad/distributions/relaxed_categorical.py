"""RelaxedOneHotCategorical(temperature, probs or logits), as torch's: the Concrete /
Gumbel-softmax relaxation of OneHotCategorical, points of the simplex, reparameterised:
exp of ExpRelaxedCategorical's log_softmax((logits + Gumbel noise) / temperature)."""
import math

import minigrad as mg
from minigrad.distributions import constraints
from minigrad.distributions.categorical import Categorical
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.relaxed_bernoulli import RelaxedParams
from minigrad.distributions.transformed_distribution import TransformedDistribution
from minigrad.distributions.transforms import ExpTransform


class ExpRelaxedCategorical(Distribution):
    """The log of a RelaxedOneHotCategorical draw (a vector whose exp sums to 1)."""
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        param = self._categorical.param_shape
        self.temperature = temperature if isinstance(temperature, mg.Tensor) else \
            mg.tensor(float(temperature), dtype=self._categorical._param.dtype,
                      device=self._categorical._param.device)
        super().__init__(param[:-1], param[-1:], validate_args=validate_args)

    def _check_parameters(self):
        pass                                     # Categorical checked probs or logits

    def expand(self, batch_shape, _instance=None):
        new = type(self).__new__(type(self))
        new._categorical = self._categorical.expand(batch_shape)
        new.temperature = self.temperature
        Distribution.__init__(new, tuple(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def param_shape(self):
        return self._categorical.param_shape

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        logits = self.logits
        info = mg.finfo(logits.dtype)
        u = mg.rand(shape, dtype=logits.dtype, device=logits.device, generator=generator)
        gumbels = -(-u.clamp(info.tiny, 1 - info.eps).log()).log()
        scores = (logits + gumbels) / self.temperature
        return scores - scores.logsumexp(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        k = self.event_shape[0]
        # the Concrete density: (K-1)! t^(K-1) prod(p_i e^(-t x_i)) / (sum p_i e^(-t x_i))^K,
        # in log space (x the log of the simplex point)
        log_scale = math.lgamma(k) + (k - 1) * self.temperature.log()
        score = self.logits - value * self.temperature
        score = (score - score.logsumexp(-1, keepdim=True)).sum(-1)
        return score + log_scale


class RelaxedOneHotCategorical(RelaxedParams, TransformedDistribution):
    """Simplex points that approach OneHotCategorical(probs) draws as temperature goes
    to 0 (the Gumbel-softmax)."""
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, temperature, probs=None, logits=None, validate_args=None):
        base = ExpRelaxedCategorical(temperature, probs, logits, validate_args=validate_args)
        super().__init__(base, ExpTransform(), validate_args=validate_args)

    def _check_parameters(self):
        pass                                     # the base checked them

    __repr__ = Distribution.__repr__
