"""`minigrad.functional` (imported as F): the stateless functions the nn layers are made of,
under PyTorch's names and argument names."""
from minigrad.ops.elementwise import relu, tanh, sigmoid, gelu  # noqa: F401
from minigrad.ops.softmax import softmax, log_softmax  # noqa: F401
from minigrad.ops.loss import cross_entropy, check_reduction as _check_reduction  # noqa
from minigrad.ops.layer_norm import layer_norm  # noqa: F401
from minigrad.ops.linear import linear  # noqa: F401
from minigrad.ops.random import dropout  # noqa: F401
from minigrad.ops.index import embedding as _embedding
from minigrad.ops.attention import (scaled_dot_product_attention,  # noqa: F401
                                    attention_with_weights)


def embedding(input, weight, padding_idx=None):
    """Rows of `weight` (num_embeddings, dim) picked by integer `input` of any shape."""
    return _embedding(input, weight, padding_idx)


def mse_loss(input, target, reduction="mean"):
    """Squared differences, averaged ('mean'), summed ('sum') or as they are ('none')."""
    _check_reduction(reduction, "mse_loss")
    d = (input - target) ** 2
    return d if reduction == "none" else d.mean() if reduction == "mean" else d.sum()

