"""Optimizer hooks, as torch.optim's: functions that run around every `step()` (this
optimiser's, or every optimiser's: the global ones), around `state_dict()` and around
`load_state_dict()`. Each register function returns a handle whose remove() takes the hook
off (also a context manager). Where none is registered, a step costs a check of empty dicts.

Order, as PyTorch 2.13: the global step pre-hooks, then this optimiser's; the step; then
this optimiser's post-hooks, then the global ones (the post-hooks inside the profiler's
"Optimizer.step#<class>.step" region). Copies and pickles of an optimiser drop its hooks,
as PyTorch's (most hooks are closures, which could not be pickled anyway).

Where minigrad differs: a hook that is no function is refused when registered (PyTorch
fails at the next step), a hook may remove itself or another while the hooks run (PyTorch
raises "OrderedDict mutated during iteration"), and a state-dict hook that returns
something other than None or a dict raises a TypeError naming it (PyTorch's state_dict()
returns that value; its load_state_dict() fails on it with a bare TypeError)."""
import functools
from collections import OrderedDict

from minigrad.grad_hooks import HookHandle
from minigrad.profiler import record_function

# torch.optim.optimizer's globals: the step hooks of every optimiser
_GLOBAL_STEP_PRE_HOOKS = OrderedDict()
_GLOBAL_STEP_POST_HOOKS = OrderedDict()

# each optimiser's own, made in Optimizer.__init__ (and again in a copy or an unpickled one)
HOOK_KINDS = ("_step_pre_hooks", "_step_post_hooks", "_state_dict_pre_hooks",
              "_state_dict_post_hooks", "_load_state_dict_pre_hooks",
              "_load_state_dict_post_hooks")


def _add(hooks, hook, prepend, caller):
    if not callable(hook):
        raise TypeError(f"{caller}: expected a function, got {type(hook).__name__}")
    handle = HookHandle(hooks, hook)
    if prepend:
        hooks.move_to_end(handle.id, last=False)
    return handle


def register_optimizer_step_pre_hook(hook):
    """hook(optimizer, args, kwargs) before every optimiser's step, before the optimiser's
    own pre-hooks; it may return (new_args, new_kwargs) as a per-optimiser pre-hook."""
    return _add(_GLOBAL_STEP_PRE_HOOKS, hook, False, "register_optimizer_step_pre_hook")


def register_optimizer_step_post_hook(hook):
    """hook(optimizer, args, kwargs) after every optimiser's step, after its own
    post-hooks."""
    return _add(_GLOBAL_STEP_POST_HOOKS, hook, False, "register_optimizer_step_post_hook")


def _hook_name(hook):
    return getattr(hook, "__name__", type(hook).__name__)


def has_step_hooks(optimizer):
    """Whether a step of `optimizer` runs any hook (its own or a global one)."""
    return bool(_GLOBAL_STEP_PRE_HOOKS or _GLOBAL_STEP_POST_HOOKS or
                optimizer._step_pre_hooks or optimizer._step_post_hooks)


def step_hooks(step):
    """`step` with the step hooks and the profiler region around it. The hooks get the
    arguments as the step was called, `args` starting with the optimiser (PyTorch's)."""
    @functools.wraps(step)
    def hooked(self, *args, **kwargs):
        name = f"Optimizer.step#{type(self).__name__}.step"
        if not has_step_hooks(self):
            with record_function(name):
                return step(self, *args, **kwargs)
        args = (self, *args)
        for hook in [*_GLOBAL_STEP_PRE_HOOKS.values(), *self._step_pre_hooks.values()]:
            new = hook(self, args, kwargs)
            if new is None:
                continue
            if not (isinstance(new, tuple) and len(new) == 2):
                raise RuntimeError(f"step pre-hook {_hook_name(hook)!r} must return None or "
                                   f"a tuple (new_args, new_kwargs), got {new!r}")
            args, kwargs = new               # for the step and the hooks after this one
        with record_function(name):
            out = step(*args, **kwargs)
            for hook in [*self._step_post_hooks.values(), *_GLOBAL_STEP_POST_HOOKS.values()]:
                hook(self, args, kwargs)
        return out
    return hooked


def _new_dict(hook, new, old, caller):
    """A state-dict hook's return value: None keeps `old`; a dict replaces it."""
    if new is None:
        return old
    if not isinstance(new, dict):
        raise TypeError(f"{caller} hook {_hook_name(hook)!r} returned {new!r} "
                        f"({type(new).__name__}); it returns None (keep the state dict) or a "
                        f"dict that replaces it")
    return new


class OptimizerHooks:
    """The register methods and the state-dict hooks' running, for Optimizer."""

    def _init_hooks(self):
        for kind in HOOK_KINDS:
            setattr(self, kind, OrderedDict())

    def __getstate__(self):
        """What copy and pickle take: all but the hooks (PyTorch's copies have none)."""
        return {**self.__dict__, **{kind: OrderedDict() for kind in HOOK_KINDS}}

    def __setstate__(self, state):
        self.__dict__.update(state)
        for kind in HOOK_KINDS:                      # pickled before optimisers had hooks
            self.__dict__.setdefault(kind, OrderedDict())

    def register_step_pre_hook(self, hook):
        """hook(optimizer, args, kwargs) before each step, after the global pre-hooks;
        `args` are the step's positional arguments with the optimiser first. Returning
        (new_args, new_kwargs) changes what the step (and the hooks after it) get."""
        return _add(self._step_pre_hooks, hook, False, "register_step_pre_hook")

    def register_step_post_hook(self, hook):
        """hook(optimizer, args, kwargs) after each step (not after one that raised),
        before the global post-hooks."""
        return _add(self._step_post_hooks, hook, False, "register_step_post_hook")

    def register_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer) before state_dict() builds the dict; prepend: before the
        hooks already registered."""
        return _add(self._state_dict_pre_hooks, hook, prepend,
                    "register_state_dict_pre_hook")

    def register_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) on the dict state_dict() built: it may edit it in
        place, or return a new dict that state_dict() returns instead."""
        return _add(self._state_dict_post_hooks, hook, prepend,
                    "register_state_dict_post_hook")

    def register_load_state_dict_pre_hook(self, hook, prepend=False):
        """hook(optimizer, state_dict) before load_state_dict() loads it (a shallow copy of
        the dict given, as PyTorch's); it may return a new dict to load instead."""
        return _add(self._load_state_dict_pre_hooks, hook, prepend,
                    "register_load_state_dict_pre_hook")

    def register_load_state_dict_post_hook(self, hook, prepend=False):
        """hook(optimizer) after load_state_dict() has loaded."""
        return _add(self._load_state_dict_post_hooks, hook, prepend,
                    "register_load_state_dict_post_hook")

    def _hooked_state_dict(self, make):
        for hook in list(self._state_dict_pre_hooks.values()):
            hook(self)
        sd = make()
        for hook in list(self._state_dict_post_hooks.values()):
            sd = _new_dict(hook, hook(self, sd), sd, "state_dict post")
        return sd

    def _hooked_load_state_dict(self, load, state_dict):
        state_dict = dict(state_dict)        # a hook's top-level edits stay off the caller's
        for hook in list(self._load_state_dict_pre_hooks.values()):
            state_dict = _new_dict(hook, hook(self, state_dict), state_dict,
                                   "load_state_dict pre")
        load(state_dict)
        for hook in list(self._load_state_dict_post_hooks.values()):
            hook(self)
