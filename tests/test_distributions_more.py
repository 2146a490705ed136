"""mg.distributions' further families against torch.distributions (the reference):
Exponential, Laplace, Cauchy, Gumbel, LogNormal, Poisson, Binomial, Gamma, Chi2, Beta and
Dirichlet on log_prob, entropy, the moments, cdf, their KLs and gradients, and the Gamma
draws' implicit-reparameterisation gradient (ops/gamma_sample.py)."""
import numpy as np
import pytest

import minigrad as mg
import spy_backend

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None
D, TD = mg.distributions, torch.distributions if torch else None
RNG = np.random.default_rng(0)


def _pair(a, requires_grad=False):
    a = np.asarray(a, dtype=np.float64)
    return (mg.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _close(ours, theirs, atol=1e-10, rtol=1e-7):
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), atol=atol, rtol=rtol)


def _pos(*shape):
    return RNG.random(shape) * 2 + 0.3


# name, parameter makers (shapes (2, 1) and (3,) broadcast), values maker of (shape)
FAMILIES = {
    "Exponential": ([lambda: _pos(2, 3)], lambda s: RNG.random(s) * 3),
    "Laplace": ([lambda: RNG.standard_normal((2, 1)), lambda: _pos(3)],
                lambda s: RNG.standard_normal(s) * 2),
    "Cauchy": ([lambda: RNG.standard_normal((2, 1)), lambda: _pos(3)],
               lambda s: RNG.standard_normal(s) * 3),
    "Gumbel": ([lambda: RNG.standard_normal((2, 1)), lambda: _pos(3)],   # (torch's cdf
               lambda s: RNG.random(s) * 3),                # refuses where it underflows)
    "LogNormal": ([lambda: RNG.standard_normal((2, 1)), lambda: _pos(3)],
                  lambda s: RNG.random(s) * 4 + 0.01),
    "Poisson": ([lambda: _pos(2, 3) * 3], lambda s: RNG.integers(0, 8, s)),
    "Gamma": ([lambda: _pos(2, 1), lambda: _pos(3)], lambda s: RNG.random(s) * 4 + 0.01),
    "Chi2": ([lambda: _pos(2, 3) * 3], lambda s: RNG.random(s) * 4 + 0.01),
    "Beta": ([lambda: _pos(2, 1), lambda: _pos(3)], lambda s: RNG.random(s) * 0.98 + 0.01),
}
HAS_CDF = {"Exponential", "Laplace", "Cauchy", "Gumbel", "LogNormal", "Gamma", "Chi2"}
HAS_ICDF = {"Exponential", "Laplace", "Cauchy", "Gumbel", "LogNormal"}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_matches_torch(torch, name):
    makers, values = FAMILIES[name]
    pairs = [_pair(m()) for m in makers]
    p, tp = getattr(D, name)(*(a for a, _ in pairs)), getattr(TD, name)(*(t for _, t in pairs))
    assert p.batch_shape == tuple(tp.batch_shape) == (2, 3)
    for attr in ("mean", "mode", "variance", "stddev"):
        _close(getattr(p, attr), getattr(tp, attr), atol=1e-9)
    v, tv = _pair(values((4, 2, 3)))
    _close(p.log_prob(v), tp.log_prob(tv), atol=1e-9)
    if name != "Poisson":                                # torch's has no entropy
        _close(p.entropy(), tp.entropy(), atol=1e-9)
    if name in HAS_CDF:
        _close(p.cdf(v), tp.cdf(tv), atol=1e-9)
    if name in HAS_ICDF:
        u, tu = _pair(RNG.random((4, 2, 3)) * 0.9 + 0.05)
        _close(p.icdf(u), tp.icdf(tu), atol=1e-9)
    x = p.sample((5,), generator=0)
    assert x.shape == (5, 2, 3) and not x.requires_grad
    assert bool(p.support.check(x).all())


@pytest.mark.parametrize("by", ["probs", "logits"])
def test_binomial_matches_torch(torch, by):
    (n, tn) = _pair(RNG.integers(0, 10, (2, 1)).astype(float))
    raw = RNG.random(3) if by == "probs" else RNG.standard_normal(3) * 2
    a, ta = _pair(raw)
    p, tp = D.Binomial(n, **{by: a}), TD.Binomial(tn, **{by: ta})
    for attr in ("mean", "mode", "variance", "probs", "logits"):
        _close(getattr(p, attr), getattr(tp, attr))
    k, tk = _pair(np.minimum(RNG.integers(0, 10, (4, 2, 3)), n.numpy()))
    _close(p.log_prob(k), tp.log_prob(tk), atol=1e-9)
    s = p.sample((200,), generator=0).numpy()
    assert s.shape == (200, 2, 3) and (s <= n.numpy()).all() and (s >= 0).all()


def test_dirichlet_matches_torch(torch):
    c, tc = _pair(_pos(2, 1, 4))
    p, tp = D.Dirichlet(c), TD.Dirichlet(tc)
    assert (p.batch_shape, p.event_shape) == ((2, 1), (4,))
    for attr in ("mean", "variance"):
        _close(getattr(p, attr), getattr(tp, attr))
    w = RNG.random((3, 2, 1, 4))
    v, tv = _pair(w / w.sum(-1, keepdims=True))
    _close(p.log_prob(v), tp.log_prob(tv), atol=1e-9)
    _close(p.entropy(), tp.entropy(), atol=1e-9)
    m, tm = _pair([[2.0, 3.0, 1.5], [0.5, 2.0, 0.9]])
    _close(D.Dirichlet(m).mode, TD.Dirichlet(tm).mode)
    x = p.sample((5,), generator=0).numpy()
    assert x.shape == (5, 2, 1, 4)
    np.testing.assert_allclose(x.sum(-1), 1, rtol=1e-12)


def _kl_pairs():
    a, b = RNG.standard_normal((2, 3)), RNG.standard_normal(3)
    s, r = _pos(2, 1), _pos(3)
    for name in ("Laplace", "Cauchy", "Gumbel", "LogNormal"):
        yield name, name, (a, s), (b, r)
    yield "Exponential", "Exponential", (s,), (r,)
    yield "Poisson", "Poisson", (s,), (r,)
    yield "Gamma", "Gamma", (s, r), (r, _pos(2, 3))
    yield "Beta", "Beta", (s, r), (_pos(3), s)
    yield "Chi2", "Chi2", (s * 3,), (r,)
    yield "Normal", "Laplace", (a, s), (b, r)
    yield "Laplace", "Normal", (a, s), (b, r)
    yield "Exponential", "Gamma", (s,), (r, _pos(2, 3))
    yield "Gamma", "Exponential", (s, r), (r,)
    yield "Dirichlet", "Dirichlet", (_pos(2, 1, 4),), (_pos(3, 4),)


KL_PAIRS = list(_kl_pairs())


@pytest.mark.parametrize("index", range(len(KL_PAIRS)),
                         ids=[f"{p}-{q}" for p, q, _, _ in KL_PAIRS])
def test_kl_divergence_matches_torch_with_gradients(torch, index):
    pn, qn, pa, qa = KL_PAIRS[index]
    pp, qq = [_pair(x, True) for x in pa], [_pair(x, True) for x in qa]
    ours = D.kl_divergence(getattr(D, pn)(*(x for x, _ in pp)),
                           getattr(D, qn)(*(x for x, _ in qq)))
    theirs = TD.kl_divergence(getattr(TD, pn)(*(t for _, t in pp)),
                              getattr(TD, qn)(*(t for _, t in qq)))
    _close(ours, theirs, atol=1e-9)
    leaves = [x for x, _ in pp + qq]
    theirs.sum().backward()
    for g, (_, t) in zip(mg.grad(ours.sum(), leaves), pp + qq):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), atol=1e-8, rtol=1e-7)


def test_log_prob_and_entropy_gradients_match_torch(torch):
    (a, ta), (b, tb) = _pair(_pos(3), True), _pair(_pos(3), True)
    (c, tc) = _pair(_pos(2, 3), True)
    x, tx = _pair(RNG.random((4, 3)) * 0.9 + 0.05)

    def loss(d, a, b, c, x):
        return (d.Gamma(a, b).log_prob(x).sum() + d.Gamma(a, b).entropy().sum()
                + d.Beta(a, b).log_prob(x).sum() + d.Beta(a, b).entropy().sum()
                + d.Dirichlet(c).log_prob(x[:2] / x[:2].sum(-1, keepdim=True)).sum()
                + d.Dirichlet(c).entropy().sum() + d.Laplace(a, b).log_prob(x).sum()
                + d.Gumbel(a, b).log_prob(x).sum() + d.Cauchy(a, b).log_prob(x).sum()
                + d.LogNormal(a, b).log_prob(x).sum() + d.Poisson(a).log_prob(x.floor()).sum()
                + d.Exponential(a).log_prob(x).sum() + d.Exponential(a).entropy().sum())
    ours, theirs = loss(D, a, b, c, x), loss(TD, ta, tb, tc, tx)
    _close(ours, theirs, atol=1e-9)
    theirs.backward()
    for g, t in zip(mg.grad(ours, [a, b, c]), [ta, tb, tc]):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), atol=1e-9)


@pytest.mark.parametrize("name", ["Exponential", "Laplace", "Cauchy", "Gumbel", "LogNormal"])
def test_inverse_cdf_rsample_is_differentiable(torch, name):
    """x = icdf(u): dx/dθ there is -(∂F/∂θ)/(∂F/∂x), F the cdf (checked with torch's)."""
    nargs = len(FAMILIES[name][0])
    params = [_pair(_pos(3), True) for _ in range(nargs)]
    p = getattr(D, name)(*(x for x, _ in params))
    x = p.rsample((50,), generator=2)
    assert x.requires_grad
    grads = mg.grad(x.sum(), [m for m, _ in params])
    wide = [t.detach().expand(50, 3).clone().requires_grad_() for _, t in params]
    tx = torch.tensor(x.detach().numpy(), requires_grad=True)
    cdf = getattr(TD, name)(*wide).cdf(tx)
    dfdx, *dfdt = torch.autograd.grad(cdf.sum(), [tx] + wide)
    for g, d in zip(grads, dfdt):
        np.testing.assert_allclose(g.numpy(), -(d / dfdx).sum(0).numpy(), rtol=1e-6)


def test_gamma_draw_gradient_matches_a_high_precision_reference():
    """dx/dα by ops/gamma_sample.py's Richardson difference vs mpmath's (for these points
    PyTorch's series is off by up to ~1e-3 relative; ours within 1e-9)."""
    mpmath = pytest.importorskip("mpmath")
    from minigrad import backend
    from minigrad.ops.gamma_sample import _dx_dalpha
    mpmath.mp.dps = 30
    points = [(0.01, 1.5630577013588738), (0.5, 5.851879506896053), (3.0, 0.798318649155781),
              (10.0, 2.744014754645304), (100.0, 90.0), (0.1, 1e-9), (2.0, 5e-9)]
    a, x = (np.array(v) for v in zip(*points))
    ours = _dx_dalpha(backend.get("cpu"), a, x)
    for (ai, xi), got in zip(points, ours):
        ai, xi = mpmath.mpf(ai), mpmath.mpf(xi)
        dp = mpmath.diff(lambda t: mpmath.gammainc(t, 0, xi, regularized=True), ai)
        want = -dp / (xi ** (ai - 1) * mpmath.exp(-xi) / mpmath.gamma(ai))
        assert abs(got / float(want) - 1) < 1e-8, (ai, xi, got, want)


@pytest.mark.parametrize("alpha", [0.3, 1.0, 4.0])
def test_gamma_rsample_gradient_is_unbiased_and_matches_torchs_statistics(torch, alpha):
    """E[dx/dα] = dE[x]/dα = 1 for Gamma(α, 1); E[x dx/dα] = d E[x²]/dα / 2 = α + 1/2.
    Also the same draws' gradients as torch._standard_gamma_grad (to its ~1e-3)."""
    a = mg.tensor(np.full(4000, alpha), requires_grad=True)
    x = D.Gamma(a, 1.0).rsample(generator=3)
    g, = mg.grad(x.sum(), [a], retain_graph=True)
    g2, = mg.grad((x ** 2).sum() / 2, [a])
    n = 4000
    assert abs(g.numpy().mean() - 1) < 4 * g.numpy().std() / np.sqrt(n)
    assert abs(g2.numpy().mean() - (alpha + 0.5)) < 4 * g2.numpy().std() / np.sqrt(n)
    theirs = torch._standard_gamma_grad(torch.tensor(a.numpy()), torch.tensor(x.numpy()))
    np.testing.assert_allclose(g.numpy(), theirs.numpy(), rtol=2e-3)


def test_beta_and_dirichlet_rsample_gradients_are_unbiased(torch):
    """d E[x_i] / d c_j, from the draws' gradients, vs the analytic derivative of the mean
    c_i / c0, and vs the mean of torch's rsample gradients (a different, unbiased one)."""
    c_np = np.array([0.7, 2.0, 3.5])
    n = 6000
    c = mg.tensor(c_np, requires_grad=True)
    x = D.Dirichlet(c.expand(n, 3)).rsample(generator=4)
    g, = mg.grad(x[:, 0].sum() / n, [c])
    c0 = c_np.sum()
    want = -c_np[0] / c0 ** 2 + np.array([1 / c0, 0, 0])
    np.testing.assert_allclose(g.numpy(), want, atol=0.01)
    torch.manual_seed(0)
    tc = torch.tensor(c_np, requires_grad=True)
    TD.Dirichlet(tc.expand(n, 3)).rsample()[:, 0].mean().backward()
    np.testing.assert_allclose(g.numpy(), tc.grad.numpy(), atol=0.015)
    c1, c0 = (mg.tensor(v, requires_grad=True) for v in (2.0, 3.0))
    y = D.Beta(c1.expand(n), c0).rsample(generator=5)
    g1, g0 = mg.grad(y.mean(), [c1, c0])
    np.testing.assert_allclose([g1.item(), g0.item()], [3 / 25, -2 / 25], atol=0.01)


def test_draws_have_their_moments_and_are_reproducible():
    for p in (D.Exponential(mg.tensor([0.5, 2.0])), D.Laplace(mg.tensor([1.0, -1.0]), 2.0),
              D.Gumbel(mg.tensor([0.0, 1.0]), 0.5), D.LogNormal(mg.tensor([0.0, 0.3]), 0.4),
              D.Poisson(mg.tensor([0.5, 7.0])),
              D.Binomial(mg.tensor([3.0, 10.0]), mg.tensor([0.2, 0.7])),
              D.Gamma(mg.tensor([0.5, 4.0]), 2.0), D.Chi2(mg.tensor([1.0, 5.0])),
              D.Beta(mg.tensor([0.5, 3.0]), 2.0)):
        mg.manual_seed(1)
        x = p.sample((20000,))
        mg.manual_seed(1)
        np.testing.assert_array_equal(p.sample((20000,)).numpy(), x.numpy())
        np.testing.assert_allclose(x.numpy().mean(0), p.mean.numpy(),
                                   atol=4 * p.stddev.numpy().max() / np.sqrt(20000))
        np.testing.assert_allclose(x.numpy().var(0), p.variance.numpy(), rtol=0.1)
    c = D.Cauchy(0.0, 1.0).sample((20000,), generator=1).numpy()
    assert abs(np.median(c)) < 0.05


@pytest.mark.parametrize("make,words", [
    (lambda: D.Exponential(mg.tensor([1.0, 0.0])), "parameter rate"),
    (lambda: D.Laplace(0.0, -1.0), "parameter scale"),
    (lambda: D.Gamma(mg.tensor([-1.0]), 1.0), "parameter concentration"),
    (lambda: D.Gamma(1.0, 0.0), "parameter rate"),
    (lambda: D.Beta(1.0, 0.0), "parameter concentration0"),
    (lambda: D.Chi2(-2.0), "parameter df"),
    (lambda: D.Dirichlet(mg.tensor([1.0, -1.0])), "parameter concentration"),
    (lambda: D.Dirichlet(mg.tensor(1.0)), "at least one dim"),
    (lambda: D.Poisson(-1.0), "parameter rate"),
    (lambda: D.Binomial(2.5, 0.5), "parameter total_count"),
    (lambda: D.Binomial(3.0), "either probs or logits"),
    (lambda: D.Exponential(1.0).log_prob(mg.tensor(-1.0)), "within the support"),
    (lambda: D.Poisson(1.0).log_prob(mg.tensor(1.5)), "within the support"),
    (lambda: D.Binomial(3.0, 0.5).log_prob(mg.tensor(4.0)), "within the support"),
    (lambda: D.Beta(1.0, 1.0).log_prob(mg.tensor(1.5)), "within the support"),
    (lambda: D.Dirichlet(mg.ones(3)).log_prob(mg.tensor([0.5, 0.6, 0.1])), "within the support"),
])
def test_bad_arguments_raise_value_errors_naming_them(make, words):
    with pytest.raises(ValueError, match=words):
        make()


def test_expand():
    for d in (D.Exponential(mg.ones(3)), D.Laplace(mg.zeros(3), 1.0), D.Gamma(mg.ones(3), 2.0),
              D.Chi2(mg.ones(3)), D.Beta(mg.ones(3), 2.0), D.Poisson(mg.ones(3)),
              D.Binomial(5.0, mg.full((3,), 0.3)), D.Dirichlet(mg.ones(3, 2))):
        e = d.expand((4, 3))
        assert type(e) is type(d) and e.batch_shape == (4, 3)
        assert e.sample((2,)).shape == (2, 4, 3) + d.event_shape


def test_gamma_draws_and_gradients_stay_on_their_device():
    spy_backend.register()
    try:
        results = {}
        for device in ("cpu", "spy"):
            c = mg.tensor([0.5, 2.0, 5.0], dtype=mg.float64, device=device, requires_grad=True)
            outs = []
            for p in (D.Gamma(c, 2.0), D.Beta(c, 1.5), D.Dirichlet(c), D.Poisson(c)):
                x = p.rsample((3,), generator=1) if p.has_rsample else p.sample((3,), generator=1)
                outs += [x, p.log_prob(x)]
                if x.requires_grad:
                    outs += mg.grad(x.sum(), [c])
            assert all(t.device == device for t in outs)
            results[device] = [t.to("cpu").numpy() for t in outs]
        for a, b in zip(results["cpu"], results["spy"]):
            np.testing.assert_allclose(a, b, rtol=1e-12)
    finally:
        spy_backend.unregister()
