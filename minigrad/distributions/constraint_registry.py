"""biject_to and transform_to, as torch.distributions.constraint_registry: from a
constraint to a transform of unconstrained reals onto it, for optimising a constrained
parameter through an unconstrained one (p = transform_to(c)(u)). biject_to(c) is
bijective, so its log-det serves a change of variables (HMC, variational inference);
transform_to(c) need not be (softmax onto the simplex) and is the better-conditioned
choice for plain optimisation. Register more with @biject_to.register(ConstraintType)."""
from minigrad import backend
from minigrad.distributions import constraints
from minigrad.distributions import transforms as T


class ConstraintRegistry:
    """Factories from constraint types to transforms: register(constraint, factory) with a
    Constraint subclass or instance (its type is the key); calling it with a constraint
    instance runs the factory registered for that constraint's type."""
    def __init__(self):
        self._registry = {}

    def register(self, constraint, factory=None):
        if factory is None:                  # as a decorator
            return lambda factory: self.register(constraint, factory)
        if isinstance(constraint, constraints.Constraint):
            constraint = type(constraint)
        if not isinstance(constraint, type) or \
                not issubclass(constraint, constraints.Constraint):
            raise TypeError(f"register: expected a Constraint subclass or instance, got "
                            f"{constraint!r}")
        self._registry[constraint] = factory
        return factory

    def __call__(self, constraint):
        try:
            factory = self._registry[type(constraint)]
        except KeyError:
            raise NotImplementedError(f"Cannot transform {type(constraint).__name__} "
                                      f"constraints") from None
        return factory(constraint)


biject_to = ConstraintRegistry()
transform_to = ConstraintRegistry()


def _is_number(value, target):
    return backend.is_scalar(value) and not isinstance(value, bool) and value == target


@biject_to.register(constraints.real)
@transform_to.register(constraints.real)
def _to_real(constraint):
    return T.identity_transform


@biject_to.register(constraints.independent)
def _biject_to_independent(constraint):
    return T.IndependentTransform(biject_to(constraint.base),
                                  constraint.reinterpreted_batch_ndims)


@transform_to.register(constraints.independent)
def _transform_to_independent(constraint):
    return T.IndependentTransform(transform_to(constraint.base),
                                  constraint.reinterpreted_batch_ndims)


@biject_to.register(constraints.greater_than)
@biject_to.register(constraints.greater_than_eq)
@transform_to.register(constraints.greater_than)
@transform_to.register(constraints.greater_than_eq)
def _to_greater_than(constraint):
    if _is_number(constraint.lower_bound, 0):
        return T.ExpTransform()
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.lower_bound, 1)])


@biject_to.register(constraints.less_than)
@transform_to.register(constraints.less_than)
def _to_less_than(constraint):
    return T.ComposeTransform([T.ExpTransform(), T.AffineTransform(constraint.upper_bound, -1)])


@biject_to.register(constraints.interval)
@biject_to.register(constraints.half_open_interval)
@transform_to.register(constraints.interval)
@transform_to.register(constraints.half_open_interval)
def _to_interval(constraint):
    lower, upper = constraint.lower_bound, constraint.upper_bound
    if _is_number(lower, 0) and _is_number(upper, 1):
        return T.SigmoidTransform()
    return T.ComposeTransform([T.SigmoidTransform(), T.AffineTransform(lower, upper - lower)])


@biject_to.register(constraints.simplex)
def _biject_to_simplex(constraint):
    return T.StickBreakingTransform()


@transform_to.register(constraints.simplex)
def _transform_to_simplex(constraint):
    return T.SoftmaxTransform()


@transform_to.register(constraints.lower_cholesky)
def _transform_to_lower_cholesky(constraint):     # not bijective: no biject_to, as torch
    return T.LowerCholeskyTransform()


@transform_to.register(constraints.positive_definite)
def _transform_to_positive_definite(constraint):
    return T.PositiveDefiniteTransform()


@biject_to.register(constraints.corr_cholesky)
@transform_to.register(constraints.corr_cholesky)
def _to_corr_cholesky(constraint):
    return T.CorrCholeskyTransform()


@biject_to.register(constraints.cat)
def _biject_to_cat(constraint):
    return T.CatTransform([biject_to(c) for c in constraint.cseq], constraint.dim,
                          constraint.lengths)


@transform_to.register(constraints.cat)
def _transform_to_cat(constraint):
    return T.CatTransform([transform_to(c) for c in constraint.cseq], constraint.dim,
                          constraint.lengths)


@biject_to.register(constraints.stack)
def _biject_to_stack(constraint):
    return T.StackTransform([biject_to(c) for c in constraint.cseq], constraint.dim)


@transform_to.register(constraints.stack)
def _transform_to_stack(constraint):
    return T.StackTransform([transform_to(c) for c in constraint.cseq], constraint.dim)
