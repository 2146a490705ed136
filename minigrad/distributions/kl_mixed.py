"""The KLs between families that torch registers and kl_families.py lacks (registered on
import, as kl.py's). Each is KL(p || q) = -H(p) - E_p[log q], and E_p[log q] needs only a few
of p's expectations (E x, Var x, E log x, an exponential moment), so one function per q
serves every p it makes sense for; pairs where p puts mass outside q's support are inf."""
import math

import minigrad as mg
from minigrad.distributions.bernoulli import Bernoulli
from minigrad.distributions.beta import Beta
from minigrad.distributions.binomial import Binomial
from minigrad.distributions.continuous_bernoulli import ContinuousBernoulli
from minigrad.distributions.exponential import Exponential
from minigrad.distributions.gamma import Gamma
from minigrad.distributions.gumbel import Gumbel
from minigrad.distributions.kl import _inf_where, register_kl
from minigrad.distributions.laplace import Laplace
from minigrad.distributions.normal import Normal
from minigrad.distributions.pareto import Pareto
from minigrad.distributions.poisson import Poisson
from minigrad.distributions.uniform import Uniform

_LOG_SQRT_2PI = 0.5 * math.log(2 * math.pi)


def _x_log_x_minus_x(x):
    return mg.xlogy(x, x) - x


def _uniform_mean_log(low, high):
    """E[log x] for x ~ Uniform(low, high), 0 <= low (low clamped there: inf elsewhere)."""
    low = low.clamp(min=0)
    return (_x_log_x_minus_x(high) - _x_log_x_minus_x(low)) / (high - low)


def _mean_log(p):
    """E_p[log x] of a p on (0, inf)."""
    if isinstance(p, Beta):
        return p.concentration1.digamma() - (p.concentration1 + p.concentration0).digamma()
    if isinstance(p, Pareto):
        return p.scale.log() + 1 / p.alpha
    return _uniform_mean_log(p.low, p.high)


def _below(p, bound):
    """Where p puts mass below bound."""
    if isinstance(p, Uniform):
        return p.low < bound
    if isinstance(p, Pareto):
        return p.scale < bound
    return mg.zeros_like(p.mean, dtype=mg.bool) if bound <= 0 else mg.ones_like(
        p.mean, dtype=mg.bool)


def _outside_unit(p):
    """Where p puts mass outside [0, 1]."""
    if isinstance(p, Uniform):
        return (p.low < 0) | (p.high > 1)
    return mg.zeros_like(p.mean, dtype=mg.bool)


def _infinite(p, q):
    shape = mg.broadcast_shapes(p.batch_shape, q.batch_shape)
    like = p.mean
    return mg.full(shape, math.inf, dtype=like.dtype, device=like.device)


def _kl_to_normal(p, q):
    # E_p[-log q] = log σ + log sqrt(2π) + (Var p + (E p - μ)^2) / 2σ^2
    cross = q.scale.log() + _LOG_SQRT_2PI + (p.variance + (p.mean - q.loc) ** 2) / (
        2 * q.scale ** 2)
    return cross - p.entropy()


def _kl_to_exponential(p, q):
    return _inf_where(_below(p, 0), q.rate * p.mean - q.rate.log() - p.entropy())


def _kl_to_gamma(p, q):
    k, r = q.concentration, q.rate
    cross = k.lgamma() - k * r.log() - (k - 1) * _mean_log(p) + r * p.mean
    return _inf_where(_below(p, 0), cross - p.entropy())


def _exp_moment(p, t):
    """E_p[exp(-t x)], t > 0."""
    if isinstance(p, Exponential):
        return p.rate / (p.rate + t)
    if isinstance(p, Gamma):
        return (p.rate / (p.rate + t)) ** p.concentration
    if isinstance(p, Normal):
        return (-t * p.loc + (t * p.scale) ** 2 / 2).exp()
    return ((-t * p.low).exp() - (-t * p.high).exp()) / (t * (p.high - p.low))


def _kl_to_gumbel(p, q):
    # log q(x) = -log β - z - exp(-z), z = (x - μ) / β
    t = 1 / q.scale
    cross = q.scale.log() + (p.mean - q.loc) * t + (q.loc * t).exp() * _exp_moment(p, t)
    return cross - p.entropy()


def _kl_to_beta(p, q):
    a, b = q.concentration1, q.concentration0
    high, low = p.high.clamp(max=1), p.low.clamp(min=0)
    mean_log1m = _uniform_mean_log(1 - high, 1 - low)       # E log(1 - x), x in [0, 1]
    cross = (a.lgamma() + b.lgamma() - (a + b).lgamma() - (a - 1) * _mean_log(p)
             - (b - 1) * mean_log1m)
    return _inf_where(_outside_unit(p), cross - p.entropy())


def _kl_to_cb(p, q):
    m = p.mean
    cross = -m * q.probs.log() - (1 - m) * (-q.probs).log1p() - q._log_normalizer()
    return _inf_where(_outside_unit(p), cross - p.entropy())


def _kl_unit_to_uniform(p, q):
    # p lives on [0, 1]: finite only where q covers all of it
    return _inf_where((q.low > 0) | (q.high < 1), (q.high - q.low).log() - p.entropy())


def _kl_uniform_to_pareto(p, q):
    a = q.alpha
    cross = (a + 1) * _mean_log(p) - a.log() - a * q.scale.log()
    return _inf_where(p.low < q.scale, cross - p.entropy())


@register_kl(Bernoulli, Poisson)
def _kl_bernoulli_poisson(p, q):
    # log q(k) = k log λ - λ for k in {0, 1}
    return -p.entropy() - p.probs * q.rate.log() + q.rate


for _p in (Beta, ContinuousBernoulli, Exponential, Gamma, Gumbel, Pareto, Uniform):
    register_kl(_p, Normal)(_kl_to_normal)
for _p in (Beta, ContinuousBernoulli, Pareto, Uniform):
    register_kl(_p, Exponential)(_kl_to_exponential)
for _p in (Beta, Pareto, Uniform):
    register_kl(_p, Gamma)(_kl_to_gamma)
for _p in (Exponential, Gamma, Normal, Uniform):
    register_kl(_p, Gumbel)(_kl_to_gumbel)
register_kl(Uniform, Beta)(_kl_to_beta)
for _p in (Beta, Uniform):
    register_kl(_p, ContinuousBernoulli)(_kl_to_cb)
for _p in (Beta, ContinuousBernoulli):
    register_kl(_p, Uniform)(_kl_unit_to_uniform)
register_kl(Uniform, Pareto)(_kl_uniform_to_pareto)

# p's support reaches where q has no mass, whatever the parameters
for _p, _qs in ((Beta, (Pareto,)), (ContinuousBernoulli, (Pareto,)),
                (Exponential, (Beta, ContinuousBernoulli, Pareto, Uniform)),
                (Gamma, (Beta, ContinuousBernoulli, Pareto, Uniform)),
                (Gumbel, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Laplace, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Normal, (Beta, ContinuousBernoulli, Exponential, Gamma, Pareto, Uniform)),
                (Pareto, (Beta, ContinuousBernoulli, Uniform)),
                (Poisson, (Bernoulli, Binomial))):
    for _q in _qs:
        register_kl(_p, _q)(_infinite)
