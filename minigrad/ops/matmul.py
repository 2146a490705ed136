"""Matrix product with NumPy's rules (1-D, 2-D, batched and broadcast-batched), and the products
built on it: mm, bmm, dot, outer, addmm (and its kin addmv, addr, addbmm, baddbmm),
chain_matmul, tensordot and cross."""
import math

from minigrad import backend
from minigrad.args import check_broadcast
from minigrad.autograd import Function
from minigrad.grad_mode import _state, autocast_half, autocast_off
from minigrad.tensor import Tensor
from minigrad.ops.reduce import normalize_dim, expand
# elementwise's _pair and where are imported where used: elementwise imports this module


def gemm(xp, a, b):
    """a @ b on arrays. float16 on the CPU goes through float32, rounded once: NumPy has no
    float16 BLAS, and its own float16 loop ran a Linear of the GPT ~100x slower than
    float32 (the result is what PyTorch's CPU kernel gives: float32 sums, one rounding)."""
    if a.dtype == backend.float16 and xp is backend.np:
        f32 = backend.float32
        return xp.matmul(a.astype(f32), b.astype(f32)).astype(backend.float16)
    return xp.matmul(a, b)


class MatMul(Function):
    product = True                                       # see Function.product
    def forward(self, a, b):                              # d(AB) = dA·B + A·dB
        if a.ndim > 2 and b.ndim == 2:
            # (..., n, k) @ (k, m): fold the batch into rows for one GEMM; NumPy's matmul
            # over a broadcast batch skips BLAS and runs ~20x slower
            out = gemm(self.xp, _rows(a), b)
            return out.reshape(a.shape[:-1] + (b.shape[-1],))
        return gemm(self.xp, a, b)

    def backward(self, g):
        a, b = self.inputs
        need_a, need_b = self.needs_input_grad           # (a GEMM each: skip the unwanted)
        if a.ndim == 1 and b.ndim == 1:                   # dot product: g is a scalar
            return g * b if need_a else None, g * a if need_b else None
        if a.ndim == 1:                                   # (k,) @ (..., k, m) -> (..., m)
            ga = (g.unsqueeze(-2) @ b.mT).squeeze(-2) if need_a else None
            gb = a.unsqueeze(-1) * g.unsqueeze(-2) if need_b else None
            return ga, gb
        if b.ndim == 1:                                   # (..., n, k) @ (k,) -> (..., n)
            ga = g.unsqueeze(-1) * b if need_a else None
            gb = (a.mT @ g.unsqueeze(-1)).squeeze(-1) if need_b else None
            return ga, gb
        ga = g @ b.mT if need_a else None                 # dA = G·Bᵀ
        if not need_b:
            gb = None
        elif b.ndim == 2 and a.ndim > 2:
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


def autocast_operands(*tensors):
    """The tensors of a product composed from other ops (addmm and its kin, vecdot,
    multi_dot), all float16 under autocast as torch's float16 list has them: their input
    term too, which would otherwise promote the sum back to float32 (or be refused)."""
    return tuple(autocast_half(t) if isinstance(t, Tensor) else t for t in tensors)


def autocast_promote(a, b):
    """a and b of a product on torch's autocast "promote" list (dot, vdot, tensordot, and
    inner, which is tensordot): not float16, as matmul's list would make them, but both in
    the wider dtype (float16 with float32: float32); the caller runs it with autocast off."""
    if str(a.device).partition(":")[0] in _state.autocast.dtypes and \
            {a.dtype, b.dtype} == {backend.float16, backend.float32}:
        return a.float(), b.float()
    return a, b


def check_same_float(op, a, b, autocast=False):
    """A matrix product of float32 and float64 would silently compute in float64: refused,
    as PyTorch does (elementwise ops promote, as PyTorch's do). `autocast`: the op is one
    autocast casts (amp.py), which lets float16 meet float32 while autocast is on."""
    on = _state.autocast
    if autocast and on is not None and str(a.device).partition(":")[0] in on.dtypes and \
            {a.dtype, b.dtype} == {backend.float16, backend.float32}:
        return
    if a.dtype != b.dtype and a.dtype.kind == b.dtype.kind == "f":
        raise TypeError(f"{op}: operands have dtypes {a.dtype} and {b.dtype}; convert one "
                        f"first (.to(dtype), .float(), .double()), as PyTorch requires")


def matmul(input, other):
    from minigrad.ops.elementwise import _pair
    input, other = _pair(input, other, "matmul (@)")
    check_same_float("matmul", input, other, autocast=True)
    if input.ndim == 0 or other.ndim == 0:
        raise ValueError(f"matmul: both operands need at least 1 dim, got shapes {input.shape} "
                         f"and {other.shape} (use * for scalars)")
    ka = input.shape[-1]
    kb = other.shape[0] if other.ndim == 1 else other.shape[-2]
    if ka != kb:
        raise ValueError(f"matmul: shapes {input.shape} and {other.shape} do not align: {ka} (last "
                         f"dim of the first) != {kb} (the second's "
                         f"{'only' if other.ndim == 1 else 'second-to-last'} dim)")
    return MatMul.apply(input, other)


def _need(op, a, b, ndims, what):
    from minigrad.ops.elementwise import _pair
    a, b = _pair(a, b, op)
    if a.ndim != ndims or b.ndim != ndims:
        raise ValueError(f"{op}: needs two {what}, got shapes {a.shape} and {b.shape}"
                         f"{'' if op == 'outer' else '; matmul (@) takes any'}")
    if op != "outer" and a.shape[-1] != b.shape[-2 if ndims > 1 else 0]:
        raise ValueError(f"{op}: shapes {a.shape} and {b.shape} do not align ({a.shape[-1]} "
                         f"!= {b.shape[-2 if ndims > 1 else 0]})")
    return a, b


def mm(input, mat2):
    """(n, k) @ (k, m): matmul for matrices only, as torch.mm."""
    input, mat2 = _need("mm", input, mat2, 2, "matrices (2-D)")
    return matmul(input, mat2)


def bmm(input, mat2):
    """(B, n, k) @ (B, k, m) with the same B: matmul for batches of matrices, as torch.bmm."""
    input, mat2 = _need("bmm", input, mat2, 3, "batches of matrices (3-D)")
    if input.shape[0] != mat2.shape[0]:
        raise ValueError(f"bmm: batch sizes differ, {input.shape} and {mat2.shape}; matmul (@) "
                         f"broadcasts them")
    return matmul(input, mat2)


def dot(input, tensor):
    """The inner product of two vectors of one length, as torch.dot."""
    input, tensor = _need("dot", input, tensor, 1, "vectors (1-D)")
    if _state.autocast is not None:     # on torch's autocast promote list, not the float16 one
        return autocast_off(dot, *autocast_promote(input, tensor))
    return matmul(input, tensor)


def outer(input, vec2):
    """(n,) and (m,) -> (n, m) with entries a_i·b_j, as torch.outer."""
    input, vec2 = _need("outer", input, vec2, 1, "vectors (1-D)")
    return input.reshape(-1, 1) * vec2.reshape(1, -1)


def addmm(input, mat1, mat2, *, beta=1, alpha=1):
    """beta·x + alpha·(mat1 @ mat2), as torch.addmm: mat1 (n, k), mat2 (k, m), x broadcast
    to (n, m). With beta=0, x is ignored (a NaN in it does not spread) and its gradient is 0,
    as PyTorch's. An integer result takes integer beta and alpha only (PyTorch would
    truncate 0.5 to 0)."""
    input, mat1, mat2 = autocast_operands(input, mat1, mat2)
    return _scaled_sum("addmm", input, mm(mat1, mat2), beta, alpha)


def _scaled_sum(op, x, out, beta, alpha):
    """beta·x + alpha·out for addmm and its kin (out the product): x must broadcast to
    out's shape; beta=0 ignores x's values (its gradient is 0)."""
    from minigrad.ops.elementwise import where
    for name, v in (("beta", beta), ("alpha", alpha)):
        if not backend.is_scalar(v) or isinstance(v, bool):
            raise TypeError(f"{op}: {name} must be a number, got {v!r}")
        if not backend.is_integer(v) and not backend.is_floating(out.dtype):
            raise TypeError(f"{op}: {name}={v!r}, but the matrices are {out.dtype}, so "
                            f"{name} must be an integer (as PyTorch); convert with .float()")
    try:
        fits = backend.broadcast_shapes(x.shape, out.shape) == out.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{op}: input of shape {x.shape} does not broadcast to the "
                         f"product's shape {out.shape}")
    out = out if alpha == 1 else out * alpha
    if beta == 0:       # zeros of x's shape, still from x: its gradient is 0, not None
        return out + where(True, 0.0, x.to(dtype=out.dtype))
    return out + (x if beta == 1 else x * beta)


def _same_dtype(op, *tensors):
    """addmv and its kin take one dtype, as PyTorch's (no silent float64 product)."""
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected Tensors, got {type(t).__name__}")
    if len({t.dtype for t in tensors}) > 1:
        raise TypeError(f"{op}: input and the operands must have one dtype, got "
                        f"{', '.join(str(t.dtype) for t in tensors)}; convert first")


def addmv(input, mat, vec, *, beta=1, alpha=1):
    """beta·input + alpha·(mat @ vec), as torch.addmv: mat (n, m), vec (m,), input
    broadcast to (n,)."""
    input, mat, vec = autocast_operands(input, mat, vec)
    _same_dtype("addmv", input, mat, vec)
    if mat.ndim != 2 or vec.ndim != 1 or mat.shape[1] != vec.shape[0]:
        raise ValueError(f"addmv: needs a matrix (n, m) and a vector (m,), got shapes "
                         f"{mat.shape} and {vec.shape}")
    return _scaled_sum("addmv", input, matmul(mat, vec), beta, alpha)


def addr(input, vec1, vec2, *, beta=1, alpha=1):
    """beta·input + alpha·outer(vec1, vec2), as torch.addr: input broadcast to (n, m)."""
    input, vec1, vec2 = autocast_operands(input, vec1, vec2)
    _same_dtype("addr", input, vec1, vec2)
    return _scaled_sum("addr", input, outer(vec1, vec2), beta, alpha)


def baddbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta·input + alpha·(batch1 @ batch2) batch by batch, as torch.baddbmm: batch1
    (B, n, k), batch2 (B, k, m), input broadcast to (B, n, m)."""
    input, batch1, batch2 = autocast_operands(input, batch1, batch2)
    _same_dtype("baddbmm", input, batch1, batch2)
    return _scaled_sum("baddbmm", input, bmm(batch1, batch2), beta, alpha)


def addbmm(input, batch1, batch2, *, beta=1, alpha=1):
    """beta·input + alpha·Σ_b batch1[b] @ batch2[b], as torch.addbmm: the products of the
    batches summed, input broadcast to (n, m)."""
    input, batch1, batch2 = autocast_operands(input, batch1, batch2)
    _same_dtype("addbmm", input, batch1, batch2)
    total = bmm(batch1, batch2).sum(0).to(dtype=batch1.dtype)   # (autocast sums in float32)
    return _scaled_sum("addbmm", input, total, beta, alpha)


def chain_matmul(*matrices):
    """The product of the 2-D matrices, left to right, as torch.chain_matmul (deprecated
    there for torch.linalg.multi_dot); one matrix comes back as a copy."""
    if not matrices:
        raise ValueError("chain_matmul: expected one or more matrices")
    for i, m in enumerate(matrices):
        if getattr(m, "ndim", None) != 2:
            raise ValueError(f"chain_matmul: each argument must be a matrix (2-D), argument "
                             f"{i} has shape {getattr(m, 'shape', type(m).__name__)}")
    out = matrices[0].clone() if len(matrices) == 1 else matrices[0]
    for m in matrices[1:]:
        out = mm(out, m)
    return out


def tensordot(a, b, dims=2):
    """Σ over the paired dims of a and b, as torch.tensordot: dims=n pairs a's last n dims
    with b's first n; dims=([a dims], [b dims]) names them. The result has a's other dims,
    then b's. One matmul: each side permuted and reshaped to a matrix."""
    from minigrad.ops.elementwise import _pair
    a, b = _pair(a, b)
    check_same_float("tensordot", a, b, autocast=True)
    if _state.autocast is not None:     # on torch's autocast promote list, not the float16 one
        return autocast_off(tensordot, *autocast_promote(a, b), dims)
    if isinstance(dims, Tensor):
        dims = dims.tolist()
    if backend.is_integer(dims):
        if not 0 <= dims <= min(a.ndim, b.ndim):
            raise ValueError(f"tensordot: dims={dims} must lie in 0..{min(a.ndim, b.ndim)} "
                             f"for shapes {a.shape} and {b.shape}")
        da, db = list(range(a.ndim - dims, a.ndim)), list(range(dims))
    elif isinstance(dims, (list, tuple)) and len(dims) == 2:
        da, db = ([d] if isinstance(d, int) else list(d) for d in dims)
        da = [normalize_dim(d, a.ndim, "tensordot") for d in da]
        db = [normalize_dim(d, b.ndim, "tensordot") for d in db]
    else:
        raise TypeError(f"tensordot: dims must be an int or a pair of dim lists, got {dims!r}")
    if len(da) != len(db) or len(set(da)) != len(da) or len(set(db)) != len(db) or any(
            a.shape[i] != b.shape[j] for i, j in zip(da, db)):
        raise ValueError(f"tensordot: dims {da} of shape {a.shape} and {db} of shape "
                         f"{b.shape} must pair up one to one, with equal sizes")
    free_a = [d for d in range(a.ndim) if d not in da]
    free_b = [d for d in range(b.ndim) if d not in db]
    k = math.prod(a.shape[d] for d in da)
    left = a.permute(*free_a, *da).reshape(math.prod(a.shape[d] for d in free_a), k)
    right = b.permute(*db, *free_b).reshape(k, math.prod(b.shape[d] for d in free_b))
    return matmul(left, right).reshape(tuple(a.shape[d] for d in free_a) +
                                       tuple(b.shape[d] for d in free_b))


def cross(input, other, dim=None):
    """The vector product along dim (of size 3) of a and b, broadcast, as torch.cross;
    without dim, the first dim of size 3 (PyTorch's old default). cᵢ = aᵢ₊₁bᵢ₊₂ - aᵢ₊₂bᵢ₊₁
    (indices mod 3): two rolls of each, so the gradient comes with them."""
    from minigrad.ops.elementwise import _pair
    input, other = _pair(input, other)
    shape = tuple(check_broadcast("cross", input.shape, other.shape))
    if dim is None:
        dim = next((i for i, s in enumerate(shape) if s == 3), None)
        if dim is None:
            raise ValueError(f"cross: no dim of size 3 in the shape {shape}; give dim=")
    elif not backend.is_integer(dim):
        raise TypeError(f"cross: dim must be an int, got {dim!r}")
    d = normalize_dim(dim, len(shape), "cross")
    if shape[d] != 3:
        raise ValueError(f"cross: dim {dim} has size {shape[d]} in the broadcast shape "
                         f"{shape}; the vector product needs size 3")
    input, other = (t if t.shape == shape else expand(t, shape) for t in (input, other))
    return input.roll(-1, d) * other.roll(-2, d) - input.roll(-2, d) * other.roll(-1, d)
