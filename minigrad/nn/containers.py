"""Containers of sub-modules: `ModuleList`, `ModuleDict` and `Sequential`, as PyTorch's."""
from minigrad import backend
from minigrad.nn.module import Module


def _check_module(container, m):
    if not isinstance(m, Module):
        raise TypeError(f"{type(container).__name__} holds Modules, got a "
                        f"{type(m).__name__} ({m!r:.60}); wrap a function in a Module "
                        f"subclass whose forward calls it")
    return m


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
