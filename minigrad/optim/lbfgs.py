"""L-BFGS (Nocedal 1980; Liu & Nocedal 1989) with PyTorch's iteration, stopping tests and
strong-Wolfe line search, so that the two take the same steps.

Each `step(closure)` runs up to `max_iter` iterations on the parameters as one flat vector
x, with g the gradient the closure leaves:

    d = -H g,  H the inverse-Hessian estimate of the last `history_size` pairs
               (s = x_new - x, y = g_new - g), applied by the two-loop recursion and
               scaled by H_diag = sᵀy / yᵀy; a pair with sᵀy <= 1e-10 is not kept
    t = min(1, 1/|g|₁) · lr on the very first iteration, lr after
    x = x + t d,   t fixed (line_search_fn=None) or chosen by the strong-Wolfe search

and stops early when max|g| <= tolerance_grad, when an iteration moves x or the loss by less
than tolerance_change, or after `max_eval` evaluations of the closure. As PyTorch's, the
numbers the search works with (dot products, t) stay in the parameters' dtype: in float32
its decisions round as PyTorch's do.
"""
import collections
import numbers

from minigrad import backend
from minigrad.autograd import enable_grad
from minigrad.nn.module_state import host as _host
from minigrad.optim.optimizer import Optimizer, is_number
from minigrad.tensor import Tensor

np = backend.get("cpu").xp              # NumPy (host scalars and dtypes)


class LBFGS(Optimizer):
    """Only one parameter group (as PyTorch). The state (PyTorch's names, kept under the
    first parameter): func_evals, n_iter, d, t, old_dirs, old_stps, ro, H_diag,
    prev_flat_grad, prev_loss, and al (the two-loop coefficients). It needs history_size+1
    flat copies of the parameters' size; the flat form (flat_state_dict), which stores a
    tensor per name, cannot hold its lists: save it with state_dict()."""

    def __init__(self, params, lr=1, max_iter=20, max_eval=None, tolerance_grad=1e-7,
                 tolerance_change=1e-9, history_size=100, line_search_fn=None):
        if max_eval is None and isinstance(max_iter, numbers.Integral):
            max_eval = max_iter * 5 // 4
        defaults = dict(lr=lr, max_iter=max_iter, max_eval=max_eval,
                        tolerance_grad=tolerance_grad, tolerance_change=tolerance_change,
                        history_size=history_size, line_search_fn=line_search_fn)
        super().__init__(params, defaults)
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, group):
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups): "
                             "pass all parameters in one group")
        super().add_param_group(group)

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        for key in ("max_iter", "max_eval", "history_size"):
            v = options[key]
            if isinstance(v, bool) or not isinstance(v, numbers.Integral) or v < 1:
                raise ValueError(f"LBFGS: {key} must be an integer >= 1, got {v!r} in {where}")
        for key in ("tolerance_grad", "tolerance_change"):
            if not is_number(options[key]):
                raise TypeError(f"LBFGS: {key} must be a number, got {options[key]!r} in "
                                f"{where}")
        if options["line_search_fn"] not in (None, "strong_wolfe"):
            raise ValueError(f"LBFGS: line_search_fn must be None or 'strong_wolfe' (the only "
                             f"one supported), got {options['line_search_fn']!r} in {where}")
        if options["maximize"]:
            raise ValueError(f"LBFGS: maximize is not an option of LBFGS (as PyTorch's); "
                             f"minimise the negated objective instead ({where})")

    # ---- the parameters as one flat vector -----------------------------------------------
    def _flat_grad(self):
        xp = self._params[0].backend.xp
        return xp.concatenate([
            xp.zeros(p._data.size, p.dtype) if p.grad is None else
            p.grad._data.reshape(-1).astype(p.dtype, copy=False) for p in self._params])

    def _add(self, t, d):
        """x += t·d, each parameter its slice (a change of the data: versions count it)."""
        start = 0
        for p in self._params:
            n = p._data.size
            p._data[...] += (d[start:start + n] * t).reshape(p.shape)
            p._version_counter[0] += 1
            start += n

    def _evaluate(self, closure, x, t, d):
        """The loss and flat gradient at x + t·d; the parameters are set back to x."""
        self._add(t, d)
        loss = float(closure())
        g = self._flat_grad()
        for p, saved in zip(self._params, x):
            p._data[...] = saved
            p._version_counter[0] += 1
        return loss, g

    def _num(self, a):
        """A 0-d result as a NumPy number of the parameters' dtype (PyTorch's 0-d tensors:
        later arithmetic with Python floats stays in that dtype, NEP 50 as PyTorch)."""
        return np.dtype(self._params[0].dtype).type(float(a))

    def _step(self, closure):
        """Up to max_iter iterations; `closure` re-computes the loss with its gradients
        (zero them, forward, backward, return the loss) and is required. Returns the loss
        of the first evaluation. (Optimizer.step runs it, under no_grad, with the hooks.)"""
        if closure is None or not callable(closure):
            raise TypeError("LBFGS.step: a closure is required (a function that zeroes the "
                            "gradients, computes the loss, calls backward and returns it)")
        closure = enable_grad()(closure)
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tol_grad, tol_change = group["tolerance_grad"], group["tolerance_change"]
        history_size = group["history_size"]
        xp, num = self._params[0].backend.xp, self._num
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)

        orig_loss = closure()
        loss = float(orig_loss)
        current_evals = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if num(xp.abs(flat_grad).max()) <= tol_grad:       # already optimal
            return orig_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag, prev_flat_grad = state.get("H_diag"), state.get("prev_flat_grad")
        prev_loss = state.get("prev_loss")

        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, H_diag = [], [], [], 1
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = num(y @ s)
                if ys > 1e-10:                               # curvature: keep the pair
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / num(y @ y)
                d = self._two_loop(state, flat_grad, old_dirs, old_stps, ro, H_diag,
                                   history_size)
            if prev_flat_grad is None:
                prev_flat_grad = flat_grad.copy()
            else:
                prev_flat_grad[...] = flat_grad
            prev_loss = loss
            if state["n_iter"] == 1:
                t = min(1.0, 1.0 / num(xp.abs(flat_grad).sum())) * lr
            else:
                t = lr
            gtd = num(flat_grad @ d)
            if gtd > -tol_change:                            # not a descent direction
                break

            ls_func_evals = 0
            if group["line_search_fn"] is not None:
                x = [p._data.copy() for p in self._params]
                loss, flat_grad, t, ls_func_evals = _strong_wolfe(
                    lambda x_, t_, d_: self._evaluate(closure, x_, t_, d_), x, t, d, loss,
                    flat_grad, gtd, num, max_ls=max_eval - current_evals)
                self._add(t, d)
                opt_cond = num(xp.abs(flat_grad).max()) <= tol_grad
            else:
                self._add(t, d)
                opt_cond = False
                if n_iter != max_iter:           # the last iteration's loss is not needed
                    loss = float(closure())
                    flat_grad = self._flat_grad()
                    opt_cond = num(xp.abs(flat_grad).max()) <= tol_grad
                    ls_func_evals = 1
            current_evals += ls_func_evals
            state["func_evals"] += ls_func_evals

            if n_iter == max_iter or current_evals >= max_eval or opt_cond:
                break
            if num(xp.abs(d * t).max()) <= tol_change:          # x hardly moved
                break
            if abs(loss - prev_loss) < tol_change:               # nor did the loss
                break

        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return orig_loss

    def _two_loop(self, state, flat_grad, old_dirs, old_stps, ro, H_diag, history_size):
        """d = -H g by the two-loop recursion over the kept pairs."""
        num = self._num
        if "al" not in state:
            state["al"] = [None] * history_size
        al = state["al"]
        q = -flat_grad
        for i in range(len(old_dirs) - 1, -1, -1):
            al[i] = num(old_stps[i] @ q) * ro[i]
            q -= al[i] * old_dirs[i]
        r = q * H_diag
        for i in range(len(old_dirs)):
            be_i = num(old_dirs[i] @ r) * ro[i]
            r += (al[i] - be_i) * old_stps[i]
        return r

    # ---- state: one entry, with lists and flat vectors -----------------------------------
    def _state_dict(self):
        """As PyTorch's: the state under index 0, flat vectors and the numbers of the
        search (t, H_diag, ro, al) as tensors (copies), lists as lists."""
        sd = super()._state_dict()
        s = self.state.get(self._params[0])
        if s:
            device = self._params[0].device
            sd["state"] = {0: {k: _saved(v, device) for k, v in s.items()}}
        return sd

    def _load_state_dict(self, state_dict):
        """Restore what state_dict() saved, a PyTorch LBFGS's included: its tensors become
        arrays (vectors) and numbers of the parameters' dtype (0-d ones)."""
        saved = dict(state_dict["state"])
        extra = [i for i in saved if int(i) != 0]
        if extra:
            raise ValueError(f"LBFGS.load_state_dict: state for parameter(s) {extra}; LBFGS "
                             f"keeps its state under the first parameter (0) only")
        s = saved.get(0, saved.get("0"))
        p0 = self._params[0]
        n = sum(p._data.size for p in self._params)
        if s is not None:
            s = {k: _loaded(v, p0, n, k, self._num) for k, v in s.items()}
        super()._load_state_dict({"state": {}, "param_groups": state_dict["param_groups"]})
        self.state = collections.defaultdict(dict, {p0: s} if s else {})

    def flat_state_dict(self, prefix="optimizer."):
        raise TypeError("LBFGS: its state (lists of vectors) has no flat form; save "
                        "optimizer.state_dict() instead (pickle, or torch.save)")


def _saved(v, device):
    if isinstance(v, list):
        return [_saved(a, device) for a in v]
    if hasattr(v, "shape"):                          # an array, or a NumPy number
        return Tensor._make(v.copy() if v.shape else np.asarray(v).copy(), device)
    return v


def _loaded(v, p, n, key, num):
    if isinstance(v, (list, tuple)):
        return [_loaded(a, p, n, key, num) for a in v]
    if isinstance(v, Tensor) or hasattr(v, "shape") or hasattr(v, "detach"):
        a = _host(v)
        if a.shape == ():
            return num(a)
        if a.shape != (n,):
            raise ValueError(f"LBFGS.load_state_dict: state '{key}' has shape {a.shape}, "
                             f"expected ({n},) (all parameters, flat)")
        return p.backend.from_numpy(a.astype(p.dtype, copy=True))
    return v


def _cubic_interpolate(x1, f1, g1, x2, f2, g2, bounds=None):
    """The minimiser of the cubic through (x1, f1) and (x2, f2) with slopes g1, g2, kept in
    `bounds` (default: between x1 and x2); the bounds' middle where the cubic has none."""
    lo, hi = bounds if bounds is not None else ((x1, x2) if x1 <= x2 else (x2, x1))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    d2_square = d1 ** 2 - g1 * g2
    if d2_square >= 0:
        d2 = np.sqrt(d2_square)
        if x1 <= x2:
            min_pos = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
        else:
            min_pos = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
        return min(max(min_pos, lo), hi)
    return (lo + hi) / 2.0


def _strong_wolfe(obj_func, x, t, d, f, g, gtd, num, c1=1e-4, c2=0.9, tolerance_change=1e-9,
                  max_ls=25):
    """A step t along d meeting the strong Wolfe conditions (sufficient decrease, c1; a
    slope reduced to c2 of the first), by bracketing then zooming with cubic steps, as
    PyTorch's (itself after minFunc). Returns (loss, flat grad, t, evaluations)."""
    d_norm = num(abs(d).max())
    g = g.copy()
    f_new, g_new = obj_func(x, t, d)
    ls_func_evals = 1
    gtd_new = num(g_new @ d)
    t_prev, f_prev, g_prev, gtd_prev = 0, f, g, gtd
    done = False
    ls_iter = 0
    # bracketing: grow t until the interval [t_prev, t] holds a point that will do
    while ls_iter < max_ls:
        if f_new > (f + c1 * t * gtd) or (ls_iter > 1 and f_new >= f_prev):
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        if abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.copy()], [gtd_prev, gtd_new]
            break
        min_step = t + 0.01 * (t - t_prev)       # extrapolate, within [1.01 t, 10 t]
        max_step = t * 10
        tmp = t
        t = _cubic_interpolate(t_prev, f_prev, gtd_prev, t, f_new, gtd_new,
                               bounds=(min_step, max_step))
        t_prev, f_prev, g_prev, gtd_prev = tmp, f_new, g_new.copy(), gtd_new
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = num(g_new @ d)
        ls_iter += 1
    if ls_iter >= max_ls:                        # out of evaluations: the best of 0 and t
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]

    # zoom: shrink the bracket until a point meets both conditions
    insuf_progress = False
    low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_interpolate(bracket[0], bracket_f[0], bracket_gtd[0],
                               bracket[1], bracket_f[1], bracket_gtd[1])
        # a point too near an end makes little progress: moved to 0.1 of the width inside
        eps = 0.1 * (max(bracket) - min(bracket))
        if min(max(bracket) - t, t - min(bracket)) < eps:
            if insuf_progress or t >= max(bracket) or t <= min(bracket):
                if abs(t - max(bracket)) < abs(t - min(bracket)):
                    t = max(bracket) - eps
                else:
                    t = min(bracket) + eps
                insuf_progress = False
            else:
                insuf_progress = True
        else:
            insuf_progress = False
        f_new, g_new = obj_func(x, t, d)
        ls_func_evals += 1
        gtd_new = num(g_new @ d)
        ls_iter += 1
        if f_new > (f + c1 * t * gtd) or f_new >= bracket_f[low_pos]:
            bracket[high_pos], bracket_f[high_pos] = t, f_new   # not low enough: new high end
            bracket_g[high_pos], bracket_gtd[high_pos] = g_new.copy(), gtd_new
            low_pos, high_pos = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high_pos] - bracket[low_pos]) >= 0:
                bracket[high_pos], bracket_f[high_pos] = bracket[low_pos], bracket_f[low_pos]
                bracket_g[high_pos] = bracket_g[low_pos]
                bracket_gtd[high_pos] = bracket_gtd[low_pos]
            bracket[low_pos], bracket_f[low_pos] = t, f_new       # the new low end
            bracket_g[low_pos], bracket_gtd[low_pos] = g_new.copy(), gtd_new
    return bracket_f[low_pos], bracket_g[low_pos], bracket[low_pos], ls_func_evals
