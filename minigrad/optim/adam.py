"""Adam and AdamW — PyTorch's equations, step t counted from 1:

    g = grad + weight_decay * p          (Adam: L2 penalty folded into the gradient)
    p = p * (1 - lr * weight_decay)      (AdamW: decoupled weight decay, instead)
    m = m + (1 - β1) * (g - m)           (= β1 m + (1-β1) g, as torch's lerp)
    v = β2 v + (1 - β2) g²
    p = p - lr / (1 - β1ᵗ) * m / (√v / √(1 - β2ᵗ) + eps)
"""
from minigrad.optim.optimizer import Optimizer


class Adam(Optimizer):
    """Adam (Kingma & Ba). `decoupled_weight_decay=True` makes it AdamW, as in PyTorch."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 decoupled_weight_decay=False):
        defaults = dict(lr=lr, betas=tuple(betas), eps=eps, weight_decay=weight_decay,
                        decoupled_weight_decay=decoupled_weight_decay)
        super().__init__(params, defaults)

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        name = type(self).__name__
        betas = options["betas"]
        if len(betas) != 2 or not all(0.0 <= b < 1.0 for b in betas):
            raise ValueError(f"{name}: invalid betas {tuple(betas)} in {where} (each must be "
                             f"in [0, 1))")
        if options["eps"] < 0:
            raise ValueError(f"{name}: invalid eps {options['eps']} in {where} (must be >= 0)")

    def _update(self, param, g, state, group):
        p, xp = param.data, param.backend.xp
        lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(p)
            state["exp_avg_sq"] = xp.zeros_like(p)
        state["step"] += 1
        t, m, v = state["step"], state["exp_avg"], state["exp_avg_sq"]
        if wd != 0 and not group["decoupled_weight_decay"]:
            g = g + wd * p
        # in place on the optimiser's own arrays and one scratch array: a step is a dozen
        # passes over every parameter, so temporaries would cost as much as the arithmetic
        tmp = xp.subtract(g, m)
        tmp *= 1 - beta1
        m += tmp                                     # m += (1-β1)(g - m)
        v *= beta2
        xp.multiply(g, g, out=tmp)
        tmp *= 1 - beta2
        v += tmp                                     # v = β2 v + (1-β2) g²
        xp.sqrt(v, out=tmp)
        tmp /= (1 - beta2 ** t) ** 0.5
        tmp += eps                                   # √v̂ + eps
        xp.divide(m, tmp, out=tmp)
        tmp *= -lr / (1 - beta1 ** t)                # -lr·m̂/(√v̂ + eps)
        if wd != 0 and group["decoupled_weight_decay"]:
            p *= 1 - lr * wd                         # p(1 - lr·λ), then the update
        p += tmp


class AdamW(Adam):
    """Adam with decoupled weight decay (Loshchilov & Hutter): p ← p(1 - lr·λ) before the
    Adam step, instead of adding λp to the gradient. Default weight_decay=0.01 as PyTorch."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01):
        super().__init__(params, lr, betas, eps, weight_decay, decoupled_weight_decay=True)

