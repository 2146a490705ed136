"""ops/rnn_scan.py and ops/lstm_scan.py: a recurrent layer's direction as one op (the time
loop on raw arrays, backpropagation through time by hand) against the reference, the step
functions run one node per step (`fused = False`): outputs, final states, every gradient,
gradients of gradients; float64 gradchecks of the op; hooks, in-place checks and mg.grad on
the states."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
from minigrad.ops.rnn_scan import rnn_scan, rnn_layer

KINDS = [("RNN", {}), ("RNN", {"nonlinearity": "relu"}), ("GRU", {}), ("LSTM", {})]
CONFIGS = [dict(), dict(bias=False), dict(num_layers=2, bidirectional=True),
           dict(num_layers=3, batch_first=True), dict(num_layers=2, bidirectional=True,
                                                      batch_first=True, dropout=0.5)]
SCANS = {"RNNScan", "GRUScan", "LSTMScan"}


def _layer(name, kw, fused):
    mg.manual_seed(0)
    layer = getattr(nn, name)(3, 4, **kw).double()
    layer.fused = fused
    return layer


def _inputs(layer, batched=True, given=True, T=5, B=3):
    """x, and the initial state(s) (or None), float64, all requiring grad."""
    rng = np.random.default_rng(1)
    LD = layer.num_layers * layer.num_directions
    x = rng.standard_normal(((B, T, 3) if layer.batch_first else (T, B, 3)) if batched
                            else (T, 3))
    states = [rng.standard_normal((LD, B, 4) if batched else (LD, 4)) for _ in range(2)]
    ts = [mg.tensor(a, dtype=mg.float64, requires_grad=True) for a in [x] + states]
    n = 2 if isinstance(layer, nn.LSTM) else 1
    return ts[0], (ts[1:1 + n] if given else [None] * n)


def _call(layer, x, states):
    if isinstance(layer, nn.LSTM):
        return layer(x, None if states[0] is None else tuple(states))
    return layer(x, states[0])


def _results(layer, x, states, create_graph=False):
    """Outputs and final states, the gradients of a random weighting of all of them with
    respect to x, the given states and every parameter (mg.grad), and the graph's ops."""
    mg.manual_seed(3)                                     # the same dropout masks
    out, final = _call(layer, x, states)
    finals = final if isinstance(final, tuple) else (final,)
    rng = np.random.default_rng(2)
    loss = sum((t * mg.tensor(rng.standard_normal(t.shape), device=t.device)).sum()
               for t in (out,) + finals)
    wrt = [x] + [s for s in states if s is not None] + list(layer.parameters())
    ops = _ops(loss)
    return [out, *finals], list(mg.grad(loss, wrt, create_graph=create_graph)), ops


def _ops(t):
    """The names of the ops in t's graph."""
    names, stack, seen = set(), [t], set()
    while stack:
        ctx = stack.pop()._ctx
        if ctx is not None and id(ctx) not in seen:
            seen.add(id(ctx))
            names.add(type(ctx).__name__)
            stack.extend(p for p in ctx.inputs if p.requires_grad)
    return names


def _close(got, want):
    for g, w in zip(got, want):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, kind", KINDS, ids=str)
def test_fused_matches_reference_on_the_device(name, kind, device):
    """The op's array code on each device (CuPy's on a GPU) against the reference's."""
    kw = dict(kind, num_layers=2, bidirectional=True)
    fused, ref = (_layer(name, kw, f).to(device) for f in (True, False))
    x, states = _inputs(fused)
    x = x.detach().to(device).requires_grad_()
    states = [s.detach().to(device).requires_grad_() for s in states]
    (outs, grads, ops), (r_outs, r_grads, _) = (_results(m, x, states) for m in (fused, ref))
    assert ops & SCANS
    _close(outs + grads, r_outs + r_grads)


@pytest.mark.parametrize("kw", CONFIGS, ids=str)
@pytest.mark.parametrize("name, kind", KINDS, ids=str)
def test_fused_matches_reference(name, kind, kw):
    for batched, given in ((True, True), (True, False), (False, True)):
        fused, ref = _layer(name, {**kind, **kw}, True), _layer(name, {**kind, **kw}, False)
        x, states = _inputs(fused, batched, given)
        (outs, grads, ops), (r_outs, r_grads, r_ops) = (_results(m, x, states)
                                                        for m in (fused, ref))
        assert ops & SCANS and not r_ops & SCANS
        _close(outs + grads, r_outs + r_grads)


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
def test_double_backward_matches_reference(name):
    """create_graph=True runs the op's Tensor-level backward (the step functions again):
    gradients of a function of the gradients equal the reference's."""
    got = []
    for fused in (True, False):
        layer = _layer(name, dict(num_layers=2, bidirectional=True), fused)
        x, states = _inputs(layer, T=3, B=2)
        _, grads, _ = _results(layer, x, states, create_graph=True)
        s = sum((g * g).sum() for g in grads)
        got.append(mg.grad(s, [x, *states, *layer.parameters()]))
    _close(*got)


@pytest.mark.parametrize("mode, reverse", [("RNN_TANH", False), ("RNN_RELU", True),
                                           ("GRU", False), ("GRU", True), ("LSTM", True)])
def test_scan_gradcheck_and_gradgradcheck(mode, reverse):
    G, n = {"GRU": 3, "LSTM": 4}.get(mode, 1), 2 if mode == "LSTM" else 1
    rng = np.random.default_rng(4)

    def inputs(T, B):
        shapes = [(T, B, G * 2)] + [(B, 2)] * n + [(G * 2, 2), (G * 2,)]
        return [mg.tensor(rng.standard_normal(s), dtype=mg.float64, requires_grad=True)
                for s in shapes]

    def fn(gi, *rest):
        ys, finals = rnn_scan(mode, gi, rest[:n], rest[n], rest[n + 1], reverse=reverse)
        return (ys,) + finals
    bias_free = lambda gi, *rest: rnn_scan(mode, gi, rest[:n], rest[n], reverse=reverse)  # noqa
    ins = inputs(3, 2)
    assert mg.gradcheck(fn, ins) and mg.gradcheck(bias_free, ins[:-1])
    assert mg.gradgradcheck(fn, inputs(2, 1))           # (small: each probe a double pass)


@pytest.mark.parametrize("reverse, biases", [(False, (5, 6)), (True, (6,))])
def test_lstm_layer_gradcheck_and_gradgradcheck(reverse, biases):
    """The LSTM's op given W_ih (rnn_layer: it makes gi = W_ih x + b_ih itself, laid out
    for its loop), with both biases, b_hh alone, or none."""
    rng = np.random.default_rng(8)

    def inputs(B, F):
        shapes = [(2, B, F), (B, 2), (B, 2), (8, F), (8, 2), (8,), (8,)]
        ts = [mg.tensor(rng.standard_normal(s), dtype=mg.float64, requires_grad=True)
              for s in shapes]
        return ts[:5] + [ts[k] for k in biases]

    def fn(x, h, c, w_ih, w_hh, *b):
        named = dict(zip(("b_ih", "b_hh")[-len(b):], b)) if b else {}
        ys, finals = rnn_layer("LSTM", x, (h, c), w_ih, w_hh, reverse=reverse, **named)
        return (ys,) + finals
    ins = inputs(2, 3)
    assert mg.gradcheck(fn, ins) and mg.gradcheck(fn, ins[:5])
    assert mg.gradgradcheck(fn, inputs(1, 1))           # (small: each probe a double pass)


@pytest.mark.parametrize("reverse", [False, True])
def test_projected_lstm_layer_gradcheck_and_gradgradcheck(reverse):
    """The LSTM's op with W_hr (1, 2): each step's h projected to one feature."""
    rng = np.random.default_rng(10)

    def inputs(B):
        shapes = [(2, B, 3), (B, 1), (B, 2), (8, 3), (8, 1), (1, 2), (8,)]
        return [mg.tensor(rng.standard_normal(s), dtype=mg.float64, requires_grad=True)
                for s in shapes]

    def fn(x, h, c, w_ih, w_hh, w_hr, b):
        ys, finals = rnn_layer("LSTM", x, (h, c), w_ih, w_hh, b, reverse=reverse, w_hr=w_hr)
        return (ys,) + finals
    assert mg.gradcheck(fn, inputs(2)) and mg.gradgradcheck(fn, inputs(1))


@pytest.mark.parametrize("kw", [dict(), dict(bias=False, batch_first=True),
                                dict(num_layers=2, bidirectional=True)], ids=str)
def test_fused_projected_lstm_matches_reference(kw):
    """proj_size: the op projects each step's h by W_hr (whose gradient takes the dh' its
    loop keeps): outputs, final states, every gradient, gradients of gradients."""
    got = []
    for fused in (True, False):
        mg.manual_seed(0)
        layer = nn.LSTM(3, 4, proj_size=2, **kw).double()
        layer.fused = fused
        LD, rng = layer.num_layers * layer.num_directions, np.random.default_rng(1)
        shapes = (3, 5, 3) if layer.batch_first else (5, 3, 3), (LD, 3, 2), (LD, 3, 4)
        x, h0, c0 = (mg.tensor(rng.standard_normal(s), dtype=mg.float64, requires_grad=True)
                     for s in shapes)
        outs, grads, ops = _results(layer, x, [h0, c0], create_graph=True)
        assert ("LSTMScan" in ops) == fused
        s = sum((g * g).sum() for g in grads)
        got.append(outs + grads + list(mg.grad(s, [x, h0, c0, *layer.parameters()])))
    _close(*got)


@pytest.mark.parametrize("reverse", [False, True])
def test_lstm_layer_matches_linear_then_scan(reverse):
    """rnn_layer's one LSTM op against Linear's gi into rnn_scan: outputs, final states and
    every gradient, float32 as a layer runs (its own gate order and layout inside)."""
    rng = np.random.default_rng(9)
    shapes = [(5, 3, 4), (3, 6), (3, 6), (24, 4), (24, 6), (24,), (24,)]
    ins = [mg.tensor(rng.standard_normal(s), dtype=mg.float32, requires_grad=True)
           for s in shapes]
    x, h, c, w_ih, w_hh, b_ih, b_hh = ins
    weights = [mg.tensor(rng.standard_normal(s), dtype=mg.float32) for s in ((5, 3, 6),
                                                                            (3, 6), (3, 6))]
    got = []
    for run in (lambda: rnn_layer("LSTM", x, (h, c), w_ih, w_hh, b_ih, b_hh, reverse),
                lambda: rnn_scan("LSTM", F.linear(x, w_ih, b_ih), (h, c),
                                 w_hh, b_hh, reverse)):
        ys, finals = run()
        outs = (ys,) + finals
        loss = sum((o * wt).sum() for o, wt in zip(outs, weights))
        got.append([o.detach() for o in outs] + list(mg.grad(loss, ins)))
    for g, r in zip(*got):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-5, atol=1e-6)


def test_the_lstm_op_makes_its_own_input_projection():
    """The fused LSTM's gi = W_ih x + b_ih is made inside its op, one matrix product laid
    out for the time loop (Linear's (T, B, 4H) would need a transposing copy each way):
    its graph has no Linear; the GRU's and RNN's loops take Linear's layout."""
    for name in ("LSTM", "GRU"):
        layer = _layer(name, dict(num_layers=2, bidirectional=True), True)
        x, states = _inputs(layer)
        _, _, ops = _results(layer, x, states)
        assert ("Linear" in ops) == (name != "LSTM"), ops


def test_hooks_run_once_and_retain_grad_is_not_doubled():
    """The Tensor-level backward differentiates the step functions with an inner mg.grad:
    it must stop short of the inputs, whose hooks and retain_grad the outer pass runs."""
    for fused in (True, False):
        layer = _layer("LSTM", {}, fused)
        x, (h0, c0) = _inputs(layer)
        h = h0 * 1
        h.retain_grad()
        seen = {"h": [], "w": []}
        h.register_hook(seen["h"].append)
        layer.weight_hh_l0.register_hook(seen["w"].append)      # an input of the op itself
        out, (h_n, c_n) = layer(x, (h, c0))
        mg.grad((out.sum() + c_n.sum()) ** 2, [x], create_graph=True)
        assert seen == {"h": [], "w": []} and h.grad is None   # mg.grad asked for x only
        (out.sum() + c_n.sum()).backward(create_graph=True)
        assert len(seen["h"]) == len(seen["w"]) == 1
        np.testing.assert_allclose(h.grad.numpy(), h0.grad.numpy())
        np.testing.assert_allclose(seen["h"][0].numpy(), h.grad.numpy())
        np.testing.assert_allclose(seen["w"][0].numpy(), layer.weight_hh_l0.grad.numpy())


def test_mg_grad_of_the_initial_states():
    got = []
    for fused in (True, False):
        layer = _layer("LSTM", dict(num_layers=2), fused)
        x, (h0, c0) = _inputs(layer)
        out, (h_n, c_n) = layer(x, (h0, c0))
        got.append(mg.grad(out.sum() + (c_n * c_n).sum(), [c0, h0]))
    _close(*got)


@pytest.mark.parametrize("name, B", [("GRU", 3), ("LSTM", 3), ("LSTM", 1)])
def test_an_output_changed_in_place_does_not_change_the_gradient(name, B):
    """The outputs are the op's own copies: zeroing one after the forward (allowed, as for
    the reference's stack) leaves what backward saved intact. (The LSTM's with one
    sequence, or unbatched input, were its saved arrays themselves: the change made the
    gradient wrong, and a recorded one was refused as memory held outside the tensor.)"""
    grads = []
    for change in (None, "no_grad", "recorded"):
        layer = _layer(name, {}, True)
        x, states = _inputs(layer, B=B)
        out, final = _call(layer, x, states)
        finals = final if isinstance(final, tuple) else (final,)
        rng = np.random.default_rng(5)
        loss = sum((t * mg.tensor(rng.standard_normal(t.shape))).sum()
                   for t in (out,) + finals)
        if change == "no_grad":
            with mg.no_grad():
                for t in (out,) + finals:
                    t.zero_()
        elif change == "recorded":
            out.mul_(2)
        grads.append(mg.grad(loss, [x, *states, layer.weight_hh_l0]))
    _close(grads[0], grads[1])
    _close(grads[0], grads[2])


def test_a_weight_changed_in_place_before_backward_is_refused():
    layer = _layer("GRU", {}, True)
    x, (h0,) = _inputs(layer)
    out, _ = layer(x, h0)
    with mg.no_grad():
        layer.weight_hh_l0.mul_(2)
    with pytest.raises(RuntimeError, match="GRUScan has been modified by an in-place"):
        out.sum().backward()


def test_no_graph_without_grad_and_clear_errors():
    layer = _layer("GRU", {}, True)
    with mg.no_grad():
        out, h = layer(mg.randn(4, 2, 3, dtype=mg.float64))
    assert not out.requires_grad and out._ctx is None
    gi, h0, w = mg.zeros(4, 2, 12), mg.zeros(2, 4), mg.zeros(12, 4)
    with pytest.raises(ValueError, match=r"rnn_scan: state must be \(2, 4\)"):
        rnn_scan("LSTM", gi, (h0, mg.zeros(3, 4)), w)
    with pytest.raises(ValueError, match=r"rnn_scan: GRU takes 1 state tensor\(s\) and W_hh "
                                         r"\(3·H, H\), got 1 and W_hh \(16, 4\)"):
        rnn_scan("GRU", mg.zeros(4, 2, 16), (h0,), mg.zeros(16, 4))
    with pytest.raises(ValueError, match=r"rnn_scan: gi must be \(T, B, gates·H\)"):
        rnn_scan("GRU", mg.zeros(2, 12), (h0,), w)
    x, w_ih = mg.zeros(4, 2, 3), mg.zeros(16, 3)
    with pytest.raises(ValueError, match=r"rnn_layer: x must be \(T, B, F\), W_ih "
                                         r"\(gates·H, F\), W_hh \(gates·H, H or P\) and "
                                         r"W_hr \(P, H\), got \(4, 2, 3\), \(16, 2\)"):
        rnn_layer("LSTM", x, (h0, h0), mg.zeros(16, 2), mg.zeros(16, 4))
    with pytest.raises(ValueError, match=r"rnn_layer: w_hh must be \(16, 2\) float32"):
        rnn_layer("LSTM", x, (h0[:, :2], h0), w_ih, mg.zeros(16, 4), w_hr=mg.zeros(2, 4))
    with pytest.raises(ValueError, match=r"rnn_layer: state must be \(2, 2\) float32"):
        rnn_layer("LSTM", x, (h0, h0), w_ih, mg.zeros(16, 2), w_hr=mg.zeros(2, 4))
    with pytest.raises(ValueError, match="rnn_layer: only the LSTM projects h"):
        rnn_layer("GRU", x, (h0,), w_ih[:12], w[:12], w_hr=mg.zeros(2, 4))
    with pytest.raises(ValueError, match=r"rnn_layer: b_ih must be \(16,\) float32"):
        rnn_layer("LSTM", x, (h0, h0), w_ih, mg.zeros(16, 4), mg.zeros(12))
    with pytest.raises(ValueError, match=r"rnn_layer: LSTM takes 2 state tensor\(s\)"):
        rnn_layer("LSTM", x, (h0,), w_ih, mg.zeros(16, 4))


@pytest.mark.parametrize("name", ["GRU", "LSTM"])
@pytest.mark.parametrize("dtype, bias", [(mg.float32, -30.0), (mg.float64, -60.0)])
def test_saturated_gates_keep_their_small_values_as_the_reference(name, dtype, bias):
    """A gate far on its negative side: σ(-30) ~ 1e-13 (float32), σ(-60) ~ 1e-26 (float64),
    as the step functions' and PyTorch's σ. (1 + tanh(a/2))/2 rounded them to 0, and so h
    (an LSTM's o gate) and every gradient through the gate."""
    got = []
    for fused in (True, False):
        layer = _layer(name, {}, fused).to(dtype=dtype)
        with mg.no_grad():
            H = layer.hidden_size
            gate = slice(3 * H, 4 * H) if name == "LSTM" else slice(H, 2 * H)   # o; z
            layer.bias_ih_l0[gate] = bias
            if name == "GRU":                            # h' = z⊙h + (1 - z)⊙n: all but z⊙h
                layer.bias_ih_l0[2 * H:] = 0.0           # cancelled by n = 0 below
                layer.weight_ih_l0[2 * H:] = 0.0
                layer.weight_hh_l0[2 * H:] = 0.0
                layer.bias_hh_l0[2 * H:] = 0.0
        x = mg.tensor(np.random.default_rng(6).standard_normal((2, 3, 3)), dtype=dtype,
                      requires_grad=True)
        h0 = mg.tensor(np.ones((1, 3, 4)), dtype=dtype, requires_grad=True)
        # LSTM: h = o⊙tanh(c), ~σ; GRU: z⊙z⊙h0 after the two steps, ~σ²
        out = layer(x)[0] if name == "LSTM" else layer(x, h0)[0][-1]
        got.append([out.detach()] + list(mg.grad(out.sum(), [x])))
    for g, r in zip(*got):
        assert np.all(np.abs(r.numpy()) > 0)                     # (not rounded to 0)
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=1e-5 if dtype == mg.float32
                                   else 1e-12)


def test_lstm_backward_leaves_the_given_final_state_gradients_as_they_were():
    """With one sequence (B = 1) the transposed gradients of h_n and c_n are the given
    arrays' memory; backward adds into its own copies, so a gradient shared with another
    tensor (the other operand of h_n + z) reaches it unchanged."""
    for fused in (True, False):
        layer = _layer("LSTM", {}, fused)
        x = mg.tensor(np.ones((4, 1, 3)), dtype=mg.float64)
        zh, zc = (mg.zeros(1, 1, 4, dtype=mg.float64, requires_grad=True) for _ in range(2))
        out, (h_n, c_n) = layer(x)
        w = mg.tensor([1.0, 2.0, 3.0, 4.0], dtype=mg.float64)
        (out.sum() + ((h_n + zh) * w).sum() + ((c_n + zc) * w).sum()).backward()
        assert zh.grad.tolist() == zc.grad.tolist() == [[[1.0, 2.0, 3.0, 4.0]]], fused


def test_lstm_state_gradients_hold_only_their_own_memory():
    """With one sequence, c0's gradient (B, H) was a view of the op's whole (T, 6, H, B)
    work array, which a leaf's .grad then kept alive (T·6 times the memory it needs)."""
    x = mg.randn(20, 1, 3, dtype=mg.float64)
    h0, c0 = (mg.zeros(1, 4, dtype=mg.float64, requires_grad=True) for _ in range(2))
    out, _ = rnn_layer("LSTM", x, (h0, c0), mg.randn(16, 3, dtype=mg.float64),
                       mg.randn(16, 4, dtype=mg.float64))
    out.sum().backward()
    for g in (h0.grad._data, c0.grad._data):
        assert (g if g.base is None else g.base).nbytes == g.nbytes
