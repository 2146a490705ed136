"""Learning-rate scheduler classes with PyTorch's names, arguments and counting: the base
`LRScheduler`, and `LambdaLR StepLR MultiStepLR ExponentialLR CosineAnnealingLR LinearLR
ConstantLR PolynomialLR SequentialLR` (re-exported by minigrad.optim.lr_scheduler, as
torch.optim.lr_scheduler; the cyclic ones are in cyclic.py).

    sched = CosineAnnealingLR(opt, T_max=1000)   # construction sets every lr for step 0
    for batch in data:
        loss.backward(); opt.step(); opt.zero_grad()
        sched.step()                             # then step 1, 2, ...
"""
import bisect
import math
import numbers

from minigrad.optim.optimizer import Optimizer, is_number

# bookkeeping PyTorch puts in its schedulers' state dicts; a torch state dict loads here
_TORCH_ONLY = {"_step_count", "_get_lr_called_within_step", "_is_initial", "verbose"}


def _optimizer(where, optimizer):
    if not isinstance(optimizer, Optimizer):
        raise TypeError(f"{where}: optimizer must be a minigrad Optimizer (SGD, Adam, ...), "
                        f"got {type(optimizer).__name__}")
    return optimizer


def _number(where, name, value, ok, valid):
    """`value` if it is a real number (not a bool) for which ok(value) holds (NaN never
    does); else an error that says what is `valid`."""
    if not is_number(value):
        raise TypeError(f"{where}: {name} must be a number {valid}, got {value!r}")
    if not ok(value):
        raise ValueError(f"{where}: {name} must be {valid}, got {value!r}")
    return value


def _positive(where, name, value):
    """A finite number > 0 (inf fails too, as NaN does)."""
    return _number(where, name, value, lambda x: 0 < x < math.inf, "> 0")


def _integer(where, name, value, low):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{where}: {name} must be an integer >= {low}, got {value!r}")
    if value < low:
        raise ValueError(f"{where}: {name} must be an integer >= {low}, got {value!r}")
    return int(value)


def _increasing_integers(where, milestones, low):
    """A list of strictly increasing integers >= low."""
    if isinstance(milestones, (str, bytes, dict)) or not hasattr(milestones, "__iter__"):
        raise TypeError(f"{where}: milestones must be a list of increasing integers >= {low}, "
                        f"got {milestones!r}")
    ms = [_integer(where, f"milestones[{i}]", m, low) for i, m in enumerate(milestones)]
    if any(a >= b for a, b in zip(ms, ms[1:])):
        raise ValueError(f"{where}: milestones must be strictly increasing, got {ms}")
    return ms


class LRScheduler:
    """Base class: sets each parameter group's lr to `get_lr()` at the epoch `last_epoch`.

    PyTorch's counting: construction applies epoch `last_epoch + 1` (0 for a new run), each
    `step()` the next one. `base_lrs` are the groups' `initial_lr`, written into each group
    from its lr at construction when absent (so a second scheduler, or a resumed one, starts
    from the same base, and the optimiser's state dict carries it).

    A subclass sets its hyperparameters, then calls `super().__init__`, and implements
    `get_lr()` as a closed form of `base_lrs` and `last_epoch` (PyTorch's
    `_get_closed_form_lr`). PyTorch's built-in schedulers instead multiply each group's
    current lr step by step ("chainable"); that gives the same values as long as nothing
    else changes the lr. Here a schedule is a pure function of the epoch, so resuming is
    exact, but two schedulers do not compose on one optimiser, nor does a change of the lr
    by hand: step() finds the lr it set last changed and refuses, rather than silently
    overwrite what PyTorch would compose with. To run one after another, use `SequentialLR`;
    to multiply schedules, one `LambdaLR` with the product.
    """

    # attributes a state dict leaves out; _written: the lrs this scheduler set last (None
    # after construction or a load: nothing to compare with yet)
    _not_state = ("optimizer", "_written")

    def __init__(self, optimizer, last_epoch=-1):
        where = type(self).__name__
        _optimizer(where, optimizer)
        _integer(where, "last_epoch", last_epoch, -1)
        if last_epoch == -1:
            for g in optimizer.param_groups:
                g.setdefault("initial_lr", g["lr"])
        else:
            missing = [i for i, g in enumerate(optimizer.param_groups) if "initial_lr" not in g]
            if missing:
                raise ValueError(f"{where}: last_epoch={last_epoch} resumes a schedule, which "
                                 f"needs 'initial_lr' in every parameter group (group(s) "
                                 f"{missing} have none): load the optimiser's state dict "
                                 f"first, or leave last_epoch=-1 for a new run")
        self.optimizer = optimizer
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch, self._written = last_epoch, None
        self.step()

    def get_lr(self):
        """Each group's lr at epoch `self.last_epoch` (a list, one per group)."""
        raise NotImplementedError(f"{type(self).__name__}: a scheduler implements get_lr()")

    def step(self):
        """Advance one epoch and set every group's lr (call it after optimizer.step())."""
        self._check_lrs_unchanged()
        self.last_epoch += 1
        self._apply()

    def _check_lrs_unchanged(self):
        """Refuse when a group's lr is not what this scheduler set last: another scheduler
        or a hand-written change set it, and the closed form would silently overwrite it
        (PyTorch's chainable schedulers would compose with it)."""
        for i, (g, mine) in enumerate(zip(self.optimizer.param_groups, self._written or ())):
            if g["lr"] is not mine and g["lr"] != mine:       # (`is`: a NaN lr is no change)
                raise RuntimeError(
                    f"{type(self).__name__}.step: group {i}'s lr is {g['lr']}, but this "
                    f"scheduler set it to {mine}: something else changed it (another "
                    f"scheduler, a change by hand, or the optimiser's state dict loaded "
                    f"without the scheduler's). Schedules here are closed forms of the "
                    f"epoch and do not compose as PyTorch's chainable ones: run them one "
                    f"after another with SequentialLR, multiply them in one LambdaLR, or "
                    f"load the scheduler's state dict too")

    def _apply(self):
        groups = self.optimizer.param_groups
        if len(groups) != len(self.base_lrs):
            raise RuntimeError(f"{type(self).__name__}: the optimiser has {len(groups)} "
                               f"parameter groups, the scheduler was built for "
                               f"{len(self.base_lrs)}; after add_param_group, build a new one")
        lrs = self.get_lr()
        for g, lr in zip(groups, lrs):
            g["lr"] = lr
        self._last_lr, self._written = list(lrs), list(lrs)

    def get_last_lr(self):
        """The lrs the last step() (or the construction) set, one per group."""
        return list(self._last_lr)

    def state_dict(self):
        """Every attribute but the optimiser, as PyTorch: the epoch, base_lrs, the last lrs
        and the hyperparameters (plain numbers and lists: JSON-serialisable)."""
        return {k: list(v) if isinstance(v, list) else v
                for k, v in vars(self).items() if k not in self._not_state}

    def load_state_dict(self, state_dict):
        """Restore what `state_dict()` saved (a PyTorch scheduler's state dict of the same
        class loads too, where PyTorch keeps the same names: not OneCycleLR's, whose phases
        it stores otherwise). The groups' lrs are left alone: as in PyTorch they come back
        with the optimiser's own state dict, and the next step() sets them from the epoch."""
        where = f"{type(self).__name__}.load_state_dict"
        own = self.state_dict()
        unknown = set(state_dict) - set(own) - _TORCH_ONLY - set(self._not_state)
        if unknown or "last_epoch" not in state_dict:
            raise ValueError(f"{where}: expected the state dict of a {type(self).__name__} "
                             f"(keys {sorted(own)}); got keys {sorted(state_dict)}")
        base = state_dict.get("base_lrs", self.__dict__.get("base_lrs"))
        if base is not None and len(base) != len(self.optimizer.param_groups):
            raise ValueError(f"{where}: the state has {len(base)} base lrs, the optimiser "
                             f"{len(self.optimizer.param_groups)} parameter groups")
        for k in own:
            if k in state_dict:
                v = state_dict[k]
                setattr(self, k, list(v) if isinstance(v, (list, tuple)) else v)
        if "_last_lr" not in state_dict:
            self._last_lr = [g["lr"] for g in self.optimizer.param_groups]
        self._written = None           # the optimiser's lrs may be loaded after this

    def __repr__(self):
        parts = [f"{k}={v!r}" for k, v in self.state_dict().items()
                 if not k.startswith("_") and k not in ("base_lrs", "last_epoch")]
        return f"{type(self).__name__}({', '.join(parts + [f'last_epoch={self.last_epoch}'])})"


class LambdaLR(LRScheduler):
    """lr = base_lr × lr_lambda(epoch), with one function or one per group.

        sched = LambdaLR(opt, lambda s: noam(s, 512) / noam(4000, 512))

    The lambdas are code, not state: a state dict leaves them out (rebuild them)."""

    _not_state = ("optimizer", "_written", "lr_lambdas")

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        n = len(_optimizer("LambdaLR", optimizer).param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"LambdaLR: got {len(lr_lambda)} lr_lambdas for {n} "
                                 f"parameter groups")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        for f in self.lr_lambdas:
            if not callable(f):
                raise TypeError(f"LambdaLR: lr_lambda must be a function of the step (or one "
                                f"per group) returning a factor, got {type(f).__name__} "
                                f"{f!r}")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * f(self.last_epoch) for base, f in zip(self.base_lrs, self.lr_lambdas)]


class StepLR(LRScheduler):
    """lr = base_lr · gamma^⌊epoch / step_size⌋: multiplied by gamma every step_size epochs."""

    def __init__(self, optimizer, step_size, gamma=0.1, last_epoch=-1):
        # PyTorch takes any number here, and the text classification tutorial passes 1.0:
        # a whole float is that integer; 2.5 (decays at epochs 5, 10, ...) stays refused
        if isinstance(step_size, float) and step_size.is_integer():
            step_size = int(step_size)
        self.step_size = _integer("StepLR", "step_size", step_size, 1)
        self.gamma = _positive("StepLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * self.gamma ** (self.last_epoch // self.step_size)
                for base in self.base_lrs]


class MultiStepLR(LRScheduler):
    """lr = base_lr · gamma^(number of milestones <= epoch): multiplied by gamma on reaching
    each milestone (strictly increasing epochs)."""

    def __init__(self, optimizer, milestones, gamma=0.1, last_epoch=-1):
        self.milestones = _increasing_integers("MultiStepLR", milestones, 0)
        self.gamma = _positive("MultiStepLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        k = bisect.bisect_right(self.milestones, self.last_epoch)
        return [base * self.gamma ** k for base in self.base_lrs]

    def load_state_dict(self, state_dict):
        milestones = state_dict.get("milestones")
        if isinstance(milestones, dict):    # PyTorch keeps a Counter {epoch: how many times}
            state_dict = {**state_dict, "milestones": sorted(
                m for m, count in milestones.items() for _ in range(count))}
        super().load_state_dict(state_dict)


class ExponentialLR(LRScheduler):
    """lr = base_lr · gamma^epoch: multiplied by gamma every epoch."""

    def __init__(self, optimizer, gamma, last_epoch=-1):
        self.gamma = _positive("ExponentialLR", "gamma", gamma)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        return [base * self.gamma ** self.last_epoch for base in self.base_lrs]


class CosineAnnealingLR(LRScheduler):
    """Cosine annealing from base_lr down to eta_min over T_max epochs (SGDR, Loshchilov &
    Hutter 2017, without restarts):

        lr = eta_min + (base_lr - eta_min) · (1 + cos(π · epoch / T_max)) / 2

    Past T_max the cosine goes on (back up towards base_lr at 2·T_max), as PyTorch's; to hold
    eta_min there, follow it with a constant schedule in SequentialLR, or pick T_max = the
    run's length."""

    def __init__(self, optimizer, T_max, eta_min=0.0, last_epoch=-1):
        where = "CosineAnnealingLR"
        self.T_max = _positive(where, "T_max", T_max)
        self.eta_min = _number(where, "eta_min", eta_min, lambda x: 0 <= x < math.inf, ">= 0")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        cos = (1 + math.cos(math.pi * self.last_epoch / self.T_max)) / 2
        return [self.eta_min + (base - self.eta_min) * cos for base in self.base_lrs]


class LinearLR(LRScheduler):
    """The factor on base_lr goes linearly from start_factor (epoch 0) to end_factor (epoch
    total_iters), then stays there: PyTorch's linear warmup.

        lr = base_lr · (start + (end - start) · min(epoch, total_iters) / total_iters)
    """

    def __init__(self, optimizer, start_factor=1.0 / 3, end_factor=1.0, total_iters=5,
                 last_epoch=-1):
        where = "LinearLR"
        self.start_factor = _number(where, "start_factor", start_factor,
                                    lambda x: 0 < x <= 1, "in (0, 1]")
        self.end_factor = _number(where, "end_factor", end_factor, lambda x: 0 <= x <= 1,
                                  "in [0, 1]")
        self.total_iters = _integer(where, "total_iters", total_iters, 1)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        done = min(self.last_epoch, self.total_iters) / self.total_iters
        factor = self.start_factor + (self.end_factor - self.start_factor) * done
        return [base * factor for base in self.base_lrs]


class ConstantLR(LRScheduler):
    """base_lr · factor for the first total_iters epochs, then base_lr: a constant warmup.

        lr = base_lr · (factor if epoch < total_iters else 1)

    (PyTorch's multiplies by 1/factor at total_iters, and so divides by zero for factor=0;
    here the closed form gives base_lr.)"""

    def __init__(self, optimizer, factor=1.0 / 3, total_iters=5, last_epoch=-1):
        where = "ConstantLR"
        self.factor = _number(where, "factor", factor, lambda x: 0 <= x <= 1, "in [0, 1]")
        self.total_iters = _integer(where, "total_iters", total_iters, 1)
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        factor = self.factor if self.last_epoch < self.total_iters else 1.0
        return [base * factor for base in self.base_lrs]


class PolynomialLR(LRScheduler):
    """Polynomial decay to 0 at epoch total_iters, then 0:

        lr = base_lr · (1 - min(epoch, total_iters) / total_iters) ^ power

    power = 1 (the default) is a linear decay; power = 2 falls fast, then flattens."""

    def __init__(self, optimizer, total_iters=5, power=1.0, last_epoch=-1):
        where = "PolynomialLR"
        self.total_iters = _integer(where, "total_iters", total_iters, 1)
        self.power = _number(where, "power", power, lambda x: 0 <= x < math.inf, ">= 0")
        super().__init__(optimizer, last_epoch)

    def get_lr(self):
        factor = (1.0 - min(self.total_iters, self.last_epoch) / self.total_iters) ** self.power
        return [base * factor for base in self.base_lrs]


class SequentialLR(LRScheduler):
    """Schedulers one after another: schedulers[0] until milestones[0], then schedulers[1]
    from its own epoch 0, and so on (len(milestones) = len(schedulers) - 1). PyTorch's way
    to write warmup then cosine:

        warmup = LinearLR(opt, start_factor=0.01, total_iters=100)
        cosine = CosineAnnealingLR(opt, T_max=900, eta_min=1e-5)
        sched = SequentialLR(opt, [warmup, cosine], milestones=[100])

    The schedulers are built first (each sets the lrs of its epoch 0); this one winds them
    back, as PyTorch's does, and starts the first. A SequentialLR inside another is not
    supported (PyTorch's cannot restart one at a milestone either)."""

    _not_state = ("optimizer", "_written", "_schedulers")

    def __init__(self, optimizer, schedulers, milestones):
        where = "SequentialLR"
        _optimizer(where, optimizer)
        schedulers = list(schedulers) if isinstance(schedulers, (list, tuple)) else None
        if not schedulers:
            raise ValueError(f"{where}: schedulers must be a non-empty list of schedulers")
        from minigrad.optim.chained import ChainedScheduler   # (chained.py imports this)
        for i, s in enumerate(schedulers):
            if not isinstance(s, LRScheduler) or isinstance(s, (SequentialLR,
                                                                ChainedScheduler)):
                raise TypeError(f"{where}: schedulers[{i}] must be a scheduler such as LinearLR "
                                f"or CosineAnnealingLR (not a SequentialLR or "
                                f"ChainedScheduler), got {type(s).__name__}")
            if s.optimizer is not optimizer:
                raise ValueError(f"{where}: schedulers[{i}] ({type(s).__name__}) belongs to "
                                 f"another optimiser; all must schedule this one")
        self._milestones = _increasing_integers(where, milestones, 1)
        if len(self._milestones) != len(schedulers) - 1:
            raise ValueError(f"{where}: needs one milestone fewer than schedulers (the epochs "
                             f"at which the next one takes over): got {len(schedulers)} "
                             f"schedulers and {len(self._milestones)} milestones")
        self.optimizer, self._schedulers = optimizer, schedulers
        for s in schedulers:
            s.last_epoch -= 1               # undo each one's construction step, as PyTorch
            s._written = None               # (the lrs the later ones set are no change)
        self.last_epoch, self._written = 0, None
        if hasattr(schedulers[0], "_step_count"):   # SWALR counts its steps: none yet, as
            schedulers[0]._step_count = 0          # PyTorch's resets the first one's
        schedulers[0].step()                # epoch 0 of the first
        self._last_lr = schedulers[0].get_last_lr()

    def step(self):
        """Advance one epoch: the scheduler whose span holds it steps, or, at a milestone,
        the next one starts at its epoch 0."""
        last = self._schedulers[bisect.bisect_right(self._milestones, self.last_epoch)]
        last._check_lrs_unchanged()           # nothing else changed the lrs it set last
        self.last_epoch += 1
        i = bisect.bisect_right(self._milestones, self.last_epoch)
        current = self._schedulers[i]
        if i > 0 and self._milestones[i - 1] == self.last_epoch:
            current.last_epoch = 0
            current._apply()
        else:
            current.step()
        self._last_lr = current.get_last_lr()

    def state_dict(self):
        """This one's counters, and each scheduler's own state dict under "_schedulers"."""
        return {**super().state_dict(),
                "_schedulers": [s.state_dict() for s in self._schedulers]}

    def load_state_dict(self, state_dict):
        inner = state_dict.get("_schedulers")
        if not isinstance(inner, (list, tuple)) or len(inner) != len(self._schedulers):
            raise ValueError(f"SequentialLR.load_state_dict: expected the states of "
                             f"{len(self._schedulers)} schedulers under '_schedulers', got "
                             f"{inner!r:.80}")
        before = self.state_dict()
        try:
            self._load_all(state_dict, inner)
        except Exception:             # all or nothing: an inner state that fails to load
            self._load_all(before, before["_schedulers"])   # leaves none half loaded
            raise

    def _load_all(self, state_dict, inner):
        super().load_state_dict({k: v for k, v in state_dict.items() if k != "_schedulers"})
        for s, saved in zip(self._schedulers, inner):
            s.load_state_dict(saved)
