"""The backward pass itself: deep graphs, accumulation, retain_graph, no_grad, detach,
mg.grad, second derivatives (a Hessian-vector product against the analytic Hessian), and
memory (saved arrays die after backward unless retain_graph=True)."""
import gc
import subprocess
import sys
import weakref
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad.backward import _topological_order

ROOT = Path(__file__).resolve().parents[1]


def test_10000_op_chain_backprops_without_recursion(device):
    x = mg.tensor(1.0, dtype=mg.float64, device=device, requires_grad=True)
    y = x
    for _ in range(10_000):
        y = y * 1.0001
    y.backward()
    np.testing.assert_allclose(x.grad.item(), 1.0001 ** 10_000, rtol=1e-9)
    z = x
    for _ in range(10_000):  # a deep graph that is dropped without backward frees cleanly
        z = z.tanh()
    del z
    gc.collect()


def test_gradients_accumulate(device):
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    (x * x + x).sum().backward()                                 # used several times: 2x + 1
    assert x.grad.tolist() == [3.0, 5.0]
    y = (x * 3).sum()
    y.backward(retain_graph=True)
    y.backward()                                                 # across two backward() calls
    assert x.grad.tolist() == [9.0, 11.0]


def test_retain_graph_allows_a_second_backward_and_freed_graph_raises(device):
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = (x.exp() * x).sum()
    y.backward(retain_graph=True)
    first = x.grad.numpy().copy()
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * first)
    with pytest.raises(RuntimeError, match="retain_graph=True"):
        y.backward()


def test_grads_are_fresh_arrays(device):
    """A .grad never aliases another tensor's .grad or the gradient the caller passed."""
    a, b = (mg.ones(3, device=device, requires_grad=True) for _ in range(2))
    g = mg.ones(3, device=device)
    (a + b).backward(g)
    a.grad.data[...] = 7.0
    assert b.grad.tolist() == [1.0, 1.0, 1.0] and g.tolist() == [1.0, 1.0, 1.0]


def test_grads_stored_with_create_graph_are_writable_and_own_arrays(device):
    """With create_graph=True too: a .grad is neither a read-only broadcast view (the gradient
    of sum is one) nor shared with another tensor's .grad, and stays differentiable."""
    a, b = (mg.ones(3, device=device, requires_grad=True) for _ in range(2))
    (a + b).sum().backward(create_graph=True)
    a.grad.zero_()
    assert a.grad.tolist() == [0.0] * 3 and b.grad.tolist() == [1.0] * 3
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    (x * x).sum().backward(create_graph=True)
    gx, x.grad = x.grad, None
    gx.sum().backward()                                   # d/dx Σ 2x = 2
    assert x.grad.tolist() == [2.0, 2.0]

def test_a_fresh_gradient_becomes_grad_without_a_copy(device, monkeypatch):
    """A fused op's gradients are new arrays nothing else holds (Function.fresh_grads): a leaf
    keeps its gradient as .grad as it is (one pass over every parameter less per step, and on
    a GPU one launch less per parameter), as PyTorch's AccumulateGrad steals such a buffer."""
    from minigrad.ops.linear import Linear
    made = []
    plain = Linear.backward_arrays

    def spy(self, g):
        out = plain(self, g)
        made.extend(out)
        return out
    monkeypatch.setattr(Linear, "backward_arrays", spy)
    x = mg.randn(4, 3, device=device, requires_grad=True)
    w = mg.randn(2, 3, device=device, requires_grad=True)
    b = mg.randn(2, device=device, requires_grad=True)
    F.linear(x, w, b).sum().backward()
    assert len(made) == 3 and all(t.grad._data is a for t, a in zip((x, w, b), made))
    # ...but not when a hook saw it (it may keep it), nor for a gradient another holds
    seen = []
    w.grad = None
    w.register_hook(lambda g: seen.append(g))
    F.linear(x, w).sum().backward()
    assert w.grad is not seen[0] and w.grad._data is not seen[0]._data
    w.grad.zero_()
    assert float(seen[0].abs().sum()) > 0


def test_a_hook_that_removes_itself_still_gets_its_own_gradient(device):
    """A one-shot hook (keeps g, or returns a tensor of the user's, then removes itself):
    the leaf's .grad is a copy either way, so zeroing it changes neither (as PyTorch)."""
    x = mg.ones(2, 3, device=device)
    w, w2 = (mg.ones(4, 3, device=device, requires_grad=True) for _ in range(2))
    saved, mine = [], mg.full((4, 3), 7.0, device=device)

    def keep(g):
        saved.append(g)
        h.remove()

    def replace(g):
        h2.remove()
        return mine
    h, h2 = w.register_hook(keep), w2.register_hook(replace)
    F.linear(x, w).sum().backward()
    F.linear(x, w2).sum().backward()
    w.grad.zero_()
    w2.grad.zero_()
    assert saved[0].tolist() == [[2.0] * 3] * 4 and mine.tolist() == [[7.0] * 3] * 4


def test_stolen_gradients_stay_separate(device):
    """Layer norm's weight and bias gradients are two rows of one array, and a tensor used
    twice gathers its gradient in place in the first array: each .grad still changes alone."""
    x = mg.randn(5, 4, device=device, requires_grad=True)
    w = mg.ones(4, device=device, requires_grad=True)
    b = mg.zeros(4, device=device, requires_grad=True)
    y = F.layer_norm(x, (4,), w, b)
    (y * mg.arange(4.0, device=device)).sum().backward()
    gb = b.grad.tolist()
    w.grad.zero_()
    assert b.grad.tolist() == gb == [0.0, 5.0, 10.0, 15.0] and w.grad.tolist() == [0.0] * 4
    a = mg.randn(3, 3, device=device, requires_grad=True)
    out = F.linear(a, a)                              # two fresh gradients for one leaf
    out.sum().backward()
    expect = (np.ones((3, 3)) @ a.numpy()) + (np.ones((3, 3)).T @ a.numpy())
    np.testing.assert_allclose(a.grad.numpy(), expect, rtol=1e-5)



def test_gathering_gradients_makes_no_graph_nodes(device, monkeypatch):
    """A tensor used several times gathers its gradients by adding arrays, without running
    an op (a graph node's bookkeeping per addition): backward applies no op at all here.
    (An LSTM step's h and c each gather two gradients: 100 ops fewer in 50 steps.)"""
    from minigrad import autograd
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    h = F.linear(x.reshape(2, 1), mg.full((1, 1), 3.0, device=device))
    y = (h + h + h).sum()                # h's three gradients are Add's, not the engine's
    applied = []
    plain = autograd.Function.apply.__func__
    monkeypatch.setattr(autograd.Function, "apply",
                        classmethod(lambda cls, *a, **k: applied.append(cls) or
                                    plain(cls, *a, **k)))
    y.backward()
    assert applied == [] and x.grad.tolist() == [9.0, 9.0]


def test_non_leaf_grad_is_not_stored(device):
    x = mg.ones(2, device=device, requires_grad=True)
    h = x * 2
    (h * h).sum().backward()
    assert h.grad is None and x.grad.tolist() == [8.0, 8.0]
    assert x.is_leaf and not h.is_leaf


def test_no_grad_builds_no_graph(device):
    x = mg.ones(2, device=device, requires_grad=True)
    with mg.no_grad():
        assert not mg.is_grad_enabled()
        y = (x * 2).exp().sum()
        with mg.enable_grad():
            z = x * 2
    assert mg.is_grad_enabled()
    assert not y.requires_grad and y._ctx is None
    assert z.requires_grad

    @mg.no_grad()
    def evaluate(t):
        return t * 3
    assert not evaluate(x).requires_grad and evaluate.__name__ == "evaluate"


def test_grad_mode_is_per_thread():
    """An evaluation thread inside no_grad() leaves the training thread recording (and the
    other way round), as PyTorch's thread-local grad mode."""
    import threading
    x = mg.ones(2, requires_grad=True)
    inside, done, seen = threading.Event(), threading.Event(), {}

    def evaluate():
        with mg.no_grad():
            inside.set()
            done.wait(5)
            seen["mode"], seen["graph"] = mg.is_grad_enabled(), (x * 2).requires_grad
        seen["after"] = mg.is_grad_enabled()

    worker = threading.Thread(target=evaluate)
    worker.start()
    assert inside.wait(5)
    assert mg.is_grad_enabled() and (x * 2).requires_grad   # the worker is in no_grad now
    with mg.no_grad():
        done.set()
        worker.join(5)
    assert seen == {"mode": False, "graph": False, "after": True}
    assert mg.is_grad_enabled()


def test_detach(device):
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    d = x.detach()
    assert not d.requires_grad and d.is_leaf
    assert np.shares_memory(d.numpy(), x.numpy()) or device != "cpu"
    (x * d).sum().backward()                                     # d is a constant
    assert x.grad.tolist() == [1.0, 2.0]


def test_mg_grad_returns_and_leaves_dot_grad_untouched(device):
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    w = mg.tensor([3.0, 4.0], device=device, requires_grad=True)
    gx, gw = mg.grad((x * w).sum(), [x, w])
    assert gx.tolist() == [3.0, 4.0] and gw.tolist() == [1.0, 2.0]
    assert x.grad is None and w.grad is None and not gx.requires_grad
    x.grad = mg.ones(2, device=device)
    gx, = mg.grad((x * x).sum(), x)
    assert gx.tolist() == [2.0, 4.0] and x.grad.tolist() == [1.0, 1.0]
    y = x * 2
    gy, = mg.grad(y, x, grad_outputs=mg.tensor([1.0, -1.0], device=device))
    assert gy.tolist() == [2.0, -2.0]
    unused = mg.ones(1, device=device, requires_grad=True)
    assert mg.grad((x * 2).sum(), [x, unused], allow_unused=True)[1] is None
    with pytest.raises(RuntimeError, match="allow_unused"):
        mg.grad((x * 2).sum(), [x, unused])


def test_mg_grad_with_one_tensor_asked_for_twice(device):
    """Every position of `inputs` gets its gradient (as torch.autograd.grad), also when two
    positions hold one tensor."""
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 3
    for create_graph in (False, True):
        gx, gy, gsame = mg.grad((y * y).sum(), [x, y, y], create_graph=create_graph,
                                retain_graph=True)
        assert gx.tolist() == [18.0, 36.0]
        assert gy.tolist() == gsame.tolist() == [6.0, 12.0]


def test_mg_grad_results_are_writable_and_each_its_own(device):
    """The gradients of a sum (a broadcast view inside the engine) and of x + y (one array
    for both) come back as PyTorch's do: writable, and a change to one leaves the others."""
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = mg.tensor([3.0, 4.0], device=device, requires_grad=True)
    gx, gy, gy2 = mg.grad((x + y).sum(), [x, y, y])
    gx.add_(1.0)
    gy.mul_(5.0)
    assert gx.tolist() == [2.0, 2.0] and gy.tolist() == [5.0, 5.0] and gy2.tolist() == [1, 1]
    w = mg.tensor([0.5, -1.0], device=device)
    gx, gy = mg.grad(((x + y) * w).sum(), [x, y])      # one writable array for both, before
    gx.add_(1.0)
    assert gy.tolist() == w.tolist()


def test_mg_grad_results_are_writable_on_the_gpu_stand_in(spy):
    """The same on the spy (CuPy's stand-in), whose arrays, as CuPy's, have no read-only
    flag: the broadcast view is told by its zero stride."""
    test_mg_grad_results_are_writable_and_each_its_own(spy)


def test_views_of_the_same_shape_are_new_nodes(device):
    """reshape/view/permute/transpose/expand/squeeze to the same shape make a new view node,
    as PyTorch: one made after the output was not used to compute it, and one made before
    gets its own gradient. flatten with nothing to merge returns the tensor itself (PyTorch
    too)."""
    x = mg.tensor([[1.0, 2.0]], device=device, requires_grad=True)
    views = [x.reshape(1, 2), x.view(1, 2), x.permute(0, 1), x.transpose(1, 1),
             x.expand(1, 2), x.squeeze(1), x.unsqueeze(0).squeeze(0), x.mT.mT]
    for v in views:
        assert v is not x and not v.is_leaf and v.shape == x.shape
    assert x.flatten(1, 1) is x and x.flatten(0, 0) is x
    out = (x * x).sum()
    with pytest.raises(RuntimeError, match="was not used"):
        mg.grad(out, [x.reshape(1, 2)], retain_graph=True)
    v = x.reshape(1, 2)
    out = (v * 3).sum() + (x * x).sum()
    gv, gx = mg.grad(out, [v, x])
    assert gv.tolist() == [[3.0, 3.0]] and gx.tolist() == [[5.0, 7.0]]
    e = x.expand(1, 2)                                   # writable, and writes reach x
    with mg.no_grad():
        e[0, 0] = 5.0
    assert x.tolist() == [[5.0, 2.0]] and x._version == e._version == 1


# ---- second derivatives --------------------------------------------------------------------
_A = np.array([[2.0, 1.0, 0.0], [0.5, 3.0, -1.0], [0.0, 2.0, 1.0]])


def _f(x, a):
    """f(x) = ½ xᵀAx + Σ eˣ + (x₀x₁)²"""
    return 0.5 * (x @ (a @ x)) + x.exp().sum() + (x[0] * x[1]) ** 2


def _hessian(x):
    h = (_A + _A.T) / 2 + np.diag(np.exp(x))
    h[0, 0] += 2 * x[1] ** 2
    h[1, 1] += 2 * x[0] ** 2
    h[0, 1] += 4 * x[0] * x[1]
    h[1, 0] += 4 * x[0] * x[1]
    return h


def test_hessian_vector_product_with_mg_grad(device):
    x0, v = np.array([0.3, -0.7, 1.1]), np.array([1.0, 2.0, -0.5])
    x = mg.tensor(x0, device=device, requires_grad=True)
    a = mg.tensor(_A, device=device)
    g, = mg.grad(_f(x, a), x, create_graph=True)
    assert g.requires_grad
    hv, = mg.grad((g * mg.tensor(v, device=device)).sum(), x, retain_graph=True)
    np.testing.assert_allclose(hv.numpy(), _hessian(x0) @ v, rtol=1e-12)
    rows = [mg.grad(g[i], x, retain_graph=True)[0].numpy() for i in range(3)]
    np.testing.assert_allclose(np.stack(rows), _hessian(x0), rtol=1e-12)


def test_hessian_vector_product_with_backward_create_graph(device):
    x0, v = np.array([0.3, -0.7, 1.1]), np.array([1.0, 2.0, -0.5])
    x = mg.tensor(x0, device=device, requires_grad=True)
    _f(x, mg.tensor(_A, device=device)).backward(create_graph=True)
    g, x.grad = x.grad, None
    assert g.requires_grad
    (g * mg.tensor(v, device=device)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), _hessian(x0) @ v, rtol=1e-12)


# ---- memory ----------------------------------------------------------------------------------
def _model(x, w, target):
    """A small graph through most fused ops, each of which saves arrays for backward."""
    h = F.layer_norm((x @ w).relu(), (4,))
    h = F.scaled_dot_product_attention(h, h, h, is_causal=True).gelu()
    return F.cross_entropy(h.reshape(-1, 4), target) + h.softmax(-1).max() + h.abs().mean()


def _weak_intermediates(loss):
    """Weak references to every intermediate tensor, its array, and every array an op saved."""
    refs = []
    for t in _topological_order([loss]):
        if t._ctx is None:
            continue
        kept = [id(a) for a in mg.backend._CONSTANTS.values()]   # reused by design
        saved = [v for v in vars(t._ctx).values()
                 if isinstance(v, type(loss._data)) and id(v) not in kept]
        refs += [weakref.ref(a) for a in saved]
        if t is not loss:
            refs += [weakref.ref(t), weakref.ref(t._data)]
    return refs


def _build(device):
    mg.manual_seed(0)
    x = mg.randn(2, 3, 5, device=device)
    w = mg.randn(5, 4, device=device, requires_grad=True)
    target = mg.randint(0, 4, (6,), device=device)
    loss = _model(x, w, target)
    refs = _weak_intermediates(loss)
    assert len(refs) > 30
    return loss, w, refs


def test_backward_frees_every_intermediate_while_loss_is_alive(device):
    loss, w, refs = _build(device)
    loss.backward()
    gc.collect()
    alive = [r() for r in refs if r() is not None]
    assert not alive, f"{len(alive)} intermediate arrays/tensors survived backward()"
    assert w.grad is not None and loss.item() == loss.item()


def test_retain_graph_keeps_them_until_the_loss_goes(device):
    loss, w, refs = _build(device)
    loss.backward(retain_graph=True)
    gc.collect()
    assert all(r() is not None for r in refs)
    loss.backward()                                              # still possible
    del loss
    gc.collect()
    assert all(r() is None for r in refs)


def test_mg_grad_frees_too(device):
    loss, w, refs = _build(device)
    mg.grad(loss, w)
    gc.collect()
    assert all(r() is None for r in refs)


def test_backward_lets_go_of_each_tensor_once_its_turn_is_over():
    """The engine holds no graph tensor past its turn in backward, so the peak memory of a
    backward pass is what is left to do, not the whole graph."""
    from minigrad.autograd import Function
    dead_when_probed = []

    class Probe(Function):          # the first op of the chain: its backward runs last
        def forward(self, a):
            return a.copy()

        def backward(self, g):
            dead_when_probed.extend(r() is None for r in later)
            return g

    x = mg.ones(3, requires_grad=True)
    h, later = Probe.apply(x), []
    for _ in range(5):
        h = h * 1.5
        later.append(weakref.ref(h))
    loss = h.sum()
    del h
    loss.backward()
    assert dead_when_probed == [True] * 5
    np.testing.assert_allclose(x.grad.numpy(), 1.5 ** 5)


# ---- the lesson demo ------------------------------------------------------------------------
def test_autograd_demo_runs(tmp_path):
    done = subprocess.run([sys.executable, str(ROOT / "demos" / "00_autograd.py")],
                          cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "digraph" in done.stdout and (tmp_path / "out" / "graph.dot").exists()
    assert "\n    TanhBackward0\n      AddBackward0\n" in done.stdout    # the walk, indented
    assert done.stdout.count("AccumulateGrad -> b.grad") == 3          # b is used 3 times


# ---- in-place changes after use: the version counter ---------------------------------------
def test_in_place_change_of_a_saved_output_fails_backward(device):
    a = mg.tensor([1., 2., 3.], requires_grad=True, device=device)
    y = a.exp()                                          # Exp's backward reads y
    with mg.no_grad():
        y[0] = 100.0
    with pytest.raises(RuntimeError, match=r"gradient of Exp.*its output.*version 1.*"
                                           r"version 0.*clone\(\)"):
        y.sum().backward()


def test_only_what_backward_reads_is_checked_for_in_place_changes(device):
    """As PyTorch, which checks what an op saved: x·w reads its inputs, not its output, and
    eˣ, tanh, softmax read their output, not their input; a change of the other is fine."""
    x = mg.tensor([1., 2., 3.], requires_grad=True, device=device)
    w = mg.tensor([2., 3., 4.], device=device)
    y = x * w
    e, t, s = x.exp(), w.tanh(), mg.softmax(x, 0)        # (w: no grad, so not tracked)
    with mg.no_grad():
        y.mul_(10)                                       # Mul's output
    (y.sum() + e.sum() + s[0]).backward()
    assert np.allclose(x.grad.numpy(), [2, 3, 4] + np.exp([1., 2., 3.]) +
                       mg.softmax(x, 0).numpy()[0] * (np.eye(3)[0] - mg.softmax(x, 0).numpy()))
    h = x * 1.0
    e, t, s = h.exp(), h.tanh(), h.log_softmax(0)
    with mg.no_grad():
        h.zero_()                                        # their input: not read
    (e.sum() + t.sum() + s.sum()).backward()
    assert x.grad is not None
    z = x * 1.0
    m = mg.ones(3, 2, device=device)                     # a constant: no gradient wanted
    p, e = z @ m, z * z
    with mg.no_grad():
        z.zero_()                          # z's gradient in z @ m reads m only: no error
    p.sum().backward(retain_graph=True)
    with pytest.raises(RuntimeError, match="gradient of Mul.*its input 0"):
        e.sum().backward()                               # but z·z reads z: refused
    p = z @ m
    with mg.no_grad():
        m.zero_()
    with pytest.raises(RuntimeError, match="gradient of MatMul.*its input 1"):
        p.sum().backward()


def test_in_place_change_through_a_view_or_detach_is_seen(device):
    w = mg.tensor([[1., 2.], [3., 4.]], requires_grad=True, device=device)
    for change in (lambda: w.reshape(4).__setitem__(0, 5.0),   # a view shares the count
                   lambda: w.T[0].zero_(),
                   lambda: w.detach().zero_()):
        loss = (w * w).sum()
        with mg.no_grad():
            change()
        with pytest.raises(RuntimeError, match="gradient of Mul.*input 0"):
            loss.backward()
    y = w * 2                                            # a copy made before: unaffected
    c = w.clone()
    with mg.no_grad():
        c.zero_()
    y.sum().backward()
    assert w.grad.numpy().tolist() == [[2., 2.], [2., 2.]]


def test_in_place_change_of_a_leaf_requiring_grad_needs_no_grad(device):
    x = mg.tensor([1., 2.], requires_grad=True, device=device)
    with pytest.raises(RuntimeError, match="zero_: in-place change of a leaf tensor that "
                                           "requires grad.*no_grad"):
        x.zero_()
    with pytest.raises(RuntimeError, match="setitem: in-place"):
        x[0] = 3.0
    with mg.no_grad():
        x.zero_()
        x[1] = 3.0
    assert x._version == 2 and x.numpy().tolist() == [0., 3.]


def test_optimizer_step_bumps_the_version_and_the_training_loop_still_works(device):
    w = mg.nn.Parameter(mg.tensor([1., 2.], device=device))
    opt = mg.optim.SGD([w], lr=0.1)
    for _ in range(3):                                   # forward, backward, step, forward
        opt.zero_grad()
        (w * w).sum().backward()
        opt.step()
    loss = (w * w).sum()                                 # built before the step below
    loss.backward(retain_graph=True)
    opt.step()
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        loss.backward()


def test_a_parameter_made_from_a_tensor_shares_its_version_count():
    t = mg.tensor([1.0, 2.0])
    p = mg.nn.Parameter(t)
    loss = (p * p).sum()
    t[0] = 5.0                                           # the parameter's memory too
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        loss.backward()


# ---- retain_grad and hooks -----------------------------------------------------------------
def test_retain_grad_keeps_a_non_leaf_gradient(device):
    """retain_grad() fills .grad of an intermediate tensor, accumulating over backward calls
    as a leaf's does (PyTorch too, also under mg.grad); without it .grad stays None."""
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    y, w = x * 3, x * 2
    y.retain_grad()
    assert y.retains_grad and not w.retains_grad
    z = (y * y).sum() + w.sum()
    z.backward(retain_graph=True)
    assert y.grad.tolist() == [6.0, 12.0] and w.grad is None      # dz/dy = 2y
    z.backward(retain_graph=True)
    assert y.grad.tolist() == [12.0, 24.0] and x.grad.tolist() == [40.0, 76.0]
    y.grad = None
    mg.grad(z, [x], retain_graph=True)
    assert y.grad.tolist() == [6.0, 12.0]
    x.retain_grad()                                      # a leaf keeps its gradient anyway
    assert not x.retains_grad
    with pytest.raises(RuntimeError, match="does not require grad"):
        mg.tensor([1.0], device=device).retain_grad()


def test_hooks_see_and_replace_gradients(device):
    """register_hook: the hook sees the gradient; a returned tensor replaces it downstream,
    in a retained .grad, in a leaf's .grad and in mg.grad's result; handle.remove() undoes
    it; hooks run in the order added."""
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    y = x * 3
    y.retain_grad()
    seen = []
    h1 = y.register_hook(lambda g: seen.append(g.tolist()))
    h2 = y.register_hook(lambda g: g * 10)
    z = (y * y).sum()
    z.backward(retain_graph=True)
    assert seen == [[6.0, 12.0]]
    assert y.grad.tolist() == [60.0, 120.0] and x.grad.tolist() == [180.0, 360.0]
    h1.remove(), h2.remove(), h2.remove()                # removing twice is harmless
    x.grad = y.grad = None
    z.backward(retain_graph=True)
    assert x.grad.tolist() == [18.0, 36.0] and seen == [[6.0, 12.0]]
    hx = x.register_hook(lambda g: g + 1)                # on a leaf: before .grad
    x.grad = None
    z.backward(retain_graph=True)
    assert x.grad.tolist() == [19.0, 37.0]
    assert mg.grad(z, [x], retain_graph=True)[0].tolist() == [19.0, 37.0]
    hx.remove()


def test_hook_errors_name_the_problem(device):
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="does not require grad"):
        mg.tensor([1.0], device=device).register_hook(lambda g: g)
    with pytest.raises(TypeError, match="function of the gradient"):
        x.register_hook(3)
    y = x * 2
    y.register_hook(lambda g: g[:1])
    with pytest.raises(RuntimeError, match=r"changed the gradient from shape \(2,\).*\(1,\)"):
        y.sum().backward()
    y = x * 2
    y.register_hook(lambda g: g.double())
    with pytest.raises(RuntimeError, match="float64"):
        y.sum().backward()
    y = x * 2
    y.register_hook(lambda g: [1.0, 1.0])
    with pytest.raises(TypeError, match="returned a list"):
        y.sum().backward()


def test_hook_under_create_graph_is_differentiable(device):
    """With create_graph=True a hook's replacement is part of the recorded graph: here the
    hook multiplies d/dy by x, so d(x.grad)/dx includes the hook's term (as PyTorch)."""
    x = mg.tensor([1.0, 2.0], device=device, dtype=mg.float64, requires_grad=True)
    y = x ** 2
    y.register_hook(lambda g: g * x)
    y.sum().backward(create_graph=True)                  # x.grad = 2x·x = 2x²
    assert x.grad.tolist() == [2.0, 8.0]
    (gg,) = mg.grad(x.grad.sum(), [x])
    assert gg.tolist() == [4.0, 8.0]                     # d(2x²)/dx = 4x


def test_mg_grad_computes_only_what_leads_to_its_inputs(device):
    """mg.grad runs backward only on the part of the graph between the outputs and the
    asked-for inputs, as torch.autograd.grad: hooks and retain_grad below the inputs or on
    side branches stay quiet. A hook handle also works as a context manager."""
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    side = mg.tensor([1.0], device=device, requires_grad=True)
    fired = []
    x.register_hook(lambda g: fired.append("x"))
    side.register_hook(lambda g: fired.append("side"))
    a = x * 2
    a.retain_grad()
    h = a * 3
    (gh,) = mg.grad((h * h).sum() + (side * 2).sum(), h)
    assert gh.tolist() == [12.0, 24.0] and fired == [] and a.grad is None
    (gx,) = mg.grad((x * x).sum() + (side * 2).sum(), x)
    assert gx.tolist() == [2.0, 4.0] and fired == ["x"]
    y = mg.tensor([1.0], device=device, requires_grad=True)
    with y.register_hook(lambda g: fired.append("y")):
        (y * 2).sum().backward()
    (y * 2).sum().backward()
    assert fired == ["x", "y"]


def test_mg_grad_refuses_a_graph_with_a_freed_branch(device):
    """A branch an earlier backward freed has lost its links, so whether it leads to an
    input cannot be known: mg.grad refuses (PyTorch, which keeps the links, may answer),
    rather than return the gradient of the other branches alone."""
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    a, c = x * 3, x * 4
    s1 = (a * a).sum()
    s1.backward()                                        # frees s1's branch
    y = s1 + (c * c).sum()
    for wanted in ([x], [c]):
        with pytest.raises(RuntimeError, match="a second time"):
            mg.grad(y, wanted)


def test_an_expanded_grad_is_never_added_into_in_place(spy):
    # CuPy's broadcast views are writable: an add into one would add twice into the shared
    # element ([7, 7] here); the spy device is as CuPy
    w = mg.tensor([1.0, 2.0], device=spy, requires_grad=True)
    w.grad = mg.tensor([1.0], device=spy).expand(2)
    (w * 3).sum().backward()
    assert w.grad.tolist() == [4.0, 4.0]


def test_a_second_backward_adds_into_the_same_grad_as_torch():
    # PyTorch accumulates into .grad in place: a reference taken between backward passes
    # sees the sum (a new tensor each time left it stale)
    w = mg.tensor([1.0, 2.0], requires_grad=True)
    (w * 3).sum().backward()
    g = w.grad
    (w * w).sum().backward()
    assert w.grad is g and g.tolist() == [5.0, 7.0]
    w.grad = mg.tensor([1.0, 1.0]).expand(2)             # read-only: a new tensor instead
    (w * 3).sum().backward()
    assert w.grad.tolist() == [4.0, 4.0]
    x = mg.tensor([1.0, 2.0], requires_grad=True)        # under create_graph the sum is a
    (x ** 2).sum().backward(create_graph=True)           # graph, never an in-place write
    first = x.grad
    (x ** 2).sum().backward(create_graph=True)
    assert x.grad is not first and first.tolist() == [2.0, 4.0] and x.grad.requires_grad


def test_a_second_derivative_with_no_graph_says_why():
    """The gradient of abs (or relu, or x * 2) taken with create_graph=True does not depend
    on x: differentiating it again finds no graph. The error says that this is a zero
    derivative, not only "computed under no_grad?"."""
    x = mg.tensor([1.0, -2.0], requires_grad=True)
    g, = mg.grad(x.abs().sum(), x, create_graph=True)
    with pytest.raises(RuntimeError, match=r"does not depend on the inputs.*its derivative "
                                           r"is 0"):
        mg.grad(g.sum(), x)


def test_an_op_skips_the_gradients_of_inputs_that_want_none():
    """needs_input_grad (PyTorch's name): the GEMM for dX of a Linear on data, or for the
    constant side of a matmul, is not run; a constant ∞ times a 0 gradient makes no NaN."""
    import minigrad.nn.functional as F
    rng = np.random.default_rng(0)
    x = mg.tensor(rng.standard_normal((4, 3)))                   # data: no gradient
    w = mg.tensor(rng.standard_normal((2, 3)), requires_grad=True)
    b = mg.tensor(np.zeros(2))                                   # a frozen bias
    g = np.ones((4, 2))
    for y in (F.linear(x, w, b), x @ w.mT):
        ctx = y._ctx
        assert ctx.needs_input_grad[:2] == (False, True)
        fast = ctx.backward_arrays(g) if hasattr(ctx, "backward_arrays") else None
        with mg.no_grad():
            ref = ctx.backward(mg.tensor(g))
        for got in [r for r in (fast, ref) if r is not None]:
            assert got[0] is None and got[1] is not None
        assert fast is None or fast[2:] in ((), (None,))           # nor the bias's sum
    v = mg.tensor([np.inf, 2.0], requires_grad=True)             # an ∞ where g is 0
    c = mg.tensor([1.0, 2.0])                                    # a constant
    with np.errstate(all="raise"):           # c's gradients, g·v and -g/c·(v/c), are 0·∞
        (mg.where(mg.tensor([False, True]), c * v, 0.0)).sum().backward()
        (mg.where(mg.tensor([False, True]), v / c, 0.0)).sum().backward()
    np.testing.assert_array_equal(v.grad.numpy(), [0.0, 2.5])


def test_retain_grad_survives_an_augmented_assignment():
    """x.retain_grad(); x *= 3: x, held by this name alone, is rebound to x·3 (no write to
    record), and keeps retaining, as PyTorch's x: its .grad is that of the new value."""
    w = mg.tensor([1.0, -2.0], requires_grad=True)
    x = w * 2
    x.retain_grad()
    x *= 3
    (x * x).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * 6 * np.array([1.0, -2.0]))


def test_each_product_layout_gives_the_gradient_of_the_side_that_wants_one():
    """needs_input_grad in every branch of matmul (1-D · 1-D, 1-D · 2-D, 2-D · 1-D) and
    linear: the side that requires grad gets its gradient, the constant side None (its
    GEMM not run), and pow's constant side no 0·∞ warning."""
    import minigrad.nn.functional as F

    def t(v, grad=False):
        return mg.tensor(v, dtype=mg.float64, requires_grad=grad)
    ones, ones_t = np.ones((2, 3)), np.ones((3, 2))
    for a, b, want in (([1.0, 2.0], ones, [3.0, 3.0]), ([1.0, 2.0], [3.0, 4.0], [3.0, 4.0])):
        x = t(a, True)                                           # the left side wants one
        (x @ t(b)).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), want)
    w = t(ones, True)
    (t([1.0, 2.0]) @ w).sum().backward()                         # the right side only
    np.testing.assert_array_equal(w.grad.numpy(), [[1.0] * 3, [2.0] * 3])
    m = t(ones_t, True)
    (m @ t([1.0, 2.0])).sum().backward()
    np.testing.assert_array_equal(m.grad.numpy(), [[1.0, 2.0]] * 3)
    for a, b in ((t([1.0, 2.0]), t(ones, True)), (t([1.0, 2.0]), t([3.0, 4.0], True)),
                 (t(ones_t, True), t([1.0, 2.0]))):
        out = a @ b
        with mg.no_grad():
            got = out._ctx.backward(mg.ones(out.shape, dtype=mg.float64))
        assert [g is None for g in got] == [not a.requires_grad, not b.requires_grad]
    ctx = F.linear(t(np.ones((4, 3)), True), t(ones))._ctx      # a frozen weight
    assert ctx.backward_arrays(np.ones((4, 2)))[1] is None
    with mg.no_grad():
        assert ctx.backward(mg.ones(4, 2, dtype=mg.float64))[1] is None
    with np.errstate(all="raise"):          # 0 ** b (the base constant) and x ** 2 (the
        b = t([0.5], True)                  # exponent constant): no 1/0 for the base's
        (t([0.0]) ** b).sum().backward()    # gradient, no log(-2) for the exponent's
        x = t([-2.0], True)
        (x ** 2).sum().backward()
    assert b.grad.tolist() == [0.0] and x.grad.tolist() == [-4.0]


def test_pows_base_gradient_is_zero_at_exponent_zero_to_any_order():
    """d/da aᵇ is taken as 0 where b = 0 (a where, as PyTorch), so its derivative in b
    there is 0 too, as PyTorch's, not the formula's aᵇ⁻¹(1 + b ln a) = 1/2."""
    a = mg.tensor([2.0], dtype=mg.float64, requires_grad=True)
    b = mg.tensor([0.0], dtype=mg.float64, requires_grad=True)
    ga, = mg.grad((a ** b).sum(), [a], create_graph=True)
    assert ga.tolist() == [0.0] and mg.grad(ga.sum(), [b])[0].tolist() == [0.0]


def test_without_retain_grad_an_augmented_assignment_keeps_no_gradient():
    w = mg.tensor([1.0, -2.0], requires_grad=True)
    y = w * 2
    y *= 3
    (y * y).sum().backward()
    assert y.grad is None


def test_ops_that_read_no_values_allow_in_place_changes_before_backward():
    """Embedding (a table renormalised by max_norm when used twice a step), diagonal, median,
    scatter and the scatter-add read indices or masks in backward, not values, as PyTorch's: an
    in-place change of their input between forward and backward is no error."""
    e = mg.nn.Embedding(6, 3, max_norm=0.5)
    a, b = e(mg.tensor([1, 2])), e(mg.tensor([2, 3]))    # the second renormalises row 2
    (a.sum() + b.sum()).backward()
    assert e.weight.grad.sum().item() == 12.0
    w = mg.tensor([[3.0, 1.0, 2.0], [0.0, 5.0, 4.0], [7.0, 8.0, 6.0]], requires_grad=True)
    d, m = w.diagonal(), w.median(1)[0]
    with mg.no_grad():
        w.add_(1)
    (d.sum() + m.sum()).backward()
    assert w.grad.tolist() == [[1.0, 0.0, 1.0], [0.0, 1.0, 1.0], [1.0, 0.0, 1.0]]
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], requires_grad=True)    # scatter, nan_to_num too
    s, n = x.scatter(0, mg.tensor([[1, 0]]), 0.0), x.nan_to_num()
    with mg.no_grad():
        x.mul_(2)
    (s.sum() + n.sum()).backward()
    assert x.grad.tolist() == [[2.0, 1.0], [1.0, 2.0]]


def test_detach_after_backward_through_unbind():
    """unbind's node is kept after backward (a backward per slice works) but counts as
    released: the unbound tensor may then be detached in place, as PyTorch's."""
    cell = mg.nn.LSTMCell(3, 4)
    h = c = mg.zeros(2, 4)
    for x in mg.randn(3, 2, 3).unbind(0):
        h, c = cell(x, (h, c))
    h0, h1 = h.unbind(0)
    (h0.pow(2).sum() + h1.sum()).backward()
    assert h.detach_() is h and not h.requires_grad


def test_autograd_backward_matches_torch():
    """mg.autograd.backward as torch.autograd.backward: several roots with their
    gradients, `inputs` (a non-leaf among them) getting .grad alone, accumulation."""
    torch = pytest.importorskip("torch")
    grads = []
    for lib in (mg, torch):
        x = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        w = lib.tensor([0.5, -1.0, 2.0], dtype=lib.float64, requires_grad=True)
        h = x * w
        lib.autograd.backward([h.sin(), (h * x).sum()],
                              [lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64), None])
        h2 = x.exp() * w
        lib.autograd.backward((h2 ** 2).sum(), inputs=[h2, x], retain_graph=True)
        lib.autograd.backward((h2 ** 2).sum(), inputs={"x": x})   # h2 retains: gets it too
        assert h2.retains_grad
        grads.append([x.grad.tolist(), w.grad.tolist(), h2.grad.tolist()])
    for mine, theirs in zip(*grads):
        np.testing.assert_allclose(mine, theirs, rtol=1e-12)
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with pytest.raises(RuntimeError, match="grad can be implicitly created only for scalar"):
        mg.autograd.backward(x * 2)
    with pytest.raises(RuntimeError, match="`inputs` argument to `backward\\(\\)` cannot be "
                                           "empty."):
        mg.autograd.backward((x * 2).sum(), inputs=[])
    with pytest.raises(TypeError, match="gradients can be either Tensors or None, but got "
                                        "float"):
        mg.autograd.backward((x * 2).sum(), grad_tensors=[3.0])
    with pytest.raises(RuntimeError, match="got 2 tensors and 1 gradients"):
        mg.autograd.backward([(x * 2).sum(), x.sum()], [mg.tensor(1.0)])
    with pytest.raises(RuntimeError, match="each of `inputs` must be a Tensor that requires"):
        mg.autograd.backward((x * 2).sum(), inputs=[mg.ones(2)])
    y = x * 3                                 # create_graph: a .grad that differentiates
    mg.autograd.backward((y ** 2).sum(), inputs=x, create_graph=True)
    assert x.grad.requires_grad
    np.testing.assert_allclose(x.grad.detach().numpy(), 18 * x.detach().numpy())
