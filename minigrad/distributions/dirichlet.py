"""Dirichlet(concentration), as torch.distributions.Dirichlet: reparameterised draws of
independent Gamma(concentration_i, 1) draws divided by their sum, differentiable through
each (ops/gamma_sample.py). PyTorch differentiates its draws by the Beta marginals'
implicit gradient instead: both are unbiased, so the two agree in expectation, not draw
for draw."""
import minigrad as mg
import minigrad.functional as F
from minigrad.distributions import constraints
from minigrad.distributions.distribution import Distribution
from minigrad.distributions.distribution import expand_as
from minigrad.ops.gamma_sample import standard_gamma


def _log_beta(c):
    """log B(c) = sum log Γ(c_i) - log Γ(sum c_i), over the last dim."""
    return c.lgamma().sum(-1) - c.sum(-1).lgamma()


class Dirichlet(Distribution):
    """Densities on the simplex of the last dim's size: prod x_i^(c_i - 1) / B(c)."""
    arg_constraints = {"concentration": constraints.independent(constraints.positive, 1)}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, concentration, validate_args=None):
        if not isinstance(concentration, mg.Tensor) or concentration.dim() < 1:
            raise ValueError(f"Dirichlet: concentration must be a tensor of at least one dim "
                             f"(the categories), got {concentration!r}")
        self.concentration = concentration
        super().__init__(concentration.shape[:-1], concentration.shape[-1:],
                         validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, tuple(batch_shape) + self.event_shape,
                         concentration=self.concentration)

    @property
    def mean(self):
        return self.concentration / self.concentration.sum(-1, keepdim=True)

    @property
    def mode(self):
        c = self.concentration
        m = (c - 1).clamp(min=0)
        m = m / m.sum(-1, keepdim=True)
        # all c_i < 1: the density is unbounded at every vertex. PyTorch takes the argmax of
        # a row of NaNs (so always the first vertex); this takes the largest c_i's vertex
        corner = F.one_hot(c.argmax(-1), c.shape[-1]).to(c.dtype)
        return mg.where((c < 1).all(-1, keepdim=True), corner, m)

    @property
    def variance(self):
        c = self.concentration
        c0 = c.sum(-1, keepdim=True)
        return c * (c0 - c) / (c0 ** 2 * (c0 + 1))

    def rsample(self, sample_shape=(), generator=None):
        g = standard_gamma(self.concentration.expand(self._extended_shape(sample_shape)),
                           generator=generator)
        return g / g.sum(-1, keepdim=True)

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        return mg.xlogy(self.concentration - 1, value).sum(-1) - _log_beta(self.concentration)

    def entropy(self):
        c = self.concentration
        k, c0 = c.shape[-1], c.sum(-1)
        return _log_beta(c) - (k - c0) * c0.digamma() - ((c - 1) * c.digamma()).sum(-1)
