"""LowRankMultivariateNormal(loc, cov_factor, cov_diag), as torch's: a normal vector of
covariance Sigma = W W^T + diag(d), W (n, k) with k small. log_prob and entropy never form
Sigma: through the capacitance matrix C = I_k + W^T D^-1 W (Woodbury and the matrix
determinant lemma), log det Sigma = log det C + sum log d and
x^T Sigma^-1 x = x^T D^-1 x - |L_C^-1 W^T D^-1 x|^2, L_C the Cholesky factor of C."""
import math

import minigrad as mg
from minigrad import linalg
from minigrad.distributions import constraints
from minigrad.distributions.distribution import (Distribution, lazy_property,
                                                 one_stream)
from minigrad.tensor import Tensor


def _capacitance_tril(W, D):
    """Cholesky factor of I + W^T D^-1 W (W (..., n, k), D (..., n))."""
    k = W.shape[-1]
    Wt_Dinv = W.transpose(-2, -1) / D.unsqueeze(-2)
    C = Wt_Dinv @ W + mg.eye(k, dtype=W.dtype, device=W.device)
    return linalg.cholesky(C)


class LowRankMultivariateNormal(Distribution):
    """Mean loc (..., n), covariance cov_factor @ cov_factor^T + diag(cov_diag), with
    cov_factor (..., n, k) and cov_diag (..., n) positive; batch dims broadcast."""
    arg_constraints = {"loc": constraints.real_vector,
                       "cov_factor": constraints.independent(constraints.real, 2),
                       "cov_diag": constraints.independent(constraints.positive, 1)}
    support = constraints.real_vector
    has_rsample = True

    def __init__(self, loc, cov_factor, cov_diag, validate_args=None):
        for what, t, dims in (("loc", loc, 1), ("cov_factor", cov_factor, 2),
                              ("cov_diag", cov_diag, 1)):
            if not isinstance(t, Tensor) or t.ndim < dims:
                raise ValueError(f"LowRankMultivariateNormal: {what} must be a tensor of at "
                                 f"least {dims} dims, got "
                                 f"{getattr(t, 'shape', type(t).__name__)}")
        n = loc.shape[-1]
        if cov_factor.shape[-2] != n or cov_diag.shape[-1] != n:
            raise ValueError(f"LowRankMultivariateNormal: cov_factor {tuple(cov_factor.shape)} "
                             f"must be (..., {n}, rank) and cov_diag {tuple(cov_diag.shape)} "
                             f"(..., {n}) to match loc of shape {tuple(loc.shape)}")
        try:
            batch_shape = mg.broadcast_shapes(loc.shape[:-1], cov_factor.shape[:-2],
                                              cov_diag.shape[:-1])
        except (ValueError, RuntimeError):
            raise ValueError(f"LowRankMultivariateNormal: the batch dims of loc "
                             f"{tuple(loc.shape)}, cov_factor {tuple(cov_factor.shape)} and "
                             f"cov_diag {tuple(cov_diag.shape)} do not broadcast") from None
        self.loc = loc.expand(batch_shape + (n,))
        self.cov_factor = cov_factor.expand(batch_shape + tuple(cov_factor.shape[-2:]))
        self.cov_diag = cov_diag.expand(batch_shape + (n,))
        super().__init__(batch_shape, (n,), validate_args=validate_args)
        self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag = cov_factor, cov_diag
        self._capacitance_tril = _capacitance_tril(cov_factor, cov_diag)

    def expand(self, batch_shape, _instance=None):
        new = LowRankMultivariateNormal.__new__(LowRankMultivariateNormal)
        batch_shape, n = tuple(batch_shape), self.event_shape[0]
        new.loc = self.loc.expand(batch_shape + (n,))
        new.cov_factor = self.cov_factor.expand(batch_shape + tuple(self.cov_factor.shape[-2:]))
        new.cov_diag = self.cov_diag.expand(batch_shape + (n,))
        new._unbroadcasted_cov_factor = self._unbroadcasted_cov_factor
        new._unbroadcasted_cov_diag = self._unbroadcasted_cov_diag
        new._capacitance_tril = self._capacitance_tril
        Distribution.__init__(new, batch_shape, (n,), validate_args=False)
        new._validate_args = self._validate_args
        return new

    @property
    def mean(self):
        return self.loc

    @property
    def mode(self):
        return self.loc

    @lazy_property
    def variance(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return ((W ** 2).sum(-1) + D).expand(self.batch_shape + self.event_shape)

    @lazy_property
    def covariance_matrix(self):
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        return (W @ W.transpose(-2, -1) + mg.diag_embed(D)).expand(
            self.batch_shape + self.event_shape * 2)

    @lazy_property
    def precision_matrix(self):
        # Woodbury: D^-1 - D^-1 W C^-1 W^T D^-1 = D^-1 - A^T A with A = L_C^-1 W^T D^-1
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        A = linalg.solve_triangular(self._capacitance_tril,
                                    W.transpose(-2, -1) / D.unsqueeze(-2), upper=False)
        return (mg.diag_embed(1 / D) - A.transpose(-2, -1) @ A).expand(
            self.batch_shape + self.event_shape * 2)

    @lazy_property
    def scale_tril(self):
        # the Cholesky factor of W W^T + D, scaled by sqrt(D) for a better-conditioned factor
        D_sqrt = self._unbroadcasted_cov_diag.sqrt()
        Wn = self._unbroadcasted_cov_factor / D_sqrt.unsqueeze(-1)
        K = Wn @ Wn.transpose(-2, -1) + mg.eye(self.event_shape[0], dtype=Wn.dtype,
                                                device=Wn.device)
        return (D_sqrt.unsqueeze(-1) * linalg.cholesky(K)).expand(
            self.batch_shape + self.event_shape * 2)

    def rsample(self, sample_shape=(), generator=None):
        generator = one_stream(generator)
        shape = self._extended_shape(sample_shape)
        rank = self.cov_factor.shape[-1]
        eps_w = mg.randn(shape[:-1] + (rank,), dtype=self.loc.dtype, device=self.loc.device,
                         generator=generator)
        eps_d = mg.randn(shape, dtype=self.loc.dtype, device=self.loc.device,
                         generator=generator)
        return self.loc + (self._unbroadcasted_cov_factor @ eps_w.unsqueeze(-1)).squeeze(-1) \
            + self._unbroadcasted_cov_diag.sqrt() * eps_d

    def _half_log_det(self):
        """log sqrt(det Sigma) = sum log diag(L_C) + 1/2 sum log d."""
        return self._capacitance_tril.diagonal(dim1=-2, dim2=-1).log().sum(-1) + \
            0.5 * self._unbroadcasted_cov_diag.log().sum(-1)

    def _mahalanobis(self, x):
        """x^T Sigma^-1 x over the last dim (Woodbury)."""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        Wt_Dinv_x = (W.transpose(-2, -1) @ (x / D).unsqueeze(-1))
        L = self._capacitance_tril
        L = L.expand(tuple(Wt_Dinv_x.shape[:-2]) + tuple(L.shape[-2:]))
        y = linalg.solve_triangular(L, Wt_Dinv_x, upper=False).squeeze(-1)
        return (x ** 2 / D).sum(-1) - (y ** 2).sum(-1)

    def _trace_inverse_times(self, S):
        """tr(Sigma^-1 S S^T) = |D^-1/2 S|^2 - |L_C^-1 W^T D^-1 S|^2 (S (..., n, m))."""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        B = W.transpose(-2, -1) @ (S / D.unsqueeze(-1))
        L = self._capacitance_tril
        L = L.expand(tuple(B.shape[:-2]) + tuple(L.shape[-2:]))
        y = linalg.solve_triangular(L, B, upper=False)
        return (S ** 2 / D.unsqueeze(-1)).flatten(-2).sum(-1) - (y ** 2).flatten(-2).sum(-1)

    def _covariance_root(self):
        """S with S S^T = Sigma: [W, diag(sqrt d)], (..., n, k + n)."""
        W, D = self._unbroadcasted_cov_factor, self._unbroadcasted_cov_diag
        shape = mg.broadcast_shapes(W.shape[:-2], D.shape[:-1])
        return mg.cat([W.expand(shape + tuple(W.shape[-2:])),
                       mg.diag_embed(D.sqrt()).expand(shape + self.event_shape * 2)], -1)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        n = self.event_shape[0]
        m = self._mahalanobis(value - self.loc)
        return -0.5 * (n * math.log(2 * math.pi) + m) - self._half_log_det()

    def entropy(self):
        n = self.event_shape[0]
        h = 0.5 * n * (1 + math.log(2 * math.pi)) + self._half_log_det()
        return h.expand(self.batch_shape)
