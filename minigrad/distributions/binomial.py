"""Binomial(total_count, probs or logits), as torch.distributions.Binomial: draws by
mg.binomial (the host generator); not reparameterisable."""
import minigrad as mg
import minigrad.functional as F
from minigrad.distributions import constraints
from minigrad.distributions.bernoulli import TrialParams, one_of
from minigrad.distributions.distribution import Distribution, broadcast_all


class Binomial(TrialParams, Distribution):
    """The number of successes in total_count trials of probability probs (or
    sigmoid(logits)); total_count and the probability broadcast."""
    arg_constraints = {"total_count": constraints.nonnegative_integer,
                       "probs": constraints.unit_interval, "logits": constraints.real}

    def __init__(self, total_count=1, probs=None, logits=None, validate_args=None):
        name, value = one_of(probs, logits, "Binomial")
        self.total_count, param = broadcast_all(total_count, value)
        self.total_count = self.total_count.to(param.dtype)
        setattr(self, name, param)
        super().__init__(param.shape, validate_args=validate_args)

    @property
    def support(self):
        return constraints.integer_interval(0, self.total_count)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(Binomial, batch_shape, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.probs

    @property
    def mode(self):
        return ((self.total_count + 1) * self.probs).floor().clamp(max=self.total_count)

    @property
    def variance(self):
        return self.total_count * self.probs * (1 - self.probs)

    def sample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        with mg.no_grad():
            return mg.binomial(self.total_count.detach().expand(shape),
                               self.probs.detach().expand(shape), generator=generator)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.total_count
        # log C(n, k) + k logits - n log(1 + e^logits), in logits (stable at p near 0 or 1)
        log_choose = (n + 1).lgamma() - (value + 1).lgamma() - (n - value + 1).lgamma()
        return log_choose + value * self.logits - n * F.softplus(self.logits)
