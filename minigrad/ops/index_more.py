"""More of PyTorch's indexing: take (input flattened, read at indices), argwhere, and the
writes index_copy, index_put (accumulate= adds), masked_scatter and scatter_reduce (sum,
prod, mean, amax, amin). Each returns a new tensor; the in-place spellings write that
result into self (ops/inplace.py's method). They are built on index.py's GetItem and
IndexAdd and scatter.py's Scatter, so their gradients are those ops' (a gather of the
output's gradient for what was written, the gradient with zeros where self was
overwritten); scatter_reduce's amax, amin and prod have an op of their own."""
import math

from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.elementwise import where
from minigrad.ops.index import GetItem, IndexAdd, raw_index, nonzero
from minigrad.ops.reduce import expand
from minigrad.ops.scatter import Scatter, _checked, _integer_index, _same_dtype, slices_at


def take(input, index):
    """input flattened, read at `index` (integers; negative ones count from the end), shaped
    as index, as torch.take."""
    idx = _integer_index("take", input, index)
    n = input.numel()
    if idx.size and bool(((idx < -n) | (idx >= n)).any()):
        bad = int(idx[(idx < -n) | (idx >= n)].reshape(-1)[0])
        raise IndexError(f"take: index {bad} is out of range for a tensor of {n} elements "
                         f"(shape {input.shape}; valid: {-n}..{n - 1})")
    return GetItem.apply(input.reshape(-1), index=idx)


def argwhere(input):
    """The indices of input's nonzero elements, as torch.argwhere: an (N, input.ndim) int64
    tensor."""
    if input.ndim == 0:                 # (1, 0) or (0, 0), as PyTorch
        rows = int(bool(input._data != 0))
        return Tensor._make(input.backend.xp.zeros((rows, 0), backend.int64), input.device)
    return nonzero(input)


def index_fill(input, dim, index, value):
    """input with its slices along dim at `index` set to value (a number or a 0-d tensor),
    as torch.Tensor.index_fill: a clone, then index_fill_ (ops/inplace.py)."""
    from minigrad.ops.inplace import index_fill as index_fill_
    from minigrad.ops.shape import clone
    return index_fill_(clone(input), dim, index, value)


def index_copy(input, dim, index, source):
    """input with source's slices along dim written at `index` (a vector of integers, one
    per slice of source), as torch.Tensor.index_copy. Repeated indices: which write wins is
    undefined, as PyTorch's."""
    op = "index_copy"
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}: source must be a Tensor, got {type(source).__name__}")
    if input.ndim == 0 or source.ndim == 0:
        if input.ndim != source.ndim and (input.numel() != 1 or source.numel() != 1):
            raise ValueError(f"{op}: self {input.shape} and source {source.shape} must both "
                             f"be 0-d, or have the same number of dims")
        return index_copy(input.reshape(1), 0, index, source.reshape(1)).reshape(input.shape)
    d, idx = slices_at(op, input, dim, index, source)
    return Scatter.apply(input, source, index=(slice(None),) * d + (idx,), value=None)


def index_put(input, indices, values, accumulate=False):
    """input with input[indices] = values, as torch.Tensor.index_put: `indices` a tuple of
    integer or bool tensors, one per leading dim; values broadcast to the part they select. With
    accumulate=True values are added instead, repeated positions each time."""
    op = "index_put"
    if not isinstance(indices, (tuple, list)):
        raise TypeError(f"{op}: indices must be a tuple of tensors, got "
                        f"{type(indices).__name__}")
    if not isinstance(values, Tensor):
        raise TypeError(f"{op}: values must be a Tensor, got {type(values).__name__}")
    _same_dtype(op, input, values, "values")
    idx = []
    for k, i in enumerate(indices):
        if not isinstance(i, Tensor) and not isinstance(i, list):
            raise TypeError(f"{op}: each index must be a tensor of integers or bools, got "
                            f"{type(i).__name__}")
        a = raw_index(i, input, op, "index")
        if a.dtype == backend.bool_ and a.ndim == 0:
            # a 0-d mask stands for a new dim of size 1 (True) or 0 (False) where it is, as
            # torch's (there is no nonzero of a 0-d array)
            at, one = len(idx), Tensor._make(a.reshape(1), input.device)
            rest = tuple(indices[:k]) + (one,) + tuple(indices[k + 1:])
            return index_put(input.unsqueeze(at), rest, values, accumulate).squeeze(at)
        if a.dtype == backend.bool_:      # a mask stands for the positions it marks
            xp = input.backend.xp
            idx += [xp.ascontiguousarray(p) for p in xp.nonzero(a)]
        elif a.dtype.kind in "iu":
            idx.append(a)
        else:
            raise TypeError(f"{op}: indices must be integer or bool tensors, got {a.dtype}")
    if len(idx) > input.ndim:
        raise IndexError(f"{op}: {len(idx)} indices for a tensor of {input.ndim} dims")
    for d, a in enumerate(idx):
        n = input.shape[d]
        bad = (a < -n) | (a >= n)
        if a.size and bool(bad.any()):
            raise IndexError(f"{op}: index {int(a[bad][0])} is out of range for dim {d} of "
                             f"size {n} (valid: {-n}..{n - 1})")
    try:
        part = (tuple(backend.broadcast_shapes(*(a.shape for a in idx)))
                + input.shape[len(idx):])
    except ValueError:
        raise IndexError(f"{op}: the index tensors' shapes "
                         f"{[tuple(a.shape) for a in idx]} do not broadcast together") from None
    try:
        fits = backend.broadcast_shapes(values.shape, part) == part
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{op}: values of shape {values.shape} do not broadcast to the part "
                         f"the indices select, of shape {part}")
    index = tuple(a % input.shape[d] for d, a in enumerate(idx))  # negatives from the end
    v = values if values.shape == part else expand(values, part)
    if accumulate:
        return input + IndexAdd.apply(v, index=index, shape=input.shape)
    return Scatter.apply(input, v, index=index, value=None)


def masked_scatter(input, mask, source):
    """input with the elements of source (in order, row-major) written where the bool
    `mask` (broadcast with input) is True, as torch.Tensor.masked_scatter; source needs at least as
    many elements as the mask has Trues."""
    op = "masked_scatter"
    m = raw_index(mask, input, op, "mask")
    if getattr(m, "dtype", None) != backend.bool_:
        raise TypeError(f"{op}: only bool masks are supported, got "
                        f"{getattr(m, 'dtype', type(m).__name__)}")
    if not isinstance(source, Tensor):
        raise TypeError(f"{op}: source must be a Tensor, got {type(source).__name__}")
    _same_dtype(op, input, source, "source")
    try:
        shape = tuple(backend.broadcast_shapes(input.shape, m.shape))
    except ValueError:
        raise ValueError(f"{op}: mask of shape {tuple(m.shape)} and self of shape "
                         f"{input.shape} do not broadcast") from None
    xp = input.backend.xp
    if m.shape != shape:
        m = xp.ascontiguousarray(xp.broadcast_to(m, shape))
    k = int(m.sum())
    if source.numel() < k:
        raise ValueError(f"{op}: source has {source.numel()} elements, fewer than the mask's "
                         f"{k} True values")
    src = source.reshape(-1)
    src = src if src.shape[0] == k else src[:k]
    whole = input if input.shape == shape else expand(input, shape)
    return Scatter.apply(whole, src, index=m, value=None)


# ---- scatter_reduce --------------------------------------------------------------------
def scatter_reduce(input, dim, index, src, reduce, *, include_self=True):
    """input with src's values combined in along dim at index, as
    torch.Tensor.scatter_reduce: for dim 0, out[index[i][j]][j] = reduce(input[...] if
    include_self, src[i][j], ...), with reduce 'sum', 'prod', 'mean' (of integers rounded
    down), 'amax' or 'amin'; a position no index names keeps input's value. amax, amin and
    prod are computed on the host (a round trip on a GPU), as scatter's reduce='multiply'."""
    op = "scatter_reduce"
    if reduce not in _REDUCE:
        raise ValueError(f"{op}: reduce must be one of {', '.join(map(repr, _REDUCE))}, got "
                         f"{reduce!r}")
    if input.ndim == 0:
        def scatter_reduce(input, dim, index, src):       # (the name the errors give)
            return _scatter_reduce(input, dim, index, src, reduce, include_self)
        from minigrad.ops.scatter import _on_one_element
        return _on_one_element(scatter_reduce, input, dim, index, src)
    return _scatter_reduce(input, dim, index, src, reduce, include_self)


def _scatter_reduce(x, dim, index, src, reduce, include_self):
    grid, src = _checked("scatter_reduce", x, dim, index, src, number_ok=False)
    if reduce in ("amax", "amin", "prod"):
        return ScatterExtreme.apply(x, src, index=grid, reduce=reduce,
                                    include_self=include_self)
    base = x if include_self else Scatter.apply(x, index=grid, value=0)
    total = base + IndexAdd.apply(src, index=grid, shape=x.shape)
    if reduce == "sum":
        return total
    xp = x.backend.xp                                    # mean: over how many there were
    ones = Tensor._make(xp.ones(src.shape, x.dtype), x.device)
    count = IndexAdd.apply(ones, index=grid, shape=x.shape)._data + int(include_self)
    count = Tensor._make(xp.where(count == 0, 1, count).astype(x.dtype), x.device)
    return total / count if backend.is_floating(x.dtype) else total // count


_REDUCE = ("sum", "prod", "mean", "amax", "amin")
_UFUNC = {"amax": "maximum", "amin": "minimum", "prod": "multiply"}


def _identity(reduce, dtype):
    """What a reduction starts from when self is left out: -inf for amax (the lowest
    integer), inf for amin, 1 for prod."""
    if reduce == "prod":
        return 1
    if backend.is_floating(dtype):
        return -math.inf if reduce == "amax" else math.inf
    low, high = backend.value_range(dtype)
    return low if reduce == "amax" else high


class ScatterExtreme(Function):
    """self with src's values combined in at index (a position grid) by amax, amin or prod,
    self's own value included or not. Gradients, as PyTorch's: amax/amin share g evenly
    among the elements (of self and src) equal to the result, and give NaN to all of a NaN
    result's; but with include_self=False a tie with self's left-out value does not take a
    share (PyTorch's does, so its src gradients then sum to less than g); prod's is the product of the
    others: out/x where x is not 0; with one zero among them, that zero gets the product of
    the rest, every other member 0; with more zeros all get 0."""
    def forward(self, a, src, index, reduce, include_self):
        xp = self.xp
        self.index, self.reduce, self.include_self = index, reduce, include_self
        self.hit = xp.zeros(a.shape, backend.bool_)
        self.hit[index] = True
        start = a if include_self else xp.where(self.hit, _identity(reduce, a.dtype), a)
        # the host's ufunc.at combines repeated positions one by one (CuPy has no
        # maximum.at, minimum.at, multiply.at for every dtype)
        host = backend.get("cpu").xp
        out = backend.to_host(start).astype(a.dtype, copy=True)
        at = tuple(backend.to_host(i) if hasattr(i, "shape") else i for i in index)
        getattr(host, _UFUNC[reduce]).at(out, at, backend.to_host(src))
        out = backend.get(self.device).from_numpy(out)
        return out if include_self else xp.where(self.hit, out, a)

    def backward(self, g):
        x, src = self.inputs
        out, index, xp = self.output(), self.index, self.xp
        own = self.const(xp.ones(x.shape, backend.bool_) if self.include_self else ~self.hit)
        if self.reduce != "prod":
            ex = (x == out) & own                          # the ties, which share g
            es = GetItem.apply(out, index=index) == src
            count = ex.to(dtype=g.dtype) + IndexAdd.apply(es.to(dtype=g.dtype), index=index,
                                                           shape=x.shape)
            # a NaN result equals none of its elements: as PyTorch's g / 0 · 0, all of
            # them get NaN (so does every element where g is NaN)
            share = where(count == 0, math.nan, g / count.clip(min=1))
            lost = share.isnan()
            share_at, lost_at = GetItem.apply(share, index=index), GetItem.apply(lost, index=index)
            return (where((ex | lost) & own, share, 0.0), where(es | lost_at, share_at, 0.0))
        # prod: with the zeros set to 1, the product of the others; the zeros counted apart
        zx, zs = self.const(x._data == 0), self.const(src._data == 0)
        zeros = (zx & own).to(dtype=g.dtype) + IndexAdd.apply(zs.to(dtype=g.dtype),
                                                              index=index, shape=x.shape)
        one = zeros == 1
        masked = ScatterExtreme.apply(where(zx, 1.0, x), where(zs, 1.0, src), index=index,
                                      reduce="prod", include_self=self.include_self)
        gx = where(zx, where(one, g * masked, 0.0), g * out / where(zx, 1.0, x))
        g_at, one_at = GetItem.apply(g, index=index), GetItem.apply(one, index=index)
        gs = where(zs, where(one_at, g_at * GetItem.apply(masked, index=index), 0.0),
                   g_at * GetItem.apply(out, index=index) / where(zs, 1.0, src))
        return where(own, gx, 0.0), gs
