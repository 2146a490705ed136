"""A Module's forward hooks, as PyTorch's: functions run before forward (they may replace
the inputs) and after it (they may replace the output), e.g. to record activations for a
plot. `Module` inherits them; a module without hooks calls forward directly."""
import warnings
from collections import OrderedDict

from minigrad.autograd import HookHandle


class ForwardHooks:
    def __call__(self, *args, **kwargs):
        pre, post = self.__dict__.get("_forward_pre_hooks"), self.__dict__.get("_forward_hooks")
        if not pre and not post:                         # the usual case
            return self.forward(*args, **kwargs)
        done, out = set(), None
        try:
            for hook, with_kwargs, _ in list(pre.values()) if pre else ():
                args, kwargs = _pre_hook_result(hook, self, args, kwargs, with_kwargs)
            out = self.forward(*args, **kwargs)
            for hook_id, (hook, with_kwargs, _) in list(post.items()) if post else ():
                done.add(hook_id)
                new = hook(self, args, kwargs, out) if with_kwargs else hook(self, args, out)
                out = out if new is None else new        # None keeps the output
            return out
        except Exception:
            # always_call hooks run even when forward (or a hook) raised, as PyTorch's, on
            # output None; an error of theirs is only a warning beside the first one
            for hook_id, (hook, with_kwargs, always) in list(post.items()) if post else ():
                if always and hook_id not in done:
                    try:
                        hook(self, args, kwargs, out) if with_kwargs else hook(self, args, out)
                    except Exception as e:               # noqa: BLE001
                        warnings.warn(f"a forward hook with always_call=True raised {e!r} "
                                      f"while another error was raised in forward",
                                      stacklevel=2)
            raise

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) runs before forward; a value it returns replaces the positional
        inputs (a tuple, or one value). with_kwargs=True: hook(module, args, kwargs), which
        may return (args, kwargs). prepend=True runs it before the hooks already there.
        Returns a handle: handle.remove() takes it off."""
        return self._add_hook("_forward_pre_hooks", (hook, with_kwargs, False), prepend,
                              "register_forward_pre_hook")

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """hook(module, args, output) runs after forward, e.g. to record activations; a value
        it returns replaces the output. with_kwargs=True: hook(module, args, kwargs,
        output); always_call=True: it runs even when forward raises (output None).
        Returns a handle: handle.remove() takes it off."""
        return self._add_hook("_forward_hooks", (hook, with_kwargs, always_call), prepend,
                              "register_forward_hook")

    def _add_hook(self, kind, entry, prepend, caller):
        if not callable(entry[0]):
            raise TypeError(f"{caller}: expected a function, got {type(entry[0]).__name__}")
        if kind not in self.__dict__:                    # made on first use: most never are
            object.__setattr__(self, kind, OrderedDict())
        handle = HookHandle(self.__dict__[kind], entry)
        if prepend:
            self.__dict__[kind].move_to_end(handle.id, last=False)
        return handle


def _pre_hook_result(hook, module, args, kwargs, with_kwargs):
    """(args, kwargs) after a forward pre-hook: its return value replaces them (None keeps
    them; a plain hook replaces the positional ones, with a tuple or one value)."""
    if not with_kwargs:
        new = hook(module, args)
        return (args if new is None else new if isinstance(new, tuple) else (new,)), kwargs
    new = hook(module, args, kwargs)
    if new is None:
        return args, kwargs
    if not (isinstance(new, tuple) and len(new) == 2 and isinstance(new[1], dict)):
        raise RuntimeError(f"a forward pre-hook with with_kwargs=True must return None or "
                           f"(args, kwargs), got {type(new).__name__}")
    return (new[0] if isinstance(new[0], tuple) else (new[0],)), new[1]
