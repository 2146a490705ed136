"""Ported scripts, an eighth set (see test_ported_scripts.py): PyTorch's recipes on a
model's state (state_dict, checkpoints, warm starts, zeroing gradients, the default
device, shapes, forward hooks, parameters_to_vector: port_recipes.py) and the "Pruning"
tutorial (port_prune.py). Each runs under minigrad and, from minigrad's initial weights
and draws, under PyTorch: the same values."""
import numpy as np

import minigrad
from port_helpers import _compare, _libs
from port_prune import pruning
from port_recipes import recipes


def test_state_recipes_save_load_warmstart_hooks():
    out = recipes(*_libs(minigrad))[1]
    assert np.isfinite(out).all() and len(out) == 74
    assert out[:4] == [6, 3, 5, 5] and out[19:22] == [0.001, 0.9, 0.0]
    assert out[22:32] == list(range(10))                     # the optimizer's param ids
    assert out[33] < out[32] and out[35] == out[36]          # the checkpoint resumes exactly
    assert out[41:43] == [2, 6]                              # missing, unexpected keys
    assert out[46:58] == [1, 6, 28, 28, 1, 6, 14, 14, 1, 16, 10, 10]   # the shapes seen
    assert out[-3] == 62006 and abs(out[-1] - 2 * out[-2]) < 1e-3


def test_state_recipes_match_torch(torch):
    _compare(torch, recipes)


def test_pruning_tutorial():
    out = pruning(*_libs(minigrad))[1]
    assert len(out) == 33 and np.isfinite(out).all()
    assert sum(out[:6]) == 3 and out[6] == 3                 # three biases pruned
    assert sorted(out[7:13]) == [0, 0, 0] + sorted(out[7:13])[3:]   # half the channels
    assert out[13] == out[14]                                # prune.remove keeps the values
    assert abs(out[21] - 20) < 0.01                          # global sparsity
    assert out[22:32] == [0.0, 1.0] * 5                      # the custom method's mask


def test_pruning_tutorial_matches_torch(torch):
    _compare(torch, pruning)
