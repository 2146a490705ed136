"""F.linear_cross_entropy (PyTorch 2.13's): cross_entropy(linear(input, weight, bias), target)
in one call, with PyTorch's shapes (a 1-D or 2-D input; a (C, d1, ..., in_features) weight
for a K-dimensional loss), its ignore_index=None default and its LinearCrossEntropyOptions.

PyTorch's options pick a chunked path that never holds the whole (N, C) logits. Here they are
checked as PyTorch checks them and the loss is computed in one piece: the same value and the
same (exact) gradient, the memory of the unchunked path."""
import re

from minigrad import backend
from minigrad.tensor import Tensor
from minigrad.ops.linear import linear
from minigrad.ops.loss import cross_entropy, check_reduction
from minigrad.ops.cross_entropy_probs import is_probabilities

_ACC_POLICIES = ("accurate", "balanced", "compact", "auto")


class LinearCrossEntropyOptions:
    """PyTorch's chunking options for linear_cross_entropy, checked as PyTorch checks them:
    batch_chunk_size a positive int or None; chunking_method None, 'auto', 'aspect_ratio' or
    'aspect_ratio:K' (K a positive int); acc_policy one of 'accurate', 'balanced', 'compact',
    'auto'; acc_dtype None or a floating dtype. minigrad computes in one piece whatever they
    say (see the module docstring)."""

    def __init__(self, allow_retain_graph=False, batch_chunk_size=None,
                 chunking_method="auto", acc_policy="auto", acc_dtype=None):
        if batch_chunk_size is not None and (not isinstance(batch_chunk_size, int)
                                             or batch_chunk_size <= 0):
            raise ValueError(f"LinearCrossEntropyOptions: batch_chunk_size must be a positive "
                             f"int or None, got {batch_chunk_size!r}")
        if chunking_method not in (None, "auto", "aspect_ratio") and not (
                isinstance(chunking_method, str)
                and re.fullmatch(r"aspect_ratio:[1-9][0-9]*", chunking_method)):
            raise ValueError(f"LinearCrossEntropyOptions: chunking_method must be None, "
                             f"'auto', 'aspect_ratio' or 'aspect_ratio:K' with K a positive "
                             f"int, got {chunking_method!r}")
        if acc_policy not in _ACC_POLICIES:
            raise ValueError(f"LinearCrossEntropyOptions: acc_policy must be one of "
                             f"{_ACC_POLICIES}, got {acc_policy!r}")
        if acc_dtype is not None and not _is_float_dtype(acc_dtype):
            raise ValueError(f"LinearCrossEntropyOptions: acc_dtype must be None or a floating "
                             f"dtype (float16, float32, float64), got {acc_dtype!r}")
        self.allow_retain_graph, self.batch_chunk_size = allow_retain_graph, batch_chunk_size
        self.chunking_method, self.acc_policy = chunking_method, acc_policy
        self.acc_dtype = acc_dtype

    def __repr__(self):
        return (f"LinearCrossEntropyOptions(allow_retain_graph={self.allow_retain_graph}, "
                f"batch_chunk_size={self.batch_chunk_size}, chunking_method="
                f"{self.chunking_method!r}, acc_policy={self.acc_policy!r}, "
                f"acc_dtype={self.acc_dtype})")

    def __eq__(self, other):
        return isinstance(other, LinearCrossEntropyOptions) and vars(self) == vars(other)


def _is_float_dtype(d):
    try:
        return backend.is_floating(d)
    except (TypeError, ValueError):
        return False


def linear_cross_entropy(input, linear_weight, target, *, linear_bias=None, weight=None,
                         reduction="mean", ignore_index=None, label_smoothing=0.0,
                         options=None):
    """cross_entropy(linear(input, linear_weight, linear_bias), target, ...), as PyTorch's.

    input (in_features,) or (N, in_features); linear_weight (C, in_features), or (C, d1, ...,
    dK, in_features) for a K-dimensional loss (batched input only) whose targets are (N, d1,
    ..., dK); linear_bias of linear_weight's shape less its last dim. ignore_index=None means
    -100. Targets of class probabilities (the logits' shape: (N, C, d1, ..., dK), or (C,))
    take cross_entropy's probability path; ignore_index must then be None, as PyTorch."""
    op = "linear_cross_entropy"
    for name, t in (("input", input), ("linear_weight", linear_weight)):
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if input.ndim not in (1, 2):
        raise ValueError(f"{op}: input must be (in_features,) or (N, in_features) (1-D or "
                         f"2-D, as PyTorch), got shape {input.shape}")
    if linear_weight.ndim < 2:
        raise ValueError(f"{op}: linear_weight must be (C, in_features) or (C, d1, ..., "
                         f"in_features) (at least 2-D), got shape {linear_weight.shape}")
    if input.shape[-1] != linear_weight.shape[-1]:
        raise ValueError(f"{op}: input and linear_weight must agree in their last dim "
                         f"(in_features), got {input.shape} and {linear_weight.shape}")
    out = linear_weight.shape[:-1]                   # (C, d1, ..., dK)
    if linear_bias is not None and (not isinstance(linear_bias, Tensor)
                                    or linear_bias.shape != out):
        raise ValueError(f"{op}: linear_bias must be a tensor of shape {out} (linear_weight's "
                         f"shape less in_features), got "
                         f"{getattr(linear_bias, 'shape', type(linear_bias).__name__)}")
    if len(out) > 1 and input.ndim == 1:
        raise ValueError(f"{op}: a K-dimensional loss (linear_weight {linear_weight.shape}) "
                         f"needs batched input (N, {input.shape[0]}), got unbatched input "
                         f"{input.shape}")
    if options is not None and not isinstance(options, LinearCrossEntropyOptions):
        raise TypeError(f"{op}: options must be a LinearCrossEntropyOptions or None, got "
                        f"{type(options).__name__}")
    check_reduction(reduction, op)
    if ignore_index is None:
        ignore_index = -100
    elif is_probabilities((input.shape[0], *out) if input.ndim == 2 else out, target):
        raise ValueError(f"{op}: ignore_index cannot be given with targets of class "
                         f"probabilities (the logits' shape), as PyTorch; leave it None")
    w2 = linear_weight.reshape(-1, linear_weight.shape[-1])
    b2 = None if linear_bias is None else linear_bias.reshape(-1)
    logits = linear(input, w2, b2)                   # (N, C·d1···dK) or (C,)
    if input.ndim == 2:
        logits = logits.reshape(input.shape[0], *out)
    return cross_entropy(logits, target, weight, ignore_index=ignore_index,
                         reduction=reduction, label_smoothing=label_smoothing)
