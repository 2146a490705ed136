"""LogisticNormal(loc, scale), as torch.distributions.LogisticNormal: Normal(loc, scale)
over R^(K-1) pushed onto the K-simplex by StickBreakingTransform (log_prob, rsample and
expand from TransformedDistribution; no closed-form moments or entropy, as torch)."""
from minigrad.distributions import constraints
from minigrad.distributions.distribution import broadcast_all
from minigrad.distributions.normal import Normal
from minigrad.distributions.transformed_distribution import TransformedDistribution
from minigrad.distributions.transforms_matrix import StickBreakingTransform


class LogisticNormal(TransformedDistribution):
    """Points on the K-simplex whose stick-breaking logits are normal: loc and scale (they
    broadcast) end in K - 1; a scalar pair gives a 2-simplex (event shape (2,))."""
    arg_constraints = {"loc": constraints.real, "scale": constraints.positive}
    support = constraints.simplex
    has_rsample = True

    def __init__(self, loc, scale, validate_args=None):
        loc, scale = broadcast_all(loc, scale)
        if loc.ndim == 0:                         # one logit: a 2-simplex, as torch
            loc, scale = loc.reshape(1), scale.reshape(1)
        super().__init__(Normal(loc, scale, validate_args=validate_args),
                         StickBreakingTransform(), validate_args=validate_args)

    @property
    def loc(self):
        return self.base_dist.base_dist.loc

    @property
    def scale(self):
        return self.base_dist.base_dist.scale

    def __repr__(self):
        return f"LogisticNormal(loc: {tuple(self.loc.shape)}, scale: {tuple(self.scale.shape)})"
