"""GradScaler (minigrad/amp_scaler.py): the scale's arithmetic and the settings it refuses,
against torch.amp.GradScaler where torch is installed (test_amp.py has its training loop
and bookkeeping)."""
import numpy as np
import pytest

import minigrad as mg

# finite steps, then inf, -inf and NaN gradients among them
PATTERN = [0, 0, 0, "inf", 0, "nan", 0, 0, 0, 0, "-inf", 0, 0, 0]


def _run(lib, scaler, pattern):
    """SGD on (w·w).sum() with the gradient's first entry replaced where pattern says:
    the (scale, growth tracker) after each update, and the weights at the end."""
    w = lib.nn.Parameter(lib.tensor([1.0, 2.0]))
    opt = lib.optim.SGD([w], lr=0.1)
    seen = []
    for bad in pattern:
        opt.zero_grad()
        scaler.scale((w * w).sum()).backward()
        if bad:
            w.grad.data[0] = float(bad)
        scaler.step(opt)
        scaler.update()
        seen.append((scaler.get_scale(), scaler.state_dict()["_growth_tracker"]))
    return seen, w.detach().numpy().copy()


def test_scale_is_multiplied_in_double_then_rounded():
    # float32(3) * 1.1 in double, rounded: 3.2999999523...; both in float32 gave 3.3000001907
    scaler = mg.amp.GradScaler("cpu", init_scale=3.0, growth_factor=1.1, growth_interval=1)
    scales, _ = _run(mg, scaler, [0, "inf"])
    assert scales == [(float(np.float32(3.0 * 1.1)), 0),
                      (float(np.float32(np.float32(3.0 * 1.1) * 0.5)), 0)]
    scaler = mg.amp.GradScaler("cpu", init_scale=1.35, backoff_factor=0.3)
    (scale, _), = _run(mg, scaler, ["nan"])[0]
    assert scale == float(np.float32(float(np.float32(1.35)) * 0.3)) != \
        float(np.float32(1.35) * np.float32(0.3))


def test_growth_that_rounds_to_inf_is_not_taken():
    big = float(np.float32(2.0 ** 127 * 1.4))          # * 1.5 is finite only in double
    scaler = mg.amp.GradScaler("cpu", init_scale=big, growth_factor=1.5, growth_interval=1)
    w = mg.nn.Parameter(mg.zeros(1))
    w.grad = mg.zeros(1)
    scaler.step(mg.optim.SGD([w], lr=0.1))
    scaler.update()
    assert scaler.get_scale() == big


@pytest.mark.filterwarnings("ignore:overflow:RuntimeWarning")   # (2**127 times the loss)
@pytest.mark.parametrize("settings", [
    dict(init_scale=4.0, growth_interval=3),
    dict(init_scale=2.0 ** 127, growth_interval=1),
    dict(init_scale=3.0, growth_factor=1.5, backoff_factor=0.3, growth_interval=2),
    dict(init_scale=1000.0, growth_factor=1.1, backoff_factor=0.7, growth_interval=1)])
def test_scales_trackers_and_weights_match_torch(torch, settings):
    got, w = _run(mg, mg.amp.GradScaler("cpu", **settings), PATTERN)
    want, t_w = _run(torch, torch.amp.GradScaler("cpu", **settings), PATTERN)
    assert got == want
    np.testing.assert_allclose(w, t_w, rtol=1e-6)


@pytest.mark.parametrize("new_scale", [float("nan"), float("inf"), 0.0, -1.0, 1e39, "2"])
def test_update_refuses_a_new_scale_that_would_stop_training(new_scale):
    # a NaN, inf or 0 scale skipped every later step without a word (1e39 is inf as a
    # float32); a string failed inside NumPy
    scaler = mg.amp.GradScaler("cpu", init_scale=8.0)
    with pytest.raises(ValueError, match="GradScaler.update: the scale must be a finite "
                                         "number > 0"):
        scaler.update(new_scale=new_scale)
    assert scaler.get_scale() == 8.0
    scaler.update(new_scale=mg.tensor(3.0))
    assert scaler.get_scale() == 3.0


@pytest.mark.parametrize("init_scale", [1e39, 1e-46])
def test_init_refuses_a_scale_float32_cannot_hold(init_scale):
    with pytest.raises(ValueError, match="the scale must be a finite number > 0"):
        mg.amp.GradScaler("cpu", init_scale=init_scale)


def test_load_state_dict_takes_numpy_numbers():
    # a state dict read back through NumPy (np.float32, np.int64) was refused as not numbers
    scaler = mg.amp.GradScaler("cpu")
    scaler.load_state_dict({"scale": np.float32(4.0), "growth_factor": np.float64(3.0),
                            "backoff_factor": np.float32(0.25), "growth_interval": np.int64(5),
                            "_growth_tracker": np.int32(2)})
    assert scaler.state_dict() == {"scale": 4.0, "growth_factor": 3.0, "backoff_factor": 0.25,
                                   "growth_interval": 5, "_growth_tracker": 2}
