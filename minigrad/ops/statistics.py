"""Statistics, PyTorch's: var and std (one fused op), var_mean and std_mean (two results of
one call), nansum and nanmean (NaN counted as absent), count_nonzero, aminmax (both
extremes), and bincount (a histogram of integers, optionally weighted). Built on reduce.py's
ops; nansum is an op of its own so that its gradient is PyTorch's, g·[x is not NaN]."""
import math
import warnings
from collections import namedtuple

from minigrad import backend
from minigrad.args import int_arg
from minigrad.autograd import Function
from minigrad.grad_mode import _state, autocast_off
from minigrad.tensor import Tensor
from minigrad.ops.index import IndexAdd
from minigrad.ops.reduce import (reduce_dims, normalize_dim, accurate_sum, expand, amax,
                                 _kept_shape, mean, sum as _sum, _need_floating, _in_float32,
                                 in_dtype)



class Var(Function):
    """var (std with root=True) over `dims` as one op: v = Σ(x - μ)²·scale, scale =
    1/(n - correction); dv/dx = 2(x - μ)·scale, dσ/dx = (x - μ)·scale/σ (0 where σ = 0, as
    PyTorch). The mean and Σ(x - μ)² are taken in `acc` (float64 for float32 on the CPU, as
    PyTorch accumulates there: (x - μ)² leaves float32's range from |x| ≈ 2e19, and a mean
    of 1e4 with σ = 1e-2 keeps its digits); the result and the gradient are x's dtype."""
    fresh_grads = True                                   # backward_arrays' gx is new
    def forward(self, a, dims, keepdim, correction, acc, root):
        xp, n = self.xp, math.prod(a.shape[d] for d in dims)
        self.dims, self.kept, self.root = dims, _kept_shape(a.shape, dims), root
        # shifted by each slice's first element, so that a constant slice has x - μ exactly
        # 0, hence σ = 0 and a zero gradient (Σx/n rounds: x - μ would be ±1e-17, and so
        # would σ, with an O(1) gradient (x - μ)/σ pointing nowhere in particular)
        first = a[tuple(slice(0, 1) if i in dims else slice(None) for i in range(a.ndim))] \
            if n else xp.zeros(self.kept, a.dtype)
        d = xp.subtract(a, first, dtype=acc)
        shift = d.sum(axis=dims, keepdims=True) * (1.0 / n if n else math.nan)
        if backend.is_numpy(xp) and not xp.isfinite(shift).all():
            # x - first overflowed (|x| near the dtype's largest): unshifted, as before,
            # Σ(x - μ)² is then inf, as PyTorch's, not inf - inf. (On a GPU asking would
            # wait for the device on every call; there such a var stays NaN.)
            first = xp.zeros(self.kept, acc)
            d = xp.subtract(a, first, dtype=acc)
            shift = d.sum(axis=dims, keepdims=True) * (1.0 / n if n else math.nan)
        self.mean = first + shift
        d -= shift
        squares = xp.asarray(xp.vdot(d, d)).reshape(self.kept) if len(dims) == a.ndim else \
            (d * d).sum(axis=dims, keepdims=True)
        # no degrees of freedom left (var warns): Σ/0, as PyTorch: inf, or NaN where Σ = 0
        self.scale = 1.0 / (n - correction) if n > correction else \
            xp.where(squares == 0, math.nan, math.inf)
        out = squares * self.scale
        if root:
            out = self.sigma = xp.sqrt(out)
        out = out.astype(a.dtype)
        return out if keepdim else out.reshape(tuple(s for i, s in enumerate(a.shape)
                                                     if i not in dims))

    def _coefficient(self, g):
        """What multiplies x - μ in the gradient, kept-shaped, on arrays in `acc`."""
        coef = g.reshape(self.kept) * self.scale
        if not self.root:
            return 2 * coef
        zero = self.sigma == 0                           # a constant slice: 0, not 0/0
        return self.xp.where(zero, 0.0, coef / self.xp.where(zero, 1.0, self.sigma))

    def backward_arrays(self, g):
        a = self.inputs[0]._data
        # x - μ in x's dtype, from μ's two parts (float32 μ, and the rest), so it keeps
        # the digits that float32's μ alone would lose
        near = self.mean.astype(a.dtype)
        gx = a - near
        if near.dtype != self.mean.dtype:
            gx -= (self.mean - near).astype(a.dtype)
        gx *= self._coefficient(g).astype(a.dtype)
        return (gx,)

    def backward(self, g):                               # the same with Tensor ops
        from minigrad.ops.elementwise import where     # (imported after reduce)
        x = self.inputs[0]
        g = g.reshape(self.kept)
        if self.root:                                    # dσ = dv/(2σ), 0 where σ = 0
            sigma = self.output().reshape(self.kept)
            zero = self.const(self.sigma == 0)
            g = where(zero, 0.0, g / (2 * where(zero, 1.0, sigma)))
        scale = self.scale if isinstance(self.scale, float) else \
            self.const(self.scale.astype(x.dtype))
        # x - μ: the value from forward's accurate μ (as backward_arrays), the gradient
        # (1 - 1/n) from a mean in the graph (m - m.detach() is 0 with dm/dx = 1/n)
        near = self.mean.astype(x.dtype)
        m = mean(x, self.dims, True)
        centered = x - self.const(near) - self.const((self.mean - near).astype(x.dtype)) \
            - (m - m.detach())
        return centered * (g * scale * 2)


def var(x, dim=None, keepdim=False, correction=1):
    """Σ(x - mean)² / (n - correction); correction=1 is the unbiased estimate (PyTorch's
    default, also for None), correction=0 the biased one that layer norm uses."""
    return _var(x, dim, keepdim, correction, root=False)


def std(x, dim=None, keepdim=False, correction=1):
    """√var; for float16 the root is taken in float32 too (σ² may pass 65504 where σ fits)."""
    return _var(x, dim, keepdim, correction, root=True)


def _var(x, dim, keepdim, correction, root):
    correction = 1 if correction is None else correction
    _need_floating(x, "var")
    if x.dtype == backend.float16:
        return _in_float32(x, std if root else var, dim, keepdim, correction)
    dims = reduce_dims(dim, x.ndim, "var")
    n = math.prod(x.shape[d] for d in dims)
    if n <= correction:
        warnings.warn(f"var: correction={correction} leaves no degrees of freedom among {n} "
                      f"element(s) (n - correction <= 0): the result is inf, or NaN where "
                      f"Σ = 0", RuntimeWarning, stacklevel=3)
    acc = backend.float64 if x.dtype == backend.float32 and x.backend.host else x.dtype
    return Var.apply(x, dims=dims, keepdim=keepdim, correction=correction, acc=acc,
                     root=root)

class NanSum(Function):
    """Σ x over dims with NaNs left out (as zeros). d/dx = 1 where x is not NaN, 0 where it
    is, as a product (PyTorch's g·[x not NaN]: an infinite g, as nanmean's over a slice of
    only NaNs, gives NaN there)."""
    needs_values = False                                 # see Function.needs_values
    def forward(self, a, dims, keepdim):
        xp = self.xp
        nan = xp.isnan(a)
        self.kept, self.keep = _kept_shape(a.shape, dims), ~nan
        return accurate_sum(xp, xp.where(nan, 0, a), dims, keepdim)
    def backward(self, g):
        spread = expand(g.reshape(self.kept), self.keep.shape)
        return spread * self.const(self.keep.astype(g.dtype))


def nansum(input, dim=None, keepdim=False, *, dtype=None):
    """The sum over dim (None: all; an int or a tuple) treating NaN as 0, as torch.nansum;
    integers sum as int64 (they hold no NaN); dtype= converts x first."""
    if dtype is not None:
        if _state.autocast is not None:     # the dtype asked for wins over autocast, as torch's
            return autocast_off(nansum, input, dim, keepdim, dtype=dtype)
        input = input.to(dtype=dtype)
    dims = reduce_dims(dim, input.ndim, "nansum")
    if not backend.is_floating(input.dtype):   # (dtype=int8: an int8 sum, as torch's)
        return _sum(input, dims, keepdim) if dtype is None else \
            in_dtype(_sum(input, dims, keepdim), input.dtype)
    return NanSum.apply(input, dims=dims, keepdim=keepdim)


def nanmean(input, dim=None, keepdim=False, *, dtype=None):
    """The mean of the elements that are not NaN, as torch.nanmean: a slice of only NaNs (or
    none) gives NaN. Floating tensors only, as PyTorch."""
    if dtype is not None:
        input = input.to(dtype=dtype)
    if not backend.is_floating(input.dtype):
        raise TypeError(f"nanmean: expected a floating-point tensor, got {input.dtype} (as "
                        f"PyTorch); convert with .float(), or pass dtype=mg.float32")
    dims = reduce_dims(dim, input.ndim, "nanmean")
    xp = input.backend.xp
    count = (~xp.isnan(input._data)).sum(axis=dims, keepdims=keepdim).astype(input.dtype)
    return nansum(input, dims, keepdim) / Tensor._make(count, input.device)


def count_nonzero(input, dim=None):
    """How many elements (of each slice over dim: an int or a tuple; None for all) are not
    0, as an int64 tensor, as torch.count_nonzero (NaN counts: it is not 0)."""
    dims = reduce_dims(dim, input.ndim, "count_nonzero")
    xp = input.backend.xp
    return Tensor._make(xp.asarray((input._data != 0).sum(axis=dims, dtype=backend.int64)),
                        input.device)


def _moments(op, x, dim, unbiased, correction):
    """var_mean/std_mean's arguments as PyTorch reads them: dim may be the `unbiased` bool
    itself (var_mean(x, False)); unbiased, if given, is correction 1 or 0."""
    if isinstance(dim, bool):
        dim, unbiased = None, dim
    if unbiased is not None:
        if correction is not None:
            raise TypeError(f"{op}: give unbiased or correction, not both")
        correction = 1 if unbiased else 0
    if not backend.is_floating(x.dtype):
        raise TypeError(f"{op}: expected a floating-point tensor, got {x.dtype} (as "
                        f"PyTorch); convert with .float() first")
    return dim, 1 if correction is None else correction


def var_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(x.var(dim, correction=...), x.mean(dim)) at once, as torch.var_mean (a tuple)."""
    dim, correction = _moments("var_mean", input, dim, unbiased, correction)
    return var(input, dim, keepdim, correction), mean(input, dim, keepdim)


def std_mean(input, dim=None, unbiased=None, keepdim=False, *, correction=None):
    """(x.std(dim, correction=...), x.mean(dim)) at once, as torch.std_mean (a tuple)."""
    dim, correction = _moments("std_mean", input, dim, unbiased, correction)
    return std(input, dim, keepdim, correction), mean(input, dim, keepdim)


# what aminmax returns: a tuple that also names its parts, as PyTorch's
MinMax = namedtuple("MinMax", ("min", "max"))


def aminmax(input, *, dim=None, keepdim=False):
    """(amin, amax) over dim (one int, or None for every element), as torch.aminmax: a
    (min, max) named tuple; ties share the gradient evenly, as amin's and amax's, and a
    NaN makes both NaN (the slice's gradient NaN too, as PyTorch's)."""
    if dim is not None:
        d = normalize_dim(dim, max(input.ndim, 1), "aminmax")
        empty = input.ndim and input.shape[d] == 0
    else:
        empty = input.numel() == 0
    if empty:
        raise ValueError(f"aminmax: cannot take the extremes over an empty dim (shape "
                         f"{input.shape}, dim={dim}): the operation has no identity; reduce "
                         f"over dims whose size is not 0")
    return MinMax(amax("min", input, dim, keepdim), amax("max", input, dim, keepdim))


def bincount(input, weights=None, minlength=0):
    """How often each value 0, 1, ... occurs in the 1-D non-negative integer tensor `input`
    (length max(input) + 1, at least minlength), as torch.bincount; with `weights` (one per
    element) their sums instead: float32 weights give float32, any others float64, as
    PyTorch. Unlike PyTorch's, the weighted counts have a gradient: weights' is g[input]."""
    if not isinstance(input, Tensor):
        raise TypeError(f"bincount: input must be a Tensor, got {type(input).__name__}")
    minlength = int_arg("bincount", "minlength", minlength, low=0)
    if input.ndim != 1 or input.dtype.kind not in "iu":
        raise ValueError(f"bincount: input must be a 1-D tensor of non-negative integers, "
                         f"got shape {input.shape} of {input.dtype}")
    idx = input._data
    if idx.size and int(idx.min()) < 0:
        raise ValueError(f"bincount: input must hold non-negative integers, got "
                         f"{int(idx.min())}")
    n = max(int(idx.max()) + 1 if idx.size else 0, minlength)
    if weights is None:
        ones = input.backend.xp.ones(idx.shape, backend.int64)
        return IndexAdd.apply(Tensor._make(ones, input.device), index=idx, shape=(n,))
    if not isinstance(weights, Tensor):
        raise TypeError(f"bincount: weights must be a Tensor (or None), got "
                        f"{type(weights).__name__}")
    w = weights
    if w.shape != input.shape:
        raise ValueError(f"bincount: weights must be 1-D, one per element of input (shape "
                         f"{input.shape}), got shape {w.shape}")
    if w.device != input.device:
        raise RuntimeError(f"bincount: weights on {w.device}, input on {input.device}")
    if w.dtype != backend.float32:
        w = w.to(dtype=backend.float64)
    return IndexAdd.apply(w, index=idx, shape=(n,))
