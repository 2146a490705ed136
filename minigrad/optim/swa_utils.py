"""Weight averaging, as torch.optim.swa_utils: `AveragedModel` keeps a running average of a
model's weights (SWA, Izmailov et al. 2018: the plain mean of the weights along the end of
training; or an exponential moving average, EMA), `SWALR` anneals the lr to a constant for
that phase, and `update_bn` recomputes BatchNorm statistics for the averaged weights.

    swa_model = AveragedModel(model)              # or AveragedModel(model,
    swa_sched = SWALR(opt, swa_lr=0.05)           #   multi_avg_fn=get_ema_multi_avg_fn(0.999))
    for epoch in range(epochs):
        train_one_epoch(model, loader, opt)
        if epoch >= swa_start:
            swa_model.update_parameters(model); swa_sched.step()
    update_bn(loader, swa_model)                  # then evaluate swa_model
"""
import copy
import math
import numbers

from minigrad import backend
from minigrad.autograd import no_grad
from minigrad.creation import tensor as _tensor
from minigrad.nn.batchnorm import _BatchNorm
from minigrad.nn.module import Module
from minigrad.nn.normalization import _InstanceNorm
from minigrad.optim.inplace import lerp_
from minigrad.optim.optimizer import is_number
from minigrad.optim.schedulers import LRScheduler, _optimizer

__all__ = ["AveragedModel", "update_bn", "SWALR", "get_ema_multi_avg_fn",
           "get_swa_multi_avg_fn", "get_ema_avg_fn", "get_swa_avg_fn"]


def _check_decay(decay):
    if not is_number(decay) or not 0.0 <= decay <= 1.0:
        raise ValueError(f"Invalid decay value {decay} provided. Please provide a value in "
                         f"[0,1] range.")


def _set(t, array):
    """t's values become `array` (cast to t's dtype: an integer buffer truncates, as
    PyTorch's copy_), counted as an in-place change."""
    t._data[...] = array.astype(t.dtype, copy=False) if hasattr(array, "astype") else array
    t._version_counter[0] += 1


def _is_float(t):
    return t.backend.xp.issubdtype(t.dtype, t.backend.xp.floating)


def get_ema_multi_avg_fn(decay=0.999):
    """An in-place EMA update of lists of tensors: ema ← ema + (1 - decay)(p - ema) (as
    torch's lerp; integer tensors: ema·decay + p·(1 - decay), truncated)."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param_list, current_param_list, _):
        for e, p in zip(ema_param_list, current_param_list, strict=True):
            xp = e.backend.xp
            if _is_float(e):
                lerp_(xp, e._data, p._data, 1 - decay, xp.empty_like(e._data))
                e._version_counter[0] += 1
            else:
                _set(e, e._data * decay + p._data * (1 - decay))
    return ema_update


def get_swa_multi_avg_fn():
    """An in-place equal-weight running mean of lists of tensors: avg ← avg + (p - avg) /
    (n + 1), as torch's lerp with weight 1/(n + 1) (integer tensors: truncated)."""
    @no_grad()
    def swa_update(averaged_param_list, current_param_list, num_averaged):
        n = int(num_averaged)
        for a, p in zip(averaged_param_list, current_param_list, strict=True):
            xp = a.backend.xp
            if _is_float(a):
                lerp_(xp, a._data, p._data, 1 / (n + 1), xp.empty_like(a._data))
                a._version_counter[0] += 1
            else:
                _set(a, a._data + (p._data - a._data) / (n + 1))
    return swa_update


def get_ema_avg_fn(decay=0.999):
    """EMA of one tensor: returns decay·ema + (1 - decay)·p."""
    _check_decay(decay)

    @no_grad()
    def ema_update(ema_param, current_param, num_averaged):
        return decay * ema_param + (1 - decay) * current_param
    return ema_update


def get_swa_avg_fn():
    """Equal-weight running mean of one tensor: returns avg + (p - avg) / (n + 1)."""
    @no_grad()
    def swa_update(averaged_param, current_param, num_averaged):
        return averaged_param + (current_param - averaged_param) / (num_averaged + 1)
    return swa_update


class AveragedModel(Module):
    """A copy of `model` (on `device`, if given) whose parameters are a running average
    of the model's, updated by `update_parameters(model)`; calling it runs the copy.

    avg_fn(averaged, current, n_averaged) returns one tensor's new average; multi_avg_fn
    (averaged list, current list, n_averaged) updates lists in place; neither: the equal
    weight mean (SWA). The first update copies the model's values. use_buffers=True
    averages the buffers too (BatchNorm's running statistics); otherwise they are copied
    from the model at each update. The state dict holds `n_averaged` (an int64 count, a
    buffer) and the copy's own under "module.", as PyTorch's (the functions are code, not
    state)."""

    def __init__(self, model, device=None, avg_fn=None, multi_avg_fn=None, use_buffers=False):
        super().__init__()
        if avg_fn is not None and multi_avg_fn is not None:
            raise ValueError("AveragedModel: only one of avg_fn and multi_avg_fn should be "
                             "provided")
        if not isinstance(model, Module):
            raise TypeError(f"AveragedModel: model must be a Module, got "
                            f"{type(model).__name__}")
        for name, fn in (("avg_fn", avg_fn), ("multi_avg_fn", multi_avg_fn)):
            if fn is not None and not callable(fn):
                raise TypeError(f"AveragedModel: {name} must be a function, got "
                                f"{type(fn).__name__}")
        self.module = copy.deepcopy(model)
        if device is not None:
            self.module = self.module.to(device)
        self.register_buffer("n_averaged", _tensor(0, dtype=backend.int64, device=device))
        self.avg_fn, self.multi_avg_fn, self.use_buffers = avg_fn, multi_avg_fn, use_buffers

    def forward(self, *args, **kwargs):
        return self.module(*args, **kwargs)

    @no_grad()
    def update_parameters(self, model):
        """Average `model`'s current parameters (and buffers, with use_buffers) in."""
        mine = list(self.module.parameters())
        theirs = list(model.parameters())
        if self.use_buffers:
            mine += list(self.module.buffers())
            theirs += list(model.buffers())
        pairs = [(a.detach(), p.detach().to(a.device)) for a, p in zip(mine, theirs)]
        n = int(self.n_averaged)
        if n == 0:
            for a, p in pairs:
                _set(a, p._data)
        elif self.avg_fn is not None:
            for a, p in pairs:
                _set(a, self.avg_fn(a, p, self.n_averaged.to(a.device))._data)
        else:
            # by device and dtype, as PyTorch's groups them for multi_avg_fn
            groups = {}
            for a, p in pairs:
                groups.setdefault((str(a.device), str(a.dtype)), []).append((a, p))
            fn = self.multi_avg_fn
            for group in groups.values():
                avg, cur = [a for a, _ in group], [p for _, p in group]
                if fn is not None:
                    fn(avg, cur, self.n_averaged.to(avg[0].device))
                else:            # PyTorch's CPU path: the one-tensor SWA mean, per tensor
                    swa = get_swa_avg_fn()
                    for a, p in group:
                        _set(a, swa(a, p, self.n_averaged.to(a.device))._data)
        if not self.use_buffers:
            own, other = list(self.module.buffers()), list(model.buffers())
            if len(own) != len(other):
                raise ValueError(f"AveragedModel.update_parameters: the model has "
                                 f"{len(other)} buffers, the averaged copy {len(own)}")
            for b, src in zip(own, other):
                _set(b, src.detach().to(b.device)._data)
        self.n_averaged.add_(1)


@no_grad()
def update_bn(loader, model, device=None):
    """One pass over `loader` in training mode to recompute every BatchNorm layer's running
    mean and variance as the plain average over the batches (their momentum set to None for
    the pass, then restored); the model's mode is restored too. A batch is a tensor, or a
    list or tuple whose first item is the input. InstanceNorm layers are left alone, as
    PyTorch's (they are no BatchNorm there)."""
    momenta = {}
    for module in model.modules():
        if isinstance(module, _BatchNorm) and not isinstance(module, _InstanceNorm):
            module.reset_running_stats()
            momenta[module] = module.momentum
    if not momenta:
        return
    was_training = model.training
    model.train()
    for module in momenta:
        module.momentum = None
    try:
        for batch in loader:
            if isinstance(batch, (list, tuple)):
                batch = batch[0]
            if device is not None:
                batch = batch.to(device)
            model(batch)
    finally:
        for module, momentum in momenta.items():
            module.momentum = momentum
        model.train(was_training)


class SWALR(LRScheduler):
    """Anneals each group's lr from where it is when this scheduler starts stepping to
    `swa_lr` (one number, or one per group) over `anneal_epochs` epochs, by a cosine
    ("cos") or a line ("linear"), then holds it there; as PyTorch's:

        α = anneal(min(1, step / max(1, anneal_epochs))),   lr = α · swa_lr + (1 - α) · lr₀

    Unlike minigrad's other schedulers it takes over the lr that another schedule left
    (lr₀, worked back from the group's lr each step as PyTorch's does), so it may follow one
    that stepped before it on the same optimiser. Each group gets a "swa_lr" entry."""

    def __init__(self, optimizer, swa_lr, anneal_epochs=10, anneal_strategy="cos",
                 last_epoch=-1):
        groups = _optimizer("SWALR", optimizer).param_groups
        if isinstance(swa_lr, (list, tuple)):
            if len(swa_lr) != len(groups):
                raise ValueError(f"swa_lr must have the same length as optimizer.param_groups. "
                                 f"swa_lr has {len(swa_lr)} values, param_groups has "
                                 f"{len(groups)}.")
            swa_lrs = list(swa_lr)
        else:
            swa_lrs = [swa_lr] * len(groups)
        for v in swa_lrs:
            if not is_number(v):
                raise TypeError(f"SWALR: swa_lr must be a number (or one per group), got "
                                f"{v!r}")
        if anneal_strategy not in ("cos", "linear"):
            raise ValueError(f"anneal_strategy must be one of 'cos' or 'linear', instead got "
                             f"{anneal_strategy}")
        if isinstance(anneal_epochs, bool) or not isinstance(anneal_epochs, numbers.Integral) \
                or anneal_epochs < 0:
            raise ValueError(f"anneal_epochs must be equal or greater than 0, got "
                             f"{anneal_epochs}")
        for v, g in zip(swa_lrs, groups):
            g["swa_lr"] = v
        self._anneal_strategy, self.anneal_epochs = anneal_strategy, int(anneal_epochs)
        self._step_count = 0
        super().__init__(optimizer, last_epoch)

    def anneal_func(self, t):
        return (1 - math.cos(math.pi * t)) / 2 if self._anneal_strategy == "cos" else t

    def step(self):
        """Advance one epoch (no check that the lrs are those it set: it continues from
        whatever lr the groups have, as PyTorch's)."""
        self._step_count += 1
        self.last_epoch += 1
        self._apply()

    def get_lr(self):
        step = self._step_count - 1
        if self.anneal_epochs == 0:
            step = max(1, step)
        prev_alpha = self.anneal_func(max(0, min(1, (step - 1) / max(1, self.anneal_epochs))))
        alpha = self.anneal_func(max(0, min(1, step / max(1, self.anneal_epochs))))
        lrs = []
        for g in self.optimizer.param_groups:
            # the lr before annealing, worked back from the one the last step set
            start = g["swa_lr"] if prev_alpha == 1 else \
                (g["lr"] - prev_alpha * g["swa_lr"]) / (1 - prev_alpha)
            lrs.append(g["swa_lr"] * alpha + start * (1 - alpha))
        return lrs
