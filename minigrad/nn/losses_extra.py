"""The last loss modules — CTCLoss, MultiLabelMarginLoss and TripletMarginWithDistanceLoss —
each its function in minigrad.functional, with PyTorch's arguments and reprs."""
from minigrad import functional as F
from minigrad.args import number_arg
from minigrad.nn.activations import PairwiseDistance
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

    def __init__(self, reduction="mean"):
        super().__init__(reduction)

    def forward(self, input, target):
        return F.multilabel_margin_loss(input, target, self.reduction)


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
