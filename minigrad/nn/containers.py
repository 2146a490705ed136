"""Containers of sub-modules, as PyTorch's: `ModuleList`, `ModuleDict` and `Sequential`
(those of parameters are in containers_params.py)."""
from collections import OrderedDict
from collections.abc import Iterable

from minigrad import backend
# the parameter containers, importable from here too, as before they had their own file
from minigrad.nn.containers_params import ParameterDict, ParameterList, _pairs  # noqa: F401
from minigrad.nn.global_hooks import MODULE_HOOKS, registered
from minigrad.nn.module import Module


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
        self._modules[str(n)] = registered(MODULE_HOOKS, self, str(n), _check_module(self, m))
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
        key = self._key(i)
        self._modules[key] = registered(MODULE_HOOKS, self, key, _check_module(self, m))

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

    def __mul__(self, n):
        """The stages n times over (the same modules, not copies: weights shared), as
        PyTorch's; `*=` repeats them in place."""
        if not backend.is_integer(n) or isinstance(n, bool):
            return NotImplemented
        if n <= 0:
            raise ValueError(f"Sequential * {n}: the number of repeats must be positive")
        return Sequential(*(list(self) * n))

    __rmul__ = __mul__

    def __imul__(self, n):
        repeated = self * n
        if repeated is NotImplemented:
            return NotImplemented
        self._renumber(repeated)
        return self

    def forward(self, input):
        for m in self:
            input = m(input)
        return input
