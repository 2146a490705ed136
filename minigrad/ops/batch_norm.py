"""Batch normalisation (Ioffe & Szegedy 2015), as torch.nn.functional.batch_norm: every
channel (dim 1) of an (N, C) or (N, C, L, ...) input is normalised over the batch and every
dim after the channels. Composed of differentiable ops (mean, subtract, multiply, rsqrt), so
the gradient needs no code of its own and gradients of gradients come for free."""
from minigrad import backend
from minigrad.args import number_arg, optional_tensor_args, same_float_params, tensor_args
from minigrad.autograd import no_grad


def _check(input, running_mean, running_var, weight, bias, training, momentum,
           op="batch_norm"):
    """The arguments of batch_norm, or of `op` (instance_norm) that shares them."""
    tensor_args(op, input=input)
    optional_tensor_args(op, running_mean=running_mean, running_var=running_var,
                         weight=weight, bias=bias)
    if not backend.is_floating(input.dtype):
        raise TypeError(f"{op}: needs a floating-point input, got dtype {input.dtype}; "
                        f"convert with .float() first")
    if input.ndim < 2:
        raise ValueError(f"{op}: expected an input of shape (N, C) or (N, C, L, ...), "
                         f"the channels at dim 1, got shape {input.shape}")
    channels = input.shape[1]
    for name, t in (("running_mean", running_mean), ("running_var", running_var),
                    ("weight", weight), ("bias", bias)):
        if t is not None and t.shape != (channels,):
            raise ValueError(f"{op}: {name} has shape {t.shape}, but the input (shape "
                             f"{input.shape}) has {channels} channels at dim 1: expected "
                             f"shape ({channels},), one value per channel")
    same_float_params(op, input, running_mean=running_mean, running_var=running_var,
                      weight=weight, bias=bias)
    if (running_mean is None) != (running_var is None):
        raise ValueError(f"{op}: running_mean and running_var must either both be None "
                         "or neither be None")
    if not training and running_mean is None:
        raise ValueError(f"{op}: running_mean and running_var must be given in "
                         "evaluation mode (training=False), which normalises with them; "
                         "pass training=True to normalise with the batch's statistics")
    values_per_channel = input.numel() // channels if channels else 0
    if training and values_per_channel == 1:   # its variance would be 0: y = 0 whatever x
        raise ValueError(f"{op}: Expected more than 1 value per channel when training, "
                         f"got input size {input.shape}; use a batch of 2 or more (or eval "
                         f"mode, which normalises with the running statistics)")
    if training and running_mean is not None and not backend.is_scalar(momentum):
        raise TypeError(f"{op}: momentum must be a number (the weight of the batch's "
                        f"statistics in the running ones), got {momentum!r}; BatchNorm1d "
                        f"turns momentum=None into a cumulative average itself")


def batch_norm(input, running_mean, running_var, weight=None, bias=None, training=False,
               momentum=0.1, eps=1e-5):
    """y = (x - μ) / √(σ² + ε) · weight + bias, with μ, σ², weight and bias per channel c
    (dim 1), broadcast along the other dims.

    training=True: μ and σ² are the batch's mean and biased variance over every dim but the
    channels; running_mean and running_var (if given) are then moved towards the batch's
    mean and unbiased variance, in place and outside autograd, as PyTorch:
        running ← (1 - momentum) · running + momentum · batch statistic
    training=False: μ and σ² are running_mean and running_var (which must be given)."""
    _check(input, running_mean, running_var, weight, bias, training, momentum)
    if not number_arg("batch_norm", "eps", eps) >= 0:
        raise ValueError(f"batch_norm: eps must be >= 0, got {eps}")
    # float16 squares lose most of their digits (and overflow past 256): statistics are
    # computed in float32 and the result returned as float16, as PyTorch
    dt = backend.float32 if input.dtype == backend.float16 else input.dtype
    x = input.to(dtype=dt)
    channels = x.shape[1]
    dims = (0,) + tuple(range(2, x.ndim))              # every dim but the channels
    per_channel = (1, channels) + (1,) * (x.ndim - 2)  # a (C,) vector, broadcast along dim 1
    if training:
        mean = x.mean(dims, keepdim=True)              # μ
        centred = x - mean
        var = (centred * centred).mean(dims, keepdim=True)   # σ², biased: divided by n
        n = x.numel() // channels if channels else 0
        if running_mean is not None and n > 0:         # an empty batch leaves them as they are
            _update_running(running_mean, running_var, mean, var, n, momentum)
    else:
        centred = x - running_mean.to(dtype=dt).reshape(per_channel)
        var = running_var.to(dtype=dt).reshape(per_channel)
    y = centred * (var + eps).rsqrt()                  # x̂ = (x - μ) / √(σ² + ε)
    if weight is not None:
        y = y * weight.to(dtype=dt).reshape(per_channel)
    if bias is not None:
        y = y + bias.to(dtype=dt).reshape(per_channel)
    return y.to(dtype=input.dtype)


def _update_running(running_mean, running_var, mean, var, n, momentum):
    """running ← (1 - momentum)·running + momentum·batch, for the mean and for the variance;
    the running variance is the unbiased one (divided by n - 1, not n), as PyTorch's."""
    channels = running_mean.shape[0]
    with no_grad():                       # statistics, not part of any gradient
        batch_mean = mean.reshape(channels).to(dtype=running_mean.dtype)
        unbiased_var = (var.reshape(channels) * (n / (n - 1))).to(dtype=running_var.dtype)
        running_mean.mul_(1 - momentum).add_(batch_mean, alpha=momentum)
        running_var.mul_(1 - momentum).add_(unbiased_var, alpha=momentum)
