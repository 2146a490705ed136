"""A Module's state-dict hooks, as PyTorch 2.13's (the expected orders and values were read
off PyTorch): around state_dict() and load_state_dict(), to rename an old checkpoint's keys
or forgive keys a model can do without."""
import pickle

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


def test_state_dict_hooks_run_in_pytorchs_order_with_prefixes():
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 1)))
    calls = []
    for name, mod in m.named_modules():
        mod.register_state_dict_pre_hook(
            lambda mod, prefix, keep_vars, name=name: calls.append(("pre", name, prefix,
                                                                    keep_vars)))
        mod.register_state_dict_post_hook(
            lambda mod, sd, prefix, meta, name=name: calls.append(("post", name, prefix,
                                                                   len(sd))))
    m.state_dict()
    assert calls == [("pre", "", "", False), ("pre", "0", "0.", False), ("post", "0", "0.", 2),
                     ("pre", "1", "1.", False), ("pre", "1.0", "1.0.", False),
                     ("post", "1.0", "1.0.", 4), ("post", "1", "1.", 4), ("post", "", "", 4)]


def test_a_state_dict_post_hook_changes_the_dict_in_place_and_returns_none():
    def drop_bias(mod, sd, prefix, meta):
        del sd[prefix + "bias"]
    lin = nn.Linear(2, 2)
    lin.register_state_dict_post_hook(drop_bias)
    assert list(lin.state_dict()) == ["weight"]
    lin = nn.Linear(2, 2)
    lin.register_state_dict_post_hook(lambda mod, sd, prefix, meta: 3)
    with pytest.raises(RuntimeError, match="post hook must return None"):
        lin.state_dict()


def test_load_pre_hook_renames_old_keys_on_a_copy():
    def rename(mod, sd, prefix, meta, strict, missing, unexpected, errors):
        for k in list(sd):
            if k == prefix + "w":
                sd[prefix + "weight"] = sd.pop(k)
    model = nn.Sequential(nn.Linear(2, 2))
    model[0].register_load_state_dict_pre_hook(rename)
    old = {"0.w": mg.ones(2, 2), "0.bias": mg.zeros(2)}
    assert model.load_state_dict(old) == ([], [])
    assert model[0].weight.sum().item() == 4.0 and list(old) == ["0.w", "0.bias"]
    lin = nn.Linear(2, 2)
    lin.register_load_state_dict_pre_hook(
        lambda mod, sd, prefix, meta, strict, missing, unexpected, errors:
        errors.append("too old a checkpoint"))
    with pytest.raises(RuntimeError, match="too old a checkpoint"):
        lin.load_state_dict(lin.state_dict())


def test_load_post_hook_may_forgive_missing_keys_before_strict_judges():
    lin = nn.Linear(2, 2)
    lin.register_load_state_dict_post_hook(lambda mod, keys: keys.missing_keys.clear())
    assert lin.load_state_dict({"weight": mg.ones(2, 2)}) == ([], [])
    assert lin.weight.sum().item() == 4.0
    lin = nn.Linear(2, 2)
    seen = []
    lin.register_load_state_dict_post_hook(lambda mod, keys: seen.append(list(keys[0])))
    with pytest.raises(RuntimeError, match="missing keys: bias"):
        lin.load_state_dict({"weight": mg.full((2, 2), 3.0)})
    # as PyTorch: loaded first, then judged (the weight is in)
    assert seen == [["bias"]] and np.all(lin.weight.numpy() == 3.0)
    lin.register_load_state_dict_post_hook(lambda mod, keys: 1)
    with pytest.raises(RuntimeError, match="post hook must return None"):
        lin.load_state_dict(lin.state_dict())


def test_hooks_are_removable_and_not_state():
    lin = nn.Linear(2, 2)
    calls = []
    handle = lin.register_state_dict_pre_hook(lambda *a: calls.append(1))
    lin.state_dict()
    handle.remove()
    lin.state_dict()
    assert calls == [1] and list(lin.state_dict()) == ["weight", "bias"]


class _Renamed(nn.Module):
    """A module whose older checkpoints named its weight "w_old", renamed the PyTorch way."""

    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(mg.zeros(2))

    def _load_from_state_dict(self, state_dict, prefix, *rest):
        if prefix + "w_old" in state_dict:
            state_dict[prefix + "w"] = state_dict.pop(prefix + "w_old")
        super()._load_from_state_dict(state_dict, prefix, *rest)


def test_an_overridden_load_from_state_dict_runs_with_its_prefix():
    m = nn.Sequential(nn.Linear(1, 1), _Renamed())
    old = {"0.weight": mg.ones(1, 1), "0.bias": mg.ones(1), "1.w_old": mg.full((2,), 3.0)}
    result = m.load_state_dict(old)                  # (it was never called: w_old refused)
    assert result.missing_keys == [] and result.unexpected_keys == []
    np.testing.assert_array_equal(m[1].w.numpy(), [3.0, 3.0])
    assert "1.w_old" in old                          # on a copy: the caller's dict is kept
    seen = []                                        # the base one still runs the pre hooks
    m[1].register_load_state_dict_pre_hook(lambda mod, sd, prefix, *a: seen.append(prefix))
    m.load_state_dict(m.state_dict())
    assert seen == ["1."]


def _rename_w(state_dict, prefix, local_metadata, strict, missing, unexpected, errors):
    state_dict[prefix + "weight"] = state_dict.pop(prefix + "W")


def test_the_private_load_pre_hook_is_called_without_the_module():
    lin, calls = nn.Linear(2, 1), []
    lin._register_load_state_dict_pre_hook(_rename_w)
    lin._register_load_state_dict_pre_hook(lambda mod, *a: calls.append((mod, a[1])),
                                           with_module=True)
    lin.load_state_dict({"W": mg.ones(1, 2), "bias": mg.zeros(1)})
    assert calls == [(lin, "")] and float(lin.weight.sum().item()) == 2.0
    plain = nn.Linear(2, 1)
    plain._register_load_state_dict_pre_hook(_rename_w)   # a module with one still pickles
    pickle.loads(pickle.dumps(plain)).load_state_dict({"W": mg.ones(1, 2), "bias": mg.ones(1)})
