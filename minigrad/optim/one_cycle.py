"""OneCycleLR, as PyTorch's: Smith's "1cycle" policy (Smith & Topin 2018, "Super-
Convergence"), stepped once per batch.

    sched = OneCycleLR(opt, max_lr=0.01, total_steps=len(loader) * epochs)
    for x, y in loader: ...; opt.step(); sched.step()

The lr rises from max_lr / div_factor to max_lr over the first pct_start of the steps, then
anneals to (max_lr / div_factor) / final_div_factor; the momentum (SGD's momentum, or Adam's
beta1) moves the other way, from max_momentum down to base_momentum and back. With
three_phase the lr comes back down to where it started, symmetrically, before the final
annealing (fastai's original form).
"""
import math

from minigrad.optim.schedulers import LRScheduler, _integer, _number, _optimizer, _positive


class OneCycleLR(LRScheduler):
    """PyTorch's arguments and phases; a closed form of the step, as every schedule here.
    Stepping past total_steps is an error, as PyTorch's."""

    def __init__(self, optimizer, max_lr, total_steps=None, epochs=None, steps_per_epoch=None,
                 pct_start=0.3, anneal_strategy="cos", cycle_momentum=True,
                 base_momentum=0.85, max_momentum=0.95, div_factor=25.0,
                 final_div_factor=1e4, three_phase=False, last_epoch=-1):
        where = "OneCycleLR"
        _optimizer(where, optimizer)
        if total_steps is None:
            if epochs is None or steps_per_epoch is None:
                raise ValueError(f"{where}: give total_steps, or epochs and steps_per_epoch")
            total_steps = _integer(where, "epochs", epochs, 1) * \
                _integer(where, "steps_per_epoch", steps_per_epoch, 1)
        self.total_steps = _integer(where, "total_steps", total_steps, 1)
        pct = _number(where, "pct_start", pct_start, lambda p: 0 <= p <= 1, "in [0, 1]")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"{where}: anneal_strategy must be 'cos' or 'linear', got "
                             f"{anneal_strategy!r}")
        self.anneal_strategy = anneal_strategy
        div = _positive(where, "div_factor", div_factor)
        final = _positive(where, "final_div_factor", final_div_factor)
        groups = optimizer.param_groups
        self.max_lrs = _per_group(where, "max_lr", max_lr, groups)
        self.initial_lrs = [m / div for m in self.max_lrs]
        self.min_lrs = [i / final for i in self.initial_lrs]
        self.cycle_momentum = bool(cycle_momentum)
        self.use_beta1 = "betas" in optimizer.defaults
        if self.cycle_momentum and not self.use_beta1 and "momentum" not in optimizer.defaults:
            raise ValueError(f"{where}: cycle_momentum=True needs an optimiser with momentum "
                             f"or betas ({type(optimizer).__name__} has neither); pass "
                             f"cycle_momentum=False")
        self.max_momentums = _per_group(where, "max_momentum", max_momentum, groups)
        self.base_momentums = _per_group(where, "base_momentum", base_momentum, groups)
        # phases: (last step, lr from, lr to, momentum from, momentum to), PyTorch's steps
        up = pct * self.total_steps - 1
        if three_phase:
            self.phases = [(up, "initial", "max", "max_m", "base_m"),
                           (2 * pct * self.total_steps - 2, "max", "initial", "base_m", "max_m"),
                           (self.total_steps - 1, "initial", "min", "max_m", "max_m")]
        else:
            self.phases = [(up, "initial", "max", "max_m", "base_m"),
                           (self.total_steps - 1, "max", "min", "base_m", "max_m")]
        if last_epoch == -1:
            for g, lr in zip(groups, self.initial_lrs):
                g["initial_lr"] = lr
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        step = self.last_epoch
        if step > self.total_steps:
            raise ValueError(f"OneCycleLR: stepped {step} times, past total_steps="
                             f"{self.total_steps}")
        lrs = []
        for k, group in enumerate(self.optimizer.param_groups):
            ends = {"initial": self.initial_lrs[k], "max": self.max_lrs[k],
                    "min": self.min_lrs[k], "max_m": self.max_momentums[k],
                    "base_m": self.base_momentums[k]}
            start = 0.0
            for j, (end, lr0, lr1, m0, m1) in enumerate(self.phases):
                if step <= end or j == len(self.phases) - 1:
                    # (a phase of no steps, from a tiny pct_start: already at its end,
                    # where PyTorch divides by zero)
                    pct = (step - start) / (end - start) if end > start else 1.0
                    lrs.append(self._anneal(ends[lr0], ends[lr1], pct))
                    momentum = self._anneal(ends[m0], ends[m1], pct)
                    break
                start = end
            if self.cycle_momentum:
                if self.use_beta1:
                    group["betas"] = (momentum, *group["betas"][1:])
                else:
                    group["momentum"] = momentum
        return lrs

    def _anneal(self, start, end, pct):
        if self.anneal_strategy == "cos":
            return end + (start - end) / 2 * (math.cos(math.pi * pct) + 1)
        return (end - start) * pct + start


def _per_group(where, name, value, groups, check=_positive):
    """One number per parameter group: a list of as many, or one for all; each passes
    `check(where, name, number)` (by default: > 0)."""
    values = list(value) if isinstance(value, (list, tuple)) else [value] * len(groups)
    if len(values) != len(groups):
        raise ValueError(f"{where}: {name} has {len(values)} values for {len(groups)} "
                         f"parameter groups")
    return [check(where, name, v) for v in values]
