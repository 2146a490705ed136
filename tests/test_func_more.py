"""func_more.py's mg.func.jvp, linearize, functionalize, stack_module_state and
replace_all_batch_norm_modules_ against torch.func, and autograd_names.py's
torch.autograd names (Variable, multithreading switch, graph.Node, gradcheck's path)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

RNG = np.random.default_rng(1)
X, Y, U, V = (RNG.standard_normal((2, 3)) for _ in range(4))


def f(lib):
    return lambda x, y: ((x * y).sin() @ y.T, (x.exp() * y).sum())


def close(a, b):
    np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-10,
                               atol=1e-12)


def test_jvp_matches_torch_with_pytrees_and_aux(torch):
    m, t = (lambda a: mg.tensor(a)), (lambda a: torch.tensor(a))
    ours = mg.func.jvp(f(mg), (m(X), m(Y)), (m(U), m(V)))
    theirs = torch.func.jvp(f(torch), (t(X), t(Y)), (t(U), t(V)))
    for a, b in zip(ours[0] + ours[1], theirs[0] + theirs[1]):
        close(a, b)
        assert not a.requires_grad

    def g(lib):
        return lambda d: ((d["a"] ** 3).sum(), {"aux": d["a"] * 2})
    out, jv, aux = mg.func.jvp(g(mg), ({"a": m(X)},), ({"a": m(U)},), has_aux=True)
    tout, tjv, taux = torch.func.jvp(g(torch), ({"a": t(X)},), ({"a": t(U)},), has_aux=True)
    close(out, tout), close(jv, tjv), close(aux["aux"], taux["aux"])


def test_jvp_of_grad_is_a_hessian_vector_product(torch):
    def loss(lib):
        return lambda x: (x.sin() * x).sum() ** 2
    ours = mg.func.jvp(mg.func.grad(loss(mg)), (mg.tensor(X),), (mg.tensor(U),))[1]
    theirs = torch.func.jvp(torch.func.grad(loss(torch)), (torch.tensor(X),),
                            (torch.tensor(U),))[1]
    close(ours, theirs)


def test_jvp_matches_finite_differences_and_is_differentiable_from_outside():
    x, y, u, v, eps = mg.tensor(X), mg.tensor(Y), mg.tensor(U), mg.tensor(V), 1e-6
    _, (jv, _) = mg.func.jvp(f(mg), (x, y), (u, v))
    fd = (f(mg)(x + eps * u, y + eps * v)[0] - f(mg)(x - eps * u, y - eps * v)[0]) / (2 * eps)
    np.testing.assert_allclose(jv.numpy(), fd.numpy(), rtol=1e-6)
    w = mg.tensor(Y, requires_grad=True)         # jvp in x of a function capturing w
    jw = mg.func.jvp(lambda a: (a * w).tanh(), (x,), (u,))[1]
    assert jw.requires_grad
    (gw,) = mg.grad(jw.sum(), w)
    (gref,) = mg.grad(mg.func.jvp(lambda a: (a * w).tanh(), (x,), (u,))[1].sum(), w)
    np.testing.assert_allclose(gw.numpy(), gref.numpy())
    assert mg.func.jvp(lambda a: a.floor(), (x,), (u,))[1].abs().sum().item() == 0


def test_jvp_errors():
    x = mg.tensor(X)
    with pytest.raises(RuntimeError, match="Expected primals to be a tuple"):
        mg.func.jvp(mg.sin, x, (x,))
    with pytest.raises(RuntimeError, match="same python structure"):
        mg.func.jvp(mg.sin, (x,), (x, x))
    with pytest.raises(RuntimeError, match="different size"):
        mg.func.jvp(mg.sin, (x,), (mg.zeros(4, dtype=mg.float64),))


def test_linearize_matches_torch(torch):
    out, jvp_fn = mg.func.linearize(f(mg), mg.tensor(X), mg.tensor(Y))
    tout, tjvp_fn = torch.func.linearize(f(torch), torch.tensor(X), torch.tensor(Y))
    close(out[0], tout[0])
    for tangents in ((U, V), (V, U)):                   # one function, many tangents
        for a, b in zip(jvp_fn(*map(mg.tensor, tangents)),
                        tjvp_fn(*map(torch.tensor, tangents))):
            close(a, b)
    with pytest.raises(RuntimeError, match="same python structure"):
        jvp_fn(mg.tensor(U))


def test_linearize_output_stays_differentiable_from_outside(torch):
    """A primal that requires grad: the output is f's, differentiable back to it (it was
    handed back detached); plain primals give a plain output."""
    x, tx = mg.tensor(X, requires_grad=True), torch.tensor(X, requires_grad=True)
    out = mg.func.linearize(lambda a: (a.sin() * a).sum(), x)[0]
    tout = torch.func.linearize(lambda a: (a.sin() * a).sum(), tx)[0]
    close(mg.grad(out, x)[0], torch.autograd.grad(tout, tx)[0])
    assert not mg.func.linearize(mg.sin, mg.tensor(X))[0].requires_grad


def test_functionalize_is_the_identity():
    g = mg.func.functionalize(mg.sin)
    assert g is mg.sin and mg.func.functionalize(g, remove="mutations_and_views") is g
    with pytest.raises(RuntimeError, match="invalid argument for remove=views"):
        mg.func.functionalize(g, remove="views")


def models(lib, n=3):
    lib.manual_seed(0)
    return [lib.nn.Sequential(lib.nn.Linear(2, 3), lib.nn.BatchNorm1d(3)) for _ in range(n)]


def test_stack_module_state_matches_torch(torch):
    ms, ts = models(mg), models(torch)
    for m, t in zip(ms, ts):          # the same weights in both
        m.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in t.state_dict().items()})
    (p, b), (tp, tb) = mg.func.stack_module_state(ms), torch.func.stack_module_state(ts)
    assert list(p) == list(tp) and list(b) == list(tb)
    for ours, theirs in list(zip(p.values(), tp.values())) + list(zip(b.values(), tb.values())):
        assert ours.shape == tuple(theirs.shape) and ours.is_leaf
        assert ours.requires_grad == theirs.requires_grad
        np.testing.assert_allclose(ours.detach().numpy(), theirs.detach().numpy(), rtol=1e-6)
    # an ensemble: vmap(functional_call) over the stacked state, model k on x's row k
    x = mg.randn(3, 4, 2)
    for m in ms:
        m.eval()
    p, b = mg.func.stack_module_state(ms)
    out = mg.func.vmap(lambda pp, bb, xx: mg.func.functional_call(ms[0], (pp, bb), (xx,)))(
        p, b, x)
    np.testing.assert_allclose(out[1].detach().numpy(), ms[1](x[1]).detach().numpy(),
                               rtol=1e-6)


def test_stack_module_state_errors():
    with pytest.raises(RuntimeError, match="at least one model"):
        mg.func.stack_module_state([])
    ms = models(mg, 2)
    ms[1].eval()
    with pytest.raises(RuntimeError, match="training/eval mode"):
        mg.func.stack_module_state(ms)
    with pytest.raises(RuntimeError, match="one structure"):
        mg.func.stack_module_state([nn.Linear(2, 3), nn.Linear(2, 3, bias=False)])
    a, b = nn.Linear(2, 3), nn.Linear(2, 3)
    b.weight.requires_grad_(False)
    with pytest.raises(RuntimeError, match="weight from each model"):
        mg.func.stack_module_state([a, b])


def test_replace_all_batch_norm_modules_stops_tracking():
    root = models(mg, 1)[0]
    inorm = nn.InstanceNorm1d(2, track_running_stats=True)        # no BatchNorm in torch
    mg.func.replace_all_batch_norm_modules_(nn.Sequential(inorm))
    assert inorm.track_running_stats and inorm.running_mean is not None
    assert mg.func.replace_all_batch_norm_modules_(root) is root
    bn = root[1]
    assert bn.running_mean is None and bn.running_var is None
    assert bn.num_batches_tracked is None and not bn.track_running_stats
    assert "1.running_mean" not in root.state_dict()
    x = mg.randn(4, 2)
    root.eval()                                   # eval now normalises with the batch's
    h = root[0](x)
    expected = (h - h.mean(0)) / (h.var(0, unbiased=False) + 1e-5).sqrt()
    np.testing.assert_allclose(root(x).detach().numpy(), expected.detach().numpy(),
                               rtol=1e-5, atol=1e-6)


def test_autograd_names(torch):
    x = mg.ones(2)
    v = mg.autograd.Variable(x, requires_grad=True)
    assert type(v) is mg.Tensor and v.requires_grad and not x.requires_grad
    assert isinstance(x, mg.autograd.Variable)
    with pytest.raises(TypeError, match="has to be a tensor"):
        mg.autograd.Variable([1.0])
    assert mg.autograd.is_multithreading_enabled()
    with mg.autograd.set_multithreading_enabled(False):
        assert not mg.autograd.is_multithreading_enabled()
    assert mg.autograd.is_multithreading_enabled()
    y = (v * 2).sum()
    Node = mg.autograd.graph.Node
    assert isinstance(y.grad_fn, Node) and not isinstance(v, Node)
    assert isinstance(torch.autograd.Variable(torch.ones(2)), torch.Tensor)
    from minigrad.autograd.gradcheck import gradcheck, gradgradcheck
    from minigrad.autograd.graph import Node as node
    assert gradcheck is mg.autograd.gradcheck is mg.gradcheck and node is Node
    assert gradgradcheck(lambda t: t.sin(), (mg.randn(3, dtype=mg.float64,
                                                      requires_grad=True),))
