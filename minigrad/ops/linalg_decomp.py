"""Matrix decompositions, PyTorch's torch.linalg: qr, eigh and eigvalsh, svd and svdvals;
and torch.svd and torch.qr, the older spellings (mg.svd, mg.qr). What is built on them
(pinv, matrix_rank, cond), solve_triangular and matrix_exp are linalg_solvers.py's; lstsq
is linalg_lstsq.py's. Real float32/float64 tensors, batched over leading dims. (eig and eigvals are
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
from minigrad.ops.linalg import _square, _run
from minigrad.ops.shape import cat

QRResult = namedtuple("QRResult", ("Q", "R"))
EighResult = namedtuple("EighResult", ("eigenvalues", "eigenvectors"))
SVDResult = namedtuple("SVDResult", ("U", "S", "Vh"))

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
    return g.requires_grad or bool((g._data != 0).any())


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
    from minigrad.ops.linalg_solvers import solve_triangular     # (it imports this module)
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
    w = _run(xp, lambda x: xp.linalg.eigvalsh(x, UPLO), op, _NO_CONVERGENCE, A._data)
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


def _singular_values(xp, a):
    return _run(xp, lambda x: xp.linalg.svd(x, False, False), "linalg.svdvals",
                _NO_CONVERGENCE, a)


def svdvals(A):
    """The singular values of each matrix of A, descending, as torch.linalg.svdvals;
    gradient U diag(G) Vᵀ."""
    A = _matrices("linalg.svdvals", A)
    if _needs_grad(A):
        return svd(A, full_matrices=False).S
    return Tensor._make(_singular_values(A.backend.xp, A._data), A.device)
