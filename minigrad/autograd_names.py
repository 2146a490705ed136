"""The rest of torch.autograd's public names, for code written against it: `Variable`
(deprecated there: it makes a Tensor), `set_multithreading_enabled` and
`is_multithreading_enabled`, and `graph.Node`, the type of a tensor's grad_fn.
(`forward_ad` is forward_ad.py; `gradcheck`, `gradgradcheck` are gradcheck.py's.)"""
import types

from minigrad import autograd_graph, gradient_edge

from minigrad.grad_mode import _state


class _VariableMeta(type):
    def __instancecheck__(cls, other):       # as PyTorch: every Tensor is a Variable
        from minigrad.tensor import Tensor
        return isinstance(other, Tensor)


class Variable(metaclass=_VariableMeta):
    """Deprecated, as in PyTorch, where Variables and Tensors merged: Variable(t,
    requires_grad=False) returns a Tensor sharing t's memory, with that requires_grad."""

    def __new__(cls, data, requires_grad=False, volatile=False):
        from minigrad.tensor import Tensor
        if not isinstance(data, Tensor):
            raise TypeError(f"Variable data has to be a tensor, but got "
                            f"{type(data).__name__}")
        return data.detach().requires_grad_(requires_grad)


class set_multithreading_enabled:
    """Whether the backward pass may use several threads, as
    torch.autograd.set_multithreading_enabled: takes effect at the call (or for a `with`
    block). Recorded only: minigrad's backward runs on the calling thread whatever it says
    (its array kernels thread themselves: mg.set_num_threads)."""

    def __init__(self, mode):
        if not isinstance(mode, bool):
            raise TypeError(f"set_multithreading_enabled: mode must be a bool, got "
                            f"{type(mode).__name__}")
        self.prev = is_multithreading_enabled()
        _state.multithreading = self.mode = mode

    def __enter__(self):
        _state.multithreading = self.mode

    def __exit__(self, *exc):
        _state.multithreading = self.prev


def is_multithreading_enabled():
    """What set_multithreading_enabled last said in this thread (True by default)."""
    return getattr(_state, "multithreading", True)


class _NodeMeta(type):
    def __instancecheck__(cls, other):
        from minigrad.autograd import Function
        from minigrad.autograd_node import AccumulateGrad
        return isinstance(other, (Function, AccumulateGrad))

    def __subclasscheck__(cls, other):
        from minigrad.autograd import Function
        from minigrad.autograd_node import AccumulateGrad
        return isinstance(other, type) and issubclass(other, (Function, AccumulateGrad))


class Node(metaclass=_NodeMeta):
    """The type of a recorded op, a tensor's grad_fn (autograd.Function here), and of a
    leaf's AccumulateGrad, for isinstance checks, as torch.autograd.graph.Node. What a node
    offers (name(), next_functions, hooks) is autograd_node.py's."""

    def __new__(cls, *args, **kwargs):
        raise TypeError("graph.Node is the type of a grad_fn; ops make them")


graph = types.ModuleType("minigrad.autograd.graph", "As torch.autograd.graph: Node, "
                         "GradientEdge, get_gradient_edge, register_multi_grad_hook, "
                         "increment_version.")
graph.Node = Node
graph.GradientEdge = gradient_edge.GradientEdge
graph.get_gradient_edge = gradient_edge.get_gradient_edge
graph.register_multi_grad_hook = autograd_graph.register_multi_grad_hook
graph.increment_version = autograd_graph.increment_version
graph.saved_tensors_hooks = autograd_graph.saved_tensors_hooks
graph.disable_saved_tensors_hooks = autograd_graph.disable_saved_tensors_hooks
graph.save_on_cpu = autograd_graph.save_on_cpu
