"""Ported scripts, a tenth set (see test_ported_scripts.py): PyTorch's text classification
tutorial without torchtext (port_text_classification.py) and three of pytorch/examples:
time_sequence_prediction (port_time_sequence.py), regression (port_regression.py) and
siamese_network (port_siamese.py). Each runs under minigrad and, from minigrad's initial
weights and draws, under PyTorch: the same values step by step."""
import numpy as np

import minigrad
from port_helpers import _compare, _libs
from port_regression import regression
from port_siamese import siamese
from port_text_classification import text_classification
from port_time_sequence import time_sequence


def test_text_classification_trains_and_predicts():
    out = text_classification(*_libs(minigrad))[1]
    assert len(out) == 81 and np.isfinite(out).all()
    losses, norms = out[0:16:2], out[1:16:2]           # the first epoch's 8 batches
    assert losses[-1] < losses[0] and all(n > 0 for n in norms)
    assert out[-2] > 0.9 and out[-1] == 2              # test accuracy; "Sports"


def test_text_classification_matches_torch(torch):
    _compare(torch, text_classification)


def test_time_sequence_lbfgs_fits_sines():
    out = time_sequence(*_libs(minigrad))[1]
    assert np.isfinite(out).all()
    # per step: the closure's losses, step's (its first closure's) loss, the test loss,
    # the three test waves' last predicted values
    assert out[0] > 0.3 and out[-4] < out[0] / 20             # LBFGS brings it down
    assert all(abs(v) < 1.5 for v in out[-3:])                # a sine's range, about


def test_time_sequence_matches_torch(torch):
    _compare(torch, time_sequence)


def test_regression_fits_the_polynomial():
    out = regression(*_libs(minigrad), max_batches=2000)[1]
    coefs, batches, losses = out[-10:], out[-11], out[:-11]
    assert losses[-1] < 1e-3 <= min(losses[:-1]) and batches == len(losses) < 2000
    np.testing.assert_allclose(coefs[:5], coefs[5:], atol=0.1)   # learned ≈ actual


def test_regression_matches_torch(torch):
    # x^4's features amplify float32 rounding (NumPy's and PyTorch's powf, their sums'
    # orders) step by step: hundreds of steps drift past 1e-4; the first 150 agree
    _compare(torch, regression, max_batches=150)


def test_siamese_network_learns_pairs():
    out = siamese(*_libs(minigrad))[1]
    assert len(out) == 44 and np.isfinite(out).all()
    assert out[-2] > 45 and np.allclose(out[-1], 1.0 * 0.7 ** 4)   # of 64 pairs; StepLR
    assert np.mean(out[-11:-3]) < np.mean(out[:8])


def test_siamese_network_matches_torch(torch):
    _compare(torch, siamese)
