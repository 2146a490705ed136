"""torch.linalg's functions that are not factorisations: the norms (vector_norm, matrix_norm,
and norm, which picks one of the two as PyTorch's does), cross along dim -1, multi_dot (in
the cheapest order), vecdot, diagonal of the last two dims, vander, tensorinv and
tensorsolve. Each is a composition of differentiable ops (norms.py's p-norm, abs, sum,
amax/amin, matmul, cumprod, inv, solve, and linalg_decomp.py's svdvals for the norms of
the singular values), so gradients of any order come with them."""
import math

from minigrad import backend
from minigrad.args import check_broadcast, int_arg, number_arg
from minigrad.grad_mode import _state, autocast_float32, autocast_off
from minigrad.tensor import Tensor
from minigrad.ops.linalg import inv, solve
from minigrad.ops.linalg_decomp import svdvals
from minigrad.ops.layout import diagonal as _diagonal, movedim
from minigrad.ops.matmul import autocast_operands, matmul, cross as _cross
from minigrad.ops.norms import p_norm
from minigrad.ops.reduce import normalize_dim
from minigrad.ops.shape import cat


def _tensors(op, **named):
    """Refuse an argument that is not a Tensor, by its name."""
    for name, x in named.items():
        if not isinstance(x, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")


def _float_input(op, x, dtype):
    """x, a float tensor, converted to `dtype` first where given, as PyTorch's dtype=: a
    float dtype at least as wide as x's (float64 to float32 would silently lose digits)."""
    _tensors(op, input=x)
    if not backend.is_floating(x.dtype):
        raise TypeError(f"{op}: expected a floating-point tensor, got {x.dtype}; convert "
                        f"with .float() or .double() first (as PyTorch)")
    if dtype is None:
        return x
    dtype = backend.dtype(dtype)
    if not backend.is_floating(dtype):
        raise TypeError(f"{op}: dtype must be a floating-point dtype, got {dtype}")
    if dtype.itemsize < x.dtype.itemsize:
        raise TypeError(f"{op}: the input's {x.dtype} does not convert to dtype={dtype} "
                        f"without narrowing; give a dtype at least as wide, or convert first")
    return x.to(dtype=dtype)


def _order(op, ord):
    """A norm's ord as a float: a number (or a one-element tensor's), not a bool or NaN."""
    if isinstance(ord, (bool, str)):
        raise TypeError(f"{op}: ord must be a number (2, 1, inf, -inf, 0 or any other p), "
                        f"got {ord!r}")
    ord = float(number_arg(op, "ord", ord))
    if ord != ord:
        raise ValueError(f"{op}: ord must be a number, not NaN")
    return ord


def vector_norm(x, ord=2, dim=None, keepdim=False, *, dtype=None):
    """(Σ|x|ᵒʳᵈ)^(1/ord) over dim (None or (): every element; an int or a tuple), as
    torch.linalg.vector_norm: ord inf is max|x|, -inf min|x|, 0 the number of nonzeros;
    dtype= converts x first. Gradients as PyTorch's: 0 where the norm is 0 (no NaN)."""
    op = "linalg.vector_norm"
    if dtype is not None and _state.autocast is not None:   # the dtype asked for wins, as
        return autocast_off(vector_norm, x, ord, dim, keepdim, dtype=dtype)   # torch's
    ord = _order(op, ord)
    return p_norm(autocast_float32(_float_input(op, x, dtype)), ord, dim, keepdim, op)


_MATRIX_ORDS = "'fro', 'nuc', inf, -inf, 1, -1, 2 or -2"


def _matrix_dims(op, dim, ndim):
    """dim as two different dims of a tensor of ndim dims (the rows', the columns')."""
    if not (isinstance(dim, (tuple, list)) and len(dim) == 2):
        raise ValueError(f"{op}: dim must be a pair of dims (the matrices' rows and "
                         f"columns), got {dim!r}")
    d0, d1 = (normalize_dim(d, ndim, op) for d in dim)
    if d0 == d1:
        raise ValueError(f"{op}: dim {tuple(dim)} names one dim twice; the rows and columns "
                         f"must be different dims")
    return d0, d1


def matrix_norm(A, ord="fro", dim=(-2, -1), keepdim=False, *, dtype=None):
    """The matrix norm of the matrices in dims `dim` of A, as torch.linalg.matrix_norm:
    'fro' (√Σa²), 1 and -1 (the largest and smallest column sum of |a|), inf and -inf (the
    rows'), 'nuc', 2 and -2 (the sum, largest and smallest of the singular values). Ties
    of the max or min share the gradient evenly, as PyTorch's."""
    op = "linalg.matrix_norm"
    if dtype is not None and _state.autocast is not None:   # the dtype asked for wins, as
        return autocast_off(matrix_norm, A, ord, dim, keepdim, dtype=dtype)   # torch's
    A = autocast_float32(_float_input(op, A, dtype))    # (on torch's float32 autocast list)
    if A.ndim < 2:
        raise ValueError(f"{op}: A must have at least 2 dims (matrices), got shape {A.shape}")
    d0, d1 = _matrix_dims(op, dim, A.ndim)
    if not isinstance(ord, (str, bool)):
        ord = number_arg(op, "ord", ord)
    if isinstance(ord, bool) or ord not in ("fro", "nuc", 2, -2, 1, -1, math.inf, -math.inf):
        raise ValueError(f"{op}: ord={ord!r} is not a matrix norm; valid: {_MATRIX_ORDS}")
    if ord == "fro":
        return p_norm(A, 2.0, (d0, d1), keepdim, op)
    if ord in ("nuc", 2, -2):
        return _singular_value_norm(op, A, ord, d0, d1, keepdim)
    # ±1: the column sums (over the rows, d0), then their max/min; ±inf: the rows' sums
    across, along = (d0, d1) if abs(ord) == 1 else (d1, d0)
    sums = A.abs().sum(across, keepdim=True)
    if A.shape[along] == 0:
        if ord < 0:
            raise ValueError(f"{op}: cannot compute the {ord} norm of matrices of shape "
                             f"{tuple(A.shape[d] for d in (d0, d1))}: the min over no "
                             f"{'columns' if along == d1 else 'rows'} has no value")
        out = sums.sum(along, keepdim=True)           # the max of none is 0, as PyTorch
    else:
        out = sums.amax(along, keepdim=True) if ord > 0 else sums.amin(along, keepdim=True)
    return out if keepdim else out.squeeze((d0, d1))


def _singular_value_norm(op, A, ord, d0, d1, keepdim):
    """'nuc' (the sum of the singular values), 2 (the largest) or -2 (the smallest) of the
    matrices in dims d0, d1, as PyTorch's: ties of the largest or smallest share the
    gradient evenly; matrices with no elements have norm 0, except -2's (no smallest)."""
    s = svdvals(movedim(A, (d0, d1), (-2, -1)))
    if s.shape[-1] == 0 and ord == -2:
        raise ValueError(f"{op}: cannot compute the -2 norm of matrices of shape "
                         f"{(A.shape[d0], A.shape[d1])}: there is no smallest singular value")
    out = s.sum(-1) if ord == "nuc" or s.shape[-1] == 0 else \
        s.amax(-1) if ord == 2 else s.amin(-1)
    if keepdim:
        for d in sorted((d0, d1)):
            out = out.unsqueeze(d)
    return out


def norm(A, ord=None, dim=None, keepdim=False, *, dtype=None):
    """torch.linalg.norm: a matrix norm where ord is a string, or a number with dim a pair
    (or no dim and A 2-D); else the vector norm (ord None: the 2-norm of all the elements,
    which for a matrix is its Frobenius norm)."""
    op = "linalg.norm"
    _tensors(op, A=A)
    if dim is not None:
        dims = (dim,) if backend.is_integer(dim) else dim
        if not isinstance(dims, (tuple, list)) or len(dims) not in (1, 2):
            raise ValueError(f"{op}: dim must be one dim (a vector norm) or a pair (a "
                             f"matrix norm), got {dim!r}")
        matrix = isinstance(ord, str) or (ord is not None and len(dims) == 2)
    else:
        if ord is not None and A.ndim not in (1, 2):
            raise ValueError(f"{op}: with ord={ord!r} and no dim, A must be 1-D or 2-D, got "
                             f"shape {A.shape}; give dim (one dim or a pair)")
        dims = (-2, -1)
        matrix = isinstance(ord, str) or (ord is not None and A.ndim == 2)
    if matrix:
        return matrix_norm(A, ord, dims, keepdim, dtype=dtype)
    return vector_norm(A, 2 if ord is None else ord, dim, keepdim, dtype=dtype)


def cross(input, other, *, dim=-1):
    """The vector product along dim (size 3 in both), as torch.linalg.cross: the inputs have
    one number of dims, the others broadcast. (Tensor.cross and mg.cross keep torch.cross's
    default, the first dim of size 3.)"""
    op = "linalg.cross"
    _tensors(op, input=input, other=other)
    if input.ndim != other.ndim or input.ndim == 0:
        raise ValueError(f"{op}: the inputs must have one number of dims, at least 1, got "
                         f"shapes {input.shape} and {other.shape}")
    if input.dtype != other.dtype:
        raise TypeError(f"{op}: the inputs have dtypes {input.dtype} and {other.dtype}; "
                        f"convert one first")
    d = normalize_dim(dim, input.ndim, op)
    if input.shape[d] != 3 or other.shape[d] != 3:
        raise ValueError(f"{op}: dim {dim} must have size 3 in both inputs, got "
                         f"{input.shape[d]} and {other.shape[d]} (shapes {input.shape} and "
                         f"{other.shape})")
    return _cross(input, other, d)


def _chain_order(sizes):
    """split[i][j]: where the cheapest product of matrices i..j splits, for matrix k of
    shape (sizes[k], sizes[k + 1]) (the textbook dynamic programme, O(n³))."""
    n = len(sizes) - 1
    cost = [[0] * n for _ in range(n)]
    split = [[0] * n for _ in range(n)]
    for length in range(1, n):
        for i in range(n - length):
            j = i + length
            cost[i][j], split[i][j] = min(
                (cost[i][k] + cost[k + 1][j] + sizes[i] * sizes[k + 1] * sizes[j + 1], k)
                for k in range(i, j))
    return split


def multi_dot(tensors):
    """The product of the matrices, as torch.linalg.multi_dot: the first may be a vector
    (a row), the last too (a column), the rest are 2-D. Multiplied in the order with the
    fewest multiplications, as PyTorch."""
    op = "linalg.multi_dot"
    if not isinstance(tensors, (list, tuple)):
        raise TypeError(f"{op}: expected a list or tuple of tensors, got "
                        f"{type(tensors).__name__}")
    if len(tensors) < 2:
        raise ValueError(f"{op}: expected at least 2 tensors, got {len(tensors)}")
    tensors = autocast_operands(*tensors)   # on autocast's float16 list
    ms = []
    for i, t in enumerate(tensors):
        _tensors(op, **{f"tensor {i}": t})
        end = i in (0, len(tensors) - 1)
        if t.ndim != 2 and not (end and t.ndim == 1):
            where = "the first" if i == 0 else "the last" if end else "a middle"
            raise ValueError(f"{op}: tensor {i} has shape {t.shape}; {where} one must be "
                             f"{'1-D or ' if end else ''}2-D")
        if t.dtype != tensors[0].dtype:
            raise TypeError(f"{op}: all tensors must have one dtype, but tensor 0 is "
                            f"{tensors[0].dtype} and tensor {i} {t.dtype}")
        ms.append(t if t.ndim == 2 else t.unsqueeze(0 if i == 0 else 1))
    for i in range(len(ms) - 1):
        if ms[i].shape[1] != ms[i + 1].shape[0]:
            raise ValueError(f"{op}: tensors {i} and {i + 1} of shapes {tensors[i].shape} "
                             f"and {tensors[i + 1].shape} cannot be multiplied")
    split = _chain_order([m.shape[0] for m in ms] + [ms[-1].shape[1]])

    def product(i, j):
        return ms[i] if i == j else matmul(product(i, split[i][j]),
                                           product(split[i][j] + 1, j))
    out = product(0, len(ms) - 1)
    # a vector's dim of 1 dropped again: rows if the first was one, columns if the last
    first, last = tensors[0].ndim == 1, tensors[-1].ndim == 1
    return out.reshape(out.shape[1 if first else 0:1 if last else 2])


def vecdot(x, y, *, dim=-1):
    """Σ x·y along dim, after broadcasting, as torch.linalg.vecdot (real: no conjugate)."""
    op = "linalg.vecdot"
    _tensors(op, x=x, y=y)
    x, y = autocast_operands(x, y)       # on autocast's float16 list
    for t in (x, y):
        if not backend.is_floating(t.dtype):
            raise TypeError(f"{op}: expected floating-point tensors, got {t.dtype}; "
                            f"convert with .float() first (as PyTorch)")
    if x.dtype != y.dtype:
        raise TypeError(f"{op}: x and y have dtypes {x.dtype} and {y.dtype}; convert one "
                        f"first")
    shape = check_broadcast(op, x.shape, y.shape)
    return (x * y).sum(normalize_dim(dim, len(shape), op)).to(dtype=x.dtype)  # (autocast
    # sums in float32; the product is on its float16 list)


def diagonal(A, *, offset=0, dim1=-2, dim2=-1):
    """The diagonals of the matrices in the last two dims, as torch.linalg.diagonal (as
    mg.diagonal, with those dims as defaults): a view."""
    _tensors("linalg.diagonal", A=A)
    return _diagonal(A, offset, dim1, dim2)


def vander(x, *, N=None):
    """The Vandermonde matrices of x (..., n): (..., n, N) with columns x⁰, x¹, …, x^(N-1)
    (increasing powers, unlike torch.vander's; N defaults to n, and must be > 1), as
    torch.linalg.vander. Running products, so the gradient is exact at 0; integers give
    int64."""
    op = "linalg.vander"
    _tensors(op, x=x)
    if x.dtype == backend.bool_:
        raise TypeError(f"{op}: x must be a float or integer tensor, got {x.dtype}")
    if x.ndim == 0:
        raise ValueError(f"{op}: x must have at least 1 dim (the points), got a 0-d tensor")
    n = x.shape[-1] if N is None else int_arg(op, "N", N)
    if n <= 1:
        raise ValueError(f"{op}: N (the number of columns, x's last dim by default) must be "
                         f"greater than 1, got {n}")
    ones = Tensor._make(x.backend.xp.ones(x.shape + (1,), dtype=x.dtype), x.device)
    return cat([ones, x.unsqueeze(-1).expand(*x.shape, n - 1)], -1).cumprod(-1)


def tensorinv(A, ind=2):
    """The inverse of A for tensordot over `ind` dims, as torch.linalg.tensorinv: A's first
    `ind` dims as rows and the rest as columns make a square matrix, inverted; the result
    has shape A.shape[ind:] + A.shape[:ind]."""
    op = "linalg.tensorinv"
    _tensors(op, A=A)
    ind = int_arg(op, "ind", ind, low=1)
    if ind > A.ndim:
        raise ValueError(f"{op}: ind={ind} is more than A's {A.ndim} dims (shape {A.shape})")
    rows, cols = math.prod(A.shape[:ind]), math.prod(A.shape[ind:])
    if rows != cols:
        raise ValueError(f"{op}: A of shape {A.shape} with ind={ind} is not square: "
                         f"{rows} rows (its first {ind} dims) and {cols} columns (the rest)")
    return inv(A.reshape(rows, cols)).reshape(A.shape[ind:] + A.shape[:ind])


def tensorsolve(A, B, dims=None):
    """X with tensordot(A, X, X.ndim) = B, as torch.linalg.tensorsolve: A's first B.ndim
    dims as rows, the rest (X's shape) as columns, a square system; dims (a tuple) names
    dims of A moved to the end first."""
    op = "linalg.tensorsolve"
    _tensors(op, A=A, B=B)
    if dims is not None:
        if not isinstance(dims, (tuple, list)):
            raise TypeError(f"{op}: dims must be a tuple of ints (or None), got {dims!r}")
        A = movedim(A, tuple(dims), tuple(range(A.ndim - len(dims), A.ndim)))
    shape = A.shape[B.ndim:]
    rows, cols = math.prod(A.shape[:B.ndim]), math.prod(shape)
    if A.ndim < B.ndim or not rows == cols == B.numel():
        raise ValueError(f"{op}: A of shape {A.shape} and B of shape {B.shape} are not a "
                         f"square system: A's first {B.ndim} dims ({rows} elements) must "
                         f"match B's {B.numel()}, and its other dims as many")
    return solve(A.reshape(rows, cols), B.reshape(rows)).reshape(shape)
