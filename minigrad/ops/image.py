"""Resampling and rearranging an (N, C, *spatial) input, as torch.nn.functional's
interpolate (modes 'nearest', 'nearest-exact', 'linear', 'bilinear', 'trilinear',
'bicubic', 'area', and 'lanczos', which is antialias only; antialias for 'bilinear' and
'bicubic' too), pixel_shuffle, pixel_unshuffle and channel_shuffle. All are composed of
differentiable ops: interpolation picks, along each spatial dim in turn, the input's
slices at the source places of the output's (indexing, whose gradient adds them back) and
blends them with host-computed weights; 'area' is adaptive average pooling; the shuffles
are reshapes and a permute."""
import contextlib
import math

from minigrad import backend
from minigrad import memory_format as _mf
from minigrad.args import int_arg
from minigrad.ops.elementwise import where
from minigrad.ops.index import GetItem
from minigrad.ops.pool_more import _adaptive_avg_pool
from minigrad.ops.sampling_grid import _cubic_weights, _keys_far, _keys_near
from minigrad.ops.shape import clone
from minigrad.tensor import Tensor

np = backend.get("cpu").xp          # NumPy: the source places and weights, on the host

_DIMS = {"linear": 1, "bilinear": 2, "bicubic": 2, "trilinear": 3,     # mode: spatial dims
         "lanczos": 2}
_LINEAR = ("linear", "bilinear", "trilinear")
_NEAREST = ("nearest", "nearest-exact")
_MODES = _NEAREST + tuple(_DIMS) + ("area",)
_AA_WIDTH = {"bilinear": 2, "bicubic": 4,     # antialias: the filter's support, unstretched
             "lanczos": 6}
_AA_CUBIC_A = -0.5                           # antialiased bicubic's Keys parameter (Pillow's)
_LANCZOS_A = 3                               # lanczos: sinc windowed by sinc(x/3), as Pillow's


def _sizes_and_scales(input, size, scale_factor, recompute_scale_factor, n, low=1):
    """The output's spatial sizes (each at least `low`), and per dim the scale from output
    places to input ones (PyTorch's: 1/scale_factor when that was given and not recomputed,
    in/out otherwise)."""
    op = "interpolate"
    if (size is None) == (scale_factor is None):
        which = "only one of" if size is not None else "either"
        raise ValueError(f"{op}: {which} size or scale_factor should be defined")
    spatial = input.shape[2:]
    if size is not None and recompute_scale_factor:
        raise ValueError(f"{op}: recompute_scale_factor is not meaningful with an explicit "
                         f"size (it recomputes a scale_factor's)")
    if size is not None:
        sizes = tuple(size) if isinstance(size, (tuple, list)) else (size,) * n
        if len(sizes) != n:
            raise ValueError(f"{op}: size {size!r} must have {n} values for an input of "
                             f"{n} spatial dims (shape {input.shape})")
        sizes = tuple(int_arg(op, "size", s, low=low) for s in sizes)
        return sizes, tuple(L / max(s, 1) for L, s in zip(spatial, sizes))
    scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else \
        (scale_factor,) * n
    if len(scales) != n or not all(backend.is_scalar(s) and 0 < s < math.inf for s in scales):
        raise ValueError(f"{op}: scale_factor must be a positive number or {n} of them for "
                         f"an input of {n} spatial dims (shape {input.shape}), got "
                         f"{scale_factor!r}")
    sizes = tuple(int(math.floor(L * s)) for L, s in zip(spatial, scales))
    if min(sizes, default=1) < low:
        raise ValueError(f"{op}: scale_factor {scale_factor!r} makes an empty output from "
                         f"spatial size {spatial}")
    if recompute_scale_factor:
        return sizes, tuple(L / max(s, 1) for L, s in zip(spatial, sizes))
    return sizes, tuple(1.0 / s for s in scales)


def _along(x, axis, places):
    """x's slices along axis at the (host) integer places."""
    index = (slice(None),) * axis + (x.backend.xp.asarray(places),)
    return GetItem.apply(x, index=index)


def _blend(x, axis, places, weights, taken=None):
    """Σ_k x's slices along axis at places[:, k], times weights[:, k] ((out, k) host
    arrays): indexing and products, so gradients of any order follow. Where the host mask
    taken[:, k] is False the tap is padding and adds nothing (not 0·x, which an infinite or
    NaN x would make NaN)."""
    shape = (-1,) + (1,) * (x.ndim - 1 - axis)
    xp, out = x.backend.xp, 0
    for k in range(places.shape[1]):
        w = Tensor._make(xp.asarray(weights[:, k].reshape(shape), dtype=x.dtype), x.device)
        if taken is None or taken[:, k].all():
            out = out + _along(x, axis, places[:, k]) * w
            continue
        with _quiet(xp):                 # (the padding's 0·inf is masked out)
            term = _along(x, axis, places[:, k]) * w
        out = out + where(Tensor._make(xp.asarray(taken[:, k].reshape(shape)), x.device),
                          term, 0.0)
    return out


def _quiet(xp):
    """NumPy's errstate without its invalid-value warning (a GPU's array module has none)."""
    return xp.errstate(invalid="ignore") if hasattr(xp, "errstate") else \
        contextlib.nullcontext()


def _check(op, input, mode, align_corners, antialias):
    _tensor(op, input)
    if mode not in _MODES:
        raise NotImplementedError(f"{op}: mode {mode!r} is not implemented; the modes are "
                                  f"{', '.join(map(repr, _MODES))}")
    if mode in _NEAREST + ("area",) and align_corners is not None:
        raise ValueError(f"{op}: the align_corners option can only be set with the "
                         f"interpolating modes: linear | bilinear | bicubic | trilinear")
    if not 3 <= input.ndim <= 5:
        raise ValueError(f"{op}: expected a 3D, 4D or 5D input, (N, C, *spatial) with 1 to 3 "
                         f"spatial dims, got shape {input.shape}")
    if mode != "area" and 0 in input.shape[2:]:     # ('area' says so itself)
        raise ValueError(f"{op}: expected an input with non-empty spatial dims, got shape "
                         f"{input.shape}")
    if antialias and (mode not in _AA_WIDTH or input.ndim != 4):
        raise ValueError(f"{op}: antialias=True is restricted to the bilinear, bicubic and "
                         f"lanczos modes, with a 4D input (N, C, H, W); got mode {mode!r} and "
                         f"shape {input.shape}")
    if mode in _DIMS and _DIMS[mode] != input.ndim - 2:
        raise NotImplementedError(f"{op}: got {input.ndim}D input, but {mode} mode needs "
                                  f"{_DIMS[mode] + 2}D input")
    if mode == "lanczos" and align_corners:
        raise ValueError(f"{op}: lanczos mode does not support align_corners=True (use "
                         f"None or False)")
    if mode == "lanczos" and not antialias:
        raise ValueError(f"{op}: lanczos mode requires antialias=True (it is an "
                         f"antialiasing filter only), got antialias={antialias!r}")
    if not backend.is_floating(input.dtype) and mode not in _NEAREST:
        raise TypeError(f"{op}: mode {mode!r} needs a floating-point input, got "
                        f"{input.dtype}")


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """input (N, C, *spatial) resized to `size`, or scaled by `scale_factor`, per dim:
    'nearest' copies the input place ⌊o·scale⌋, 'nearest-exact' the one nearest the output
    place's centre, ⌊(o + ½)·scale⌋ (as Pillow and SciPy's zoom); 'linear' / 'bilinear' /
    'trilinear' (for 1, 2, 3 spatial dims) blend the two input places around o·scale
    (align_corners=True: the corners' centres line up, source place o·(L-1)/(out-1);
    False, the default: the corners' edges, (o + ½)·scale - ½); 'bicubic' (4D) the four
    around it by Keys' cubic convolution (A = -0.75), their places clamped to the border;
    'area' averages windows (adaptive_avg_pool). antialias (bilinear, bicubic; and
    'lanczos', 4D, which requires it): when shrinking, the filter is widened by the scale so
    every input place counts, as Pillow; lanczos's is Lanczos-3, sinc(x)·sinc(x/3) on |x| < 3.
    As PyTorch's, the linear modes, antialias and 2-D 'nearest' to an output of H + W <= 128
    leave a dim whose size does not change as it is, even when a scale_factor would shift
    it."""
    op = "interpolate"
    _check(op, input, mode, align_corners, antialias)
    n = input.ndim - 2
    sizes, scales = _sizes_and_scales(input, size, scale_factor, recompute_scale_factor, n,
                                      low=0 if mode == "area" else 1)
    if mode == "area":
        return _adaptive_avg_pool(n, input, sizes)
    # PyTorch's CPU kernel for 2-D nearest modes has two paths: outputs with H + W <= 128
    # (and channels-last ones, whose places come out the same here) take float32 places, and
    # 'nearest' copies a dim of unchanged size there; larger ones go as 1-D and 3-D
    small = n == 2 and sum(sizes) <= 128
    x = input
    for d, (L, out, scale) in enumerate(zip(input.shape[2:], sizes, scales)):
        if out == L and (mode in _LINEAR or antialias):
            continue                     # PyTorch's kernels copy such a dim
        o = np.arange(out, dtype=np.float64)
        if mode in _NEAREST:
            at = _small_nearest(mode, o, L, scale) if small else \
                _nearest(mode, o, scale, input.dtype == backend.float64)
            x = _along(x, 2 + d, np.minimum(at.astype(np.int64), L - 1))
            continue
        if align_corners:
            scale = (L - 1) / (out - 1) if out > 1 else 0.0
        if antialias:
            x = _blend(x, 2 + d, *_antialias_taps(mode, o, L, scale))
        else:
            x = _blend(x, 2 + d, *_taps(mode, o, L, scale, align_corners))
    # laid out as PyTorch's: in the input's suggested format (indexing along a middle
    # dim leaves NumPy's own order, which no later view could read); a new tensor always
    fmt = _mf.suggest(input.shape, input.stride())
    return x.contiguous(memory_format=fmt) if x is not input else _mf.clone(x, fmt)


def _taps(mode, o, L, scale, align_corners):
    """The input places (out, 2 or 4) the outputs o read, and their weights: linear, the
    two around the source place, clamped at 0 first; bicubic, the four around it, each
    clamped into the input."""
    source = o * scale if align_corners else (o + 0.5) * scale - 0.5
    if mode in _LINEAR:
        source = np.maximum(source, 0.0)
    low = np.floor(source)
    t = source - low
    if mode in _LINEAR:
        low = np.minimum(low.astype(np.int64), L - 1)
        high = np.minimum(low + 1, L - 1)
        return np.stack([low, high], 1), np.stack([1 - t, t], 1)
    places = np.clip(low.astype(np.int64)[:, None] + np.arange(-1, 3), 0, L - 1)
    return places, np.stack(_cubic_weights(t), 1)


def _antialias_taps(mode, o, L, scale):
    """As Pillow's (and PyTorch's antialias): the filter (triangle, Keys' cubic with
    A = -0.5, or Lanczos-3) centred on (o + ½)·scale, stretched by the scale when shrinking
    (scale > 1), read at the input places' centres within its support, and normalised to
    sum 1 (so at the border the places outside count for nothing). Also which taps are an
    output's own (each output has as many as the widest; the others are padding)."""
    width = _AA_WIDTH[mode] / 2
    stretch = max(scale, 1.0)
    support = width * stretch
    centre = scale * (o + 0.5)
    # PyTorch's bounds: truncated toward zero, so they may reach just past the support
    first = np.maximum(np.trunc(centre - support + 0.5), 0).astype(np.int64)
    stop = np.minimum(np.trunc(centre + support + 0.5), L).astype(np.int64)
    k = max(int((stop - first).max()), 1)
    places = first[:, None] + np.arange(k)
    x = np.abs((places - centre[:, None] + 0.5) / stretch)
    if mode == "bilinear":
        weights = np.maximum(1 - x, 0.0)
    elif mode == "lanczos":            # (np.sinc is sin(πx)/(πx), 1 at 0)
        weights = np.where(x < _LANCZOS_A, np.sinc(x) * np.sinc(x / _LANCZOS_A), 0.0)
    else:
        weights = np.where(x < 1, _keys_near(x, _AA_CUBIC_A),
                           np.where(x < 2, _keys_far(x, _AA_CUBIC_A), 0.0))
    taken = places < stop[:, None]      # each output's taps past its last are padding
    weights = np.where(taken, weights, 0.0)
    total = weights.sum(1, keepdims=True)
    weights = weights / np.where(total == 0, 1.0, total)
    return np.minimum(places, L - 1), weights, taken


def _nearest(mode, o, scale, wide):
    """The places 'nearest' reads, ⌊o·scale⌋, rounded as PyTorch's generic CPU kernel (o·scale
    may land on either side of an integer otherwise): in the input's float type (float32
    for float16 and integers), then rounded to float32; nearest-exact: _nearest_exact."""
    if mode == "nearest-exact":
        return _nearest_exact(o, scale, wide)
    if wide:
        return np.floor((o * scale).astype(np.float32))
    return np.floor(o.astype(np.float32) * np.float32(scale))


def _small_nearest(mode, o, L, scale):
    """The places of PyTorch's 2-D kernel for small outputs, for any dtype: a float32 scale;
    'nearest' copies a dim of unchanged size, halves the places of a doubled one, and
    takes ⌊o·scale⌋ in float32 otherwise; 'nearest-exact' ⌊(o + ½)·scale⌋ rounded to
    float32."""
    scale = np.float32(scale)
    if mode == "nearest-exact":
        return np.floor(((o + 0.5) * float(scale)).astype(np.float32))
    if len(o) in (L, 2 * L):
        return o // (len(o) // L)
    return np.floor(o.astype(np.float32) * scale)


def _nearest_exact(o, scale, wide):
    """⌊(o + ½)·scale⌋ rounded as PyTorch's CPU kernel, so that a place within rounding of
    an integer takes the side PyTorch's does: for a float64 input in float64, then
    rounded to float32; otherwise (o + ½)·scale - ½ with a float32 scale, rounded once to
    float32 (a fused multiply-add), then + ½ in float32."""
    if wide:
        return np.floor(((o + 0.5) * scale).astype(np.float32))
    source = ((o + 0.5) * float(np.float32(scale)) - 0.5).astype(np.float32)
    return np.floor(source + np.float32(0.5))


def pixel_shuffle(input, upscale_factor):
    """(*, C·r², H, W) -> (*, C, H·r, W·r): each group of r² channels becomes an r×r block."""
    op, r = "pixel_shuffle", int_arg("pixel_shuffle", "upscale_factor", upscale_factor, 1)
    _tensor(op, input)
    if input.ndim < 3 or input.shape[-3] % (r * r):
        raise ValueError(f"{op}: expects an input of at least 3 dims whose 'channel' dim "
                         f"(-3) is divisible by upscale_factor² = {r * r}, got shape "
                         f"{input.shape}")
    *lead, c, h, w = input.shape
    lead = tuple(lead)
    x = input.reshape(lead + (c // (r * r), r, r, h, w))
    k = len(lead)
    x = x.permute(*range(k), k, k + 3, k + 1, k + 4, k + 2)     # (*, C, H, r, W, r)
    return _fresh(x.reshape(lead + (c // (r * r), h * r, w * r)), input)


def pixel_unshuffle(input, downscale_factor):
    """(*, C, H·r, W·r) -> (*, C·r², H, W): pixel_shuffle undone."""
    op, r = "pixel_unshuffle", int_arg("pixel_unshuffle", "downscale_factor",
                                       downscale_factor, 1)
    _tensor(op, input)
    if input.ndim < 3 or input.shape[-2] % r or input.shape[-1] % r:
        raise ValueError(f"{op}: expects an input of at least 3 dims whose height and width "
                         f"(the last two dims) are divisible by downscale_factor = {r}, got "
                         f"shape {input.shape}")
    *lead, c, h, w = input.shape
    lead = tuple(lead)
    x = input.reshape(lead + (c, h // r, r, w // r, r))
    k = len(lead)
    x = x.permute(*range(k), k, k + 2, k + 4, k + 1, k + 3)     # (*, C, r, r, H, W)
    return _fresh(x.reshape(lead + (c * r * r, h // r, w // r)), input)


def channel_shuffle(input, groups):
    """(N, C, *) with its channels, seen as (groups, C/groups), transposed: channel
    g·(C/groups) + i goes to place i·groups + g (ShuffleNet)."""
    op, groups = "channel_shuffle", int_arg("channel_shuffle", "groups", groups, 1)
    _tensor(op, input)
    if input.ndim < 3 or input.shape[1] % groups:
        raise ValueError(f"{op}: expects an input of at least 3 dims, (N, C, *), whose "
                         f"number of channels is divisible by groups ({groups}), got shape "
                         f"{input.shape}")
    n, c, *rest = input.shape
    x = input.reshape((n, groups, c // groups) + tuple(rest)).transpose(1, 2)
    return _fresh(x.reshape(input.shape), input)


def _tensor(op, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")


def _fresh(y, input):
    """y, or a copy where it is a view of input: a shuffle that moves nothing (r = 1,
    groups = 1, 1×1 images) is a reshape of it, but PyTorch's returns a new tensor, which
    an in-place write must not carry back into input."""
    return clone(y) if y.backend.xp.may_share_memory(y._data, input._data) else y
