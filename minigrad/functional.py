"""`minigrad.functional` (imported as F): the stateless functions the nn layers are made of,
under PyTorch's names and argument names."""
from minigrad import backend
from minigrad.args import int_arg
from minigrad.tensor import Tensor
from minigrad.ops import elementwise as _ew, activations as _act, activations_more as _more
from minigrad.ops import inplace as _inplace
from minigrad.ops.elementwise import tanh, sigmoid  # noqa: F401
from minigrad.ops.gelu import gelu  # noqa: F401
from minigrad.ops.activations import softplus, glu, logsigmoid, softsign, prelu  # noqa: F401
from minigrad.ops.activations_more import (hardshrink, softshrink, tanhshrink,  # noqa: F401
                                           softmin, gumbel_softmax)
from minigrad.ops.softmax import softmax, log_softmax  # noqa: F401
from minigrad.ops.loss import cross_entropy  # noqa: F401
from minigrad.ops.loss import (nll_loss, binary_cross_entropy,  # noqa: F401
                              binary_cross_entropy_with_logits, l1_loss, mse_loss)
from minigrad.ops.loss import smooth_l1_loss, huber_loss  # noqa: F401
from minigrad.ops.loss_kl import kl_div  # noqa: F401
from minigrad.ops.linear_cross_entropy import linear_cross_entropy  # noqa: F401
from minigrad.ops.multi_head_attention import multi_head_attention_forward  # noqa: F401
from minigrad.ops.losses_more import (margin_ranking_loss, hinge_embedding_loss,  # noqa
                                      cosine_embedding_loss, soft_margin_loss,
                                      multilabel_soft_margin_loss, multi_margin_loss,
                                      triplet_margin_loss, poisson_nll_loss,
                                      gaussian_nll_loss)
from minigrad.ops.layer_norm import layer_norm  # noqa: F401
from minigrad.ops.linear import linear  # noqa: F401
from minigrad.ops.random import dropout as _dropout
from minigrad.ops.embedding import embedding as _embedding
from minigrad.ops.attention import (scaled_dot_product_attention,  # noqa: F401
                                    attention_with_weights)
from minigrad.ops.qkv_attention import qkv_attention  # noqa: F401
from minigrad.ops.pad import pad  # noqa: F401
from minigrad.ops.conv_functional import (conv1d, conv2d, conv3d,  # noqa: F401
                                          conv_transpose1d, conv_transpose2d,
                                          conv_transpose3d, unfold, fold)
from minigrad.ops.norms import (normalize, cosine_similarity, rms_norm,  # noqa: F401
                                pairwise_distance)

from minigrad.ops.batch_norm import batch_norm  # noqa: F401
from minigrad.ops.pool import max_pool1d, max_pool2d, max_pool3d  # noqa: F401
from minigrad.ops.pool_more import (avg_pool1d, avg_pool2d, avg_pool3d,  # noqa: F401
                                    adaptive_avg_pool1d, adaptive_avg_pool2d,
                                    adaptive_avg_pool3d, adaptive_max_pool1d,
                                    adaptive_max_pool2d, lp_pool1d, lp_pool2d)
from minigrad.ops.norm_layers import (group_norm, instance_norm,  # noqa: F401
                                      local_response_norm)
from minigrad.ops.image import (interpolate, pixel_shuffle, pixel_unshuffle,  # noqa: F401
                                channel_shuffle)
from minigrad.ops.linear import bilinear  # noqa: F401
from minigrad.ops.random import channel_dropout as _channel_dropout
from minigrad.ops.random import alpha_dropout as _alpha_dropout
from minigrad.ops.ctc import ctc_loss  # noqa: F401
from minigrad.ops.embedding_bag import embedding_bag  # noqa: F401
from minigrad.ops.losses_extra import (multilabel_margin_loss, pdist,  # noqa: F401
                                       triplet_margin_with_distance_loss)
from minigrad.ops.sampling_grid import affine_grid, grid_sample  # noqa: F401
from minigrad.ops.pool_more import adaptive_max_pool3d, lp_pool3d  # noqa: F401
from minigrad.ops.unpool import (max_unpool1d, max_unpool2d, max_unpool3d,  # noqa: F401
                                 max_pool1d_with_indices, max_pool2d_with_indices,
                                 max_pool3d_with_indices, adaptive_max_pool1d_with_indices,
                                 adaptive_max_pool2d_with_indices,
                                 adaptive_max_pool3d_with_indices)
from minigrad.ops.feature_dropout import feature_alpha_dropout as _feature_alpha_dropout
from minigrad.ops.pool_fractional import (fractional_max_pool2d,  # noqa: F401
                                          fractional_max_pool3d,
                                          fractional_max_pool2d_with_indices,
                                          fractional_max_pool3d_with_indices)

# the public names (pyflakes reads the imports above as used through this list)
__all__ = ["relu", "tanh", "sigmoid", "gelu", "silu", "leaky_relu", "softplus", "elu",
           "softmax", "log_softmax", "cross_entropy", "nll_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "l1_loss", "mse_loss", "layer_norm", "linear",
           "dropout", "embedding", "one_hot", "scaled_dot_product_attention",
           "attention_with_weights", "qkv_attention", "pad", "normalize", "cosine_similarity",
           "rms_norm", "glu", "hardtanh", "relu6", "logsigmoid", "mish", "softsign", "selu",
           "prelu",
           "smooth_l1_loss", "huber_loss", "kl_div", "pairwise_distance", "batch_norm",
           "celu", "hardswish", "hardsigmoid", "hardshrink", "softshrink", "tanhshrink",
           "threshold", "softmin", "gumbel_softmax", "rrelu", "margin_ranking_loss",
           "hinge_embedding_loss", "cosine_embedding_loss", "soft_margin_loss",
           "multilabel_soft_margin_loss", "multi_margin_loss", "triplet_margin_loss",
           "poisson_nll_loss", "gaussian_nll_loss", "relu_", "elu_", "leaky_relu_",
           "hardtanh_", "selu_", "celu_", "threshold_", "rrelu_"]
__all__ += ["conv1d", "conv2d", "conv3d", "conv_transpose1d", "conv_transpose2d",
            "conv_transpose3d", "unfold", "fold"]
__all__ += ["max_pool1d", "max_pool2d", "max_pool3d", "avg_pool1d", "avg_pool2d",
            "avg_pool3d", "adaptive_avg_pool1d", "adaptive_avg_pool2d", "adaptive_avg_pool3d",
            "adaptive_max_pool1d", "adaptive_max_pool2d", "lp_pool1d", "lp_pool2d"]
__all__ += ["group_norm", "instance_norm", "local_response_norm"]
__all__ += ["interpolate", "pixel_shuffle", "pixel_unshuffle", "channel_shuffle", "bilinear",
            "dropout1d", "dropout2d", "dropout3d", "alpha_dropout"]
__all__ += ["ctc_loss", "embedding_bag", "multilabel_margin_loss", "pdist",
            "triplet_margin_with_distance_loss", "affine_grid", "grid_sample",
            "adaptive_max_pool3d", "lp_pool3d", "max_unpool1d", "max_unpool2d", "max_unpool3d",
            "max_pool1d_with_indices", "max_pool2d_with_indices", "max_pool3d_with_indices",
            "adaptive_max_pool1d_with_indices", "adaptive_max_pool2d_with_indices",
            "adaptive_max_pool3d_with_indices", "feature_alpha_dropout"]
__all__ += ["upsample", "upsample_nearest", "upsample_bilinear", "native_channel_shuffle",
            "conv_tbc"]
__all__ += ["linear_cross_entropy", "multi_head_attention_forward"]
__all__ += ["fractional_max_pool2d", "fractional_max_pool3d",
            "fractional_max_pool2d_with_indices", "fractional_max_pool3d_with_indices"]


# ---- activations with PyTorch's `inplace` ----------------------------------------------------
def _written(input, f, inplace, name, *args):
    """f(input, *args), or with inplace=True that written into input, which is returned, as
    PyTorch's: every view of input sees it; in grad mode autograd records the write
    (ops/inplace_autograd.py), f taking input's old value, so f's backward still reads it
    where input is a view too (as PyTorch's in-place activations, which keep what they
    need); refused for a leaf that requires grad, as PyTorch."""
    if not inplace:
        return f(input, *args)
    return _inplace.method(input, f"{name}(inplace=True)", f, *args)


def relu(input, inplace=False): return _written(input, _ew.relu, inplace, "relu")
def relu6(input, inplace=False): return _written(input, _act.relu6, inplace, "relu6")
def selu(input, inplace=False): return _written(input, _act.selu, inplace, "selu")
def silu(input, inplace=False): return _written(input, _act.silu, inplace, "silu")
def mish(input, inplace=False): return _written(input, _act.mish, inplace, "mish")
def hardswish(input, inplace=False):
    return _written(input, _more.hardswish, inplace, "hardswish")
def hardsigmoid(input, inplace=False):
    return _written(input, _more.hardsigmoid, inplace, "hardsigmoid")
def elu(input, alpha=1.0, inplace=False):
    return _written(input, _act.elu, inplace, "elu", alpha)
def celu(input, alpha=1.0, inplace=False):
    return _written(input, _more.celu, inplace, "celu", alpha)
def leaky_relu(input, negative_slope=0.01, inplace=False):
    return _written(input, _act.leaky_relu, inplace, "leaky_relu", negative_slope)
def hardtanh(input, min_val=-1.0, max_val=1.0, inplace=False):
    return _written(input, _act.hardtanh, inplace, "hardtanh", min_val, max_val)
def threshold(input, threshold, value, inplace=False):
    return _written(input, _more.threshold, inplace, "threshold", threshold, value)
_threshold = threshold          # threshold_ below has a parameter of that name
def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, inplace=False):
    return _written(input, _more.rrelu, inplace, "rrelu", lower, upper, training)
def dropout(input, p=0.5, training=True, inplace=False):
    return _written(input, _dropout, inplace and training, "dropout", p, training)
def dropout1d(input, p=0.5, training=True, inplace=False):
    return _written(input, _channel_dropout, inplace and training, "dropout1d", p,
                    training, 1)
def dropout2d(input, p=0.5, training=True, inplace=False):
    return _written(input, _channel_dropout, inplace and training, "dropout2d", p,
                    training, 2)
def dropout3d(input, p=0.5, training=True, inplace=False):
    return _written(input, _channel_dropout, inplace and training, "dropout3d", p,
                    training, 3)
def alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _written(input, _alpha_dropout, inplace and training, "alpha_dropout", p, training)
def feature_alpha_dropout(input, p=0.5, training=False, inplace=False):
    return _written(input, _feature_alpha_dropout, inplace and training,
                    "feature_alpha_dropout", p, training)


# PyTorch's F.relu_(x) ...: the same with inplace=True
def relu_(input): return relu(input, inplace=True)
def selu_(input): return selu(input, inplace=True)
def elu_(input, alpha=1.0): return elu(input, alpha, inplace=True)
def celu_(input, alpha=1.0): return celu(input, alpha, inplace=True)
def leaky_relu_(input, negative_slope=0.01): return leaky_relu(input, negative_slope, True)
def hardtanh_(input, min_val=-1.0, max_val=1.0): return hardtanh(input, min_val, max_val, True)
def threshold_(input, threshold, value):     # torch names the cut-off threshold too
    return _threshold(input, threshold, value, True)
def rrelu_(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    if generator is not None:           # as mg.rrelu: torch.rrelu_ takes one, F.rrelu not
        raise TypeError("rrelu_: generator= is not supported (minigrad's rrelu draws from "
                        "the global generator; seed it with mg.manual_seed)")
    return rrelu(input, lower, upper, training, inplace=True)


def embedding(input, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False, sparse=False):
    """Rows of `weight` (num_embeddings, dim) picked by integer `input` of any shape;
    max_norm renormalises the picked rows in place first, as PyTorch."""
    _no_sparse(sparse)
    return _embedding(input, weight, padding_idx, max_norm, norm_type, scale_grad_by_freq)


def _no_sparse(sparse):
    if sparse:
        raise NotImplementedError("embedding: sparse gradients are not implemented (dense "
                                  "gradients only; pass sparse=False)")


def one_hot(tensor, num_classes=-1):
    """int64 indices (any shape) -> int64 (..., num_classes) with a 1 at each index, 0
    elsewhere; num_classes=-1 takes the largest index + 1 (as PyTorch)."""
    if not isinstance(tensor, Tensor) or tensor.dtype.kind not in "iu":
        raise TypeError(f"one_hot: needs a tensor of integer class indices, got "
                        f"{getattr(tensor, 'dtype', type(tensor).__name__)}")
    xp = tensor.backend.xp
    num_classes = int_arg("one_hot", "num_classes", num_classes, low=-1)
    if num_classes == -1:
        if not tensor.numel():
            raise ValueError("one_hot: cannot infer the number of classes from an empty "
                             "tensor; pass num_classes")
        num_classes = int(tensor._data.max()) + 1
    if tensor.numel() and (int(tensor._data.min()) < 0 or
                           int(tensor._data.max()) >= num_classes):
        raise ValueError(f"one_hot: class indices must lie in [0, {num_classes}), got values "
                         f"from {int(tensor._data.min())} to {int(tensor._data.max())}")
    hot = tensor._data[..., None] == xp.arange(num_classes)
    return Tensor._make(hot.astype(backend.int64), tensor.device)


# ---- PyTorch's older spellings -------------------------------------------------------------
def upsample(input, size=None, scale_factor=None, mode="nearest", align_corners=None):
    """interpolate under its older name (deprecated in PyTorch, still there)."""
    return interpolate(input, size, scale_factor, mode, align_corners)


def upsample_nearest(input, size=None, scale_factor=None):
    """interpolate with mode='nearest' (deprecated in PyTorch)."""
    return interpolate(input, size, scale_factor, mode="nearest")


def upsample_bilinear(input, size=None, scale_factor=None):
    """interpolate with mode='bilinear' and align_corners=True, as PyTorch's (deprecated)."""
    return interpolate(input, size, scale_factor, mode="bilinear", align_corners=True)


# PyTorch's kernel-level channel_shuffle: the same values (minigrad's also has a gradient)
native_channel_shuffle = channel_shuffle


def conv_tbc(input, weight, bias, pad=0):
    """conv1d over time-major sequences: input (time, batch, in_channels), weight
    (kernel_width, in_channels, out_channels), bias (out_channels,), `pad` zeros at both
    ends of time; the result is (time', batch, out_channels)."""
    shapes = [getattr(t, "shape", None) for t in (input, weight, bias)]
    ok = all(isinstance(t, Tensor) for t in (input, weight, bias)) and \
        [len(s) for s in shapes] == [3, 3, 1]
    if not ok or shapes[0][2] != shapes[1][1] or shapes[1][2] != shapes[2][0]:
        raise ValueError(f"conv_tbc: expected input (time, batch, in_channels), weight "
                         f"(kernel_width, in_channels, out_channels) and bias (out_channels,) "
                         f"tensors whose channels agree, got shapes {shapes}")
    pad = int_arg("conv_tbc", "pad", pad, low=0)
    out = conv1d(input.permute(1, 2, 0), weight.permute(2, 1, 0), bias, padding=pad)
    return out.permute(2, 0, 1)
