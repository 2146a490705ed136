"""Ported scripts, a ninth set (see test_ported_scripts.py): PyTorch's "Adversarial Example
Generation" (FGSM: port_fgsm.py), "Neural Transfer Using PyTorch" (port_neural_style.py)
and "Parametrizations Tutorial" (port_parametrizations.py). Each runs under minigrad, its
closed-form checks asserted, and, from minigrad's initial weights and draws, under
PyTorch: the same values."""
import numpy as np

import minigrad
from port_fgsm import fgsm
from port_helpers import _compare, _libs
from port_neural_style import neural_style
from port_parametrizations import parametrizations


def test_fgsm_tutorial():
    out = fgsm(*_libs(minigrad))[1]
    assert np.isfinite(out).all() and len(out) >= 6
    accuracies = out[1:6]
    assert all(0 <= a <= 1 for a in accuracies)
    assert accuracies[0] >= accuracies[-1]           # epsilon 0.3 fools the model more
    examples = np.reshape(out[6:], (-1, 2))          # (initial, final prediction)
    assert len(examples) <= 25 and set(examples.ravel()) <= {0, 1, 2, 3}


def test_fgsm_tutorial_matches_torch(torch):
    _compare(torch, fgsm)


def test_neural_style_tutorial():
    out = neural_style(*_libs(minigrad))[1]
    assert np.isfinite(out).all()
    assert abs(out[0] - np.sqrt(2 / np.pi)) < 0.1    # the noise: E|z| of a standard normal
    assert out[1:3] == [18, 18]                      # trimmed after conv_5's style loss
    scores = np.reshape(out[3:-5], (-1, 2))          # (style, content) per closure call
    assert len(scores) == (out[-5] - 3) // 2 and len(scores) >= 7
    assert scores[0, 1] == 0.0                       # the input starts as the content image
    assert scores[-1, 0] < 0.1 * scores[0, 0]        # LBFGS brings the style loss down
    assert out[-4] >= 0.0 and out[-3] <= 1.0         # clamped to [0, 1]


def test_neural_style_tutorial_matches_torch(torch):
    _compare(torch, neural_style)


def test_parametrizations_tutorial():
    out = parametrizations(*_libs(minigrad))[1]
    assert len(out) == 62 and np.isfinite(out).all()
    A = np.reshape(out[1:10], (3, 3))
    np.testing.assert_array_equal(A, A.T)                       # Symmetric
    K = np.reshape(out[10:19], (3, 3))
    np.testing.assert_array_equal(K, -K.T)                      # Skew
    assert out[19] == 0.0 and out[20:23] == [True, True, False]
    assert out[23:25] == [4, 5]                                 # cached(): computed once
    assert abs(out[25] - 2 * out[26]) < 1e-4                    # foo = W + W.T, bar = W.sum()
    assert max(out[27:30]) < 1e-5 and out[30] is True           # orthogonal, symmetric, SPD
    assert out[40] < 1e-5                                       # still orthogonal after SGD
    assert out[41] < 1e-6 and out[42] < 1e-5                    # right_inverse round trips
    assert all(0 <= w < 1 for w in out[43:55])                  # pruned: 0 or torch.rand's
    assert out[55] == 0.0 and out[56:59] == [True, False, False]
    assert out[59] > 0 and out[60:62] == [True, True]           # leave_parametrized=False


def test_parametrizations_tutorial_matches_torch(torch):
    _compare(torch, parametrizations)
