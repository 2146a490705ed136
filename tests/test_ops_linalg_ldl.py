"""linalg.ldl_factor_ex, ldl_factor and ldl_solve (ops/linalg_ldl.py) against torch: LD,
pivots and info (LAPACK's sytrf conventions) on random symmetric matrices, indefinite ones
with 2 by 2 pivots among them, a mixed batch, singular D, ldl_solve's X, and no gradient."""
import numpy as np
import pytest

import minigrad as mg

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None

rng = np.random.default_rng(0)


def symmetric(n, small_diag=False):
    a = rng.standard_normal((n, n))
    if small_diag:                        # indefinite, small diagonal: 2 by 2 pivots
        a[np.diag_indices(n)] *= 0.01
    return a + a.T


def check(a, dtype="float64"):
    LD, piv, info = mg.linalg.ldl_factor_ex(mg.tensor(a, dtype=dtype))
    tLD, tpiv, tinfo = torch.linalg.ldl_factor_ex(torch.tensor(a, dtype=getattr(torch, dtype)))
    assert piv.dtype == mg.int32 and info.dtype == mg.int32
    np.testing.assert_array_equal(piv.numpy(), tpiv.numpy())
    np.testing.assert_array_equal(info.numpy(), tinfo.numpy())
    tol = 1e-4 if dtype == "float32" else 1e-10
    np.testing.assert_allclose(LD.numpy(), tLD.numpy(), rtol=tol, atol=tol)
    return LD, piv, tpiv


@pytest.mark.parametrize("n", [1, 2, 3, 5, 8])
def test_ldl_factor_matches_torch_on_random_symmetric_matrices(torch, n):
    twos = 0
    for i in range(12):
        twos += (check(symmetric(n, i % 2 == 1))[2] < 0).any().item()
    assert twos or n == 1                   # the 2 by 2 pivots were exercised


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_ldl_factor_batch_mixes_pivot_kinds_and_reads_the_lower_triangle(torch, dtype):
    a = np.stack([symmetric(5), symmetric(5, True), symmetric(5, True) + 9 * np.eye(5)])
    a = a.reshape(3, 1, 5, 5) + np.triu(rng.standard_normal((5, 5)), 1)  # (upper ignored)
    check(a, dtype)


def test_ldl_factor_ex_info_where_d_is_singular_and_ldl_factor_raises(torch):
    a = np.stack([np.zeros((3, 3)), np.array([[1., 2, 0], [2, 4, 0], [0, 0, 1]]),
                  symmetric(3)])
    check(a)                                              # info [1, 2, 0]
    with pytest.raises(RuntimeError, match=r"batch element 0.*D\[0,0\]"):
        mg.linalg.ldl_factor(mg.tensor(a))
    with pytest.raises(RuntimeError, match="singular"):
        mg.linalg.ldl_factor_ex(mg.tensor(a), check_errors=True)


@pytest.mark.parametrize("small_diag", [False, True])
def test_ldl_solve_solves_as_torch(torch, small_diag):
    a = np.stack([symmetric(6, small_diag) for _ in range(4)])
    b = rng.standard_normal((4, 6, 3))
    LD, piv = mg.linalg.ldl_factor(mg.tensor(a))
    x = mg.linalg.ldl_solve(LD, piv, mg.tensor(b))
    tx = torch.linalg.ldl_solve(*torch.linalg.ldl_factor(torch.tensor(a)), torch.tensor(b))
    np.testing.assert_allclose(x.numpy(), tx.numpy(), atol=1e-10)
    np.testing.assert_allclose(a @ x.numpy(), b, atol=1e-10)
    # batch dims broadcast (torch 2.13 crashes on this one, so it is checked by A X = B)
    wide = mg.linalg.ldl_solve(LD, piv, mg.tensor(b[:1, None].repeat(2, 0)))
    assert wide.shape == (2, 4, 6, 3)
    np.testing.assert_allclose(a @ wide.numpy(), np.broadcast_to(b[:1], (2, 4, 6, 3)),
                               atol=1e-10)


def test_ldl_has_no_gradient_as_torch():
    A = mg.tensor(symmetric(3), requires_grad=True)
    LD, piv = mg.linalg.ldl_factor(A)
    with pytest.raises(RuntimeError, match="no derivative"):
        LD.sum().backward()
    B = mg.tensor(rng.standard_normal((3, 2)), requires_grad=True)
    with pytest.raises(RuntimeError, match="no derivative"):
        mg.linalg.ldl_solve(LD.detach(), piv, B).sum().backward()


def test_ldl_solve_refuses_bad_pivots_and_b():
    LD, piv = mg.linalg.ldl_factor(mg.tensor(symmetric(3)))
    with pytest.raises(ValueError, match="int32"):
        mg.linalg.ldl_solve(LD, piv.long(), mg.zeros(3, 1, dtype=mg.float64))
    with pytest.raises(ValueError, match=r"\(\.\.\., 3, k\)"):
        mg.linalg.ldl_solve(LD, piv, mg.zeros(2, 1, dtype=mg.float64))
