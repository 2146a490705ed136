"""grad_fn as a node of the graph (autograd_node.py): name(), next_functions, metadata and
node hooks, against PyTorch's where it is installed."""
import numpy as np
import pytest

import minigrad as mg


def _names(node, depth=3):
    """The graph below `node` as nested (name, [children]) down to `depth`."""
    if node is None or depth == 0:
        return None if node is None else node.name()
    return (node.name(), [(_names(n, depth - 1), k) for n, k in node.next_functions])


def test_next_functions_walk_the_graph_to_the_leaves():
    x = mg.randn(3, requires_grad=True)
    y = mg.randn(3)                                       # wants no gradient
    z = x * y + x
    (mul, k0), (acc, k1) = z.grad_fn.next_functions
    assert z.grad_fn.name() == "AddBackward0" and mul.name() == "MulBackward0"
    assert (k0, k1) == (0, 0)
    assert acc.name() == "torch::autograd::AccumulateGrad" and acc.variable is x
    assert acc.next_functions == ()
    (leaf, _), (none, _) = mul.next_functions
    assert leaf.variable is x and none is None
    assert isinstance(mul, mg.autograd.graph.Node) and isinstance(acc, mg.autograd.graph.Node)
    assert repr(mul).startswith("<MulBackward0 object at 0x")


def test_next_functions_as_torch_on_the_same_graph(torch):

    def build(lib):
        x = lib.ones(3, requires_grad=True)
        return (x * lib.ones(3) + x).exp().sum()
    ours, theirs = build(mg).grad_fn, build(torch).grad_fn
    assert _names(ours, 4) == _names(theirs, 4)


def test_an_output_of_a_node_of_several_outputs_names_its_index():
    x = mg.randn(3, requires_grad=True)
    a, b, c = x.unbind(0)
    node, k = (c * 2).grad_fn.next_functions[0]
    assert node is c.grad_fn and k == 2


def test_a_pre_hook_replaces_the_gradient_of_the_output():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = x * 3
    seen = []
    y.grad_fn.register_prehook(lambda go: (seen.append(go[0].numpy().copy()), (go[0] * 2,))[1])
    y.sum().backward()
    np.testing.assert_array_equal(seen[0], [1, 1])
    np.testing.assert_array_equal(x.grad.numpy(), [6, 6])


def test_a_post_hook_sees_gradients_shaped_as_the_inputs_and_may_replace_them():
    x = mg.ones(3, 1, requires_grad=True)
    b = mg.ones(3, 4, requires_grad=True)
    y = x + b                                       # x is broadcast: its gradient is summed
    shapes = []

    def hook(grad_inputs, grad_outputs):
        shapes.append(([g.shape for g in grad_inputs], grad_outputs[0].shape))
        return (grad_inputs[0] * 0, grad_inputs[1])
    handle = y.grad_fn.register_hook(hook)
    y.sum().backward(retain_graph=True)
    assert shapes == [([(3, 1), (3, 4)], (3, 4))]
    assert float(x.grad.abs().sum()) == 0 and float(b.grad.sum()) == 12
    handle.remove()
    x.grad = b.grad = None
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.full((3, 1), 4.0))
    assert len(shapes) == 1


def test_hooks_agree_with_torch(torch):

    def run(lib):
        x = lib.tensor([[1.0, -2.0, 3.0]], requires_grad=True)
        w = lib.tensor([[0.5], [2.0], [-1.0]], requires_grad=True)
        y = (x * w).tanh()
        y.grad_fn.register_prehook(lambda go: (go[0] * 3,))
        m = y.grad_fn.next_functions[0][0]
        m.register_hook(lambda gi, go: (gi[0] + 1, gi[1] * -1))
        y.sum().backward()
        return x.grad.detach().numpy(), w.grad.detach().numpy()
    for a, b in zip(run(mg), run(torch)):
        np.testing.assert_allclose(a, b, rtol=1e-6)


def test_hooks_on_an_indexing_node_and_under_create_graph():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    y = x[mg.tensor([0, 0, 2])]                     # an op with a scatter fast path
    y.grad_fn.register_prehook(lambda go: (go[0] * 10,))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [20, 0, 10])
    x = mg.tensor([2.0], requires_grad=True)
    y = x ** 3
    y.grad_fn.register_prehook(lambda go: (go[0] * 2,))
    (g,) = mg.grad(y.sum(), x, create_graph=True)   # 2·3x² = 24
    (gg,) = mg.grad(g.sum(), x)                     # 12x = 24
    assert float(g) == 24 and float(gg) == 24


def test_a_node_of_several_outputs_gets_every_outputs_gradient_in_its_hooks():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a, b, c = x.unbind(0)
    seen = []
    a.grad_fn.register_prehook(lambda go: seen.append(tuple(g is None for g in go)))
    (a * 2 + c).backward()
    assert seen == [(False, True, False)]
    np.testing.assert_array_equal(x.grad.numpy(), [2, 0, 1])


def test_a_hook_that_returns_the_wrong_thing_is_refused_by_name():
    def refused(ret, err, match):
        x = mg.ones(2, requires_grad=True)
        y = x * 2
        y.grad_fn.register_prehook(lambda go: ret)
        with pytest.raises(err, match=match):
            y.sum().backward()
    refused((mg.ones(3),), RuntimeError, "MulBackward0 pre-hook changed gradient 0 from shape")
    refused((mg.ones(2), mg.ones(2)), TypeError, "a tuple of 1 gradients")
    refused(([1.0, 1.0],), TypeError, "returned a list at position 0")
    refused(mg.ones(2), TypeError, "returned Tensor; return None or a tuple")
    x = mg.ones(2, requires_grad=True)
    y = x * 2
    y.grad_fn.register_hook(lambda gi, go: (mg.ones(5), None))
    with pytest.raises(RuntimeError, match="MulBackward0 hook changed gradient 0"):
        y.sum().backward()
    with pytest.raises(TypeError, match="expected a function"):
        y.grad_fn.register_hook(3)


def test_a_freed_node_has_no_edges_and_takes_no_hooks():
    x = mg.ones(2, requires_grad=True)
    y = (x * 2).sum()
    node = y.grad_fn
    y.backward()
    assert node.next_functions == ()
    with pytest.raises(RuntimeError, match="freed by a backward"):
        node.register_prehook(lambda go: None)


def test_the_leaf_node_hooks_and_metadata():
    x = mg.ones(2, requires_grad=True)
    y = x * 2
    acc = y.grad_fn.next_functions[0][0]
    acc.register_prehook(lambda go: (go[0] + 1,))
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [3, 3])
    with pytest.raises(NotImplementedError, match="register_post_accumulate_grad_hook"):
        acc.register_hook(lambda gi, go: None)
    z = x * 3
    z.grad_fn.metadata["step"] = 7
    assert z.grad_fn.metadata == {"step": 7}


def test_a_node_without_hooks_takes_the_ordinary_route(monkeypatch):
    import minigrad.backward as engine

    def hooked_route_only(*args):
        raise AssertionError("a node without hooks went through _input_grads")
    x = mg.ones(3, 1, requires_grad=True)
    y = (x * mg.ones(3, 4)).tanh().sum()          # broadcast, fast path, fresh grads
    monkeypatch.setattr(engine, "_input_grads", hooked_route_only)
    y.backward()
    np.testing.assert_allclose(x.grad.numpy(), np.full((3, 1), 4 * (1 - np.tanh(1) ** 2)),
                               rtol=1e-6)


def _pre_none_then_post(lib):
    x = lib.ones(3, requires_grad=True)
    y = x * 3
    seen = []
    y.grad_fn.register_prehook(lambda go: (None,))
    y.grad_fn.register_hook(lambda gi, go: seen.append((gi, go)))
    (y.sum() + x.sum()).backward()
    return seen, x.grad.tolist()


def test_a_pre_hook_that_takes_the_gradient_away_leaves_the_node_nothing():
    assert _pre_none_then_post(mg) == ([((None, None), (None,))], [1, 1, 1])


def test_a_hook_cannot_put_a_gradient_where_there_was_none():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    a, b, c = x.unbind(0)
    a.grad_fn.register_prehook(lambda go: (go[0], mg.tensor(5.0), go[2]))
    with pytest.raises(RuntimeError, match="UnbindBackward0 pre-hook returned a Tensor at "
                                           "position 1, where it was given None"):
        (a * 2 + c).backward()
    x = mg.ones(3, requires_grad=True)
    y = x * mg.ones(3)                              # the constant gets None
    y.grad_fn.register_hook(lambda gi, go: (gi[0], mg.ones(3)))
    with pytest.raises(RuntimeError, match="can't replace a None gradient"):
        y.sum().backward()


def test_anomaly_mode_checks_what_a_post_hook_returns():
    x = mg.ones(2, requires_grad=True)
    y = x * 3
    y.grad_fn.register_hook(lambda gi, go: (gi[0] * float("nan"), None))
    with pytest.warns(UserWarning), mg.autograd.detect_anomaly():
        with pytest.raises(RuntimeError, match="returned nan values in its 0th output"):
            y.sum().backward()


def _partial_grad_inputs(lib):
    x = lib.ones(2, requires_grad=True)
    w = lib.full((2,), 2.0, requires_grad=True)
    m = x * w
    seen = []
    m.grad_fn.register_hook(lambda gi, go: seen.append(
        [None if g is None else g.tolist() for g in gi]))
    lib.autograd.grad(m.sum(), x)
    return seen


def test_under_grad_a_post_hook_sees_none_for_an_input_not_asked_for():
    assert _partial_grad_inputs(mg) == [[[2, 2], None]]


def _leaf_pre_hook(lib):
    x = lib.ones(2, requires_grad=True)
    y = x * 2
    order = []
    y.grad_fn.next_functions[0][0].register_prehook(
        lambda go: (order.append("node"), (go[0] * 10,))[1])
    x.register_hook(lambda g: (order.append("tensor"), g + 1)[1])
    y.sum().backward()
    (g,) = lib.autograd.grad((x * 2).sum(), x)             # accumulates nothing
    x.grad = None
    lib.autograd.backward((x * 2).sum(), inputs=[x])       # accumulates into x.grad
    return order, g.tolist(), x.grad.tolist()


def test_a_leafs_node_pre_hook_runs_after_its_tensor_hooks_and_only_to_accumulate():
    assert _leaf_pre_hook(mg) == (["tensor", "node", "tensor", "tensor", "node"], [3, 3],
                                  [30, 30])


def test_metadata_outlives_the_backward_that_frees_the_node():
    x = mg.ones(2, requires_grad=True)
    y = (x * 3).sum()
    node = y.grad_fn
    node.metadata["step"] = 7
    y.backward()
    assert node.metadata == {"step": 7}


def _custom_name(lib):
    class Double(lib.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            return g * 2
    return Double.apply(lib.ones(2, requires_grad=True)).grad_fn.name()


def test_a_custom_functions_node_is_named_as_torchs():
    assert _custom_name(mg) == "DoubleBackward"


def test_these_cases_agree_with_torch(torch):
    assert _pre_none_then_post(torch) == _pre_none_then_post(mg)
    assert _partial_grad_inputs(torch) == _partial_grad_inputs(mg)
    assert _leaf_pre_hook(torch) == _leaf_pre_hook(mg)
    assert _custom_name(torch) == _custom_name(mg)


def test_a_checkpointed_calls_node_is_named_as_torchs_reentrant_one():
    from minigrad.utils.checkpoint import checkpoint
    x = mg.ones(2, requires_grad=True)
    y = checkpoint(lambda h: h.tanh() * 2, x, use_reentrant=True)
    assert y.grad_fn.name() == "CheckpointFunctionBackward"


def test_a_leaf_has_one_accumulate_grad_while_it_lives():
    """As PyTorch's: a walk over next_functions meets a leaf used twice as one node (it was
    made afresh on each read, so a graph drawer saw two), and its metadata stays."""
    import gc
    import weakref
    x = mg.ones(2, requires_grad=True)
    y = x * x + x
    a = y.grad_fn.next_functions[0][0].next_functions[0][0]
    b = y.grad_fn.next_functions[1][0]
    assert a is b and a.variable is x
    a.metadata["k"] = 1
    assert b.metadata == {"k": 1}
    leaf, acc = weakref.ref(x), weakref.ref(a)
    del x, y, a, b
    gc.collect()
    assert leaf() is None and acc() is None        # the node keeps no leaf alive
