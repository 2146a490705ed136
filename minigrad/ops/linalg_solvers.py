"""What torch.linalg builds on the decompositions (linalg_decomp.py): pinv (and torch's
older pinverse), matrix_rank and cond from the singular values; with solve_triangular
and matrix_exp (scaling and squaring with a Padé approximant; its gradient by Van Loan's
block formula). Real float32/float64 tensors, batched over leading dims, each
differentiable. (lstsq, through LAPACK's drivers, is linalg_lstsq.py's.)"""
import math

from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.linalg import _square, _run, _SINGULAR, inv
from minigrad.ops.linalg_decomp import _matrices, _singular_values, _NO_CONVERGENCE, svdvals
from minigrad.ops.linalg_more import matrix_norm
from minigrad.ops.matmul import check_same_float
from minigrad.ops.reduce import expand
from minigrad.ops.shape import cat

def pinverse(input, rcond=1e-15):
    """torch.pinverse (mg.pinverse, Tensor.pinverse): linalg.pinv with rtol=rcond; its
    default, 1e-15, is not linalg.pinv's."""
    return pinv(input, rtol=rcond)


def _tolerance(xp, a, atol, rtol, top):
    """max(atol, rtol·top), PyTorch's cutoff for the singular values (batch + (1,)). rtol
    defaults to ε·max(m, n), or 0 where an atol above 0 is given."""
    def value(t):
        return xp.asarray(t._data if isinstance(t, Tensor) else t, dtype=a.dtype)[..., None]
    atol_v = value(0.0 if atol is None else atol)
    if rtol is None:
        default = backend.machine_eps(a.dtype) * max(a.shape[-2:])
        rtol_v = value(default) if atol is None else xp.where(atol_v > 0, 0.0, default)
    else:
        rtol_v = value(rtol)
    return xp.maximum(atol_v, rtol_v * top)


def _pinv_arrays(xp, a, atol, rtol, hermitian):
    """(A⁺, which singular values it kept): V diag(1/s) Uᵀ over the s above the cutoff; from
    eigh (|λ|) where hermitian."""
    m, n = a.shape[-2:]
    if min(m, n) == 0:
        return xp.zeros(a.shape[:-2] + (n, m), dtype=a.dtype), xp.zeros(a.shape[:-2] + (0,),
                                                                          dtype=bool)
    if hermitian:
        w, v = _run(xp, lambda x: tuple(xp.linalg.eigh(x)), "linalg.pinv", _NO_CONVERGENCE, a)
        s, left, right = xp.abs(w), v, v
    else:
        u, s, vh = _run(xp, lambda x: tuple(xp.linalg.svd(x, False)), "linalg.pinv",
                        _NO_CONVERGENCE, a)
        s, left, right = s, u, xp.swapaxes(vh, -1, -2)
        w = s
    kept = s > _tolerance(xp, a, atol, rtol, s.max(axis=-1, keepdims=True))
    scale = xp.where(kept, 1 / xp.where(kept, w, 1), 0).astype(a.dtype)
    return (right * scale[..., None, :]) @ xp.swapaxes(left, -1, -2), kept


class PseudoInverse(Function):
    """X = A⁺ (computed by pinv). At a fixed rank (Golub and Pereyra's differential of the
    pseudo-inverse): Ā = −XᵀGXᵀ + (I − AX)GᵀXXᵀ + XᵀXGᵀ(I − XA)."""
    def forward(self, a, x):
        return x

    def backward(self, g):
        return pinv_backward(self.inputs[0], self.output(), g)


def pinv_backward(a, x, g):
    """Ā for X = A⁺ and X̄ = G (PseudoInverse's; lstsq's gradient too)."""
    xgx = x @ g.mT @ x
    return -(x.mT @ g @ x.mT) + (g.mT @ x - a @ xgx) @ x.mT + x.mT @ (x @ g.mT - xgx @ a)


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse of each matrix of A, as torch.linalg.pinv: singular
    values at most max(atol, rtol·σ₁) count as 0 (rtol's default ε·max(m, n) where atol is
    not given); hermitian=True reads A as symmetric (eigh)."""
    A = _matrices("linalg.pinv", A)
    x, _ = _pinv_arrays(A.backend.xp, A._data, atol, rtol, hermitian)
    return PseudoInverse.apply(A, x=x)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values above max(atol, rtol·σ₁), as torch.linalg.matrix_rank
    (int64); hermitian=True counts |eigenvalues|."""
    op = "linalg.matrix_rank"
    A, xp = _matrices(op, A), A.backend.xp
    if min(A.shape[-2:]) == 0:
        return Tensor._make(xp.zeros(A.shape[:-2], dtype=xp.int64), A.device)
    s = xp.abs(xp.linalg.eigvalsh(A._data)) if hermitian else _singular_values(xp, A._data)
    kept = s > _tolerance(xp, A._data, atol, rtol, s.max(axis=-1, keepdims=True))
    return _count(xp, kept, A.device)


def _count(xp, kept, device):
    """The number of singular values kept, per matrix, as an int64 Tensor (an array even for
    one matrix: NumPy's sum of a 1-D array is a scalar, not an array a Tensor can hold)."""
    return Tensor._make(xp.asarray(kept.sum(axis=-1), dtype=xp.int64), device)


def cond(A, p=None):
    """The condition number of each matrix of A, as torch.linalg.cond: in the 2-norm
    σ_max/σ_min (p=None or 2; p=-2: σ_min/σ_max), from svdvals; for p 'fro', 'nuc', ±1 or
    ±inf ‖A‖·‖A⁻¹‖ of square A. (A singular matrix is inv's RuntimeError for those p, where
    PyTorch answers inf.)"""
    op = "linalg.cond"
    if p not in (None, 2, -2, "fro", "nuc", 1, -1, math.inf, -math.inf):
        raise ValueError(f"{op}: p={p!r} is not a valid norm; valid: None, 2, -2, 'fro', "
                         f"'nuc', 1, -1, inf, -inf")
    if p not in (None, 2, -2):
        A = _square(op, A)
        if A.shape[-1] == 0:                         # 0 by 0: 0 for every p, as PyTorch
            return A.sum((-2, -1))
        return matrix_norm(A, p) * matrix_norm(inv(A), p)
    s = svdvals(_matrices(op, A))
    if s.shape[-1] == 0:                             # no singular values: 0, as PyTorch
        return s.sum(-1)
    big, small = s.narrow(-1, 0, 1).squeeze(-1), s.narrow(-1, s.shape[-1] - 1, 1).squeeze(-1)
    return small / big if p == -2 else big / small


def _broadcast_batches(op, A, B):
    """A and B expanded to one batch shape (their leading dims broadcast)."""
    try:
        batch = tuple(backend.broadcast_shapes(A.shape[:-2], B.shape[:-2]))
    except ValueError:
        raise ValueError(f"{op}: the batch dims of A {A.shape} and B {B.shape} do not "
                         f"broadcast") from None
    return [t if t.shape[:-2] == batch else expand(t, batch + t.shape[-2:]) for t in (A, B)]


class TriangularSolve(Function):
    """X = T⁻¹B, T A's upper or lower triangle (its diagonal ones where unit). dB = T⁻ᵀG (a
    solve with the other triangle), dA = the triangle of −dB Xᵀ."""
    def forward(self, a, b, upper, unit):
        self.upper, self.unit = upper, unit
        xp = self.xp
        t = xp.triu(a, int(unit)) if upper else xp.tril(a, -int(unit))
        if unit:
            t = t + xp.eye(a.shape[-1], dtype=a.dtype)
        if not upper:        # reversing rows and columns makes it upper: no LU pivoting
            t, b = xp.flip(t, (-2, -1)), xp.flip(b, -2)
        if not unit and t.size and not bool((xp.diagonal(t, 0, -2, -1) != 0).all()):
            x = _back_substitution(xp, t, b)         # singular: inf and NaN, as PyTorch's
        else:
            x = _run(xp, xp.linalg.solve, "linalg.solve_triangular", _SINGULAR, t, b)
        return x if upper else xp.flip(x, -2)

    def backward(self, g):
        a = self.inputs[0]
        gb = TriangularSolve.apply(a.mT, g, upper=not self.upper, unit=self.unit)
        if not a.requires_grad:
            return None, gb
        ga = -(gb @ self.output().mT)
        shift = int(self.unit)
        return (ga.triu(shift) if self.upper else ga.tril(-shift)), gb


def _back_substitution(xp, t, b):
    """T⁻¹B for upper triangular T, row by row from the last: where T has a 0 on its diagonal
    the quotients are IEEE's (inf, NaN), as a triangular solve's (LAPACK's trsm) are."""
    x = xp.zeros(b.shape, dtype=b.dtype)
    for i in range(t.shape[-1] - 1, -1, -1):
        rest = t[..., i:i + 1, i + 1:] @ x[..., i + 1:, :]
        x[..., i:i + 1, :] = (b[..., i:i + 1, :] - rest) / t[..., i:i + 1, i:i + 1]
    return x


def solve_triangular(A, B, *, upper, left=True, unitriangular=False):
    """X with TX = B (left=False: XT = B), T the upper or lower triangle of A (..., n, n)
    (with ones on its diagonal if unitriangular), as torch.linalg.solve_triangular; B (...,
    n, k) (left=False: (..., k, n)), batch dims broadcast. A 0 on T's diagonal gives inf or
    NaN, as PyTorch (no error)."""
    op = "linalg.solve_triangular"
    A = _square(op, A)
    if not isinstance(B, Tensor):
        raise TypeError(f"{op}: B must be a Tensor, got {type(B).__name__}")
    check_same_float(op, A, B)
    if not backend.is_floating(B.dtype):             # integers, bools: A's dtype, as PyTorch
        B = B.to(dtype=A.dtype)
    if B.ndim < 2:
        raise ValueError(f"{op}: B must have at least 2 dims, got shape {B.shape}")
    if not left:                                     # XT = B  <=>  TᵀXᵀ = Bᵀ
        return solve_triangular(A.mT, B.mT, upper=not upper,
                                unitriangular=unitriangular).mT
    n = A.shape[-1]
    if B.shape[-2] != n:
        raise ValueError(f"{op}: incompatible shapes of A {A.shape} and B {B.shape}: B must "
                         f"be (..., {n}, k)")
    A, B = _broadcast_batches(op, A, B)
    return TriangularSolve.apply(A, B, upper=bool(upper), unit=bool(unitriangular))


_THETA_13 = 5.371920351148152        # Higham's bound on |A|₁ for the [13/13] Padé, float64
_PADE_13 = [math.factorial(26 - j) * math.factorial(13) /
            (math.factorial(26) * math.factorial(j) * math.factorial(13 - j))
            for j in range(14)]          # (2m−j)! m! / ((2m)! j! (m−j)!), m = 13


def _expm(xp, a):
    """e^A for each matrix of a: scaled by 2⁻ˢ to |A|₁ ≤ θ₁₃, the [13/13] Padé approximant
    q(A)⁻¹p(A) (p(A) = V + U, q(A) = V − U, U odd, V even), then squared s times."""
    norm = xp.abs(a).sum(axis=-2).max(axis=-1)
    s = xp.ceil(xp.log2(xp.maximum(norm, _THETA_13) / _THETA_13))
    s = xp.where(xp.isfinite(s), s, 0)               # (inf or NaN in A: NaN out, unsquared)
    a = a / (2.0 ** s)[..., None, None].astype(a.dtype)
    c, eye = _PADE_13, xp.eye(a.shape[-1], dtype=a.dtype)
    a2 = a @ a
    a4 = a2 @ a2
    a6 = a4 @ a2
    u = a @ (a6 @ (c[13] * a6 + c[11] * a4 + c[9] * a2) + c[7] * a6 + c[5] * a4 + c[3] * a2
             + c[1] * eye)
    v = a6 @ (c[12] * a6 + c[10] * a4 + c[8] * a2) + c[6] * a6 + c[4] * a4 + c[2] * a2 + \
        c[0] * eye
    r = _run(xp, xp.linalg.solve, "linalg.matrix_exp", _NO_CONVERGENCE, v - u, v + u)
    for k in range(int(s.max()) if s.size else 0):
        r = xp.where((s > k)[..., None, None], r @ r, r)
    return r


class MatrixExp(Function):
    """e^A. dA = the upper-right block of exp([[Aᵀ, G], [0, Aᵀ]]): the Fréchet derivative
    L(A, E) = ∫₀¹ e^{tA} E e^{(1−t)A} dt is that block of exp([[A, E], [0, A]]) (Van Loan),
    and its adjoint in E is L(Aᵀ, G)."""
    def forward(self, a):
        return _expm(self.xp, a) if a.size else a.copy()

    def backward(self, g):
        at, n = self.inputs[0].mT, g.shape[-1]
        zeros = self.const(self.xp.zeros(g.shape, dtype=g.dtype))
        block = cat([cat([at, g], -1), cat([zeros, at], -1)], -2)
        return matrix_exp(block).narrow(-2, 0, n).narrow(-1, n, n)


def matrix_exp(input):
    """The matrix exponential Σ Aᵏ/k! of each square matrix of A, as
    torch.linalg.matrix_exp."""
    return MatrixExp.apply(_square("linalg.matrix_exp", input))
