"""Adam and AdamW — PyTorch's equations, step t counted from 1:

    g = grad + weight_decay * p          (Adam: L2 penalty folded into the gradient)
    p = p * (1 - lr * weight_decay)      (AdamW: decoupled weight decay, instead)
    m = m + (1 - β1) * (g - m)           (= β1 m + (1-β1) g, as torch's lerp)
    v = β2 v + (1 - β2) g²
    v_max = max(v_max, v)                (amsgrad only: the largest v so far, elementwise)
    p = p - lr / (1 - β1ᵗ) * m / (√v / √(1 - β2ᵗ) + eps)     (√v_max instead with amsgrad)

`Optimizer.step` (optimizer.py) calls `_update` with each parameter's gradient array, or
`_update_group` with a whole group; both do the arithmetic in `_adam`, in place.

AMSGrad (Reddi et al. 2018) divides by the largest second moment seen rather than the current
one, so a parameter's step size never grows back after a burst of large gradients. Its state
`max_exp_avg_sq` is kept (and saved) beside `exp_avg` and `exp_avg_sq`, as PyTorch's.
"""
from minigrad.optim.optimizer import Optimizer, check_torch_only, is_number


class Adam(Optimizer):
    """Adam (Kingma & Ba). `decoupled_weight_decay=True` makes it AdamW, as in PyTorch.

    `foreach` (PyTorch's name): update a group's parameters together, as one flat array,
    instead of one by one. Each step is then a dozen array operations in all rather than a
    dozen per parameter, which on a GPU, where each operation is a kernel launch that costs
    more than its arithmetic, is most of the optimiser's time. The result is the same to the
    bit. None (default): on for GPU parameters, off on the CPU, where each parameter's
    arrays stay in cache through the dozen passes and the flat ones do not (a step of the
    baby GPT's AdamW measured 2.2 ms one by one, 4.3 ms flat).

    `amsgrad=True` runs on every path: one by one, flat (a third flat array), and on a GPU
    as the array chain rather than the fused kernel, which has no v_max.

    `fused` (PyTorch's) is taken either way and changes nothing: the step already runs as
    one fused kernel where the device has one (nanoGPT passes fused=True on "cuda" when
    the signature has it); `capturable` and `differentiable` only where off."""

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
                 amsgrad=False, *, foreach=None, maximize=False, capturable=False,
                 differentiable=False, fused=None, decoupled_weight_decay=False):
        check_torch_only(type(self).__name__, capturable=capturable,
                         differentiable=differentiable)
        if fused not in (None, True, False):
            raise TypeError(f"{type(self).__name__}: fused must be None, True or False, got "
                            f"{fused!r}")
        # PyTorch's order: amsgrad is the sixth positional argument, the rest keywords
        betas = tuple(betas) if isinstance(betas, (list, tuple)) else betas   # checked below
        defaults = dict(lr=lr, betas=betas, eps=eps, weight_decay=weight_decay,
                        amsgrad=amsgrad, decoupled_weight_decay=decoupled_weight_decay,
                        foreach=foreach, maximize=maximize)
        super().__init__(params, defaults)
        self._flat = {}      # id(group) -> (state names, the state's views, flat arrays)

    def __getstate__(self):
        """What copy and pickle take: all but the foreach cache, whose flat arrays would
        double what is copied (the state's moments are views of them, copied apart) and
        whose keys, ids of the groups, name nothing in the copy; the next step rebuilds it."""
        return {**super().__getstate__(), "_flat": {}}

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        name = type(self).__name__
        betas, eps = options["betas"], options["eps"]
        if not (isinstance(betas, (list, tuple)) and len(betas) == 2 and all(
                is_number(b) and 0.0 <= b < 1.0 for b in betas)):   # (NaN fails too)
            raise ValueError(f"{name}: invalid betas {betas!r} in {where} (two numbers, each "
                             f"in [0, 1))")
        if not (is_number(eps) and eps >= 0):
            raise ValueError(f"{name}: invalid eps {eps!r} in {where} (a number >= 0)")
        if options.get("amsgrad") not in (True, False):
            raise ValueError(f"{name}: amsgrad must be True or False, got "
                             f"{options['amsgrad']!r} in {where}")
        if options.get("foreach") not in (None, True, False):
            raise ValueError(f"{name}: foreach must be None, True or False, got "
                             f"{options['foreach']!r} in {where}")

    def _update(self, param, g, state, group):
        p, xp = param._data, param.backend.xp
        if not state:
            state["step"] = 0
            state["exp_avg"] = xp.zeros_like(p)
            state["exp_avg_sq"] = xp.zeros_like(p)
        if group["amsgrad"] and "max_exp_avg_sq" not in state:
            # zeros also when amsgrad is switched on mid-run: the max starts from the next v
            state["max_exp_avg_sq"] = xp.zeros_like(p)
        state["step"] += 1
        _adam(param.backend, p, g, state["exp_avg"], state["exp_avg_sq"], state["step"], group,
              state["max_exp_avg_sq"] if group["amsgrad"] else None)

    def _update_group(self, todo, group):
        """The whole group as one flat array: the same arithmetic as `_update`, on the
        concatenated parameters and gradients, with the moments kept flat (each parameter's
        state holds views of them), then each parameter's slice copied back."""
        if len(todo) < 2:
            return False
        first, _, state0 = todo[0]
        use = group["foreach"]
        if use is False or (use is None and first.backend.host):
            return False
        if any(p.device != first.device or p.dtype != first.dtype or
               s.get("step") != state0.get("step") for p, _, s in todo):
            return False                 # mixed kinds or histories: one by one
        xp = first.backend.xp
        names = ("exp_avg", "exp_avg_sq") + (("max_exp_avg_sq",) if group["amsgrad"] else ())
        m, v, *v_max = self._flat_moments(xp, todo, group, names)    # v_max: [] or [flat]
        g = xp.concatenate([g.reshape(-1) for _, g, _ in todo])
        p = xp.concatenate([q._data.reshape(-1) for q, _, _ in todo])
        for _, _, s in todo:
            s["step"] += 1
        _adam(first.backend, p, g, m, v, state0["step"], group, *v_max)
        start = 0
        for q, _, _ in todo:
            q._data[...] = p[start:start + q._data.size].reshape(q.shape)
            start += q._data.size
        return True

    def _flat_moments(self, xp, todo, group, names):
        """The group's state arrays `names` (exp_avg, exp_avg_sq, and max_exp_avg_sq with
        amsgrad) as flat arrays, each parameter's state entries being views of them. Built
        (from the states as they are, zeros for what is new) when the states are not yet
        those views: the first step, after load_state_dict, when another set of the group's
        parameters has gradients, or when amsgrad was switched on."""
        cached = self._flat.get(id(group))
        views = [tuple(s.get(name) for name in names) for _, _, s in todo]
        if cached is not None and cached[0] == names and len(views) == len(cached[1]) and all(
                a is b for new, old in zip(views, cached[1]) for a, b in zip(new, old)):
            return cached[2]
        flats = [xp.concatenate([s[name].reshape(-1) if name in s
                                 else xp.zeros(p._data.size, p.dtype) for p, _, s in todo])
                 for name in names]
        start = 0
        for p, _, s in todo:
            s.setdefault("step", 0)
            for name, flat in zip(names, flats):
                s[name] = flat[start:start + p._data.size].reshape(p.shape)
            start += p._data.size
        self._flat[id(group)] = (names, [tuple(s[name] for name in names) for _, _, s in todo],
                                 flats)
        return flats


def _adam(backend, p, g, m, v, t, group, v_max=None):
    """One Adam step at step t (from 1) on arrays, in place on p, m, v (and v_max, given
    with amsgrad) by the module doc's equations: one fused kernel on a GPU
    (backend_kernels.py), else a chain of passes."""
    xp = backend.xp
    lr, eps, wd = group["lr"], group["eps"], group["weight_decay"]
    beta1, beta2 = group["betas"]
    l2 = wd if not group["decoupled_weight_decay"] else 0.0
    if v_max is None and backend.kernels and backend.kernels(
            "adam", g, l2, 1 - beta1, beta2, 1 - beta2, eps, lr / (1 - beta1 ** t),
            (1 - beta2 ** t) ** 0.5, 1 - lr * (wd - l2), p, m, v) is not None:
        return
    if wd != 0 and not group["decoupled_weight_decay"]:
        g = g + wd * p
    # in place on the optimiser's own arrays and one scratch array: a step is a dozen
    # passes over every parameter, so temporaries would cost as much as the arithmetic
    tmp = xp.subtract(g, m, out=xp.empty_like(m))  # out=: a 0-d result stays an array
    tmp *= 1 - beta1
    m += tmp                                     # m += (1-β1)(g - m)
    v *= beta2
    xp.multiply(g, 1 - beta2, out=tmp)           # (1-β2)g first, then ·g, as PyTorch's
    tmp *= g                                     # addcmul: g² alone would overflow first
    v += tmp                                     # v = β2 v + (1-β2) g²
    if v_max is not None:
        xp.maximum(v_max, v, out=v_max)          # amsgrad: v_max = max(v_max, v)
    xp.sqrt(v if v_max is None else v_max, out=tmp)
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

    def __init__(self, params, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01,
                 amsgrad=False, *, maximize=False, foreach=None, capturable=False,
                 differentiable=False, fused=None):
        super().__init__(params, lr, betas, eps, weight_decay, amsgrad, foreach=foreach,
                         maximize=maximize, capturable=capturable,
                         differentiable=differentiable, fused=fused,
                         decoupled_weight_decay=True)

