"""OneHotCategoricalStraightThrough, as torch's: OneHotCategorical whose rsample is the
straight-through estimator (Bengio et al., 2013): the one-hot draw in the forward pass,
the gradient of probs in the backward (draw + probs - probs.detach())."""
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.one_hot_categorical import OneHotCategorical


class OneHotCategoricalStraightThrough(OneHotCategorical):
    """A one-hot vector of length K with a biased but usable reparameterised draw."""
    has_rsample = True

    def expand(self, batch_shape, _instance=None):
        new = OneHotCategoricalStraightThrough.__new__(OneHotCategoricalStraightThrough)
        new._categorical = self._categorical.expand(batch_shape)
        Distribution.__init__(new, new._categorical.batch_shape, self.event_shape,
                              validate_args=False)
        new._validate_args = self._validate_args
        return new

    def rsample(self, sample_shape=(), generator=None):
        draw = self.sample(sample_shape, generator=generator)
        probs = self.probs
        return draw + (probs - probs.detach())
