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


@pytest.mark.parametrize("rows", [255, 512, 513, 100_037])
@pytest.mark.parametrize("layout", ["contiguous", "strided columns"])
def test_col_sum_of_float32_rows_does_not_drift(rows, layout):
    """BLAS's one running sum per column was 5e-4 off over 10⁵ rows of 0.1 (3.5e-3 over
    2·10⁶): a bias gradient over many tokens. Blocks of rows summed in float64 stay ~1e-6."""
    a = np.full((rows, 6), 0.1, np.float32) + _RNG.random((rows, 6), dtype=np.float32) * 1e-3
    a = a[:, ::2] if layout == "strided columns" else a
    got = col_sum(np, a)
    assert got.dtype == np.float32 and got.shape == (a.shape[1],)
    np.testing.assert_allclose(got, a.astype(np.float64).sum(0), rtol=2e-6)


def test_a_linear_bias_gradient_over_many_rows_is_accurate():
    import minigrad as mg
    x = mg.zeros(200_000, 2)
    layer = mg.nn.Linear(2, 3)
    (layer(x) * 0.1).sum().backward()
    np.testing.assert_allclose(layer.bias.grad.numpy(), np.float32(0.1) * 200_000.0, rtol=2e-6)
