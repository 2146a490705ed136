"""`Module` and `Parameter`: how layers own their weights, nest and move between devices.
Attribute assignment registers parameters and sub-modules, as PyTorch. Saving and loading
their state is module_state.py's; hooks are hooks.py's."""
from collections import OrderedDict

from minigrad import backend
from minigrad import memory_format as _mf
from minigrad.nn.buffer import Buffer
from minigrad.nn.global_hooks import (BUFFER_HOOKS, MODULE_HOOKS, PARAMETER_HOOKS,
                                      registered, register_module_forward_pre_hook,
                                      register_module_forward_hook,
                                      register_module_full_backward_pre_hook,
                                      register_module_full_backward_hook,
                                      register_module_backward_hook,
                                      register_module_buffer_registration_hook,
                                      register_module_module_registration_hook,
                                      register_module_parameter_registration_hook)
from minigrad.nn.hooks import ForwardHooks
from minigrad.nn.module_more import ModuleMore
from minigrad.nn.module_state import ModuleState
from minigrad.tensor import Tensor, split_device_dtype

# torch.nn.modules.module's names (minigrad.nn.modules.module is this file): Module and the
# global hooks (global_hooks.py)
__all__ = ["register_module_forward_pre_hook", "register_module_forward_hook",
           "register_module_full_backward_pre_hook", "register_module_backward_hook",
           "register_module_full_backward_hook", "register_module_buffer_registration_hook",
           "register_module_module_registration_hook",
           "register_module_parameter_registration_hook", "Module"]


class Parameter(Tensor):
    """A tensor that a Module owns as a trainable weight (requires_grad by default)."""
    __slots__ = ()

    def __init__(self, data, requires_grad=True):
        if isinstance(data, Tensor):
            super().__init__(data._data, device=data.device)
            if self._data is data._data:           # the same memory: one count of its changes
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
            p._grad = Tensor._make(g.backend.xp.zeros_like(g._data), p.device)   # leaf
        else:
            g._data = g.backend.xp.zeros_like(g._data)
            g._version_counter[0] += 1


def _check_target(caller, target):
    # (get_submodule(0) took 0 for "", the module itself, rather than its child "0")
    if not isinstance(target, str):
        raise TypeError(f"{caller}: target must be a dotted path as a string (\"0\", "
                        f"\"encoder.layers.0\"), got {type(target).__name__} {target!r}")


class Module(ModuleState, ForwardHooks, ModuleMore):   # (module_more.py: set_submodule...)
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
        p = self._modules.get("parametrizations")
        if hasattr(p, "_parametrized_assign") and name in p._modules:  # nn.utils.parametrize
            p._parametrized_assign(name, value)
            return
        if isinstance(value, Buffer) and name not in self._parameters and \
                name not in self._modules:            # nn.Buffer registers itself, as torch's
            self.register_buffer(name, value, value.persistent)
            return
        if name in self._buffers and not isinstance(value, (Parameter, Module)):
            # a buffer stays a buffer (self.running = self.running * 0.9 + x), as PyTorch
            if value is not None and not isinstance(value, Tensor):
                raise TypeError(f"{type(self).__name__}: cannot assign a value of type "
                                f"{type(value).__name__} to buffer '{name}' (a Tensor or "
                                f"None expected); del it first to use the name otherwise")
            self._buffers[name] = registered(BUFFER_HOOKS, self, name, value)
            return
        # a registered parameter (module) is replaced only by a Parameter (Module) or None,
        # as PyTorch: m.w = m.w * 2 would otherwise silently drop w from parameters()
        for store, kind, want, hint in (
                (self._parameters, "parameter", Parameter, "to change a parameter's values "
                 "assign its .data, or del it first"),
                (self._modules, "child module", Module, "del it first to use the name "
                 "otherwise")):
            if name in store and not isinstance(value, (want, Parameter)):
                if value is not None:
                    raise TypeError(f"{type(self).__name__}: cannot assign a "
                                    f"{type(value).__name__} as {kind} '{name}' "
                                    f"({want.__name__} or None expected); {hint}")
                # None for a child fires the registration hooks, for a parameter not
                store[name] = None if store is self._parameters else \
                    registered(MODULE_HOOKS, self, name, None)
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
        self.__dict__.pop(name, None)
        hooks = PARAMETER_HOOKS if target is self._parameters else MODULE_HOOKS
        # a name already there keeps its place (state_dict order)
        target[name] = registered(hooks, self, name, value)

    def __getattr__(self, name):  # only called when normal lookup fails
        for store in ("_parameters", "_modules", "_buffers"):
            d = self.__dict__.get(store)
            if d is not None and name in d:
                return d[name]
        p = self.__dict__.get("_modules", {}).get("parametrizations")
        if hasattr(p, "_parametrized_value") and name in p._modules:   # nn.utils.parametrize
            return p._parametrized_value(self, name)
        raise AttributeError(f"'{type(self).__name__}' has no attribute '{name}'")

    def __dir__(self):
        # the registered names too (tab completion), which live in the stores, not in
        # __dict__; as PyTorch's, not a Sequential's "0", "1" (no attribute syntax reaches)
        names = {*super().__dir__(), *self._parameters, *self._modules, *self._buffers}
        return sorted(k for k in names if not k[:1].isdigit())

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
        self._buffers[name] = registered(BUFFER_HOOKS, self, name, tensor)
        (self._non_persistent.discard if persistent else self._non_persistent.add)(name)

    def register_parameter(self, name, param):
        """Register `param` (or None, for an absent optional weight such as a bias)."""
        self._check_new_name("parameter", name, self._parameters, param, Parameter)
        self.__dict__.pop(name, None)
        self._parameters[name] = param if param is None else \
            registered(PARAMETER_HOOKS, self, name, param)

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
        self._modules[name] = registered(MODULE_HOOKS, self, name, module)

    register_module = add_module    # PyTorch's alias

    # ---- calling --------------------------------------------------------------------------
    # m(x) is ForwardHooks.__call__ (hooks.py): forward(x), with the module's hooks around it
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    # ---- traversal ------------------------------------------------------------------------
    def named_modules(self, memo=None, prefix="", remove_duplicate=True):
        """(name, module) pairs, self first, depth first; a module reachable under several
        names comes once (its first name) unless remove_duplicate=False. memo, as PyTorch's:
        a set of modules to leave out, to which each one yielded is added. An explicit
        stack, not a generator that recurses into itself: that closure would be a reference
        cycle left for the garbage collector at every call (parameters(), train()...)."""
        seen, stack = set() if memo is None else memo, [(prefix, self)]
        while stack:
            name, m = stack.pop()
            if m in seen:
                continue
            if remove_duplicate:
                seen.add(m)
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
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
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
        mods = self.named_modules(prefix=prefix, remove_duplicate=remove_duplicate) \
            if recurse else [(prefix, self)]
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
        _check_target("get_submodule", target)
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
        _check_target("get_parameter/get_buffer", target)
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

    def to(self, device=None, dtype=None, non_blocking=False, *, memory_format=None):
        """Move every parameter and buffer, and/or cast the floating-point ones (integer and
        boolean buffers keep their dtype, as PyTorch), and/or lay the 4-D and 5-D ones out
        in memory_format (channels_last refuses a 5-D one, as PyTorch); returns self.
        Parameters change in place (an optimiser built before keeps them); a buffer is
        replaced by a new tensor, as PyTorch, since it may be the caller's (a loss's
        `weight=`) or another module's. non_blocking (a bool; after a dtype or tensor it may
        come second: m.to(mg.float64, True)) is taken, as Tensor.to's, and changes nothing."""
        if isinstance(dtype, bool):     # m.to(dtype or tensor, non_blocking): shifted
            dtype, non_blocking = None, dtype
        if not isinstance(non_blocking, bool):
            raise TypeError(f"{type(self).__name__}.to: non_blocking must be a bool, got "
                            f"{type(non_blocking).__name__} {non_blocking!r}")
        device, dtype = split_device_dtype(device, dtype)
        if dtype is not None and not backend.is_floating(dtype):
            raise TypeError(f"{type(self).__name__}.to: dtype must be a floating-point type "
                            f"(float16, float32, float64), got {dtype}; a module's weights "
                            f"cannot become integers")
        if memory_format is not None:               # (refused even with no 4-D weight)
            _mf.check(memory_format, f"{type(self).__name__}.to")
        return self._convert(self.modules(), device, dtype, memory_format=memory_format)

    def _convert(self, modules, device, dtype, every_dtype=False, memory_format=None):
        """to()'s work on these modules' own parameters and buffers (every_dtype: the
        integer and boolean buffers cast too, as PyTorch's Module.type)."""
        for m in modules:
            for store in (m._parameters, m._buffers):
                for n, t in store.items():
                    if t is None:
                        continue
                    cast = dtype if every_dtype or backend.is_floating(t.dtype) else None
                    moved = t.detach().to(device=device, dtype=cast)
                    fmt = memory_format if memory_format is not None and \
                        t.ndim in (4, 5) else None    # (a lazy placeholder has no ndim)
                    if fmt is not None:
                        moved = moved.to(memory_format=fmt)
                    if moved._data is not t._data and store is m._buffers:
                        store[n] = moved
                    elif moved._data is not t._data:
                        t._data, t.device = moved._data, moved.device
                        t._version_counter[0] += 1   # new values for a graph built before
                        if t.grad is not None:
                            t.grad = t.grad.to(device=device, dtype=cast)
                            t.grad = t.grad if fmt is None else t.grad.to(memory_format=fmt)
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
