"""PyTorch's top-level spellings of nn.functional ops: mg.conv2d, mg.max_pool2d, mg.dropout...

torch exposes these at top level with the signatures of its internal (ATen) ops, which
sometimes differ from torch.nn.functional's: losses take `reduction` as an int (0 'none',
1 'mean', 2 'sum') whose default is 0, no reduction (what torch 2.13's top-level
functions do, though ATen's schemas say 1), dropouts take `(input, p, train)` all required,
batch_norm and instance_norm take every argument positionally in ATen's order, max pools
return no indices, embedding takes (weight, indices). Where the signature is F's own the
alias is F's function (the table); elsewhere a small function maps torch's arguments onto F's. The
cuDNN switches torch takes (cudnn_enable[d]) are accepted and ignored.

Left out: torch.embedding_bag, whose top-level form returns ATen's bookkeeping tensors
(offset2bag, bag_size, max_indices) that minigrad's F.embedding_bag never builds."""
from minigrad import functional as F

# same signature at top level as in F: the alias is F's function
SAME_AS_F = ("conv1d conv2d conv3d conv_transpose1d conv_transpose2d conv_transpose3d "
             "avg_pool1d adaptive_avg_pool1d pixel_shuffle pixel_unshuffle channel_shuffle "
             "bilinear native_channel_shuffle conv_tbc").split()
globals().update({_name: getattr(F, _name) for _name in SAME_AS_F})

_REDUCTIONS = {0: "none", 1: "mean", 2: "sum"}


def _reduction(name, reduction):
    """ATen's int reduction as F's string; torch's top level refuses strings, so do we."""
    if isinstance(reduction, bool) or reduction not in _REDUCTIONS:
        raise TypeError(f"mg.{name}: reduction must be an int, 0 ('none'), 1 ('mean') or 2 "
                        f"('sum'), as torch.{name}'s, got {reduction!r} (F.{name} takes the "
                        f"string)")
    return _REDUCTIONS[reduction]


def _stride(stride):
    return None if stride is None or (isinstance(stride, (list, tuple)) and not stride) \
        else stride


# dropouts: p and train required, nothing in place
def dropout(input, p, train):
    """torch.dropout(input, p, train)."""
    return F.dropout(input, p, train)


def alpha_dropout(input, p, train):
    """torch.alpha_dropout(input, p, train)."""
    return F.alpha_dropout(input, p, train)


def feature_alpha_dropout(input, p, train):
    """torch.feature_alpha_dropout(input, p, train)."""
    return F.feature_alpha_dropout(input, p, train)


# ... and their in-place twins: input written and returned
def dropout_(input, p, train):
    """torch.dropout_(input, p, train)."""
    return F.dropout(input, p, train, inplace=True)


def alpha_dropout_(input, p, train):
    """torch.alpha_dropout_(input, p, train)."""
    return F.alpha_dropout(input, p, train, inplace=True)


def feature_alpha_dropout_(input, p, train):
    """torch.feature_alpha_dropout_(input, p, train)."""
    return F.feature_alpha_dropout(input, p, train, inplace=True)


# activations: no inplace argument
def selu(input):
    return F.selu(input)


def celu(input, alpha=1.0):
    return F.celu(input, alpha)


def threshold(input, threshold, value):
    return F.threshold(input, threshold, value)


def hardshrink(input, lambd=0.5):
    return F.hardshrink(input, lambd)


def prelu(input, weight):
    return F.prelu(input, weight)


def rrelu(input, lower=1.0 / 8, upper=1.0 / 3, training=False, generator=None):
    """torch.rrelu; minigrad draws from the global generator only."""
    if generator is not None:
        raise TypeError("mg.rrelu: generator= is not supported (minigrad's rrelu draws from "
                        "the global generator; seed it with mg.manual_seed)")
    return F.rrelu(input, lower, upper, training)


# normalisations: ATen's positional orders
def batch_norm(input, weight, bias, running_mean, running_var, training, momentum, eps,
               cudnn_enabled):
    """torch.batch_norm: all nine arguments required, weight and bias before the stats."""
    return F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                        eps)


def instance_norm(input, weight, bias, running_mean, running_var, use_input_stats, momentum,
                  eps, cudnn_enabled):
    """torch.instance_norm: all nine arguments required, weight and bias first."""
    return F.instance_norm(input, running_mean, running_var, weight, bias, use_input_stats,
                           momentum, eps)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-05, cudnn_enable=True):
    return F.layer_norm(input, normalized_shape, weight, bias, eps)


def group_norm(input, num_groups, weight=None, bias=None, eps=1e-05, cudnn_enabled=True):
    return F.group_norm(input, num_groups, weight, bias, eps)


def rms_norm(input, normalized_shape, weight=None, eps=None):
    return F.rms_norm(input, normalized_shape, weight, eps)


# pools: stride=[] means the kernel size; no return_indices (the *_with_indices do)
def max_pool1d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool1d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool2d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool2d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool3d(input, kernel_size, stride=(), padding=0, dilation=1, ceil_mode=False):
    return F.max_pool3d(input, kernel_size, _stride(stride), padding, dilation, ceil_mode)


def max_pool1d_with_indices(input, kernel_size, stride=(), padding=0, dilation=1,
                            ceil_mode=False):
    """torch.max_pool1d_with_indices: (values, indices), always."""
    return F.max_pool1d_with_indices(input, kernel_size, _stride(stride), padding, dilation,
                                     ceil_mode, return_indices=True)


def adaptive_max_pool1d(input, output_size):
    """torch.adaptive_max_pool1d: (values, indices), always."""
    return F.adaptive_max_pool1d(input, output_size, return_indices=True)


def embedding(weight, indices, padding_idx=-1, scale_grad_by_freq=False, sparse=False):
    """torch.embedding: weight first; padding_idx -1 (ATen's "none") means no padding row."""
    return F.embedding(indices, weight, None if padding_idx == -1 else padding_idx,
                       scale_grad_by_freq=scale_grad_by_freq, sparse=sparse)


# losses: reduction an int, ATen's argument orders
def binary_cross_entropy_with_logits(input, target, weight=None, pos_weight=None,
                                     reduction=0):
    """torch.binary_cross_entropy_with_logits: pos_weight before reduction."""
    return F.binary_cross_entropy_with_logits(
        input, target, weight,
        reduction=_reduction("binary_cross_entropy_with_logits", reduction),
        pos_weight=pos_weight)


def kl_div(input, target, reduction=0, *, log_target=False):
    return F.kl_div(input, target, reduction=_reduction("kl_div", reduction),
                    log_target=log_target)


def cosine_embedding_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.cosine_embedding_loss(input1, input2, target, margin,
                                   reduction=_reduction("cosine_embedding_loss", reduction))


def hinge_embedding_loss(input, target, margin=1.0, reduction=0):
    return F.hinge_embedding_loss(input, target, margin,
                                  reduction=_reduction("hinge_embedding_loss", reduction))


def margin_ranking_loss(input1, input2, target, margin=0.0, reduction=0):
    return F.margin_ranking_loss(input1, input2, target, margin,
                                 reduction=_reduction("margin_ranking_loss", reduction))


def triplet_margin_loss(anchor, positive, negative, margin=1.0, p=2.0, eps=1e-06, swap=False,
                        reduction=0):
    return F.triplet_margin_loss(anchor, positive, negative, margin, p, eps, swap,
                                 reduction=_reduction("triplet_margin_loss", reduction))


def poisson_nll_loss(input, target, log_input, full, eps, reduction):
    """torch.poisson_nll_loss: all six arguments required."""
    return F.poisson_nll_loss(input, target, log_input, full, eps=eps,
                              reduction=_reduction("poisson_nll_loss", reduction))


def ctc_loss(log_probs, targets, input_lengths, target_lengths, blank=0, reduction=0,
             zero_infinity=False):
    return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, blank,
                      reduction=_reduction("ctc_loss", reduction), zero_infinity=zero_infinity)


__all__ = SAME_AS_F + [_name for _name, _f in list(globals().items())
                       if callable(_f) and getattr(_f, "__module__", None) == __name__
                       and not _name.startswith("_")]
