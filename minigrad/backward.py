"""The backward pass: `run_backward` takes the graph that `Function.apply` recorded
(autograd.py) in topological order, outputs first, and hands each op's gradient to its
`backward` (or the fast `backward_arrays` on raw arrays), summing what reaches each
tensor; nodes with several outputs (unbind, the LSTM cell) get all their outputs'
gradients at once. Before an op's backward runs, the inputs it reads are checked
for in-place changes since the forward (its output is checked when read: Function.output);
in anomaly mode (anomaly.py) what it returns is checked for NaN too.
"""
from minigrad import backend, profiler
from minigrad.anomaly import checks as _anomaly_checks, node_name
from minigrad.autograd_graph import frame as _graph_frame
from minigrad.autograd_node import LEAF_PREHOOKS as _LEAF_PREHOOKS, run_leaf_prehooks
from minigrad.grad_hooks import run_hooks as _run_hooks
from minigrad.grad_hooks import _POST_ACCUMULATE, run_post_accumulate_hooks
from minigrad.grad_mode import _GradMode, autocast_set, is_grad_enabled


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


def _topological_order(roots, stop=None):
    """Tensors that need a gradient, inputs before outputs. Iterative (explicit stack), so a
    10,000-op chain is fine, and linear in the size of the graph. The graph below a tensor
    whose id is in `stop` is not entered."""
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
        if ctx is not None and not (stop and id(t) in stop):
            if ctx.inputs is None:
                raise RuntimeError(_FREED)
            for p in ctx.inputs:
                if p.requires_grad and id(p) not in seen:
                    stack.append((p, False))
    return order


def run_backward(roots, root_grads, retain_graph=False, create_graph=False, inputs=None,
                 stop=False):
    """Propagate `root_grads` from `roots` down the graph.

    With `inputs=None` gradients accumulate into the `.grad` of every leaf (as
    `Tensor.backward`); otherwise they are returned, one per tensor of `inputs` (as `mg.grad`),
    and no `.grad` is touched. `stop=True` makes `inputs` a boundary: nothing below them is
    entered, and their own hooks do not run (a checkpointed segment's backward, whose
    boundary tensors the outer backward then handles as usual: utils/checkpoint.py)."""
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
    boundary = wanted if stop else None
    order = _topological_order(roots, boundary)
    needed = None if wanted is None else _on_a_path_to(order, wanted)
    gathering = _nodes_with_several_outputs(order, boundary)
    anomaly = _anomaly_checks()
    # backward ops run in the dtypes their forward gave them, never autocast again (as
    # torch's); a checkpointed segment recomputes under its forward's setting
    # (utils/checkpoint.py)
    # (_graph_frame: the pass as multi-grad hooks see it, autograd_graph.py; a no-op without)
    with _GradMode(create_graph), autocast_set(None), _graph_frame(order, needed):
        while order:
            t = order.pop()   # popped, not iterated: a tensor whose turn is over can be freed
            entry = grads.pop(id(t), None)
            if boundary and id(t) in boundary:
                if entry is not None:
                    for i in boundary[id(t)]:
                        found[i] = entry[0]
                continue
            ctx = t._ctx
            if entry is None or (needed is not None and id(t) not in needed):
                if gathering and ctx is not None and ctx.output_ids is not None:
                    _gather(gathering, ctx, t, None, grads, create_graph, retain_graph,
                            needed, anomaly)
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
                _gather(gathering, ctx, t, g, grads, create_graph, retain_graph, needed,
                        anomaly)
                continue
            if ctx is None:
                if wanted is None:   # an array only we hold becomes .grad as it is
                    if _LEAF_PREHOOKS and id(t) in _LEAF_PREHOOKS:   # its AccumulateGrad's
                        g, owned = run_leaf_prehooks(t, g), False
                        if g is None:
                            continue
                    _into_grad(t, g, owned=owned)
                    if _POST_ACCUMULATE and id(t) in _POST_ACCUMULATE:
                        run_post_accumulate_hooks(t)
                continue
            if needed is not None and not any(id(p) in needed for p in ctx.inputs):
                continue                               # nothing below t was asked for
            _run_node(ctx, g, grads, create_graph, anomaly, needed)
            if not retain_graph:
                ctx.release()
    return found


def _nodes_with_several_outputs(order, boundary=None):
    """id(node) -> [outputs of it still to come in `order`, their gradients so far], for the
    nodes that have several outputs (Function.output_ids); empty for an ordinary graph.
    (Not the nodes of `boundary` tensors: those are not entered.)"""
    gathering = {}
    for t in order:
        ctx = t._ctx
        if ctx is not None and ctx.output_ids is not None and \
                not (boundary and id(t) in boundary):
            entry = gathering.setdefault(id(ctx), [0, [None] * len(ctx.output_ids)])
            entry[0] += 1
    return gathering


def _gather(gathering, ctx, t, g, grads, create_graph, retain_graph, needed, anomaly=None):
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
            _run_node(ctx, tuple(entry[1]), grads, create_graph, anomaly, needed)
        if not retain_graph:
            ctx.release()


def _into_grad(t, g, owned=False):
    """Add gradient g into t.grad (a leaf's, or one kept by retain_grad)."""
    from minigrad.memory_format import leaf_grad
    from minigrad.ops.shape import clone
    from minigrad.tensor import Tensor
    if t.grad is None and t._ctx is None:     # a leaf's: laid out as the leaf (as torch)
        g = leaf_grad(g, t, copy=not owned)
    elif t.grad is None and not owned:
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
            old._data.shape == g._data.shape and not backend.shares_elements(old._data) and \
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


def _run_node(ctx, g, grads, create_graph, anomaly=None, needed=None):
    """Run op ctx's backward on g (its output's gradient), refused if an input it reads was
    changed in place since (the output: checked by output()). `anomaly`: anomaly mode's
    checks (anomaly.Checks), which also name ctx, with its forward stack, on an error;
    `needed`: run_backward's (for node hooks)."""
    try:
        changed = _changed_input(ctx)
        if changed is not None:
            raise RuntimeError(_modified_in_place(ctx, i=changed))
        if profiler.active is None:
            _propagate(ctx, g, grads, create_graph, anomaly, needed)
        else:                                   # timed as one event (profiler.py)
            profiler.active.run(node_name(ctx), "backward", ctx.device, g, _propagate,
                                ctx, g, grads, create_graph, anomaly, needed)
    except Exception as e:
        if anomaly is not None:
            anomaly.blame(ctx, e)
        if isinstance(e, MemoryError):      # CuPy's: as torch.cuda.OutOfMemoryError
            from minigrad.cuda_memory import raise_if_out_of_memory
            raise_if_out_of_memory(e)
        raise


def _propagate(ctx, g, grads, create_graph, anomaly=None, needed=None, into=None):
    """Pass g, the gradient of op ctx's output, on to ctx's inputs, adding into `grads`.
    Three ways, fastest first: an indexing op adds g straight into its input's gradient
    (`scatter_backward`); a fused op computes on raw arrays (`backward_arrays`); any other
    op, and every op under create_graph, runs its Tensor-level `backward`. A node with
    hooks of its own goes through them (autograd_node.py; `needed`: run_backward's, which
    inputs lead to what mg.grad asked for); they get the gradients from here first, put
    in `into`, a place per input, instead of added into `grads` (_input_grads)."""
    from minigrad.ops.reduce import sum_to
    from minigrad.tensor import Tensor
    if ctx._node_hooks is not None and into is None:   # (one read for a node without)
        from minigrad.autograd_node import propagate_hooked
        return propagate_hooked(ctx, g, grads, create_graph, anomaly, needed)
    if not create_graph:
        scatter = getattr(ctx, "scatter_backward", None)
        if scatter is not None and into is None:
            p = ctx.inputs[0]
            if p.requires_grad:
                buffer = _owned_buffer(grads, p)
                gd = g._data.astype(p.dtype, copy=False)
                if anomaly is None:
                    scatter(buffer, gd)
                else:   # its own part alone: what others added there (∞ - ∞) is not its NaN
                    part = ctx.xp.zeros_like(buffer)
                    scatter(part, gd)
                    anomaly.check(ctx, (Tensor._make(part, p.device),))
                    buffer += part
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
    if anomaly is not None:
        anomaly.check(ctx, [gp if p.requires_grad else None
                            for p, gp in zip(ctx.inputs, in_grads)])
    for k, (p, gp) in enumerate(zip(ctx.inputs, in_grads)):
        if gp is None or not p.requires_grad:
            continue
        if gp._data.shape != p._data.shape:  # broadcasting in forward: sum back, once, here
            gp = sum_to(gp, p.shape)
        if gp.dtype != p.dtype:  # a gradient has its tensor's dtype (no silent upcast)
            gp = gp.to(dtype=p.dtype)
        if into is None:
            _accumulate(grads, p, gp, create_graph, owned)   # (a view of an owned array is ours)
        else:
            into[k] = gp


def _input_grads(ctx, g, create_graph, anomaly=None):
    """op ctx's backward on g, as _propagate computes it, for node hooks: a gradient per
    input, shaped and typed as that input, None for one that wants none (or that backward
    gave none). The ordinary route (no hooks) pays nothing for it."""
    into = [None] * len(ctx.inputs)
    _propagate(ctx, g, None, create_graph, anomaly, into=into)
    return tuple(into)


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
