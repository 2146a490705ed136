"""A recorded op seen as a node of the graph, as PyTorch's grad_fn: `name()`,
`next_functions` (the edges to the nodes of its inputs, ending at an `AccumulateGrad` for
each leaf that wants a gradient), `metadata`, and node hooks. These are what the
PyTorch tutorials use to walk the graph by hand:

    loss.grad_fn.name()                           # 'CrossEntropyBackward0'
    loss.grad_fn.next_functions[0][0]             # the node of the op before it

The names are minigrad's ops' own, spelled as PyTorch's ('MulBackward0'); where the ops
differ the names do (F.cross_entropy is one op here, NllLossBackward0 after a log_softmax
in PyTorch; F.mse_loss ends in a MulBackward0, PyTorch's is one MseLossBackward0).

A node's pre-hook sees the gradients of its outputs before its backward runs, hook(
grad_outputs), and a post-hook sees what the backward made of them, hook(grad_inputs,
grad_outputs), a gradient per input (None for one that wants none) shaped like that
input. Either may return a tuple that replaces what it saw (a Tensor of the same shape,
dtype and device where it saw one, or None; never a Tensor where it saw None), as
PyTorch's. `propagate_hooked` is the backward pass's route through a node that has hooks
(backward.py sends it here); a node without any pays one attribute read.
"""
import weakref

from minigrad.grad_hooks import HookHandle

# node -> its `metadata` dict: not in the node's __dict__, which release() clears after a
# backward (PyTorch's node keeps its metadata); dropped with the node
_METADATA = weakref.WeakKeyDictionary()

# id(leaf) -> its AccumulateGrad, made when first asked for (next_functions), dropped with
# the leaf (not a WeakKeyDictionary: a Tensor's == is elementwise)
_ACCUMULATORS = {}

# id(leaf) -> {handle id: hook}: the pre-hooks of a leaf's AccumulateGrad, kept here, as
# grad_hooks' post-accumulate ones (a Tensor's __slots__ are fixed), dropped with the leaf
LEAF_PREHOOKS = {}


class NodeAPI:
    """What every `autograd.Function` (every recorded op) offers as a node of the graph."""

    # None, or [pre-hooks, post-hooks] ({handle id: hook} each) once one is registered;
    # release() (after backward) drops them with the rest of the node
    _node_hooks = None

    def name(self):
        """The op's name as PyTorch's nodes spell theirs: 'MulBackward0' for Mul."""
        return f"{type(self).__name__}Backward0"

    @property
    def next_functions(self):
        """One (node, output index) pair per input: the input's grad_fn, an AccumulateGrad
        for a leaf that requires grad, or (None, 0) for an input that wants no gradient.
        Empty once a backward has freed this node."""
        if self.inputs is None:
            return ()
        return tuple(_edge(p) for p in self.inputs)

    @property
    def metadata(self):
        """A dict of the caller's own, kept on the node (PyTorch's Node.metadata)."""
        d = _METADATA.get(self)
        if d is None:
            d = _METADATA[self] = {}
        return d

    def register_prehook(self, hook):
        """hook(grad_outputs) -> None or a replacement tuple, before this node's backward."""
        return HookHandle(self._hook_dicts("register_prehook", hook)[0], hook)

    def register_hook(self, hook):
        """hook(grad_inputs, grad_outputs) -> None or a replacement for grad_inputs, after
        this node's backward."""
        return HookHandle(self._hook_dicts("register_hook", hook)[1], hook)

    def _hook_dicts(self, method, hook):
        if not callable(hook):
            raise TypeError(f"{self.name()}.{method}: expected a function, got "
                            f"{type(hook).__name__}")
        if self.inputs is None:
            raise RuntimeError(f"{self.name()}.{method}: this node's graph was freed by a "
                               f"backward (pass retain_graph=True to keep it)")
        if self._node_hooks is None:
            self._node_hooks = [{}, {}]
        return self._node_hooks

    def __repr__(self):
        return f"<{self.name()} object at {id(self):#x}>"


class AccumulateGrad:
    """Where an edge of the graph ends: the node of a leaf that requires grad (`variable`),
    which adds what reaches it into the leaf's .grad. One per leaf while the leaf lives, as
    PyTorch's, so a walk over next_functions meets a leaf used twice as one node."""
    __slots__ = ("_variable", "metadata", "__weakref__")
    next_functions = ()

    def __init__(self, variable):
        # weakly: the leaf's finalizer drops this node, so it must not keep the leaf alive
        self._variable, self.metadata = weakref.ref(variable), {}

    @property
    def variable(self):
        return self._variable()

    def name(self):
        return "torch::autograd::AccumulateGrad"      # PyTorch's own spelling

    def register_prehook(self, hook):
        """hook(grad_outputs), the one-gradient tuple in and out, before the leaf's gradient
        is added into its .grad, as PyTorch's: after the leaf's own hooks (register_hook),
        and not for mg.grad, which accumulates nothing."""
        if not callable(hook):
            raise TypeError(f"AccumulateGrad.register_prehook: expected a function, got "
                            f"{type(hook).__name__}")
        t = self._variable()
        hooks = LEAF_PREHOOKS.get(id(t))
        if hooks is None:
            hooks = LEAF_PREHOOKS[id(t)] = {}
            weakref.finalize(t, LEAF_PREHOOKS.pop, id(t), None)
        return HookHandle(hooks, hook)

    def register_hook(self, hook):
        raise NotImplementedError(
            "AccumulateGrad.register_hook: hooks after a leaf's accumulation are "
            "tensor.register_post_accumulate_grad_hook(hook) here (hook(tensor), its .grad "
            "already summed), as PyTorch recommends too")

    def __repr__(self):
        return f"<AccumulateGrad object at {id(self):#x}>"


def run_leaf_prehooks(t, g):
    """Leaf t's AccumulateGrad pre-hooks on g (backward.py, autograd.backward), in the order
    they were added; None if one took the gradient away (nothing is accumulated then)."""
    for hook in list(LEAF_PREHOOKS[id(t)].values()):
        new = hook((g,))
        if new is not None:
            g = _replacement(new, (g,), "AccumulateGrad", "pre-hook")[0]
    return g


def _edge(p):
    if not p.requires_grad:
        return (None, 0)
    node = p._ctx
    if node is None:
        acc = _ACCUMULATORS.get(id(p))
        if acc is None:
            acc = _ACCUMULATORS[id(p)] = AccumulateGrad(p)
            weakref.finalize(p, _ACCUMULATORS.pop, id(p), None)
        return (acc, 0)
    return (node, node.output_ids[id(p)] if node.output_ids else 0)


def _replacement(new, old, node, kind):
    """A hook's returned tuple, checked against what it replaces: as many entries, each
    None or a Tensor of its shape, dtype and device; None where that was None."""
    from minigrad.tensor import Tensor
    new = tuple(new) if isinstance(new, (tuple, list)) else new
    if not isinstance(new, tuple) or len(new) != len(old):
        raise TypeError(f"{node} {kind} returned {type(new).__name__}"
                        f"{'' if not isinstance(new, tuple) else f' of {len(new)}'}; return "
                        f"None or a tuple of {len(old)} gradients (Tensor or None each)")
    for k, (a, b) in enumerate(zip(new, old)):
        if a is None:
            continue
        if not isinstance(a, Tensor):
            raise TypeError(f"{node} {kind} returned a {type(a).__name__} at position {k}; "
                            f"each entry is a Tensor or None")
        if b is None:       # nothing would take it (an input that wants no gradient)
            raise RuntimeError(f"{node} {kind} returned a Tensor at position {k}, where it "
                               f"was given None; it can't replace a None gradient with a "
                               f"non-None value (return None there)")
        if a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
            raise RuntimeError(f"{node} {kind} changed gradient {k} from shape {b.shape}, "
                               f"{b.dtype} on {b.device} to shape {a.shape}, {a.dtype} on "
                               f"{a.device}; a replacement must match it")
    return new


def propagate_hooked(ctx, g, grads, create_graph, anomaly, needed):
    """backward.py's _propagate for a node with hooks: pre-hooks on the outputs' gradients,
    the node's backward (_input_grads: shaped and typed like the inputs), post-hooks on its
    result, then each gradient added in. The engine owns none of these arrays: a hook may
    have kept them. `needed`: under mg.grad, the ids of the tensors that lead to what was
    asked for; as PyTorch's, the hooks see None for an input that leads elsewhere."""
    from minigrad.backward import _accumulate, _input_grads
    pre, post = ctx._node_hooks
    several = isinstance(g, tuple)          # a node of several outputs gets them all
    outs = g if several else (g,)
    for hook in list(pre.values()):
        new = hook(outs)
        if new is not None:
            outs = _replacement(new, outs, ctx.name(), "pre-hook")
    if all(x is None for x in outs):        # a pre-hook took them all: nothing to pass on
        ins = (None,) * len(ctx.inputs)
    else:
        ins = _input_grads(ctx, outs if several else outs[0], create_graph, anomaly)
        if needed is not None:
            ins = tuple(gp if id(p) in needed else None for p, gp in zip(ctx.inputs, ins))
    for hook in list(post.values()):
        new = hook(ins, outs)
        if new is not None:
            ins = _replacement(new, ins, ctx.name(), "hook")
            if anomaly is not None:         # as what backward returned (PyTorch checks
                anomaly.check(ctx, ins)     # after the hooks)
    for p, gp in zip(ctx.inputs, ins):
        if gp is not None:
            _accumulate(grads, p, gp, create_graph, False)
