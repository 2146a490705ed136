"""The _ex forms of linalg's cholesky, inv and solve, PyTorch's: each returns (result, info)
with info an int32 tensor of A's batch shape, 0 where the matrix succeeded, instead of
raising (unless check_errors). cholesky_ex's info is LAPACK's potrf's: the order of the
first leading minor that is not positive-definite; inv_ex's and solve_ex's getrf's: i
where U[i,i] (1-based) of the pivoted LU factor is exactly 0.

The info is found first (the Cholesky recurrence, or ops/linalg_lu.py's LU, over the whole
batch); the failed matrices are then swapped for the identity and the batch runs through
the plain op, so the successful ones have its values and its gradients exactly. Where a
matrix failed the result holds NaN (LAPACK leaves a partial factor there, and PyTorch
shows it) and its gradient is 0.

"Exactly 0" and "not > 0" depend on rounding, and LAPACK's blocked order of operations
is not minigrad's, so a matrix on the edge may pass one test and fail the other. inv_ex's
and solve_ex's info is minigrad's own LU's (that of lu_factor_ex): where LAPACK then
refuses a matrix that LU found regular, the batch is solved with that LU instead
(lu_solve), finite as its info says. cholesky_ex asks LAPACK about such an edge matrix
itself: its info is then the order of the first leading minor LAPACK refuses.
"""
from collections import namedtuple

from minigrad.tensor import Tensor
from minigrad.ops.elementwise import where
from minigrad.ops.linalg import _square, _SINGULAR, LinAlgError, cholesky, inv, solve
from minigrad.ops.linalg_lu import _lu_arrays, _info, lu_factor_ex, lu_solve

CholeskyExResult = namedtuple("CholeskyExResult", ("L", "info"))
InvExResult = namedtuple("InvExResult", ("inverse", "info"))
SolveExResult = namedtuple("SolveExResult", ("result", "info"))

_NOT_PD = "the factorization could not be completed because the input is not " \
    "positive-definite"


def _cholesky_info(xp, a):
    """potrf's info per matrix of a (lower triangle read): column by column over the batch,
    d = a[j,j] - Σ L[j,:j]²; the first j where d is not > 0 (NaN too) gives info j + 1."""
    n = a.shape[-1]
    L = xp.zeros_like(a)
    info = xp.zeros(a.shape[:-2], dtype=xp.int32)
    for j in range(n):
        row = L[..., j, :j]
        d = a[..., j, j] - (row * row).sum(axis=-1)
        bad = ~(d > 0)
        info = xp.where((info == 0) & bad, j + 1, info).astype(xp.int32)
        root = xp.sqrt(xp.where(bad, 1, d))              # (a failed matrix goes on with 1)
        L[..., j, j] = root
        below = a[..., j + 1:, j] - (L[..., j + 1:, :j] @ row[..., None])[..., 0]
        L[..., j + 1:, j] = below / root[..., None]
    return info


def _lapack_cholesky_info(A, info):
    """info with each matrix that linalg.cholesky refuses (info 0 here) given the order of
    the first leading minor it refuses (a loop over the batch: only on such an edge). Asked
    through minigrad's cholesky, not xp.linalg.cholesky: on CuPy the refusal is its check
    that LLᵀ reconstructs A, and cupy.linalg.cholesky itself raises nothing."""
    shape, info = info.shape, info.copy().reshape(-1)
    a = A._data.reshape((-1,) + A.shape[-2:])
    for e in range(a.shape[0]):
        for k in range(1, a.shape[-1] + 1) if info[e] == 0 else ():
            try:
                cholesky(Tensor._make(a[e, :k, :k], A.device))
            except RuntimeError:
                info[e] = k
                break
    return info.reshape(shape)


def _substitute(A, info):
    """A with each failed matrix (info > 0) the identity, and the (..., 1, 1) mask of them
    (None where nothing failed)."""
    if not bool((info > 0).any()):
        return A, None
    xp = A.backend.xp
    mask = Tensor._make((info > 0)[..., None, None], A.device)
    eye = Tensor._make(xp.eye(A.shape[-1], dtype=A.dtype), A.device)
    return where(mask, eye, A), mask


def _nan_where(mask, out):
    """out with NaN in the failed matrices' place (mask (..., 1, 1), out's matrices)."""
    if mask is None:
        return out
    nan = Tensor._make(out.backend.xp.asarray(float("nan"), dtype=out.dtype), out.device)
    return where(mask, nan, out)


def _raise(op, info, what):
    """PyTorch's check_errors: a LinAlgError naming the first failed batch element."""
    flat = info.reshape(-1)
    if flat.size and bool((flat > 0).any()):
        first = int((flat > 0).argmax())
        where_ = f" (batch element {first})" if info.ndim else ""
        raise LinAlgError(f"{op}{where_}: {what(int(flat[first]))}")


def cholesky_ex(A, *, upper=False, check_errors=False):
    """(L, info), as torch.linalg.cholesky_ex: cholesky's factor (upper: its transpose; the
    lower triangle is read, as linalg.cholesky) and potrf's info; NaN where info > 0.
    check_errors: a matrix that is not positive-definite is a RuntimeError."""
    op = "linalg.cholesky_ex"
    A = _square(op, A)
    xp = A.backend.xp
    info = _cholesky_info(xp, A._data)
    if check_errors:
        _raise(op, info, lambda i: f"{_NOT_PD} (the leading minor of order {i} is not "
                                   f"positive-definite)")
    safe, mask = _substitute(A, info)
    try:
        L = cholesky(safe)
    except RuntimeError:                         # LAPACK refuses an edge matrix (see above)
        info = _lapack_cholesky_info(A, info)
        safe, mask = _substitute(A, info)
        L = cholesky(safe)
    L = _nan_where(mask, L)
    return CholeskyExResult(L.mT if upper else L, Tensor._make(info, A.device))


def _lu_info(A):
    return _info(A.backend.xp, _lu_arrays(A.backend.xp, A._data)[0])


def inv_ex(A, *, check_errors=False):
    """(inverse, info), as torch.linalg.inv_ex: info i where U[i,i] of A's LU is 0 (A
    singular), NaN there; check_errors: a singular matrix is a RuntimeError."""
    op = "linalg.inv_ex"
    A = _square(op, A)
    info = _lu_info(A)
    if check_errors:
        _raise(op, info, lambda i: f"the diagonal element {i} is zero, the inversion could "
                                   f"not be completed because {_SINGULAR}")
    safe, mask = _substitute(A, info)
    try:
        X = inv(safe)
    except RuntimeError:                         # LAPACK finds a 0 that our LU did not
        eye = Tensor._make(A.backend.xp.eye(A.shape[-1], dtype=A.dtype), A.device)
        X = lu_solve(*lu_factor_ex(safe)[:2], eye.expand(A.shape))
    return InvExResult(_nan_where(mask, X), Tensor._make(info, A.device))


def solve_ex(A, B, *, left=True, check_errors=False):
    """(result, info), as torch.linalg.solve_ex: linalg.solve's X (AX = B, left=False XA =
    B; batch dims broadcast) and info of A's batch shape, i where U[i,i] of A's LU is 0;
    NaN in X where A is singular. check_errors: a singular A is a RuntimeError."""
    op = "linalg.solve_ex"
    A = _square(op, A)
    info = _lu_info(A)
    if check_errors:
        _raise(op, info, lambda i: f"the solver failed because {_SINGULAR}")
    safe, mask = _substitute(A, info)
    try:
        X = solve(safe, B, left=left)
    except RuntimeError:                         # LAPACK finds a 0 that our LU did not
        vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
        X = lu_solve(*lu_factor_ex(safe)[:2], B.unsqueeze(-1) if vector else B, left=left)
        X = X.squeeze(-1) if vector else X
    if mask is not None and X.ndim == A.ndim - 1:      # a vector per matrix: (..., n)
        mask = mask[..., 0]
    return SolveExResult(_nan_where(mask, X), Tensor._make(info, A.device))
