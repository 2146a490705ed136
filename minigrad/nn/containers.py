"""Containers, as PyTorch's: of sub-modules, `ModuleList`, `ModuleDict` and `Sequential`;
of parameters, `ParameterList` and `ParameterDict`."""
from collections import OrderedDict
from collections.abc import Iterable, Mapping

from minigrad import backend
from minigrad.nn.module import Module, Parameter
from minigrad.tensor import Tensor


def _pairs(where, items, what, own_kind):
    """(key, item) pairs, in order, from a mapping, a container of `own_kind`, or an
    iterable of pairs; else an error naming `where`."""
    if isinstance(items, (Mapping, own_kind)):
        return list(items.items())
    if isinstance(items, Iterable) and not isinstance(items, (Module, Tensor)):
        pairs = list(items)
        for j, p in enumerate(pairs):
            if not isinstance(p, (tuple, list)) or len(p) != 2:
                raise ValueError(f"{where}: element #{j} of the sequence should be a (key, "
                                 f"{what}) pair, got {p!r:.60}")
        return pairs
    raise TypeError(f"{where} takes a mapping or an iterable of (key, {what}) pairs, got "
                    f"{type(items).__name__}")


def _check_module(container, m):
    if not isinstance(m, Module):
        raise TypeError(f"{type(container).__name__} holds Modules, got a "
                        f"{type(m).__name__} ({m!r:.60}); wrap a function in a Module "
                        f"subclass whose forward calls it")
    return m


class ModuleList(Module):
    """A list of sub-modules, registered under "0", "1", ... (renumbered after an insert or
    a delete, as PyTorch, so the names always count from 0)."""

    def __init__(self, modules=()):
        super().__init__()
        self.extend(modules)

    def _position(self, i):
        """The position of index i (negative counts from the end), or a clear error."""
        n = len(self._modules)
        if not backend.is_integer(i):
            raise TypeError(f"{type(self).__name__} indices must be integers or slices, not "
                            f"{type(i).__name__}")
        if not -n <= i < n:
            raise IndexError(f"{type(self).__name__} index {i} out of range for {n} modules")
        return i % n

    def _key(self, i):
        return str(self._position(i))

    def _renumber(self, modules):
        modules = list(modules)
        self._modules.clear()
        for k, m in enumerate(modules):
            self._modules[str(k)] = m

    def append(self, m):
        # the next number as its name, as PyTorch; past one already taken (a Sequential's
        # slice keeps its names: seq[1:] holds "1", "2"), where PyTorch would replace it
        n = len(self._modules)
        while str(n) in self._modules:
            n += 1
        self._modules[str(n)] = _check_module(self, m)
        return self

    def extend(self, modules):
        if not isinstance(modules, Iterable):
            raise TypeError(f"{type(self).__name__}.extend takes an iterable of Modules, got "
                            f"{type(modules).__name__}")
        for m in modules:
            self.append(m)
        return self

    def insert(self, index, m):
        """Put m before position index (as list.insert; the names after it move up)."""
        if not backend.is_integer(index):
            raise TypeError(f"{type(self).__name__}.insert: index must be an integer, got "
                            f"{type(index).__name__}")
        modules = list(self._modules.values())
        modules.insert(index, _check_module(self, m))
        self._renumber(modules)

    def pop(self, i=-1):
        m = self[i]
        del self[i]
        return m

    def __getitem__(self, i):
        if isinstance(i, slice):
            return ModuleList(list(self._modules.values())[i])
        return self._modules[self._key(i)]

    def __setitem__(self, i, m):
        if isinstance(i, slice):
            raise TypeError(f"{type(self).__name__} assignment takes an integer index, not a "
                            f"slice; assign the modules one by one")
        self._modules[self._key(i)] = _check_module(self, m)

    def __delitem__(self, i):
        positions = range(len(self._modules))
        gone = set(positions[i]) if isinstance(i, slice) else {self._position(i)}
        self._renumber(m for k, m in enumerate(self._modules.values()) if k not in gone)

    def __iadd__(self, modules):
        return self.extend(modules)

    def __add__(self, other):
        return ModuleList(list(self) + list(other))

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
    """A dict of sub-modules, registered under their keys (checked as add_module checks
    names: they become state-dict keys). Built from a mapping or (key, module) pairs, in
    their order."""

    def __init__(self, modules=None):
        super().__init__()
        if modules is not None:
            self.update(modules)

    def __setitem__(self, k, m):
        if not isinstance(k, str):
            raise TypeError(f"ModuleDict keys must be strings (they become parameter names), "
                            f"got {type(k).__name__}")
        self.add_module(k, _check_module(self, m))

    def __getitem__(self, k):
        return self._modules[k]

    def __delitem__(self, k):
        del self._modules[k]

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

    def pop(self, k):
        m = self[k]
        del self[k]
        return m

    def clear(self):
        self._modules.clear()

    def update(self, modules):
        for k, m in _pairs("ModuleDict.update", modules, "module", ModuleDict):
            self[k] = m


class Sequential(ModuleList):
    """Modules applied in order: Sequential(a, b)(x) == b(a(x)). Given one OrderedDict, its
    keys name the stages (Sequential(OrderedDict(fc=..., act=...))); an index is a
    position, whatever the names, and a slice keeps them, as PyTorch."""

    def __init__(self, *modules):
        if len(modules) == 1 and isinstance(modules[0], OrderedDict):
            super().__init__()
            for k, m in modules[0].items():
                self.add_module(k, _check_module(self, m))
        else:
            super().__init__(modules)

    __repr__ = Module.__repr__  # every stage printed, as PyTorch

    def insert(self, index, m):
        """As ModuleList's, returning self (seq = seq.insert(0, m)), as PyTorch's."""
        super().insert(index, m)
        return self

    def _key(self, i):
        return list(self._modules)[self._position(i)]

    def __getitem__(self, i):
        if isinstance(i, slice):   # a Sequential of the same stages under the same names
            return Sequential(OrderedDict(list(self._modules.items())[i]))
        return super().__getitem__(i)

    def __add__(self, other):
        return Sequential(*self, *other)

    def forward(self, input):
        for m in self:
            input = m(input)
        return input


# ---- containers of parameters ------------------------------------------------------------
def _as_parameter(value):
    """A Tensor that is not a Parameter becomes one (sharing its memory), as PyTorch's
    parameter containers do; a Parameter, None or any other object is kept as it is."""
    return Parameter(value) if isinstance(value, Tensor) and \
        not isinstance(value, Parameter) else value


def _describe(items):
    """PyTorch's lines for a parameter container: "(0): Parameter containing: [...]"."""
    lines = []
    for k, p in items:
        if isinstance(p, Tensor):
            kind = "Parameter" if isinstance(p, Parameter) else "Tensor"
            where = "" if p.device == "cpu" else f" ({p.device})"
            size = "x".join(str(n) for n in p.shape)
            lines.append(f"({k}): {kind} containing: [{p.dtype} of size {size}{where}]")
        else:
            lines.append(f"({k}): Object of type: {type(p).__name__}")
    return lines


class _ParameterContainer(Module):
    def forward(self, *args, **kwargs):
        raise RuntimeError(f"{type(self).__name__} should not be called: it holds "
                           f"parameters for the module that owns it to use")

    def __repr__(self):
        lines = _describe(self._described())
        if not lines:
            return f"{type(self).__name__}()"
        return f"{type(self).__name__}(\n    " + "\n    ".join(lines) + "\n)"


class ParameterList(_ParameterContainer):
    """A list of parameters, registered under "0", "1", ... (so parameters(), state_dict,
    .to() and optimisers see them), as torch.nn.ParameterList; a Tensor put in it becomes
    a Parameter sharing its memory."""

    def __init__(self, values=None):
        super().__init__()
        self._size = 0
        if values is not None:
            self.extend(values)

    def _name(self, i):
        """The registered name ("0", "1", ...) of index i (negative counts from the end)."""
        if not backend.is_integer(i):
            raise TypeError(f"ParameterList indices must be integers or slices, not "
                            f"{type(i).__name__}")
        if not -self._size <= i < self._size:
            raise IndexError(f"ParameterList index {i} is out of range for "
                             f"{self._size} parameters")
        return str(i % self._size)

    def __getitem__(self, i):
        if isinstance(i, slice):   # a new list of the same Parameters, as PyTorch
            return type(self)([self[j] for j in range(*i.indices(self._size))])
        return getattr(self, self._name(i))

    def __setitem__(self, i, value):
        setattr(self, self._name(i), _as_parameter(value))

    def __len__(self):
        return self._size

    def __iter__(self):
        return (self[i] for i in range(self._size))

    def append(self, value):
        self._size += 1
        try:
            self[self._size - 1] = value
        except BaseException:      # the list stays as it was
            self._size -= 1
            raise
        return self

    def extend(self, values):
        if isinstance(values, Tensor) or not isinstance(values, Iterable):
            raise TypeError(f"ParameterList.extend takes an iterable of parameters, got "
                            f"{type(values).__name__}")
        for v in values:
            self.append(v)
        return self

    __iadd__ = extend

    def _described(self):
        return enumerate(self)


class ParameterDict(_ParameterContainer):
    """A dict of parameters, registered under their keys (so parameters(), state_dict, .to()
    and optimisers see them), as torch.nn.ParameterDict; a Tensor put in it becomes a
    Parameter sharing its memory. As PyTorch, a plain dict given to the constructor or to
    update() is added in sorted key order; an OrderedDict, a ParameterDict or a sequence of
    (key, value) pairs keeps its order."""

    def __init__(self, parameters=None):
        super().__init__()
        self._keys = {}                              # the keys in order (a dict as a list)
        if parameters is not None:
            self.update(parameters)

    def _check_key(self, key, present=False):
        if not isinstance(key, str):
            raise TypeError(f"ParameterDict keys must be strings (they become parameter "
                            f"names), got {type(key).__name__}")
        if present and key not in self._keys:
            raise KeyError(f"ParameterDict has no key {key!r} (keys: {list(self._keys)})")

    def __getitem__(self, key):
        self._check_key(key, present=True)
        return getattr(self, key)

    def __setitem__(self, key, value):
        self._check_key(key)
        if key not in self._keys and (hasattr(self, key) or "." in key or not key):
            raise KeyError(f"ParameterDict: {key!r} cannot be a key: keys become state-dict "
                           f"names, so they must be non-empty, without \".\", and not an "
                           f"attribute of the module")
        setattr(self, key, _as_parameter(value))
        self._keys[key] = None

    def __delitem__(self, key):
        self._check_key(key, present=True)
        del self._keys[key]
        delattr(self, key)

    def __len__(self):
        return len(self._keys)

    def __iter__(self):
        return iter(self._keys)

    def __contains__(self, key):
        return key in self._keys

    def keys(self):
        return self._keys.keys()

    def values(self):
        return (self[k] for k in self._keys)

    def items(self):
        return ((k, self[k]) for k in self._keys)

    def get(self, key, default=None):
        return self[key] if key in self._keys else default

    def pop(self, key):
        value = self[key]
        del self[key]
        return value

    def setdefault(self, key, default=None):
        if key not in self._keys:
            self[key] = default
        return self[key]

    def clear(self):
        for k in list(self._keys):
            del self[k]

    def copy(self):
        """A new ParameterDict holding the same Parameters."""
        return ParameterDict(OrderedDict(self.items()))

    def update(self, parameters):
        pairs = _pairs("ParameterDict.update", parameters, "value", ParameterDict)
        if isinstance(parameters, Mapping) and not isinstance(parameters, OrderedDict):
            pairs.sort()                             # PyTorch's order for a plain dict
        for k, v in pairs:
            self[k] = v

    def _described(self):
        return self.items()
