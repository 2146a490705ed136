"""More normalisation layers — GroupNorm, InstanceNorm1d/2d/3d, LocalResponseNorm — each its
function in ops/norm_layers.py (minigrad.functional), with PyTorch's arguments, parameter
and buffer names and reprs (the instance norms share BatchNorm's: nn/batchnorm.py)."""
import warnings

from minigrad import backend, creation
from minigrad.nn import init
from minigrad.nn.batchnorm import _BatchNorm
from minigrad.nn.module import Module, Parameter
from minigrad.ops import norm_layers


class GroupNorm(Module):
    """Group normalisation of (N, C, *): the C channels in num_groups groups, each sample's
    group normalised over its values, then weight (ones) and bias (zeros) of shape (C,)."""

    def __init__(self, num_groups, num_channels, eps=1e-5, affine=True, device=None,
                 dtype=None, *, bias=True):
        super().__init__()
        for name, v in (("num_groups", num_groups), ("num_channels", num_channels)):
            if not backend.is_integer(v) or isinstance(v, bool) or v < 1:
                raise TypeError(f"GroupNorm: {name} must be a positive int, got {v!r}")
        if num_channels % num_groups:
            raise ValueError(f"GroupNorm: num_channels ({num_channels}) must be divisible by "
                             f"num_groups ({num_groups})")
        self.num_groups, self.num_channels = num_groups, num_channels
        self.eps, self.affine = eps, affine
        self.register_parameter("weight", None)
        self.register_parameter("bias", None)
        if affine:
            self.weight = Parameter(creation.ones(num_channels, device=device, dtype=dtype))
            if bias:
                self.bias = Parameter(creation.zeros(num_channels, device=device,
                                                     dtype=dtype))

    def reset_parameters(self):
        if self.weight is not None:
            init.ones_(self.weight)
        if self.bias is not None:
            init.zeros_(self.bias)

    def forward(self, input):
        return norm_layers.group_norm(input, self.num_groups, self.weight, self.bias,
                                      self.eps)

    def extra_repr(self):
        return (f"{self.num_groups}, {self.num_channels}, eps={self.eps}, affine="
                f"{self.affine}, bias={self.bias is not None}")


class _InstanceNorm(_BatchNorm):
    """What InstanceNorm{1,2,3}d share: each channel of each sample normalised over its own
    values. With track_running_stats, training moves running_mean / running_var towards
    the batch's statistics (momentum=None: left as they are, as PyTorch) and eval normalises
    with them; without, both use the input's own statistics."""
    dims = None

    def __init__(self, num_features, eps=1e-5, momentum=0.1, affine=False,
                 track_running_stats=False, device=None, dtype=None, *, bias=True):
        super().__init__(num_features, eps, momentum, affine, track_running_stats, device,
                         dtype, bias=bias)

    def _check_input(self, x):
        if x.ndim not in (self.dims + 1, self.dims + 2):
            raise ValueError(f"{type(self).__name__}: expected {self.dims + 1}D or "
                             f"{self.dims + 2}D input (unbatched or batched), got {x.ndim}D "
                             f"input of shape {x.shape}")

    def forward(self, input):
        self._check_input(input)
        unbatched = input.ndim == self.dims + 1
        if unbatched:
            input = input.unsqueeze(0)
        if input.shape[1] != self.num_features:
            if self.affine:
                raise ValueError(f"{type(self).__name__}: expected input's size at dim=1 to "
                                 f"match num_features ({self.num_features}), but got: "
                                 f"{input.shape[1]}")
            warnings.warn(f"{type(self).__name__}: input's size at dim={int(not unbatched)} "
                          f"does not match num_features; it is not used because "
                          f"affine=False", UserWarning, stacklevel=2)
        use_input_stats = self.training or not self.track_running_stats
        out = norm_layers.instance_norm(
            input, self.running_mean, self.running_var, self.weight, self.bias, use_input_stats,
            self.momentum if self.momentum is not None else 0.0, self.eps)
        return out[0] if unbatched else out


class InstanceNorm1d(_InstanceNorm):
    """Instance normalisation of (N, C, L) or unbatched (C, L), over L."""
    dims = 1


class InstanceNorm2d(_InstanceNorm):
    """Instance normalisation of (N, C, H, W) or unbatched (C, H, W), over H and W."""
    dims = 2


class InstanceNorm3d(_InstanceNorm):
    """Instance normalisation of (N, C, D, H, W) or unbatched (C, D, H, W)."""
    dims = 3


class LocalResponseNorm(Module):
    """x / (k + α/size · Σ x² over `size` neighbouring channels)^β."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1.0):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return norm_layers.local_response_norm(input, self.size, self.alpha, self.beta,
                                               self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
