"""In-place writes in grad mode into memory that other tensors see, as PyTorch's
CopySlices: a view written (`h[:, 0].mul_(2)`, `h.T[0] = y`, `h[0][1] = v`,
`h[:, 0] += y`, `h.narrow(1, 0, 2).copy_(z)`), or a tensor written while views of it
exist (`v = h[0]; h.add_(1)`). A write of a tensor that no one else sees is
ops/inplace_autograd.py's, which gives the tensor new memory; here that would leave the
others with the old values, so the write goes truly into the shared memory, and every
view, reachable or not, sees it.

Its history: r, the tensor that owns the memory (found by walking the written tensor x's
view nodes up, each through the input that shares x's version count), hands its old
history to `old_r`, a copy of its old values (the write's cost, as an unshared write's
copy). x's elements are read from old_r (gathered
at their places in r, worked out from the arrays' addresses and strides, so any view:
slices, ints, transposes, reshapes, the diagonal, a row of an expand), the op computes
their new values out of place, and r's new node (Put) writes them into r's memory: its
gradient goes to old_r elsewhere and to the new values at x's places. The views keep their
own nodes, which now lead to r's new history; no cycle forms, as the new values' graph
leads to old_r.

What had used the old values keeps them: r's ops (not its views') move to old_r, as an
unshared write moves them; an op that had used a view moves to that view's elements
gathered from old_r, at a version other than the one it saw, so one whose backward reads
the view's values refuses ("modified by an inplace operation"), as PyTorch's, and one that
reads none (v + 1, v.sum()) sends its gradient to the old values. The version count that
r and its views share goes one up. A NumPy array that shares the memory (h.numpy(),
mg.from_numpy) sees the write too, as a plain write's (an unshared write, which gives the
tensor new memory, refuses it instead). A hook registered on r before the write stays with
its old value, as for an unshared write; a view's stays with the view.

A view of a tensor that needs no grad is made outside the graph, with no node; the
memory's version count names the tensor it views instead (autograd._note_view_base), so
`dC[ix] += demb[k]` (dC needing no grad, demb needing it) writes dC as PyTorch's: dC gets
the Put node and the view a node reading dC's new values at its places.

Refused (each error says what to write instead): x or r a leaf that requires grad (as
PyTorch); another tensor sharing the memory that the graph does not lead to, whose history
could not follow the write: a view made under no_grad (as PyTorch), a second view alive of
a tensor that needs no grad (PyTorch writes it: its views made outside the graph are not
known here), a detach(), mg.Tensor(t), a slice of unbind() or of iterating over a tensor
(PyTorch refuses writes into those slices too); a broadcast view (expand), whose elements
share memory (ops/inplace_autograd.py refuses it before)."""
import sys
import weakref

from minigrad import backend
from minigrad.autograd import Function
from minigrad.memory_format import contiguous_format
from minigrad.tensor import Tensor, _live_consumers
from minigrad.ops.index import GetItem
from minigrad.ops.inplace_autograd import (_drop_locals, _move_input, _move_output,
                                             _out_of_place)


def write_shared(x, name, compute, check):
    """x becomes compute(its old value), written into the memory it shares (see above);
    compute works out of place, check(result) refuses a result x cannot take. Returns x."""
    from minigrad.ops.inplace import check_writable     # (inplace.py imports this module's)
    r = _root(x, name)
    views = _views(r)
    if x._ctx is None and x is not r:        # a view made outside the graph (see _root)
        views.append(x)
    # every tensor holding the count is one the graph reaches (getrefcount's argument too)
    if not any(t is x for t in views) or \
            sys.getrefcount(r._version_counter) - 1 != len(views):
        raise RuntimeError(_unreached(name))
    if backend.shares_elements(r._data):
        raise ValueError(f"{name}: the tensor views a broadcast tensor (expand), whose "
                         f"elements share memory, so it cannot be written; clone() it first")
    check_writable(r, name)
    pos = None if x is r else _place(x, r)
    old_r = Tensor._make(r._data.copy(), r.device, r.requires_grad)
    old_r._ctx, old_r._hooks = r._ctx, r._hooks
    version = r._version_counter[0]
    old_r._version_counter = [version]       # its values are the old ones: its ops may read
    handled = sys.exc_info()[1]              # an error the caller is handling: not ours
    try:
        result = compute(old_r if x is r else _gather(old_r, pos, x.shape))
        check(result)
    except BaseException as e:               # nothing moved yet: the graph is as it was
        _drop_locals(e, handled)
        old_r = result = None
        raise
    if result.dtype != x.dtype:
        result = result.to(dtype=x.dtype)
    if result._version_counter is r._version_counter:
        result = result.clone(memory_format=contiguous_format)  # its memory is written
    _move_output(old_r._ctx, r, old_r)
    for t in views:                          # the ops that used the old values keep them
        used = [f for f in _live_consumers(t) if not _is_view_op(f, views)]
        if used:
            old = old_r if t is r else _gather(old_r, _place(t, r), t.shape)
            if t is not r:                   # a version it did not have when they used it
                old._version_counter = [version + 1]
            _move_input(used, t, old)
            old._uses = (old._uses or []) + [weakref.ref(f) for f in used]
    if pos is not None:
        new = Put.apply(old_r, result, into=r._data, pos=pos)
    else:                                    # all of r, in its order: r-shaped values
        new = Put.apply(result.reshape(r.shape), into=r._data, pos=None)
    r._ctx, r.requires_grad, r._hooks = new._ctx, new.requires_grad, None
    _move_output(r._ctx, new, r)
    r._version_counter[0] += 1               # r's and every view's
    if x._ctx is None and x is not r:        # now r's new values at x's places, as a view
        made = r.reshape(x.shape) if pos is None else GetItem.apply(r, index=pos)
        x._ctx, x.requires_grad = made._ctx, made.requires_grad
        _move_output(x._ctx, made, x)
    return x


def _root(x, name):
    """The tensor that owns x's memory, reached through x's view nodes."""
    t = x
    while t._ctx is not None:
        ctx = t._ctx
        if ctx.inputs is None or getattr(ctx, "released", False):
            if t._data.base is None:         # owns its memory: a root, released or not
                break
            raise RuntimeError(f"{name}: the tensor is a view whose graph backward() "
                               f"released, so autograd cannot tell what it views; write "
                               f"the view before backward, or change a clone()")
        base = next((p for p in ctx.inputs if p._version_counter is t._version_counter),
                    None)
        if base is None:
            break
        if ctx.output_ids is not None:
            raise RuntimeError(_unreached(name))    # unbind's slices, a module hook's views
        t = base
    if t is x and t._ctx is None:
        t = _base_outside_graph(x)
    if t.requires_grad and t.is_leaf:
        raise RuntimeError(f"{name}: a view of a leaf tensor that requires grad is being "
                           f"changed in place (as PyTorch refuses); do it under "
                           f"mg.no_grad() (an initialisation), or change a clone()")
    return t


def _base_outside_graph(x):
    """The tensor x views where no node records it: the one the memory's version count
    names (autograd._note_view_base), still holding the memory x lies in, and needing no
    grad (or a leaf since made to, which _root refuses); else x itself (the write then
    refuses: x shares its memory with a tensor that the graph does not lead to)."""
    counter = x._version_counter
    base = counter[1]() if len(counter) > 1 and counter[1] is not None else None
    if base is None or base is x or base._version_counter is not counter or \
            x._data.base is not (base._data if base._data.base is None else base._data.base):
        return x
    return x if base.requires_grad and not base.is_leaf else base


def _views(r):
    """r and the tensors alive that view it through nodes of the graph (views of views too),
    found through the weak references that recorded ops leave on their inputs."""
    found, todo = [r], [r]
    while todo:
        for fn in _live_consumers(todo.pop()):
            out = fn._output() if fn.output_ids is None else None
            if out is not None and out._version_counter is r._version_counter and \
                    not any(t is out for t in found):
                found.append(out)
                todo.append(out)
    return found


def _is_view_op(fn, views):
    """Whether op fn made one of `views` (it stays with r, and its output sees the write)."""
    out = fn._output() if fn.output_ids is None else None
    return out is not None and any(t is out for t in views)


def _unreached(name):
    return (f"{name}: the tensor shares its memory with another that the graph does not "
            f"lead to (a detach(), mg.Tensor(t), a view made under no_grad, another view "
            f"alive of a tensor that needs no grad, a slice of unbind() or of iterating "
            f"over a tensor), whose history could not follow the write; write into the tensor "
            f"that owns the memory through indexing (base[index] = value), change a "
            f"clone(), or {_out_of_place(name)}")


def _place(t, r):
    """Where t's elements lie in r: a tuple of index arrays of t's shape (on r's device),
    one per dim of r, or None where t is all of r in r's order (a reshape of it)."""
    pos = backend.view_positions(t._data, r._data)
    return None if pos is None else tuple(r.backend.from_numpy(i) for i in pos)


def _gather(old_r, pos, shape):
    """The elements at pos of old_r (a copy), or all of it, reshaped (a view of its own)
    where pos is None."""
    return old_r.reshape(shape) if pos is None else GetItem.apply(old_r, index=pos)


class Put(Function):
    """r's node after a write: values v written into r's own memory `into` at `pos` (index
    arrays; None: all of r), whose other elements hold `base`'s values, r's old value
    (absent for pos None). Backward: d base = g with g[pos] = 0; dv = g[pos]."""
    needs_values = False                                 # reads shapes and positions only

    def forward(self, *arrays, into, pos):
        self.pos = pos
        into[... if pos is None else pos] = arrays[-1]
        return into

    def backward(self, g):
        if self.pos is None:
            return g
        return ZeroAt.apply(g, pos=self.pos), GetItem.apply(g, index=self.pos)

    def backward_arrays(self, g):
        if self.pos is None:
            return (g,)
        rest = g.copy()
        rest[self.pos] = 0
        return rest, g[self.pos]


class ZeroAt(Function):
    """g with its elements at `pos` set to 0: Put's gradient for r's old value (linear,
    so its gradient is itself)."""
    needs_values = False

    def forward(self, g, pos):
        self.pos = pos
        out = g.copy()
        out[pos] = 0
        return out

    def backward(self, gg): return ZeroAt.apply(gg, pos=self.pos)
