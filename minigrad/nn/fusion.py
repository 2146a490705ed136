"""Folding an eval-mode batch norm into the convolution or linear layer before it, as
torch.nn.utils.fuse_conv_bn_eval / fuse_linear_bn_eval: bn(conv(x)) is an affine map of
conv(x) per channel, (y - mean)/√(var + eps)·γ + β, so it merges into the layer's weight and
bias, one layer for two at inference. The running statistics are what is folded, so both
layers must be in eval mode (in training mode the batch norm uses the batch's statistics).
PyTorch asserts its checks; here they raise ValueError."""
import copy

from minigrad.autograd import no_grad
from minigrad.creation import ones_like, zeros, zeros_like
from minigrad.nn.module import Parameter


def _check(op, layer, bn):
    if layer.training or bn.training:
        which = type(layer if layer.training else bn).__name__
        raise ValueError(f"{op}: fusion is only for eval mode (it folds the running "
                         f"statistics), but the {which} is in training mode; call .eval() "
                         f"on both")
    if bn.running_mean is None or bn.running_var is None:
        raise ValueError(f"{op}: {type(bn).__name__} keeps no running statistics "
                         f"(track_running_stats=False), so there is nothing to fold")


@no_grad()
def fuse_conv_bn_weights(conv_w, conv_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b, transpose=False):
    """The weight and bias (Parameters, in conv_w's and conv_b's dtypes) of the convolution
    that computes bn(conv(x)) in eval mode. conv_b, bn_w, bn_b may be None (0, 1, 0).
    transpose: a ConvTranspose weight, whose output channels are dim 1."""
    w_dtype = conv_w.dtype
    b_dtype = w_dtype if conv_b is None else conv_b.dtype
    conv_b = zeros_like(bn_rm) if conv_b is None else conv_b
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    rsqrt = (bn_rv + bn_eps).rsqrt()
    shape = ((1, -1) if transpose else (-1, 1)) + (1,) * (conv_w.ndim - 2)
    w = (conv_w * (bn_w * rsqrt).reshape(shape)).to(dtype=w_dtype)
    b = ((conv_b - bn_rm) * rsqrt * bn_w + bn_b).to(dtype=b_dtype)
    return Parameter(w, conv_w.requires_grad), Parameter(b, conv_b.requires_grad)


def fuse_conv_bn_eval(conv, bn, transpose=False):
    """A copy of conv (eval mode, as bn) whose output is bn(conv(x)). transpose: conv is a
    ConvTranspose layer."""
    _check("fuse_conv_bn_eval", conv, bn)
    fused = copy.deepcopy(conv)
    fused.weight, fused.bias = fuse_conv_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight,
        bn.bias, transpose)
    return fused


@no_grad()
def fuse_linear_bn_weights(linear_w, linear_b, bn_rm, bn_rv, bn_eps, bn_w, bn_b):
    """The weight and bias (Parameters, in linear_w's and linear_b's dtypes) of the linear
    layer that computes bn(linear(x)) in eval mode. linear_b, bn_w, bn_b may be None (bn_w
    and bn_b None, an affine=False batch norm: PyTorch's fails on them)."""
    w_dtype = linear_w.dtype
    b_dtype = w_dtype if linear_b is None else linear_b.dtype
    if linear_b is None:          # one per output (PyTorch's is bn's size, 1 where bn has 1)
        linear_b = zeros(linear_w.shape[0], dtype=bn_rm.dtype, device=bn_rm.device)
    bn_w = ones_like(bn_rm) if bn_w is None else bn_w
    bn_b = zeros_like(bn_rm) if bn_b is None else bn_b
    scale = bn_w * (bn_rv + bn_eps).rsqrt()
    w = (linear_w * scale.unsqueeze(-1)).to(dtype=w_dtype)
    b = ((linear_b - bn_rm) * scale + bn_b).to(dtype=b_dtype)
    return Parameter(w, linear_w.requires_grad), Parameter(b, linear_b.requires_grad)


def fuse_linear_bn_eval(linear, bn):
    """A copy of linear (eval mode, as bn) whose output is bn(linear(x)): bn's features
    are linear's outputs (or bn has one feature, broadcast)."""
    op = "fuse_linear_bn_eval"
    _check(op, linear, bn)
    if bn.num_features not in (linear.out_features, 1):
        raise ValueError(f"{op}: the batch norm's num_features ({bn.num_features}) must equal "
                         f"linear.out_features ({linear.out_features}) or be 1")
    fused = copy.deepcopy(linear)
    fused.weight, fused.bias = fuse_linear_bn_weights(
        fused.weight, fused.bias, bn.running_mean, bn.running_var, bn.eps, bn.weight, bn.bias)
    return fused
