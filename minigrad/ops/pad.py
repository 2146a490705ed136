"""F.pad: constant mode composed of slicing (a negative pad crops) and cat with blocks of
the fill value, so its gradient is the matching slice of the upstream one; the reflect,
replicate and circular modes pick, along each padded dim, the input's slices at the places
the mode maps each output place to (indexing, whose gradient adds them back up)."""
from minigrad import backend
from minigrad.args import check_fill_value, not_a_tensor
from minigrad.tensor import Tensor
from minigrad.ops.index import GetItem
from minigrad.ops.shape import cat, clone

np = backend.get("cpu").xp          # NumPy: the places each mode reads, on the host

_OTHER_MODES = ("reflect", "replicate", "circular")


def pad(input, pad, mode="constant", value=None):
    """`input` padded with `value` (None: 0), as torch.nn.functional.pad: `pad` holds
    (left, right) for the last dim, then (top, bottom) for the one before, and so on
    backwards; a negative amount crops instead. The value takes input's dtype (7.6 pads an
    integer tensor with 7). mode='reflect' mirrors the input about its edges (without
    repeating them), 'replicate' repeats the edge values, 'circular' wraps around (these
    three pad the last 1, 2 or 3 dims of an input with one or two more dims, as PyTorch).
    Always a copy."""
    if not isinstance(input, Tensor):
        raise not_a_tensor("pad", "input", input)
    if mode != "constant" and mode not in _OTHER_MODES:
        raise NotImplementedError(f"pad: mode {mode!r} is not a padding mode; use 'constant' "
                                  f"or one of {', '.join(map(repr, _OTHER_MODES))}")
    if not isinstance(pad, (tuple, list)):
        raise TypeError(f"pad: pad must be a tuple of ints of even length ((left, right) "
                        f"for the last dim, ...), got {type(pad).__name__} {pad!r}")
    pad = tuple(pad)
    if not all(backend.is_integer(p) and not isinstance(p, bool) for p in pad):
        raise TypeError(f"pad: pad must be a tuple of ints, got {pad}")
    if len(pad) % 2 or len(pad) // 2 > input.ndim:
        raise ValueError(f"pad: pad must hold (before, after) pairs, one pair per dim at most "
                         f"(from the last dim backwards), got {len(pad)} values {pad} for a "
                         f"tensor of shape {input.shape}")
    if mode != "constant":
        return _pad_by_index(input, pad, mode, value)
    value = 0 if value is None else value
    if not backend.is_scalar(value):
        raise TypeError(f"pad: value must be a number, got {type(value).__name__} {value!r}")
    value = check_fill_value("pad", value, input.dtype)
    out, grew = input, False
    for i in range(len(pad) // 2):
        d, (before, after) = input.ndim - 1 - i, pad[2 * i:2 * i + 2]
        n, lead = out.shape[d], (slice(None),) * d
        start, stop = max(-before, 0), n - max(-after, 0)      # the crop first
        if stop < start:
            raise ValueError(f"pad: dim {d} of size {n} cropped by ({before}, {after}) would "
                             f"have a negative size (input shape {input.shape})")
        if (start, stop) != (0, n):
            out = out[lead + (slice(start, stop),)]
        if before > 0 or after > 0:
            out = cat(([_block(out, d, before, value)] if before > 0 else []) + [out] +
                      ([_block(out, d, after, value)] if after > 0 else []), d)
            grew = True
    return out if grew else clone(out)     # a crop alone is a view: copy it, as PyTorch


def _block(x, d, k, value):
    """A constant tensor of x's shape but k long in dim d, full of value in x's dtype."""
    shape = x.shape[:d] + (k,) + x.shape[d + 1:]
    return Tensor._make(x.backend.xp.full(shape, value, dtype=x.dtype), x.device)


def _pad_by_index(x, pad, mode, value):
    """Reflect, replicate or circular padding: along each padded dim, x's slices at the
    places that the output's map to (_places)."""
    dims = len(pad) // 2
    if not 1 <= dims <= 3 or x.ndim not in (dims + 1, dims + 2):
        raise NotImplementedError(
            f"pad: mode {mode!r} pads the last 1, 2 or 3 dims of an input with 1 or 2 dims "
            f"more (pad of 2 values: a 2D or 3D input; 4: 3D or 4D; 6: 4D or 5D), got "
            f"{len(pad)} pad values for an input of shape {x.shape}")
    if value is not None and value != 0:
        raise ValueError(f"pad: mode {mode!r} takes no value (got value={value}); only "
                         f"mode='constant' fills with one")
    out = x
    for i in range(dims):
        d = x.ndim - 1 - i
        places = _places(mode, x.shape[d], *pad[2 * i:2 * i + 2], x.shape)
        index = (slice(None),) * d + (x.backend.xp.asarray(places),)
        out = GetItem.apply(out, index=index)
    return out


def _places(mode, n, before, after, shape):
    """Which of a dim's n places each place of the padded dim reads (a host array)."""
    if mode == "circular":            # crop first, then wrap around what is left
        start, stop = max(-before, 0), n - max(-after, 0)
        kept, before, after = stop - start, max(before, 0), max(after, 0)
        if kept <= 0 or before > kept or after > kept:
            raise ValueError(f"pad: circular padding ({before}, {after}) of a dim of size "
                             f"{kept} would wrap around more than once (input shape {shape})")
        return start + (np.arange(-before, kept + after) % kept)
    at = np.arange(-before, n + after)
    if mode == "replicate":
        if n == 0 and at.size:
            raise ValueError(f"pad: replicate padding ({before}, {after}) of an empty dim has "
                             f"no edge value to repeat (input shape {shape})")
        return np.clip(at, 0, n - 1)
    if before >= n or after >= n:
        raise ValueError(f"pad: reflect padding ({before}, {after}) must be less than the "
                         f"size of the dim it pads, {n} (input shape {shape})")
    at = np.abs(at)                   # reflect: mirror about the first and last places
    return np.where(at > n - 1, 2 * (n - 1) - at, at)
