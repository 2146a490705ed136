"""Pooling modules — MaxPool1d/2d/3d, AvgPool1d/2d/3d, AdaptiveAvgPool1d/2d/3d,
AdaptiveMaxPool1d/2d, LPPool1d/2d — each its function in ops/pool.py (minigrad.functional),
with PyTorch's arguments, attributes and reprs."""
from minigrad.nn.module import Module
from minigrad.ops import pool, pool_more


class _MaxPool(Module):
    dims = None

    def __init__(self, kernel_size, stride=None, padding=0, dilation=1, return_indices=False,
                 ceil_mode=False):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.dilation = padding, dilation
        self.return_indices, self.ceil_mode = return_indices, ceil_mode

    def forward(self, input):
        return pool._max_pool(self.dims, input, self.kernel_size, self.stride, self.padding,
                              self.dilation, self.ceil_mode, self.return_indices)

    def extra_repr(self):
        return (f"kernel_size={self.kernel_size}, stride={self.stride}, padding="
                f"{self.padding}, dilation={self.dilation}, ceil_mode={self.ceil_mode}")


class MaxPool1d(_MaxPool):
    """The maximum of each window along the last dim of (N, C, L) or (C, L)."""
    dims = 1


class MaxPool2d(_MaxPool):
    """The maximum of each window over the last two dims of (N, C, H, W) or (C, H, W)."""
    dims = 2


class MaxPool3d(_MaxPool):
    """The maximum of each window over the last three dims."""
    dims = 3


class _AvgPool(Module):
    dims = None

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True, divisor_override=None):
        super().__init__()
        self.kernel_size = kernel_size
        self.stride = stride if stride is not None else kernel_size
        self.padding, self.ceil_mode = padding, ceil_mode
        self.count_include_pad, self.divisor_override = count_include_pad, divisor_override

    def forward(self, input):
        return pool_more._avg_pool(self.dims, input, self.kernel_size, self.stride, self.padding,
                              self.ceil_mode, self.count_include_pad, self.divisor_override)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class AvgPool1d(_AvgPool):
    """The mean of each window along the last dim; as PyTorch's, its sizes are kept as
    1-tuples, and it takes no divisor_override."""
    dims = 1

    def __init__(self, kernel_size, stride=None, padding=0, ceil_mode=False,
                 count_include_pad=True):
        one = lambda v: tuple(v) if isinstance(v, (tuple, list)) else (v,)  # noqa: E731
        super().__init__(one(kernel_size), one(stride if stride is not None else
                                                kernel_size), one(padding), ceil_mode,
                         count_include_pad)


class AvgPool2d(_AvgPool):
    """The mean of each window over the last two dims."""
    dims = 2


class AvgPool3d(_AvgPool):
    """The mean of each window over the last three dims."""
    dims = 3


class _Adaptive(Module):
    def __init__(self, output_size):
        super().__init__()
        self.output_size = output_size

    def extra_repr(self):
        return f"output_size={self.output_size}"


class AdaptiveAvgPool1d(_Adaptive):
    """The mean over output_size windows along the last dim, whatever its length."""
    def forward(self, input): return pool_more.adaptive_avg_pool1d(input, self.output_size)


class AdaptiveAvgPool2d(_Adaptive):
    """The mean over output_size windows over the last two dims (None keeps a size)."""
    def forward(self, input): return pool_more.adaptive_avg_pool2d(input, self.output_size)


class AdaptiveAvgPool3d(_Adaptive):
    """The mean over output_size windows over the last three dims."""
    def forward(self, input): return pool_more.adaptive_avg_pool3d(input, self.output_size)


class _AdaptiveMax(_Adaptive):
    def __init__(self, output_size, return_indices=False):
        super().__init__(output_size)
        self.return_indices = return_indices


class AdaptiveMaxPool1d(_AdaptiveMax):
    """The maximum over output_size windows along the last dim."""
    def forward(self, input):
        return pool_more.adaptive_max_pool1d(input, self.output_size, self.return_indices)


class AdaptiveMaxPool2d(_AdaptiveMax):
    """The maximum over output_size windows over the last two dims."""
    def forward(self, input):
        return pool_more.adaptive_max_pool2d(input, self.output_size, self.return_indices)


class _LPPool(Module):
    dims = None

    def __init__(self, norm_type, kernel_size, stride=None, ceil_mode=False):
        super().__init__()
        self.norm_type, self.kernel_size = norm_type, kernel_size
        self.stride, self.ceil_mode = stride, ceil_mode

    def forward(self, input):
        return pool_more._lp_pool(self.dims, input, self.norm_type, self.kernel_size, self.stride,
                             self.ceil_mode)

    def extra_repr(self):
        return (f"norm_type={self.norm_type}, kernel_size={self.kernel_size}, stride="
                f"{self.stride}, ceil_mode={self.ceil_mode}")


class LPPool1d(_LPPool):
    """The norm_type-norm of each window along the last dim."""
    dims = 1


class LPPool2d(_LPPool):
    """The norm_type-norm of each window over the last two dims."""
    dims = 2
