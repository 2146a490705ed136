"""Ported scripts, a seventh set (see test_ported_scripts.py): PyTorch's torch.func
tutorials (per-sample gradients, model ensembling, Jacobians/Hessians/hvp, neural tangent
kernels: port_func_tutorials.py), the forward-mode AD tutorial (port_forward_ad.py) and the
custom autograd Function tutorials (double backward, fused conv+BN, extending torch.func:
port_custom_functions.py). Each runs under minigrad, its own checks (1.0: allclose against
a loop or a closed form) asserted, and, from minigrad's draws, under PyTorch: the same."""
import numpy as np

import minigrad
from port_custom_functions import custom_functions
from port_forward_ad import forward_ad
from port_func_tutorials import func_tutorials
from port_helpers import _compare, _libs

_CHECKS = {"psg": [1, 2, 4, 6, 8, 10, 12, 14, 16, 18], "ens": [0, 1, 2, 3],
           "jac": [0, 7, 8, 9, 10, 11, 12, 13, 20, 21, 23, 24, 34],
           "ntk": [0, 10, 11, 12]}


def test_func_tutorials_agree_with_loops():
    for part, checks in _CHECKS.items():
        out = func_tutorials(*_libs(minigrad), parts=(part,))[1]
        assert np.isfinite(out).all()
        assert [out[i] for i in checks] == [1.0] * len(checks), part


def test_func_tutorials_match_torch(torch):
    _compare(torch, func_tutorials)


def test_forward_ad_tutorial_tangents():
    out = forward_ad(*_libs(minigrad))[1]
    assert len(out) == 20 and np.isfinite(out).all()
    assert [out[i] for i in (0, 1, 2, 3, 5, 11, 12, 14, 15, 16, 17, 18)] == [1.0] * 12


def test_forward_ad_tutorial_matches_torch(torch):
    _compare(torch, forward_ad)


def test_custom_function_tutorials():
    out = custom_functions(*_libs(minigrad))[1]
    assert len(out) == 24 and np.isfinite(out).all()
    assert out[:8] == [1.0] * 8 and out[9] == 1.0 and out[16:23] == [1.0] * 7
    assert out[12] < out[10] and out[15] < out[13]     # both conv+BN versions learn


def test_custom_function_tutorials_match_torch(torch):
    _compare(torch, custom_functions)
