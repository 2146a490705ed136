"""torch's smaller shape helpers, each a composition of the shape ops (so the gradients
are theirs): ravel, fliplr, flipud, hsplit, vsplit, dsplit, split_with_sizes, diagflat;
and the questions about a tensor that torch also asks as functions (is_same_size,
is_signed, is_complex, is_nonzero, get_device)."""
from minigrad import backend
from minigrad.tensor import Tensor
from minigrad.ops.layout import diag, tensor_split
from minigrad.ops.shape import flip, reshape, split


def _tensor(x, op):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(x).__name__}")
    return x


def _at_least(x, ndim, op):
    if _tensor(x, op).ndim < ndim:
        raise ValueError(f"{op}: needs a tensor with at least {ndim} dim(s), got shape "
                         f"{x.shape}")
    return x


def ravel(x):
    """x flattened to 1-D (a view where x's memory allows), as torch.ravel."""
    return reshape(_tensor(x, "ravel"), (-1,))


def fliplr(x): return flip(_at_least(x, 2, "fliplr"), (1,))     # columns reversed
def flipud(x): return flip(_at_least(x, 1, "flipud"), (0,))     # rows reversed


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


def hsplit(x, sections):
    """Pieces along dim 1 (dim 0 of a 1-D tensor), as torch.hsplit."""
    _at_least(x, 1, "hsplit")
    return _split_along(x, sections, 1 if x.ndim > 1 else 0, "hsplit")


def vsplit(x, sections): return _split_along(_at_least(x, 2, "vsplit"), sections, 0, "vsplit")
def dsplit(x, sections): return _split_along(_at_least(x, 3, "dsplit"), sections, 2, "dsplit")


def split_with_sizes(x, split_sizes, dim=0):
    """Pieces of the given sizes along dim, which must sum to its size, as
    torch.split_with_sizes (split with a list)."""
    if not isinstance(split_sizes, (list, tuple)):
        raise TypeError(f"split_with_sizes: split_sizes must be a list of ints, got "
                        f"{split_sizes!r}")
    return split(_tensor(x, "split_with_sizes"), list(split_sizes), dim)


def diagflat(x, offset=0):
    """x flattened onto the `offset`-th diagonal of a square matrix of zeros, as
    torch.diagflat."""
    return diag(ravel(_tensor(x, "diagflat")), offset)


# ---- about a tensor ------------------------------------------------------------------------
def is_same_size(x, other):
    _tensor(x, "is_same_size")
    if not isinstance(other, Tensor):
        raise TypeError(f"is_same_size: expected a Tensor, got {type(other).__name__}")
    return x.shape == other.shape


def is_signed(x):
    """Whether x's dtype holds negative numbers: floats and signed integers (not uint8 or
    bool), as torch.is_signed."""
    return _tensor(x, "is_signed").dtype.kind in "fi"


def is_complex(x):
    """False: minigrad has no complex dtypes."""
    return bool(_tensor(x, "is_complex").dtype.kind == "c")


def is_nonzero(x):
    """Whether x's one element is not 0 (NaN counts as nonzero), as torch.is_nonzero: an
    error for no element or several."""
    n = _tensor(x, "is_nonzero").numel()
    if n != 1:
        raise RuntimeError(f"is_nonzero: Boolean value of Tensor with "
                           f"{'no values' if n == 0 else 'more than one value'} is ambiguous "
                           f"(shape {x.shape})")
    return bool(x.item() != 0)


def get_device(x):
    """The device's index: -1 on the CPU (as torch), 0 on the GPU (one GPU: "cuda" is
    "cuda:0")."""
    return -1 if _tensor(x, "get_device").device == "cpu" else 0
