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

fn must read the same tensors each time it runs. It may not change in place a tensor it did
not make (its arguments are checked), and, as with PyTorch's, state it changes (a
BatchNorm's running statistics) changes again when it runs in backward.
"""
import copy

from minigrad import backend
from minigrad.autograd import Function, record_outputs
from minigrad.backward import run_backward
from minigrad.grad_mode import _GradMode, _state, is_grad_enabled
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
    held = [(a, a._version_counter[0]) for a in args if isinstance(a, Tensor)]
    token = _Token()
    out = _run_marked(token, function, args, kwargs)
    for k, (a, v) in enumerate(held):
        if a._version_counter[0] != v:     # running it again would change it again
            raise RuntimeError(
                f"checkpoint: the function changed its Tensor argument {k} (shape "
                f"{a.shape}) in place; backward would run it on the changed values. Change "
                f"a clone() inside the function instead")
    outputs = [t for t in _tensors(out) if _marked(t, token)]
    if not outputs:                        # nothing fn made needs a gradient
        return out
    node = CheckpointBackward()
    node.function, node.args, node.kwargs, node.rng = function, args, kwargs, rng
    node.check = determinism_check == "default"
    node.positions = [k for k, t in enumerate(_tensors(out)) if _marked(t, token)]
    node.shapes = [(t.shape, t.dtype) for t in outputs]
    # the marked graph goes when fn's outputs become the one node's
    record_outputs(node, _boundary(outputs, token), outputs)
    return out


def checkpoint_sequential(functions, segments, input, use_reentrant=None, **kwargs):
    """Run `functions` (a Sequential, or a list of modules or functions) one after another
    on `input`, in `segments` checkpointed pieces of about equal length; the last piece is
    not checkpointed (backward reaches it first and needs its activations at once)."""
    functions = list(functions.children()) if hasattr(functions, "children") \
        else list(functions)
    if not isinstance(segments, int) or isinstance(segments, bool) or \
            not 1 <= segments <= max(len(functions), 1):
        raise ValueError(f"checkpoint_sequential: segments must be an int from 1 to the "
                         f"number of functions ({len(functions)}), got {segments!r}")
    size = -(-len(functions) // segments)

    def run(piece):
        def forward(x):
            for f in piece:
                x = f(x)
            return x
        return forward

    pieces = [functions[i:i + size] for i in range(0, len(functions), size)]
    for piece in pieces[:-1]:
        input = checkpoint(run(piece), input, use_reentrant=use_reentrant, **kwargs)
    return run(pieces[-1] if pieces else [])(input)


class _Token:
    """What marks the nodes one run of a checkpointed function records."""


def _run_marked(token, function, args, kwargs):
    """function(*args, **kwargs) with grad mode on, every node it records marked `token`."""
    outer, _state.segment = _state.segment, token
    try:
        with _GradMode(True):
            return function(*args, **kwargs)
    finally:
        _state.segment = outer


def _marked(t, token):
    return t._ctx is not None and t._ctx.segment is token


def _tensors(out):
    """The Tensors in fn's result: itself, or in tuples, lists and dicts, in order."""
    if isinstance(out, Tensor):
        return [out]
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _tensors(o)]
    if isinstance(out, dict):
        return [t for o in out.values() for t in _tensors(o)]
    return []


def _boundary(outputs, token):
    """The tensors needing a gradient that the marked graph below `outputs` reads but did not
    make, in a fixed order (the order of the walk)."""
    found, seen, stack = [], set(), list(reversed(outputs))
    while stack:
        t = stack.pop()
        if id(t) in seen or not t.requires_grad:
            continue
        seen.add(id(t))
        if _marked(t, token):
            stack.extend(reversed(t._ctx.inputs))
        else:
            found.append(t)
    return found


def _rng_states():
    """A copy of every device generator built so far, to draw the forward's numbers again."""
    built = {id(b): b for b in backend._BACKENDS.values()}.values()
    return [(b, copy.deepcopy(b.rng)) for b in built]


class CheckpointBackward(Function):
    """The node of one checkpointed call: its inputs the segment's boundary, its outputs the
    function's outputs; backward runs the function again and differentiates that."""

    def backward(self, grads):
        create_graph = is_grad_enabled()      # (True under backward(create_graph=True))
        token = _Token()
        held = []
        if self.rng is not None:              # the forward's draws again; ours come back
            held = [(b, b.rng) for b, _ in self.rng]
            for b, state in self.rng:
                b.rng = copy.deepcopy(state)
        try:
            out = _run_marked(token, self.function, self.args, self.kwargs)
        finally:
            for b, rng in held:
                b.rng = rng
        again = _tensors(out)
        roots, root_grads = [], []
        for k, (pos, g) in enumerate(zip(self.positions, grads)):
            t = again[pos] if pos < len(again) else None
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
        return tuple(run_backward(roots, root_grads, retain_graph=create_graph,
                                  create_graph=create_graph, inputs=self.inputs, stop=True))


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
