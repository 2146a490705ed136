"""In-place changes of a tensor's shape, as PyTorch's t_, transpose_ (swapdims_,
swapaxes_), squeeze_, unsqueeze_, resize_ and resize_as_: the tensor keeps its memory and
becomes another view of it. The other views of that memory keep their own shapes; the
version count they share goes one up (as PyTorch's, so an op that saved the tensor's
values refuses its backward, "modified by an inplace operation").

In a graph (grad mode, the tensor requires grad) the change is recorded as the view op it
is, as PyTorch's (t_'s node is t()'s): as for an in-place write (ops/inplace_autograd.py),
the tensor's history moves to `old`, a tensor of the old shape over the same memory, the
ops that used the tensor (its views too) take `old` as their input, and the tensor becomes
the view of `old`, the op's output. Refused, as PyTorch: a leaf that requires grad, or a
view of one, in grad mode; resize_ of any tensor that requires grad. Refused here, where
PyTorch would leave a graph whose backward fails on the old shape: the change of a tensor
with a history under no_grad, and of a leaf that a graph not yet backpropagated used."""
import math
import weakref

from minigrad import backend
from minigrad.args import shape_args
from minigrad.autograd import is_grad_enabled, no_grad
from minigrad.tensor import Tensor, _live_consumers
from minigrad.ops.inplace_autograd import (_move_input, _move_output, memory_held_outside,
                                             shares_memory)


def view_(x, name, view):
    """x becomes view(x), a view of its own memory (view: a function of a tensor that
    makes one, e.g. lambda t: t.transpose(0, 1)). Returns x."""
    with no_grad():
        new = view(x)                       # the arguments checked before anything moves
    if not (x.requires_grad and is_grad_enabled()):
        _check_unrecorded(x, name)
        x._data = new._data                 # only the view of the memory changes
        x._version_counter[0] += 1
        return x
    _check_changeable(x, name)
    consumers = _live_consumers(x)
    old = Tensor._make(x._data, x.device, True)
    # old: x's old shape, history, count (its memory's) and hooks (they saw, as PyTorch's,
    # the old value's gradient); retain_grad stays with x, for its new value
    old._ctx, old._version_counter, old._hooks = x._ctx, x._version_counter, x._hooks
    old._uses = [weakref.ref(f) for f in consumers] or None
    _move_output(old._ctx, x, old)          # the op that made x made `old`
    _move_input(consumers, x, old)          # the ops (views) that used x use `old`
    new = view(old)
    x._data, x._ctx, x._hooks, x._uses = new._data, new._ctx, None, None
    _move_output(x._ctx, new, x)
    x._version_counter[0] += 1              # x's, old's and every view's
    return x


def _check_unrecorded(x, name):
    """Refuse a change that would leave a graph with x's old shape: x's own history under
    no_grad, or the gradient that a graph not yet backpropagated sends to leaf x."""
    if not x.requires_grad:
        return
    if not x.is_leaf:
        raise RuntimeError(f"{name}: the tensor has a history (grad_fn) that its new shape "
                           f"would not be recorded in under mg.no_grad(), and backward would "
                           f"fail; change it in grad mode, or change a detach() of it")
    if _live_consumers(x):
        raise RuntimeError(f"{name}: a graph not yet backpropagated used this leaf, and "
                           f"would send it a gradient of its old shape {x.shape}; change "
                           f"its shape before using it, or after backward")


def _check_changeable(x, name):
    """Refuse, as PyTorch, to change a leaf that requires grad, or a view of one."""
    if x.is_leaf:
        raise RuntimeError(f"{name}: in-place change of a leaf tensor that requires grad "
                           f"(as PyTorch refuses); do it under mg.no_grad(), or change a "
                           f"clone() (or write y = x.{name[:-1]}(...))")
    t = x
    while t._ctx is not None and t._ctx.inputs is not None and t._ctx.output_ids is None:
        base = next((p for p in t._ctx.inputs if p._version_counter is t._version_counter),
                    None)
        if base is None:
            return
        if base.requires_grad and base.is_leaf:
            raise RuntimeError(f"{name}: a view of a leaf tensor that requires grad is "
                               f"being changed in place (as PyTorch refuses); write y = "
                               f"x.{name[:-1]}(...) instead")
        t = base


def resize(x, shape, name="resize_"):
    """x made of the given shape over its memory, from its first element on, contiguous
    (its strides are lost), as PyTorch's resize_: the same shape changes nothing; more
    elements than the memory holds give x new memory, the old values first and zeros after
    (PyTorch leaves them uninitialised). Returns x."""
    if x.requires_grad:
        raise RuntimeError(f"{name}: cannot resize a tensor that requires grad (as PyTorch); "
                           f"resize a detach() of it, or make a new tensor with reshape")
    shape = shape_args(shape, name)
    if any(s < 0 for s in shape):
        raise ValueError(f"{name}: sizes must be non-negative, got {shape}")
    if shape == x.shape:
        return x
    n, itemsize = math.prod(shape), x.dtype.itemsize
    memory = backend.memory_from(x._data)   # bytes from x's first element to its block's end
    if memory is not None and memory.size >= n * itemsize:
        x._data = memory[:n * itemsize].view(x.dtype).reshape(shape)
        x._version_counter[0] += 1
        return x
    memory = None                           # (it would count as a holder of the memory)
    if shares_memory(x) or memory_held_outside(x):
        raise RuntimeError(f"{name}: {shape} needs more memory than the tensor's, which "
                           f"other tensors or arrays share (views, a detach(), .numpy()): "
                           f"they would keep the old memory (PyTorch grows the memory they "
                           f"share, NumPy cannot); resize a clone()")
    memory = backend.memory_from(x._data)
    have = x._data.reshape(-1) if memory is None or memory.size % itemsize else \
        memory.view(x.dtype)
    grown = x.backend.xp.zeros(n, x.dtype)
    grown[:min(n, have.size)] = have[:n]
    x._data = grown.reshape(shape)
    x._version_counter[0] += 1
    return x
