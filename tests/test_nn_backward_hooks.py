"""A Module's backward hooks (register_full_backward_hook, register_full_backward_pre_hook):
what they see and what a replacement does, as PyTorch 2.13 gives it (the expected values
were read off PyTorch), and the engine's node with several outputs they rest on."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


class _Two(nn.Module):
    """Two tensor inputs and a number; two tensor outputs and a number."""
    def forward(self, a, b, k=1.0):
        return a * 2, b * 3, 5


class _Scale(nn.Module):
    def forward(self, a, s):
        return a * s


def _lists(grads):
    return [None if g is None else g.tolist() for g in grads]


def test_hooks_see_every_input_and_output_gradient_at_once():
    m, seen = _Two(), []
    m.register_full_backward_pre_hook(lambda mod, go: seen.append(("pre", _lists(go))))
    m.register_full_backward_hook(lambda mod, gi, go: seen.append(("full", _lists(gi),
                                                                   _lists(go))))
    a, b = mg.ones(2, requires_grad=True), mg.ones(2, requires_grad=True)
    x, y, z = m(a, b)
    assert z == 5 and x.requires_grad and y.requires_grad
    (x * y).sum().backward()
    assert seen == [("pre", [[3.0, 3.0], [2.0, 2.0], None]),
                    ("full", [[6.0, 6.0], [6.0, 6.0]], [[3.0, 3.0], [2.0, 2.0], None])]
    assert a.grad.tolist() == [6.0, 6.0] and b.grad.tolist() == [6.0, 6.0]
    # an output the loss does not use: None in grad_output; a tensor input the gradient
    # does not reach: zeros in grad_input (required grad or not), as PyTorch
    for b in (mg.ones(2, requires_grad=True), mg.ones(2)):
        seen.clear()
        x, y, _ = m(a, b, k=2.0)
        x.sum().backward()
        assert seen == [("pre", [[1.0, 1.0], None, None]),
                        ("full", [[2.0, 2.0], [0.0, 0.0]], [[1.0, 1.0], None, None])]


def test_grad_input_has_none_for_a_non_tensor_and_leaves_out_keywords():
    m, seen = _Scale(), []
    m.register_full_backward_hook(lambda mod, gi, go: seen.append((_lists(gi), _lists(go))))
    a = mg.ones(2, requires_grad=True)
    m(a, 4.0).sum().backward()
    assert seen == [([[4.0, 4.0], None], [[1.0, 1.0]])]


def test_a_returned_tuple_replaces_the_gradients():
    a = mg.ones(2, requires_grad=True)
    m = _Scale()
    m.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 10, None))
    m(a, 4.0).sum().backward()
    assert a.grad.tolist() == [40.0, 40.0]
    a.grad = None
    m = _Scale()
    m.register_full_backward_pre_hook(lambda mod, go: (go[0] * 7,))
    m.register_full_backward_hook(lambda mod, gi, go: seen.append(go[0].tolist()))
    seen = []
    m(a, 1.0).sum().backward()
    assert a.grad.tolist() == [7.0, 7.0] and seen == [[7.0, 7.0]]   # hooks see the new one
    a.grad = None
    m = _Scale()
    m.register_full_backward_hook(lambda mod, gi, go: (None, None))   # None: no gradient
    m(a, 1.0).sum().backward()
    assert a.grad is None


def test_a_wrong_replacement_is_refused_by_name():
    a = mg.ones(2, requires_grad=True)
    cases = [("register_full_backward_hook", lambda mod, gi, go: (gi[0],),
              "returned 1 grad_input, expected 2"),
             ("register_full_backward_pre_hook", lambda mod, go: (go[0], go[0]),
              "returned 2 grad_output, expected 1"),
             ("register_full_backward_hook", lambda mod, gi, go: (gi[0][:1], None),
              r"grad_input\[0\] must be None or a tensor of shape \(2,\), got \(1,\)"),
             ("register_full_backward_pre_hook", lambda mod, go: ([1.0, 1.0],),
              r"grad_output\[0\] must be None or a tensor of shape \(2,\), got list")]
    for register, hook, message in cases:
        m = _Scale()
        getattr(m, register)(hook)
        with pytest.raises(RuntimeError, match=message):
            m(a, 1.0).sum().backward()
    with pytest.raises(TypeError, match="register_full_backward_hook: expected a function"):
        m.register_full_backward_hook(3)


def test_no_input_requires_grad_the_hook_runs_on_none():
    lin, seen = nn.Linear(2, 2), []
    with mg.no_grad():
        lin.weight.fill_(1.0)
        lin.bias.fill_(0.0)
    lin.register_full_backward_hook(lambda mod, gi, go: seen.append((gi, _lists(go))))
    lin(mg.ones(1, 2)).sum().backward()
    assert seen == [((None,), [[[1.0, 1.0]]])] and lin.weight.grad.tolist() == [[1.0] * 2] * 2
    lin.register_full_backward_hook(lambda mod, gi, go: (mg.ones(1, 2),))
    with pytest.raises(RuntimeError, match="none of whose inputs requires grad must return"):
        lin(mg.ones(1, 2)).sum().backward()


def test_order_in_a_model_reuse_and_remove():
    """Last layer first, a container after its first child (as PyTorch); a module used
    twice hooks twice; a removed hook stays quiet."""
    seq, calls = nn.Sequential(nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)), []
    for i, layer in enumerate(seq):
        layer.register_full_backward_pre_hook(lambda m, go, i=i: calls.append(f"pre{i}"))
        layer.register_full_backward_hook(
            lambda m, gi, go, i=i: calls.append((i, tuple(gi[0].shape), tuple(go[0].shape))))
    handle = seq.register_full_backward_hook(lambda m, gi, go: calls.append("seq"))
    x = mg.ones(4, 2, requires_grad=True)
    seq(x).sum().backward()
    assert calls == ["pre2", (2, (4, 3), (4, 1)), "pre1", (1, (4, 3), (4, 3)),
                     "pre0", (0, (4, 2), (4, 3)), "seq"]
    calls.clear()
    handle.remove()
    lin = seq[0]
    seq[2](seq[1](lin(lin(x)[:, :2]))).sum().backward()
    assert [c[0] for c in calls if c[0] == 0] == [0, 0] and "seq" not in calls


class _Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.attn = nn.MultiheadAttention(8, 2, batch_first=True)
        self.norm, self.ff = nn.LayerNorm(8), nn.Linear(8, 8)

    def forward(self, x):
        a, _ = self.attn(x, x, x)
        return self.ff(self.norm(x + a))


def _grads(model, loss_of):
    model.zero_grad()
    loss_of(model).backward()
    return [p.grad.numpy().copy() for p in model.parameters()]


@pytest.mark.parametrize("which", ["block", "gpt"])
def test_hooks_change_no_gradient_of_a_model(which):
    """Hook every module of a model (attention's three inputs and tuple output, a GPT whose
    integer input needs no gradient): every gradient is what it is without hooks."""
    from minitransformer import GPT, GPTConfig
    mg.manual_seed(0)
    if which == "block":
        model, x = _Block(), mg.randn(2, 5, 8, requires_grad=True)
        def loss_of(m): return m(x).pow(2).sum()
    else:
        model = GPT(GPTConfig(vocab_size=11, block_size=6, n_layer=2, n_head=2, n_embd=8))
        x = mg.randint(0, 11, (2, 6))
        def loss_of(m): return m(x, x)[1]
    plain = _grads(model, loss_of)
    count = []
    for m in model.modules():
        m.register_full_backward_hook(lambda m, gi, go: count.append(type(m).__name__))
        m.register_full_backward_pre_hook(lambda m, go: None)
    for p, h in zip(plain, _grads(model, loss_of)):
        np.testing.assert_allclose(h, p, rtol=1e-6, atol=1e-7)
    # the block's hook runs last, with its input's gradient; the GPT's, none of whose
    # inputs needs one, first, as soon as its output's gradient is known (as PyTorch)
    assert count[-1 if which == "block" else 0] == type(model).__name__ and len(count) >= 4
    # MultiheadAttention applies out_proj's weights through F.multi_head_attention_forward,
    # so out_proj's own hooks do not run, as PyTorch's do not
    assert which == "gpt" or count == ["Linear", "LayerNorm", "MultiheadAttention", "_Block"]


def test_retain_graph_create_graph_mg_grad_and_no_grad():
    m, calls = _Two(), []
    m.register_full_backward_hook(lambda mod, gi, go: calls.append(1))
    a, b = mg.ones(2, requires_grad=True), mg.ones(2, requires_grad=True)
    x, y, _ = m(a, b)
    loss = (x * y).sum()
    loss.backward(retain_graph=True)
    loss.backward()                              # a second time: hooks again, same values
    assert calls == [1, 1] and a.grad.tolist() == [12.0, 12.0]
    with pytest.raises(RuntimeError, match="a second time"):
        loss.backward()
    ga, = mg.grad((m(a, b)[0] * 3).sum(), [a])   # mg.grad asks for a part of the inputs
    assert ga.tolist() == [6.0, 6.0] and b.grad.tolist() == [12.0, 12.0]
    # create_graph: the replaced gradient is itself differentiable (PyTorch: 54, then 72)
    c = mg.tensor([3.0], requires_grad=True)
    sq = _Scale()
    sq.register_full_backward_hook(lambda mod, gi, go: (gi[0] * 2, None))
    g, = mg.grad((sq(c, 1.0) ** 3).sum(), c, create_graph=True)
    g.sum().backward()
    assert g.tolist() == [54.0] and c.grad.tolist() == [72.0]
    with mg.no_grad():                           # no graph: nothing wrapped
        out = m(a, b)[0]
    assert not out.requires_grad and out.grad_fn is None


def test_an_output_that_is_not_a_tensor_or_tuple_warns():
    class Listed(nn.Module):
        def forward(self, a):
            return [a * 2]
    m, calls = Listed(), []
    m.register_full_backward_hook(lambda mod, gi, go: calls.append(1))
    with warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        out = m(mg.ones(2, requires_grad=True))
    assert "Tensor or a tuple, got list" in str(w[0].message)
    out[0].sum().backward()
    assert calls == []


def test_no_cycle_without_backward_and_mg_grad_skips_what_it_was_not_asked_for():
    """A forward with hooks but no backward (evaluation without no_grad) leaves no garbage
    cycle holding the inputs; mg.grad for the module's output alone runs no hook of it."""
    import gc
    m, calls = _Scale(), []
    m.register_full_backward_hook(lambda mod, gi, go: calls.append("full"))
    m.register_full_backward_pre_hook(lambda mod, go: calls.append("pre"))
    gc.collect()
    gc.disable()
    try:
        x = mg.ones(1000, requires_grad=True)
        y = m(x, 2.0)
        del x, y
        assert gc.collect() == 0
    finally:
        gc.enable()
    f = m(mg.ones(2, requires_grad=True), 2.0)
    g, = mg.grad((f * f).sum(), [f])
    assert g.tolist() == [4.0, 4.0] and calls == []


def test_the_hooks_of_a_call_are_those_registered_at_its_forward():
    """As PyTorch: a hook removed between forward and backward still runs for that call;
    one added after the forward does not."""
    lin, calls = nn.Linear(2, 2), []
    handle = lin.register_full_backward_hook(lambda m, gi, go: calls.append("A"))
    y = lin(mg.ones(1, 2, requires_grad=True))
    handle.remove()
    lin.register_full_backward_hook(lambda m, gi, go: calls.append("B"))
    lin.register_full_backward_pre_hook(lambda m, go: calls.append("C"))
    y.sum().backward()
    assert calls == ["A"]


def test_a_named_tuple_output_stays_one():
    """A module returning a PackedSequence (a named tuple) still returns one when hooked."""
    from minigrad.nn.utils.rnn import PackedSequence, pack_padded_sequence

    class Packer(nn.Module):
        def forward(self, x, lengths):
            return pack_padded_sequence(x, lengths, enforce_sorted=False)
    packer, calls = Packer(), []
    packer.register_full_backward_hook(lambda m, gi, go: calls.append(len(go)))
    x = mg.randn(4, 3, 2, requires_grad=True)
    packed = packer(x, [4, 2, 3])
    assert isinstance(packed, PackedSequence)
    _, h_n = nn.GRU(2, 3)(packed)
    h_n.sum().backward()
    assert calls == [4] and x.grad is not None
