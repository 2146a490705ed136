"""In-place writes that autograd records, as PyTorch does on any tensor that is not a leaf
requiring grad: `h.relu_()`, `h.mul_(w)`, `h[:, 0] = v`, `h.masked_fill_(m, 0)`, `x += y`,
in grad mode, where h or the other operand requires grad.

Here the graph's nodes are the tensors themselves, so a write cannot put a node behind h
as PyTorch's does. Instead h's history moves to a new tensor, `old`, which keeps h's
memory with the old values untouched, and h becomes op(old, ...) computed out of place: a
new array, the op's node, h's version one higher. The ops that had used h take `old` as
their input instead (each op left a weak reference on its inputs when recorded), so
they go on reading h's old values and sending their gradients there, as PyTorch's do.
Every op that saved h's values (or its output, if h is one) still reads them, and the write
costs what `h = op(h)` would.

That is the same as writing into h's memory where nothing else sees that memory. Where
another tensor does (h views the memory of a tensor held elsewhere, or is viewed by one:
a slice, a reshape, a transpose), the write goes into that memory instead, as PyTorch's
CopySlices (ops/inplace_views.py); a view of an intermediate that only the graph holds
is written here, as logsumexp's result, a reshape of the sum it computed, or `(h * 2)[0]`:
nothing else sees that memory. Refused (each error says what to write instead): a NumPy
array shares h's memory (mg.from_numpy, h.numpy(): it would keep the old values); h is a
leaf that requires grad (as PyTorch). h itself as an operand (h.mul_(h), h.copy_(h)) is
its old value."""
import sys
import traceback
import weakref

from minigrad import backend
from minigrad.autograd import Function, is_grad_enabled
from minigrad.memory_format import contiguous_format
from minigrad.tensor import Tensor, _live_consumers


def needs_recording(x, *operands):
    """Whether writing into x would change a graph: grad mode, and x or an operand requires
    grad."""
    return is_grad_enabled() and (x.requires_grad or any(
        getattr(o, "requires_grad", False) for o in operands))


def record(x, name, compute, check):
    """x becomes compute(old), recorded by autograd, x keeping its identity and `old` its
    history and values (see above). `compute` works out of place; `check(result)` refuses a
    result x cannot take (another shape, a dtype x cannot hold). Returns x."""
    if _check_recordable(x, name):       # memory others see: written into it
        from minigrad.ops.inplace_views import write_shared   # (it imports this module)
        return write_shared(x, name, compute, check)
    # the ops that already used x took its old value: they go on reading and sending their
    # gradients to `old`
    consumers = _live_consumers(x)
    old = Tensor._make(x._data, x.device, x.requires_grad)
    old._ctx, old._version_counter, old._hooks = x._ctx, x._version_counter, x._hooks
    old._uses = [weakref.ref(f) for f in consumers] or None
    _move_output(old._ctx, x, old)      # the op that made x made `old` (its output checks)
    _move_input(consumers, x, old)
    handled = sys.exc_info()[1]         # an error the caller is handling, if any: not ours
    try:
        result = compute(old)
        check(result)
    except BaseException as e:
        _move_output(old._ctx, old, x)
        _move_input(consumers, old, x)
        _drop_locals(e, handled)
        old = result = consumers = None     # this frame's too (see _drop_locals)
        raise
    if result.dtype != x.dtype:
        result = result.to(dtype=x.dtype)
    if result._version_counter is old._version_counter or \
            backend.shares_elements(result._data) or \
            not getattr(result._data.flags, "writeable", True):
        result = result.clone(memory_format=contiguous_format)  # x must own writable memory
    # a hook registered on x before saw, as PyTorch's, the old value's gradient: it stays
    # with `old`; retain_grad stays with x, for its new value
    x._data, x._ctx, x.requires_grad = result._data, result._ctx, result.requires_grad
    x._version_counter, x._hooks, x._uses = [old._version_counter[0] + 1], None, None
    _move_output(x._ctx, result, x)
    if x._ctx is not None and x._ctx.needs_values:
        x._ctx.out_version = x._version_counter[0]
    return x


def _drop_locals(error, handled):
    """Clear the locals of the frames that a failed write's error keeps, and its context's
    (an op re-raises with its own words) down to the error the caller was handling: they
    hold `old`, and so x's memory and count, and while the error is kept (`except ... as
    e`, a notebook's last error) x would be refused as shared. The lines stay."""
    while error is not None and error is not handled:
        traceback.clear_frames(error.__traceback__)
        error = error.__context__


def _move_input(consumers, was, now):
    """Make each op in `consumers` take `now` as its input where it took `was`."""
    for fn in consumers:
        fn.inputs = tuple(now if p is was else p for p in fn.inputs)


def _move_output(ctx, was, now):
    """Tell node ctx that its output `was` is now the tensor `now`."""
    if ctx is None:
        return
    if ctx.output_ids is None:
        ctx._output = weakref.ref(now)
    else:
        k = ctx.output_ids[id(now)] = ctx.output_ids.pop(id(was))
        noted = ctx.__dict__.get("_edge_outputs")      # get_gradient_edge's (edges can
        if noted is not None and k in noted:            # start a backward from `now`)
            noted[k] = weakref.ref(now)


def _check_recordable(x, name):
    """Refuse a write autograd cannot record; True where x's memory is shared with
    another tensor (ops/inplace_views.py writes it)."""
    if x.requires_grad and x.is_leaf:
        raise RuntimeError(f"{name}: in-place change of a leaf tensor that requires grad; "
                           f"do it under mg.no_grad() (a hand-written optimiser step, "
                           f"an initialisation), or change a clone()")
    if backend.shares_elements(x._data):   # as a plain write (check_writable), PyTorch
        raise ValueError(f"{name}: the tensor is a broadcast view (expand), whose elements "
                         f"share memory, so it cannot be written; clone() it first")
    if shares_memory(x):
        return True
    if memory_held_outside(x):
        raise RuntimeError(f"{name}: the tensor's memory is also held outside it (the "
                           f"NumPy array of mg.from_numpy or mg.as_tensor, what .numpy() "
                           f"or .data returned), and a recorded change gives the tensor new "
                           f"memory, which that holder would not see; drop that holder, "
                           f"change a clone(), or {_out_of_place(name)}")


def shares_memory(x):
    """Whether another tensor that something outside the graph may hold shares x's memory:
    a view of x, or a tensor x views. Not a tensor that x's own view nodes alone hold, an
    intermediate no one can see (logsumexp's result reshapes the sum it computed, topk's
    slices the sort, and `(h * 2).reshape(-1)` the product), as PyTorch's results there."""
    # held by x and getrefcount's argument alone: no other tensor shares x's memory
    others = sys.getrefcount(x._version_counter) - 2
    return others > 0 and len(_unseen_bases(x, others)) != others


def _unseen_bases(x, limit):
    """The tensors x views through its own nodes, each held by the node of the view made
    of it alone (up to `limit` of them; it stops at the first that is not)."""
    bases, ctx = [], x._ctx
    while len(bases) < limit and ctx is not None and ctx.inputs is not None and \
            ctx.output_ids is None:
        i = next((i for i, p in enumerate(ctx.inputs)
                  if p._version_counter is x._version_counter), None)
        # held by the node's inputs and getrefcount's argument alone
        if i is None or sys.getrefcount(ctx.inputs[i]) != 2:
            break
        bases.append(ctx.inputs[i])
        ctx = bases[-1]._ctx
    return bases


def memory_held_outside(x):
    """Whether something besides x holds x's array or the memory it views: a NumPy array x
    was made from or handed out (mg.from_numpy, x.numpy()), or the Tensor x.data returned
    (it shares x's array), which a recorded write
    (or x += y rebinding x) would leave with the old values."""
    # the array held by x and getrefcount's argument alone; the memory it views (if any) by
    # the array, the local `base`, getrefcount's argument and the tensors x views unseen
    base = getattr(x._data, "base", None)
    if sys.getrefcount(x._data) > 2:
        return True
    if base is None:
        return False
    others = sys.getrefcount(x._version_counter) - 2
    inside = sum(t._data is base or getattr(t._data, "base", None) is base
                 for t in _unseen_bases(x, others))
    return sys.getrefcount(base) > 3 + inside


def _out_of_place(name):
    """The out-of-place spelling of in-place op `name`, for the errors."""
    if name in _NEW_TENSOR:                        # no method x.zero(), x.fill(), x.copy()
        return f"write y = {_NEW_TENSOR[name]}"
    if name.endswith("_"):
        return f"write y = x.{name[:-1]}(...)"
    if name.startswith("x "):                                     # x += y, x **= y ...
        return f"write x = x {name.split()[1][:-1]} y"
    return "build the tensor out of place (mg.where, mg.cat, mg.stack)"   # setitem


_NEW_TENSOR = {"zero_": "mg.zeros_like(x)", "fill_": "mg.full_like(x, value)",
               "copy_": "src.expand_as(x).to(x.dtype)"}


class IndexPut(Function):
    """x with x[index] = v, out of place: the recorded form of t[index] = v. `write(a, v)`
    does setitem's writing into array a (PyTorch's order of ints and arrays, its rules for
    leading 1s), `select(g)` reads the part the index picks. `written`: that copy of x,
    already made by setitem (so that a bad value gets setitem's error). Backward: dx = g
    with g[index] = 0; dv = g[index], summed to v's shape (a value broadcast over the part
    gets the sum; repeated indices each get theirs, as PyTorch's index_put)."""
    needs_values = False                                 # reads the index and shapes only

    def forward(self, a, v, write, select, written=None):
        self.write, self.select, self.v_shape = write, select, v.shape
        if written is None:
            written = a.copy()
            write(written, v)
        return written

    def backward(self, g):
        zero = Tensor._make(self.xp.zeros((), g.dtype), g.device)
        return (IndexPut.apply(g, zero, write=self.write, select=self.select),
                _lead_ones(self.select(g), self.v_shape))

    def backward_arrays(self, g):
        gx = g.copy()
        self.write(gx, self.xp.zeros((), g.dtype))
        return gx, _lead_ones(self.select(g), self.v_shape)


def _lead_ones(part, shape):
    """The gradient of the part the index selected, for a value of `shape`: the engine sums
    it to that shape where the value was broadcast; leading 1s the value has beyond the
    part's dims (PyTorch drops them in the write) come back first."""
    n = len(shape) - part.ndim
    return part.reshape((1,) * n + part.shape) if n > 0 else part
