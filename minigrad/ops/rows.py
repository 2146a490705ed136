"""Sums and maxima over the rows or columns of the fused ops' arrays (softmax, attention,
layer norm, linear).

NumPy reduces a short last axis one row at a time, paying ~25 ns per row for a sum and ~90 ns
for a max on top of the arithmetic: for attention's 64-wide rows that is most of the cost.
A matrix-vector product with a column of ones sums every row in one BLAS call (~5x faster;
a row of ones sums the columns, ~3x faster than NumPy's sum over the leading axis),
and on NumPy `fmax.reduce` skips the NaN bookkeeping of `max` (a NaN row still ends as NaN:
it turns into NaN again at the next step that uses it). CuPy's ufuncs reduce only with add
and multiply, so elsewhere it is the plain max.
"""
from minigrad import backend


def row_sum(xp, a, scale=1.0):
    """Σ over the last axis times `scale`, kept as a trailing axis of 1: (..., n) -> (..., 1).
    One matrix-vector product on a C-contiguous `a` (the fused ops' own arrays are); a batch
    of them on one whose rows alone are contiguous (attention's heads, (B, H, T, D) views of
    a (B, T, H, D) array), which reshape would copy first; any other is copied."""
    n = a.shape[-1]
    col = backend.filled(xp, (n, 1), scale, a.dtype)
    if a.ndim > 2 and not a.flags.c_contiguous and a.strides[-1] == a.itemsize:
        return xp.matmul(a, col)
    return xp.matmul(a.reshape(-1, n), col).reshape(a.shape[:-1] + (1,))


COL_SUM_BLOCK = 256


def col_sum(xp, a):
    """Σ over the rows of a 2-D array: (r, n) -> (n,). BLAS's float32 matrix-vector product
    keeps one running sum per column, which drifts as rows pile up (3.5e-3 off over 2·10⁶
    rows of 0.1: a bias gradient over many tokens); on the host, float32 rows are summed in
    blocks of 256, one stacked product, and the block sums added in float64: 1e-7 off, and
    no slower (NumPy's float16 product sums in float32 already; a GPU's sums are trees)."""
    r, n = a.shape
    k = r // COL_SUM_BLOCK
    if a.dtype != backend.float32 or not backend.is_numpy(xp) or k < 2:
        return xp.matmul(backend.filled(xp, (r,), 1, a.dtype), a)
    ones = backend.filled(xp, (COL_SUM_BLOCK,), 1, a.dtype)
    blocks = xp.matmul(ones, a[:k * COL_SUM_BLOCK].reshape(k, COL_SUM_BLOCK, n))
    total = blocks.sum(0, dtype=backend.float64)
    if k * COL_SUM_BLOCK < r:
        total += xp.matmul(ones[:r - k * COL_SUM_BLOCK], a[k * COL_SUM_BLOCK:])
    return total.astype(a.dtype)


def row_max(xp, a):
    """max over the last axis, kept as a trailing axis of 1."""
    if backend.is_numpy(xp):
        return xp.fmax.reduce(a, axis=-1, keepdims=True)
    return a.max(axis=-1, keepdims=True)
