"""torch.autograd.graph's hook over several tensors, `register_multi_grad_hook`, and
`increment_version`; `save_on_cpu` and `saved_tensors_hooks` say what they can't do here.

A multi-grad hook is one tensor hook on each of the tensors, gathering what they see in
one backward pass. "all" mode: fn(grads) once every one of the tensors that this backward
reaches has its gradient (a tensor the pass does not reach, or that mg.grad's inputs do
not need, is not waited for, and gets None), or at the end of the pass for one that was
reached but got no gradient. "any" mode: fn(grad) with the first gradient. run_backward
(backward.py) opens a frame per pass, while any such hook is alive, with the ids of the
tensors it will visit; a pass with none alive pays one read of LIVE.
"""
import threading
import weakref

# how many multi-grad hooks are registered and not removed (run_backward reads it)
LIVE = [0]
_local = threading.local()          # .frames: the passes running in this thread, innermost last


class _Frame:
    """One backward pass: the ids of the tensors it visits, and each hook's gathering."""

    def __init__(self, order, needed):
        self.ids = {id(t) for t in order} if needed is None else set(needed)
        self.gathering = {}         # id(hook) -> [grads, positions still awaited, done]
        self.hooks = {}             # id(hook) -> the hook, for those that gathered here

    def __enter__(self):
        _frames().append(self)

    def __exit__(self, kind, exc, tb):
        _frames().pop()
        if kind is None:            # what a pass that failed gathered is not reported
            for hook, entry in list(self.gathering.items()):
                if not entry[2]:
                    entry[2] = True
                    self.hooks[hook].fn(entry[0])


class _NoFrame:
    def __enter__(self):
        return None

    def __exit__(self, *exc):
        return None


_NO_FRAME = _NoFrame()


def frame(order, needed):
    """The context run_backward runs its pass in: a _Frame while a multi-grad hook is alive,
    else a no-op."""
    return _Frame(order, needed) if LIVE[0] else _NO_FRAME


def _frames():
    frames = getattr(_local, "frames", None)
    if frames is None:
        frames = _local.frames = []
    return frames


class _MultiGradHook:
    """The handle register_multi_grad_hook returns: remove() takes its tensor hooks off."""

    def __init__(self, tensors, fn, mode):
        self.fn, self.mode, self.n = fn, mode, len(tensors)
        self.ids = [id(t) for t in tensors]
        self.handles = [t.register_hook(self._seen(k)) for k, t in enumerate(tensors)]
        LIVE[0] += 1
        # counted off LIVE by remove(), or when the hook goes with its tensors
        self.live = [True]
        weakref.finalize(self, _forget, self.live)

    def _seen(self, k):
        def hook(g):
            frames = _frames()
            if not frames:          # registered during the pass: nothing to gather into
                return None
            f = frames[-1]
            f.hooks[id(self)] = self
            entry = f.gathering.get(id(self))
            if entry is None:
                awaited = {j for j, i in enumerate(self.ids) if i in f.ids}
                entry = f.gathering[id(self)] = [[None] * self.n, awaited, False]
            if entry[2]:
                return None
            entry[0][k] = g
            entry[1].discard(k)
            if self.mode == "any" or not entry[1]:
                entry[2] = True
                self.fn(g if self.mode == "any" else entry[0])
            return None
        return hook

    def remove(self):
        for h in self.handles:
            h.remove()
        _forget(self.live)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.remove()


def _forget(live):
    if live[0]:
        live[0] = False
        LIVE[0] -= 1


def register_multi_grad_hook(tensors, fn, *, mode="all"):
    """Call fn once per backward pass over `tensors`: in "all" mode fn(grads), a gradient
    or None per tensor, once every tensor the pass reaches has its gradient; in "any" mode
    fn(grad) with the first of them. fn should not change what it is given. Returns a
    handle; handle.remove() takes the hook off."""
    from minigrad.tensor import Tensor
    if mode not in ("all", "any"):
        raise ValueError(f"register_multi_grad_hook: mode must be 'all' or 'any', got "
                         f"{mode!r}")
    if not callable(fn):
        raise TypeError(f"register_multi_grad_hook: expected a function, got "
                        f"{type(fn).__name__}")
    tensors = tuple(tensors)
    for k, t in enumerate(tensors):
        if not isinstance(t, Tensor) or not t.requires_grad:
            what = "does not require grad" if isinstance(t, Tensor) else \
                f"is a {type(t).__name__}"
            raise RuntimeError(f"register_multi_grad_hook: tensor {k} {what}; each must be "
                               f"a Tensor that requires grad")
    return _MultiGradHook(tensors, fn, mode)


def increment_version(tensor):
    """Count one in-place change of `tensor` (and of every view sharing its memory), as
    after a write autograd did not see: a backward that saved the old values then refuses
    to run, as PyTorch's. A sequence of tensors counts each."""
    from minigrad.tensor import Tensor
    for t in (tensor,) if isinstance(tensor, Tensor) else tuple(tensor):
        if not isinstance(t, Tensor):
            raise TypeError(f"increment_version: expected Tensors, got {type(t).__name__}")
        t._version_counter[0] += 1


_SAVED_HOOKS = ("minigrad's graph holds its ops' inputs themselves (a node's edges are the "
                "input tensors, not separate saved copies), so there is nothing separate "
                "to pack: the memory such hooks free in PyTorch cannot be freed here. "
                "Activation checkpointing (mg.utils.checkpoint) is the way to trade compute "
                "for memory")


class saved_tensors_hooks:
    """PyTorch's pack/unpack hooks on the tensors saved for backward: refused, and why."""

    def __init__(self, pack_hook, unpack_hook):
        raise NotImplementedError(f"autograd.graph.saved_tensors_hooks: {_SAVED_HOOKS}")


def disable_saved_tensors_hooks(error_message):
    """A no-op: no saved-tensor hooks exist here to disable (saved_tensors_hooks)."""
    import contextlib
    return contextlib.nullcontext()


class save_on_cpu:
    """PyTorch's context that moves what backward saves to the CPU: arrays on the CPU are
    there already; with a GPU present it warns that nothing is moved (saved_tensors_hooks
    says why)."""

    def __init__(self, pin_memory=False, device_type="cuda"):
        self.pin_memory, self.device_type = pin_memory, device_type

    def __enter__(self):
        from minigrad import backend
        if backend.cuda_is_available():
            import warnings
            warnings.warn(f"autograd.graph.save_on_cpu moves nothing: {_SAVED_HOOKS}",
                          stacklevel=2)
        return self

    def __exit__(self, *exc):
        return None
