"""More of PyTorch's statistics: quantile and nanquantile, nanmedian, mode, cov and
corrcoef, dist, and histc. Values picked by sorted order (quantile, nanmedian, mode) are
read with gather, so their gradient goes back to where they came from; cov, corrcoef and
dist are compositions of differentiable ops; histc counts, outside the graph."""
import math
import warnings

from minigrad import backend
from minigrad.dtypes import get_default_dtype
from minigrad.tensor import Tensor
from minigrad.ops.elementwise import where
from minigrad.ops.index import gather
from minigrad.ops.order import Median, _stable_argsort
from minigrad.ops.reduce import normalize_dim, ValuesIndices

_INTERPOLATIONS = ("linear", "lower", "higher", "midpoint", "nearest")


def quantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """The q-th quantiles of x along dim (None: all elements), as torch.quantile: q a number
    or a 1-D tensor (its values then make a new first dim) in [0, 1]; between two sorted
    values by `interpolation`. A slice holding NaN gives NaN."""
    return _quantile("quantile", input, q, dim, keepdim, interpolation, skip_nan=False)


def nanquantile(input, q, dim=None, keepdim=False, *, interpolation="linear"):
    """quantile with NaNs left out, as torch.nanquantile (a slice of only NaNs gives NaN)."""
    return _quantile("nanquantile", input, q, dim, keepdim, interpolation, skip_nan=True)


def _quantile(op, x, q, dim, keepdim, interpolation, skip_nan):
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(x).__name__}")
    if x.dtype not in (backend.float32, backend.float64):
        raise TypeError(f"{op}: input must be float32 or float64 (as PyTorch), got {x.dtype}")
    if interpolation not in _INTERPOLATIONS:
        raise ValueError(f"{op}: interpolation must be one of {', '.join(_INTERPOLATIONS)}, "
                         f"got {interpolation!r}")
    xp = x.backend.xp
    one_q = not isinstance(q, Tensor)
    if one_q:
        if not backend.is_scalar(q) or isinstance(q, bool):
            raise TypeError(f"{op}: q must be a number or a tensor, got {type(q).__name__}")
        qs = xp.asarray([q], dtype=x.dtype)
    else:
        if q.ndim > 1:
            raise ValueError(f"{op}: q must be a number or a 0-d or 1-D tensor, got shape "
                             f"{q.shape}")
        if q.dtype != x.dtype:
            raise TypeError(f"{op}: q has dtype {q.dtype}, the input {x.dtype}; they must "
                            f"match (as PyTorch)")
        if q.device != x.device:
            raise RuntimeError(f"{op}: q on {q.device}, input on {x.device}")
        one_q, qs = q.ndim == 0, q._data.reshape(-1)
    if qs.size and not bool(((qs >= 0) & (qs <= 1)).all()):
        raise ValueError(f"{op}: q values must lie in [0, 1], got {backend.to_host(qs)}")
    if x.numel() == 0:
        raise ValueError(f"{op}: the input is empty (shape {x.shape}); there is no quantile")
    if dim is None:
        rows, d = x.reshape(-1), None
    else:
        d = normalize_dim(dim, max(x.ndim, 1), op)
        rows = x.reshape(1) if x.ndim == 0 else x.movedim(d, -1)
    s = rows.sort(-1)[0]                                 # NaN last; (..., n)
    n = s.shape[-1]
    nan = xp.isnan(s._data).sum(axis=-1, keepdims=True)
    valid = n - nan if skip_nan else xp.full(nan.shape, n)
    ranks = qs * (valid - 1).astype(x.dtype)            # (..., number of qs)
    # NaN where the slice holds one (quantile) or holds nothing else (nanquantile): rank n-1
    ranks = xp.where((valid == 0) if skip_nan else (nan > 0), n - 1, ranks)
    if interpolation in ("lower", "higher", "nearest"):
        pick = {"lower": xp.floor, "higher": xp.ceil, "nearest": xp.rint}[interpolation]
        out = gather(s, -1, _positions(xp, pick(ranks), s))
    else:
        lo, hi = xp.floor(ranks), xp.ceil(ranks)
        w = ranks - lo if interpolation == "linear" else xp.full(ranks.shape, 0.5, x.dtype)
        a, b = gather(s, -1, _positions(xp, lo, s)), gather(s, -1, _positions(xp, hi, s))
        # PyTorch's lerp: exact at both ends (b - (b - a)(1 - w) for w >= 1/2)
        w = Tensor._make(w.astype(x.dtype), x.device)
        out = where(w < 0.5, a + w * (b - a), b - (b - a) * (1 - w))
    out = out.movedim(-1, 0)                             # the qs first
    if keepdim:
        # (a 0-d x keeps no dim: its dim 0 is the 1 it was reshaped to)
        kept = (1,) * x.ndim if d is None or x.ndim == 0 else \
            x.shape[:d] + (1,) + x.shape[d + 1:]
        out = out.reshape(out.shape[:1] + kept)
    return out[0] if one_q else out


def _positions(xp, ranks, s):
    """Integer positions from (whole) ranks, as an index for gather along s's last dim."""
    idx = ranks.astype(backend.int64)
    return Tensor._make(xp.ascontiguousarray(xp.broadcast_to(idx, s.shape[:-1] +
                                                             idx.shape[-1:])), s.device)


def nanmedian(input, dim=None, keepdim=False):
    """The lower median of the values that are not NaN, as torch.nanmedian: without dim a
    0-d tensor (the gradient shared by the elements equal to it, as median's), with dim a
    (values, indices) named tuple. A slice of only NaNs gives NaN (its index is one of the
    NaNs: PyTorch's choice among them differs)."""
    xp = input.backend.xp
    if dim is None:
        if keepdim:
            raise TypeError("nanmedian: keepdim=True needs a dim (as torch.nanmedian)")
        if input.numel() == 0:
            from minigrad.ops.order import median
            return median(input)                  # NaN for floats, an error for integers
        index = _nanmedian_index(xp, input._data.reshape(-1), 0)
        return Median.apply(input, index=index, dim=None, keepdim=False)
    if not backend.is_integer(dim):
        raise TypeError(f"nanmedian: dim must be an int, got {dim!r}")
    d = normalize_dim(dim, max(input.ndim, 1), "nanmedian")
    if input.ndim == 0:
        return ValuesIndices(input.clone(), Tensor._make(xp.zeros((), backend.int64), input.device))
    if input.shape[d] == 0:
        raise ValueError(f"nanmedian: dim {dim} of shape {input.shape} has size 0, so there is "
                         f"no median to take along it")
    index = _nanmedian_index(xp, input._data, d)
    values = Median.apply(input, index=index, dim=d, keepdim=keepdim)
    return ValuesIndices(values, Tensor._make(index if keepdim else index.squeeze(d),
                                              input.device))


def _nanmedian_index(xp, a, d):
    """Where the lower median of each slice's non-NaN values lies (keepdim-shaped): the
    ((k - 1) // 2)-th of the stable sort, k the slice's count of non-NaN values."""
    order = _stable_argsort(xp, a, d, descending=False)          # NaNs last
    k = a.shape[d] - (xp.isnan(a).sum(axis=d, keepdims=True) if a.dtype.kind == "f" else 0)
    pos = xp.maximum((k - 1) // 2, 0) if a.dtype.kind == "f" else \
        xp.full(a.shape[:d] + (1,) + a.shape[d + 1:], (a.shape[d] - 1) // 2)
    return xp.take_along_axis(order, xp.asarray(pos).astype(backend.int64), axis=d) \
        .astype(backend.int64, copy=False)


def mode(input, dim=-1, keepdim=False):
    """The most frequent value along dim and where it occurs, as torch.mode: a (values,
    indices) named tuple; of equally frequent values the smallest, at its last occurrence.
    The gradient goes to that element."""
    xp = input.backend.xp
    d = normalize_dim(dim, max(input.ndim, 1), "mode")
    if input.ndim == 0:
        return ValuesIndices(input.clone(), Tensor._make(xp.zeros((), backend.int64), input.device))
    n = input.shape[d]
    if n == 0:
        raise ValueError(f"mode: dim {dim} of shape {input.shape} has size 0, so there is no "
                         f"mode to take along it")
    rows = xp.moveaxis(input._data, d, -1)
    order = _stable_argsort(xp, rows, -1, descending=False)     # equal values in order
    s = xp.take_along_axis(rows, order, axis=-1)
    change = s[..., 1:] != s[..., :-1]                          # (NaN: never equal)
    edge = xp.ones(s.shape[:-1] + (1,), backend.bool_)
    starts, ends = xp.concatenate([edge, change], -1), xp.concatenate([change, edge], -1)
    # each run's key, row·n + its number in the row: one sorted vector over all rows, so
    # one searchsorted counts every run
    run = xp.cumsum(starts, axis=-1) - 1
    keys = (run + n * xp.arange(run.size // n).reshape(run.shape[:-1] + (1,))).reshape(-1)
    count = (xp.searchsorted(keys, keys, side="right") -
             xp.searchsorted(keys, keys, side="left")).reshape(s.shape)
    best = xp.argmax(xp.where(ends, count, -1), axis=-1)[..., None]   # first: smallest
    index = xp.moveaxis(xp.take_along_axis(order, best, axis=-1), -1, d)
    index = Tensor._make(xp.ascontiguousarray(index).astype(backend.int64), input.device)
    values = gather(input, d, index)
    if not keepdim:
        values, index = values.squeeze(d), index.squeeze(d)
    return ValuesIndices(values, index)


def cov(input, *, correction=1, fweights=None, aweights=None):
    """The covariance matrix of the variables in x's rows (its columns the observations),
    as torch.cov: a 1-D x is one variable (a 0-d result). fweights (integers) repeat
    observations, aweights (floats) weigh them; correction=1 is the unbiased estimate."""
    op = "cov"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim > 2:
        raise ValueError(f"{op}: expected input of two or fewer dims (variables, "
                         f"observations), got shape {input.shape}")
    if not backend.is_floating(input.dtype):
        input = input.to(dtype=get_default_dtype())
    input = input.reshape(1, -1) if input.ndim < 2 else input
    n = input.shape[1]
    w, weights = None, []
    for name, wt, want in (("fweights", fweights, "iu"), ("aweights", aweights, "f")):
        if wt is None:
            continue
        if not isinstance(wt, Tensor) or wt.ndim > 1 or wt.numel() != n:
            raise ValueError(f"{op}: {name} must be a 1-D tensor of one weight per "
                             f"observation ({n}), got {getattr(wt, 'shape', type(wt).__name__)}")
        if wt.dtype.kind not in want:
            raise TypeError(f"{op}: {name} must have "
                            f"{'an integer' if want == 'iu' else 'a floating-point'} dtype, "
                            f"got {wt.dtype}")
        if n and bool((wt._data < 0).any()):
            raise ValueError(f"{op}: {name} cannot be negative")
        if name == "aweights" and wt.dtype != input.dtype:    # the result in their common dtype
            input = input.to(dtype=backend.promote_float(input.dtype, wt.dtype))
        weights.append(wt.reshape(-1))
    for wt in weights:
        w = wt.to(dtype=input.dtype) if w is None else w * wt.to(dtype=input.dtype)
    if w is None:
        avg, norm = input.mean(1, keepdim=True), n - correction
    else:
        w_sum = w.sum()
        if n and float(w_sum) == 0:                      # no observation left to average
            raise RuntimeError(f"{op}: the weights sum to zero, so the observations cannot "
                               f"be averaged (as torch)")
        avg = (input * w).sum(1, keepdim=True) / w_sum
        if correction == 0:
            norm = w_sum
        elif aweights is None:
            norm = w_sum - correction
        else:
            norm = w_sum - correction * (w * aweights.reshape(-1).to(dtype=input.dtype)).sum() \
                / w_sum
    if float(norm) <= 0:
        warnings.warn(f"{op}: the degrees of freedom are <= 0 (correction={correction} is "
                      f"not below the number of observations): the result is inf or NaN",
                      RuntimeWarning, stacklevel=2)
        norm = norm * 0 if isinstance(norm, Tensor) else 0
    centered = input - avg
    c = centered @ (centered if w is None else centered * w).mT
    return (c / norm).squeeze()


def corrcoef(input):
    """Pearson's correlation coefficients of the variables in x's rows, as torch.corrcoef:
    cov(x) divided by each pair's standard deviations, clipped to [-1, 1]."""
    c = cov(input)
    if c.ndim == 0:
        return c / c
    std = c.diagonal().sqrt()
    c = c / std.unsqueeze(1)
    c = c / std.unsqueeze(0)
    return c.clip(-1, 1)


def dist(input, other, p=2):
    """The p-norm of x - other (broadcast), as torch.dist."""
    from minigrad.ops.elementwise import _pair
    from minigrad.ops.norms import norm
    if not backend.is_scalar(p) or isinstance(p, bool):
        raise TypeError(f"dist: p must be a number, got {p!r}")
    input, other = _pair(input, other)
    return norm(input - other, p)


def histc(input, bins=100, min=0, max=0):
    """A histogram of x's values in `bins` equal bins over [min, max], as torch.histc
    (min == max: the data's range; the same again: ±1 around it); values outside it, and
    NaN, are not counted. Float tensors; the counts in x's dtype, with no gradient."""
    lo, hi = min, max                                   # (PyTorch's names shadow builtins)
    if not isinstance(input, Tensor) or not backend.is_floating(input.dtype):
        raise TypeError(f"histc: input must be a floating-point tensor, got "
                        f"{getattr(input, 'dtype', type(input).__name__)}")
    if not backend.is_integer(bins) or isinstance(bins, bool) or bins <= 0:
        raise ValueError(f"histc: bins must be a positive int, got {bins!r}")
    xp, data = input.backend.xp, input._data.reshape(-1)
    lo, hi = float(lo), float(hi)
    if lo > hi:
        raise ValueError(f"histc: max ({hi}) must be larger than min ({lo})")
    if lo == hi and data.size:
        lo, hi = float(data.min()), float(data.max())
    if lo == hi:
        lo, hi = lo - 1, hi + 1
    if not (math.isfinite(lo) and math.isfinite(hi)):
        raise ValueError(f"histc: the range [{lo}, {hi}] is not finite; give min and max")
    # in x's dtype, the edges too, as torch: (x - min)·bins/(max - min) in float32 puts a
    # value on a bin edge where torch does (float64 arithmetic put 0.7 of [0.1, 1] in 3
    # bins, 0.69999999 in float32, in the middle bin; torch in the last)
    lo, hi = input.dtype.type(lo), input.dtype.type(hi)
    inside = data[(data >= lo) & (data <= hi)]
    pos = xp.floor((inside - lo) * input.dtype.type(bins) / (hi - lo)).astype(backend.int64)
    pos = xp.minimum(pos, bins - 1)                     # max itself: the last bin
    counts = xp.zeros(bins, input.dtype)
    backend.get(input.device).index_add(counts, pos, xp.ones(pos.shape, input.dtype))
    return Tensor._make(counts, input.device)
