"""The row reductions the fused ops share (minigrad/ops/rows.py), on every layout they meet:
C-contiguous rows, attention's head views (rows contiguous, the array not), and arrays whose
last axis is strided, which must be copied first."""
import numpy as np
import pytest

from minigrad.ops.rows import col_sum, row_max, row_sum

_RNG = np.random.default_rng(0)


@pytest.mark.parametrize("name,make", [
    ("contiguous 3-D", lambda: _RNG.standard_normal((2, 3, 4))),
    ("2-D", lambda: _RNG.standard_normal((5, 4))),
    ("1-D", lambda: _RNG.standard_normal(6)),
    ("head views (B, H, T, D)", lambda: _RNG.standard_normal((2, 5, 3, 4))),
    ("last axis strided", lambda: _RNG.standard_normal((3, 5, 4))),
    ("a slice of rows", lambda: _RNG.standard_normal((3, 4, 10))),
])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_row_sum_on_every_layout(name, make, dtype):
    a = make().astype(dtype)                             # cast first, then lay out
    a = {"head views (B, H, T, D)": lambda: a.transpose(0, 2, 1, 3),
         "last axis strided": lambda: a.transpose(0, 2, 1),
         "a slice of rows": lambda: a[:, :, ::2]}.get(name, lambda: a)()
    got = row_sum(np, a, 0.5)
    assert got.shape == a.shape[:-1] + (1,)
    tol = 1e-6 if dtype == np.float32 else 1e-14
    np.testing.assert_allclose(got, 0.5 * a.astype(np.float64).sum(-1, keepdims=True),
                               rtol=tol, atol=tol)


def test_col_sum_and_row_max():
    a = _RNG.standard_normal((4, 3))
    np.testing.assert_allclose(col_sum(np, a), a.sum(0), rtol=1e-14)
    np.testing.assert_array_equal(row_max(np, a), a.max(-1, keepdims=True))
