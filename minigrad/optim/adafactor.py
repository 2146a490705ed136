"""Adafactor (Shazeer & Stern 2018) — PyTorch's equations (its version: no first moment,
relative step sizes), step t from 1:

    β̂2 = t^beta2_decay                             (the weight of the new g², falling)
    ρ = min(lr, 1/√t),   α = max(eps2, RMS(p)) · ρ  (the step relative to p's size)
    p = p · (1 - lr · weight_decay)                (decoupled, after α is measured)
    a matrix (ndim >= 2), factored over its last two dims:
        R = R + β̂2 (mean(g², last dim) - R),   C = C + β̂2 (mean(g², dim -2) - C)
        v = R Cᵀ / max(mean(R over rows), eps1)    (a rank-1 estimate of g²'s average)
    a vector or a number:  v = v + β̂2 (g² - v)
    u = g / √max(v, eps1²),   p = p - α / max(1, RMS(u) / d) · u

A matrix keeps one row vector and one column vector instead of a full second moment, so the
optimiser's memory is O(rows + cols) per matrix. eps1=None means the dtype's machine
epsilon, as PyTorch's (taken from the first parameter of the group that steps).
"""

from minigrad import backend
from minigrad.nn.module_state import host as _host
from minigrad.optim.inplace import lerp_
from minigrad.optim.optimizer import Optimizer, check_foreach, is_number

np = backend.get("cpu").xp              # NumPy (host scalars and dtypes)


class Adafactor(Optimizer):
    """State per parameter, under PyTorch's names: `step`, and `row_var` and `col_var`
    (shapes (..., rows, 1) and (..., 1, cols)) for a parameter with two or more dims,
    `variance` for the others. `foreach` is taken for PyTorch's signature and changes
    nothing."""

    def __init__(self, params, lr=1e-2, beta2_decay=-0.8, eps=(None, 1e-3), d=1.0,
                 weight_decay=0.0, *, foreach=None, maximize=False):
        check_foreach("Adafactor", foreach)
        eps = tuple(eps) if isinstance(eps, (list, tuple)) else eps
        defaults = dict(lr=lr, beta2_decay=beta2_decay, eps=eps, d=d,
                        weight_decay=weight_decay, maximize=maximize)
        super().__init__(params, defaults)

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        name, eps = "Adafactor", options["eps"]
        if not (isinstance(eps, (list, tuple)) and len(eps) == 2 and
                (eps[0] is None or is_number(eps[0])) and is_number(eps[1])):
            raise TypeError(f"{name}: eps must be a pair (eps1, eps2), eps1 a number or None, "
                            f"eps2 a number, got {eps!r} in {where}")
        for key, ok, valid in (("beta2_decay", lambda x: x <= 0, "<= 0"),
                               ("d", lambda x: x >= 1, ">= 1")):
            v = options[key]
            if not is_number(v):
                raise TypeError(f"{name}: {key} must be a number {valid}, got {v!r} in {where}")
            if not ok(v):
                raise ValueError(f"{name}: invalid {key} {v!r} in {where} (must be {valid})")
        if eps[0] is not None and not eps[0] >= 0 or not eps[1] >= 0:
            raise ValueError(f"{name}: invalid eps {eps!r} in {where} (each must be >= 0)")

    def _array_like(self, v, p, key):
        """A loaded state array: the factored ones have their own shapes."""
        if p.ndim < 2 or key not in ("row_var", "col_var"):
            return super()._array_like(v, p, key)
        want = p.shape[:-1] + (1,) if key == "row_var" else p.shape[:-2] + (1, p.shape[-1])
        host = _host(v)
        if tuple(host.shape) != want:
            raise ValueError(f"Adafactor.load_state_dict: state '{key}' has shape "
                             f"{tuple(host.shape)}, expected {want} for a parameter of shape "
                             f"{p.shape}")
        return p.backend.from_numpy(host.astype(p.dtype, copy=True))

    def _update_group(self, todo, group):
        # PyTorch fixes eps1=None from the first parameter that steps, for the whole group
        self._eps1 = group["eps"][0]
        if self._eps1 is None and todo:
            self._eps1 = float(np.finfo(todo[0][0].dtype).eps)
        return False

    def _update(self, param, g, state, group):
        p, xp = param._data, param.backend.xp
        if not state:
            state["step"] = 0
            if p.ndim > 1:
                state["row_var"] = xp.zeros(p.shape[:-1] + (1,), p.dtype)
                state["col_var"] = xp.zeros(p.shape[:-2] + (1, p.shape[-1]), p.dtype)
            else:
                state["variance"] = xp.zeros_like(p)
        state["step"] += 1
        t, lr, eps1, eps2 = state["step"], group["lr"], self._eps1, group["eps"][1]
        decay = float(t) ** group["beta2_decay"]
        rho = min(lr, 1 / (float(t) ** 0.5))
        alpha = max(eps2, _norm(xp, p) / (p.size ** 0.5)) * rho
        if group["weight_decay"] != 0:
            p *= 1 - lr * group["weight_decay"]
        if p.ndim > 1:
            row, col = state["row_var"], state["col_var"]
            # the means of g² as PyTorch forms them: a norm, squared, over the count
            row_mean = _norm(xp, g, -1) ** 2 / g.shape[-1]
            lerp_(xp, row, row_mean.astype(p.dtype, copy=False), decay, xp.empty_like(row))
            col_mean = _norm(xp, g, -2) ** 2 / g.shape[-2]
            lerp_(xp, col, col_mean.astype(p.dtype, copy=False), decay, xp.empty_like(col))
            v = xp.matmul(row, col)
            v /= xp.maximum(row.mean(axis=-2, keepdims=True), eps1)
        else:
            var = state["variance"]
            lerp_(xp, var, xp.multiply(g, g, out=xp.empty_like(p)), decay, xp.empty_like(p))
            v = var.copy()
        xp.maximum(v, eps1 * eps1, out=v)
        update = xp.sqrt(v, out=v)
        xp.divide(1, update, out=update)               # rsqrt, then ·g, as PyTorch
        update *= g
        denom = max(1.0, _norm(xp, update) / ((update.size ** 0.5) * group["d"]))
        update *= -alpha / denom
        p += update


def _norm(xp, a, axis=None):
    """The 2-norm of `a` (a float), or along `axis` (an array, the axis kept)."""
    if axis is None:
        return float(xp.sqrt(xp.sum(a * a)))
    return xp.sqrt(xp.sum(a * a, axis=axis, keepdims=True))
