"""Vector norms and what is built on them: Tensor.norm (torch.norm's vector norms: p = 2 or
'fro', 1, ±inf, 0, or any other p), F.normalize, F.cosine_similarity, F.pairwise_distance,
F.rms_norm, mg.pdist (the distances between the rows of one matrix), and mg.cdist, the
p-norm distances between two sets of rows. All but cdist are compositions of differentiable
ops, so gradients of gradients come for free; the care is in PyTorch's values at the kinks:
where a norm is 0 its gradient is 0 (the root's ∞ times 0 would be NaN), and so is the
gradient of |x|ᵖ at x = 0 for p < 1. cdist is one op (`Cdist`) that never holds all P·R·M
differences at once."""
import math

from minigrad import backend
from minigrad.args import check_broadcast, number_arg, optional_tensor_args, tensor_args
from minigrad.autograd import Function
from minigrad.grad_mode import _state, autocast_float32, autocast_off
from minigrad.tensor import Tensor
from minigrad.ops.elementwise import where
from minigrad.ops.math import nonzero_indicator, sign
from minigrad.ops.reduce import reduce_dims


def _pow_where_not(t, e, zero, fill=0.0):
    """tᵉ, but `fill` with a zero gradient where `zero` holds. The inner where keeps the
    power's derivative there finite: the outer one sends it a 0, and 0·∞ would be NaN."""
    return where(zero, fill, where(zero, 1.0, t) ** e)


def _order(p, dim):
    """p as a float; 'fro' and None are 2 (torch.norm's Frobenius norm over at most 2 dims
    is the 2-norm of those elements; None is the 2-norm over any dims)."""
    if p is None:
        return 2.0
    if isinstance(p, str) and p == "fro":
        if isinstance(dim, (tuple, list)) and len(dim) > 2:
            raise ValueError(f"norm: p='fro' takes at most 2 dims (a matrix norm), got "
                             f"dim={tuple(dim)}; use p=2 for the 2-norm over more dims")
        return 2.0
    if isinstance(p, str) or not backend.is_scalar(p) or isinstance(p, bool) or p != p:
        raise ValueError(f"norm: p={p!r} is not supported; valid: 'fro', 'nuc', 2, 1, inf, "
                         f"-inf, 0 or any other number")
    return float(p)


def norm(input, p="fro", dim=None, keepdim=False, *, dtype=None):
    """The vector p-norm (Σ|x|ᵖ)^(1/p) over dim (None: every element; an int or a tuple),
    as torch.norm: p=inf is max|x|, -inf min|x|, 0 the number of nonzeros (gradient 0).
    Gradients as PyTorch's, 0 where the norm is 0; ties of ±inf share theirs evenly.
    dtype=: a floating input converted to it first (as torch.norm, not to a narrower one).
    p='nuc' is the matrix norm (the sum of the singular values) of a 2-D tensor, or of the
    matrices in a pair of dims: linalg.matrix_norm's."""
    if isinstance(p, str) and p == "nuc":
        return _nuclear(input, dim, keepdim, dtype)
    if dtype is not None:
        if _state.autocast is not None:     # the dtype asked for wins over autocast, as torch's
            return autocast_off(norm, input, p, dim, keepdim, dtype=dtype)
        dtype = backend.dtype(dtype)
        if not backend.is_floating(dtype) or (backend.is_floating(input.dtype)
                                              and dtype.itemsize < input.dtype.itemsize):
            raise TypeError(f"norm: dtype must be a floating dtype at least as wide as the "
                            f"input's {input.dtype}, got {dtype}")
        if backend.is_floating(input.dtype):   # (an integer input stays an error, as torch)
            input = input.to(dtype=dtype)
    return p_norm(autocast_float32(input), _order(p, dim), dim, keepdim, "norm")


def _nuclear(input, dim, keepdim, dtype):
    """torch.norm's p='nuc': over both dims of a matrix (dim=None), or the pair `dim` names."""
    from minigrad.ops.linalg_more import matrix_norm     # (it imports this module)
    if dim is None and getattr(input, "ndim", 2) > 2:
        raise ValueError(f"norm: p='nuc' without dim takes a 2-D tensor (a matrix), got shape "
                         f"{input.shape}; give dim=(d0, d1) for a batch of matrices")
    return matrix_norm(input, "nuc", (-2, -1) if dim is None else dim, keepdim, dtype=dtype)


def p_norm(x, p, dim, keepdim, op):
    """norm's p-norm for p a float already (torch.linalg.vector_norm's too); errors name
    `op`."""
    if not backend.is_floating(x.dtype):
        raise TypeError(f"{op}: needs a floating-point tensor, got {x.dtype}; convert with "
                        f".float() first")
    if x.dtype == backend.float16:      # float16 squares overflow past 256: float32 inside
        return p_norm(x.to(dtype=backend.float32), p, dim, keepdim, op).to(dtype=x.dtype)
    dims = reduce_dims(dim, x.ndim, op)
    if (p < 0 or p == math.inf) and any(x.shape[d] == 0 for d in dims):
        raise ValueError(f"{op}: cannot compute the {p} norm over an empty dim (reducing dims "
                         f"{dims} of shape {x.shape}): it has no value for no elements; "
                         f"reduce over dims whose size is not 0")
    if p == 2:
        s = (x * x).sum(dims, keepdim)
        zero = s == 0
        return where(zero, 0.0, where(zero, 1.0, s).sqrt())    # as _pow_where_not(s, 0.5)
    if p == 1:
        return x.abs().sum(dims, keepdim)
    if p == 0:
        return nonzero_indicator(x).sum(dims, keepdim)
    if p == math.inf or p == -math.inf:
        return x.abs().amax(dims, keepdim) if p > 0 else x.abs().amin(dims, keepdim)
    a = x.abs()
    # |0|ᵖ is 0 for p > 0 (its gradient 0, not p·0^(p-1) = ∞ for p < 1), ∞ for p < 0: then
    # the sum is ∞, the norm ∞^(1/p) = 0, and every gradient 0, as PyTorch's
    s = _pow_where_not(a, p, a == 0, 0.0 if p > 0 else math.inf).sum(dims, keepdim)
    return _pow_where_not(s, 1.0 / p, s == 0) if p > 0 else s ** (1.0 / p)


def normalize(input, p=2.0, dim=1, eps=1e-12):
    """input / max(‖input‖ₚ along dim, eps), as torch.nn.functional.normalize: unit vectors
    along dim, and no division by 0 (the gradient through the clamp is 0 below eps)."""
    tensor_args("normalize", input=input)
    eps = number_arg("normalize", "eps", eps)
    return input / norm(input, p, dim, keepdim=True).clip(min=eps)


def _norm_at_least(x, dim, eps):
    """‖x‖ along dim, raised to eps where smaller. PyTorch clamps in place without recording
    it, so the gradient stays the norm's own even where eps replaced the value; so here:
    n - n.detach() is exactly 0 there, and carries the norm's gradient."""
    n = norm(x, 2, dim, keepdim=True)
    return where(n < eps, (n - n.detach()) + eps, n)


def cosine_similarity(x1, x2, dim=1, eps=1e-8):
    """Σ (x1/‖x1‖)·(x2/‖x2‖) along dim, each norm at least eps, after broadcasting x1 and
    x2: PyTorch's current formula, which normalises first, so the result stays within [-1, 1]
    and large norms do not overflow. An integer input takes the other's float dtype."""
    tensor_args("cosine_similarity", x1=x1, x2=x2)
    if not number_arg("cosine_similarity", "eps", eps) >= 0:
        raise ValueError(f"cosine_similarity: eps must be >= 0, got {eps}")
    kinds = [backend.is_floating(t.dtype) for t in (x1, x2)]
    if not any(kinds):
        raise TypeError(f"cosine_similarity: needs a floating-point input, got {x1.dtype} and "
                        f"{x2.dtype}; convert with .float() first")
    x1 = x1 if kinds[0] else x1.to(dtype=x2.dtype)
    x2 = x2 if kinds[1] else x2.to(dtype=x1.dtype)
    shape = tuple(check_broadcast("cosine_similarity", x1.shape, x2.shape))
    x1, x2 = (t if t.shape == shape else t.expand(*shape) for t in (x1, x2))
    return ((x1 / _norm_at_least(x1, dim, eps)) * (x2 / _norm_at_least(x2, dim, eps))).sum(dim)


def pairwise_distance(x1, x2, p=2.0, eps=1e-6, keepdim=False):
    """‖x1 - x2 + eps‖ₚ over the last dim (of the broadcast shape), as PyTorch: the
    distance between rows of x1 and x2. eps keeps x1 = x2 away from the norm's kink."""
    tensor_args("pairwise_distance", x1=x1, x2=x2)
    check_broadcast("pairwise_distance", x1.shape, x2.shape)
    return norm(x1 - x2 + eps, p, max(x1.ndim, x2.ndim) - 1, keepdim)


def pdist(input, p=2):
    """The p-norm distance between every pair of rows i < j of a matrix (N, M), as
    torch.pdist: N(N-1)/2 values in the order (0, 1), (0, 2), ..., (N-2, N-1). Gradients as
    norm's (0 where two rows are equal)."""
    op = "pdist"
    if not isinstance(input, Tensor) or input.ndim != 2:
        raise ValueError(f"{op}: needs a 2-D tensor (rows to compare), got "
                         f"{getattr(input, 'shape', type(input).__name__)}")
    p = float(number_arg(op, "p", p))
    if not p >= 0:
        raise ValueError(f"{op}: p must be >= 0, got {p}")
    if not backend.is_floating(input.dtype):
        raise TypeError(f"{op}: needs a floating-point tensor, got {input.dtype}")
    host = backend.get("cpu").xp
    first, second = (Tensor._make(input.backend.from_numpy(i.astype(backend.int64)),
                                  input.device) for i in host.triu_indices(input.shape[0], k=1))
    input = autocast_float32(input)     # (on torch's float32 autocast list)
    return p_norm(input[first] - input[second], p, 1, False, op)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    """RMSNorm (Zhang & Sennrich 2019; LLaMA's layer norm), as torch's F.rms_norm: x divided
    by the root mean square over the trailing `normalized_shape` dims, then scaled by
    `weight`. Unlike layer norm (article 2.2.5.4) it neither subtracts the mean nor shifts.

        y = x / √(mean(x²) + eps) · weight,   eps None: the dtype's machine epsilon

    float16 runs in float32 (with float32's epsilon), as PyTorch; under autocast it stays
    float32 (on torch's float32 autocast list)."""
    tensor_args("rms_norm", input=input)
    optional_tensor_args("rms_norm", weight=weight)
    input, weight = autocast_float32(input), autocast_float32(weight)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else \
        tuple(normalized_shape)
    if not backend.is_floating(input.dtype):
        raise TypeError(f"rms_norm: needs a floating-point input, got dtype {input.dtype}; "
                        f"convert with .float() first")
    k = len(shape)
    if k > input.ndim or input.shape[input.ndim - k:] != shape:
        raise ValueError(f"rms_norm: normalized_shape {shape} must equal the trailing dims "
                         f"of the input, whose shape is {input.shape}")
    if weight is not None and weight.shape != shape:
        raise ValueError(f"rms_norm: weight has shape {weight.shape}, expected {shape}")
    if input.dtype == backend.float16:   # x² passes 65504 from |x| > 256: computed in float32,
        # eps None float32's too, as PyTorch does (its opmath), and returned as float16
        w = None if weight is None else weight.float()
        return rms_norm(input.float(), shape, w, eps).to(dtype=input.dtype)
    eps = backend.machine_eps(input.dtype) if eps is None else number_arg("rms_norm", "eps",
                                                                            eps)
    if not eps >= 0:
        raise ValueError(f"rms_norm: eps must be >= 0, got {eps}")
    dims = tuple(range(input.ndim - k, input.ndim))
    y = input * ((input * input).mean(dims, keepdim=True) + eps).rsqrt()
    if weight is None:
        return y
    # the input's dtype whatever the weight's, as PyTorch's (a float64 weight would promote)
    return y * weight if weight.dtype == y.dtype else (y * weight).to(dtype=y.dtype)


# differences a cdist piece may hold at once (elements): 32 MiB of float64
_CDIST_PIECE = 1 << 22


def _row_blocks(a, b):
    """Ranges of a's rows (dim -2) whose differences with all of b's rows fit a piece."""
    per_row = max(1, math.prod(b.shape[:-1]) * b.shape[-1])
    step = max(1, _CDIST_PIECE // per_row)
    return [(lo, min(lo + step, a.shape[-2])) for lo in range(0, a.shape[-2], step)]


def _reduced(xp, diff, p):
    """‖diff‖ₚ over the last dim (diff holds x1ᵢ - x2ⱼ, a scratch array: overwritten)."""
    if diff.shape[-1] == 0:
        return xp.zeros(diff.shape[:-1], diff.dtype)
    if p == 0:                          # a NaN coordinate makes the count NaN, as PyTorch
        count = (diff != 0).sum(axis=-1).astype(diff.dtype)
        return xp.where(xp.isnan(diff).any(axis=-1), xp.nan, count).astype(diff.dtype)
    if p == 2:
        diff *= diff
        return xp.sqrt(diff.sum(axis=-1))
    a = xp.abs(diff)
    if p == 1:
        return a.sum(axis=-1)
    if p == math.inf:
        return a.max(axis=-1)
    return (a ** p).sum(axis=-1) ** (1 / p)


def _weighted(xp, diff, dist, g, p):
    """g·∂‖diff‖ₚ/∂diff on arrays (dist, g: the norms and their gradients, with a trailing
    dim of 1; diff is scratch, overwritten), PyTorch's (_cdist_backward): g·diff/dist for
    p = 2, g·sign(diff) for 1, g·sign(diff) where |diff| is the max for ∞ (every tie gets
    it), 0 for p = 0, and g·sign(diff)·|diff|ᵖ⁻¹/distᵖ⁻¹ otherwise; 0 where dist is 0
    (coinciding points), and for p < 1 where diff is 0."""
    if p == 0:
        return xp.zeros(diff.shape, diff.dtype)
    zero = dist == 0
    if p == 2:                                   # one multiplier per pair of points
        diff *= xp.where(zero, 0, g / xp.where(zero, 1, dist))
        return diff
    if p == 1:
        return xp.sign(diff) * g
    if p == math.inf:
        return xp.sign(diff) * (xp.abs(diff) == dist) * g
    small = diff == 0
    slope = xp.sign(diff) * xp.where(small, 1, xp.abs(diff)) ** (p - 1)
    slope *= xp.where(zero, 0, g / xp.where(zero, 1, dist) ** (p - 1))
    return xp.where(small, 0, slope)


class Cdist(Function):
    """dist[..., i, j] = ‖x1[..., i, :] - x2[..., j, :]‖ₚ (x1 and x2 of one batch shape).
    Computed from the differences themselves, a block of x1's rows at a time, as PyTorch's
    exact path (its matrix-product path for p = 2 loses digits where points are close).
    With w = g·∂dist/∂diff: dx1ᵢ = Σⱼ wᵢⱼ, dx2ⱼ = -Σᵢ wᵢⱼ, w 0 where points coincide."""
    fresh_grads = True                                   # backward_arrays' are new arrays
    def forward(self, a, b, p):
        self.p = p
        out = self.xp.empty(a.shape[:-1] + b.shape[-2:-1], a.dtype)
        for lo, hi in _row_blocks(a, b):
            diff = a[..., lo:hi, None, :] - b[..., None, :, :]
            out[..., lo:hi, :] = _reduced(self.xp, diff, p)
        return out

    def backward_arrays(self, g):
        xp, (a, b) = self.xp, (t._data for t in self.inputs)
        dist = self.output()._data
        ga, gb = xp.empty(a.shape, a.dtype), xp.zeros(b.shape, b.dtype)
        for lo, hi in _row_blocks(a, b):
            diff = a[..., lo:hi, None, :] - b[..., None, :, :]
            w = _weighted(xp, diff, dist[..., lo:hi, :, None], g[..., lo:hi, :, None], self.p)
            ga[..., lo:hi, :] = w.sum(axis=-2)
            gb -= w.sum(axis=-3)
        return ga, gb

    def backward(self, g):                               # the same with Tensor ops
        a, b = self.inputs
        diff = a.unsqueeze(-2) - b.unsqueeze(-3)         # (..., P, R, M)
        dist, p = self.output().unsqueeze(-1), self.p
        # sign that keeps a NaN (as backward_arrays' xp.sign and PyTorch's cdist backward;
        # mg.sign gives 0 there, as torch.sign)
        sgn = where(self.const(self.xp.isnan(diff._data)), math.nan, sign(diff))
        if p == 0:
            slope = self.const(self.xp.zeros(diff.shape, diff.dtype))
        elif p == 1:
            slope = sgn
        elif p == math.inf:
            slope = sgn * self.const((abs(diff._data) == dist._data).astype(a.dtype))
        else:                           # the inner wheres keep unused branches finite
            zero = self.const(dist._data == 0)
            if p == 2:
                slope = where(zero, 0.0, diff / where(zero, 1.0, dist))
            else:
                small = self.const(diff._data == 0)
                slope = where(zero | small, 0.0, sgn * where(small, 1.0, diff.abs())
                              ** (p - 1) / where(zero, 1.0, dist) ** (p - 1))
        w = g.unsqueeze(-1) * slope
        return w.sum(-2), -w.sum(-3)


_COMPUTE_MODES = ("use_mm_for_euclid_dist_if_necessary", "use_mm_for_euclid_dist",
                  "donot_use_mm_for_euclid_dist")


def cdist(x1, x2, p=2.0, compute_mode="use_mm_for_euclid_dist_if_necessary"):
    """The p-norm distance between each row of x1 (..., P, M) and each row of x2 (..., R, M),
    as torch.cdist: (..., P, R), batch dims broadcast; p >= 0 (0 counts differing
    coordinates, inf takes the largest). Gradients as PyTorch's, 0 where two points
    coincide. compute_mode is accepted for PyTorch's signature; the distances are always
    computed from the differences (PyTorch's matrix-product path is faster for p = 2 on
    many rows, and less exact)."""
    op = "cdist"
    if not isinstance(x1, Tensor) or not isinstance(x2, Tensor):
        raise TypeError(f"{op}: x1 and x2 must be tensors, got {type(x1).__name__} and "
                        f"{type(x2).__name__}")
    if compute_mode not in _COMPUTE_MODES:
        raise ValueError(f"{op}: compute_mode must be one of {_COMPUTE_MODES}, got "
                         f"{compute_mode!r}")
    p = number_arg(op, "p", p)
    if not p >= 0:
        raise ValueError(f"{op}: p must be a non-negative number (or inf), got {p}")
    x1, x2 = autocast_float32(x1), autocast_float32(x2)
    for name, t in (("x1", x1), ("x2", x2)):
        if t.ndim < 2:
            raise ValueError(f"{op}: {name} must have at least 2 dims (rows, columns), got "
                             f"shape {t.shape}")
        if t.dtype not in (backend.float32, backend.float64):
            raise TypeError(f"{op}: {name} must be float32 or float64 (as PyTorch), got "
                            f"{t.dtype}; convert with .float() or .double()")
    if x1.dtype != x2.dtype:
        raise TypeError(f"{op}: x1 and x2 must share a dtype, got {x1.dtype} and {x2.dtype}")
    if x1.shape[-1] != x2.shape[-1]:
        raise ValueError(f"{op}: x1 and x2 must have the same number of columns (last dim), "
                         f"got shapes {x1.shape} and {x2.shape}")
    batch = check_broadcast(op, x1.shape[:-2], x2.shape[:-2])
    x1, x2 = (t if t.shape[:-2] == batch else t.expand(*(batch + t.shape[-2:]))
              for t in (x1, x2))
    return Cdist.apply(x1, x2, p=float(p))
