"""mg.special, as torch.special: every function of it, by torch.special's names and
signatures. Most are minigrad's own top-level functions under a second name (expit is
sigmoid, gammaln lgamma, psi digamma, gammainc igamma, multigammaln mvlgamma, ...); the rest
are ops/special_more.py's (erfcx, ndtr, the Bessel functions, zeta, ...) and
ops/polynomials.py's (the orthogonal polynomials)."""
from minigrad.ops import elementwise as _elementwise, math as _math, math_extra as _math_extra
from minigrad.ops import reduce as _reduce, softmax as _softmax, special as _special
from minigrad.ops import torch_extra as _torch_extra
from minigrad.ops.special_more import (                                           # noqa: F401
    airy_ai, bessel_j0, bessel_j1, bessel_y0, bessel_y1, entr, erfcx, i0e, i1, i1e, log_ndtr,
    modified_bessel_i0, modified_bessel_i1, modified_bessel_k0, modified_bessel_k1, ndtr,
    ndtri, scaled_modified_bessel_k0, scaled_modified_bessel_k1, spherical_bessel_j0,
    xlog1py, zeta)
from minigrad.ops.polynomials import (                                            # noqa: F401
    chebyshev_polynomial_t, chebyshev_polynomial_u, chebyshev_polynomial_v,
    chebyshev_polynomial_w, hermite_polynomial_h, hermite_polynomial_he,
    laguerre_polynomial_l, legendre_polynomial_p, shifted_chebyshev_polynomial_t,
    shifted_chebyshev_polynomial_u, shifted_chebyshev_polynomial_v,
    shifted_chebyshev_polynomial_w)
from minigrad.ops.special import xlogy                                            # noqa: F401


# ---- minigrad's own functions, under torch.special's names and argument names --------------
def erf(input):
    """The error function, as torch.special.erf (mg.erf)."""
    return _elementwise.erf(input)


def erfc(input):
    """1 - erf(x), as torch.special.erfc (mg.erfc)."""
    return _math_extra.erfc(input)


def erfinv(input):
    """The inverse error function, as torch.special.erfinv (mg.erfinv)."""
    return _special.erfinv(input)


def expit(input):
    """The logistic sigmoid 1 / (1 + e⁻ˣ), as torch.special.expit (mg.sigmoid)."""
    return _elementwise.sigmoid(input)


def exp2(input):
    """2ˣ, as torch.special.exp2 (mg.exp2)."""
    return _math.exp2(input)


def expm1(input):
    """eˣ - 1, accurate near 0, as torch.special.expm1 (mg.expm1)."""
    return _math.expm1(input)


def log1p(input):
    """log(1 + x), accurate near 0, as torch.special.log1p (mg.log1p)."""
    return _math.log1p(input)


def gammaln(input):
    """ln|Γ(x)|, as torch.special.gammaln (mg.lgamma)."""
    return _special.lgamma(input)


def digamma(input):
    """ψ(x) = Γ'(x)/Γ(x), as torch.special.digamma (mg.digamma)."""
    return _special.digamma(input)


psi = digamma


def polygamma(n, input):
    """ψ⁽ⁿ⁾(x), the n-th derivative of digamma, as torch.special.polygamma (mg.polygamma)."""
    return _special.polygamma(n, input)


def logit(input, eps=None):
    """log(p / (1 - p)), p clamped to [eps, 1 - eps] if eps is given, as
    torch.special.logit (mg.logit)."""
    return _special.logit(input, eps)


def multigammaln(input, p):
    """The log of the multivariate gamma function of dimension p, as
    torch.special.multigammaln (mg.mvlgamma)."""
    return _torch_extra.mvlgamma(input, p)


def gammainc(input, other):
    """The regularised lower incomplete gamma function P(input, other), as
    torch.special.gammainc (mg.igamma): differentiable in other only."""
    return _torch_extra.igamma(input, other)


def gammaincc(input, other):
    """The regularised upper incomplete gamma function Q(input, other) = 1 - P, as
    torch.special.gammaincc (mg.igammac): differentiable in other only."""
    return _torch_extra.igammac(input, other)


def i0(input):
    """The modified Bessel function of the first kind of order 0, as torch.special.i0."""
    return _torch_extra.i0(input)


def sinc(input):
    """sin(πx)/(πx), 1 at 0, as torch.special.sinc (mg.sinc)."""
    return _math_extra.sinc(input)


def round(input, *, decimals=0):
    """input rounded half to even, to `decimals` places, as torch.special.round."""
    return _math.round(input, decimals=decimals)


def logsumexp(input, dim, keepdim=False):
    """log Σ exp(input) over dim, as torch.special.logsumexp (mg.logsumexp)."""
    return _reduce.logsumexp(input, dim, keepdim)


def softmax(input, dim, *, dtype=None):
    """Softmax along dim, as torch.special.softmax (dim is required there)."""
    return _softmax.softmax(input, dim, dtype=dtype)


def log_softmax(input, dim, *, dtype=None):
    """Log-softmax along dim, as torch.special.log_softmax (dim is required there)."""
    return _softmax.log_softmax(input, dim, dtype=dtype)
