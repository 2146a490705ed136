"""Adamax (Kingma & Ba 2015, §7.1: Adam with the infinity norm) — PyTorch's equations, step t
counted from 1:

    g = grad + weight_decay * p                  (L2 penalty folded into the gradient)
    m = m + (1 - β1) * (g - m)                   (= β1 m + (1-β1) g, as torch's lerp)
    u = max(β2 u, |g| + eps)                     (a decaying max of |g|, instead of Adam's √v)
    p = p - lr / (1 - β1ᵗ) * m / u

u needs no bias correction: a max does not start biased towards 0 the way a mean does.
eps sits inside the max, so u > 0 from the first step.
"""
from minigrad.optim.inplace import addcdiv_, l2, lerp_
from minigrad.optim.optimizer import (Optimizer, check_betas, check_foreach, check_numbers,
                                      check_torch_only)


class Adamax(Optimizer):
    """State per parameter, under PyTorch's names: `step`, `exp_avg` (m) and `exp_inf` (u).
    `foreach` is taken for PyTorch's signature and changes nothing."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 foreach=None, *, maximize=False, differentiable=False, capturable=False):
        check_torch_only("Adamax", differentiable=differentiable, capturable=capturable)
        check_foreach("Adamax", foreach)
        betas = tuple(betas) if isinstance(betas, (list, tuple)) else betas   # checked below
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        maximize=maximize)
        super().__init__(params, defaults)

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        check_numbers("Adamax", options, where, eps=">= 0")
        check_betas("Adamax", options["betas"], where)

    def _update(self, param, g, state, group):
        p, xp = param._data, param.backend.xp
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(p)
            state["exp_inf"] = xp.zeros_like(p)
        state["step"] += 1
        beta1, beta2 = group["betas"]
        g = l2(g, p, group["weight_decay"])
        m, u, tmp = state["exp_avg"], state["exp_inf"], xp.empty_like(p)
        lerp_(xp, m, g, 1 - beta1, tmp)                  # m += (1-β1)(g - m)
        xp.abs(g, out=tmp)
        tmp += group["eps"]
        u *= beta2
        xp.maximum(u, tmp, out=u)                        # u = max(β2 u, |g| + eps)
        clr = group["lr"] / (1 - beta1 ** state["step"])
        addcdiv_(xp, p, m, u, -clr, tmp)                 # p += (-clr·m) / u
