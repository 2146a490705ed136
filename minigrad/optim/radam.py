"""RAdam (Liu et al. 2020, "On the Variance of the Adaptive Learning Rate and Beyond") —
PyTorch's equations, step t counted from 1:

    g = grad + weight_decay * p          (L2 penalty), or with decoupled_weight_decay=True
    p = p * (1 - lr * weight_decay)       instead (the weights decayed, as AdamW)
    m = m + (1 - β1)(g - m)              (as torch's lerp)
    v = β2 v + (1 - β2) g²
    ρ∞ = 2 / (1 - β2) - 1,   ρₜ = ρ∞ - 2 t β2ᵗ / (1 - β2ᵗ)
    ρₜ > 5:  p = p - m / (1 - β1ᵗ) · lr · √(1 - β2ᵗ) / (√v + eps) · rₜ,
             rₜ = √((ρₜ - 4)(ρₜ - 2) ρ∞ / ((ρ∞ - 4)(ρ∞ - 2) ρₜ))
    else:    p = p - m / (1 - β1ᵗ) · lr   (momentum SGD while v has too few samples)

In the first steps v estimates the gradient's variance from too few samples for √v to be
trusted: RAdam steps without it until ρₜ, the length of the moving average, passes 5, and
then scales the adaptive step by rₜ, which rises towards 1 — a warmup derived, not tuned.
"""
from minigrad.optim.inplace import adam_moments_, weight_decayed
from minigrad.optim.optimizer import (Optimizer, check_betas, check_flags, check_foreach,
                                      check_numbers, check_torch_only)


class RAdam(Optimizer):
    """State per parameter, under PyTorch's names: `step`, `exp_avg` (m) and `exp_avg_sq`
    (v). `foreach` is taken for PyTorch's signature and changes nothing."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 decoupled_weight_decay=False, *, foreach=None, maximize=False,
                 capturable=False, differentiable=False):
        check_torch_only("RAdam", capturable=capturable, differentiable=differentiable)
        check_foreach("RAdam", foreach)
        betas = tuple(betas) if isinstance(betas, (list, tuple)) else betas   # checked below
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        check_numbers("RAdam", options, where, eps=">= 0")
        check_betas("RAdam", options["betas"], where)
        check_flags("RAdam", options, where, "decoupled_weight_decay")

    def _update(self, param, g, state, group):
        p, xp = param._data, param.backend.xp
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(p)
            state["exp_avg_sq"] = xp.zeros_like(p)
        state["step"] += 1
        t, lr, wd = state["step"], group["lr"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        g = weight_decayed(p, g, lr, wd, group["decoupled_weight_decay"])
        m, v, tmp = state["exp_avg"], state["exp_avg_sq"], xp.empty_like(p)
        adam_moments_(xp, m, v, g, group["betas"], tmp)
        bias_correction1, bias_correction2 = 1 - beta1 ** t, 1 - beta2 ** t
        rho_inf = 2 / (1 - beta2) - 1
        rho_t = rho_inf - 2 * t * (beta2 ** t) / bias_correction2
        xp.divide(m, bias_correction1, out=tmp)
        tmp *= lr                                        # m / (1-β1ᵗ) · lr
        if rho_t > 5.0:
            rect = ((rho_t - 4) * (rho_t - 2) * rho_inf /
                    ((rho_inf - 4) * (rho_inf - 2) * rho_t)) ** 0.5
            adaptive = xp.sqrt(v, out=xp.empty_like(p))
            adaptive += group["eps"]
            xp.divide(1.0, adaptive, out=adaptive)       # PyTorch's c / x is (1/x)·c
            adaptive *= bias_correction2 ** 0.5          # √(1-β2ᵗ) / (√v + eps)
            tmp *= adaptive
            tmp *= rect
        p -= tmp
