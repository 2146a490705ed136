"""Learning-rate schedules as plain functions of the step (what nanoGPT does), and
`LambdaLR`, PyTorch's wrapper that sets every group's lr to base_lr × lr_lambda(epoch).

    for it in range(max_steps):
        set_lr(optimizer, warmup_cosine(it, max_lr=6e-4, min_lr=6e-5,
                                        warmup_steps=200, decay_steps=5000))
        ...
"""
import math


def warmup_cosine(step, max_lr, min_lr, warmup_steps, decay_steps):
    """nanoGPT's get_lr: linear warmup to max_lr over `warmup_steps` steps, cosine decay
    to `min_lr` at step `decay_steps`, then `min_lr`.

        step < warmup:  max_lr (step + 1) / (warmup + 1)
        step > decay:   min_lr
        otherwise:      min_lr + ½(1 + cos(π r))(max_lr - min_lr),  r = (step-warmup)/(decay-warmup)
    """
    if warmup_steps < 0:
        raise ValueError(f"warmup_cosine: warmup_steps must be >= 0, got {warmup_steps}")
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
    if not warmup_steps > 0 or not d_model > 0:
        raise ValueError(f"noam: d_model and warmup_steps must be positive, got {d_model}, "
                         f"{warmup_steps}")
    step = max(step, 1)
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


def step_decay(step, base_lr, step_size, gamma=0.1):
    """base_lr · gamma^(step // step_size), as PyTorch's StepLR."""
    if step_size <= 0 or step < 0:
        raise ValueError(f"step_decay: needs step_size > 0 and step >= 0, got step_size="
                         f"{step_size}, step={step}")
    return base_lr * gamma ** (step // step_size)


def set_lr(optimizer, lr):
    """Set every parameter group's learning rate to `lr`."""
    if not lr >= 0:
        raise ValueError(f"set_lr: the learning rate must be >= 0, got {lr}")
    for g in optimizer.param_groups:
        g["lr"] = lr


class LambdaLR:
    """Each group's lr = its initial lr × lr_lambda(epoch) (one function, or one per group),
    with PyTorch's counting: construction applies epoch 0, each step() advances one.

        sched = LambdaLR(opt, lambda s: noam(s, 512) / noam(4000, 512))
        for batch in data: ...; opt.step(); sched.step()
    """

    def __init__(self, optimizer, lr_lambda, last_epoch=-1):
        self.optimizer = optimizer
        n = len(optimizer.param_groups)
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
        for g in optimizer.param_groups:
            g.setdefault("initial_lr", g["lr"])  # kept in the group, as PyTorch
        self.base_lrs = [g["initial_lr"] for g in optimizer.param_groups]
        self.last_epoch = last_epoch
        self.step()

    def get_lr(self):
        return [base * f(self.last_epoch) for base, f in zip(self.base_lrs, self.lr_lambdas)]

    def step(self):
        self.last_epoch += 1
        for g, lr in zip(self.optimizer.param_groups, self.get_lr()):
            g["lr"] = lr
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]

    def get_last_lr(self):
        return list(self._last_lr)

    def state_dict(self):
        """The counters (the lambdas are code, not state; rebuild them)."""
        return {"last_epoch": self.last_epoch, "base_lrs": list(self.base_lrs)}

    def load_state_dict(self, state_dict):
        self.last_epoch = state_dict["last_epoch"]
        self.base_lrs = list(state_dict["base_lrs"])
        self._last_lr = [g["lr"] for g in self.optimizer.param_groups]
