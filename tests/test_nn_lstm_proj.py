"""nn.LSTM with proj_size (each step's h projected by weight_hr, h = W_hr (o ⊙ tanh c)):
against PyTorch with its state dict loaded (outputs, final states, every gradient; batched,
batch-first, unbatched, stacked, bidirectional, without bias), the parameters and repr,
float64 gradchecks, dropout between layers, and the errors PyTorch raises."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from nn_helpers import compare_with_torch, gradcheck_module


def _torch():
    torch = pytest.importorskip("torch")
    # PyTorch's CPU note that oneDNN has no projections: not ours to show
    warnings.filterwarnings("ignore", "LSTM with projections", UserWarning)
    return torch


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


CONFIGS = [dict(proj_size=2), dict(proj_size=1, bias=False),
           dict(proj_size=3, num_layers=2, bidirectional=True),
           dict(proj_size=2, num_layers=2, bidirectional=True, batch_first=True)]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kw", CONFIGS, ids=str)
def test_lstm_with_projection_matches_torch(kw, dtype):
    torch = _torch()
    torch.manual_seed(0)
    make = lambda lib: lib.LSTM(3, 4, **kw)  # noqa: E731
    LD = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    x = _x(2, 5, 3) if kw.get("batch_first") else _x(5, 2, 3)
    h0, c0 = _x(LD, 2, kw["proj_size"], seed=1), _x(LD, 2, 4, seed=2)
    compare_with_torch(make(nn), make(torch.nn), [x], dtype)            # zero initial state
    compare_with_torch(make(nn), make(torch.nn), [x, h0, c0], dtype,
                       call=lambda m, x, h, c: m(x, (h, c)))
    compare_with_torch(make(nn), make(torch.nn), [x[0], h0[:, 0], c0[:, 0]], dtype,
                       call=lambda m, x, h, c: m(x, (h, c)))            # unbatched


def test_projection_shapes_parameters_and_repr_as_torch():
    torch = _torch()
    kw = dict(proj_size=2, num_layers=2, bidirectional=True)
    m, t = nn.LSTM(3, 5, **kw), torch.nn.LSTM(3, 5, **kw)
    assert [(n, p.shape) for n, p in m.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    assert list(m.state_dict()) == list(t.state_dict())
    assert repr(m) == repr(t) == "LSTM(3, 5, proj_size=2, num_layers=2, bidirectional=True)"
    assert m.proj_size == 2 and nn.LSTM(3, 5).proj_size == nn.GRU(3, 5).proj_size == 0
    out, (h, c) = m(mg.randn(6, 4, 3))
    assert out.shape == (6, 4, 4) and h.shape == (4, 4, 2) and c.shape == (4, 4, 5)
    # PyTorch's positional order: proj_size after bidirectional
    assert nn.LSTM(3, 5, 1, True, False, 0.0, False, 2).weight_hr_l0.shape == (2, 5)
    bound = 1 / np.sqrt(5)                     # every parameter U(-1/√H, 1/√H), w_hr too
    w_hr = nn.LSTM(3, 5, proj_size=4).weight_hr_l0.numpy()
    assert np.abs(w_hr).max() <= bound and np.abs(w_hr).max() > 0.5 * bound


def test_projection_by_hand():
    """One step from zeros: c = i⊙g, h = W_hr (o⊙tanh c), the output h."""
    mg.manual_seed(0)
    lstm = nn.LSTM(2, 3, proj_size=1, bias=False).double()
    x = np.array([[0.5, -1.0]])
    a = x @ lstm.weight_ih_l0.numpy().T
    sig = lambda v: 1 / (1 + np.exp(-v))  # noqa: E731
    c = sig(a[:, :3]) * np.tanh(a[:, 6:9])
    h = (sig(a[:, 9:]) * np.tanh(c)) @ lstm.weight_hr_l0.numpy().T
    out, (h_n, c_n) = lstm(mg.tensor(x[None], dtype=mg.float64))
    np.testing.assert_allclose(out.numpy()[0], h, rtol=1e-12)
    np.testing.assert_allclose(h_n.numpy()[0], h, rtol=1e-12)
    np.testing.assert_allclose(c_n.numpy()[0], c, rtol=1e-12)


class _WithState(nn.Module):
    def __init__(self, lstm):
        super().__init__()
        self.lstm = lstm

    def forward(self, x, h0, c0):
        return self.lstm(x, (h0, c0))


@pytest.mark.parametrize("kw", [dict(), dict(bidirectional=True, batch_first=True)], ids=str)
def test_projection_gradcheck(kw):
    mg.manual_seed(0)
    LD = 2                                     # two layers, or one bidirectional
    lstm = nn.LSTM(1, 2, num_layers=1 if kw else 2, proj_size=1, **kw)
    gradcheck_module(_WithState(lstm), mg.randn(2, 2, 1), mg.randn(LD, 2, 1),
                     mg.randn(LD, 2, 2))


def test_projection_gradgradcheck():
    mg.manual_seed(0)
    lstm = nn.LSTM(1, 2, proj_size=1).double()
    ins = [mg.randn(*s, dtype=mg.float64, requires_grad=True)
           for s in ((2, 1, 1), (1, 1, 1), (1, 1, 2))]
    params = list(lstm.parameters())
    names = [n for n, _ in lstm.named_parameters()]

    def fn(x, h0, c0, *ps):
        out, (h, c) = nn.utils.functional_call(lstm, dict(zip(names, ps)), (x, (h0, c0)))
        return out, h, c
    assert mg.gradgradcheck(fn, ins + params)


def test_dropout_between_projected_layers():
    mg.manual_seed(0)
    lstm = nn.LSTM(3, 4, num_layers=2, proj_size=2, dropout=1.0)
    x1, x2 = mg.randn(4, 2, 3), mg.randn(4, 2, 3)
    # p=1 zeroes the second layer's (D·P)-wide input: the output no longer depends on x
    np.testing.assert_allclose(lstm(x1)[0].numpy(), lstm(x2)[0].numpy())
    lstm.eval()
    assert not np.allclose(lstm(x1)[0].numpy(), lstm(x2)[0].numpy())


def test_bad_proj_size_and_states_raise_torchs_errors():
    with pytest.raises(ValueError, match="proj_size should be a positive integer or zero"):
        nn.LSTM(3, 4, proj_size=-1)
    with pytest.raises(ValueError, match=r"proj_size has to be smaller than hidden_size \(4\)"):
        nn.LSTM(3, 4, proj_size=4)
    with pytest.raises(TypeError, match="proj_size must be an integer"):
        nn.LSTM(3, 4, proj_size=2.0)
    for name in ("RNN", "GRU"):
        with pytest.raises(ValueError, match="proj_size argument is only supported for LSTM"):
            getattr(nn, name)(3, 4, proj_size=2)
    lstm = nn.LSTM(3, 4, proj_size=2)
    x, s2, s4 = mg.zeros(5, 3, 3), mg.zeros(1, 3, 2), mg.zeros(1, 3, 4)
    with pytest.raises(ValueError, match=r"expected h0 of shape \(1, 3, 2\) \(num_layers \* "
                                         r"num_directions, batch, proj_size\), got \(1, 3, 4\)"):
        lstm(x, (s4, s4))
    with pytest.raises(ValueError, match=r"expected c0 of shape \(1, 3, 4\) .*hidden_size\)"):
        lstm(x, (s2, s2))
