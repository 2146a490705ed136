"""mg.distributions' transforms, TransformedDistribution and the families built on or
often used with them (HalfNormal, StudentT, Geometric, NegativeBinomial, Multinomial,
MixtureSameFamily, RelaxedBernoulli, RelaxedOneHotCategorical) against torch.distributions
(the reference): values, log-dets, log_prob, entropy, moments, cdf/icdf and gradients,
including SAC's tanh-squashed Normal."""
import numpy as np
import pytest

import minigrad as mg
import spy_backend

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None
D, TD = mg.distributions, torch.distributions if torch else None
T, TT = D.transforms, torch.distributions.transforms if torch else None
RNG = np.random.default_rng(0)


def _pair(a, requires_grad=False):
    a = np.asarray(a, dtype=np.float64)
    return (mg.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _close(ours, theirs, atol=1e-10, rtol=1e-7):
    theirs = theirs.detach().numpy() if hasattr(theirs, "detach") else theirs
    np.testing.assert_allclose(ours.numpy(), theirs, atol=atol, rtol=rtol)


def _pos(*shape):
    return RNG.random(shape) * 2 + 0.3


def _transforms(lib):
    """The same transforms from either library, with the inputs they take."""
    t = T if lib is mg else TT
    (loc, tloc), (scale, tscale) = _pair([0.5, -1.0, 2.0]), _pair([2.0, -0.5, 1.5])
    a, b = (loc, scale) if lib is mg else (tloc, tscale)
    real = RNG.standard_normal((4, 3)) * 2
    return [(t.ExpTransform(), real), (t.SigmoidTransform(), real), (t.TanhTransform(), real),
            (t.AffineTransform(a, b), real), (t.AffineTransform(1.5, -2.0), real),
            (t.AffineTransform(a, b, event_dim=1), real),
            (t.PowerTransform(2.5), _pos(4, 3)), (t.PowerTransform(-0.5), _pos(4, 3)),
            (t.ComposeTransform([t.AffineTransform(0.3, 2.0), t.TanhTransform()]), real),
            (t.ComposeTransform([t.ExpTransform(), t.PowerTransform(2.0)]), real),
            (t.ComposeTransform([t.AffineTransform(a, b, event_dim=1), t.ExpTransform()]),
             real)]                       # Exp's log-det summed over Affine's event dim


@pytest.mark.parametrize("index", range(11))
def test_transform_matches_torch(torch, index):
    t, raw = _transforms(mg)[index]
    tt, _ = _transforms(torch)[index]
    RNG.random()
    x, tx = _pair(raw, True)
    y, ty = t(x), tt(tx)
    _close(y, ty, atol=1e-12)
    _close(t.inv(y), tt.inv(ty), atol=1e-9)
    ladj, tladj = t.log_abs_det_jacobian(x, y), tt.log_abs_det_jacobian(tx, ty)
    _close(ladj, tladj, atol=1e-9)
    assert t.bijective == tt.bijective and int(np.all(np.asarray(
        t.sign.numpy() if isinstance(t.sign, mg.Tensor) else t.sign) > 0)) == \
        int(bool((torch.as_tensor(tt.sign) > 0).all()))
    assert (t.domain.event_dim, t.codomain.event_dim) == (tt.domain.event_dim,
                                                          tt.codomain.event_dim)
    _close(t.inv.log_abs_det_jacobian(y, x), tt.inv.log_abs_det_jacobian(ty, tx), atol=1e-9)
    (g,), (tg,) = mg.grad(ladj.sum() + y.sum(), [x]), torch.autograd.grad(
        tladj.sum() + ty.sum(), [tx])
    _close(g, tg, atol=1e-9)


def test_softmax_transform_matches_torch(torch):
    x, tx = _pair(RNG.standard_normal((2, 4)))
    t, tt = T.SoftmaxTransform(), TT.SoftmaxTransform()
    _close(t(x), tt(tx))
    _close(t.inv(t(x)), tt.inv(tt(tx)))
    assert not t.bijective and t.event_dim == 1 and t.codomain is D.constraints.simplex
    with pytest.raises(NotImplementedError):
        t.log_abs_det_jacobian(x, t(x))


def test_tanh_log_det_is_finite_where_tanh_rounds_to_one():
    """log(1 - tanh(x)^2) naively is -inf at x = 20 (tanh(20) is 1.0 in float64)."""
    x = mg.tensor([20.0, -30.0, 0.0], dtype=mg.float64)
    ladj = T.TanhTransform().log_abs_det_jacobian(x, x.tanh()).numpy()
    np.testing.assert_allclose(ladj, [2 * (np.log(2) - 20) - 2 * np.log1p(np.exp(-40)),
                                      2 * (np.log(2) - 30) - 2 * np.log1p(np.exp(-60)),
                                      0.0], rtol=1e-12)


@pytest.mark.filterwarnings("ignore:divide by zero encountered in arctanh")
def test_cache_size_one_returns_the_input_of_the_last_call():
    t = T.TanhTransform(cache_size=1)
    x = mg.tensor([25.0, 0.3], dtype=mg.float64)
    y = t(x)
    assert t.inv(y) is x and t(x) is y
    assert np.isinf(T.TanhTransform().inv(y).numpy()[0])         # no cache: atanh(1)
    other = mg.tensor([0.1, 0.2], dtype=mg.float64)
    assert t(other) is not y and t.inv(t(other)) is other
    with pytest.raises(ValueError, match="cache_size must be 0 or 1"):
        T.ExpTransform(cache_size=2)


def _sac(lib, loc, scale, cache):
    d = D if lib is mg else TD
    t = (T if lib is mg else TT).TanhTransform(cache_size=cache)
    return d.TransformedDistribution(d.Normal(loc, scale), [t])


@pytest.mark.parametrize("cache", [0, 1])
def test_tanh_squashed_normal_log_prob_and_gradients_match_torch(torch, cache):
    """SAC's policy: a = tanh(u), u ~ Normal(mu, sigma); log pi(a) and d/d(mu, sigma) of
    log pi(a) and of an rsample-based loss, as torch's, with the same u."""
    (loc, tloc), (scale, tscale) = _pair(RNG.standard_normal((5, 2)), True), \
        _pair(RNG.random((5, 2)) + 0.3, True)
    p, tp = _sac(mg, loc, scale, cache), _sac(torch, tloc, tscale, cache)
    assert (p.batch_shape, p.event_shape) == (tuple(tp.batch_shape), tuple(tp.event_shape))
    eps = RNG.standard_normal((5, 2))
    u = loc + scale * mg.tensor(eps)
    tu = tloc + tscale * torch.tensor(eps)
    a, ta = p.transforms[0](u), tp.transforms[0](tu)
    lp, tlp = p.log_prob(a), tp.log_prob(ta)
    _close(lp, tlp, atol=1e-8)
    loss, tloss = (lp.sum() - (a ** 2).sum()), (tlp.sum() - (ta ** 2).sum())
    tloss.backward()
    for g, t in zip(mg.grad(loss, [loc, scale]), [tloc, tscale]):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), atol=1e-8)
    v, tv = _pair(np.tanh(RNG.standard_normal((3, 5, 2))))
    _close(p.log_prob(v), tp.log_prob(tv), atol=1e-8)
    _close(p.cdf(v), tp.cdf(tv), atol=1e-10)
    q, tq = _pair(RNG.random((5, 2)) * 0.9 + 0.05)
    _close(p.icdf(q), tp.icdf(tq), atol=1e-9)


def test_rsample_through_transforms_carries_gradients():
    loc = mg.tensor([0.2, -0.4], dtype=mg.float64, requires_grad=True)
    p = D.TransformedDistribution(D.Normal(loc, 1.0), [T.AffineTransform(1.0, 3.0),
                                                       T.ExpTransform()])
    y = p.rsample((6,), generator=0)
    (g,), = [mg.grad(y.sum(), [loc])]
    np.testing.assert_allclose(g.numpy(), 3 * y.detach().numpy().sum(0), rtol=1e-12)
    assert not p.sample((2,)).requires_grad and p.sample((2,)).shape == (2, 2)


def test_transformed_distribution_event_dims_and_cdf_match_torch(torch):
    """A transform coupling dims (Softmax's 1, Affine with event_dim 1) turns the base's
    batch dims into event dims, and the log-det sums over them."""
    (loc, tloc), (s, ts) = _pair(RNG.standard_normal((2, 3))), _pair(_pos(3))
    p = D.TransformedDistribution(D.Normal(loc, 1.0), T.AffineTransform(0.5, s, event_dim=1))
    tp = TD.TransformedDistribution(TD.Normal(tloc, 1.0),
                                    TT.AffineTransform(0.5, ts, event_dim=1))
    assert (p.batch_shape, p.event_shape) == (tuple(tp.batch_shape), tuple(tp.event_shape))
    v, tv = _pair(RNG.standard_normal((4, 2, 3)))
    _close(p.log_prob(v), tp.log_prob(tv), atol=1e-10)
    c = D.TransformedDistribution(D.Normal(loc, 1.0), [T.ExpTransform().inv.inv])
    _close(c.log_prob(v.exp()), TD.LogNormal(tloc, 1.0).log_prob(tv.exp()), atol=1e-10)
    # a decreasing chain: cdf is 1 - the base's, icdf reads the base's from the other end
    chain = [T.AffineTransform(1.5, -2.0), T.ExpTransform()]
    tchain = [TT.AffineTransform(1.5, -2.0), TT.ExpTransform()]
    p, tp = D.TransformedDistribution(D.Normal(loc, 1.0), chain), \
        TD.TransformedDistribution(TD.Normal(tloc, 1.0), tchain)
    _close(p.log_prob(v.exp()), tp.log_prob(tv.exp()), atol=1e-10)
    _close(p.cdf(v.exp()), tp.cdf(tv.exp()), atol=1e-10)
    q, tq = _pair(RNG.random((2, 3)) * 0.9 + 0.05)
    _close(p.icdf(q), tp.icdf(tq), atol=1e-9)


def test_lognormal_is_a_transformed_normal_with_the_same_floats():
    loc, scale = mg.tensor([0.3, -1.0], dtype=mg.float64), mg.tensor([0.5, 2.0],
                                                                   dtype=mg.float64)
    x = mg.tensor([[0.2, 3.0], [1.5, 0.01]], dtype=mg.float64)
    p = D.LogNormal(loc, scale)
    assert isinstance(p, D.TransformedDistribution)
    direct = D.Normal(loc, scale).log_prob(x.log()) - x.log()
    np.testing.assert_array_equal(p.log_prob(x).numpy(), direct.numpy())
    np.testing.assert_array_equal(p.cdf(x).numpy(), D.Normal(loc, scale).cdf(x.log()).numpy())


# name, parameter makers (broadcasting to (2, 3)), values maker of (shape)
FAMILIES = {
    "HalfNormal": ([lambda: _pos(2, 3)], lambda s: RNG.random(s) * 3),
    "StudentT": ([lambda: _pos(2, 1) * 3, lambda: RNG.standard_normal(3), lambda: _pos(3)],
                 lambda s: RNG.standard_normal(s) * 3),
    "Geometric": ([lambda: RNG.random((2, 3)) * 0.9 + 0.05], lambda s: RNG.integers(0, 6, s)),
    "NegativeBinomial": ([lambda: _pos(2, 1) * 3, lambda: RNG.random(3) * 0.9],
                         lambda s: RNG.integers(0, 8, s)),
}
HAS_ENTROPY = {"HalfNormal", "StudentT", "Geometric"}


@pytest.mark.parametrize("name", sorted(FAMILIES))
def test_family_matches_torch_with_gradients(torch, name):
    makers, values = FAMILIES[name]
    pairs = [_pair(m(), True) for m in makers]
    p, tp = getattr(D, name)(*(a for a, _ in pairs)), getattr(TD, name)(*(t for _, t in pairs))
    assert p.batch_shape == tuple(tp.batch_shape) == (2, 3)
    for attr in ("mean", "mode", "variance"):
        _close(getattr(p, attr), getattr(tp, attr), atol=1e-9)
    v, tv = _pair(values((4, 2, 3)))
    lp, tlp = p.log_prob(v), tp.log_prob(tv)
    _close(lp, tlp, atol=1e-9)
    loss, tloss = lp.sum(), tlp.sum()
    if name in HAS_ENTROPY:
        _close(p.entropy(), tp.entropy(), atol=1e-9)
        loss, tloss = loss + p.entropy().sum(), tloss + tp.entropy().sum()
    if name == "HalfNormal":
        _close(p.cdf(v), tp.cdf(tv), atol=1e-10)
        u, tu = _pair(RNG.random((4, 2, 3)) * 0.9 + 0.05)
        _close(p.icdf(u), tp.icdf(tu), atol=1e-9)
    tloss.backward()
    for g, (_, t) in zip(mg.grad(loss, [a for a, _ in pairs]), pairs):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), atol=1e-8, rtol=1e-7)
    x = p.sample((5,), generator=0)
    assert x.shape == (5, 2, 3) and not x.requires_grad and bool(p.support.check(x).all())


@pytest.mark.filterwarnings("ignore::RuntimeWarning")     # log(1 - p) at p = 1, masked
def test_geometric_and_negative_binomial_by_logits_and_edges_match_torch(torch):
    a, ta = _pair(RNG.standard_normal((2, 3)))
    k, tk = _pair(RNG.integers(0, 5, (2, 3)))
    _close(D.Geometric(logits=a).log_prob(k), TD.Geometric(logits=ta).log_prob(tk))
    _close(D.Geometric(logits=a).entropy(), TD.Geometric(logits=ta).entropy())
    _close(D.NegativeBinomial(2.5, logits=a).log_prob(k),
           TD.NegativeBinomial(2.5, logits=ta).log_prob(tk), atol=1e-10)
    one, tone = _pair([1.0, 0.5])
    zero, tzero = _pair([0.0, 2.0])
    _close(D.Geometric(one).log_prob(zero), TD.Geometric(tone).log_prob(tzero))  # 0, no NaN
    _close(D.NegativeBinomial(0.0, 0.5).log_prob(mg.tensor(0.0, dtype=mg.float64)),
           TD.NegativeBinomial(0.0, 0.5).log_prob(torch.tensor(0.0, dtype=torch.float64)))


def test_student_t_moments_where_undefined_match_torch(torch):
    df, tdf = _pair([0.5, 1.0, 1.5, 2.0, 3.0])
    p, tp = D.StudentT(df, 1.0, 2.0), TD.StudentT(tdf, 1.0, 2.0)
    np.testing.assert_array_equal(p.mean.numpy(), tp.mean.numpy())
    np.testing.assert_array_equal(p.variance.numpy(), tp.variance.numpy())


def test_rsample_gradients_are_unbiased():
    """d E[f(x)] / d theta from rsample against the closed form: E|x| of HalfNormal(s) is
    s sqrt(2/pi), and E[x^2] of StudentT(df, loc, scale) is loc^2 + scale^2 df / (df - 2)
    (so d/d df = -2 scale^2 / (df - 2)^2, which only the Chi2 draw's gradient gives)."""
    s = mg.tensor(1.5, dtype=mg.float64, requires_grad=True)
    x = D.HalfNormal(s.expand(20000)).rsample(generator=0)
    g, = mg.grad(x.mean(), [s])
    np.testing.assert_allclose(g.item(), np.sqrt(2 / np.pi), rtol=0.02)
    df, loc, scale = (mg.tensor(v, dtype=mg.float64, requires_grad=True)
                      for v in (6.0, 0.5, 1.2))
    y = D.StudentT(df.expand(40000), loc, scale).rsample(generator=1)
    gdf, gloc, gscale = mg.grad((y ** 2).mean(), [df, loc, scale])
    np.testing.assert_allclose(gloc.item(), 1.0, atol=0.05)               # 2 loc
    np.testing.assert_allclose(gscale.item(), 2 * 1.2 * 6 / 4, rtol=0.1)
    np.testing.assert_allclose(gdf.item(), -2 * 1.44 / 16, atol=0.06)


@pytest.mark.parametrize("by", ["probs", "logits"])
def test_multinomial_matches_torch(torch, by):
    raw = RNG.random((2, 4)) + 0.1 if by == "probs" else RNG.standard_normal((2, 4))
    a, ta = _pair(raw, True)
    p, tp = D.Multinomial(5, **{by: a}), TD.Multinomial(5, **{by: ta})
    assert (p.batch_shape, p.event_shape) == ((2,), (4,))
    for attr in ("mean", "variance", "probs", "logits"):
        _close(getattr(p, attr), getattr(tp, attr))
    counts = np.stack([RNG.multinomial(5, [0.25] * 4, (3, 2))]).reshape(3, 2, 4)
    v, tv = _pair(counts)
    lp, tlp = p.log_prob(v), tp.log_prob(tv)
    _close(lp, tlp, atol=1e-10)
    _close(p.entropy(), tp.entropy(), atol=1e-9)
    (lp.sum() + p.entropy().sum(), tlp.sum() + tp.entropy().sum())[1].backward()
    g, = mg.grad(lp.sum() + p.entropy().sum(), [a])
    np.testing.assert_allclose(g.numpy(), ta.grad.numpy(), atol=1e-9)
    x = p.sample((1000,), generator=0)
    assert x.shape == (1000, 2, 4) and (x.numpy().sum(-1) == 5).all()
    np.testing.assert_allclose(x.numpy().mean(0), p.mean.detach().numpy(), atol=0.15)


def test_multinomial_zero_probability_and_bad_arguments(torch):
    a, ta = _pair([0.0, 0.5, 0.5])
    v, tv = _pair([0.0, 2.0, 1.0])
    _close(D.Multinomial(3, a).log_prob(v), TD.Multinomial(3, ta).log_prob(tv))
    with pytest.raises(ValueError, match="within the support"):
        D.Multinomial(3, a).log_prob(mg.tensor([1.0, 2.0, 1.5], dtype=mg.float64))
    with pytest.raises(NotImplementedError, match="total_count"):
        D.Multinomial(mg.tensor(3.0), a)


def _mixture(d, logits, loc, scale, event):
    comp = d.Normal(loc, scale)
    if event:
        comp = d.Independent(comp, 1)
    return d.MixtureSameFamily(d.Categorical(logits=logits), comp)


@pytest.mark.parametrize("event", [False, True])
def test_mixture_same_family_matches_torch(torch, event):
    shape = (2, 3, 4) if event else (2, 3)
    (w, tw), (loc, tloc), (s, ts) = _pair(RNG.standard_normal((2, 3)), True), \
        _pair(RNG.standard_normal(shape), True), _pair(_pos(*shape), True)
    p, tp = _mixture(D, w, loc, s, event), _mixture(TD, tw, tloc, ts, event)
    assert (p.batch_shape, p.event_shape) == (tuple(tp.batch_shape), tuple(tp.event_shape))
    for attr in ("mean", "variance"):
        _close(getattr(p, attr), getattr(tp, attr))
    v, tv = _pair(RNG.standard_normal((5,) + tuple(tp.batch_shape) + tuple(tp.event_shape)))
    lp, tlp = p.log_prob(v), tp.log_prob(tv)
    _close(lp, tlp, atol=1e-10)
    if not event:
        _close(p.cdf(v), tp.cdf(tv), atol=1e-10)
    tlp.sum().backward()
    for g, (_, t) in zip(mg.grad(lp.sum(), [w, loc, s]), [(w, tw), (loc, tloc), (s, ts)]):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), atol=1e-9)
    x = p.sample((7,), generator=0)
    assert x.shape == (7,) + p.batch_shape + p.event_shape


def test_mixture_draws_come_from_the_picked_component():
    """Components far apart: each draw lies near the loc of one, in the weights'
    proportions; a mixture weight batch of () broadcasts against components (3, K)."""
    loc = mg.tensor([[-100.0, 100.0]] * 3, dtype=mg.float64)
    p = D.MixtureSameFamily(D.Categorical(mg.tensor([0.25, 0.75], dtype=mg.float64)),
                            D.Normal(loc, 1.0))
    x = p.sample((4000,), generator=3).numpy()
    assert x.shape == (4000, 3) and (np.abs(np.abs(x) - 100) < 6).all()
    np.testing.assert_allclose((x > 0).mean(0), 0.75, atol=0.03)
    with pytest.raises(ValueError, match="does not equal"):
        D.MixtureSameFamily(D.Categorical(mg.ones(3)), D.Normal(mg.zeros(2), 1.0))
    with pytest.raises(ValueError, match="instance of mg.distributions.Categorical"):
        D.MixtureSameFamily(D.Normal(0.0, 1.0), D.Normal(mg.zeros(2), 1.0))


@pytest.mark.parametrize("by", ["probs", "logits"])
def test_relaxed_bernoulli_matches_torch(torch, by):
    raw = RNG.random((2, 3)) * 0.9 + 0.05 if by == "probs" else RNG.standard_normal((2, 3))
    (a, ta), (temp, ttemp) = _pair(raw, True), _pair(0.7, True)
    p, tp = D.RelaxedBernoulli(temp, **{by: a}), TD.RelaxedBernoulli(ttemp, **{by: ta})
    assert p.batch_shape == tuple(tp.batch_shape)
    _close(p.probs, tp.probs)
    v, tv = _pair(RNG.random((4, 2, 3)) * 0.98 + 0.01)
    lp, tlp = p.log_prob(v), tp.log_prob(tv)
    _close(lp, tlp, atol=1e-9)
    tlp.sum().backward()
    for g, t in zip(mg.grad(lp.sum(), [a, temp]), [ta, ttemp]):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), atol=1e-8)


def test_relaxed_one_hot_categorical_matches_torch(torch):
    (a, ta), (temp, ttemp) = _pair(RNG.standard_normal((2, 4)), True), _pair(0.5, True)
    p, tp = D.RelaxedOneHotCategorical(temp, logits=a), \
        TD.RelaxedOneHotCategorical(ttemp, logits=ta)
    assert (p.batch_shape, p.event_shape) == ((2,), (4,))
    w = RNG.random((3, 2, 4)) + 0.05
    v, tv = _pair(w / w.sum(-1, keepdims=True))
    lp, tlp = p.log_prob(v), tp.log_prob(tv)
    _close(lp, tlp, atol=1e-9)
    tlp.sum().backward()
    for g, t in zip(mg.grad(lp.sum(), [a, temp]), [ta, ttemp]):
        np.testing.assert_allclose(g.numpy(), t.grad.numpy(), atol=1e-8)


def test_relaxed_draws_are_reparameterised_and_approach_the_discrete_ones():
    logits = mg.tensor([0.4, -1.0, 1.2], dtype=mg.float64, requires_grad=True)
    y = D.RelaxedOneHotCategorical(0.05, logits=logits).rsample((4000,), generator=0)
    assert y.shape == (4000, 3) and y.requires_grad
    np.testing.assert_allclose(y.detach().numpy().sum(-1), 1, rtol=1e-12)
    freq = (y.detach().numpy().argmax(-1)[:, None] == np.arange(3)).mean(0)
    np.testing.assert_allclose(freq, logits.softmax(-1).detach().numpy(), atol=0.03)
    g, = mg.grad((y[:, 0]).mean(), [logits])
    assert g.numpy()[0] > 0 and g.numpy()[1] < 0
    b = D.RelaxedBernoulli(0.05, logits=logits).rsample((4000,), generator=1)
    np.testing.assert_allclose((b.detach().numpy() > 0.5).mean(0),
                               logits.sigmoid().detach().numpy(), atol=0.03)
    g, = mg.grad(b.mean(), [logits])
    assert (g.numpy() > 0).all()


@pytest.mark.parametrize("make,words", [
    (lambda: D.HalfNormal(-1.0), "parameter scale"),
    (lambda: D.StudentT(0.0), "parameter df"),
    (lambda: D.Geometric(mg.tensor([0.0, 0.5])), "to be positive"),
    (lambda: D.Geometric(1.5), "parameter probs"),
    (lambda: D.NegativeBinomial(2.0, 1.0), "parameter probs"),
    (lambda: D.NegativeBinomial(-1.0, 0.5), "parameter total_count"),
    (lambda: D.Geometric(0.5).log_prob(mg.tensor(1.5)), "within the support"),
    (lambda: D.HalfNormal(1.0).log_prob(mg.tensor(-1.0)), "within the support"),
    (lambda: D.RelaxedBernoulli(0.5, probs=mg.tensor(0.5)).log_prob(mg.tensor(1.5)),
     "within the support"),
    (lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), [T.TanhTransform()])
     .log_prob(mg.tensor(2.0)), "within the support"),
    (lambda: D.TransformedDistribution(D.Normal(0.0, 1.0), ["exp"]), "Transform"),
    (lambda: T.AffineTransform(0.0, 1.0, event_dim=-1), "event_dim"),
])
def test_bad_arguments_raise_value_errors_naming_them(make, words):
    with pytest.raises(ValueError, match=words):
        make()


def test_expand():
    for d in (D.HalfNormal(mg.ones(3)), D.StudentT(mg.ones(3) * 3),
              D.Geometric(mg.full((3,), 0.3)), D.NegativeBinomial(2.0, mg.full((3,), 0.3)),
              D.Multinomial(4, mg.ones(3, 2)), D.RelaxedBernoulli(0.5, mg.full((3,), 0.3)),
              D.RelaxedOneHotCategorical(0.5, mg.ones(3, 2)),
              D.TransformedDistribution(D.Normal(mg.zeros(3), 1.0), T.TanhTransform()),
              D.MixtureSameFamily(D.Categorical(mg.ones(3, 2)), D.Normal(mg.zeros(3, 2), 1.0))):
        e = d.expand((4, 3))
        assert type(e) is type(d) and e.batch_shape == (4, 3), d
        assert e.sample((2,)).shape == (2, 4, 3) + d.event_shape


def test_new_families_stay_on_their_device():
    """On the spy device (arrays that refuse NumPy, as CuPy's): draws and log_prob stay
    there and equal the CPU's from one seed."""
    makers = [lambda d: D.TransformedDistribution(D.Normal(mg.zeros(3, device=d), 1.0),
                                                  [T.TanhTransform(cache_size=1)]),
              lambda d: D.StudentT(mg.full((3,), 4.0, device=d)),
              lambda d: D.HalfNormal(mg.ones(3, device=d)),
              lambda d: D.Geometric(mg.full((3,), 0.3, device=d)),
              lambda d: D.NegativeBinomial(2.0, mg.full((3,), 0.3, device=d)),
              lambda d: D.Multinomial(4, mg.ones(3, device=d)),
              lambda d: D.MixtureSameFamily(D.Categorical(mg.ones(2, device=d)),
                                            D.Normal(mg.zeros(3, 2, device=d), 1.0)),
              lambda d: D.RelaxedBernoulli(0.5, mg.full((3,), 0.3, device=d)),
              lambda d: D.RelaxedOneHotCategorical(0.5, mg.ones(3, device=d))]
    spy_backend.register()
    try:
        for make in makers:
            results = {}
            for device in ("cpu", "spy"):
                p = make(device)
                x = p.sample((4,), generator=1)
                outs = (x, p.log_prob(x))
                assert all(t.device == device for t in outs), (device, p)
                results[device] = [t.to("cpu").numpy() for t in outs]
            for a, b in zip(results["cpu"], results["spy"]):
                np.testing.assert_allclose(a, b, rtol=1e-6)
    finally:
        spy_backend.unregister()
