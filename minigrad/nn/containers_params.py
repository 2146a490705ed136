"""Containers of parameters, as PyTorch's: `ParameterList` and `ParameterDict` (those of
sub-modules are in containers.py)."""
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

    def __reversed__(self):      # (else reversed() would index it by position)
        return reversed(list(self._keys))

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

    def popitem(self):
        """The last key added and its value, removed (as dict.popitem)."""
        if not self._keys:
            raise KeyError("popitem(): ParameterDict is empty")
        key = next(reversed(self._keys))
        return key, self.pop(key)

    def fromkeys(self, keys, default=None):
        """A new ParameterDict with each key holding `default`."""
        return ParameterDict(OrderedDict((k, default) for k in keys))

    def __or__(self, other):     # the dict operators: a new ParameterDict, other's last
        if not isinstance(other, (Mapping, ParameterDict)):
            return NotImplemented
        merged = self.copy()
        merged.update(other)
        return merged

    def __ror__(self, other):
        if not isinstance(other, Mapping):
            return NotImplemented
        merged = ParameterDict(OrderedDict(other))
        merged.update(self)
        return merged

    def __ior__(self, other):
        self.update(other)
        return self

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
