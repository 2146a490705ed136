"""Ported scripts, a fifth set (see test_ported_scripts.py), five of PyTorch's tutorials:
"Learning PyTorch with Examples", sin(x) fitted seven ways (port_poly.py); "What is
torch.nn really?" on MNIST-shaped data (port_nn_really.py); translation with
nn.Transformer on a made-up pair of languages (port_nn_transformer.py); classifying names
with a character-level RNN, classic and newer (port_char_rnn.py); and spatial transformer
networks (port_stn.py). Each runs under minigrad and, from minigrad's initial weights,
under PyTorch: the same losses step by step (PyTorch's random draws replayed from
minigrad's, port_helpers._Draws and _Replayed)."""
import math

import numpy as np
import pytest

import minigrad
from port_char_rnn import char_rnn
from port_helpers import _compare, _libs
from port_nn_really import nn_really
from port_nn_transformer import nn_transformer
from port_poly import poly
from port_stn import stn

_ALIGN = "ignore:Default grid_sample and affine_grid behavior:UserWarning"   # as PyTorch's

# the tutorial's F.nll_loss(..., size_average=False): deprecated, in both libraries
_LEGACY = "ignore:.*size_average and reduce"


def test_poly_fits_sin_seven_ways():
    out = poly(*_libs(minigrad))[1]
    assert len(out) == 173 and np.isfinite(out).all()
    # raw tensors, autograd, Legendre, nn, RMSprop, the custom Module: 20 losses each
    for start in (0, 21, 41, 61, 82, 103):
        assert out[start + 19] < 0.7 * out[start]
    assert out[20] == out[143]                    # a, as raw_tensors' Result prints it
    assert out[81] == out[158] and out[102] == out[162]       # model[0]'s x^3 weight


def test_poly_matches_torch(torch):
    _compare(torch, poly)


def test_nn_really_trains_logistic_regression_and_cnns():
    out = nn_really(*_libs(minigrad))[1]
    assert len(out) == 18 and np.isfinite(out).all()
    assert abs(out[0] - math.log(10)) < 0.2 and out[2] < out[0] / 2
    # F.cross_entropy is log_softmax and nll by hand: the same loss and accuracy
    np.testing.assert_allclose(out[4:6], out[2:4], rtol=1e-6)
    assert out[7] < out[6] and out[9] < out[8]    # Mnist_Logistic, then with nn.Linear
    assert out[11] < out[10]                      # validation loss over two epochs
    assert all(abs(v - math.log(10)) < 0.3 for v in out[12:])


def test_nn_really_matches_torch(torch):
    _compare(torch, nn_really)


def test_nn_transformer_translation_trains_and_decodes():
    out = nn_transformer(*_libs(minigrad))[1]
    train, val = out[0:20:2], out[1:20:2]
    assert np.isfinite(out).all() and train[-1] < train[0] - 1 and val[-1] < val[0]
    assert out[20] == len(out) - 21 and all(4 <= i < 15 for i in out[21:])   # words


@pytest.mark.filterwarnings("ignore:enable_nested_tensor is True")           # PyTorch's
@pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")  # PyTorch's
def test_nn_transformer_translation_matches_torch(torch):
    _compare(torch, nn_transformer, dropout=0.0)


def test_char_rnn_classifies_names_both_ways():
    out = char_rnn(*_libs(minigrad))[1]
    assert len(out) == 349 and np.isfinite(out).all() and out[0] in range(4)
    assert np.mean(out[251:301]) < np.mean(out[1:51])             # the classic's 300 steps
    np.testing.assert_allclose(out[301:307], np.mean(np.reshape(out[1:301], (6, 50)), 1))
    confusion = np.reshape(out[307:323], (4, 4))                  # rows normalised
    np.testing.assert_allclose(confusion.sum(1), 1, rtol=1e-6)
    assert all(-5 < v < 0 for v in out[323:329])                  # predict's log-probs
    assert out[332] < out[329]                                    # the newer's epochs
    rows = np.reshape(out[333:], (4, 4)).sum(1)
    assert all(abs(r - 1) < 1e-6 or r == 0 for r in rows)


def test_char_rnn_matches_torch(torch):
    _compare(torch, char_rnn)


@pytest.mark.filterwarnings(_ALIGN)
@pytest.mark.filterwarnings(_LEGACY)
def test_stn_trains_from_the_identity_transform():
    out = stn(*_libs(minigrad))[1]
    assert len(out) == 12 and np.isfinite(out).all()
    assert np.mean(out[6:10]) < np.mean(out[:4])
    assert out[5] in range(129) and out[11] in range(129)         # test set: right answers


@pytest.mark.filterwarnings(_ALIGN)
@pytest.mark.filterwarnings("ignore:This DataLoader will create 4 worker")   # PyTorch's
@pytest.mark.filterwarnings(_LEGACY)
def test_stn_matches_torch(torch):
    """The first epoch only: the grid's gradient jumps where a place crosses a pixel
    centre, and the places start on the centres (the identity θ), so an ulp of θ decides
    sides; PyTorch against itself, its weights moved by 1e-7, drifts 1e-4 apart within a
    few steps, and so do the two libraries. Step 0 agrees (its places bit for bit,
    test_grid_sample.py)."""
    _compare(torch, stn, dropout=0.0, epochs=1)
