"""Parametrizations, as torch.nn.utils.parametrize: `module.weight` computed at each access
as parametrization(original) from a Parameter kept elsewhere, e.g. weight_norm, spectral_norm
(parametrizations.py), or a weight kept symmetric.

    register_parametrization(m, "weight", Symmetric())   # m.weight is now Symmetric()(orig)
    m.parametrizations.weight.original                   # the Parameter optimisers update

The parametrized tensor lives where PyTorch puts it, so state-dict keys are the same
(`parametrizations.weight.original`, or original0, original1... where right_inverse returns
a tuple) and a PyTorch state dict loads. PyTorch swaps the module's class for a subclass
with a property per name; here the class stays: Module.__getattr__ and __setattr__ ask the
`parametrizations` dict (a `ParametrizationDict`) for the names it holds, so a parametrized
module deep-copies and pickles as any other."""
from contextlib import contextmanager

from minigrad.autograd import no_grad
from minigrad.nn.containers import ModuleDict, ModuleList
from minigrad.nn.module import Module, Parameter
from minigrad.tensor import Tensor

_cache_depth = 0      # how many cached() blocks are open
_cache = {}           # (id(module), name) -> the value computed in them


@contextmanager
def cached():
    """Within it, each parametrized tensor is computed once, at its first access, and
    reused (e.g. a weight used at every step of an RNN), as PyTorch's; the values are
    dropped when the outermost block ends."""
    global _cache_depth
    _cache_depth += 1
    try:
        yield
    finally:
        _cache_depth -= 1
        if not _cache_depth:
            _cache.clear()


def _set(original, value):
    """original takes value's values (and shape) in its own object, as PyTorch's set_: a
    Parameter an optimiser holds stays that Parameter."""
    original.data = value.detach()
    original._version_counter[0] += 1


def _register(module, name, t):
    (module.register_parameter if isinstance(t, Parameter) else module.register_buffer)(name, t)


class ParametrizationList(ModuleList):
    """The parametrizations of one tensor, applied in order, and its original(s): the
    parameter (or buffer) they are computed from. Calling it computes the tensor."""

    def __init__(self, modules, original, unsafe=False):
        if not modules:
            raise ValueError("ParametrizationList: at least one parametrization is needed")
        super().__init__(modules)
        self.unsafe = unsafe
        shape, dtype = original.shape, original.dtype
        new = original
        with no_grad():                   # right_inverse, where given; else the identity
            for m in reversed(list(self)):
                if hasattr(m, "right_inverse"):
                    try:
                        new = m.right_inverse(new)
                    except NotImplementedError:     # taken as the identity, as PyTorch
                        pass
        if isinstance(new, Tensor):
            self.is_tensor, self.ntensors = True, 1
            if new.dtype != dtype:
                raise ValueError(f"register_parametrization: right_inverse may not change the "
                                 f"dtype, got {new.dtype} for a tensor of {dtype}")
            if new is not original:
                _set(original, new)
            _register(self, "original", original)
        elif isinstance(new, (tuple, list)):
            self.is_tensor, self.ntensors = False, len(new)
            for i, t in enumerate(new):
                if not isinstance(t, Tensor):
                    raise ValueError(f"register_parametrization: right_inverse returned a "
                                     f"{type(t).__name__} at position {i}; tensors expected")
                t = t.detach()
                if isinstance(original, Parameter):
                    t = Parameter(t.clone(), original.requires_grad)
                _register(self, f"original{i}", t)
        else:
            raise ValueError(f"register_parametrization: right_inverse must return a tensor "
                             f"or a sequence of tensors, got {type(new).__name__}")
        if not unsafe:
            _check_output(self(), shape, dtype, "the parametrization")

    def _originals(self):
        if self.is_tensor:
            return (self.original,)
        return tuple(getattr(self, f"original{i}") for i in range(self.ntensors))

    def forward(self):
        mods = list(self)
        x = mods[0](*self._originals())
        for m in mods[1:]:
            x = m(x)
        return x

    def right_inverse(self, value):
        """Assigning module.<name> = value: each parametrization's right_inverse, last
        first, gives the original(s) written in place."""
        with no_grad():
            for m in reversed(list(self)):
                if not hasattr(m, "right_inverse"):
                    raise RuntimeError(f"parametrization {type(m).__name__} does not "
                                       f"implement right_inverse, so the tensor it "
                                       f"computes cannot be assigned")
                value = m.right_inverse(value)
            if self.is_tensor:
                if not isinstance(value, Tensor):
                    raise ValueError(f"right_inverse must return a tensor, got "
                                     f"{type(value).__name__}")
                if value.dtype != self.original.dtype:
                    raise ValueError(f"right_inverse may not change the dtype: "
                                     f"{value.dtype}, original {self.original.dtype}")
                _set(self.original, value)
                return
            if not isinstance(value, (tuple, list)) or len(value) != self.ntensors:
                raise ValueError(f"right_inverse must return a sequence of {self.ntensors} "
                                 f"tensors, got {type(value).__name__}")
            for t, new in zip(self._originals(), value):
                _set(t, new)


class ParametrizationDict(ModuleDict):
    """`module.parametrizations`: name -> ParametrizationList. Module's attribute access
    asks it for these names (see the module docstring)."""

    def _parametrized_value(self, module, name):
        if not _cache_depth:
            return self._modules[name]()
        key = (id(module), name)
        if key not in _cache:
            _cache[key] = self._modules[name]()
        return _cache[key]

    def _parametrized_assign(self, name, value):
        self._modules[name].right_inverse(value)


def _check_output(z, shape, dtype, what):
    """unsafe=False: the parametrized tensor keeps the original's shape and dtype."""
    if not isinstance(z, Tensor):
        raise ValueError(f"register_parametrization: {what} must return a tensor, got "
                         f"{type(z).__name__} (unsafe=True skips this check)")
    if z.dtype != dtype or z.shape != shape:
        raise ValueError(f"register_parametrization: {what} may not change the shape or "
                         f"dtype (unsafe=True allows it): got {z.shape} {z.dtype}, the "
                         f"original is {shape} {dtype}")


def register_parametrization(module, tensor_name, parametrization, *, unsafe=False):
    """Make module.<tensor_name> parametrization(original), computed at each access, where
    original is the parameter or buffer it was (written through the parametrization's
    right_inverse, if it has one). A second call on the same name chains another
    parametrization after the first. unsafe=True skips the check that the result keeps the
    original's shape and dtype. Returns module."""
    if not isinstance(parametrization, Module):
        raise TypeError(f"register_parametrization: the parametrization must be a Module, "
                        f"got {type(parametrization).__name__}")
    parametrization.train(module.training)
    if is_parametrized(module, tensor_name):
        plist = module.parametrizations[tensor_name]
        if not unsafe:
            before = getattr(module, tensor_name)
            z = parametrization(before)
            _check_output(z, before.shape, before.dtype, "the new parametrization")
            if hasattr(parametrization, "right_inverse"):
                back = parametrization.right_inverse(z)
                _check_output(back, before.shape, before.dtype, "its right_inverse")
        plist.append(parametrization)
        plist.unsafe = plist.unsafe or unsafe
    elif tensor_name in module._parameters or tensor_name in module._buffers:
        original = getattr(module, tensor_name)
        if original is None:
            raise ValueError(f"register_parametrization: {type(module).__name__}.{tensor_name} "
                             f"is None; there is no tensor to parametrize")
        plist = ParametrizationList([parametrization], original, unsafe=unsafe)
        delattr(module, tensor_name)
        if not is_parametrized(module):
            module.parametrizations = ParametrizationDict()
        module.parametrizations[tensor_name] = plist
    else:
        raise ValueError(f"register_parametrization: {type(module).__name__} has no "
                         f"parameter, buffer or parametrized tensor named '{tensor_name}'")
    return module


def is_parametrized(module, tensor_name=None):
    """Whether module has a parametrization (on tensor_name, if given)."""
    p = module._modules.get("parametrizations")
    if not isinstance(p, ParametrizationDict):
        return False
    return len(p) > 0 if tensor_name is None else tensor_name in p


def remove_parametrizations(module, tensor_name, leave_parametrized=True):
    """Undo register_parametrization on tensor_name: it becomes a plain parameter (buffer)
    again, holding its current parametrized value (leave_parametrized=True, in the original
    Parameter object, so optimisers keep it: a parametrization that changes the dtype is
    refused, as PyTorch's) or the original's. A state-dict pre-hook the parametrization
    brought (weight_norm's, for old keys) goes with it. Returns module."""
    if not is_parametrized(module, tensor_name):
        raise ValueError(f"remove_parametrizations: {type(module).__name__} has no "
                         f"parametrization on '{tensor_name}'")
    plist = module.parametrizations[tensor_name]
    if plist.is_tensor:
        original = plist.original
        if leave_parametrized:
            with no_grad():
                t = getattr(module, tensor_name)
            if t.dtype != original.dtype:       # the original keeps its dtype, as PyTorch's
                raise RuntimeError(
                    f"remove_parametrizations: the parametrization of '{tensor_name}' changes "
                    f"its dtype ({original.dtype} to {t.dtype}), which the original tensor "
                    f"cannot hold in place; use leave_parametrized=False (the original back), "
                    f"or set module.{tensor_name} yourself after removing it")
            _set(original, t)
    elif leave_parametrized:
        with no_grad():
            t = getattr(module, tensor_name)
        first = plist.original0
        original = Parameter(t.detach(), first.requires_grad) \
            if isinstance(first, Parameter) else t.detach()
    else:
        raise ValueError("remove_parametrizations: leave_parametrized=False needs one original "
                         "tensor, but this one is parametrized from several (original0, "
                         "original1...)")
    del module.parametrizations[tensor_name]
    hooks = module.__dict__.get("_load_state_dict_pre_hooks", {})
    for key, hook in list(hooks.items()):     # weight_norm's, for its old keys
        if getattr(hook, "parametrized_tensor", None) == tensor_name:
            del hooks[key]
    _register(module, tensor_name, original)
    if not is_parametrized(module):
        del module.parametrizations
    return module


def type_before_parametrizations(module):
    """The module's class (PyTorch's changes when parametrized; minigrad's never does)."""
    return type(module)
