"""Matrix product with NumPy's rules: 1-D, 2-D, batched and broadcast-batched."""
import math

from minigrad.autograd import Function


class MatMul(Function):
    def forward(self, a, b):                              # d(AB) = dA·B + A·dB
        if a.ndim > 2 and b.ndim == 2:
            # (..., n, k) @ (k, m): fold the batch into rows for one GEMM; NumPy's matmul
            # over a broadcast batch skips BLAS and runs ~20x slower
            out = self.xp.matmul(_rows(a), b)
            return out.reshape(a.shape[:-1] + (b.shape[-1],))
        return self.xp.matmul(a, b)

    def backward(self, g):
        a, b = self.inputs
        if a.ndim == 1 and b.ndim == 1:                   # dot product: g is a scalar
            return g * b, g * a
        if a.ndim == 1:                                   # (k,) @ (..., k, m) -> (..., m)
            ga = (g.unsqueeze(-2) @ b.mT).squeeze(-2)
            gb = a.unsqueeze(-1) * g.unsqueeze(-2)
            return ga, gb
        if b.ndim == 1:                                   # (..., n, k) @ (k,) -> (..., n)
            ga = g.unsqueeze(-1) * b
            gb = (a.mT @ g.unsqueeze(-1)).squeeze(-1)
            return ga, gb
        ga = g @ b.mT                                     # dA = G·Bᵀ
        if b.ndim == 2 and a.ndim > 2:
            # A shared weight: fold the batch into rows, one GEMM instead of a batch of
            # them summed afterwards (same result, no (batch, k, m) temporary)
            gb = _rows(a).mT @ _rows(g)
        else:
            gb = a.mT @ g                                 # dB = Aᵀ·G (engine sums batch dims)
        return ga, gb


def _rows(a):
    """(..., n) as rows (r, n), for an array or a tensor; not reshape(-1, n), which NumPy
    cannot resolve when n is 0 (a (2, 3, 0) @ (0, 4) product is zeros, as PyTorch)."""
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])


def check_same_float(op, a, b):
    """A matrix product of float32 and float64 would silently compute in float64: refused,
    as PyTorch does (elementwise ops promote, as PyTorch's do)."""
    if a.dtype != b.dtype and a.dtype.kind == b.dtype.kind == "f":
        raise TypeError(f"{op}: operands have dtypes {a.dtype} and {b.dtype}; convert one "
                        f"first (.to(dtype), .float(), .double()), as PyTorch requires")


def matmul(a, b):
    from minigrad.ops.elementwise import _pair
    a, b = _pair(a, b)
    check_same_float("matmul", a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ValueError(f"matmul: both operands need at least 1 dim, got shapes {a.shape} "
                         f"and {b.shape} (use * for scalars)")
    ka = a.shape[-1]
    kb = b.shape[0] if b.ndim == 1 else b.shape[-2]
    if ka != kb:
        raise ValueError(f"matmul: shapes {a.shape} and {b.shape} do not align: {ka} (last "
                         f"dim of the first) != {kb} (the second's "
                         f"{'only' if b.ndim == 1 else 'second-to-last'} dim)")
    return MatMul.apply(a, b)


def _need(op, a, b, ndims, what):
    from minigrad.ops.elementwise import _pair
    a, b = _pair(a, b)
    if a.ndim != ndims or b.ndim != ndims:
        raise ValueError(f"{op}: needs two {what}, got shapes {a.shape} and {b.shape}"
                         f"{'' if op == 'outer' else '; matmul (@) takes any'}")
    if op != "outer" and a.shape[-1] != b.shape[-2 if ndims > 1 else 0]:
        raise ValueError(f"{op}: shapes {a.shape} and {b.shape} do not align ({a.shape[-1]} "
                         f"!= {b.shape[-2 if ndims > 1 else 0]})")
    return a, b


def mm(a, b):
    """(n, k) @ (k, m): matmul for matrices only, as torch.mm."""
    a, b = _need("mm", a, b, 2, "matrices (2-D)")
    return matmul(a, b)


def bmm(a, b):
    """(B, n, k) @ (B, k, m) with the same B: matmul for batches of matrices, as torch.bmm."""
    a, b = _need("bmm", a, b, 3, "batches of matrices (3-D)")
    if a.shape[0] != b.shape[0]:
        raise ValueError(f"bmm: batch sizes differ, {a.shape} and {b.shape}; matmul (@) "
                         f"broadcasts them")
    return matmul(a, b)


def dot(a, b):
    """The inner product of two vectors of one length, as torch.dot."""
    a, b = _need("dot", a, b, 1, "vectors (1-D)")
    return matmul(a, b)


def outer(a, b):
    """(n,) and (m,) -> (n, m) with entries a_i·b_j, as torch.outer."""
    a, b = _need("outer", a, b, 1, "vectors (1-D)")
    return a.reshape(-1, 1) * b.reshape(1, -1)
