"""mg.distributions' GeneralizedPareto, LogisticNormal and Wishart against torch.distributions
(the reference) and their closed forms, and the KL pairs of kl_more.py and kl_mixed.py:
values against torch, float64 gradchecks, draws' moments, validation and expand."""
import math

import numpy as np
import pytest

import minigrad as mg

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None
D, TD = mg.distributions, torch.distributions if torch else None
RNG = np.random.default_rng(0)


def _t(a, requires_grad=False):
    return mg.tensor(np.asarray(a, dtype=np.float64), requires_grad=requires_grad)


def _close(ours, theirs, atol=1e-10, rtol=1e-7):
    np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), atol=atol,
                               rtol=rtol)


@pytest.fixture
def torch64(torch):
    # torch's GeneralizedPareto compares with a float32 0 and fails on float64 unless the
    # default dtype is float64
    old = torch.get_default_dtype()
    torch.set_default_dtype(torch.float64)
    yield torch
    torch.set_default_dtype(old)


# ---- GeneralizedPareto ----

GP_LOC, GP_SCALE = np.array([0.3, -0.5, 1.0, 0.0, 0.2, 0.1]), np.array([1.2, 0.7, 2.0, 1.0,
                                                                        0.5, 0.9])
GP_XI = np.array([0.3, -0.4, 0.0, -1.0, 0.45, -0.2])


def test_generalized_pareto_matches_torch(torch64):
    torch = torch64
    args = (GP_LOC, GP_SCALE, GP_XI)
    p = D.GeneralizedPareto(*(_t(a) for a in args))
    tp = TD.GeneralizedPareto(*(torch.tensor(a) for a in args))
    assert p.batch_shape == (6,) and p.event_shape == ()
    for attr in ("mean", "variance", "mode"):
        _close(getattr(p, attr), getattr(tp, attr))
    _close(p.entropy(), tp.entropy())
    # values inside each support (the ξ < 0 ones end at loc - scale / ξ)
    x = GP_LOC + np.array([[0.5, 0.3, 2.0, 0.99, 3.0, 1.0], [0.01, 1.7, 0.1, 0.5, 9.0, 4.4]])
    _close(p.log_prob(_t(x)), tp.log_prob(torch.tensor(x)))
    _close(p.cdf(_t(x)), tp.cdf(torch.tensor(x)))
    u = RNG.random((3, 6)) * 0.98 + 0.01
    _close(p.icdf(_t(u)), tp.icdf(torch.tensor(u)))
    _close(p.cdf(p.icdf(_t(u))), torch.tensor(u))


def test_generalized_pareto_closed_forms_and_infinite_moments():
    xi = _t([1.0, 2.0, 0.5, 0.7, -1.0])
    p = D.GeneralizedPareto(0.0, 1.0, xi)
    # the mean is infinite for ξ >= 1 and the variance for ξ >= 1/2 (torch: NaN)
    np.testing.assert_array_equal(p.mean.numpy()[:2], np.inf)
    np.testing.assert_array_equal(p.variance.numpy()[:4], np.inf)
    np.testing.assert_allclose(p.mean.numpy()[2:], [2.0, 1 / 0.3, 0.5])
    # ξ = -1 is Uniform(loc, loc + scale): density 1 / scale up to the far end
    u = D.GeneralizedPareto(_t(0.5), _t(2.0), _t(-1.0))
    np.testing.assert_allclose(u.log_prob(_t([0.5, 1.5, 2.5])).numpy(), -math.log(2.0))
    np.testing.assert_allclose(u.cdf(_t([1.0, 2.0])).numpy(), [0.25, 0.75])
    # ξ = 0 is the Exponential of rate 1 / scale, shifted by loc
    e = D.GeneralizedPareto(_t(1.0), _t(2.0), _t(0.0))
    x = _t([1.0, 2.5, 7.0])
    np.testing.assert_allclose(e.log_prob(x).numpy(),
                               D.Exponential(_t(0.5)).log_prob(x - 1.0).numpy(), rtol=1e-14)


def test_generalized_pareto_gradient_in_the_concentration_at_zero():
    # d log p / dξ at ξ = 0 is z^2 / 2 - z (torch's ξ = 0 branch gives 0)
    xi = _t([0.0, 1e-9, -1e-9], True)
    p = D.GeneralizedPareto(_t(0.1), _t(1.3), xi)
    g, = mg.grad(p.log_prob(_t([2.0, 2.0, 2.0])).sum(), [xi])
    z = 1.9 / 1.3
    np.testing.assert_allclose(g.numpy(), z * z / 2 - z, rtol=1e-7)


def test_generalized_pareto_gradcheck():
    params = [_t([0.1, 0.2, 0.0], True), _t([1.0, 2.0, 0.5], True), _t([0.0, 0.3, -0.2], True)]
    x = _t([2.0, 1.5, 0.5])
    assert mg.gradcheck(lambda a, b, c: D.GeneralizedPareto(a, b, c).log_prob(x), params)
    assert mg.gradcheck(lambda a, b, c: D.GeneralizedPareto(a, b, c).cdf(x), params)
    assert mg.gradcheck(lambda a, b, c: D.GeneralizedPareto(a, b, c).rsample((2,), generator=3),
                        params)


def test_generalized_pareto_draws_have_its_moments():
    p, n = D.GeneralizedPareto(_t([0.5, -1.0, 0.0]), _t([1.0, 2.0, 0.5]),
                               _t([0.2, -0.5, 0.0])), 20000
    x = p.sample((n,), generator=1).numpy()
    np.testing.assert_array_equal(p.sample((n,), generator=1).numpy(), x)
    assert x.shape == (n, 3) and bool(p.support.check(_t(x)).all())
    var = p.variance.numpy()
    np.testing.assert_allclose(x.mean(0), p.mean.numpy(), atol=5 * np.sqrt(var.max() / n))
    m4 = ((x - p.mean.numpy()) ** 4).mean(0)
    np.testing.assert_allclose(x.var(0), var, atol=5 * np.sqrt((m4 - var ** 2).max() / n))


# ---- LogisticNormal ----

def test_logistic_normal_matches_torch(torch):
    loc, scale = RNG.standard_normal((2, 3)), RNG.random(3) + 0.5
    p = D.LogisticNormal(_t(loc), _t(scale))
    tp = TD.LogisticNormal(torch.tensor(loc), torch.tensor(scale))
    assert p.batch_shape == (2,) and p.event_shape == (4,)
    x = tp.sample((5,))
    _close(p.log_prob(_t(x.numpy())), tp.log_prob(x))
    _close(p.loc, tp.loc) and _close(p.scale, tp.scale)
    one, tone = D.LogisticNormal(0.3, 1.2), TD.LogisticNormal(0.3, 1.2)
    assert one.batch_shape == () and one.event_shape == (2,) == tuple(tone.event_shape)
    _close(one.log_prob(_t([0.2, 0.8])), tone.log_prob(torch.tensor([0.2, 0.8])))


def test_logistic_normal_gradcheck_and_draws():
    params = [_t([0.3, -0.2], True), _t([0.8, 1.3], True)]
    x = _t([0.2, 0.5, 0.3])
    assert mg.gradcheck(lambda m, s: D.LogisticNormal(m, s).log_prob(x), params)
    p, n = D.LogisticNormal(_t([0.3, -1.0]), _t([0.8, 1.5])), 20000
    y = p.sample((n,), generator=0)
    assert y.shape == (n, 3) and bool(D.constraints.simplex.check(y).all())
    # the draws' stick-breaking logits are the normal draws: mean within 5 standard errors
    z = D.StickBreakingTransform().inv(y).numpy()
    np.testing.assert_allclose(z.mean(0), [0.3, -1.0], atol=5 * 1.5 / np.sqrt(n))
    np.testing.assert_allclose(z.std(0), [0.8, 1.5], rtol=5 / np.sqrt(2 * n))


# ---- Wishart ----

def _spd(*batch, p=3):
    a = RNG.standard_normal(batch + (p, p))
    return a @ np.swapaxes(a, -1, -2) + np.eye(p)


@pytest.mark.parametrize("kind", ["covariance_matrix", "precision_matrix", "scale_tril"])
def test_wishart_matches_torch(torch, kind):
    s = _spd(2)
    m = np.linalg.cholesky(s) if kind == "scale_tril" else s
    df = np.array([3.5, 6.0])
    p = D.Wishart(_t(df), **{kind: _t(m)})
    tp = TD.Wishart(torch.tensor(df), **{kind: torch.tensor(m)})
    assert p.batch_shape == (2,) and p.event_shape == (3, 3)
    for attr in ("mean", "variance", "covariance_matrix", "precision_matrix", "scale_tril"):
        _close(getattr(p, attr), getattr(tp, attr), rtol=1e-10)
    np.testing.assert_allclose(p.mode.numpy(), tp.mode.numpy(), rtol=1e-10)   # NaN: df < 4
    _close(p.entropy(), tp.entropy(), rtol=1e-10)
    x = _spd(4, 2)
    _close(p.log_prob(_t(x)), tp.log_prob(torch.tensor(x)), rtol=1e-10)


def test_wishart_gradcheck():
    b = np.linalg.cholesky(_spd(p=2))
    x = _t(_spd(p=2))
    params = [_t(b, True), _t(3.7, True)]
    assert mg.gradcheck(lambda B, df: D.Wishart(df, scale_tril=B.tril()).log_prob(x), params)
    assert mg.gradcheck(lambda B, df: D.Wishart(df, scale_tril=B.tril()).entropy(), params)
    assert mg.gradcheck(lambda B: D.Wishart(4.0, scale_tril=B.tril()).rsample(generator=2),
                        params[:1])


def test_wishart_draws_have_its_moments():
    p, n = D.Wishart(_t([2.5, 7.0]), covariance_matrix=_t(_spd(p=2))), 20000
    x = p.sample((n,), generator=1).numpy()
    np.testing.assert_array_equal(p.sample((n,), generator=1).numpy(), x)
    assert x.shape == (n, 2, 2, 2) and bool(p.support.check(_t(x)).all())
    mean, var = p.mean.numpy(), p.variance.numpy()
    # each entry's mean within 5 standard errors, its variance within 5 of its own
    assert (np.abs(x.mean(0) - mean) <= 5 * np.sqrt(var / n)).all()
    m4 = ((x - mean) ** 4).mean(0)
    assert (np.abs(x.var(0) - var) <= 5 * np.sqrt((m4 - var ** 2) / n)).all()


@pytest.mark.parametrize("make,words", [
    (lambda: D.GeneralizedPareto(0.0, -1.0, 0.1), "parameter scale"),
    (lambda: D.GeneralizedPareto(0.0, 1.0, -0.5).log_prob(_t(2.5)), "within the support"),
    (lambda: D.GeneralizedPareto(0.0, 1.0, 0.5).log_prob(_t(-0.1)), "within the support"),
    (lambda: D.LogisticNormal(0.0, 0.0), "parameter scale"),
    (lambda: D.LogisticNormal(_t([0.0]), 1.0).log_prob(_t([0.5, 0.6])), "within the support"),
    (lambda: D.Wishart(1.0, covariance_matrix=_t(np.eye(3))), "parameter df"),
    (lambda: D.Wishart(4.0, covariance_matrix=_t(-np.eye(3))), "parameter covariance_matrix"),
    (lambda: D.Wishart(4.0, _t(np.eye(2)), scale_tril=_t(np.eye(2))), "exactly one"),
    (lambda: D.Wishart(4.0, covariance_matrix=_t(np.ones((2, 3)))), "square matrices"),
    (lambda: D.Wishart(_t([4.0, 5.0]), covariance_matrix=_t(np.ones((3, 2, 2)))),
     "do not broadcast"),
    (lambda: D.Wishart(4.0, covariance_matrix=_t(np.eye(2))).log_prob(_t(-np.eye(2))),
     "within the support"),
])
def test_bad_arguments_raise_value_errors_naming_them(make, words):
    with pytest.raises(ValueError, match=words):
        make()


def test_expand():
    for d in (D.GeneralizedPareto(_t(np.zeros(3)), 1.0, 0.2),
              D.LogisticNormal(_t(np.zeros((3, 2))), 1.0),
              D.Wishart(_t(np.full(3, 3.0)), covariance_matrix=_t(np.eye(2)))):
        e = d.expand((4, 3))
        assert type(e) is type(d) and e.batch_shape == (4, 3) and e.event_shape == d.event_shape
        assert e.sample((2,)).shape == (2, 4, 3) + d.event_shape
        x = d.sample()
        np.testing.assert_allclose(e.log_prob(x).numpy(),
                                   np.broadcast_to(d.log_prob(x).numpy(), (4, 3)))


# ---- the KLs of kl_more.py and kl_mixed.py ----

# name: (parameter arrays for p, the same flipped serve for q), all with batch shape (2,)
KL_PARAMS = {
    "Normal": [[0.3, -0.2], [1.2, 0.7]], "Uniform": [[0.1, 0.2], [0.8, 0.9]],
    "Bernoulli": [[0.3, 0.6]], "Exponential": [[1.5, 0.7]], "Laplace": [[0.3, -0.2], [1.2, 0.7]],
    "Gumbel": [[0.3, -0.2], [1.2, 0.7]], "Poisson": [[1.5, 0.7]], "Gamma": [[2.0, 3.0],
                                                                          [1.2, 0.7]],
    "Chi2": [[3.0, 5.0]], "Beta": [[2.0, 3.0], [1.2, 0.7]], "HalfNormal": [[1.5, 0.7]],
    "Geometric": [[0.3, 0.6]], "Pareto": [[2.0, 3.0], [1.2, 2.7]], "HalfCauchy": [[1.5, 0.7]],
    "InverseGamma": [[2.0, 3.0], [1.2, 0.7]], "ContinuousBernoulli": [[0.3, 0.6]],
}
KL_PAIRS = [("Geometric", "Geometric"), ("Pareto", "Pareto"), ("HalfNormal", "HalfNormal"),
            ("HalfCauchy", "HalfCauchy"), ("InverseGamma", "InverseGamma"),
            ("ContinuousBernoulli", "ContinuousBernoulli"), ("Bernoulli", "Poisson")]
KL_PAIRS += [(p, "Normal") for p in ("Beta", "ContinuousBernoulli", "Exponential", "Gamma",
                                     "Chi2", "Gumbel", "Pareto", "Uniform")]
KL_PAIRS += [(p, "Exponential") for p in ("Beta", "ContinuousBernoulli", "Pareto", "Uniform")]
KL_PAIRS += [(p, "Gamma") for p in ("Beta", "Pareto", "Uniform")] + [("Uniform", "Chi2")]
KL_PAIRS += [(p, "Gumbel") for p in ("Exponential", "Gamma", "Normal", "Uniform")]
KL_PAIRS += [("Uniform", "Beta"), ("Beta", "ContinuousBernoulli"),
             ("Uniform", "ContinuousBernoulli")]
KL_INFINITE = [("Normal", "Beta"), ("Laplace", "Gamma"), ("Gumbel", "Uniform"),
               ("Exponential", "Pareto"), ("Gamma", "ContinuousBernoulli"),
               ("Pareto", "Uniform"), ("Beta", "Pareto"), ("Poisson", "Bernoulli")]


def _kl_pair(lib, name_p, name_q, make=None):
    make = make or (lambda a: mg.tensor(np.asarray(a, dtype=np.float64)))
    p = getattr(lib, name_p)(*(make(a) for a in KL_PARAMS[name_p]))
    q = getattr(lib, name_q)(*(make(a[::-1]) for a in KL_PARAMS[name_q]))
    return p, q


@pytest.mark.parametrize("names", KL_PAIRS + KL_INFINITE, ids="-".join)
def test_kl_matches_torch(torch, names):
    ours = D.kl_divergence(*_kl_pair(D, *names))
    theirs = TD.kl_divergence(*_kl_pair(TD, *names, lambda a: torch.tensor(a,
                                                                             dtype=torch.float64)))
    assert ours.shape == (2,)
    _close(ours, theirs, rtol=1e-9)
    if names in KL_INFINITE:
        assert np.isinf(ours.numpy()).all()


# gradchecks need finite KLs: Pareto's variance and scale ordering
GRAD_P, GRAD_Q = {"Pareto": [[3.0, 3.5], [2.5, 3.2]]}, {"Pareto": [[1.0, 0.5], [2.0, 1.5]]}


@pytest.mark.parametrize("names", KL_PAIRS, ids="-".join)
def test_kl_gradcheck(names):
    name_p, name_q = names
    args_p = GRAD_P.get(name_p, KL_PARAMS[name_p])
    args_q = GRAD_Q.get(name_q, [a[::-1] for a in KL_PARAMS[name_q]])
    n_p = len(args_p)

    def kl(*params):
        p = getattr(D, name_p)(*params[:n_p])
        return D.kl_divergence(p, getattr(D, name_q)(*params[n_p:]))
    params = [_t(a, True) for a in args_p + args_q]
    assert np.isfinite(kl(*params).detach().numpy()).all()
    assert mg.gradcheck(kl, params)


def test_kl_conditional_infinities_match_torch(torch):
    f64 = lambda a: torch.tensor(a, dtype=torch.float64)   # noqa: E731
    low, high = [-0.1, 0.2, 0.3], [0.8, 1.2, 0.9]
    for make_q in (lambda lib, f: lib.Beta(f([2.0] * 3), f([3.0] * 3)),
                   lambda lib, f: lib.Exponential(f([1.0] * 3)),
                   lambda lib, f: lib.Pareto(f([0.25] * 3), f([2.0] * 3))):
        ours = D.kl_divergence(D.Uniform(_t(low), _t(high)), make_q(D, _t))
        theirs = TD.kl_divergence(TD.Uniform(f64(low), f64(high)), make_q(TD, f64))
        _close(ours, theirs, rtol=1e-9)
    for q in ((-0.1, 1.0), (0.0, 1.5), (0.1, 1.0)):
        ours = D.kl_divergence(D.Beta(_t(2.0), _t(3.0)), D.Uniform(_t(q[0]), _t(q[1])))
        theirs = TD.kl_divergence(TD.Beta(f64(2.0), f64(3.0)), TD.Uniform(f64(q[0]), f64(q[1])))
        _close(ours, theirs)


def test_kl_binomial(torch):
    p = D.Binomial(_t([5.0, 5.0]), _t([0.3, 0.6]))
    q = D.Binomial(_t([5.0, 4.0]), _t([0.6, 0.2]))
    tp = TD.Binomial(torch.tensor(5.0), torch.tensor(0.3, dtype=torch.float64))
    t0 = TD.kl_divergence(tp, TD.Binomial(torch.tensor(5.0),
                                          torch.tensor(0.6, dtype=torch.float64)))
    ours = D.kl_divergence(p, q).numpy()
    np.testing.assert_allclose(ours[0], t0.item())
    assert ours[1] == np.inf                      # p reaches 5, which q cannot
    with pytest.raises(NotImplementedError, match="smaller total_count"):
        D.kl_divergence(q, p)


def test_kl_geometric_is_not_bernoullis(torch):
    # Geometric subclassed Bernoulli, so kl_divergence took Bernoulli's KL for it: a wrong
    # value for two Geometrics (0.184 for torch's 0.613), and one for mixed pairs too
    p, q = D.Geometric(_t([0.3, 0.6])), D.Geometric(_t([0.6, 0.3]))
    theirs = TD.kl_divergence(TD.Geometric(torch.tensor([0.3, 0.6])),
                              TD.Geometric(torch.tensor([0.6, 0.3])))
    _close(D.kl_divergence(p, q), theirs.double(), rtol=1e-6)
    assert not isinstance(p, D.Bernoulli)
    with pytest.raises(NotImplementedError):
        D.kl_divergence(D.Bernoulli(_t(0.3)), p)


def test_kl_wishart(torch):
    s1, s2 = _spd(p=2), _spd(2, p=2)
    df_p, df_q = np.array([3.5, 2.0]), np.array([5.0, 6.5])
    p = D.Wishart(_t(df_p), covariance_matrix=_t(s1))
    q = D.Wishart(_t(df_q), covariance_matrix=_t(s2))
    ours = D.kl_divergence(p, q)
    # torch's batched Wishart KL (its exponential-family Bregman form) is wrong, even
    # negative: compare one batch entry at a time
    for i in range(2):
        theirs = TD.kl_divergence(
            TD.Wishart(torch.tensor(df_p[i]), covariance_matrix=torch.tensor(s1)),
            TD.Wishart(torch.tensor(df_q[i]), covariance_matrix=torch.tensor(s2[i])))
        np.testing.assert_allclose(ours.numpy()[i], theirs.item(), rtol=1e-9)
    params = [_t(np.linalg.cholesky(s1), True), _t(3.5, True), _t(5.0, True)]
    assert mg.gradcheck(lambda b, dp, dq: D.kl_divergence(
        D.Wishart(dp, scale_tril=b.tril()), D.Wishart(dq, covariance_matrix=_t(s1 + 1))), params)


def test_kl_transformed_distributions(torch):
    loc, scale = RNG.standard_normal((2, 3)), RNG.random((2, 3)) + 0.5
    p, q = D.LogisticNormal(_t(loc), _t(scale)), D.LogisticNormal(_t(loc[::-1]), 1.0)
    theirs = TD.kl_divergence(TD.LogisticNormal(torch.tensor(loc), torch.tensor(scale)),
                              TD.LogisticNormal(torch.tensor(loc[::-1].copy()), 1.0))
    _close(D.kl_divergence(p, q), theirs)
    other = D.TransformedDistribution(D.Normal(_t(np.zeros(2)), 1.0), D.ExpTransform())
    with pytest.raises(NotImplementedError, match="different transforms"):
        D.kl_divergence(D.TransformedDistribution(D.Normal(_t(np.zeros(2)), 1.0),
                                                  D.SigmoidTransform()), other)
