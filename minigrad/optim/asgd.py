"""ASGD, averaged SGD (Polyak & Juditsky 1992) — PyTorch's equations, step t from 1:

    g = grad + weight_decay * p
    p = p · (1 - λ η)  then  p = p - η g          (η starts at lr)
    ax = p  while μ = 1,  else  ax = ax + μ (p - ax)
    η = lr / (1 + λ lr t)^α,   μ = 1 / max(1, t - t0)

`ax`, the running average of the iterates from step t0 on, is the estimate averaged SGD
returns; the parameters themselves follow plain SGD with a decaying rate. As PyTorch's,
η and μ are kept as numbers of the default dtype (its 0-d state tensors: float32, or
float64 after set_default_dtype), so they round alike.
"""
from minigrad.optim.nadam import _in_default_dtype as _scalar
from minigrad.optim.optimizer import Optimizer, check_foreach, check_torch_only, is_number


class ASGD(Optimizer):
    """State per parameter, under PyTorch's names: `step`, `eta`, `mu` and `ax` (the
    average). `foreach` is taken for PyTorch's signature and changes nothing."""

    def __init__(self, params, lr=1e-2, lambd=1e-4, alpha=0.75, t0=1e6, weight_decay=0,
                 foreach=None, maximize=False, differentiable=False, capturable=False):
        check_torch_only("ASGD", capturable=capturable, differentiable=differentiable)
        check_foreach("ASGD", foreach)
        defaults = dict(lr=lr, lambd=lambd, alpha=alpha, t0=t0, weight_decay=weight_decay,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        # PyTorch checks none of these; a number each, so a typo fails here, not mid-step
        for key in ("lambd", "alpha", "t0"):
            if not is_number(options[key]):
                raise TypeError(f"ASGD: {key} must be a number, got {options[key]!r} in "
                                f"{where}")

    def _update(self, param, g, state, group):
        p, xp = param._data, param.backend.xp
        lr, lambd = group["lr"], group["lambd"]
        if not state:
            state["step"] = 0
            state["eta"] = _scalar(lr)
            state["mu"] = 1.0
            state["ax"] = xp.zeros_like(p)
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * p
        eta, mu, ax = float(state["eta"]), float(state["mu"]), state["ax"]
        p *= 1 - lambd * eta
        p -= eta * g
        if mu != 1:
            tmp = xp.subtract(p, ax, out=xp.empty_like(p))
            tmp *= mu
            ax += tmp
        else:
            ax[...] = p
        t = state["step"]
        state["eta"] = _scalar(lr / ((1 + lambd * lr * t) ** group["alpha"]))
        state["mu"] = _scalar(1 / max(1, t - group["t0"]))
