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


def col_sum(xp, a):
    """Σ over the rows of a 2-D array: (r, n) -> (n,)."""
    return xp.matmul(backend.filled(xp, (a.shape[0],), 1, a.dtype), a)


def row_max(xp, a):
    """max over the last axis, kept as a trailing axis of 1."""
    if backend.is_numpy(xp):
        return xp.fmax.reduce(a, axis=-1, keepdims=True)
    return a.max(axis=-1, keepdims=True)
