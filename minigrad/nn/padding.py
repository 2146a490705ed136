"""Padding modules — ZeroPad, ConstantPad, ReflectionPad, ReplicationPad and CircularPad in
1, 2 and 3 dims — over F.pad (ops/pad.py), with PyTorch's attributes and reprs: `padding`
an int for every side, or (left, right[, top, bottom[, front, back]])."""
from minigrad.nn.module import Module
from minigrad.ops.pad import pad


class _Pad(Module):
    dims, mode = None, None

    def __init__(self, padding):
        super().__init__()
        self.padding = tuple(padding) if isinstance(padding, (tuple, list)) else \
            (padding,) * (2 * self.dims)

    def forward(self, input):
        return pad(input, self.padding, self.mode)

    def extra_repr(self):
        return f"{self.padding}"


class _ConstantPad(_Pad):
    mode = "constant"

    def __init__(self, padding, value):
        super().__init__(padding)
        self.value = value

    def forward(self, input):
        return pad(input, self.padding, "constant", self.value)

    def extra_repr(self):
        return f"padding={self.padding}, value={self.value}"


class ConstantPad1d(_ConstantPad):
    """Pad the last dim with `value`."""
    dims = 1


class ConstantPad2d(_ConstantPad):
    """Pad the last two dims with `value`."""
    dims = 2


class ConstantPad3d(_ConstantPad):
    """Pad the last three dims with `value`."""
    dims = 3


class _ZeroPad(_ConstantPad):
    def __init__(self, padding):
        super().__init__(padding, 0.0)

    def extra_repr(self):
        return f"{self.padding}"


class ZeroPad1d(_ZeroPad):
    """Pad the last dim with zeros."""
    dims = 1


class ZeroPad2d(_ZeroPad):
    """Pad the last two dims with zeros."""
    dims = 2


class ZeroPad3d(_ZeroPad):
    """Pad the last three dims with zeros."""
    dims = 3


class ReflectionPad1d(_Pad):
    """Pad the last dim with its mirror image about the edges (the edges not repeated)."""
    dims, mode = 1, "reflect"


class ReflectionPad2d(_Pad):
    dims, mode = 2, "reflect"


class ReflectionPad3d(_Pad):
    dims, mode = 3, "reflect"


class ReplicationPad1d(_Pad):
    """Pad the last dim by repeating its edge values."""
    dims, mode = 1, "replicate"


class ReplicationPad2d(_Pad):
    dims, mode = 2, "replicate"


class ReplicationPad3d(_Pad):
    dims, mode = 3, "replicate"


class CircularPad1d(_Pad):
    """Pad the last dim by wrapping around: the right end's values go before the left."""
    dims, mode = 1, "circular"


class CircularPad2d(_Pad):
    dims, mode = 2, "circular"


class CircularPad3d(_Pad):
    dims, mode = 3, "circular"
