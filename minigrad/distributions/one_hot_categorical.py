"""OneHotCategorical(probs or logits), as torch's: Categorical's index as a one-hot vector."""
import minigrad as mg
import minigrad.functional as F
from minigrad.distributions import constraints
from minigrad.distributions.categorical import Categorical
from minigrad.distributions.distribution import Distribution


class _OneHot(constraints.Constraint):
    event_dim = 1
    is_discrete = True

    def check(self, value):
        return ((value == 0) | (value == 1)).all(-1) & (value.sum(-1) == 1)


class OneHotCategorical(Distribution):
    """A one-hot vector of length K; batch_shape is probs' shape but the last dim."""
    arg_constraints = Categorical.arg_constraints
    support = _OneHot()
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        self._categorical = Categorical(probs, logits, validate_args=validate_args)
        super().__init__(self._categorical.batch_shape, self._categorical.param_shape[-1:],
                         validate_args=False)
        if validate_args is not None:
            self._validate_args = validate_args
        else:
            self._validate_args = self._categorical._validate_args

    def expand(self, batch_shape, _instance=None):
        new = OneHotCategorical.__new__(OneHotCategorical)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, new._categorical.batch_shape, self.event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def probs(self):
        return self._categorical.probs

    @property
    def logits(self):
        return self._categorical.logits

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        return F.one_hot(self.probs.argmax(-1), self.event_shape[0]).to(self.probs.dtype)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=(), generator=None):
        index = self._categorical.sample(sample_shape, generator=generator)
        return F.one_hot(index, self.event_shape[0]).to(self.probs.dtype)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return self._categorical.log_prob(value.argmax(-1))

    def entropy(self):
        return self._categorical.entropy()

    def enumerate_support(self, expand=True):
        k = self.event_shape[0]
        values = mg.eye(k, dtype=self.probs.dtype, device=self.probs.device)
        values = values.reshape((k,) + (1,) * len(self.batch_shape) + (k,))
        return values.expand((k,) + self.batch_shape + (k,)) if expand else values
