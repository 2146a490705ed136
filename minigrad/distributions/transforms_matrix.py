"""Transforms onto the simplex and onto sets of matrices, as torch.distributions.transforms:
StickBreakingTransform (R^(K-1) -> the K-simplex), LowerCholeskyTransform,
PositiveDefiniteTransform and CorrCholeskyTransform (R^(D(D-1)/2) -> Cholesky factors of
D x D correlation matrices)."""
import math

import minigrad as mg
import minigrad.functional as F
from minigrad import linalg
from minigrad.distributions import constraints
from minigrad.distributions.transforms import Transform


class StickBreakingTransform(Transform):
    """x in R^(K-1) to the K-simplex by breaking a unit stick: piece k takes the fraction
    z_k = sigmoid(x_k - log(K-1-k)) of what is left (the shift maps x = 0 to the centre)."""
    domain, codomain, bijective = constraints.real_vector, constraints.simplex, True

    @staticmethod
    def _log_offset(n, like):
        return mg.arange(n, 0, -1, dtype=like.dtype, device=like.device).log()

    def _call(self, x):
        xs = x - self._log_offset(x.shape[-1], x)
        z, rest = xs.sigmoid(), (-xs).sigmoid()                # rest = 1 - z
        left = rest.cumprod(-1)                                # the stick still unbroken
        return F.pad(z, (0, 1), value=1.0) * F.pad(left, (1, 0), value=1.0)

    def _inverse(self, y):
        head = y[..., :-1]
        info = mg.finfo(y.dtype)
        left = (1 - head.cumsum(-1)).clamp(min=info.tiny)    # stick left after piece k
        return head.log() - left.log() + self._log_offset(head.shape[-1], y)

    def log_abs_det_jacobian(self, x, y):
        # triangular Jacobian: dy_k/dx_k = left_(k-1) z_k (1 - z_k) = y_k (1 - z_k)
        xs = x - self._log_offset(x.shape[-1], x)
        return (y[..., :-1].log() - F.softplus(xs)).sum(-1)

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError(f"StickBreakingTransform: needs a vector, got shape {shape}")
        return tuple(shape[:-1]) + (shape[-1] + 1,)

    def inverse_shape(self, shape):
        if len(shape) < 1:
            raise ValueError(f"StickBreakingTransform: needs a vector, got shape {shape}")
        return tuple(shape[:-1]) + (shape[-1] - 1,)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else StickBreakingTransform(cache_size)

    def __eq__(self, other):
        return isinstance(other, StickBreakingTransform)

    __hash__ = object.__hash__


class LowerCholeskyTransform(Transform):
    """A square matrix to a lower Cholesky factor: the strict lower part kept, exp of the
    diagonal, the upper part dropped (so not bijective, and no log-det)."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.lower_cholesky

    def _call(self, x):
        return x.tril(-1) + x.diagonal(dim1=-2, dim2=-1).exp().diag_embed()

    def _inverse(self, y):
        return y.tril(-1) + y.diagonal(dim1=-2, dim2=-1).log().diag_embed()

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else LowerCholeskyTransform(cache_size)

    def __eq__(self, other):
        return isinstance(other, LowerCholeskyTransform)

    __hash__ = object.__hash__


class PositiveDefiniteTransform(Transform):
    """A square matrix to L L^T with L = LowerCholeskyTransform()(x); the inverse goes
    back through the Cholesky factor."""
    domain = constraints.independent(constraints.real, 2)
    codomain = constraints.positive_definite

    def _call(self, x):
        low = LowerCholeskyTransform()(x)
        return low @ low.transpose(-2, -1)

    def _inverse(self, y):
        return LowerCholeskyTransform().inv(linalg.cholesky(y))

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else \
            PositiveDefiniteTransform(cache_size)

    def __eq__(self, other):
        return isinstance(other, PositiveDefiniteTransform)

    __hash__ = object.__hash__


def _tril_index(n, like):
    """Flat indices (row * n + col) of an n x n matrix's strict lower part, row by row."""
    rows, cols = mg.tril_indices(n, n, -1, device=like.device)
    return rows * n + cols


def tril_matrix_to_vec(mat):
    """The strict lower part of square matrices as vectors, row by row."""
    return mat.flatten(-2)[..., _tril_index(mat.shape[-1], mat)]


def vec_to_tril_matrix(vec, n):
    """tril_matrix_to_vec's inverse (zeros elsewhere): a product with the identity's rows
    picked out, so it stays a differentiable Tensor op on any device."""
    pick = mg.eye(n * n, dtype=vec.dtype, device=vec.device)[_tril_index(n, vec)]
    return (vec @ pick).reshape(tuple(vec.shape[:-1]) + (n, n))


def _corr_size(m):
    n = int(round((1 + math.sqrt(1 + 8 * m)) / 2))
    if n * (n - 1) // 2 != m:
        raise ValueError(f"CorrCholeskyTransform: the input's last dim must be D(D-1)/2 for "
                         f"some D, got {m}")
    return n


class CorrCholeskyTransform(Transform):
    """x in R^(D(D-1)/2) to the Cholesky factor of a D x D correlation matrix: tanh maps x
    into (-1, 1), then row i of the factor is built by stick-breaking its unit norm, each
    entry taking tanh(x_ij) of the norm still left (the LKJ construction)."""
    domain, codomain, bijective = constraints.real_vector, constraints.corr_cholesky, True

    def _call(self, x):
        eps = mg.finfo(x.dtype).eps
        r = vec_to_tril_matrix(x.tanh().clamp(-1 + eps, 1 - eps), _corr_size(x.shape[-1]))
        left = (1 - r * r).sqrt().cumprod(-1)                # norm left after entry j
        eye = mg.eye(r.shape[-1], dtype=x.dtype, device=x.device)
        return (r + eye) * F.pad(left[..., :-1], (1, 0), value=1.0)

    @staticmethod
    def _left(y):
        """1 - sum_(k<j) y_ik^2: the squared norm row i has left before entry j."""
        left = 1 - (y * y).cumsum(-1)
        return F.pad(left[..., :-1], (1, 0), value=1.0)

    def _inverse(self, y):
        t = tril_matrix_to_vec(y) / tril_matrix_to_vec(self._left(y)).sqrt()
        return t.atanh()

    def log_abs_det_jacobian(self, x, y):
        # d y_ij / d tanh(x_ij) = sqrt(left_ij) (triangular within each row), and
        # log(1 - tanh(x)^2) = 2 (log 2 - x - softplus(-2x)) stays finite for large |x|
        stick = 0.5 * tril_matrix_to_vec(self._left(y)).log().sum(-1)
        tanh = 2 * (math.log(2) - x - F.softplus(-2 * x)).sum(-1)
        return stick + tanh

    def forward_shape(self, shape):
        if len(shape) < 1:
            raise ValueError(f"CorrCholeskyTransform: needs a vector, got shape {shape}")
        n = _corr_size(shape[-1])
        return tuple(shape[:-1]) + (n, n)

    def inverse_shape(self, shape):
        if len(shape) < 2 or shape[-1] != shape[-2]:
            raise ValueError(f"CorrCholeskyTransform: needs square matrices, got shape "
                             f"{shape}")
        n = shape[-1]
        return tuple(shape[:-2]) + (n * (n - 1) // 2,)

    def with_cache(self, cache_size=1):
        return self if self._cache_size == cache_size else CorrCholeskyTransform(cache_size)
