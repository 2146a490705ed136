"""Linear algebra, PyTorch's: det, slogdet and logdet, inv (inverse), solve, cholesky and
matrix_power on square matrices (batched over leading dims), and the products mv, inner,
vdot and kron. Float tensors only, as PyTorch. The factorisations run in the array
library's linalg (LAPACK, cuSOLVER); each backward is the textbook formula written with
Tensor ops, itself differentiable (double backward):
  inv:   X = A⁻¹,     dA = -Xᵀ G Xᵀ
  det:   d = |A|,     dA = g·d·A⁻ᵀ (the cofactor matrix; for a singular A from an SVD)
  slogdet: log|A|,    dA = g·A⁻ᵀ
  solve: X = A⁻¹B,    dB = A⁻ᵀ G,  dA = -dB Xᵀ
  cholesky: A = LLᵀ,  dA = sym(L⁻ᵀ Φ(Lᵀ G) L⁻¹), Φ: the lower triangle, its diagonal halved
"""
import math
from collections import namedtuple

from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.matmul import matmul, check_same_float
from minigrad.ops.reduce import expand
from minigrad.ops.elementwise import where


def _square(op, a, name="A"):
    """Refuse what is not a float tensor of square matrices (..., n, n), as PyTorch."""
    if not isinstance(a, Tensor):
        raise TypeError(f"{op}: {name} must be a Tensor, got {type(a).__name__}")
    if not backend.is_floating(a.dtype) or a.dtype == backend.float16:
        raise TypeError(f"{op}: expected a float32 or float64 tensor, got {a.dtype} (as "
                        f"PyTorch); convert with .float() or .double() first")
    if a.ndim < 2 or a.shape[-1] != a.shape[-2]:
        what = f"{a.shape[-2]} by {a.shape[-1]} matrices" if a.ndim >= 2 else \
            f"of {a.ndim} dim(s)"
        raise ValueError(f"{op}: {name} must be batches of square matrices (..., n, n), but "
                         f"they are {what} (shape {a.shape})")
    return a


class LinAlgError(RuntimeError):
    """A matrix the factorisation cannot take (singular, not positive-definite, no
    convergence), as torch.linalg.LinAlgError: a RuntimeError, so either catches it."""


def _run(xp, fn, op, what, *arrays, nan_where_not_finite=False):
    """fn(*arrays) from the array library's linalg, its failure (a singular matrix, one not
    positive-definite) as PyTorch's LinAlgError. NumPy raises its own LinAlgError; cuSOLVER
    reports nothing and leaves inf or NaN, so on another device a result that is not finite
    where the input was is read as that failure (one wait for the device, as PyTorch's
    check). nan_where_not_finite (inv, solve): a matrix of arrays[0] holding inf or NaN that
    LAPACK refuses gives NaN, as PyTorch's, not the failure."""
    try:
        out = fn(*arrays)
    except Exception as e:                       # numpy.linalg.LinAlgError (a ValueError)
        if type(e).__name__ != "LinAlgError":
            raise
        a = arrays[0]
        bad = ~xp.isfinite(a).all(axis=(-2, -1)) if a.size else None
        if not nan_where_not_finite or bad is None or not bool(bad.any()):
            raise LinAlgError(f"{op}: {what}") from None
        # those matrices swapped for the identity, the rest solved again, then NaN there
        mask = bad[..., None, None]
        out = _run(xp, fn, op, what, xp.where(mask, xp.eye(a.shape[-1], dtype=a.dtype), a),
                   *arrays[1:])
        return xp.where(mask, xp.asarray(math.nan, dtype=out.dtype), out)
    first = out[0] if isinstance(out, tuple) else out
    if not backend.is_numpy(xp) and first.size and not bool(xp.isfinite(first).all()) and \
            all(bool(xp.isfinite(a).all()) for a in arrays):
        raise LinAlgError(f"{op}: {what}")
    return out


_SINGULAR = "the input matrix is singular (its inverse does not exist)"


class Inverse(Function):
    """X = A⁻¹; dA = -Xᵀ G Xᵀ, from the output."""
    reads_inputs = False                                 # backward reads the output only
    def forward(self, a):
        return _run(self.xp, self.xp.linalg.inv, "linalg.inv", _SINGULAR, a,
                    nan_where_not_finite=True)
    def backward(self, g):
        xt = self.output().mT
        return -(xt @ g @ xt)


def inv(input):
    """The inverse of each square matrix of A (..., n, n), as torch.linalg.inv (and
    torch.inverse); a singular matrix is a LinAlgError (a RuntimeError), one holding inf or
    NaN that LAPACK refuses gives NaN, as PyTorch."""
    return Inverse.apply(_square("linalg.inv", input))


class Det(Function):
    """d = |A|; dA = g·d·A⁻ᵀ, the cofactor matrix. A singular A has no inverse but still a
    cofactor matrix: from A = U S Vᵀ it is |U||V|·U·diag(Π_{j≠i} s_j)·Vᵀ (a constant there,
    so second derivatives at an exactly singular matrix are 0). PyTorch answers 0 at some
    singular matrices instead; this is the derivative."""
    def forward(self, a):
        # LAPACK may pass over a NaN when it picks pivots and report a 0 pivot: det 0
        return _nan_where_nan(self.xp, a, self.xp.linalg.det(a))
    def backward(self, g):
        a, d = self.inputs[0], self.output()
        if a.shape[-1] == 0:                             # 0x0: an empty gradient, as torch
            return self.const(self.xp.zeros(a.shape, a.dtype))
        singular = d._data == 0
        if not bool(singular.any()):
            return (g * d).unsqueeze(-1).unsqueeze(-1) * inv(a).mT
        # the singular matrices' cofactors as constants; the rest of the batch through inv
        # (of the identity in the singular ones' place), so they keep their second derivative
        mask, ones = _singular_mask(self, a, singular)
        regular = (g * d).unsqueeze(-1).unsqueeze(-1) * inv(where(mask, ones, a)).mT
        cof = self.const(_cofactors(self.xp, a._data))
        return where(mask, g.unsqueeze(-1).unsqueeze(-1) * cof, regular)


def _singular_mask(fn, a, singular):
    """singular (batch dims) as a constant (..., 1, 1) mask, and the identity of a's dtype."""
    xp = fn.xp
    return (fn.const(singular[..., None, None]),
            fn.const(xp.eye(a.shape[-1], dtype=a.dtype)))


def _cofactors(xp, a):
    """The cofactor matrices of a's matrices (adj(A)ᵀ), singular ones too, by an SVD."""
    u, s, vh = xp.linalg.svd(a)
    ones = xp.ones(s.shape[:-1] + (1,), dtype=s.dtype)
    before = xp.cumprod(xp.concatenate([ones, s[..., :-1]], axis=-1), axis=-1)
    after = xp.flip(xp.cumprod(xp.flip(xp.concatenate([s[..., 1:], ones], axis=-1),
                                       axis=-1), axis=-1), axis=-1)
    sign = xp.linalg.det(u) * xp.linalg.det(vh)
    return (u * (before * after)[..., None, :]) @ vh * sign[..., None, None]


def _nan_where_nan(xp, a, value):
    """value (a's batch shape) with NaN where a's matrix holds a NaN, as PyTorch's."""
    if not a.size:
        return value
    nan = xp.isnan(a).any(axis=(-2, -1))
    return xp.where(nan, xp.asarray(math.nan, dtype=value.dtype), value) if \
        bool(nan.any()) else value


def det(input):
    """The determinant of each square matrix of A (..., n, n), as torch.linalg.det."""
    return Det.apply(_square("linalg.det", input))


# what slogdet returns: a tuple that also names its parts, as PyTorch's
SignLogAbsDet = namedtuple("SignLogAbsDet", ("sign", "logabsdet"))


class LogAbsDet(Function):
    """log|det A|; dA = g·A⁻ᵀ = g·cof(A)/det A. At a singular A, where log|det A| = -inf,
    that is ±inf (NaN where the cofactor is 0), as PyTorch's is (its signs may differ);
    that matrix is then differentiated once only (a constant there; the others of its
    batch twice)."""
    def forward(self, a, sign, value):                # (slogdet computed both)
        self.sign, self.nan = sign, self.xp.isnan(value)
        return value
    def backward(self, g):
        a = self.inputs[0]
        if a.shape[-1] == 0:                             # 0x0: an empty gradient, as torch
            return self.const(self.xp.zeros(a.shape, a.dtype))
        # (a NaN matrix, sign 0 too, goes through inv: a NaN gradient)
        singular = (self.sign == 0) & ~self.nan
        if not bool(singular.any()):
            return g.unsqueeze(-1).unsqueeze(-1) * inv(a).mT
        # the singular matrices' limits as constants; the rest of the batch through inv (of
        # the identity in the singular ones' place), so they keep their second derivative
        mask, ones = _singular_mask(self, a, singular)
        xp, cof = self.xp, _cofactors(self.xp, a._data)
        limit = xp.where(cof > 0, math.inf, xp.where(cof < 0, -math.inf, math.nan))
        limit = xp.where(singular[..., None, None], limit, 0)   # (no inf·0 into g elsewhere)
        g = g.unsqueeze(-1).unsqueeze(-1)
        return where(mask, g * self.const(limit.astype(a.dtype)),
                     g * inv(where(mask, ones, a)).mT)


def slogdet(input):
    """(sign, log|det|) of each square matrix of A, as torch.linalg.slogdet: a named tuple;
    the sign (-1, 0 or 1) has no gradient."""
    xp = input.backend.xp
    sign, value = xp.linalg.slogdet(_square("linalg.slogdet", input)._data)
    # a NaN in A: log|det| NaN and sign 0, as PyTorch (LAPACK may report a 0 pivot there)
    value = _nan_where_nan(xp, input._data, value)
    sign = xp.where(xp.isnan(value), 0, sign) if input.numel() else sign
    out = LogAbsDet.apply(input, sign=sign, value=value)
    return SignLogAbsDet(Tensor._make(input.backend.xp.asarray(sign, dtype=input.dtype), input.device),
                         out)


def logdet(input):
    """log det A, as torch.logdet: NaN where det < 0, -inf where it is 0; the gradient
    log|det A|'s."""
    sign, logabs = slogdet(_square("logdet", input))
    xp = input.backend.xp
    shift = xp.where(sign._data < 0, math.nan, 0.0).astype(input.dtype)     # log of the sign
    return logabs + Tensor._make(shift, input.device)


class Solve(Function):
    """X = A⁻¹B for A (..., n, n) and B (..., n, k) of one batch shape; dB = A⁻ᵀG (another
    solve), dA = -dB Xᵀ."""
    def forward(self, a, b):
        return _run(self.xp, self.xp.linalg.solve, "linalg.solve", "the solver failed because "
                    + _SINGULAR, a, b, nan_where_not_finite=True)
    def backward(self, g):
        a, b = self.inputs
        gb = Solve.apply(a.mT, g)
        ga = -(gb @ self.output().mT) if a.requires_grad else None
        return ga, gb


def solve(A, B, *, left=True):
    """X with AX = B (left=False: XA = B), as torch.linalg.solve: A (..., n, n); B (..., n,
    k), or a vector (..., n) where it is 1-D or has A's batch shape; batch dims broadcast."""
    op = "linalg.solve"
    A = _square(op, A)
    if not isinstance(B, Tensor):
        raise TypeError(f"{op}: B must be a Tensor, got {type(B).__name__}")
    check_same_float(op, A, B)
    vector = B.ndim == 1 or (B.ndim == A.ndim - 1 and B.shape == A.shape[:-1])
    if not left:                                         # XA = B  <=>  AᵀXᵀ = Bᵀ
        if vector:               # (read as vectors even where they would be a matrix, as
            # PyTorch: (k, n) with A (k, n, n) would otherwise be k rows against each A)
            raise ValueError(f"{op}: with left=False, B must be matrices (..., k, {A.shape[-1]})"
                             f"; B of shape {B.shape} is a vector per matrix of A (as "
                             f"PyTorch reads it): give B.unsqueeze(-2) for one row each")
        return solve(A.mT, B.mT).mT
    Bm = B.unsqueeze(-1) if vector else B
    n = A.shape[-1]
    if Bm.ndim < 2 or Bm.shape[-2] != n:
        raise ValueError(f"{op}: incompatible shapes of A {A.shape} and B {B.shape} for AX = "
                         f"B: B must be (..., {n}, k), or a vector (..., {n})")
    try:
        batch = tuple(backend.broadcast_shapes(A.shape[:-2], Bm.shape[:-2]))
    except ValueError:
        raise ValueError(f"{op}: the batch dims of A {A.shape} and B {B.shape} do not "
                         f"broadcast") from None
    A = A if A.shape[:-2] == batch else expand(A, batch + A.shape[-2:])
    Bm = Bm if Bm.shape[:-2] == batch else expand(Bm, batch + Bm.shape[-2:])
    X = Solve.apply(A, Bm)
    return X.squeeze(-1) if vector else X


class Cholesky(Function):
    """L, lower triangular with A = LLᵀ (only A's lower triangle is read). With Φ(M) the
    lower triangle of M with its diagonal halved: S = L⁻ᵀ Φ(Lᵀ G) L⁻¹, dA = (S + Sᵀ)/2."""
    reads_inputs = False                                 # backward reads L only
    def forward(self, a):
        what = "the factorization could not be completed because the input is not " \
            "positive-definite"
        out = _run(self.xp, self.xp.linalg.cholesky, "linalg.cholesky", what, a)
        # NumPy lets a NaN through (a NaN factor) where LAPACK's potrf refuses it, as PyTorch
        if out.size and (bool(self.xp.isnan(self.xp.diagonal(out, 0, -2, -1)).any()) or (
                not backend.is_numpy(self.xp) and not _reconstructs(self.xp, out, a))):
            raise LinAlgError(f"linalg.cholesky: {what}")
        return out
    def backward(self, g):
        L = self.output()
        n = L.shape[-1]
        half = self.const((self.xp.tri(n, dtype=L.dtype) - 0.5 * self.xp.eye(n,
                                                                             dtype=L.dtype)))
        phi = (L.mT @ g.tril()) * half
        Linv = inv(L)
        s = Linv.mT @ phi @ Linv
        return (s + s.mT) * 0.5


def _reconstructs(xp, L, a):
    """Whether LLᵀ is A (its lower triangle mirrored) to rounding: cuSOLVER reports a
    matrix that is not positive-definite by a flag CuPy does not check, and leaves the
    rest unfactored, finite; Cholesky is backward stable, so a factor that succeeded
    reconstructs A to about n·ε·|A|."""
    low = xp.tril(a)
    sym = low + xp.swapaxes(xp.tril(a, -1), -1, -2)
    residual = float(xp.abs(L @ xp.swapaxes(L, -1, -2) - sym).max())
    scale = float(xp.abs(sym).max())
    return residual <= 100 * a.shape[-1] * backend.machine_eps(a.dtype) * scale


def cholesky(input, upper=False):
    """The Cholesky factor of each symmetric positive-definite matrix of A, as
    torch.linalg.cholesky: lower triangular L with A = LLᵀ, or (upper=True) U = Lᵀ."""
    L = Cholesky.apply(_square("linalg.cholesky", input))
    return L.mT if upper else L


def matrix_power(input, n):
    """A multiplied by itself n times, as torch.linalg.matrix_power: n = 0 gives the
    identity, a negative n powers of the inverse. By repeated squaring: O(log n) products."""
    op = "linalg.matrix_power"
    if not backend.is_integer(n) or isinstance(n, bool):
        raise TypeError(f"{op}: n must be an int, got {n!r}")
    if not isinstance(input, Tensor) or input.ndim < 2 or input.shape[-1] != input.shape[-2]:
        shape = getattr(input, "shape", type(input).__name__)
        raise ValueError(f"{op}: A must be batches of square matrices (..., n, n), got {shape}")
    if n == 0:                     # the identity, still from A (its gradient is 0)
        eye = input.backend.xp.eye(input.shape[-1], dtype=input.dtype)
        return where(True, Tensor._make(eye, input.device), input)
    if n < 0:
        input, n = inv(_square(op, input)), -n
    result, square = None, input
    while True:
        if n & 1:
            result = square if result is None else matmul(result, square)
        n >>= 1
        if not n:
            return result
        square = matmul(square, square)


def mv(input, vec):
    """A (n, m) times the vector v (m,), as torch.mv."""
    for name, t, nd in (("mat", input, 2), ("vec", vec, 1)):
        if not isinstance(t, Tensor) or t.ndim != nd:
            raise ValueError(f"mv: {name} must be a {nd}-D tensor, got "
                             f"{getattr(t, 'shape', type(t).__name__)} (matrix @ vector)")
    if input.shape[1] != vec.shape[0]:
        raise ValueError(f"mv: size mismatch, matrix {input.shape} and vector {vec.shape}")
    return matmul(input, vec)


def inner(input, other):
    """Σ over the last dim of a and b, as torch.inner: the result has a's other dims, then
    b's; a 0-d operand multiplies."""
    from minigrad.ops.elementwise import _pair
    input, other = _pair(input, other)
    if input.ndim == 0 or other.ndim == 0:
        return input * other
    if input.shape[-1] != other.shape[-1]:
        raise ValueError(f"inner: the last dim must match on both tensors, got shapes "
                         f"{input.shape} and {other.shape}")
    from minigrad.ops.matmul import tensordot
    return tensordot(input, other, ([-1], [-1]))


def vdot(input, other):
    """The dot product of two vectors of one length, as torch.vdot (real: torch.dot)."""
    from minigrad.ops.matmul import dot
    if not (isinstance(input, Tensor) and isinstance(other, Tensor) and input.ndim == other.ndim == 1):
        raise ValueError(f"vdot: 1-D tensors expected, got shapes "
                         f"{getattr(input, 'shape', type(input).__name__)} and "
                         f"{getattr(other, 'shape', type(other).__name__)}")
    if input.shape != other.shape:
        raise ValueError(f"vdot: the vectors differ in length, {input.shape[0]} and {other.shape[0]}")
    return dot(input, other)


def kron(input, other):
    """The Kronecker product, as torch.kron: the shorter shape padded with leading 1s; each
    dim the product of the two. Elementwise a·b on interleaved dims, then reshaped."""
    from minigrad.ops.elementwise import _pair
    input, other = _pair(input, other)
    nd = max(input.ndim, other.ndim)
    sa, sb = (1,) * (nd - input.ndim) + input.shape, (1,) * (nd - other.ndim) + other.shape
    left = input.reshape(tuple(s for d in sa for s in (d, 1)))
    right = other.reshape(tuple(s for d in sb for s in (1, d)))
    return (left * right).reshape(tuple(x * y for x, y in zip(sa, sb)))
