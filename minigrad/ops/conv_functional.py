"""What users call for convolutions (F.conv1d/2d/3d, F.conv_transpose1d/2d/3d, F.unfold,
F.fold): PyTorch's arguments, checked with errors that name them, turned into a Window (the
geometry), and the op applied. The ops themselves, im2col and the GEMMs, are ops/conv.py's;
depthwise convolutions ops/conv_depthwise.py's.
"""
import math

from minigrad.args import int_arg
from minigrad.ops import conv_depthwise
from minigrad.ops.conv import Conv, ConvTranspose, Fold, Unfold, Window
from minigrad.tensor import Tensor


def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """The 2-d convolution (PyTorch's cross-correlation) of input (N, C_in, H, W), or
    unbatched (C_in, H, W), with weight (C_out, C_in/groups, kH, kW): each of the `groups`
    slices of the channels meets its own slice of the filters. padding is ints (zeros on
    both sides), 'valid' (none) or 'same' (the output as large as the input; stride 1,
    the odd one more on the right as PyTorch's). conv1d and conv3d are the same, with 1
    and 3 spatial dims."""
    return _conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_nd("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation,
                    groups, output_padding)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """The transposed convolution (conv2d's gradient in its input, as an op) of input
    (N, C_in, H, W) with weight (C_in, C_out/groups, kH, kW): each output size is
    (H - 1)·stride - 2·padding + dilation·(kH - 1) + output_padding + 1, output_padding
    (below stride or dilation) choosing among the sizes a strided conv2d maps to H."""
    return _conv_nd("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation,
                    groups, output_padding)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_nd("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation,
                    groups, output_padding)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding windows of input (N, C, H, W), or unbatched (C, H, W), as columns
    (N, C·kH·kW, L), L the number of windows, channel-major (PyTorch's im2col; as
    PyTorch's, 2 spatial dims only)."""
    x, unbatched = _batched("unfold", 2, input)
    kernel, dilation, padding, stride = _window_args("unfold", 2, kernel_size, dilation,
                                                     padding, stride)
    size = x.shape[2:]
    positions = _positions(size, kernel, dilation, padding, stride)
    if min(positions) < 1:
        raise ValueError(f"unfold: input of spatial size {size} with kernel_size={kernel}, "
                         f"dilation={dilation}, padding={padding} has {positions} windows; "
                         f"at least one per dim is needed")
    cols = Unfold.apply(x, win=Window(kernel, stride, dilation, padding, positions, size))
    return cols.squeeze(0) if unbatched else cols


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """unfold's adjoint (col2im): columns (N, C·kH·kW, L), or unbatched (C·kH·kW, L), added
    back into (N, C, *output_size) where each window lies; overlaps sum."""
    if not isinstance(input, Tensor) or input.ndim not in (2, 3):
        raise ValueError(f"fold: expected a 2-D (unbatched) or 3-D (batched) input "
                         f"(N, C·kH·kW, L), got {_shape_of(input)}")
    unbatched = input.ndim == 2
    cols = input.unsqueeze(0) if unbatched else input
    size = _ints("fold", "output_size", output_size, 2, 0)
    kernel, dilation, padding, stride = _window_args("fold", 2, kernel_size, dilation,
                                                     padding, stride)
    positions = _positions(size, kernel, dilation, padding, stride)
    if cols.shape[1] % math.prod(kernel):
        raise ValueError(f"fold: input's dim 1 ({cols.shape[1]}) must be C·kH·kW, divisible "
                         f"by the kernel's {math.prod(kernel)} taps (kernel_size={kernel})")
    if min(positions) < 1 or cols.shape[2] != math.prod(positions):
        raise ValueError(f"fold: output_size={size} with kernel_size={kernel}, dilation="
                         f"{dilation}, padding={padding}, stride={stride} has "
                         f"{' x '.join(map(str, positions))} windows, but the input holds "
                         f"{cols.shape[2]} (its last dim)")
    out = Fold.apply(cols, win=Window(kernel, stride, dilation, padding, positions, size))
    return out.squeeze(0) if unbatched else out


def _conv_nd(op, d, input, weight, bias, stride, padding, dilation, groups,
             output_padding=None):
    """conv{d}d, or conv_transpose{d}d where output_padding is given: arguments checked,
    the geometry worked out, the op applied."""
    transposed = output_padding is not None
    x, unbatched = _batched(op, d, input)
    groups = int_arg(op, "groups", groups, low=1)
    cout = _check_weight(op, d, x, weight, groups, transposed)
    stride = _ints(op, "stride", stride, d, 1)
    dilation = _ints(op, "dilation", dilation, d, 1)
    kernel, size = tuple(weight.shape[2:]), tuple(x.shape[2:])
    if transposed:
        if isinstance(padding, str):
            raise TypeError(f"{op}: padding must be an int or {d} ints, got {padding!r} "
                            f"('same' and 'valid' are conv{d}d's)")
        padding = _ints(op, "padding", padding, d, 0)
        output_padding = _ints(op, "output_padding", output_padding, d, 0)
        if any(p >= max(s, dl) for p, s, dl in zip(output_padding, stride, dilation)):
            raise ValueError(f"{op}: output_padding={output_padding} must be smaller than "
                             f"either stride={stride} or dilation={dilation}, in each dim")
        out = tuple((n - 1) * s - 2 * p + dl * (k - 1) + q + 1 for n, s, p, dl, k, q in
                    zip(size, stride, padding, dilation, kernel, output_padding))
        if min(out, default=1) < 1:
            raise ValueError(f"{op}: the output would have size {out} (input {size}, "
                             f"kernel_size={kernel}, stride={stride}, padding={padding}): "
                             f"the padding is too large")
        win = Window(kernel, stride, dilation, padding, size, out)
    else:
        before, after = _conv_padding(op, padding, kernel, stride, dilation)
        padded = tuple(n + a + b for n, a, b in zip(size, before, after))
        span = tuple(dl * (k - 1) + 1 for k, dl in zip(kernel, dilation))
        if any(p < s for p, s in zip(padded, span)):
            raise ValueError(f"{op}: the kernel spans {span} (kernel_size={kernel}, dilation="
                             f"{dilation}), more than the padded input {padded} (input "
                             f"{size}, padding {tuple(zip(before, after))}); it can't be "
                             f"larger")
        positions = tuple((p - s) // st + 1 for p, s, st in zip(padded, span, stride))
        win = Window(kernel, stride, dilation, before, positions, size)
    inputs = (x, weight)
    if bias is not None:
        if not isinstance(bias, Tensor) or bias.shape != (cout,):
            raise ValueError(f"{op}: bias must have shape ({cout},) (out_channels), got "
                             f"{_shape_of(bias)}")
        inputs += (bias,)
    if any(t.dtype != x.dtype for t in inputs):
        raise TypeError(f"{op}: input, weight and bias have dtypes "
                        f"{', '.join(str(t.dtype) for t in inputs)}; convert them to one "
                        f"first (.float(), .double()), as PyTorch requires")
    op_class = ConvTranspose if transposed else Conv
    if not transposed:
        # (looked up on the module at each call, so that tests can turn the path off)
        depthwise = conv_depthwise.is_depthwise(x, weight, groups)
        op_class = conv_depthwise.DepthwiseConv if depthwise else Conv
    y = op_class.apply(*inputs, groups=groups, win=win)
    return y.squeeze(0) if unbatched else y


def _shape_of(t):
    return f"shape {t.shape}" if isinstance(t, Tensor) else f"a {type(t).__name__}"


def _batched(op, d, input):
    """input with a batch dim (N, C, *spatial), and whether one was added."""
    if not isinstance(input, Tensor) or input.ndim not in (d + 1, d + 2):
        raise ValueError(f"{op}: expected a {d + 1}-D (unbatched) or {d + 2}-D (batched) "
                         f"input, (C, *spatial) or (N, C, *spatial) with {d} spatial dims, "
                         f"got {_shape_of(input)}")
    return (input.unsqueeze(0), True) if input.ndim == d + 1 else (input, False)


def _check_weight(op, d, x, weight, groups, transposed):
    """The weight's shape against the input's channels and groups; C_out."""
    layout = "(in_channels, out_channels/groups, *kernel_size)" if transposed else \
        "(out_channels, in_channels/groups, *kernel_size)"
    if not isinstance(weight, Tensor) or weight.ndim != d + 2:
        raise ValueError(f"{op}: weight must be {d + 2}-D {layout}, got {_shape_of(weight)}")
    if weight.shape[0] % groups or weight.shape[0] < groups:
        what = "in_channels" if transposed else "out_channels"
        raise ValueError(f"{op}: weight.shape[0] ({what}) = {weight.shape[0]} must be a "
                         f"positive multiple of groups={groups} (weight {layout}: "
                         f"{weight.shape})")
    cin = weight.shape[0] if transposed else weight.shape[1] * groups
    if x.shape[1] != cin:
        how = "weight.shape[0]" if transposed else "weight.shape[1] · groups"
        raise ValueError(f"{op}: input has {x.shape[1]} channels (shape {x.shape}), but "
                         f"weight {weight.shape} with groups={groups} expects {cin} ({how})")
    for n in weight.shape[2:]:
        if n < 1:
            raise ValueError(f"{op}: weight {weight.shape} has an empty kernel")
    return weight.shape[1] * groups if transposed else weight.shape[0]


def _ints(op, name, value, d, low):
    """An int or d ints (one per spatial dim; one in a list stands for all), each >= low,
    as a tuple of d."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(values) not in (1, d):
        raise ValueError(f"{op}: {name} must be an int or {d} ints (one per spatial dim), "
                         f"got {value!r}")
    values = tuple(int_arg(op, name, v) for v in values) * (d // len(values))
    if min(values) < low:
        raise ValueError(f"{op}: {name} must be >= {low} in each dim, got {value!r}")
    return values


def _window_args(op, d, kernel_size, dilation, padding, stride):
    return (_ints(op, "kernel_size", kernel_size, d, 1), _ints(op, "dilation", dilation, d, 1),
            _ints(op, "padding", padding, d, 0), _ints(op, "stride", stride, d, 1))


def _positions(size, kernel, dilation, padding, stride):
    """How many windows fit along each dim (padding on both sides)."""
    return tuple((n + 2 * p - dl * (k - 1) - 1) // s + 1 for n, k, dl, p, s in
                 zip(size, kernel, dilation, padding, stride))


def _conv_padding(op, padding, kernel, stride, dilation):
    """conv's padding as (before, after) per dim: ints pad both sides, 'valid' none, 'same'
    the kernel's span less one, the odd one after (as PyTorch's)."""
    d = len(kernel)
    if not isinstance(padding, str):
        padding = _ints(op, "padding", padding, d, 0)
        return padding, padding
    if padding == "valid":
        return (0,) * d, (0,) * d
    if padding != "same":
        raise ValueError(f"{op}: padding must be an int, {d} ints, 'valid' or 'same', got "
                         f"{padding!r}")
    if any(s != 1 for s in stride):
        raise ValueError(f"{op}: padding='same' is not supported for strided convolutions "
                         f"(stride={stride}); give the padding as ints")
    total = [dl * (k - 1) for k, dl in zip(kernel, dilation)]
    return tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)
