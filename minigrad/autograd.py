"""Reverse-mode autograd: the `Function` every op subclasses and the backward pass (grad
mode, which decides whether a graph is recorded, is in grad_mode.py).

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
import weakref

from minigrad import backend
from minigrad.grad_hooks import run_hooks as _run_hooks
from minigrad.grad_mode import (_state, _GradMode, is_grad_enabled, no_grad,  # noqa: F401
                                enable_grad, set_grad_enabled, inference_mode)


class Function:
    """One differentiable op. Subclasses define `forward(*arrays, **params) -> array` and
    `backward(grad) -> tuple of Tensors (or None) per input`. Positional arguments of `apply`
    are the Tensor inputs; keyword arguments are the op's non-differentiable parameters."""

    inputs = None
    # None for the usual op, whose one output is made by apply. A node with several outputs
    # (made by record_outputs, not apply: unbind's slices, the LSTM cell's h and c, a
    # module's backward hooks) maps id(output) -> its place; its `backward` (and
    # `backward_arrays`) then gets a tuple of their gradients (None for one that got none),
    # once, when the last of those outputs in the graph is reached
    output_ids = None

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
        fn = cls()
        fn.device = device
        fn.xp = inputs[0].backend.xp
        try:
            data = fn.forward(*arrays, **params)
        except (ValueError, IndexError) as e:  # the array library's words, plus the op's
            shapes = ", ".join(str(t.shape) for t in inputs)
            hint = "; broadcasting needs each dim, counted from the last, to be equal or 1" \
                if "broadcast" in str(e) else ""
            raise type(e)(f"{cls.__name__}: {e} (input shapes: {shapes}{hint})") from None
        if not isinstance(data, fn.xp.ndarray):  # NumPy reduces to a scalar: keep 0-d arrays
            data = fn.xp.asarray(data)
        out = Tensor._make(data, fn.device)  # fn.device: ToDevice changes it
        base = data.base
        if base is not None:  # a view (reshape, slice, transpose...) shares its input's count
            for t in inputs:
                if base is t._data or base is t._data.base:
                    out._version_counter = t._version_counter
                    break
        if _state.grad_enabled and any(t.requires_grad for t in inputs):
            out.requires_grad = True
            out._ctx = fn
            fn.inputs = inputs
            for t in inputs:    # an in-place write recorded later must not re-route the
                t._used = True  # gradient this op sends t (ops/inplace_autograd.py)
            fn._output = weakref.ref(out)  # weak: the output owns the Function, not vice versa
            # backward may read any input and the output: they must still hold these values
            # (an op whose backward reads none of them, needs_values False, is not checked;
            # the output is checked when backward reads it, by output())
            if cls.needs_values:
                fn.versions = [t._version_counter[0] for t in inputs]
                fn.out_version = out._version_counter[0]
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
        for t in inputs:        # see apply
            t._used = True
        for k, t in enumerate(outputs):
            t.requires_grad, t._ctx = True, fn
            fn.output_ids[id(t)] = k
        if fn.needs_values:           # as apply: backward may read the inputs (not outputs)
            fn.versions = [t._version_counter[0] for t in inputs]
    return outputs


_FREED = ("backward through a graph a second time: its saved arrays were freed by the first "
          "backward(). Pass retain_graph=True to the first backward() (or to mg.grad) if you "
          "need to backward twice")


def _changed_input(ctx):
    """The position of the first input that ctx's backward reads and that was changed in
    place since the op ran, or None."""
    if not (ctx.needs_values and ctx.reads_inputs):
        return None
    for i, (p, v) in enumerate(zip(ctx.inputs, ctx.versions)):
        if p._version_counter[0] != v and (not ctx.product or any(
                q.requires_grad for j, q in enumerate(ctx.inputs) if j != i)):
            return i
    return None


def _modified_in_place(ctx, out=None, i=None):
    """The error for a tensor that backward needs but that was changed in place (zero_,
    setitem, an optimiser step) after the op `ctx` used it: its output `out`, or input i."""
    if out is not None:
        which, t, was = "its output", out, ctx.out_version
    else:
        which, t, was = f"its input {i}", ctx.inputs[i], ctx.versions[i]
    name = type(ctx).__name__
    return (f"backward: a tensor needed for the gradient of {name} has been modified by an "
            f"in-place operation: {which} (shape {t.shape}) is at version "
            f"{t._version_counter[0]}, it was at version {was} when {name} used it. "
            f"Modify a clone() instead (y = y.clone(); y[0] = ...), or make the change "
            f"before the forward pass or after the backward")


def _topological_order(roots):
    """Tensors that need a gradient, inputs before outputs. Iterative (explicit stack), so a
    10,000-op chain is fine, and linear in the size of the graph."""
    order, seen = [], set()
    stack = [(r, False) for r in roots]
    while stack:
        t, expanded = stack.pop()
        if expanded:
            order.append(t)
            continue
        if id(t) in seen:
            continue
        seen.add(id(t))
        stack.append((t, True))
        ctx = t._ctx
        if ctx is not None:
            if ctx.inputs is None:
                raise RuntimeError(_FREED)
            for p in ctx.inputs:
                if p.requires_grad and id(p) not in seen:
                    stack.append((p, False))
    return order


def run_backward(roots, root_grads, retain_graph=False, create_graph=False, inputs=None):
    """Propagate `root_grads` from `roots` down the graph.

    With `inputs=None` gradients accumulate into the `.grad` of every leaf (as
    `Tensor.backward`); otherwise they are returned, one per tensor of `inputs` (as `mg.grad`),
    and no `.grad` is touched."""
    wanted = None
    if inputs is not None:  # id -> positions: one tensor may be asked for twice
        wanted = {}
        for i, t in enumerate(inputs):
            wanted.setdefault(id(t), []).append(i)
    found = [None] * (0 if inputs is None else len(inputs))
    # id(tensor) -> [gradient so far, owned]. "Owned" means the engine made that array itself
    # and nothing else refers to it yet, so more gradient may be added to it in place (only
    # when no graph of the backward pass is being recorded).
    grads = {}
    for r, g in zip(roots, root_grads):
        _accumulate(grads, r, g, False)
    order = _topological_order(roots)
    needed = None if wanted is None else _on_a_path_to(order, wanted)
    gathering = _nodes_with_several_outputs(order)
    with _GradMode(create_graph):
        while order:
            t = order.pop()   # popped, not iterated: a tensor whose turn is over can be freed
            entry = grads.pop(id(t), None)
            ctx = t._ctx
            if entry is None or (needed is not None and id(t) not in needed):
                if gathering and ctx is not None and ctx.output_ids is not None:
                    _gather(gathering, ctx, t, None, grads, create_graph, retain_graph,
                            needed)
                continue
            g, owned = entry
            if t._hooks:     # a hook may keep g, or return a tensor of its own (and remove
                g, owned = _run_hooks(t, g), False   # itself): never stolen after one ran
            if t._retains_grad:
                _into_grad(t, g)
            if wanted is not None and id(t) in wanted:
                for i in wanted[id(t)]:
                    found[i] = g
            if ctx is not None and ctx.output_ids is not None:
                _gather(gathering, ctx, t, g, grads, create_graph, retain_graph, needed)
                continue
            if ctx is None:
                if wanted is None:   # an array only we hold becomes .grad as it is
                    _into_grad(t, g, owned=owned)
                continue
            if needed is not None and not any(id(p) in needed for p in ctx.inputs):
                continue                               # nothing below t was asked for
            changed = _changed_input(ctx)            # (the output: checked by output())
            if changed is not None:
                raise RuntimeError(_modified_in_place(ctx, i=changed))
            _propagate(ctx, g, grads, create_graph)
            if not retain_graph:
                ctx.release()
    return found


def _nodes_with_several_outputs(order):
    """id(node) -> [outputs of it still to come in `order`, their gradients so far], for the
    nodes that have several outputs (Function.output_ids); empty for an ordinary graph."""
    gathering = {}
    for t in order:
        ctx = t._ctx
        if ctx is not None and ctx.output_ids is not None:
            entry = gathering.setdefault(id(ctx), [0, [None] * len(ctx.output_ids)])
            entry[0] += 1
    return gathering


def _gather(gathering, ctx, t, g, grads, create_graph, retain_graph, needed):
    """Keep g, the gradient of t (None: it got none), one of the outputs of node ctx; after
    the last of them, pass them all to ctx's backward at once. (In the order, every output
    of a node comes before its inputs, so that is still in time.) As run_backward does for
    one output: nothing for a node below which mg.grad asked for nothing, and an error
    where an input backward reads was changed in place since."""
    entry = gathering[id(ctx)]
    entry[0] -= 1
    if g is not None:
        entry[1][ctx.output_ids[id(t)]] = g
    if entry[0] == 0:
        del gathering[id(ctx)]
        if any(x is not None for x in entry[1]) and \
                (needed is None or any(id(p) in needed for p in ctx.inputs)):
            changed = _changed_input(ctx)
            if changed is not None:
                raise RuntimeError(_modified_in_place(ctx, i=changed))
            _propagate(ctx, tuple(entry[1]), grads, create_graph)
        if not retain_graph:
            ctx.release()


def _into_grad(t, g, owned=False):
    """Add gradient g into t.grad (a leaf's, or one kept by retain_grad)."""
    from minigrad.ops.shape import clone
    from minigrad.tensor import Tensor
    if t.grad is None and not owned:
        # store a writable array of our own, never a (read-only) broadcast view nor an array
        # shared with another tensor's .grad or the caller's gradient (Add hands the same g
        # to both inputs); with create_graph=True (grad mode on) a differentiable copy, so
        # the stored gradient can itself be differentiated. `owned`: the engine made g and
        # holds it alone
        g = clone(g) if is_grad_enabled() else Tensor._make(g._data.copy(), g.device)
    if g.dtype != t.dtype:
        g = g.to(dtype=t.dtype)
    old = t.grad
    if old is not None and not is_grad_enabled() and not old.requires_grad and \
            old.shape == g.shape and not backend.shares_elements(old._data) and \
            getattr(old._data.flags, "writeable", True):
        old._data += g._data             # in place, as PyTorch: a held `p.grad` sees the sum
        old._version_counter[0] += 1
    else:
        t._grad = g if old is None else old + g     # (fits t: cast above; not re-checked)


def _on_a_path_to(order, wanted):
    """ids of the tensors that mg.grad's inputs are, or lie below (order: inputs first). Only
    their gradients are computed, so hooks and retain_grad elsewhere stay quiet (as
    PyTorch), and no time goes to branches that lead to no input."""
    on = set()
    for t in order:
        ctx = t._ctx
        if id(t) in wanted or (ctx is not None and ctx.inputs is not None and
                               any(id(p) in on for p in ctx.inputs)):
            on.add(id(t))
    return on


def _propagate(ctx, g, grads, create_graph):
    """Pass g, the gradient of op ctx's output, on to ctx's inputs, adding into `grads`.
    Three ways, fastest first: an indexing op adds g straight into its input's gradient
    (`scatter_backward`); a fused op computes on raw arrays (`backward_arrays`); any other
    op, and every op under create_graph, runs its Tensor-level `backward`."""
    from minigrad.ops.reduce import sum_to
    from minigrad.tensor import Tensor
    if not create_graph:
        scatter = getattr(ctx, "scatter_backward", None)
        if scatter is not None:
            p = ctx.inputs[0]
            if p.requires_grad:
                scatter(_owned_buffer(grads, p), g.data.astype(p.dtype, copy=False))
            return
        fast = getattr(ctx, "backward_arrays", None)
    else:
        fast = None
    owned = ctx.fresh_grads and not create_graph
    if fast is not None:
        # (a node with several outputs gets a tuple of gradients, None for one that got
        # none; 0-d arithmetic in NumPy gives scalars: arrays again, as apply's outputs)
        arrays = tuple(None if x is None else x._data for x in g) if isinstance(g, tuple) \
            else g._data
        in_grads = tuple(None if a is None else Tensor._make(
            a if isinstance(a, ctx.xp.ndarray) else ctx.xp.asarray(a), ctx.device)
            for a in fast(arrays))
    else:
        in_grads = ctx.backward(g)
        if not isinstance(in_grads, tuple):
            in_grads = (in_grads,)
    for p, gp in zip(ctx.inputs, in_grads):
        if gp is None or not p.requires_grad:
            continue
        if gp.shape != p.shape:  # broadcasting in forward: sum back, once, here
            gp = sum_to(gp, p.shape)
        if gp.dtype != p.dtype:  # a gradient has its tensor's dtype (no silent upcast)
            gp = gp.to(dtype=p.dtype)
        _accumulate(grads, p, gp, create_graph, owned)   # (a view of an owned array is ours)


def _accumulate(grads, p, gp, create_graph, owned=False):
    """Add gradient gp (shaped like p) to what p has gathered so far. `owned`: gp is an
    array only the engine holds (see Function.fresh_grads)."""
    entry = grads.get(id(p))
    if entry is None:
        # unless the op says otherwise, it may be an array another gradient shares
        grads[id(p)] = [gp, owned]
    elif entry[1] and not create_graph:
        entry[0]._data += gp._data     # our own array: add in place
    elif create_graph:
        grads[id(p)] = [entry[0] + gp, False]   # a differentiable sum
    else:                                       # a new array, ours: raw arrays, no op node
        from minigrad.tensor import Tensor
        xp = p.backend.xp
        total = xp.add(entry[0]._data, gp._data)
        grads[id(p)] = [Tensor._make(total if isinstance(total, xp.ndarray) else
                                     xp.asarray(total), p.device), True]


def _owned_buffer(grads, p):
    """p's gradient so far as an array the engine owns (zeros if none yet), for in-place adds."""
    from minigrad.tensor import Tensor
    entry = grads.get(id(p))
    if entry is not None and entry[1]:
        return entry[0]._data
    xp = p.backend.xp
    buf = xp.zeros(p.shape, dtype=p.dtype) if entry is None else entry[0]._data.copy()
    grads[id(p)] = [Tensor._make(buf, p.device), True]
    return buf


def grad(outputs, inputs, grad_outputs=None, retain_graph=None, create_graph=False,
         allow_unused=False):
    """Gradients of `outputs` with respect to `inputs`, returned (like torch.autograd.grad).
    With `create_graph=True` the result is itself differentiable (second derivatives)."""
    from minigrad.tensor import Tensor
    single = isinstance(inputs, Tensor)
    outputs = [outputs] if isinstance(outputs, Tensor) else list(outputs)
    inputs = [inputs] if single else list(inputs)
    for t in inputs:
        if not t.requires_grad:
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
    return tuple(found) if create_graph else _each_its_own(found)


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
