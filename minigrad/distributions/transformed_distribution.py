"""TransformedDistribution(base, transforms), as torch's: the law of t_n(...t_1(x)) for x
drawn from base, with log_prob by the change of variables
log p(y) = log p_base(x) - sum log|dt_i/dx|, and cdf/icdf where every transform is monotone.
TransformedDistribution(Normal(mu, sigma), TanhTransform(cache_size=1)) is SAC's squashed
policy."""
from minigrad.autograd import no_grad
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, sum_rightmost
from minigrad.distributions.independent import Independent
from minigrad.distributions.transforms import ComposeTransform, Transform


class TransformedDistribution(Distribution):
    """base_distribution pushed through transforms (one Transform or a list, applied in
    order); the event dims grow where a transform couples more dims than base's event."""
    arg_constraints = {}

    def __init__(self, base_distribution, transforms, validate_args=None):
        if isinstance(transforms, Transform):
            transforms = [transforms]
        elif not isinstance(transforms, (list, tuple)) or \
                not all(isinstance(t, Transform) for t in transforms):
            raise ValueError(f"transforms must be a Transform or a list of Transforms, got "
                             f"{transforms!r}")
        if not isinstance(base_distribution, Distribution):
            raise ValueError(f"TransformedDistribution: base_distribution must be a "
                             f"Distribution, got {type(base_distribution).__name__}")
        self.transforms = list(transforms)
        chain = ComposeTransform(self.transforms)
        base_shape = base_distribution.batch_shape + base_distribution.event_shape
        base_event_dim = len(base_distribution.event_shape)
        domain_event_dim = chain.domain.event_dim
        if len(base_shape) < domain_event_dim:
            raise ValueError(f"TransformedDistribution: the base distribution needs at least "
                             f"{domain_event_dim} dims, its shape is {base_shape}")
        if domain_event_dim > base_event_dim:       # the transforms couple batch dims too
            base_distribution = Independent(base_distribution,
                                            domain_event_dim - base_event_dim)
        self.base_dist = base_distribution
        shape = chain.forward_shape(base_shape)
        event_dim = chain.codomain.event_dim + max(base_event_dim - domain_event_dim, 0)
        cut = len(shape) - event_dim
        super().__init__(shape[:cut], shape[cut:], validate_args=validate_args)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def support(self):
        if not self.transforms:
            return self.base_dist.support
        codomain = self.transforms[-1].codomain
        extra = len(self.event_shape) - codomain.event_dim
        return constraints.independent(codomain, extra) if extra > 0 else codomain

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        base_shape = batch_shape + ComposeTransform(self.transforms).inverse_shape(
            self.event_shape)
        cut = len(base_shape) - len(self.base_dist.event_shape)
        new = type(self).__new__(type(self))
        new.base_dist = self.base_dist.expand(base_shape[:cut])
        new.transforms = self.transforms
        Distribution.__init__(new, batch_shape, self.event_shape, validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=(), generator=None):
        with no_grad():
            x = self.base_dist.sample(sample_shape, generator=generator)
            for t in self.transforms:
                x = t(x)
            return x

    def rsample(self, sample_shape=(), generator=None):
        x = self.base_dist.rsample(sample_shape, generator=generator)
        for t in self.transforms:
            x = t(x)
        return x

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        event_dim, y, log_prob = len(self.event_shape), value, 0.0
        for t in reversed(self.transforms):
            x = t.inv(y)
            event_dim += t.domain.event_dim - t.codomain.event_dim
            log_prob = log_prob - sum_rightmost(t.log_abs_det_jacobian(x, y),
                                                event_dim - t.domain.event_dim)
            y = x
        return log_prob + sum_rightmost(self.base_dist.log_prob(y),
                                        event_dim - len(self.base_dist.event_shape))

    def _monotonize_cdf(self, value):
        """A cdf of the base read in y's direction: 1 - F where the chain decreases."""
        sign = 1
        for t in self.transforms:
            sign = sign * t.sign
        if isinstance(sign, int) and sign == 1:
            return value
        return sign * (value - 0.5) + 0.5

    def cdf(self, value):
        for t in reversed(self.transforms):
            value = t.inv(value)
        if self._validate_args:
            self.base_dist._validate_sample(value)
        return self._monotonize_cdf(self.base_dist.cdf(value))

    def icdf(self, value):
        value = self.base_dist.icdf(self._monotonize_cdf(value))
        for t in self.transforms:
            value = t(value)
        return value

    def __repr__(self):
        return f"{type(self).__name__}({self.base_dist!r}, {self.transforms!r})"
