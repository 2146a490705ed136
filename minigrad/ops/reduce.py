"""Reductions: sum (and its broadcasting inverse sum_to), max/min, amax/amin, prod,
mean built on sum, logsumexp, any/all, and the running sum cumsum (var and std are in
statistics.py)."""
import math
from collections import namedtuple

from minigrad import backend
from minigrad.args import is_0d_integer
from minigrad.autograd import Function
from minigrad.grad_mode import _state, autocast_off
from minigrad.tensor import Tensor


def normalize_dims(dim, ndim, op):
    """`dim` (None, int or tuple, negatives allowed) as a sorted tuple of non-negative dims."""
    if dim is None:
        return tuple(range(ndim))
    n = max(ndim, 1)  # a 0-d tensor accepts dim 0 and -1, as PyTorch
    # a NumPy integer is one; a bool is not (True would silently be dim 1), as PyTorch
    if backend.is_integer(dim) or is_0d_integer(dim):
        dims = (int(dim),)
    elif isinstance(dim, (tuple, list)) and all(backend.is_integer(d) for d in dim):
        dims = tuple(int(d) for d in dim)
    else:
        raise TypeError(f"{op}: dim must be an int or a tuple of ints, got {dim!r}")
    for d in dims:
        if not -n <= d < n:
            raise IndexError(f"{op}: dim {d} out of range for a tensor with {ndim} dims "
                             f"(valid: {-n}..{n - 1})")
    if len(dims) == 1:  # the common case, without the sort
        return (dims[0] % n,)
    unique = sorted({d % n for d in dims})
    if len(unique) != len(dims):                     # (0, 0) or (1, -1) of a 2-d tensor
        raise ValueError(f"{op}: dim {dim!r} names a dim more than once")
    return tuple(unique)


def normalize_dim(dim, ndim, op):
    """One dim (an integer, negatives allowed; not None, not a tuple) as a non-negative int,
    for ops that work along a single dim."""
    if not backend.is_integer(dim) and not is_0d_integer(dim):
        raise TypeError(f"{op}: dim must be an int, got {dim!r}")
    return normalize_dims(dim, ndim, op)[0]


def reduce_dims(dim, ndim, op):
    """The dims a reduction sums over: as normalize_dims, but a 0-d tensor reduces nothing
    (dim 0 or -1 is accepted there and leaves the value as it is, as PyTorch), and an empty
    tuple reduces everything."""
    if isinstance(dim, (tuple, list)) and not dim:
        dim = None  # dim=() reduces every dim, as PyTorch (NumPy's axis=() reduces none)
    dims = normalize_dims(dim, ndim, op)
    return dims if ndim else ()


def _need_floating(x, op):
    if not backend.is_floating(x.dtype):
        raise RuntimeError(f"{op}(): input dtype must be floating point, got {x.dtype}; "
                           f"use .float()")


def _kept_shape(shape, dims):
    return tuple(1 if i in dims else s for i, s in enumerate(shape))


def accurate_sum(xp, a, axis=None, keepdims=False):
    """a.sum(axis) without the drift of NumPy's plain running sum. NumPy adds pairwise only
    along a contiguous last axis (or over a whole contiguous array); over any other axis it
    adds one row at a time in the array's own dtype, so float16 stalls at 2048 (2048 + 1
    rounds back) and float32 over 2·10⁶ rows of 0.1 is 1.5% off. Those add up in a wider
    type, as PyTorch (which sums float16 in float32, float32 pairwise): float16 in float32
    everywhere, float32 in float64 on the CPU (a GPU's tree reductions do not drift)."""
    wide = None
    if a.dtype == backend.float16:
        wide = backend.float32
    elif a.dtype == backend.float32 and backend.is_numpy(xp) and a.ndim:
        dims = range(a.ndim) if axis is None else \
            (axis,) if not isinstance(axis, tuple) else axis
        dims = sorted(d % a.ndim for d in dims)
        pairwise = a.flags.c_contiguous and (dims == [a.ndim - 1] or len(dims) == a.ndim)
        wide = None if pairwise else backend.float64
    out = a.sum(axis=axis, keepdims=keepdims, dtype=wide)
    return out if wide is None else out.astype(a.dtype)


class Sum(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, dims, keepdim):                 # d Σx = 1 for every x: copy g back
        self.in_shape, self.kept = a.shape, _kept_shape(a.shape, dims)
        return accurate_sum(self.xp, a, dims, keepdim)
    def backward(self, g): return expand(g.reshape(self.kept), self.in_shape)
    def backward_arrays(self, g):                        # the same view, without two ops
        return (self.xp.broadcast_to(g.reshape(self.kept), self.in_shape),)


class SumTo(Function):
    """Sum a broadcast result back to `shape`: the gradient of broadcasting."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, shape):
        self.in_shape = a.shape
        lead = a.ndim - len(shape)
        dims = tuple(range(lead)) + tuple(lead + i for i, s in enumerate(shape)
                                          if s == 1 and a.shape[lead + i] != 1)
        return accurate_sum(self.xp, a, dims, True).reshape(shape) if dims else \
            a.reshape(shape)
    def backward(self, g): return expand(g, self.in_shape)


class Expand(Function):
    """Broadcast to a larger shape (a view, no copy); its gradient sums back."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, shape):
        self.in_shape = a.shape
        if shape == a.shape:   # a plain, writable view: broadcast_to's is read-only
            return a.reshape(shape)
        return self.xp.broadcast_to(a, shape)
    def backward(self, g): return sum_to(g, self.in_shape)


class Extremum(Function):
    """max/min. The gradient flows to the chosen element: with a dim, the one at the returned
    index (as PyTorch); over the whole tensor, shared evenly among ties."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, kind, dim, keepdim):
        xp = self.xp
        self.in_shape = a.shape
        if dim is None:
            out = a.max() if kind == "max" else a.min()
            # a NaN is the max (and the min): the gradient then goes to the NaNs (x != x)
            hit = (a == out) | ((a != a) & (out != out))
            self.weight = (hit / hit.sum()).astype(a.dtype)  # bool/int is float64: no upcast
            self.kept = (1,) * a.ndim
            return out
        idx = (a.argmax if kind == "max" else a.argmin)(axis=dim, keepdims=True)
        self.kept = idx.shape
        # 1 at the chosen index along dim (a comparison, not put_along_axis: CuPy 13 lacks it)
        positions = xp.arange(a.shape[dim]).reshape([-1 if d == dim else 1
                                                     for d in range(a.ndim)])
        self.weight = (positions == idx).astype(a.dtype)
        self.indices = idx if keepdim else idx.squeeze(dim)
        out = xp.take_along_axis(a, idx, axis=dim)
        return out if keepdim else out.squeeze(dim)
    def backward(self, g):
        from minigrad.ops.elementwise import where      # elementwise imports this (via matmul)
        spread = expand(g.reshape(self.kept), self.in_shape)
        return where(self.const(self.weight > 0), spread * self.const(self.weight), 0.0)


class Amax(Function):
    """amax/amin over dims. The gradient is shared evenly by the elements equal to the
    result (ties), as PyTorch's amax; a NaN result equals no element, and its slice gets a
    NaN gradient there too (x.max() instead sends it to the NaNs)."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, kind, dims, keepdim):
        xp = self.xp
        out = getattr(a, kind)(axis=dims, keepdims=True)
        hit = a == out
        count = hit.sum(axis=dims, keepdims=True)
        # hit/count, with count 0 (a NaN slice) read as NaN: 0/NaN is NaN without 0/0's warning
        self.weight = (hit / xp.where(count == 0, xp.nan, count)).astype(a.dtype)
        self.in_shape, self.kept = a.shape, out.shape
        return out if keepdim else out.reshape([s for i, s in enumerate(a.shape)
                                                if i not in dims])
    def backward(self, g):
        return expand(g.reshape(self.kept), self.in_shape) * self.const(self.weight)


class Prod(Function):
    """Product along one dim. d(Πx)/dxᵢ is the product of the others: out/xᵢ when no x is
    0 (one read finds out, as PyTorch's); with zeros, out/xᵢ reads 0/0, so the products
    before and after each element are multiplied instead (no division): exact with one zero
    or many, and to second order, as PyTorch's."""
    def forward(self, a, dim, keepdim):
        self.dim, self.keepdim = dim, keepdim
        return a.prod(axis=dim, keepdims=keepdim)
    def backward(self, g):
        x, d = self.inputs[0], self.dim
        y = self.output()
        if not self.keepdim:
            g, y = g.unsqueeze(d), y.unsqueeze(d)
        if not bool((x._data == 0).any()):
            return g * (y / x)
        from minigrad.ops.shape import flip                # shape.py imports this module
        before = _exclusive_cumprod(x, d)
        after = flip(_exclusive_cumprod(flip(x, d), d), d)
        return g * (before * after)

    def backward_arrays(self, g):
        """The same without graph, from counting zeros (as PyTorch's): in a slice without
        one, y/xᵢ; with one, the product of the others at the zero, and elsewhere 0 (NaN
        where another element is inf or NaN: 0·inf); with more, 0. (The products above
        multiply partial products: one may overflow to inf and meet a 0, NaN for 0.)"""
        xp, x, y, d = self.xp, self.inputs[0]._data, self.output()._data, self.dim
        if not self.keepdim:
            g, y = xp.expand_dims(g, d), xp.expand_dims(y, d)
        zero = x == 0
        if not bool(zero.any()):
            return (g * (y / x),)
        zeros = zero.sum(axis=d, keepdims=True)
        acc = running_accumulator(x.dtype, self.device) or x.dtype   # as cumprod's
        x1 = xp.where(zero, xp.ones((), acc), x.astype(acc))
        others = x1.prod(axis=d, keepdims=True)          # the product of the non-zero ones
        bad = ~xp.isfinite(x1)
        other_bad = (bad.sum(axis=d, keepdims=True) - bad) > 0
        one_zero = xp.where(zero, others, xp.where(other_bad, xp.nan, 0))
        with_zeros = xp.where(zeros == 1, one_zero, 0)
        return ((g * xp.where(zeros == 0, y / xp.where(zero, 1, x), with_zeros))
                .astype(x.dtype, copy=False),)


def _exclusive_cumprod(x, d):
    """Along dim d, the product of the elements before each one (1 for the first), by
    doubling (Hillis-Steele): log2(n) rounds, each multiplying by a copy shifted by 1, 2,
    4, ... places. Only products, so zeros stay exact; built of ops, so differentiable."""
    from minigrad.ops.shape import cat
    n, lead = x.shape[d], (slice(None),) * d

    def ones(k):
        shape = x.shape[:d] + (k,) + x.shape[d + 1:]
        return Tensor._make(x.backend.xp.ones(shape, dtype=x.dtype), x.device)
    out = cat([ones(1), x[lead + (slice(0, n - 1),)]], d)
    step = 1
    while step < n:
        out = out * cat([ones(step), out[lead + (slice(0, n - step),)]], d)
        step *= 2
    return out

def sum(x, dim=None, keepdim=False):
    if x.dtype.kind == "u":              # unsigned integers sum as int64, as PyTorch (NumPy:
        x = x.to(dtype=backend.int64)    # uint64); bools and signed ones do already
    return Sum.apply(x, dims=reduce_dims(dim, x.ndim, "sum"), keepdim=keepdim)


def sum_to(x, shape):
    shape = tuple(shape)
    return x if x.shape == shape else SumTo.apply(x, shape=shape)


def expand(x, shape):
    lead = len(shape) - x.ndim                           # new dims, in front
    for i, s in enumerate(shape[:max(lead, 0)]):
        if s == -1:
            raise ValueError(f"expand: -1 (keep the size) in new leading dim {i} of "
                             f"{tuple(shape)}: a tensor of shape {x.shape} has no size there "
                             f"to keep; give that dim's size")
    wanted = tuple(shape)
    shape = tuple(x.shape[i - lead] if s == -1 and lead >= 0 else s
                  for i, s in enumerate(shape))
    try:
        if lead < 0 or backend.broadcast_shapes(x.shape, shape) != shape:
            raise ValueError
    except ValueError:
        raise ValueError(f"expand: cannot expand shape {x.shape} to {wanted} (each dim must "
                         f"match or be 1, and new dims go in front)") from None
    return Expand.apply(x, shape=shape)


def _in_float32(x, reduction, dim, keepdim, *args):
    """A float16 reduction computed in float32 and returned as float16, as PyTorch: a
    float16 sum overflows past 65504 (the mean of 100000 ones would be inf)."""
    return reduction(x.to(dtype=backend.float32), dim, keepdim, *args).to(dtype=x.dtype)


def mean(x, dim=None, keepdim=False):
    _need_floating(x, "mean")
    if x.dtype == backend.float16:
        return _in_float32(x, mean, dim, keepdim)
    dims = reduce_dims(dim, x.ndim, "mean")
    n = 1
    for d in dims:
        n *= x.shape[d]
    return sum(x, dims, keepdim) * (1.0 / n if n else float("nan"))  # empty: nan, as PyTorch


def running_accumulator(dtype, device):
    """The wider dtype a running sum or product (cumsum, cumprod) works in, as PyTorch: a
    float16 running sum stalls at 256 when adding 0.1s, float32 drifts (10⁶ × 0.1 =
    100958), a product may leave the range and come back; float64 on the CPU, where it
    costs little, float32 on a GPU (as PyTorch's CUDA kernels). None: the dtype itself."""
    if dtype == backend.float16:
        return backend.float32
    return backend.float64 if dtype == backend.float32 and backend.get(device).host else None


class CumSum(Function):
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, dim):                           # y_i = Σ_{j<=i} x_j along dim
        self.dim = dim
        acc = running_accumulator(a.dtype, self.device)
        return self.xp.cumsum(a, axis=dim, dtype=acc).astype(a.dtype, copy=False)
    def backward(self, g):                               # dx_j = Σ_{i>=j} g_i: the same
        from minigrad.ops.shape import flip              # sum, run from the other end
        return flip(cumsum(flip(g, self.dim), self.dim), self.dim)


def sum_as(input, dim, keepdim, dtype):
    """Tensor.sum with dtype=: the input converted to it first, as torch's; that dtype wins
    over autocast's float32 list for sum, as there."""
    if dtype is None:
        return sum(input, dim, keepdim)
    if _state.autocast is not None:
        return autocast_off(sum_as, input, dim, keepdim, dtype)
    input = input.to(dtype=dtype)
    return in_dtype(sum(input, dim, keepdim), input.dtype)


def in_dtype(out, dtype):
    """A reduction's result in the dtype= asked for, as PyTorch's: integers and bools sum as
    int64, but sum(dtype=int8) is int8 (wrapped as an int8 sum wraps: a cast of the int64
    sum), and sum(dtype=bool) is a bool (whether any element is nonzero)."""
    return out if out.dtype == dtype else out.to(dtype=dtype)


def cumsum(input, dim, *, dtype=None):
    """Running sums along dim, as torch.cumsum (integers and bools sum as int64; dtype=
    casts the input first)."""
    if dtype is not None:
        if _state.autocast is not None:     # the dtype asked for wins over autocast, as torch's
            return autocast_off(cumsum, input, dim, dtype=dtype)
        input = input.to(dtype=dtype)
    if not backend.is_integer(dim):
        raise TypeError(f"cumsum: dim must be an int, got {dim!r}")
    if dtype is not None and input.dtype == backend.bool_:
        raise TypeError("cumsum: dtype=bool is not supported (as PyTorch); bools sum as "
                        "int64 without a dtype")
    acc = backend.int64 if dtype is None else input.dtype   # dtype=int8: int8 sums
    if input.ndim == 0:
        normalize_dims(dim, 0, "cumsum")
        return input.clone() if backend.is_floating(input.dtype) else Tensor._make(   # a copy
            input._data.astype(acc), input.device)
    d = normalize_dim(dim, input.ndim, "cumsum")
    if not backend.is_floating(input.dtype):
        return Tensor._make(input.backend.xp.cumsum(input._data, axis=d, dtype=acc),
                            input.device)
    return CumSum.apply(input, dim=d)


def logsumexp(input, dim, keepdim=False):
    """log Σ exp(x) over dim, computed as m + log Σ exp(x - m) with m the max (a constant
    here: the result does not depend on it), so large values do not overflow. Its gradient
    is softmax(x). A slice of only -inf gives -inf, one holding +inf gives +inf. Integers
    and bools give float32, as PyTorch."""
    if dim is None or (isinstance(dim, (tuple, list)) and not dim):
        raise TypeError(f"logsumexp: needs the dim(s) to reduce (an int or a non-empty "
                        f"tuple), got {dim!r}")
    if not backend.is_floating(input.dtype):
        input = input.to(dtype=backend.DEFAULT_FLOAT)
    dims = reduce_dims(dim, input.ndim, "logsumexp")
    if input.numel() == 0:                       # log of an empty sum is -inf (no log(0) warning)
        return input.sum(dims, keepdim) - math.inf
    xp = input.backend.xp
    m = input._data.max(axis=dims, keepdims=True)
    m = xp.where(xp.isinf(m), 0, m).astype(input.dtype)     # ±inf slices: no shift (inf - inf)
    shift = Tensor._make(m, input.device)
    out = (input - shift).exp().sum(dims, keepdim=True).log() + shift
    return out if keepdim else out.reshape(tuple(
        n for i, n in enumerate(input.shape) if i not in dims))


def logical(kind, x, dim=None, keepdim=False):
    """any/all: whether any/every element (of each slice along dim) is nonzero; a bool
    tensor outside the graph. dim=() reduces nothing, as PyTorch's any/all."""
    dims = () if isinstance(dim, (tuple, list)) and not dim else reduce_dims(dim, x.ndim, kind)
    xp = x.backend.xp
    return Tensor._make(xp.asarray(getattr(x._data.astype(bool), kind)(
        axis=dims, keepdims=keepdim)), x.device)


# what max(dim)/min(dim) return: a tuple that also names its parts, as PyTorch's
ValuesIndices = namedtuple("ValuesIndices", ("values", "indices"))


def extremum(kind, x, dim=None, keepdim=False):
    if dim is None:
        if x.numel() == 0:
            raise ValueError(f"{kind}: the tensor is empty (shape {x.shape}); give a dim "
                             f"whose size is not 0 to reduce over")
        return Extremum.apply(x, kind=kind, dim=None, keepdim=False)
    if not backend.is_integer(dim):
        raise TypeError(f"{kind}: dim must be an int, got {dim!r}")
    d = normalize_dims(dim, x.ndim, kind)[0]
    if x.ndim == 0:  # dim 0 of a 0-d tensor: the value itself, at index 0 (as PyTorch)
        index = x.backend.xp.zeros((), dtype=backend.int64)
        return ValuesIndices(x.clone(), Tensor._make(index, x.device))     # (its dtype)
    if x.shape[d] == 0:  # other dims may be empty: (0, 3).max(1) gives empty results
        raise ValueError(f"{kind}: dim {dim} of shape {x.shape} has size 0, so there is no "
                         f"{kind} to take along it")
    values = Extremum.apply(x, kind=kind, dim=d, keepdim=keepdim)
    ctx = values._ctx
    indices = ctx.indices if ctx is not None else (
        x._data.argmax if kind == "max" else x._data.argmin)(axis=d, keepdims=keepdim)
    # (a 1-d tensor's index comes back from NumPy as a scalar: a 0-d array here)
    return ValuesIndices(values, Tensor._make(x.backend.xp.asarray(indices), x.device))


def arg(kind, x, dim=None, keepdim=False):
    """argmax/argmin: integer indices, not differentiable."""
    if dim is None:
        if x.numel() == 0:
            raise ValueError(f"{kind}: the tensor is empty (shape {x.shape}); give a dim "
                             f"whose size is not 0 to reduce over")
        i = getattr(x._data, kind)()  # a flat index; keepdim keeps every dim, at size 1
        return Tensor._make(x.backend.xp.asarray(i).reshape((1,) * x.ndim if keepdim else ()),
                            x.device)
    d = normalize_dims(dim, x.ndim, kind)[0]
    if x.ndim == 0:
        return Tensor._make(x.backend.xp.zeros((), dtype=backend.int64), x.device)
    if x.shape[d] == 0:
        raise ValueError(f"{kind}: dim {dim} of shape {x.shape} has size 0, so there is no "
                         f"index to take along it")
    return Tensor._make(x.backend.xp.asarray(getattr(x._data, kind)(axis=d, keepdims=keepdim)),
                        x.device)


def amax(kind, x, dim=None, keepdim=False):
    """amax/amin: the largest/smallest value over dim (an int or a tuple; None or () for
    every dim), as torch.amax: values only, ties share the gradient."""
    dims = reduce_dims(dim, x.ndim, "a" + kind)
    for d in dims if x.numel() == 0 else ():
        if x.shape[d] == 0:
            raise IndexError(f"a{kind}: dim {d} of shape {x.shape} has size 0, so there is no "
                             f"{kind} to take along it; reduce over dims whose size is not 0")
    return Amax.apply(x, kind=kind, dims=dims, keepdim=keepdim)


def prod(input, dim=None, keepdim=False, *, dtype=None):
    """The product of all elements, or along one dim (an int, as torch.prod: keepdim only
    with a dim). Integers and bools multiply as int64 (as PyTorch); the empty product is 1.
    dtype=: the input converted to it first, and the result in it (as torch.prod)."""
    if dtype is not None:
        if _state.autocast is not None:     # the dtype asked for wins over autocast, as torch's
            return autocast_off(prod, input, dim, keepdim, dtype=dtype)
        input = input.to(dtype=dtype)
    if dim is None and keepdim:
        raise TypeError("prod: keepdim=True needs a dim (as torch.prod: prod() or "
                        "prod(dim, keepdim))")
    if dim is not None and not backend.is_integer(dim):
        raise TypeError(f"prod: dim must be an int (one dim, as torch.prod), got {dim!r}")
    d = 0 if dim is None else normalize_dims(dim, input.ndim, "prod")[0]
    if dim is None or input.ndim == 0:      # everything: the product of x flattened
        input, keepdim = input.reshape(-1), False
    if not backend.is_floating(input.dtype):
        return Tensor._make(input.backend.xp.asarray(input._data.prod(
            axis=d, dtype=input.dtype if dtype is not None else backend.int64,
            keepdims=keepdim)), input.device)
    return Prod.apply(input, dim=d, keepdim=keepdim)
