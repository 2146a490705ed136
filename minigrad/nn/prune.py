"""Pruning, as torch.nn.utils.prune (`mg.nn.utils.prune`): zero a share of a parameter's
entries (unstructured) or whole channels along a dim (structured), chosen at random or by
magnitude, and keep them zero while the rest trains.

    prune.l1_unstructured(m, "weight", amount=0.3)   # the 30% smallest |w| are zeroed
    prune.remove(m, "weight")                        # make it permanent

As PyTorch's: the parameter `weight` becomes `weight_orig` (the same Parameter object, so an
optimiser holding it keeps it) beside a buffer `weight_mask`, and `m.weight`, a plain
tensor attribute, is recomputed as weight_orig * weight_mask by a forward pre-hook, so the
gradient reaches weight_orig masked. The state-dict keys (weight_orig, weight_mask) are
PyTorch's, so a pruned state dict loads either way. Pruning again composes the masks: the
new method acts only on the entries (channels) still unpruned (PruningContainer).

Among entries of equal importance, PyTorch's choice is whatever its topk returns (it
differs with the tensor's size); minigrad's is deterministic: the earlier entries (in
row-major order) are pruned first. Masks agree wherever the importances are distinct. The
random methods draw from minigrad's generator (mg.manual_seed): the same counts and
structure as PyTorch's, not the same positions. As PyTorch's, a pruned module holds the
last forward's `weight`, a tensor inside that graph, which copy.deepcopy refuses: run that
forward under mg.no_grad() (or prune.remove) before deep-copying."""
import numbers

from minigrad.autograd import no_grad
from minigrad.ops.order import _stable_argsort
from minigrad.tensor import Tensor
from minigrad.nn.prune_base import (BasePruningMethod, PruningContainer,  # noqa: F401
                                    _channel_mask, _checked_dim, _copy,
                                    _count_to_prune, _ones_like,
                                    _validate_amount_init, _wrap)


# ---- the methods ----------------------------------------------------------------------------
class Identity(BasePruningMethod):
    """Prunes nothing (the mask stays all ones): the reparametrisation alone."""
    PRUNING_TYPE = "unstructured"

    def compute_mask(self, t, default_mask):
        return default_mask

    @classmethod
    def apply(cls, module, name):
        return super().apply(module, name)


class RandomUnstructured(BasePruningMethod):
    """Prunes `amount` entries (an int) or that share of them (a float), chosen at random."""
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        from minigrad.creation import randperm
        k = _count_to_prune(self.amount, t.numel())
        mask = _copy(default_mask)
        if k:
            mask.reshape(-1)[randperm(t.numel(), device=t.device)._data[:k]] = 0
        return _wrap(mask, default_mask)

    @classmethod
    def apply(cls, module, name, amount):
        return super().apply(module, name, amount=amount)


class L1Unstructured(BasePruningMethod):
    """Prunes the `amount` entries of smallest absolute value (ties: the earlier first)."""
    PRUNING_TYPE = "unstructured"

    def __init__(self, amount):
        _validate_amount_init(amount)
        self.amount = amount

    def compute_mask(self, t, default_mask):
        k = _count_to_prune(self.amount, t.numel())
        mask = _copy(default_mask)
        if k:
            xp = t.backend.xp
            smallest = _stable_argsort(xp, xp.abs(t._data).reshape(-1), 0, False)[:k]
            mask.reshape(-1)[smallest] = 0
        return _wrap(mask, default_mask)

    @classmethod
    def apply(cls, module, name, amount, importance_scores=None):
        return super().apply(module, name, amount=amount, importance_scores=importance_scores)


class RandomStructured(BasePruningMethod):
    """Prunes `amount` channels along `dim` (whole slices), chosen at random."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount, dim=-1):
        _validate_amount_init(amount)
        self.amount, self.dim = amount, dim

    def compute_mask(self, t, default_mask):
        from minigrad.creation import randperm
        dim = _checked_dim(t, self.dim)
        k = _count_to_prune(self.amount, t.shape[dim])
        if not k:
            return default_mask
        return _channel_mask(t, dim, randperm(t.shape[dim], device=t.device)._data[:k],
                             default_mask)

    @classmethod
    def apply(cls, module, name, amount, dim=-1):
        return super().apply(module, name, amount=amount, dim=dim)


class LnStructured(BasePruningMethod):
    """Prunes the `amount` channels along `dim` of smallest L`n` norm (n: a number, inf,
    -inf, "fro" or "nuc"; ties: the earlier first)."""
    PRUNING_TYPE = "structured"

    def __init__(self, amount, n, dim=-1):
        _validate_amount_init(amount)
        self.amount, self.n, self.dim = amount, n, dim

    def compute_mask(self, t, default_mask):
        dim = _checked_dim(t, self.dim)
        k = _count_to_prune(self.amount, t.shape[dim])
        if not k:
            return default_mask
        xp = t.backend.xp
        norms = _channel_norms(xp, t._data, self.n, dim)
        return _channel_mask(t, dim, _stable_argsort(xp, norms, 0, False)[:k], default_mask)

    @classmethod
    def apply(cls, module, name, amount, n, dim, importance_scores=None):
        return super().apply(module, name, amount=amount, n=n, dim=dim,
                             importance_scores=importance_scores)


def _channel_norms(xp, a, n, dim):
    """The n-norm of each slice of `a` along dim, as torch.norm(a, p=n, dim=<the others>)."""
    a = xp.moveaxis(a, dim, 0)
    if n == "nuc":
        if a.ndim != 3:
            raise ValueError(f"LnStructured: n='nuc' needs a 3-dim tensor (a matrix per "
                             f"channel), got {a.ndim} dims")
        return xp.linalg.svd(a, False, False).sum(-1)     # (full_matrices, compute_uv)
    a = xp.abs(a.reshape(a.shape[0], -1))
    if n == "fro":
        n = 2
    if isinstance(n, bool) or not isinstance(n, numbers.Real):
        raise ValueError(f"LnStructured: n must be a number, inf, -inf, 'fro' or 'nuc', "
                         f"got {n!r}")
    if n == float("inf"):
        return a.max(axis=1)
    if n == float("-inf"):
        return a.min(axis=1)
    if n == 0:
        return (a != 0).sum(axis=1)
    return (a ** n).sum(axis=1) ** (1.0 / n)


class CustomFromMask(BasePruningMethod):
    """Prunes where the given mask is 0."""
    PRUNING_TYPE = "global"

    def __init__(self, mask):
        self.mask = mask

    def compute_mask(self, t, default_mask):
        if tuple(default_mask.shape) != tuple(self.mask.shape):
            raise ValueError(f"custom_from_mask: the mask's shape {tuple(self.mask.shape)} "
                             f"is not the tensor's {tuple(default_mask.shape)}")
        return default_mask * self.mask.to(dtype=default_mask.dtype)

    @classmethod
    def apply(cls, module, name, mask):
        return super().apply(module, name, mask=mask)


# ---- the functions --------------------------------------------------------------------------
def identity(module, name):
    """Reparametrise module.<name> as <name>_orig * <name>_mask with an all-ones mask."""
    Identity.apply(module, name)
    return module


def random_unstructured(module, name, amount):
    RandomUnstructured.apply(module, name, amount)
    return module


def l1_unstructured(module, name, amount, importance_scores=None):
    L1Unstructured.apply(module, name, amount=amount, importance_scores=importance_scores)
    return module


def random_structured(module, name, amount, dim):
    RandomStructured.apply(module, name, amount, dim)
    return module


def ln_structured(module, name, amount, n, dim, importance_scores=None):
    LnStructured.apply(module, name, amount, n, dim, importance_scores=importance_scores)
    return module


def custom_from_mask(module, name, mask):
    CustomFromMask.apply(module, name, mask)
    return module


def global_unstructured(parameters, pruning_method, importance_scores=None, **kwargs):
    """Prune the (module, name) pairs of `parameters` as one vector: e.g.
    pruning_method=L1Unstructured, amount=0.2 zeroes the 20% smallest entries of them all.
    importance_scores: {(module, name): tensor} where the values should not decide."""
    from minigrad.nn.utils import parameters_to_vector
    if isinstance(parameters, (str, Tensor)) or not hasattr(parameters, "__iter__"):
        raise TypeError("global_unstructured(): parameters is not an Iterable of "
                        "(module, name) pairs")
    parameters = list(parameters)
    scores = {} if importance_scores is None else importance_scores
    if not isinstance(scores, dict):
        raise TypeError("global_unstructured(): importance_scores must be of type dict")
    method = pruning_method(**kwargs)
    if method.PRUNING_TYPE != "unstructured":
        raise TypeError(f'Only "unstructured" PRUNING_TYPE supported for the '
                        f'`pruning_method`. Found method {pruning_method} of type '
                        f'{method.PRUNING_TYPE}')
    method._tensor_name = "temp"
    for (m, n), score in scores.items():      # a wrong shape would shift every later slice
        if (m, n) in parameters and tuple(score.shape) != tuple(getattr(m, n).shape):
            raise ValueError(f"global_unstructured(): importance_scores for "
                             f"{type(m).__name__}.{n} should have its shape "
                             f"{tuple(getattr(m, n).shape)}, got {tuple(score.shape)}")
    with no_grad():
        relevant = parameters_to_vector(
            [scores.get((m, n), getattr(m, n)) for m, n in parameters])
        default_mask = parameters_to_vector(
            [getattr(m, n + "_mask") if hasattr(m, n + "_mask") else _ones_like(getattr(m, n))
             for m, n in parameters])
        final = PruningContainer(method).compute_mask(relevant, default_mask)
    at = 0
    for m, n in parameters:
        size = getattr(m, n).numel()
        custom_from_mask(m, n, mask=final[at:at + size].reshape(getattr(m, n).shape))
        at += size


def remove(module, name):
    """Make the pruning of module.<name> permanent (see BasePruningMethod.remove)."""
    hooks = module.__dict__.get("_forward_pre_hooks", {})
    for k, hook in list(hooks.items()):
        if isinstance(hook, BasePruningMethod) and hook._tensor_name == name:
            hook.remove(module)
            del hooks[k]
            return module
    raise ValueError(f"Parameter '{name}' of module {type(module).__name__} has to be "
                     f"pruned before pruning can be removed")


def is_pruned(module):
    """Whether module or any sub-module has a pruning hook."""
    return any(isinstance(hook, BasePruningMethod)
               for _, m in module.named_modules()
               for hook in m.__dict__.get("_forward_pre_hooks", {}).values())
