"""Gradient hooks: the handle that register_hook (a tensor's) and a Module's hook methods
return, and running a tensor's hooks on its gradient as backward reaches it (backward.py
calls run_hooks)."""


class HookHandle:
    """What register_hook returns: remove() takes the hook off its tensor."""
    _next_id = 0

    def __init__(self, hooks, hook):
        self.hooks, self.id = hooks, HookHandle._next_id
        HookHandle._next_id += 1
        hooks[self.id] = hook

    def remove(self):
        self.hooks.pop(self.id, None)

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
