"""Wishart(df, covariance_matrix | precision_matrix | scale_tril), as
torch.distributions.Wishart: the law of sum_k x_k x_k^T over df normal vectors x_k of
covariance Sigma = L L^T (df need not be an integer: any df > p - 1). Draws by the Bartlett
decomposition L A A^T L^T, A lower triangular with sqrt(Chi2(df - i)) on the diagonal and
standard normals below it, so rsample carries gradients to the matrix and to df (Chi2's
implicit reparameterisation)."""
import math
import warnings

import minigrad as mg
from minigrad import linalg
from minigrad.distributions import constraints
from minigrad.distributions.chi2 import Chi2
from minigrad.distributions.distribution import Distribution, lazy_property, one_stream
from minigrad.distributions.multivariate_normal import (_MATRICES, half_log_det, one_matrix,
                                                        tril_of)
from minigrad.tensor import Tensor

_LOG_2 = math.log(2)


def _mvdigamma(x, p):
    """d/dx log Γ_p(x) = sum_i ψ(x - i/2), i < p."""
    offsets = mg.arange(p, dtype=x.dtype, device=x.device) / 2
    return (x.unsqueeze(-1) - offsets).digamma().sum(-1)


class Wishart(Distribution):
    """Positive-definite p x p matrices of mean df * Sigma; give df (> p - 1, a number or a
    tensor broadcasting with the batch) and exactly one of the covariance, its inverse the
    precision, or its lower Cholesky factor scale_tril. torch retries draws that come out
    singular; here the Bartlett diagonal is kept above eps instead, so none do."""
    support = constraints.positive_definite
    has_rsample = True

    @property
    def arg_constraints(self):
        return {"covariance_matrix": constraints.positive_definite,
                "precision_matrix": constraints.positive_definite,
                "scale_tril": constraints.lower_cholesky,
                "df": constraints.greater_than(self.event_shape[-1] - 1)}

    def __init__(self, df, covariance_matrix=None, precision_matrix=None, scale_tril=None,
                 validate_args=None):
        name, matrix = one_matrix("Wishart", covariance_matrix, precision_matrix, scale_tril)
        if not isinstance(matrix, Tensor) or matrix.ndim < 2 or \
                matrix.shape[-1] != matrix.shape[-2]:
            raise ValueError(f"Wishart: {name} must be a tensor of square matrices (..., p, "
                             f"p), got {getattr(matrix, 'shape', type(matrix).__name__)}")
        if not isinstance(df, Tensor):
            if isinstance(df, bool) or not isinstance(df, (int, float)):
                raise TypeError(f"Wishart: df must be a number or a tensor, got "
                                f"{type(df).__name__}")
            df = mg.tensor(float(df), dtype=matrix.dtype, device=matrix.device)
        p = matrix.shape[-1]
        try:
            batch_shape = mg.broadcast_shapes(matrix.shape[:-2], df.shape)
        except (ValueError, RuntimeError):
            raise ValueError(f"Wishart: the batch dims of df {tuple(df.shape)} and {name} "
                             f"{tuple(matrix.shape)} do not broadcast") from None
        self.df = df.expand(batch_shape)
        self.__dict__[name] = matrix.expand(batch_shape + (p, p))
        super().__init__(batch_shape, (p, p), validate_args=validate_args)
        with mg.no_grad():
            low = bool((self.df < p).any())
        if low:
            warnings.warn(f"Wishart: df < p = {p} (but > p - 1): draws are close to "
                          f"singular", stacklevel=2)
        self._unbroadcasted_scale_tril = tril_of(name, matrix)

    def expand(self, batch_shape, _instance=None):
        new = Wishart.__new__(Wishart)
        batch_shape, event = tuple(batch_shape), self.event_shape
        new.df = self.df.expand(batch_shape)
        new._unbroadcasted_scale_tril = self._unbroadcasted_scale_tril
        for name in _MATRICES:
            if name in self.__dict__:
                new.__dict__[name] = self.__dict__[name].expand(batch_shape + event)
        Distribution.__init__(new, batch_shape, event, validate_args=False)
        new._validate_args = self._validate_args
        return new

    @lazy_property
    def scale_tril(self):
        return self._unbroadcasted_scale_tril.expand(self.batch_shape + self.event_shape)

    @lazy_property
    def covariance_matrix(self):
        L = self._unbroadcasted_scale_tril
        return (L @ L.transpose(-2, -1)).expand(self.batch_shape + self.event_shape)

    @lazy_property
    def precision_matrix(self):
        return mg.cholesky_inverse(self._unbroadcasted_scale_tril).expand(
            self.batch_shape + self.event_shape)

    def _df(self):
        return self.df.reshape(self.batch_shape + (1, 1))

    @property
    def mean(self):
        return self._df() * self.covariance_matrix

    @property
    def mode(self):
        # (df - p - 1) Sigma, which is positive definite only for df > p + 1 (NaN else)
        factor = self._df() - self.event_shape[-1] - 1
        factor = mg.where(factor > 0, factor, mg.full_like(factor, math.nan))
        return factor * self.covariance_matrix

    @property
    def variance(self):
        S = self.covariance_matrix
        d = S.diagonal(dim1=-2, dim2=-1)
        return self._df() * (S ** 2 + d.unsqueeze(-1) * d.unsqueeze(-2))

    def rsample(self, sample_shape=(), generator=None):
        shape = self._extended_shape(sample_shape)
        generator, p = one_stream(generator), self.event_shape[-1]
        L = self._unbroadcasted_scale_tril
        df = self.df.unsqueeze(-1) - mg.arange(p, dtype=L.dtype, device=L.device)
        sample_shape = shape[:len(shape) - len(self.batch_shape) - 2]
        chi2 = Chi2(df, validate_args=False).rsample(sample_shape, generator=generator)
        eps = mg.finfo(L.dtype).eps
        below = mg.randn(shape, dtype=L.dtype, device=L.device, generator=generator)
        A = below.tril(-1) + mg.diag_embed(chi2.sqrt().clamp(min=eps))
        LA = L @ A
        return LA @ LA.transpose(-2, -1)

    def _log_normaliser(self):
        """log of the density's constant: df (p log 2 / 2 + log sqrt det Sigma) + log Γ_p."""
        p, nu = self.event_shape[-1], self.df
        return nu * (p * _LOG_2 / 2 + half_log_det(self._unbroadcasted_scale_tril)) + \
            mg.mvlgamma(nu / 2, p)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        p, nu = self.event_shape[-1], self.df
        trace = mg.cholesky_solve(value, self._unbroadcasted_scale_tril).diagonal(
            dim1=-2, dim2=-1).sum(-1)
        return (-self._log_normaliser() + (nu - p - 1) / 2 * linalg.slogdet(value).logabsdet
                - trace / 2)

    def entropy(self):
        p, nu = self.event_shape[-1], self.df
        # -E[log p]: E[log det X] = ψ_p(df/2) + p log 2 + log det Sigma, E[tr(Sigma^-1 X)] = p df
        log_det = 2 * half_log_det(self._unbroadcasted_scale_tril)
        mean_log_det = _mvdigamma(nu / 2, p) + p * _LOG_2 + log_det
        return (self._log_normaliser() - (nu - p - 1) / 2 * mean_log_det + nu * p / 2
                ).expand(self.batch_shape)
