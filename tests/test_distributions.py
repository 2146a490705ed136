"""mg.distributions against torch.distributions (the reference): log_prob, entropy, the
moments and kl_divergence for broadcast parameter shapes, their gradients, the draws' shapes,
reproducibility and moments, and argument validation's errors."""
import math

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
    """The same float64 values as a minigrad and a torch tensor."""
    a = np.asarray(a, dtype=np.float64)
    return (mg.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _close(ours, theirs, atol=1e-10, rtol=1e-7):
    np.testing.assert_allclose(ours.numpy(), theirs.detach().numpy(), atol=atol, rtol=rtol)


def _spd(*shape, n):
    a = RNG.standard_normal(shape + (n, n))
    return a @ np.swapaxes(a, -1, -2) + n * np.eye(n)


SHAPES = [((), ()), ((3,), ()), ((2, 1), (4,)), ((1, 3), (2, 1))]


@pytest.mark.parametrize("loc_shape,scale_shape", SHAPES)
def test_normal_matches_torch(torch, loc_shape, scale_shape):
    (loc, tloc), (scale, tscale) = _pair(RNG.standard_normal(loc_shape)), \
        _pair(RNG.random(scale_shape) + 0.5)
    p, tp = D.Normal(loc, scale), TD.Normal(tloc, tscale)
    assert p.batch_shape == tuple(tp.batch_shape) and p.event_shape == ()
    v, tv = _pair(RNG.standard_normal((5,) + tuple(tp.batch_shape)))
    for name in ("mean", "mode", "variance", "stddev"):
        _close(getattr(p, name), getattr(tp, name))
    _close(p.log_prob(v), tp.log_prob(tv))
    _close(p.entropy(), tp.entropy())
    _close(p.cdf(v), tp.cdf(tv))
    u, tu = _pair(RNG.random(tuple(tp.batch_shape)) * 0.9 + 0.05)
    _close(p.icdf(u), tp.icdf(tu), atol=1e-9)


@pytest.mark.parametrize("low_shape,width_shape", SHAPES)
def test_uniform_matches_torch(torch, low_shape, width_shape):
    (low, tlow), (high, thigh) = _pair(RNG.standard_normal(low_shape)), \
        _pair(RNG.standard_normal(low_shape) + 3 * RNG.random(width_shape) + 4)
    p, tp = D.Uniform(low, high), TD.Uniform(tlow, thigh)
    for name in ("mean", "variance", "stddev"):
        _close(getattr(p, name), getattr(tp, name))
    assert np.isnan(p.mode.numpy()).all() and p.mode.shape == tuple(tp.mode.shape)
    v, tv = _pair(low.numpy() + RNG.random((4,) + tuple(tp.batch_shape)) * 5 - 1)
    _close(D.Uniform(low, high, validate_args=False).log_prob(v),    # -inf outside
           TD.Uniform(tlow, thigh, validate_args=False).log_prob(tv))
    _close(p.entropy(), tp.entropy())
    inside, tinside = _pair(low.numpy() + 0.5 + np.zeros(tuple(tp.batch_shape)))
    _close(p.cdf(inside), tp.cdf(tinside))


@pytest.mark.parametrize("by", ["probs", "logits"])
@pytest.mark.parametrize("shape", [(), (4,), (2, 3)])
def test_bernoulli_matches_torch(torch, by, shape):
    raw = RNG.random(shape) if by == "probs" else RNG.standard_normal(shape) * 3
    a, ta = _pair(raw)
    p, tp = D.Bernoulli(**{by: a}), TD.Bernoulli(**{by: ta})
    for name in ("mean", "mode", "variance", "probs", "logits"):
        _close(getattr(p, name), getattr(tp, name))
    v, tv = _pair(RNG.integers(0, 2, (3,) + shape))
    _close(p.log_prob(v), tp.log_prob(tv))
    _close(p.entropy(), tp.entropy())
    _close(p.enumerate_support(), tp.enumerate_support())


def test_bernoulli_edges_match_torch(torch):
    a, ta = _pair([0.0, 0.5, 1.0])
    p, tp = D.Bernoulli(a), TD.Bernoulli(ta)
    np.testing.assert_array_equal(p.mode.numpy(), tp.mode.numpy())        # NaN at 1/2
    v, tv = _pair([[0.0], [1.0]])
    _close(p.log_prob(v), tp.log_prob(tv), atol=1e-6)
    _close(p.entropy(), tp.entropy(), atol=1e-6)


CATEGORICAL = [((4,), ()), ((3, 5), (3,)), ((2, 1, 3), (4, 2, 1)), ((2, 3), (6, 1))]


@pytest.mark.parametrize("by", ["probs", "logits"])
@pytest.mark.parametrize("param_shape,value_shape", CATEGORICAL)
def test_categorical_matches_torch(torch, by, param_shape, value_shape):
    raw = RNG.random(param_shape) * 3 if by == "probs" else RNG.standard_normal(param_shape)
    a, ta = _pair(raw)
    p, tp = D.Categorical(**{by: a}), TD.Categorical(**{by: ta})
    assert p.batch_shape == tuple(tp.batch_shape) and p.event_shape == ()
    for name in ("probs", "logits", "mode"):
        _close(getattr(p, name), getattr(tp, name))
    assert np.isnan(p.mean.numpy()).all() and np.isnan(p.variance.numpy()).all()
    k = param_shape[-1]
    v = RNG.integers(0, k, value_shape)
    _close(p.log_prob(mg.tensor(v)), tp.log_prob(torch.tensor(v)))
    _close(p.entropy(), tp.entropy())
    _close(p.enumerate_support(), tp.enumerate_support())
    _close(p.enumerate_support(expand=False), tp.enumerate_support(expand=False))


def test_categorical_with_zero_probabilities_matches_torch(torch):
    a, ta = _pair([[0.0, 0.3, 0.7], [1.0, 0.0, 0.0]])
    p, tp = D.Categorical(a), TD.Categorical(ta)
    _close(p.entropy(), tp.entropy())
    q, tq = D.Categorical(mg.tensor([[0.2, 0.0, 0.8], [0.5, 0.5, 0.0]], dtype=mg.float64)), \
        TD.Categorical(torch.tensor([[0.2, 0.0, 0.8], [0.5, 0.5, 0.0]], dtype=torch.float64))
    _close(D.kl_divergence(p, q), TD.kl_divergence(tp, tq))          # inf where q has 0


def test_one_hot_categorical_matches_torch(torch):
    a, ta = _pair(RNG.random((2, 4)))
    p, tp = D.OneHotCategorical(a), TD.OneHotCategorical(ta)
    assert (p.batch_shape, p.event_shape) == ((2,), (4,))
    for name in ("mean", "mode", "variance"):
        _close(getattr(p, name), getattr(tp, name))
    v = np.eye(4)[RNG.integers(0, 4, (3, 2))]
    _close(p.log_prob(mg.tensor(v)), tp.log_prob(torch.tensor(v)))
    _close(p.entropy(), tp.entropy())
    _close(p.enumerate_support(), tp.enumerate_support())
    s = p.sample((5,), generator=0)
    assert s.shape == (5, 2, 4) and (s.numpy().sum(-1) == 1).all()
    b, tb = _pair(RNG.random((2, 4)))
    _close(D.kl_divergence(p, D.OneHotCategorical(b)),
           TD.kl_divergence(tp, TD.OneHotCategorical(tb)))


MVN_SHAPES = [((3,), (3, 3)), ((2, 1, 3), (4, 3, 3)), ((4, 2), (2, 2))]


@pytest.mark.parametrize("by", ["covariance_matrix", "precision_matrix", "scale_tril"])
@pytest.mark.parametrize("loc_shape,matrix_shape", MVN_SHAPES)
def test_multivariate_normal_matches_torch(torch, by, loc_shape, matrix_shape):
    n = loc_shape[-1]
    m = _spd(*matrix_shape[:-2], n=n)
    if by == "scale_tril":
        m = np.linalg.cholesky(m)
    (loc, tloc), (mat, tmat) = _pair(RNG.standard_normal(loc_shape)), _pair(m)
    p, tp = D.MultivariateNormal(loc, **{by: mat}), TD.MultivariateNormal(tloc, **{by: tmat})
    assert (p.batch_shape, p.event_shape) == (tuple(tp.batch_shape), tuple(tp.event_shape))
    for name in ("mean", "mode", "variance", "covariance_matrix", "precision_matrix",
                 "scale_tril"):
        _close(getattr(p, name), getattr(tp, name), atol=1e-9)
    v, tv = _pair(RNG.standard_normal((3,) + tuple(tp.batch_shape) + (n,)))
    _close(p.log_prob(v), tp.log_prob(tv), atol=1e-9)
    _close(p.log_prob(v[:, None]), tp.log_prob(tv[:, None]), atol=1e-9)   # more dims
    _close(p.entropy(), tp.entropy(), atol=1e-9)


def test_independent_matches_torch(torch):
    (loc, tloc), (scale, tscale) = _pair(RNG.standard_normal((2, 3, 4))), \
        _pair(RNG.random((3, 4)) + 0.5)
    for n in (0, 1, 2):
        p = D.Independent(D.Normal(loc, scale), n)
        tp = TD.Independent(TD.Normal(tloc, tscale), n)
        assert (p.batch_shape, p.event_shape) == (tuple(tp.batch_shape),
                                                  tuple(tp.event_shape))
        v, tv = _pair(RNG.standard_normal((5, 2, 3, 4)))
        _close(p.log_prob(v), tp.log_prob(tv))
        _close(p.entropy(), tp.entropy())
        _close(p.variance, tp.variance)
        assert p.has_rsample and p.rsample((2,)).shape == (2, 2, 3, 4)


def _kl_pairs():
    (a, ta), (b, tb) = _pair(RNG.standard_normal((2, 3))), _pair(RNG.standard_normal((3,)))
    (s, ts), (r, tr) = _pair(RNG.random((2, 1)) + 0.5), _pair(RNG.random((3,)) + 0.5)
    yield D.Normal(a, s), D.Normal(b, r), TD.Normal(ta, ts), TD.Normal(tb, tr)
    yield (D.Independent(D.Normal(a, s), 1), D.Independent(D.Normal(b, r), 1),
           TD.Independent(TD.Normal(ta, ts), 1), TD.Independent(TD.Normal(tb, tr), 1))
    (lo, tlo), (hi, thi) = _pair([[0.0, 0.0, -1.0]]), _pair([[1.0, 2.0, 1.0], [3.0, 1.0, 0.5]])
    (lo2, tlo2), (hi2, thi2) = _pair([-1.0, 0.5, -2.0]), _pair([2.0, 2.0, 1.0])
    yield (D.Uniform(lo, hi), D.Uniform(lo2, hi2), TD.Uniform(tlo, thi),
           TD.Uniform(tlo2, thi2))                                   # some inf
    (p, tp), (q, tq) = _pair([[0.0, 0.3, 1.0], [0.5, 1.0, 0.2]]), _pair([0.4, 0.0, 1.0])
    # torch's Bernoulli KL fails to broadcast (its masks keep q's shape): expanded for it
    yield D.Bernoulli(p), D.Bernoulli(q), TD.Bernoulli(tp), TD.Bernoulli(tq.expand(2, 3))
    yield (D.Bernoulli(logits=a), D.Bernoulli(logits=b), TD.Bernoulli(logits=ta),
           TD.Bernoulli(logits=tb.expand(2, 3)))
    (c, tc), (d, td) = _pair(RNG.random((2, 1, 4))), _pair(RNG.standard_normal((3, 4)))
    yield (D.Categorical(c), D.Categorical(logits=d), TD.Categorical(tc),
           TD.Categorical(logits=td))
    (m1, tm1), (m2, tm2) = _pair(RNG.standard_normal((2, 1, 3))), _pair(
        RNG.standard_normal((4, 3)))
    (c1, tc1), (c2, tc2) = _pair(_spd(4, n=3)), _pair(np.linalg.cholesky(_spd(n=3)))
    yield (D.MultivariateNormal(m1, c1), D.MultivariateNormal(m2, scale_tril=c2),
           TD.MultivariateNormal(tm1, tc1), TD.MultivariateNormal(tm2, scale_tril=tc2))


@pytest.mark.parametrize("index", range(7))
def test_kl_divergence_matches_torch(torch, index):
    p, q, tp, tq = list(_kl_pairs())[index]
    _close(D.kl_divergence(p, q), TD.kl_divergence(tp, tq), atol=1e-9)
    _close(D.kl_divergence(q, p), TD.kl_divergence(tq, tp), atol=1e-9)


def _grads(loss, params):
    return [g.numpy() for g in mg.grad(loss, params)]


def test_log_prob_and_entropy_gradients_match_torch(torch):
    (loc, tloc), (scale, tscale) = _pair(RNG.standard_normal((3,)), True), \
        _pair(RNG.random((3,)) + 0.5, True)
    (lg, tlg), (m, tm) = _pair(RNG.standard_normal((2, 4)), True), \
        _pair(np.linalg.cholesky(_spd(n=3)), True)
    v, tv = _pair(RNG.standard_normal((5, 3)))
    k = RNG.integers(0, 4, (3, 2))

    def loss(lib, loc, scale, lg, m, v, k):
        d = D if lib is mg else TD
        return (d.Normal(loc, scale).log_prob(v).sum() + d.Normal(loc, scale).entropy().sum()
                + d.Categorical(logits=lg).log_prob(k).sum()
                + d.Categorical(logits=lg).entropy().sum()
                + d.Bernoulli(logits=lg).log_prob((lg > 0).to(lg.dtype)).sum()
                + d.MultivariateNormal(loc, scale_tril=m).log_prob(v).sum()
                + d.MultivariateNormal(loc, scale_tril=m).entropy())
    ours = loss(mg, loc, scale, lg, m, v, mg.tensor(k))
    theirs = loss(torch, tloc, tscale, tlg, tm, tv, torch.tensor(k))
    _close(ours, theirs, atol=1e-9)
    theirs.backward()
    for g, t in zip(_grads(ours, [loc, scale, lg, m]), [tloc, tscale, tlg, tm]):
        np.testing.assert_allclose(g, t.grad.numpy(), atol=1e-9)


def test_gradcheck_log_prob_kl_and_covariance_forms(torch):
    (loc, _), (cov, _) = _pair(RNG.standard_normal((2, 3)), True), _pair(_spd(n=3), True)
    (loc2, _), (s, _) = _pair(RNG.standard_normal(3), True), _pair(RNG.random(3) + 0.5, True)
    v = mg.tensor(RNG.standard_normal((2, 3)))
    def sym(c):        # the factorisations read one triangle: perturb both together
        return (c + c.mT) / 2

    assert mg.gradcheck(lambda m, c: D.MultivariateNormal(m, sym(c)).log_prob(v), (loc, cov))
    assert mg.gradcheck(lambda m, c: D.MultivariateNormal(m, precision_matrix=sym(c))
                        .log_prob(v), (loc, cov))
    assert mg.gradcheck(lambda m, c, m2: D.kl_divergence(
        D.MultivariateNormal(m, sym(c)), D.MultivariateNormal(
            m2, sym(c) + 0.5 * mg.eye(3, dtype=mg.float64))), (loc, cov, loc2))
    assert mg.gradcheck(lambda a, b, s: D.kl_divergence(D.Normal(a, s), D.Normal(b, s * 2)),
                        (loc, loc2, s))
    assert mg.gradcheck(lambda a, b: D.kl_divergence(D.Categorical(logits=a),
                                                     D.Categorical(logits=b)), (loc, loc2))
    assert mg.gradcheck(lambda a, b: D.kl_divergence(D.Bernoulli(logits=a),
                                                     D.Bernoulli(logits=b)), (loc, loc2))


@pytest.mark.parametrize("make", [
    lambda a, s: D.Normal(a, s),
    lambda a, s: D.Uniform(a, a + s),
    lambda a, s: D.Independent(D.Normal(a, s), 1),
    lambda a, s: D.MultivariateNormal(a, scale_tril=mg.diag_embed(s)),
])
def test_rsample_is_differentiable_through_the_draw(make):
    """d(sum of draws)/d(scale) is the sum of the standardised draws (x - shift) / scale."""
    a, s = (mg.tensor(RNG.standard_normal(3), requires_grad=True),
            mg.tensor(RNG.random(3) + 0.5, requires_grad=True))
    d = make(a, s)
    x = d.rsample((4000,), generator=1)
    assert x.shape == (4000, 3) and x.requires_grad
    ga, gs = mg.grad(x.sum(), [a, s])
    np.testing.assert_allclose(ga.numpy(), 4000)
    np.testing.assert_allclose(gs.numpy(), ((x - a) / s).detach().numpy().sum(0), rtol=1e-5)
    assert not d.sample((2,)).requires_grad


def test_draws_have_their_shapes_and_moments():
    mg.manual_seed(0)
    loc, scale = mg.tensor([1.0, -2.0]), mg.tensor([[0.5], [2.0]])
    x = D.Normal(loc, scale).sample((20000,))
    assert x.shape == (20000, 2, 2) and x.dtype == mg.float32
    np.testing.assert_allclose(x.numpy().mean(0), np.broadcast_to(loc.numpy(), (2, 2)),
                               atol=0.05)
    np.testing.assert_allclose(x.numpy().std(0), np.broadcast_to(scale.numpy(), (2, 2)),
                               rtol=0.03)
    u = D.Uniform(mg.tensor([0.0, 2.0]), 3.0).sample((20000,)).numpy()
    np.testing.assert_allclose(u.mean(0), [1.5, 2.5], atol=0.03)
    assert (u[:, 1] >= 2).all() and (u < 3).all()
    b = D.Bernoulli(logits=mg.tensor([-1.0, 2.0])).sample((20000,)).numpy()
    np.testing.assert_allclose(b.mean(0), 1 / (1 + np.exp([1.0, -2.0])), atol=0.02)
    probs = np.array([[0.1, 0.2, 0.7], [0.5, 0.0, 0.5]])
    c = D.Categorical(mg.tensor(probs)).sample((4, 5000))
    assert c.shape == (4, 5000, 2) and c.dtype == mg.int64
    freq = np.stack([(c.numpy()[..., r, None] == np.arange(3)).mean((0, 1)) for r in (0, 1)])
    np.testing.assert_allclose(freq, probs, atol=0.02)
    assert D.Categorical(mg.tensor(probs)).sample().shape == (2,)
    cov = _spd(n=3)
    z = D.MultivariateNormal(mg.tensor([1.0, 0.0, -1.0], dtype=mg.float64),
                             mg.tensor(cov)).sample((40000,)).numpy()
    np.testing.assert_allclose(np.cov(z.T), cov, atol=0.1 * np.abs(cov).max())
    np.testing.assert_allclose(z.mean(0), [1.0, 0.0, -1.0], atol=0.06)


@pytest.mark.parametrize("make", [
    lambda: D.Normal(mg.zeros(3), 1.0), lambda: D.Uniform(0.0, mg.ones(2)),
    lambda: D.Bernoulli(mg.full((4,), 0.3)), lambda: D.Categorical(logits=mg.zeros(2, 5)),
    lambda: D.MultivariateNormal(mg.zeros(2), mg.eye(2)),
])
def test_draws_are_reproducible_from_a_seed_or_generator(make):
    d = make()
    mg.manual_seed(3)
    first = d.sample((6,)).numpy()
    mg.manual_seed(3)
    np.testing.assert_array_equal(d.sample((6,)).numpy(), first)
    np.testing.assert_array_equal(d.sample((6,), generator=mg.Generator().manual_seed(5))
                                  .numpy(), d.sample((6,), generator=5).numpy())


@pytest.mark.parametrize("make,words", [
    (lambda: D.Normal(0.0, mg.tensor([1.0, -1.0])), "parameter scale"),
    (lambda: D.Normal(mg.tensor(float("nan")), 1.0), "parameter loc"),
    (lambda: D.Uniform(1.0, 1.0), "parameter low"),
    (lambda: D.Bernoulli(mg.tensor([1.5])), "parameter probs"),
    (lambda: D.Bernoulli(), "either probs or logits"),
    (lambda: D.Bernoulli(0.5, logits=0.0), "but not both"),
    (lambda: D.Categorical(mg.tensor([0.5, -0.1, 0.6])), "parameter probs"),
    (lambda: D.Categorical(mg.tensor(0.5)), "at least one dim"),
    (lambda: D.MultivariateNormal(mg.zeros(2), mg.tensor([[1.0, 2.0], [2.0, 1.0]])),
     "covariance_matrix"),
    (lambda: D.MultivariateNormal(mg.zeros(2), mg.tensor([[1.0, 0.5], [0.0, 1.0]])),
     "covariance_matrix"),
    (lambda: D.MultivariateNormal(mg.zeros(2), scale_tril=mg.tensor([[1.0, 0.5], [0.0, 1.0]])),
     "parameter scale_tril"),
    (lambda: D.MultivariateNormal(mg.zeros(3), mg.eye(2)), "must end in (3, 3)"),
    (lambda: D.MultivariateNormal(mg.zeros(2)), "exactly one of"),
    (lambda: D.Independent(D.Normal(mg.zeros(2), 1.0), 2), "reinterpreted_batch_ndims"),
    (lambda: D.Bernoulli(0.3).log_prob(mg.tensor(2.0)), "within the support"),
    (lambda: D.Categorical(mg.ones(3)).log_prob(mg.tensor([3])), "within the support"),
    (lambda: D.Uniform(0.0, 1.0).log_prob(mg.tensor(1.5)), "within the support"),
    (lambda: D.Normal(mg.zeros(3), 1.0).log_prob(mg.zeros(2)), "not broadcastable"),
    (lambda: D.MultivariateNormal(mg.zeros(2), mg.eye(2)).log_prob(mg.zeros(3)),
     "right-most size"),
    (lambda: D.Normal(0.0, 1.0).log_prob(0.5), "must be a Tensor"),
])
def test_bad_arguments_raise_value_errors_naming_them(make, words):
    with pytest.raises(ValueError, match=words.replace("(", r"\(").replace(")", r"\)")):
        make()


@pytest.mark.filterwarnings("ignore:invalid value encountered in log")
def test_validation_can_be_turned_off():
    assert math.isnan(D.Normal(0.0, -1.0, validate_args=False).log_prob(mg.tensor(0.0)).item())
    assert D.Bernoulli(0.3, validate_args=False).log_prob(mg.tensor(2.0)).shape == ()
    D.Distribution.set_default_validate_args(False)
    try:
        D.Normal(0.0, -1.0)
    finally:
        D.Distribution.set_default_validate_args(True)
    with pytest.raises(ValueError, match="parameter scale"):
        D.Normal(0.0, -1.0)


def test_expand_broadcasts_the_batch():
    for d in (D.Normal(mg.zeros(3), 1.0), D.Uniform(mg.zeros(3), 1.0),
              D.Bernoulli(logits=mg.zeros(3)), D.Categorical(mg.ones(3, 4)),
              D.MultivariateNormal(mg.zeros(3, 2), mg.eye(2)),
              D.Independent(D.Normal(mg.zeros(3, 2), 1.0), 1)):
        e = d.expand((5, 3))
        assert e.batch_shape == (5, 3) and e.event_shape == d.event_shape
        assert e.sample((2,)).shape == (2, 5, 3) + d.event_shape
        value = d.sample()
        np.testing.assert_allclose(e.log_prob(value).numpy(),
                                   np.broadcast_to(d.log_prob(value).numpy(), (5, 3)))


def test_register_kl_picks_the_closest_registered_pair(torch):
    class MyNormal(D.Normal):
        pass

    p, q = MyNormal(0.0, 1.0), D.Normal(1.0, 2.0)
    np.testing.assert_allclose(D.kl_divergence(p, q).item(),
                               TD.kl_divergence(TD.Normal(0.0, 1.0), TD.Normal(1.0, 2.0)).item(),
                               rtol=1e-6)
    try:
        D.register_kl(MyNormal, D.Normal)(lambda p, q: mg.tensor(-1.0))
        assert D.kl_divergence(p, q).item() == -1.0
        assert D.kl_divergence(q, p).item() != -1.0
    finally:
        del D.kl._KL_REGISTRY[MyNormal, D.Normal]
    with pytest.raises(NotImplementedError, match="Normal and Bernoulli"):
        D.kl_divergence(q, D.Bernoulli(0.5))


def test_distributions_stay_on_their_device():
    """On the spy device (arrays that refuse NumPy, as CuPy's): draws, log_prob, entropy
    and the KL stay there and equal the CPU's, draw for draw from one seed."""
    makers = [lambda d: D.Normal(mg.zeros(3, device=d), mg.ones(3, device=d)),
              lambda d: D.Uniform(mg.zeros(3, device=d), mg.ones(3, device=d)),
              lambda d: D.Bernoulli(logits=mg.zeros(3, device=d)),
              lambda d: D.Categorical(logits=mg.zeros(3, device=d)),
              lambda d: D.MultivariateNormal(mg.zeros(3, device=d), mg.eye(3, device=d))]
    spy_backend.register()
    try:
        for make in makers:
            results = {}
            for device in ("cpu", "spy"):
                p = make(device)
                x = p.sample((4,), generator=1)
                outs = (x, p.log_prob(x), p.entropy(), D.kl_divergence(p, make(device)))
                assert all(t.device == device for t in outs), (device, p)
                results[device] = [t.to("cpu").numpy() for t in outs]
            for a, b in zip(results["cpu"], results["spy"]):
                np.testing.assert_allclose(a, b, rtol=1e-6)
    finally:
        spy_backend.unregister()
