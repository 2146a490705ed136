"""Matrix decompositions, PyTorch's torch.linalg: qr, eigh and eigvalsh, svd and svdvals,
and what is built on them (pinv, lstsq, matrix_rank, cond), with solve_triangular and
matrix_exp; and torch.svd, torch.qr and torch.pinverse, the older spellings (mg.svd, mg.qr,
mg.pinverse). Real float32/float64 tensors, batched over leading dims. (eig and eigvals are
left out: a real matrix's eigenvalues may be complex, and minigrad has no complex dtype.)

A decomposition runs as one op whose output packs its factors, flattened, side by side along
the last dim; the factors handed out are copies of its slices. So backward gets the gradients
of all of them at once (zeros for an unused one) and reads the factors as slices of its own
output: the gradient, written with Tensor ops, is itself differentiable. (Copies, so that
each factor has memory and a version counter of its own, as PyTorch's separate outputs:
writing into Q neither changes R nor makes an op that saved R refuse its backward.) Each
formula is derived from the differential of the factorisation (d(QR) = dQ R + Q dR, with
QᵀdQ skew and dR R⁻¹ upper triangular; likewise VᵀdV and UᵀdU skew for eigh and svd):
  qr:   A = QR,   M = G_R Rᵀ − QᵀG_Q, N = M's upper triangle mirrored:  Ā = (G_Q + QN) R⁻ᵀ
  eigh: A = VΛVᵀ, Ā = V (diag(G_Λ) + F∘(VᵀG_V − G_VᵀV)/2) Vᵀ,  F_ij = 1/(λ_j − λ_i)
  svd:  A = USVᵀ, Ā = U (diag(G_S) + F∘(UᵀG_U − G_UᵀU) S + S F∘(VᵀG_V − G_VᵀV)) Vᵀ
                      + (I − UUᵀ) G_U S⁻¹ Vᵀ + U S⁻¹ G_Vᵀ (I − VVᵀ),  F_ij = 1/(s_j² − s_i²)
Repeated eigenvalues (singular values) make F infinite: the gradient is then inf or NaN, as
PyTorch's, unless the eigenvectors (singular vectors) got no gradient or an all-zero one.
"""
import math
from collections import namedtuple

from minigrad import backend
from minigrad.autograd import Function, is_grad_enabled
from minigrad.tensor import Tensor
from minigrad.ops.linalg import _square, _run, _SINGULAR, inv
from minigrad.ops.matmul import check_same_float
from minigrad.ops.reduce import expand
from minigrad.ops.shape import cat

QRResult = namedtuple("QRResult", ("Q", "R"))
EighResult = namedtuple("EighResult", ("eigenvalues", "eigenvectors"))
SVDResult = namedtuple("SVDResult", ("U", "S", "Vh"))
LstsqResult = namedtuple("LstsqResult", ("solution", "residuals", "rank", "singular_values"))

_NO_CONVERGENCE = "the algorithm failed to converge (the input holds inf or NaN, or is too " \
    "ill-conditioned)"


def _matrices(op, a, name="A"):
    """Refuse what is not a float32/float64 tensor of matrices (..., m, n), as PyTorch."""
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(a).__name__}")
    if a.dtype not in (backend.float32, backend.float64):
        raise TypeError(f"{op}: expected a float32 or float64 tensor, got {a.dtype} (as "
                        f"PyTorch); convert with .float() or .double() first")
    if a.ndim < 2:
        raise ValueError(f"{op}: {name} must have at least 2 dims (..., m, n), got shape "
                         f"{a.shape}")
    return a


def _needs_grad(a):
    return a.requires_grad and is_grad_enabled()


def _pack(xp, batch, *arrays):
    """The arrays (each batch + its own shape) flattened and side by side: batch + (total,)."""
    return xp.concatenate([a.reshape(batch + (math.prod(a.shape[len(batch):]),))
                           for a in arrays], axis=-1)


def _unpack(packed, shapes):
    """The Tensors _pack put into `packed` (slices of it, for backward), each of shape
    batch + shape."""
    out, start, batch = [], 0, packed.shape[:-1]
    for shape in shapes:
        size = math.prod(shape)
        out.append(packed.narrow(-1, start, size).reshape(batch + tuple(shape)))
        start += size
    return out


def _factors(packed, shapes):
    """The factors handed out: _unpack's slices, each copied (see the module's docstring)."""
    return [f.clone() for f in _unpack(packed, shapes)]


def _used(g):
    """Whether gradient g of a factor can contribute: not all zeros (an unused factor's), or
    itself differentiable (a double backward may ask for its derivative)."""
    return g.requires_grad or bool((g.data != 0).any())


def _eye(like, n):
    xp = like.backend.xp
    return Tensor._make(xp.eye(n, dtype=like.dtype), like.device)


class Decomposition:
    """What a factorisation's node (a Function) shares: forward packs the factors; backward
    unpacks the factors and their gradients and hands them to `gradient` (it reads the
    output only)."""
    reads_inputs = False

    def forward(self, a, **params):
        factors = self.factorise(self.xp, a, **params)
        self.shapes = [f.shape[a.ndim - 2:] for f in factors]
        return _pack(self.xp, a.shape[:-2], *factors)

    def backward(self, g):
        return self.gradient(_unpack(self.output(), self.shapes), _unpack(g, self.shapes))


def _solve_upper_right(R, B):
    """B R⁻ᵀ for upper triangular R (a triangular solve, itself differentiable)."""
    return solve_triangular(R, B.mT, upper=True).mT


def _qr_gradient(q, r, gq, gr):
    """Ā for A = QR with R square (m ≥ n): (G_Q + QN) R⁻ᵀ, N = M's upper triangle mirrored
    below, M = G_R Rᵀ − QᵀG_Q (from Qᵀ dA R⁻¹ = QᵀdQ (skew) + dR R⁻¹ (upper))."""
    m = gr @ r.mT - q.mT @ gq
    n = m.triu() + m.triu(1).mT
    return _solve_upper_right(r, gq + q @ n)


class QR(Decomposition, Function):
    """A = QR. Wide A (m < n): A = Q[X | Y] with X square, Y = QᵀA₂, so A₂'s gradient is
    Q G_Y and G_Y reaches Q as A₂ G_Yᵀ; X's is the square case's."""
    def factorise(self, xp, a, mode):
        self.mode = mode
        return _run(xp, lambda x: tuple(xp.linalg.qr(x, mode)), "linalg.qr",
                    _NO_CONVERGENCE, a)

    def gradient(self, factors, grads):
        (q, r), (gq, gr) = factors, grads
        m, n = q.shape[-2], r.shape[-1]
        if m > n and self.mode == "complete":
            raise RuntimeError("linalg.qr: the QR decomposition is not differentiable when "
                               "mode='complete' and nrows > ncols (as PyTorch); use "
                               "mode='reduced'")
        if m >= n:
            return _qr_gradient(q, r, gq, gr)
        x, y = r.narrow(-1, 0, m), r.narrow(-1, m, n - m)
        gx, gy = gr.narrow(-1, 0, m), gr.narrow(-1, m, n - m)
        return cat([_qr_gradient(q, x, gq + (q @ y) @ gy.mT, gx), q @ gy], -1)


class OnlyR(Function):
    """R of A = QR without Q (mode='r'): no gradient, as PyTorch's."""
    reads_inputs = False
    needs_values = False

    def forward(self, a):
        return _run(self.xp, lambda x: self.xp.linalg.qr(x, "r"), "linalg.qr",
                    _NO_CONVERGENCE, a)

    def backward(self, g):
        raise RuntimeError("linalg.qr: the derivative depends on Q, which is not computed "
                           "when mode='r' (as PyTorch); use mode='reduced' to differentiate")


def qr(A, mode="reduced"):
    """A = QR, Q with orthonormal columns, R upper triangular, as torch.linalg.qr: a named
    tuple (Q, R). mode "reduced": Q (m, k), R (k, n), k = min(m, n); "complete": Q (m, m),
    R (m, n); "r": R only (Q empty, and no gradient). Differentiable except for "r" and for
    "complete" with m > n (as PyTorch)."""
    op = "linalg.qr"
    A = _matrices(op, A)
    if mode not in ("reduced", "complete", "r"):
        raise ValueError(f"{op}: unrecognized mode {mode!r}; expected 'reduced' (default), "
                         f"'complete' or 'r'")
    if mode == "r":
        empty = Tensor._make(A.backend.xp.zeros((0,), dtype=A.dtype), A.device)
        return QRResult(empty, OnlyR.apply(A))
    m, n = A.shape[-2:]
    k = m if mode == "complete" else min(m, n)
    return QRResult(*_factors(QR.apply(A, mode=mode), [(m, k), (k, n)]))


class Eigh(Decomposition, Function):
    """A = VΛVᵀ, eigenvalues ascending. Ā = V (diag(G_Λ) + F∘skew(VᵀG_V)) Vᵀ, F_ij =
    1/(λ_j − λ_i): dΛ = diag(VᵀdA V) and VᵀdV = F∘(VᵀdA V); symmetric, as PyTorch's."""
    def factorise(self, xp, a, uplo):
        return _run(xp, lambda x: tuple(xp.linalg.eigh(x, uplo)), "linalg.eigh",
                    _NO_CONVERGENCE, a)

    def gradient(self, factors, grads):
        (w, v), (gw, gv) = factors, grads
        inner = gw.diag_embed()
        if _used(gv):
            x = v.mT @ gv
            gaps = w.unsqueeze(-2) - w.unsqueeze(-1) + _eye(w, w.shape[-1])   # (diag: 1)
            inner = inner + (x - x.mT) / gaps * 0.5
        return v @ inner @ v.mT


def _uplo(op, UPLO):
    if UPLO not in ("L", "U"):
        raise ValueError(f"{op}: UPLO must be 'L' or 'U', got {UPLO!r}")
    return UPLO


def eigh(A, UPLO="L"):
    """Eigenvalues (ascending) and orthonormal eigenvectors of each symmetric matrix of A, as
    torch.linalg.eigh: a named tuple (eigenvalues, eigenvectors). Only the lower (UPLO="L")
    or upper triangle is read; the gradient is the symmetric one, as PyTorch's."""
    op = "linalg.eigh"
    A, UPLO = _square(op, A), _uplo(op, UPLO)
    n = A.shape[-1]
    return EighResult(*_factors(Eigh.apply(A, uplo=UPLO), [(n,), (n, n)]))


def eigvalsh(A, UPLO="L"):
    """The eigenvalues (ascending) of each symmetric matrix of A, as torch.linalg.eigvalsh;
    gradient V diag(G) Vᵀ (finite also where eigenvalues repeat)."""
    op = "linalg.eigvalsh"
    A, UPLO = _square(op, A), _uplo(op, UPLO)
    if _needs_grad(A):
        return eigh(A, UPLO).eigenvalues
    xp = A.backend.xp
    w = _run(xp, lambda x: xp.linalg.eigvalsh(x, UPLO), op, _NO_CONVERGENCE, A.data)
    return Tensor._make(w, A.device)


class SVD(Decomposition, Function):
    """A = U S Vᵀ (PyTorch's Vh is Vᵀ); the gradient in the module's docstring. With
    full_matrices, the columns of U and rows of Vh past min(m, n) (any basis of their
    subspace) get no gradient, as PyTorch."""
    def factorise(self, xp, a, full):
        return _run(xp, lambda x: tuple(xp.linalg.svd(x, full)), "linalg.svd",
                    _NO_CONVERGENCE, a)

    def gradient(self, factors, grads):
        k = factors[1].shape[-1]
        (u, s, vh), (gu, gs, gvh) = [(x.narrow(-1, 0, k), y, z.narrow(-2, 0, k))
                                     for x, y, z in (factors, grads)]
        return _svd_gradient(u, s, vh.mT, gu, gs, gvh.mT)


def _svd_gradient(u, s, v, gu, gs, gv):
    """Ā for A = U S Vᵀ, U (m, k), V (n, k) (see the module's docstring)."""
    inner, extra = gs.diag_embed(), 0
    use_u, use_v = _used(gu), _used(gv)
    if use_u or use_v:
        s2 = s * s
        gaps = s2.unsqueeze(-2) - s2.unsqueeze(-1) + _eye(s, s.shape[-1])    # (diag: 1)
        row = s.unsqueeze(-2)                            # M * row: M diag(S)
    if use_u:
        j = u.mT @ gu
        inner = inner + (j - j.mT) / gaps * row
        if u.shape[-2] > u.shape[-1]:                    # (I − UUᵀ) G_U S⁻¹ Vᵀ
            extra = extra + ((gu - u @ (u.mT @ gu)) / row) @ v.mT
    if use_v:
        j = v.mT @ gv
        inner = inner + (j - j.mT) / gaps * s.unsqueeze(-1)
        if v.shape[-2] > v.shape[-1]:                    # U S⁻¹ G_Vᵀ (I − VVᵀ)
            extra = extra + u @ ((gv - v @ (v.mT @ gv)) / row).mT
    return u @ inner @ v.mT + extra


def svd(A, full_matrices=True):
    """A = U diag(S) Vh, singular values descending, as torch.linalg.svd: a named tuple (U,
    S, Vh); full_matrices=False: U (m, k), Vh (k, n), k = min(m, n)."""
    A = _matrices("linalg.svd", A)
    m, n = A.shape[-2:]
    k = min(m, n)
    cu, rv = (m, n) if full_matrices else (k, k)
    return SVDResult(*_factors(SVD.apply(A, full=bool(full_matrices)),
                               [(m, cu), (k,), (rv, n)]))


SVDVResult = namedtuple("SVDVResult", ("U", "S", "V"))


def svd_v(input, some=True, compute_uv=True):
    """torch.svd (mg.svd, Tensor.svd), the older spelling: (U, S, V) with A = U diag(S) Vᵀ,
    V itself, not linalg.svd's Vh; some=False gives the full U (m, m) and V (n, n).
    compute_uv=False: S alone is computed (differentiable), U and V are zeros of shapes
    (m, m) and (n, n), as PyTorch."""
    A = _matrices("svd", input)
    if not compute_uv:
        xp, (m, n) = A.backend.xp, A.shape[-2:]
        zeros = [Tensor._make(xp.zeros(A.shape[:-2] + (k, k), dtype=A.dtype), A.device)
                 for k in (m, n)]
        return SVDVResult(zeros[0], svdvals(A), zeros[1])
    u, s, vh = svd(A, full_matrices=not some)
    return SVDVResult(u, s, vh.mT)


def qr_some(input, some=True):
    """torch.qr (mg.qr, Tensor.qr), the older spelling: linalg.qr's reduced mode, or its
    complete mode where some=False."""
    return qr(input, "reduced" if some else "complete")


def pinverse(input, rcond=1e-15):
    """torch.pinverse (mg.pinverse, Tensor.pinverse): linalg.pinv with rtol=rcond; its
    default, 1e-15, is not linalg.pinv's."""
    return pinv(input, rtol=rcond)


def _singular_values(xp, a):
    return _run(xp, lambda x: xp.linalg.svd(x, False, False), "linalg.svdvals",
                _NO_CONVERGENCE, a)


def svdvals(A):
    """The singular values of each matrix of A, descending, as torch.linalg.svdvals;
    gradient U diag(G) Vᵀ."""
    A = _matrices("linalg.svdvals", A)
    if _needs_grad(A):
        return svd(A, full_matrices=False).S
    return Tensor._make(_singular_values(A.backend.xp, A.data), A.device)


def _tolerance(xp, a, atol, rtol, top):
    """max(atol, rtol·top), PyTorch's cutoff for the singular values (batch + (1,)). rtol
    defaults to ε·max(m, n), or 0 where an atol above 0 is given."""
    def value(t):
        return xp.asarray(t.data if isinstance(t, Tensor) else t, dtype=a.dtype)[..., None]
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
        a, x = self.inputs[0], self.output()
        xgx = x @ g.mT @ x
        return -(x.mT @ g @ x.mT) + (g.mT @ x - a @ xgx) @ x.mT + \
            x.mT @ (x @ g.mT - xgx @ a)


def pinv(A, *, atol=None, rtol=None, hermitian=False):
    """The Moore-Penrose pseudo-inverse of each matrix of A, as torch.linalg.pinv: singular
    values at most max(atol, rtol·σ₁) count as 0 (rtol's default ε·max(m, n) where atol is
    not given); hermitian=True reads A as symmetric (eigh)."""
    A = _matrices("linalg.pinv", A)
    x, _ = _pinv_arrays(A.backend.xp, A.data, atol, rtol, hermitian)
    return PseudoInverse.apply(A, x=x)


def matrix_rank(A, *, atol=None, rtol=None, hermitian=False):
    """The number of singular values above max(atol, rtol·σ₁), as torch.linalg.matrix_rank
    (int64); hermitian=True counts |eigenvalues|."""
    op = "linalg.matrix_rank"
    A, xp = _matrices(op, A), A.backend.xp
    if min(A.shape[-2:]) == 0:
        return Tensor._make(xp.zeros(A.shape[:-2], dtype=xp.int64), A.device)
    s = xp.abs(xp.linalg.eigvalsh(A.data)) if hermitian else _singular_values(xp, A.data)
    kept = s > _tolerance(xp, A.data, atol, rtol, s.max(axis=-1, keepdims=True))
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
        return _matrix_norm(A, p) * _matrix_norm(inv(A), p)
    s = svdvals(_matrices(op, A))
    if s.shape[-1] == 0:                             # no singular values: 0, as PyTorch
        return s.sum(-1)
    big, small = s.narrow(-1, 0, 1).squeeze(-1), s.narrow(-1, s.shape[-1] - 1, 1).squeeze(-1)
    return small / big if p == -2 else big / small


def _matrix_norm(A, p):
    """‖A‖ for cond: the nuclear norm Σσ from svdvals, the others matrix_norm's."""
    from minigrad.ops.linalg_more import matrix_norm
    return svdvals(A).sum(-1) if p == "nuc" else matrix_norm(A, p)


def lstsq(A, B, rcond=None, *, driver=None):
    """The least-squares solution X of AX ≈ B, as torch.linalg.lstsq with its CPU default
    driver 'gelsy'. A (..., m, n); B (..., m, k) of A's dtype with as many dims (batch dims
    broadcast), or a vector of shape A.shape[:-1]. A named tuple (solution, residuals, rank,
    singular_values), of which 'gelsy' fills only solution and rank (rank of A's batch
    shape; residuals and singular_values empty). The solution is A⁺B, singular values at
    most rcond·σ₁ (default ε·max(m, n)) counted as 0: the minimum-norm solution where A is
    rank-deficient; its gradient is pinv's and matmul's. The rank is counted from the
    singular values, not gelsy's pivoted QR."""
    op = "linalg.lstsq"
    if driver not in (None, "gelsy"):
        raise ValueError(f"{op}: driver {driver!r} is not implemented; valid: None or "
                         f"'gelsy' (the CPU default)")
    A = _matrices(op, A)
    if not isinstance(B, Tensor):
        raise TypeError(f"{op}: B must be a Tensor, got {type(B).__name__}")
    if B.dtype != A.dtype:
        raise TypeError(f"{op}: A and B have dtypes {A.dtype} and {B.dtype}; they must be "
                        f"one (as PyTorch): convert B with .to(A.dtype)")
    vector, m = B.shape == A.shape[:-1], A.shape[-2]     # (as PyTorch: A's batch shape)
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.ndim != A.ndim or Bm.shape[-2] != m:
        raise ValueError(f"{op}: incompatible shapes of A {A.shape} and B {B.shape}: B must "
                         f"be (..., {m}, k) with as many dims as A, or {A.shape[:-1]}")
    _broadcast_batches(op, A, Bm)           # (checked only: the product below broadcasts)
    xp = A.backend.xp
    # one pseudo-inverse per matrix of A, not per broadcast copy: rank has A's batch shape,
    # as PyTorch's
    x, kept = _pinv_arrays(xp, A.data, None, rcond, False)
    X = PseudoInverse.apply(A, x=x) @ Bm
    empty = Tensor._make(xp.zeros((0,), dtype=A.dtype), A.device)
    rank = _count(xp, kept, A.device)
    return LstsqResult(X.squeeze(-1) if vector else X, empty, rank, empty)


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


def matrix_exp(A):
    """The matrix exponential Σ Aᵏ/k! of each square matrix of A, as
    torch.linalg.matrix_exp."""
    return MatrixExp.apply(_square("linalg.matrix_exp", A))
