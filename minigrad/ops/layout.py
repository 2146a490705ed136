"""More ways to lay elements out, PyTorch's spellings: movedim, t, broadcast_to, tile, select,
hstack/vstack, meshgrid, and the diagonals (diagonal, diag, trace). Most are compositions of
shape.py's ops (permute, reshape, expand, repeat, cat, indexing), so their gradients come
with them; the diagonal is a view of its own (`Diagonal`), whose gradient writes g back onto
the diagonal of zeros (`DiagonalScatter`), each the other's backward."""
from minigrad import backend
from minigrad.args import shape_args
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.reduce import normalize_dim, expand
from minigrad.ops.shape import permute, reshape, repeat, cat, clone


class Diagonal(Function):
    """The elements a[..., i, i + offset, ...] of dims dim1 and dim2, as a new last dim: a
    view (NumPy's diagonal). Its gradient puts g back on that diagonal of zeros."""
    def forward(self, a, offset, dim1, dim2):
        self.in_shape, self.args = a.shape, (offset, dim1, dim2)
        out = self.xp.diagonal(a, offset, dim1, dim2)
        if backend.is_numpy(self.xp) and a.flags.writeable:
            out.flags.writeable = True       # NumPy's is read-only; PyTorch's (CuPy's) not
        return out
    def backward(self, g): return DiagonalScatter.apply(g, shape=self.in_shape, args=self.args)


class DiagonalScatter(Function):
    """zeros(shape) with g on the diagonal (offset, dim1, dim2): the gradient of Diagonal,
    and the 1-D to 2-D diag. Linear, so its gradient is Diagonal again."""
    def forward(self, g, shape, args):
        xp, (offset, dim1, dim2) = self.xp, args
        self.args = args
        n = g.shape[-1]                                  # the diagonal's length
        rest = [s for i, s in enumerate(shape) if i not in (dim1, dim2)]
        out = xp.zeros(tuple(rest) + (shape[dim1], shape[dim2]), dtype=g.dtype)
        rows = xp.arange(n) + max(-offset, 0)
        out[..., rows, rows + offset] = g                # dim1, dim2 last while writing
        return xp.moveaxis(out, (-2, -1), (dim1, dim2))
    def backward(self, g):
        offset, dim1, dim2 = self.args
        return Diagonal.apply(g, offset=offset, dim1=dim1, dim2=dim2)


# ---- what users call -------------------------------------------------------------------
def diagonal(x, offset=0, dim1=0, dim2=1):
    """The diagonal of dims dim1 and dim2 (above it for offset > 0, below for < 0) as the
    last dim, as torch.diagonal: a view. An offset past the edge gives an empty diagonal."""
    if x.ndim < 2:
        raise ValueError(f"diagonal: needs a tensor with at least 2 dims, got shape {x.shape}")
    d1, d2 = (normalize_dim(d, x.ndim, "diagonal") for d in (dim1, dim2))
    if d1 == d2:
        raise ValueError(f"diagonal: dim1 and dim2 name the same dim ({dim1} and {dim2} of a "
                         f"tensor with {x.ndim} dims); give two different dims")
    if not backend.is_integer(offset):
        raise TypeError(f"diagonal: offset must be an int, got {offset!r}")
    return Diagonal.apply(x, offset=int(offset), dim1=d1, dim2=d2)


def diag(x, diagonal=0):
    """A 1-D tensor as the `diagonal`-th diagonal of a square matrix (zeros elsewhere), or a
    2-D tensor's `diagonal`-th diagonal as a 1-D one (a copy), as torch.diag."""
    if not backend.is_integer(diagonal):
        raise TypeError(f"diag: diagonal must be an int, got {diagonal!r}")
    if x.ndim == 1:
        n = x.shape[0] + abs(diagonal)
        return DiagonalScatter.apply(x, shape=(n, n), args=(int(diagonal), 0, 1))
    if x.ndim == 2:
        return clone(Diagonal.apply(x, offset=int(diagonal), dim1=0, dim2=1))
    raise ValueError(f"diag: needs a 1-D tensor (to make a matrix) or a 2-D one (to take "
                     f"its diagonal), got shape {x.shape}")


def trace(x):
    """The sum of a matrix's main diagonal, as torch.trace (integers sum as int64)."""
    if x.ndim != 2:
        raise ValueError(f"trace: needs a matrix (2-D), got shape {x.shape}")
    d = diagonal(x)
    if not backend.is_floating(d.dtype):
        return Tensor._make(x.backend.xp.asarray(d.data.sum(dtype=backend.int64)), x.device)
    return d.sum()


def _dims(dims, ndim, op, what):
    """An int or a tuple of ints as distinct dims in 0..ndim-1 (a 0-d tensor takes 0, -1)."""
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if not all(backend.is_integer(d) for d in dims):
        raise TypeError(f"{op}: {what} must be an int or a tuple of ints, got {dims}")
    out = tuple(normalize_dim(d, max(ndim, 1), op) for d in dims)
    if len(set(out)) != len(out):
        raise ValueError(f"{op}: {what} {dims} names a dim more than once")
    return out


def movedim(x, source, destination):
    """x with its dims `source` moved to positions `destination` (ints or tuples of one
    length), the other dims keeping their order, as torch.movedim: a permute, so a view."""
    src, dst = _dims(source, x.ndim, "movedim", "source"), \
        _dims(destination, x.ndim, "movedim", "destination")
    if len(src) != len(dst):
        raise ValueError(f"movedim: source {source} and destination {destination} must have "
                         f"the same number of dims")
    if x.ndim == 0:                      # dim 0 or -1 of a 0-d tensor: itself, a view
        return reshape(x, ())
    order = [None] * x.ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(x.ndim) if d not in src)
    return permute(x, tuple(o if o is not None else next(rest) for o in order))


def t(x):
    """A matrix transposed; a 0-d or 1-d tensor as it is (a view), as torch.t."""
    if x.ndim > 2:
        raise ValueError(f"t: expects a tensor with at most 2 dims, got shape {x.shape}; use "
                         f".transpose(d0, d1) or .mT for batches of matrices")
    return reshape(x, x.shape) if x.ndim < 2 else permute(x, (1, 0))


def broadcast_to(x, shape):
    """x broadcast to `shape` (a view; -1 keeps a size), as torch.broadcast_to: expand."""
    shape = tuple(shape) if isinstance(shape, (tuple, list)) else (shape,)
    return expand(x, shape_args((shape,), "broadcast_to"))


def tile(x, dims):
    """x repeated dims[i] times along dim i, as torch.tile: fewer dims than x has are
    padded with 1s in front (a 2-D x and dims (2,) repeat the last dim), more add dims."""
    dims = shape_args(dims if isinstance(dims, (tuple, list)) else (dims,), "tile")
    if any(r < 0 for r in dims):
        raise ValueError(f"tile: repetitions must be non-negative, got {dims}")
    return repeat(x, (1,) * (x.ndim - len(dims)) + dims)


def select(x, dim, index):
    """x[..., index, ...] along dim (the dim removed), as torch.select: a view; a negative
    index counts from the end."""
    if x.ndim == 0:
        raise IndexError("select: a 0-d tensor has no dim to select from")
    d = normalize_dim(dim, x.ndim, "select")
    if isinstance(index, Tensor) and index.ndim == 0 and index.dtype.kind in "iu":
        index = int(index.item())
    if not backend.is_integer(index):
        raise TypeError(f"select: index must be an int, got {index!r}")
    n = x.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select: index {index} is out of range for dim {d} of size {n} "
                         f"(tensor of shape {x.shape}; valid: {-n}..{n - 1})")
    return x[(slice(None),) * d + (int(index) % n,)]


def _tensors(tensors, op):
    tensors = list(tensors)
    if not tensors or not all(isinstance(t, Tensor) for t in tensors):
        raise TypeError(f"{op}: expected a non-empty sequence of tensors, got "
                        f"{[type(t).__name__ for t in tensors]}")
    return tensors


def hstack(tensors):
    """Join along dim 1, or dim 0 for 1-D tensors (0-d ones count as 1-D), as torch.hstack."""
    tensors = [reshape(t, (1,)) if t.ndim == 0 else t for t in _tensors(tensors, "hstack")]
    return cat(tensors, 0 if tensors[0].ndim == 1 else 1)


def vstack(tensors):
    """Join along dim 0, 0-d and 1-D tensors first made rows (1, n), as torch.vstack."""
    tensors = [reshape(t, (1, -1) if t.ndim == 1 else (1, 1)) if t.ndim < 2 else t
               for t in _tensors(tensors, "vstack")]
    return cat(tensors, 0)


def meshgrid(*tensors, indexing="ij"):
    """Coordinate grids of 0-d or 1-D tensors, as torch.meshgrid: with indexing 'ij' the
    i-th output varies along dim i; with 'xy' (NumPy's default) the first two dims swap.
    Each output is an expanded view of its input."""
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])                      # meshgrid([a, b]) as PyTorch
    tensors = _tensors(tensors, "meshgrid")
    if indexing not in ("ij", "xy"):
        raise ValueError(f"meshgrid: indexing must be 'ij' or 'xy', got {indexing!r}")
    for i, x in enumerate(tensors):
        if x.ndim > 1:
            raise ValueError(f"meshgrid: expects 0-d or 1-D tensors, got shape {x.shape} at "
                             f"position {i}")
        if x.dtype != tensors[0].dtype or x.device != tensors[0].device:
            raise TypeError(f"meshgrid: all tensors must share one dtype and device, got "
                            f"{[(str(t.dtype), t.device) for t in tensors]}")
    swap = indexing == "xy" and len(tensors) > 1
    if swap:
        tensors[0], tensors[1] = tensors[1], tensors[0]
    shape = tuple(x.numel() for x in tensors)
    n = len(shape)
    grids = [expand(reshape(x, (1,) * i + (-1,) + (1,) * (n - i - 1)), shape)
             for i, x in enumerate(tensors)]
    if swap:
        grids[0], grids[1] = grids[1], grids[0]
    return tuple(grids)
