"""linalg.ldl_factor_ex, ldl_factor and ldl_solve, PyTorch's, for real symmetric matrices
(float32/float64, batched over leading dims; hermitian=True is the same factorisation for
a real matrix). Only A's lower triangle is read, as PyTorch's default.

The factorisation is minigrad's own (NumPy and CuPy have none): Bunch-Kaufman's diagonal
pivoting, column by column over the whole batch at once, with LAPACK's sytrf conventions
so that LD and pivots read as PyTorch's: A = L D Lᵀ, L = P₁L₁P₂L₂⋯ a product of row swaps
and unit lower triangular factors, D block diagonal with 1 by 1 and 2 by 2 blocks. LD holds
D's diagonal, the subdiagonal entry of each 2 by 2 block and L's multipliers below them
(0 above the diagonal); pivots are 1-based int32: p > 0 a 1 by 1 block, rows and columns k
and p swapped; -p on both rows of a 2 by 2 block, k + 1 and p swapped. info is the
1-based k of the first D[k,k] that is exactly 0 (D singular; the factorisation still
completes, as LAPACK's). The pivot choices are LAPACK's (unblocked dsytf2's tests with
α = (1 + √17)/8), so they agree with PyTorch's except where two candidates tie within
rounding: LAPACK's blocked code and minigrad's round differently, and there a pivot may
differ (both factorisations are then valid; ldl_solve solves with either).

No gradients, as PyTorch (it has no derivative for either): backward is a RuntimeError.
"""
import math
from collections import namedtuple

from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.linalg import _square
from minigrad.ops.linalg_ex import _raise
from minigrad.ops.linalg_solvers import _broadcast_batches

LDLFactorResult = namedtuple("LDLFactorResult", ("LD", "pivots"))
LDLFactorExResult = namedtuple("LDLFactorExResult", ("LD", "pivots", "info"))

_ALPHA = (1 + math.sqrt(17)) / 8           # Bunch-Kaufman's: bounds growth per step


def _mirror(xp, t):
    """t's lower triangle, mirrored above the diagonal (the trailing matrix stays exactly
    symmetric, as LAPACK's, which keeps the lower triangle only)."""
    low = xp.tril(t, -1)
    return xp.tril(t) + low.swapaxes(-1, -2)


def _swap(t, rows, i, p):
    """Rows i[b] and p[b] of each t[b] swapped, then the same columns (in place)."""
    for x in (t, t.swapaxes(1, 2)):
        here, there = x[rows, i].copy(), x[rows, p].copy()
        x[rows, i], x[rows, p] = there, here


def _ldl_arrays(xp, a):
    """(LD, pivots, info) of each symmetric matrix of a (..., n, n), lower triangle read."""
    batch, n = a.shape[:-2], a.shape[-1]
    count = math.prod(batch)
    w = _mirror(xp, a.reshape((count, n, n)))
    ld = xp.zeros_like(w)
    pivots = xp.zeros((count, n), dtype=xp.int32)
    info = xp.zeros((count,), dtype=xp.int32)
    rows = xp.arange(count)
    second = xp.zeros((count,), dtype=bool)       # k is the 2nd row of a 2 by 2 block
    for k in range(n):
        active = ~second
        absakk = xp.abs(w[:, k, k])
        if k < n - 1:
            col = xp.abs(w[:, k + 1:, k])
            imax = xp.argmax(col, axis=-1)         # (the first largest, as LAPACK's i_amax)
            colmax = col[rows, imax]
            imax = imax + k + 1
            row = xp.abs(w[rows, imax, k:])        # row imax of the trailing matrix ...
            row[rows, imax - k] = 0                # ... less its diagonal
            rowmax = xp.where(colmax > 0, row.max(axis=-1), 1)
        else:
            imax, colmax, rowmax = xp.full((count,), k), xp.zeros_like(absakk), 1
        zero = ~(xp.maximum(absakk, colmax) != 0) | xp.isnan(absakk)
        keep = (absakk >= _ALPHA * colmax) | (absakk >= _ALPHA * colmax * (colmax / rowmax))
        diag_ok = xp.abs(w[rows, imax, imax]) >= _ALPHA * rowmax
        one = active & ~zero
        two = one & ~keep & ~diag_ok
        kp = xp.where(active & ~zero & ~keep, imax, k)
        kk = k + two.astype(kp.dtype)
        info = xp.where((info == 0) & active & zero, k + 1, info).astype(xp.int32)
        one &= ~two
        trail = w[:, k:, k:].copy()
        _swap(trail, rows, kk - k, kp - k)
        w[:, k:, k:] = trail

        # a 1 by 1 pivot d: L's column x / d, the rest less x xᵀ / d (as dsyr: x (x/d)ᵀ)
        d = w[:, k, k]
        r = 1 / xp.where(one, d, 1)
        x = w[:, k + 1:, k]
        upd = x[:, :, None] * (r[:, None] * x)[:, None, :]
        lcol = x * r[:, None]
        # a 2 by 2 pivot [[a, b], [b, c]] at k, k + 1 (LAPACK's scaled inverse, its order)
        b = xp.where(two, w[:, k + 1, k] if k < n - 1 else 1, 1)
        d11 = (w[:, k + 1, k + 1] if k < n - 1 else d) / b
        d22 = d / b
        t = 1 / xp.where(two, d11 * d22 - 1, 1)
        d21 = t / b
        xk, xk1 = w[:, k + 2:, k], w[:, k + 2:, min(k + 1, n - 1)]     # (empty at the end)
        wk = d21[:, None] * (d11[:, None] * xk - xk1)
        wk1 = d21[:, None] * (d22[:, None] * xk1 - xk)
        upd2 = xk[:, :, None] * wk[:, None, :] + xk1[:, :, None] * wk1[:, None, :]

        m1, m2 = one[:, None, None], two[:, None, None]
        below = w[:, k + 1:, k + 1:]
        below = below - xp.where(m1, upd, 0)
        if k < n - 2:
            inner = below[:, 1:, 1:] - xp.where(m2, upd2, 0)
            below[:, 1:, 1:] = inner
        w[:, k + 1:, k + 1:] = _mirror(xp, below)

        ld[:, k, k] = xp.where(active, d, ld[:, k, k])
        ld[:, k + 1:, k] = xp.where(one[:, None], lcol, xp.where(active[:, None], x,
                                                                   ld[:, k + 1:, k]))
        if k < n - 1:               # the 2 by 2 block's other entries, and its multipliers
            ld[:, k + 1, k + 1] = xp.where(two, w[:, k + 1, k + 1], ld[:, k + 1, k + 1])
            ld[:, k + 2:, k] = xp.where(two[:, None], wk, ld[:, k + 2:, k])
            ld[:, k + 2:, k + 1] = xp.where(two[:, None], wk1, ld[:, k + 2:, k + 1])
        p = (kp + 1).astype(xp.int32)
        pivots[:, k] = xp.where(active, xp.where(two, -p, p), pivots[:, k])
        if k < n - 1:
            pivots[:, k + 1] = xp.where(two, -p, pivots[:, k + 1])
        second = two
    return (ld.reshape(a.shape), pivots.reshape(batch + (n,)), info.reshape(batch))


class _NoGradient:
    """What PyTorch does not differentiate (a Function's mixin): backward is a RuntimeError."""
    reads_inputs = False
    needs_values = False

    def backward(self, g):
        raise RuntimeError(f"linalg.{self.name}: no derivative (PyTorch has none either); "
                           f"detach the inputs first")


class LDLFactor(_NoGradient, Function):
    name = "ldl_factor"

    def forward(self, a, ld):
        return ld


def ldl_factor_ex(A, *, hermitian=False, check_errors=False):
    """(LD, pivots, info), as torch.linalg.ldl_factor_ex: A's Bunch-Kaufman factorisation
    in LAPACK's compact form (see the module's docstring); info k > 0 where D[k,k] is 0.
    check_errors: such a singular D is a RuntimeError. Not differentiable, as PyTorch."""
    op = "linalg.ldl_factor_ex"
    A = _square(op, A)
    ld, pivots, info = _ldl_arrays(A.backend.xp, A._data)
    if check_errors:
        _raise(op, info, lambda i: f"D[{i - 1},{i - 1}] of the factorization is exactly "
                                   f"zero (D is singular)")
    return LDLFactorExResult(LDLFactor.apply(A, ld=ld), Tensor._make(pivots, A.device),
                             Tensor._make(info, A.device))


def ldl_factor(A, *, hermitian=False):
    """(LD, pivots), as torch.linalg.ldl_factor: ldl_factor_ex with check_errors (a zero
    D[k,k] is a RuntimeError)."""
    LD, pivots, _ = ldl_factor_ex(A, hermitian=hermitian, check_errors=True)
    return LDLFactorResult(LD, pivots)


def _solve_arrays(xp, ld, pivots, b):
    """X with A X = B for A = L D Lᵀ given by (ld, pivots) (each (count, n, ...))."""
    count, n = ld.shape[0], ld.shape[-1]
    rows = xp.arange(count)
    two = pivots < 0
    first = xp.zeros_like(two)                    # k opens a 2 by 2 block
    for k in range(n):
        first[:, k] = two[:, k] & (~first[:, k - 1] if k else True)
    opened = xp.zeros_like(two)
    opened[:, 1:] = first[:, :-1]                 # k closes one
    block = xp.eye(n, k=-1, dtype=bool) & first[:, None, :]      # D[k+1,k], not L's
    mult = xp.where(block, 0, xp.tril(ld, -1))
    target = xp.abs(pivots).astype(xp.int64) - 1
    swap_row = xp.arange(n) + first                # 2 by 2: row k + 1 is the one swapped
    target = xp.where(opened, swap_row, target)    # (its second row: no swap)
    x = b.copy()
    for k in range(n):                             # P₁L₁⁻¹, P₂L₂⁻¹, ...
        _swap_rows(x, rows, swap_row[:, k], target[:, k])
        x[:, k + 1:] -= mult[:, k + 1:, k, None] * x[:, k:k + 1]
    diag = xp.diagonal(ld, 0, -2, -1)
    off = xp.where(first[:, :-1], xp.diagonal(ld, -1, -2, -1), 0)   # D[k+1,k] of a block
    up, dn = xp.zeros_like(diag), xp.zeros_like(diag)
    up[:, :-1], dn[:, 1:] = off, off
    def shift(v, by):                              # v[:, k + by], wrapped around
        return xp.concatenate([v[:, by:], v[:, :by]], axis=1)
    nxt, prv = shift(x, 1), shift(x, -1)
    pair_d = xp.where(first, shift(diag, 1), shift(diag, -1))
    paired = first | opened
    det = xp.where(paired, diag * pair_d - (up + dn) ** 2, 1)
    x = xp.where(paired[..., None],
                 (pair_d[..., None] * x - (up[..., None] * nxt + dn[..., None] * prv))
                 / det[..., None], x / xp.where(paired, 1, diag)[..., None])
    for k in reversed(range(n)):                   # then Lₖ⁻ᵀ Pₖ, last first
        x[:, k] -= (mult[:, k + 1:, k, None] * x[:, k + 1:]).sum(axis=1)
        _swap_rows(x, rows, swap_row[:, k], target[:, k])
    return x


def _swap_rows(x, rows, i, p):
    here, there = x[rows, i].copy(), x[rows, p].copy()
    x[rows, i], x[rows, p] = there, here


class LDLSolve(_NoGradient, Function):
    name = "ldl_solve"

    def forward(self, ld, b, pivots):
        batch, n = ld.shape[:-2], ld.shape[-1]
        count = math.prod(batch)
        x = _solve_arrays(self.xp, ld.reshape((count, n, n)),
                          pivots.reshape((count, n)), b.reshape((count,) + b.shape[-2:]))
        return x.reshape(b.shape)


def ldl_solve(LD, pivots, B, *, hermitian=False):
    """X with A X = B from ldl_factor's (LD, pivots), as torch.linalg.ldl_solve; B (..., n,
    k), batch dims broadcast. Not differentiable, as PyTorch."""
    op = "linalg.ldl_solve"
    LD = _square(op, LD, "LD")
    n = LD.shape[-1]
    if not isinstance(pivots, Tensor) or pivots.dtype != backend.int32 or \
            pivots.shape != LD.shape[:-1]:
        raise ValueError(f"{op}: pivots must be an int32 Tensor of shape {LD.shape[:-1]} "
                         f"(ldl_factor's), got {getattr(pivots, 'dtype', type(pivots))} "
                         f"{getattr(pivots, 'shape', '')}")
    if not isinstance(B, Tensor) or B.dtype != LD.dtype or B.ndim < 2 or B.shape[-2] != n:
        raise ValueError(f"{op}: B must be a {LD.dtype} Tensor of shape (..., {n}, k), got "
                         f"{getattr(B, 'dtype', type(B))} {getattr(B, 'shape', '')}")
    LD, B = _broadcast_batches(op, LD, B)
    piv = pivots._data
    if piv.shape != LD.shape[:-1]:
        piv = LD.backend.xp.broadcast_to(piv, LD.shape[:-1])
    return LDLSolve.apply(LD, B, pivots=piv)
