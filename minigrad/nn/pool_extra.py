"""More pooling modules — MaxUnpool1d/2d/3d, AdaptiveMaxPool3d, LPPool3d and
FractionalMaxPool2d/3d — and FeatureAlphaDropout, each its function in minigrad.functional,
with PyTorch's arguments, attributes and reprs."""
from minigrad import backend
from minigrad import functional as F
from minigrad.nn.layers import Dropout
from minigrad.nn.module import Module
from minigrad.nn.pool import _AdaptiveMax, _LPPool
from minigrad.ops import pool, pool_fractional, pool_more, unpool


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


class _FractionalMaxPool(Module):
    """F.fractional_max_pool{2,3}d with the module's kernel_size, output_size or
    output_ratio (in (0, 1)), and _random_samples, a buffer: None draws new samples at each
    call; given, every call places its windows by them."""
    dims = None

    def __init__(self, kernel_size, output_size=None, output_ratio=None, return_indices=False,
                 _random_samples=None):
        super().__init__()
        n, name = self.dims, type(self).__name__
        self.kernel_size = pool._ints(name, "kernel_size", kernel_size, n, 1)
        self.return_indices = return_indices
        self.register_buffer("_random_samples", _random_samples)
        if output_size is None and output_ratio is None:
            raise ValueError(f"{name} requires specifying either an output size, or a "
                             f"pooling ratio")
        if output_size is not None and output_ratio is not None:
            raise ValueError(f"{name}: only one of output_size and output_ratio may be "
                             f"specified")
        self.output_size = None if output_size is None else \
            pool._ints(name, "output_size", output_size, n, 0)
        self.output_ratio = None
        if output_ratio is not None:
            ratios = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else \
                (output_ratio,) * n
            if len(ratios) != n or not all(backend.is_scalar(r) and 0 < r < 1
                                           for r in ratios):
                raise ValueError(f"{name}: output_ratio must be between 0 and 1 (a number or "
                                 f"{n} of them), got {output_ratio!r}")
            self.output_ratio = ratios

    def forward(self, input):
        fn = pool_fractional.fractional_max_pool2d if self.dims == 2 else \
            pool_fractional.fractional_max_pool3d
        return fn(input, self.kernel_size, self.output_size, self.output_ratio,
                  self.return_indices, self._random_samples)


class FractionalMaxPool2d(_FractionalMaxPool):
    """The maximum over output_size pseudo-randomly placed windows of the last two dims."""
    dims = 2


class FractionalMaxPool3d(_FractionalMaxPool):
    """The maximum over output_size pseudo-randomly placed windows of the last three dims."""
    dims = 3


class FeatureAlphaDropout(Dropout):
    """Alpha dropout of whole channels (for SELU networks) while training; the identity in
    eval mode."""

    def forward(self, input):
        return F.feature_alpha_dropout(input, self.p, self.training, self.inplace)
