"""Adam/AdamW's foreach path (a group updated as one flat array) against the per-parameter
reference: the same parameters and state to the bit, through every way a group can change."""
import copy
import pickle

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim

import spy_backend

SHAPES = [(3, 4), (4,), (), (0, 2), (2, 3)]


@pytest.fixture(autouse=True)
def spy():
    spy_backend.register()
    yield
    spy_backend.unregister()


def _model(device="cpu", dtype="float32"):
    rng = np.random.default_rng(0)
    return [nn.Parameter(mg.tensor(rng.standard_normal(s), dtype=dtype, device=device))
            for s in SHAPES]


def _grads(steps, seed=1):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s) for s in SHAPES] for _ in range(steps)]


def _groups(ps):
    return [{"params": ps[:3], "weight_decay": 0.1}, {"params": ps[3:], "weight_decay": 0.0}]


def _run(make, foreach, steps=4, device="cpu", skip=None, dtype="float32"):
    """Parameters and optimiser after `steps` steps; `skip` = (step, index): that
    parameter has no gradient at that step."""
    ps = _model(device, dtype)
    opt = make(_groups(ps), foreach)
    for k, grads in enumerate(_grads(steps)):
        for i, (p, g) in enumerate(zip(ps, grads)):
            p.grad = None if skip == (k, i) else mg.tensor(g, dtype=p.dtype, device=device)
        opt.step()
    return ps, opt


MAKERS = {
    "adamw": lambda groups, f: optim.AdamW(groups, lr=1e-2, betas=(0.9, 0.99), foreach=f),
    "adam_l2": lambda groups, f: optim.Adam(groups, lr=1e-2, foreach=f),
}


def _same(a, b):
    for p, q in zip(a[0], b[0]):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    sa, sb = a[1].state_dict()["state"], b[1].state_dict()["state"]
    assert sa.keys() == sb.keys()
    for i in sa:
        assert sa[i]["step"] == sb[i]["step"]
        for k in ("exp_avg", "exp_avg_sq"):
            np.testing.assert_array_equal(sa[i][k].numpy(), sb[i][k].numpy())


@pytest.mark.parametrize("make", MAKERS.values(), ids=MAKERS)
def test_foreach_equals_one_by_one_to_the_bit(make):
    ref, flat = _run(make, False), _run(make, True)
    assert flat[1]._flat and not ref[1]._flat              # the flat path really ran
    assert len(flat[1]._flat) == len(flat[1].param_groups)  # one flat pair per group, kept
    _same(ref, flat)


@pytest.mark.parametrize("make", MAKERS.values(), ids=MAKERS)
def test_a_step_without_some_gradient_falls_back_and_stays_exact(make):
    # parameter 1 misses step 1: its step count then differs from the group's, so the
    # group goes one by one from there, and still matches the reference
    skip = (1, 1)
    _same(_run(make, False, skip=skip), _run(make, True, skip=skip))


def test_state_dict_round_trip_continues_identically():
    ps, opt = _run(MAKERS["adamw"], True, steps=2)
    saved = opt.state_dict()
    ref_ps, ref_opt = _run(MAKERS["adamw"], True, steps=4)
    ps2 = [nn.Parameter(mg.tensor(p.numpy())) for p in ps]
    opt2 = MAKERS["adamw"](_groups(ps2), True)
    opt2.load_state_dict(saved)                          # separate arrays: rebuilt flat
    for grads in _grads(4)[2:]:
        for p, g in zip(ps2, grads):
            p.grad = mg.tensor(g, dtype=p.dtype)
        opt2.step()
    _same((ref_ps, ref_opt), (ps2, opt2))


@pytest.mark.parametrize("how", ["deepcopy", "pickle"])
def test_a_copy_or_pickle_leaves_the_flat_cache_behind_and_continues_identically(how):
    ps, opt = _run(MAKERS["adamw"], True, steps=2)
    ref_ps, ref_opt = _run(MAKERS["adamw"], True, steps=4)
    plain = pickle.dumps(_run(MAKERS["adamw"], False, steps=2))
    # without the cache the copy holds each moment once, as the one-by-one optimiser does
    assert len(pickle.dumps((ps, opt))) < 1.1 * len(plain)
    ps2, opt2 = copy.deepcopy((ps, opt)) if how == "deepcopy" else \
        pickle.loads(pickle.dumps((ps, opt)))
    for grads in _grads(4)[2:]:
        for p, g in zip(ps2, grads):
            p.grad = mg.tensor(g, dtype=p.dtype)
        opt2.step()
    _same((ref_ps, ref_opt), (ps2, opt2))


def test_state_entries_are_live_views_of_the_flat_moments():
    """A change to a parameter's state (as a user may make) is what the next step uses."""
    ps, opt = _run(MAKERS["adamw"], True, steps=1)
    ref_ps, ref_opt = _run(MAKERS["adamw"], False, steps=1)
    for o in (opt, ref_opt):
        for p in o.param_groups[0]["params"]:
            o.state[p]["exp_avg"][...] = 0
    for q, r, g in zip(ps, ref_ps, _grads(2)[1]):
        q.grad, r.grad = mg.tensor(g, dtype=q.dtype), mg.tensor(g, dtype=r.dtype)
    opt.step()
    ref_opt.step()
    _same((ref_ps, ref_opt), (ps, opt))


def test_default_is_on_for_a_gpu_like_device_and_off_on_the_cpu():
    cpu = _run(MAKERS["adamw"], None)
    spy = _run(MAKERS["adamw"], None, device="spy")
    assert not cpu[1]._flat and spy[1]._flat
    _same(cpu, spy)


def test_mixed_dtypes_in_a_group_go_one_by_one():
    ps = _model() + _model(dtype="float64")
    opt = optim.AdamW(ps, foreach=True)
    for p in ps:
        p.grad = mg.ones(p.shape, dtype=p.dtype)
    opt.step()
    assert not opt._flat
    assert all(p.dtype == mg.float64 for p in ps[len(SHAPES):])


def test_versions_move_once_per_step():
    ps, _ = _run(MAKERS["adamw"], True, steps=3)
    assert [p._version_counter[0] for p in ps] == [3] * len(ps)


def test_foreach_must_be_a_bool_or_none():
    with pytest.raises(ValueError, match="foreach must be None, True or False"):
        optim.AdamW(_model(), foreach="yes")


@pytest.mark.parametrize("norm_type", [2.0, 1.0, 3.0, float("inf"), 0.0])
@pytest.mark.parametrize("device", ["cpu", "spy"])
def test_clip_grad_norm_foreach_matches_one_by_one(norm_type, device):
    totals, clipped = [], []
    for foreach in (False, True, None):
        ps = _model(device)
        ps[1].data = ps[1].data.half()                        # a float16 one among them
        for p, g in zip(ps, _grads(1)[0]):
            p.grad = mg.tensor(g * 3, dtype=p.dtype, device=device)
        totals.append(float(nn.utils.clip_grad_norm_(ps, 1.0, norm_type, foreach=foreach)))
        clipped.append([p.grad.numpy().astype(np.float64) for p in ps])
    np.testing.assert_allclose(totals[1:], totals[0], rtol=1e-6)
    for other in clipped[1:]:
        for a, b in zip(clipped[0], other):
            np.testing.assert_allclose(a, b, rtol=1e-3 if a.dtype == np.float16 else 1e-6)
    assert 1.0 < totals[0] < np.inf or norm_type == 0.0   # the clipping really happened


@pytest.mark.parametrize("device", ["cpu", "spy"])
def test_clip_grad_norm_foreach_scales_once_and_leaves_views(device):
    """With one gradient dtype the concatenation is scaled once and each .grad becomes its
    part of it: the same values as scaling each gradient, each .grad still changing alone."""
    out = []
    for foreach in (False, True):
        ps = _model(device)
        for p, g in zip(ps, _grads(1)[0]):
            p.grad = mg.tensor(g * 3, dtype=p.dtype, device=device)
        total = nn.utils.clip_grad_norm_(ps, 1.0, foreach=foreach)
        out.append((float(total), [p.grad.numpy() for p in ps], ps))
    assert out[0][0] == pytest.approx(out[1][0], rel=1e-6) and out[0][0] > 1.0
    for a, b, p in zip(out[0][1], out[1][1], out[1][2]):
        np.testing.assert_allclose(b, a, rtol=1e-6)
        assert p.grad.shape == p.shape and p.grad.dtype == p.dtype
    ps = out[1][2]
    base = spy_backend.unwrap(ps[0].grad._data) if device == "spy" else ps[0].grad._data
    assert base.base is not None and all(
        np.shares_memory(base.base, spy_backend.unwrap(p.grad._data) if device == "spy"
                         else p.grad._data) for p in ps if p.numel())
    ps[0].grad.zero_()
    np.testing.assert_allclose(ps[4].grad.numpy(), out[0][1][4], rtol=1e-6)


@pytest.mark.parametrize("foreach", [False, True])
def test_clip_grad_norm_scales_a_parameter_listed_twice_twice(foreach):
    """As PyTorch: the norm counts it twice and its gradient is multiplied twice."""
    w, b = nn.Parameter(mg.tensor([0.0, 0.0])), nn.Parameter(mg.tensor([0.0]))
    w.grad, b.grad = mg.tensor([3.0, 4.0]), mg.tensor([1.0])
    total = float(nn.utils.clip_grad_norm_([w, w, b], 1.0, foreach=foreach))
    coef = 1.0 / (np.sqrt(51.0) + 1e-6)
    assert total == pytest.approx(np.sqrt(51.0))
    np.testing.assert_allclose(w.grad.numpy(), np.array([3.0, 4.0]) * coef ** 2, rtol=1e-5)
    np.testing.assert_allclose(b.grad.numpy(), [coef], rtol=1e-5)
