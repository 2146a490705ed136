"""ReduceLROnPlateau, as PyTorch's: lower the learning rate when a measured quantity (the
validation loss, say) has stopped improving.

    sched = ReduceLROnPlateau(opt, factor=0.5, patience=3)
    for epoch in range(epochs):
        train(...); val_loss = evaluate(...)
        sched.step(val_loss)

Unlike the schedules in schedulers.py this is not a function of the epoch: it reacts to
the numbers it is given, so it multiplies each group's current lr (whatever set it).
"""
import math

from minigrad.args import number_arg
from minigrad.optim.schedulers import _TORCH_ONLY, _integer, _number, _optimizer


class ReduceLROnPlateau:
    """After more than `patience` steps without an improvement of the metric (by more than
    `threshold`, relative or absolute), each group's lr becomes max(lr · factor, min_lr),
    then `cooldown` steps pass before bad steps count again. `mode="max"` for a metric that
    should grow (accuracy). A change smaller than `eps` is not made."""

    def __init__(self, optimizer, mode="min", factor=0.1, patience=10, threshold=1e-4,
                 threshold_mode="rel", cooldown=0, min_lr=0.0, eps=1e-8):
        where = "ReduceLROnPlateau"
        self.optimizer = _optimizer(where, optimizer)
        if mode not in ("min", "max"):
            raise ValueError(f"{where}: mode must be 'min' or 'max', got {mode!r}")
        if threshold_mode not in ("rel", "abs"):
            raise ValueError(f"{where}: threshold_mode must be 'rel' or 'abs', got "
                             f"{threshold_mode!r}")
        self.factor = _number(where, "factor", factor, lambda f: 0 <= f < 1, "in [0, 1)")
        self.patience = _integer(where, "patience", patience, 0)
        self.cooldown = _integer(where, "cooldown", cooldown, 0)
        self.threshold = _number(where, "threshold", threshold, lambda t: t >= 0, ">= 0")
        self.eps = _number(where, "eps", eps, lambda e: e >= 0, ">= 0")
        groups = optimizer.param_groups
        min_lrs = list(min_lr) if isinstance(min_lr, (list, tuple)) else [min_lr] * len(groups)
        if len(min_lrs) != len(groups):
            raise ValueError(f"{where}: min_lr has {len(min_lrs)} values for "
                             f"{len(groups)} parameter groups")
        self.min_lrs = [_number(where, "min_lr", m, lambda m: m >= 0, ">= 0") for m in min_lrs]
        # one min_lr for all: it also serves groups added later (PyTorch's default_min_lr)
        self.default_min_lr = None if isinstance(min_lr, (list, tuple)) else self.min_lrs[0]
        self.mode, self.threshold_mode = mode, threshold_mode
        self.mode_worse = math.inf if mode == "min" else -math.inf
        self.best, self.num_bad_epochs, self.cooldown_counter = self.mode_worse, 0, 0
        self.last_epoch = 0
        self._last_lr = [g["lr"] for g in groups]

    def is_better(self, a, best):
        """Whether metric a improves on best by more than the threshold."""
        if self.mode == "min":
            return a < (best * (1 - self.threshold) if self.threshold_mode == "rel"
                        else best - self.threshold)
        return a > (best * (1 + self.threshold) if self.threshold_mode == "rel"
                    else best + self.threshold)

    def step(self, metrics):
        """Take this epoch's metric (a number or a one-element tensor) and lower the lrs
        if it has not improved for more than `patience` steps."""
        current = float(number_arg("ReduceLROnPlateau.step", "metrics", metrics))
        self.last_epoch += 1
        if self.is_better(current, self.best):
            self.best, self.num_bad_epochs = current, 0
        else:
            self.num_bad_epochs += 1
        if self.cooldown_counter > 0:            # bad steps do not count while cooling down
            self.cooldown_counter -= 1
            self.num_bad_epochs = 0
        groups = self.optimizer.param_groups
        if len(groups) != len(self.min_lrs):
            if self.default_min_lr is None:
                raise RuntimeError(f"ReduceLROnPlateau: the optimiser has {len(groups)} "
                                   f"parameter groups, the scheduler's min_lr list has "
                                   f"{len(self.min_lrs)} values; after add_param_group, build "
                                   f"a new one (or give one min_lr for all groups)")
            self.min_lrs = [self.default_min_lr] * len(groups)
        if self.num_bad_epochs > self.patience:
            for g, floor in zip(groups, self.min_lrs):
                new = max(g["lr"] * self.factor, floor)
                if g["lr"] - new > self.eps:
                    g["lr"] = new
            self.cooldown_counter, self.num_bad_epochs = self.cooldown, 0
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def get_last_lr(self):
        return list(self._last_lr)

    def state_dict(self):
        """Every attribute but the optimiser, as PyTorch (a torch state dict loads too)."""
        return {k: list(v) if isinstance(v, list) else v
                for k, v in vars(self).items() if k != "optimizer"}

    def load_state_dict(self, state_dict):
        own = self.state_dict()
        unknown = set(state_dict) - set(own) - _TORCH_ONLY - {"_init_is_better"}
        if unknown or "best" not in state_dict:
            raise ValueError(f"ReduceLROnPlateau.load_state_dict: expected the state dict of "
                             f"a ReduceLROnPlateau (keys {sorted(own)}); got keys "
                             f"{sorted(state_dict)}")
        for k in own:
            if k in state_dict:
                v = state_dict[k]
                setattr(self, k, list(v) if isinstance(v, (list, tuple)) else v)
