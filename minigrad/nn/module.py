"""`Module` and `Parameter`: how layers own their weights, nest, move between devices and
save their state. Attribute assignment registers parameters and sub-modules, as PyTorch."""
from collections import OrderedDict

from minigrad import backend
from minigrad.autograd import HookHandle
from minigrad.tensor import Tensor, split_device_dtype


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


class Module:
    """Base class of every layer: subclasses set attributes in __init__ and define forward."""

    def __init__(self):
        object.__setattr__(self, "_parameters", OrderedDict())
        object.__setattr__(self, "_modules", OrderedDict())
        object.__setattr__(self, "_buffers", OrderedDict())
        object.__setattr__(self, "training", True)

    def __setattr__(self, name, value):
        if "_parameters" not in self.__dict__:
            raise RuntimeError(f"{type(self).__name__}.__init__ must call super().__init__() "
                               f"before assigning attributes")
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
        for store in (self._parameters, self._modules, self._buffers):
            store.pop(name, None)
        if isinstance(value, Parameter):
            self._parameters[name] = value
        elif isinstance(value, Module):
            self._modules[name] = value
        else:
            object.__setattr__(self, name, value)
            return
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
                return
        object.__delattr__(self, name)

    def register_buffer(self, name, tensor):
        """A tensor that is state but not a weight (saved in state_dict, moved by .to)."""
        self.__dict__.pop(name, None)
        self._buffers[name] = tensor

    def register_parameter(self, name, param):
        """Register `param` (or None, for an absent optional weight such as a bias)."""
        self.__dict__.pop(name, None)
        self._parameters[name] = param

    # ---- calling --------------------------------------------------------------------------
    def forward(self, *args, **kwargs):
        raise NotImplementedError(f"{type(self).__name__} must define forward()")

    def __call__(self, *args, **kwargs):
        pre, post = self.__dict__.get("_forward_pre_hooks"), self.__dict__.get("_forward_hooks")
        for hook in list(pre.values()) if pre else ():
            new = hook(self, args)                       # None keeps the inputs
            if new is not None:
                args = new if isinstance(new, tuple) else (new,)
        out = self.forward(*args, **kwargs)
        for hook in list(post.values()) if post else ():
            new = hook(self, args, out)                  # None keeps the output
            if new is not None:
                out = new
        return out

    def register_forward_pre_hook(self, hook):
        """hook(module, args) runs before forward; a value it returns replaces the positional
        inputs (a tuple, or one value). Returns a handle: handle.remove() takes it off."""
        return self._add_hook("_forward_pre_hooks", hook, "register_forward_pre_hook")

    def register_forward_hook(self, hook):
        """hook(module, args, output) runs after forward, e.g. to record activations; a value
        it returns replaces the output. Returns a handle: handle.remove() takes it off."""
        return self._add_hook("_forward_hooks", hook, "register_forward_hook")

    def _add_hook(self, kind, hook, caller):
        if not callable(hook):
            raise TypeError(f"{caller}: expected a function, got {type(hook).__name__}")
        if kind not in self.__dict__:                    # made on first use: most never are
            object.__setattr__(self, kind, OrderedDict())
        return HookHandle(self.__dict__[kind], hook)

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

    def named_parameters(self, prefix="", recurse=True):
        """(name, Parameter) pairs, each shared parameter once (its first name)."""
        seen = set()
        mods = self.named_modules(prefix) if recurse else [(prefix, self)]
        for mname, m in mods:
            for n, p in m._parameters.items():
                if p is not None and id(p) not in seen:
                    seen.add(id(p))
                    yield (f"{mname}.{n}" if mname else n), p

    def parameters(self, recurse=True):
        return (p for _, p in self.named_parameters(recurse=recurse))

    def named_buffers(self):
        for mname, m in self.named_modules():
            for n, b in m._buffers.items():
                if b is not None:
                    yield (f"{mname}.{n}" if mname else n), b

    def apply(self, fn):
        """Call fn(module) on every sub-module, children first, then self (as PyTorch)."""
        for m in self.children():
            m.apply(fn)
        fn(self)
        return self

    # ---- modes and devices ----------------------------------------------------------------
    def train(self, mode=True):
        for m in self.modules():
            object.__setattr__(m, "training", mode)
        return self

    def eval(self):
        return self.train(False)

    def zero_grad(self, set_to_none=True):
        for p in self.parameters():
            if set_to_none or p.grad is None:
                p.grad = None
            else:
                p.grad = Tensor._make(p.grad.backend.xp.zeros_like(p.grad.data), p.device)

    def to(self, device=None, dtype=None):
        """Move every parameter and buffer in place, and/or cast the floating-point ones
        (integer and boolean buffers keep their dtype, as PyTorch); returns self."""
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
                    if moved.data is not t.data:
                        t.data, t.device = moved.data, moved.device
                        t._version_counter[0] += 1   # new values for a graph built before
                        if t.grad is not None:
                            t.grad = t.grad.to(device=device, dtype=cast)
        return self

    def float(self):
        return self.to(dtype=backend.float32)

    def double(self):
        return self.to(dtype=backend.float64)

    # ---- state ----------------------------------------------------------------------------
    def state_dict(self):
        """Name -> tensor for every parameter and buffer (names as PyTorch would give them).
        The tensors share memory with the module, so, as in PyTorch, they follow its later
        changes (optimiser steps, load_state_dict): clone() them to keep a snapshot."""
        return OrderedDict((k, t.detach()) for k, t in self._named_state())

    def _named_state(self):
        """(name, tensor) for every parameter and buffer under every name it has: a shared
        module or tensor appears once per name, as in PyTorch's state dicts."""
        for mname, m in self.named_modules(remove_duplicate=False):
            for store in (m._parameters, m._buffers):
                for n, t in store.items():
                    if t is not None:
                        yield (f"{mname}.{n}" if mname else n), t

    def load_state_dict(self, state_dict, strict=True):
        """Copy values in by name. With strict=True, any missing or unexpected key or shape
        mismatch is an error that lists them all; returns (missing, unexpected)."""
        if not hasattr(state_dict, "keys") or not hasattr(state_dict, "__getitem__"):
            raise TypeError(f"load_state_dict into {type(self).__name__}: expected a mapping "
                            f"of names to tensors (as state_dict() returns), got "
                            f"{type(state_dict).__name__}")
        own = dict(self._named_state())
        missing = [k for k in own if k not in state_dict]
        unexpected = [k for k in state_dict if k not in own]
        mismatched = [f"{k}: checkpoint {tuple(_shape(state_dict[k]))} vs model "
                      f"{own[k].shape}" for k in own
                      if k in state_dict and tuple(_shape(state_dict[k])) != own[k].shape]
        if mismatched or (strict and (missing or unexpected)):
            parts = [f"{what}: {_first(names)}" for what, names in (
                ("missing keys", missing), ("unexpected keys", unexpected),
                ("shape mismatches", mismatched)) if names]
            raise RuntimeError(f"load_state_dict into {type(self).__name__}: " + "; ".join(parts))
        for k, t in own.items():
            if k in state_dict:  # into the tensor's own memory, as PyTorch's copy_
                t.data[...] = t.backend.from_numpy(_host(state_dict[k]).astype(t.dtype))
                t._version_counter[0] += 1
        return missing, unexpected

    # ---- printing -------------------------------------------------------------------------
    def extra_repr(self):
        return ""

    def __repr__(self):
        lines = [f"({n}): " + repr(m).replace("\n", "\n  ") for n, m in self.named_children()]
        head = f"{type(self).__name__}({self.extra_repr()}"
        if not lines:
            return head + ")"
        return head + "\n  " + "\n  ".join(lines) + "\n)"


def _check_module(container, m):
    if not isinstance(m, Module):
        raise TypeError(f"{type(container).__name__} holds Modules, got a "
                        f"{type(m).__name__} ({m!r:.60}); wrap a function in a Module "
                        f"subclass whose forward calls it")
    return m


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
    if hasattr(v, "detach") and hasattr(v, "cpu"):  # torch.Tensor, without importing torch
        return v.detach().cpu().numpy()
    return backend.to_host(v)


class ModuleList(Module):
    """A list of sub-modules, registered under "0", "1", ..."""

    def __init__(self, modules=()):
        super().__init__()
        for m in modules:
            self.append(m)

    def append(self, m):
        self._modules[str(len(self._modules))] = _check_module(self, m)
        return self

    def extend(self, modules):
        for m in modules:
            self.append(m)
        return self

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ModuleList(list(self._modules.values())[i])
        n = len(self._modules)
        if not backend.is_integer(i):
            raise TypeError(f"{type(self).__name__} indices must be integers or slices, not "
                            f"{type(i).__name__}")
        if not -n <= i < n:
            raise IndexError(f"{type(self).__name__} index {i} out of range for {n} modules")
        return self._modules[str(i % n)]

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules.values())

    def __repr__(self):
        """Runs of identical modules print once, as PyTorch: "(0-11): 12 x Block(...)"."""
        runs = []  # [first index, last index, repr]
        for i, m in enumerate(self):
            r = repr(m)
            if runs and runs[-1][2] == r:
                runs[-1][1] = i
            else:
                runs.append([i, i, r])
        if not runs:
            return f"{type(self).__name__}()"
        lines = [(f"({a}): " if a == b else f"({a}-{b}): {b - a + 1} x ") +
                 r.replace("\n", "\n  ") for a, b, r in runs]
        return f"{type(self).__name__}(\n  " + "\n  ".join(lines) + "\n)"


class ModuleDict(Module):
    """A dict of sub-modules, registered under their keys."""

    def __init__(self, modules=None):
        super().__init__()
        for k, m in (modules or {}).items():
            self[k] = m

    def __setitem__(self, k, m):
        if not isinstance(k, str):
            raise TypeError(f"ModuleDict keys must be strings (they become parameter names), "
                            f"got {type(k).__name__}")
        self._modules[k] = _check_module(self, m)

    def __getitem__(self, k):
        return self._modules[k]

    def __contains__(self, k):
        return k in self._modules

    def __len__(self):
        return len(self._modules)

    def __iter__(self):
        return iter(self._modules)

    def keys(self):
        return self._modules.keys()

    def values(self):
        return self._modules.values()

    def items(self):
        return self._modules.items()


class Sequential(ModuleList):
    """Modules applied in order: Sequential(a, b)(x) == b(a(x))."""

    def __init__(self, *modules):
        super().__init__(modules)

    __repr__ = Module.__repr__  # every stage printed, as PyTorch

    def __getitem__(self, i):
        if isinstance(i, slice):  # a slice of a Sequential is a Sequential, as PyTorch
            return Sequential(*list(self)[i])
        return super().__getitem__(i)

    def forward(self, x):
        for m in self:
            x = m(x)
        return x
