"""In-place writes in grad mode into memory other tensors see (ops/inplace_views.py): a view
written, a tensor written while views of it exist. Values of the base and of every view,
gradients and second order as PyTorch's (CopySlices); what PyTorch refuses at backward
refused too; the writes autograd cannot follow refused, the graph left as it was."""
import gc
import weakref

import pytest

import minigrad as mg
from op_helpers import OpCase, check_vs_torch, check_gradcheck, check_double_backward_vs_torch


def _set(t, index, v):
    t[index] = v


def _iadd_column(h, w):
    h[:, 0] += w[:, 1]
    return h


def _saved_copies(fn):
    """fn for PyTorch with its saved tensors copied: it refuses the backward of an op that
    saved what the write changed (exp's result); minigrad's old value keeps it."""
    def run(*args):
        import torch
        with torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t):
            return fn(*args)
    return run


def _view_mul(x, w):
    h = x * w
    v = h[:, 0]
    v.mul_(w[:, 1])
    return h, v


def _base_written(x, w):
    h = x * w
    v, col = h[0], h[:, 2]
    h.add_(w * w)
    return h, v, col


def _slices(x, w):
    h = x * w
    h[:, :2].zero_()
    h.T[0] = w[:, 0] * w[:, 1]              # column 0, through a transpose
    h.view(-1)[3] = w[1, 1] * x[0, 0]       # h[1, 0], through a flat view
    h.narrow(1, 1, 2).copy_(w[:, 1:] * x[:, :2])
    return h


def _views_of_views(x, w):
    h = x * w
    v, u = h.T[1:], h[1]                   # two views, written in turn
    v[0].mul_(w[:, 0])                     # h[:, 1], a view of a view
    u.add_(w[0], alpha=2)
    return h, v, u


def _view_used_before(x, w):
    h = x * w
    v = h[:, 1]
    y = v + 1                              # reads no value: its gradient goes to the old v
    h.mul_(w)
    return y, h, v


def _setitem_on_view(x, w):
    h = x * w
    h[0][1] = w[1, 2] * w[0, 0]
    h.reshape(3, 2)[2] = x[0, :2] * 3        # h[1, 1:], a reshape's row
    return h


def _whole(x, w):
    h = x * w
    h.T.mul_(w.T)                          # all of h, another order
    h.unsqueeze(0).add_(x)                 # all of h, its order
    s = (h * h).sum() * 0.1                # a 0-d tensor, written through a reshape
    s.reshape(1).mul_(w[0, 0])
    return h, s


def _diagonal_and_expand(x, w):
    h = x * w
    h.diagonal().mul_(w[0, :2])
    e = h.expand(2, 2, 3)
    e[1].sub_(x)                           # one row of the expand: all of h, once
    return h, e


def _relu_base(x, w):
    h = x * w
    v = h[:, 1:]
    h.relu_()
    return h, v


def _exp_base(x, w):
    h = x.exp()
    h[1].mul_(w[1])                        # exp saved its result: old values, below
    return h


CASES = [
    OpCase("view_mul_", _view_mul, ((2, 3), (2, 3))),
    OpCase("base_written_views_alive", _base_written, ((2, 3), (2, 3))),
    OpCase("slices_transpose_flat_narrow", _slices, ((2, 3), (2, 3))),
    OpCase("views_of_views_two_writes", _views_of_views, ((2, 3), (2, 3))),
    OpCase("view_used_before_the_write", _view_used_before, ((2, 3), (2, 3))),
    OpCase("setitem_on_a_view", _setitem_on_view, ((2, 3), (2, 3))),
    OpCase("iadd_column", lambda x, w: _iadd_column(x * w, w), ((2, 3), (2, 3))),
    OpCase("whole_through_views_and_0d", _whole, ((2, 3), (2, 3))),
    OpCase("diagonal_and_expand_row", _diagonal_and_expand, ((2, 3), (2, 3))),
    OpCase("relu_of_the_base", _relu_base, ((2, 3), (2, 3)), domain="nonzero"),
    OpCase("exp_result", _exp_base, ((2, 3), (2, 3)), torch_fn=_saved_copies(_exp_base)),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_as_torch(case, device):
    check_vs_torch(case, device, "float64")
    check_vs_torch(case, device, "float32")


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck_and_second_order(case, device):
    check_gradcheck(case, device)
    check_double_backward_vs_torch(case, device)


def _libs():
    torch = pytest.importorskip("torch")
    return ((mg, RuntimeError), (torch, RuntimeError))


@pytest.mark.parametrize("write", [
    lambda h, w: h.add_(1.0),                        # the base
    lambda h, w: h[:, 0].mul_(w[:, 0]),              # another view, one element of v
    lambda h, w: h[0].copy_(w[1]),                   # v's elements, through a new view
])
def test_an_op_that_saved_a_view_refuses_as_torch(write):
    """v * v saved v; the write changes v's memory: as PyTorch, that backward refuses (an
    op that saved nothing, v + 1, is fine: the cases above)."""
    for lib, error in _libs():
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([[0.5, 0.25], [2.0, 1.0]], dtype=lib.float64)
        h = x * 2
        v = h[0]
        y = (v * v).sum()
        write(h, w)
        with pytest.raises(error, match="modified by an in-?place operation"):
            y.backward()


def test_another_view_as_the_operand():
    """h[:, 0].mul_(h[:, 1]): Mul saved the view h[:, 1], whose memory the write changes
    (a version it did not see): refused at backward, as PyTorch's. With add_ (which saves
    nothing) the old values' gradient, as PyTorch's."""
    for lib, error in _libs():
        x = lib.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=lib.float64, requires_grad=True)
        h = x * 2
        h[:, 0].mul_(h[:, 1])
        with pytest.raises(error, match="modified by an in-?place operation"):
            h.sum().backward()
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], dtype=mg.float64, requires_grad=True)
    h = x * 2
    h[:, 0].add_(h[:, 1])
    h.sum().backward()
    assert h.tolist() == [[6.0, 4.0], [14.0, 8.0]]
    assert x.grad.tolist() == [[2.0, 4.0], [2.0, 4.0]]


def test_every_view_sees_the_write_and_counts_it():
    x = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=mg.float64, requires_grad=True)
    h = x * 1
    t, flat, row = h.T, h.reshape(-1), h[1]
    t[0].mul_(10.0)                                 # h[:, 0]
    assert h.tolist() == [[10.0, 2.0, 3.0], [40.0, 5.0, 6.0]]
    assert flat.tolist() == [10.0, 2.0, 3.0, 40.0, 5.0, 6.0] and row.tolist() == [40, 5, 6]
    assert h._version == t._version == flat._version == row._version == 1
    (row * mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64)).sum().backward()
    assert x.grad.tolist() == [[0.0, 0.0, 0.0], [10.0, 2.0, 3.0]]


_BUFFER = mg.zeros(2, 3, dtype=mg.float64)         # needs no grad: its rows are views
_BUFFER_ROW = _BUFFER[1]                            # one of them alive, the graph's unaware


def test_a_numpy_array_sharing_the_memory_sees_the_write():
    """Written into the memory itself, so a holder of it (h.numpy(), mg.from_numpy) sees
    the new values, as a plain write's (an unshared recorded write refuses it instead)."""
    x = mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64, requires_grad=True)
    h = x * 2
    held, v = h.numpy(), h[1:]
    v.mul_(x[1:])
    assert held.tolist() == [2.0, 8.0, 18.0] == h.tolist()
    h.sum().backward()
    assert x.grad.tolist() == [2.0, 8.0, 12.0]


@pytest.mark.parametrize("make, match", [
    (lambda h, x: x[0], "a view of a leaf tensor that requires grad"),
    (lambda h, x: h.detach(), "the graph does not lead to"),
    (lambda h, x: mg.Tensor(h), "the graph does not lead to"),
    (lambda h, x: h.unbind(0)[0], "the graph does not lead to"),
    (lambda h, x: _BUFFER[0], "the graph does not lead to"),   # PyTorch writes it
])
def test_a_write_autograd_cannot_follow_is_refused(make, match):
    """Refused, nothing changed: a view of a leaf (as PyTorch); memory shared with a tensor
    the graph does not reach (its history could not follow): a detach, an alias, unbind's
    slice (PyTorch refuses those too), a second view alive of a tensor that needs no grad
    (test_inplace_views_outside_graph.py writes a lone one)."""
    x = mg.ones(2, 3, dtype=mg.float64, requires_grad=True)
    h = x * 2
    t = make(h, x)
    w = mg.full(t.shape, 3.0, dtype=mg.float64, requires_grad=True)
    with pytest.raises(RuntimeError, match=match):
        t.mul_(w)
    assert h.tolist() == [[2.0] * 3] * 2 and h._version == 0 and t._version == 0
    h.sum().backward()
    assert x.grad.tolist() == [[2.0] * 3] * 2


def test_a_view_made_under_no_grad_refuses_a_write_of_its_base():
    """PyTorch refuses to use such a view after the write (its history is ambiguous);
    here the write itself is refused."""
    h = mg.ones(2, 3, requires_grad=True) * 2
    with mg.no_grad():
        v = h[0]
    with pytest.raises(RuntimeError, match="view made under no_grad"):
        h.mul_(3.0)
    assert v.tolist() == [2.0] * 3


def test_a_broadcast_view_is_refused():
    h = mg.ones(3, requires_grad=True) * 2
    with pytest.raises(ValueError, match="broadcast view"):
        h.expand(2, 3).mul_(2.0)
    assert h._version == 0


def test_a_failed_write_leaves_the_graph_as_it_was():
    x = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
    h = x * 2
    v, y = h[0], h * 3
    with pytest.raises(ValueError):
        h[None].add_(mg.ones(3, dtype=mg.float64, requires_grad=True))
    assert h.tolist() == [2.0, 4.0] and h._version == 0
    (y.sum() + v * 5).backward()
    assert x.grad.tolist() == [16.0, 6.0]


def test_no_reference_cycle():
    """Put keeps positions, not the tensor: h and its memory go with the last name."""
    x = mg.ones(2, 3, requires_grad=True)
    gc.disable()
    try:
        h = x * 2
        v = h[:, 1]
        v.mul_(x[:, 0])
        gone = weakref.ref(h), weakref.ref(h._ctx.inputs[0]), weakref.ref(v)
        del h, v
        assert all(r() is None for r in gone)
    finally:
        gc.enable()


def test_under_no_grad_a_write_is_a_plain_one():
    x = mg.ones(2, 3, requires_grad=True)
    h = x * 2
    v = h[0]
    ctx = h._ctx
    with mg.no_grad():
        v.mul_(3.0)
    assert h._ctx is ctx and h.tolist()[0] == [6.0] * 3 and h._version == 1
