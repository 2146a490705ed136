"""MultiplicativeLR and ChainedScheduler, PyTorch's two schedulers that work on the lr
other schedules leave, and how they fit minigrad's closed-form schedulers (schedulers.py).

    sched = ChainedScheduler([ConstantLR(opt, factor=0.1, total_iters=20),
                              ExponentialLR(opt, gamma=0.9)])
    for epoch in range(100): train(...); sched.step()
"""
from minigrad.optim.plateau import ReduceLROnPlateau
from minigrad.optim.schedulers import LRScheduler, SequentialLR, _optimizer
from minigrad.optim.swa_utils import SWALR


class MultiplicativeLR(LRScheduler):
    """Each epoch multiplies each group's lr by lr_lambda(epoch) (one function, or one per
    group): lr_e = lr_(e-1) · f(e), lr_0 = base_lr, as PyTorch's.

        sched = MultiplicativeLR(opt, lambda epoch: 0.95)

    Where PyTorch's departs from that product, this follows it: in a SequentialLR it starts
    (at its milestone) from the lr the scheduler before it left, times f(0); and built with
    last_epoch >= 0 (resuming) it keeps the groups' lrs for its first epoch. The lambdas are
    code, not state (a state dict leaves them out, as PyTorch's keeps only their objects'
    attributes, None for plain functions)."""

    _not_state = ("optimizer", "_written", "lr_lambdas", "_initial", "_via_step")

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        n = len(_optimizer("MultiplicativeLR", optimizer).param_groups)
        if isinstance(lr_lambda, (list, tuple)):
            if len(lr_lambda) != n:
                raise ValueError(f"MultiplicativeLR: expected {n} lr_lambdas (one per "
                                 f"parameter group), but got {len(lr_lambda)}")
            self.lr_lambdas = list(lr_lambda)
        else:
            self.lr_lambdas = [lr_lambda] * n
        for f in self.lr_lambdas:
            if not callable(f):
                raise TypeError(f"MultiplicativeLR: lr_lambda must be a function of the epoch "
                                f"returning a factor (or one per group), got "
                                f"{type(f).__name__} {f!r}")
        self._initial, self._via_step = True, False
        try:
            super().__init__(optimizer, last_epoch)
        finally:
            self._initial = False

    def step(self):
        self._via_step = True        # (epoch 0 by step(): a SequentialLR starting with it)
        try:
            super().step()
        finally:
            self._via_step = False

    def get_lr(self):
        groups, e = self.optimizer.param_groups, self.last_epoch
        if e == 0 and (self._initial or self._via_step):
            return list(self.base_lrs)                     # a new run: the base lrs
        if self._initial:
            return [g["lr"] for g in groups]               # resuming: the lrs as they are
        # the lrs it set last (nothing else may change them: LRScheduler.step checks), or,
        # at a SequentialLR milestone, those the scheduler before it left
        current = [g["lr"] for g in groups] if e == 0 else self._last_lr
        return [lr * f(e) for lr, f in zip(current, self.lr_lambdas)]


class ChainedScheduler(LRScheduler):
    """Several schedules at once on one optimiser: each group's lr is its base lr times
    each scheduler's factor (its own lr over the base lr) at the epoch, and one step()
    advances them all. Build the schedulers first (as for PyTorch's), then chain them.

    PyTorch's calls each scheduler's step() in turn, each multiplying the lr the one before
    left by its own change: for the schedulers that change the lr by a factor (StepLR,
    MultiStepLR, ExponentialLR, ConstantLR, LinearLR, PolynomialLR, MultiplicativeLR) that
    is this product, to rounding. Minigrad's schedulers are closed forms of the epoch, so
    chaining them is done here, not by their composing on the optimiser: the chained ones
    must not be stepped on their own. Ones that set the lr outright (LambdaLR, OneCycleLR,
    CyclicLR, CosineAnnealingWarmRestarts; CosineAnnealingLR with eta_min > 0 or past
    T_max) give the product of their schedules here, where PyTorch's result depends on
    their order in the chain; SWALR, which anneals from the lr it finds, is refused. Each
    chained scheduler's get_last_lr() is its own schedule's lr (PyTorch's: the chain's lr
    so far); a PyTorch ChainedScheduler's state dict loads."""

    _not_state = ("optimizer", "_written", "_schedulers")

    def __init__(self, schedulers, optimizer=None):
        where = "ChainedScheduler"
        schedulers = list(schedulers) if isinstance(schedulers, (list, tuple)) else None
        if not schedulers:
            raise ValueError(f"{where} expects at least one scheduler to be chained (a list), "
                             f"but got no scheduler")
        if optimizer is not None:
            _optimizer(where, optimizer)
        optimizer = optimizer or getattr(schedulers[0], "optimizer", None)
        for i, s in enumerate(schedulers):
            if isinstance(s, ReduceLROnPlateau):
                raise ValueError(f"{where} does not support `ReduceLROnPlateau` scheduler as it "
                                 f"requires a metric in `step`, but got one at index {i}")
            if isinstance(s, SWALR):     # no factor of the epoch: it anneals the lr it finds
                raise TypeError(f"{where}: schedulers[{i}] is a SWALR, which anneals from the "
                                f"lr it finds rather than scaling it, and cannot be chained; "
                                f"step it on its own once the other schedule stops (or put "
                                f"it after that one in a SequentialLR)")
            if not isinstance(s, LRScheduler) or isinstance(s, (SequentialLR,
                                                                ChainedScheduler)):
                raise TypeError(f"{where}: schedulers[{i}] must be a scheduler such as "
                                f"ExponentialLR (not a SequentialLR or ChainedScheduler), got "
                                f"{type(s).__name__}")
            if s.optimizer is not optimizer:
                raise ValueError(f"{where} expects all schedulers to belong to the same "
                                 f"optimizer, but got scheduler {type(s).__name__} at index "
                                 f"{i} with another optimizer")
        self.optimizer, self._schedulers = optimizer, schedulers
        for s in schedulers:
            s._written = None            # their last writes are no change: this one writes
        self._written = None
        self._apply_chain()

    def step(self):
        """Advance every chained scheduler one epoch and set the product of their lrs."""
        self._check_lrs_unchanged()
        for s in self._schedulers:
            s.last_epoch += 1
            s._last_lr = list(s.get_lr())            # its own schedule, not applied alone
        self._apply_chain()

    def _apply_chain(self):
        groups = self.optimizer.param_groups
        for s in self._schedulers:
            if len(s._last_lr) != len(groups):
                raise RuntimeError(f"ChainedScheduler: the optimiser has {len(groups)} "
                                   f"parameter groups, {type(s).__name__} was built for "
                                   f"{len(s._last_lr)}; after add_param_group, build new ones")
        lrs = []
        for i in range(len(groups)):
            lr = self._schedulers[0].base_lrs[i]
            for s in self._schedulers:
                base = s.base_lrs[i]
                lr = lr * (s._last_lr[i] / base) if base != 0 else 0.0 * lr
            lrs.append(lr)
        for g, lr in zip(groups, lrs):
            g["lr"] = lr
        self._last_lr, self._written = list(lrs), list(lrs)

    def state_dict(self):
        """As PyTorch's: the last lrs, and each chained scheduler's state dict."""
        return {"_last_lr": list(self._last_lr),
                "_schedulers": [s.state_dict() for s in self._schedulers]}

    def load_state_dict(self, state_dict):
        inner = state_dict.get("_schedulers")
        if not isinstance(inner, (list, tuple)) or len(inner) != len(self._schedulers):
            raise ValueError(f"ChainedScheduler.load_state_dict: expected the states of "
                             f"{len(self._schedulers)} schedulers under '_schedulers', got "
                             f"{inner!r:.80}")
        before = [s.state_dict() for s in self._schedulers]
        try:
            for s, saved in zip(self._schedulers, inner):
                s.load_state_dict(saved)
        except Exception:               # all or nothing
            for s, saved in zip(self._schedulers, before):
                s.load_state_dict(saved)
            raise
        self._last_lr = list(state_dict.get("_last_lr", [g["lr"] for g in
                                                         self.optimizer.param_groups]))
        self._own_lrs()
        self._written = None

    def _own_lrs(self):
        """Each chained scheduler's own lrs at its epoch, after a load: PyTorch's saves the
        lr of the chain so far instead. The closed forms give theirs again; the
        MultiplicativeLRs, which carry theirs in the lr, share what the others leave of the
        chain's lr (its first one all of it: only their product matters)."""
        rest = [s for s in self._schedulers if isinstance(s, MultiplicativeLR)]
        for s in self._schedulers:
            s._written = None
            if not isinstance(s, MultiplicativeLR):
                s._last_lr = list(s.get_lr())
        for s in rest:
            s._last_lr = list(s.base_lrs)
        if rest:
            first = rest[0]
            for i, total in enumerate(self._last_lr):
                base, others = first.base_lrs[i], 1.0
                for s in self._schedulers:
                    if s is not first and s.base_lrs[i] != 0:
                        others *= s._last_lr[i] / s.base_lrs[i]
                first._last_lr[i] = total / others if others != 0 else base

    def __repr__(self):
        return f"ChainedScheduler({', '.join(repr(s) for s in self._schedulers)})"
