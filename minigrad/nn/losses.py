"""The loss modules — CrossEntropyLoss, NLLLoss, MSELoss, L1Loss, BCELoss,
BCEWithLogitsLoss, SmoothL1Loss, HuberLoss, KLDivLoss, the margin losses
(MarginRankingLoss, HingeEmbeddingLoss, CosineEmbeddingLoss, SoftMarginLoss,
MultiLabelSoftMarginLoss, MultiMarginLoss, TripletMarginLoss), PoissonNLLLoss and
GaussianNLLLoss — each its function in minigrad.functional, with PyTorch's names and
arguments (the deprecated size_average and reduce too, as ops/loss_legacy.py maps them);
losses_extra.py has the rest.
A class `weight` is a buffer, as PyTorch's (saved in state_dict, moved by .to())."""
from minigrad import functional as F
from minigrad.ops.loss import check_reduction
from minigrad.ops.loss_legacy import legacy_reduction
from minigrad.nn.module import Module


class CrossEntropyLoss(Module):
    """F.cross_entropy as a module: logits and class targets ((N, C) and (N,), or (N, C, d1,
    ...) and (N, d1, ...)), or class probabilities of the logits' shape. `weight` (one per
    class) is a buffer, as PyTorch."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean", label_smoothing=0.0):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = legacy_reduction(size_average, reduce, "CrossEntropyLoss")
        check_reduction(reduction, "CrossEntropyLoss")
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction = ignore_index, reduction
        self.label_smoothing = label_smoothing

    def forward(self, input, target):
        return F.cross_entropy(input, target, self.weight, ignore_index=self.ignore_index,
                               label_smoothing=self.label_smoothing, reduction=self.reduction)


class MSELoss(Module):
    """Mean (or sum) of squared differences."""

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = legacy_reduction(size_average, reduce, "MSELoss")
        check_reduction(reduction, "MSELoss")
        self.reduction = reduction

    def forward(self, input, target):
        return F.mse_loss(input, target, reduction=self.reduction)


class NLLLoss(Module):
    """F.nll_loss as a module: (N, C) log-probabilities and (N,) class targets. `weight`
    (one per class) is a buffer, as PyTorch: saved in state_dict, moved by .to()."""

    def __init__(self, weight=None, size_average=None, ignore_index=-100, reduce=None,
                 reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = legacy_reduction(size_average, reduce, type(self).__name__)
        check_reduction(reduction, "NLLLoss")
        self.register_buffer("weight", weight)
        self.ignore_index, self.reduction = ignore_index, reduction

    def forward(self, input, target):
        return F.nll_loss(input, target, self.weight, ignore_index=self.ignore_index,
                          reduction=self.reduction)


class NLLLoss2d(NLLLoss):
    """NLLLoss under PyTorch's older name for (N, C, H, W) inputs (deprecated there)."""


class BCEWithLogitsLoss(Module):
    """F.binary_cross_entropy_with_logits as a module; `weight` and `pos_weight` are
    buffers, as PyTorch."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean",
                 pos_weight=None):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = legacy_reduction(size_average, reduce, "BCEWithLogitsLoss")
        check_reduction(reduction, "BCEWithLogitsLoss")
        self.register_buffer("weight", weight)
        self.register_buffer("pos_weight", pos_weight)
        self.reduction = reduction

    def forward(self, input, target):
        return F.binary_cross_entropy_with_logits(input, target, self.weight,
                                                  reduction=self.reduction,
                                                  pos_weight=self.pos_weight)


class BCELoss(Module):
    """F.binary_cross_entropy as a module (probabilities in, not logits); `weight` is a
    buffer, as PyTorch."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = legacy_reduction(size_average, reduce, "BCELoss")
        check_reduction(reduction, "BCELoss")
        self.register_buffer("weight", weight)
        self.reduction = reduction

    def forward(self, input, target):
        return F.binary_cross_entropy(input, target, self.weight, reduction=self.reduction)


class L1Loss(Module):
    """Mean (or sum) of absolute differences."""

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = legacy_reduction(size_average, reduce, "L1Loss")
        check_reduction(reduction, "L1Loss")
        self.reduction = reduction

    def forward(self, input, target):
        return F.l1_loss(input, target, reduction=self.reduction)


class SmoothL1Loss(Module):
    """½d²/β where |d| < β, else |d| - ½β, d = input - target."""

    def __init__(self, size_average=None, reduce=None, reduction="mean", beta=1.0):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = legacy_reduction(size_average, reduce, "SmoothL1Loss")
        check_reduction(reduction, "SmoothL1Loss")
        if not beta >= 0:
            raise ValueError(f"SmoothL1Loss: beta must be >= 0, got {beta}")
        self.reduction, self.beta = reduction, beta

    def forward(self, input, target):
        return F.smooth_l1_loss(input, target, reduction=self.reduction, beta=self.beta)


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

    def __init__(self, size_average=None, reduce=None, reduction="mean", log_target=False):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = legacy_reduction(size_average, reduce, "KLDivLoss")
        if reduction not in ("mean", "batchmean", "sum", "none"):
            raise ValueError(f"KLDivLoss: reduction must be 'mean', 'batchmean', 'sum' or "
                             f"'none', got {reduction!r}")
        self.reduction, self.log_target = reduction, log_target

    def forward(self, input, target):
        return F.kl_div(input, target, reduction=self.reduction, log_target=self.log_target)


class _Loss(Module):
    """A loss module whose arguments are attributes and whose reduction is checked at
    construction; the deprecated size_average and reduce, given, replace it (as PyTorch's;
    depth: the warning's stack level, the frames down to the user's call)."""

    def __init__(self, reduction, size_average=None, reduce=None, depth=4):
        super().__init__()
        if size_average is not None or reduce is not None:
            reduction = legacy_reduction(size_average, reduce, type(self).__name__, depth)
        check_reduction(reduction, type(self).__name__)
        self.reduction = reduction


class _MarginLoss(_Loss):
    def __init__(self, margin, reduction, size_average, reduce):
        super().__init__(reduction, size_average, reduce, depth=5)
        self.margin = margin


class MarginRankingLoss(_MarginLoss):
    """max(0, -y·(x1 - x2) + margin)."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, reduction, size_average, reduce)

    def forward(self, input1, input2, target):
        return F.margin_ranking_loss(input1, input2, target, self.margin,
                                     reduction=self.reduction)


class HingeEmbeddingLoss(_MarginLoss):
    """x where y = 1, max(0, margin - x) where y = -1."""

    def __init__(self, margin=1.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, reduction, size_average, reduce)

    def forward(self, input, target):
        return F.hinge_embedding_loss(input, target, self.margin, reduction=self.reduction)


class CosineEmbeddingLoss(_MarginLoss):
    """1 - cos(x1, x2) where y = 1, max(0, cos(x1, x2) - margin) where y = -1."""

    def __init__(self, margin=0.0, size_average=None, reduce=None, reduction="mean"):
        super().__init__(margin, reduction, size_average, reduce)

    def forward(self, input1, input2, target):
        return F.cosine_embedding_loss(input1, input2, target, self.margin,
                                       reduction=self.reduction)


class SoftMarginLoss(_Loss):
    """log(1 + e^(-y·x))."""

    def __init__(self, size_average=None, reduce=None, reduction="mean"):
        super().__init__(reduction, size_average, reduce)

    def forward(self, input, target):
        return F.soft_margin_loss(input, target, reduction=self.reduction)


class MultiLabelSoftMarginLoss(_Loss):
    """Binary cross-entropy of logits against 0/1 targets, averaged over the classes."""

    def __init__(self, weight=None, size_average=None, reduce=None, reduction="mean"):
        super().__init__(reduction, size_average, reduce)
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return F.multilabel_soft_margin_loss(input, target, self.weight,
                                             reduction=self.reduction)


class MultiMarginLoss(_Loss):
    """The multi-class hinge loss Σ_{j ≠ y} max(0, margin - x[y] + x[j])^p / C."""

    def __init__(self, p=1, margin=1.0, weight=None, size_average=None, reduce=None,
                 reduction="mean"):
        super().__init__(reduction, size_average, reduce)
        if p not in (1, 2) or isinstance(p, bool):
            raise ValueError(f"MultiMarginLoss: only p == 1 and p == 2 are supported, got "
                             f"p={p!r}")
        if weight is not None and getattr(weight, "ndim", None) != 1:
            raise ValueError(f"MultiMarginLoss: weight must be one-dimensional (one per "
                             f"class), got {getattr(weight, 'shape', type(weight).__name__)}")
        self.p, self.margin = p, margin
        self.register_buffer("weight", weight)

    def forward(self, input, target):
        return F.multi_margin_loss(input, target, self.p, self.margin, self.weight,
                                   reduction=self.reduction)


class TripletMarginLoss(_Loss):
    """max(d(a, p) - d(a, n) + margin, 0), d the p-norm distance."""

    def __init__(self, margin=1.0, p=2.0, eps=1e-6, swap=False, size_average=None,
                 reduce=None, reduction="mean"):
        super().__init__(reduction, size_average, reduce)
        if not margin > 0:
            raise ValueError(f"TripletMarginLoss: margin must be greater than 0, got "
                             f"{margin}")
        self.margin, self.p, self.eps, self.swap = margin, p, eps, swap

    def forward(self, anchor, positive, negative):
        return F.triplet_margin_loss(anchor, positive, negative, self.margin, self.p,
                                     self.eps, self.swap, reduction=self.reduction)


class PoissonNLLLoss(_Loss):
    """The Poisson negative log-likelihood of counts under rate e^input (or input)."""

    def __init__(self, log_input=True, full=False, size_average=None, eps=1e-8, reduce=None,
                 reduction="mean"):
        super().__init__(reduction, size_average, reduce)
        self.log_input, self.full, self.eps = log_input, full, eps

    def forward(self, log_input, target):
        return F.poisson_nll_loss(log_input, target, self.log_input, self.full,
                                  eps=self.eps, reduction=self.reduction)


class GaussianNLLLoss(_Loss):
    """½(log var + (input - target)²/var), var at least eps."""

    def __init__(self, *, full=False, eps=1e-6, reduction="mean"):
        super().__init__(reduction)
        self.full, self.eps = full, eps

    def forward(self, input, target, var):
        return F.gaussian_nll_loss(input, target, var, self.full, self.eps, self.reduction)
