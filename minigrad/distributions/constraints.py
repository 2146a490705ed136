"""Constraints: the set a distribution's parameter or sample must lie in, as
torch.distributions.constraints. `check(value)` gives a bool tensor of value's batch shape
(its last `event_dim` dims are one event, checked together); `repr` names the set in the
errors that argument validation raises."""
import minigrad as mg
from minigrad import linalg


class Constraint:
    """A set of values; event_dim: how many rightmost dims one element of it spans."""
    event_dim = 0
    is_discrete = False

    def check(self, value):
        raise NotImplementedError

    def __repr__(self):
        return type(self).__name__.lstrip("_") + "()"


class _Real(Constraint):
    def check(self, value):
        return value == value                            # all but NaN


class _Boolean(Constraint):
    is_discrete = True

    def check(self, value):
        return (value == 0) | (value == 1)


class _GreaterThan(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return value > self.lower_bound

    def __repr__(self):
        return f"GreaterThan(lower_bound={self.lower_bound})"


class _GreaterThanEq(Constraint):
    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return value >= self.lower_bound

    def __repr__(self):
        return f"GreaterThanEq(lower_bound={self.lower_bound})"


class _IntegerGreaterThan(Constraint):
    """Integers >= lower_bound (PyTorch's name, though the bound is included)."""
    is_discrete = True

    def __init__(self, lower_bound):
        self.lower_bound = lower_bound

    def check(self, value):
        return (value >= self.lower_bound) & (value == value.floor())

    def __repr__(self):
        return f"IntegerGreaterThan(lower_bound={self.lower_bound})"


class _LessThan(Constraint):
    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return value < self.upper_bound

    def __repr__(self):
        return f"LessThan(upper_bound={self.upper_bound})"


class _Interval(Constraint):
    """[lower_bound, upper_bound], both ends included."""
    def __init__(self, lower_bound, upper_bound):
        self.lower_bound, self.upper_bound = lower_bound, upper_bound

    def check(self, value):
        return (value >= self.lower_bound) & (value <= self.upper_bound)

    def __repr__(self):
        return f"Interval(lower_bound={self.lower_bound}, upper_bound={self.upper_bound})"


class _IntegerInterval(_Interval):
    is_discrete = True

    def check(self, value):
        return super().check(value) & (value == value.floor())

    def __repr__(self):
        return "Integer" + super().__repr__()


class _Simplex(Constraint):
    """Non-negative vectors that sum to 1 (within 1e-6, as PyTorch)."""
    event_dim = 1

    def check(self, value):
        return (value >= 0).all(-1) & ((value.sum(-1) - 1).abs() < 1e-6)


class _LowerCholesky(Constraint):
    """Lower-triangular square matrices with a positive diagonal."""
    event_dim = 2

    def check(self, value):
        lower = (value.tril() == value).flatten(-2).all(-1)
        return lower & (value.diagonal(dim1=-2, dim2=-1) > 0).all(-1)


class _PositiveDefinite(Constraint):
    """Symmetric matrices whose Cholesky factorisation succeeds."""
    event_dim = 2

    def check(self, value):
        symmetric = mg.isclose(value, value.transpose(-2, -1), atol=1e-6).flatten(-2).all(-1)
        if not bool(symmetric.all()):
            return symmetric
        return linalg.cholesky_ex(value).info == 0


class _Independent(Constraint):
    """`base` over the rightmost `reinterpreted_batch_ndims` dims together."""
    def __init__(self, base, reinterpreted_batch_ndims):
        self.base, self.reinterpreted_batch_ndims = base, reinterpreted_batch_ndims
        self.event_dim = base.event_dim + reinterpreted_batch_ndims
        self.is_discrete = base.is_discrete

    def check(self, value):
        ok = self.base.check(value)
        for _ in range(self.reinterpreted_batch_ndims):
            ok = ok.all(-1)
        return ok

    def __repr__(self):
        return f"IndependentConstraint({self.base!r}, {self.reinterpreted_batch_ndims})"


real = _Real()
real_vector = _Independent(real, 1)
boolean = _Boolean()
positive = _GreaterThan(0.0)
nonnegative = _GreaterThanEq(0.0)
nonnegative_integer = _IntegerGreaterThan(0)
unit_interval = _Interval(0.0, 1.0)
simplex = _Simplex()
lower_cholesky = _LowerCholesky()
positive_definite = _PositiveDefinite()
greater_than = _GreaterThan
greater_than_eq = _GreaterThanEq
less_than = _LessThan
interval = _Interval
integer_interval = _IntegerInterval
independent = _Independent


class _HalfOpenInterval(_Interval):
    """[lower_bound, upper_bound): the upper end excluded."""
    def check(self, value):
        return (value >= self.lower_bound) & (value < self.upper_bound)

    def __repr__(self):
        return "HalfOpen" + super().__repr__()


class _Multinomial(Constraint):
    """Vectors of non-negative integers summing to at most upper_bound."""
    event_dim = 1
    is_discrete = True

    def __init__(self, upper_bound):
        self.upper_bound = upper_bound

    def check(self, value):
        return (value >= 0).all(-1) & (value == value.floor()).all(-1) & \
            (value.sum(-1) <= self.upper_bound)

    def __repr__(self):
        return f"Multinomial(upper_bound={self.upper_bound})"


half_open_interval = _HalfOpenInterval
multinomial = _Multinomial


class _CorrCholesky(Constraint):
    """Lower Cholesky factors of correlation matrices: lower_cholesky with unit-norm rows
    (to 10 eps per row entry, as PyTorch)."""
    event_dim = 2

    def check(self, value):
        tol = mg.finfo(value.dtype).eps * value.shape[-1] * 10
        row_norm = linalg.vector_norm(value.detach(), dim=-1)
        return lower_cholesky.check(value) & ((row_norm - 1).abs() <= tol).all(-1)


class _Cat(Constraint):
    """cseq[i] on the i-th slice (of lengths[i], default 1) of value along dim."""
    def __init__(self, cseq, dim=0, lengths=None):
        self.cseq = list(cseq)
        self.lengths = [1] * len(self.cseq) if lengths is None else list(lengths)
        if len(self.lengths) != len(self.cseq):
            raise ValueError(f"constraints.cat: {len(self.cseq)} constraints but "
                             f"{len(self.lengths)} lengths")
        self.dim = dim

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    def check(self, value):
        checks, start = [], 0
        for c, length in zip(self.cseq, self.lengths):
            checks.append(c.check(value.narrow(self.dim, start, length)))
            start += length
        return mg.cat(checks, self.dim)


class _Stack(Constraint):
    """cseq[i] on value.select(dim, i)."""
    def __init__(self, cseq, dim=0):
        self.cseq, self.dim = list(cseq), dim

    @property
    def event_dim(self):
        return max(c.event_dim for c in self.cseq)

    @property
    def is_discrete(self):
        return any(c.is_discrete for c in self.cseq)

    def check(self, value):
        if value.shape[self.dim] != len(self.cseq):
            raise ValueError(f"constraints.stack: value has {value.shape[self.dim]} entries "
                             f"along dim {self.dim}, expected {len(self.cseq)}")
        return mg.stack([c.check(value.select(self.dim, i))
                         for i, c in enumerate(self.cseq)], self.dim)


class _LowerTriangular(Constraint):
    """Lower-triangular square matrices."""
    event_dim = 2

    def check(self, value):
        return (value.tril() == value).flatten(-2).all(-1)


corr_cholesky = _CorrCholesky()
lower_triangular = _LowerTriangular()
cat = _Cat
stack = _Stack
