"""NegativeBinomial(total_count, probs or logits), as torch.distributions.NegativeBinomial:
the number of successes before total_count failures of Bernoulli(probs) trials; draws by
the Gamma-Poisson mixture Poisson(Gamma(total_count, (1 - p) / p)), not reparameterisable."""
import minigrad as mg
import minigrad.functional as F
from minigrad.distributions import constraints
from minigrad.distributions.bernoulli import TrialParams, one_of
from minigrad.distributions.distribution import Distribution, broadcast_all, one_stream
from minigrad.ops.gamma_sample import standard_gamma


class NegativeBinomial(TrialParams, Distribution):
    """Counts k >= 0 with probability C(k + r - 1, k) (1 - p)^r p^k, r = total_count > 0
    (not necessarily an integer) and p = probs in [0, 1) (or sigmoid(logits))."""
    arg_constraints = {"total_count": constraints.greater_than_eq(0.0),
                       "probs": constraints.half_open_interval(0.0, 1.0),
                       "logits": constraints.real}
    support = constraints.nonnegative_integer

    def __init__(self, total_count, probs=None, logits=None, validate_args=None):
        name, value = one_of(probs, logits, "NegativeBinomial")
        self.total_count, param = broadcast_all(total_count, value)
        self.total_count = self.total_count.to(param.dtype)
        setattr(self, name, param)
        super().__init__(param.shape, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return self._expanded(NegativeBinomial, batch_shape, self.total_count)

    @property
    def mean(self):
        return self.total_count * self.logits.exp()

    @property
    def mode(self):
        return ((self.total_count - 1) * self.logits.exp()).floor().clamp(min=0.0)

    @property
    def variance(self):
        return self.mean / (-self.logits).sigmoid()

    def sample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        gen = one_stream(generator)
        with mg.no_grad():
            # the Poisson's rate is Gamma(total_count, rate (1 - p) / p) = g * p / (1 - p)
            g = standard_gamma(self.total_count.detach().expand(shape), generator=gen)
            rate = (g * self.logits.detach().exp()).clamp(min=mg.finfo(g.dtype).tiny)
            return mg.poisson(rate, generator=gen)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        r = self.total_count
        log_unnormalized = r * F.logsigmoid(-self.logits) + value * F.logsigmoid(self.logits)
        # log C(k + r - 1, k); 0 where r + k = 0 (a count of 0 with r = 0 is sure)
        log_choose = (r + value).lgamma() - (value + 1).lgamma() - r.lgamma()
        log_choose = mg.where(r + value == 0, mg.zeros_like(log_choose), log_choose)
        return log_unnormalized + log_choose
