"""Adagrad (Duchi, Hazan & Singer 2011) — PyTorch's equations, step t counted from 1:

    g = grad + weight_decay * p                  (L2 penalty folded into the gradient)
    clr = lr / (1 + (t - 1) * lr_decay)
    s = s + g²                                   (s starts at initial_accumulator_value)
    p = p - clr * g / (√s + eps)

Each coordinate divides by the root of the sum of all its squared gradients so far: rare
features (large steps while their sum is small) and frequent ones (small steps) are evened
out, and every step size only ever shrinks.
"""
from minigrad.optim.inplace import addcdiv_, l2
from minigrad.optim.optimizer import (Optimizer, check_foreach, check_numbers,
                                      check_torch_only)


class Adagrad(Optimizer):
    """State per parameter, under PyTorch's names: `step` and `sum` (s). As PyTorch's, the
    state exists from construction (step 0, sum = initial_accumulator_value), so a fresh
    optimiser's state_dict() already holds it. `foreach` is taken for PyTorch's signature
    and changes nothing (one loop, the same numbers). A group's own
    initial_accumulator_value is its start (PyTorch starts every group from the
    constructor's, ignoring the group's)."""

    def __init__(self, params, lr=1e-2, lr_decay=0, weight_decay=0, initial_accumulator_value=0,
                 eps=1e-10, foreach=None, *, maximize=False, differentiable=False, fused=None):
        check_torch_only("Adagrad", differentiable=differentiable, fused=fused)
        check_foreach("Adagrad", foreach)
        defaults = dict(lr=lr, lr_decay=lr_decay, eps=eps, weight_decay=weight_decay,
                        initial_accumulator_value=initial_accumulator_value, maximize=maximize)
        super().__init__(params, defaults)
        for group in self.param_groups:
            for p in group["params"]:
                self._init_state(p, self.state[p], group)

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        check_numbers("Adagrad", options, where, lr_decay=">= 0", eps=">= 0",
                      initial_accumulator_value=">= 0")

    @staticmethod
    def _init_state(param, state, group):
        state["step"] = 0
        # param.shape, not full_like(param._data): a lazy layer's placeholder (no shape yet)
        # is refused here with a clear error, as PyTorch's, not at the first step
        state["sum"] = param.backend.xp.full(param.shape, group["initial_accumulator_value"],
                                             dtype=param.dtype)

    def _update(self, param, g, state, group):
        p, xp = param._data, param.backend.xp
        if not state:                      # a group added later, or a state loaded without
            self._init_state(param, state, group)
        state["step"] += 1
        g = l2(g, p, group["weight_decay"])
        clr = group["lr"] / (1 + (state["step"] - 1) * group["lr_decay"])
        s, tmp = state["sum"], xp.multiply(g, g, out=xp.empty_like(p))
        s += tmp                                         # s += g²
        std = xp.sqrt(s, out=xp.empty_like(p))
        std += group["eps"]                              # √s + eps
        addcdiv_(xp, p, g, std, -clr, tmp)               # p += (-clr·g) / (√s + eps)
