"""The closed-form KLs of the families beyond kl.py's (registered on import, as kl.py's):
Exponential, Gamma (so Chi2), Beta, Dirichlet, Poisson, Laplace, Cauchy, Gumbel, LogNormal
with themselves, and the mixed pairs PyTorch has of Normal, Laplace, Exponential, Gamma."""
import math

import minigrad as mg
from minigrad.distributions.beta import Beta
from minigrad.distributions.cauchy import Cauchy
from minigrad.distributions.dirichlet import Dirichlet
from minigrad.distributions.exponential import Exponential
from minigrad.distributions.gamma import Gamma
from minigrad.distributions.gumbel import EULER_GAMMA, Gumbel
from minigrad.distributions.kl import kl_divergence, register_kl
from minigrad.distributions.laplace import Laplace
from minigrad.distributions.log_normal import LogNormal
from minigrad.distributions.normal import Normal
from minigrad.distributions.poisson import Poisson


@register_kl(Exponential, Exponential)
def _kl_exponential_exponential(p, q):
    ratio = q.rate / p.rate
    return ratio - 1 - ratio.log()


@register_kl(Gamma, Gamma)
def _kl_gamma_gamma(p, q):
    # E_p[log p - log q] with E_p[log x] = ψ(a_p) - log r_p and E_p[x] = a_p / r_p
    return (q.concentration * (p.rate / q.rate).log() + q.concentration.lgamma()
            - p.concentration.lgamma()
            + (p.concentration - q.concentration) * p.concentration.digamma()
            + (q.rate - p.rate) * (p.concentration / p.rate))


@register_kl(Beta, Beta)
def _kl_beta_beta(p, q):
    return _kl_dirichlet_dirichlet(p._dirichlet, q._dirichlet)


@register_kl(Dirichlet, Dirichlet)
def _kl_dirichlet_dirichlet(p, q):
    cp, cq = p.concentration, q.concentration
    sp = cp.sum(-1)
    return (sp.lgamma() - cq.sum(-1).lgamma() - (cp.lgamma() - cq.lgamma()).sum(-1)
            + ((cp - cq) * (cp.digamma() - sp.digamma().unsqueeze(-1))).sum(-1))


@register_kl(Poisson, Poisson)
def _kl_poisson_poisson(p, q):
    return p.rate * (p.rate.log() - q.rate.log()) - (p.rate - q.rate)


@register_kl(Laplace, Laplace)
def _kl_laplace_laplace(p, q):
    ratio, d = p.scale / q.scale, (p.loc - q.loc).abs()
    return -ratio.log() + d / q.scale + ratio * (-d / p.scale).exp() - 1


@register_kl(Cauchy, Cauchy)
def _kl_cauchy_cauchy(p, q):
    return (((p.scale + q.scale) ** 2 + (p.loc - q.loc) ** 2) / (4 * p.scale * q.scale)).log()


@register_kl(Gumbel, Gumbel)
def _kl_gumbel_gumbel(p, q):
    ratio = p.scale / q.scale
    shift = (p.loc - q.loc) / q.scale
    # E_p[exp(-(x - loc_q) / scale_q)] = exp(-shift) Γ(1 + ratio)
    return (-ratio.log() + shift + ratio * EULER_GAMMA
            + (-shift + (1 + ratio).lgamma()).exp() - (1 + EULER_GAMMA))


@register_kl(LogNormal, LogNormal)
def _kl_lognormal_lognormal(p, q):
    return kl_divergence(p.base_dist, q.base_dist)      # KL is invariant under exp


@register_kl(Normal, Laplace)
def _kl_normal_laplace(p, q):
    d = p.loc - q.loc
    # E|x - loc_q| for x ~ Normal: σ √(2/π) e^(-d²/2σ²) + d erf(d / (σ √2))
    mean_abs = (math.sqrt(2 / math.pi) * p.scale * (-0.5 * (d / p.scale) ** 2).exp()
                + d * mg.erf(d / (p.scale * math.sqrt(2))))
    return -(p.scale / q.scale).log() + mean_abs / q.scale - 0.5 * (1 + math.log(math.pi / 2))


@register_kl(Laplace, Normal)
def _kl_laplace_normal(p, q):
    # E_p[(x - loc_q)^2] = 2 b^2 + d^2
    second = 2 * p.scale ** 2 + (p.loc - q.loc) ** 2
    return (-1 - (2 * p.scale).log() + q.scale.log() + 0.5 * math.log(2 * math.pi)
            + second / (2 * q.scale ** 2))


@register_kl(Exponential, Gamma)
def _kl_exponential_gamma(p, q):
    a, r, lam = q.concentration, q.rate, p.rate
    # E_p[log x] = -γ - log λ, E_p[x] = 1 / λ
    return (lam.log() - 1 - a * r.log() + a.lgamma() + (a - 1) * (EULER_GAMMA + lam.log())
            + r / lam)


@register_kl(Gamma, Exponential)
def _kl_gamma_exponential(p, q):
    return -p.entropy() - q.rate.log() + q.rate * p.mean
