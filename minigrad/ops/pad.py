"""F.pad in constant mode, composed of slicing (a negative pad crops) and cat with blocks of
the fill value, so its gradient is the matching slice of the upstream one."""
from minigrad import backend
from minigrad.args import check_fill_value
from minigrad.tensor import Tensor
from minigrad.ops.shape import cat, clone

_OTHER_MODES = ("reflect", "replicate", "circular")


def pad(input, pad, mode="constant", value=None):
    """`input` padded with `value` (None: 0), as torch.nn.functional.pad: `pad` holds
    (left, right) for the last dim, then (top, bottom) for the one before, and so on
    backwards; a negative amount crops instead. The value takes input's dtype (7.6 pads an
    integer tensor with 7). Only mode='constant' is implemented. Always a copy."""
    if mode != "constant":
        known = "is not implemented here" if mode in _OTHER_MODES else "is not a padding mode"
        raise NotImplementedError(f"pad: mode {mode!r} {known}; only 'constant' is (PyTorch "
                                  f"also has {', '.join(map(repr, _OTHER_MODES))})")
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
