"""A Module's state: state_dict (names as PyTorch gives them, tensors sharing the module's
memory) and load_state_dict (strict errors listing every problem by name, assign=True),
extra state beyond tensors, and the state-dict hooks. `Module` (module.py) inherits it."""
from collections import OrderedDict, namedtuple

from minigrad import backend
from minigrad.creation import from_other_library
from minigrad.nn.global_hooks import BUFFER_HOOKS, PARAMETER_HOOKS, registered
from minigrad.nn.hooks import hooks_of
from minigrad.tensor import Tensor

_IncompatibleKeys = namedtuple("IncompatibleKeys", "missing_keys unexpected_keys")


class ModuleState:
    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """Name -> tensor for every parameter and buffer (names as PyTorch would give them,
        each after `prefix`), added to `destination` if given. The tensors share memory
        with the module, so, as in PyTorch, they follow its later changes (optimiser steps,
        load_state_dict): clone() them to keep a snapshot. keep_vars=True gives the
        Parameters themselves rather than detached tensors."""
        out = OrderedDict() if destination is None else destination
        self._save_into(out, prefix, keep_vars)
        return out

    def _save_into(self, out, prefix, keep_vars):
        """This module's state, then its children's (PyTorch's order), between its
        state-dict hooks: register_state_dict_pre_hook's hook(module, prefix, keep_vars)
        first, register_state_dict_post_hook's hook(module, state_dict, prefix, {}) last,
        which may change the state dict in place (a shared child: once per name)."""
        for hook in hooks_of(self, "_state_dict_pre_hooks"):
            hook(self, prefix, keep_vars)
        for k, t in self._own_state(extra=True):
            out[prefix + k] = t.get_extra_state() if isinstance(t, ModuleState) else \
                t if keep_vars else t.detach()
        for name, child in self._modules.items():
            if child is not None:
                child._save_into(out, f"{prefix}{name}.", keep_vars)
        for hook in hooks_of(self, "_state_dict_hooks"):
            if hook(self, out, prefix, {}) is not None:
                raise RuntimeError(f"{type(self).__name__}.state_dict: a state_dict post hook "
                                   f"must return None (change the state dict in place)")

    def get_extra_state(self):
        """State beyond tensors, as PyTorch's: a module that overrides this (and
        set_extra_state) has its return value saved in state_dict as "_extra_state"."""
        raise RuntimeError(f"{type(self).__name__}.get_extra_state: override it (and "
                           f"set_extra_state) to save state beyond tensors")

    def set_extra_state(self, state):
        """Restore what get_extra_state returned (load_state_dict calls it)."""
        raise RuntimeError(f"{type(self).__name__}.set_extra_state: override it to load the "
                           f"'_extra_state' that get_extra_state saved")

    def _extra_states(self):
        """(key, module) for every module that overrides get_extra_state."""
        return ((k, m) for k, m in self._named_state(extra=True) if isinstance(m, ModuleState))

    def _named_state(self, extra=False):
        """(name, tensor) for every parameter and buffer under every name it has: a shared
        module or tensor appears once per name, as in PyTorch's state dicts. extra=True
        adds (name of its "_extra_state", module) after each module's own tensors, for
        the modules that override get_extra_state (PyTorch's order)."""
        for mname, m in self.named_modules(remove_duplicate=False):
            for n, t in m._own_state(extra):
                yield f"{mname}.{n}" if mname else n, t

    def _own_state(self, extra):
        """(name, tensor) for this module's own parameters and persistent buffers, then
        ("_extra_state", self) where it overrides get_extra_state and `extra` is asked."""
        for store in (self._parameters, self._buffers):
            for n, t in store.items():
                if t is not None and not (store is self._buffers and n in self._non_persistent):
                    yield n, t
        if extra and type(self).get_extra_state is not ModuleState.get_extra_state:
            yield "_extra_state", self

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values in by name. With strict=True, any missing or unexpected key or shape
        mismatch is an error that lists them all; returns (missing_keys, unexpected_keys),
        a named tuple, as PyTorch. assign=True puts the state dict's tensors themselves in
        the module, in their dtype, with no copy (a parameter keeps its requires_grad), as
        PyTorch's; unlike PyTorch's, a parameter the model shares under two names (a tied
        output head) stays one parameter, the one of the first name.

        Hooks, as PyTorch's: register_load_state_dict_pre_hook's hook(module, state_dict,
        prefix, {}, strict, missing_keys, unexpected_keys, error_msgs) runs first, on a
        copy of the state dict it may change (rename old keys), in each module's
        _load_from_state_dict (which a subclass may override too); then, after loading,
        register_load_state_dict_post_hook's hook(module, incompatible_keys), which may
        clear keys from its lists before strict judges them. Without post hooks nothing is
        loaded when strict refuses; with them, as PyTorch, the rest is loaded first."""
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"load_state_dict into {type(self).__name__}: expected a mapping "
                            f"of names to tensors (as state_dict() returns), got "
                            f"{type(state_dict).__name__}")
        found_missing, found_unexpected, errors = [], [], []
        pre = [(n, m) for n, m in self.named_modules(remove_duplicate=False)
               if hooks_of(m, "_load_state_dict_pre_hooks") or
               type(m)._load_from_state_dict is not ModuleState._load_from_state_dict]
        if pre:
            state_dict = OrderedDict(state_dict)        # the caller's own stays as it is
            for n, m in pre:
                m._load_from_state_dict(state_dict, f"{n}." if n else "", {}, strict,
                                        found_missing, found_unexpected, errors)
        if errors:
            raise RuntimeError(f"load_state_dict into {type(self).__name__}: " +
                               "; ".join(map(str, errors)))
        post = [m for m in self.modules() if hooks_of(m, "_load_state_dict_post_hooks")]
        own = dict(self._named_state())
        # state a module can do without (BatchNorm's num_batches_tracked, which state dicts
        # saved before it existed lack): kept as it is, not reported missing, as PyTorch
        optional = {(f"{m_name}.{n}" if m_name else n)       # (a shared module: each name)
                    for m_name, m in self.named_modules(remove_duplicate=False)
                    for n in getattr(m, "_optional_state", ())}
        extras = dict(self._extra_states())
        missing = found_missing + [k for k in [*own, *extras]
                                   if k not in state_dict and k not in optional]
        unexpected = found_unexpected + [k for k in state_dict
                                         if k not in own and k not in extras]
        shapes = {k: _shape(k, state_dict[k]) for k in own if k in state_dict}
        mismatched = [f"{k}: checkpoint {shape} vs model {own[k].shape}"
                      for k, shape in shapes.items() if shape != own[k].shape]
        if mismatched or (strict and not post and (missing or unexpected)):
            self._refuse(missing, unexpected, mismatched)
        if assign:
            self._assign(state_dict)
        for k, t in own.items():
            if k in state_dict and not assign:  # into the tensor's memory, as PyTorch's copy_
                t._data[...] = t.backend.from_numpy(entry(k, state_dict[k]).astype(t.dtype))
                t._version_counter[0] += 1
        for k, m in extras.items():
            if k in state_dict:
                m.set_extra_state(state_dict[k])
        result = _IncompatibleKeys(missing, unexpected)
        for m in post:
            for hook in hooks_of(m, "_load_state_dict_post_hooks"):
                if hook(m, result) is not None:
                    raise RuntimeError(f"load_state_dict into {type(self).__name__}: a post "
                                       f"hook must return None (change incompatible_keys in "
                                       f"place)")
        if post and strict and (result.missing_keys or result.unexpected_keys):
            self._refuse(result.missing_keys, result.unexpected_keys, [])
        return result

    def _load_from_state_dict(self, state_dict, prefix, local_metadata, strict,
                              missing_keys, unexpected_keys, error_msgs):
        """PyTorch's step of load_state_dict for one module (its keys start with `prefix`),
        which a subclass may override, e.g. to rename the keys of an older checkpoint in
        `state_dict` (a copy) before calling this one, as PyTorch's. Here it only runs the
        module's load_state_dict pre hooks: load_state_dict then copies every value by
        name, after every module's step, so an override does not see them loaded yet."""
        for hook in hooks_of(self, "_load_state_dict_pre_hooks"):
            hook(self, state_dict, prefix, local_metadata, strict, missing_keys,
                 unexpected_keys, error_msgs)

    def _refuse(self, missing, unexpected, mismatched):
        """load_state_dict's error: every problem, by name."""
        parts = [f"{what}: {_first(names)}" for what, names in (
            ("missing keys", missing), ("unexpected keys", unexpected),
            ("shape mismatches", mismatched)) if names]
        raise RuntimeError(f"load_state_dict into {type(self).__name__}: " + "; ".join(parts))

    def _assign(self, state_dict):
        """load_state_dict(assign=True): each parameter and buffer replaced by the state
        dict's tensor (a tensor of this library: itself; anything else: its values, as a
        tensor on the device of the one it replaces)."""
        new = {}                  # id(old tensor) -> its replacement: a shared one stays shared
        for mname, m in self.named_modules(remove_duplicate=False):
            for store in (m._parameters, m._buffers):
                for n, old in list(store.items()):
                    k = f"{mname}.{n}" if mname else n
                    if old is None or k not in state_dict or \
                            (store is m._buffers and n in m._non_persistent):
                        continue
                    if id(old) not in new:
                        from minigrad.nn.module import Parameter   # (module.py imports this)
                        v = state_dict[k]
                        if not isinstance(v, Tensor):
                            v = Tensor(entry(k, v), device=old.device)
                        new[id(old)] = Parameter(v, old.requires_grad) \
                            if isinstance(old, Parameter) else v
                    hooks = PARAMETER_HOOKS if store is m._parameters else BUFFER_HOOKS
                    store[n] = registered(hooks, m, n, new[id(old)])   # as setattr, as PyTorch


def _shape(name, v):
    return tuple(v.shape) if hasattr(v, "shape") else entry(name, v).shape


def entry(name, v):
    """host(v) for the state dict's entry `name`: what cannot be read (None, a string, a
    bfloat16 tensor) is an error that names the entry, as a checkpoint has hundreds."""
    try:
        return host(v)
    except TypeError as e:
        raise TypeError(f"load_state_dict: the state dict's entry {name!r} is not a tensor "
                        f"minigrad can read: {e}") from None


def _first(names, n=6):
    """The first n names of a list, and how many more (a whole model's worth is unreadable)."""
    more = f" and {len(names) - n} more" if len(names) > n else ""
    return ", ".join(names[:n]) + more


def host(v):
    """A state-dict value as a host NumPy array: a Tensor, a NumPy/CuPy array, a list, or
    another library's tensor (a PyTorch state dict loads directly)."""
    if isinstance(v, Tensor):
        return v.numpy()
    return backend.to_host(from_other_library(v))
