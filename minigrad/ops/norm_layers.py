"""Group, instance and local response normalisation, as torch.nn.functional's group_norm,
instance_norm and local_response_norm. Group and instance norm are layer norm (the fused op
of ops/layer_norm.py, with its fast backward and its twice-differentiable reference) over
each group's or each instance's values, then a per-channel scale and shift; local response
norm is composed of differentiable ops."""
import math

from minigrad import backend
from minigrad.args import number_arg, int_arg, optional_tensor_args, same_float_params
from minigrad.autograd import no_grad
from minigrad.ops.batch_norm import _check, _update_running, batch_norm
from minigrad.ops.layer_norm import layer_norm
from minigrad.ops.pad import pad
from minigrad.tensor import Tensor


def _per_channel(op, y, weight, bias):
    """y · weight + bias, weight and bias (C,) vectors along dim 1 (either may be None)."""
    shape = (1, y.shape[1]) + (1,) * (y.ndim - 2)
    optional_tensor_args(op, weight=weight, bias=bias)
    same_float_params(op, y, weight=weight, bias=bias)
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and p.shape != (y.shape[1],):
            raise ValueError(f"{op}: expected {name} to be a vector of size equal to the "
                             f"number of channels in input, but got {name} of shape {p.shape} "
                             f"and input of shape {y.shape}")
    if weight is not None:
        y = y * weight.to(dtype=y.dtype).reshape(shape)
    if bias is not None:
        y = y + bias.to(dtype=y.dtype).reshape(shape)
    return y


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-5):
    """The channels (dim 1) of (N, C, *) split into num_groups groups, each sample's group
    normalised over its channels and every dim after them (y = (x - μ)/√(σ² + ε), biased
    σ²), then scaled and shifted per channel (Wu & He 2018)."""
    op = "group_norm"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    num_groups = int_arg(op, "num_groups", num_groups, low=1)
    eps = number_arg(op, "eps", eps)
    if input.ndim < 2:
        raise ValueError(f"{op}: expected an input of at least 2 dims, (N, C, *), got shape "
                         f"{input.shape}")
    n, channels = input.shape[:2]
    if channels % num_groups:
        raise ValueError(f"{op}: expected the number of channels in input to be divisible "
                         f"by num_groups, but got input of shape {input.shape} and "
                         f"num_groups={num_groups}")
    group = math.prod(input.shape[1:]) // num_groups          # the values of one group
    grouped = input.reshape(n, num_groups, group)
    y = layer_norm(grouped, (group,), eps=eps).reshape(input.shape)
    return _per_channel(op, y, weight, bias)


def instance_norm(input, running_mean=None, running_var=None, weight=None, bias=None,
                  use_input_stats=True, momentum=0.1, eps=1e-5):
    """Each channel of each sample of (N, C, *) normalised over its own values (the dims
    after the channels), then scaled and shifted per channel (Ulyanov et al. 2016). Given
    running_mean and running_var, use_input_stats moves them towards the batch's average
    of the instances' mean and unbiased variance, as batch_norm does; use_input_stats=False
    normalises with them instead."""
    op = "instance_norm"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if not use_input_stats:
        if running_mean is None or running_var is None:
            raise ValueError(f"{op}: expected running_mean and running_var to be given when "
                             f"use_input_stats is False (they normalise the input then)")
        return batch_norm(input, running_mean, running_var, weight, bias, False, momentum,
                          eps)
    spatial = input.shape[2:]
    if input.ndim >= 2 and math.prod(spatial) <= 1:    # its variance would be 0: y = 0
        raise ValueError(f"{op}: expected more than 1 spatial element when training, got "
                         f"input size {input.shape}")
    _check(input, running_mean, running_var, weight, bias, True, momentum, op)
    y = layer_norm(input, spatial, eps=eps)
    if running_mean is not None and input.shape[0] > 0:
        with no_grad():                  # the running statistics are no part of a gradient
            dims = tuple(range(2, input.ndim))
            x = input.float() if input.dtype == backend.float16 else input
            mean = x.mean(dims, keepdim=True)
            var = ((x - mean) ** 2).mean(dims)                 # biased, per instance
            _update_running(running_mean, running_var, mean.mean((0,) + dims), var.mean(0),
                            math.prod(spatial), momentum)
    return _per_channel(op, y, weight, bias)


def local_response_norm(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """x / (k + α/size · Σ x²)^β, the sum over a window of `size` neighbouring channels
    (dim 1; size//2 before, (size-1)//2 after, zeros past the ends), as in AlexNet."""
    op = "local_response_norm"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    size = int_arg(op, "size", size, low=1)
    alpha, beta, k = (number_arg(op, name, v) for name, v in
                      (("alpha", alpha), ("beta", beta), ("k", k)))
    if input.ndim < 3:
        raise ValueError(f"{op}: expected a 3D or higher dimensional input, (N, C, *), got "
                         f"{input.ndim} dims (shape {input.shape})")
    if input.numel() == 0:
        return input
    channels = input.shape[1]
    squares = pad(input * input, (0, 0) * (input.ndim - 2) + (size // 2, (size - 1) // 2))
    total = squares[:, 0:channels]
    for i in range(1, size):
        total = total + squares[:, i:i + channels]
    return input / (total * (alpha / size) + k) ** beta
