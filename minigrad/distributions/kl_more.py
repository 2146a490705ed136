"""The KLs of the families added after kl_families.py (registered on import, as kl.py's):
LowRankMultivariateNormal with itself and with MultivariateNormal either way, through
KL = 1/2 [tr(Sq^-1 Sp) + (mq - mp)^T Sq^-1 (mq - mp) - n] + log sqrt det Sq - log sqrt det Sp
with each side's own cheap inverse (Woodbury for the low-rank one)."""
import minigrad as mg
from minigrad.distributions.kl import register_kl
from minigrad.distributions.low_rank_multivariate_normal import LowRankMultivariateNormal
from minigrad.distributions.multivariate_normal import (MultivariateNormal, batch_mahalanobis,
                                                        half_log_det)


def _root(p):
    """S with S S^T = p's covariance."""
    if isinstance(p, LowRankMultivariateNormal):
        return p._covariance_root()
    return p._unbroadcasted_scale_tril


def _half_log_det(p):
    if isinstance(p, LowRankMultivariateNormal):
        return p._half_log_det()
    return half_log_det(p._unbroadcasted_scale_tril)


def _trace_and_mahalanobis(q, S, x):
    """tr(Sq^-1 S S^T) and x^T Sq^-1 x."""
    if isinstance(q, LowRankMultivariateNormal):
        return q._trace_inverse_times(S), q._mahalanobis(x)
    L = q._unbroadcasted_scale_tril
    shape = mg.broadcast_shapes(L.shape[:-2], S.shape[:-2])
    y = mg.linalg.solve_triangular(L.expand(shape + tuple(L.shape[-2:])),
                                   S.expand(shape + tuple(S.shape[-2:])), upper=False)
    return (y ** 2).flatten(-2).sum(-1), batch_mahalanobis(L, x)


def _kl_gaussians(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(f"kl_divergence: {type(p).__name__} and {type(q).__name__} of "
                         f"different event shapes {p.event_shape} and {q.event_shape}")
    n = p.event_shape[0]
    trace, mahalanobis = _trace_and_mahalanobis(q, _root(p), q.loc - p.loc)
    batch = mg.broadcast_shapes(p.batch_shape, q.batch_shape)
    return (0.5 * (trace + mahalanobis - n) + _half_log_det(q) - _half_log_det(p)
            ).expand(batch)


register_kl(LowRankMultivariateNormal, LowRankMultivariateNormal)(_kl_gaussians)
register_kl(LowRankMultivariateNormal, MultivariateNormal)(_kl_gaussians)
register_kl(MultivariateNormal, LowRankMultivariateNormal)(_kl_gaussians)
