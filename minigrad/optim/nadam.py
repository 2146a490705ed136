"""NAdam (Dozat 2016: Adam with Nesterov momentum) — PyTorch's equations, step t from 1:

    g = grad + weight_decay * p          (L2 penalty), or with decoupled_weight_decay=True
    p = p * (1 - lr * weight_decay)       instead (the weights decayed: PyTorch's NAdamW)
    μₜ = β1 (1 - ½ · 0.96^(t ψ))         (ψ = momentum_decay: the momentum warms up to β1)
    Πₜ = μ₁ μ₂ … μₜ                      (state "mu_product")
    m = m + (1 - β1)(g - m)              (as torch's lerp)
    v = β2 v + (1 - β2) g²
    d = √(v / (1 - β2ᵗ)) + eps
    p = p - lr (1 - μₜ)/(1 - Πₜ) · g/d - lr μₜ₊₁/(1 - Πₜ μₜ₊₁) · m/d

The step looks one momentum step ahead: the gradient's share weighted by this step's μ, the
momentum's by the next one's, each bias-corrected by the product of the μ's so far.
"""
import struct

from minigrad import backend
from minigrad.optim.inplace import addcdiv_, adam_moments_, weight_decayed
from minigrad.optim.optimizer import (Optimizer, check_betas, check_flags, check_foreach,
                                      check_numbers, check_torch_only)


class NAdam(Optimizer):
    """State per parameter, under PyTorch's names: `step`, `mu_product` (Πₜ, a number),
    `exp_avg` (m) and `exp_avg_sq` (v). `foreach` is taken for PyTorch's signature and
    changes nothing.

    Πₜ is rounded to the default dtype after each product, as PyTorch keeps it (a 0-d
    tensor of that dtype, float32 unless set_default_dtype changed it), so the two take the
    same steps to the last bits also for float64 parameters."""

    def __init__(self, params, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0,
                 momentum_decay=4e-3, decoupled_weight_decay=False, *, foreach=None,
                 maximize=False, capturable=False, differentiable=False):
        check_torch_only("NAdam", capturable=capturable, differentiable=differentiable)
        check_foreach("NAdam", foreach)
        betas = tuple(betas) if isinstance(betas, (list, tuple)) else betas   # checked below
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        momentum_decay=momentum_decay,
                        decoupled_weight_decay=decoupled_weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        check_numbers("NAdam", options, where, eps=">= 0", momentum_decay=">= 0")
        check_betas("NAdam", options["betas"], where)
        check_flags("NAdam", options, where, "decoupled_weight_decay")

    def _array_like(self, v, p, key):
        if key == "mu_product":          # a number (a 0-d tensor of the default dtype in
            return float(_host_number(v))   # torch), not cast to the parameter's dtype
        return super()._array_like(v, p, key)

    def _update(self, param, g, state, group):
        p, xp = param._data, param.backend.xp
        if not state:
            state["step"] = 0
            state["mu_product"] = 1.0
            state["exp_avg"] = xp.zeros_like(p)
            state["exp_avg_sq"] = xp.zeros_like(p)
        state["step"] += 1
        t, lr, wd = state["step"], group["lr"], group["weight_decay"]
        beta1, beta2 = group["betas"]
        g = weight_decayed(p, g, lr, wd, group["decoupled_weight_decay"])
        mu = beta1 * (1.0 - 0.5 * (0.96 ** (t * group["momentum_decay"])))
        mu_next = beta1 * (1.0 - 0.5 * (0.96 ** ((t + 1) * group["momentum_decay"])))
        mu_product = state["mu_product"] = _in_default_dtype(
            _in_default_dtype(state["mu_product"]) * _in_default_dtype(mu))
        m, v, tmp = state["exp_avg"], state["exp_avg_sq"], xp.empty_like(p)
        adam_moments_(xp, m, v, g, group["betas"], tmp)
        denom = xp.divide(v, 1 - beta2 ** t, out=xp.empty_like(p))
        xp.sqrt(denom, out=denom)
        denom += group["eps"]                            # d = √(v / (1-β2ᵗ)) + eps
        addcdiv_(xp, p, g, denom, -lr * (1.0 - mu) / (1.0 - mu_product), tmp)
        addcdiv_(xp, p, m, denom, -lr * mu_next / (1.0 - mu_product * mu_next), tmp)


def _in_default_dtype(x):
    """x rounded to the default dtype, as PyTorch keeps Πₜ (a 0-d tensor of that dtype): to
    float32 (the product of two float32 values is exact in a double, 24 + 24 bits, so
    rounding it again is float32 multiplication), or as it is under float64."""
    if backend.DEFAULT_FLOAT != backend.float32:
        return float(x)
    return struct.unpack("f", struct.pack("f", x))[0]


def _host_number(v):
    """A saved Πₜ (a number, or a 0-d tensor of either library) as a Python float."""
    return v.item() if hasattr(v, "item") else v
