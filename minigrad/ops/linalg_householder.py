"""linalg.householder_product (and torch.orgqr, mg.orgqr, Tensor.orgqr), PyTorch's: the first
n columns of H₁H₂⋯H_k, H_i = I − τ_i v_i v_iᵀ, v_i LAPACK's (orgqr's) Householder vector: 0
above row i, 1 at row i, A's column i below it. Real float32/float64 tensors, batched over
leading dims (tau's batch dims equal to A's, as PyTorch; they do not broadcast). ormqr
(torch.ormqr) applies the same reflectors to a given matrix.

No op of its own: the product is applied to the first n columns of the identity, one
reflector at a time from the last (X ← X − τ_i v_i (v_iᵀX)), with Tensor ops. So the
gradient is exact and itself differentiable (double backward); A's diagonal and upper
triangle do not enter and get 0, as PyTorch's.
"""
from minigrad import backend
from minigrad.tensor import Tensor


def _check(op, A, tau):
    """Refuse what torch.linalg.householder_product refuses, with its reasons."""
    for name, x in (("A", A), ("tau", tau)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    if A.dtype not in (backend.float32, backend.float64):
        raise TypeError(f"{op}: expected a float32 or float64 tensor, got {A.dtype} (as "
                        f"PyTorch); convert with .float() or .double() first")
    if tau.dtype != A.dtype:
        raise TypeError(f"{op}: tau's dtype {tau.dtype} does not match A's {A.dtype}")
    if A.device != tau.device:
        raise ValueError(f"{op}: A is on {A.device} but tau on {tau.device}")
    if A.ndim < 2:
        raise ValueError(f"{op}: A must have at least 2 dims (..., m, n), got shape {A.shape}")
    m, n = A.shape[-2:]
    if m < n:
        raise ValueError(f"{op}: A must have at least as many rows as columns (m >= n), got "
                         f"shape {A.shape}")
    if tau.ndim != A.ndim - 1:
        raise ValueError(f"{op}: tau must have one dim less than A (shape A.shape[:-2] + "
                         f"(k,)), got tau of shape {tau.shape} for A of shape {A.shape}")
    if tau.shape[:-1] != A.shape[:-2]:
        raise ValueError(f"{op}: tau's batch dims {tau.shape[:-1]} must equal A's "
                         f"{A.shape[:-2]} (they do not broadcast, as PyTorch)")
    if tau.shape[-1] > n:
        raise ValueError(f"{op}: tau holds {tau.shape[-1]} scalars but A has only {n} "
                         f"columns (k <= n)")


def householder_product(A, tau):
    """The first n columns of H₁⋯H_k for A (..., m, n), m >= n, and tau (..., k), k <= n, as
    torch.linalg.householder_product: A's columns below the diagonal are the reflectors'
    vectors (unit first entry implied), as geqrf leaves them. Differentiable in A and tau."""
    op = "linalg.householder_product"
    _check(op, A, tau)
    xp, (m, n), k = A.backend.xp, A.shape[-2:], tau.shape[-1]
    eye = Tensor._make(xp.eye(m, n, dtype=A.dtype), A.device)
    x = eye.expand(A.shape[:-2] + (m, n))
    if k == 0:                     # the identity's columns, still on A's and tau's graph
        empty = A.narrow(-1, 0, 0).sum(-1, keepdim=True) + tau.sum(-1)[..., None, None]
        return x + empty                                          # (+ 0, with 0 gradients)
    v = A.narrow(-1, 0, k).tril(-1) + eye.narrow(-1, 0, k)        # (..., m, k)
    for i in reversed(range(k)):
        vi = v.narrow(-1, i, 1)                                   # (..., m, 1)
        ti = tau.narrow(-1, i, 1).unsqueeze(-1)                   # (..., 1, 1)
        x = x - (vi * ti) @ (vi.mT @ x)
    return x


def orgqr(input, input2):
    """torch.orgqr (mg.orgqr, Tensor.orgqr): linalg.householder_product's other name."""
    return householder_product(input, input2)


def ormqr(input, input2, input3, left=True, transpose=False):
    """Q·other (left=False: other·Q; Qᵀ for transpose) without forming Q = H₁⋯H_k, the
    m x m product of the k reflectors in input (..., m, n) and tau (..., k) (geqrf's output), as
    torch.ormqr (Tensor.ormqr). The reflectors are applied to `other` one at a time, with
    Tensor ops, as householder_product: differentiable in all three."""
    op = "ormqr"
    for name, x in (("input", input), ("other", input3)):
        if not isinstance(x, Tensor) or x.ndim < 2:
            raise ValueError(f"{op}: {name} must be a Tensor of at least 2 dims, got "
                             f"{getattr(x, 'shape', type(x).__name__)}")
    if input3.dtype != input.dtype:
        raise TypeError(f"{op}: other's dtype {input3.dtype} does not match input's "
                        f"{input.dtype}")
    rows = input.shape[-2]
    if (input3.shape[-2] if left else input3.shape[-1]) != rows:
        raise ValueError(f"{op}: other of shape {input3.shape} needs {rows} "
                         f"{'rows' if left else 'columns'} (input's rows) for left={left}")
    # (the reflectors are input's first min(m, n) columns: householder_product's checks)
    _check(op, input.narrow(-1, 0, min(input.shape[-2:])), input2)
    k = input2.shape[-1]
    eye = Tensor._make(input.backend.xp.eye(rows, k, dtype=input.dtype), input.device)
    v = input.narrow(-1, 0, k).tril(-1) + eye                     # (..., m, k)
    # Q = H₁⋯H_k: Q·C applies H_k first, Qᵀ·C H₁ first; C·Q H₁ first, C·Qᵀ H_k first
    order = range(k) if transpose == left else reversed(range(k))
    x = input3
    for i in order:
        vi = v.narrow(-1, i, 1)                                   # (..., m, 1)
        ti = input2.narrow(-1, i, 1).unsqueeze(-1)                   # (..., 1, 1)
        x = x - (vi * ti) @ (vi.mT @ x) if left else x - (x @ vi) @ (vi * ti).mT
    return x
