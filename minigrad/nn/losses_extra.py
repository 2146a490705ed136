"""The last loss modules — CTCLoss, MultiLabelMarginLoss, TripletMarginWithDistanceLoss and
LinearCrossEntropyLoss — each its function in minigrad.functional, with PyTorch's arguments
and reprs."""
import math

from minigrad import functional as F
from minigrad.args import number_arg
from minigrad.nn.activations import PairwiseDistance
from minigrad.nn.layers import Linear
from minigrad.nn.losses import _Loss


class CTCLoss(_Loss):
    """The connectionist temporal classification loss of (T, N, C) log-probabilities
    against unaligned targets (F.ctc_loss)."""

    def __init__(self, blank=0, reduction="mean", zero_infinity=False):
        super().__init__(reduction)
        self.blank, self.zero_infinity = blank, zero_infinity

    def forward(self, log_probs, targets, input_lengths, target_lengths):
        return F.ctc_loss(log_probs, targets, input_lengths, target_lengths, self.blank,
                          self.reduction, self.zero_infinity)


class MultiLabelMarginLoss(_Loss):
    """The multi-label hinge loss Σ_k Σ_{i not a target} max(0, 1 - (x[y_k] - x[i])) / C."""

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(reduction, size_average, reduce)

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, reduction=self.reduction)


class TripletMarginWithDistanceLoss(_Loss):
    """max(d(a, p) - d(a, n) + margin, 0) for any distance d; the default, as PyTorch's, a
    PairwiseDistance() child module (a module given is a child too, and shows in the
    repr)."""

    def __init__(self, *, distance_function=None, margin=1.0, swap=False,
                 reduction="mean"):
        super().__init__(reduction)
        if not number_arg("TripletMarginWithDistanceLoss", "margin", margin) > 0:
            raise ValueError(f"TripletMarginWithDistanceLoss: margin must be greater than 0, "
                             f"got {margin}")
        if distance_function is not None and not callable(distance_function):
            raise TypeError(f"TripletMarginWithDistanceLoss: distance_function must be "
                            f"callable or None, got {type(distance_function).__name__}")
        self.distance_function = distance_function if distance_function is not None \
            else PairwiseDistance()
        self.margin, self.swap = margin, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_with_distance_loss(
            anchor, positive, negative, distance_function=self.distance_function,
            margin=self.margin, swap=self.swap, reduction=self.reduction)


class LinearCrossEntropyLoss(_Loss):
    """F.linear_cross_entropy with its own Linear(in_features, num_classes·prod(out_features))
    (PyTorch's parameter names, linear.weight and linear.bias, stored flat): input (N,
    in_features) or (in_features,), targets (N, *out_features) or (). `weight` (one per
    class) is a buffer, as PyTorch."""

    def __init__(self, in_features, num_classes, *, out_features=(), bias=False, device=None,
                 dtype=None, reduction="mean", weight=None, ignore_index=None,
                 label_smoothing=0.0, options=None):
        super().__init__(reduction)
        self.num_classes, self.out_features = num_classes, tuple(out_features)
        self.ignore_index, self.label_smoothing = ignore_index, label_smoothing
        self.options = options
        self.linear = Linear(in_features, num_classes * math.prod(self.out_features),
                             bias=bias, device=device, dtype=dtype)
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        shape = (self.num_classes, *self.out_features)
        w = self.linear.weight.reshape(*shape, self.linear.in_features)
        b = None if self.linear.bias is None else self.linear.bias.reshape(shape)
        return F.linear_cross_entropy(input, w, target, linear_bias=b, weight=self.weight,
                                      reduction=self.reduction, ignore_index=self.ignore_index,
                                      label_smoothing=self.label_smoothing,
                                      options=self.options)

    def extra_repr(self):
        return (f"in_features={self.linear.in_features}, num_classes={self.num_classes}, "
                f"out_features={self.out_features}, bias={self.linear.bias is not None}, "
                f"reduction={self.reduction}, ignore_index={self.ignore_index}, "
                f"label_smoothing={self.label_smoothing}, options={self.options}")
