"""In-place writes that autograd records (ops/inplace_autograd.py): values, gradients and
second order as PyTorch's; what stays with the old value (hooks, saved outputs) and what
moves with the tensor (retain_grad, version); the refusals."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.tensor import _live_consumers
from op_helpers import OpCase, check_vs_torch, check_gradcheck, check_double_backward_vs_torch


def _set(h, index, v):
    h[index] = v
    return h


def _iadd_held(h, o):
    held = [h]                  # held twice: recorded in place, not rebound
    h += o
    return held[0]


# fn(x, w) -> a non-leaf changed in place; the same code runs on torch tensors
CASES = [
    OpCase("relu_", lambda x, w: (x * w).relu_(), ((2, 3), (2, 3)), domain="nonzero"),
    OpCase("mul_", lambda x, w: (x + 1).mul_(w), ((2, 3), (3,))),
    OpCase("add_alpha", lambda x, w: (x * 2).add_(w, alpha=3), ((2, 3), (2, 3))),
    OpCase("div_sub_", lambda x, w: (x + 3).div_(w).sub_(x), ((2, 3), (2, 3)),
           domain=("real", "positive")),
    OpCase("clamp_", lambda x, w: (x - w).clamp_(-0.5, 0.7), ((2, 3), (2, 3)),
           domain="nonzero"),
    OpCase("masked_fill_", lambda x, w: (x * w).masked_fill_(w > 0, 0.0), ((2, 3), (2, 3)),
           domain="nonzero"),
    OpCase("setitem_int", lambda x, w: _set(x * 2, (0, 1), w[1, 2] * w[0, 0]),
           ((2, 3), (2, 3))),
    OpCase("setitem_slice_broadcast", lambda x, w: _set(x * x, (slice(None), slice(0, 2)),
                                                        w * 3), ((2, 3), (1, 2))),
    OpCase("setitem_leading_ones", lambda x, w: _set(x * 2, 1, w), ((2, 3), (1, 1, 3))),
    # PyTorch's convention, not the derivative (the last write wins): every repeated index
    # gets its gradient; so no finite-difference check
    OpCase("setitem_repeated_index", lambda x, w: _set(
        x * 2, mg_or_torch(x).tensor([0, 0, 2], device=x.device), w * w), ((4,), (3,)),
        gradgrad=False),
    OpCase("setitem_mask", lambda x, w: _set(x * 2, x > 0, w[x > 0]), ((2, 3), (2, 3)),
           domain="nonzero"),
    OpCase("setitem_int_and_array", lambda x, w: _set(
        x * 2, (0, slice(None), mg_or_torch(x).tensor([0, 2], device=x.device)), w),
        ((2, 3, 4), (3, 2))),
    OpCase("zero_", lambda x, w: (x * w).zero_() + w, ((2, 3), (2, 3))),
    OpCase("fill_tensor", lambda x, w: (x * 2).fill_(w.sum()), ((2, 3), (3,))),
    OpCase("copy_into_buffer", lambda x, w: mg_or_torch(x).zeros(
        2, 3, dtype=x.dtype, device=x.device).copy_(x * w), ((2, 3), (3,))),
    OpCase("iadd_held", lambda x, w: _iadd_held(x * w, w * w), ((2, 3), (2, 3))),
    OpCase("chain", lambda x, w: _set((x * w).add_(1).mul_(2), 0, w[1]).add_(x),
           ((2, 3), (2, 3))),
    # a view of an intermediate only the graph holds (PyTorch's logsumexp and topk give
    # memory of their own; here a reshape of the sum, a slice of the sort)
    OpCase("logsumexp_result", lambda x, w: x.logsumexp(1).mul_(w), ((2, 3), (2,)),
           torch_fn=lambda x, w: x.logsumexp(1) * w),     # (PyTorch saved the result)
    OpCase("topk_values", lambda x, w: _set(x.topk(2, 1)[0], (slice(None), 0), w),
           ((2, 3), (2,))),
    OpCase("row_of_a_product", lambda x, w: (x * w)[1].add_(w[0], alpha=2), ((2, 3), (2, 3))),
]


def mg_or_torch(t):
    """The library t comes from (the cases' code runs on both)."""
    if isinstance(t, mg.Tensor):
        return mg
    import torch
    return torch


@pytest.mark.parametrize("case", CASES, ids=str)
def test_as_torch(case, device):
    check_vs_torch(case, device, "float64")
    check_vs_torch(case, device, "float32")


@pytest.mark.parametrize("case", [c for c in CASES if c.gradgrad], ids=str)
def test_gradcheck_and_second_order(case, device):
    check_gradcheck(case, device)
    check_double_backward_vs_torch(case, device)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_on_the_gpu_stand_in(case, spy):
    """No op reaches NumPy behind the backend's back; values and gradients as on the CPU."""
    results = []
    for device in ("cpu", spy):
        xs = [mg.tensor(a, device=device, requires_grad=True) for a in case.arrays()]
        out = case.fn(*xs)
        out.sum().backward()
        assert out.device == device and all(x.grad.device == device for x in xs)
        results.append([out.numpy()] + [x.grad.numpy() for x in xs])
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_an_op_that_saved_its_output_keeps_it():
    """exp saves its output; the write goes to a new array, so exp's gradient is right
    (PyTorch refuses this backward instead)."""
    x = mg.tensor([0.5, -1.0], dtype=mg.float64, requires_grad=True)
    y = x.exp()
    y.add_(1.0)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), np.exp([0.5, -1.0]))


def test_hooks_see_the_old_value_retain_grad_the_new():
    """As PyTorch: a hook registered before the write fires with the old value's gradient;
    retain_grad keeps the new value's; the version counts the write; x is no leaf."""
    x = mg.ones(3, dtype=mg.float64, requires_grad=True)
    h = x * 2
    seen = []
    h.register_hook(seen.append)
    h.retain_grad()
    h.mul_(3.0)
    (h * mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64)).sum().backward()
    assert seen[0].tolist() == [3.0, 6.0, 9.0] and h.grad.tolist() == [1.0, 2.0, 3.0]
    assert h._version == 1 and not h.is_leaf and x.grad.tolist() == [6.0, 12.0, 18.0]


def test_refusals_say_why_and_change_nothing():
    x = mg.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        x.relu_()
    h = x * 2
    alias = h.detach()                      # memory the graph does not lead to from h
    for t in (h, alias):
        with pytest.raises(RuntimeError, match="shares its memory with another"):
            t.mul_(x[0, 0])
    y = x * 2 + 1
    with pytest.raises(TypeError, match="int64, which has no gradient"):
        mg.zeros(3, dtype=mg.int64)[0] = x[0, 0]
    h = x * 2
    with pytest.raises(ValueError, match="a value of shape .4,. cannot be assigned"):
        h[0] = mg.ones(4, requires_grad=True)
    with pytest.raises(ValueError, match="could not be broadcast"):
        h.add_(mg.ones(4, requires_grad=True))
    assert h.tolist() == [[2.0] * 3] * 2 and h._version == 0
    (h.sum() + y.sum()).backward()                        # the graph is as it was
    assert x.grad.tolist() == [[4.0] * 3] * 2


@pytest.mark.parametrize("fails", [False, True])
def test_ops_that_used_the_tensor_keep_its_old_value(fails):
    """As PyTorch: an op that used h before the write goes on reading h's old value and
    sending its gradient there (here it takes `old` as its input), even one that reads
    the values, where PyTorch refuses that backward. A write that fails leaves them h's."""
    x = mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64, requires_grad=True)
    h = x * 2
    plus, square, total = h + 1, h * h, h.sum()          # Add reads no value, Mul does
    if fails:
        with pytest.raises(ValueError):
            h.div_(mg.ones(2, dtype=mg.float64))
    else:
        h.div_(total)                                     # h / Σh, Σh computed from h
    (plus.sum() + square.sum() + h.sum() * 10).backward()
    two_x = 2 * np.array([1.0, 2.0, 3.0])
    # d/dx of Σ(2x + 1) + Σ(2x)² + 10·Σ(h): h / Σh sums to 1 (gradient 0), or h = 2x
    expected = 2 + 8 * two_x / 2 + (0 if not fails else 20)
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12)


def test_a_view_of_an_intermediate_only_the_graph_holds_is_written_as_its_own():
    """Nothing else sees such memory (x += y held by one name: rebound); a view of a
    detach is refused (the graph does not lead to it), a broadcast view too, as a plain
    write and PyTorch. (Views of held tensors: test_inplace_views.py.)"""
    x = mg.ones(2, 3, dtype=mg.float64, requires_grad=True)
    h = x * 2
    with pytest.raises(RuntimeError, match="shares its memory with another"):
        h.detach()[0].mul_(x[0, 0])
    with pytest.raises(ValueError, match="broadcast view"):
        (x * 2).expand(2, 2, 3).mul_(2.0)
    assert h._version == 0
    lse = x.logsumexp(1)
    lse += x[:, 0]
    flat = (x * 3).reshape(-1)
    alias = flat
    flat += 1.0                                           # held twice: recorded
    assert alias is flat and flat._version == 1 and flat.tolist() == [4.0] * 6
    (lse.sum() + flat.sum()).backward()                   # softmax (1/3), x[:, 0], 3x
    assert lse.tolist() == pytest.approx([2 + np.log(3)] * 2)
    np.testing.assert_allclose(x.grad.numpy(), [[1 / 3 + 1 + 3, 1 / 3 + 3, 1 / 3 + 3]] * 2)


def test_after_backward_a_used_tensor_may_change():
    """Backward released the op that used b, so nothing can route a gradient wrong (the
    slow check, a look at who refers to b, runs only for a tensor an op once used)."""
    w = mg.ones(3, requires_grad=True)
    b = mg.full((3,), 2.0)
    (b * w).sum().backward()
    b.mul_(w)
    b.sum().backward()
    assert w.grad.tolist() == [4.0] * 3                  # 2 + 2
    b = mg.full((3,), 2.0)
    z = (b * w).sum()                                    # alive: its Mul still uses b,
    b.mul_(w)                                            # which it reads as it was
    (z + b.sum()).backward()
    assert w.grad.tolist() == [8.0] * 3                  # 4 + 2 + 2


def test_no_grad_writes_are_not_recorded():
    """As PyTorch: under no_grad a write is a plain one; an op that saved the tensor then
    refuses to backward."""
    x = mg.ones(3, requires_grad=True)
    h = x * 2
    z = (h * x).sum()                                     # saves h for x's gradient
    with mg.no_grad():
        h.mul_(3.0)
    assert h._ctx is not None and h._version == 1
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        z.backward()


@pytest.mark.parametrize("write, factor", [
    (lambda h: h.copy_(h), 2), (lambda h: _set(h, ..., h), 2), (lambda h: _iadd_held(h, h), 4),
    (lambda h: h.add_(h, alpha=2), 6), (lambda h: h.sub_(h, alpha=-1), 4)])
def test_the_tensor_as_its_own_operand_is_its_old_value(write, factor):
    """h.copy_(h), h += h ...: the operand h is h before the write (its old value), not the
    new h, which would be an input of its own node: a cycle losing that gradient. Values
    and gradients as PyTorch's: h becomes factor·x, so d/dx of sum(h·c) is factor·c."""
    x = mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64, requires_grad=True)
    c = mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64)
    h = write(x * 2)
    assert h.tolist() == [factor * v for v in (1.0, 2.0, 3.0)]
    (h * c).sum().backward()
    assert x.grad.tolist() == [factor * v for v in (1.0, 2.0, 3.0)]


def test_a_product_with_itself_gets_the_product_rule():
    """h.mul_(h) is h² of the old h (PyTorch refuses this backward: Mul saved h)."""
    x = mg.tensor([1.0, 2.0, 3.0], dtype=mg.float64, requires_grad=True)
    h = (x * 2).mul_(x * 2)                               # 4x²
    held = x * 2
    held.mul_(held)
    (h.sum() + held.sum()).backward()
    assert x.grad.tolist() == [16.0, 32.0, 48.0]          # 2 · 8x


@pytest.mark.parametrize("alias", ["from_numpy", "numpy", "Tensor(array)", "as_tensor_slice"])
def test_memory_held_outside_the_tensor_is_refused(alias):
    """A recorded write gives the tensor new memory (and x += y held by one name rebinds x):
    a NumPy array sharing the old one (mg.from_numpy's promise: a write to either is seen by
    the other) would silently keep the old values, so it is refused; nothing changes."""
    a = np.zeros(4)
    if alias == "from_numpy":
        buf = mg.from_numpy(a)
    elif alias == "as_tensor_slice":
        buf = mg.as_tensor(a[1:3])
    elif alias == "Tensor(array)":
        buf = mg.Tensor(a)
    else:
        buf = mg.zeros(4, dtype=mg.float64)
        a = buf.numpy()
    w = mg.ones(buf.shape, dtype=mg.float64, requires_grad=True)
    for write in (lambda: buf.copy_(w), lambda: buf.add_(w)):
        with pytest.raises(RuntimeError, match="memory is also held outside it"):
            write()
    with pytest.raises(RuntimeError, match="memory is also held outside it"):
        buf += w                                          # not rebound: a would not see it
    assert not buf.requires_grad and buf._version == 0 and not a.any()
    del a
    if alias in ("numpy", "Tensor(array)"):               # no holder left: recorded
        buf.copy_(w)
        assert buf.requires_grad


def test_a_recorded_setitem_makes_no_reference_cycle():
    """The node of h[i] = v keeps the write function, which must not refer to h: h, its
    old value and their memory go as soon as the last name does, not at the next run of
    the garbage collector (on a GPU, memory it would not know to free)."""
    import gc
    import weakref
    x = mg.ones(1000, requires_grad=True)
    gc.disable()
    try:
        for write in (lambda h: _set(h, 0, x[1]), lambda h: h.copy_(x), lambda h: h.zero_()):
            h = write(x * 2)
            gone = weakref.ref(h), weakref.ref(h._ctx.inputs[0])
            del h
            assert gone[0]() is None and gone[1]() is None
    finally:
        gc.enable()


def test_refusals_name_an_out_of_place_spelling_that_exists():
    x = mg.ones(3, requires_grad=True)
    h = x * 2
    held = h.numpy()                                      # memory held outside: refused
    for write, fix in ((h.zero_, r"mg.zeros_like\(x\)"), (lambda: h.fill_(2.0),
                                                           r"mg.full_like\(x, value\)"),
                       (lambda: h.copy_(x), r"copy_: .* y = src.expand_as\(x\)")):
        with pytest.raises(RuntimeError, match=fix):
            write()
    assert held.tolist() == [2.0] * 3


def test_the_ops_that_used_a_tensor_are_found_without_the_garbage_collector(monkeypatch):
    """Each recorded op leaves a weak reference on its inputs, so a write finds the ops that
    used the old value without a heap search (which cost 7-50 ms a write)."""
    import gc

    def no_search(*args):
        raise AssertionError("searched the heap")
    monkeypatch.setattr(gc, "get_referrers", no_search)
    x = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
    h = x * 2
    z = h * 3                                             # used h's old value
    h.add_(1)
    (z.sum() + h.sum()).backward()
    assert x.grad.tolist() == [8.0, 8.0]                  # 3·2 through z, 2 through h


def test_a_tensor_used_in_every_step_keeps_a_short_list_of_its_uses():
    """A weight, a buffer, a batch reused across steps: the weak references of freed ops are
    dropped as they pile up, so the list stays short and a write still finds the live."""
    w = mg.ones(3, requires_grad=True)
    b = mg.full((3,), 2.0)
    for _ in range(1000):
        (b * w).sum().backward()
    assert len(w._uses) < 32 and len(b._uses) < 32
    kept = [(b * w).sum() for _ in range(40)]             # 40 live graphs use b
    assert len(_live_consumers(b)) == 40 and len(b._uses) < 80
    del kept
    assert _live_consumers(b) == []


def test_a_write_moves_the_inputs_of_ops_alone():
    """The ops that used h take its old value; a user's dict or object that holds h under
    the name `inputs` (a forward hook's `m.inputs = inp`) keeps h. An op whose attributes
    Python keeps in a dict of their own is still one."""
    x = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
    h = x * 2
    square = h * h
    vars(square._ctx)                                      # its attributes now a dict
    batch = {"inputs": (h, x)}
    lin = mg.nn.Linear(2, 2)
    lin.inputs = (h,)
    h.mul_(3)
    assert batch["inputs"][0] is h and lin.inputs[0] is h
    assert square._ctx.inputs[0] is not h
    (square.sum() + h.sum()).backward()
    assert x.grad.tolist() == [8.0 + 6, 16.0 + 6]           # d(2x)²/dx + d(6x)/dx

INTERNAL_VIEWS = {            # results that view an intermediate only their own ops hold
    "cross_entropy_none": lambda F, x, y: F.cross_entropy(x, y, reduction="none"),
    "nll_loss_none": lambda F, x, y: F.nll_loss(x.log_softmax(1), y, reduction="none"),
    "logsumexp": lambda F, x, y: x.logsumexp(1),
    "topk_values": lambda F, x, y: x.topk(2)[0],
    "slice_of_a_product": lambda F, x, y: (x * 2)[1:],
}


@pytest.mark.parametrize("name", INTERNAL_VIEWS)
def test_a_result_viewing_its_own_intermediate_is_written_as_torch(name):
    """No user code can reach the intermediate such a result views, so it does not make the
    result shared (PyTorch writes these too); a view of a tensor the user holds still is."""
    torch = pytest.importorskip("torch")
    x0 = np.random.default_rng(0).standard_normal((4, 5))
    grads = []
    # PyTorch with its saved tensors copied: it refuses logsumexp's backward after the
    # write (it saved the result), minigrad's old value keeps it; the gradient is the same
    keep = torch.autograd.graph.saved_tensors_hooks(lambda t: t.clone(), lambda t: t)
    for lib, F in ((mg, mg.nn.functional), (torch, torch.nn.functional)):
        x = lib.tensor(x0, requires_grad=True)
        with keep:
            out = INTERNAL_VIEWS[name](F, x, lib.tensor([1, 0, 4, 2]))
            out.mul_(3.0)
        out.sum().backward()
        grads.append(np.array(x.grad.tolist()))
    np.testing.assert_allclose(*grads, rtol=1e-10)
