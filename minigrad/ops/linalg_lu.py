"""LU and Cholesky solves, PyTorch's: linalg.lu_factor (and lu_factor_ex, torch.lu),
linalg.lu, torch.lu_unpack, linalg.lu_solve (and torch.lu_solve), torch.cholesky_solve and
torch.cholesky_inverse. Real float32/float64 tensors, batched over leading dims.

The LU factorisation is minigrad's own (NumPy and CuPy have none): partial pivoting, column
by column over the whole batch at once, PᵀA = LU with L unit lower triangular, as LAPACK's
getrf; pivots are LAPACK's too (1-based int32: row i was swapped with row pivots[i], in
turn). Only the factorisation is an op; the rest is written with Tensor ops (triangles,
row gathers and solve_triangular), so every gradient is itself differentiable. From
PᵀdA = dL U + L dU, with L⁻¹dL strictly lower and dU U⁻¹ upper, for square A:
  Ā = P L⁻ᵀ (tril₋₁(Lᵀ G_L) + triu(G_U Uᵀ)) U⁻ᵀ
Wide A (m < n), U = [U₁ | U₂]: A₂ = PLU₂, so Ā₂ = P L⁻ᵀ G_U₂, and G_L gains −L⁻ᵀ G_U₂ U₂ᵀ;
tall A (m > n), L = [L₁; L₂]: L₂ = (PᵀA)₂ U⁻¹, so its rows of PᵀA get G_L₂ U⁻ᵀ, and G_U gains
−L₂ᵀ G_L₂ U⁻ᵀ; the square block then as above. A zero on U's diagonal makes these inf or NaN,
as PyTorch's. (linalg.ldl_factor, Bunch-Kaufman's, is linalg_ldl.py's.)
"""
import math
from collections import namedtuple

from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.index import GetItem, position_grid
from minigrad.ops.linalg import _square, LinAlgError
from minigrad.ops.linalg_decomp import _matrices
from minigrad.ops.linalg_solvers import solve_triangular, _broadcast_batches
from minigrad.ops.shape import cat

LUFactorResult = namedtuple("LUFactorResult", ("LU", "pivots"))
LUFactorExResult = namedtuple("LUFactorExResult", ("LU", "pivots", "info"))
LUResult = namedtuple("LUResult", ("P", "L", "U"))


def _swap_rows(x, batch_rows, i, p):
    """Row i of each x[b] swapped with its row p[b] (x: (batch, m, ...), in place)."""
    here, there = x[:, i].copy(), x[batch_rows, p]
    x[:, i], x[batch_rows, p] = there, here


def _pivot_rows(xp, size):
    """The first row of the largest |entry| of each column (count, rows), as LAPACK's
    i_amax: it keeps the first entry and moves on only to a strictly larger one, so a NaN
    is picked only where it comes first (argmax would pick any NaN)."""
    nan = xp.isnan(size)
    return xp.where(nan[:, 0], 0, xp.argmax(xp.where(nan, -1, size), axis=-1))


def _lu_arrays(xp, a):
    """(LU, pivots, order) of each matrix of a (..., m, n): L's multipliers below the
    diagonal and U on and above it, LAPACK's pivots, and the row order of PᵀA = A[order].
    Column j: the largest |entry| on or below the diagonal becomes the pivot, the rows
    below get their multipliers, and the rest of the matrix a rank-1 update."""
    batch, (m, n) = a.shape[:-2], a.shape[-2:]
    k, count = min(m, n), math.prod(batch)
    lu = a.reshape((count, m, n)).copy()
    order = xp.broadcast_to(xp.arange(m), (count, m)).copy()
    pivots = xp.empty((count, k), dtype=xp.int32)
    batch_rows = xp.arange(count)
    for j in range(k):
        p = _pivot_rows(xp, xp.abs(lu[:, j:, j])) + j
        pivots[:, j] = p + 1
        _swap_rows(lu, batch_rows, j, p)
        _swap_rows(order, batch_rows, j, p)
        pivot, below = lu[:, j, j:j + 1], lu[:, j + 1:, j]
        nonzero = pivot != 0      # else the column is all 0 (singular): nothing to eliminate
        lu[:, j + 1:, j] = xp.where(nonzero, below / xp.where(nonzero, pivot, 1), below)
        lu[:, j + 1:, j + 1:] -= lu[:, j + 1:, j:j + 1] * lu[:, j:j + 1, j + 1:]
    return (lu.reshape(a.shape), pivots.reshape(batch + (k,)),
            order.reshape(batch + (m,)))


def _order(xp, pivots, m):
    """The row order (PᵀA = A[order]) that LAPACK's pivots stand for."""
    batch, k = pivots.shape[:-1], pivots.shape[-1]
    count = math.prod(batch)
    swaps = pivots.reshape((count, k)).astype(xp.int64) - 1
    order = xp.broadcast_to(xp.arange(m), (count, m)).copy()
    batch_rows = xp.arange(count)
    for i in range(k):
        _swap_rows(order, batch_rows, i, swaps[:, i])
    return order.reshape(batch + (m,))


def _rows(t, order):
    """t[..., order[..., i], :] for each i: t's rows gathered (differentiable, and exact
    where t holds inf or NaN, which a product with P would not be); order's batch dims
    broadcast to t's."""
    xp = t.backend.xp
    index = xp.broadcast_to(order[..., None], t.shape)
    return GetItem.apply(t, index=position_grid(xp, index, t.ndim - 2))


def _eye(like, m, n):
    return Tensor._make(like.backend.xp.eye(m, n, dtype=like.dtype), like.device)


def _square_lu_gradient(L, U, gl, gu):
    """The gradient of PᵀA for square A = PLU: L⁻ᵀ (tril₋₁(Lᵀ G_L) + triu(G_U Uᵀ)) U⁻ᵀ."""
    inner = (L.mT @ gl).tril(-1) + (gu @ U.mT).triu()
    x = solve_triangular(L.mT, inner, upper=True, unitriangular=True)
    return solve_triangular(U.mT, x, upper=False, left=False)


def _lu_gradient(lu, order, g):
    """Ā for PᵀA = LU, from G, the gradient of the packed LU (see the module's
    docstring)."""
    m, n = lu.shape[-2:]
    k = min(m, n)
    L = lu.narrow(-1, 0, k).tril(-1) + _eye(lu, m, k)
    U = lu.narrow(-2, 0, k).triu()
    gl, gu = g.narrow(-1, 0, k).tril(-1), g.narrow(-2, 0, k).triu()
    if m < n:                                                    # U = [U₁ | U₂]
        u1, u2 = U.narrow(-1, 0, m), U.narrow(-1, m, n - m)
        gu1, gu2 = gu.narrow(-1, 0, m), gu.narrow(-1, m, n - m)
        a2 = solve_triangular(L.mT, gu2, upper=True, unitriangular=True)
        grad = cat([_square_lu_gradient(L, u1, gl - a2 @ u2.mT, gu1), a2], -1)
    elif m > n:                                                  # L = [L₁; L₂]
        l1, l2 = L.narrow(-2, 0, n), L.narrow(-2, n, m - n)
        gl1, gl2 = gl.narrow(-2, 0, n), gl.narrow(-2, n, m - n)
        a2 = solve_triangular(U.mT, gl2, upper=False, left=False)
        grad = cat([_square_lu_gradient(l1, U, gl1, gu - l2.mT @ a2), a2], -2)
    else:
        grad = _square_lu_gradient(L, U, gl, gu)
    return _rows(grad, lu.backend.xp.argsort(order, axis=-1))        # P times it


class LUFactor(Function):
    """PᵀA = LU, computed by _lu_arrays; backward reads the packed LU it output."""
    reads_inputs = False

    def forward(self, a, lu, order):
        self.order = order
        return lu

    def backward(self, g):
        return _lu_gradient(self.output(), self.order, g)


def _no_pivot(op, pivot):
    if not pivot:
        raise RuntimeError(f"{op}: LU without pivoting (pivot=False) is not implemented (as "
                           f"PyTorch on the CPU); use pivot=True")


def _info(xp, lu):
    """LAPACK's info per matrix: 1 + the index of U's first 0 on its diagonal, or 0."""
    zero = xp.diagonal(lu, 0, -2, -1) == 0
    if zero.shape[-1] == 0:
        return xp.zeros(lu.shape[:-2], dtype=xp.int32)
    return xp.where(zero.any(axis=-1), zero.argmax(axis=-1) + 1, 0).astype(xp.int32)


def _check_invertible(op, info, batched):
    """Refuse a factor with a 0 on U's diagonal, as PyTorch's lu_factor (one read)."""
    flat = info.reshape(-1)
    if flat.size and bool((flat > 0).any()):
        first = int((flat > 0).argmax())
        where = f" (batch element {first})" if batched else ""
        i = int(flat[first])
        raise RuntimeError(f"{op}: U[{i},{i}] is zero{where}: the matrix is singular and "
                           f"lu_solve with this factor would divide by zero; "
                           f"linalg.lu_factor_ex or linalg.lu factor it without this check")


def _factor(op, A, pivot):
    """(LU, pivots, info array) of A, LU differentiable."""
    A = _matrices(op, A)
    _no_pivot(op, pivot)
    xp = A.backend.xp
    lu, pivots, order = _lu_arrays(xp, A._data)
    return (LUFactor.apply(A, lu=lu, order=order), Tensor._make(pivots, A.device),
            _info(xp, lu))


def lu_factor_ex(A, *, pivot=True, check_errors=False):
    """PᵀA = LU with partial pivoting, as torch.linalg.lu_factor_ex: a named tuple (LU,
    pivots, info): L (unit diagonal, not stored) and U packed in one (..., m, n) tensor,
    pivots (..., min(m, n)) 1-based int32 (row i swapped with row pivots[i], in turn), info
    int32: i where U[i,i] (1-based) is the first 0 on U's diagonal, else 0. check_errors:
    refuse such a singular factor. pivot=False is refused, as PyTorch on the CPU."""
    op = "linalg.lu_factor_ex"
    LU, pivots, info = _factor(op, A, pivot)
    if check_errors:
        _check_invertible(op, info, A.ndim > 2)
    return LUFactorExResult(LU, pivots, Tensor._make(info, A.device))


def lu_factor(A, *, pivot=True):
    """PᵀA = LU, as torch.linalg.lu_factor: a named tuple (LU, pivots) (lu_factor_ex's); a
    singular matrix (a 0 on U's diagonal) is a RuntimeError, as PyTorch."""
    op = "linalg.lu_factor"
    LU, pivots, info = _factor(op, A, pivot)
    _check_invertible(op, info, A.ndim > 2)
    return LUFactorResult(LU, pivots)


def lu_legacy(A, pivot=True, get_infos=False):
    """torch.lu (mg.lu, Tensor.lu), the older spelling: (LU, pivots), with info where
    get_infos; a singular matrix is not refused."""
    LU, pivots, info = _factor("lu", A, pivot)
    info = Tensor._make(info, A.device)
    return (LU, pivots, info) if get_infos else (LU, pivots)


def _check_pivots(op, pivots, batch, k, m, name="pivots"):
    """Refuse pivots that are not int32 of shape batch + (k,) with values in [1, m]."""
    if not isinstance(pivots, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(pivots).__name__}")
    if pivots.dtype != backend.int32:
        raise TypeError(f"{op}: {name} must be int32 (as lu_factor gives, and PyTorch "
                        f"requires), got {pivots.dtype}")
    if tuple(pivots.shape) != tuple(batch) + (k,):
        raise ValueError(f"{op}: {name} must have shape {tuple(batch) + (k,)} (the LU's batch "
                         f"dims, then min(m, n)), got {tuple(pivots.shape)}")
    p = pivots._data
    if p.size and bool(((p < 1) | (p > m)).any()):
        raise ValueError(f"{op}: {name} must lie in [1, {m}] (1-based row numbers, as "
                         f"lu_factor gives), got values from {int(p.min())} to "
                         f"{int(p.max())}")


def _permutation(like, order):
    """P (..., m, m) with PᵀA = A[order], in like's dtype: P[r, i] = 1 where r = order[i]."""
    xp = like.backend.xp
    m = order.shape[-1]
    p = (xp.arange(m)[:, None] == order[..., None, :]).astype(like.dtype)
    return Tensor._make(p, like.device)


def _unpack(LU, order, data=True, perm=True):
    """(P, L, U) from the packed LU (L and U differentiable in it), or empty in place of
    what is not asked for."""
    m, n = LU.shape[-2:]
    k = min(m, n)
    empty = Tensor._make(LU.backend.xp.zeros((0,), dtype=LU.dtype), LU.device)
    P = _permutation(LU, order) if perm else empty
    if not data:
        return LUResult(P, empty, empty)
    return LUResult(P, LU.narrow(-1, 0, k).tril(-1) + _eye(LU, m, k),
                    LU.narrow(-2, 0, k).triu())


def lu_unpack(LU_data, LU_pivots, unpack_data=True, unpack_pivots=True):
    """(P, L, U) from lu_factor's (LU, pivots), as torch.lu_unpack: P (..., m, m), L (...,
    m, k) unit lower triangular, U (..., k, n), k = min(m, n); differentiable in LU. Without
    unpack_data, L and U are empty; without unpack_pivots, P. (pivots must have LU's batch
    shape; PyTorch also broadcasts them.)"""
    op = "lu_unpack"
    LU = _matrices(op, LU_data, "LU_data")
    m, n = LU.shape[-2:]
    _check_pivots(op, LU_pivots, LU.shape[:-2], min(m, n), m, "LU_pivots")
    order = _order(LU.backend.xp, LU_pivots._data, m) if unpack_pivots else None
    return _unpack(LU, order, unpack_data, unpack_pivots)


def lu(A, *, pivot=True):
    """A = PLU with partial pivoting, as torch.linalg.lu: a named tuple (P, L, U), P (...,
    m, m) a permutation, L (..., m, k) unit lower triangular, U (..., k, n), k = min(m, n).
    A singular matrix factors too (a 0 on U's diagonal). Differentiable, square or not."""
    op = "linalg.lu"
    A = _matrices(op, A)
    _no_pivot(op, pivot)
    lu_, _, order = _lu_arrays(A.backend.xp, A._data)
    return _unpack(LUFactor.apply(A, lu=lu_, order=order), order)


def _check_rhs(op, A, B, name="B"):
    """Refuse a right-hand side that is no Tensor of A's dtype with at least 2 dims."""
    if not isinstance(B, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(B).__name__}")
    if B.dtype != A.dtype:
        raise TypeError(f"{op}: the factor and {name} have dtypes {A.dtype} and {B.dtype}; "
                        f"they must be one (as PyTorch): convert {name} with .to({A.dtype})")
    if B.ndim < 2:
        raise ValueError(f"{op}: {name} must have at least 2 dims (..., n, k), got shape "
                         f"{B.shape}")


def lu_solve(LU, pivots, B, *, left=True, adjoint=False):
    """X with AX = B from A's lu_factor (LU, pivots), as torch.linalg.lu_solve; adjoint:
    AᵀX = B; left=False: XA = B (XAᵀ = B with adjoint). LU (..., n, n), pivots (..., n)
    int32, B (..., n, k) (left=False: (..., k, n)); batch dims of LU and B broadcast.
    Differentiable in LU and B. A 0 on U's diagonal gives inf or NaN, as PyTorch."""
    op = "linalg.lu_solve"
    LU = _square(op, LU, "LU")
    n = LU.shape[-1]
    _check_pivots(op, pivots, LU.shape[:-2], n, n)
    _check_rhs(op, LU, B)
    if B.shape[-2 if left else -1] != n:
        want = f"(..., {n}, k)" if left else f"(..., k, {n})"
        raise ValueError(f"{op}: incompatible shapes of LU {LU.shape} and B {B.shape}: "
                         f"with left={left}, B must be {want}")
    order = _order(LU.backend.xp, pivots._data, n)
    if not left:                         # XA = B <=> AᵀXᵀ = Bᵀ; XAᵀ = B <=> AXᵀ = Bᵀ
        return _lu_solve(op, LU, order, B.mT, not adjoint).mT
    return _lu_solve(op, LU, order, B, adjoint)


def _lu_solve(op, LU, order, B, adjoint):
    """A⁻¹B = U⁻¹L⁻¹PᵀB, or A⁻ᵀB = P L⁻ᵀU⁻ᵀB, for A = PLU."""
    LU, B = _broadcast_batches(op, LU, B)
    if adjoint:
        y = solve_triangular(LU.mT, B, upper=False)
        x = solve_triangular(LU.mT, y, upper=True, unitriangular=True)
        return _rows(x, LU.backend.xp.argsort(order, axis=-1))
    y = solve_triangular(LU, _rows(B, order), upper=False, unitriangular=True)
    return solve_triangular(LU, y, upper=True)


def lu_solve_legacy(input, LU_data, LU_pivots):
    """torch.lu_solve (mg.lu_solve, Tensor.lu_solve), the older spelling: linalg.lu_solve
    with its arguments in the other order."""
    return lu_solve(LU_data, LU_pivots, input)


def cholesky_solve(input, input2, upper=False):
    """X with AX = B for A = LLᵀ (upper: A = UᵀU) from its Cholesky factor, as
    torch.cholesky_solve: B (..., n, k), L (..., n, n), batch dims broadcast; two
    triangular solves, differentiable in B and L. Only L's lower (upper) triangle is read,
    and only it gets a gradient: PyTorch's fills the other triangle too (the derivative as
    if all of L were used); on a triangular L, as cholesky's, they agree."""
    op = "cholesky_solve"
    input2 = _square(op, input2, "L")
    _check_rhs(op, input2, input, "B")
    n = input2.shape[-1]
    if input.shape[-2] != n:
        raise ValueError(f"{op}: incompatible shapes of B {input.shape} and L {input2.shape}: B must "
                         f"be (..., {n}, k)")
    lower = input2.mT if upper else input2
    return solve_triangular(lower.mT, solve_triangular(lower, input, upper=False), upper=True)


def cholesky_inverse(input, upper=False):
    """A⁻¹ for A = LLᵀ (upper: A = UᵀU) from its Cholesky factor, as torch.cholesky_inverse:
    L⁻ᵀL⁻¹, differentiable; a 0 on L's diagonal is a LinAlgError, as PyTorch. Only L's
    lower (upper) triangle is read and gets a gradient (see cholesky_solve)."""
    op = "cholesky_inverse"
    input = _square(op, input, "L")
    xp, n = input.backend.xp, input.shape[-1]
    zero = (xp.diagonal(input._data, 0, -2, -1) == 0).reshape((math.prod(input.shape[:-2]), n))
    if zero.size and bool(zero.any()):
        first = int(zero.any(axis=-1).argmax())
        where = f" (batch element {first})" if input.ndim > 2 else ""
        raise LinAlgError(f"{op}: the diagonal element {int(zero[first].argmax()) + 1} is "
                           f"zero{where}: the matrix is singular, it has no inverse")
    lower = input.mT if upper else input
    inverse = solve_triangular(lower, _eye(input, n, n), upper=False)          # L⁻¹
    return inverse.mT @ inverse
