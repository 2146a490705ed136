"""Categorical(probs or logits), as torch.distributions.Categorical: an index in [0, K)
drawn with the weights of the last dim (probs need not sum to 1; they are normalised)."""
import math

import minigrad as mg
from minigrad import backend
from minigrad.distributions import constraints
from minigrad.distributions.bernoulli import one_of
from minigrad.distributions.distribution import Distribution, lazy_property, probs_to_logits
from minigrad.tensor import Tensor


class Categorical(Distribution):
    """An index into the last dim of probs (or softmax(logits)); batch_shape the rest."""
    arg_constraints = {"probs": constraints.simplex,
                       "logits": constraints.independent(constraints.real, 1)}
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, value = one_of(probs, logits, type(self).__name__)
        if not isinstance(value, Tensor) or not backend.is_floating(value.dtype) or \
                value.ndim < 1:
            raise ValueError(f"{type(self).__name__}: {name} must be a floating tensor of at "
                             f"least one dim (the categories), got {value!r}")
        if name == "probs":
            self.probs = value / value.sum(-1, keepdim=True)
        else:
            self.logits = value - value.logsumexp(-1, keepdim=True)
        self._num_events = value.shape[-1]
        super().__init__(value.shape[:-1], validate_args=validate_args)

    @property
    def _param(self):
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.logits

    def expand(self, batch_shape, _instance=None):
        shape = tuple(batch_shape) + (self._num_events,)
        given = "probs" if "probs" in self.__dict__ else "logits"
        new = type(self)(**{given: self.__dict__[given].expand(shape)}, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def support(self):
        return constraints.integer_interval(0, self._num_events - 1)

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs)

    @lazy_property
    def probs(self):
        return self.logits.softmax(-1)

    @property
    def param_shape(self):
        return self._param.shape

    @property
    def mean(self):
        return mg.full(self._extended_shape(), float("nan"), dtype=self._param.dtype,
                       device=self._param.device)

    @property
    def mode(self):
        return self.probs.argmax(-1)

    @property
    def variance(self):
        return self.mean

    def sample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        count = math.prod(shape[:len(shape) - len(self.batch_shape)])
        probs = self.probs.detach().reshape(-1, self._num_events)
        if count == 0 or probs.shape[0] == 0:
            return mg.zeros(shape, dtype=mg.int64, device=probs.device)
        drawn = mg.multinomial(probs, count, True, generator=generator)   # (batch, count)
        return drawn.transpose(0, 1).reshape(shape)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        value = value.long()
        shape = mg.broadcast_shapes(value.shape, self.batch_shape)
        log_pmf = self.logits.expand(shape + (self._num_events,))
        return log_pmf.gather(-1, value.expand(shape).unsqueeze(-1)).squeeze(-1)

    def entropy(self):
        # a probability of 0 has logits -inf: clamped, its term 0 * finite is 0
        logits = self.logits.clamp(min=mg.finfo(self.logits.dtype).min)
        return -(logits * self.probs).sum(-1)

    def enumerate_support(self, expand=True):
        values = mg.arange(self._num_events, dtype=mg.int64, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((self._num_events,) + self.batch_shape) if expand else values
