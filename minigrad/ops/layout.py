"""More ways to lay elements out, PyTorch's spellings: movedim, t, broadcast_to,
broadcast_tensors, tile, select, tensor_split, rot90, hstack/vstack, meshgrid, and the
diagonals (diagonal, diag, diag_embed, trace). Most are compositions of shape.py's ops
(permute, reshape, expand, repeat, cat, flip, indexing), so their gradients come with them;
the diagonal is a view of its own (`Diagonal`), whose gradient writes g back onto the
diagonal of zeros (`DiagonalScatter`), each the other's backward."""
from minigrad import backend
from minigrad.args import shape_args, check_broadcast
from minigrad.autograd import Function
from minigrad.grad_mode import _state, autocast_off
from minigrad.tensor import Tensor
from minigrad.ops.reduce import normalize_dim, expand
from minigrad.ops.shape import permute, reshape, repeat, cat, clone, flip, transpose


class Diagonal(Function):
    """The elements a[..., i, i + offset, ...] of dims dim1 and dim2, as a new last dim: a
    view (NumPy's diagonal). Its gradient puts g back on that diagonal of zeros."""
    needs_values = False                                 # see Function.needs_values
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
    needs_values = False                                 # see Function.needs_values
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
def diagonal(input, offset=0, dim1=0, dim2=1):
    """The diagonal of dims dim1 and dim2 (above it for offset > 0, below for < 0) as the
    last dim, as torch.diagonal: a view. An offset past the edge gives an empty diagonal."""
    if input.ndim < 2:
        raise ValueError(f"diagonal: needs a tensor with at least 2 dims, got shape {input.shape}")
    d1, d2 = (normalize_dim(d, input.ndim, "diagonal") for d in (dim1, dim2))
    if d1 == d2:
        raise ValueError(f"diagonal: dim1 and dim2 name the same dim ({dim1} and {dim2} of a "
                         f"tensor with {input.ndim} dims); give two different dims")
    if not backend.is_integer(offset):
        raise TypeError(f"diagonal: offset must be an int, got {offset!r}")
    return Diagonal.apply(input, offset=int(offset), dim1=d1, dim2=d2)


def diag(input, diagonal=0):
    """A 1-D tensor as the `diagonal`-th diagonal of a square matrix (zeros elsewhere), or a
    2-D tensor's `diagonal`-th diagonal as a 1-D one (a copy), as torch.diag."""
    if not backend.is_integer(diagonal):
        raise TypeError(f"diag: diagonal must be an int, got {diagonal!r}")
    if input.ndim == 1:
        n = input.shape[0] + abs(diagonal)
        return DiagonalScatter.apply(input, shape=(n, n), args=(int(diagonal), 0, 1))
    if input.ndim == 2:
        return clone(Diagonal.apply(input, offset=int(diagonal), dim1=0, dim2=1))
    raise ValueError(f"diag: needs a 1-D tensor (to make a matrix) or a 2-D one (to take "
                     f"its diagonal), got shape {input.shape}")


def diag_embed(input, offset=0, dim1=-2, dim2=-1):
    """x's last dim laid on the `offset`-th diagonal of dims dim1 and dim2 of a new tensor
    of zeros (one dim more than x, those two of size n + |offset|), as torch.diag_embed:
    diagonal(diag_embed(x, o, d1, d2), o, d1, d2) is x again, and that is its gradient."""
    if not backend.is_integer(offset):
        raise TypeError(f"diag_embed: offset must be an int, got {offset!r}")
    n = input.ndim + 1
    d1, d2 = (normalize_dim(d, n, "diag_embed") for d in (dim1, dim2))
    if d1 == d2:
        raise ValueError(f"diag_embed: dim1 and dim2 name the same dim ({dim1} and {dim2} of "
                         f"the result's {n} dims); give two different dims")
    if input.ndim == 0:
        raise ValueError("diag_embed: needs a tensor with at least 1 dim (its last dim is the "
                         "diagonal), got a 0-d one")
    size, rest = input.shape[-1] + abs(int(offset)), iter(input.shape[:-1])
    shape = tuple(size if i in (d1, d2) else next(rest) for i in range(n))
    return DiagonalScatter.apply(input, shape=shape, args=(int(offset), d1, d2))


def trace(input):
    """The sum of a matrix's main diagonal, as torch.trace (integers sum as int64)."""
    if input.ndim != 2:
        raise ValueError(f"trace: needs a matrix (2-D), got shape {input.shape}")
    d = diagonal(input)
    if not backend.is_floating(d.dtype):
        return Tensor._make(input.backend.xp.asarray(d._data.sum(dtype=backend.int64)),
                            input.device)
    if _state.autocast is not None:     # trace is on none of torch's autocast lists: float16
        return autocast_off(d.sum)      # stays float16 (its sum alone is on the float32 one)
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


def movedim(input, source, destination):
    """x with its dims `source` moved to positions `destination` (ints or tuples of one
    length), the other dims keeping their order, as torch.movedim: a permute, so a view."""
    src, dst = _dims(source, input.ndim, "movedim", "source"), \
        _dims(destination, input.ndim, "movedim", "destination")
    if len(src) != len(dst):
        raise ValueError(f"movedim: source {source} and destination {destination} must have "
                         f"the same number of dims")
    if input.ndim == 0:                      # dim 0 or -1 of a 0-d tensor: itself, a view
        return reshape(input, ())
    order = [None] * input.ndim
    for s, d in zip(src, dst):
        order[d] = s
    rest = iter(d for d in range(input.ndim) if d not in src)
    return permute(input, tuple(o if o is not None else next(rest) for o in order))


def t(input):
    """A matrix transposed; a 0-d or 1-d tensor as it is (a view), as torch.t."""
    if input.ndim > 2:
        raise ValueError(f"t: expects a tensor with at most 2 dims, got shape {input.shape}; use "
                         f".transpose(d0, d1) or .mT for batches of matrices")
    return reshape(input, input.shape) if input.ndim < 2 else permute(input, (1, 0))


def broadcast_to(input, size):
    """x broadcast to `shape` (a view; -1 keeps a size), as torch.broadcast_to: expand."""
    size = tuple(size) if isinstance(size, (tuple, list)) else (size,)
    return expand(input, shape_args((size,), "broadcast_to"))


def tile(input, dims):
    """x repeated dims[i] times along dim i, as torch.tile: fewer dims than x has are
    padded with 1s in front (a 2-D x and dims (2,) repeat the last dim), more add dims."""
    dims = shape_args(dims if isinstance(dims, (tuple, list)) else (dims,), "tile")
    if any(r < 0 for r in dims):
        raise ValueError(f"tile: repetitions must be non-negative, got {dims}")
    return repeat(input, (1,) * (input.ndim - len(dims)) + dims)


def select(input, dim, index):
    """x[..., index, ...] along dim (the dim removed), as torch.select: a view; a negative
    index counts from the end."""
    if input.ndim == 0:
        raise IndexError("select: a 0-d tensor has no dim to select from")
    d = normalize_dim(dim, input.ndim, "select")
    if isinstance(index, Tensor) and index.ndim == 0 and index.dtype.kind in "iu":
        index = int(index.item())
    if not backend.is_integer(index):
        raise TypeError(f"select: index must be an int, got {index!r}")
    n = input.shape[d]
    if not -n <= index < n:
        raise IndexError(f"select: index {index} is out of range for dim {d} of size {n} "
                         f"(tensor of shape {input.shape}; valid: {-n}..{n - 1})")
    return input[(slice(None),) * d + (int(index) % n,)]


def broadcast_tensors(*tensors):
    """The tensors expanded to their common broadcast shape (views), as
    torch.broadcast_tensors; gradients sum back to each one's own shape."""
    for i, t in enumerate(tensors):
        if not isinstance(t, Tensor):
            raise TypeError(f"broadcast_tensors: argument {i} is a {type(t).__name__}, not a "
                            f"Tensor (pass the tensors themselves: broadcast_tensors(a, b))")
    shape = check_broadcast("broadcast_tensors", *(t.shape for t in tensors))
    return tuple(expand(t, shape) for t in tensors)


def tensor_split(input, indices_or_sections=None, dim=0, *, indices=None, sections=None):
    """x cut along dim into views, as torch.tensor_split: an int n gives n pieces, the first
    size % n of them one longer (some empty where n exceeds the size); a list of indices
    cuts before each (pieces x[:i0], x[i0:i1], ..., x[ik:], sliced as Python slices: clamped,
    negatives from the end, empty where an index comes before the one ahead of it). A 0-d
    integer tensor counts as n, a 1-D one as the indices. (sections= and indices= are
    PyTorch's keyword spellings of the two.)"""
    op = "tensor_split"
    given = [v for v in (indices_or_sections, indices, sections) if v is not None]
    if len(given) != 1:
        raise TypeError(f"{op}: give one of indices_or_sections, indices= or sections=")
    indices_or_sections = given[0]
    if input.ndim == 0:
        raise ValueError(f"{op}: needs a tensor with at least 1 dim, got a 0-d one")
    d = normalize_dim(dim, input.ndim, op)
    cuts = indices_or_sections
    if isinstance(cuts, Tensor):
        if cuts.dtype.kind not in "iu" or cuts.ndim > 1:
            raise TypeError(f"{op}: a tensor of indices_or_sections must hold integers and be "
                            f"0-d (the number of pieces) or 1-D (the indices), got "
                            f"{cuts.ndim}-d of {cuts.dtype}")
        cuts = int(cuts.item()) if cuts.ndim == 0 else [int(i) for i in cuts.tolist()]
    n = input.shape[d]
    if backend.is_integer(cuts):
        if cuts <= 0:
            raise ValueError(f"{op}: the number of pieces must be positive, got {cuts}")
        size, extra = divmod(n, int(cuts))
        bounds = [i * size + min(i, extra) for i in range(1, int(cuts))]
    elif isinstance(cuts, (list, tuple)) and all(backend.is_integer(i) for i in cuts):
        bounds = [int(i) for i in cuts]
    else:
        raise TypeError(f"{op}: indices_or_sections must be an int (the number of pieces) or "
                        f"a list of ints (where to cut), got {indices_or_sections!r}")
    lead = (slice(None),) * d
    return tuple(input[lead + (slice(lo, hi),)] for lo, hi in zip([None] + bounds, bounds + [None]))


def rot90(input, k=1, dims=(0, 1)):
    """x rotated by 90° k times in the plane of dims (from the first dim toward the second),
    as torch.rot90: flips and a transpose, so the gradient rotates back."""
    if not backend.is_integer(k):
        raise TypeError(f"rot90: k must be an int, got {k!r}")
    dims = tuple(dims) if isinstance(dims, (tuple, list)) else (dims,)
    if len(dims) != 2:
        raise ValueError(f"rot90: dims must name two dims (the plane), got {dims}")
    if input.ndim < 2:
        raise ValueError(f"rot90: needs a tensor with at least 2 dims, got shape {input.shape}")
    d0, d1 = (normalize_dim(d, input.ndim, "rot90") for d in dims)
    if d0 == d1:
        raise ValueError(f"rot90: dims must be two different dims, got {dims}")
    k %= 4
    if k == 0:
        return clone(input)
    if k == 2:
        return flip(input, (d0, d1))
    return transpose(flip(input, d1 if k == 1 else d0), d0, d1)


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
