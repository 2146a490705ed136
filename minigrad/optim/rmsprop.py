"""RMSprop (Hinton's lecture 6e; centred form from Graves 2013) — PyTorch's equations:

    g = grad + weight_decay * p                    (L2 penalty folded into the gradient)
    v = α v + (1 - α) g²                           (running mean of squared gradients)
    ḡ = ḡ + (1 - α)(g - ḡ)                         (centered only: running mean of g)
    d = √(v - ḡ²) + eps   if centered  else  √v + eps
    b = momentum * b + g / d                       (momentum > 0; b starts at 0)
    p = p - lr * b        if momentum > 0  else  p - lr * g / d

Centring divides by an estimate of the gradient's standard deviation instead of its root mean
square, so a gradient with a steady large mean still takes full-sized steps. Unlike Adam there
is no bias correction: v starts at 0, so the first steps are large (about g/√(1-α)).
"""
from minigrad.optim.optimizer import Optimizer, check_foreach, is_number


class RMSprop(Optimizer):
    """State per parameter, under PyTorch's names: `step`, `square_avg` (v), `grad_avg` (ḡ,
    with centered=True) and `momentum_buffer` (b, with momentum > 0)."""

    def __init__(self, params, lr=1e-2, alpha=0.99, eps=1e-8, weight_decay=0.0, momentum=0.0,
                 centered=False, capturable=False, foreach=None, maximize=False,
                 differentiable=False):
        # PyTorch's order, all positional; capturable and differentiable exist only off
        for key, on in (("capturable", capturable), ("differentiable", differentiable)):
            if on is not False:
                raise ValueError(f"RMSprop: {key}={on!r} is an option of PyTorch's that "
                                 f"minigrad does not have; only {key}=False")
        check_foreach("RMSprop", foreach)                # (one loop: taken, changes nothing)
        defaults = dict(lr=lr, alpha=alpha, eps=eps, weight_decay=weight_decay,
                        momentum=momentum, centered=centered, maximize=maximize)
        super().__init__(params, defaults)

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        for key in ("alpha", "eps", "momentum"):
            v = options[key]
            if not is_number(v):
                raise TypeError(f"RMSprop: {key} must be a number, got {v!r} in {where}")
        if not 0.0 <= options["alpha"] <= 1.0:           # NaN too; above 1, v could go negative
            raise ValueError(f"RMSprop: invalid alpha {options['alpha']} in {where} (must be "
                             f"in [0, 1], the smoothing constant of the running mean)")
        if not options["eps"] >= 0:
            raise ValueError(f"RMSprop: invalid eps {options['eps']} in {where} (must be >= 0)")
        if not options["momentum"] >= 0:
            raise ValueError(f"RMSprop: invalid momentum {options['momentum']} in {where} "
                             f"(must be >= 0)")
        if options["centered"] not in (True, False):
            raise ValueError(f"RMSprop: centered must be True or False, got "
                             f"{options['centered']!r} in {where}")

    def _update(self, param, g, state, group):
        p, xp = param._data, param.backend.xp
        alpha, eps, lr, momentum = group["alpha"], group["eps"], group["lr"], group["momentum"]
        if not state:
            state["step"] = 0
            state["square_avg"] = xp.zeros_like(p)
        # created when first needed, so an option switched on later (load_state_dict) works
        if group["centered"] and "grad_avg" not in state:
            state["grad_avg"] = xp.zeros_like(p)
        if momentum > 0 and "momentum_buffer" not in state:
            state["momentum_buffer"] = xp.zeros_like(p)
        state["step"] += 1
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * p
        # in place on the state and one scratch array (out=: a 0-d result stays an array)
        # (1-α)g first, then ·g, as PyTorch's addcmul: g² alone would overflow first
        v, tmp = state["square_avg"], xp.multiply(g, 1 - alpha, out=xp.empty_like(p))
        tmp *= g
        v *= alpha
        v += tmp                                         # v = αv + (1-α)g²
        if group["centered"]:
            mean = state["grad_avg"]
            xp.subtract(g, mean, out=tmp)
            tmp *= 1 - alpha
            mean += tmp                                  # ḡ += (1-α)(g - ḡ), as torch's lerp
            xp.multiply(mean, mean, out=tmp)
            xp.subtract(v, tmp, out=tmp)
            xp.sqrt(tmp, out=tmp)                        # √(v - ḡ²)
        else:
            xp.sqrt(v, out=tmp)
        tmp += eps                                       # d
        xp.divide(g, tmp, out=tmp)                       # g / d
        if momentum > 0:
            buf = state["momentum_buffer"]
            buf *= momentum
            buf += tmp                                   # b = μb + g/d
            xp.multiply(buf, lr, out=tmp)
        else:
            tmp *= lr
        p -= tmp
