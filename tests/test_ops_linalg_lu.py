"""LU and Cholesky solves (ops/linalg_lu.py): linalg.lu_factor, lu_factor_ex, lu, lu_solve,
lu_unpack, cholesky_solve, cholesky_inverse and the older torch.lu / torch.lu_solve. Each
through the op suite (vs torch in float32/float64 with the pivots exact, gradcheck +
gradgradcheck, double backward vs torch, the spy device); then singular matrices, empty
ones, pivot=False and the errors."""
import numpy as np
import pytest

import minigrad as mg
from op_helpers import (OpCase, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch, check_spy_matches_cpu)
from test_ops_linalg import lib, dominant, spd


def piv(x, values):
    """Pivots (int32, 1-based) as a tensor of x's library, on x's device."""
    if isinstance(x, mg.Tensor):
        return mg.tensor(values, dtype=mg.int32, device=x.device)
    return lib(x).tensor(values, dtype=lib(x).int32)


def lu_solve(lu, pivots, b, **kw):
    """linalg.lu_solve on a leaf LU (made well conditioned) with the given pivots."""
    return lib(lu).linalg.lu_solve(dominant(lu), piv(lu, pivots), b, **kw)


def factored_solve(a, b, **kw):
    linalg = lib(a).linalg
    return linalg.lu_solve(*linalg.lu_factor(a), b, **kw)


CASES = [
    OpCase("lu_factor", lambda a: tuple(lib(a).linalg.lu_factor(a)), ((3, 3),)),
    OpCase("lu_factor_ex_batched", lambda a: tuple(lib(a).linalg.lu_factor_ex(a)),
           ((2, 4, 4),)),
    OpCase("lu_factor_tall_batched", lambda a: tuple(lib(a).linalg.lu_factor(a)),
           ((2, 4, 2),)),
    OpCase("lu_batched", lambda a: tuple(lib(a).linalg.lu(a)), ((2, 3, 3),)),
    OpCase("lu_tall", lambda a: tuple(lib(a).linalg.lu(a)), ((5, 3),)),
    OpCase("lu_wide_batched", lambda a: tuple(lib(a).linalg.lu(a)), ((2, 3, 5),)),
    OpCase("lu_unpack_wide", lambda a: tuple(lib(a).lu_unpack(*lib(a).linalg.lu_factor(a))),
           ((3, 4),)),
    OpCase("lu_solve_factored", factored_solve, ((3, 3), (3, 2))),
    OpCase("lu_solve_factored_right_adjoint", lambda a, b: factored_solve(
        a, b, left=False, adjoint=True), ((2, 3, 3), (2, 2, 3))),
    OpCase("lu_solve", lambda lu, b: lu_solve(lu, [3, 3, 3], b), ((3, 3), (3, 2))),
    OpCase("lu_solve_adjoint_broadcast", lambda lu, b: lu_solve(
        lu, [[2, 3, 3], [1, 3, 3]], b, adjoint=True), ((2, 3, 3), (3, 2))),
    OpCase("lu_solve_right", lambda lu, b: lu_solve(lu, [2, 2, 3], b, left=False),
           ((3, 3), (2, 1, 4, 3))),
    OpCase("cholesky_solve", lambda b, a: lib(b).cholesky_solve(
        b, lib(a).linalg.cholesky(spd(a))), ((3, 2), (3, 3))),
    OpCase("cholesky_solve_upper_broadcast", lambda b, a: lib(b).cholesky_solve(
        b, dominant(a).triu(), upper=True), ((2, 3, 2), (3, 3))),
    OpCase("cholesky_solve_lower_batched", lambda b, a: lib(b).cholesky_solve(
        b, dominant(a).tril()), ((3, 1), (2, 3, 3))),
    OpCase("cholesky_inverse", lambda a: lib(a).cholesky_inverse(dominant(a).tril()),
           ((3, 3),)),
    OpCase("cholesky_inverse_upper_batched", lambda a: lib(a).cholesky_inverse(
        dominant(a).triu(), upper=True), ((2, 3, 3),)),
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


def _both(a):
    torch = pytest.importorskip("torch")
    return mg.tensor(a), torch.tensor(a)


def _assert_same(mine, theirs):
    for m, t in zip(mine, theirs):
        assert m.shape == tuple(t.shape) and str(m.dtype) == str(t.dtype).split(".")[-1]
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-12, atol=1e-12)


def test_larger_batch_as_torch():
    """Pivots exact and factors to rounding on 40 by 40 matrices, square and not."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for shape in ((3, 40, 40), (2, 40, 25), (25, 40)):
        x, t = _both(rng.standard_normal(shape))
        _assert_same(mg.linalg.lu_factor_ex(x), torch.linalg.lu_factor_ex(t))
        P, L, U = mg.linalg.lu(x)
        np.testing.assert_allclose((P @ L @ U).numpy(), x.numpy(), atol=1e-12)


def test_singular_matrices_as_torch():
    """lu and lu_factor_ex factor a singular matrix (info: 1 + the first 0 on U's diagonal);
    lu_factor refuses it, naming that entry (and the batch element); lu_solve with it
    gives inf, as PyTorch."""
    torch = pytest.importorskip("torch")
    a = np.array([[[1.0, 2.0, 0.0], [2.0, 4.0, 1.0], [3.0, 6.0, 2.0]], np.eye(3)])
    x, t = _both(a)
    _assert_same(mg.linalg.lu(x), torch.linalg.lu(t))
    _assert_same(mg.linalg.lu_factor_ex(x), torch.linalg.lu_factor_ex(t))
    assert mg.linalg.lu_factor_ex(x).info.tolist() == [2, 0]
    with pytest.raises(RuntimeError, match=r"linalg.lu_factor: U\[2,2\] is zero \(batch "
                                           r"element 0\): the matrix is singular"):
        mg.linalg.lu_factor(x)
    with pytest.raises(RuntimeError, match=r"lu_factor_ex: U\[2,2\] is zero: "):
        mg.linalg.lu_factor_ex(x[0, :2, :2], check_errors=True)
    assert mg.lu(x, get_infos=True)[2].tolist() == [2, 0]          # torch.lu: no check
    b = np.ones((2, 3, 1))
    for adjoint in (False, True):
        with np.errstate(divide="ignore", invalid="ignore"):
            got = mg.linalg.lu_solve(*mg.linalg.lu_factor_ex(x)[:2], mg.tensor(b),
                                     adjoint=adjoint).numpy()
        want = torch.linalg.lu_solve(*torch.linalg.lu_factor_ex(t)[:2], torch.tensor(b),
                                     adjoint=adjoint).numpy()
        if not adjoint:
            np.testing.assert_allclose(got, want, rtol=1e-15)
        # (adjoint: where inf meets a 0 of L, whether it turns NaN is the order of the
        # arithmetic's; both are not finite in the singular matrix, the rest as torch's)
        assert not np.isfinite(got[0]).all() and not np.isfinite(want[0]).all()
        np.testing.assert_allclose(got[1], want[1], rtol=1e-15)


@pytest.mark.filterwarnings("ignore:invalid value")
def test_pivots_of_a_column_holding_nan_as_torch():
    """LAPACK's pivot search passes over a NaN (no comparison with it holds) unless it comes
    first in the column; argmax took the NaN, and the NaN row then spoilt every row."""
    torch = pytest.importorskip("torch")
    a = np.array([[[1.0, 2.0, 3.0], [np.nan, 3.0, 1.0], [5.0, 1.0, 1.0]],
                  [[np.nan, 1.0, 0.0], [2.0, 3.0, 1.0], [0.0, 1.0, 2.0]]])
    x, t = _both(a)
    mine, theirs = mg.linalg.lu_factor_ex(x), torch.linalg.lu_factor_ex(t)
    assert mine.pivots.tolist() == theirs.pivots.tolist() == [[3, 2, 3], [1, 2, 3]]
    np.testing.assert_allclose(mine.LU.numpy(), theirs.LU.numpy(), rtol=1e-15)
    assert np.isfinite(mine.LU.numpy()[0, 0]).all()


def test_empty_matrices_as_torch():
    torch = pytest.importorskip("torch")
    for shape in ((0, 3, 3), (3, 0), (0, 3), (2, 0, 0)):
        x, t = _both(np.zeros(shape))
        _assert_same(mg.linalg.lu_factor_ex(x), torch.linalg.lu_factor_ex(t))
        _assert_same(mg.linalg.lu(x), torch.linalg.lu(t))
    x, t = _both(np.zeros((0, 0)))
    _assert_same([mg.cholesky_inverse(x), mg.cholesky_solve(mg.zeros(0, 2).double(), x)],
                 [torch.cholesky_inverse(t), torch.cholesky_solve(torch.zeros(0, 2).double(),
                                                                  t)])


@pytest.mark.filterwarnings("ignore:torch.lu")
def test_older_spellings_and_methods_as_torch():
    """torch.lu, torch.lu_solve (b first), torch.lu_unpack's flags and the Tensor methods
    lu, lu_solve, cholesky_solve, cholesky_inverse."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    (x, t), (xb, tb) = _both(rng.standard_normal((2, 3, 3))), _both(rng.standard_normal((3, 2)))
    _assert_same(mg.lu(x), torch.linalg.lu_factor(t))
    _assert_same(x.lu(get_infos=True), t.lu(get_infos=True))
    lu_x, lu_t = mg.linalg.lu_factor(x), torch.linalg.lu_factor(t)
    _assert_same([mg.lu_solve(xb, *lu_x), xb.lu_solve(*lu_x)],
                 [torch.linalg.lu_solve(*lu_t, tb)] * 2)
    for flags in ((False, True), (True, False)):
        _assert_same(mg.lu_unpack(*lu_x, *flags), torch.lu_unpack(*lu_t, *flags))
    c = x[0] @ x[0].mT + 3 * mg.eye(3).double()
    L, Lt = mg.linalg.cholesky(c), torch.linalg.cholesky(torch.tensor(c.numpy()))
    _assert_same([xb.cholesky_solve(L), L.cholesky_inverse(), L.mT.cholesky_inverse(True)],
                 [tb.cholesky_solve(Lt), Lt.cholesky_inverse(), Lt.mT.cholesky_inverse(True)])


@pytest.mark.parametrize("fn", [lambda a: mg.linalg.lu_factor(a, pivot=False),
                                lambda a: mg.linalg.lu_factor_ex(a, pivot=False),
                                lambda a: mg.linalg.lu(a, pivot=False),
                                lambda a: mg.lu(a, pivot=False)])
def test_no_pivoting_is_refused(fn):
    """As PyTorch on the CPU (its CUDA backend has it; minigrad's LU always pivots)."""
    with pytest.raises(RuntimeError, match=r"LU without pivoting \(pivot=False\) is not "
                                           r"implemented"):
        fn(mg.eye(3))


def test_the_gradient_of_cholesky_solve_is_that_of_the_triangle_read():
    """Only L's lower (upper) triangle is read, so only it gets a gradient, and gradcheck
    holds on a full L; PyTorch's gradient fills the other triangle too (as if A = LLᵀ with
    all of L), and on a triangular L agrees on the triangle."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(5)
    a, b = rng.uniform(-1, 1, (3, 3)) + 4 * np.eye(3), rng.standard_normal((3, 2))
    for upper in (False, True):
        read = np.triu(np.ones((3, 3))) if upper else np.tril(np.ones((3, 3)))
        for fn in (lambda m, lib: lib.cholesky_solve(lib.tensor(b), m, upper),
                   lambda m, lib: lib.cholesky_inverse(m, upper)):
            x = mg.tensor(a * read, requires_grad=True)
            t = torch.tensor(a * read, requires_grad=True)
            fn(x, mg).sum().backward()
            fn(t, torch).sum().backward()
            np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy() * read, atol=1e-12)
            assert (x.grad.numpy()[read == 0] == 0).all()
            assert (t.grad.numpy()[read == 0] != 0).all()
            assert mg.gradcheck(lambda m: fn(m, mg), [mg.tensor(a, requires_grad=True)])


def _e(*shape, dtype=mg.float64):
    return mg.zeros(*shape, dtype=dtype) + mg.eye(shape[-2], shape[-1], dtype=dtype)


I3, P3 = _e(3, 3), mg.tensor([1, 2, 3], dtype=mg.int32)
ERRORS = [
    (lambda: mg.linalg.lu_factor(mg.ones(3)), ValueError, r"at least 2 dims"),
    (lambda: mg.linalg.lu(mg.eye(3).int()), TypeError, r"float32 or float64"),
    (lambda: mg.linalg.lu_solve(_e(3, 2), P3, I3), ValueError, r"square matrices"),
    (lambda: mg.linalg.lu_solve(I3, P3.long(), I3), TypeError, r"pivots must be int32"),
    (lambda: mg.linalg.lu_solve(I3, P3[:2], I3), ValueError, r"shape \(3,\)"),
    (lambda: mg.linalg.lu_solve(_e(2, 3, 3), P3, I3), ValueError, r"shape \(2, 3\)"),
    (lambda: mg.linalg.lu_solve(I3, P3 + 1, I3), ValueError, r"lie in \[1, 3\]"),
    (lambda: mg.linalg.lu_solve(I3, P3, mg.ones(3).double()), ValueError, r"at least 2"),
    (lambda: mg.linalg.lu_solve(I3, P3, _e(4, 3)), ValueError, r"B must be \(\.\.\., 3, k\)"),
    (lambda: mg.linalg.lu_solve(I3, P3, _e(3, 4), left=False), ValueError,
     r"B must be \(\.\.\., k, 3\)"),
    (lambda: mg.linalg.lu_solve(I3, P3, mg.eye(3)), TypeError, r"float64 and float32"),
    (lambda: mg.linalg.lu_solve(_e(2, 3, 3), P3.expand(2, 3), _e(3, 3, 2)), ValueError,
     r"do not broadcast"),
    (lambda: mg.lu_unpack(I3, P3 * 0), ValueError, r"LU_pivots must lie in \[1, 3\]"),
    (lambda: mg.lu_unpack(_e(2, 3, 3), P3), ValueError, r"shape \(2, 3\)"),
    (lambda: mg.cholesky_solve(I3, _e(3, 2)), ValueError, r"square matrices"),
    (lambda: mg.cholesky_solve(mg.ones(3).double(), I3), ValueError, r"at least 2 dims"),
    (lambda: mg.cholesky_solve(_e(2, 3), I3), ValueError, r"B must be \(\.\.\., 3, k\)"),
    (lambda: mg.cholesky_solve(_e(3, 1), mg.eye(3)), TypeError, r"float32 and float64"),
    (lambda: mg.cholesky_inverse(_e(3, 2)), ValueError, r"square matrices"),
    (lambda: mg.cholesky_inverse(I3 - _e(3, 3) * mg.tensor([0.0, 1, 0]).double()),
     RuntimeError, r"the diagonal element 2 is zero: the matrix is singular"),
    (lambda: mg.cholesky_inverse(mg.stack([I3, I3 * 0])), RuntimeError,
     r"element 1 is zero \(batch element 1\)"),
]


@pytest.mark.parametrize("i", range(len(ERRORS)))
def test_bad_arguments_are_refused_clearly(i):
    fn, error, match = ERRORS[i]
    with pytest.raises(error, match=match):
        fn()
