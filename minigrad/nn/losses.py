"""More loss modules — SmoothL1Loss, HuberLoss, KLDivLoss — each its function in
minigrad.functional, with PyTorch's names and arguments (less the deprecated size_average
and reduce, as the other loss modules here)."""
from minigrad import functional as F
from minigrad.ops.loss import check_reduction
from minigrad.nn.module import Module


class SmoothL1Loss(Module):
    """½d²/β where |d| < β, else |d| - ½β, d = input - target."""

    def __init__(self, reduction="mean", beta=1.0):
        super().__init__()
        check_reduction(reduction, "SmoothL1Loss")
        if not beta >= 0:
            raise ValueError(f"SmoothL1Loss: beta must be >= 0, got {beta}")
        self.reduction, self.beta = reduction, beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, self.reduction, self.beta)


class HuberLoss(Module):
    """½d² where |d| < δ, else δ(|d| - ½δ), d = input - target."""

    def __init__(self, reduction="mean", delta=1.0):
        super().__init__()
        check_reduction(reduction, "HuberLoss")
        if not delta > 0:
            raise ValueError(f"HuberLoss: delta must be > 0, got {delta}")
        self.reduction, self.delta = reduction, delta

    def forward(self, input, target):
        return F.huber_loss(input, target, self.reduction, self.delta)


class KLDivLoss(Module):
    """F.kl_div(input, target): input log-probabilities, target probabilities (or
    log-probabilities with log_target=True); reduction="batchmean" is the KL divergence
    per sample."""

    def __init__(self, reduction="mean", log_target=False):
        super().__init__()
        if reduction != "batchmean":
            check_reduction(reduction, "KLDivLoss")
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input, target):
        return F.kl_div(input, target, self.reduction, self.log_target)
