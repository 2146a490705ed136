"""The trainer's --dtype float16 (minitransformer/precision.py): autocast and a GradScaler, in
one process and split over processes, the loss scale shown and checkpointed, an exact resume.
Tiny models: float16 is slow on the CPU (NumPy converts each product)."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.data_parallel import ProcessDataParallel
from minitransformer import train as train_mod
from minitransformer.precision import ScaledLoss
from minitransformer.train import (TrainConfig, train, resume_config, find_checkpoint,
                                   read_checkpoint, _StepLosses, TrainResult)

from test_gpt_train import Crash, crash_after, quiet, text_file, tiny  # noqa: F401 (fixture)


def test_float16_trains_as_float32_does_in_its_first_steps(text_file, tmp_path):
    full = train(tiny(text_file, tmp_path / "32", dropout=0.0, processes=1), log=quiet)
    half = train(tiny(text_file, tmp_path / "16", dropout=0.0, processes=1, dtype="float16"),
                 log=quiet)
    assert half.losses[-1] < half.losses[0] - 0.03            # it learns...
    np.testing.assert_allclose(half.losses, full.losses, atol=2e-3)   # ...as float32 does
    assert half.losses != full.losses                         # in float16 GEMMs
    assert [r["loss_scale"] for r in half.history] == [65536.0] * 3
    assert "loss_scale" not in full.history[0]
    meta = read_checkpoint(half.checkpoint).meta
    assert meta["train"]["dtype"] == "float16"
    assert meta["scaler"]["scale"] == 65536.0 and meta["scaler"]["_growth_tracker"] == 6
    assert read_checkpoint(full.checkpoint).meta["scaler"] is None


def test_float16_split_over_processes_is_the_same_step(text_file, tmp_path):
    """Each part's forward autocast and its backward scaled in the workers too."""
    one = train(tiny(text_file, tmp_path / "1", dropout=0.0, processes=1, dtype="float16",
                     max_iters=3), log=quiet)
    two = train(tiny(text_file, tmp_path / "2", dropout=0.0, processes=2, dtype="float16",
                     max_iters=3), log=quiet)
    np.testing.assert_allclose(two.losses, one.losses, rtol=1e-5)
    assert two.history[-1]["val_loss"] == pytest.approx(one.history[-1]["val_loss"], 1e-5)
    assert two.history[-1]["loss_scale"] == 65536.0


def test_the_workers_autocast_and_scale_the_loss():
    """ScaledLoss in every process: 1.0001 is 1.0 in float16, so each row's x @ w is 4 under
    autocast (4.0004 without); the loss and gradients are `value` times the plain ones."""
    class Rows(mg.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = mg.nn.Parameter(mg.ones(4, 1))

        def forward(self, x, y):
            return None, (x @ self.w).mean()
    model, loss_fn = Rows(), ScaledLoss("cpu")
    x = mg.full((4, 4), 1.0001)
    with ProcessDataParallel(model, loss_fn, processes=2) as dp:
        assert dp.loss(x, x) == 4.0                    # the worker's half autocast too
        loss_fn.value = 1024.0
        assert dp.forward_backward(x, x) == 4096.0
    np.testing.assert_array_equal(model.w.grad.numpy(), np.full((4, 1), 1024.0))


def test_float16_resume_reproduces_the_uninterrupted_run(text_file, tmp_path, monkeypatch):
    """With a scale that grows every step, one step overflows and is skipped (iter 4): a
    resume that restarted the scaler would not skip it."""
    def scaler(dtype, device):
        return mg.amp.GradScaler(device, init_scale=2.0 ** 16, growth_interval=1)
    monkeypatch.setattr(train_mod, "grad_scaler", scaler)
    cfg = dict(dtype="float16", processes=1)
    full = train(tiny(text_file, tmp_path / "a", **cfg), log=quiet)
    assert [r["loss_scale"] for r in full.history] == [2.0 ** 16, 2.0 ** 19, 2.0 ** 20]
    get_batch = train_mod.get_batch
    crash_after(monkeypatch, train_mod, "get_batch", 12)    # during step 5, as the float32 test
    with pytest.raises(Crash):
        train(tiny(text_file, tmp_path / "b", **cfg), log=quiet)
    monkeypatch.setattr(train_mod, "get_batch", get_batch)
    assert find_checkpoint(tmp_path / "b").name == "ckpt-0000003"
    resumed = train(resume_config(tmp_path / "b"), resume=True, log=quiet)
    assert resumed.losses == full.losses[3:]
    assert resumed.history[-1] == {**full.history[-1], **{k: resumed.history[-1][k] for k in
                                                          ("tokens_per_sec", "elapsed_s")}}
    a = mg.load(find_checkpoint(tmp_path / "a") / "model.safetensors")
    b = mg.load(find_checkpoint(tmp_path / "b") / "model.safetensors")
    for k in a:
        np.testing.assert_array_equal(a[k].numpy(), b[k].numpy())


def test_the_progress_bar_shows_the_loss_scale():
    class Bar:
        def update(self, n): pass
        def set_postfix_str(self, text, refresh): self.text = text
    bar = Bar()
    for scaler, shown in ((mg.amp.GradScaler("cpu", init_scale=1024.0), True),
                          (mg.amp.GradScaler("cpu", enabled=False), False)):
        steps = _StepLosses(TrainResult(out=None), bar, tokens_per_step=1, scaler=scaler)
        steps.add(mg.tensor(2.5), 1e-3)
        steps.report(1)
        assert ("loss scale 1024, " in bar.text) == shown and bar.text.startswith("loss 2.5")


@pytest.mark.parametrize("dtype, words", [
    ("bfloat16", "dtype bfloat16 is not available: NumPy and CuPy have no bfloat16; use "
                 "float16"),
    ("float64", "dtype must be one of float32, float16, got 'float64'")])
def test_unavailable_dtypes_are_refused(dtype, words):
    with pytest.raises(ValueError, match=words):
        TrainConfig(dtype=dtype)


@pytest.mark.parametrize("scaler, words", [
    ({"scale": float("nan")}, "scale must be a finite number > 0, got nan"),
    ({"scale": float("inf")}, "scale must be a finite number > 0, got inf"),
    ({"scale": 0.0}, "scale must be a finite number > 0, got 0.0"),
    ({"_growth_tracker": 2000}, r"_growth_tracker must be an int in \[0, growth_interval\)"),
    (None, "it is of a --dtype float16 run but config.json has no GradScaler state")])
def test_a_corrupted_loss_scale_is_refused_on_resume(text_file, tmp_path, scaler, words):
    """A NaN or inf scale skipped every step (no learning, no word), 0 made NaN weights and
    a "lower --lr" message; a float16 checkpoint without one restarted the scale."""
    import json
    train(tiny(text_file, tmp_path, dtype="float16", processes=1, max_iters=3), log=quiet)
    path = find_checkpoint(tmp_path) / "config.json"
    meta = json.loads(path.read_text())
    meta["scaler"] = None if scaler is None else {**meta["scaler"], **scaler}
    path.write_text(json.dumps(meta))
    with pytest.raises(train_mod.CheckpointError, match=f"is corrupted: .*{words}"):
        train(resume_config(tmp_path, max_iters=6), resume=True, log=quiet)


def test_a_float16_forward_overflow_stops_saying_float32_avoids_it(text_file, tmp_path):
    """The scaler mends overflowing gradients, not a forward past 65504 (a NaN loss)."""
    cfg = dict(processes=1, lr=50.0, grad_clip=0.0, warmup_iters=0, log_interval=1)
    with pytest.raises(train_mod.TrainingDiverged, match="--dtype float32 avoids it"):
        train(tiny(text_file, tmp_path / "16", dtype="float16", **cfg), log=quiet)
    with pytest.raises(train_mod.TrainingDiverged) as e:       # float32: no such hint
        train_mod._check_finite({"train": float("nan")}, 1, None, "training")
    assert "--dtype" not in str(e.value)
