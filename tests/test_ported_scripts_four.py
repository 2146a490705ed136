"""Ported scripts, a fourth set (see test_ported_scripts.py): PyTorch's seq2seq translation
tutorial with Bahdanau attention, batched (port_translation.py) and in its older
one-pair-at-a-time form (port_translation_classic.py); Karpathy's minGPT, its model,
trainer and sort task (port_mingpt.py); PyTorch's DQN tutorial on a small corridor
(port_dqn.py); and makemore part 5, the WaveNet (port_wavenet.py). Each runs under minigrad
and, from minigrad's initial weights, under PyTorch: the same losses step by step.

Where a program draws (a RandomSampler's order, torch.randint, torch.rand), PyTorch's
stream is not minigrad's: the torch run replays minigrad's draws (port_helpers._drawn,
_Draws, _Replayed). Sampling alone (multinomial) is checked for validity, not compared."""
import numpy as np
import pytest

import minigrad
from port_dqn import dqn
from port_helpers import _compare, _libs
from port_mingpt import mingpt
from port_translation import translation
from port_translation_classic import translation_classic
from port_wavenet import wavenet


def test_translation_with_attention_trains_and_evaluates():
    losses = translation(*_libs(minigrad))[1]
    assert np.isfinite(losses).all() and len(losses) == 22       # 12 steps, 2 plot points
    assert np.mean(losses[9:12]) < np.mean(losses[:3]) and losses[13] < losses[12]
    assert set(losses[14:17]) <= {0.0, 1.0}                      # translated right or not


def test_translation_with_attention_matches_torch(torch):
    _compare(torch, translation, dropout=0.0)


def test_translation_classic_trains():
    losses = translation_classic(*_libs(minigrad))[1]
    assert np.isfinite(losses).all() and np.mean(losses[12:16]) < np.mean(losses[:4])
    assert abs(sum(losses[16:]) - 1) < 1e-5                     # the first attention row


def test_translation_classic_matches_torch(torch):
    _compare(torch, translation_classic, dropout=0.0)


def test_mingpt_trains_on_the_sort_task(tmp_path):
    losses = mingpt(*_libs(minigrad), ckpt_dir=str(tmp_path))[1]
    assert np.isfinite(losses).all() and len(losses) == 16
    assert np.mean(losses[9:12]) < np.mean(losses[:3])
    assert 0 <= losses[12] <= 12 and set(losses[13:]) <= {0, 1, 2}


def test_mingpt_trains_with_the_trainers_worker_processes():
    losses = mingpt(*_libs(minigrad), num_workers=2)[1]      # the trainer's default is 4
    assert np.isfinite(losses).all() and np.mean(losses[9:12]) < np.mean(losses[:3])


@pytest.mark.filterwarnings("ignore:'pin_memory' argument is set as true")     # PyTorch's
def test_mingpt_matches_torch(torch, tmp_path):
    _compare(torch, mingpt, dropout=0.0, ckpt_dir=str(tmp_path))


def test_dqn_optimizes_on_the_corridor():
    losses = dqn(*_libs(minigrad))[1]
    assert np.isfinite(losses).all() and len(losses) == 22      # 14 steps, 6 means, 2
    assert np.mean(losses[10:14]) < np.mean(losses[:4])
    assert losses[-2] > 0 and losses[-1] == 21                  # the target net follows


def test_dqn_matches_torch(torch):
    _compare(torch, dqn)


def test_wavenet_trains_and_samples():
    losses = wavenet(*_libs(minigrad))[1]
    assert np.isfinite(losses).all() and len(losses) == 17      # 12 steps, 3 means, 2
    np.testing.assert_allclose(losses[12:15], np.mean(np.reshape(losses[:12], (3, 4)), 1),
                               rtol=1e-6)
    assert losses[14] < losses[12]


def test_wavenet_matches_torch(torch):
    _compare(torch, wavenet)
