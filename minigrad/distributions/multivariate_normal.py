"""MultivariateNormal(loc, covariance_matrix | precision_matrix | scale_tril), as torch's:
everything goes through the lower Cholesky factor L of the covariance (Sigma = L L^T), so
draws are loc + L z and log_prob needs one triangular solve."""
import math

import minigrad as mg
from minigrad import linalg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution, lazy_property
from minigrad.tensor import Tensor

_MATRICES = ("covariance_matrix", "precision_matrix", "scale_tril")


def batch_mahalanobis(scale_tril, x):
    """x^T Sigma^-1 x = |L^-1 x|^2 over the last dim, batch dims broadcast."""
    y = linalg.solve_triangular(scale_tril, x.unsqueeze(-1), upper=False).squeeze(-1)
    return (y ** 2).sum(-1)


def half_log_det(scale_tril):
    """log sqrt(det Sigma) = sum of log diag(L)."""
    return scale_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1)


def one_matrix(dist, covariance_matrix, precision_matrix, scale_tril):
    """(name, matrix): the one of the three given to `dist` (MultivariateNormal, Wishart),
    or a ValueError."""
    given = {k: v for k, v in zip(_MATRICES, (covariance_matrix, precision_matrix,
                                              scale_tril)) if v is not None}
    if len(given) != 1:
        raise ValueError(f"{dist}: give exactly one of covariance_matrix, precision_matrix "
                         f"or scale_tril, got {sorted(given) or 'none'}")
    (name, matrix), = given.items()
    return name, matrix


def tril_of(name, matrix):
    """The covariance's lower Cholesky factor L, from the matrix given as `name`."""
    if name == "scale_tril":
        return matrix
    if name == "covariance_matrix":
        return linalg.cholesky(matrix)
    return linalg.cholesky(linalg.inv(matrix))             # Sigma = precision^-1


class MultivariateNormal(Distribution):
    """A normal vector of mean loc (..., n); give exactly one of the covariance (..., n, n),
    its inverse the precision, or the covariance's lower Cholesky factor scale_tril."""
    arg_constraints = {"loc": constraints.real_vector,
                       "covariance_matrix": constraints.positive_definite,
                       "precision_matrix": constraints.positive_definite,
                       "scale_tril": constraints.lower_cholesky}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        name, matrix = one_matrix("MultivariateNormal", covariance_matrix, precision_matrix,
                                  scale_tril)
        for what, t, dims in (("loc", loc, 1), (name, matrix, 2)):
            if not isinstance(t, Tensor) or t.ndim < dims:
                raise ValueError(f"MultivariateNormal: {what} must be a tensor of at least "
                                 f"{dims} dims, got {getattr(t, 'shape', type(t).__name__)}")
        n = loc.shape[-1]
        if tuple(matrix.shape[-2:]) != (n, n):
            raise ValueError(f"MultivariateNormal: {name} of shape {tuple(matrix.shape)} must "
                             f"end in ({n}, {n}) to match loc of shape {tuple(loc.shape)}")
        try:
            batch_shape = mg.broadcast_shapes(matrix.shape[:-2], loc.shape[:-1])
        except (ValueError, RuntimeError):
            raise ValueError(f"MultivariateNormal: the batch dims of loc {tuple(loc.shape)} "
                             f"and {name} {tuple(matrix.shape)} do not broadcast") from None
        self.__dict__[name] = matrix.expand(batch_shape + (n, n))
        self.loc = loc.expand(batch_shape + (n,))
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        self._unbroadcasted_scale_tril = tril_of(name, matrix)

    def expand(self, batch_shape, _instance=None):
        new = MultivariateNormal.__new__(MultivariateNormal)
        batch_shape, n = tuple(batch_shape), self.event_shape[0]
        new.loc = self.loc.expand(batch_shape + (n,))
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in _MATRICES:
            if name in self.__dict__:
                new.__dict__[name] = self.__dict__[name].expand(batch_shape + (n, n))
        Distribution.__init__(new, batch_shape, (n,), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self.batch_shape + self.event_shape * 2)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self.batch_shape + self.event_shape * 2)

    @lazy_property
    def precision_matrix(self):
        return mg.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self.batch_shape + self.event_shape * 2)

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @property
    def variance(self):
        return (self._unbroadcasted_scale_tril ** 2).sum(-1).expand(
            self.batch_shape + self.event_shape)

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        z = mg.randn(shape, dtype=self.loc.dtype, device=self.loc.device, generator=generator)
        return self.loc + (self._unbroadcasted_scale_tril @ z.unsqueeze(-1)).squeeze(-1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.event_shape[0]
        m = batch_mahalanobis(self._unbroadcasted_scale_tril, value - self.loc)
        return -0.5 * (n * math.log(2 * math.pi) + m) - \
            half_log_det(self._unbroadcasted_scale_tril)

    def entropy(self):
        n = self.event_shape[0]
        h = 0.5 * n * (1 + math.log(2 * math.pi)) + \
            half_log_det(self._unbroadcasted_scale_tril)
        return h.expand(self.batch_shape)
