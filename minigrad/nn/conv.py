"""Convolution layers as torch.nn's: Conv1d/2d/3d and ConvTranspose1d/2d/3d (PyTorch's
constructor arguments, attributes, parameter names and shapes, default initialisation and
repr, so state dicts load from PyTorch's), and Fold / Unfold. The convolutions themselves
are ops/conv.py (the ops) and ops/conv_functional.py (F.conv2d, ...)."""

from minigrad import functional as F
from minigrad.args import int_arg
from minigrad.nn.layers import add_weight_and_bias, kaiming_reset
from minigrad.nn.module import Module
from minigrad.ops.conv_functional import _ints

_PADDING_MODES = ("zeros", "reflect", "replicate", "circular")


class _ConvNd(Module):
    """What every convolution layer shares; a subclass names its dims and its function."""
    _dims, _fn = None, None

    def _setup(self, in_channels, out_channels, kernel_size, stride, padding, dilation,
               groups, bias, padding_mode, output_padding, transposed, device, dtype):
        name, d = type(self).__name__, self._dims
        in_channels = int_arg(name, "in_channels", in_channels, low=0)
        out_channels = int_arg(name, "out_channels", out_channels, low=0)
        groups = int_arg(name, "groups", groups, low=1)
        for what, n in (("in_channels", in_channels), ("out_channels", out_channels)):
            if n % groups:
                raise ValueError(f"{name}: {what}={n} must be divisible by groups={groups}")
        self.kernel_size = _ints(name, "kernel_size", kernel_size, d, 1)
        self.stride = _ints(name, "stride", stride, d, 1)
        self.dilation = _ints(name, "dilation", dilation, d, 1)
        self.output_padding = _ints(name, "output_padding", output_padding, d, 0)
        if isinstance(padding, str) and not transposed:
            if padding not in ("same", "valid"):
                raise ValueError(f"{name}: padding must be an int, {d} ints, 'valid' or "
                                 f"'same', got {padding!r}")
            if padding == "same" and any(s != 1 for s in self.stride):
                raise ValueError(f"{name}: padding='same' is not supported for strided "
                                 f"convolutions (stride={self.stride})")
            self.padding = padding
        else:
            self.padding = _ints(name, "padding", padding, d, 0)
        if padding_mode not in _PADDING_MODES:
            raise ValueError(f"{name}: padding_mode must be one of "
                             f"{', '.join(map(repr, _PADDING_MODES))}, got {padding_mode!r}")
        if padding_mode != "zeros" and transposed:      # as PyTorch's
            raise ValueError(f"{name}: only padding_mode='zeros' is supported for a "
                             f"transposed convolution, got {padding_mode!r}")
        self.in_channels, self.out_channels, self.groups = in_channels, out_channels, groups
        self.transposed, self.padding_mode = transposed, padding_mode
        shape = (in_channels, out_channels // groups) if transposed else \
            (out_channels, in_channels // groups)
        add_weight_and_bias(self, shape + self.kernel_size, bias, device, dtype,
                            bias_size=out_channels)
        self.reset_parameters()

    def reset_parameters(self):
        kaiming_reset(self)    # PyTorch's default (fan_in from weight.shape[1], transposed too)

    def extra_repr(self):
        d = self._dims
        s = (f"{self.in_channels}, {self.out_channels}, kernel_size={self.kernel_size}, "
             f"stride={self.stride}")
        if self.padding != (0,) * d:
            s += f", padding={self.padding}"
        if self.dilation != (1,) * d:
            s += f", dilation={self.dilation}"
        if self.output_padding != (0,) * d:
            s += f", output_padding={self.output_padding}"
        if self.groups != 1:
            s += f", groups={self.groups}"
        if self.bias is None:
            s += ", bias=False"
        if self.padding_mode != "zeros":
            s += f", padding_mode={self.padding_mode}"
        return s


class _Conv(_ConvNd):
    """A convolution layer: weight (out_channels, in_channels/groups, *kernel_size)."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 dilation=1, groups=1, bias=True, padding_mode="zeros", device=None,
                 dtype=None):
        super().__init__()
        self._setup(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                    bias, padding_mode, 0, False, device, dtype)

    def forward(self, input):
        if self.padding_mode == "zeros":
            return self._fn(input, self.weight, self.bias, self.stride, self.padding,
                            self.dilation, self.groups)
        # reflect / replicate / circular: F.pad pads (as PyTorch's layers do), the
        # convolution then pads nothing
        padded = F.pad(input, self._pads(), mode=self.padding_mode)
        return self._fn(padded, self.weight, self.bias, self.stride, 0, self.dilation,
                        self.groups)

    def _pads(self):
        """F.pad's amounts for self.padding, last dim first: (p, p) per dim, or for 'same'
        the dilated kernel's reach split with the odd one after, as the op's own 'same'."""
        pads = []
        for k, d, p in reversed(list(zip(self.kernel_size, self.dilation,
                                          self.padding if not isinstance(self.padding, str)
                                          else (None,) * self._dims))):
            if self.padding == "valid":
                pads += [0, 0]
            elif self.padding == "same":
                total = d * (k - 1)
                pads += [total // 2, total - total // 2]
            else:
                pads += [p, p]
        return tuple(pads)


class _ConvTranspose(_ConvNd):
    """A transposed convolution layer: weight (in_channels, out_channels/groups,
    *kernel_size). forward's output_size (the spatial sizes, or the whole shape) picks the
    output_padding that gives it, as PyTorch's."""

    def __init__(self, in_channels, out_channels, kernel_size, stride=1, padding=0,
                 output_padding=0, groups=1, bias=True, dilation=1, padding_mode="zeros",
                 device=None, dtype=None):
        super().__init__()
        self._setup(in_channels, out_channels, kernel_size, stride, padding, dilation, groups,
                    bias, padding_mode, output_padding, True, device, dtype)

    def forward(self, input, output_size=None):
        return self._fn(input, self.weight, self.bias, self.stride, self.padding,
                        self._output_padding(input, output_size), self.groups, self.dilation)

    def _output_padding(self, input, output_size):
        d, name = self._dims, type(self).__name__
        if output_size is None or input.ndim not in (d + 1, d + 2):   # (F says what is wrong)
            return self.output_padding
        if not isinstance(output_size, (tuple, list)) or len(output_size) < d:
            raise ValueError(f"{name}: output_size must hold the {d} spatial sizes (or the "
                             f"whole output shape), got {output_size!r}")
        size, spatial = _ints(name, "output_size", output_size[-d:], d, 0), input.shape[-d:]
        smallest = tuple((n - 1) * s - 2 * p + dl * (k - 1) + 1 for n, s, p, dl, k in zip(
            spatial, self.stride, self.padding, self.dilation, self.kernel_size))
        largest = tuple(n + s - 1 for n, s in zip(smallest, self.stride))
        if not all(a <= n <= b for a, n, b in zip(smallest, size, largest)):
            raise ValueError(f"{name}: requested an output size of {size}, but valid sizes "
                             f"range from {smallest} to {largest} (for an input of spatial "
                             f"size {spatial})")
        return tuple(n - a for n, a in zip(size, smallest))


class Conv1d(_Conv):
    """A 1-d convolution over (N, C_in, L) or (C_in, L): F.conv1d with the layer's weight
    (out_channels, in_channels/groups, k) and bias."""
    _dims, _fn = 1, staticmethod(F.conv1d)


class Conv2d(_Conv):
    """A 2-d convolution over (N, C_in, H, W) or (C_in, H, W): F.conv2d with the layer's
    weight (out_channels, in_channels/groups, kH, kW) and bias."""
    _dims, _fn = 2, staticmethod(F.conv2d)


class Conv3d(_Conv):
    """A 3-d convolution over (N, C_in, D, H, W) or unbatched: F.conv3d."""
    _dims, _fn = 3, staticmethod(F.conv3d)


class ConvTranspose1d(_ConvTranspose):
    """A 1-d transposed convolution: F.conv_transpose1d, weight (in, out/groups, k)."""
    _dims, _fn = 1, staticmethod(F.conv_transpose1d)


class ConvTranspose2d(_ConvTranspose):
    """A 2-d transposed convolution: F.conv_transpose2d, weight (in, out/groups, kH, kW)."""
    _dims, _fn = 2, staticmethod(F.conv_transpose2d)


class ConvTranspose3d(_ConvTranspose):
    """A 3-d transposed convolution: F.conv_transpose3d."""
    _dims, _fn = 3, staticmethod(F.conv_transpose3d)


class Unfold(Module):
    """F.unfold as a layer: the sliding windows of (N, C, H, W) as columns (N, C·kH·kW, L)."""

    def __init__(self, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.kernel_size, self.dilation = kernel_size, dilation
        self.padding, self.stride = padding, stride

    def forward(self, input):
        return F.unfold(input, self.kernel_size, self.dilation, self.padding, self.stride)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, dilation={self.dilation}, "
                f"padding={self.padding}, stride={self.stride}")


class Fold(Module):
    """F.fold as a layer: columns (N, C·kH·kW, L) summed back into (N, C, *output_size)."""

    def __init__(self, output_size, kernel_size, dilation=1, padding=0, stride=1):
        super().__init__()
        self.output_size, self.kernel_size = output_size, kernel_size
        self.dilation, self.padding, self.stride = dilation, padding, stride

    def forward(self, input):
        return F.fold(input, self.output_size, self.kernel_size, self.dilation, self.padding,
                      self.stride)

    def extra_repr(self):
        return (f"output_size={self.output_size}, kernel_size={self.kernel_size}, "
                f"dilation={self.dilation}, padding={self.padding}, stride={self.stride}")
