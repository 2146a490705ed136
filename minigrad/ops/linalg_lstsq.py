"""torch.linalg.lstsq: the least-squares solution of AX ≈ B through the LAPACK driver
PyTorch names, so that each field (residuals, rank, singular values) is there exactly when
PyTorch's is. On the CPU, SciPy's LAPACK: 'gels' (QR; A assumed of full rank), 'gelsy'
(QR with column pivoting, the default), 'gelsd' (SVD by divide and conquer), 'gelss'
(SVD). On another device (a GPU) 'gels' only, as PyTorch's on CUDA: a QR solve through the
backend. The solution's gradient is A⁺B's whatever the driver, as PyTorch's."""
import math
from collections import namedtuple

from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.linalg import LinAlgError, _run
from minigrad.ops.linalg_decomp import _matrices, _NO_CONVERGENCE
from minigrad.ops.linalg_solvers import _broadcast_batches, pinv, pinv_backward

LstsqResult = namedtuple("LstsqResult", ("solution", "residuals", "rank", "singular_values"))

DRIVERS = ("gels", "gelsy", "gelsd", "gelss")
_NOT_FULL_RANK = ("The least squares solution could not be computed because the input matrix "
                  "does not have full rank")


def lstsq(A, B, rcond=None, *, driver=None):
    """X minimising ‖AX − B‖ for each matrix, as torch.linalg.lstsq. A (..., m, n); B (..., m,
    k) of A's dtype with as many dims (batch dims broadcast), or a vector of shape
    A.shape[:-1]. Returns (solution, residuals, rank, singular_values):

    - solution: gels's assumes A of full rank (an exactly singular A is a LinAlgError; a
      nearly singular one gives large numbers, as LAPACK's); gelsy's, gelsd's and gelss's
      are minimum-norm where A is rank-deficient.
    - residuals: the squared residual of each column (batch + (k,)), only where m > n and
      the driver is gels, or gelsd or gelss with every matrix of full rank n; else empty.
    - rank (int64, A's batch shape): gelsy, gelsd and gelss; empty for gels.
    - singular_values (A's batch shape + (min(m, n),)): gelsd and gelss; else empty.

    rcond (default ε·max(m, n)) is the driver's: gelsd and gelss count singular values at
    most rcond·σ₁ as 0 (gelsd reads an rcond ≤ 0 or ≥ 1 as ε, gelss one below 0);
    gelsy stops the pivoted QR where R's estimated condition passes 1/rcond; gels ignores it.
    The driver's name is taken in any case ('GELSD'). solution and residuals are
    differentiable; rank and singular_values are not."""
    op = "linalg.lstsq"
    A = _matrices(op, A)
    if not isinstance(B, Tensor):
        raise TypeError(f"{op}: B must be a Tensor, got {type(B).__name__}")
    if B.dtype != A.dtype:
        raise TypeError(f"{op}: A and B have dtypes {A.dtype} and {B.dtype}; they must be "
                        f"one (as PyTorch): convert B with .to(A.dtype)")
    if B.device != A.device:
        raise ValueError(f"{op}: A is on {A.device} and B on {B.device}; move them to one "
                         f"device first")
    xp = A.backend.xp
    driver = _driver(op, driver, backend.is_numpy(xp), A.device)
    if rcond is not None and (isinstance(rcond, bool) or not backend.is_scalar(rcond)):
        raise TypeError(f"{op}: rcond must be a float or None, got {type(rcond).__name__}")
    vector, (m, n) = B.shape == A.shape[:-1], A.shape[-2:]  # (as PyTorch: A's batch shape)
    Bm = B.unsqueeze(-1) if vector else B
    if Bm.ndim != A.ndim or Bm.shape[-2] != m:
        raise ValueError(f"{op}: incompatible shapes of A {A.shape} and B {B.shape}: B must "
                         f"be (..., {m}, k) with as many dims as A, or {A.shape[:-1]}")
    a, b = (t._data for t in _broadcast_batches(op, A, Bm))
    rcond = backend.machine_eps(A.dtype) * max(m, n) if rcond is None else float(rcond)
    if backend.is_numpy(xp):
        x, rows, rank, s = _lapack(op, a, b, driver, rcond)
    else:
        x, rows, rank, s = _device_gels(op, xp, a, b)
    def empty(dtype=A.dtype):                  # (a field the driver does not fill)
        return Tensor._make(xp.zeros((0,), dtype=dtype), A.device)
    X = LeastSquaresSolution.apply(A, Bm, x=x)
    residuals = empty()
    if m > n and (driver == "gels" or driver != "gelsy" and bool((rank == n).all())):
        residuals = LeastSquaresResiduals.apply(A, Bm, X, value=rows)
    rank = empty(xp.int64) if rank is None else Tensor._make(_of_a(rank, A.shape[:-2]),
                                                              A.device)
    s = empty() if s is None or driver not in ("gelsd", "gelss") else \
        Tensor._make(_of_a(s, A.shape[:-2], 1), A.device)
    return LstsqResult(X.squeeze(-1) if vector else X, residuals, rank, s)


def _driver(op, driver, on_host, device):
    """The driver's name: PyTorch's default ('gelsy' on the CPU, 'gels' elsewhere), or the
    one given, in lower case, checked as PyTorch checks it."""
    if driver is None:
        return "gelsy" if on_host else "gels"
    if not isinstance(driver, str):
        raise TypeError(f"{op}: driver must be a str or None, got {type(driver).__name__}")
    name = driver.lower()
    if on_host and name not in DRIVERS:
        raise ValueError(f"{op}: driver {driver!r} is not one of {', '.join(DRIVERS)} (or "
                         f"None: 'gelsy')")
    if not on_host and name != "gels":
        raise ValueError(f"{op}: driver {driver!r} is not available on {device}: there the "
                         f"only driver is 'gels' (or None), as PyTorch's on CUDA; "
                         f"{', '.join(DRIVERS[1:])} run on the CPU (move A and B there)")
    return name


def _of_a(array, a_batch, rest=0):
    """A per-matrix result of the broadcast batch (batch + `rest` dims) for A's own batch
    shape: the first copy along the dims A was broadcast over (they hold the same matrix)."""
    extra = array.ndim - rest - len(a_batch)
    return array[(0,) * extra + tuple(slice(0, 1) if size == 1 else slice(None)
                                      for size in a_batch) + (Ellipsis,)]


def _lapack(op, a, b, driver, rcond):
    """(solution batch + (n, k), the squared residual rows summed batch + (k,), rank batch,
    singular values batch + (min(m, n),)), one LAPACK call per matrix of the broadcast batch
    (None for what the driver does not give)."""
    linalg = backend.scipy_module("linalg")
    if linalg is None:
        raise RuntimeError(f"{op}: needs SciPy's LAPACK on the CPU, and SciPy is not "
                           f"installed here; pip install scipy")
    batch, (m, n), k = a.shape[:-2], a.shape[-2:], b.shape[-1]
    np = backend.np
    if a.size and not np.isfinite(a).all():
        raise RuntimeError(f"{op}: A holds inf or NaN, which LAPACK's least-squares drivers "
                           f"cannot take (PyTorch's, through MKL, refuse it too)")
    x = np.zeros(batch + (n, k), dtype=a.dtype)
    rows = np.zeros(batch + (k,), dtype=a.dtype)
    rank = None if driver == "gels" else np.zeros(batch, dtype=np.int64)
    s = np.zeros(batch + (min(m, n),), dtype=a.dtype)
    for i in np.ndindex(*batch):
        if min(m, n) == 0:          # no LAPACK call: X = 0, rank 0, every residual B's own
            rows[i] = (b[i] ** 2).sum(axis=0)
            continue
        # (k = 0: solved for one zero column, so that rank and s are A's still)
        rhs = np.zeros((max(m, n), max(k, 1)), dtype=a.dtype)
        rhs[:m, :k] = b[i]
        out, rank_i, s_i = _one_matrix(op, linalg.lapack, a[i], rhs, driver, rcond,
                                       f"(Batch element {np.ravel_multi_index(i, batch)}): "
                                       if batch else "")
        x[i] = out[:n, :k]
        rows[i] = (out[n:m, :k] ** 2).sum(axis=0)
        if rank is not None:
            rank[i] = rank_i
        if s_i is not None:
            s[i] = s_i
    return x, rows, rank, s


def _one_matrix(op, lapack, a, rhs, driver, rcond, where):
    """LAPACK's ?gels/?gelsy/?gelsd/?gelss on one matrix: (B overwritten: the solution in its
    first n rows, for gels, gelsd, gelss with m > n and full rank the residuals' parts in
    rows n to m), rank or None, singular values or None."""
    m, n = a.shape
    k = rhs.shape[1]
    solve, size = lapack.get_lapack_funcs((driver, driver + "_lwork"), (a, rhs))
    rank = s = None
    if driver == "gels":
        work, info = size(m, n, k)
        _, out, info = solve(a, rhs, lwork=_work(work))
    elif driver == "gelsy":
        work, info = size(m, n, k, rcond)
        pivots = backend.np.zeros(n, dtype=backend.np.int32)   # 0: every column free to move
        _, out, _, rank, info = solve(a, rhs, pivots, rcond, _work(work))
    elif driver == "gelsd":
        work, iwork, info = size(m, n, k, rcond)
        out, s, rank, info = solve(a, rhs, _work(work), iwork, rcond)
    else:
        work, info = size(m, n, k, rcond)
        _, out, s, rank, _, info = solve(a, rhs, cond=rcond, lwork=_work(work))
    if info > 0:
        what = f"{_NOT_FULL_RANK} (error code: {info})" if driver == "gels" else \
            f"the SVD did not converge (error code: {info})"
        raise LinAlgError(f"{op}: {where}{what}.")
    if info < 0:
        raise RuntimeError(f"{op}: LAPACK's {driver} refused its argument {-info}")
    return out, rank, s


def _work(size):
    """A LAPACK workspace query's answer (a float, rounded down where float32) as a size."""
    return max(1, math.ceil(float(size) * (1 + 2 ** -20)))


def _device_gels(op, xp, a, b):
    """'gels' through the backend (a GPU): QR of A where m ≥ n (X = R⁻¹QᵀB), of Aᵀ where
    m < n (the minimum-norm X = Q R⁻ᵀB). An exactly singular R is a LinAlgError, as
    LAPACK's; the residuals are ‖AX − B‖² per column."""
    m, n = a.shape[-2:]
    batch, k = a.shape[:-2], b.shape[-1]
    if min(m, n) == 0:
        x = xp.zeros(batch + (n, k), dtype=a.dtype)
        return x, (b * b).sum(axis=-2), None, None
    tall = m >= n
    q, r = _run(xp, lambda t: tuple(xp.linalg.qr(t)), op, _NO_CONVERGENCE,
                a if tall else xp.swapaxes(a, -1, -2))
    if bool((xp.diagonal(r, 0, -2, -1) == 0).any()):
        raise LinAlgError(f"{op}: {_NOT_FULL_RANK}.")
    if tall:
        x = xp.linalg.solve(r, xp.swapaxes(q, -1, -2) @ b)
    else:
        x = q @ xp.linalg.solve(xp.swapaxes(r, -1, -2), b)
    rest = a @ x - b
    return x, (rest * rest).sum(axis=-2), None, None


class LeastSquaresSolution(Function):
    """X = A⁺B, computed beforehand by the driver (lstsq). Its gradient is A⁺B's whatever the
    driver or rcond, as PyTorch's: B̄ = A⁺ᵀG, Ā = pinv's gradient for A⁺̄ = G Bᵀ, A⁺ at
    pinv's default tolerance (computed here, not in the forward: lstsq without a gradient
    pays no SVD)."""
    def forward(self, a, b, x):
        return x

    def backward(self, g):
        a, b = self.inputs
        p = pinv(a)
        ga = pinv_backward(a, p, g @ b.mT) if a.requires_grad else None
        return ga, (p.mT @ g if b.requires_grad else None)


class LeastSquaresResiduals(Function):
    """L = Σᵢ (AX − B)ᵢ² down each column (the value: the driver's own rows). X is optimal
    (∂L/∂X = 0), so Ā = 2 (R∘G) Xᵀ and B̄ = −2 R∘G, R = AX − B, as PyTorch's; X is an input
    only so that a double backward reaches A and B through it."""
    def forward(self, a, b, x, value):
        return value

    def backward(self, g):
        a, b, x = self.inputs
        weighted = (a @ x - b) * g.unsqueeze(-2)
        return 2 * (weighted @ x.mT), -2 * weighted, None
