"""The functions of test_ops_torch_gaps_more.py at their edges: literal values (no torch
needed) at ties, NaN, ±inf, zeros, poles, empty and 0-d tensors, integer dtypes; the
non-differentiable count_nonzero, bincount, searchsorted and bucketize; the same edges
against torch where it is installed; and the errors for bad input, each naming the argument
and what would be valid."""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import backend
from minigrad.ops import cumulative, norms

NAN, INF = float("nan"), float("inf")
EULER = 0.5772156649015329


def _torch():
    return pytest.importorskip("torch")


def _eq(t, expected, dtype=None):
    """t's values equal `expected` (NaN equal to NaN, floats to ~1e-6), and its dtype."""
    np.testing.assert_allclose(t.numpy(), np.asarray(expected, dtype=float), rtol=1e-6,
                               atol=1e-7, equal_nan=True)
    if dtype is not None:
        assert t.dtype == dtype, f"dtype {t.dtype}, expected {dtype}"


def _same(mine, theirs, rtol=1e-6):
    """A minigrad result equals a torch one: shape, dtype and values (NaN equal to NaN)."""
    expected = theirs.detach().numpy()
    assert mine.shape == tuple(expected.shape), (mine.shape, expected.shape)
    assert str(mine.dtype) == str(theirs.dtype).replace("torch.", "")
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(mine.numpy(), expected, rtol=rtol, atol=1e-30,
                                   equal_nan=True)
    else:
        np.testing.assert_array_equal(mine.numpy(), expected)


def _grad(fn, values, upstream=None, **kw):
    """x.grad after fn(x).backward(upstream) for x = mg.tensor(values, requires_grad)."""
    x = mg.tensor(values, requires_grad=True, **kw)
    y = fn(x)
    y.backward(mg.ones_like(y) if upstream is None else mg.tensor(upstream, dtype=y.dtype))
    return x.grad


# ---- special functions ------------------------------------------------------------------
def test_special_functions_known_values(device):
    f64 = {"dtype": mg.float64, "device": device}
    x = mg.tensor([1.0, 0.5, 2.0, 0.0, -0.0, -1.0, -2.5, INF, -INF, NAN], **f64)
    _eq(x.lgamma(), [0, 0.5 * math.log(math.pi), 0, INF, INF, INF, math.log(
        8 * math.sqrt(math.pi) / 15), INF, INF, NAN])          # |Γ(-2.5)| = 8√π/15
    _eq(mg.digamma(x), [-EULER, -EULER - 2 * math.log(2), 1 - EULER, -INF, INF, NAN,
                        1.1031566406452432, INF, NAN, NAN])
    one = mg.tensor([1.0], **f64)
    _eq(mg.polygamma(1, one), [math.pi ** 2 / 6])
    _eq(one.polygamma(2), [-2.4041138063191885])             # -2ζ(3)
    _eq(mg.polygamma(0, one), [-EULER])
    _eq(mg.erfinv(mg.tensor([0.0, 1.0, -1.0, 2.0, NAN], **f64)), [0, INF, -INF, NAN, NAN])
    z = mg.tensor([0.3, -0.7], **f64)
    np.testing.assert_allclose(z.erf().erfinv().numpy(), [0.3, -0.7], rtol=1e-14)
    # the derivatives: ψ, ψ', √π/2·e^(y²)
    _eq(_grad(mg.lgamma, [1.0], **f64), [-EULER])
    _eq(_grad(mg.digamma, [1.0], **f64), [math.pi ** 2 / 6])
    _eq(_grad(mg.erfinv, [0.0, 1.0, 2.0], **f64), [math.sqrt(math.pi) / 2, INF, NAN])
    _eq(_grad(mg.lgamma, [0.0, -1.0], **f64), [-INF, NAN])   # ψ(0) = -inf, ψ(-1) = NaN


def test_special_functions_dtypes(device):
    for fn in (mg.lgamma, mg.digamma, mg.erfinv, lambda t: mg.polygamma(2, t)):
        assert fn(mg.tensor([1, 2], device=device)).dtype == mg.float32
        assert fn(mg.tensor([True], device=device)).dtype == mg.float32
        half = fn(mg.tensor([0.25, 0.5], dtype=mg.float16, device=device))
        assert half.dtype == mg.float16
        np.testing.assert_allclose(half.numpy(), fn(mg.tensor([0.25, 0.5], device=device))
                                   .numpy(), rtol=1e-3)


def test_special_functions_without_scipy_say_what_to_install(monkeypatch):
    monkeypatch.setattr(backend.get("cpu"), "special", None)
    for fn in (mg.lgamma, mg.digamma, mg.erfinv, lambda t: t.polygamma(1)):
        with pytest.raises(RuntimeError, match=r"needs SciPy's special functions.*pip "
                                               r"install scipy"):
            fn(mg.tensor([0.5]))
    assert mg.erf(mg.tensor([0.0])).tolist() == [0.0]           # the rest still runs


def test_special_functions_at_edges_as_torch():
    torch = _torch()
    v = [0.0, -0.0, -1.0, -2.5, 0.5, 1e-30, 30.0, INF, -INF, NAN]
    for name in ("lgamma", "digamma"):
        for dt in ("float32", "float64"):
            _same(getattr(mg, name)(mg.tensor(v, dtype=dt)),
                  getattr(torch, name)(torch.tensor(v, dtype=getattr(torch, dt))), rtol=3e-6)
    e = [0.0, 1.0, -1.0, 1.5, 0.5, -0.999, NAN]
    _same(mg.erfinv(mg.tensor(e)), torch.erfinv(torch.tensor(e)), rtol=1e-5)
    x, t = mg.tensor(v[3:7], requires_grad=True), torch.tensor(v[3:7], requires_grad=True)
    mg.lgamma(x).sum().backward(), torch.lgamma(t).sum().backward()
    _same(x.grad, t.grad, rtol=3e-6)
    _same(mg.polygamma(2, mg.tensor(e[4:6])), torch.polygamma(2, torch.tensor(e[4:6])),
          rtol=1e-5)


# ---- xlogy and logit ---------------------------------------------------------------------
def test_xlogy_values_and_gradients(device):
    x = mg.tensor([0.0, 0.0, 1.0, 0.0, 1.0, 0.0, 0.0, 2.0], device=device, requires_grad=True)
    y = mg.tensor([0.0, 2.0, 0.0, -1.0, -1.0, NAN, INF, 3.0], device=device,
                  requires_grad=True)
    out = mg.xlogy(x, y)
    _eq(out, [0, 0, -INF, 0, NAN, NAN, 0, 2 * math.log(3)])
    out.backward(mg.tensor([1.0] * 7 + [0.0], device=device))
    # d/dx: log y (as xlogy(g, y): 0 where g is 0), 0 where x = 0 and y <= 0; d/dy: x / y
    _eq(x.grad, [0, math.log(2), -INF, 0, NAN, NAN, INF, 0])
    _eq(y.grad, [NAN, 0, INF, 0, -1, NAN, 0, 0])
    assert mg.xlogy(mg.tensor([0, 1, 2], device=device), mg.tensor([1, 2, 3], device=device)
                    ).dtype == mg.float32
    assert mg.xlogy(mg.tensor([True], device=device), mg.tensor([True], device=device)
                    ).tolist() == [0.0]
    _eq(mg.xlogy(2, mg.tensor([1.0, math.e], device=device)), [0, 2])
    assert mg.xlogy(mg.tensor([1.0], dtype=mg.float16, device=device), 3).dtype == mg.float16


def test_logit_values_and_gradients(device):
    v = [0.0, 0.1, 0.5, 0.9, 1.0, -1.0, 2.0, NAN]
    _eq(mg.logit(mg.tensor(v, device=device)), [-INF, -math.log(9), 0, math.log(9), INF,
                                                NAN, NAN, NAN])
    lo = -math.log(4)                                     # logit(0.2)
    _eq(mg.tensor(v, device=device).logit(eps=0.2), [lo, lo, 0, -lo, -lo, lo, -lo, NAN])
    inside = 1 / (0.1 * 0.9)
    # without eps NaN outside [0, 1] (and ∞ at its ends); with eps 0 outside [eps, 1 - eps]
    _eq(_grad(mg.logit, v, device=device), [INF, inside, 4, inside, INF, NAN, NAN, NAN])
    _eq(_grad(lambda t: t.logit(0.1), v, device=device), [0, inside, 4, inside, 0, 0, 0, NAN])
    _eq(mg.logit(mg.tensor([0.3], device=device), eps=-1.0), [math.log(3 / 7)])  # eps < 0:
    _eq(mg.logit(mg.tensor([0.3, 0.9, 0.5], device=device), eps=0.6),         # no clamp
        [math.log(1.5), -math.log(1.5), math.log(1.5)])   # eps > 0.5: PyTorch's formula
    assert mg.logit(mg.tensor([1, 0], device=device)).tolist() == [INF, -INF]
    # second derivative in the clamped region is 0 (the function is constant there)
    x = mg.tensor([0.05, 0.5], dtype=mg.float64, device=device, requires_grad=True)
    (g,) = mg.grad(x.logit(0.1).sum(), [x], create_graph=True)
    assert mg.grad(g.sum(), [x])[0].tolist() == [0.0, 0.0]


def test_xlogy_and_logit_edges_as_torch():
    torch = _torch()
    x, y = [0.0, 0.0, 1.0, 0.0, 2.0, -1.0], [0.0, NAN, 0.0, INF, 3.0, 0.5]
    _same(mg.xlogy(mg.tensor(x), mg.tensor(y)), torch.xlogy(torch.tensor(x), torch.tensor(y)))
    for a, b in (([1, 2], [2, 3]), ([1.0, 2.0], 3), ([True], [True])):
        tb = torch.tensor(b) if isinstance(b, list) else b
        _same(mg.xlogy(mg.tensor(a), mg.tensor(b) if isinstance(b, list) else b),
              torch.xlogy(torch.tensor(a), tb))
    v = [0.0, 0.1, 0.5, 1.0, -1.0, 2.0, NAN]
    for eps in (None, 0.1, 0.0, -1.0):
        m, t = mg.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
        mg.logit(m, eps).sum().backward()
        torch.logit(t, eps).sum().backward()
        _same(m.detach(), t.detach())
        _same(m.grad, t.grad)


# ---- logcumsumexp, cummax, cummin ----------------------------------------------------------
def test_logcumsumexp_values_and_gradient(device):
    x = mg.tensor([0.0, 0.0, math.log(2)], dtype=mg.float64, device=device)
    _eq(x.logcumsumexp(0), [0, math.log(2), math.log(4)])
    _eq(mg.logcumsumexp(mg.tensor([1000.0, 1000.0], device=device), 0),
        [1000, 1000 + math.log(2)])                          # no overflow
    _eq(mg.logcumsumexp(mg.tensor([-INF, -INF, 1.0, INF, 2.0], device=device), 0),
        [-INF, -INF, 1, INF, INF])
    _eq(mg.logcumsumexp(mg.tensor([-INF, NAN, 1.0], device=device), 0), [-INF, NAN, NAN])
    # dx_j = Σ_{i≥j} g_i softmax(x_{≤i})_j: with g = (0, 1) the softmax of both
    _eq(_grad(lambda t: t.logcumsumexp(0), [0.0, 0.0], [0.0, 1.0], device=device), [.5, .5])
    _eq(_grad(lambda t: t.logcumsumexp(0), [1.0, 2.0], [-1.0, 0.0], device=device), [-1, 0])
    assert mg.tensor(2.5, device=device).logcumsumexp(-1).tolist() == 2.5
    assert mg.zeros(0, 3, device=device).logcumsumexp(0).shape == (0, 3)
    assert mg.tensor([1.0], dtype=mg.float16, device=device).logcumsumexp(0).dtype == \
        mg.float16


def test_logcumsumexp_edges_as_torch():
    torch = _torch()
    for v in ([-INF, -INF, 1.0, INF, 2.0], [-INF, NAN, 1.0], [3e38, 3e38, -3e38],
              [[0.5, -2.0, 7.0], [1e4, -1e4, 0.0]]):
        for dt in ("float32", "float64"):
            m = mg.tensor(v, dtype=dt, requires_grad=True)
            t = torch.tensor(v, dtype=getattr(torch, dt), requires_grad=True)
            g = np.random.default_rng(0).standard_normal(m.shape)
            ym, yt = m.logcumsumexp(-1), t.logcumsumexp(-1)
            _same(ym.detach(), yt)
            ym.backward(mg.tensor(g, dtype=dt)), yt.backward(torch.tensor(g, dtype=yt.dtype))
            # float32's gradient as float64's (its log-space sums run in float64 through,
            # torch's round to float32 midway: 3e-3 off at 1e4)
            t64 = torch.tensor(v, dtype=torch.float64, requires_grad=True)
            t64.logcumsumexp(-1).backward(torch.tensor(g))
            _same(m.grad, t64.grad.to(t.dtype), rtol=1e-5)


def test_cummax_cummin_ties_nan_and_gradients(device):
    v, i = mg.tensor([1, 3, 3, 2, 5, 5], device=device).cummax(0)
    assert v.tolist() == [1, 3, 3, 3, 5, 5] and i.tolist() == [0, 1, 2, 2, 4, 5]
    v, i = mg.cummax(mg.tensor([1.0, NAN, 3.0, NAN, 5.0], device=device), 0)
    _eq(v, [1, NAN, NAN, NAN, NAN])
    assert i.tolist() == [0, 1, 1, 3, 3]                      # the last NaN so far
    v, i = mg.tensor([3.0, 1.0, 1.0, NAN, 0.0], device=device).cummin(0)
    _eq(v, [3, 1, 1, NAN, NAN])
    assert i.tolist() == [0, 1, 2, 3, 3]
    v, i = mg.tensor([True, False, True], device=device).cummax(0)
    assert v.tolist() == [True, True, True] and i.tolist() == [0, 0, 2]
    # the gradient goes to where each running max stands, repeated places adding up
    _eq(_grad(lambda t: t.cummax(0).values, [1.0, 3.0, 3.0, 2.0], [1.0, 2.0, 3.0, 4.0],
              device=device), [1, 2, 7, 0])
    _eq(_grad(lambda t: t.cummin(1)[0], [[2.0, 1.0, 1.5]], device=device), [[1, 2, 0]])
    v, i = mg.tensor(4.0, device=device).cummin(0)
    assert v.tolist() == 4.0 and i.tolist() == 0 and i.dtype == mg.int64
    v, i = mg.zeros(2, 0, device=device).cummax(1)
    assert v.shape == i.shape == (2, 0)


def test_cummax_cummin_as_torch():
    torch = _torch()
    for v in ([1.0, NAN, 3.0, NAN, 5.0], [[2.0, 2.0, -1.0, 2.0], [NAN, 0.0, NAN, -INF]],
              [4, 4, 1, 9], [True, False, True]):
        for name in ("cummax", "cummin"):
            for dim in (0, -1):
                got, want = getattr(mg.tensor(v), name)(dim), getattr(torch.tensor(v), name)(
                    dim)
                _same(got.values, want.values)
                _same(got.indices, want.indices)


def test_running_by_doubling_matches_accumulate():
    """The CPU runs logaddexp/maximum/minimum as NumPy's sequential accumulate, other
    devices by doubling: the two agree, infinities and NaN included."""
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 37, 2))
    a[0, 5, 0], a[1, 0, 1], a[2, 9, :] = NAN, -INF, INF
    for name in ("logaddexp", "maximum", "minimum"):
        for d in (0, 1, 2):
            np.testing.assert_allclose(
                cumulative.running_by_doubling(np, a, d, getattr(np, name)),
                cumulative.running(np, a, d, name), rtol=1e-14, equal_nan=True)


# ---- nansum, nanmean, count_nonzero, var_mean, std_mean, aminmax -----------------------------
def test_nansum_nanmean_values_and_gradients(device):
    x = mg.tensor([[NAN, NAN], [1.0, NAN]], device=device)
    _eq(x.nansum(1), [0, 1])
    _eq(mg.nanmean(x, 1), [NAN, 1])                            # no values: NaN
    _eq(mg.nanmean(x), 1)
    _eq(_grad(lambda t: t.nansum(), [1.0, NAN, INF], device=device), [1, 0, 1])
    _eq(_grad(lambda t: t.nanmean(), [1.0, NAN, 3.0], device=device), [.5, 0, .5])
    # a slice of only NaNs: 1/0 reaches its NaNs as ∞·0 = NaN, as PyTorch's
    _eq(_grad(lambda t: t.nanmean(1), [[NAN, NAN], [1.0, NAN]], device=device),
        [[NAN, NAN], [1, 0]])
    assert mg.nansum(mg.tensor([1, 2], dtype=mg.uint8, device=device)).dtype == mg.int64
    _eq(mg.tensor([1, 2], device=device).nansum(dtype=mg.float32), 3, mg.float32)
    _eq(mg.nanmean(mg.tensor([1, 2], device=device), dtype=mg.float64), 1.5, mg.float64)
    _eq(mg.tensor([1.0, 2.0], dtype=mg.float16, device=device).nanmean(), 1.5, mg.float16)
    _eq(mg.tensor(3.0, device=device).nansum(0), 3)
    assert mg.zeros(0, 2, device=device).nansum(0).tolist() == [0.0, 0.0]
    assert mg.zeros(0, 2, device=device).nanmean(1).shape == (0,)


def test_count_nonzero(device):
    x = mg.tensor([[0.0, NAN], [1.0, 0.0]], device=device)
    assert x.count_nonzero().tolist() == 2 and x.count_nonzero().dtype == mg.int64
    assert mg.count_nonzero(x, 1).tolist() == [1, 1]
    assert mg.count_nonzero(x, (0, -1)).tolist() == 2 and x.count_nonzero(()).tolist() == 2
    assert mg.tensor(0.0, device=device).count_nonzero(0).tolist() == 0
    assert mg.tensor([True, False, True], device=device).count_nonzero().tolist() == 2
    assert mg.zeros(0, 3, device=device).count_nonzero(0).tolist() == [0, 0, 0]


def test_var_mean_std_mean(device):
    x = mg.tensor([1.0, 2.0, 4.0], device=device)
    v, m = mg.var_mean(x)
    _eq(v, 7 / 3), _eq(m, 7 / 3)
    v, m = mg.var_mean(x, False)                               # var_mean(x, unbiased)
    _eq(v, 14 / 9)
    v, m = mg.var_mean(x[None], 1, unbiased=False, keepdim=True)
    assert v.shape == m.shape == (1, 1)
    s, m = mg.std_mean(x, correction=0)
    _eq(s, math.sqrt(14 / 9)), _eq(m, 7 / 3)
    v, m = mg.var_mean(mg.tensor([1.0], device=device))        # one element: no dof left
    _eq(v, NAN), _eq(m, 1)
    assert isinstance(mg.std_mean(x), tuple)


def test_aminmax_ties_nan_and_gradients(device):
    x = mg.tensor([[1.0, 3.0], [2.0, 0.0]], device=device)
    lo, hi = x.aminmax()
    assert (lo.tolist(), hi.tolist()) == (0.0, 3.0)
    r = mg.aminmax(x, dim=0)
    assert (r.min.tolist(), r.max.tolist()) == ([1.0, 0.0], [2.0, 3.0])
    assert x.aminmax(keepdim=True).min.shape == (1, 1)
    assert mg.tensor([[1, 3], [2, 0]], device=device).aminmax(dim=-1, keepdim=True
                                                              ).max.tolist() == [[3], [2]]
    # ties share the gradient evenly, as amin's and amax's
    def f(t):
        lo, hi = t.aminmax()
        return lo * 2 + hi * 5
    _eq(_grad(f, [1.0, 3.0, 3.0, 1.0], device=device), [1, 2.5, 2.5, 1])
    _eq(_grad(f, [1.0, NAN, 3.0], device=device), [NAN, NAN, NAN])    # as PyTorch
    lo, hi = mg.tensor(2.0, device=device).aminmax(dim=0)
    assert lo.tolist() == hi.tolist() == 2.0
    lo, hi = mg.tensor([True, False], device=device).aminmax()
    assert (lo.tolist(), hi.tolist()) == (False, True)
    assert mg.zeros(0, 3, device=device).aminmax(dim=1).min.shape == (0,)


def test_reductions_as_torch():
    torch = _torch()
    v = [[NAN, 1.0, -2.0], [NAN, NAN, NAN], [0.0, INF, 3.0]]
    for kw in ({}, {"dim": 1}, {"dim": (0, 1), "keepdim": True}, {"dim": 0}):
        for name in ("nansum", "nanmean"):
            m, t = mg.tensor(v, requires_grad=True), torch.tensor(v, requires_grad=True)
            ym, yt = getattr(mg, name)(m, **kw), getattr(torch, name)(t, **kw)
            _same(ym.detach(), yt)
            ym.sum().backward(), yt.sum().backward()
            _same(m.grad, t.grad)
        _same(mg.count_nonzero(mg.tensor(v), kw.get("dim")),
              torch.count_nonzero(torch.tensor(v), kw.get("dim")))
    for a in ([[1.0, 3.0, 3.0], [NAN, 0.0, 0.0]], [[2, 1], [1, 2]], [[True, False]]):
        for kw in ({}, {"dim": 1}, {"dim": 0, "keepdim": True}):
            got, want = mg.aminmax(mg.tensor(a), **kw), torch.aminmax(torch.tensor(a), **kw)
            _same(got.min, want.min), _same(got.max, want.max)
    x = [[1.0, 3.0, 3.0, 1.0], [NAN, 2.0, 5.0, 5.0]]
    m, t = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    lo, hi = m.aminmax(dim=1)
    tlo, thi = t.aminmax(dim=1)
    (lo * 2 + hi * 5).sum().backward(), (tlo * 2 + thi * 5).sum().backward()
    _same(m.grad, t.grad)
    for args, kw in (((), {}), ((1,), {"unbiased": False}), ((False,), {}),
                     (((0, 1),), {"correction": 2, "keepdim": True})):
        for name in ("var_mean", "std_mean"):
            for g, w in zip(getattr(mg, name)(mg.tensor(x[:1]), *args, **kw),
                            getattr(torch, name)(torch.tensor(x[:1]), *args, **kw)):
                _same(g, w, rtol=1e-5)


# ---- kthvalue, take_along_dim ---------------------------------------------------------------
def test_kthvalue_ties_nan_and_gradients(device):
    v, i = mg.tensor([3.0, 1.0, 1.0, 1.0, 2.0], device=device).kthvalue(2)
    # of equal values the one a stable sort puts k-th (PyTorch's choice is open: here 3)
    assert v.tolist() == 1.0 and i.tolist() == 2
    x = mg.tensor([NAN, 1.0, NAN, 0.0], device=device)         # NaN counts as the largest
    assert [x.kthvalue(k)[0].tolist() for k in (1, 2)] == [0.0, 1.0]
    assert math.isnan(x.kthvalue(3)[0].tolist()) and x.kthvalue(3)[1].tolist() == 0
    r = mg.kthvalue(mg.tensor([[3, 1], [2, 5]], device=device), 1, 0, True)
    assert r.values.tolist() == [[2, 1]] and r.indices.tolist() == [[1, 0]]
    _eq(_grad(lambda t: t.kthvalue(2, 1)[0], [[5.0, 1.0, 3.0], [2.0, 2.0, 0.0]],
              [1.0, 10.0], device=device), [[0, 0, 1], [10, 0, 0]])   # stable: the first 2
    v, i = mg.tensor(5.0, device=device).kthvalue(1)
    assert v.tolist() == 5.0 and i.tolist() == 0
    assert mg.zeros(2, 0, device=device).kthvalue(1, 0).values.shape == (0,)


def test_kthvalue_as_torch():
    torch = _torch()
    rng = np.random.default_rng(0)
    a = rng.standard_normal((3, 9))
    a[1, 4] = NAN
    for k, dim in ((1, 1), (5, -1), (9, 1), (2, 0)):
        got, want = mg.tensor(a).kthvalue(k, dim), torch.tensor(a).kthvalue(k, dim)
        _same(got.values, want.values)
        _same(got.indices, want.indices)       # no ties here: one answer


def test_take_along_dim_values_and_gradients(device):
    x = mg.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], device=device, requires_grad=True)
    out = x.take_along_dim(mg.tensor([[0, 2, 2]], device=device), 1)   # broadcasts rows
    assert out.tolist() == [[0.0, 2.0, 2.0], [3.0, 5.0, 5.0]]
    out.sum().backward()
    assert x.grad.tolist() == [[1.0, 0.0, 2.0], [1.0, 0.0, 2.0]]   # repeats add up
    assert mg.take_along_dim(x, mg.tensor([5, 0], device=device)).tolist() == [5.0, 0.0]
    assert mg.take_along_dim(x, np.array([[1], [0]]), 0).tolist() == [[3.0, 4.0, 5.0],
                                                                      [0.0, 1.0, 2.0]]
    assert mg.take_along_dim(mg.tensor(5.0, device=device),
                             mg.tensor(0, device=device), 0).tolist() == 5.0
    y = mg.zeros(3, 1, 4, device=device)
    assert y.take_along_dim(mg.zeros(1, 5, 2, dtype=mg.int64, device=device), 2).shape == \
        (3, 5, 2)


# ---- bincount, searchsorted, bucketize -------------------------------------------------------
def test_bincount(device):
    i = mg.tensor([0, 1, 1, 3], device=device)
    assert i.bincount().tolist() == [1, 2, 0, 1] and i.bincount().dtype == mg.int64
    assert mg.bincount(i, minlength=6).tolist() == [1, 2, 0, 1, 0, 0]
    empty = mg.tensor([], dtype=mg.int64, device=device)
    assert mg.bincount(empty).tolist() == [] and empty.bincount(minlength=3).tolist() == [0] * 3
    j = mg.tensor([0, 1, 1], device=device)
    _eq(j.bincount(mg.tensor([0.5, 1.0, 2.0], device=device)), [0.5, 3], mg.float32)
    _eq(mg.bincount(j, mg.tensor([1, 2, 3], device=device)), [1, 5], mg.float64)
    _eq(mg.bincount(j, mg.tensor([0.5, 1.0, 3.0], dtype=mg.float16, device=device)), [0.5, 4],
        mg.float64)
    assert mg.tensor([1, 2], dtype=mg.uint8, device=device).bincount().tolist() == [0, 1, 1]
    # the weights' gradient: g read at each element's bin (PyTorch has none)
    w = mg.tensor([0.5, 1.0, 2.0], device=device, requires_grad=True)
    (mg.bincount(j, w, minlength=3) * mg.tensor([2.0, 3.0, 4.0], device=device)).sum() \
        .backward()
    assert w.grad.tolist() == [2.0, 3.0, 3.0]
    w64 = mg.tensor([0.5, 1.0, 2.0], dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(lambda t: mg.bincount(mg.tensor([2, 0, 2]), t), [w64])
    assert mg.gradgradcheck(lambda t: mg.bincount(mg.tensor([2, 0, 2]), t * t), [w64])


def test_searchsorted_and_bucketize(device):
    s = mg.tensor([1.0, 2.0, 2.0, 3.0, 5.0], device=device)
    v = mg.tensor([2.0, 0.0, 6.0, 2.5], device=device)
    assert mg.searchsorted(s, v).tolist() == [1, 0, 5, 3]
    assert mg.searchsorted(s, v, right=True).tolist() == [3, 0, 5, 3]
    assert mg.searchsorted(s, v, side="right").tolist() == [3, 0, 5, 3]
    assert mg.searchsorted(s, v, right=False, side="right").tolist() == [3, 0, 5, 3]
    out = mg.searchsorted(s, 2.0, out_int32=True)
    assert out.tolist() == 1 and out.dtype == mg.int32 and out.shape == ()
    assert mg.searchsorted(s, v).dtype == mg.int64 and mg.searchsorted(s, v).device == device
    # NaN counts as larger than everything, as PyTorch's comparisons read it
    assert mg.searchsorted(mg.tensor([1.0, 2.0, NAN], device=device), mg.tensor(
        [NAN, 1.5, 3.0, INF], device=device)).tolist() == [3, 1, 3, 3]
    rows = mg.tensor([[1.0, 3.0], [2.0, 4.0]], device=device)
    assert mg.searchsorted(rows, mg.tensor([[2.0], [2.0]], device=device)).tolist() == \
        [[1], [0]]
    unsorted = mg.tensor([3.0, 1.0, 2.0], device=device)
    assert mg.searchsorted(unsorted, mg.tensor([2.5, 0.0], device=device),
                           sorter=mg.tensor([1, 2, 0], device=device)).tolist() == [2, 0]
    assert mg.searchsorted(mg.zeros(0, device=device), mg.tensor([1.0], device=device)
                           ).tolist() == [0]
    assert mg.searchsorted(s, mg.zeros(0, 2, device=device)).shape == (0, 2)
    assert mg.searchsorted(mg.tensor([1, 2, 3], device=device), mg.tensor(
        [1.5, 2.0], device=device)).tolist() == [1, 1]        # mixed dtypes compare exactly
    assert mg.bucketize(v, s).tolist() == [1, 0, 5, 3]
    assert mg.bucketize(v, s, right=True).tolist() == [3, 0, 5, 3]
    assert mg.bucketize(2.0, s).tolist() == 1
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    assert not mg.searchsorted(s, x).requires_grad
    for n in range(0, 10):                                    # every length, every place
        seq = mg.arange(n, dtype=mg.float64, device=device)
        probe = mg.arange(-1.0, n + 1, 0.5, dtype=mg.float64, device=device)
        for right in (False, True):
            np.testing.assert_array_equal(
                mg.searchsorted(seq, probe, right=right).numpy(),
                np.searchsorted(np.arange(n), probe.numpy(), "right" if right else "left"))


def test_counts_and_searches_as_torch():
    torch = _torch()
    s = [1.0, 2.0, 2.0, 3.0, 5.0, NAN]
    v = [[2.0, 0.0, 6.0], [NAN, INF, 2.5]]
    for kw in ({}, {"right": True}, {"side": "right"}, {"out_int32": True}):
        _same(mg.searchsorted(mg.tensor(s), mg.tensor(v), **kw),
              torch.searchsorted(torch.tensor(s), torch.tensor(v), **kw))
        _same(mg.bucketize(mg.tensor(v), mg.tensor(s[:5]), **{
            k: a for k, a in kw.items() if k != "side"}),
            torch.bucketize(torch.tensor(v), torch.tensor(s[:5]), **{
                k: a for k, a in kw.items() if k != "side"}))
    rows = [[1.0, 3.0, 3.0], [2.0, 4.0, 9.0]]
    _same(mg.searchsorted(mg.tensor(rows), mg.tensor(v), right=True),
          torch.searchsorted(torch.tensor(rows), torch.tensor(v), right=True))
    sorter = [[2, 0, 1], [0, 2, 1]]
    seq = [[3.0, 3.0, 1.0], [2.0, 9.0, 4.0]]
    _same(mg.searchsorted(mg.tensor(seq), mg.tensor(v), sorter=mg.tensor(sorter)),
          torch.searchsorted(torch.tensor(seq), torch.tensor(v), sorter=torch.tensor(sorter)))
    _same(mg.searchsorted(mg.tensor(s), 2), torch.searchsorted(torch.tensor(s), 2))
    for idx, kw in (([0, 1, 1, 3], {}), ([0, 1, 1, 3], {"minlength": 7}), ([], {}),
                    ([2, 0], {"weights": [0.5, 1.5]}), ([2, 0], {"weights": [1, 3]})):
        m_kw = {k: mg.tensor(a) if k == "weights" else a for k, a in kw.items()}
        t_kw = {k: torch.tensor(a) if k == "weights" else a for k, a in kw.items()}
        _same(mg.bincount(mg.tensor(idx, dtype=mg.int64), **m_kw),
              torch.bincount(torch.tensor(idx, dtype=torch.int64), **t_kw))


# ---- layout: broadcast_tensors, tensor_split, rot90, diag_embed ----------------------------------
def test_broadcast_tensors_and_tensor_split(device):
    a, b = mg.broadcast_tensors(mg.tensor([1.0, 2.0], device=device),
                                mg.tensor([[1], [2]], device=device))
    assert a.tolist() == [[1.0, 2.0], [1.0, 2.0]] and b.tolist() == [[1, 1], [2, 2]]
    assert b.dtype == mg.int64 and mg.broadcast_tensors() == ()
    x = mg.arange(7, device=device)
    assert [p.tolist() for p in x.tensor_split(3)] == [[0, 1, 2], [3, 4], [5, 6]]
    assert [p.tolist() for p in mg.tensor_split(x, [5, 2, 9])] == [
        [0, 1, 2, 3, 4], [], [2, 3, 4, 5, 6], []]
    assert [p.tolist() for p in x.tensor_split([-9, 2])] == [[], [0, 1], [2, 3, 4, 5, 6]]
    assert len(x.tensor_split(10)) == 10 and x.tensor_split(10)[-1].tolist() == []
    assert [p.tolist() for p in x.tensor_split(mg.tensor(2))] == [[0, 1, 2, 3], [4, 5, 6]]
    assert [p.tolist() for p in x.tensor_split(mg.tensor([1, 3]))] == [[0], [1, 2],
                                                                       [3, 4, 5, 6]]
    assert [p.shape for p in mg.zeros(2, 0, device=device).tensor_split(2, 1)] == [(2, 0)] * 2
    assert [p.tolist() for p in x.tensor_split(sections=2)] == [[0, 1, 2, 3], [4, 5, 6]]
    assert [p.tolist() for p in mg.tensor_split(x, indices=[2])] == [[0, 1], [2, 3, 4, 5, 6]]
    w = mg.arange(6.0, device=device).reshape(2, 3).requires_grad_()
    first, rest = w.tensor_split([1], dim=1)
    (first * 2).sum().backward()
    assert w.grad.tolist() == [[2.0, 0.0, 0.0], [2.0, 0.0, 0.0]]


def test_rot90_and_diag_embed(device):
    x = mg.arange(6.0, device=device).reshape(2, 3)
    assert x.rot90().tolist() == [[2.0, 5.0], [1.0, 4.0], [0.0, 3.0]]
    assert mg.rot90(x, -1).tolist() == [[3.0, 0.0], [4.0, 1.0], [5.0, 2.0]]
    assert x.rot90(1, (-1, 0)).tolist() == mg.rot90(x, 3).tolist()
    assert x.rot90(2, [1, 0]).tolist() == [[5.0, 4.0, 3.0], [2.0, 1.0, 0.0]]
    assert x.rot90(4).tolist() == x.tolist()
    v = mg.tensor([1.0, 2.0], device=device)
    assert v.diag_embed().tolist() == [[1.0, 0.0], [0.0, 2.0]]
    assert mg.diag_embed(v, 1).tolist() == [[0.0, 1.0, 0.0], [0.0, 0.0, 2.0], [0.0, 0.0, 0.0]]
    m = mg.tensor([[1.0, 2.0]], device=device)
    assert m.diag_embed(-1, 0, 2).shape == (3, 1, 3)
    assert m.diag_embed(1, 2, 0)[:, 0].tolist() == [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0],
                                                   [0.0, 2.0, 0.0]]
    d = mg.randn(2, 3, 4, device=device)
    assert mg.equal(d.diag_embed(1, 0, 3).diagonal(1, 0, 3), d)


def test_layout_as_torch():
    torch = _torch()
    a = np.arange(24.0).reshape(2, 3, 4)
    for k, dims in ((1, (0, 1)), (2, (2, 0)), (3, (-1, 1)), (-5, (0, 2))):
        _same(mg.tensor(a).rot90(k, dims), torch.tensor(a).rot90(k, dims))
    for args in ((1, 0, 1), (-1, 2, 0), (2, -1, 1), (0, 3, -4)):
        _same(mg.tensor(a).diag_embed(*args), torch.tensor(a).diag_embed(*args))
    for cut, dim in ((3, 1), ([1, 3], -1), ([0, 0, 9], 2), (5, 0)):
        for m, t in zip(mg.tensor(a).tensor_split(cut, dim), torch.tensor(a).tensor_split(
                cut, dim)):
            _same(m, t)


# ---- cdist ------------------------------------------------------------------------------------
def test_cdist_coinciding_points_get_zero_gradient(device):
    a = mg.tensor([[0.0, 0.0], [1.0, 1.0], [2.0, 0.0]], device=device, requires_grad=True)
    b = mg.tensor([[0.0, 0.0], [1.0, 2.0]], device=device, requires_grad=True)
    d = mg.cdist(a, b)
    _eq(d, [[0, math.sqrt(5)], [math.sqrt(2), 1], [2, math.sqrt(5)]])
    d[0, 0].backward()                                       # the two points coincide
    assert a.grad.tolist() == [[0.0, 0.0]] * 3 and b.grad.tolist() == [[0.0, 0.0]] * 2
    for p, want in ((1.0, 3), (INF, 2), (0.0, 2), (0.5, (1 + math.sqrt(2)) ** 2)):
        _eq(mg.cdist(a, b, p)[0, 1], want)
    # ∞: every coordinate that reaches the max gets the gradient (PyTorch's rule)
    x = mg.tensor([[0.0, 0.0]], device=device, requires_grad=True)
    mg.cdist(x, mg.tensor([[1.0, -1.0]], device=device), p=INF).sum().backward()
    assert x.grad.tolist() == [[-1.0, 1.0]]
    assert mg.cdist(mg.zeros(2, 3, 0, device=device), mg.zeros(2, 5, 0, device=device),
                    INF).tolist() == [[[0.0] * 5] * 3] * 2
    assert mg.cdist(mg.zeros(2, 3, 2, device=device), mg.zeros(4, 1, 5, 2, device=device)
                    ).shape == (4, 2, 3, 5)
    assert mg.cdist(mg.zeros(0, 2, device=device), mg.zeros(5, 2, device=device)).shape == \
        (0, 5)
    _eq(mg.cdist(mg.tensor([[NAN, 1.0]], device=device),
                 mg.tensor([[0.0, 1.0], [INF, 0.0]], device=device)), [[NAN, NAN]])


def test_cdist_in_pieces_matches_whole(monkeypatch):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((2, 9, 3)), rng.standard_normal((2, 7, 3))
    b[1, 2] = a[1, 4]                                          # a coinciding pair

    def run(p):
        x, y = (mg.tensor(v, requires_grad=True) for v in (a, b))
        d = mg.cdist(x, y, p)
        (d * mg.tensor(rng.standard_normal(d.shape))).sum().backward()
        return d.numpy(), x.grad.numpy(), y.grad.numpy()
    for p in (2.0, 1.0, 3.0, INF):
        rng = np.random.default_rng(4)
        whole = run(p)
        monkeypatch.setattr(norms, "_CDIST_PIECE", 20)        # one or two rows a piece
        rng = np.random.default_rng(4)
        pieces = run(p)
        monkeypatch.undo()
        for w, q in zip(whole, pieces):
            np.testing.assert_allclose(q, w, rtol=1e-12, atol=1e-12)


def test_cdist_as_torch_at_kinks():
    torch = _torch()
    a = [[0.0, 0.0], [1.0, 1.0], [2.0, 0.0], [1.0, 2.0]]
    b = [[0.0, 0.0], [1.0, 2.0], [1.0, 1.0]]
    for p in (2.0, 1.0, INF, 0.0, 0.5, 1.5, 3.0):
        for dt in ("float32", "float64"):
            m = [mg.tensor(v, dtype=dt, requires_grad=True) for v in (a, b)]
            t = [torch.tensor(v, dtype=getattr(torch, dt), requires_grad=True) for v in (a, b)]
            dm, dtt = mg.cdist(*m, p), torch.cdist(*t, p)
            _same(dm.detach(), dtt, rtol=1e-5)
            w = np.random.default_rng(0).standard_normal(dm.shape)
            (dm * mg.tensor(w, dtype=dt)).sum().backward()
            (dtt * torch.tensor(w, dtype=dtt.dtype)).sum().backward()
            for x, y in zip(m, t):
                _same(x.grad, y.grad, rtol=1e-5)


# ---- the non-differentiable ones on the GPU stand-in -----------------------------------------
def test_counts_searches_and_splits_stay_on_the_gpu_stand_in(spy):
    s = mg.tensor([1.0, 2.0, 2.0, 3.0], device=spy)
    x = mg.tensor([[0.5, 2.0], [NAN, 9.0]], device=spy)
    made = [mg.searchsorted(s, x), mg.searchsorted(s, 2.0, right=True), mg.bucketize(x, s),
            mg.searchsorted(mg.tensor([[3.0, 1.0]] * 2, device=spy), x,
                            sorter=mg.tensor([[1, 0]] * 2, device=spy)),
            mg.bincount(mg.tensor([0, 2, 2], device=spy)), x.count_nonzero(1),
            mg.bincount(mg.tensor([0, 2, 2], device=spy), mg.tensor([1.0, 2.0, 3.0],
                                                                    device=spy)),
            *x.tensor_split(mg.tensor([1], device=spy), 1), *mg.cummax(x, 1),
            mg.kthvalue(x, 2)[1]]
    for t in made:
        assert t.device == spy and t._data.__class__.__name__ == "SpyArray", repr(t)
    assert made[0].tolist() == [[0, 1], [4, 4]] and made[1].tolist() == 3
    assert made[4].tolist() == [1, 0, 2] and made[6].tolist() == [1.0, 0.0, 5.0]


# ---- bad input: what was wrong and what is valid --------------------------------------------
_S = mg.tensor([1.0, 2.0])
ERRORS = [
    (lambda: mg.polygamma(-1, _S), ValueError, r"polygamma: n .* non-negative int, got -1"),
    (lambda: mg.polygamma(1.5, _S), ValueError, r"polygamma: n .* non-negative int"),
    (lambda: mg.lgamma([1.0]), TypeError, r"expected a Tensor, got list"),
    (lambda: mg.xlogy(1.0, 2.0), TypeError, r"xlogy: at least one of input and other must be"),
    (lambda: mg.xlogy(_S, "a"), TypeError, r"xlogy: other must be a tensor or a number, got "
                                           r"str"),
    (lambda: _S.logit(eps="a"), TypeError, r"logit: eps must be a number"),
    (lambda: _S.logcumsumexp(0.5), TypeError, r"logcumsumexp: dim must be an int, got 0.5"),
    (lambda: mg.tensor([1, 2]).logcumsumexp(0), TypeError,
     r"logcumsumexp: not implemented for int64 tensors .*\.float\(\)"),
    (lambda: _S.logcumsumexp(1), IndexError, r"logcumsumexp: dim 1 out of range"),
    (lambda: _S.cummax(2), IndexError, r"cummax: dim 2 out of range .*valid: -1..0"),
    (lambda: _S.cummin(None), TypeError, r"cummin: dim must be an int, got None"),
    (lambda: mg.tensor([1, 2]).nanmean(), TypeError,
     r"nanmean: expected a floating-point tensor, got int64"),
    (lambda: _S.nansum((0, 0)), ValueError, r"nansum: dim \(0, 0\) names a dim more than once"),
    (lambda: _S.count_nonzero(1), IndexError, r"count_nonzero: dim 1 out of range"),
    (lambda: mg.var_mean(mg.tensor([1, 2])), TypeError,
     r"var_mean: expected a floating-point tensor, got int64"),
    (lambda: mg.std_mean(_S, unbiased=True, correction=0), TypeError,
     r"std_mean: give unbiased or correction, not both"),
    (lambda: mg.zeros(0).aminmax(), ValueError, r"aminmax: cannot take the extremes over an "
                                                r"empty dim \(shape \(0,\), dim=None\)"),
    (lambda: mg.zeros(0, 3).aminmax(dim=0), ValueError, r"aminmax: .*empty dim"),
    (lambda: mg.zeros(2, 3).aminmax(dim=(0, 1)), TypeError, r"aminmax: dim must be an int"),
    (lambda: _S.kthvalue(3), ValueError, r"kthvalue: k must be an int in \[1, 2\] .*got 3"),
    (lambda: _S.kthvalue(0), ValueError, r"kthvalue: k must be an int in \[1, 2\]"),
    (lambda: _S.kthvalue(1, 1), IndexError, r"kthvalue: dim 1 out of range"),
    (lambda: mg.zeros(2, 3).take_along_dim(mg.tensor([0]), 1), ValueError,
     r"take_along_dim: input and indices must have the same number of dims, got 2"),
    (lambda: mg.zeros(2, 3).take_along_dim(mg.tensor([[0.5]]), 1), TypeError,
     r"take_along_dim: indices must be a tensor of integers"),
    (lambda: mg.zeros(2, 3).take_along_dim(mg.tensor([[3]]), 1), IndexError,
     r"take_along_dim: indices must lie in \[0, 3\) .*got values from 3 to 3"),
    (lambda: mg.zeros(2, 3).take_along_dim(mg.tensor([[-1]]), 1), IndexError,
     r"take_along_dim: indices must lie in \[0, 3\)"),
    (lambda: mg.zeros(2, 3).take_along_dim(mg.zeros(3, 1, dtype=mg.int64), 1), ValueError,
     r"take_along_dim: shapes \(2, 1\) and \(3, 1\) do not broadcast"),
    (lambda: mg.bincount(mg.tensor([-1, 1])), ValueError,
     r"bincount: input must hold non-negative integers, got -1"),
    (lambda: mg.bincount(_S), ValueError, r"bincount: input must be a 1-D tensor of "
                                          r"non-negative integers, got shape \(2,\) of float"),
    (lambda: mg.bincount(mg.tensor([[1]])), ValueError, r"bincount: input must be a 1-D"),
    (lambda: mg.bincount(mg.tensor([True])), ValueError, r"bincount: .* of bool"),
    (lambda: mg.bincount(mg.tensor([1]), minlength=-1), ValueError, r"minlength"),
    (lambda: mg.bincount(mg.tensor([1, 2]), mg.tensor([1.0])), ValueError,
     r"bincount: weights must be 1-D, one per element of input \(shape \(2,\)\), got shape "
     r"\(1,\)"),
    (lambda: mg.bincount(mg.tensor([1, 2]), [1.0, 2.0]), TypeError,
     r"bincount: weights must be a Tensor \(or None\), got list"),
    (lambda: mg.searchsorted(_S, _S, side="middle"), ValueError,
     r"searchsorted: side must be 'left' or 'right', got 'middle'"),
    (lambda: mg.searchsorted(_S, _S, right=True, side="left"), ValueError,
     r"searchsorted: side='left' and right=True contradict"),
    (lambda: mg.searchsorted(mg.tensor(1.0), _S), ValueError,
     r"searchsorted: sorted_sequence must have at least 1 dim"),
    (lambda: mg.searchsorted(mg.zeros(2, 2), mg.zeros(3, 1)), ValueError,
     r"searchsorted: an N-D sorted_sequence needs input of its number of dims and the same "
     r"leading dims .*\(2, 2\) .*\(3, 1\)"),
    (lambda: mg.searchsorted(mg.zeros(2, 2), 1.0), ValueError,
     r"searchsorted: a number as input needs a 1-D sorted_sequence, got shape \(2, 2\)"),
    (lambda: mg.searchsorted(_S, [1.0]), TypeError, r"searchsorted: input must be a Tensor "
                                                    r"or a number, got list"),
    (lambda: mg.searchsorted([1.0], _S), TypeError, r"searchsorted: sorted_sequence must be"),
    (lambda: mg.searchsorted(_S, _S, sorter=mg.tensor([0])), ValueError,
     r"searchsorted: sorter must have the shape of sorted_sequence \(2,\), got \(1,\)"),
    (lambda: mg.searchsorted(_S, _S, sorter=mg.tensor([0, 5])), IndexError,
     r"searchsorted: sorter values must lie in \[0, 2\)"),
    (lambda: mg.searchsorted(_S, _S, sorter=_S), TypeError,
     r"searchsorted: sorter must be a tensor of integers"),
    (lambda: mg.bucketize(_S, mg.zeros(2, 2)), ValueError,
     r"bucketize: boundaries must be a 1-D tensor, got \(2, 2\)"),
    (lambda: mg.broadcast_tensors(_S, mg.zeros(3)), ValueError,
     r"broadcast_tensors: shapes \(2,\) and \(3,\) do not broadcast"),
    (lambda: mg.broadcast_tensors([_S]), TypeError,
     r"broadcast_tensors: argument 0 is a list, not a Tensor"),
    (lambda: mg.tensor(1.0).tensor_split(1), ValueError,
     r"tensor_split: needs a tensor with at least 1 dim"),
    (lambda: _S.tensor_split(0), ValueError, r"tensor_split: the number of pieces must be "
                                             r"positive, got 0"),
    (lambda: _S.tensor_split(1.5), TypeError, r"tensor_split: indices_or_sections must be an "
                                              r"int .* or a list of ints"),
    (lambda: _S.tensor_split(mg.tensor([[1]])), TypeError, r"tensor_split: a tensor of "
                                                           r"indices_or_sections must .* 0-d"),
    (lambda: _S.tensor_split(mg.tensor([1.0])), TypeError, r"tensor_split: .*integers"),
    (lambda: _S.tensor_split(2, sections=2), TypeError, r"tensor_split: give one of "
                                                        r"indices_or_sections, indices= or"),
    (lambda: mg.zeros(2, 3).rot90(1, [0]), ValueError,
     r"rot90: dims must name two dims \(the plane\), got \(0,\)"),
    (lambda: mg.zeros(2, 3).rot90(1, [0, -2]), ValueError, r"rot90: dims must be two "
                                                           r"different dims"),
    (lambda: mg.zeros(3).rot90(), ValueError, r"rot90: needs a tensor with at least 2 dims"),
    (lambda: mg.zeros(2, 3).rot90(1, (0, 2)), IndexError, r"rot90: dim 2 out of range"),
    (lambda: mg.zeros(2, 3).rot90(1.5), TypeError, r"rot90: k must be an int, got 1.5"),
    (lambda: _S.diag_embed(0, 0, -2), ValueError, r"diag_embed: dim1 and dim2 name the same "
                                                  r"dim \(0 and -2"),
    (lambda: _S.diag_embed(0, 0, 5), IndexError, r"diag_embed: dim 5 out of range"),
    (lambda: _S.diag_embed(0.5), TypeError, r"diag_embed: offset must be an int"),
    (lambda: mg.cdist(_S, mg.zeros(1, 2)), ValueError,
     r"cdist: x1 must have at least 2 dims \(rows, columns\), got shape \(2,\)"),
    (lambda: mg.cdist(mg.zeros(1, 2), mg.zeros(1, 3)), ValueError,
     r"cdist: x1 and x2 must have the same number of columns .*\(1, 2\) and \(1, 3\)"),
    (lambda: mg.cdist(mg.zeros(1, 2), mg.zeros(1, 2), p=-1), ValueError,
     r"cdist: p must be a non-negative number \(or inf\), got -1"),
    (lambda: mg.cdist(mg.zeros(1, 2), mg.zeros(1, 2), p=NAN), ValueError,
     r"cdist: p must be a non-negative number"),
    (lambda: mg.cdist(mg.zeros(1, 2), mg.zeros(1, 2), compute_mode="x"), ValueError,
     r"cdist: compute_mode must be one of"),
    (lambda: mg.cdist(mg.zeros(1, 2, dtype=mg.int64), mg.zeros(1, 2)), TypeError,
     r"cdist: x1 must be float32 or float64 \(as PyTorch\), got int64"),
    (lambda: mg.cdist(mg.zeros(1, 2), mg.zeros(1, 2, dtype=mg.float64)), TypeError,
     r"cdist: x1 and x2 must share a dtype, got float32 and float64"),
    (lambda: mg.cdist(mg.zeros(2, 1, 2), mg.zeros(3, 1, 2)), ValueError,
     r"cdist: shapes \(2,\) and \(3,\) do not broadcast"),
]


@pytest.mark.parametrize("call, error, message", ERRORS,
                         ids=[m.split(":")[0].replace("\\", "") + f"-{i}"
                              for i, (_, _, m) in enumerate(ERRORS)])
def test_bad_input_says_what_is_valid(call, error, message):
    with pytest.raises(error, match=message):
        call()


def test_review_fixes_xlogy_dtypes_logit_float16_bounds_cdist_nan():
    """xlogy of two float dtypes computes in the wider (PyTorch: float32 for float16 with
    float32, float64 with float16); logit's float16 bounds are float16's (1 - 1e-6 is 1
    there, and 0.7 is not above 1 - 0.3); cdist's p = 0 count is NaN with a NaN, and both
    backward paths keep a NaN at p = 1 (PyTorch's values)."""
    h16 = mg.tensor(np.array([3.0], np.float16))
    got = mg.xlogy(h16, mg.tensor(np.array([1e-6], np.float32)))
    assert got.dtype == mg.float32 and abs(got.item() + 41.4465) < 1e-3
    got = mg.xlogy(mg.tensor(np.array([7e4])), mg.tensor(np.array([3.0], np.float16)))
    assert got.dtype == mg.float64 and abs(got.item() - 76902.86020677) < 1e-6
    x = mg.tensor(np.array([0.3, 0.7], np.float16), requires_grad=True)
    mg.logit(x, 0.3).sum().backward()
    assert (x.grad.numpy() > 4.7).all()                  # both inside [0.3, 1 - 0.3]
    assert mg.logit(mg.tensor(np.array([1.0, 0.0], np.float16)), 1e-6).numpy()[0] == np.inf
    a = np.array([[1.5, np.nan, -2.0]])
    assert np.isnan(mg.cdist(mg.tensor(a), mg.zeros(1, 3, dtype=mg.float64), 0.0).item())
    for create_graph in (False, True):
        t = mg.tensor(a, requires_grad=True)
        g, = mg.grad(mg.cdist(t, mg.zeros(1, 3, dtype=mg.float64), 1.0).sum(), t,
                     create_graph=create_graph)
        np.testing.assert_array_equal(g.detach().numpy(), [[1.0, np.nan, -1.0]])
