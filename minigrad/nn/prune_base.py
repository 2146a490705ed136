"""The machinery of nn.utils.prune (prune.py, whose docstring says what pruning does):
BasePruningMethod (apply: the module's reparametrisation as <name>_orig * <name>_mask and
its forward pre-hook; remove), PruningContainer (methods composed on one tensor) and the
checks of `amount` and `dim` that the methods share."""
import numbers
from abc import ABC, abstractmethod

from minigrad.autograd import no_grad
from minigrad.nn.module import Parameter
from minigrad.tensor import Tensor


# ---- the amount: an int count or a float share, checked as PyTorch -------------------------
def _validate_amount_init(amount):
    if isinstance(amount, bool) or not isinstance(amount, numbers.Real):
        raise TypeError(f"Invalid type for amount: {amount!r}. Must be int or float.")
    if (amount < 0 if isinstance(amount, numbers.Integral)
            else not 0.0 <= float(amount) <= 1.0):
        raise ValueError(f"amount={amount} should either be a float in the range [0, 1] or "
                         f"a non-negative integer")


def _count_to_prune(amount, size):
    """How many of `size` entries (channels) `amount` prunes; an int more than there are is
    refused, as PyTorch's."""
    if isinstance(amount, numbers.Integral):
        if amount > size:
            raise ValueError(f"amount={amount} should be smaller than the number of "
                             f"parameters to prune={size}")
        return int(amount)
    return round(amount * size)           # Python's round (half to even), as PyTorch's


def _checked_dim(t, dim):
    """dim of a structured method, for t: it must have 2+ dims (a channel is a slice)."""
    if t.ndim <= 1:
        raise ValueError(f"Structured pruning can only be applied to multidimensional "
                         f"tensors. Found tensor of shape {t.shape} with {t.ndim} dims")
    if not -t.ndim <= dim < t.ndim:
        raise IndexError(f"Invalid index {dim} for tensor of size {t.shape} (dim must be in "
                         f"[{-t.ndim}, {t.ndim - 1}])")
    return dim % t.ndim


def _wrap(array, like):
    return Tensor._make(array, like.device)


def _ones_like(t):
    return _wrap(t.backend.xp.ones_like(t._data), t)


def _copy(t):
    """A contiguous copy of t's array, to write a mask into."""
    return t.backend.xp.array(t._data, copy=True, order="C")


def _channel_mask(t, dim, pruned, default_mask):
    """A mask of t's shape, zero on the channels `pruned` (indices along dim), times
    default_mask."""
    mask = _copy(default_mask)
    index = [slice(None)] * t.ndim
    index[dim] = pruned
    mask[tuple(index)] = 0
    return _wrap(mask, default_mask)


# ---- the base and the container -------------------------------------------------------------
class BasePruningMethod(ABC):
    """A pruning method: compute_mask(t, default_mask) says which entries of t to keep (1)
    within default_mask's. Applied to a module (apply), it is the module's forward pre-hook
    that recomputes module.<name> = <name>_orig * <name>_mask."""
    _tensor_name = None
    PRUNING_TYPE = None          # "unstructured", "structured" (with a `dim`) or "global"

    def __call__(self, module, inputs):
        setattr(module, self._tensor_name, self.apply_mask(module))

    @abstractmethod
    def compute_mask(self, t, default_mask):
        """The new mask (t's shape): default_mask with more entries zeroed, by t's values."""

    def apply_mask(self, module):
        """<name>_orig * <name>_mask: the pruned tensor, differentiable in <name>_orig."""
        if self._tensor_name is None:
            raise RuntimeError(f"{type(self).__name__} has not been applied to a module "
                               f"(apply(module, name) first)")
        orig = getattr(module, self._tensor_name + "_orig")
        mask = getattr(module, self._tensor_name + "_mask")
        return mask.to(dtype=orig.dtype) * orig

    @classmethod
    def apply(cls, module, name, *args, importance_scores=None, **kwargs):
        """Prune module.<name> with cls(*args, **kwargs), by importance_scores (default: the
        tensor's own values), composed with the pruning already there. Returns the method
        (a PruningContainer where the tensor was pruned before)."""
        hooks = module.__dict__.get("_forward_pre_hooks", {})
        old = [(k, h) for k, h in hooks.items()
               if isinstance(h, BasePruningMethod) and h._tensor_name == name]
        if len(old) > 1:
            raise RuntimeError(f"{type(module).__name__}.{name} has {len(old)} pruning hooks; "
                               f"at most one is expected (use PruningContainer)")
        method = cls(*args, **kwargs)
        method._tensor_name = name
        if old:     # composed: a container of the methods so far and this one
            before = old[0][1]
            steps = tuple(before) if isinstance(before, PruningContainer) else (before,)
            method = PruningContainer(*steps, method)
        else:
            _check_parameter(module, name)
        orig = getattr(module, name)           # pruned before: the masked tensor, as torch
        if importance_scores is None:
            importance_scores = orig
        elif tuple(importance_scores.shape) != tuple(orig.shape):
            raise ValueError(f"importance_scores should have the same shape as parameter "
                             f"{name}: {tuple(importance_scores.shape)} vs {tuple(orig.shape)}")
        with no_grad():
            default_mask = getattr(module, name + "_mask").detach().clone() if old else \
                _ones_like(orig)
            mask = method.compute_mask(importance_scores, default_mask=default_mask)
        if not isinstance(mask, Tensor) or tuple(mask.shape) != tuple(orig.shape):
            raise ValueError(f"{type(method).__name__}.compute_mask must return a Tensor of "
                             f"shape {tuple(orig.shape)}, got {getattr(mask, 'shape', mask)}")
        # the mask is known: only now is the module changed (nothing to roll back)
        if not old:
            module.register_parameter(name + "_orig", orig)
            del module._parameters[name]
        module.register_buffer(name + "_mask", mask)
        setattr(module, name, method.apply_mask(module))
        if old and isinstance(before, PruningContainer):   # the same container, as torch
            before.add_pruning_method(method[-1])
            return before
        if old:
            del hooks[old[0][0]]
        module.register_forward_pre_hook(method)
        return method

    def prune(self, t, default_mask=None, importance_scores=None):
        """t with this method's mask applied (not on a module): t * compute_mask(...)."""
        scores = t if importance_scores is None else importance_scores
        if tuple(scores.shape) != tuple(t.shape):
            raise ValueError(f"importance_scores should have the same shape as t: "
                             f"{tuple(scores.shape)} vs {tuple(t.shape)}")
        with no_grad():
            if default_mask is None:
                default_mask = _ones_like(t)
            mask = self.compute_mask(scores, default_mask=default_mask)
        return t * mask.to(dtype=t.dtype)

    def remove(self, module):
        """Make the pruning permanent: <name> is a Parameter again (the <name>_orig object)
        holding the pruned values; <name>_orig and <name>_mask go."""
        if self._tensor_name is None:
            raise RuntimeError(f"{type(self).__name__} has not been applied to a module")
        name = self._tensor_name
        with no_grad():
            weight = self.apply_mask(module)
        module.__dict__.pop(name, None)
        orig = module._parameters.pop(name + "_orig")
        orig.data = weight
        orig._version_counter[0] += 1
        del module._buffers[name + "_mask"]
        setattr(module, name, orig)


def _check_parameter(module, name):
    """The tensor to prune the first time must be a Parameter of the module (PyTorch's
    errors: AttributeError where there is no such attribute, TypeError where it is not a
    Parameter)."""
    params = ", ".join(n for n, p in module._parameters.items() if p is not None) or "none"
    if not hasattr(module, name):
        raise AttributeError(f"prune: '{type(module).__name__}' object has no attribute "
                             f"'{name}' (its parameters: {params})")
    if not isinstance(module._parameters.get(name), Parameter):
        raise TypeError(f"prune: {type(module).__name__}.{name} is not a Parameter (a "
                        f"{type(getattr(module, name)).__name__}); only parameters can be "
                        f"pruned (its parameters: {params})")


class PruningContainer(BasePruningMethod):
    """The methods applied in turn to one tensor: each acts only on what the ones before it
    left (the entries still 1 for an unstructured method, the channels not all zero for a
    structured one, everything for a global one)."""

    def __init__(self, *args):
        self._pruning_methods = ()
        if len(args) == 1 and isinstance(args[0], BasePruningMethod):
            self._tensor_name = args[0]._tensor_name
            self.add_pruning_method(args[0])
        else:
            methods = args[0] if len(args) == 1 else args     # an iterable of them, or several
            for m in methods:
                self.add_pruning_method(m)

    def add_pruning_method(self, method):
        if method is None:
            return
        if not isinstance(method, BasePruningMethod):
            raise TypeError(f"{type(method).__name__} is not a BasePruningMethod subclass")
        if self._tensor_name is not None and self._tensor_name != method._tensor_name:
            raise ValueError(f"Can only add pruning methods acting on the parameter named "
                             f"'{self._tensor_name}' to PruningContainer {self}. Found "
                             f"'{method._tensor_name}'")
        self._tensor_name = method._tensor_name
        self._pruning_methods += (method,)

    def __len__(self):
        return len(self._pruning_methods)

    def __iter__(self):
        return iter(self._pruning_methods)

    def __getitem__(self, i):
        return self._pruning_methods[i]

    def compute_mask(self, t, default_mask):
        """The last method's mask on the part of t the earlier ones left unpruned."""
        method = self._pruning_methods[-1]
        scores, old = t._data, default_mask._data
        kind = method.PRUNING_TYPE
        if kind == "unstructured":
            part = old == 1
        elif kind == "structured":
            if not hasattr(method, "dim"):
                raise AttributeError("Pruning methods of PRUNING_TYPE 'structured' need to "
                                     "have the attribute `dim` defined.")
            dim = _checked_dim(t, method.dim)
            others = tuple(d for d in range(t.ndim) if d != dim)
            part = [slice(None)] * t.ndim
            part[dim] = old.sum(axis=others) != 0       # the channels not all pruned yet
            part = tuple(part)
        elif kind == "global":
            part = (slice(None),) * t.ndim
        else:
            raise ValueError(f"Unrecognized PRUNING_TYPE {kind!r} of {type(method).__name__}")
        new = t.backend.xp.array(old, dtype=scores.dtype, copy=True)
        sub = method.compute_mask(_wrap(scores[part], t), default_mask=_wrap(old[part], t))
        new[part] = sub._data
        return _wrap(new, t)
