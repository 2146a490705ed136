"""Adadelta (Zeiler 2012) — PyTorch's equations:

    g = grad + weight_decay * p                  (L2 penalty folded into the gradient)
    v = ρ v + (1 - ρ) g²                         (running mean of squared gradients)
    Δ = √(a + eps) / √(v + eps) · g              (a: running mean of squared updates)
    a = ρ a + (1 - ρ) Δ²
    p = p - lr * Δ

The step's units are the parameter's own: the root mean square of past updates over that of
past gradients, so lr = 1 (the default) is a sensible value, and no schedule is needed to
make the steps shrink.
"""
from minigrad.optim.inplace import addcmul_, l2
from minigrad.optim.optimizer import (Optimizer, check_foreach, check_numbers,
                                      check_torch_only)


class Adadelta(Optimizer):
    """State per parameter, under PyTorch's names: `step`, `square_avg` (v) and `acc_delta`
    (a). `foreach` is taken for PyTorch's signature and changes nothing."""

    def __init__(self, params, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0, foreach=None, *,
                 capturable=False, maximize=False, differentiable=False):
        check_torch_only("Adadelta", capturable=capturable, differentiable=differentiable)
        check_foreach("Adadelta", foreach)
        defaults = dict(lr=lr, rho=rho, eps=eps, weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        check_numbers("Adadelta", options, where, rho="in [0, 1]", eps=">= 0")

    def _update(self, param, g, state, group):
        p, xp = param._data, param.backend.xp
        if not state:
            state["step"] = 0
            state["square_avg"] = xp.zeros_like(p)
            state["acc_delta"] = xp.zeros_like(p)
        state["step"] += 1
        rho, eps = group["rho"], group["eps"]
        g = l2(g, p, group["weight_decay"])
        v, a, tmp = state["square_avg"], state["acc_delta"], xp.empty_like(p)
        v *= rho
        addcmul_(xp, v, g, g, 1 - rho, tmp)              # v = ρv + (1-ρ)g²
        std = xp.add(v, eps, out=tmp)
        xp.sqrt(std, out=std)                            # √(v + eps)
        delta = xp.add(a, eps, out=xp.empty_like(p))
        xp.sqrt(delta, out=delta)
        delta /= std
        delta *= g                                       # Δ = √(a + eps) / √(v + eps) · g
        a *= rho
        addcmul_(xp, a, delta, delta, 1 - rho, tmp)      # a = ρa + (1-ρ)Δ²
        delta *= -group["lr"]
        p += delta                                       # p -= lr·Δ
