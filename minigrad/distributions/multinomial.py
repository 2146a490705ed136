"""Multinomial(total_count, probs or logits), as torch.distributions.Multinomial: the
counts of each of K categories in total_count Categorical(probs) draws (drawn by
Categorical's mg.multinomial); not reparameterisable."""
import math

import minigrad as mg
import minigrad.functional as F
from minigrad import backend
from minigrad.distributions import constraints
from minigrad.distributions.categorical import Categorical
from minigrad.distributions.distribution import Distribution


class Multinomial(Distribution):
    """A count vector of length K summing to total_count (an int, shared by the batch)."""
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        if not backend.is_integer(total_count) or isinstance(total_count, bool) or \
                total_count < 0:
            raise NotImplementedError(f"Multinomial: total_count must be one int >= 0 "
                                      f"(inhomogeneous total_count is not supported), got "
                                      f"{total_count!r}")
        self.total_count = int(total_count)
        self._categorical = Categorical(probs=probs, logits=logits,
                                        validate_args=validate_args)
        param = self._categorical.param_shape
        super().__init__(param[:-1], param[-1:], validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = Multinomial.__new__(Multinomial)
        new.total_count = self.total_count
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, tuple(batch_shape), self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self):
        return constraints.multinomial(self.total_count)

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def param_shape(self):
        return self._categorical.param_shape

    @property
    def mean(self):
        return self.probs * self.total_count

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=(), generator=None):
        k = self.event_shape[0]
        index = self._categorical.sample((self.total_count,) + tuple(sample_shape),
                                         generator=generator)      # (n, *sample, *batch)
        counts = F.one_hot(index, k).sum(0) if self.total_count else \
            mg.zeros(self._extended_shape(sample_shape), dtype=mg.int64,
                     device=self.probs.device)
        return counts.to(self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        shape = mg.broadcast_shapes(value.shape, self.logits.shape)
        logits, value = self.logits.expand(shape), value.expand(shape)
        # a category of probability 0 (logits -inf) counted 0 times adds 0, not 0 * -inf
        logits = mg.where((value == 0) & (logits == -float("inf")),
                          mg.zeros_like(logits), logits)
        log_factorial_n = (value.sum(-1) + 1).lgamma()
        log_factorial_xs = (value + 1).lgamma().sum(-1)
        return log_factorial_n - log_factorial_xs + (logits * value).sum(-1)

    def entropy(self):
        n, p = self.total_count, self.probs
        # n H(categorical) - log n! + sum_i E[log x_i!], x_i ~ Binomial(n, p_i)
        k = mg.arange(n + 1, dtype=p.dtype, device=p.device)
        k = k.reshape((-1,) + (1,) * (len(self.batch_shape) + 1))
        log_pmf = (math.lgamma(n + 1) - (k + 1).lgamma() - (n - k + 1).lgamma()
                   + mg.xlogy(k, p) + mg.xlogy(n - k, 1 - p))
        expected = (log_pmf.exp() * (k + 1).lgamma()).sum(0).sum(-1)
        return n * self._categorical.entropy() - math.lgamma(n + 1) + expected
