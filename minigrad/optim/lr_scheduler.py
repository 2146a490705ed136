"""Learning-rate schedules, the two ways people write them.

As plain functions of the step (what nanoGPT does):

    for it in range(max_steps):
        set_lr(optimizer, warmup_cosine(it, max_lr=6e-4, min_lr=6e-5,
                                        warmup_steps=200, decay_steps=5000))
        ...

As PyTorch's scheduler classes (defined in schedulers.py, importable from here as from
torch.optim.lr_scheduler): LRScheduler, LambdaLR, StepLR, MultiStepLR, ExponentialLR,
CosineAnnealingLR, LinearLR, ConstantLR, PolynomialLR, SequentialLR, OneCycleLR
(one_cycle.py), CosineAnnealingWarmRestarts and CyclicLR (cyclic.py); and ReduceLROnPlateau
(plateau.py), which reacts to a measured loss rather than the epoch.
MultiplicativeLR and ChainedScheduler (chained.py) multiply the lr other schedules leave.

    sched = SequentialLR(opt, [LinearLR(opt, 0.01, total_iters=200),
                               CosineAnnealingLR(opt, T_max=4800)], milestones=[200])
    for it in range(max_steps): ...; optimizer.step(); sched.step()
"""
import math

from minigrad.optim.schedulers import (LRScheduler, LambdaLR, StepLR,  # noqa: F401
                                       MultiStepLR, ExponentialLR, CosineAnnealingLR,
                                       LinearLR, ConstantLR, PolynomialLR, SequentialLR)
from minigrad.optim.one_cycle import OneCycleLR  # noqa: F401
from minigrad.optim.cyclic import CosineAnnealingWarmRestarts, CyclicLR  # noqa: F401
from minigrad.optim.plateau import ReduceLROnPlateau  # noqa: F401
from minigrad.optim.chained import MultiplicativeLR, ChainedScheduler  # noqa: F401

__all__ = ["warmup_cosine", "noam", "step_decay", "set_lr", "LRScheduler", "LambdaLR", "StepLR",
           "MultiStepLR", "ExponentialLR", "CosineAnnealingLR", "LinearLR", "ConstantLR",
           "PolynomialLR", "SequentialLR", "OneCycleLR", "CosineAnnealingWarmRestarts",
           "CyclicLR", "ReduceLROnPlateau"]
__all__ += ["MultiplicativeLR", "ChainedScheduler"]


def warmup_cosine(step, max_lr, min_lr, warmup_steps, decay_steps):
    """nanoGPT's get_lr: linear warmup to max_lr over `warmup_steps` steps, cosine decay
    to `min_lr` at step `decay_steps`, then `min_lr`.

        step < warmup:  max_lr (step + 1) / (warmup + 1)
        step > decay:   min_lr
        otherwise:      min_lr + ½(1 + cos(π r))(max_lr - min_lr),  r = (step-warmup)/(decay-warmup)
    """
    if warmup_steps < 0 or step < 0:
        raise ValueError(f"warmup_cosine: step and warmup_steps must be >= 0, got step={step}, "
                         f"warmup_steps={warmup_steps}")
    if not (max_lr >= 0 and min_lr >= 0):       # (min_lr above max_lr: a rising cosine)
        raise ValueError(f"warmup_cosine: max_lr and min_lr must be >= 0, got max_lr={max_lr}, "
                         f"min_lr={min_lr}")
    if decay_steps < warmup_steps:
        raise ValueError(f"warmup_cosine: decay_steps ({decay_steps}) must be >= warmup_steps "
                         f"({warmup_steps})")
    if step < warmup_steps:
        return max_lr * (step + 1) / (warmup_steps + 1)
    if step > decay_steps or decay_steps == warmup_steps:
        return min_lr
    ratio = (step - warmup_steps) / (decay_steps - warmup_steps)
    return min_lr + 0.5 * (1.0 + math.cos(math.pi * ratio)) * (max_lr - min_lr)


def noam(step, d_model, warmup_steps=4000, factor=1.0):
    """The Transformer paper's schedule (Vaswani et al. 2017, §5.3):
    lr = factor · d_model^-½ · min(step^-½, step · warmup^-1.5). Step 0 counts as step 1
    (as The Annotated Transformer), so the first lr is not zero; the peak is at step=warmup."""
    if not warmup_steps > 0 or not d_model > 0 or not factor > 0:
        raise ValueError(f"noam: d_model, warmup_steps and factor must be positive, got "
                         f"{d_model}, {warmup_steps}, {factor}")
    step = max(step, 1)
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def step_decay(step, base_lr, step_size, gamma=0.1):
    """base_lr · gamma^(step // step_size), as PyTorch's StepLR."""
    if step_size <= 0 or step < 0 or not gamma > 0:
        raise ValueError(f"step_decay: needs step_size > 0, step >= 0 and gamma > 0, got "
                         f"step_size={step_size}, step={step}, gamma={gamma}")
    return base_lr * gamma ** (step // step_size)


def set_lr(optimizer, lr):
    """Set every parameter group's learning rate to `lr`."""
    if not lr >= 0:
        raise ValueError(f"set_lr: the learning rate must be >= 0, got {lr}")
    for g in optimizer.param_groups:
        g["lr"] = lr
