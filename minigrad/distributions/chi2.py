"""Chi2(df), as torch.distributions.Chi2: Gamma(df / 2, 1 / 2)."""
from minigrad.distributions import constraints
from minigrad.distributions.distribution import broadcast_all, expand_as
from minigrad.distributions.gamma import Gamma


class Chi2(Gamma):
    """The sum of df squared standard normals (df > 0, not necessarily an integer)."""
    arg_constraints = {"df": constraints.positive}

    def __init__(self, df, validate_args=None):
        df, = broadcast_all(df)
        super().__init__(0.5 * df, 0.5, validate_args=validate_args)

    def expand(self, batch_shape, _instance=None):
        return expand_as(self, batch_shape, df=self.df)

    @property
    def df(self):
        return self.concentration * 2
