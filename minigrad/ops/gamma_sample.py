"""Differentiable Gamma(alpha, 1) draws, as torch._standard_gamma: the draw comes from the
host generator (NumPy's Generator.standard_gamma, so a seed gives the same numbers on every
device), and its gradient with respect to alpha is the implicit reparameterisation
dx/dα = -(∂P/∂α) / (∂P/∂x), P(α, x) the regularised lower incomplete gamma function, the
CDF (Figurnov et al., 2018).

∂P/∂x = x^(α-1) e^(-x) / Γ(α) is exact. ∂P/∂α has no closed form: it is a Richardson-
extrapolated central difference of the backend's gammainc (or of -gammaincc above the
median, where P is near 1 and its differences would cancel), in float64, with a step of
1e-3 · min(α, √α) (the scale P varies on in α): truncation (1e-3)^4 and rounding
~1e-14/1e-3, so ~1e-10 relative. Below x = 1e-8, where P ~ x^α / Γ(α+1), the leading term
dx/dα = -x (log x - ψ(α+1)) / α is used instead (relative error O(x)). PyTorch computes
the same derivative by series and asymptotic expansions; the two agree to ~1e-6."""
from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor


def _dx_dalpha(be, a, x):
    """dx/dα of Gamma(α, 1) draws x, float64 arrays of one shape on backend `be`."""
    xp, special = be.xp, be.special
    if special is None:
        raise RuntimeError("Gamma rsample: the gradient needs SciPy's special functions, and "
                           "SciPy is not installed here; pip install scipy")
    upper = x > a                                        # past the median: use Q = 1 - P

    def cdf(alpha):                                      # P, or -Q (same derivative)
        return xp.where(upper, -special.gammaincc(alpha, x), special.gammainc(alpha, x))
    h = 1e-3 * xp.minimum(a, xp.sqrt(a))

    def central(step):
        return (cdf(a + step) - cdf(a - step)) / (2 * step)
    dp_da = (4 * central(h / 2) - central(h)) / 3        # Richardson: error O(h^4)
    log_density = (a - 1) * xp.log(x) - x - special.gammaln(a)
    grad = -dp_da * xp.exp(-log_density)
    tiny = x < 1e-8
    if tiny.any():
        small = -x * (xp.log(xp.where(tiny, x, 1.0)) - special.digamma(a + 1)) / a
        grad = xp.where(tiny, small, grad)
    return grad


class StandardGamma(Function):
    """The draws `sample` (given, made on the host) as a function of alpha."""
    def forward(self, alpha, sample):
        return sample
    def backward(self, g):
        be = backend.get(self.device)
        a = self.inputs[0]._data.astype(backend.float64)
        x = self.output()._data.astype(backend.float64)
        return g * self.const(_dx_dalpha(be, a, x).astype(g.dtype))


def standard_gamma(alpha, generator=None):
    """Gamma(alpha, 1) draws of alpha's shape, dtype and device (alpha > 0, a floating
    tensor), differentiable with respect to alpha; clamped to the dtype's smallest normal
    number, as PyTorch's (a small alpha's draws underflow to 0 otherwise)."""
    a = backend.to_host(alpha._data).astype(backend.float64)
    x = backend.host_rng(generator, "standard_gamma").standard_gamma(a)
    x = backend.get("cpu").xp.asarray(x, dtype=alpha.dtype)
    x = backend.get("cpu").xp.maximum(x, backend.get("cpu").xp.finfo(alpha.dtype).tiny)
    sample = alpha.backend.from_numpy(x)
    if not alpha.requires_grad:
        return Tensor._make(sample, alpha.device)
    return StandardGamma.apply(alpha, sample=sample)
