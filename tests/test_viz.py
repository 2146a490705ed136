"""mg.viz.to_dot: the recorded graph as Graphviz DOT text, each tensor and each op once."""
import re

import pytest

import minigrad as mg


def _graph(device):
    x = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    w = mg.tensor([0.5, -1.0], device=device, requires_grad=True)
    h = (x * w).tanh()
    y = (h * h + x).sum()               # h and x are used twice: still one node each
    return x, w, h, y


def _parse(dot):
    nodes = dict(re.findall(r"^\s*([tf]\d+) \[(.*)\];$", dot, re.M))
    edges = re.findall(r"^\s*([tf]\d+) -> ([tf]\d+);$", dot, re.M)
    return nodes, edges


def test_to_dot_lists_each_tensor_and_op_once(device):
    x, w, h, y = _graph(device)
    dot = mg.viz.to_dot(y, names={x: "x", w: "w", h: "h"})
    assert dot.startswith("digraph") and dot.rstrip().endswith("}")
    assert dot.count("{") == dot.count("}")
    nodes, edges = _parse(dot)
    ops = sorted(re.search(r'label="(\w+)"', v).group(1) for k, v in nodes.items()
                 if k.startswith("f"))
    assert ops == ["Add", "Mul", "Mul", "Sum", "Tanh"]     # one node per op call
    tensors = [k for k in nodes if k.startswith("t")]
    assert len(tensors) == 7                                # x, w, x*w, h, h*h, +x, sum
    assert len(set(nodes)) == len(nodes)
    for a, b in edges:                                      # every edge joins listed nodes
        assert a in nodes and b in nodes and a[0] != b[0]
    assert len(edges) == 5 + 8        # op -> output; input -> op (h*h draws h's two arrows)
    assert 'label="{x | 2 | ' not in dot and "{x | 2}" in dot and "{h | 2}" in dot


def test_to_dot_shows_grads_with_retain_graph(device):
    x, w, h, y = _graph(device)
    s = (x * w).sum()
    s.backward(retain_graph=True)
    dot = mg.viz.to_dot(s)
    assert "data" in dot and re.search(r"scalar \| data [-\d.]+", dot)
    y.backward()
    with pytest.raises(RuntimeError, match="retain_graph"):
        mg.viz.to_dot(y)                                     # the graph was freed


def test_to_dot_of_scalar_expression_has_values_and_grads():
    a = mg.tensor(2.0, requires_grad=True)
    b = (a * 3.0).exp()
    b.backward(retain_graph=True)
    dot = mg.viz.to_dot(b, names={a: "a"})
    assert "{a | scalar | data 2 | grad " in dot and "Exp" in dot and "Mul" in dot


def test_to_dot_after_backward_says_why_and_names_are_escaped():
    """After backward() the graph is freed: to_dot says so and what to do (it raised
    backward's own "a second time" message); a name holding a record's characters ({ | }
    <> ") is escaped, so the DOT text stays valid."""
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    y = (x * x).sum()
    text = mg.viz.to_dot(y, {x: 'x{a|b}"'})
    assert r'label="{x\{a\|b\}\" | 2}"' in text
    y.backward()
    with pytest.raises(RuntimeError, match=r"backward\(\) has freed this graph .*"
                                           r"retain_graph=True"):
        mg.viz.to_dot(y)


def test_to_dot_draws_a_node_with_several_outputs_once():
    """A module's backward hooks pass its inputs through one node with an output per
    input: one ellipse, an arrow from each input and one to each output."""
    class Mul(mg.nn.Module):
        def forward(self, a, b):
            return a * b
    m = Mul()
    m.register_full_backward_hook(lambda mod, gi, go: None)
    a, b = mg.ones(2, requires_grad=True), mg.ones(2, requires_grad=True)
    nodes, edges = _parse(mg.viz.to_dot(m(a, b).sum()))
    ops = sorted(re.search(r'label="(\w+)"', v).group(1) for k, v in nodes.items()
                 if k.startswith("f"))
    assert ops == ["Mul", "Sum", "_PassThrough", "_PassThrough"]   # before and after
    assert len(nodes) == 4 + 7            # a, b, their two views, a*b, its view, the sum
    assert len(edges) == len(set(edges)) == 5 + 6    # op -> each output; input -> op
