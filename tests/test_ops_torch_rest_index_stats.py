"""PyTorch's indexing and statistics that minigrad lacked (ops/index_more.py,
ops/statistics_more.py): take, argwhere, index_copy(_), index_put(_), masked_scatter(_),
scatter_reduce(_), index_fill; quantile, nanquantile, nanmedian, mode, cov, corrcoef,
dist, histc; and register_post_accumulate_grad_hook. The differentiable ones through the op
suite (vs torch in float32/float64, gradcheck + gradgradcheck, double backward vs torch)
and on the spy device; then values at ties, zeros and NaN, the in-place spellings, and the
errors."""
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
from op_helpers import (OpCase, as_list, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch, check_spy_matches_cpu)


def lib(x):
    """minigrad or torch, whichever x belongs to: one case function serves both."""
    if isinstance(x, mg.Tensor):
        return mg
    import torch
    return torch


def like(x, values, dtype=None):
    """A constant beside x (a minigrad or torch tensor): integers stay int64, bools bool."""
    a = np.asarray(values)
    if isinstance(x, mg.Tensor):
        return mg.tensor(a, dtype=dtype or (x.dtype if a.dtype.kind == "f" else None),
                         device=x.device)
    import torch
    return torch.tensor(a, dtype=dtype or (x.dtype if a.dtype.kind == "f" else None))


def with_nans(a, where):
    """a with NaN at the True places of `where` (a constant mask)."""
    return lib(a).where(like(a, where), like(a, math.nan), a)


IDX = [[0, 1, 0], [1, 1, 1]]                 # scatter_reduce's index: repeats in each row
NANS = np.array([[False, True, False, True, False], [True, True, False, True, True],
                 [False, False, False, False, False]])

CASES = [
    OpCase("take", lambda a: a.take(like(a, [[0, 5], [-1, 2]])), ((2, 3),)),
    OpCase("take_fn", lambda a: lib(a).take(a, like(a, [3, 3, 0])), ((2, 2),)),
    OpCase("index_copy", lambda a, s: a.index_copy(1, like(a, [2, 0]), s), ((2, 3), (2, 2))),
    OpCase("index_copy_fn", lambda a, s: lib(a).index_copy(a, 0, like(a, [1]), s),
           ((2, 3), (1, 3))),
    OpCase("index_put", lambda a, v: a.index_put((like(a, [0, 1, 0]), like(a, [1, 2, 2])),
                                                 v), ((2, 3), (3,))),
    OpCase("index_put_mask_bcast", lambda a, v: a.index_put((like(a, [True, False, True]),),
                                                            v), ((3, 2), (2,))),
    OpCase("index_put_accumulate", lambda a, v: lib(a).index_put(
        a, (like(a, [0, 1, 0, 0]), like(a, [1, 2, 1, -1])), v, accumulate=True),
        ((2, 3), (4,))),
    OpCase("masked_scatter", lambda a, s: a.masked_scatter(like(a, [True, False, True]), s),
           ((2, 3), (7,))),
    OpCase("masked_scatter_fn", lambda a, s: lib(a).masked_scatter(
        a, like(a, [[True], [False]]), s), ((2, 3), (2, 2))),
    OpCase("index_fill", lambda a: a.index_fill(1, like(a, [0, 2]), -1.5), ((2, 3),)),
    OpCase("index_fill_fn", lambda a: lib(a).index_fill(a, 0, like(a, 1), 2.0), ((2, 3),)),
] + [
    OpCase(f"scatter_reduce_{r}_{'self' if inc else 'noself'}", lambda a, s, r=r, inc=inc:
           a.scatter_reduce(1, like(a, IDX), s, r, include_self=inc), ((2, 3), (2, 3)),
           domain="nonzero")
    for r in ("sum", "prod", "mean", "amax", "amin") for inc in (True, False)
] + [
    OpCase("scatter_reduce_fn_dim0", lambda a, s: lib(a).scatter_reduce(
        a, 0, like(a, [[2, 0], [2, 2]]), s, "amax"), ((3, 2), (2, 2))),
    OpCase("quantile", lambda a: a.quantile(0.3, dim=1), ((3, 5),)),
    OpCase("quantile_all_keepdim", lambda a: lib(a).quantile(a, 0.75, keepdim=True),
           ((2, 3),)),
    OpCase("quantile_q_tensor", lambda a: a.quantile(like(a, [0.0, 0.4, 1.0]), 0, True),
           ((4, 2),)),
] + [
    OpCase(f"quantile_{i}", lambda a, i=i: a.quantile(like(a, [0.1, 0.5, 0.9]), -1,
                                                      interpolation=i), ((2, 6),))
    for i in ("lower", "higher", "midpoint", "nearest")
] + [
    OpCase("nanquantile", lambda a: with_nans(a, NANS).nanquantile(0.4, dim=1), ((3, 5),)),
    OpCase("nanquantile_fn", lambda a: lib(a).nanquantile(with_nans(a, NANS),
                                                          like(a, [0.2, 0.8])), ((3, 5),)),
    OpCase("nanmedian_dim", lambda a: tuple(with_nans(a, NANS).nanmedian(1)), ((3, 5),)),
    OpCase("nanmedian_dim_keepdim", lambda a: tuple(lib(a).nanmedian(a, 0, keepdim=True)),
           ((4, 3),)),
    OpCase("nanmedian_all", lambda a: with_nans(a, NANS[0]).nanmedian(), ((5,),)),
    OpCase("mode", lambda a: tuple(a.mode()), ((2, 4),)),
    OpCase("mode_fn_keepdim", lambda a: tuple(lib(a).mode(a, 0, keepdim=True)), ((3, 2),)),
    OpCase("cov", lambda a: a.cov(), ((3, 5),)),
    OpCase("cov_1d_biased", lambda a: lib(a).cov(a, correction=0), ((5,),)),
    OpCase("cov_weights", lambda a: lib(a).cov(a, fweights=like(a, [1, 2, 0, 3]),
                                               aweights=like(a, [0.5, 1.0, 2.0, 0.25])),
           ((2, 4),)),
    OpCase("cov_aweights", lambda a: a.cov(correction=2, aweights=like(a, [1.0, 2.0, 3.0,
                                                                             1.0])), ((3, 4),)),
    OpCase("corrcoef", lambda a: lib(a).corrcoef(a), ((3, 5),)),
    OpCase("dist", lambda a, b: a.dist(b), ((2, 3), (3,))),
] + [
    OpCase(f"dist_p{p}", lambda a, b, p=p: lib(a).dist(a, b, p), ((2, 3), (2, 3)))
    for p in (1, 3, math.inf)
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case, device):
    check_gradcheck(case, device)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_double_backward_vs_torch(case, device):
    check_double_backward_vs_torch(case, device)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_on_the_gpu_stand_in(case, spy):
    check_spy_matches_cpu(case, spy)


# ---- values where the op suite's random inputs do not go: ties, zeros, NaN --------------
def _both(fn, *arrays, grad=True):
    """fn on minigrad and on torch tensors (float64): outputs and gradients of Σ out·w."""
    torch = pytest.importorskip("torch")
    results = []
    for make in (lambda a: mg.tensor(a, dtype=mg.float64, requires_grad=grad),
                 lambda a: torch.tensor(a, dtype=torch.float64, requires_grad=grad)):
        xs = [make(a) for a in arrays]
        outs = as_list(fn(*xs))
        if grad:
            rng = np.random.default_rng(0)
            sum((o * like(o, rng.standard_normal(tuple(o.shape)))).sum() for o in outs
                if o.dtype in (mg.float64, torch.float64)).backward()
        results.append([np.asarray(o.detach().numpy()) for o in outs] +
                       ([x.grad.numpy() for x in xs] if grad else []))
    for m, t in zip(*results):
        np.testing.assert_allclose(m, t, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("reduce", ["prod", "amax", "amin", "mean", "sum"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_at_ties_and_zeros_as_torch(reduce, include_self):
    """Ties share amax's/amin's gradient evenly (self's too); prod's gradient with one zero
    among the members goes to that zero, with two to none."""
    x = [[1.0, 2.0, 2.0, 0.0], [3.0, 3.0, 3.0, 0.0]]
    src = [[2.0, 2.0, 0.0, 5.0], [3.0, 0.0, 3.0, 0.0]]
    if not include_self and reduce in ("amax", "amin"):
        x = [[1.0, 7.0, 2.0, 9.0], [4.0, 8.0, 3.0, 6.0]]     # see the test below
    _both(lambda a, s: a.scatter_reduce(1, like(a, [[0, 1, 0, 3], [1, 1, 1, 3]]), s, reduce,
                                        include_self=include_self), x, src)


def test_scatter_reduce_amax_without_self_shares_among_src_only():
    """With include_self=False self is no member where src reaches, so the ties of src
    share all of g. (PyTorch 2.13 counts self among the ties there too, when equal to the
    result, and hands it no share: part of g is lost.)"""
    x = mg.tensor([[2.0, 5.0]], requires_grad=True)
    src = mg.tensor([[2.0, 2.0]], requires_grad=True)
    out = x.scatter_reduce(1, mg.tensor([[0, 0]]), src, "amax", include_self=False)
    out.backward(mg.tensor([[1.0, 1.0]]))
    assert out.numpy().tolist() == [[2.0, 5.0]]
    assert x.grad.numpy().tolist() == [[0.0, 1.0]] and src.grad.numpy().tolist() == [[0.5, 0.5]]


@pytest.mark.parametrize("reduce", ["amax", "amin"])
@pytest.mark.parametrize("include_self", [True, False])
def test_scatter_reduce_gives_nan_gradients_to_a_nan_result_as_torch(reduce, include_self):
    """A NaN result equals none of its members: PyTorch's g / 0 hands each of them NaN
    (the gradient was 0, as if the NaN had not been reduced)."""
    nan = float("nan")
    x = mg.tensor([1.0, nan, 3.0, 2.0], requires_grad=True)
    src = mg.tensor([nan, 5.0, 3.0, 3.0, 7.0], requires_grad=True)
    out = x.scatter_reduce(0, mg.tensor([0, 0, 2, 2, 3]), src, reduce,
                           include_self=include_self)
    out.backward(mg.tensor([1.0, 2.0, 6.0, 4.0]))
    assert np.isnan(out.numpy()[:2]).all()
    gx, gs = x.grad.numpy(), src.grad.numpy()
    assert np.isnan(gs[:2]).all() and np.isnan(gx[1])     # x[1]: NaN, left as it is
    assert np.isnan(gx[0]) == include_self                 # a member only with self
    big = reduce == "amax"
    want_x3 = (0.0 if big else 4.0) if include_self else 0.0
    want_s = [2.0, 2.0, 4.0 if big else 0.0] if include_self else [3.0, 3.0, 4.0]
    assert gx[2:].tolist() == [2.0 if include_self else 0.0, want_x3]
    assert gs[2:].tolist() == want_s


def test_scatter_reduce_integers_as_torch():
    torch = pytest.importorskip("torch")
    x, src = np.arange(-3, 3).reshape(2, 3), np.array([[1, 2, -7], [4, 5, 6]])
    for reduce in ("sum", "prod", "mean", "amax", "amin"):
        for inc in (True, False):
            mine = mg.tensor(x).scatter_reduce(1, mg.tensor(IDX), mg.tensor(src), reduce,
                                               include_self=inc)
            theirs = torch.tensor(x).scatter_reduce(1, torch.tensor(IDX), torch.tensor(src),
                                                    reduce, include_self=inc)
            assert mine.dtype == mg.int64 and mine.numpy().tolist() == theirs.tolist(), \
                (reduce, inc)


def test_quantiles_and_medians_with_nan_and_ties_as_torch():
    a = [[1.0, math.nan, 3.0, 2.0, 2.0], [4.0, 4.0, 1.0, 4.0, 0.0]]
    for q in (0.0, 0.3, 0.5, 1.0):
        _both(lambda x: (x.quantile(q, 1), x.nanquantile(q, 1), x.nanquantile(q)), a)
    _both(lambda x: x.nanmedian(1).values, a)
    _both(lambda x: x[0].nanmedian(), a)          # ties share the gradient, as median's
    _both(lambda x: x[1].nanmedian(), a)
    nans = [[math.nan] * 4, [1.0, math.nan, 2.0, 5.0]]    # only NaNs: NaN
    for q in (0.0, 0.5, 1.0):
        _both(lambda x: (x.quantile(q, 1), x.nanquantile(q, 1), x.nanmedian(1).values,
                         x[0].nanmedian()), nans, grad=False)


def test_mode_picks_the_smallest_most_frequent_value_at_its_last_place_as_torch():
    a = [[3.0, 1.0, 1.0, 3.0, 2.0], [2.0, 2.0, 5.0, 5.0, 5.0], [7.0, 6.0, 5.0, 4.0, 3.0]]
    _both(lambda x: tuple(x.mode(1)), a)
    _both(lambda x: tuple(x.mode(0)), a)
    _both(lambda x: tuple(x.mode(-1, keepdim=True)), a)
    torch = pytest.importorskip("torch")
    ints = [1, 2, 2, 3, 2, 1, 1]
    assert [t.tolist() for t in mg.tensor(ints).mode()] == \
        [t.tolist() for t in torch.tensor(ints).mode()]


@pytest.mark.parametrize("kw", [dict(), dict(bins=4, min=0, max=3), dict(bins=7, min=1, max=1),
                                dict(bins=3, min=-1.0, max=2.5)])
def test_histc_as_torch(kw):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    values = np.concatenate([rng.uniform(-1, 4, 50), [0.0, 0.75, 1.5, 2.25, 3.0, 2.5, -1.0]])
    if kw.get("min", 0) != kw.get("max", 0):    # NaN is not counted (nor is it a range)
        values = np.append(values, math.nan)
    for dtype in ("float32", "float64"):
        mine = mg.tensor(values, dtype=dtype).histc(**kw)
        theirs = torch.histc(torch.tensor(values, dtype=getattr(torch, dtype)), **kw)
        assert mine.dtype == getattr(mg, dtype) and mine.numpy().tolist() == theirs.tolist()
    assert mg.histc(mg.tensor([1.0, 1.0]), bins=4).numpy().tolist() == [0, 0, 2, 0]
    assert mg.histc(mg.tensor([]), bins=2).numpy().tolist() == [0, 0]


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_histc_puts_values_on_bin_edges_where_torch_does(dtype):
    """The bins computed in the input's dtype, as torch's: in float64 a float32 0.7 on the
    edge of [0.1, 1.0]'s 3 bins fell in the middle bin, torch's in the last."""
    torch = pytest.importorskip("torch")
    values = np.concatenate([[0.1, 0.3, 0.7, 0.2, 0.9, 1.0, 0.6], np.arange(300) / 1000 + 0.1])
    for bins, lo, hi in ((3, 0.1, 1.0), (10, 0.1, 0.4), (100, 0.1, 0.4), (7, -0.3, 0.7)):
        mine = mg.tensor(values, dtype=dtype).histc(bins, lo, hi)
        theirs = torch.histc(torch.tensor(values, dtype=getattr(torch, dtype)), bins, lo, hi)
        assert mine.numpy().tolist() == theirs.tolist(), (bins, lo, hi)


def test_argwhere_as_torch():
    torch = pytest.importorskip("torch")
    a = np.array([[0.0, 1.5, 0.0], [2.0, 0.0, -1.0]])
    assert mg.tensor(a).argwhere().numpy().tolist() == torch.argwhere(torch.tensor(a)).tolist()
    for v in (0.0, 3.0):
        assert mg.argwhere(mg.tensor(v)).shape == tuple(torch.argwhere(torch.tensor(v)).shape)


def test_inplace_spellings_write_into_self_and_keep_the_gradient():
    def run(x, s):
        y = x * 1
        y.index_copy_(1, like(x, [2, 0]), s[:, :2])
        y.index_put_((like(x, [0, 0]), like(x, [1, 1])), s[0, :2], accumulate=True)
        y.masked_scatter_(like(x, [[False, True, True], [True, False, False]]), s[1])
        y.scatter_reduce_(1, like(x, IDX), s, "amax", include_self=False)
        return y
    _both(run, [[1.0, -2.0, 3.0], [0.5, 4.0, -1.0]], [[0.25, 1.5, -3.0], [2.0, -0.5, 1.25]])
    x = mg.zeros(2, 3)
    assert x.index_put_((mg.tensor([1]),), mg.tensor(2.0)) is x
    assert x.numpy().tolist() == [[0, 0, 0], [2, 2, 2]] and x._version > 0


def test_cov_warns_without_degrees_of_freedom_as_torch():
    torch = pytest.importorskip("torch")
    with pytest.warns(RuntimeWarning, match="degrees of freedom"), np.errstate(invalid="ignore"):
        mine = mg.cov(mg.ones(2, 1))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        theirs = torch.cov(torch.ones(2, 1))
    np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    assert mg.cov(mg.tensor([1, 2, 4])).dtype == mg.float32          # integers: as floats
    assert mg.corrcoef(mg.tensor([1.0, 2.0, 4.0])).item() == 1.0


def test_index_put_with_a_0d_bool_index_as_torch():
    """A 0-d mask is a new dim of size 1 (True: all of x) or 0 (False: none); it used to
    crash in NumPy's nonzero."""
    x = mg.arange(6.0).reshape(2, 3)
    assert x.index_put((mg.tensor(True),), mg.tensor(-1.0)).numpy().tolist() == [[-1.0] * 3] * 2
    assert x.index_put((mg.tensor(False),), mg.tensor(-1.0)).numpy().tolist() == \
        x.numpy().tolist()
    assert x.index_put((mg.tensor([1]), mg.tensor(True)), mg.tensor([7.0, 8.0, 9.0])) \
        .numpy().tolist() == [[0.0, 1.0, 2.0], [7.0, 8.0, 9.0]]
    assert mg.tensor(3.0).index_put((mg.tensor(True),), mg.tensor(1.0)).item() == 1.0
    v = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x.index_put((mg.tensor(True),), v, accumulate=True)
    assert y.numpy().tolist() == [[1.0, 3.0, 5.0], [4.0, 6.0, 8.0]]
    y.sum().backward()
    assert v.grad.numpy().tolist() == [2.0, 2.0, 2.0]


def test_quantile_of_a_0d_tensor_with_keepdim_keeps_no_dim_as_torch():
    x = mg.tensor(3.0)
    assert x.quantile(0.5, dim=0, keepdim=True).shape == ()          # was (1,)
    assert x.nanquantile(0.5, dim=-1, keepdim=True).shape == ()
    assert x.quantile(mg.tensor([0.2, 0.5]), dim=0, keepdim=True).shape == (2,)
    assert x.quantile(0.5, keepdim=True).shape == ()


def test_cov_takes_the_dtype_of_wider_aweights_as_torch():
    """float32 observations weighed by float64 aweights: a float64 result (it was float32),
    each gradient back in its input's dtype."""
    torch = pytest.importorskip("torch")
    x = np.array([[1.0, 2.5, 0.5, 4.0], [2.0, -1.0, 0.0, 3.0]])
    aw, fw = np.array([0.5, 1.0, 2.0, 0.25]), np.array([1, 2, 1, 3])
    a = mg.tensor(x, dtype=mg.float32, requires_grad=True)
    w = mg.tensor(aw, dtype=mg.float64, requires_grad=True)
    mine = mg.cov(a, fweights=mg.tensor(fw), aweights=w)
    theirs = torch.cov(torch.tensor(x, dtype=torch.float32), fweights=torch.tensor(fw),
                       aweights=torch.tensor(aw))
    assert mine.dtype == mg.float64 and theirs.dtype == torch.float64
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6)
    mine.sum().backward()
    assert a.grad.dtype == mg.float32 and w.grad.dtype == mg.float64


@pytest.mark.parametrize("fn, error, match", [
    (lambda: mg.take(mg.ones(2, 3), mg.tensor([6])), IndexError, "out of range"),
    (lambda: mg.take(mg.ones(2, 3), mg.tensor([0.0])), TypeError, "integers"),
    (lambda: mg.ones(2, 3).index_copy(1, mg.tensor([2, 0]), mg.ones(2, 3)), ValueError,
     "one slice per index"),
    (lambda: mg.ones(2, 3).index_copy(1, mg.tensor([3, 0]), mg.ones(2, 2)), IndexError,
     r"must lie in \[0, 3\)"),
    (lambda: mg.ones(2, 3).index_copy(1, mg.tensor([2, 0]), mg.ones(2, 2, dtype=mg.float64)),
     TypeError, "dtype"),
    (lambda: mg.ones(2, 3).index_copy(1, mg.tensor([[2, 0]]), mg.ones(2, 2)), IndexError,
     "1-D"),
    (lambda: mg.ones(2, 3).index_put((mg.tensor([0, 2]),), mg.tensor(5.0)), IndexError,
     "out of range"),
    (lambda: mg.ones(2, 3).index_put((mg.tensor([0, 1]),), mg.ones(4)), ValueError,
     "broadcast"),
    (lambda: mg.ones(2, 3).index_put(mg.tensor([0, 1]), mg.tensor(5.0)), TypeError, "tuple"),
    (lambda: mg.ones(2, 3).index_put((mg.tensor([0]),), mg.tensor(5.0, dtype=mg.float64)),
     TypeError, "dtype"),
    (lambda: mg.ones(2, 3).masked_scatter(mg.tensor([True, False, True]), mg.ones(3)),
     ValueError, "fewer"),
    (lambda: mg.ones(2, 3).masked_scatter(mg.tensor([1, 0, 1]), mg.ones(9)), TypeError,
     "bool"),
    (lambda: mg.ones(3).masked_scatter_(mg.ones(2, 3, dtype=mg.bool), mg.ones(9)), ValueError,
     "shape"),
    (lambda: mg.ones(2, 3).scatter_reduce(1, mg.tensor(IDX), mg.ones(2, 3), "max"),
     ValueError, "amax"),
    (lambda: mg.ones(2, 3).scatter_reduce(1, mg.tensor(IDX), mg.ones(2, 3, dtype=mg.float64),
                                          "sum"), TypeError, "dtype"),
    (lambda: mg.ones(2, 3).quantile(1.5), ValueError, r"\[0, 1\]"),
    (lambda: mg.ones(2, 3).quantile(mg.tensor([0.5], dtype=mg.float64)), TypeError, "match"),
    (lambda: mg.arange(4).quantile(0.5), TypeError, "float"),
    (lambda: mg.ones(0).quantile(0.5), ValueError, "empty"),
    (lambda: mg.ones(3).quantile(0.5, interpolation="foo"), ValueError, "linear"),
    (lambda: mg.ones(3).quantile(mg.ones(2, 2) * 0.5), ValueError, "1-D"),
    (lambda: mg.ones(2, 0).nanmedian(1), ValueError, "size 0"),
    (lambda: mg.ones(2, 0).mode(1), ValueError, "size 0"),
    (lambda: mg.cov(mg.ones(2, 2, 2)), ValueError, "two or fewer"),
    (lambda: mg.cov(mg.ones(2, 3), fweights=mg.ones(3)), TypeError, "integer"),
    (lambda: mg.cov(mg.ones(2, 3), fweights=mg.tensor([1, -2, 3])), ValueError, "negative"),
    (lambda: mg.cov(mg.ones(2, 3), aweights=mg.tensor([1, 2, 3])), TypeError, "floating"),
    (lambda: mg.cov(mg.ones(2, 3), aweights=mg.tensor([1.0, -2, 3])), ValueError, "negative"),
    (lambda: mg.cov(mg.ones(2, 3), aweights=mg.tensor([1.0, 2])), ValueError, "one weight"),
    (lambda: mg.cov(mg.ones(2, 3), fweights=mg.tensor([0, 0, 0])), RuntimeError, "sum to zero"),
    (lambda: mg.cov(mg.ones(2, 3), aweights=mg.zeros(3)), RuntimeError, "sum to zero"),
    (lambda: mg.histc(mg.tensor([1, 2]), bins=3), TypeError, "floating"),
    (lambda: mg.histc(mg.tensor([1.0, 2.0]), bins=4, min=3, max=1), ValueError, "larger"),
    (lambda: mg.histc(mg.tensor([1.0, 2.0]), bins=0), ValueError, "positive"),
    (lambda: mg.histc(mg.tensor([1.0, math.inf]), bins=3), ValueError, "finite"),
    (lambda: mg.histc(mg.tensor([1.0, math.nan]), bins=3), ValueError, "finite"),
    (lambda: mg.dist(mg.ones(2), mg.ones(2), "fro"), TypeError, "number"),
])
def test_bad_arguments_raise_clear_errors(fn, error, match):
    with pytest.raises(error, match=match):
        fn()


# ---- register_post_accumulate_grad_hook --------------------------------------------------
def test_post_accumulate_grad_hook_sees_the_accumulated_grad_as_torch():
    """Called with the tensor once its .grad holds this backward's sum (after register_hook's
    change), by backward() only: mg.grad accumulates nothing."""
    torch = pytest.importorskip("torch")
    seen = {"mg": [], "torch": []}
    for name, t in (("mg", mg.tensor([1.0, 2.0], requires_grad=True)),
                    ("torch", torch.tensor([1.0, 2.0], requires_grad=True))):
        t.register_post_accumulate_grad_hook(lambda p, k=name: seen[k].append(
            p.grad.numpy().tolist()))
        t.register_hook(lambda g: g * 10)
        (t * t).sum().backward()
        (t * 2).sum().backward()
        (torch.autograd.grad if name == "torch" else mg.grad)((t * 3).sum(), t)
    assert seen["mg"] == seen["torch"] == [[20.0, 40.0], [40.0, 60.0]]


def test_post_accumulate_grad_hook_can_step_the_parameter_and_be_removed():
    w = mg.tensor([1.0, 2.0], requires_grad=True)

    def step(p):                                  # an optimiser step inside backward
        with mg.no_grad():
            p -= 0.5 * p.grad
        p.grad = None
    handle = w.register_post_accumulate_grad_hook(step)
    (w * w).sum().backward()
    assert w.numpy().tolist() == [0.0, 0.0] and w.grad is None
    handle.remove()
    (w + 1).sum().backward()
    assert w.grad.numpy().tolist() == [1.0, 1.0]


def test_post_accumulate_grad_hook_errors_as_torch():
    with pytest.raises(RuntimeError, match="does not require grad"):
        mg.ones(2).register_post_accumulate_grad_hook(lambda p: None)
    with pytest.raises(RuntimeError, match="leaf"):
        (mg.ones(2, requires_grad=True) * 2).register_post_accumulate_grad_hook(lambda p: 0)
    t = mg.ones(2, requires_grad=True)
    with pytest.raises(TypeError, match="function"):
        t.register_post_accumulate_grad_hook(5)
    t.register_post_accumulate_grad_hook(lambda p: 5)
    with pytest.raises(TypeError, match="return None"):
        t.sum().backward()


def test_post_accumulate_grad_hooks_go_with_their_tensor():
    from minigrad.grad_hooks import _POST_ACCUMULATE
    before = len(_POST_ACCUMULATE)
    t = mg.ones(2, requires_grad=True)
    t.register_post_accumulate_grad_hook(lambda p: None)
    assert len(_POST_ACCUMULATE) == before + 1
    del t
    assert len(_POST_ACCUMULATE) == before
