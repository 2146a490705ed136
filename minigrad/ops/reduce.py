"""Reductions: sum (and its broadcasting inverse sum_to), max/min, and mean/var built on sum."""
from minigrad import backend
from minigrad.autograd import Function
from minigrad.tensor import Tensor


def normalize_dims(dim, ndim, op):
    """`dim` (None, int or tuple, negatives allowed) as a sorted tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    n = max(ndim, 1)  # a 0-d tensor accepts dim 0 and -1, as PyTorch
    dims = (dim,) if isinstance(dim, int) else tuple(dim)
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"{op}: dim {d} out of range for a tensor with {ndim} dims "
                             f"(valid: {-n}..{n - 1})")
    if len(dims) == 1:  # the common case, without the sort
        return (dims[0] % n,)
    return tuple(sorted({d % n for d in dims}))


def reduce_dims(dim, ndim, op):
    """The dims a reduction sums over: as normalize_dims, but a 0-d tensor reduces nothing
    (dim 0 or -1 is accepted there and leaves the value as it is, as PyTorch)."""
    dims = normalize_dims(dim, ndim, op)
    return dims if ndim else ()


def _need_floating(x, op):
    if not backend.is_floating(x.dtype):
        raise RuntimeError(f"{op}(): input dtype must be floating point, got {x.dtype}; "
                           f"use .float()")


def _kept_shape(shape, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


class Sum(Function):
    def forward(self, a, dims, keepdim):                 # d Σx = 1 for every x: copy g back
        self.in_shape, self.kept = a.shape, _kept_shape(a.shape, dims)
        return a.sum(axis=dims, keepdims=keepdim)
    def backward(self, g): return expand(g.reshape(self.kept), self.in_shape)


class SumTo(Function):
    """Sum a broadcast result back to `shape`: the gradient of broadcasting."""
    def forward(self, a, shape):
        self.in_shape = a.shape
        lead = a.ndim - len(shape)
        dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                          if s == 1 and a.shape[lead + i] != 1)
        return a.sum(axis=dims, keepdims=True).reshape(shape) if dims else a.reshape(shape)
    def backward(self, g): return expand(g, self.in_shape)


class Expand(Function):
    """Broadcast to a larger shape (a view, no copy); its gradient sums back."""
    def forward(self, a, shape):
        self.in_shape = a.shape
        return self.xp.broadcast_to(a, shape)
    def backward(self, g): return sum_to(g, self.in_shape)


class Extremum(Function):
    """max/min. The gradient flows to the chosen element: with a dim, the one at the returned
    index (as PyTorch); over the whole tensor, shared evenly among ties."""
    def forward(self, a, kind, dim, keepdim):
        xp = self.xp
        self.in_shape = a.shape
        if dim is None:
            out = a.max() if kind == "max" else a.min()
            hit = a == out
            self.weight = (hit / hit.sum()).astype(a.dtype)  # bool/int is float64: no upcast
            self.kept = (1,) * a.ndim
            return out
        idx = (a.argmax if kind == "max" else a.argmin)(axis=dim, keepdims=True)
        self.kept = idx.shape
        self.weight = xp.zeros(a.shape, dtype=a.dtype)
        xp.put_along_axis(self.weight, idx, 1, axis=dim)
        self.indices = idx if keepdim else idx.squeeze(dim)
        out = xp.take_along_axis(a, idx, axis=dim)
        return out if keepdim else out.squeeze(dim)
    def backward(self, g):
        return expand(g.reshape(self.kept), self.in_shape) * self.const(self.weight)


def sum(x, dim=None, keepdim=False):
    return Sum.apply(x, dims=reduce_dims(dim, x.ndim, "sum"), keepdim=keepdim)


def sum_to(x, shape):
    shape = tuple(shape)
    return x if x.shape == shape else SumTo.apply(x, shape=shape)


def expand(x, shape):
    shape = tuple(x.shape[i - (len(shape) - x.ndim)] if s == -1 else s
                  for i, s in enumerate(shape))
    if shape == x.shape:
        return x
    try:
        backend.broadcast_shapes(x.shape, shape)
        if len(shape) < x.ndim:
            raise ValueError
    except ValueError:
        raise ValueError(f"expand: cannot expand shape {x.shape} to {shape} (each dim must "
                         f"match or be 1, and new dims go in front)") from None
    return Expand.apply(x, shape=shape)


def mean(x, dim=None, keepdim=False):
    _need_floating(x, "mean")
    dims = reduce_dims(dim, x.ndim, "mean")
    n = 1
    for d in dims:
        n *= x.shape[d]
    return sum(x, dims, keepdim) * (1.0 / n if n else float("nan"))  # empty: nan, as PyTorch


def var(x, dim=None, keepdim=False, correction=1):
    """Σ(x - mean)² / (n - correction); correction=1 is the unbiased estimate (PyTorch's
    default), correction=0 the biased one that layer norm uses."""
    _need_floating(x, "var")
    dims = reduce_dims(dim, x.ndim, "var")
    n = 1
    for d in dims:
        n *= x.shape[d]
    d = x - mean(x, dims, keepdim=True)
    scale = 1.0 / (n - correction) if n > correction else float("nan")  # as PyTorch
    return sum(d * d, dims, keepdim) * scale


def extremum(kind, x, dim=None, keepdim=False):
    if x.numel() == 0:
        raise ValueError(f"{kind}: the tensor is empty (shape {x.shape})")
    if dim is None:
        return Extremum.apply(x, kind=kind, dim=None, keepdim=False)
    if not isinstance(dim, int):
        raise TypeError(f"{kind}: dim must be an int, got {dim!r}")
    d = normalize_dims(dim, x.ndim, kind)[0]
    if x.ndim == 0:  # dim 0 of a 0-d tensor: the value itself, at index 0 (as PyTorch)
        index = x.backend.xp.zeros((), dtype=backend.int64)
        return sum(x, (), False), Tensor._make(index, x.device)
    values = Extremum.apply(x, kind=kind, dim=d, keepdim=keepdim)
    ctx = values._ctx
    indices = ctx.indices if ctx is not None else (
        x.data.argmax if kind == "max" else x.data.argmin)(axis=d, keepdims=keepdim)
    return values, Tensor._make(indices, x.device)


def arg(kind, x, dim=None, keepdim=False):
    """argmax/argmin: integer indices, not differentiable."""
    if dim is None:
        return Tensor._make(x.backend.xp.asarray(getattr(x.data, kind)()), x.device)
    d = normalize_dims(dim, x.ndim, kind)[0]
    if x.ndim == 0:
        return Tensor._make(x.backend.xp.zeros((), dtype=backend.int64), x.device)
    return Tensor._make(getattr(x.data, kind)(axis=d, keepdims=keepdim), x.device)
