"""mg.autograd.graph.GradientEdge and get_gradient_edge (gradient_edge.py), and mg.grad /
mg.autograd.backward taking edges beside tensors: closed forms, then against PyTorch."""
import gc

import numpy as np
import pytest

import minigrad as mg
from minigrad.autograd.graph import GradientEdge, get_gradient_edge

X = [1.0, 2.0, 3.0]


def _np(ts):
    return [None if t is None else t.numpy() for t in ts]


def _close(got, want):
    assert len(got) == len(want)
    for g, w in zip(got, want):
        assert (g is None) == (w is None)
        if g is not None:
            np.testing.assert_allclose(np.asarray(g), np.asarray(w), rtol=1e-6)


def _rewritten():
    """y = x * 2 with its edge taken, then y.mul_(3); out = sum(y²) = 36·sum(x²)."""
    x = mg.tensor(X, requires_grad=True)
    y = x * 2
    e = get_gradient_edge(y)
    y.mul_(3)
    return x, y, e, (y * y).sum()


# ---- the edge itself ------------------------------------------------------------------------
def test_an_edge_is_a_namedtuple_of_node_and_output_nr():
    x = mg.tensor(X, requires_grad=True)
    y = x * 2
    e = get_gradient_edge(y)
    assert isinstance(e, tuple) and GradientEdge._fields == ("node", "output_nr",
                                                             "ownership_token")
    assert e == (y.grad_fn, 0, None) and e.node is y.grad_fn and e.output_nr == 0
    assert mg.autograd.graph.GradientEdge is GradientEdge
    assert mg.autograd.graph.get_gradient_edge is get_gradient_edge
    assert GradientEdge(y.grad_fn, 0) == e


def test_a_leaf_edge_is_its_accumulate_grad():
    x = mg.tensor(X, requires_grad=True)
    e = get_gradient_edge(x)
    assert e.node.name() == "torch::autograd::AccumulateGrad" and e.node.variable is x
    assert e.output_nr == 0
    assert (x * 2).grad_fn.next_functions[0][0] is e.node      # the one node of the leaf
    assert get_gradient_edge(x).node is e.node


def test_multi_output_nodes_give_each_output_its_index():
    a = mg.randn(3, 4, requires_grad=True)
    u = a.unbind()
    edges = [get_gradient_edge(t) for t in u]
    assert all(e.node is u[0].grad_fn for e in edges)
    assert [e.output_nr for e in edges] == [0, 1, 2] == [t.output_nr for t in u]
    m = a.max(1)
    assert get_gradient_edge(m.values) == (m.values.grad_fn, 0, None)
    with pytest.raises(RuntimeError, match="does not require grad"):
        get_gradient_edge(m.indices)
    # (split's pieces are one indexing node each here, not one SplitBackward0 node)
    for p in mg.split(a, 2, dim=1):
        assert get_gradient_edge(p) == (p.grad_fn, p.output_nr, None)


def test_a_tensor_without_grad_has_no_edge():
    with pytest.raises(RuntimeError, match="not possible to get the gradient edge for a "
                                           "tensor that does not require grad"):
        get_gradient_edge(mg.ones(2))
    x = mg.ones(2, requires_grad=True)
    with mg.no_grad():
        y = x * 2
    with pytest.raises(RuntimeError, match="does not require grad"):
        get_gradient_edge(y)
    with pytest.raises(TypeError, match="expected a Tensor, got int"):
        get_gradient_edge(3)


# ---- mg.grad's inputs -----------------------------------------------------------------------
def test_edge_of_a_value_later_changed_in_place_gives_the_old_values_gradient():
    x, y, e, out = _rewritten()
    # d out/d y = 2y = 12x; d out/d (x*2) = 3·2y = 36x; d out/d x = 72x
    g_old, = mg.autograd.grad(out, e, retain_graph=True)
    g_new, = mg.grad(out, y, retain_graph=True)
    _close(_np([g_old, g_new]), [[36, 72, 108], [12, 24, 36]])
    _close(_np(mg.grad(out, [x, e, y])), [[72, 144, 216], [36, 72, 108], [12, 24, 36]])
    assert get_gradient_edge(y).node is y.grad_fn is not e.node


def test_a_leaf_edge_gives_the_leafs_gradient():
    x = mg.tensor(X, requires_grad=True)
    out = (x * x * x).sum()
    by_edge, by_leaf, twice = mg.grad(out, [get_gradient_edge(x), x, get_gradient_edge(x)])
    _close(_np([by_edge, by_leaf, twice]), [[3, 12, 27]] * 3)
    by_edge[0] = 0.0                       # each result its own array
    assert by_leaf.numpy()[0] == 3.0 and x.grad is None


def test_unbind_edges_as_inputs_even_made_by_hand():
    a = mg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], requires_grad=True)
    u = a.unbind()
    loss = (u[1] * u[2]).sum()
    node = u[0].grad_fn
    g = mg.grad(loss, [GradientEdge(node, k) for k in range(3)], allow_unused=True)
    _close(_np(g), [None, [5, 6], [3, 4]])


def test_unused_edges_allow_unused_and_materialize_grads():
    x, y, e, out = _rewritten()
    z = mg.ones(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="input 0 was not used"):
        mg.grad(out, get_gradient_edge(z), retain_graph=True)
    g = mg.grad(out, [get_gradient_edge(z), e], retain_graph=True, allow_unused=True)
    _close(_np(g), [None, [36, 72, 108]])
    with pytest.raises(RuntimeError, match="materialize_grads cannot be used when the given "
                                           "input is a GradientEdge"):
        mg.grad(out, [get_gradient_edge(z)], retain_graph=True, materialize_grads=True)
    g = mg.grad(out, [z, e], retain_graph=True, materialize_grads=True)
    _close(_np(g), [[0, 0], [36, 72, 108]])
    zero, = mg.grad(out, z, retain_graph=True, create_graph=True, materialize_grads=True)
    assert zero.requires_grad and zero.is_leaf
    with pytest.raises(ValueError, match="allow_unused to be True or not passed when "
                                         "materialize_grads=True"):
        mg.grad(out, z, materialize_grads=True, allow_unused=False)


def test_retain_graph_and_create_graph_with_edges():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = a * a
    e = get_gradient_edge(b)
    o = (b * 3).sum()
    _close(_np(mg.grad(o, e)), [[3, 3]])
    with pytest.raises(RuntimeError, match="a second time"):
        mg.grad(o, e)
    b = a * a
    e = get_gradient_edge(b)
    o = (b * b).sum()
    g, = mg.grad(o, e, create_graph=True)                 # 2b = 2a², differentiable
    assert g.requires_grad
    _close(_np([g] + list(mg.grad(g.sum(), a))), [[2, 8], [4, 8]])


def test_dict_inputs_give_a_dict():
    x, y, e, out = _rewritten()
    g = mg.grad(out, {"x": x, "old": e})
    assert list(g) == ["x", "old"]
    _close(_np(g.values()), [[72, 144, 216], [36, 72, 108]])


def test_an_edge_whose_tensor_is_gone_is_unused_as_an_input():
    w = mg.tensor(X, requires_grad=True)
    e = get_gradient_edge(w * 2)                 # nothing holds w * 2: no gradient reaches it
    gc.collect()
    _close(_np(mg.grad((w * 3).sum(), [w, e], allow_unused=True)), [[3, 3, 3], None])


def test_bad_inputs_are_refused():
    x = mg.tensor(X, requires_grad=True)
    out = (x * 2).sum()
    with pytest.raises(RuntimeError, match="all inputs have to be Tensors or GradientEdges, "
                                           "but got int at position 1"):
        mg.grad(out, [x, 3], retain_graph=True)
    with pytest.raises(RuntimeError, match="node must be an autograd.graph.Node .* got "
                                           "NoneType"):
        mg.grad(out, GradientEdge(None, 0), retain_graph=True)
    with pytest.raises(RuntimeError, match=r"output_nr 1 names no output of .*valid: 0..0"):
        mg.grad(out, GradientEdge(get_gradient_edge(x).node, 1), retain_graph=True)
    with pytest.raises(RuntimeError, match="but got AccumulateGrad"):       # a plain tuple
        mg.grad(out, (get_gradient_edge(x).node, 0), retain_graph=True)


# ---- edges as outputs, and in mg.autograd.backward ------------------------------------------
def test_edges_as_outputs_start_the_pass_there():
    x, y, e, out = _rewritten()
    _close(_np(mg.grad(e, x, grad_outputs=mg.ones(3), retain_graph=True)), [[2, 2, 2]])
    _close(_np(mg.grad([y, e], x, grad_outputs=[mg.ones(3), mg.ones(3)],
                       retain_graph=True)), [[8, 8, 8]])
    _close(_np(mg.grad(get_gradient_edge(out), x, retain_graph=True)),
           [[72, 144, 216]])                              # a one-element output: ones
    with pytest.raises(RuntimeError, match="implicitly created only for scalar outputs"):
        mg.grad(e, x, retain_graph=True)
    with pytest.raises(RuntimeError, match=r"gradient shape \(2,\) does not match output "
                                           r"shape \(3,\)"):
        mg.grad(e, x, grad_outputs=mg.ones(2), retain_graph=True)
    _close(_np(mg.grad(get_gradient_edge(x), x, grad_outputs=mg.full((3,), 5.0))),
           [[5, 5, 5]])


def test_output_edges_of_several_output_nodes_and_gone_tensors():
    a = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    u = a.unbind()
    e1 = get_gradient_edge(u[1])
    _close(_np(mg.grad(e1, a, grad_outputs=mg.tensor(2.0))), [[0, 2, 0]])
    w = mg.tensor(X, requires_grad=True)
    e = get_gradient_edge(w.exp())
    gc.collect()
    with pytest.raises(RuntimeError, match="output 0, an edge to output 0 of ExpBackward0, "
                                           "has no live tensor"):
        mg.grad(e, w, grad_outputs=mg.ones(3))
    b = w * w
    e = get_gradient_edge(b)
    b.sum().backward()
    with pytest.raises(RuntimeError, match="an edge to MulBackward0: backward through a "
                                           "graph a second time"):
        mg.grad(e, w, grad_outputs=mg.ones(3))


class _TwoOut(mg.autograd.Function):
    @staticmethod
    def forward(ctx, a):
        return a * 2, a * 3

    @staticmethod
    def backward(ctx, g1, g2):
        return g1 * 2 + g2 * 3


def test_custom_function_outputs_written_in_place():
    x = mg.tensor(X, requires_grad=True)
    b, c = _TwoOut.apply(x)
    eb, ec = get_gradient_edge(b), get_gradient_edge(c)
    assert (eb.output_nr, ec.output_nr) == (0, 1)
    c.mul_(2)
    o = (b * c).sum()               # b·2c: d/d(old c) = 2b, d/d(new c) = b, d/db = 2c
    _close(_np(mg.grad(o, [ec, c, eb], retain_graph=True)),
           [[4, 8, 12], [2, 4, 6], [6, 12, 18]])
    _close(_np(mg.grad(ec, x, grad_outputs=mg.ones(3))), [[3, 3, 3]])


def test_backward_takes_edges_as_tensors_and_inputs():
    x, y, e, out = _rewritten()
    mg.autograd.backward(out, inputs=[e], retain_graph=True)   # a non-leaf's: stored nowhere
    assert x.grad is None and y.grad is None and not y.retains_grad
    mg.autograd.backward(out, inputs=[get_gradient_edge(x)], retain_graph=True)
    _close(_np([x.grad]), [[72, 144, 216]])
    mg.autograd.backward(e, grad_tensors=mg.ones(3), retain_graph=True)
    _close(_np([x.grad]), [[74, 146, 218]])
    x.grad = None
    out.backward(inputs=get_gradient_edge(x), retain_graph=True)
    _close(_np([x.grad]), [[72, 144, 216]])
    x.grad = None
    mg.autograd.backward([get_gradient_edge(x), (x * x).sum()], [mg.ones(3), None])
    _close(_np([x.grad]), [[3, 5, 7]])
    with pytest.raises(TypeError, match="tensors must be Tensors or GradientEdges, got int"):
        mg.autograd.backward([3])


def test_a_tensors_hook_runs_for_its_edge():
    seen = []
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    v = a * 2
    v.register_hook(lambda g: seen.append(g.numpy().copy()))
    g, = mg.grad((v * v).sum(), get_gradient_edge(v))
    _close([g.numpy()] + seen, [[4, 8], [4, 8]])


# ---- against PyTorch ------------------------------------------------------------------------
def _both(torch, fn):
    """fn(lib, tensor, gge) run on minigrad and on torch, results as NumPy."""
    def to_np(r):
        if isinstance(r, dict):
            return {k: to_np(v) for k, v in r.items()}
        if isinstance(r, (tuple, list)):
            return [to_np(v) for v in r]
        return None if r is None else np.asarray(r.detach().numpy())
    ours = fn(mg, mg.tensor, get_gradient_edge)
    theirs = fn(torch, torch.tensor, torch.autograd.graph.get_gradient_edge)
    return to_np(ours), to_np(theirs)


def _assert_same(a, b):
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        return [_assert_same(a[k], b[k]) for k in a]
    if isinstance(a, list):
        assert len(a) == len(b)
        return [_assert_same(p, q) for p, q in zip(a, b)]
    assert (a is None) == (b is None)
    if a is not None:
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-6)


DATA = np.random.default_rng(0).standard_normal((3, 4)).astype(np.float32)


def test_in_place_and_leaf_edges_match_torch(torch):
    def run(lib, tensor, gge):
        x = tensor(DATA, requires_grad=True)
        y = x.sin() * 2      # (an op that saves its output: torch refuses the write)
        e = gge(y)
        y.mul_(x)
        y.add_(1)
        out = (y * y.sin()).sum()
        r = list(lib.autograd.grad(out, [e, x, gge(x), y], retain_graph=True))
        r += lib.autograd.grad(e, x, grad_outputs=tensor(DATA), retain_graph=True)
        r += lib.autograd.grad(out, {"e": e}, create_graph=True).values()
        return r
    _assert_same(*_both(torch, run))


def test_multi_output_edges_match_torch(torch):
    def run(lib, tensor, gge):
        a = tensor(DATA, requires_grad=True)
        u = a.unbind()
        s = lib.split(a, [1, 3], dim=1)
        m = a.max(1)
        loss = (u[0] * u[2]).sum() + (s[1] ** 2).sum() + (m.values * 3).sum()
        edges = [gge(t) for t in u] + [gge(t) for t in s] + [gge(m.values)]
        r = list(lib.autograd.grad(loss, edges, retain_graph=True, allow_unused=True))
        r += lib.autograd.grad(gge(u[1]), a, grad_outputs=tensor(DATA[1]))
        return r
    _assert_same(*_both(torch, run))


def test_allow_unused_materialize_and_backward_inputs_match_torch(torch):
    def run(lib, tensor, gge):
        x = tensor(DATA, requires_grad=True)
        z = tensor(DATA[0], requires_grad=True)
        y = x * 3
        e = gge(y)
        y.mul_(2)
        out = (y * x).sum()
        r = list(lib.autograd.grad(out, [gge(z), e], retain_graph=True, allow_unused=True))
        r += lib.autograd.grad(out, [z, e], retain_graph=True, materialize_grads=True)
        lib.autograd.backward(out, inputs=[e, gge(x)], retain_graph=True)
        r.append(x.grad)
        lib.autograd.backward(e, grad_tensors=tensor(DATA))
        r.append(x.grad)
        return r
    _assert_same(*_both(torch, run))


def test_errors_match_torchs(torch):
    for lib, tensor, gge in ((mg, mg.tensor, get_gradient_edge),
                             (torch, torch.tensor, torch.autograd.graph.get_gradient_edge)):
        with pytest.raises(RuntimeError, match="(?i)not possible to get the gradient edge "
                                               "for a tensor that does not require"):
            gge(tensor([1.0]))
        x = tensor([1.0, 2.0], requires_grad=True)
        z = tensor([1.0], requires_grad=True)
        out = (x * 2).sum()
        with pytest.raises(RuntimeError, match="all inputs have to be Tensors or "
                                               "GradientEdges, but got int"):
            lib.autograd.grad(out, [x, 3], retain_graph=True)
        with pytest.raises(RuntimeError, match="not .*used"):
            lib.autograd.grad(out, gge(z), retain_graph=True)
        with pytest.raises(RuntimeError, match="materialize_grads cannot be used when the "
                                               "given input is a GradientEdge"):
            lib.autograd.grad(out, gge(z), retain_graph=True, materialize_grads=True)
        with pytest.raises(ValueError, match="allow_unused to be True or not passed"):
            lib.autograd.grad(out, x, materialize_grads=True, allow_unused=False)
