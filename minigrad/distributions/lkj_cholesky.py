"""LKJCholesky(dim, concentration), as torch.distributions.LKJCholesky: the law of the
Cholesky factor L of a dim x dim correlation matrix L L^T drawn from the LKJ distribution,
density proportional to det(L L^T)^(concentration - 1). Draws by the onion method: row i
is sqrt(y_i) times a uniform direction in its first i coordinates, y_i ~ Beta(i/2,
concentration + (dim - 1 - i)/2), the diagonal taking what is left of the unit norm.
PyTorch (2.x) draws y_i ~ Beta(i - 1/2, ...) instead, wrong for rows i >= 2: its
off-diagonal correlations do not share one marginal, Beta(a, a) on (-1, 1) with
a = concentration - 1 + dim/2, as the permutation-invariant LKJ law requires; these do.
log_prob is PyTorch's. Not reparameterised (no rsample), as PyTorch's."""
import math

import minigrad as mg
from minigrad.autograd import no_grad
from minigrad.distributions import constraints
from minigrad.distributions.beta import Beta
from minigrad.distributions.distribution import Distribution, broadcast_all, one_stream


class LKJCholesky(Distribution):
    arg_constraints = {"concentration": constraints.positive}
    support = constraints.corr_cholesky

    def __init__(self, dim, concentration=1.0, validate_args=None):
        if not isinstance(dim, int) or isinstance(dim, bool) or dim < 2:
            raise ValueError(f"LKJCholesky: dim must be an int >= 2, got {dim!r}")
        self.dim = dim
        (self.concentration,) = broadcast_all(concentration)
        c = self.concentration
        # the Beta of row i's squared off-diagonal norm (row 0 has none: its Beta, made
        # like row 1's, is unused)
        i = mg.arange(dim, dtype=c.dtype, device=c.device).clamp(min=1)
        self._beta = Beta(0.5 * i, c.unsqueeze(-1) + 0.5 * (dim - 1 - i),
                          validate_args=False)
        super().__init__(c.shape, (dim, dim), validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        new = LKJCholesky(self.dim, self.concentration.expand(tuple(batch_shape)),
                          validate_args=False)
        new._validate_args = self._validate_args
        return new

    def sample(self, sample_shape=(), generator=None):
        generator = one_stream(generator)
        with no_grad():
            c = self.concentration
            y = self._beta.sample(sample_shape, generator=generator).unsqueeze(-1)
            u = mg.randn(self._extended_shape(sample_shape), dtype=c.dtype, device=c.device,
                         generator=generator).tril(-1)
            tiny = mg.finfo(c.dtype).tiny
            # row 0 of u is all zeros: the clamp keeps it 0 instead of 0 / 0
            u = u / u.norm(dim=-1, keepdim=True).clamp(min=tiny)
            w = y.sqrt() * u
            diag = (1 - (w * w).sum(-1)).clamp(min=tiny).sqrt()
            return w + diag.diag_embed()

    def log_prob(self, value):
        if self._validate_args:
            self._validate_sample(value)
        # the density of L: prod_(i>=1) L_ii^(2 (c - 1) + dim - 1 - i), the Jacobian of
        # L -> L L^T included
        diag = value.diagonal(dim1=-2, dim2=-1)[..., 1:]
        order = mg.arange(2, self.dim + 1, dtype=diag.dtype, device=diag.device)
        power = 2 * (self.concentration - 1).unsqueeze(-1) + self.dim - order
        unnormalised = (power * diag.log()).sum(-1)
        dm1 = self.dim - 1
        alpha = self.concentration + 0.5 * dm1
        log_norm = 0.5 * dm1 * math.log(math.pi) + mg.mvlgamma(alpha - 0.5, dm1) \
            - alpha.lgamma() * dm1
        return unnormalised - log_norm

    def __repr__(self):
        return f"LKJCholesky(dim={self.dim}, concentration: {self.concentration})"
