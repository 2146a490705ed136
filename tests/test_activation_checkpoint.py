"""Activation checkpointing (minigrad/utils/checkpoint.py): a checkpointed call gives the
same outputs and the same gradients as the plain call, for every tensor it reads (its
arguments, the parameters it uses, activations captured from outside), keeps none of its
activations, draws the same dropout mask again, and refuses what would make the recomputation
differ."""
import gc
import threading
import weakref

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad.utils.checkpoint import checkpoint, checkpoint_sequential


def _grads(tensors):
    return [None if t.grad is None else t.grad.numpy().copy() for t in tensors]


def _assert_same(a, b, tol=1e-6):
    assert len(a) == len(b)
    for u, v in zip(a, b):
        assert (u is None) == (v is None)
        if u is not None:
            np.testing.assert_allclose(u, v, rtol=tol, atol=tol)


class _Case:
    """A small block that reads an argument, two parameters, a captured leaf and a captured
    non-leaf activation, with dropout; run plainly or checkpointed from the same seed."""

    def __init__(self, device="cpu"):
        mg.manual_seed(0)
        self.lin = mg.nn.Linear(4, 4).to(device)
        self.x = mg.randn(3, 4, requires_grad=True, device=device)
        self.leaf = mg.randn(4, requires_grad=True, device=device)
        self.m0 = mg.randn(3, 4, requires_grad=True, device=device)
        self.device = device

    def block(self, h, scale=1.0):
        z = (self.lin(h) * self.mem + self.leaf * scale).tanh()
        return F.dropout(z, 0.3, training=True)

    def run(self, use_checkpoint, create_graph=False):
        watched = [self.x, self.leaf, self.m0] + list(self.lin.parameters())
        for t in watched:
            t.grad = None
        self.mem = self.m0 * 2          # an activation the block captures, not an argument
        self.mem.retain_grad()
        mg.manual_seed(7)
        y = checkpoint(self.block, self.x, scale=0.5) if use_checkpoint \
            else self.block(self.x, scale=0.5)
        # the captured activation also reaches the loss outside the block: its gradient
        # is the sum of both paths, each counted once
        loss = (y ** 2).sum() + (self.mem * self.x).sum()
        loss.backward(create_graph=create_graph)
        out = [y.numpy().copy()] + _grads(watched + [self.mem])
        if create_graph:
            for t in watched:
                t.grad, g = None, t.grad
                setattr(self, "_g_" + str(id(t)), g)
            (getattr(self, "_g_" + str(id(self.x))) ** 2).sum().backward()
            out += _grads(watched)
        return out


def test_same_outputs_and_gradients_as_the_plain_call():
    case = _Case()
    _assert_same(case.run(False), case.run(True))


def test_second_order_gradients_through_a_checkpoint():
    case = _Case()
    _assert_same(case.run(False, create_graph=True), case.run(True, create_graph=True),
                 tol=1e-5)


def test_gradcheck_through_a_checkpoint_in_float64():
    w = mg.randn(3, 3, dtype="float64", requires_grad=True)

    def f(x, c):
        return checkpoint(lambda a: (a @ w).sin() * c + a.exp(), x)

    x = mg.randn(2, 3, dtype="float64", requires_grad=True)
    c = mg.randn(2, 3, dtype="float64", requires_grad=True)
    assert mg.gradcheck(f, (x, c))
    assert mg.gradgradcheck(f, (x, c))


def test_the_activations_inside_are_not_kept():
    refs = []

    def block(h):
        inner = h.exp() * 3            # an activation only backward would read
        refs.append(weakref.ref(inner))
        return inner.sin()

    x = mg.randn(5, requires_grad=True)
    kept = block(x)
    gc.collect()
    assert refs[-1]() is not None      # the plain call keeps it for backward
    del kept
    y = checkpoint(block, x)
    gc.collect()
    assert refs[-1]() is None          # the checkpointed one dropped it
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (np.cos(3 * np.exp(x.numpy())) * 3 *
                                                np.exp(x.numpy())), rtol=1e-5)


def test_a_boundary_tensor_hooks_and_retain_grad_run_once():
    calls = []
    x = mg.randn(3, requires_grad=True)
    h = x * 2
    h.register_hook(lambda g: calls.append(g.numpy().copy()))
    h.retain_grad()
    y = checkpoint(lambda a: (a * a).sum(), h)
    y.backward()
    assert len(calls) == 1
    np.testing.assert_allclose(h.grad.numpy(), 2 * h.numpy(), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), 4 * h.numpy(), rtol=1e-6)


def test_captured_tensors_that_depend_on_each_other_are_not_counted_twice():
    x = mg.randn(4, requires_grad=True)
    a = x.exp()
    b = a * 3                          # b depends on a; the block reads both

    def plain():
        return (a * b).sin().sum()

    plain().backward(retain_graph=True)
    expected, x.grad = x.grad.numpy().copy(), None
    checkpoint(plain).backward()
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-6)


def test_several_outputs_kwargs_and_a_passed_through_argument():
    w = mg.randn(3, requires_grad=True)

    def f(x, k=1.0):
        return {"y": (x * w).sum() * k, "same": x, "n": 3, "pair": [x.exp(), None]}

    def loss(out):
        return out["y"] + (out["same"] * 2).sum() + out["pair"][0].sum()

    x = mg.randn(3, requires_grad=True)
    loss(f(x, k=2.0)).backward()
    expected = _grads([x, w])
    x.grad = w.grad = None
    out = checkpoint(f, x, k=2.0)
    assert out["n"] == 3 and out["same"] is x and out["pair"][1] is None
    loss(out).backward()
    _assert_same(_grads([x, w]), expected)


def test_mg_grad_and_retain_graph_through_a_checkpoint():
    w = mg.randn(3, requires_grad=True)
    x = mg.randn(3, requires_grad=True)
    y = checkpoint(lambda a: (a * w).tanh().sum(), x)
    gx, gw = mg.grad(y, [x, w], retain_graph=True)
    t = np.tanh(x.numpy() * w.numpy())
    np.testing.assert_allclose(gx.numpy(), (1 - t ** 2) * w.numpy(), rtol=1e-5)
    np.testing.assert_allclose(gw.numpy(), (1 - t ** 2) * x.numpy(), rtol=1e-5)
    y.backward(retain_graph=True)
    y.backward()                       # twice: the segment is run again each time
    np.testing.assert_allclose(w.grad.numpy(), 2 * gw.numpy(), rtol=1e-6)


def test_nested_checkpoints():
    w = mg.randn(4, requires_grad=True)

    def inner(a):
        return (a * w).sin()

    def outer(a):
        return checkpoint(inner, a.exp()).tanh() * w

    x = mg.randn(4, requires_grad=True)
    outer(x).sum().backward()
    expected = _grads([x, w])
    x.grad = w.grad = None
    checkpoint(outer, x).sum().backward()
    _assert_same(_grads([x, w]), expected)


def test_dropout_draws_the_forward_mask_again_unless_told_not_to():
    x = mg.ones(2000, requires_grad=True)

    def drop(a):
        return F.dropout(a, 0.5, training=True)

    mg.manual_seed(3)
    y = checkpoint(drop, x)
    y.sum().backward()                 # the gradient is the forward's mask (times 2)
    np.testing.assert_array_equal(x.grad.numpy(), y.numpy())
    after = mg.rand(1).item()
    mg.manual_seed(3)
    drop(mg.ones(2000))
    assert mg.rand(1).item() == after  # the recomputation left the generator where it was
    x.grad = None
    mg.manual_seed(3)
    y = checkpoint(drop, x, preserve_rng_state=False)
    y.sum().backward()
    assert not np.array_equal(x.grad.numpy(), y.numpy())


def test_checkpoint_sequential_matches_the_plain_sequential():
    mg.manual_seed(1)
    model = mg.nn.Sequential(*[mg.nn.Sequential(mg.nn.Linear(6, 6), mg.nn.GELU())
                               for _ in range(5)])
    x = mg.randn(2, 6, requires_grad=True)
    model(x).pow(2).sum().backward()
    expected = _grads([x] + list(model.parameters()))
    for segments in (1, 2, 5):
        model.zero_grad()
        x.grad = None
        checkpoint_sequential(model, segments, x, use_reentrant=False).pow(2).sum().backward()
        _assert_same(_grads([x] + list(model.parameters())), expected)
    with pytest.raises(ValueError, match="segments must be an int from 1 to the number"):
        checkpoint_sequential(model, 0, x)


def test_without_grad_mode_it_is_the_plain_call():
    x = mg.randn(3, requires_grad=True)
    with mg.no_grad():
        y = checkpoint(lambda a: a * 2, x)
    assert not y.requires_grad
    z = checkpoint(lambda a: a * 2, mg.randn(3))        # nothing needs a gradient
    assert not z.requires_grad and z.is_leaf


def test_an_argument_changed_inside_is_refused():
    h = mg.randn(3, requires_grad=True) * 1

    def f(a):
        a.mul_(2)
        return a.sin()

    with pytest.raises(RuntimeError, match="changed its Tensor argument 0 .* in place"):
        checkpoint(f, h)


def test_a_boundary_tensor_changed_before_backward_is_refused():
    h = mg.randn(3, requires_grad=True) * 1
    y = checkpoint(lambda a: a.sin(), h)
    with mg.no_grad():
        h.add_(1)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()


def test_a_function_that_differs_when_run_again_is_refused():
    x = mg.randn(4, requires_grad=True)
    runs = []

    def grows(a):
        runs.append(1)
        return a[:len(runs) + 1].exp()

    y = checkpoint(grows, x)
    with pytest.raises(RuntimeError, match=r"its output 0 was \(2,\) float32 in the "
                                           r"forward, \(3,\) float32 now"):
        y.sum().backward()

    def new_leaf(a):
        return a * mg.ones(4, requires_grad=True)

    y = checkpoint(new_leaf, x)
    with pytest.raises(RuntimeError, match="that it did not reach in the forward"):
        y.sum().backward()


def test_bad_arguments():
    with pytest.raises(TypeError, match="first argument must be the function"):
        checkpoint(mg.randn(2), mg.randn(2))
    with pytest.raises(ValueError, match="determinism_check must be 'default' or 'none'"):
        checkpoint(lambda a: a, mg.randn(2), determinism_check="strict")


def test_matches_torch_checkpoint_on_a_module_stack():
    torch = pytest.importorskip("torch")
    from torch.utils.checkpoint import checkpoint as torch_checkpoint
    mg.manual_seed(2)
    blocks = [mg.nn.Sequential(mg.nn.LayerNorm(8), mg.nn.Linear(8, 8), mg.nn.GELU())
              for _ in range(3)]
    tblocks = [torch.nn.Sequential(torch.nn.LayerNorm(8), torch.nn.Linear(8, 8),
                                   torch.nn.GELU()) for _ in range(3)]
    for b, tb in zip(blocks, tblocks):
        tb.load_state_dict({k: torch.tensor(v.numpy()) for k, v in b.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
    h, th = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    a, ta = h, th
    for b, tb in zip(blocks, tblocks):
        a = a + checkpoint(b, a, use_reentrant=False)
        ta = ta + torch_checkpoint(tb, ta, use_reentrant=False)
    (a ** 2).mean().backward()
    (ta ** 2).mean().backward()
    np.testing.assert_allclose(h.grad.numpy(), th.grad.numpy(), rtol=1e-4, atol=1e-6)
    for b, tb in zip(blocks, tblocks):
        for p, tp in zip(b.parameters(), tb.parameters()):
            np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-4, atol=1e-6)


def test_on_every_device(device):
    case = _Case(device)
    _assert_same(case.run(False), case.run(True))


def test_on_the_spy_device(spy):
    case = _Case(spy)
    _assert_same(case.run(False), case.run(True))


def test_a_tensor_returned_twice_is_one_output():
    x = mg.randn(3, requires_grad=True)
    a, b = checkpoint(lambda t: (lambda y: (y, y))(t.exp()), x)
    assert a is b
    (a * 2 + b * 3).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 5 * np.exp(x.numpy()), rtol=1e-6)


def test_a_keyword_tensor_argument_changed_inside_is_refused():
    # mask=m doubled inside: backward, running it again, would double it again (PyTorch
    # gives the gradient 4 there, silently)
    def f(a, mask=None):
        mask.mul_(2)
        return a * mask

    with pytest.raises(RuntimeError, match="changed its Tensor argument 'mask' .* in place"):
        checkpoint(f, mg.randn(4, requires_grad=True), mask=mg.ones(4))


def test_an_output_viewing_what_the_function_reads_can_be_written_in_place():
    # as without checkpointing (and PyTorch): a view of an argument, written, writes the
    # argument; the argument written changes the view
    def f(a):
        v = a[:2]
        return v, v.exp()

    x = mg.randn(4, requires_grad=True)
    h = x * 1
    v, e = checkpoint(f, h)
    v.mul_(3)
    (h * h).sum().backward()
    scale = np.array([3, 3, 1, 1], dtype=np.float32)
    np.testing.assert_allclose(x.grad.numpy(), 2 * scale ** 2 * x.numpy(), rtol=1e-6)
    x.grad = None
    h = x * 1
    v, e = checkpoint(f, h)
    e.sum().backward(retain_graph=True)          # the other output still goes through
    np.testing.assert_allclose(x.grad.numpy()[:2], np.exp(x.numpy()[:2]), rtol=1e-6)
    h.mul_(2)
    x.grad = None
    v.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [2, 2, 0, 0])


def test_outputs_viewing_an_activation_inside_can_be_written_in_place():
    def both(a):                       # the activation and a view of it
        h = a.exp()
        return h, h[:2]

    def halves(a):                     # two views of an activation not returned
        h = a.exp()
        return h[:2], h[2:]

    def write_the_view(out):
        out[1].mul_(3)
        return (out[0] * out[0]).sum()

    def write_one_half(out):
        out[0].mul_(3)
        return (out[0] * out[1]).sum()

    for f, loss in ((both, write_the_view), (halves, write_one_half)):
        grads = []
        for use_checkpoint in (False, True):
            x = mg.tensor([0.1, 0.2, 0.3, 0.4], requires_grad=True)
            loss(checkpoint(f, x) if use_checkpoint else f(x)).backward()
            grads.append(x.grad.numpy())
        np.testing.assert_allclose(grads[1], grads[0], rtol=1e-6)


def test_an_inner_checkpoint_returning_a_view_inside_an_outer_one():
    w = mg.randn(4, requires_grad=True)

    def outer(a):
        v, s = checkpoint(lambda b: (b[1:], (b * w).sin()), a.exp())
        return v * s[1:]

    x = mg.randn(4, requires_grad=True)
    outer(x).sum().backward()
    expected = _grads([x, w])
    x.grad = w.grad = None
    checkpoint(outer, x).sum().backward()
    _assert_same(_grads([x, w]), expected)


def test_a_tensor_read_changed_in_place_after_the_forward_is_refused():
    # recorded (in grad mode): the tensor gets a new history; the error names it
    w = mg.randn(4, requires_grad=True)
    h = mg.randn(4, requires_grad=True) * 1
    y = checkpoint(lambda a: a * h, w)
    h.add_(1)
    with pytest.raises(RuntimeError, match="changed in place after the forward"):
        y.sum().backward()


def test_retain_grad_inside_the_function_reaches_the_forward_tensor():
    x = mg.randn(4, requires_grad=True)
    kept = []

    def f(a):
        h = a.exp()
        h.retain_grad()
        kept.append(h)
        return h.sin()

    checkpoint(f, x).sum().backward()
    np.testing.assert_allclose(kept[0].grad.numpy(), np.cos(np.exp(x.numpy())), rtol=1e-6)


def test_checkpoint_sequential_makes_the_pieces_pytorch_makes():
    # 5 functions in 4 segments: PyTorch checkpoints [0], [1], [2] and runs [3, 4] plainly
    runs = []

    def make(i):
        def f(x):
            runs.append(i)
            return x.sin()
        return f

    y = checkpoint_sequential([make(i) for i in range(5)], 4, mg.ones(2, requires_grad=True))
    runs.clear()
    y.sum().backward()
    assert sorted(runs) == [0, 1, 2]


def test_a_generator_holding_a_lock_is_copied(spy):
    # CuPy's generator holds a threading.Lock (in its bit generator), which deepcopy
    # refuses; the spy device's generator is given one
    from minigrad import backend
    rng = backend.get(spy).rng
    rng.bits = type("Bits", (), {})()
    rng.bits.lock = threading.Lock()
    x = mg.ones(200, requires_grad=True, device=spy)
    y = checkpoint(lambda a: F.dropout(a, 0.5, training=True), x)
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), y.numpy())
