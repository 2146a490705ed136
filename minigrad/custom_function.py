"""Custom autograd Functions written as PyTorch's: `forward(ctx, ...)` and `backward(ctx,
*grads)` as staticmethods, Tensors in and out, called as `MyFn.apply(x, ...)`.

minigrad's own ops subclass `Function` with instance methods on raw arrays (autograd.py).
A subclass whose `forward` is a staticmethod is instead one of these: `Function.
__init_subclass__` sees that once per class and calls `prepare`, which gives the class its
own `apply` and a node class, `<Name>Backward`, whose instance is both the `ctx` that
forward and backward see and the graph's node (as in PyTorch). forward runs in no-grad
mode, so the Tensor ops inside it record nothing; the node is then recorded as one with
several outputs (`record_outputs`), and its `backward` calls the user's with one gradient
per output, checks what comes back (one per forward argument, None for a non-Tensor one,
a shape the input's broadcasts to) and hands the engine one per Tensor input. Under
create_graph=True the engine runs that backward in grad mode, so a backward written with
Tensor ops is itself differentiable (a saved output keeps this node as its history).
In-place custom ops (`ctx.mark_dirty`) are not supported; PyTorch's `setup_context`
form (forward without ctx) is. A Function with a `jvp` staticmethod and no `backward` works
under forward AD (which rides on backward here, forward_ad.py): its vjp is its jvp
transposed (_transposed_jvp); `generate_vmap_rule` and a `vmap` staticmethod are taken and
not needed (vmap is a loop, func_vmap.py).
"""
import inspect
import weakref

from minigrad import backend
from minigrad.autograd import Function, record_outputs
from minigrad.backward import _FREED
from minigrad.grad_mode import _GradMode, _state
from minigrad.profiler import record_function


class FunctionCtx(Function):
    """The `ctx` of one call of a custom Function, and its node in the graph."""

    _fn = None               # the user's Function class (set on each node class)
    needs_values = False     # the engine checks nothing: saved_tensors checks what was saved

    def __init__(self):
        self._saved, self._materialize, self._non_diff = (), True, set()

    def name(self):
        """'<Fn>Backward' (the node class's name), as PyTorch names a custom Function's node."""
        return type(self).__name__

    def save_for_backward(self, *tensors):
        from minigrad.tensor import Tensor
        for i, t in enumerate(tensors):
            if t is not None and not isinstance(t, Tensor):
                raise TypeError(f"save_for_backward can only save Tensors (or None), but "
                                f"argument {i} is of type {type(t).__name__}; keep other "
                                f"values as attributes of ctx (ctx.k = k)")
        self._saved = [_pack(t, {}) for t in tensors]

    def save_for_forward(self, *tensors):
        """Tensors the Function's `jvp` reads back as ctx.saved_tensors (forward AD)."""
        saved = getattr(self, "_saved", ())
        self.save_for_backward(*tensors)
        self._saved = list(saved) + self._saved

    @property
    def saved_tensors(self):
        """The saved Tensors, refused if one was changed in place since the forward."""
        from minigrad.tensor import Tensor
        if "_saved" not in self.__dict__:          # released by a backward
            raise RuntimeError(_FREED)
        out = []
        for i, (t, ref, data, counter, version, old_id) in enumerate(self._saved):
            if ref is not None:   # an output of this node, held weakly (it owns the node)
                t = ref()
                if t is None:     # dropped: rebuilt as this node's output again, so that a
                    t = Tensor._make(data, self.device)   # backward under create_graph
                    t._version_counter = counter          # still differentiates through it
                    t.requires_grad, t._ctx = True, self
                    self.output_ids[id(t)] = self.output_ids.pop(old_id)
                    self._saved[i] = (None, weakref.ref(t), data, counter, version, id(t))
            if t is not None and t._version_counter[0] != version:
                raise RuntimeError(
                    f"one of the variables needed for gradient computation has been modified "
                    f"by an inplace operation: a saved tensor of shape {t.shape} of "
                    f"{type(self).__name__} is at version {t._version_counter[0]}; expected "
                    f"version {version} instead. Modify a clone() instead, or make the "
                    f"change before the forward pass or after the backward")
            out.append(t)
        return tuple(out)

    @property
    def needs_input_grad(self):
        return self._needs_input_grad

    def mark_non_differentiable(self, *outputs):
        self._non_diff.update(id(t) for t in outputs)

    def set_materialize_grads(self, value):
        self._materialize = bool(value)

    def mark_dirty(self, *tensors):
        raise NotImplementedError(
            f"{self._fn.__name__}: ctx.mark_dirty (a custom Function that changes its input "
            f"in place) is not supported in minigrad; return a new tensor instead "
            f"(out = x.clone(), change out)")

    def backward(self, grads):
        """The engine's call: grads of the recorded outputs -> one per Tensor input."""
        from minigrad import creation
        from minigrad.tensor import Tensor
        name = type(self).__name__
        full = [None] * len(self._out_meta)
        for k, g in zip(self._positions, grads):
            full[k] = g
        if self._materialize:       # zeros for an output that got none (not a non-Tensor)
            full = [creation.zeros(m[0], dtype=m[1], device=self.device)
                    if g is None and m is not None else g for g, m in zip(full, self._out_meta)]
        if self._fn._jvp_only:
            result = _transposed_jvp(self, full)
        else:
            result = self._fn.backward(self, *full)
        if not isinstance(result, tuple):
            result = (result,)
        n = len(self._needs_input_grad)
        if len(result) > n and all(r is None for r in result[n:]):
            result = result[:n]         # extra Nones are allowed, as PyTorch
        if len(result) != n:
            raise RuntimeError(f"function {name} returned an incorrect number of gradients "
                               f"(expected {n}, got {len(result)})")
        in_grads = []
        for i, (r, j) in enumerate(zip(result, self._tensor_at)):
            if j is None:               # not a Tensor argument
                if r is not None:
                    raise RuntimeError(
                        f"function {name} returned a gradient different than None at "
                        f"position {i + 1}, but the corresponding forward input was not a "
                        f"Tensor")
                continue
            p = self.inputs[j]
            if r is not None and p.requires_grad:
                if not isinstance(r, Tensor):
                    raise TypeError(f"function {name} returned a {type(r).__name__} as "
                                    f"gradient {i}; expected a Tensor (or None)")
                if r.shape != p.shape and not _expands_to(p.shape, r.shape):
                    raise RuntimeError(
                        f"Function {name} returned an invalid gradient at index {i} - got "
                        f"{list(r.shape)} but expected shape compatible with {list(p.shape)}")
            in_grads.append(r)       # (the engine sums a broadcast one back to p's shape)
        return tuple(in_grads)


def _transposed_jvp(ctx, grads):
    """The vjp of a Function that defines `jvp` and no `backward`: jvp is linear in the
    input tangents, so the vjp is the gradient of <grads, jvp(ctx, tangents)> with respect
    to the tangents, by a backward through jvp's own ops (recorded, so that forward AD's
    double vjp, forward_ad.py, differentiates it again: linear in grads). jvp is called
    with zero tangents (its output's values do not matter, only its graph)."""
    from minigrad.autograd import grad as _grad
    from minigrad.creation import zeros_like
    from minigrad.grad_mode import enable_grad
    from minigrad.tensor import Tensor
    tangents = [zeros_like(ctx.inputs[j]).requires_grad_() if j is not None else None
                for j in ctx._tensor_at]
    with enable_grad():
        outs = ctx._fn.jvp(ctx, *tangents)
        outs = outs if isinstance(outs, tuple) else (outs,)
        pairs = [(o, g) for o, g in zip(outs, grads) if isinstance(o, Tensor) and
                 g is not None and o.requires_grad]
        wanted = [t for t in tangents if t is not None]
        found = _grad([o for o, _ in pairs], wanted, [g for _, g in pairs],
                      create_graph=True, allow_unused=True) if pairs else [None] * len(wanted)
    found = iter(found)
    return tuple(None if t is None else next(found) for t in tangents)


def _expands_to(shape, target):
    """Whether a tensor of `shape` broadcasts to `target` (so target sums back to it)."""
    if len(shape) > len(target):
        return False
    return all(s == t or s == 1 for s, t in zip(shape[::-1], target[::-1]))


def prepare(cls):
    """Make ctx-style Function class `cls` callable as `cls.apply(...)` (once per class)."""
    cls._node_cls = type(cls.__name__ + "Backward", (FunctionCtx,), {"_fn": cls})
    cls.apply = classmethod(_apply)
    cls._setup_ctx = "setup_context" in dir(cls)
    # a forward-AD-only Function (jvp, no backward): its vjp is its jvp transposed
    cls._jvp_only = (getattr(cls, "jvp", None) is not None and
                     cls.backward is Function.backward)


def _apply(cls, *args, **kwargs):
    """Run cls.forward(ctx, *args) without recording, then record one node for it."""
    from minigrad.tensor import Tensor
    if kwargs:                      # as PyTorch: keyword arguments become positional ones
        bound = inspect.signature(cls.forward).bind(
            *(() if cls._setup_ctx else (None,)), *args, **kwargs)
        bound.apply_defaults()
        args, kwargs = bound.args[0 if cls._setup_ctx else 1:], bound.kwargs
    ctx = cls._node_cls()
    ctx._tensor_at, tensors = [], []
    for a in args:
        ctx._tensor_at.append(len(tensors) if isinstance(a, Tensor) else None)
        if isinstance(a, Tensor):
            tensors.append(a)
    ctx._needs_input_grad = tuple(isinstance(a, Tensor) and a.requires_grad for a in args)
    with _GradMode(False), record_function(cls.__name__):   # (the profiler's event)
        if cls._setup_ctx:
            out = cls.forward(*args, **kwargs)
            cls.setup_context(ctx, args, out)
        else:
            out = cls.forward(ctx, *args, **kwargs)
    outs = out if isinstance(out, tuple) else (out,)
    # an input returned as it is (or a tensor with a graph of its own, or one returned a
    # second time) gets a new Tensor on the same memory: an input must not become this
    # node's output (nor, under no_grad, come back still requiring grad), and each output
    # has one place. (PyTorch hands back one object for a tensor returned twice.)
    inputs, seen, final = {id(t) for t in tensors}, set(), []
    for o in outs:
        if isinstance(o, Tensor):
            if id(o) in inputs or o.requires_grad or id(o) in seen:
                o = o.detach()
            seen.add(id(o))
        final.append(o)
    final = tuple(final)
    if not (_state.grad_enabled and any(t.requires_grad for t in tensors)):
        return final if isinstance(out, tuple) else final[0]   # (nothing recorded)
    ctx._out_meta = [(o.shape, o.dtype) if isinstance(o, Tensor) else None for o in final]
    ctx._positions = [k for k, o in enumerate(final) if isinstance(o, Tensor) and
                      id(outs[k]) not in ctx._non_diff and backend.is_floating(o.dtype)]
    record_outputs(ctx, tensors, [final[k] for k in ctx._positions])
    ctx._non_diff = None
    # (an input that is also returned stays the input: backward differentiates through it)
    produced = {id(outs[k]): final[k] for k in reversed(ctx._positions)
                if id(outs[k]) not in inputs}
    ctx._saved = [_pack(e[0], produced) for e in ctx._saved]   # (versions: as of now)
    return final if isinstance(out, tuple) else final[0]


def _pack(t, produced):
    """A saved tensor as (tensor, weakref, data, version counter, version, id): an output of
    the node itself is held weakly (it holds the node), with its data to rebuild it from."""
    if t is None:
        return None, None, None, None, None, None
    out = produced.get(id(t))
    if out is None:
        return t, None, None, None, t._version_counter[0], None
    return (None, weakref.ref(out), out._data, out._version_counter, out._version_counter[0],
            id(out))
