"""Activation checkpointing, as torch.utils.checkpoint: `checkpoint(fn, *args)` gives what
fn(*args) gives, but keeps none of the activations inside fn for backward: backward runs fn
again and differentiates that. Memory for compute: a model whose blocks are each
checkpointed holds one activation per block (its input) instead of all of a block's.

    h = checkpoint(block, h, use_reentrant=False)          # instead of h = block(h)
    out = checkpoint_sequential(model.blocks, 2, x)        # a Sequential in 2 segments

How. The forward records fn's graph as usual, with every node it makes marked
(`Function.segment`). Walking that graph from fn's outputs, the first tensors that are not
marked are the segment's boundary: fn's arguments, the parameters it used, and any
activation it read from outside (a closure's, as cross-attention's memory). One node then
stands for the whole segment: its inputs are the boundary, its outputs fn's outputs, and
the marked graph, with all it saved, is dropped. Its backward runs fn again in grad mode,
with the random state of the forward put back (a dropout draws the same mask), and
backpropagates through that new graph down to the boundary only (run_backward's `stop`):
what lies below the boundary is the outer backward's, which goes on from the gradients the
node hands it. So parameters, arguments and captured activations all get exactly the
gradient they would get without checkpointing, their hooks run once, and with
create_graph=True the gradients can be differentiated again.

An output that is a view (`a[0]`, `h.T`, a reshape) keeps its own view nodes, and the
node's output is the tensor it views (none, where fn did not make that one): writing the
view, or what it views, in place later then works as without checkpointing. A tensor fn
calls retain_grad() on gets its gradient, as PyTorch's; hooks registered inside fn run on
the recomputed tensors, once.

fn must read the same tensors each time it runs. It may not change in place a tensor it did
not make (its arguments, keyword ones too, are checked), nor may one it reads be changed in
place between the forward and the backward (PyTorch refuses that only where an op saved
the tensor); as with PyTorch's, state it changes (a BatchNorm's running statistics) changes
again when it runs in backward.
"""
import copy
import threading
import weakref

from minigrad import backend
from minigrad.autograd import Function, record_outputs
from minigrad.backward import _into_grad, run_backward
from minigrad.grad_mode import (_GradMode, _state, autocast_set, get_marks,
                                 is_grad_enabled, set_marks)
from minigrad.tensor import Tensor


def checkpoint(function, *args, use_reentrant=None, preserve_rng_state=True,
               determinism_check="default", **kwargs):
    """function(*args, **kwargs), its intermediate activations recomputed in backward
    instead of kept. `use_reentrant` is accepted for PyTorch's signature: either value
    gives what PyTorch's non-reentrant checkpoint gives (gradients for every tensor the
    function reads, double backward). `determinism_check="none"` skips the check that the
    recomputed outputs have the forward's shapes and dtypes."""
    if not callable(function):
        raise TypeError(f"checkpoint: the first argument must be the function to run, got "
                        f"{type(function).__name__}")
    if determinism_check not in ("default", "none"):
        raise ValueError(f"checkpoint: determinism_check must be 'default' or 'none', got "
                         f"{determinism_check!r}")
    if not is_grad_enabled():              # nothing is kept for backward anyway
        return function(*args, **kwargs)
    rng = _rng_states() if preserve_rng_state else None
    # (keyword arguments too: a mask passed as mask=m, changed, would change the gradient)
    held = [(k, a, a._version_counter[0]) for k, a in [*enumerate(args), *kwargs.items()]
            if isinstance(a, Tensor)]
    token = _Token()
    out = _run_marked(token, function, args, kwargs)
    for k, a, v in held:
        if a._version_counter[0] != v:     # running it again would change it again
            raise RuntimeError(
                f"checkpoint: the function changed its Tensor argument {k!r} (shape "
                f"{a.shape}) in place; backward would run it on the changed values. Change "
                f"a clone() inside the function instead")
    outputs, positions, views = [], [], []
    for k, t in enumerate(_tensors(out)):
        # a view (slice, reshape, transpose...) keeps its view nodes, as without
        # checkpointing, so that it and what it views can be written in place later
        # (autograd follows a write through them); the node's output is what it views,
        # unless fn did not make that. A tensor returned twice is one output
        if not _marked(t, token):
            continue
        r, chain = _viewed(t, token)
        views += chain
        if _marked(r, token) and not any(r is o for o in outputs):
            outputs.append(r)
            positions.append(k)
    walked = []
    boundary = _boundary(outputs, token, walked)    # (through those view nodes too)
    for ctx in views:                      # kept: marked as the code around fn
        ctx.segment = get_marks("segment")  # (an enclosing checkpoint's, if any)
    if not outputs:                        # nothing else fn made needs a gradient
        return out
    node = CheckpointBackward()
    node.function, node.args, node.kwargs, node.rng = function, args, kwargs, rng
    node.autocast = _state.autocast        # recomputed in the forward's precision
    node.check = determinism_check == "default"
    node.positions = positions
    node.shapes = [(t.shape, t.dtype) for t in outputs]
    # the tensors fn reads: one written in place later is no longer the node's input
    node.read = [weakref.ref(t) for t in boundary]
    # retain_grad() inside fn: that tensor (by its place in the walk) gets the gradient
    # its recomputed twin gets, as PyTorch's, whose backward goes through the forward's
    node.retained = [(k, weakref.ref(t)) for k, t in enumerate(walked) if t._retains_grad]
    # the marked graph goes when fn's outputs become the one node's
    record_outputs(node, boundary, outputs)
    return out


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run `functions` (a Sequential, or a list of modules or functions) one after another
    on `input`, in `segments` pieces, as PyTorch's: segments - 1 checkpointed pieces of
    len(functions) // segments functions each, then the rest, not checkpointed (backward
    reaches it first and needs its activations at once)."""
    functions = list(functions.children()) if hasattr(functions, "children") \
        else list(functions)
    if not isinstance(segments, int) or isinstance(segments, bool) or \
            not 1 <= segments <= max(len(functions), 1):
        raise ValueError(f"checkpoint_sequential: segments must be an int from 1 to the "
                         f"number of functions ({len(functions)}), got {segments!r}")
    size = len(functions) // segments

    def run(piece):
        def forward(x):
            for f in piece:
                x = f(x)
            return x
        return forward

    for k in range(segments - 1):
        input = checkpoint(run(functions[k * size:(k + 1) * size]), input,
                           use_reentrant=use_reentrant, **kwargs)
    return run(functions[(segments - 1) * size:])(input)


class _Token:
    """What marks the nodes one run of a checkpointed function records."""


def _run_marked(token, function, args, kwargs):
    """function(*args, **kwargs) with grad mode on, every node it records marked `token`."""
    outer = get_marks("segment")
    set_marks(segment=token)
    try:
        with _GradMode(True):
            return function(*args, **kwargs)
    finally:
        set_marks(segment=outer)


def _marked(t, token):
    return t._ctx is not None and t._ctx.segment is token


def _viewed(t, token):
    """(r, nodes): the tensor that t views through view nodes (slices, reshapes,
    transposes...) that the run marked `token` made, and those nodes; (t, []) where t is
    no such view."""
    chain = []
    while _marked(t, token):
        ctx = t._ctx
        base = None if ctx.output_ids is not None else next(
            (p for p in ctx.inputs if p._version_counter is t._version_counter), None)
        if base is None:                   # not a view node's output
            break
        chain.append(ctx)
        t = base
    return t, chain


def _tensors(out):
    """The Tensors in fn's result: itself, or in tuples, lists and dicts, in order."""
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in _tensors(o)]
    return []


def _boundary(outputs, token, walked=None):
    """The tensors needing a gradient that the marked graph below `outputs` reads but did not
    make, in a fixed order (the order of the walk); the marked ones it passed are appended
    to `walked`, in that order."""
    found, seen, stack = [], set(), list(reversed(outputs))
    while stack:
        t = stack.pop()
        if id(t) in seen or not t.requires_grad:
            continue
        seen.add(id(t))
        if _marked(t, token):
            if walked is not None:
                walked.append(t)
            stack.extend(reversed(t._ctx.inputs))
        else:
            found.append(t)
    return found


def _rng_states():
    """A copy of every device generator built so far, to draw the forward's numbers again."""
    built = {id(b): b for b in backend._BACKENDS.values()}.values()
    return [(b, _copy_rng(b.rng)) for b in built]


_LOCKS = {type(threading.Lock()): threading.Lock, type(threading.RLock()): threading.RLock}


def _copy_rng(rng):
    """A copy of generator rng, which draws what rng would. Locks in it get new ones: a
    CuPy generator's bit generator holds one, which copy.deepcopy refuses."""
    memo, todo, seen = {}, [rng], set()
    while todo:
        obj = todo.pop()
        if id(obj) not in seen:
            seen.add(id(obj))
            for v in getattr(obj, "__dict__", {}).values():
                if type(v) in _LOCKS:
                    memo[id(v)] = _LOCKS[type(v)]()
                elif hasattr(v, "__dict__"):
                    todo.append(v)
    return copy.deepcopy(rng, memo)


class CheckpointBackward(Function):
    """The node of one checkpointed call: its inputs the segment's boundary, its outputs the
    function's outputs; backward runs the function again and differentiates that."""

    def name(self):
        return "CheckpointFunctionBackward"        # as PyTorch's (reentrant) checkpoint node

    def backward(self, grads):
        create_graph = is_grad_enabled()      # (True under backward(create_graph=True))
        for ref, was in zip(self.read, self.inputs):
            # a recorded in-place write gives the tensor a new history and leaves the old
            # one, our input, behind (ops/inplace_autograd.py): fn would read the new values
            now = ref()
            if now is not None and now is not was:
                raise RuntimeError(
                    f"checkpoint: a tensor the function reads (shape {now.shape}) was "
                    f"changed in place after the forward; backward, which runs the function "
                    f"again, would read the new values. Change it after the backward, or "
                    f"change a clone()")
        token = _Token()
        held = []
        if self.rng is not None:              # the forward's draws again; ours come back
            held = [(b, b.rng) for b, _ in self.rng]
            for b, state in self.rng:
                b.rng = _copy_rng(state)
        try:
            with autocast_set(self.autocast):
                out = _run_marked(token, self.function, self.args, self.kwargs)
        finally:
            for b, rng in held:
                b.rng = rng
        again = _tensors(out)
        again = [_viewed(again[p], token)[0] if p < len(again) else None
                 for p in self.positions]
        roots, root_grads = [], []
        for k, (pos, g, t) in enumerate(zip(self.positions, grads, again)):
            if self.check and (t is None or (t.shape, t.dtype) != self.shapes[k]):
                raise RuntimeError(_changed(f"its output {pos}", self.shapes[k], t))
            if g is not None and t is not None and t.requires_grad:
                roots.append(t)
                root_grads.append(g)
        if not roots:
            return (None,) * len(self.inputs)
        known = {id(t) for t in self.inputs}
        for t in _boundary(roots, token):
            if id(t) not in known:
                raise RuntimeError(_changed("a tensor it reads", None, t))
        twins = self._twins(again, token)
        found = run_backward(roots, root_grads, retain_graph=create_graph,
                             create_graph=create_graph, inputs=self.inputs, stop=True)
        for was, now in twins:
            if now.grad is not None:
                _into_grad(was, now.grad)
        return tuple(found)

    def _twins(self, again, token):
        """(forward tensor, its recomputed twin) for each tensor retain_grad() was called on
        inside the function (alive still, and of the same shape), the twin told to retain
        its gradient."""
        if not self.retained:
            return []
        walked = []
        _boundary([t for t in again if t is not None], token, walked)
        twins = []
        for k, ref in self.retained:
            was = ref()
            if was is not None and k < len(walked) and walked[k].shape == was.shape:
                walked[k].retain_grad()
                twins.append((was, walked[k]))
        return twins


def _changed(what, was, now):
    """The error for a checkpointed function that, run again in backward, differs."""
    if was is None:
        detail = (f"it reached a tensor requiring grad (shape {now.shape}) that it did not "
                  f"reach in the forward: a tensor made anew as a leaf, or changed in "
                  f"place, inside the function")
    else:
        got = "nothing" if now is None else f"{now.shape} {now.dtype}"
        detail = f"{what} was {was[0]} {was[1]} in the forward, {got} now"
    return (f"checkpoint: the function, run again in backward, did not do what it did in the "
            f"forward: {detail}. A checkpointed function must read the same tensors and "
            f"make the same outputs each time (pass determinism_check='none' to skip the "
            f"shape check)")
