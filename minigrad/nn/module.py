"""`Module` and `Parameter`: how layers own their weights, nest, move between devices and
save their state. Attribute assignment registers parameters and sub-modules, as PyTorch."""
from collections import OrderedDict, namedtuple

from minigrad import backend
from minigrad.creation import from_other_library
from minigrad.nn.hooks import ForwardHooks
from minigrad.tensor import Tensor, split_device_dtype


_IncompatibleKeys = namedtuple("IncompatibleKeys", "missing_keys unexpected_keys")


class Parameter(Tensor):
    """A tensor that a Module owns as a trainable weight (requires_grad by default)."""
    __slots__ = ()

    def __init__(self, data, requires_grad=True):
        if isinstance(data, Tensor):
            super().__init__(data.data, device=data.device)
            if self.data is data.data:           # the same memory: one count of its changes
                self._version_counter = data._version_counter
        else:
            super().__init__(data)
        if requires_grad:
            self.requires_grad_(True)

    def __repr__(self):
        return "Parameter containing:\n" + super().__repr__()


def zero_grads(params, set_to_none=True):
    """Module.zero_grad and Optimizer.zero_grad: each .grad set to None, or, with
    set_to_none=False, zeroed with the same tensor object kept, as PyTorch (a reference to
    it sees the zeros). It gets new zero memory rather than being written in place: a
    gradient array may be another tensor's too, or a read-only broadcast view."""
    for p in params:
        g = p.grad
        if set_to_none or g is None:
            p.grad = None
        elif g.requires_grad or g._ctx is not None:   # from create_graph=True: a fresh
            p._grad = Tensor._make(g.backend.xp.zeros_like(g.data), p.device)   # leaf
        else:
            g._data = g.backend.xp.zeros_like(g.data)
            g._version_counter[0] += 1


class Module(ForwardHooks):
    """Base class of every layer: subclasses set attributes in __init__ and define forward."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "_non_persistent", set())   # buffers state_dict leaves out
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            if not isinstance(value, (Parameter, Module)):   # a plain value may come first,
                object.__setattr__(self, name, value)        # as PyTorch
                return
            raise RuntimeError(f"{type(self).__name__}.__init__ must call super().__init__() "
                               f"before assigning parameters or submodules")
        if name in self._buffers and not isinstance(value, (Parameter, Module)):
            # a buffer stays a buffer (self.running = self.running * 0.9 + x), as PyTorch
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"{type(self).__name__}: cannot assign a value of type "
                                f"{type(value).__name__} to buffer '{name}' (a Tensor or "
                                f"None expected); del it first to use the name otherwise")
            self._buffers[name] = value
            return
        # a registered parameter (module) is replaced only by a Parameter (Module) or None,
        # as PyTorch: m.w = m.w * 2 would otherwise silently drop w from parameters()
        for store, kind, want in ((self._parameters, "parameter", Parameter),
                                  (self._modules, "child module", Module)):
            if name in store and not isinstance(value, (want, Parameter)):
                if value is not None:
                    raise TypeError(f"{type(self).__name__}: cannot assign a "
                                    f"{type(value).__name__} as {kind} '{name}' "
                                    f"({want.__name__} or None expected); to change a "
                                    f"parameter's values assign its .data, or del it first")
                store[name] = None
                return
        target = self._parameters if isinstance(value, Parameter) else \
            self._modules if isinstance(value, Module) else None
        if target is self._parameters and name not in self._parameters:
            # a plain attribute, child module or buffer of that name is replaced, as PyTorch
            self.__dict__.pop(name, None)
            self._modules.pop(name, None)
            self._buffers.pop(name, None)
            self._check_new_name("parameter", name, self._parameters, value, Parameter)
        for store in (self._parameters, self._modules, self._buffers):
            if store is not target:
                store.pop(name, None)
        self._non_persistent.discard(name)               # no longer a buffer, if it was
        if target is None:
            object.__setattr__(self, name, value)
            return
        target[name] = value     # a name already there keeps its place (state_dict order)
        self.__dict__.pop(name, None)

    def __getattr__(self, name):  # only called when normal lookup fails
        for store in ("_parameters", "_modules", "_buffers"):
            d = self.__dict__.get(store)
            if d is not None and name in d:
                return d[name]
        raise AttributeError(f"'{type(self).__name__}' has no attribute '{name}'")

    def __delattr__(self, name):
        for store in (self._parameters, self._modules, self._buffers):
            if name in store:
                del store[name]
                self._non_persistent.discard(name)
                return
        object.__delattr__(self, name)

    def register_buffer(self, name, tensor, persistent=True):
        """A tensor that is state but not a weight (moved by .to, saved in state_dict unless
        persistent=False: for what the module rebuilds itself, such as a causal mask)."""
        self._check_new_name("buffer", name, self._buffers, tensor, Tensor)
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor
        (self._non_persistent.discard if persistent else self._non_persistent.add)(name)

    def register_parameter(self, name, param):
        """Register `param` (or None, for an absent optional weight such as a bias)."""
        self._check_new_name("parameter", name, self._parameters, param, Parameter)
        self.__dict__.pop(name, None)
        self._parameters[name] = param

    def _check_new_name(self, kind, name, store, value, cls):
        """PyTorch's checks: the name becomes a state-dict key, so a non-empty string
        without dots that is not another attribute; the value a `cls` or None."""
        if not isinstance(name, str):
            raise TypeError(f"{kind} name should be a string, got {type(name).__name__}")
        if "." in name or not name:
            raise KeyError(f"{kind} name can't contain \".\" or be empty, got {name!r}")
        if hasattr(self, name) and name not in store:
            raise KeyError(f"attribute '{name}' already exists")
        if value is not None and not isinstance(value, cls):
            raise TypeError(f"cannot assign '{type(value).__name__}' object to {kind} "
                            f"'{name}' ({cls.__name__} or None required)")

    def add_module(self, name, module):
        """Register `module` (or None) as the child `name`, as `self.name = module` would,
        for names that are not identifiers ("0", "block-1"). The name becomes part of
        state-dict keys, so, as PyTorch, it must be a non-empty string without dots and
        not an attribute the module already has (other than a child of that name)."""
        if module is not None and not isinstance(module, Module):
            raise TypeError(f"add_module: {type(module).__name__} is not a Module subclass")
        if not isinstance(name, str):
            raise TypeError(f"add_module: module name should be a string, got "
                            f"{type(name).__name__}")
        if hasattr(self, name) and name not in self._modules:
            raise KeyError(f"add_module: attribute '{name}' already exists in "
                           f"{type(self).__name__}")
        if "." in name:
            raise KeyError(f"add_module: module name can't contain \".\" (it separates "
                           f"names in state-dict keys), got: {name}")
        if name == "":
            raise KeyError('add_module: module name can\'t be empty string ""')
        self._modules[name] = module

    register_module = add_module    # PyTorch's alias

    # ---- calling --------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    # ---- traversal ------------------------------------------------------------------------
    def named_modules(self, prefix="", remove_duplicate=True):
        """(name, module) pairs, self first, depth first; a module reachable under several
        names comes once (its first name) unless remove_duplicate=False. An explicit stack,
        not a generator that recurses into itself: that closure would be a reference cycle
        left for the garbage collector at every call (parameters(), train(), zero_grad()...)."""
        seen, stack = set(), [(prefix, self)]
        while stack:
            name, m = stack.pop()
            if remove_duplicate and id(m) in seen:
                continue
            seen.add(id(m))
            yield name, m
            children = [(f"{name}.{n}" if name else n, c) for n, c in m._modules.items()
                        if c is not None]
            stack.extend(reversed(children))   # popped in registration order: depth first

    def modules(self):
        return (m for _, m in self.named_modules())

    def named_children(self):
        seen = set()                                     # a child under two names: once
        for n, m in self._modules.items():
            if m is not None and id(m) not in seen:
                seen.add(id(m))
                yield n, m

    def children(self):
        return (m for _, m in self.named_children())

    def named_parameters(self, prefix="", recurse=True, remove_duplicate=True):
        """(name, Parameter) pairs, each shared parameter once (its first name) unless
        remove_duplicate=False."""
        seen = set()
        mods = self.named_modules(prefix, remove_duplicate) if recurse else [(prefix, self)]
        for mname, m in mods:
            for n, p in m._parameters.items():
                if p is not None and not (remove_duplicate and id(p) in seen):
                    seen.add(id(p))
                    yield (f"{mname}.{n}" if mname else n), p

    def parameters(self, recurse=True):
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self, prefix="", recurse=True, remove_duplicate=True):
        """(name, buffer) pairs; a buffer held under several names comes once (its first
        name) unless remove_duplicate=False."""
        seen = set()
        mods = self.named_modules(prefix, remove_duplicate) if recurse else [(prefix, self)]
        for mname, m in mods:
            for n, b in m._buffers.items():
                if b is not None and not (remove_duplicate and id(b) in seen):
                    seen.add(id(b))
                    yield (f"{mname}.{n}" if mname else n), b

    def buffers(self, recurse=True):
        return (b for _, b in self.named_buffers(recurse=recurse))

    def get_submodule(self, target):
        """The sub-module at a dotted path ("encoder.layers.0"; "" is self), as PyTorch:
        an AttributeError names the first step that is missing or not a Module."""
        mod = self
        for item in target.split(".") if target else ():
            if not hasattr(mod, item):
                raise AttributeError(f"{type(mod).__name__} has no attribute `{item}`")
            mod = getattr(mod, item)
            if not isinstance(mod, Module):
                raise AttributeError(f"`{item}` is not an nn.Module")
        return mod

    def get_parameter(self, target):
        """The parameter at a dotted path ("encoder.layers.0.linear.weight")."""
        mod, name = self._owner_of(target)
        param = getattr(mod, name)
        if not isinstance(param, Parameter):
            raise AttributeError(f"`{name}` is not an nn.Parameter")
        return param

    def get_buffer(self, target):
        """The buffer at a dotted path ("norm.running_mean"); None for one registered as
        None, as PyTorch."""
        mod, name = self._owner_of(target)
        if name not in mod._buffers:
            raise AttributeError(f"`{name}` is not a buffer")
        return mod._buffers[name]

    def _owner_of(self, target):
        """(module, attribute name) of a dotted path whose last step must exist."""
        module_path, _, name = target.rpartition(".")
        mod = self.get_submodule(module_path)
        if not hasattr(mod, name):
            raise AttributeError(f"{type(mod).__name__} has no attribute `{name}`")
        return mod, name

    def apply(self, fn):
        """Call fn(module) on every sub-module, children first, then self (as PyTorch)."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- modes and devices ----------------------------------------------------------------
    def train(self, mode=True):
        """Set training mode here and, through each child's own train(), below (a child may
        override it, e.g. to keep a part frozen), as PyTorch; eval() is train(False)."""
        if not isinstance(mode, bool):
            raise ValueError(f"{type(self).__name__}.train: mode must be True or False, got "
                             f"{mode!r}")
        object.__setattr__(self, "training", mode)
        for child in self.children():
            child.train(mode)
        return self

    def eval(self):
        return self.train(False)

    def requires_grad_(self, requires_grad=True):
        """Set requires_grad on every parameter, e.g. False to freeze a pretrained part
        (backward then leaves its .grad None, and optimisers skip it); returns self."""
        for p in self.parameters():
            p.requires_grad_(requires_grad)
        return self

    def zero_grad(self, set_to_none=True):
        zero_grads(self.parameters(), set_to_none)

    def to(self, device=None, dtype=None):
        """Move every parameter and buffer, and/or cast the floating-point ones (integer and
        boolean buffers keep their dtype, as PyTorch); returns self. Parameters change in
        place (an optimiser built before keeps them); a buffer is replaced by a new tensor,
        as PyTorch, since it may be the caller's (a loss's `weight=`) or another module's."""
        device, dtype = split_device_dtype(device, dtype)
        if dtype is not None and not backend.is_floating(dtype):
            raise TypeError(f"{type(self).__name__}.to: dtype must be a floating-point type "
                            f"(float16, float32, float64), got {dtype}; a module's weights "
                            f"cannot become integers")
        for m in self.modules():
            for store in (m._parameters, m._buffers):
                for n, t in store.items():
                    if t is None:
                        continue
                    cast = dtype if backend.is_floating(t.dtype) else None
                    moved = t.detach().to(device=device, dtype=cast)
                    if moved.data is not t.data and store is m._buffers:
                        store[n] = moved
                    elif moved.data is not t.data:
                        t._data, t.device = moved.data, moved.device
                        t._version_counter[0] += 1   # new values for a graph built before
                        if t.grad is not None:
                            t.grad = t.grad.to(device=device, dtype=cast)
        return self

    def float(self):
        return self.to(dtype=backend.float32)

    def double(self):
        return self.to(dtype=backend.float64)

    def half(self):
        return self.to(dtype=backend.float16)

    def cpu(self):
        return self.to("cpu")

    def cuda(self, device=None):
        """Move to the GPU; `device`, a GPU index, is accepted as PyTorch's (minigrad drives
        one GPU, so every index means "cuda")."""
        return self.to("cuda" if device is None else f"cuda:{device}")

    # ---- state ----------------------------------------------------------------------------
    def state_dict(self, *, destination=None, prefix="", keep_vars=False):
        """Name -> tensor for every parameter and buffer (names as PyTorch would give them,
        each after `prefix`), added to `destination` if given. The tensors share memory
        with the module, so, as in PyTorch, they follow its later changes (optimiser steps,
        load_state_dict): clone() them to keep a snapshot. keep_vars=True gives the
        Parameters themselves rather than detached tensors."""
        out = OrderedDict() if destination is None else destination
        for k, t in self._named_state(extra=True):
            out[prefix + k] = t.get_extra_state() if isinstance(t, Module) else \
                t if keep_vars else t.detach()
        return out

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
        return ((k, m) for k, m in self._named_state(extra=True) if isinstance(m, Module))

    def _named_state(self, extra=False):
        """(name, tensor) for every parameter and buffer under every name it has: a shared
        module or tensor appears once per name, as in PyTorch's state dicts. extra=True
        adds (name of its "_extra_state", module) after each module's own tensors, for
        the modules that override get_extra_state (PyTorch's order)."""
        for mname, m in self.named_modules(remove_duplicate=False):
            name = f"{mname}.{{}}" if mname else "{}"
            for store in (m._parameters, m._buffers):
                for n, t in store.items():
                    if t is not None and not (store is m._buffers and n in m._non_persistent):
                        yield name.format(n), t
            if extra and type(m).get_extra_state is not Module.get_extra_state:
                yield name.format("_extra_state"), m

    def load_state_dict(self, state_dict, strict=True, assign=False):
        """Copy values in by name. With strict=True, any missing or unexpected key or shape
        mismatch is an error that lists them all; returns (missing_keys, unexpected_keys),
        a named tuple, as PyTorch. assign=True puts the state dict's tensors themselves in
        the module, in their dtype, with no copy (a parameter keeps its requires_grad), as
        PyTorch's; unlike PyTorch's, a parameter the model shares under two names (a tied
        output head) stays one parameter, the one of the first name."""
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"load_state_dict into {type(self).__name__}: expected a mapping "
                            f"of names to tensors (as state_dict() returns), got "
                            f"{type(state_dict).__name__}")
        own = dict(self._named_state())
        # state a module can do without (BatchNorm's num_batches_tracked, which state dicts
        # saved before it existed lack): kept as it is, not reported missing, as PyTorch
        optional = {(f"{m_name}.{n}" if m_name else n)       # (a shared module: each name)
                    for m_name, m in self.named_modules(remove_duplicate=False)
                    for n in getattr(m, "_optional_state", ())}
        extras = dict(self._extra_states())
        missing = [k for k in [*own, *extras] if k not in state_dict and k not in optional]
        unexpected = [k for k in state_dict if k not in own and k not in extras]
        mismatched = [f"{k}: checkpoint {tuple(_shape(state_dict[k]))} vs model "
                      f"{own[k].shape}" for k in own
                      if k in state_dict and tuple(_shape(state_dict[k])) != own[k].shape]
        if mismatched or (strict and (missing or unexpected)):
            parts = [f"{what}: {_first(names)}" for what, names in (
                ("missing keys", missing), ("unexpected keys", unexpected),
                ("shape mismatches", mismatched)) if names]
            raise RuntimeError(f"load_state_dict into {type(self).__name__}: " + "; ".join(parts))
        if assign:
            self._assign(state_dict)
        for k, t in own.items():
            if k in state_dict and not assign:  # into the tensor's memory, as PyTorch's copy_
                t.data[...] = t.backend.from_numpy(_host(state_dict[k]).astype(t.dtype))
                t._version_counter[0] += 1
        for k, m in extras.items():
            if k in state_dict:
                m.set_extra_state(state_dict[k])
        return _IncompatibleKeys(missing, unexpected)

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
                        v = state_dict[k]
                        if not isinstance(v, Tensor):
                            v = Tensor(_host(v), device=old.device)
                        new[id(old)] = Parameter(v, old.requires_grad) \
                            if isinstance(old, Parameter) else v
                    store[n] = new[id(old)]

    # ---- printing -------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def __repr__(self):
        # every child under every name (a shared one twice, as PyTorch), not named_children
        children = [f"({n}): " + repr(m).replace("\n", "\n  ")
                    for n, m in self._modules.items()]
        extra = self.extra_repr().split("\n") if self.extra_repr() else []
        if len(extra) == 1 and not children:             # PyTorch's layout: one line, or
            return f"{type(self).__name__}({extra[0]})"  # each line indented on its own
        if not extra + children:
            return f"{type(self).__name__}()"
        return f"{type(self).__name__}(\n  " + "\n  ".join(extra + children) + "\n)"


def _shape(v):
    return v.shape if hasattr(v, "shape") else backend.to_host(v).shape


def _first(names, n=6):
    """The first n names of a list, and how many more (a whole model's worth is unreadable)."""
    more = f" and {len(names) - n} more" if len(names) > n else ""
    return ", ".join(names[:n]) + more


def _host(v):
    """A state-dict value as a host NumPy array: a Tensor, a NumPy/CuPy array, a list, or
    another library's tensor (a PyTorch state dict loads directly)."""
    if isinstance(v, Tensor):
        return v.numpy()
    return backend.to_host(from_other_library(v))
