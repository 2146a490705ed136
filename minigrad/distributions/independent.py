"""Independent(base, n), as torch.distributions.Independent: the rightmost n batch dims of
base read as event dims, so log_prob sums over them (a diagonal Normal as one vector)."""
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, sum_rightmost


class Independent(Distribution):
    """base_distribution with its last reinterpreted_batch_ndims batch dims in the event."""
    arg_constraints = {}

    def __init__(self, base_distribution, reinterpreted_batch_ndims, validate_args=None):
        n, shape = reinterpreted_batch_ndims, base_distribution.batch_shape
        if not isinstance(n, int) or isinstance(n, bool) or not 0 <= n <= len(shape):
            raise ValueError(f"Independent: reinterpreted_batch_ndims must be an int from 0 "
                             f"to the base's batch dims {len(shape)} (batch_shape {shape}), "
                             f"got {n!r}")
        self.base_dist, self.reinterpreted_batch_ndims = base_distribution, n
        cut = len(shape) - n
        super().__init__(shape[:cut], shape[cut:] + base_distribution.event_shape,
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        batch_shape = tuple(batch_shape)
        base = self.base_dist.expand(batch_shape + self.event_shape[
            :self.reinterpreted_batch_ndims])
        return Independent(base, self.reinterpreted_batch_ndims,
                           validate_args=self._validate_args)

    @property
    def has_rsample(self):
        return self.base_dist.has_rsample

    @property
    def has_enumerate_support(self):
        return self.reinterpreted_batch_ndims == 0 and self.base_dist.has_enumerate_support

    @property
    def support(self):
        base = self.base_dist.support
        return base if self.reinterpreted_batch_ndims == 0 else \
            constraints.independent(base, self.reinterpreted_batch_ndims)

    @property
    def mean(self):
        return self.base_dist.mean

    @property
    def mode(self):
        return self.base_dist.mode

    @property
    def variance(self):
        return self.base_dist.variance

    def sample(self, sample_shape=(), generator=None):
        return self.base_dist.sample(sample_shape, generator=generator)

    def rsample(self, sample_shape=(), generator=None):
        return self.base_dist.rsample(sample_shape, generator=generator)

    def log_prob(self, value):
        return sum_rightmost(self.base_dist.log_prob(value), self.reinterpreted_batch_ndims)

    def entropy(self):
        return sum_rightmost(self.base_dist.entropy(), self.reinterpreted_batch_ndims)

    def enumerate_support(self, expand=True):
        if self.reinterpreted_batch_ndims > 0:
            raise NotImplementedError("Independent: no enumerate_support over event dims")
        return self.base_dist.enumerate_support(expand=expand)

    def __repr__(self):
        return f"Independent({self.base_dist!r}, {self.reinterpreted_batch_ndims})"
