"""The rest of torch.distributions' transforms (Abs, Softplus, CumulativeDistribution,
Independent, Reshape, Cat, Stack, StickBreaking, LowerCholesky, PositiveDefinite,
CorrCholesky, identity_transform) and the constraint registry (biject_to, transform_to):
values, inverses and log-dets against torch, log-dets against a numerical Jacobian,
gradcheck, constraints' checks, and TransformedDistribution through the new transforms."""
import math

import numpy as np
import pytest

import minigrad as mg

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:
    torch = None
D = mg.distributions
C = D.constraints
RNG = np.random.default_rng(0)


def _lib(lib):
    return (D, C) if lib is mg else (torch.distributions, torch.distributions.constraints)


def _cases(lib):
    """(transform, input) pairs built the same way from either library."""
    d, c = _lib(lib)
    rng = np.random.default_rng(1)
    real = rng.standard_normal((4, 3))
    normal = d.Normal(lib.tensor(0.3, dtype=lib.float64), lib.tensor(1.7, dtype=lib.float64))
    return {
        "abs": (d.AbsTransform(), real),
        "softplus": (d.SoftplusTransform(), real * 3),
        "cdf": (d.CumulativeDistributionTransform(normal), real),
        "independent": (d.IndependentTransform(d.ExpTransform(), 1), real),
        "reshape": (d.ReshapeTransform((4, 3), (2, 6)), rng.standard_normal((2, 4, 3))),
        "cat": (d.CatTransform([d.ExpTransform(), d.identity_transform,
                                d.SoftplusTransform()], dim=-1, lengths=[1, 1, 1]), real),
        "cat_event": (d.CatTransform([d.IndependentTransform(d.SigmoidTransform(), 1),
                                      d.IndependentTransform(d.ExpTransform(), 1)],
                                     dim=-1, lengths=[3, 2]), rng.standard_normal((4, 5))),
        "cat_batch": (d.CatTransform([d.ExpTransform(), d.SigmoidTransform()], dim=0,
                                     lengths=[1, 3]), real),
        "stack": (d.StackTransform([d.ExpTransform(), d.SoftplusTransform(),
                                    d.AffineTransform(1.0, -2.0)], dim=1), real),
        "stick": (d.StickBreakingTransform(), rng.standard_normal((2, 4)) * 2),
        "lower_cholesky": (d.LowerCholeskyTransform(), rng.standard_normal((2, 3, 3))),
        "positive_definite": (d.PositiveDefiniteTransform(), rng.standard_normal((2, 3, 3))),
        "corr_cholesky": (d.CorrCholeskyTransform(), rng.standard_normal((2, 6))),
        "identity": (d.identity_transform, real),
    }


NAMES = list(_cases(mg))
NO_LOGDET = {"abs", "lower_cholesky", "positive_definite"}


def _close(ours, theirs, atol=1e-10):
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else theirs
    np.testing.assert_allclose(ours.numpy(), theirs, atol=atol, rtol=1e-8)


@pytest.mark.parametrize("name", NAMES)
def test_transform_matches_torch(torch, name):
    t, raw = _cases(mg)[name]
    tt, _ = _cases(torch)[name]
    x, tx = mg.tensor(raw), torch.tensor(raw)
    y, ty = t(x), tt(tx)
    _close(y, ty)
    _close(t.inv(y), tt.inv(ty), atol=1e-8)
    assert t.forward_shape(x.shape) == tuple(tt.forward_shape(tx.shape))
    assert t.inverse_shape(y.shape) == tuple(tt.inverse_shape(ty.shape))
    assert t.bijective == tt.bijective
    assert (t.domain.event_dim, t.codomain.event_dim) == (tt.domain.event_dim,
                                                          tt.codomain.event_dim)
    assert repr(t.domain).split("(")[0] == repr(tt.domain).split("(")[0]
    assert repr(t.codomain).split("(")[0] == repr(tt.codomain).split("(")[0]
    if name not in NO_LOGDET:
        _close(t.log_abs_det_jacobian(x, y), tt.log_abs_det_jacobian(tx, ty), atol=1e-9)


@pytest.mark.parametrize("name", [n for n in NAMES if _cases(mg)[n][0].bijective])
def test_round_trip(name):
    t, raw = _cases(mg)[name]
    x = mg.tensor(raw)
    np.testing.assert_allclose(t.inv(t(x)).numpy(), raw, atol=1e-9)


def _flat_event(name, t, x):
    """One event of t as a square map R^n -> R^n (dropping what the log-det leaves out:
    the simplex's last coordinate, the correlation factor's fixed diagonal)."""
    from minigrad.distributions.transforms_matrix import tril_matrix_to_vec
    if name == "stick":
        return lambda v: t(v)[..., :-1]
    if name == "corr_cholesky":
        return lambda v: tril_matrix_to_vec(t(v))
    if name == "reshape":
        return lambda v: t(v.reshape(4, 3)).reshape(-1)
    return lambda v: t(v.reshape(x.shape)).reshape(-1)


@pytest.mark.parametrize("name", ["softplus", "cdf", "independent", "reshape", "cat",
                                  "cat_event", "stack", "stick", "corr_cholesky"])
def test_log_det_matches_numerical_jacobian(name):
    t, raw = _cases(mg)[name]
    x = mg.tensor(raw[0] if name in ("stick", "corr_cholesky", "reshape") else raw)
    fn = _flat_event(name, t, x)
    jac = mg.autograd.functional.jacobian(fn, x.reshape(-1) if name not in (
        "stick", "corr_cholesky") else x).numpy()
    expected = np.linalg.slogdet(jac)[1]
    got = t.log_abs_det_jacobian(x, t(x)).sum().item()
    assert got == pytest.approx(expected, abs=1e-8)


@pytest.mark.parametrize("name", [n for n in NAMES if n not in ("abs", "identity")])
def test_gradcheck_forward_and_log_det(name):
    t, raw = _cases(mg)[name]
    raw = raw[:2] if raw.ndim > 1 and name != "cat_batch" else raw     # kept small
    x = mg.tensor(raw, requires_grad=True)
    assert mg.gradcheck(lambda v: t(v), (x,))
    if name not in NO_LOGDET:
        assert mg.gradcheck(lambda v: t.log_abs_det_jacobian(v, t(v)), (x,))


def test_softplus_inverse_and_log_det_stay_finite_far_out(torch):
    t, tt = D.SoftplusTransform(), torch.distributions.SoftplusTransform()
    raw = np.array([-40.0, -5.0, 0.0, 30.0, 200.0])
    x, tx = mg.tensor(raw), torch.tensor(raw)
    _close(t.log_abs_det_jacobian(x, t(x)), tt.log_abs_det_jacobian(tx, tt(tx)))
    np.testing.assert_allclose(t.inv(t(x)).numpy()[1:], raw[1:], rtol=1e-9)


def test_equality_as_torch(torch):
    for lib in (mg, torch):
        d, _ = _lib(lib)
        same = [d.AbsTransform() == d.AbsTransform(),
                d.SoftplusTransform() == d.SoftplusTransform(),
                d.StickBreakingTransform() == d.StickBreakingTransform(),
                d.LowerCholeskyTransform() == d.LowerCholeskyTransform(),
                d.PositiveDefiniteTransform() == d.PositiveDefiniteTransform(),
                d.CorrCholeskyTransform() == d.CorrCholeskyTransform(),
                d.IndependentTransform(d.ExpTransform(), 1) ==
                d.IndependentTransform(d.ExpTransform(), 1),
                d.AbsTransform() == d.SoftplusTransform(),
                d.identity_transform == d.ComposeTransform([])]
        if lib is mg:
            ours = same
        else:
            assert ours == same


def test_sign_as_torch():
    assert D.SoftplusTransform().sign == 1
    assert D.CumulativeDistributionTransform(D.Normal(0.0, 1.0)).sign == 1
    assert D.IndependentTransform(D.AffineTransform(0.0, -2.0), 1).sign == -1
    with pytest.raises(NotImplementedError):
        D.AbsTransform().sign
    with pytest.raises(NotImplementedError):
        D.StickBreakingTransform().sign


def test_cache_gives_the_input_back():
    t = D.StickBreakingTransform(cache_size=1)
    x = mg.tensor([30.0, -2.0, 1.0], dtype=mg.float64)      # y_0 rounds to 1: inv loses x
    assert t.inv(t(x)) is x
    assert D.IndependentTransform(D.ExpTransform(), 1).with_cache(1)._cache_size == 1


def test_stack_of_vector_transforms_keeps_the_batch_layout(torch):
    # each slice x[:, i] (shape (2, 4)) has a per-row log-det (2,): the stack's log-det is
    # (2, 3) like x's batch, entry [b, i] from row b of slice i. Torch stacks at dim=-2
    # of the log-dets too and returns it transposed, (3, 2)
    x = RNG.standard_normal((2, 3, 4))
    t = D.StackTransform([D.IndependentTransform(D.ExpTransform(), 1)] * 3, dim=-2)
    ladj = t.log_abs_det_jacobian(mg.tensor(x), t(mg.tensor(x)))
    np.testing.assert_allclose(ladj.numpy(), x.sum(-1))
    tt = torch.distributions.StackTransform(
        [torch.distributions.IndependentTransform(torch.distributions.ExpTransform(), 1)] * 3,
        dim=-2)
    xt = torch.tensor(x)
    assert tuple(tt.log_abs_det_jacobian(xt, tt(xt)).shape) == (3, 2)
    # mixed event dims: the elementwise piece's log-det summed to the vector one's
    t = D.StackTransform([D.IndependentTransform(D.ExpTransform(), 1), D.ExpTransform()])
    ladj = t.log_abs_det_jacobian(mg.tensor(x[:2]), t(mg.tensor(x[:2])))
    np.testing.assert_allclose(ladj.numpy(), x[:2].sum(-1))


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="different numbers of elements"):
        D.ReshapeTransform((2, 3), (5,))
    with pytest.raises(ValueError, match="does not end in"):
        D.ReshapeTransform((2, 3), (6,))(mg.zeros(3, 2))
    with pytest.raises(ValueError, match="D\\(D-1\\)/2"):
        D.CorrCholeskyTransform()(mg.zeros(4))
    with pytest.raises(ValueError, match="2 transforms but 1 lengths"):
        D.CatTransform([D.ExpTransform(), D.ExpTransform()], lengths=[2])
    with pytest.raises(ValueError, match="needs 3 entries along dim 0"):
        D.CatTransform([D.ExpTransform(), D.ExpTransform()], lengths=[1, 2])(mg.zeros(4))
    with pytest.raises(ValueError, match="needs 2 entries along dim 1"):
        D.StackTransform([D.ExpTransform(), D.ExpTransform()], dim=1)(mg.zeros(2, 3))
    with pytest.raises(ValueError, match="expected a Transform"):
        D.IndependentTransform(3, 1)


# ---- constraints and the registry ------------------------------------------------------

def _constraints(lib):
    _, c = _lib(lib)
    return [c.real, c.real_vector, c.positive, c.nonnegative, c.greater_than(-1.5),
            c.greater_than_eq(2.0), c.less_than(3.0), c.unit_interval, c.interval(-2.0, 5.0),
            c.half_open_interval(-1.0, 1.0), c.simplex, c.corr_cholesky,
            c.independent(c.positive, 1),
            c.cat([c.positive, c.real, c.unit_interval], dim=-1, lengths=[2, 1, 2]),
            c.stack([c.positive, c.less_than(0.0)], dim=-1)]


SHAPES = [(4,), (4, 3), (4,), (4,), (4,), (4,), (4,), (4,), (4,), (4,), (4, 3), (2, 6),
          (4, 3), (2, 5), (3, 2)]


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("index", range(len(SHAPES)))
def test_registry_lands_in_the_constraint(registry, index):
    c = _constraints(mg)[index]
    t = getattr(D, registry)(c)
    x = mg.tensor(RNG.standard_normal(SHAPES[index]) * 2)
    y = t(x)
    assert bool(c.check(y).all())
    if registry == "biject_to":
        assert t.bijective
        np.testing.assert_allclose(t.inv(y).numpy(), x.numpy(), atol=1e-8)


@pytest.mark.parametrize("registry", ["biject_to", "transform_to"])
@pytest.mark.parametrize("index", range(len(SHAPES)))
def test_registry_matches_torch(torch, registry, index):
    c, tc = _constraints(mg)[index], _constraints(torch)[index]
    t, tt = getattr(D, registry)(c), getattr(torch.distributions, registry)(tc)
    raw = RNG.standard_normal(SHAPES[index])
    x, tx = mg.tensor(raw), torch.tensor(raw)
    y, ty = t(x), tt(tx)
    _close(y, ty)
    if t.bijective:
        _close(t.log_abs_det_jacobian(x, y), tt.log_abs_det_jacobian(tx, ty), atol=1e-9)


def test_registry_matrix_constraints_and_errors():
    x = mg.tensor(RNG.standard_normal((2, 3, 3)))
    assert bool(C.lower_cholesky.check(D.transform_to(C.lower_cholesky)(x)).all())
    assert bool(C.positive_definite.check(D.transform_to(C.positive_definite)(x)).all())
    for c in (C.lower_cholesky, C.positive_definite, C.boolean, C.nonnegative_integer):
        with pytest.raises(NotImplementedError, match="Cannot transform"):
            D.biject_to(c)
    assert isinstance(D.biject_to(C.positive), D.ExpTransform)
    assert isinstance(D.biject_to(C.unit_interval), D.SigmoidTransform)
    assert isinstance(D.transform_to(C.simplex), D.SoftmaxTransform)


def test_register_decorator():
    class Odd(C.Constraint):
        def check(self, value):
            return value > 7

    registry = type(D.biject_to)()
    registry.register(Odd)(lambda c: D.ComposeTransform([D.ExpTransform(),
                                                         D.AffineTransform(7.0, 1.0)]))
    assert bool(Odd().check(registry(Odd())(mg.zeros(3))).all())
    with pytest.raises(TypeError, match="Constraint subclass or instance"):
        registry.register(int, lambda c: None)


def test_corr_cholesky_check_matches_torch(torch):
    good = D.CorrCholeskyTransform()(mg.tensor(RNG.standard_normal((3, 6)))).numpy()
    bad = [good[0] * 1.01, good[1].T, np.eye(4) * -1]
    values = np.stack([good[0], good[1], good[2]] + bad)
    ours = C.corr_cholesky.check(mg.tensor(values)).numpy()
    theirs = torch.distributions.constraints.corr_cholesky.check(torch.tensor(values))
    np.testing.assert_array_equal(ours, theirs.numpy())
    assert list(ours) == [True, True, True, False, False, False]


def test_cat_and_stack_constraint_checks_match_torch(torch):
    raw = RNG.standard_normal((5, 4))
    for lib in (mg, torch):
        _, c = _lib(lib)
        cat = c.cat([c.positive, c.real], dim=-1, lengths=[3, 1]).check(lib.tensor(raw))
        stack = c.stack([c.positive, c.real, c.less_than(0.0), c.unit_interval],
                        dim=1).check(lib.tensor(raw))
        if lib is mg:
            ours = cat.numpy(), stack.numpy()
        else:
            np.testing.assert_array_equal(ours[0], cat.numpy())
            np.testing.assert_array_equal(ours[1], stack.numpy())
    assert C.cat([C.simplex, C.positive]).event_dim == 1


# ---- TransformedDistribution -----------------------------------------------------------

def test_stick_breaking_normal_log_prob_matches_torch(torch):
    raw_loc, raw_scale = RNG.standard_normal(3), RNG.random(3) + 0.5
    ours = D.TransformedDistribution(D.Normal(mg.tensor(raw_loc), mg.tensor(raw_scale)),
                                     D.StickBreakingTransform())
    theirs = torch.distributions.TransformedDistribution(
        torch.distributions.Normal(torch.tensor(raw_loc), torch.tensor(raw_scale)),
        torch.distributions.StickBreakingTransform())
    assert ours.event_shape == (4,) and ours.batch_shape == ()
    y = ours.sample((5,))
    assert bool(C.simplex.check(y).all())
    _close(ours.log_prob(y), theirs.log_prob(torch.tensor(y.numpy())), atol=1e-8)


def test_corr_cholesky_and_cdf_distributions_match_torch(torch):
    raw = RNG.standard_normal(3)
    ours = D.TransformedDistribution(D.Normal(mg.tensor(raw), 1.0), D.CorrCholeskyTransform())
    theirs = torch.distributions.TransformedDistribution(
        torch.distributions.Normal(torch.tensor(raw), 1.0),
        torch.distributions.CorrCholeskyTransform())
    assert ours.event_shape == (3, 3)
    y = ours.sample((4,))
    _close(ours.log_prob(y), theirs.log_prob(torch.tensor(y.numpy())), atol=1e-8)
    # the probability integral transform of a Normal: Uniform(0, 1), log_prob 0 inside
    normal = D.Normal(mg.tensor(0.5, dtype=mg.float64), mg.tensor(2.0, dtype=mg.float64))
    unif = D.TransformedDistribution(normal, D.CumulativeDistributionTransform(normal))
    np.testing.assert_allclose(unif.log_prob(mg.tensor([0.1, 0.5, 0.9])).numpy(), 0,
                               atol=1e-12)
    assert math.isclose(unif.cdf(mg.tensor(0.3, dtype=mg.float64)).item(), 0.3)


# ---- LKJCholesky -----------------------------------------------------------------------

@pytest.mark.parametrize("dim,eta", [(2, 0.5), (3, 1.0), (4, 2.5)])
def test_lkj_cholesky_log_prob_matches_torch(torch, dim, eta):
    conc = np.array([eta, eta + 1.3])
    ours = D.LKJCholesky(dim, mg.tensor(conc))
    theirs = torch.distributions.LKJCholesky(dim, torch.tensor(conc))
    value = ours.sample((3,), generator=0)
    assert value.shape == (3, 2, dim, dim)
    assert bool(C.corr_cholesky.check(value).all())
    _close(ours.log_prob(value), theirs.log_prob(torch.tensor(value.numpy())), atol=1e-10)


@pytest.mark.parametrize("dim,eta", [(3, 2.0), (4, 0.7)])
def test_lkj_cholesky_draws_share_the_lkj_marginal(dim, eta):
    # every off-diagonal correlation of LKJ(eta) is 2 Beta(a, a) - 1, a = eta - 1 + dim/2,
    # variance 1/(2a + 1) (PyTorch's sampler misses this for rows >= 2)
    low = D.LKJCholesky(dim, eta).sample((4000,), generator=0)
    corr = (low @ low.transpose(-2, -1)).numpy()
    rows, cols = np.tril_indices(dim, -1)
    var = corr[:, rows, cols].var(0)
    np.testing.assert_allclose(var, 1 / (2 * (eta - 1 + dim / 2) + 1), atol=0.015)
    np.testing.assert_allclose(np.diagonal(corr, 0, 1, 2), 1, atol=1e-5)


def test_lkj_cholesky_gradcheck_and_errors():
    low = D.LKJCholesky(3, mg.tensor(1.5, dtype=mg.float64)).sample((2,), generator=1)
    conc = mg.tensor([0.8, 2.0], dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(lambda c: D.LKJCholesky(3, c).log_prob(low), (conc,))
    with pytest.raises(ValueError, match="int >= 2"):
        D.LKJCholesky(1)
    with pytest.raises(ValueError):
        D.LKJCholesky(3, -1.0)
    assert D.LKJCholesky(3, 1.0).expand((2,)).batch_shape == (2,)
