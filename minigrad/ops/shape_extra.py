"""torch's smaller shape helpers, each a composition of the shape ops (so the gradients
are theirs): ravel, fliplr, flipud, hsplit, vsplit, dsplit, split_with_sizes, diagflat,
atleast_1d/2d/3d, column_stack, dstack, block_diag, cartesian_prod, combinations, msort,
adjoint; and the questions about a tensor that torch also asks as functions (is_same_size,
is_signed, is_complex, is_nonzero, get_device). And x.view's two meanings: a shape, or a
dtype (the same bytes read as another dtype)."""
import itertools

from minigrad import backend
from minigrad.args import shape_args
from minigrad.tensor import Tensor
from minigrad.ops.layout import diag, meshgrid, tensor_split
from minigrad.ops.shape import cat, flip, reshape, split, stack, transpose
from minigrad.ops.shape import view as view_shape


def view(x, shape, dtype=None):
    """x.view(*shape) (shape.py's view: x's memory in another shape), or x.view(dtype), as
    PyTorch's: x's bytes read as another dtype, a view outside the graph. A dtype of another
    size scales the last dim, which must then be contiguous and hold whole elements."""
    if dtype is None and len(shape) == 1 and not isinstance(shape[0], (tuple, list)) and \
            not backend.is_integer(shape[0]):
        try:
            dtype, shape = backend.dtype(shape[0]), ()
        except TypeError:
            pass                                  # not a dtype: shape_args names the size
    if dtype is None:
        return view_shape(x, shape_args(shape, "view"))
    if shape:
        raise TypeError(f"view: give a shape or a dtype, not both (got {shape} and {dtype})")
    new, old = backend.dtype(dtype), x.dtype
    if new.itemsize != old.itemsize:
        what = f"{old} as {new} (elements of {old.itemsize} and {new.itemsize} bytes)"
        if x.ndim == 0:
            raise RuntimeError(f"view: a 0-d tensor cannot be viewed as a dtype of another "
                               f"size: {what}")
        k = max(new.itemsize // old.itemsize, 1)   # a wider dtype: whole ones, where they start
        if x.shape[-1] * old.itemsize % new.itemsize or x.shape[-1] > 1 and x.stride(-1) != 1 \
                or any(n % k for n in x.stride()[:-1] + (x.storage_offset(),)):
            raise RuntimeError(f"view: to view {what}, the last dim must be contiguous and "
                               f"hold whole elements, and each other stride and the offset be "
                               f"whole elements too; got shape {x.shape}, strides "
                               f"{x.stride()}, offset {x.storage_offset()}")
    out = Tensor._make(x._data.view(new), x.device)
    out._version_counter = x._version_counter        # a view: it counts x's changes
    return out


def _tensor(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x


def _at_least(x, ndim, op):
    if _tensor(x, op).ndim < ndim:
        raise ValueError(f"{op}: needs a tensor with at least {ndim} dim(s), got shape "
                         f"{x.shape}")
    return x


def ravel(input):
    """x flattened to 1-D (a view where x's memory allows), as torch.ravel."""
    return reshape(_tensor(input, "ravel"), (-1,))


def fliplr(input): return flip(_at_least(input, 2, "fliplr"), (1,))     # columns reversed
def flipud(input): return flip(_at_least(input, 1, "flipud"), (0,))     # rows reversed


def _split_along(x, sections, dim, op):
    """hsplit/vsplit/dsplit: an int cuts into that many equal pieces (it must divide the
    dim, as PyTorch; tensor_split would allow uneven ones), a list cuts before each index."""
    if backend.is_integer(sections) and not isinstance(sections, bool):
        n = x.shape[dim]
        if sections <= 0 or n % sections:
            raise ValueError(f"{op}: cannot split dim {dim} of size {n} into {sections} equal "
                             f"pieces; give a number of pieces that divides {n}, or a list "
                             f"of indices to cut at")
    return tensor_split(x, sections, dim)


def hsplit(input, sections):
    """Pieces along dim 1 (dim 0 of a 1-D tensor), as torch.hsplit."""
    _at_least(input, 1, "hsplit")
    return _split_along(input, sections, 1 if input.ndim > 1 else 0, "hsplit")


def vsplit(input, sections): return _split_along(_at_least(input, 2, "vsplit"), sections, 0, "vsplit")
def dsplit(input, sections): return _split_along(_at_least(input, 3, "dsplit"), sections, 2, "dsplit")


def split_with_sizes(input, split_sizes, dim=0):
    """Pieces of the given sizes along dim, which must sum to its size, as
    torch.split_with_sizes (split with a list)."""
    if not isinstance(split_sizes, (list, tuple)):
        raise TypeError(f"split_with_sizes: split_sizes must be a list of ints, got "
                        f"{split_sizes!r}")
    return split(_tensor(input, "split_with_sizes"), list(split_sizes), dim)


def diagflat(input, offset=0):
    """x flattened onto the `offset`-th diagonal of a square matrix of zeros, as
    torch.diagflat."""
    return diag(ravel(_tensor(input, "diagflat")), offset)


# ---- stacking and combining -----------------------------------------------------------------
def _at_least_dims(op, tensors, grow):
    """atleast_Nd: one tensor gives one, several (or one list) give a tuple, as PyTorch."""
    single = len(tensors) == 1 and isinstance(tensors[0], Tensor)
    if len(tensors) == 1 and isinstance(tensors[0], (list, tuple)):
        tensors = tuple(tensors[0])
    out = tuple(grow(_tensor(t, op)) for t in tensors)
    return out[0] if single else out


def atleast_1d(*tensors):
    """Each tensor with at least 1 dim (0-d becomes (1,)), as torch.atleast_1d."""
    return _at_least_dims("atleast_1d", tensors,
                          lambda t: reshape(t, (1,)) if t.ndim == 0 else t)


def atleast_2d(*tensors):
    """Each tensor with at least 2 dims: (n,) becomes (1, n), 0-d (1, 1)."""
    return _at_least_dims("atleast_2d", tensors,
                          lambda t: reshape(t, (1, -1)) if t.ndim < 2 else t)


def _3d(t):
    return reshape(t, (1, 1, 1) if t.ndim == 0 else (1, -1, 1) if t.ndim == 1 else
                   t.shape + (1,) if t.ndim == 2 else t.shape)


def atleast_3d(*tensors):
    """Each tensor with at least 3 dims: (n,) becomes (1, n, 1), (m, n) (m, n, 1), 0-d
    (1, 1, 1), as torch.atleast_3d (NumPy's rule)."""
    return _at_least_dims("atleast_3d", tensors, _3d)


def _sequence(tensors, op):
    if isinstance(tensors, Tensor) or not isinstance(tensors, (list, tuple)) or not tensors:
        raise TypeError(f"{op}: expected a non-empty list or tuple of tensors, got "
                        f"{type(tensors).__name__}")
    return [_tensor(t, op) for t in tensors]


def column_stack(tensors):
    """The tensors side by side as columns: 0-d and 1-D ones become (n, 1) columns, then
    all are joined along dim 1, as torch.column_stack."""
    return cat([reshape(t, (-1, 1)) if t.ndim < 2 else t
                for t in _sequence(tensors, "column_stack")], 1)


def dstack(tensors):
    """The tensors joined along dim 2 (depth), each first made 3-D (atleast_3d), as
    torch.dstack."""
    return cat([_3d(t) for t in _sequence(tensors, "dstack")], 2)


def block_diag(*tensors):
    """The tensors as the blocks of a block-diagonal matrix, zeros elsewhere, as
    torch.block_diag: each 0-d, 1-D (a row) or 2-D; dtypes promoted as torch.result_type
    does (an integer block beside a float one becomes float; a 0-d block's dtype counts
    only where its category is higher, so a 0-d float64 beside float32 blocks gives
    float32)."""
    from minigrad.dtypes import result_type_of
    op = "block_diag"
    blocks = [reshape(t, (1, -1)) if t.ndim < 2 else t for t in
              (_tensor(t, op) for t in tensors)]
    for i, t in enumerate(blocks):
        if t.ndim > 2:
            raise ValueError(f"{op}: each tensor must have at most 2 dims; tensor {i} has "
                             f"shape {t.shape}")
    if not blocks:
        from minigrad.creation import zeros
        return zeros(1, 0, device="cpu")   # (never the default device, as PyTorch)
    dtype = result_type_of(tensors, op)
    width = sum(t.shape[1] for t in blocks)
    rows, left = [], 0
    for t in blocks:
        xp, (r, c) = t.backend.xp, t.shape
        pad = [Tensor._make(xp.zeros((r, w), dtype), t.device)
               for w in (left, width - left - c)]
        rows.append(cat([pad[0], t.to(dtype=dtype), pad[1]], 1))
        left += c
    return cat(rows, 0)


def cartesian_prod(*tensors):
    """Every combination of one element from each 1-D tensor, one per row, in order (the
    last varying fastest), as torch.cartesian_prod; one tensor comes back as it is."""
    op = "cartesian_prod"
    for i, t in enumerate(tensors):
        if _tensor(t, op).ndim != 1:
            raise ValueError(f"{op}: expects 1-D tensors, got shape {t.shape} at position {i}")
    if len(tensors) == 1:
        return tensors[0]
    return stack([reshape(g, (-1,)) for g in meshgrid(*tensors, indexing="ij")], 1)


def combinations(input, r=2, with_replacement=False):
    """The r-element combinations of a 1-D tensor's elements (with repeats if
    with_replacement), one per row in lexicographic order of position, as
    torch.combinations: (k, r); r = 0 gives an empty 1-D tensor."""
    op = "combinations"
    if _tensor(input, op).ndim != 1:
        raise ValueError(f"{op}: expects a 1-D tensor, got shape {input.shape}")
    if not backend.is_integer(r) or isinstance(r, bool):
        raise TypeError(f"{op}: r must be an int, got {r!r}")
    if r < 0:
        raise ValueError(f"{op}: r must be non-negative, got {r}")
    if r == 0:
        return input[:0]
    pick = itertools.combinations_with_replacement if with_replacement else \
        itertools.combinations
    host = backend.get("cpu").xp
    index = host.asarray(list(pick(range(input.shape[0]), int(r))), dtype=backend.int64)
    index = Tensor._make(input.backend.from_numpy(index.reshape(-1, int(r))), input.device)
    return input[index]


def msort(input):
    """input sorted along dim 0 (ascending), as torch.msort: sort(dim=0)'s values."""
    return _tensor(input, "msort").sort(0)[0]


def adjoint(input):
    """The (conjugate) transpose of the last two dims, a view; for real tensors the
    transpose, as torch.adjoint."""
    if _tensor(input, "adjoint").ndim < 2:
        raise ValueError(f"adjoint: needs a matrix or a batch of them (at least 2 dims), got "
                         f"shape {input.shape}")
    return transpose(input, -2, -1)


# ---- about a tensor ------------------------------------------------------------------------
def is_same_size(input, other):
    _tensor(input, "is_same_size")
    if not isinstance(other, Tensor):
        raise TypeError(f"is_same_size: expected a Tensor, got {type(other).__name__}")
    return input.shape == other.shape


def is_signed(input):
    """Whether x's dtype holds negative numbers: floats and signed integers (not uint8 or
    bool), as torch.is_signed."""
    return _tensor(input, "is_signed").dtype.kind in "fi"


def is_complex(input):
    """False: minigrad has no complex dtypes."""
    return bool(_tensor(input, "is_complex").dtype.kind == "c")


def is_nonzero(input):
    """Whether x's one element is not 0 (NaN counts as nonzero), as torch.is_nonzero: an
    error for no element or several."""
    n = _tensor(input, "is_nonzero").numel()
    if n != 1:
        raise RuntimeError(f"is_nonzero: Boolean value of Tensor with "
                           f"{'no values' if n == 0 else 'more than one value'} is ambiguous "
                           f"(shape {input.shape})")
    return bool(input.item() != 0)


def get_device(input):
    """The device's index: -1 on the CPU (as torch), 0 on the GPU (one GPU: "cuda" is
    "cuda:0")."""
    return -1 if _tensor(input, "get_device").device == "cpu" else 0
