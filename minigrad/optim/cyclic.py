"""The cyclic schedules, as PyTorch's: CosineAnnealingWarmRestarts (SGDR, Loshchilov & Hutter
2017: cosine annealing restarted every T_i epochs, each period T_mult times the last) and
CyclicLR (Smith 2017, "Cyclical Learning Rates": the lr goes up and down between base_lr
and max_lr, the momentum the other way). Both are usually stepped once per batch.

    sched = CyclicLR(opt, base_lr=1e-4, max_lr=1e-2, step_size_up=500, mode="triangular2")
    for x, y in loader: ...; opt.step(); sched.step()
"""
import math

from minigrad.optim.one_cycle import _per_group
from minigrad.optim.schedulers import LRScheduler, _integer, _number, _optimizer, _positive


def _non_negative(where, name, value):
    return _number(where, name, value, lambda x: 0 <= x < math.inf, ">= 0")


class CosineAnnealingWarmRestarts(LRScheduler):
    """lr = eta_min + (base_lr - eta_min) · (1 + cos(π · T_cur / T_i)) / 2, where T_cur counts
    the epochs since the last restart and T_i is the current period: T_0 first, then
    T_0·T_mult, T_0·T_mult², ... `T_cur` and `T_i` are state, under PyTorch's names.

    As PyTorch's, `step(epoch)` also takes an epoch, fractional ones too (per batch:
    step(epoch + i / len(loader))), and a plain step() then goes on from it by one."""

    def __init__(self, optimizer, T_0, T_mult=1, eta_min=0.0, last_epoch=-1):
        where = "CosineAnnealingWarmRestarts"
        self.T_0 = _integer(where, "T_0", T_0, 1)
        self.T_mult = _integer(where, "T_mult", T_mult, 1)
        self.eta_min = _non_negative(where, "eta_min", eta_min)
        # where the construction's step() goes on from: epoch last_epoch (PyTorch starts from
        # T_cur = last_epoch in the first period, wrong past it when T_mult > 1)
        self.T_cur, self.T_i = -1, self.T_0
        if _integer(where, "last_epoch", last_epoch, -1) >= 0:
            self.T_cur, self.T_i = self._position(last_epoch)
        super().__init__(optimizer, last_epoch)

    def _position(self, epoch):
        """(T_cur, T_i) at `epoch`: the epochs since the last restart, and the period."""
        if self.T_mult == 1:
            return epoch % self.T_0, self.T_0
        t_cur, t_i = epoch, self.T_0
        while t_cur >= t_i:          # exact: whole periods subtracted one by one
            t_cur, t_i = t_cur - t_i, t_i * self.T_mult
        return t_cur, t_i

    def get_lr(self):
        cos = 1 + math.cos(math.pi * self.T_cur / self.T_i)
        return [self.eta_min + (base - self.eta_min) * cos / 2 for base in self.base_lrs]

    def step(self, epoch=None):
        """The next epoch, or `epoch` (a number >= 0, fractional or not)."""
        self._check_lrs_unchanged()
        if epoch is None and self.last_epoch < 0:
            epoch = 0
        if epoch is None:
            self.last_epoch += 1
            self.T_cur += 1
            if self.T_cur >= self.T_i:                   # a restart
                self.T_cur, self.T_i = self.T_cur % self.T_i, self.T_i * self.T_mult
        else:
            _non_negative(f"{type(self).__name__}.step", "epoch", epoch)
            self.T_cur, self.T_i = self._position(epoch)
            self.last_epoch = math.floor(epoch)
        self._apply()


class CyclicLR(LRScheduler):
    """The lr cycles between base_lr and max_lr: up over step_size_up steps, down over
    step_size_down (default: as many), each cycle's amplitude scaled by the mode:

        triangular   the same every cycle
        triangular2  halved each cycle
        exp_range    times gamma^step (scale_mode "iterations")

    or by `scale_fn(x)` of the cycle (from 1) or of the step, as `scale_mode` says. With
    cycle_momentum (the default) the momentum (SGD's, RMSprop's) or beta1 (Adam's and its
    kin) cycles the other way, from max_momentum down to base_momentum and back.

    As PyTorch's, construction sets each group's lr to base_lr (and momentum to max_momentum),
    `base_lrs` are these base_lr (not the groups' initial_lr), and a state dict leaves out
    scale_fn (code, not state: rebuild it)."""

    _not_state = ("optimizer", "_written", "_scale_fn_custom")

    def __init__(self, optimizer, base_lr, max_lr, step_size_up=2000, step_size_down=None,
                 mode="triangular", gamma=1.0, scale_fn=None, scale_mode="cycle",
                 cycle_momentum=True, base_momentum=0.8, max_momentum=0.9, last_epoch=-1):
        where = "CyclicLR"
        groups = _optimizer(where, optimizer).param_groups
        _integer(where, "last_epoch", last_epoch, -1)
        base_lrs = _per_group(where, "base_lr", base_lr, groups, _non_negative)
        self.max_lrs = _per_group(where, "max_lr", max_lr, groups, _non_negative)
        up = float(_positive(where, "step_size_up", step_size_up))
        down = up if step_size_down is None else \
            float(_non_negative(where, "step_size_down", step_size_down))
        self.total_size = up + down
        self.step_ratio = up / self.total_size
        if scale_fn is None and mode not in ("triangular", "triangular2", "exp_range"):
            raise ValueError(f"{where}: mode must be 'triangular', 'triangular2' or "
                             f"'exp_range' (or give scale_fn), got {mode!r}")
        if scale_fn is not None and not callable(scale_fn):
            raise TypeError(f"{where}: scale_fn must be a function of one number, or None; "
                            f"got {type(scale_fn).__name__}")
        if scale_fn is not None and scale_mode not in ("cycle", "iterations"):
            raise ValueError(f"{where}: scale_mode must be 'cycle' or 'iterations', got "
                             f"{scale_mode!r}")     # (read only with scale_fn, as PyTorch)
        # gamma 0 is PyTorch's too (exp_range then stays at base_lr); a negative one would
        # take fractional powers of a negative number
        self.mode, self.gamma = mode, _non_negative(where, "gamma", gamma)
        self._scale_fn_custom = scale_fn
        if scale_fn is None:             # each mode's own, as PyTorch
            scale_mode = "iterations" if mode == "exp_range" else "cycle"
        self.scale_mode = scale_mode
        if cycle_momentum not in (True, False):
            raise TypeError(f"{where}: cycle_momentum must be True or False, got "
                            f"{cycle_momentum!r}")
        self.cycle_momentum = cycle_momentum
        if cycle_momentum:
            if "momentum" not in optimizer.defaults and "betas" not in optimizer.defaults:
                raise ValueError(f"{where}: cycle_momentum=True needs an optimiser with "
                                 f"momentum or betas ({type(optimizer).__name__} has "
                                 f"neither); pass cycle_momentum=False")
            self.use_beta1 = "betas" in optimizer.defaults
            self.base_momentums = _per_group(where, "base_momentum", base_momentum, groups,
                                             _non_negative)
            self.max_momentums = _per_group(where, "max_momentum", max_momentum, groups,
                                            _non_negative)
            if last_epoch == -1:
                for g, top, bottom in zip(groups, self.max_momentums, self.base_momentums):
                    self._set_momentum(g, top)
                    g["max_momentum"], g["base_momentum"] = top, bottom
        if last_epoch == -1:
            for g, lr in zip(groups, base_lrs):
                g["lr"] = lr
        super().__init__(optimizer, last_epoch)
        if self.base_lrs != base_lrs:    # an initial_lr an earlier scheduler left
            self.base_lrs = base_lrs
            self._apply()

    def scale_fn(self, x):
        """The amplitude's factor at x (the cycle, from 1, or the step)."""
        if self._scale_fn_custom is not None:
            return self._scale_fn_custom(x)
        if self.mode == "triangular":
            return 1.0
        if self.mode == "triangular2":
            return 1 / (2.0 ** (x - 1))
        return self.gamma ** x

    def get_lr(self):
        cycle = math.floor(1 + self.last_epoch / self.total_size)
        x = 1.0 + self.last_epoch / self.total_size - cycle      # where in the cycle, [0, 1)
        if x <= self.step_ratio:
            scale = x / self.step_ratio                          # rising
        else:
            scale = (x - 1) / (self.step_ratio - 1)              # falling
        factor = self.scale_fn(cycle if self.scale_mode == "cycle" else self.last_epoch)
        lrs = [base + (top - base) * scale * factor
               for base, top in zip(self.base_lrs, self.max_lrs)]
        if self.cycle_momentum:
            for g, bottom, top in zip(self.optimizer.param_groups, self.base_momentums,
                                      self.max_momentums):
                self._set_momentum(g, top - (top - bottom) * scale * factor)
        return lrs

    def _set_momentum(self, group, momentum):
        if self.use_beta1:
            group["betas"] = (momentum, *group["betas"][1:])
        else:
            group["momentum"] = momentum

    def state_dict(self):
        # PyTorch's has the entry (None for a function), and its load_state_dict needs it
        return {**super().state_dict(), "_scale_fn_custom": None}

    def load_state_dict(self, state_dict):
        super().load_state_dict({k: v for k, v in state_dict.items()
                                 if k != "_scale_fn_custom"})
