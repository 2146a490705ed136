"""torch.autograd.graph's `GradientEdge` and `get_gradient_edge`: a place in the graph where a
gradient flows, (node, output_nr), which mg.grad and mg.autograd.backward take wherever
they take a tensor (outputs, inputs), as PyTorch's.

Why an edge and not the tensor: an edge names a node's output, not a tensor object, so it
still means the old value after an in-place write. y = x * 2; e = get_gradient_edge(y);
y.mul_(3): y is now the product by 3, and mg.grad(out, y) its gradient, but
mg.grad(out, e) is the gradient of x * 2, the value y had before the write.

minigrad's engine keys gradients by tensor, so an edge is resolved, when used, to the
tensor that is that output of the node now. An in-place write moves a node's output to a
tensor holding the old value (ops/inplace_autograd.py tells the node), so resolving finds
that. A leaf's AccumulateGrad resolves to the leaf. Callers that pass only tensors pay
one isinstance check per argument.

What differs from PyTorch: a node here holds its output weakly (the output owns the node),
so an edge whose tensor nothing holds any more cannot start a backward pass (as `outputs`);
as an input it is simply unused, since nothing in the graph can lead to it. PyTorch's
`ownership_token` (which keeps a Python node's graph alive) is always None: the node
already holds its inputs, and so the graph below it.
"""
import weakref
from typing import NamedTuple

from minigrad.autograd_node import AccumulateGrad, _edge


class GradientEdge(NamedTuple):
    """Where the gradient of one output of `node` flows: get_gradient_edge(t) for tensor t,
    or a `next_functions` entry. `output_nr` is which output of the node (0 for a node of
    one output and for a leaf's AccumulateGrad)."""
    node: object
    output_nr: int
    ownership_token: object = None


def get_gradient_edge(tensor):
    """The edge where `tensor`'s gradient is computed: (tensor.grad_fn, tensor.output_nr)
    for a tensor an op made, (its AccumulateGrad, 0) for a leaf that requires grad.
    mg.grad(out, get_gradient_edge(t)) equals mg.grad(out, t) until t is changed in place;
    after that the edge still means the old value."""
    from minigrad.tensor import Tensor
    if not isinstance(tensor, Tensor):
        raise TypeError(f"get_gradient_edge: expected a Tensor, got {type(tensor).__name__}")
    if not tensor.requires_grad:
        raise RuntimeError("get_gradient_edge: it is not possible to get the gradient edge "
                           "for a tensor that does not require grad (no gradient flows to "
                           "it); make it with requires_grad=True, or compute it from one "
                           "outside mg.no_grad()")
    node, nr = _edge(tensor)
    if getattr(node, "output_ids", None) is not None:
        # a node of several outputs knows them by id only: keep where to find this one, so
        # that the edge can start a backward pass (as `outputs`) while the tensor lives
        node.__dict__.setdefault("_edge_outputs", {})[nr] = weakref.ref(tensor)
    return GradientEdge(node, nr)


def _checked(edge, where):
    """edge's node and output_nr, refused where they name no output of a node."""
    from minigrad.autograd_names import Node
    node, nr = edge.node, edge.output_nr
    if not isinstance(node, Node):
        raise RuntimeError(f"{where}: a GradientEdge's node must be an autograd.graph.Node "
                           f"(a grad_fn, or a leaf's AccumulateGrad), got "
                           f"{type(node).__name__}")
    if getattr(node, "inputs", ()) is None:       # released by a backward: its outputs
        return node, nr                             # are forgotten (_tensor_of: None)
    ids = getattr(node, "output_ids", None)
    count = 1 if ids is None else len(ids)
    if isinstance(nr, bool) or not isinstance(nr, int) or not 0 <= nr < count:
        raise RuntimeError(f"{where}: GradientEdge output_nr {nr!r} names no output of "
                           f"{node.name()}, which has {count} (valid: 0..{count - 1})")
    return node, nr


def _tensor_of(node, nr):
    """The live tensor that is output nr of node now, where the node itself can say (its
    leaf, its one output, or one get_gradient_edge noted); else None."""
    if isinstance(node, AccumulateGrad):
        t = node.variable
        return t if t is not None and t._ctx is None and t.requires_grad else None
    if node.output_ids is None:
        ref = node.__dict__.get("_output")           # (gone once a backward freed the node)
    else:
        ref = node.__dict__.get("_edge_outputs", {}).get(nr)
    t = None if ref is None else ref()
    if t is None or t._ctx is not node or \
            (node.output_ids is not None and node.output_ids.get(id(t)) != nr):
        return None                                  # (detached since, or written in place)
    return t


def resolve_outputs(outputs, where):
    """`outputs` with each GradientEdge replaced by its tensor, the root of the pass;
    refused where none lives (or, for a node of several outputs, none get_gradient_edge
    noted), since nothing is then known to start from."""
    from minigrad.tensor import Tensor
    out = []
    for k, o in enumerate(outputs):
        if isinstance(o, GradientEdge):
            node, nr = _checked(o, where)
            t = _tensor_of(node, nr)
            if t is None and getattr(node, "inputs", ()) is None:
                from minigrad.backward import _FREED
                raise RuntimeError(f"{where}: output {k}, an edge to {node.name()}: {_FREED}")
            if t is None:
                raise RuntimeError(
                    f"{where}: output {k}, an edge to output {nr} of {node.name()}, has no "
                    f"live tensor to start from: minigrad's nodes hold their outputs weakly, "
                    f"so the tensor must still be held (or the edge taken from it with "
                    f"get_gradient_edge); pass the tensor itself, or keep it alive")
            o = t
        elif not isinstance(o, Tensor):
            raise TypeError(f"{where}: outputs must be Tensors or GradientEdges, got "
                            f"{type(o).__name__} at position {k}")
        out.append(o)
    return out


class _Unreached:
    """Stands for an input edge with no tensor in the graph: run_backward finds no gradient
    for it (as PyTorch, where nothing flows into that edge)."""
    __slots__ = ()


def resolve_inputs(inputs, roots, where):
    """`inputs` with each GradientEdge replaced by the tensor that is its node's output now:
    found from the node, or, for a node of several outputs, among the tensors of `roots`'
    graph (walked once, only then); an _Unreached where there is none."""
    from minigrad.tensor import Tensor
    out, outputs_of = [], None
    for k, t in enumerate(inputs):
        if isinstance(t, GradientEdge):
            node, nr = _checked(t, where)
            t = _tensor_of(node, nr)
            if t is None and getattr(node, "output_ids", None) is not None:
                if outputs_of is None:
                    outputs_of = _outputs_in_graph(roots)
                t = outputs_of.get((id(node), nr))
            if t is None:
                t = _Unreached()
        elif not isinstance(t, Tensor):
            raise RuntimeError(f"{where}: all inputs have to be Tensors or GradientEdges, "
                               f"but got {type(t).__name__} at position {k}")
        out.append(t)
    return out


def _outputs_in_graph(roots):
    """(id(node), output_nr) -> tensor for the outputs of nodes of several outputs in the
    graph below `roots`."""
    from minigrad.backward import _topological_order
    found = {}
    for t in _topological_order(roots):
        ctx = t._ctx
        if ctx is not None and ctx.output_ids is not None and id(t) in ctx.output_ids:
            found[(id(ctx), ctx.output_ids[id(t)])] = t
    return found


def materialize(found, given, create_graph):
    """mg.grad's materialize_grads: zeros for an unused tensor input (requiring grad under
    create_graph, as PyTorch's); refused for an unused edge, whose shape is its tensor's,
    which may be gone."""
    from minigrad.creation import zeros_like
    if any(g is None and isinstance(t, GradientEdge) for g, t in zip(found, given)):
        raise RuntimeError("mg.grad: materialize_grads cannot be used when the given input "
                           "is a GradientEdge that got no gradient; pass allow_unused=True "
                           "alone to get None for it")
    return [zeros_like(t, requires_grad=create_graph) if g is None else g
            for g, t in zip(found, given)]
