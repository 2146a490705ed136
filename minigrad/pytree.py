"""Pytrees, as torch.utils._pytree: nested tuples, lists and dicts of leaves (Tensors, or
anything else), flattened to a list of leaves and a spec, and built back from them. The
function transforms (func.py, func_vmap.py) take and return such structures."""


def _flatten(tree):
    """(leaves, spec): the leaves of tree in order, and what _unflatten needs to rebuild
    it. A spec is None for a leaf, else (type, dict keys or None, [child specs]); None
    itself is a tree with no leaves, as in PyTorch."""
    if tree is None:
        return [], (type(None), None, [])
    if isinstance(tree, (tuple, list)):
        leaves, specs = [], []
        for x in tree:
            sub, spec = _flatten(x)
            leaves += sub
            specs.append(spec)
        return leaves, (type(tree), None, specs)
    if isinstance(tree, dict):
        leaves, specs = [], []
        for x in tree.values():
            sub, spec = _flatten(x)
            leaves += sub
            specs.append(spec)
        return leaves, (type(tree), list(tree), specs)
    return [tree], None


def _unflatten(leaves, spec):
    return _build(iter(leaves), spec)


def _build(leaves, spec):
    if spec is None:
        return next(leaves)
    kind, keys, specs = spec
    if kind is type(None):
        return None
    children = [_build(leaves, s) for s in specs]
    if keys is not None:
        return kind(zip(keys, children))
    return kind(*children) if hasattr(kind, "_fields") else kind(children)   # namedtuple


def _spec_str(spec):
    """A spec as PyTorch writes one: * for a leaf, (*, *) for a tuple of two."""
    if spec is None:
        return "*"
    kind, keys, specs = spec
    if kind is type(None):
        return "None"
    inner = ", ".join(_spec_str(s) if keys is None else f"{k!r}: {_spec_str(s)}"
                      for k, s in zip(keys or specs, specs))
    return "{" + inner + "}" if keys is not None else \
        "[" + inner + "]" if issubclass(kind, list) else "(" + inner + ("," if len(specs) == 1
                                                                      else "") + ")"


def _broadcast(prefix, spec):
    """One value of `prefix` per leaf of the tree `spec` describes, where prefix is a tree
    whose leaves (ints or None) each stand for a whole subtree; None if they do not fit."""
    if not isinstance(prefix, (tuple, list, dict)):
        return [prefix] * _count_leaves(spec)
    if spec is None:
        return None
    kind, keys, specs = spec
    if isinstance(prefix, dict) != (keys is not None) or \
            (isinstance(prefix, list) != issubclass(kind, list)) or len(prefix) != len(specs):
        return None
    if keys is not None:
        if set(prefix) != set(keys):
            return None
        prefix = [prefix[k] for k in keys]
    out = []
    for p, s in zip(prefix, specs):
        sub = _broadcast(p, s)
        if sub is None:
            return None
        out += sub
    return out


def _count_leaves(spec):
    return 1 if spec is None else sum(_count_leaves(s) for s in spec[2])
