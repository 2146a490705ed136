"""Ported scripts, a third set (see test_ported_scripts.py): makemore part 4's hand-written
backward pass with its `cmp` checks (port_makemore.py), the Annotated Transformer's pieces
on the copy task (port_annotated.py), and PyTorch's word_language_model, its RNNModel and
TransformerModel (port_word_lm.py). Each runs under minigrad and, from minigrad's initial
weights, under PyTorch: the same losses step by step.

Where a program draws from a generator (torch.randint, multinomial), PyTorch's stream is
not minigrad's: the torch run replays what minigrad's run drew (port_helpers._drawn).
Sampling alone (multinomial) is checked for validity, not compared."""
import numpy as np
import pytest

import minigrad
from port_annotated import annotated
from port_helpers import _compare, _libs
from port_makemore import makemore
from port_word_lm import word_language_model


def test_makemore_backprop_ninja_checks_pass_and_trains():
    state0, losses, checks = makemore(*_libs(minigrad))
    assert len(checks) == 28
    for name, exact, approx, maxdiff in checks:
        assert approx and maxdiff < 1e-6, (name, exact, approx, maxdiff)
    assert np.isfinite(losses).all() and len(losses) == 13      # 1 + 10 steps + 2 splits
    assert np.mean(losses[7:11]) < np.mean(losses[1:5]) and losses[11] < losses[0]


def test_makemore_backprop_ninja_matches_torch(torch):
    _compare(torch, makemore)


def test_annotated_transformer_trains_on_the_copy_task():
    losses = annotated(*_libs(minigrad))[1]
    assert np.isfinite(losses).all() and losses[8] < losses[0]
    np.testing.assert_allclose(losses[10:20], [1.0, 1.0, 0.0, 1.0, 1.0,      # smoothed rows
                                               0.6, 0.4 / 3, 0.0, 0.4 / 3, 0.4 / 3], rtol=1e-6)
    schedule = np.array(losses[20:44]).reshape(3, 8)                # steps 0, 7, ..., 49
    steps = np.maximum(np.arange(0, 50, 7), 1)
    for row, (d_model, warmup) in zip(schedule, [(512, 4000), (512, 8000), (256, 4000)]):
        np.testing.assert_allclose(row, d_model ** -0.5 * steps * warmup ** -1.5, rtol=1e-5)
    assert losses[44] == 0                                          # decoding's start symbol


def test_annotated_transformer_matches_torch(torch):
    _compare(torch, annotated, dropout=0.0)


# the Transformer's mask is log(tril(ones)): log(0) is -inf, of which NumPy warns
@pytest.mark.filterwarnings("ignore:divide by zero encountered in log:RuntimeWarning")
@pytest.mark.parametrize("model_type", ["LSTM", "GRU", "Transformer"])
def test_word_language_model_trains(model_type, tmp_path):
    losses = word_language_model(*_libs(minigrad), model_type=model_type,
                                 ckpt_dir=str(tmp_path))[1]
    assert np.isfinite(losses).all() and losses[-1] < losses[3]        # validation loss


@pytest.mark.filterwarnings("ignore:divide by zero encountered in log:RuntimeWarning")
@pytest.mark.parametrize("model_type", ["LSTM", "GRU", "RNN_TANH", "Transformer"])
def test_word_language_model_matches_torch(torch, model_type, tmp_path):
    _compare(torch, word_language_model, model_type=model_type, dropout=0.0,
             ckpt_dir=str(tmp_path))
