"""Bernoulli(probs or logits), as torch.distributions.Bernoulli: 1 with probability probs."""
import minigrad as mg
import minigrad.functional as F
from minigrad.distributions import constraints
from minigrad.distributions.distribution import (Distribution, broadcast_all, lazy_property,
                                                 probs_to_logits)


def one_of(probs, logits, name):
    """The one parameter given of probs and logits, or a ValueError."""
    if (probs is None) == (logits is None):
        raise ValueError(f"{name}: either probs or logits must be given, but not both "
                         f"(got {'both' if probs is not None else 'neither'})")
    return ("probs", probs) if probs is not None else ("logits", logits)


class TrialParams:
    """A mixin: a trial's success parameter, given as probs or as logits; the other is
    derived when first read (Bernoulli, Geometric, Binomial, NegativeBinomial)."""

    @lazy_property
    def logits(self):
        return probs_to_logits(self.probs, is_binary=True)

    @lazy_property
    def probs(self):
        return self.logits.sigmoid()

    def _expanded(self, cls, batch_shape, *counts):
        """A `cls` over batch_shape from the parameter given (and `counts`, such as
        total_count, expanded too), validating as self does."""
        batch_shape = tuple(batch_shape)
        given = "probs" if "probs" in self.__dict__ else "logits"
        new = cls(*(c.expand(batch_shape) for c in counts),
                  **{given: self.__dict__[given].expand(batch_shape)}, validate_args=False)
        new._validate_args = self._validate_args
        return new


class Bernoulli(TrialParams, Distribution):
    """1 with probability probs (or sigmoid(logits)), else 0."""
    arg_constraints = {"probs": constraints.unit_interval, "logits": constraints.real}
    support = constraints.boolean
    has_enumerate_support = True

    def __init__(self, probs=None, logits=None, validate_args=None):
        name, value = one_of(probs, logits, "Bernoulli")
        param, = broadcast_all(value)
        setattr(self, name, param)
        super().__init__(param.shape, validate_args=validate_args)

    @property
    def _param(self):
        return self.__dict__["probs"] if "probs" in self.__dict__ else self.logits

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Bernoulli, batch_shape)

    @property
    def mean(self):
        return self.probs

    @property
    def mode(self):
        # 1 where probs > 1/2, 0 below, NaN at 1/2 (no single most likely value), as torch
        p = self.probs
        ones = (p >= 0.5).to(p.dtype)
        return mg.where(p == 0.5, mg.full_like(ones, float("nan")), ones)

    @property
    def variance(self):
        return self.probs * (1 - self.probs)

    def sample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        with mg.no_grad():
            return mg.bernoulli(self.probs.detach().expand(shape), generator=generator)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # log p^v (1-p)^(1-v) = v * logits - softplus(logits)
        return value * self.logits - F.softplus(self.logits)

    def entropy(self):
        return F.softplus(self.logits) - self.probs * self.logits

    def enumerate_support(self, expand=True):
        values = mg.arange(2, dtype=self._param.dtype, device=self._param.device)
        values = values.reshape((-1,) + (1,) * len(self.batch_shape))
        return values.expand((2,) + self.batch_shape) if expand else values
