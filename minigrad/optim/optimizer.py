"""`Optimizer`: what every optimiser shares — parameter groups with per-group options,
`zero_grad`, and a `state_dict` that resumes training exactly (also through a .safetensors
checkpoint, via the flat form `flat_state_dict` / `load_flat_state_dict`)."""
import collections
import json
import numbers

from minigrad.autograd import no_grad, enable_grad
from minigrad.nn.module import zero_grads
from minigrad.nn.module_state import host as _host
from minigrad.optim.optimizer_hooks import (OptimizerHooks, step_hooks,
                                            register_optimizer_step_pre_hook,  # noqa: F401
                                            register_optimizer_step_post_hook)  # noqa: F401
from minigrad.tensor import Tensor


def is_number(x):
    """A real number, not a bool (True is an int to Python, but no learning rate)."""
    return isinstance(x, numbers.Real) and not isinstance(x, bool)


class Optimizer(OptimizerHooks):
    """Base class. Subclasses set `defaults` (the per-group options) and implement
    `_update(param, grad, state, group)`: from the parameter (a Tensor; its array module is
    `param.backend.xp`) and its gradient array, update the array `param._data` in place (as
    PyTorch, so a state_dict() taken earlier follows the parameters).

    `params` is an iterable of tensors (or of (name, tensor) pairs, as model.named_parameters()
    gives: the names are kept in the group's "param_names"), or a list of dicts each with a
    "params" entry and any options that override the defaults for that group (so e.g.
    biases can skip weight decay):

        Adam([{"params": weights, "weight_decay": 0.1},
              {"params": biases, "weight_decay": 0.0}], lr=3e-4)

    Every optimiser has PyTorch's `maximize` option: it ascends the objective, the gradient
    negated before anything else (weight decay, momentum) sees it.

    Hooks, as PyTorch's (optimizer_hooks.py): register_step_pre_hook / _post_hook, the
    state-dict ones, and the global register_optimizer_step_pre_hook / _post_hook. They run
    in the public step, state_dict and load_state_dict, so a subclass that changes those
    overrides `_step`, `_state_dict` or `_load_state_dict` instead (as LBFGS does).
    """

    def __init__(self, params, defaults):
        self._init_hooks()
        self.defaults = {**dict(defaults), "maximize": defaults.get("maximize", False)}
        # param -> dict of its state (arrays, step); as PyTorch's, a defaultdict: a parameter
        # not yet stepped reads as {}
        self.state = collections.defaultdict(dict)
        self.param_groups = []
        self._validate_options(self.defaults, "defaults")
        if isinstance(params, Tensor):
            raise TypeError(f"{type(self).__name__}: params must be an iterable of tensors or "
                            f"of dicts, got a single Tensor; wrap it in a list")
        groups = list(params)
        if not groups:
            raise ValueError(f"{type(self).__name__}: got an empty parameter list; pass "
                             f"model.parameters() of a model that has parameters")
        if not isinstance(groups[0], dict):
            groups = [{"params": groups}]
        for g in groups:
            self.add_param_group(g)

    # ---- groups -------------------------------------------------------------------------
    def add_param_group(self, group):
        """Add a dict {"params": [...], option: value, ...}; missing options take defaults."""
        if not isinstance(group, dict) or "params" not in group:
            got = "a dict without one" if isinstance(group, dict) else type(group).__name__
            raise TypeError(f"{type(self).__name__}: a parameter group must be a dict with a "
                            f"'params' entry, got {got}")
        params = group["params"]
        params = [params] if isinstance(params, Tensor) else list(params)
        n = len(self.param_groups)
        if not params:
            raise ValueError(f"{type(self).__name__}: parameter group {n} is empty")
        group = dict(group)
        params = self._named(params, group, n)
        seen = {id(p) for g in self.param_groups for p in g["params"]}
        for i, p in enumerate(params):
            if not isinstance(p, Tensor):
                raise TypeError(f"{type(self).__name__}: group {n} item {i} is a "
                                f"{type(p).__name__}, expected a Tensor (Parameter)")
            if not p.is_leaf:
                raise ValueError(f"{type(self).__name__}: group {n} item {i} is not a leaf "
                                 f"tensor (it was computed by an op); optimise leaves only")
            if id(p) in seen:
                raise ValueError(f"{type(self).__name__}: a parameter (shape {p.shape}) appears "
                                 f"more than once (group {n} item {i}); each parameter may be "
                                 f"in only one group, once")
            seen.add(id(p))
        # PyTorch's own options (a group copied from a torch optimiser's param_groups has
        # them): dropped where off, as load_state_dict drops them; refused where on
        for k in [k for k in group if k in TORCH_ONLY_OPTIONS or
                  (k == "foreach" and k not in self.defaults)]:
            value = group.pop(k)
            if k == "foreach":
                check_foreach(type(self).__name__, value)
            else:
                check_torch_only(type(self).__name__, **{k: value})
        unknown = set(group) - set(self.defaults) - {"params"} - GROUP_EXTRAS
        if unknown:
            raise ValueError(f"{type(self).__name__}: unknown option(s) {sorted(unknown)} in "
                             f"group {n}; valid: {sorted(self.defaults)}")
        full = {**self.defaults, **group, "params": params}
        self._validate_options(full, f"group {n}")
        self.param_groups.append(full)

    def _named(self, params, group, n):
        """The tensors of a group given as (name, tensor) pairs (named_parameters()), their
        names put into group["param_names"] (or given there, as a group copied from another
        optimiser's param_groups has them); all or none named, in every group, as PyTorch."""
        pairs = [isinstance(p, tuple) and len(p) == 2 and isinstance(p[0], str)
                 for p in params]
        named = all(pairs) or "param_names" in group
        if any(pairs) != all(pairs) or any(pairs) and "param_names" in group or \
                self.param_groups and named != ("param_names" in self.param_groups[0]):
            raise ValueError(f"{type(self).__name__}: parameter group {n} mixes named "
                             f"(name, tensor) pairs and bare tensors (within it, or with the "
                             f"groups before it); name all or none, as PyTorch")
        if all(pairs):
            group["param_names"] = [name for name, _ in params]
            params = [p for _, p in params]
        if named and len(group["param_names"]) != len(params):
            raise ValueError(f"{type(self).__name__}: parameter group {n} has "
                             f"{len(group['param_names'])} param_names for {len(params)} "
                             f"parameters")
        return params

    def _validate_options(self, options, where):
        """Shared checks; subclasses extend with their own options."""
        name = type(self).__name__
        if not isinstance(options.get("maximize", False), bool):
            raise TypeError(f"{name}: maximize must be True or False, got "
                            f"{options['maximize']!r} in {where}")
        for key in ("lr", "weight_decay"):                # numbers: "0.1" fails later, bare
            v = options.get(key, 0)
            if not is_number(v):
                raise TypeError(f"{name}: {key} must be a number, got {v!r} in {where}")
        lr = options.get("lr")
        if not lr >= 0:                                  # NaN too
            raise ValueError(f"{name}: invalid learning rate {lr} in {where} (must be >= 0)")
        if not options.get("weight_decay", 0) >= 0:     # NaN too: it would fill every weight
            raise ValueError(f"{name}: invalid weight_decay {options['weight_decay']} in "
                             f"{where} (must be >= 0)")

    # ---- stepping -----------------------------------------------------------------------
    def zero_grad(self, set_to_none=True):
        """Forget the gradients: set to None, or to zeros (nn.module.zero_grads)."""
        zero_grads((p for g in self.param_groups for p in g["params"]), set_to_none)

    @step_hooks
    def step(self, closure=None):
        """One update of every parameter that has a gradient. `closure` (optional) re-computes
        and returns the loss, as in PyTorch. The profiler shows it as one event,
        "Optimizer.step#<class>.step" (PyTorch's name). The step hooks run around it, in
        the caller's grad mode (the update itself runs under no_grad)."""
        with no_grad():
            return self._step(closure)

    def _step(self, closure):
        loss = None
        if closure is not None:
            with enable_grad():
                loss = closure()
        for group in self.param_groups:
            todo = []                              # (param, gradient array, state)
            for p in group["params"]:
                if p.grad is None:
                    continue
                if p.grad.device != p.device or p.grad.shape != p.shape:
                    raise RuntimeError(f"{type(self).__name__}: gradient {p.grad.shape} on "
                                       f"{p.grad.device} does not match parameter {p.shape} on "
                                       f"{p.device}")
                g = p.grad._data
                g = g if g.dtype == p.dtype else g.astype(p.dtype)
                todo.append((p, ascent(g, group), self.state.setdefault(p, {})))
            if not self._update_group(todo, group):
                for p, g, state in todo:
                    self._update(p, g, state, group)
            for p, _, _ in todo:
                # an in-place change, counted as one: backward through a graph built before
                # this step now fails clearly instead of using the updated values
                p._version_counter[0] += 1
        return loss

    def _update(self, param, grad, state, group):
        raise NotImplementedError

    def _update_group(self, todo, group):
        """A faster update of a whole group at once (PyTorch's foreach), where a subclass
        has one: returns False when it did nothing, and then `_update` runs per parameter."""
        return False

    # ---- state --------------------------------------------------------------------------
    def state_dict(self):
        """{"state": {index: {name: Tensor or number}}, "param_groups": [options + "params":
        [indices]]}, as PyTorch: parameters are named by their position across groups. The
        tensors are copies, so later steps do not change a saved state dict. The state-dict
        hooks run around it."""
        return self._hooked_state_dict(self._state_dict)

    def _state_dict(self):
        index = {}
        groups = []
        for g in self.param_groups:
            ids = []
            for p in g["params"]:
                index.setdefault(id(p), len(index))
                ids.append(index[id(p)])
            groups.append({**{k: v for k, v in g.items() if k != "params"}, "params": ids})
        state = {}
        for g in self.param_groups:
            for p in g["params"]:
                s = self.state.get(p)
                if s:
                    state[index[id(p)]] = {
                        k: Tensor._make(v.copy(), p.device) if hasattr(v, "shape") else v
                        for k, v in s.items()}
        return {"state": state, "param_groups": groups}

    def load_state_dict(self, state_dict):
        """Restore options and state saved by `state_dict()` (of an optimiser built over
        the same parameters in the same order). State arrays are copied and moved to each
        parameter's device and dtype.

        A PyTorch optimiser's state dict loads too (torch.optim's SGD, Adam, AdamW, RMSprop,
        Adagrad, Adadelta, Adamax, NAdam, RAdam, whose options and state are named as ours):
        its tensors become arrays, its 0-d `step` tensor a count (a 0-d `lr` its number), and
        the options only PyTorch has (capturable, differentiable, fused) are accepted where
        they are off, refused where they are on. The load-state-dict hooks run around it."""
        self._hooked_load_state_dict(self._load_state_dict, state_dict)

    def _load_state_dict(self, state_dict):
        groups = state_dict["param_groups"]
        if len(groups) != len(self.param_groups):
            raise ValueError(f"{type(self).__name__}.load_state_dict: the saved state has "
                             f"{len(groups)} parameter groups, this optimiser has "
                             f"{len(self.param_groups)}")
        params = []
        for n, (saved, own) in enumerate(zip(groups, self.param_groups)):
            if len(saved["params"]) != len(own["params"]):
                raise ValueError(f"{type(self).__name__}.load_state_dict: group {n} has "
                                 f"{len(saved['params'])} parameters in the saved state but "
                                 f"{len(own['params'])} here")
            params.extend(zip(saved["params"], own["params"]))
        by_index = dict(params)
        options = [self._loaded_options(saved, own, n)
                   for n, (saved, own) in enumerate(zip(groups, self.param_groups))]
        new_state = {}
        for i, s in state_dict["state"].items():
            p = by_index.get(int(i))
            if p is None:
                raise ValueError(f"{type(self).__name__}.load_state_dict: state for parameter "
                                 f"{i}, which no group has")
            new_state[p] = {k: self._array_like(v, p, k) for k, v in s.items()}
        for own, values in zip(self.param_groups, options):
            own.update(values)
        self.state = collections.defaultdict(dict, new_state)

    def _loaded_options(self, saved, own, n):
        """A saved group's options, checked (all groups before any is changed)."""
        name = type(self).__name__
        values = {}
        for k, v in saved.items():
            if k == "params":
                continue
            if k == "foreach" and k not in self.defaults:
                continue                         # how PyTorch loops; the same numbers
            if k in TORCH_ONLY_OPTIONS:
                if v not in TORCH_ONLY_OPTIONS[k]:
                    raise ValueError(f"{name}.load_state_dict: group {n} has {k}={v!r}, an "
                                     f"option of PyTorch's that minigrad's optimisers do not "
                                     f"have; it loads only where it is off")
                continue
            if k not in self.defaults and k not in GROUP_EXTRAS:
                raise ValueError(f"{name}.load_state_dict: group {n} has an unknown option "
                                 f"{k!r}; valid: {sorted(self.defaults)} (is the state dict "
                                 f"another kind of optimiser's?)")
            if k == "lr" and hasattr(v, "shape") and tuple(v.shape) == ():
                v = float(_host(v))              # PyTorch's lr may be a 0-d tensor
            # JSON turns tuples (betas) to lists
            values[k] = tuple(v) if isinstance(v, list) and k in self.defaults else v
        self._validate_options({**own, **values}, f"group {n} of the loaded state")
        return values

    def _array_like(self, v, p, key):
        if hasattr(v, "detach") and hasattr(v, "cpu"):   # a torch.Tensor: as load_state_dict
            v = _host(v)                                  # of a module reads one
        if hasattr(v, "shape") and not isinstance(v, Tensor) and tuple(v.shape) == () and \
                (key == "step" or p.shape != ()):
            # a number saved as a 0-d tensor (PyTorch's step count): a number again
            v = v.item()
            return int(v) if key == "step" and float(v).is_integer() else v
        if isinstance(v, Tensor) or hasattr(v, "shape"):
            host = v.numpy() if isinstance(v, Tensor) else v
            if tuple(host.shape) != p.shape:
                raise ValueError(f"{type(self).__name__}.load_state_dict: state '{key}' has "
                                 f"shape {tuple(host.shape)}, its parameter has {p.shape}")
            return p.backend.from_numpy(host.astype(p.dtype, copy=True))  # our own array
        return v

    # ---- flat form: for .safetensors checkpoints (tensors by name + string metadata) ----
    def flat_state_dict(self, prefix="optimizer."):
        """(tensors, metadata): the state tensors under names like "optimizer.state.3.exp_avg",
        and everything else (options, step counts) as JSON in metadata[prefix + "meta"], so
        both go into one `mg.save(tensors, path, metadata)`."""
        return flatten_state_dict(self.state_dict(), prefix)

    def load_flat_state_dict(self, tensors, metadata, prefix="optimizer."):
        """Inverse of `flat_state_dict`; extra tensors (e.g. model weights) are ignored."""
        self.load_state_dict(unflatten_state_dict(tensors, metadata, prefix))

    def __repr__(self):
        lines = [f"{type(self).__name__} ("]
        for i, g in enumerate(self.param_groups):
            opts = ", ".join(f"{k}={v}" for k, v in g.items() if k != "params")
            lines.append(f"  group {i}: {len(g['params'])} params, {opts}")
        return "\n".join(lines) + "\n)"


# options PyTorch's optimisers save that minigrad's do not have: the values that mean "off"
TORCH_ONLY_OPTIONS = {"capturable": (False,), "differentiable": (False,),
                      "fused": (None, False)}

# what a group may hold besides options: the learning-rate schedulers' own values (initial_lr
# for every scheduler; OneCycleLR's max_lr, min_lr and momenta, and SWALR's swa_lr, as
# PyTorch's write them) and the parameters' names
GROUP_EXTRAS = {"initial_lr", "max_lr", "min_lr", "max_momentum", "base_momentum",
                "param_names", "swa_lr"}


def check_foreach(name, foreach):
    if foreach not in (None, True, False):
        raise TypeError(f"{name}: foreach must be None, True or False, got {foreach!r}")


def check_torch_only(name, **options):
    """PyTorch's options that minigrad's optimisers take only where they are off
    (capturable, differentiable, fused): an error naming the one that is on."""
    for key, value in options.items():
        if value not in TORCH_ONLY_OPTIONS[key]:
            raise ValueError(f"{name}: {key}={value!r} is an option of PyTorch's that minigrad "
                             f"does not have; only {key}={TORCH_ONLY_OPTIONS[key][-1]}")


# the ranges option checks name, each as PyTorch's `not 0.0 <= x` (NaN is in none)
RANGES = {">= 0": lambda x: x >= 0, "in [0, 1]": lambda x: 0 <= x <= 1,
          "in [0, 1)": lambda x: 0 <= x < 1}


def check_numbers(name, options, where, **valid):
    """Each option named in `valid` (option -> a range of RANGES) is a real number in it:
    a TypeError for what is no number, a ValueError naming the range for one outside."""
    for key, rng in valid.items():
        v = options[key]
        if not is_number(v):
            raise TypeError(f"{name}: {key} must be a number {rng}, got {v!r} in {where}")
        if not RANGES[rng](v):
            raise ValueError(f"{name}: invalid {key} {v!r} in {where} (must be {rng})")


def check_betas(name, betas, where):
    """(β1, β2), each a number in [0, 1), as PyTorch checks them (index by index)."""
    if not (isinstance(betas, (list, tuple)) and len(betas) == 2):
        raise TypeError(f"{name}: betas must be a pair of numbers (beta1, beta2), each in "
                        f"[0, 1), got {betas!r} in {where}")
    for i, b in enumerate(betas):
        if not is_number(b):
            raise TypeError(f"{name}: betas[{i}] must be a number in [0, 1), got {b!r} in "
                            f"{where}")
        if not 0 <= b < 1:
            raise ValueError(f"{name}: invalid beta parameter at index {i}: {b!r} in {where} "
                             f"(each beta must be in [0, 1))")


def check_flags(name, options, where, *keys):
    """Each option named in `keys` is True or False."""
    for key in keys:
        if options[key] not in (True, False):
            raise TypeError(f"{name}: {key} must be True or False, got {options[key]!r} in "
                            f"{where}")


def ascent(g, group):
    """The gradient an update follows: negated under maximize=True (a new array: g may be
    .grad's own)."""
    return -g if group["maximize"] else g


def flatten_state_dict(state_dict, prefix="optimizer."):
    """An optimiser state dict as (name -> Tensor, {prefix+"meta": JSON string})."""
    tensors, scalars = {}, {}
    for i, s in state_dict["state"].items():
        for k, v in s.items():
            if isinstance(v, Tensor):
                tensors[f"{prefix}state.{i}.{k}"] = v
            else:
                scalars.setdefault(str(i), {})[k] = v
    try:
        meta = json.dumps({"param_groups": state_dict["param_groups"], "scalars": scalars})
    except TypeError as e:
        raise TypeError(f"flatten_state_dict: an option is not JSON-serialisable ({e})") from None
    return tensors, {prefix + "meta": meta}


def unflatten_state_dict(tensors, metadata, prefix="optimizer."):
    """Rebuild the state dict that `flatten_state_dict` flattened."""
    key = prefix + "meta"
    if metadata is None or key not in metadata:
        raise KeyError(f"unflatten_state_dict: metadata has no '{key}' entry; was it saved "
                       f"with flat_state_dict(prefix={prefix!r})?")
    meta = json.loads(metadata[key])
    state = {}
    for i, s in meta["scalars"].items():
        state.setdefault(int(i), {}).update(s)
    head = prefix + "state."
    for name, t in tensors.items():
        if name.startswith(head):
            i, k = name[len(head):].split(".", 1)
            state.setdefault(int(i), {})[k] = t
    return {"state": state, "param_groups": meta["param_groups"]}
