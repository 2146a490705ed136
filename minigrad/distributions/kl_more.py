"""The KLs of the families added after kl_families.py (registered on import, as kl.py's):
LowRankMultivariateNormal with itself and with MultivariateNormal either way, through
KL = 1/2 [tr(Sq^-1 Sp) + (mq - mp)^T Sq^-1 (mq - mp) - n] + log sqrt det Sq - log sqrt det Sp
with each side's own cheap inverse (Woodbury for the low-rank one); and each of Geometric,
Binomial, Pareto, HalfNormal, HalfCauchy, InverseGamma, ContinuousBernoulli, Wishart and
TransformedDistribution (same transforms) with itself, as torch's."""
import minigrad as mg
from minigrad.distributions.binomial import Binomial
from minigrad.distributions.cauchy import Cauchy
from minigrad.distributions.continuous_bernoulli import ContinuousBernoulli
from minigrad.distributions.gamma import Gamma
from minigrad.distributions.geometric import Geometric
from minigrad.distributions.half_cauchy import HalfCauchy
from minigrad.distributions.half_normal import HalfNormal
from minigrad.distributions.inverse_gamma import InverseGamma
from minigrad.distributions.kl import _inf_where, kl_divergence, register_kl
from minigrad.distributions.low_rank_multivariate_normal import LowRankMultivariateNormal
from minigrad.distributions.multivariate_normal import (MultivariateNormal, batch_mahalanobis,
                                                        half_log_det)
from minigrad.distributions.normal import Normal
from minigrad.distributions.pareto import Pareto
from minigrad.distributions.transformed_distribution import TransformedDistribution
from minigrad.distributions.wishart import Wishart, _mvdigamma


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


@register_kl(Geometric, Geometric)
def _kl_geometric_geometric(p, q):
    # -H(p) - E_p[log q(k)], log q(k) = k log(1 - q) + log q and E_p[k] = 1/p - 1
    return -p.entropy() - (-q.probs).log1p() * p.mean - q.probs.log()


@register_kl(Binomial, Binomial)
def _kl_binomial_binomial(p, q):
    # n [p log(p/q) + (1-p) log((1-p)/(1-q))] for equal counts; inf where p can exceed
    # q's count; a smaller count than q's has no closed form
    if bool((p.total_count < q.total_count).any()):
        raise NotImplementedError("kl_divergence: Binomial with a smaller total_count than "
                                  "the second Binomial's has no closed form")
    t = p.total_count * (p.probs * (p.logits - q.logits) + (-p.probs).log1p()
                         - (-q.probs).log1p())
    return _inf_where(p.total_count > q.total_count, t)


@register_kl(Pareto, Pareto)
def _kl_pareto_pareto(p, q):
    # E_p[log x] = log s_p + 1/a_p; inf where p puts mass below q's scale
    a, b = p.alpha, q.alpha
    t = (a / b).log() + b * (p.scale / q.scale).log() + b / a - 1
    return _inf_where(p.scale < q.scale, t)


@register_kl(HalfNormal, HalfNormal)
def _kl_halfnormal_halfnormal(p, q):
    return kl_divergence(Normal(0.0, p.scale), Normal(0.0, q.scale))   # folding keeps it


@register_kl(HalfCauchy, HalfCauchy)
def _kl_halfcauchy_halfcauchy(p, q):
    return kl_divergence(Cauchy(0.0, p.scale), Cauchy(0.0, q.scale))


@register_kl(InverseGamma, InverseGamma)
def _kl_inversegamma_inversegamma(p, q):
    # KL is invariant under x -> 1/x, which maps them to Gammas of the same parameters
    return kl_divergence(Gamma(p.concentration, p.rate), Gamma(q.concentration, q.rate))


@register_kl(ContinuousBernoulli, ContinuousBernoulli)
def _kl_cb_cb(p, q):
    # -H(p) - E_p[x log q + (1 - x) log(1 - q) + log C(q)]
    m = p.mean
    return (-p.entropy() - m * q.probs.log() - (1 - m) * (-q.probs).log1p()
            - q._log_normalizer())


@register_kl(Wishart, Wishart)
def _kl_wishart_wishart(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(f"kl_divergence: two Wisharts of different event shapes "
                         f"{p.event_shape} and {q.event_shape}")
    n, nu_p, nu_q = p.event_shape[-1], p.df, q.df
    lp, lq = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril
    shape = mg.broadcast_shapes(lp.shape, lq.shape)
    trace = (mg.linalg.solve_triangular(lq.expand(shape), lp.expand(shape),
                                        upper=False) ** 2).flatten(-2).sum(-1)
    # nu_q log sqrt(det Sq / det Sp) + nu_p/2 (tr(Sq^-1 Sp) - n) + log Γ_n(nu_q/2)
    # - log Γ_n(nu_p/2) + (nu_p - nu_q)/2 ψ_n(nu_p/2)
    kl = (nu_q * (half_log_det(lq) - half_log_det(lp)) + nu_p / 2 * (trace - n)
          + mg.mvlgamma(nu_q / 2, n) - mg.mvlgamma(nu_p / 2, n)
          + (nu_p - nu_q) / 2 * _mvdigamma(nu_p / 2, n))
    return kl.expand(mg.broadcast_shapes(p.batch_shape, q.batch_shape))


@register_kl(TransformedDistribution, TransformedDistribution)
def _kl_transformed_transformed(p, q):
    # a bijection changes neither side's ratio: the bases' KL, where the chains are equal
    if p.transforms != q.transforms or p.event_shape != q.event_shape:
        raise NotImplementedError(f"kl_divergence: {type(p).__name__} and "
                                  f"{type(q).__name__} through different transforms")
    return kl_divergence(p.base_dist, q.base_dist)
