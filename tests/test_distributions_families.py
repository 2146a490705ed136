"""mg.distributions' later families against torch.distributions (the reference) and their
closed forms: LowRankMultivariateNormal (with its KLs), Weibull, Pareto, HalfCauchy,
InverseGamma, Kumaraswamy, FisherSnedecor, VonMises, ContinuousBernoulli and
OneHotCategoricalStraightThrough: log_prob, entropy, moments, cdf/icdf, float64 gradchecks,
draws' moments, validation and expand."""
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
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), atol=atol, rtol=rtol)


def _pos(*shape):
    return RNG.random(shape) * 2 + 0.3


# name: parameters (shapes (2, 1) and (3,) broadcast), values maker, has cdf, has icdf
FAMILIES = {
    "Weibull": ([_pos(2, 1), _pos(3)], lambda s: RNG.random(s) * 3 + 0.01, True, True),
    "Pareto": ([_pos(2, 1) * 0.3, _pos(3) + 2.1], lambda s: RNG.random(s) * 3 + 1.0, True,
               True),
    "HalfCauchy": ([_pos(2, 3)], lambda s: RNG.random(s) * 3, True, True),
    "InverseGamma": ([_pos(2, 1) + 2.1, _pos(3)], lambda s: RNG.random(s) * 3 + 0.01, True,
                     False),
    "Kumaraswamy": ([_pos(2, 1), _pos(3)], lambda s: RNG.random(s) * 0.98 + 0.01, True, True),
    "FisherSnedecor": ([_pos(2, 1) * 3, _pos(3) + 4.1], lambda s: RNG.random(s) * 3 + 0.01,
                       False, False),
    "VonMises": ([RNG.standard_normal((2, 1)), _pos(3) * 5], lambda s: RNG.uniform(-3, 3, s),
                 False, False),
}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_matches_torch(torch, name):
    params, values, has_cdf, has_icdf = FAMILIES[name]
    p = getattr(D, name)(*(_t(a) for a in params))
    tp = getattr(TD, name)(*(torch.tensor(a) for a in params))
    assert p.batch_shape == tuple(tp.batch_shape) == (2, 3) and p.event_shape == ()
    attrs = ["mean", "variance"] + (["mode"] if name not in ("Weibull", "Kumaraswamy") else [])
    # torch's VonMises takes log I0 and I1 from float32-accurate series; ours from i0e, i1e
    rtol = 1e-5 if name == "VonMises" else 1e-7
    for attr in attrs:
        _close(getattr(p, attr), getattr(tp, attr), atol=1e-9, rtol=rtol)
    x = values((4, 2, 3))
    _close(p.log_prob(_t(x)), tp.log_prob(torch.tensor(x)), atol=1e-9, rtol=rtol)
    if name not in ("FisherSnedecor", "VonMises"):       # torch has neither entropy
        _close(p.entropy(), tp.entropy(), atol=1e-9)
    if has_cdf:
        _close(p.cdf(_t(x)), tp.cdf(torch.tensor(x)), atol=1e-9)
    if has_icdf:
        u = RNG.random((4, 2, 3)) * 0.98 + 0.01
        _close(p.icdf(_t(u)), tp.icdf(torch.tensor(u)), atol=1e-9)
        _close(p.cdf(p.icdf(_t(u))), torch.tensor(u), atol=1e-9)


def test_infinite_and_undefined_moments_match_torch(torch):
    a = np.array([0.5, 1.0, 1.5, 2.0, 3.0, 5.0])
    for ours, theirs in ((D.Pareto(1.0, _t(a)), TD.Pareto(1.0, torch.tensor(a))),
                         (D.InverseGamma(_t(a), 2.0), TD.InverseGamma(torch.tensor(a), 2.0)),
                         (D.FisherSnedecor(_t(a + 1), _t(a + 0.5)),
                          TD.FisherSnedecor(torch.tensor(a + 1), torch.tensor(a + 0.5))),
                         (D.HalfCauchy(_t(a)), TD.HalfCauchy(torch.tensor(a)))):
        for attr in ("mean", "variance"):
            _close(getattr(ours, attr), getattr(theirs, attr), atol=1e-12)


def test_von_mises_moments_and_density_match_bessel_closed_forms():
    k = np.array([0.01, 1.5, 3.7, 8.0, 700.0])
    p = D.VonMises(0.3, _t(k))
    # log p(loc) = k - log(2 pi I0(k)) (I0 from scipy.special.i0), and the density's
    # integral over the circle is 1 even where I0(k) overflows float64 (k = 700)
    i0 = [1.0000250001562505, 1.6467231897728907, 8.738617524169396, 427.56411572180474]
    np.testing.assert_allclose(p.log_prob(_t([[0.3]])).numpy()[0, :4],
                               k[:4] - np.log(2 * math.pi * np.array(i0)), rtol=1e-8)
    grid = _t(np.linspace(-math.pi, math.pi, 200001)[:, None])
    mass = np.trapezoid(p.log_prob(grid).exp().numpy(), grid.numpy()[:, 0], axis=0)
    np.testing.assert_allclose(mass, 1, atol=1e-8)
    assert np.isfinite(p.variance.numpy()).all() and p.variance.numpy()[-1] < 1e-3


def test_modes_where_torchs_formula_is_wrong():
    # Weibull's mode is 0 for k <= 1 (torch 2.x gives scale at k = 1/2); Kumaraswamy's is
    # ((a-1)/(ab-1))^(1/a) (torch 2.x gives NaN everywhere): checked by the density's peak
    for p in (D.Weibull(_t([1.0, 2.0, 1.0]), _t([0.5, 3.0, 1.5])),
              D.Kumaraswamy(_t([2.0, 3.0, 1.5]), _t([3.0, 1.0, 2.0]))):
        grid = _t(np.linspace(1e-4, 0.9999 if isinstance(p, D.Kumaraswamy) else 4.0, 40001))
        peak = grid.numpy()[p.log_prob(grid.unsqueeze(-1)).numpy().argmax(0)]
        np.testing.assert_allclose(p.mode.numpy(), peak, atol=2e-4)
    assert D.Weibull(1.0, 0.5).mode.item() == 0.0
    assert math.isnan(D.Kumaraswamy(0.5, 2.0).mode.item())


def _low_rank(batch_loc=(2, 1), batch_w=(3,), n=4, k=2, scale=1.0):
    return (RNG.standard_normal(batch_loc + (n,)), RNG.standard_normal(batch_w + (n, k)) * scale,
            RNG.random((n,)) + 0.5)


def test_low_rank_mvn_matches_torch(torch):
    args = _low_rank()
    p = D.LowRankMultivariateNormal(*(_t(a) for a in args))
    tp = TD.LowRankMultivariateNormal(*(torch.tensor(a) for a in args))
    assert p.batch_shape == tuple(tp.batch_shape) == (2, 3) and p.event_shape == (4,)
    for attr in ("mean", "mode", "variance", "stddev", "covariance_matrix",
                 "precision_matrix", "scale_tril"):
        _close(getattr(p, attr), getattr(tp, attr), atol=1e-12)
    x = RNG.standard_normal((5, 2, 3, 4))
    _close(p.log_prob(_t(x)), tp.log_prob(torch.tensor(x)), atol=1e-12)
    _close(p.entropy(), tp.entropy(), atol=1e-12)
    assert p.rsample((5,)).shape == (5, 2, 3, 4)


def test_low_rank_mvn_kls_match_torch(torch):
    lp, lq = _low_rank(), _low_rank((3,), (), scale=0.5)
    cov = np.eye(4) * 2 + 0.3
    loc = RNG.standard_normal(4)
    pairs = [(D.LowRankMultivariateNormal(*map(_t, lp)),
              TD.LowRankMultivariateNormal(*map(torch.tensor, lp))),
             (D.LowRankMultivariateNormal(*map(_t, lq)),
              TD.LowRankMultivariateNormal(*map(torch.tensor, lq))),
             (D.MultivariateNormal(_t(loc), covariance_matrix=_t(cov)),
              TD.MultivariateNormal(torch.tensor(loc), covariance_matrix=torch.tensor(cov)))]
    for i, j in ((0, 1), (1, 0), (0, 2), (2, 0), (0, 0)):
        _close(D.kl_divergence(pairs[i][0], pairs[j][0]),
               TD.kl_divergence(pairs[i][1], pairs[j][1]), atol=1e-11)


def test_low_rank_mvn_agrees_with_the_full_covariance_mvn():
    loc, w, d = _low_rank((), (), n=5, k=3)
    p = D.LowRankMultivariateNormal(_t(loc), _t(w), _t(d))
    full = D.MultivariateNormal(_t(loc), covariance_matrix=_t(w @ w.T + np.diag(d)))
    x = _t(RNG.standard_normal((6, 5)))
    np.testing.assert_allclose(p.log_prob(x).numpy(), full.log_prob(x).numpy(), atol=1e-12)
    np.testing.assert_allclose(p.entropy().numpy(), full.entropy().numpy(), atol=1e-12)
    assert abs(D.kl_divergence(p, full).item()) < 1e-12


def test_continuous_bernoulli_matches_torch_across_the_taylor_window(torch):
    probs = np.array([0.02, 0.3, 0.4989, 0.4995, 0.5, 0.5007, 0.5012, 0.8, 0.999])
    for kw in ({"probs": probs}, {"logits": np.log(probs / (1 - probs))}):
        p = D.ContinuousBernoulli(**{k: _t(v) for k, v in kw.items()})
        tp = TD.ContinuousBernoulli(**{k: torch.tensor(v) for k, v in kw.items()})
        for attr in ("mean", "variance", "stddev"):
            _close(getattr(p, attr), getattr(tp, attr), atol=1e-10)
        x = RNG.random((3, 9))
        _close(p.log_prob(_t(x)), tp.log_prob(torch.tensor(x)), atol=1e-10)
        _close(p.cdf(_t(x)), tp.cdf(torch.tensor(x)), atol=1e-10)
        _close(p.icdf(_t(x)), tp.icdf(torch.tensor(x)), atol=1e-10)
        _close(p.entropy(), tp.entropy(), atol=1e-10)


def test_continuous_bernoulli_gradient_is_finite_and_right_at_one_half(torch):
    for prob in (0.5, 0.4995, 0.3):
        probs, tprobs = _t([prob], True), torch.tensor([prob], dtype=torch.float64,
                                                        requires_grad=True)
        x = np.array([0.2])
        ours = D.ContinuousBernoulli(probs).log_prob(_t(x)).sum()
        theirs = TD.ContinuousBernoulli(tprobs).log_prob(torch.tensor(x)).sum()
        theirs.backward()
        g, = mg.grad(ours, [probs])
        assert np.isfinite(g.numpy()).all()
        np.testing.assert_allclose(g.numpy(), tprobs.grad.numpy(), atol=1e-8)


def test_continuous_bernoulli_large_logits_stay_normalised():
    # sigmoid(50) rounds to 1: forms in p gave inf log_prob, cdf 0, icdf NaN. Torch clamps p
    # to 1 - eps there, so its log C is log(36.04), not log(50): its density no longer
    # integrates to 1 (about 0.72), while the closed form log C = log|l| - log|tanh(l/2)|
    x = np.linspace(0.0, 1.0, 200001)
    for l in (-50.0, 50.0, -800.0):
        d = D.ContinuousBernoulli(logits=_t(l))
        density = np.exp(d.log_prob(_t(x)).numpy())
        assert abs(np.trapezoid(density, x) - 1) < 1e-5     # the rule's own error
        s = 1 if l > 0 else -1
        np.testing.assert_allclose(d.mean.item(), (1 - 1 / abs(l)) if l > 0 else 1 / abs(l))
        np.testing.assert_allclose(d.variance.item(), 1 / l ** 2, rtol=1e-12)
        np.testing.assert_allclose(d.entropy().item(), 1 - math.log(abs(l)), rtol=1e-12)
        u = _t([1e-3, 0.5, 0.999])
        np.testing.assert_allclose(d.cdf(d.icdf(u)).numpy(), u.numpy(), rtol=1e-9)
        near = 1 - 0.1 if l > 0 else 0.1          # cdf 0.1 from the heavy end: e^(-|l|/10)
        want = math.exp(-abs(l) / 10) if l > 0 else 1 - math.exp(-abs(l) / 10)
        np.testing.assert_allclose(d.cdf(_t(near)).item(), want, rtol=1e-9, atol=1e-300)
        assert s * (d.icdf(_t(0.5)).item() - 0.5) > 0


def test_continuous_bernoulli_float32_from_logits_keeps_float32():
    d = D.ContinuousBernoulli(logits=mg.tensor([-50.0, 2.0, 50.0], dtype=mg.float32))
    for out in (d.log_prob(mg.tensor([0.3], dtype=mg.float32)), d.entropy(), d.mean,
                d.cdf(mg.tensor([0.3], dtype=mg.float32)), d.rsample((2,))):
        assert out.dtype == mg.float32 and np.isfinite(out.numpy()).all()


GRADCHECKS = {
    "Weibull": (lambda a, b: D.Weibull(a, b), [_pos(3), _pos(3)], _pos(3)),
    "Pareto": (lambda a, b: D.Pareto(a, b), [_pos(3) * 0.3, _pos(3)], _pos(3) + 1.0),
    "HalfCauchy": (lambda a: D.HalfCauchy(a), [_pos(3)], _pos(3)),
    "InverseGamma": (lambda a, b: D.InverseGamma(a, b), [_pos(3), _pos(3)], _pos(3)),
    "Kumaraswamy": (lambda a, b: D.Kumaraswamy(a, b), [_pos(3), _pos(3)],
                    RNG.random(3) * 0.9 + 0.05),
    "FisherSnedecor": (lambda a, b: D.FisherSnedecor(a, b), [_pos(3), _pos(3)], _pos(3)),
    "VonMises": (lambda a, b: D.VonMises(a, b), [RNG.standard_normal(3), _pos(3)],
                 RNG.uniform(-3, 3, 3)),
    "ContinuousBernoulli": (lambda a: D.ContinuousBernoulli(a),
                            [np.array([0.2, 0.45, 0.7])], RNG.random(3)),
    "LowRankMultivariateNormal": (lambda m, w, d: D.LowRankMultivariateNormal(m, w, d),
                                  list(_low_rank((), (), n=3, k=2)), RNG.standard_normal(3)),
}


@pytest.mark.parametrize("name", sorted(GRADCHECKS))
def test_log_prob_and_entropy_gradcheck(name):
    make, params, x = GRADCHECKS[name]
    params = [_t(a, True) for a in params]
    assert mg.gradcheck(lambda *ps: make(*ps).log_prob(_t(x)), params)
    if name not in ("FisherSnedecor", "VonMises"):
        assert mg.gradcheck(lambda *ps: make(*ps).entropy(), params)


def test_rsample_gradients_follow_the_inverse_cdf():
    # d x / d theta of x = icdf(u; theta) at fixed u, checked by finite differences
    for make, params in ((lambda a, b: D.Weibull(a, b), [_pos(3), _pos(3)]),
                         (lambda a, b: D.Pareto(a, b), [_pos(3), _pos(3)]),
                         (lambda a, b: D.Kumaraswamy(a, b), [_pos(3), _pos(3)]),
                         (lambda a: D.HalfCauchy(a), [_pos(3)]),
                         (lambda m, w, d: D.LowRankMultivariateNormal(m, w, d),
                          list(_low_rank((), (), n=3, k=2)))):
        params = [_t(a, True) for a in params]
        assert mg.gradcheck(lambda *ps: make(*ps).rsample((2,), generator=3), params)


SAMPLED = [
    lambda: D.Weibull(_t([1.0, 2.0]), _t([0.8, 3.0])),
    lambda: D.Pareto(_t([1.0, 0.5]), _t([5.0, 9.0])),
    lambda: D.InverseGamma(_t([5.0, 9.0]), _t([1.0, 3.0])),
    lambda: D.Kumaraswamy(_t([0.5, 3.0]), _t([2.0, 0.7])),
    lambda: D.FisherSnedecor(_t([3.0, 10.0]), _t([9.0, 12.0])),
    lambda: D.ContinuousBernoulli(_t([0.1, 0.5, 0.93])),
    lambda: D.LowRankMultivariateNormal(_t([1.0, -1.0, 0.0]), _t([[1.0], [0.5], [-2.0]]),
                                        _t([0.5, 1.0, 0.2])),
]


@pytest.mark.parametrize("index", range(len(SAMPLED)))
def test_draws_have_their_moments_and_are_reproducible(index):
    p, n = SAMPLED[index](), 20000
    x = p.sample((n,), generator=1).numpy()
    np.testing.assert_array_equal(p.sample((n,), generator=1).numpy(), x)
    assert x.shape == (n,) + p.batch_shape + p.event_shape
    assert bool(p.support.check(_t(x)).all())
    # 5 standard errors of the mean; the variance within 5 of its own (from the kurtosis)
    var = p.variance.numpy()
    np.testing.assert_allclose(x.mean(0), p.mean.numpy(), atol=5 * np.sqrt(var.max() / n))
    m4 = ((x - p.mean.numpy()) ** 4).mean(0)
    np.testing.assert_allclose(x.var(0), var, atol=5 * np.sqrt((m4 - var ** 2).max() / n))


def test_low_rank_mvn_draws_have_its_covariance():
    p = SAMPLED[-1]()
    x = p.sample((40000,), generator=2).numpy()
    np.testing.assert_allclose(np.cov(x.T), p.covariance_matrix.numpy(), atol=0.08)


def test_von_mises_draws_have_its_circular_moments():
    loc, k = _t([0.3, -3.0, 3.0, 0.0]), _t([0.01, 2.0, 50.0, 1e-6])
    p, n = D.VonMises(loc, k), 20000
    x = p.sample((n,), generator=0).numpy()
    assert x.shape == (n, 4) and x.dtype == np.float64
    assert (x >= -math.pi).all() and (x <= math.pi).all()
    resultant = np.exp(1j * x).mean(0)
    # E[cos(x - loc)] = 1 - variance, a standard error below 1 / sqrt(n)
    np.testing.assert_allclose(1 - np.abs(resultant), p.variance.numpy(), atol=4 / np.sqrt(n))
    direction = np.angle(resultant * np.exp(-1j * loc.numpy()))[1:3]
    np.testing.assert_allclose(direction, 0, atol=0.03)
    assert not p.has_rsample and p.sample((2,)).requires_grad is False


def test_one_hot_straight_through_rsample_carries_the_probs_gradient():
    logits = _t(RNG.standard_normal((2, 3)), True)
    p = D.OneHotCategoricalStraightThrough(logits=logits)
    x = p.rsample((5,), generator=0)
    assert x.shape == (5, 2, 3) and p.has_rsample
    np.testing.assert_array_equal(x.detach().numpy(),
                                  D.OneHotCategorical(logits=logits).sample((5,), generator=0)
                                  .numpy())
    w = _t(RNG.standard_normal(3))
    g, = mg.grad((x * w).sum(), [logits])
    # the gradient of 5 * sum(probs * w): softmax's Jacobian times w
    probs = p.probs.detach().numpy()
    wn = w.numpy()
    expected = 5 * probs * (wn - (probs * wn).sum(-1, keepdims=True))
    np.testing.assert_allclose(g.numpy(), expected, atol=1e-12)
    e = p.expand((4, 2))
    assert type(e) is D.OneHotCategoricalStraightThrough and e.rsample().shape == (4, 2, 3)


@pytest.mark.parametrize("make,words", [
    (lambda: D.Weibull(1.0, -1.0), "parameter concentration"),
    (lambda: D.Weibull(0.0, 1.0), "parameter scale"),
    (lambda: D.Pareto(1.0, 0.0), "parameter alpha"),
    (lambda: D.Pareto(2.0, 1.0).log_prob(_t(1.5)), "within the support"),
    (lambda: D.HalfCauchy(-1.0), "parameter scale"),
    (lambda: D.HalfCauchy(1.0).log_prob(_t(-1.0)), "within the support"),
    (lambda: D.InverseGamma(1.0, 0.0), "parameter rate"),
    (lambda: D.Kumaraswamy(-1.0, 1.0), "parameter concentration1"),
    (lambda: D.Kumaraswamy(1.0, 1.0).log_prob(_t(1.5)), "within the support"),
    (lambda: D.FisherSnedecor(1.0, -2.0), "parameter df2"),
    (lambda: D.VonMises(0.0, 0.0), "parameter concentration"),
    (lambda: D.VonMises(0.0, 1.0).log_prob(_t(4.0)), "within the support"),
    (lambda: D.ContinuousBernoulli(_t(1.5)), "parameter probs"),
    (lambda: D.ContinuousBernoulli(), "either probs or logits"),
    (lambda: D.LowRankMultivariateNormal(_t([0.0, 0.0]), _t([[1.0], [1.0]]), _t([1.0, 0.0])),
     "parameter cov_diag"),
    (lambda: D.LowRankMultivariateNormal(_t([0.0, 0.0]), _t([1.0, 1.0]), _t([1.0, 1.0])),
     "cov_factor must be a tensor of at least 2 dims"),
    (lambda: D.LowRankMultivariateNormal(_t([0.0, 0.0]), _t([[1.0]] * 3), _t([1.0, 1.0])),
     "must be"),
    (lambda: D.LowRankMultivariateNormal(_t(np.zeros((2, 2))), _t(np.ones((3, 2, 1))),
                                         _t([1.0, 1.0])), "do not broadcast"),
])
def test_bad_arguments_raise_value_errors_naming_them(make, words):
    with pytest.raises(ValueError, match=words):
        make()


def test_expand():
    for d in (D.Weibull(_t(np.ones(3)), 2.0), D.Pareto(_t(np.ones(3)), 3.0),
              D.HalfCauchy(_t(np.ones(3))), D.InverseGamma(_t(np.ones(3)), 2.0),
              D.Kumaraswamy(_t(np.ones(3)), 2.0), D.FisherSnedecor(_t(np.ones(3)), 5.0),
              D.VonMises(_t(np.zeros(3)), 1.0), D.ContinuousBernoulli(_t(np.full(3, 0.3))),
              D.LowRankMultivariateNormal(_t(np.zeros((3, 2))), _t(np.ones((2, 1))),
                                          _t(np.ones(2)))):
        e = d.expand((4, 3))
        assert type(e) is type(d) and e.batch_shape == (4, 3)
        assert e.sample((2,)).shape == (2, 4, 3) + d.event_shape
        x = d.sample()
        np.testing.assert_allclose(e.log_prob(x).numpy(),
                                   np.broadcast_to(d.log_prob(x).numpy(), (4, 3)))
