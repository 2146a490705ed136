"""Writing into a tensor at integer positions, as PyTorch: scatter (src's values replace
self's), scatter_add and index_add (src's values are added). They mirror gather and
index_select (index.py), and their gradients are those: the gradient of src is the output's
gradient gathered where src went. Each returns a new tensor; the in-place spellings
(scatter_, scatter_add_, index_add_) write that result into self (ops/inplace.py)."""
from minigrad import backend
from minigrad.args import check_fill_value
from minigrad.autograd import Function, is_grad_enabled
from minigrad.tensor import Tensor
from minigrad.tensor_inplace import times_alpha
from minigrad.ops.index import GetItem, IndexAdd, raw_index, position_grid
from minigrad.ops.reduce import normalize_dim


class Scatter(Function):
    """A copy of `a` with src's values (or the number `value`) written at `index` (a
    position grid, see position_grid): out[index] = src.
    d out/d a = 1 where a's element survives, 0 where it was overwritten: scatter 0 into g;
    d out/d src = g at the places src went: g[index], a gather."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, *src, index, value):
        self.index = index
        out = a.copy()
        out[index] = src[0] if src else value
        return out

    def backward(self, g):
        a, *src = self.inputs                                   # no src: a number was written
        g_a = Scatter.apply(g, index=self.index, value=0) if a.requires_grad else None
        if not src:
            return (g_a,)
        return g_a, GetItem.apply(g, index=self.index) if src[0].requires_grad else None


# ---- what users call -------------------------------------------------------------------
def scatter(x, dim, index, src=None, *, value=None, reduce=None):
    """x with src written along dim at index, as torch.Tensor.scatter: for dim 0,
    out[index[i][j]][j] = src[i][j] (likewise for other dims). `src` is a tensor of x's
    dtype, at least as large as index in every dim, or a number (also as value=). Where
    index repeats a position, which write wins is undefined (as PyTorch).

    reduce='add' or 'multiply' (PyTorch's older form of scatter_reduce): src is added to, or
    multiplied into, x at index instead, repeated positions each time. 'add' is scatter_add
    (differentiable here, where PyTorch's is not); 'multiply' is not differentiable, as
    PyTorch's, and refuses inputs that would need a gradient."""
    if (src is None) == (value is None):
        raise TypeError("scatter: give either src (a tensor or a number) or value= (a "
                        "number), one of them")
    src = value if src is None else src
    if reduce is not None:
        return _scatter_reduced(x, dim, index, src, reduce)
    if x.ndim == 0:
        return _on_one_element(scatter, x, dim, index, src)
    grid, src = _checked("scatter", x, dim, index, src)
    if isinstance(src, Tensor):
        return Scatter.apply(x, src, index=grid, value=None)
    return Scatter.apply(x, index=grid, value=src)


def _scatter_reduced(x, dim, index, src, reduce):
    if reduce not in ("add", "multiply"):
        raise ValueError(f"scatter: reduce must be 'add' or 'multiply', got {reduce!r} (for "
                         f"'sum', 'prod', 'mean', 'amax', 'amin' PyTorch has scatter_reduce)")
    if reduce == "add":
        if not isinstance(src, Tensor):       # a number added at every position of index
            idx = _integer_index("scatter", x, index)
            src = Tensor._make(x.backend.xp.full(idx.shape, src, x.dtype), x.device)
        return scatter_add(x, dim, index, src)
    if is_grad_enabled() and (x.requires_grad or getattr(src, "requires_grad", False)):
        raise RuntimeError("scatter: reduce='multiply' is not differentiable (nor is "
                           "PyTorch's); detach its inputs or call it under mg.no_grad()")
    if x.ndim == 0:
        def scatter(x, dim, index, src):          # (the name the errors give)
            return _scatter_reduced(x, dim, index, src, reduce)
        return _on_one_element(scatter, x, dim, index, src)
    grid, src = _checked("scatter", x, dim, index, src)
    out = backend.to_host(x._data).copy()          # repeated positions multiply each time:
    factors = backend.to_host(src._data) if isinstance(src, Tensor) else src   # ufunc.at
    host_grid = tuple(backend.to_host(g) if hasattr(g, "shape") else g for g in grid)
    backend.get("cpu").xp.multiply.at(out, host_grid, factors)
    return Tensor._make(x.backend.from_numpy(out), x.device)


def scatter_add(x, dim, index, src):
    """x with src added along dim at index, as torch.Tensor.scatter_add: for dim 0,
    out[index[i][j]][j] += src[i][j]; repeated positions add up. x + (zeros with src added
    at index): the gradient of x is g, that of src g gathered at index (IndexAdd's own)."""
    if x.ndim == 0:
        return _on_one_element(scatter_add, x, dim, index, src)
    grid, src = _checked("scatter_add", x, dim, index, src, number_ok=False)
    return x + IndexAdd.apply(src, index=grid, shape=x.shape)


def index_add(x, dim, index, source, *, alpha=1):
    """x with alpha·source[..., i, ...] added to x[..., index[i], ...] along dim, as
    torch.Tensor.index_add: `index` a vector of integers, one per slice of source along
    dim; repeated indices add up. The gradient of source is g's slices at index
    (index_select), that of x is g."""
    op = "index_add"
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}: source must be a Tensor, got {type(source).__name__}")
    if x.ndim == 0:
        return index_add(x.reshape(1), dim, index, source.reshape(-1), alpha=alpha)[0]
    d, idx = slices_at(op, x, dim, index, source)
    source = times_alpha(x, source, alpha, op)          # (an integer alpha for integer x)
    return x + IndexAdd.apply(source, index=(slice(None),) * d + (idx,), shape=x.shape)


def _on_one_element(op, x, dim, index, src):
    """A 0-d x (with a 0-d index and src), as PyTorch accepts it: the op on one element."""
    normalize_dim(dim, 1, op.__name__)                 # dim 0 or -1, as a 1-element vector
    idx = raw_index(index, x, op.__name__, "index")
    if getattr(idx, "ndim", 0) != 0:
        raise ValueError(f"{op.__name__}: self is 0-d, so index must be 0-d too, got shape "
                         f"{tuple(idx.shape)}")
    idx = idx.reshape(1) if hasattr(idx, "reshape") else idx
    if isinstance(src, Tensor):
        src = src.reshape(-1)
    return op(x.reshape(1), 0, idx, src).reshape(())


def _checked(op, x, dim, index, src, number_ok=True):
    """(position grid, src cut to index's shape) after PyTorch's checks: an integer index
    with x's number of dims, no larger than src in any dim nor than x in any dim but `dim`,
    and values in [0, x.size(dim))."""
    d = normalize_dim(dim, x.ndim, op)
    idx = _integer_index(op, x, index)
    if idx.ndim != x.ndim:
        raise ValueError(f"{op}: index has {idx.ndim} dims (shape {tuple(idx.shape)}) but "
                         f"self has {x.ndim} (shape {x.shape}); they must have the same "
                         f"number of dims")
    for k, (i, s) in enumerate(zip(idx.shape, x.shape)):
        if k != d and i > s:
            raise ValueError(f"{op}: index of shape {tuple(idx.shape)} is larger than self "
                             f"(shape {x.shape}) in dim {k} ({i} > {s}); it may be larger "
                             f"only in dim {d}, the dim scattered along")
    if isinstance(src, Tensor):
        _same_dtype(op, x, src, "src")
        if src.ndim != idx.ndim or any(i > s for i, s in zip(idx.shape, src.shape)):
            raise ValueError(f"{op}: src of shape {src.shape} must have the {idx.ndim} dims "
                             f"of index (shape {tuple(idx.shape)}) and be at least as large "
                             f"in each")
        if src.shape != idx.shape:      # only src's first index.size(k) along each dim k
            src = src[tuple(slice(0, i) for i in idx.shape)]
    elif not (number_ok and backend.is_scalar(src)):
        raise TypeError(f"{op}: src must be a Tensor{' or a number' if number_ok else ''}, "
                        f"got {type(src).__name__}")
    else:                               # NaN, inf or 2**70 into integers: an error, as PyTorch
        src = check_fill_value(op, src, x.dtype)
    _check_range(op, idx, x, d)
    return position_grid(x.backend.xp, idx, d), src


def _integer_index(op, x, index):
    idx = raw_index(index, x, op, "index")
    if not hasattr(idx, "dtype") or idx.dtype.kind not in "iu":
        raise TypeError(f"{op}: index must be a tensor of integers (int64 or int32), got "
                        f"{getattr(idx, 'dtype', type(idx).__name__)}")
    return idx


def _same_dtype(op, x, src, name):
    if src.dtype != x.dtype:   # no silent cast of what is written (as PyTorch)
        raise TypeError(f"{op}: {name} has dtype {src.dtype} but self has {x.dtype}; they "
                        f"must match (convert with .to(dtype) first)")


def slices_at(op, x, dim, index, source):
    """index_add's and index_copy's arguments checked: (dim as an int, the index as a flat
    integer array) where `index` is a vector (or 0-d) of integers in range and `source`
    holds one slice of x per index, of x's dtype."""
    d = normalize_dim(dim, x.ndim, op)
    idx = _integer_index(op, x, index)
    if idx.ndim > 1:
        raise IndexError(f"{op}: index must be a vector (1-D), got shape {tuple(idx.shape)}")
    idx = idx.reshape(-1)                                # (a 0-d index is one too)
    _same_dtype(op, x, source, "source")
    want = x.shape[:d] + (idx.size,) + x.shape[d + 1:]
    if source.shape != want:
        raise ValueError(f"{op}: source has shape {source.shape}; for self of shape {x.shape} "
                         f"and {idx.size} indices along dim {d} it must be {want} (one slice "
                         f"per index)")
    _check_range(op, idx, x, d)
    return d, idx


def _check_range(op, idx, x, d):
    """One vectorised check (one device sync): no wrapping of negative or too large
    indices, as PyTorch (CuPy would wrap them silently)."""
    n = x.shape[d]
    if idx.size and bool(((idx < 0) | (idx >= n)).any()):
        raise IndexError(f"{op}: index values must lie in [0, {n}) (the size of dim {d} of "
                         f"self, shape {x.shape}), got values from {int(idx.min())} to "
                         f"{int(idx.max())}")
