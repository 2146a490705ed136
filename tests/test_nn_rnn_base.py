"""nn.RNNBase and nn.RNNCellBase, the public bases of the RNN family (nn/rnn.py,
nn/rnn_cells.py): torch's constructors, its state-dict names and shapes, isinstance as
torch's, and RNNBase(mode, ...) running as the layer of that mode (torch's RNNBase has no
forward; compared with torch's layer)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from nn_helpers import compare_with_torch

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None

MODES = [("LSTM", lambda **kw: torch.nn.LSTM(**kw)), ("GRU", lambda **kw: torch.nn.GRU(**kw)),
         ("RNN_TANH", lambda **kw: torch.nn.RNN(**kw)),
         ("RNN_RELU", lambda **kw: torch.nn.RNN(nonlinearity="relu", **kw))]


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


@pytest.mark.parametrize("mode, layer", MODES, ids=[m for m, _ in MODES])
def test_rnn_base_runs_as_the_layer_of_its_mode(torch, mode, layer):
    torch.manual_seed(0)
    kw = dict(input_size=3, hidden_size=4, num_layers=2, bidirectional=True, batch_first=True)
    m = nn.RNNBase(mode, **kw)
    ref = torch.nn.RNNBase(mode, **kw)
    assert [(k, tuple(v.shape)) for k, v in m.state_dict().items()] == \
        [(k, tuple(v.shape)) for k, v in ref.state_dict().items()]
    assert m.mode == ref.mode == mode and isinstance(m, nn.Module)
    x, h0, c0 = _x(2, 5, 3), _x(4, 2, 4, seed=1), _x(4, 2, 4, seed=2)
    if mode == "LSTM":
        compare_with_torch(m, layer(**kw), [x, h0, c0], call=lambda mod, x, h, c: mod(x, (h, c)))
    else:
        compare_with_torch(m, layer(**kw), [x, h0])


def test_rnn_base_lstm_projection_and_positional_args(torch):
    m = nn.RNNBase("LSTM", 3, 5, 1, False, False, 0.0, False, 2)
    ref = torch.nn.RNNBase("LSTM", 3, 5, 1, False, False, 0.0, False, 2)
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in ref.state_dict().items()}
    out, (h, c) = m(mg.ones(4, 1, 3))
    assert out.shape == (4, 1, 2) and h.shape == (1, 1, 2) and c.shape == (1, 1, 5)


def test_isinstance_as_torch(torch):
    for name in ("RNN", "GRU", "LSTM"):
        assert isinstance(getattr(nn, name)(2, 3), nn.RNNBase)
        assert isinstance(getattr(torch.nn, name)(2, 3), torch.nn.RNNBase)
    for name in ("RNNCell", "GRUCell", "LSTMCell"):
        assert isinstance(getattr(nn, name)(2, 3), nn.RNNCellBase)
        assert isinstance(getattr(torch.nn, name)(2, 3), torch.nn.RNNCellBase)
        assert not isinstance(getattr(nn, name)(2, 3), nn.RNNBase)
    assert nn.RNN(2, 3, nonlinearity="relu").mode == "RNN_RELU"
    assert nn.RNN(2, 3, nonlinearity="relu").nonlinearity == "relu"


def test_rnn_base_errors():
    with pytest.raises(ValueError, match="unrecognized RNN mode 'FOO'"):
        nn.RNNBase("FOO", 2, 3)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.RNNBase("GRU", 2, 3, proj_size=1)         # (torch's builds one that cannot run)
    with pytest.raises(ValueError, match="only supported for LSTM"):
        nn.GRU(2, 3, proj_size=0)                     # as torch: not even 0
    assert nn.RNNBase("GRU", 2, 3, proj_size=0).proj_size == 0
    with pytest.raises(ValueError, match="smaller than hidden_size"):
        nn.RNNBase("LSTM", 2, 3, proj_size=3)


def test_rnn_cell_base_constructor_as_torch(torch):
    m, ref = nn.RNNCellBase(2, 3, True, 4), torch.nn.RNNCellBase(2, 3, True, 4)
    assert {k: tuple(v.shape) for k, v in m.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in ref.state_dict().items()}
    bound = 1 / np.sqrt(3)
    assert all(np.abs(p.numpy()).max() <= bound for p in m.parameters())
    assert list(nn.RNNCellBase(2, 3, False, 1).state_dict()) == ["weight_ih", "weight_hh"]
    with pytest.raises(NotImplementedError, match="no forward"):
        m(mg.ones(2))
    with pytest.raises(ValueError, match="num_chunks"):
        nn.RNNCellBase(2, 3, True, 0)


def test_rnn_cell_base_subclass_with_a_mode_runs_that_step(torch):
    class MyGRU(nn.RNNCellBase):
        mode = "GRU"

        def __init__(self, i, h):
            super().__init__(i, h, True, 3)
    torch.manual_seed(0)
    compare_with_torch(MyGRU(3, 4), torch.nn.GRUCell(3, 4), [_x(2, 3), _x(2, 4, seed=1)])


def test_reprs_as_torch(torch):
    """Layers and cells print as PyTorch's: no nonlinearity on the layers, an unquoted one
    on RNNCell."""
    kw = dict(num_layers=2, bias=False, batch_first=True, dropout=0.5, bidirectional=True)
    pairs = [(nn.RNN(3, 4, nonlinearity="relu", **kw),
              torch.nn.RNN(3, 4, nonlinearity="relu", **kw)),
             (nn.RNNBase("RNN_RELU", 3, 4), torch.nn.RNNBase("RNN_RELU", 3, 4)),
             (nn.LSTM(3, 4, proj_size=2), torch.nn.LSTM(3, 4, proj_size=2)),
             (nn.RNNCell(3, 4, bias=False, nonlinearity="relu"),
              torch.nn.RNNCell(3, 4, bias=False, nonlinearity="relu")),
             (nn.GRUCell(3, 4, bias=False), torch.nn.GRUCell(3, 4, bias=False))]
    for m, t in pairs:
        assert repr(m) == repr(t)


def test_subclasses_of_rnn_and_gru_refuse_proj_size_as_torch():
    """A user subclass refuses proj_size=0 as nn.RNN and nn.GRU do (torch's too); a subclass
    of RNNBase of any name takes it."""
    class MyGRU(nn.GRU):
        pass

    class RNN(nn.RNNBase):                         # named as the layer, but RNNBase's
        pass
    for cls in (nn.GRU, MyGRU, nn.RNN):
        with pytest.raises(ValueError, match="proj_size"):
            cls(3, 4, proj_size=0)
    assert RNN("GRU", 3, 4, proj_size=0).proj_size == 0
