"""`minigrad.functional` (imported as F): the stateless functions the nn layers are made of,
under PyTorch's names and argument names."""
from minigrad import backend
from minigrad.args import int_arg
from minigrad.tensor import Tensor
from minigrad.ops.elementwise import relu, tanh, sigmoid  # noqa: F401
from minigrad.ops.gelu import gelu  # noqa: F401
from minigrad.ops.activations import silu, leaky_relu, softplus, elu  # noqa: F401
from minigrad.ops.activations import (glu, hardtanh, relu6, logsigmoid, mish,  # noqa: F401
                                      softsign, selu, prelu)
from minigrad.ops.activations_more import (celu, hardswish, hardsigmoid,  # noqa: F401
                                           hardshrink, softshrink, tanhshrink, threshold,
                                           softmin, gumbel_softmax, rrelu)
from minigrad.ops.softmax import softmax, log_softmax  # noqa: F401
from minigrad.ops.loss import cross_entropy  # noqa: F401
from minigrad.ops.loss import (nll_loss, binary_cross_entropy,  # noqa: F401
                              binary_cross_entropy_with_logits, l1_loss, mse_loss)
from minigrad.ops.loss import smooth_l1_loss, huber_loss, kl_div  # noqa: F401
from minigrad.ops.losses_more import (margin_ranking_loss, hinge_embedding_loss,  # noqa
                                      cosine_embedding_loss, soft_margin_loss,
                                      multilabel_soft_margin_loss, multi_margin_loss,
                                      triplet_margin_loss, poisson_nll_loss,
                                      gaussian_nll_loss)
from minigrad.ops.layer_norm import layer_norm  # noqa: F401
from minigrad.ops.linear import linear  # noqa: F401
from minigrad.ops.random import dropout  # noqa: F401
from minigrad.ops.embedding import embedding as _embedding
from minigrad.ops.attention import (scaled_dot_product_attention,  # noqa: F401
                                    attention_with_weights)
from minigrad.ops.qkv_attention import qkv_attention  # noqa: F401
from minigrad.ops.pad import pad  # noqa: F401
from minigrad.ops.norms import (normalize, cosine_similarity, rms_norm,  # noqa: F401
                                pairwise_distance)

from minigrad.ops.batch_norm import batch_norm  # noqa: F401

# the public names (pyflakes reads the imports above as used through this list)
__all__ = ["relu", "tanh", "sigmoid", "gelu", "silu", "leaky_relu", "softplus", "elu",
           "softmax", "log_softmax", "cross_entropy", "nll_loss", "binary_cross_entropy",
           "binary_cross_entropy_with_logits", "l1_loss", "mse_loss", "layer_norm", "linear",
           "dropout", "embedding", "one_hot", "scaled_dot_product_attention",
           "attention_with_weights", "qkv_attention", "pad", "normalize", "cosine_similarity",
           "rms_norm", "glu", "hardtanh", "relu6", "logsigmoid", "mish", "softsign", "selu", "prelu",
           "smooth_l1_loss", "huber_loss", "kl_div", "pairwise_distance", "batch_norm",
           "celu", "hardswish", "hardsigmoid", "hardshrink", "softshrink", "tanhshrink",
           "threshold", "softmin", "gumbel_softmax", "rrelu", "margin_ranking_loss",
           "hinge_embedding_loss", "cosine_embedding_loss", "soft_margin_loss",
           "multilabel_soft_margin_loss", "multi_margin_loss", "triplet_margin_loss",
           "poisson_nll_loss", "gaussian_nll_loss"]


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
        num_classes = int(tensor.data.max()) + 1
    if tensor.numel() and (int(tensor.data.min()) < 0 or
                           int(tensor.data.max()) >= num_classes):
        raise ValueError(f"one_hot: class indices must lie in [0, {num_classes}), got values "
                         f"from {int(tensor.data.min())} to {int(tensor.data.max())}")
    hot = tensor.data[..., None] == xp.arange(num_classes)
    return Tensor._make(hot.astype(backend.int64), tensor.device)
