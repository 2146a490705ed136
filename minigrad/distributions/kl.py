"""kl_divergence(p, q) = E_p[log p - log q], as torch.distributions.kl: closed forms for
pairs of types, registered with @register_kl(TypeP, TypeQ); a pair of subclasses uses the
most specific registered pair (ties go to the first type's closer match)."""
import minigrad as mg
import minigrad.functional as F
from minigrad.distributions.bernoulli import Bernoulli
from minigrad.distributions.categorical import Categorical
from minigrad.distributions.distribution import sum_rightmost
from minigrad.distributions.independent import Independent
from minigrad.distributions.multivariate_normal import (MultivariateNormal, batch_mahalanobis,
                                                        half_log_det)
from minigrad.distributions.normal import Normal
from minigrad.distributions.one_hot_categorical import OneHotCategorical
from minigrad.distributions.uniform import Uniform

_KL_REGISTRY = {}


def register_kl(type_p, type_q):
    """Decorator: fn(p, q) computes KL(p || q) for p a type_p and q a type_q."""
    for t in (type_p, type_q):
        if not isinstance(t, type):
            raise TypeError(f"register_kl: expected distribution classes, got {t!r}")

    def decorator(fn):
        _KL_REGISTRY[type_p, type_q] = fn
        return fn
    return decorator


def _lookup(type_p, type_q):
    """The registered function for the closest pair of base classes, or None."""
    best, best_rank = None, None
    for (p, q), fn in _KL_REGISTRY.items():
        if issubclass(type_p, p) and issubclass(type_q, q):
            rank = (type_p.__mro__.index(p), type_q.__mro__.index(q))
            if best_rank is None or rank < best_rank:
                best, best_rank = fn, rank
    return best


def kl_divergence(p, q):
    """KL(p || q), of the broadcast batch shape of p and q."""
    fn = _lookup(type(p), type(q))
    if fn is None:
        raise NotImplementedError(f"kl_divergence: no KL registered for "
                                  f"{type(p).__name__} and {type(q).__name__} (add one with "
                                  f"@register_kl({type(p).__name__}, {type(q).__name__}))")
    return fn(p, q)


def _inf_where(mask, value):
    return mg.where(mask, mg.full_like(value, float("inf")), value)


def _zero_where(mask, value):
    return mg.where(mask, mg.zeros_like(value), value)


@register_kl(Normal, Normal)
def _kl_normal_normal(p, q):
    var_ratio = (p.scale / q.scale) ** 2
    t1 = ((p.loc - q.loc) / q.scale) ** 2
    return 0.5 * (var_ratio + t1 - 1 - var_ratio.log())


@register_kl(Uniform, Uniform)
def _kl_uniform_uniform(p, q):
    result = ((q.high - q.low) / (p.high - p.low)).log()
    return _inf_where((q.low > p.low) | (q.high < p.high), result)    # p's support not in q's


@register_kl(Bernoulli, Bernoulli)
def _kl_bernoulli_bernoulli(p, q):
    # p log(p/q) + (1-p) log((1-p)/(1-q)) in logits; a term whose weight is 0 is 0, and
    # one whose q side is impossible is inf
    t1 = p.probs * (F.softplus(-q.logits) - F.softplus(-p.logits))
    t1 = _zero_where(p.probs == 0, _inf_where(q.probs == 0, t1))
    t2 = (1 - p.probs) * (F.softplus(q.logits) - F.softplus(p.logits))
    t2 = _zero_where(p.probs == 1, _inf_where(q.probs == 1, t2))
    return t1 + t2


@register_kl(Categorical, Categorical)
def _kl_categorical_categorical(p, q):
    t = p.probs * (p.logits - q.logits)
    shape = t.shape
    t = _inf_where((q.probs == 0).expand(shape), t)
    t = _zero_where((p.probs == 0).expand(shape), t)
    return t.sum(-1)


@register_kl(OneHotCategorical, OneHotCategorical)
def _kl_onehot_onehot(p, q):
    return _kl_categorical_categorical(p._categorical, q._categorical)


@register_kl(MultivariateNormal, MultivariateNormal)
def _kl_mvn_mvn(p, q):
    if p.event_shape != q.event_shape:
        raise ValueError(f"kl_divergence: two MultivariateNormals of different event shapes "
                         f"{p.event_shape} and {q.event_shape}")
    lp, lq, n = p._unbroadcasted_scale_tril, q._unbroadcasted_scale_tril, p.event_shape[0]
    # 1/2 [tr(Sq^-1 Sp) + (mq - mp)^T Sq^-1 (mq - mp) - n + log det Sq - log det Sp]
    shape = mg.broadcast_shapes(lp.shape, lq.shape)
    trace = (mg.linalg.solve_triangular(lq.expand(shape), lp.expand(shape),
                                        upper=False) ** 2).flatten(-2).sum(-1)
    mahalanobis = batch_mahalanobis(lq, q.loc - p.loc)
    batch = mg.broadcast_shapes(p.batch_shape, q.batch_shape)
    return (0.5 * (trace + mahalanobis - n) + half_log_det(lq) - half_log_det(lp)
            ).expand(batch)


@register_kl(Independent, Independent)
def _kl_independent_independent(p, q):
    if p.reinterpreted_batch_ndims != q.reinterpreted_batch_ndims:
        raise NotImplementedError(f"kl_divergence: Independents over different numbers of "
                                  f"dims ({p.reinterpreted_batch_ndims} and "
                                  f"{q.reinterpreted_batch_ndims})")
    return sum_rightmost(kl_divergence(p.base_dist, q.base_dist),
                         p.reinterpreted_batch_ndims)
