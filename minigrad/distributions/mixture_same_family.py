"""MixtureSameFamily(mixture_distribution, component_distribution), as torch's: a
Categorical picks one of the K components, which are the last batch dim of one
distribution; log_prob = logsumexp_k(log w_k + log p_k(x)). No rsample (the pick is
discrete), as PyTorch."""
import minigrad as mg
from minigrad.distributions.categorical import Categorical
from minigrad.distributions.distribution import Distribution, one_stream


class MixtureSameFamily(Distribution):
    """batch_shape is the components' batch shape but the last (K) dim; event_shape
    theirs."""
    arg_constraints = {}
    has_rsample = False

    def __init__(self, mixture_distribution, component_distribution, validate_args=None):
        if not isinstance(mixture_distribution, Categorical):
            raise ValueError("The Mixture distribution needs to be an instance of "
                             "mg.distributions.Categorical")
        if not isinstance(component_distribution, Distribution):
            raise ValueError("The Component distribution need to be an instance of "
                             "mg.distributions.Distribution")
        mix, comp = mixture_distribution, component_distribution
        mbs, cbs = mix.batch_shape, comp.batch_shape[:-1]
        if len(mbs) > len(cbs) or any(m != 1 and c != 1 and m != c
                                      for m, c in zip(reversed(mbs), reversed(cbs))):
            raise ValueError(f"`mixture_distribution.batch_shape` ({mbs}) is not compatible "
                             f"with `component_distribution.batch_shape`({cbs})")
        k = mix.logits.shape[-1]
        if not comp.batch_shape or comp.batch_shape[-1] != k:
            raise ValueError(f"`mixture_distribution component` ({k}) does not equal "
                             f"`component_distribution.batch_shape[-1]` "
                             f"({comp.batch_shape[-1] if comp.batch_shape else None})")
        self._mixture_distribution, self._component_distribution = mix, comp
        self._num_component, self._event_ndims = k, len(comp.event_shape)
        super().__init__(cbs, comp.event_shape, validate_args=validate_args)

    @property
    def mixture_distribution(self):
        return self._mixture_distribution

    @property
    def component_distribution(self):
        return self._component_distribution

    @property
    def support(self):
        return self._component_distribution.support

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        comp = self._component_distribution.expand(batch_shape + (self._num_component,))
        mix = self._mixture_distribution.expand(batch_shape)
        new = MixtureSameFamily(mix, comp, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def _pad_weights(self, probs):
        """(..., K) weights with ones for the event dims after K."""
        return probs.reshape(probs.shape + (1,) * self._event_ndims)

    def _pad(self, x):
        """x with a K dim of 1 before its event dims, to meet the components."""
        return x.unsqueeze(-1 - self._event_ndims)

    @property
    def mean(self):
        probs = self._pad_weights(self._mixture_distribution.probs)
        return (probs * self._component_distribution.mean).sum(-1 - self._event_ndims)

    @property
    def variance(self):
        # law of total variance: E[Var(x | k)] + Var(E[x | k])
        probs = self._pad_weights(self._mixture_distribution.probs)
        dim = -1 - self._event_ndims
        comp = self._component_distribution
        mean_cond_var = (probs * comp.variance).sum(dim)
        var_cond_mean = (probs * (comp.mean - self._pad(self.mean)) ** 2).sum(dim)
        return mean_cond_var + var_cond_mean

    def cdf(self, x):
        x = self._pad(x)
        cdf_x = self._component_distribution.cdf(x)
        return (cdf_x * self._mixture_distribution.probs).sum(-1)

    def log_prob(self, x):
        if self._validate_args:
            self._validate_sample(x)
        log_prob_x = self._component_distribution.log_prob(self._pad(x))   # (..., K)
        log_mix_prob = self._mixture_distribution.logits.log_softmax(-1)
        return (log_prob_x + log_mix_prob).logsumexp(-1)

    def sample(self, sample_shape=(), generator=None):
        gen = one_stream(generator)
        with mg.no_grad():
            sample_shape = tuple(sample_shape)
            n = len(sample_shape) + len(self.batch_shape)
            mbs = self._mixture_distribution.batch_shape
            pick = self._mixture_distribution.sample(sample_shape, generator=gen)
            comp = self._component_distribution.sample(sample_shape, generator=gen)
            # the pick as (*sample, *batch, 1, *event ones), to gather the K dim with
            pick = pick.reshape(sample_shape + (1,) * (len(self.batch_shape) - len(mbs))
                                + mbs + (1,) * (1 + self._event_ndims))
            index = pick.expand(comp.shape[:n] + (1,) + comp.shape[n + 1:])
            return comp.gather(n, index).squeeze(n)

    def __repr__(self):
        return (f"MixtureSameFamily(\n  {self._mixture_distribution!r},\n  "
                f"{self._component_distribution!r})")
