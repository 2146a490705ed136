"""Resampling and rearranging an (N, C, *spatial) input, as torch.nn.functional's
interpolate (modes 'nearest', 'nearest-exact', 'linear', 'bilinear', 'trilinear'),
pixel_shuffle, pixel_unshuffle and channel_shuffle. All are composed of differentiable ops:
interpolation picks, along each spatial dim in turn, the input's slices at the source
places of the output's (indexing, whose gradient adds them back) and blends neighbours
linearly; the shuffles are reshapes and a permute."""
import math

from minigrad import backend
from minigrad.args import int_arg
from minigrad.ops.index import GetItem
from minigrad.ops.shape import clone
from minigrad.tensor import Tensor

np = backend.get("cpu").xp          # NumPy: the source places and weights, on the host

_LINEAR = {"linear": 1, "bilinear": 2, "trilinear": 3}     # mode: its spatial dims
_NEAREST = ("nearest", "nearest-exact")
_MODES = _NEAREST + tuple(_LINEAR)


def _sizes_and_scales(input, size, scale_factor, recompute_scale_factor, n):
    """The output's spatial sizes, and per dim the scale from output places to input ones
    (PyTorch's: 1/scale_factor when that was given and not recomputed, in/out otherwise)."""
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
        sizes = tuple(int_arg(op, "size", s, low=1) for s in sizes)
        return sizes, tuple(L / s for L, s in zip(spatial, sizes))
    scales = tuple(scale_factor) if isinstance(scale_factor, (tuple, list)) else \
        (scale_factor,) * n
    if len(scales) != n or not all(backend.is_scalar(s) and s > 0 for s in scales):
        raise ValueError(f"{op}: scale_factor must be a positive number or {n} of them for "
                         f"an input of {n} spatial dims (shape {input.shape}), got "
                         f"{scale_factor!r}")
    sizes = tuple(int(math.floor(L * s)) for L, s in zip(spatial, scales))
    if min(sizes, default=1) < 1:
        raise ValueError(f"{op}: scale_factor {scale_factor!r} makes an empty output from "
                         f"spatial size {spatial}")
    if recompute_scale_factor:
        return sizes, tuple(L / s for L, s in zip(spatial, sizes))
    return sizes, tuple(1.0 / s for s in scales)


def _along(x, axis, places):
    """x's slices along axis at the (host) integer places."""
    index = (slice(None),) * axis + (x.backend.xp.asarray(places),)
    return GetItem.apply(x, index=index)


def interpolate(input, size=None, scale_factor=None, mode="nearest", align_corners=None,
                recompute_scale_factor=None, antialias=False):
    """input (N, C, *spatial) resized to `size`, or scaled by `scale_factor`, per dim:
    'nearest' copies the input place ⌊o·scale⌋, 'nearest-exact' the one nearest the output
    place's centre, ⌊(o + ½)·scale⌋ (as Pillow and SciPy's zoom); 'linear' / 'bilinear' /
    'trilinear' (for 1, 2, 3 spatial dims) blend the two input places around o·scale
    (align_corners=True: the corners' centres line up, source place o·(L-1)/(out-1);
    False, the default: the corners' edges, (o + ½)·scale - ½). 'bicubic', 'area' and
    antialias are not implemented."""
    op = "interpolate"
    _tensor(op, input)
    if mode not in _MODES:
        raise NotImplementedError(f"{op}: mode {mode!r} is not implemented; the modes are "
                                  f"{', '.join(map(repr, _MODES))}")
    if antialias:
        raise NotImplementedError(f"{op}: antialias=True is not implemented")
    if mode in _NEAREST and align_corners is not None:
        raise ValueError(f"{op}: the align_corners option can only be set with the "
                         f"interpolating modes: linear | bilinear | trilinear")
    if not 3 <= input.ndim <= 5:
        raise ValueError(f"{op}: expected a 3D, 4D or 5D input, (N, C, *spatial) with 1 to 3 "
                         f"spatial dims, got shape {input.shape}")
    n = input.ndim - 2
    if mode in _LINEAR and _LINEAR[mode] != n:
        raise NotImplementedError(f"{op}: got {input.ndim}D input, but {mode} mode needs "
                                  f"{_LINEAR[mode] + 2}D input")
    if not backend.is_floating(input.dtype) and mode not in _NEAREST:
        raise TypeError(f"{op}: mode {mode!r} needs a floating-point input, got "
                        f"{input.dtype}")
    sizes, scales = _sizes_and_scales(input, size, scale_factor, recompute_scale_factor, n)
    x = input
    for d, (L, out, scale) in enumerate(zip(input.shape[2:], sizes, scales)):
        o = np.arange(out, dtype=np.float64)
        if mode in _NEAREST:
            # rounded as PyTorch's (o·scale may land on either side of an integer
            # otherwise): ⌊o·scale⌋ in the input's float type (float32 for float16 and
            # integers) rounded to float32; nearest-exact: _nearest_exact
            wide = input.dtype == backend.float64
            if mode == "nearest-exact":
                at = _nearest_exact(o, scale, wide)
            elif wide:
                at = np.floor((o * scale).astype(np.float32))
            else:
                at = np.floor(o.astype(np.float32) * np.float32(scale))
            x = _along(x, 2 + d, np.minimum(at.astype(np.int64), L - 1))
            continue
        if align_corners:
            source = o * ((L - 1) / (out - 1)) if out > 1 else np.zeros(out)
        else:
            source = np.maximum((o + 0.5) * scale - 0.5, 0.0)
        low = np.minimum(np.floor(source).astype(np.int64), L - 1)
        high = np.minimum(low + 1, L - 1)
        weight = (source - low).reshape((-1,) + (1,) * (n - 1 - d))     # of the high place
        w = Tensor._make(x.backend.xp.asarray(weight, dtype=x.dtype), x.device)
        x = _along(x, 2 + d, low) * (1 - w) + _along(x, 2 + d, high) * w
    return x


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
    return clone(y) if y.backend.xp.may_share_memory(y.data, input.data) else y
