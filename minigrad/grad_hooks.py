"""Gradient hooks: the handle that register_hook (a tensor's) and a Module's hook methods
return, and running a tensor's hooks on its gradient as backward reaches it (backward.py
calls run_hooks)."""


class HookHandle:
    """What register_hook returns: remove() takes the hook off its tensor."""
    _next_id = 0

    def __init__(self, hooks, hook, extra=()):
        # extra: dicts keyed by the same id (a module hook's flags), cleared with it
        self.hooks, self.extra, self.id = hooks, extra, HookHandle._next_id
        HookHandle._next_id += 1
        hooks[self.id] = hook

    def remove(self):
        self.hooks.pop(self.id, None)
        for d in self.extra:
            d.pop(self.id, None)

    def __enter__(self):                  # with t.register_hook(f): ... removes it at the end
        return self

    def __exit__(self, *exc):
        self.remove()


def run_hooks(t, g):
    """t's hooks in the order they were added, each on the gradient the one before left."""
    from minigrad.tensor import Tensor
    for hook in list(t._hooks.values()):
        new = hook(g)
        if new is None:
            continue
        name = getattr(hook, "__name__", type(hook).__name__)
        if not isinstance(new, Tensor):
            raise TypeError(f"hook {name!r} returned a {type(new).__name__}; a hook returns "
                            f"None (keep the gradient) or a Tensor that replaces it")
        if new.shape != g.shape or new.dtype != g.dtype or new.device != g.device:
            raise RuntimeError(f"hook {name!r} changed the gradient from shape {g.shape}, "
                               f"{g.dtype} on {g.device} to shape {new.shape}, {new.dtype} "
                               f"on {new.device}; a replacement must match it")
        g = new
    return g


# id(leaf) -> {handle id: hook} for register_post_accumulate_grad_hook; kept here, not on the
# tensor (whose __slots__ are fixed), and dropped when the tensor is freed
_POST_ACCUMULATE = {}


def register_post_accumulate_grad_hook(t, hook):
    """t.register_post_accumulate_grad_hook(hook): hook(t) after backward() has added into
    t.grad, as PyTorch's; leaves that require grad only."""
    import weakref
    if not t.requires_grad:
        raise RuntimeError("register_post_accumulate_grad_hook: the tensor does not require "
                           "grad, so no gradient will be accumulated into it")
    if not t.is_leaf:
        raise RuntimeError("register_post_accumulate_grad_hook: hooks after accumulation "
                           "are for leaf tensors only (a non-leaf keeps no .grad; use "
                           "register_hook)")
    if not callable(hook):
        raise TypeError(f"register_post_accumulate_grad_hook: expected a function of the "
                        f"tensor, got {type(hook).__name__}")
    hooks = _POST_ACCUMULATE.get(id(t))
    if hooks is None:
        hooks = _POST_ACCUMULATE[id(t)] = {}
        weakref.finalize(t, _POST_ACCUMULATE.pop, id(t), None)
    return HookHandle(hooks, hook)


def run_post_accumulate_hooks(t):
    """t's post-accumulate hooks, in the order they were added (backward.py calls this)."""
    for hook in list(_POST_ACCUMULATE[id(t)].values()):
        if hook(t) is not None:
            name = getattr(hook, "__name__", type(hook).__name__)
            raise TypeError(f"post-accumulate grad hook {name!r} returned a value; it must "
                            f"return None (it may change tensor.grad in place)")
