"""`mg.func.functional_call`, as torch.func.functional_call: a Module run with other tensors
in place of its parameters and buffers, its own put back after."""
from minigrad.tensor import Tensor

def functional_call(module, parameter_and_buffer_dicts, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """module(*args, **kwargs) with the parameters and buffers named in
    `parameter_and_buffer_dicts` (a dict name -> Tensor, names as in named_parameters and
    named_buffers, or a sequence of such dicts) swapped in for the call and the module's
    own put back afterwards, even if the call raises, as torch.func.functional_call.
    tie_weights: a tensor the module holds under several names (tied weights) is replaced
    under all of them. strict: every parameter and buffer must be given, and no other
    name. A name the module does not have is set as an attribute for the call (PyTorch
    does the same). A tensor the module assigns to a given name during the call (a
    BatchNorm's running statistics) ends up in that dict."""
    if isinstance(parameter_and_buffer_dicts, dict):
        given = parameter_and_buffer_dicts
    elif isinstance(parameter_and_buffer_dicts, (tuple, list)):
        if not all(isinstance(d, dict) for d in parameter_and_buffer_dicts):
            raise ValueError("Expected all elements of parameter_and_buffer_dicts to be "
                             "dictionaries")
        keys = [k for d in parameter_and_buffer_dicts for k in d]
        repeated = sorted({k for k in keys if keys.count(k) > 1})
        if repeated:
            raise ValueError(f"{repeated} appeared in multiple dictionaries; behavior of "
                             f"functional call is ambiguous")
        given = {k: v for d in parameter_and_buffer_dicts for k, v in d.items()}
    else:
        raise ValueError(f"Expected parameter_and_buffer_dicts to be a dict, or a list/tuple "
                         f"of dicts, but got {type(parameter_and_buffer_dicts)}")
    for name, t in given.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"functional_call: {name!r} must be a Tensor, got "
                            f"{type(t).__name__}")
    names = {**dict(module.named_parameters(remove_duplicate=False)),
             **dict(module.named_buffers(remove_duplicate=False))}
    swap = _untied(names, given) if tie_weights else dict(given)
    if strict:
        unexpected = sorted(set(swap) - set(names))
        missing = sorted(set(names) - set(swap))
        errors = ([f"Unexpected key(s): {', '.join(map(repr, unexpected))}."] if unexpected
                  else []) + ([f"Missing key(s): {', '.join(map(repr, missing))}."] if missing
                              else [])
        if errors:
            raise RuntimeError(f"Error(s) in reparametrizing for {type(module).__name__}:\n\t"
                               + "\n\t".join(errors))
    slots = [_Slot(module, name) for name in swap]       # (a missing submodule: raises)
    args = () if args is None else args if isinstance(args, tuple) else (args,)
    try:
        for slot in slots:
            slot.put(swap[slot.name])
        return module(*args, **(kwargs or {}))
    finally:
        # one place may have several names (a submodule registered twice): it is put back
        # once, by its last name, and what the call left there is told to each of them
        left = {}
        for slot in reversed(slots):
            place = (id(slot.owner), slot.attr)
            if place not in left:
                left[place] = slot.restore()
            now = left[place]
            if now is not None and isinstance(parameter_and_buffer_dicts, dict) and \
                    slot.name in parameter_and_buffer_dicts:
                parameter_and_buffer_dicts[slot.name] = now


def _untied(names, given):
    """given, plus each tensor given for a tied name under every other name of its tensor;
    two different tensors for one tied group are refused."""
    groups = {}
    for name, t in names.items():
        groups.setdefault(id(t), []).append(name)
    out = dict(given)
    for group in groups.values():
        named = [n for n in group if n in given]
        if len(group) < 2 or not named:
            continue
        if len({id(given[n]) for n in named}) > 1:
            raise ValueError(f"functional_call got multiple values for keys {sorted(group)}, "
                             f"which are tied. Consider using tie_weights=False")
        for n in group:
            out[n] = given[named[0]]
    return out


class _Slot:
    """One place (a module's parameter, buffer or plain attribute) a tensor is swapped
    into, and what was there."""

    def __init__(self, module, name):
        path, _, self.attr = name.rpartition(".")
        self.name, self.owner = name, module
        for part in path.split(".") if path else []:
            child = self.owner._modules.get(part)
            if child is None:
                raise AttributeError(f"{type(self.owner).__name__} has no attribute `{part}`")
            self.owner = child
        self.store = self.owner._parameters if self.attr in self.owner._parameters else \
            self.owner._buffers if self.attr in self.owner._buffers else None
        self.had = self.attr in self.owner.__dict__ if self.store is None else True
        self.was = self.store[self.attr] if self.store is not None else \
            self.owner.__dict__.get(self.attr)

    def put(self, t):
        if self.store is not None:      # (any Tensor: a Parameter's store takes it as is)
            self.store[self.attr] = t
        else:
            object.__setattr__(self.owner, self.attr, t)
        self.put_in = t

    def restore(self):
        """Put the module's own back; returns what the call left there if it assigned
        another tensor (else None)."""
        if not hasattr(self, "put_in"):
            return None
        if self.store is not None:
            now = self.store.get(self.attr)
            self.store[self.attr] = self.was
        else:
            now = self.owner.__dict__.get(self.attr)
            if self.had:
                object.__setattr__(self.owner, self.attr, self.was)
            else:
                self.owner.__dict__.pop(self.attr, None)
        return now if now is not self.put_in and isinstance(now, Tensor) else None
