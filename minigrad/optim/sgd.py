"""SGD with momentum, dampening, Nesterov momentum and L2 weight decay — PyTorch's equations:

    g = grad + weight_decay * p
    b = g                                   (first step)
    b = momentum * b + (1 - dampening) * g  (later steps)
    g = g + momentum * b  if nesterov  else  b
    p = p - lr * g
"""
from minigrad.optim.optimizer import Optimizer, check_foreach, check_torch_only, is_number


class SGD(Optimizer):
    """`foreach` is taken for PyTorch's signature and changes nothing: one loop, the same
    numbers (as PyTorch's foreach and plain loops give); `differentiable` and `fused`
    (PyTorch's) only where off."""

    def __init__(self, params, lr=1e-3, momentum=0.0, dampening=0.0, weight_decay=0.0,
                 nesterov=False, *, maximize=False, foreach=None, differentiable=False,
                 fused=None):
        # PyTorch's order: weight_decay before nesterov
        check_torch_only("SGD", differentiable=differentiable, fused=fused)
        check_foreach("SGD", foreach)
        defaults = dict(lr=lr, momentum=momentum, dampening=dampening, nesterov=nesterov,
                        weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        for key in ("momentum", "dampening"):
            if not is_number(options[key]):
                raise TypeError(f"SGD: {key} must be a number, got {options[key]!r} in "
                                f"{where}")
        if options["momentum"] < 0:
            raise ValueError(f"SGD: invalid momentum {options['momentum']} in {where} "
                             f"(must be >= 0)")
        if options["nesterov"] and (options["momentum"] <= 0 or options["dampening"] != 0):
            raise ValueError(f"SGD: nesterov momentum needs momentum > 0 and dampening = 0 "
                             f"(got momentum={options['momentum']}, "
                             f"dampening={options['dampening']}) in {where}")

    def _update(self, param, g, state, group):
        p, lr, momentum = param._data, group["lr"], group["momentum"]
        if group["weight_decay"] != 0:
            g = g + group["weight_decay"] * p
        if momentum != 0:
            buf = state.get("momentum_buffer")
            if buf is None:                                  # the optimiser's own array; an
                # array even for a 0-d parameter, whose g may be a NumPy scalar (which the
                # in-place updates below would only rebind)
                buf = state["momentum_buffer"] = param.backend.xp.array(g, dtype=p.dtype)
            else:
                buf *= momentum                              # in place: we own it
                buf += (1 - group["dampening"]) * g
            g = g + momentum * buf if group["nesterov"] else buf
        p -= lr * g
