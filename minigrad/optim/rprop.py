"""Rprop (Riedmiller & Braun 1993, resilient backpropagation) — PyTorch's equations:

    s = sign(g · g_prev)                 (has the gradient kept its sign?)
    η = η+ where s > 0,  η- where s < 0,  1 where s = 0
    step_size = clamp(step_size · η, step_size_min, step_size_max)   (starts at lr)
    g = 0 where s < 0                    (after a sign flip: no move, and no flip next time)
    p = p - sign(g) · step_size
    g_prev = g

Only the gradient's sign is used: each coordinate keeps its own step size, growing while
the sign holds and shrinking when it flips (a minimum overshot). Meant for full-batch
training: minibatch noise flips signs at random.
"""
from minigrad.optim.optimizer import (Optimizer, check_foreach, check_torch_only,
                                      is_number)


def _pair(name, key, value, where):
    """A pair of numbers (PyTorch's etas and step_sizes), as a tuple."""
    if not (isinstance(value, (list, tuple)) and len(value) == 2 and
            all(is_number(v) for v in value)):
        raise TypeError(f"{name}: {key} must be a pair of numbers, got {value!r} in {where}")
    return tuple(value)


class Rprop(Optimizer):
    """State per parameter, under PyTorch's names: `step`, `prev` (the last gradient
    followed, zeroed where the sign flipped) and `step_size` (per coordinate, from lr).
    `foreach` is taken for PyTorch's signature and changes nothing."""

    def __init__(self, params, lr=1e-2, etas=(0.5, 1.2), step_sizes=(1e-6, 50), *,
                 capturable=False, foreach=None, maximize=False, differentiable=False):
        check_torch_only("Rprop", capturable=capturable, differentiable=differentiable)
        check_foreach("Rprop", foreach)
        etas = tuple(etas) if isinstance(etas, (list, tuple)) else etas
        step_sizes = tuple(step_sizes) if isinstance(step_sizes, (list, tuple)) else step_sizes
        defaults = dict(lr=lr, etas=etas, step_sizes=step_sizes, maximize=maximize)
        super().__init__(params, defaults)

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        minus, plus = _pair("Rprop", "etas", options["etas"], where)
        _pair("Rprop", "step_sizes", options["step_sizes"], where)
        if not 0.0 < minus < 1.0 < plus:
            raise ValueError(f"Rprop: invalid etas {options['etas']!r} in {where} (need "
                             f"0 < etaminus < 1 < etaplus)")

    def _update(self, param, g, state, group):
        p, xp = param._data, param.backend.xp
        if not state:
            state["step"] = 0
            state["prev"] = xp.zeros_like(p)
            state["step_size"] = xp.full_like(p, group["lr"])
        state["step"] += 1
        etaminus, etaplus = group["etas"]
        lo, hi = group["step_sizes"]
        prev, step_size = state["prev"], state["step_size"]
        sign = xp.multiply(g, prev, out=xp.empty_like(p))    # out=: 0-d stays an array
        xp.sign(sign, out=sign)
        # in turn, as PyTorch: η+ > 0 and 0 < η- are not caught by the later tests
        sign[sign > 0] = etaplus
        sign[sign < 0] = etaminus
        sign[sign == 0] = 1
        step_size *= sign
        xp.clip(step_size, lo, hi, out=step_size)
        prev[...] = g
        prev[sign == etaminus] = 0                     # a flip: stand still this once
        xp.sign(prev, out=sign)
        sign *= step_size
        p -= sign
