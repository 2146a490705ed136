"""Geometric(probs or logits), as torch.distributions.Geometric: the number of failures
before the first success of Bernoulli(probs) trials; draws floor(log u / log(1 - p))."""
import minigrad as mg
import minigrad.functional as F
from minigrad.distributions import constraints
from minigrad.distributions.bernoulli import TrialParams, one_of
from minigrad.distributions.distribution import Distribution, broadcast_all


class Geometric(TrialParams, Distribution):
    """Counts k >= 0 with probability (1 - p)^k p; probs in (0, 1] (or logits)."""
    arg_constraints = {"probs": constraints.interval(0.0, 1.0), "logits": constraints.real}
    support = constraints.nonnegative_integer
    has_enumerate_support = False

    def __init__(self, probs=None, logits=None, validate_args=None):
        # not a Bernoulli subclass: kl_divergence would take Bernoulli's pairs for it
        name, value = one_of(probs, logits, "Geometric")
        param, = broadcast_all(value)
        setattr(self, name, param)
        super().__init__(param.shape, validate_args=validate_args)
        if self._validate_args and "probs" in self.__dict__:    # p = 0: never a success
            with mg.no_grad():
                bad = self.probs[self.probs == 0]
            if bad.numel():
                raise ValueError(f"Expected parameter probs (Tensor of shape "
                                 f"{tuple(self.probs.shape)}) of distribution {self!r} to be "
                                 f"positive but found invalid values:\n{bad!r}")

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Geometric, batch_shape)

    @property
    def mean(self):
        return 1 / self.probs - 1

    @property
    def mode(self):
        return mg.zeros_like(self.probs)

    @property
    def variance(self):
        return (1 / self.probs - 1) / self.probs

    def sample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        p = self.probs.detach()
        with mg.no_grad():
            u = mg.rand(shape, dtype=p.dtype, device=p.device, generator=generator)
            u = u.clamp(min=mg.finfo(p.dtype).tiny)              # log 0 = -inf
            return (u.log() / (-p).log1p()).floor()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p = self.probs
        # k log(1 - p) + log p, with 0 * log 0 = 0 where p = 1 (then k = 0 surely)
        failures = value * (-p).log1p()
        failures = mg.where((value == 0) & (p == 1), mg.zeros_like(failures), failures)
        return failures + p.log()

    def entropy(self):
        return F.binary_cross_entropy_with_logits(self.logits, self.probs,
                                                  reduction="none") / self.probs

    def enumerate_support(self, expand=True):
        raise NotImplementedError("Geometric has no enumerable support (it is infinite)")
