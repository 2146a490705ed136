"""torch's remaining top-level functions as mg.X (ops/torch_extra*.py, ops/calculus.py,
ops/shape_extra.py, ops/matmul.py's addmv kin, creation_extra.py, draws.py, dtypes.py and
the aliases in minigrad/__init__.py): the differentiable ones through the op suite (values,
dtypes and gradients vs torch in float32/float64, float64 gradcheck and gradgradcheck,
second derivatives vs torch), the rest's values vs torch, the new array code on the spy
device (the stand-in for CuPy), the Tensor methods and in-place twins, and the errors."""
import array
import math

import numpy as np
import pytest

import minigrad as mg
from op_helpers import (OpCase, as_list, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch)

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None


def lib(x):
    """The library x belongs to: the same case runs on both."""
    return mg if isinstance(x, mg.Tensor) else torch


def const(x, values):
    """A constant beside x: int64 for integer values, else in x's dtype."""
    dtype = None if np.asarray(values).dtype.kind == "i" else x.dtype
    if isinstance(x, mg.Tensor):
        return mg.tensor(values, dtype=dtype, device=x.device)
    return torch.tensor(values, dtype=dtype)


COORDS = [0.0, 1.0, 3.0, 4.5, 5.0]


def C(name, fn, *shapes, domain="real", gradgrad=True):
    return OpCase(name, fn, shapes, domain=domain, gradgrad=gradgrad)


CASES = [
    # the aliases of Tensor methods, and rsub, clamp_min/max, concat
    C("absolute", lambda x: lib(x).absolute(x), (2, 3), domain="nonzero"),
    C("negative", lambda x: lib(x).negative(x), (2, 3)),
    C("multiply", lambda a, b: lib(a).multiply(a, b), (2, 3), (3,)),
    C("subtract", lambda a, b: lib(a).subtract(a, b, alpha=2), (2, 3), (3,)),
    C("reciprocal", lambda x: lib(x).reciprocal(x), (2, 3), domain="nonzero"),
    C("rsub", lambda a, b: lib(a).rsub(a, b, alpha=2), (2, 3), (3,)),
    C("rsub_number", lambda a: lib(a).rsub(a, 1.5), (2, 3)),
    C("clamp_min_max", lambda x: (lib(x).clamp_min(x, 0.3), lib(x).clamp_max(x, -0.2)),
      (2, 3)),
    C("concat", lambda a, b: (lib(a).concat([a, b], dim=1),
                              lib(a).concatenate([a, b], axis=1)), (2, 3), (2, 1)),
    # stacking and combining
    C("atleast", lambda a, b, c: (lib(a).atleast_1d(a), lib(a).atleast_2d(b),
                                  *lib(a).atleast_3d(a, b, c)), (), (3,), (2, 3)),
    C("column_row_dstack", lambda a, b: (lib(a).column_stack([a, b]),
                                         lib(a).row_stack([a, b.T]),
                                         lib(a).dstack([a, b[:, 0]])), (3,), (3, 2)),
    C("block_diag", lambda a, b, c: lib(a).block_diag(a, b, c), (2, 3), (3,), ()),
    C("cartesian_prod", lambda a, b: lib(a).cartesian_prod(a, b), (3,), (2,)),
    C("combinations", lambda x: (lib(x).combinations(x), lib(x).combinations(
        x, 3, with_replacement=True)), (4,)),
    C("msort", lambda x: lib(x).msort(x), (3, 4)),
    C("adjoint", lambda x: lib(x).adjoint(x), (2, 3, 4)),
    C("real_conj", lambda x: (lib(x).real(x) * 2, lib(x).conj(x) * 3), (2, 3)),
    C("angle", lambda x: lib(x).angle(x), (2, 3), domain="nonzero", gradgrad=False),
    # integration and differentiation of samples
    C("trapezoid", lambda y: (lib(y).trapezoid(y), lib(y).trapezoid(y, dx=0.5, dim=0),
                              lib(y).trapz(y, dx=2)), (3, 5)),
    C("trapezoid_x", lambda y, x: lib(y).trapezoid(y, x), (3, 5), (5,)),
    C("trapezoid_x_nd", lambda y: lib(y).trapezoid(y, const(y, [COORDS, COORDS[::-1]]),
                                                    dim=1), (2, 5)),
    C("cumulative_trapezoid", lambda y: lib(y).cumulative_trapezoid(
        y, const(y, COORDS), dim=-1), (3, 5)),
    C("gradient", lambda x: lib(x).gradient(x), (4, 5)),
    C("gradient_spacing", lambda x: lib(x).gradient(x, spacing=[2.0, 0.5], edge_order=2),
      (4, 5)),
    C("gradient_coords", lambda x: lib(x).gradient(x, spacing=[const(x, COORDS)], dim=1) +
      lib(x).gradient(x, spacing=[const(x, COORDS)], dim=-1, edge_order=2), (3, 5)),
    # writing one part of a tensor
    C("select_scatter", lambda a, s: lib(a).select_scatter(a, s, 0, -1), (2, 3), (3,)),
    C("slice_scatter", lambda a, s: lib(a).slice_scatter(a, s, 1, 1, None, 2), (3, 5),
      (3, 2)),
    C("diagonal_scatter", lambda a, s: lib(a).diagonal_scatter(a, s, 1, 0, 2), (3, 2, 4),
      (2, 3)),
    C("put", lambda a, s: lib(a).put(a, const(a, [0, -1, 4]), s), (2, 3), (3,)),
    C("put_accumulate", lambda a, s: lib(a).put(a, const(a, [[0, 5], [0, 2]]), s,
                                                accumulate=True), (2, 3), (2, 2)),
    # the rest of the math
    C("renorm", lambda x: (lib(x).renorm(x, 2, 0, 1.0), lib(x).renorm(x, 1, 1, 2.0)), (3, 4)),
    C("frexp", lambda x: tuple(lib(x).frexp(x)), (2, 3), domain="nonzero"),
    C("nextafter", lambda a, b: lib(a).nextafter(a, b), (2, 3), (3,), gradgrad=False),
    C("i0", lambda x: lib(x).i0(x), (2, 3)),
    C("i0_at_0", lambda x: lib(x).i0(x * 0), (3,)),
    C("igamma", lambda x: (lib(x).igamma(const(x, [0.5, 1.5, 3.0]), x),
                           lib(x).igammac(const(x, [0.7, 1.0, 2.5]), x)), (2, 3),
      domain="positive"),
    C("mvlgamma", lambda x: lib(x).mvlgamma(x + 2.5, 3), (2, 3), domain="positive"),
    C("pdist", lambda x: (lib(x).pdist(x), lib(x).pdist(x, 1), lib(x).pdist(x, 3),
                          lib(x).pdist(x, 0.5)), (4, 3)),
    # the matmul family
    C("addmv", lambda i, m, v: lib(i).addmv(i, m, v, beta=0.5, alpha=2), (2,), (2, 3), (3,)),
    C("addr", lambda i, a, b: lib(i).addr(i, a, b, alpha=2), (2, 3), (2,), (3,)),
    C("addbmm", lambda i, a, b: lib(i).addbmm(i, a, b, beta=0.5), (2, 3), (4, 2, 5),
      (4, 5, 3)),
    C("baddbmm", lambda i, a, b: lib(i).baddbmm(i, a, b, beta=2, alpha=0.5), (3,), (4, 2, 5),
      (4, 5, 3)),
    C("chain_matmul_ger", lambda a, b, c: (lib(a).chain_matmul(a, b, c),
                                           lib(a).ger(a[:, 0], c[:, 0])), (2, 3), (3, 4),
      (4, 1)),
]
# index_reduce with every reduction, distinct values (no ties for amax/amin)
CASES += [C(f"index_reduce_{r}_{s}", lambda x, src, r=r, s=s: lib(x).index_reduce(
    x, 0, const(x, [0, 2, 0, 3]), src, r, include_self=s), (4, 2), (4, 2),
    domain="positive", gradgrad=r == "mean")
    for r in ("prod", "mean", "amax", "amin") for s in (True, False)]


@pytest.fixture(autouse=True)
def _quiet():
    import warnings
    with warnings.catch_warnings():      # torch's chain_matmul and index_reduce warn
        warnings.simplefilter("ignore")
        yield


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case, device):
    check_gradcheck(case, device)


# (torch has no second derivative of pdist, and its trigamma, mvlgamma's, is 4e-10 off where
# SciPy's is exact: both are checked by gradgradcheck)
@pytest.mark.parametrize("case", [c for c in CASES if c.gradgrad and c.name not in (
    "pdist", "mvlgamma")], ids=str)
def test_double_backward_vs_torch(case, device):
    check_double_backward_vs_torch(case, device)


# ---- the new array code on the spy device ------------------------------------------------
def _run(fn, arrays, device):
    xs = [mg.tensor(a, device=device, requires_grad=a.dtype.kind == "f") for a in arrays]
    outs = as_list(fn(*xs))
    graph = [o for o in outs if o.requires_grad]
    if graph:
        sum((o * o).sum() for o in graph).backward()
    return [o.numpy() for o in outs] + [x.grad.numpy() for x in xs if x.grad is not None]


_A = np.random.default_rng(5).uniform(-2, 2, (3, 4))
_P = np.random.default_rng(6).uniform(0.5, 2, (3, 4))
_I = np.array([[1, 1, 2], [2, 2, 1]])
SPY = [
    ("frexp", lambda x: tuple(mg.frexp(x)), [_A]),
    ("nextafter", lambda x: mg.nextafter(x, x * 0), [_A]),
    ("i0", lambda x: mg.i0(x), [_A]),
    ("igamma", lambda a, x: (mg.igamma(a.detach(), x), mg.igammac(a.detach(), x)), [_P, _P]),
    ("scatters", lambda x, s: (mg.select_scatter(x, s[0], 0, 1),
                               mg.slice_scatter(x, s[:, :2], 1, 0, None, 2),
                               mg.diagonal_scatter(x, s[0, :3], 0)), [_A, _P]),
    ("angle", lambda x: mg.angle(x), [_A]),
    ("put_index_reduce", lambda x, s: (
        mg.put(x, mg.tensor([0, -1], device=x.device), s[0, :2], accumulate=True),
        mg.index_reduce(x, 0, mg.tensor([2, 0, 2], device=x.device), s, "amax")), [_A, _P]),
    ("pdist_combinations_block_diag", lambda x: (mg.pdist(x), mg.combinations(x[0]),
                                                 mg.block_diag(x, x[0])), [_A]),
    ("isin_unravel_isreal", lambda x, i: (mg.isin(x, x[0]), mg.isin(i, 2, invert=True),
                                          *mg.unravel_index(i, (2, 2)), mg.isreal(x)),
     [_A, _I]),
    ("unique_consecutive", lambda i: mg.unique_consecutive(i, return_inverse=True,
                                                           return_counts=True), [_I]),
    ("unique_consecutive_dim", lambda i: mg.unique_consecutive(
        i, return_inverse=True, return_counts=True, dim=1), [_I]),
    ("histogram", lambda x: tuple(mg.histogram(x, 4)) + tuple(mg.histogram(
        x, mg.tensor([-2.0, 0.0, 1.0, 2.0], dtype=x.dtype, device=x.device),
        weight=x * x, density=True)), [_A]),
]


@pytest.mark.parametrize("fn, arrays", [s[1:] for s in SPY], ids=[s[0] for s in SPY])
def test_spy_matches_cpu(fn, arrays, spy):
    for got, expected in zip(_run(fn, arrays, spy), _run(fn, arrays, "cpu")):
        np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)


def test_factories_on_the_spy_device(spy):
    mg.manual_seed(0)
    for t in (mg.logspace(0, 2, 3, device=spy), mg.hann_window(4, device=spy),
              mg.kaiser_window(3, device=spy), mg.tril_indices(3, 3, device=spy),
              mg.scalar_tensor(2, device=spy), mg.asarray([1, 2], device=spy),
              mg.randint_like(mg.zeros(2, device=spy), 3),
              mg.binomial(mg.full((2,), 3.0, device=spy), mg.full((2,), 0.5, device=spy)),
              mg.poisson(mg.ones(2, device=spy))):
        assert t.device == spy


# ---- values vs torch: the functions outside the graph -------------------------------------
def _same(mine, theirs):
    mine, theirs = as_list(mine), as_list(theirs)
    assert len(mine) == len(theirs)
    for m, t in zip(mine, theirs):
        assert str(m.dtype) == str(t.dtype).replace("torch.", ""), (m.dtype, t.dtype)
        assert tuple(m.shape) == tuple(t.shape)
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-6, atol=1e-7)


def _both(fn):
    """fn(lib) for both libraries, compared."""
    _same(fn(mg), fn(torch))


NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("fn", [
    lambda L: L.isin(L.tensor([[1.0, NAN, 3.0]]), L.tensor([NAN, 1.0])),
    lambda L: L.isin(L.tensor([1, 2, 3]), L.tensor([1.0, 2.5]), invert=True),
    lambda L: L.isin(L.tensor([1, 2]), 2),
    lambda L: L.isin(2.0, L.tensor([1.0, 2.0])),
    lambda L: L.isin(L.tensor([1.0]), L.tensor([])),
    lambda L: L.unique_consecutive(L.tensor([1, 1, 2, 2, 1, 3]), return_inverse=True,
                                   return_counts=True),
    lambda L: L.unique_consecutive(L.tensor([[1.0, 1], [1, 1], [2, 3]]), return_counts=True,
                                   dim=0),
    lambda L: L.unique_consecutive(L.tensor([NAN, NAN, 1.0])),
    lambda L: L.unique_consecutive(L.tensor(3.0)),
    lambda L: L.unique_consecutive(L.zeros(0, 3), return_inverse=True, return_counts=True,
                                   dim=0),                  # no slices along dim
    lambda L: L.tensor([[3, 1], [2, 4]]).unique_consecutive(),
    lambda L: tuple(L.histogram(L.tensor([1.0, 2, 1, NAN, 9]), bins=4, range=(0.0, 3.0))),
    lambda L: tuple(L.histogram(L.tensor([1.0, 1, 1]), bins=2)),
    lambda L: tuple(L.histogram(L.tensor([]), bins=2)),
    lambda L: tuple(L.tensor([1.0, 2, 1]).histogram(L.tensor([0.0, 1, 2.5, 4]),
                                                    weight=L.tensor([1.0, 2, 4]),
                                                    density=True)),
    lambda L: L.tril_indices(3, 4, 1),
    lambda L: L.triu_indices(4, 3, -1, dtype=L.int32),
    lambda L: L.tril_indices(0, 3),
    lambda L: L.logspace(0, 2, 5, base=3.0),
    lambda L: L.logspace(0, 3, 4, base=2, dtype=L.int64),
    lambda L: L.logspace(-1, 1, 1, dtype=L.float64),
    lambda L: L.logspace(0.5, 2.5, 5, base=3, dtype=L.int64),     # start, end truncated
    lambda L: L.logspace(2.7, -1.2, 4, base=2.5, dtype=L.int32),
    lambda L: L.scalar_tensor(3),
    lambda L: L.scalar_tensor(True, dtype=L.float64),
    lambda L: L.frexp(L.tensor([0.0, 1.0, -3.0, INF, NAN, 1e-310], dtype=L.float64)),
    lambda L: L.frexp(L.tensor([0.1, -6e-8], dtype=L.float16)),
    lambda L: L.nextafter(L.tensor([1.0, 0.0, -1.0]), L.tensor([2.0, -1.0, -1.0])),
    lambda L: L.nextafter(L.tensor([1.0]), L.tensor([2.0], dtype=L.float64)),
    lambda L: L.angle(L.tensor([1, -2, 0])),
    lambda L: L.angle(L.tensor([1.0, -2.0, -0.0, NAN, -INF])),
    lambda L: L.isreal(L.tensor([1, 2])),
    lambda L: L.i0(L.tensor([0, 1, 2])),
    lambda L: L.mvlgamma(L.tensor([2, 3]), 2),
    lambda L: L.igamma(L.tensor([1.0, 2.0]), L.tensor([0.0, INF])),
    lambda L: L.igammac(L.tensor([1.0], dtype=L.float16), L.tensor([0.5], dtype=L.float16)),
    lambda L: L.trapezoid(L.tensor([1, 2, 4])),
    lambda L: L.trapezoid(L.tensor([1.0])),
    lambda L: L.cumulative_trapezoid(L.tensor([1, 2, 4])),
    lambda L: L.cumulative_trapezoid(L.tensor([1.0])),
    lambda L: L.gradient(L.tensor([1, 2, 4, 8])),
    lambda L: L.gradient(L.tensor([[1.0, 2, 4], [2, 5, 6]]), spacing=2, dim=(0, 1)),
    lambda L: L.combinations(L.tensor([1.0, 2, 3]), r=0),
    lambda L: L.combinations(L.tensor([1.0, 2, 3]), r=4),
    lambda L: L.block_diag(),
    lambda L: L.block_diag(L.tensor(1), L.tensor([2.0, 3.0]), L.ones(2, 2, dtype=L.int64)),
    # a 0-d block's dtype counts only where its category is higher, as torch.result_type's
    lambda L: L.block_diag(L.tensor(2.5, dtype=L.float64), L.ones(2, 2)),
    lambda L: L.block_diag(L.tensor(2, dtype=L.int64), L.tensor([1], dtype=L.int8)),
    lambda L: L.cartesian_prod(L.tensor([1, 2])),
    lambda L: L.atleast_1d([L.tensor(1), L.tensor([1, 2])]),
    lambda L: L.pdist(L.ones(1, 3)),
    lambda L: L.addr(L.ones(2, 3, dtype=L.int64), L.ones(2, dtype=L.int64),
                     L.ones(3, dtype=L.int64), alpha=2),
    lambda L: L.addmv(L.tensor(NAN), L.ones(2, 3), L.ones(3), beta=0),
    lambda L: L.chain_matmul(L.ones(2, 3)),
    lambda L: L.index_reduce(L.tensor([1, 2]), 0, L.tensor([0, 0]), L.tensor([3, 4]), "mean"),
    lambda L: L.put(L.zeros(2, 2, dtype=L.int64), L.tensor([3, 3]), L.tensor([1, 2]),
                    accumulate=True),
    lambda L: L.rsub(L.tensor([1, 2]), 5, alpha=2),
    lambda L: L.clamp_min(L.tensor([1, 2]), 1.5),
    lambda L: L.greater(L.tensor([1.0, 2.0]), 1.5),
    lambda L: (L.less(L.tensor([1, 2]), L.tensor([2, 2])), L.less_equal(L.tensor([1]), 1),
               L.greater_equal(L.tensor([1]), 2), L.not_equal(L.tensor([1.0]), 1)),
    lambda L: L.reciprocal(L.tensor([1, 2])),
] + [lambda L, w=w, p=p: getattr(L, w)(n, periodic=p, dtype=L.float64)
     for w in ("hann_window", "hamming_window", "blackman_window", "bartlett_window",
               "kaiser_window") for p in (True, False) for n in (0, 1, 2, 7)]
    + [lambda L: L.hamming_window(5, True, 0.5, 0.3), lambda L: L.kaiser_window(6, False, 3.0)],
    ids=lambda fn: "")
def test_values_vs_torch(torch, fn):
    import warnings
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _both(fn)


def test_unravel_index_as_torch():
    """(torch's answers written out: its unravel_index takes seconds to load)"""
    rows, cols = mg.unravel_index(mg.tensor([[4, -1], [7, 12]]), (3, 4))
    assert rows.tolist() == [[1, 2], [1, 0]] and cols.tolist() == [[0, 3], [3, 0]]
    assert rows.dtype == mg.int64
    (only,) = mg.unravel_index(mg.tensor(5), 3)
    assert only.shape == () and only.item() == 2


def test_result_type_and_can_cast_as_torch(torch):
    kinds = ("bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32",
             "float64")
    for a in kinds:
        for b in kinds:
            assert mg.can_cast(getattr(mg, a), getattr(mg, b)) == torch.can_cast(
                getattr(torch, a), getattr(torch, b)), (a, b)
    values = [True, 5, 2.5] + [(a, shape) for a in kinds for shape in ((), (2,))]

    def made(L, v):      # a number as it is, (dtype, shape) as ones of them
        return v if not isinstance(v, tuple) else L.ones(v[1], dtype=getattr(L, v[0]))
    for u in values:
        for v in values:
            if isinstance(u, tuple) or isinstance(v, tuple):
                assert str(mg.result_type(made(mg, u), made(mg, v))) == str(
                    torch.result_type(made(torch, u), made(torch, v))).replace("torch.", ""), \
                    (u, v)


def test_asarray_shares_or_copies_as_torch():
    x = mg.tensor([1.0, 2.0])
    assert mg.asarray(x) is x
    assert mg.asarray(x, copy=True) is not x
    assert mg.asarray(x, dtype=mg.float64).dtype == mg.float64
    a = np.array([1.0, 2.0])
    shared = mg.asarray(a)
    a[0] = 9
    assert shared.tolist() == [9.0, 2.0]                 # as torch.asarray: shared memory
    assert mg.asarray(a, copy=True).tolist() == [9.0, 2.0]
    assert mg.asarray([1, 2]).dtype == mg.int64 and mg.asarray(3.5).dtype == mg.float32
    assert mg.asarray([1.0, 2.0], requires_grad=True).requires_grad
    with pytest.raises(ValueError, match="copy=False"):
        mg.asarray(x, dtype=mg.float64, copy=False)
    with pytest.raises(ValueError, match="copy=False"):
        mg.asarray([1, 2], copy=False)


def test_frombuffer_shares_the_buffer(torch):
    buf = bytearray(b"\x01\x02\x03\x04")
    t = mg.frombuffer(buf, dtype=mg.int16)
    assert t.tolist() == torch.frombuffer(bytearray(buf), dtype=torch.int16).tolist()
    buf[0] = 9
    assert t.tolist()[0] == 9 + 2 * 256
    assert mg.frombuffer(buf, dtype=mg.uint8, count=2, offset=1).tolist() == [2, 3]
    assert mg.frombuffer(array.array("d", [1.5, 2.5]), dtype=mg.float64).tolist() == [1.5, 2.5]
    for kw, words in ((dict(dtype=mg.int16, offset=1), "multiple"),
                      (dict(dtype=mg.uint8, count=5), "need more"),
                      (dict(dtype=mg.uint8, offset=4), "offset")):
        with pytest.raises(ValueError, match=words):
            mg.frombuffer(buf, **kw)
    with pytest.raises(ValueError, match="must not be 0"):
        mg.frombuffer(bytearray(), dtype=mg.uint8)


def test_random_draws_binomial_poisson_randint_like():
    mg.manual_seed(0)
    count, prob = mg.tensor([5.0, 10.0, -3.0, 4.0]), mg.tensor([0.5, 1.0, 0.5, 0.0])
    k = mg.binomial(count, prob)
    assert k.dtype == mg.float32 and k.tolist()[1:] == [10.0, 0.0, 0.0]
    assert 0 <= k.tolist()[0] <= 5
    assert mg.binomial(count, prob, generator=3).tolist() == \
        mg.binomial(count, prob, generator=3).tolist()            # seeded: reproducible
    r = mg.poisson(mg.tensor([[0.0, 4.0]], dtype=mg.float64))
    assert r.dtype == mg.float64 and r.shape == (1, 2) and r.tolist()[0][0] == 0.0
    big = mg.poisson(mg.full((4000,), 3.0))
    assert abs(big.mean().item() - 3.0) < 0.15
    x = mg.zeros(2, 3)
    d = mg.randint_like(x, 2, 5)
    assert d.dtype == mg.float32 and d.shape == (2, 3) and set(d.tolist()[0]) <= {2, 3, 4}
    assert mg.randint_like(mg.zeros(3, dtype=mg.int64), 4).dtype == mg.int64
    with pytest.raises(TypeError, match="floating"):
        mg.binomial(mg.tensor([5]), prob[:1])
    with pytest.raises(ValueError, match=r"\[0, 1\]"):
        mg.binomial(count, prob + 1)
    with pytest.raises(ValueError, match=">= 0"):
        mg.poisson(mg.tensor([-1.0]))
    with pytest.raises(TypeError, match="floating"):
        mg.poisson(mg.tensor([1]))


def test_binomial_and_poisson_of_0d_tensors_and_refused_non_finite_values():
    # 0-d: NumPy's draw is a Python number there, not an array
    k = mg.binomial(mg.tensor(5.0), mg.tensor(1.0))
    r = mg.poisson(mg.tensor(0.0, dtype=mg.float64))
    assert (k.shape, k.dtype, k.item()) == ((), mg.float32, 5.0)
    assert (r.shape, r.dtype, r.item()) == ((), mg.float64, 0.0)
    # clear errors, not NumPy's "n < 0" and "lam value too large"
    for bad in (INF, NAN):
        with pytest.raises(ValueError, match="count must be finite"):
            mg.binomial(mg.tensor([2.0, bad]), mg.tensor([0.5, 0.5]))
    with pytest.raises(ValueError, match="must be finite"):
        mg.poisson(mg.tensor([1.0, INF]))


# ---- Tensor methods, in-place twins and in-place functions ---------------------------------
def test_tensor_methods_and_in_place_twins_as_torch(torch):
    a = np.random.default_rng(7).uniform(0.5, 2, (3, 3))
    x, t = mg.tensor(a), torch.tensor(a)
    v = np.array([1.0, 2.0, 3.0])
    for name, args in (("i0", ()), ("renorm", (2, 0, 1.0)), ("mvlgamma", (2,)),
                       ("igamma", ("x",)), ("igammac", ("x",)), ("nextafter", ("x",)),
                       ("addr", ("v", "v")),
                       ("put", ("i", "v")), ("index_reduce", (0, "i", "x", "amax"))):
        def make(L, y):
            return [y * 1 if s == "x" else L.tensor(v) if s == "v" else
                    L.tensor([2, 0, 1]) if s == "i" else s for s in args]
        _same(getattr(x, name)(*make(mg, x)), getattr(t, name)(*make(torch, t)))
        x2, t2 = mg.tensor(a), torch.tensor(a)
        getattr(x2, name + "_")(*make(mg, x2))
        getattr(t2, name + "_")(*make(torch, t2))
        _same(x2, t2)
    m = mg.tensor(a[:2])
    for name in ("msort", "adjoint", "angle", "frexp", "isreal"):
        _same(getattr(m, name)(), getattr(torch.tensor(a[:2]), name)())
    assert x.real is x and x.conj() is x
    _same(x.addbmm(mg.tensor(a)[None], mg.tensor(a)[None]),
          t.addbmm(t[None], t[None]))
    _same(x.baddbmm(mg.tensor(a)[None], mg.tensor(a)[None], alpha=2),
          t.baddbmm(t[None], t[None], alpha=2))
    _same(mg.tensor(v).ger(mg.tensor(v)), torch.tensor(v).ger(torch.tensor(v)))
    y, u = mg.tensor(v), torch.tensor(v)
    _same(y.addmv(x, y, beta=2), u.addmv(t, u, beta=2))
    y.addmv_(x, mg.tensor(v)), u.addmv_(t, torch.tensor(v))
    _same(y, u)
    _same(x.select_scatter(mg.tensor(v), 1, 0), t.select_scatter(torch.tensor(v), 1, 0))
    _same(x.slice_scatter(mg.tensor(a[:1]), start=2), t.slice_scatter(t[:1], start=2))
    _same(x.diagonal_scatter(mg.tensor(v)), t.diagonal_scatter(torch.tensor(v)))


def test_in_place_functions_write_into_their_tensor(torch):
    x = mg.tensor([-1.0, 2.0])
    assert mg.relu_(x) is x and x.tolist() == [0.0, 2.0]
    mg.exp_(x)
    assert x.tolist() == pytest.approx([1.0, math.exp(2.0)])
    y = mg.tensor([-1.5, 0.5])
    mg.abs_(y), mg.sigmoid_(y), mg.clamp_(y, max=0.7)
    np.testing.assert_allclose(y.numpy(), [0.7, 1 / (1 + math.exp(-0.5))], rtol=1e-6)
    z = mg.tensor([-1.0, 1.0])
    assert mg.selu_(z) is z and z.tolist()[1] == pytest.approx(1.0507009873554805)
    w = mg.tensor([0.0, 1.0])
    mg.i0_(w)
    np.testing.assert_allclose(w.numpy(), torch.i0(torch.tensor([0.0, 1.0])).numpy())


def test_aliases_are_the_functions_themselves():
    assert mg.pairwise_distance is mg.functional.pairwise_distance
    assert mg.cosine_similarity is mg.functional.cosine_similarity
    assert mg.row_stack is mg.vstack and mg.trapz is mg.trapezoid
    assert mg.ger is mg.outer


@pytest.mark.parametrize("dtype, values", [("float16", [40000.0, 3.0, 1e-7]),
                                           ("float64", [1e-310, -5.0, 0.0])])
def test_frexp_gradient_at_the_dtype_edges_as_torch(torch, dtype, values):
    """d mantissa/dx = 2⁻ᵉ: finite for a large float16 (whose 2ᵉ overflows), inf past a
    subnormal, as PyTorch's."""
    import warnings
    m = mg.tensor(values, dtype=getattr(mg, dtype), requires_grad=True)
    t = torch.tensor(values, dtype=getattr(torch, dtype), requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # quietly, as PyTorch
        mg.frexp(m)[0].sum().backward()
    torch.frexp(t)[0].sum().backward()
    np.testing.assert_array_equal(m.grad.numpy(), t.grad.numpy())


def test_nextafter_gradient_is_zero_where_input_equals_other_as_torch(torch):
    """The result is other itself where the two are equal (no step from input): PyTorch's
    gradient is 0 there, g elsewhere (NaN is unequal to all), broadcast as the op."""
    a, b = [1.0, 2.0, NAN, -0.0], [[1.0, 5.0, 1.0, 0.0], [0.0, 2.0, NAN, -1.0]]
    m, t = mg.tensor(a, requires_grad=True), torch.tensor(a, requires_grad=True)
    w = np.arange(1.0, 9.0).reshape(2, 4).astype(np.float32)
    (mg.nextafter(m, mg.tensor(b)) * mg.tensor(w)).sum().backward()
    (torch.nextafter(t, torch.tensor(b)) * torch.tensor(w)).sum().backward()
    np.testing.assert_array_equal(m.grad.numpy(), t.grad.numpy())


def test_igamma_has_no_derivative_in_its_first_argument():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(NotImplementedError, match="input"):
        mg.igamma(a, mg.tensor([1.0, 1.0])).sum().backward()


# ---- errors -------------------------------------------------------------------------------
X = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
I64 = mg.tensor([0, 1])


@pytest.mark.parametrize("call, error, words", [
    (lambda: mg.frexp(I64), TypeError, "floating"),
    (lambda: mg.nextafter(I64, I64), TypeError, "floating"),
    (lambda: mg.igamma(I64, I64), TypeError, "floating"),
    (lambda: mg.igamma(X, 2.0), TypeError, "other must be a Tensor"),
    (lambda: mg.mvlgamma(X, 0), ValueError, ">= 1"),
    (lambda: mg.renorm(X, 0, 0, 1), ValueError, "p must be > 0"),
    (lambda: mg.renorm(X, 2, 0, -1), ValueError, "maxnorm"),
    (lambda: mg.renorm(X[0], 2, 0, 1), ValueError, "at least 2 dims"),
    (lambda: mg.renorm(I64.reshape(1, 2), 2, 0, 1), TypeError, "floating"),
    (lambda: mg.imag(X), RuntimeError, "real tensor"),
    (lambda: X.imag, RuntimeError, "real tensor"),
    (lambda: mg.select_scatter(X, mg.ones(2), 0, 1), ValueError, "shape"),
    (lambda: mg.select_scatter(X, mg.ones(3), 0, 5), IndexError, "out of range"),
    (lambda: mg.select_scatter(X, 1.0, 0, 1), TypeError, "src must be a Tensor"),
    (lambda: mg.slice_scatter(X, mg.ones(2, 3), 1, 5, 10), ValueError, "shape"),
    (lambda: mg.slice_scatter(X, mg.ones(2, 3), step=0), ValueError, "step"),
    (lambda: mg.diagonal_scatter(X, mg.ones(3), 1), ValueError, "shape"),
    (lambda: mg.put(X, mg.tensor([0, 6]), mg.ones(2)), IndexError, "out of range"),
    (lambda: mg.put(X, mg.tensor([0, 1]), mg.ones(3)), IndexError, "number of elements"),
    (lambda: mg.put(X, mg.tensor([0.0, 1.0]), mg.ones(2)), TypeError, "integer"),
    (lambda: mg.put(X, I64, mg.ones(2, dtype=mg.float64)), TypeError, "dtype"),
    (lambda: mg.index_reduce(X, 0, I64, X, "sum"), ValueError, "prod"),
    (lambda: mg.index_reduce(X, 0, mg.tensor([0, 2]), X, "amax"), IndexError, "out of range"),
    (lambda: mg.index_reduce(X, 0, I64, X[:1], "amax"), ValueError, "shape"),
    (lambda: mg.index_reduce(X, 0, I64.reshape(1, 2), X, "amax"), ValueError, "1-D"),
    (lambda: mg.isin(1, 2), TypeError, "tensor"),
    (lambda: mg.unravel_index(mg.tensor([1.0]), (2, 3)), TypeError, "integer"),
    (lambda: mg.unravel_index(5, (2, 3)), TypeError, "integer tensor"),
    (lambda: mg.unravel_index(I64, (2, -1)), ValueError, "negative"),
    (lambda: mg.unravel_index(I64, (2, 0)), ValueError, "zero-size"),
    (lambda: mg.histogram(I64), TypeError, "floating"),
    (lambda: mg.histogram(X, bins=2, range=(3.0, 1.0)), ValueError, "exceed"),
    (lambda: mg.histogram(X, mg.tensor([0, 1])), ValueError, "dtype"),
    (lambda: mg.histogram(X, 2, weight=mg.ones(3)), ValueError, "weight"),
    (lambda: mg.trapezoid(X, mg.tensor([0.0, 1.0])), ValueError, "one x value"),
    (lambda: mg.trapezoid(X, mg.tensor([0.0, 1, 2]), dx=1), TypeError, "not both"),
    (lambda: mg.trapezoid(X, 2), TypeError, "dx="),
    (lambda: mg.trapezoid(mg.tensor(1.0)), IndexError, "0-d"),
    (lambda: mg.gradient(X, edge_order=3), ValueError, "edge_order"),
    (lambda: mg.gradient(X[:, :2], edge_order=2), ValueError, "at least"),
    (lambda: mg.gradient(X, spacing=[2.0]), ValueError, "one entry per dim"),
    (lambda: mg.gradient(X, spacing=[mg.ones(2), mg.ones(2)]), ValueError, "coordinates"),
    (lambda: mg.gradient(X, spacing=mg.ones(3)), TypeError, "list"),
    (lambda: mg.block_diag(mg.ones(2, 2, 2)), ValueError, "at most 2 dims"),
    (lambda: mg.cartesian_prod(X), ValueError, "1-D"),
    (lambda: mg.combinations(X), ValueError, "1-D"),
    (lambda: mg.combinations(X[0], -1), ValueError, "non-negative"),
    (lambda: mg.histogram(X, 0), ValueError, "positive"),
    (lambda: mg.adjoint(X[0]), ValueError, "at least 2 dims"),
    (lambda: mg.column_stack(X), TypeError, "list"),
    (lambda: mg.atleast_2d(X, 3), TypeError, "Tensor"),
    (lambda: mg.pdist(X[0]), ValueError, "2-D"),
    (lambda: mg.pdist(X, -1), ValueError, ">= 0"),
    (lambda: mg.pdist(I64.reshape(1, 2)), TypeError, "floating"),
    (lambda: mg.addmv(mg.ones(2), X, mg.ones(4)), ValueError, "vector"),
    (lambda: mg.addmv(mg.ones(2), X, mg.ones(3, dtype=mg.float64)), TypeError, "one dtype"),
    (lambda: mg.addr(mg.ones(2, 3, dtype=mg.int64), I64, mg.ones(3, dtype=mg.int64),
                     alpha=2.5), TypeError, "integer"),
    (lambda: mg.baddbmm(mg.ones(5), mg.ones(1, 2, 3), mg.ones(1, 3, 4)), ValueError,
     "broadcast"),
    (lambda: mg.chain_matmul(), ValueError, "one or more"),
    (lambda: mg.chain_matmul(X[0]), ValueError, "2-D"),
    (lambda: mg.hann_window(-1), ValueError, ">= 0"),
    (lambda: mg.hann_window(4, dtype=mg.int64), TypeError, "floating"),
    (lambda: mg.tril_indices(3, 3, dtype=mg.float32), TypeError, "integer dtype"),
    (lambda: mg.tril_indices(-1, 3), ValueError, ">= 0"),
    (lambda: mg.logspace(0, 1, 3, base="2"), TypeError, "base"),
    (lambda: mg.rsub(1, X), TypeError, "Tensor first"),
    # alpha is checked with a number other too (as with a tensor one, and as PyTorch)
    (lambda: mg.rsub(I64, 5, alpha=0.5), TypeError, "alpha must be an integer"),
    (lambda: mg.rsub(X, 5, alpha=True), TypeError, "alpha must be a number"),
    (lambda: mg.greater(2, X), TypeError, "Tensor first"),
    (lambda: mg.result_type(X, "a"), TypeError, "tensors or numbers"),
    # an int argument is never a float or a bool, a flag never an int (as PyTorch)
    (lambda: mg.mvlgamma(X, 2.0), TypeError, "p must be an int"),
    (lambda: mg.mvlgamma(X, True), TypeError, "p must be an int"),
    (lambda: mg.mvlgamma(mg.tensor([True]), 1), TypeError, "bool"),
    (lambda: mg.combinations(X[0], 2.0), TypeError, "r must be an int"),
    (lambda: mg.histogram(X, 2.0), TypeError, "bins must be an int"),
    (lambda: mg.histogram(X, True), TypeError, "bins must be an int"),
    (lambda: mg.gradient(X, edge_order=1.0), TypeError, "edge_order must be an int"),
    (lambda: mg.slice_scatter(X, X, 0, True), TypeError, "start must be an int"),
    (lambda: mg.select_scatter(X, X[0], 0, True), TypeError, "index must be an int"),
    (lambda: mg.diagonal_scatter(X, X[0, :2], 0.0), TypeError, "offset must be an int"),
    (lambda: mg.renorm(X, 2, 0.0, 1), TypeError, "dim must be an int"),
    (lambda: mg.put(X, I64, mg.ones(2), 1), TypeError, "accumulate must be a bool"),
    (lambda: mg.index_reduce(X, 0, I64, X, "amax", include_self=0), TypeError,
     "include_self must be a bool"),
    (lambda: mg.hann_window(5.0), TypeError, "window_length must be an int"),
    (lambda: mg.hann_window(True), TypeError, "window_length must be an int"),
    (lambda: mg.hann_window(5, 1), TypeError, "periodic must be a bool"),
    (lambda: mg.kaiser_window(5, beta=True), TypeError, "beta must be a number"),
    (lambda: mg.tril_indices(3.0, 3), TypeError, "row must be an int"),
    (lambda: mg.tril_indices(3, 3, True), TypeError, "offset must be an int"),
    (lambda: mg.unravel_index(I64, (2.0, 3)), TypeError, "sequence of ints"),
    (lambda: mg.logspace(0, 1, 3.0), TypeError, "steps must be an int"),
])
def test_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()
