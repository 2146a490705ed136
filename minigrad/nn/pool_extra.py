"""More pooling modules — MaxUnpool1d/2d/3d, AdaptiveMaxPool3d and LPPool3d — and
FeatureAlphaDropout, each its function in minigrad.functional, with PyTorch's arguments,
attributes and reprs."""
from minigrad import functional as F
from minigrad.nn.layers import Dropout
from minigrad.nn.module import Module
from minigrad.nn.pool import _AdaptiveMax, _LPPool
from minigrad.ops import pool, pool_more, unpool


class _MaxUnpool(Module):
    dims = None

    def __init__(self, kernel_size, stride=None, padding=0):
        super().__init__()
        n, name = self.dims, type(self).__name__
        # tuples of dims entries, as PyTorch's (its repr shows them so)
        self.kernel_size = pool._ints(name, "kernel_size", kernel_size, n, 1)
        self.stride = self.kernel_size if stride is None else \
            pool._ints(name, "stride", stride, n, 1)
        self.padding = pool._ints(name, "padding", padding, n, 0)

    def forward(self, input, indices, output_size=None):
        return unpool._max_unpool(self.dims, input, indices, self.kernel_size, self.stride,
                                  self.padding, output_size)

    def extra_repr(self):
        return f"kernel_size={self.kernel_size}, stride={self.stride}, padding={self.padding}"


class MaxUnpool1d(_MaxUnpool):
    """MaxPool1d undone: forward(input, indices, output_size=None), indices MaxPool1d's
    (return_indices=True)."""
    dims = 1


class MaxUnpool2d(_MaxUnpool):
    """MaxPool2d undone: forward(input, indices, output_size=None)."""
    dims = 2


class MaxUnpool3d(_MaxUnpool):
    """MaxPool3d undone: forward(input, indices, output_size=None)."""
    dims = 3


class AdaptiveMaxPool3d(_AdaptiveMax):
    """The maximum over output_size windows of the last three dims."""

    def forward(self, input):
        return pool_more.adaptive_max_pool3d(input, self.output_size, self.return_indices)


class LPPool3d(_LPPool):
    """The norm_type-norm of each window over the last three dims."""
    dims = 3


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels (for SELU networks) while training; the identity in
    eval mode."""

    def forward(self, x):
        return F.feature_alpha_dropout(x, self.p, self.training, self.inplace)
