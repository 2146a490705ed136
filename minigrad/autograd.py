"""Reverse-mode autograd: the `Function` every op subclasses, which records the graph, and
`mg.grad` and `mg.autograd.backward` (the backward pass itself is backward.py; grad mode,
which decides whether a graph is recorded, grad_mode.py; anomaly mode, anomaly.py;
`mg.autograd.functional`, jacobians and hessians as torch.autograd.functional's,
autograd_functional.py).

An op is a `Function` with `forward` (raw arrays in, raw array out) and `backward` (the output's
gradient as a Tensor in, one gradient Tensor per input out). Backward is written with Tensor
ops, so with `create_graph=True` the backward pass records a graph of its own and gradients of
gradients work. Without it, backward runs in no-grad mode: the same Tensor ops then build no
graph, so the ordinary backward pays nothing for that ability. Some ops (the fused ones,
indexing, and views and reductions where it saves ops: reshape, permute, cat, sum) also
define a fast path on raw arrays, `backward_arrays` or `scatter_backward`, which the
ordinary backward uses instead; their `backward` then runs only under create_graph=True,
and a test checks that the two agree.
"""
import inspect
import sys as _sys
import weakref

from minigrad import backend, profiler
from minigrad.autograd_node import NodeAPI
from minigrad.backward import run_backward, _modified_in_place
from minigrad.gradient_edge import (GradientEdge, materialize, resolve_inputs,
                                    resolve_outputs)
from minigrad.grad_mode import (_state, is_grad_enabled, no_grad,  # noqa: F401
                                enable_grad, set_grad_enabled, inference_mode)
from minigrad.anomaly import (detect_anomaly, set_detect_anomaly,  # noqa: F401
                              is_anomaly_enabled, is_anomaly_check_nan_enabled)
from minigrad import forward_ad  # noqa: F401  (mg.autograd.forward_ad)
from minigrad.autograd_names import (Variable, set_multithreading_enabled,  # noqa: F401
                                     is_multithreading_enabled, graph)
# `import minigrad.autograd.forward_ad` (or .graph) as torch's submodules (this is a module)
_sys.modules.setdefault(__name__ + ".forward_ad", forward_ad)
_sys.modules.setdefault(__name__ + ".graph", graph)


def __getattr__(name):
    """`mg.autograd.functional` (autograd_functional.py), as torch.autograd.functional,
    imported when first asked for: it is made of Tensor ops, and tensor.py imports this
    module."""
    if name == "functional":
        from minigrad import autograd_functional
        return autograd_functional
    if name in ("gradcheck", "gradgradcheck"):     # torch.autograd.gradcheck is a function
        import minigrad.gradcheck                  # (mg.gradcheck is the function)
        return getattr(_sys.modules["minigrad.gradcheck"], name)
    raise AttributeError(f"module 'minigrad.autograd' has no attribute {name!r}")


def _note_view_base(counter, inputs):
    """A view made outside the graph leaves no node leading to the tensor it views; the
    memory's version count (a list) names that tensor instead, weakly, after its count,
    if it needs no grad: a recorded write into the view (`d[i] += w`, d needing no grad, w
    needing it) then reaches it (ops/inplace_views.py), as PyTorch's view._base. A view
    made under no_grad puts None there for good: PyTorch refuses a recorded write into
    such a view, and which view a write goes through is not known here, so every such
    write into this memory is refused."""
    if len(counter) > 1 and (counter[1] is None or counter[1]() is not None):
        return                                   # already named, or refused for good
    if not _state.grad_enabled:
        counter[1:] = [None]
        return
    t = next(t for t in inputs if t._version_counter is counter)
    if not t.requires_grad:
        counter[1:] = [weakref.ref(t)]


class BroadcastError(ValueError, RuntimeError):
    """Shapes that do not broadcast: a ValueError (NumPy's word) that is also PyTorch's
    RuntimeError, so `except RuntimeError` written for PyTorch catches it."""


class Function(NodeAPI):
    """One differentiable op. Subclasses define `forward(*arrays, **params) -> array` and
    `backward(grad) -> tuple of Tensors (or None) per input`. Positional arguments of `apply`
    are the Tensor inputs; keyword arguments are the op's non-differentiable parameters.
    In both, `self.xp` is the array library (NumPy, or CuPy on a GPU); in backward,
    `self.inputs` are the input Tensors (their arrays: `t._data`) and `self.output()` the
    result. (A subclass with staticmethods forward(ctx, ...) and backward(ctx, *grads) on
    Tensors is a custom Function as PyTorch's instead: custom_function.py.)"""

    inputs = None
    # None for the usual op, whose one output is made by apply. A node with several outputs
    # (made by record_outputs, not apply: unbind's slices, the LSTM cell's h and c, a
    # module's backward hooks) maps id(output) -> its place; its `backward` (and
    # `backward_arrays`) then gets a tuple of their gradients (None for one that got none),
    # once, when the last of those outputs in the graph is reached
    output_ids = None

    # the token of the checkpointed function that recorded this node (grad_mode._Marks)
    segment = None
    # in anomaly mode, the stack of the code that recorded this node (anomaly.py)
    forward_stack = None

    def __init_subclass__(cls, **kwargs):
        """A subclass with a staticmethod `forward` is a PyTorch-style custom Function,
        forward(ctx, ...) on Tensors: it gets its own apply (custom_function.py). Checked
        once per class, so the ops' apply below pays nothing."""
        super().__init_subclass__(**kwargs)
        if isinstance(inspect.getattr_static(cls, "forward"), staticmethod):
            from minigrad import custom_function
            custom_function.prepare(cls)

    @classmethod
    def apply(cls, *inputs, **params):
        from minigrad.tensor import Tensor  # tensor.py imports this module
        try:
            device = inputs[0].device
            arrays = [t._data for t in inputs]
        except AttributeError:              # None, a string, a NumPy array: say which
            raise TypeError(f"{cls.__name__}: expected Tensor inputs, got "
                            f"{', '.join(type(t).__name__ for t in inputs)}; make one with "
                            f"mg.tensor(...)") from None
        for t in inputs:
            if t.device != device:
                raise RuntimeError(
                    f"{cls.__name__}: tensors on different devices "
                    f"({', '.join(x.device for x in inputs)}); move them with .to(device) first")
        amp = _state.autocast    # (one read: None unless autocast is on, amp.py)
        if amp is not None:
            cast = amp.cast(cls.__name__, inputs, device)
            if cast is not inputs:
                inputs, arrays = cast, [t._data for t in cast]
        fn = cls()
        fn.device = device
        fn.xp = inputs[0].backend.xp
        try:
            if profiler.active is None:
                data = fn.forward(*arrays, **params)
            else:                               # timed as one event (profiler.py)
                data = profiler.active.run(cls.__name__, "forward", device, inputs,
                                           lambda: fn.forward(*arrays, **params))
        except (ValueError, IndexError) as e:  # the array library's words, plus the op's
            shapes = ", ".join(str(t.shape) for t in inputs)
            broadcast = "broadcast" in str(e)
            hint = "; broadcasting needs each dim, counted from the last, to be equal or 1" \
                if broadcast else ""
            raise (BroadcastError if broadcast else type(e))(
                f"{cls.__name__}: {e} (input shapes: {shapes}{hint})") from None
        except MemoryError as e:        # CuPy's: as torch.cuda.OutOfMemoryError
            from minigrad.cuda_memory import raise_if_out_of_memory
            raise_if_out_of_memory(e)
            raise
        if not isinstance(data, fn.xp.ndarray):  # NumPy reduces to a scalar: keep 0-d arrays
            data = fn.xp.asarray(data)
        out = Tensor._make(data, fn.device)  # fn.device: ToDevice changes it
        base, viewed = data.base, None
        if base is not None:  # a view (reshape, slice, transpose...) shares its input's count
            for t in inputs:
                if base is t._data or base is t._data.base:
                    out._version_counter = viewed = t._version_counter
                    break
        if _state.grad_enabled and any(t.requires_grad for t in inputs):
            out.requires_grad = True
            out._ctx = fn
            fn.inputs = inputs
            note_use(inputs, weakref.ref(fn))
            marks = _state.marks     # (one read: None unless checkpoint or anomaly mode)
            if marks is not None:
                marks.put_on(fn)
            fn._output = weakref.ref(out)  # weak: the output owns the Function, not vice versa
            # backward may read any input and the output: they must still hold these values
            # (an op whose backward reads none of them, needs_values False, is not checked;
            # the output is checked when backward reads it, by output())
            if cls.needs_values:
                fn.versions = [t._version_counter[0] for t in inputs]
                fn.out_version = out._version_counter[0]
        elif viewed is not None:
            _note_view_base(viewed, inputs)
        return out

    def forward(self, *arrays, **params):
        raise NotImplementedError

    def backward(self, grad):
        raise NotImplementedError

    # An op may also define `backward_arrays(self, g) -> tuple of arrays (or None)`: the same
    # gradients computed on raw arrays, with fewer temporaries. The engine uses it when no
    # graph of the backward pass is wanted (create_graph=False); `backward` stays the
    # readable, twice-differentiable reference, and a test checks that the two agree.

    # True where the gradients that ordinary backward (create_graph=False) gets from this op
    # are new, writable arrays that nothing else holds, each input's its own: the engine may
    # then add into them in place, and a leaf keeps its gradient as `.grad` without a copy
    # (PyTorch's AccumulateGrad steals such a buffer too).
    fresh_grads = False

    # False where neither backward nor backward_arrays reads the values of the inputs or of
    # the output (only their shapes, or masks the forward saved): an in-place change of
    # them after the op ran then cannot make its gradient wrong, so autograd does not
    # refuse it, as PyTorch, which checks only what an op saved (y = x + b; x.add_(1);
    # y.backward() is fine: the gradient of + does not depend on x). (A node with several
    # outputs has only its inputs checked: none of them reads its outputs.)
    needs_values = True

    # False where backward reads the values of the output alone (eˣ, tanh, softmax, through
    # output()), not the inputs': an in-place change of an input after the op ran is then
    # not refused, as PyTorch, which saves only the result of these ops
    reads_inputs = True

    # True for a product (x·y, x@y), whose gradient for one input reads the other's values
    # only: an input is then checked only where the other wants a gradient (x @ w with a
    # constant w does not refuse a change of x), as PyTorch, which saves what is needed
    product = False

    def output(self):
        """The op's output, for a backward that reads its values. Checked here, when read, for
        an in-place change since the forward: an op whose backward reads only its inputs (x·y)
        does not then refuse a change of its output, as PyTorch, which checks what it saved."""
        out = self._output()
        if out is not None and self.needs_values and \
                out._version_counter[0] != self.out_version:
            raise RuntimeError(_modified_in_place(self, out))
        return out

    @property
    def needs_input_grad(self):
        """Which inputs want a gradient (PyTorch's ctx.needs_input_grad): backward may
        answer None for the others and skip their work (a GEMM, for a Linear on data; a
        0·∞ for a product with a constant holding ∞)."""
        return tuple(t.requires_grad for t in self.inputs)

    def const(self, array):
        """A saved array as a constant (non-differentiable) Tensor on this op's device."""
        from minigrad.tensor import Tensor
        return Tensor._make(array, self.device)

    def release(self):
        """Drop everything saved for backward, and the links to the inputs, so that the
        arrays behind this node can be freed (a second backward through it raises)."""
        self.__dict__.clear()
        self.inputs = None


def record_outputs(fn, inputs, outputs):
    """Make Function instance `fn` the node of several `outputs` (Tensors already made from
    `inputs`' arrays, as unbind's slices; see Function.output_ids), when a graph is being
    recorded; its backward then gets a tuple of their gradients. Returns the outputs."""
    if _state.grad_enabled and any(t.requires_grad for t in inputs):
        fn.inputs, fn.device, fn.xp = tuple(inputs), inputs[0].device, inputs[0].backend.xp
        fn.output_ids = {}
        note_use(fn.inputs, weakref.ref(fn))
        marks = _state.marks
        if marks is not None:
            marks.put_on(fn)
        for k, t in enumerate(outputs):
            t.requires_grad, t._ctx = True, fn
            fn.output_ids[id(t)] = k
        if fn.needs_values:           # as apply: backward may read the inputs (not outputs)
            fn.versions = [t._version_counter[0] for t in inputs]
    return outputs


def note_use(inputs, ref):
    """Leave `ref`, a weak reference to a recorded op, on each of its inputs (Tensor._uses),
    so that an in-place write recorded later finds the ops that used the old value and
    keeps them on it (ops/inplace_autograd.py), without searching the heap. Freed and
    released ops are dropped when a list reaches a power of two and would halve, so a
    tensor used in every step (a batch, a buffer, a weight) keeps a short list, at O(1)
    amortised cost."""
    for t in inputs:
        uses = t._uses
        if uses is None:
            t._uses = [ref]
            continue
        uses.append(ref)
        n = len(uses)
        if n >= 16 and n & (n - 1) == 0:
            live = [r for r in uses[:n] if alive(r())]
            if len(live) <= n // 2:
                uses[:n] = live     # (what another thread appended meanwhile stays)


def alive(fn):
    """Whether op fn (or None, for a freed one) still routes gradients to its inputs: not
    freed, and not released by a backward (an unbind's node keeps its inputs, marked
    released)."""
    return fn is not None and fn.inputs is not None and not getattr(fn, "released", False)


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=None, materialize_grads=False):
    """Gradients of `outputs` with respect to `inputs`, returned (like torch.autograd.grad).
    With `create_graph=True` the result is itself differentiable (second derivatives).
    Either may hold GradientEdges (gradient_edge.py) beside Tensors; `inputs` may be a dict
    (a dict of gradients back). `materialize_grads`: zeros, not None, for an unused input
    (allow_unused then defaults to True)."""
    from minigrad.tensor import Tensor
    if materialize_grads and allow_unused is False:
        raise ValueError("mg.grad: expected allow_unused to be True or not passed when "
                         "materialize_grads=True, but got allow_unused=False")
    if allow_unused is None:
        allow_unused = materialize_grads
    outputs = [outputs] if isinstance(outputs, (Tensor, GradientEdge)) else list(outputs)
    keys = None
    if isinstance(inputs, (Tensor, GradientEdge)):
        inputs = [inputs]
    elif type(inputs) is dict:
        keys, inputs = list(inputs), list(inputs.values())
    else:
        inputs = list(inputs)
    given = inputs
    if not all(isinstance(o, Tensor) for o in outputs):     # (edges: resolved to tensors)
        outputs = resolve_outputs(outputs, "mg.grad")
    if not all(isinstance(t, Tensor) for t in inputs):
        inputs = resolve_inputs(inputs, outputs, "mg.grad")
    for t in inputs:
        if isinstance(t, Tensor) and not t.requires_grad:
            raise RuntimeError("mg.grad: an input does not require grad; create it with "
                               "requires_grad=True")
    if grad_outputs is None:
        grad_outputs = [None] * len(outputs)
    elif isinstance(grad_outputs, Tensor):
        grad_outputs = [grad_outputs]
    root_grads = [_initial_grad(o, g) for o, g in zip(outputs, grad_outputs)]
    if retain_graph is None:
        retain_graph = create_graph
    found = run_backward(outputs, root_grads, retain_graph, create_graph, inputs)
    for i, g in enumerate(found):
        if g is None:
            if not allow_unused:
                raise RuntimeError(f"mg.grad: input {i} was not used to compute the outputs; "
                                   "pass allow_unused=True to get None for it")
        elif not create_graph:
            found[i] = g.detach()
    if materialize_grads:
        found = materialize(found, given, create_graph)
    found = tuple(found) if create_graph else _each_its_own(found)
    return found if keys is None else dict(zip(keys, found))


def backward(tensors, grad_tensors=None, retain_graph=None, create_graph=False, inputs=None):
    """Accumulate the gradients of `tensors` (a Tensor or a sequence), weighted by
    `grad_tensors` (one per tensor; None for a one-element tensor: 1), into the `.grad` of
    the leaves, as torch.autograd.backward: `sum(t.backward(g))` in one pass. `inputs` (a
    Tensor, a sequence or a dict of them): only these get a `.grad`, leaves or not (a
    non-leaf one then retains its gradient in later backwards too, as PyTorch's). Either
    may hold GradientEdges (gradient_edge.py); an edge among `inputs` fills the .grad of
    its leaf, and nothing for a non-leaf's (no tensor of its own holds it), as PyTorch's."""
    from minigrad.tensor import Tensor
    tensors = (tensors,) if isinstance(tensors, (Tensor, GradientEdge)) else tuple(tensors)
    if grad_tensors is None:
        grad_tensors = (None,) * len(tensors)
    elif isinstance(grad_tensors, Tensor):
        grad_tensors = (grad_tensors,)
    else:
        grad_tensors = tuple(grad_tensors)
    if len(grad_tensors) != len(tensors):
        raise RuntimeError(f"got {len(tensors)} tensors and {len(grad_tensors)} gradients")
    for k, (t, g) in enumerate(zip(tensors, grad_tensors)):
        if not isinstance(t, (Tensor, GradientEdge)):
            raise TypeError(f"backward: tensors must be Tensors or GradientEdges, got "
                            f"{type(t).__name__} at position {k}")
        if g is not None and not isinstance(g, Tensor):
            raise TypeError(f"gradients can be either Tensors or None, but got "
                            f"{type(g).__name__}")
    if not all(isinstance(t, Tensor) for t in tensors):
        tensors = resolve_outputs(tensors, "backward")
    root_grads = [_initial_grad(t, g) for t, g in zip(tensors, grad_tensors)]
    if retain_graph is None:
        retain_graph = create_graph
    if inputs is None:
        run_backward(list(tensors), root_grads, retain_graph, create_graph)
        return
    inputs = (inputs,) if isinstance(inputs, (Tensor, GradientEdge)) else \
        tuple(inputs.values()) if isinstance(inputs, dict) else tuple(inputs)
    if not inputs:
        raise RuntimeError("`inputs` argument to `backward()` cannot be empty.")
    given = inputs
    if not all(isinstance(t, Tensor) for t in inputs):
        inputs = resolve_inputs(inputs, tensors, "backward")
    for t, was in zip(inputs, given):
        if t is not was:         # an edge's tensor: its gradient is stored for a leaf only
            continue
        if not t.requires_grad:
            raise RuntimeError(f"backward: each of `inputs` must be a Tensor that requires "
                               f"grad, got {t!r:.60}")
        if t._ctx is not None:   # as PyTorch: a non-leaf asked for retains its gradient
            t.retain_grad()      # (the engine stores it), in later backwards too
    from minigrad.autograd_node import LEAF_PREHOOKS, run_leaf_prehooks
    from minigrad.backward import _into_grad
    from minigrad.grad_hooks import _POST_ACCUMULATE, run_post_accumulate_hooks
    found = run_backward(list(tensors), root_grads, retain_graph, create_graph, inputs)
    done = set()
    for t, g in zip(inputs, found):
        if g is None or t._ctx is not None or id(t) in done:   # (a leaf asked twice: once)
            continue
        done.add(id(t))
        if LEAF_PREHOOKS and id(t) in LEAF_PREHOOKS:          # its AccumulateGrad's
            g = run_leaf_prehooks(t, g)
            if g is None:
                continue
        _into_grad(t, g)
        if _POST_ACCUMULATE and id(t) in _POST_ACCUMULATE:
            run_post_accumulate_hooks(t)


def _each_its_own(found):
    """Each gradient a writable array of its own, as PyTorch's: the engine may hand back a
    read-only broadcast view (the gradient of a sum) or one array for several inputs (of
    x + y), which an in-place change of one result would refuse or spread to the others."""
    from minigrad.tensor import Tensor
    seen = set()
    for i, g in enumerate(found):
        if g is None:
            continue
        root = g._data if g._data.base is None else g._data.base
        if id(root) in seen or backend.shares_elements(g._data) or \
                not getattr(g._data.flags, "writeable", True):   # (CuPy has no such flag)
            g = found[i] = Tensor._make(g._data.copy(), g.device)
            root = g._data
        seen.add(id(root))
    return tuple(found)


def _initial_grad(out, g):
    from minigrad.tensor import Tensor
    if not out.requires_grad:
        raise RuntimeError("backward: the tensor does not require grad and has no graph "
                           "(was it computed under mg.no_grad(), or from tensors without "
                           "requires_grad=True? Or is it a gradient taken with create_graph="
                           "True that does not depend on the inputs, as a linear or piecewise-"
                           "linear function's (x * 2, relu, abs): its derivative is 0 there; "
                           "PyTorch answers zeros for the piecewise-linear ones)")
    if g is None:
        if out.numel() != 1:
            raise RuntimeError(
                f"backward: grad can be implicitly created only for scalar outputs, but the "
                f"output has shape {out.shape}; reduce it (e.g. .sum()) or pass a gradient "
                f"of that shape")
        return Tensor._make(out.backend.xp.ones(out.shape, dtype=out.dtype), out.device)
    if not isinstance(g, Tensor):
        g = Tensor(g, dtype=out.dtype, device=out.device)
    if g.shape != out.shape:
        raise RuntimeError(f"backward: gradient shape {g.shape} does not match output shape "
                           f"{out.shape}")
    if g.dtype != out.dtype:        # as PyTorch: a gradient takes its tensor's dtype, so
        g = g.to(out.dtype)         # no op's backward meets two float widths
    return g
