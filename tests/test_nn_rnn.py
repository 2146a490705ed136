"""The RNN family against PyTorch with copied weights (outputs, final states, input and
parameter gradients, both batch layouts, 2-layer bidirectional), float64 gradchecks of
tiny instances (no torch needed), dropout between layers, and input errors."""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from nn_helpers import compare_with_torch, gradcheck_module


def _torch():
    return pytest.importorskip("torch")


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


CELLS = [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}), ("RNNCell", {"bias": False}),
         ("GRUCell", {}), ("GRUCell", {"bias": False}), ("LSTMCell", {})]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, kw", CELLS, ids=lambda v: str(v))
def test_cell_matches_torch(name, kw, dtype):
    torch = _torch()
    torch.manual_seed(0)
    make = lambda lib: getattr(lib, name)(3, 4, **kw)  # noqa: E731
    lstm = name == "LSTMCell"
    x, h, c = _x(2, 3), _x(2, 4, seed=1), _x(2, 4, seed=2)
    # with a given state, without one, and unbatched
    if lstm:
        compare_with_torch(make(nn), make(torch.nn), [x, h, c], dtype,
                           call=lambda m, x, h, c: m(x, (h, c)))
    else:
        compare_with_torch(make(nn), make(torch.nn), [x, h], dtype)
    compare_with_torch(make(nn), make(torch.nn), [x], dtype)
    compare_with_torch(make(nn), make(torch.nn), [x[0]], dtype)


LAYERS = [("RNN", dict()), ("RNN", dict(nonlinearity="relu", bias=False)),
          ("GRU", dict()), ("LSTM", dict()),
          ("GRU", dict(num_layers=2, bidirectional=True)),
          ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
          ("LSTM", dict(num_layers=2, bidirectional=True)),
          ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True)),
          ("RNN", dict(num_layers=2, bidirectional=True, batch_first=True)),
          ("GRU", dict(num_layers=3, bias=False))]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("name, kw", LAYERS, ids=lambda v: str(v))
def test_layer_matches_torch(name, kw, dtype):
    torch = _torch()
    torch.manual_seed(0)
    make = lambda lib: getattr(lib, name)(3, 4, **kw)  # noqa: E731
    D, L = 2 if kw.get("bidirectional") else 1, kw.get("num_layers", 1)
    x = _x(2, 5, 3) if kw.get("batch_first") else _x(5, 2, 3)
    h0, c0 = _x(L * D, 2, 4, seed=1), _x(L * D, 2, 4, seed=2)
    compare_with_torch(make(nn), make(torch.nn), [x], dtype)            # zero initial state
    if name == "LSTM":
        compare_with_torch(make(nn), make(torch.nn), [x, h0, c0], dtype,
                           call=lambda m, x, h, c: m(x, (h, c)))
    else:
        compare_with_torch(make(nn), make(torch.nn), [x, h0], dtype)


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
def test_unbatched_input_matches_torch(name):
    torch = _torch()
    torch.manual_seed(0)
    make = lambda lib: getattr(lib, name)(3, 4, num_layers=2, bidirectional=True,  # noqa
                                          batch_first=True)
    x, h0, c0 = _x(5, 3), _x(4, 4, seed=1), _x(4, 4, seed=2)
    compare_with_torch(make(nn), make(torch.nn), [x])
    if name == "LSTM":
        compare_with_torch(make(nn), make(torch.nn), [x, h0, c0],
                           call=lambda m, x, h, c: m(x, (h, c)))
    else:
        compare_with_torch(make(nn), make(torch.nn), [x, h0])


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
def test_parameter_names_and_shapes_equal_torch(name):
    torch = _torch()
    for kw in (dict(), dict(num_layers=2, bidirectional=True), dict(bias=False)):
        m, t = getattr(nn, name)(3, 5, **kw), getattr(torch.nn, name)(3, 5, **kw)
        assert [(n, p.shape) for n, p in m.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in t.named_parameters()]
        assert list(m.state_dict()) == list(t.state_dict())
        assert repr(m) == repr(t)
    for cell in ("RNNCell", "GRUCell", "LSTMCell"):
        m, t = getattr(nn, cell)(3, 5), getattr(torch.nn, cell)(3, 5)
        assert [(n, p.shape) for n, p in m.named_parameters()] == \
            [(n, tuple(p.shape)) for n, p in t.named_parameters()]
        assert repr(m) == repr(t)


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM", "RNNCell", "GRUCell", "LSTMCell"])
def test_init_is_uniform_within_one_over_sqrt_hidden(name):
    mg.manual_seed(0)
    H = 16
    m = getattr(nn, name)(8, H)
    values = np.concatenate([p.numpy().ravel() for p in m.parameters()])
    bound = 1 / math.sqrt(H)
    assert np.abs(values).max() <= bound and np.abs(values).max() > 0.95 * bound
    assert abs(values.mean()) < 0.02 and abs(values.std() - bound / math.sqrt(3)) < 0.02


# ---- gradient checks, float64, no torch -------------------------------------------------------
@pytest.mark.parametrize("name, kw", [("RNNCell", {}), ("RNNCell", {"nonlinearity": "relu"}),
                                      ("GRUCell", {}), ("LSTMCell", {})], ids=str)
def test_cell_gradcheck(name, kw):
    mg.manual_seed(0)
    cell = getattr(nn, name)(2, 3, **kw)
    x, h = mg.randn(2, 2), mg.randn(2, 3)
    if name == "LSTMCell":
        c = mg.randn(2, 3)
        gradcheck_module(_WithState(cell), x, h, c)
    else:
        gradcheck_module(cell, x, h)


@pytest.mark.parametrize("use", ["both", "h", "c"])
def test_fused_lstm_cell_gradcheck_and_gradgradcheck(use):
    """ops/rnn_cells.py's one op for the cell's elementwise half, to second order, with either
    output alone (the other's gradient is then None) or both."""
    from minigrad.ops.rnn_cells import lstm_cell
    rng = np.random.default_rng(0)
    gates, c = (mg.tensor(rng.standard_normal(s), dtype=mg.float64, requires_grad=True)
                for s in ((2, 12), (2, 3)))

    def fn(gates, c):
        h2, c2 = lstm_cell(gates, c)
        return (h2, c2) if use == "both" else h2 if use == "h" else c2
    assert mg.gradcheck(fn, (gates, c)) and mg.gradgradcheck(fn, (gates, c))
    with pytest.raises(ValueError, match=r"lstm_cell: gates \(\.\.\., 4H\)"):
        lstm_cell(gates, c[:, :2])


def test_fused_gru_cell_gradcheck_and_gradgradcheck():
    from minigrad.ops.rnn_cells import gru_cell
    rng = np.random.default_rng(1)
    ins = [mg.tensor(rng.standard_normal(s), dtype=mg.float64, requires_grad=True)
           for s in ((2, 9), (2, 9), (2, 3))]
    assert mg.gradcheck(gru_cell, ins) and mg.gradgradcheck(gru_cell, ins)
    with pytest.raises(ValueError, match=r"gru_cell: gi and gh \(\.\.\., 3H\)"):
        gru_cell(ins[0], ins[1][:, :6], ins[2])


@pytest.mark.parametrize("fused, op", [(True, "LSTMScan"), (False, "LSTMCell")])
def test_lstm_refuses_a_state_changed_in_place_before_backward(fused, op):
    """The layer's op (the reference: the fused cell) reads c in backward: changing it in
    place after forward is an error (PyTorch's), not a silently wrong gradient."""
    mg.manual_seed(0)
    m = nn.LSTM(3, 4)
    m.fused = fused
    x, h0, c0 = mg.randn(2, 1, 3), mg.randn(1, 1, 4), mg.randn(1, 1, 4, requires_grad=True)
    out, _ = m(x, (h0, c0))
    with mg.no_grad():
        c0.zero_()
    with pytest.raises(RuntimeError, match=f"{op} has been modified by an in-place"):
        out.sum().backward()


def test_the_lstm_cells_h_depends_on_its_c_in_the_graph():
    """h' = o·tanh(c') is an op of c': a hook, retain_grad or mg.grad on c' sees the part
    of its gradient that comes through h' (PyTorch: the same figure)."""
    from minigrad.ops.rnn_cells import lstm_cell
    rng = np.random.default_rng(2)
    gates = mg.tensor(rng.standard_normal((2, 12)), dtype=mg.float64)
    c = mg.tensor(rng.standard_normal((2, 3)), dtype=mg.float64, requires_grad=True)
    h, c2 = lstm_cell(gates, c)
    got, = mg.grad(h.sum(), c2)
    o, t = 1 / (1 + np.exp(-gates.numpy()[:, 9:])), np.tanh(c2.detach().numpy())
    np.testing.assert_allclose(got.numpy(), o * (1 - t * t), rtol=1e-12)


def test_fused_cells_refuse_mismatched_batch_dims():
    from minigrad.ops.rnn_cells import lstm_cell, gru_cell
    with pytest.raises(ValueError, match="lstm_cell"):
        lstm_cell(mg.zeros(1, 8), mg.zeros(3, 2))
    with pytest.raises(ValueError, match="gru_cell"):
        gru_cell(mg.zeros(1, 6), mg.zeros(1, 6), mg.zeros(3, 2))


class _WithState(nn.Module):
    """cell(x, (h, c)) as a module of three tensor inputs, for gradcheck_module."""

    def __init__(self, cell):
        super().__init__()
        self.cell = cell

    def forward(self, x, h, c):
        return self.cell(x, (h, c))


@pytest.mark.parametrize("name, kw", [
    ("RNN", dict(num_layers=2, bidirectional=True)),
    ("GRU", dict(num_layers=2, bidirectional=True, batch_first=True)),
    ("LSTM", dict(num_layers=2, bidirectional=True)),
], ids=str)
def test_layer_gradcheck(name, kw):
    mg.manual_seed(0)
    layer = getattr(nn, name)(2, 2, **kw)
    x = mg.randn(2, 3, 2) if kw.get("batch_first") else mg.randn(3, 2, 2)   # B=2, T=3
    h0 = mg.randn(4, 2, 2)
    if name == "LSTM":
        gradcheck_module(_LSTMWithState(layer), x, h0, mg.randn(4, 2, 2))
    else:
        gradcheck_module(layer, x, h0)


class _LSTMWithState(nn.Module):
    def __init__(self, lstm):
        super().__init__()
        self.lstm = lstm

    def forward(self, x, h0, c0):
        return self.lstm(x, (h0, c0))


def test_output_and_state_layout():
    mg.manual_seed(0)
    gru = nn.GRU(3, 4, num_layers=2, bidirectional=True, batch_first=True)
    out, h = gru(mg.randn(2, 5, 3))
    assert out.shape == (2, 5, 8) and h.shape == (4, 2, 4)
    # the last layer's forward final state is the output's last step (first half);
    # its backward final state is the output's first step (second half)
    np.testing.assert_allclose(h.numpy()[2], out.numpy()[:, -1, :4], rtol=1e-6)
    np.testing.assert_allclose(h.numpy()[3], out.numpy()[:, 0, 4:], rtol=1e-6)
    lstm = nn.LSTM(3, 4)
    out, (h, c) = lstm(mg.randn(5, 2, 3))
    assert out.shape == (5, 2, 4) and h.shape == c.shape == (1, 2, 4)


def test_dropout_between_layers_only():
    mg.manual_seed(0)
    x1, x2 = mg.randn(4, 2, 3), mg.randn(4, 2, 3)
    gru = nn.GRU(3, 4, num_layers=2, dropout=1.0)
    out1, _ = gru(x1)
    out2, _ = gru(x2)
    # p=1 zeroes the second layer's input: the output no longer depends on x, but the last
    # layer's output itself is not dropped
    np.testing.assert_allclose(out1.numpy(), out2.numpy())
    assert np.abs(out1.numpy()).min() > 0
    gru.eval()
    assert not np.allclose(gru(x1)[0].numpy(), gru(x2)[0].numpy())
    with pytest.warns(UserWarning, match="num_layers=1"):
        single = nn.GRU(3, 4, dropout=0.5)
    a = single(x1)[0].numpy()
    single.eval()
    np.testing.assert_allclose(single(x1)[0].numpy(), a)   # nothing dropped after the last


def test_long_sequence_backprop():
    mg.manual_seed(0)
    rnn = nn.GRU(2, 3)
    x = mg.randn(1000, 1, 2, requires_grad=True)
    out, h = rnn(x)
    h.sum().backward()
    assert x.grad.shape == x.shape and rnn.weight_hh_l0.grad is not None


# ---- errors -----------------------------------------------------------------------------------
def test_bad_inputs_raise_clear_errors():
    gru = nn.GRU(3, 4, num_layers=2)
    with pytest.raises(ValueError, match=r"expected input of 3 dims.*got shape \(2, 3, 4, 3\)"):
        gru(mg.randn(2, 3, 4, 3))
    with pytest.raises(ValueError, match="expected input feature size .*3, got 5"):
        gru(mg.randn(4, 2, 5))
    with pytest.raises(ValueError, match=r"expected h0 of shape \(2, 2, 4\).*got \(1, 2, 4\)"):
        gru(mg.randn(4, 2, 3), mg.randn(1, 2, 4))
    with pytest.raises(ValueError, match=r"expected h0 of shape \(2, 4\)"):
        gru(mg.randn(4, 3), mg.randn(2, 1, 4))                  # unbatched needs 2-d h0
    lstm = nn.LSTM(3, 4)
    with pytest.raises(ValueError, match=r"tuple \(h0, c0\)"):
        lstm(mg.randn(4, 2, 3), mg.randn(1, 2, 4))
    with pytest.raises(ValueError, match=r"expected c0 of shape \(1, 2, 4\)"):
        lstm(mg.randn(4, 2, 3), (mg.randn(1, 2, 4), mg.randn(1, 3, 4)))
    with pytest.raises(ValueError, match="empty"):
        gru(mg.randn(0, 2, 3))
    cell = nn.GRUCell(3, 4)
    with pytest.raises(ValueError, match="expected input feature size 3, got 2"):
        cell(mg.randn(2, 2))
    with pytest.raises(ValueError, match=r"expected input of shape \(batch, 3\)"):
        cell(mg.randn(1, 2, 3))
    with pytest.raises(ValueError, match=r"expected hidden state of shape \(2, 4\)"):
        cell(mg.randn(2, 3), mg.randn(3, 4))
    with pytest.raises(ValueError, match=r"tuple \(h, c\)"):
        nn.LSTMCell(3, 4)(mg.randn(2, 3), mg.randn(2, 4))


def test_bad_input_and_state_types_are_named():
    gru, cell = nn.GRU(3, 4), nn.GRUCell(3, 4)
    with pytest.raises(ValueError, match="empty"):
        gru(mg.randn(0, 3))                                     # unbatched, length 0
    with pytest.raises(TypeError, match="h0 must be a Tensor, got tuple"):
        gru(mg.randn(4, 2, 3), (mg.randn(1, 2, 4),))            # LSTM's form given to a GRU
    with pytest.raises(TypeError, match="hidden state must be a Tensor, got tuple"):
        cell(mg.randn(2, 3), (mg.randn(2, 4),))
    with pytest.raises(TypeError, match="h0 is float64 on cpu but the input is float32"):
        gru(mg.randn(4, 2, 3), mg.randn(1, 2, 4, dtype=mg.float64))
    with pytest.raises(TypeError, match="input must be floating-point, got dtype int64"):
        gru(mg.zeros(4, 2, 3, dtype=mg.int64))              # would be cast silently
    with pytest.raises(TypeError, match="input must be a Tensor, got list"):
        gru([[1.0, 2.0, 3.0]])
    with pytest.raises(ValueError, match="GRU: input dtype float64 does not match the "
                                        "weights' float32"):
        gru(mg.randn(4, 2, 3, dtype=mg.float64))            # (named, not linear's words)
    gru.flatten_parameters()                                # PyTorch code calls it: a no-op
    with pytest.raises(TypeError, match="c0 must be a Tensor"):
        nn.LSTM(3, 4)(mg.randn(4, 2, 3), (mg.randn(1, 2, 4), [1]))
    with pytest.raises(ValueError, match="dropout must be a probability"):
        nn.GRU(3, 4, num_layers=2, dropout="0.5")
    with pytest.raises(ValueError, match="hidden_size must be a positive integer, got True"):
        nn.GRU(3, True)
    with pytest.raises(ValueError, match="num_layers must be an integer"):
        nn.GRU(3, 4, num_layers=True)


def test_rnn_takes_torchs_positional_order():
    """nn.RNN(input_size, hidden_size, num_layers, nonlinearity, bias, batch_first, dropout,
    bidirectional), as torch.nn.RNN; GRU/LSTM have no nonlinearity."""
    rnn = nn.RNN(4, 5, 2, "relu", False, True, 0.0, True)
    assert (rnn.mode, rnn.num_layers, rnn.bias, rnn.batch_first, rnn.bidirectional) == \
        ("RNN_RELU", 2, False, True, True)
    assert "bias_ih_l0" not in dict(rnn.named_parameters())
    lstm = nn.LSTM(4, 5, 1, False, True)
    assert (lstm.bias, lstm.batch_first) == (False, True)
    torch = pytest.importorskip("torch")
    names = [n for n, _ in torch.nn.RNN(4, 5, 2, "relu", False, True, 0.0, True)
             .named_parameters()]
    assert [n for n, _ in rnn.named_parameters()] == names


def test_bad_constructor_arguments():
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNN(3, 4, nonlinearity="sigmoid")
    with pytest.raises(ValueError, match="nonlinearity"):
        nn.RNNCell(3, 4, nonlinearity="gelu")
    with pytest.raises(ValueError, match="num_layers"):
        nn.LSTM(3, 4, num_layers=0)
    with pytest.raises(ValueError, match="dropout"):
        nn.GRU(3, 4, num_layers=2, dropout=1.5)
    with pytest.raises(ValueError, match="hidden_size"):
        nn.GRU(3, 0)
    with pytest.raises(ValueError, match="input_size"):
        nn.LSTMCell(-1, 4)
    with pytest.raises(TypeError, match="bias must be True or False, got 'relu'"):
        nn.GRU(4, 5, 1, "relu")                           # nonlinearity is RNN's alone
    with pytest.raises(TypeError, match="bias must be True or False, got 1"):
        nn.RNNCell(3, 4, 1)


# ---- the cells' equations, by hand in NumPy (PyTorch's, gate order included; no torch) -------
def _sig(a):
    return 1 / (1 + np.exp(-a))


def _np_step(kind, p, x, state, sfx=""):
    """One step of PyTorch's equations from the module's weights `p` (name -> array)."""
    gi = x @ p["weight_ih" + sfx].T + p.get("bias_ih" + sfx, 0)
    h = state[0] if kind == "LSTM" else state
    gh = h @ p["weight_hh" + sfx].T + p.get("bias_hh" + sfx, 0)
    if kind in ("RNN_TANH", "RNN_RELU"):
        a = gi + gh
        return np.tanh(a) if kind == "RNN_TANH" else np.maximum(a, 0)
    H = h.shape[-1]
    if kind == "GRU":                                  # gates r, z, n
        r = _sig(gi[:, :H] + gh[:, :H])
        z = _sig(gi[:, H:2 * H] + gh[:, H:2 * H])
        n = np.tanh(gi[:, 2 * H:] + r * gh[:, 2 * H:])
        return (1 - z) * n + z * h
    c = state[1]                                       # LSTM gates i, f, g, o
    a = gi + gh
    i, f = _sig(a[:, :H]), _sig(a[:, H:2 * H])
    g, o = np.tanh(a[:, 2 * H:3 * H]), _sig(a[:, 3 * H:])
    c = f * c + i * g
    return o * np.tanh(c), c


def _params(m):
    return {n: p.numpy() for n, p in m.named_parameters()}


@pytest.mark.parametrize("name, kw, kind", [
    ("RNNCell", {}, "RNN_TANH"), ("RNNCell", {"nonlinearity": "relu"}, "RNN_RELU"),
    ("GRUCell", {}, "GRU"), ("GRUCell", {"bias": False}, "GRU"), ("LSTMCell", {}, "LSTM")],
    ids=str)
def test_cell_equations_by_hand(name, kw, kind):
    mg.manual_seed(0)
    cell = getattr(nn, name)(3, 4, **kw).double()
    rng = np.random.default_rng(1)
    x, h, c = rng.standard_normal((2, 3)), rng.standard_normal((2, 4)), rng.standard_normal((2, 4))
    p = _params(cell)
    if kind == "LSTM":
        got = [t.numpy() for t in cell(mg.tensor(x), (mg.tensor(h), mg.tensor(c)))]
        want = _np_step(kind, p, x, (h, c))
    else:
        got, want = [cell(mg.tensor(x), mg.tensor(h)).numpy()], [_np_step(kind, p, x, h)]
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("name, kind", [("RNN", "RNN_TANH"), ("GRU", "GRU"), ("LSTM", "LSTM")])
def test_stacked_bidirectional_layers_by_hand(name, kind):
    """2 layers x 2 directions, unrolled by hand: the reverse direction reads the sequence
    from the end, the next layer reads [forward; backward], and state k = layer·2 + direction
    (PyTorch's layout of h0/h_n)."""
    mg.manual_seed(0)
    layer = getattr(nn, name)(3, 2, num_layers=2, bidirectional=True).double()
    rng = np.random.default_rng(2)
    T, B, H = 4, 2, 2
    x = rng.standard_normal((T, B, 3))
    h0 = rng.standard_normal((4, B, H))
    c0 = rng.standard_normal((4, B, H))
    p = _params(layer)
    inp, h_n, c_n = x, [], []
    for lyr in range(2):
        outs = []
        for d in range(2):
            k, sfx = lyr * 2 + d, f"_l{lyr}" + ("_reverse" if d else "")
            state = (h0[k], c0[k]) if kind == "LSTM" else h0[k]
            ys = [None] * T
            for t in (reversed(range(T)) if d else range(T)):
                state = _np_step(kind, p, inp[t], state, sfx)
                ys[t] = state[0] if kind == "LSTM" else state
            outs.append(np.stack(ys))
            h_n.append(state[0] if kind == "LSTM" else state)
            if kind == "LSTM":
                c_n.append(state[1])
        inp = np.concatenate(outs, -1)
    if kind == "LSTM":
        out, (h, c) = layer(mg.tensor(x), (mg.tensor(h0), mg.tensor(c0)))
        np.testing.assert_allclose(c.numpy(), np.stack(c_n), rtol=1e-10, atol=1e-12)
    else:
        out, h = layer(mg.tensor(x), mg.tensor(h0))
    np.testing.assert_allclose(out.numpy(), inp, rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(h.numpy(), np.stack(h_n), rtol=1e-10, atol=1e-12)
