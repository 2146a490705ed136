"""linalg.cholesky_ex, inv_ex and solve_ex (ops/linalg_ex.py) against torch: info over a
batch that mixes good and failing matrices, the good ones' values and gradients, float64
gradcheck through a mixed batch, NaN where a matrix failed, and check_errors."""
import numpy as np
import pytest

import minigrad as mg

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None

rng = np.random.default_rng(0)


def spd(n):
    a = rng.standard_normal((n, n))
    return a @ a.T + n * np.eye(n)


def not_pd(order, n=4):
    """Symmetric, its leading minors positive-definite up to order - 1 only."""
    a = spd(n)
    a[order - 1, order - 1] = -50.0
    return a


def singular(i, n=4):
    """A = LU with U's row i (1-based) 0: L's multipliers and U's pivots powers of 2, so
    every LU (LAPACK's blocked one, minigrad's) meets U[i,i] = 0 exactly, info i."""
    L = np.eye(n) + np.tril(rng.choice([0, 0.5, -0.5, 0.25, -0.25], (n, n)), -1)
    U = np.triu(rng.integers(-3, 4, (n, n)).astype(float), 1) + np.diag(
        rng.choice([1.0, -2.0, 4.0], n))
    U[i - 1] = 0.0
    return L @ U


def pair(a, dtype="float64", grad=False):
    m = mg.tensor(a, dtype=dtype, requires_grad=grad)
    t = torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=grad)
    return m, t


def good(info):
    return np.asarray(info) == 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_ex_info_values_and_grad_vs_torch(torch, dtype, upper):
    a = np.stack([spd(4), not_pd(1), not_pd(3), spd(4), np.full((4, 4), np.nan)])
    m, t = pair(a, dtype, grad=True)
    (L, info), (tL, tinfo) = mg.linalg.cholesky_ex(m, upper=upper), \
        torch.linalg.cholesky_ex(t, upper=upper)
    assert info.dtype == mg.int32 and info.shape == (5,)
    np.testing.assert_array_equal(info.numpy(), tinfo.numpy())          # [0, 1, 3, 0, 1]
    ok = good(tinfo)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(L.numpy()[ok], tL.detach().numpy()[ok], rtol=tol, atol=tol)
    assert np.isnan(L.numpy()[~ok]).all()                               # documented: NaN
    w = rng.standard_normal((4, 4))
    (L[ok] * mg.tensor(w, dtype=dtype)).sum().backward()
    (tL[torch.tensor(ok)] * torch.tensor(w, dtype=t.dtype)).sum().backward()
    np.testing.assert_allclose(m.grad.numpy()[ok], t.grad.numpy()[ok], rtol=10 * tol,
                               atol=10 * tol)
    assert (m.grad.numpy()[~ok] == 0).all()


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_inv_ex_info_values_and_grad_vs_torch(torch, dtype):
    a = np.stack([singular(1), rng.standard_normal((4, 4)) + 4 * np.eye(4), singular(3),
                  np.zeros((4, 4)), singular(4)])
    m, t = pair(a.reshape(5, 1, 4, 4), dtype, grad=True)
    (X, info), (tX, tinfo) = mg.linalg.inv_ex(m), torch.linalg.inv_ex(t)
    assert info.dtype == mg.int32 and info.shape == (5, 1)
    np.testing.assert_array_equal(info.numpy(), tinfo.numpy())
    ok = good(tinfo)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(X.numpy()[ok], tX.detach().numpy()[ok], rtol=tol, atol=tol)
    assert np.isnan(X.numpy()[~ok]).all()
    X[mg.tensor(ok)].sum().backward()
    tX[torch.tensor(ok)].sum().backward()
    np.testing.assert_allclose(m.grad.numpy()[ok], t.grad.numpy()[ok], rtol=10 * tol,
                               atol=10 * tol)


@pytest.mark.parametrize("left", [True, False])
def test_solve_ex_broadcast_info_values_and_grad_vs_torch(torch, left):
    a = np.stack([rng.standard_normal((3, 3)) + 4 * np.eye(3), singular(2, 3)])
    b = rng.standard_normal((4, 1, 3, 2) if left else (4, 1, 2, 3))
    (m, t), (mb, tb) = pair(a, grad=True), pair(b, grad=True)
    (X, info), (tX, tinfo) = mg.linalg.solve_ex(m, mb, left=left), \
        torch.linalg.solve_ex(t, tb, left=left)
    assert info.shape == (2,) and X.shape == tuple(tX.shape)
    np.testing.assert_array_equal(info.numpy(), tinfo.numpy())          # [0, 2]
    np.testing.assert_allclose(X.numpy()[:, 0], tX.detach().numpy()[:, 0], rtol=1e-12)
    assert np.isnan(X.numpy()[:, 1]).all()
    X[:, 0].sum().backward()
    tX[:, 0].sum().backward()
    np.testing.assert_allclose(m.grad.numpy()[0], t.grad.numpy()[0], rtol=1e-10, atol=1e-12)
    # B's gradient: from the good matrix only (torch's is NaN, its failed solve's 0·NaN)
    tb2 = torch.tensor(b, requires_grad=True)
    torch.linalg.solve(torch.tensor(a[0]), tb2[:, 0], left=left).sum().backward()
    np.testing.assert_allclose(mb.grad.numpy(), tb2.grad.numpy(), rtol=1e-10, atol=1e-12)
    assert (m.grad.numpy()[1] == 0).all()                # (torch's: NaN from its partial LU)


def test_solve_ex_vector_rhs_vs_torch(torch):
    a = np.stack([singular(1, 3), rng.standard_normal((3, 3)) + 4 * np.eye(3)])
    b = rng.standard_normal((2, 3))
    (X, info), (tX, tinfo) = mg.linalg.solve_ex(*pair(a)[:1], pair(b)[0]), \
        torch.linalg.solve_ex(*pair(a)[1:], pair(b)[1])
    assert X.shape == (2, 3)
    np.testing.assert_array_equal(info.numpy(), tinfo.numpy())          # [1, 0]
    np.testing.assert_allclose(X.numpy()[1], tX.numpy()[1], rtol=1e-12)
    assert np.isnan(X.numpy()[0]).all()


def test_gradcheck_through_a_mixed_batch():
    x = mg.tensor(rng.standard_normal((3, 3)), dtype="float64", requires_grad=True)
    b = mg.tensor(rng.standard_normal((3, 2)), dtype="float64", requires_grad=True)
    bad = mg.tensor(singular(2, 3), dtype="float64")
    eye = mg.tensor(3 * np.eye(3), dtype="float64")
    assert mg.gradcheck(lambda x: mg.linalg.inv_ex(mg.stack([bad, x + eye]))[0][1], [x])
    assert mg.gradcheck(lambda x, b: mg.linalg.solve_ex(mg.stack([x + eye, bad]), b)[0][0],
                        [x, b])
    assert mg.gradcheck(lambda x: mg.linalg.cholesky_ex(
        mg.stack([-eye, x @ x.mT + eye]), upper=True)[0][1], [x])


def test_empty_and_unbatched_info(torch):
    L, info = mg.linalg.cholesky_ex(mg.zeros((2, 0, 0), dtype=mg.float64))
    assert L.shape == (2, 0, 0) and info.numpy().tolist() == [0, 0]
    X, info = mg.linalg.inv_ex(mg.tensor(singular(2)))
    assert info.shape == () and int(info.numpy()) == int(torch.linalg.inv_ex(
        torch.tensor(singular(2))).info)


def test_check_errors_raise_as_the_plain_functions():
    a = mg.tensor(np.stack([spd(3), not_pd(2, 3)]))
    with pytest.raises(RuntimeError, match=r"batch element 1.*order 2 is not positive"):
        mg.linalg.cholesky_ex(a, check_errors=True)
    s = mg.tensor(np.stack([spd(3), singular(3, 3)]))
    with pytest.raises(RuntimeError, match=r"batch element 1.*diagonal element 3 is zero"):
        mg.linalg.inv_ex(s, check_errors=True)
    with pytest.raises(RuntimeError, match="singular"):
        mg.linalg.solve_ex(s, mg.ones((3, 1), dtype=mg.float64), check_errors=True)
    for fn in (mg.linalg.cholesky, mg.linalg.inv):                   # what they stand for
        with pytest.raises(RuntimeError):
            fn(a if fn is mg.linalg.cholesky else s)
    # with no failure, check_errors changes nothing
    m = spd(3)
    out = mg.linalg.inv_ex(mg.tensor(m), check_errors=True)
    np.testing.assert_allclose(out.inverse.numpy(), np.linalg.inv(m), rtol=1e-12)
    assert int(out.info.numpy()) == 0


def test_errors_name_the_op():
    with pytest.raises(ValueError, match="linalg.inv_ex"):
        mg.linalg.inv_ex(mg.ones((2, 3)))
    with pytest.raises(TypeError, match="linalg.cholesky_ex"):
        mg.linalg.cholesky_ex(mg.ones((2, 2), dtype=mg.int64))
    with pytest.raises(ValueError, match="linalg.solve"):
        mg.linalg.solve_ex(mg.eye(3), mg.ones(4))


def _edge_matrix():
    """A matrix that LAPACK's LU finds exactly singular and minigrad's LU (rounding in
    another order) does not: a column copied, searched from a fixed seed."""
    from minigrad.ops.linalg_lu import _lu_arrays, _info
    r = np.random.default_rng(0)
    for _ in range(200):
        a = r.standard_normal((4, 4)) + 4 * np.eye(4)
        a[:, 3] = a[:, 0]
        try:
            np.linalg.inv(a)
        except np.linalg.LinAlgError:
            if _info(np, _lu_arrays(np, a)[0]) == 0:
                return a
    pytest.skip("no such matrix from this LAPACK")


def test_inv_ex_solve_ex_where_lapack_refuses_what_the_lu_passed():
    """info 0 (minigrad's LU) and a finite result from that LU: no error escapes."""
    a = np.stack([_edge_matrix(), spd(4)])
    X, info = mg.linalg.inv_ex(mg.tensor(a))
    assert info.numpy().tolist() == [0, 0] and np.isfinite(X.numpy()).all()
    np.testing.assert_allclose(X.numpy()[1], np.linalg.inv(a[1]), rtol=1e-12)
    b = rng.standard_normal((4, 2))
    X, info = mg.linalg.solve_ex(mg.tensor(a), mg.tensor(b))
    assert info.numpy().tolist() == [0, 0] and np.isfinite(X.numpy()).all()
    np.testing.assert_allclose(X.numpy()[1], np.linalg.solve(a[1], b), rtol=1e-12)


def test_cholesky_ex_asks_lapack_where_the_recurrence_passed(monkeypatch):
    """Were the recurrence to pass a matrix LAPACK refuses, info is LAPACK's order."""
    from minigrad.ops import linalg_ex
    monkeypatch.setattr(linalg_ex, "_cholesky_info",
                        lambda xp, a: xp.zeros(a.shape[:-2], dtype=xp.int32))
    a = np.stack([spd(4), not_pd(3)])
    L, info = mg.linalg.cholesky_ex(mg.tensor(a))
    assert info.numpy().tolist() == [0, 3]
    np.testing.assert_allclose(L.numpy()[0], np.linalg.cholesky(a[0]), rtol=1e-12)
    assert np.isnan(L.numpy()[1]).all()


def test_cholesky_ex_edge_where_xp_cholesky_raises_nothing(monkeypatch):
    """CuPy's cholesky raises nothing on a matrix that is not positive-definite (the op's
    reconstruction check refuses it): the edge path still finds the order, no error."""
    import types
    from minigrad import backend
    from minigrad.ops import linalg_ex, linalg as linalg_ops
    real = np.linalg.cholesky

    def quiet(a):                                  # as CuPy: a partial factor, no error
        try:
            return real(a)
        except np.linalg.LinAlgError:
            return np.full(a.shape, np.nan, a.dtype)
    monkeypatch.setattr(np.linalg, "cholesky", quiet)
    monkeypatch.setattr(linalg_ops, "backend", types.SimpleNamespace(
        **{**vars(backend), "is_numpy": lambda xp: False}))
    monkeypatch.setattr(linalg_ex, "_cholesky_info",
                        lambda xp, a: xp.zeros(a.shape[:-2], dtype=xp.int32))
    a = np.stack([spd(4), not_pd(3)])
    L, info = mg.linalg.cholesky_ex(mg.tensor(a))
    assert info.numpy().tolist() == [0, 3]
    np.testing.assert_allclose(L.numpy()[0], real(a[0]), rtol=1e-12)
    assert np.isnan(L.numpy()[1]).all()
