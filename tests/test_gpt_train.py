"""The trainer: exact resume, atomic checkpoints (a save killed midway), NaN stop, bad
checkpoints. Tiny models on a tiny generated text; each run takes well under a second."""
import dataclasses
import json
import math
import os
import shutil
import sys

import numpy as np
import pytest

import minigrad as mg
from minigrad.data_parallel import ProcessDataParallel
from minitransformer import train as train_mod, train_config
from minitransformer.gpt import GPT
from minitransformer.train import (TrainConfig, train, resume_config, find_checkpoint,
                                   read_checkpoint, load_checkpoint, CheckpointError,
                                   TrainingDiverged)

TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n"
        "First Citizen:\nYou are all resolved rather to die than to famish?\n\n") * 12


@pytest.fixture
def text_file(tmp_path):
    p = tmp_path / "text.txt"
    p.write_text(TEXT)
    return p


def tiny(text_file, out, **kw):
    values = dict(data=str(text_file), out=str(out), n_layer=2, n_head=2, n_embd=16,
                  block_size=16, batch_size=4, max_iters=6, eval_interval=3, eval_iters=2,
                  dropout=0.1, warmup_iters=2, lr=3e-3, progress=False, plot=False)
    values.update(kw)
    return TrainConfig(**values)


def quiet(*args):
    pass


class Crash(Exception):
    pass


def crash_after(monkeypatch, target, name, calls):
    """Make target.name raise Crash on its (calls+1)-th call."""
    original = getattr(target, name)
    count = [0]

    def wrapper(*args, **kwargs):
        count[0] += 1
        if count[0] > calls:
            raise Crash(f"simulated crash in {name}")
        return original(*args, **kwargs)
    monkeypatch.setattr(target, name, wrapper)


def test_training_lowers_the_loss_and_writes_metrics(text_file, tmp_path):
    result = train(tiny(text_file, tmp_path / "run", max_iters=30, eval_interval=15,
                        dropout=0.0), log=quiet)
    assert [r["iter"] for r in result.history] == [0, 15, 30]
    assert result.history[-1]["val_loss"] < result.history[0]["val_loss"] - 0.3
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text()
            .splitlines()]
    assert rows == result.history
    assert set(rows[0]) == {"iter", "train_loss", "val_loss", "lr", "tokens_per_sec",
                            "elapsed_s"}
    assert len(result.losses) == 30 and all(math.isfinite(x) for x in result.losses)
    assert rows[1]["tokens_per_sec"] > 0 and rows[2]["elapsed_s"] >= rows[1]["elapsed_s"]
    # only the latest checkpoint remains, complete, and `latest` names it
    ckpts = sorted(p.name for p in (tmp_path / "run").iterdir() if p.name.startswith("ckpt"))
    assert ckpts == ["ckpt-0000030"]
    assert find_checkpoint(tmp_path / "run") == tmp_path / "run" / "ckpt-0000030"
    meta = read_checkpoint(result.checkpoint).meta
    assert meta["iter"] == 30 and meta["train"]["max_iters"] == 30
    assert meta["tokenizer"]["chars"] == "".join(sorted(set(TEXT)))


def test_grad_accum_is_the_same_step_in_micro_batches(text_file, tmp_path):
    """Two micro-batches of 2 sequences make the step one batch of 4 makes (nanoGPT's
    gradient accumulation): the same windows (the sampler draws 2 + 2 as it draws 4), the
    same mean loss and gradients, so the same weights, up to rounding."""
    whole = train(tiny(text_file, tmp_path / "whole", dropout=0.0), log=quiet)
    accum = train(tiny(text_file, tmp_path / "accum", dropout=0.0, batch_size=2,
                       grad_accum=2), log=quiet)
    assert len(accum.losses) == 6
    np.testing.assert_allclose(accum.losses, whole.losses, rtol=1e-5)
    a = read_checkpoint(accum.checkpoint).model().state_dict()
    b = read_checkpoint(whole.checkpoint).model().state_dict()
    for name in b:
        np.testing.assert_allclose(a[name].numpy(), b[name].numpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=name)
    assert read_checkpoint(accum.checkpoint).meta["train"]["grad_accum"] == 2


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="needs fork")
def test_processes_split_the_same_step(text_file, tmp_path):
    """Each batch split over 1, 2 or 3 processes (data_parallel.py) is the same step up to
    rounding: the same windows, the same mean loss and gradients, so the same weights."""
    runs = [train(tiny(text_file, tmp_path / str(n), dropout=0.0, processes=n), log=quiet)
            for n in (1, 2, 3)]
    for run in runs[1:]:
        np.testing.assert_allclose(run.losses, runs[0].losses, rtol=1e-5)
        a = read_checkpoint(run.checkpoint).model().state_dict()
        b = read_checkpoint(runs[0].checkpoint).model().state_dict()
        for name in b:
            np.testing.assert_allclose(a[name].numpy(), b[name].numpy(), rtol=1e-4,
                                       atol=1e-6, err_msg=name)
    # the count is saved resolved, so a resume elsewhere splits batches (and dropout) alike
    assert read_checkpoint(runs[1].checkpoint).meta["train"]["processes"] == 2
    assert resume_config(tmp_path / "2").processes == 2
    assert resume_config(tmp_path / "2", device="cuda").processes is None
    assert TrainConfig(processes=None, batch_size=4).processes_used() <= 4
    assert TrainConfig(processes=8, batch_size=4).processes_used() == 4
    assert TrainConfig(device="cuda", processes=None).processes_used() == 1


def test_the_header_says_when_processes_outnumber_the_cores(monkeypatch):
    """More processes than cores runs (the split is the same step), but slower: the run's
    header says so and what fits; a model's size in full where 0.00M would say nothing."""
    from minitransformer.train import _cpu_work, _millions
    monkeypatch.setattr(mg.parallel, "cores", lambda: 2)
    assert _cpu_work(TrainConfig(processes=2, batch_size=4)) == "2 processes, one core each"
    assert _cpu_work(TrainConfig(processes=3, batch_size=4)) == (
        "3 processes on 2 cores: they take turns, and every step waits for the slowest; "
        "--processes 2 fits this machine")
    assert _cpu_work(TrainConfig(processes=8, batch_size=2)).startswith("2 processes, one")
    assert (_millions(809_600), _millions(5_216)) == ("0.81M", "5,216")


def test_weight_decay_only_on_matrices(text_file, tmp_path):
    mg.manual_seed(0)
    model = GPT(tiny(text_file, tmp_path).model_config(20))
    opt = model.configure_optimizers(0.1, 1e-3)
    decay, no_decay = opt.param_groups
    assert decay["weight_decay"] == 0.1 and all(p.ndim >= 2 for p in decay["params"])
    assert no_decay["weight_decay"] == 0.0 and all(p.ndim < 2 for p in no_decay["params"])
    assert len(decay["params"]) + len(no_decay["params"]) == len(list(model.parameters()))


def test_lr_schedule_is_nanogpts():
    cfg = TrainConfig(max_iters=2000, lr=1e-3, min_lr=1e-4, warmup_iters=100)
    assert cfg.lr_at(0) == pytest.approx(1e-3 / 101)
    assert cfg.lr_at(100) == pytest.approx(1e-3)
    assert cfg.lr_at(1050) == pytest.approx(5.5e-4)
    assert cfg.lr_at(2000) == pytest.approx(1e-4)
    assert TrainConfig(max_iters=10, warmup_iters=100).lr_at(10) == pytest.approx(1e-4)


def test_resume_reproduces_the_uninterrupted_run(text_file, tmp_path, monkeypatch):
    full = train(tiny(text_file, tmp_path / "a"), log=quiet)
    # the same run, killed during step 5 (after the checkpoint at iter 3): get_batch is
    # called 2 x eval_iters times per evaluation and once per step -> 4 + 3 + 4 + 1 calls
    crash_after(monkeypatch, train_mod, "get_batch", 12)
    with pytest.raises(Crash):
        train(tiny(text_file, tmp_path / "b"), log=quiet)
    monkeypatch.undo()
    assert find_checkpoint(tmp_path / "b").name == "ckpt-0000003"
    # ...then resumed, taking its arguments from the checkpoint
    resumed = train(resume_config(tmp_path / "b", progress=False), resume=True, log=quiet)
    assert resumed.start_iter == 3
    assert resumed.losses == full.losses[3:]            # exact, dropout included
    strip = [{k: r[k] for k in ("iter", "train_loss", "val_loss", "lr")} for r in full.history]
    rows = [json.loads(line) for line in (tmp_path / "b" / "metrics.jsonl").read_text()
            .splitlines()]
    assert [{k: r[k] for k in ("iter", "train_loss", "val_loss", "lr")} for r in rows] == strip
    a = mg.load(find_checkpoint(tmp_path / "a") / "model.safetensors")
    b = mg.load(find_checkpoint(tmp_path / "b") / "model.safetensors")
    for k in a:
        np.testing.assert_array_equal(a[k].numpy(), b[k].numpy())


def test_save_killed_midway_keeps_the_previous_checkpoint(text_file, tmp_path, monkeypatch):
    out = tmp_path / "run"
    # checkpoints at 0 and 3 complete (2 files each); the one at 6 dies after its first file
    crash_after(monkeypatch, train_mod.mg, "save", 5)
    with pytest.raises(Crash):
        train(tiny(text_file, out), log=quiet)
    monkeypatch.undo()
    ckpt = find_checkpoint(out)
    assert ckpt.name == "ckpt-0000003"
    assert not [p for p in out.iterdir() if p.name.startswith(".ckpt-tmp")]  # cleaned up
    model, tokenizer, _ = load_checkpoint(out)
    assert tokenizer.decode(tokenizer.encode("Speak")) == "Speak"
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    # each row is written before its checkpoint: the failed one's row is there, and a
    # resume from ckpt-0000003 drops it and writes it again (the other order lost it)
    assert [r["iter"] for r in rows] == [0, 3, 6]
    resumed = train(resume_config(out), resume=True, log=quiet)
    full = train(tiny(text_file, tmp_path / "full"), log=quiet)
    assert resumed.losses == full.losses[3:]
    assert resumed.history[-1]["val_loss"] == full.history[-1]["val_loss"]
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [(r["iter"], r["val_loss"]) for r in rows] == \
        [(r["iter"], r["val_loss"]) for r in full.history]


def test_resuming_a_finished_run_for_longer_keeps_its_schedule(text_file, tmp_path):
    train(tiny(text_file, tmp_path / "a"), log=quiet)         # 6 steps, the cosine ends at 6
    assert read_checkpoint(find_checkpoint(tmp_path / "a")).meta["train"]["lr_decay_iters"] == 6
    shutil.copytree(tmp_path / "a", tmp_path / "a2")
    # the schedule stays the one the run started with: the same as one run with
    # lr_decay_iters=6 (6 is a multiple of eval_interval, so dropout restarts there in both)
    full = train(tiny(text_file, tmp_path / "full", max_iters=9, lr_decay_iters=6), log=quiet)
    longer = train(resume_config(tmp_path / "a", max_iters=9), resume=True, log=quiet)
    assert longer.losses == full.losses[6:]
    longer = train(tiny(text_file, tmp_path / "a2", max_iters=9), resume=True, log=quiet)
    assert longer.losses == full.losses[6:]
    # given again, lr_decay_iters is the new one
    assert resume_config(tmp_path / "a", max_iters=12, lr_decay_iters=12).decay_iters == 12


def test_losses_are_read_from_the_device_once_per_log_interval(text_file, tmp_path,
                                                               monkeypatch):
    reads, saving = [], [False]          # reads of tensors outside writing a checkpoint
    for name in ("item", "numpy", "tolist"):
        def counted(self, *args, _original=getattr(mg.Tensor, name), **kwargs):
            if not saving[0]:
                reads.append(self.shape)
            return _original(self, *args, **kwargs)
        monkeypatch.setattr(mg.Tensor, name, counted)

    def save_checkpoint(*args, _original=train_mod.save_checkpoint, **kwargs):
        saving[0] = True
        try:
            return _original(*args, **kwargs)
        finally:
            saving[0] = False
    monkeypatch.setattr(train_mod, "save_checkpoint", save_checkpoint)
    # one process: the path a GPU takes (split over CPU processes, each part's loss is read
    # when its gradients come back, which costs nothing on the CPU)
    result = train(tiny(text_file, tmp_path / "run", max_iters=20, eval_interval=10,
                        log_interval=5, processes=1), log=quiet)
    monkeypatch.undo()
    assert len(result.losses) == 20 and all(math.isfinite(x) for x in result.losses)
    # 4 reads of 5 steps' losses, and one per split at each of the 3 evaluations
    assert sorted(reads) == [()] * 6 + [(5,)] * 4


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names fsync'd files via /proc")
def test_checkpoint_renames_are_durable_before_old_checkpoints_go(text_file, tmp_path,
                                                                  monkeypatch):
    """OUT is fsync'd after the new checkpoint is renamed into place (before `latest` names
    it) and after `latest` is replaced (before older checkpoints are deleted): after a power
    loss `latest` names a checkpoint that exists."""
    out = (tmp_path / "run").resolve()
    events = []

    def spy(name, fn, describe):
        def wrapper(*args, **kwargs):
            events.append((name, describe(*args)))
            return fn(*args, **kwargs)
        monkeypatch.setattr(os if name != "rmtree" else shutil, name, wrapper)
    spy("fsync", os.fsync, lambda fd: os.readlink(f"/proc/self/fd/{fd}"))
    spy("rename", os.rename, lambda a, b: str(b))
    spy("replace", os.replace, lambda a, b: str(b))
    spy("rmtree", shutil.rmtree, lambda path, *a: str(path))
    train(tiny(text_file, out, max_iters=3), log=quiet)        # checkpoints at 0 and 3
    monkeypatch.undo()

    def index(event, after=-1):
        return next(i for i, e in enumerate(events) if i > after and e == event)
    renamed = index(("rename", str(out / "ckpt-0000003")))
    pointed = index(("replace", str(out / "latest")), renamed)
    assert renamed < index(("fsync", str(out)), renamed) < pointed
    assert pointed < index(("fsync", str(out)), pointed) < index(
        ("rmtree", str(out / "ckpt-0000000")))


@pytest.mark.parametrize("log_interval", [1, 10])
def test_nan_loss_stops_and_keeps_the_last_good_checkpoint(text_file, tmp_path, monkeypatch,
                                                           log_interval):
    original = GPT.forward
    calls = [0]

    def poisoned(self, idx, targets=None):
        logits, loss = original(self, idx, targets)
        if self.training:
            calls[0] += 1
            if calls[0] == 5:
                loss = loss * float("nan")
        return logits, loss
    monkeypatch.setattr(GPT, "forward", poisoned)
    out = tmp_path / "run"
    with pytest.raises(TrainingDiverged) as e:
        train(tiny(text_file, out, log_interval=log_interval), log=quiet)
    msg = str(e.value)
    assert "became nan" in msg and "iteration 4" in msg and "ckpt-0000003" in msg
    assert find_checkpoint(out).name == "ckpt-0000003"
    model, _, _ = load_checkpoint(out)
    assert all(np.isfinite(p.numpy()).all() for p in model.parameters())


def test_fresh_run_refuses_to_overwrite_a_run(text_file, tmp_path):
    train(tiny(text_file, tmp_path / "run", max_iters=0), log=quiet)
    with pytest.raises(CheckpointError, match="--resume"):
        train(tiny(text_file, tmp_path / "run", max_iters=0), log=quiet)


def test_a_run_without_its_latest_pointer_is_neither_overwritten_nor_lost(text_file,
                                                                         tmp_path):
    out = tmp_path / "run"
    first = train(tiny(text_file, out), log=quiet)
    (out / "latest").unlink()                         # lost (deleted by hand, say)
    with pytest.raises(CheckpointError, match="already holds a training run"):
        train(tiny(text_file, out), log=quiet)        # a fresh run would delete ckpt-0000006
    assert find_checkpoint(out).name == "ckpt-0000006"  # the newest complete one
    more = train(resume_config(out, max_iters=9), resume=True, log=quiet)
    assert more.start_iter == 6 and first.checkpoint.name == "ckpt-0000006"


def test_one_run_at_a_time_per_out_directory(text_file, tmp_path):
    out = tmp_path / "run"
    with train_mod.run_lock(out):                     # another run holds the directory
        with pytest.raises(CheckpointError, match="another training run is writing to"):
            train(tiny(text_file, out), log=quiet)
    train(tiny(text_file, out, max_iters=0), log=quiet)   # released: fine


def test_bad_latest_pointer_and_out_inside_a_checkpoint(text_file, tmp_path):
    out = tmp_path / "run"
    train(tiny(text_file, out, max_iters=3), log=quiet)
    with pytest.raises(ValueError, match="is a checkpoint directory; pass the run's"):
        train(tiny(text_file, out / "ckpt-0000003", max_iters=6), resume=True, log=quiet)
    (out / "latest").write_text("../elsewhere/ckpt-0000040\n")
    with pytest.raises(CheckpointError, match="latest is corrupted.*'../elsewhere/ckpt"):
        find_checkpoint(out)
    (out / "latest").write_text("ckpt-0000003\n")
    config = out / "ckpt-0000003" / "config.json"
    meta = json.loads(config.read_text())
    meta["rng"]["data"] = {"bit_generator": "MT19937"}
    config.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="data sampler's state in config.json"):
        train(resume_config(out, max_iters=6), resume=True, log=quiet)


def test_unreadable_metrics_lines_are_dropped_with_a_warning(text_file, tmp_path):
    out = tmp_path / "run"
    train(tiny(text_file, out, max_iters=3), log=quiet)
    with open(out / "metrics.jsonl", "ab") as f:
        f.write(b'{"iter": 0, "train_lo\xff')            # a line cut by a crash
    (out / ".latest.0123abcd.tmp").write_text("left by a killed run")
    said = []
    train(resume_config(out, max_iters=6), resume=True, log=said.append)
    assert any("1 unreadable line(s)" in s for s in said)
    rows = [json.loads(line) for line in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["iter"] for r in rows] == [0, 3, 6]
    assert not list(out.glob(".*.tmp"))               # leftover temporaries cleaned up


def test_resume_with_another_model_shape_is_refused(text_file, tmp_path):
    train(tiny(text_file, tmp_path / "run", max_iters=0), log=quiet)
    with pytest.raises(CheckpointError, match="n_embd=16; cannot resume with n_embd=32"):
        resume_config(tmp_path / "run", n_embd=32)


def test_checkpoint_into_a_different_config(text_file, tmp_path):
    train(tiny(text_file, tmp_path / "run", max_iters=0), log=quiet)
    ckpt = read_checkpoint(find_checkpoint(tmp_path / "run"))
    mg.manual_seed(0)
    for name, value in (("n_embd", 32), ("n_head", 4)):   # n_head: no weight changes shape
        other = GPT(tiny(text_file, tmp_path, **{name: value})
                    .model_config(ckpt.config.vocab_size))
        with pytest.raises(CheckpointError, match=f"does not fit this model: it has "
                                                  f"{name}=[0-9]+, the model {name}={value}"):
            ckpt.load_weights(other)
    stranger = mg.nn.Linear(2, 2)                         # not a GPT: the weights say it
    with pytest.raises(CheckpointError, match="does not fit this model.*unexpected"):
        ckpt.load_weights(stranger)


def test_corrupted_checkpoints_are_named(text_file, tmp_path):
    train(tiny(text_file, tmp_path / "run", max_iters=0), log=quiet)
    ckpt = find_checkpoint(tmp_path / "run")
    weights = ckpt / "model.safetensors"
    data = bytearray(weights.read_bytes())
    data[-10] ^= 0xFF                                   # one flipped byte in the weights
    weights.write_bytes(bytes(data))
    with pytest.raises(CheckpointError, match="corrupted: model.safetensors does not match"):
        load_checkpoint(tmp_path / "run")
    weights.write_bytes(bytes(data[:50]))               # truncated, and no checksum to help
    meta = json.loads((ckpt / "config.json").read_text())
    del meta["files"]
    (ckpt / "config.json").write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="corrupted"):
        load_checkpoint(tmp_path / "run")
    (ckpt / "config.json").write_text('{"format": "minitransformer-gpt-che')
    with pytest.raises(CheckpointError, match="config.json is not valid JSON"):
        load_checkpoint(tmp_path / "run")
    with pytest.raises(CheckpointError, match="no checkpoint"):
        load_checkpoint(tmp_path)


@pytest.mark.parametrize("field,value,words", [
    ("lr", float("nan"), "lr must be a finite number"),
    ("batch_size", "x", "batch_size must be an integer"),
    ("bias", 1, "bias must be true or false"),
    ("max_iters", -3, "max_iters must be >= 0"),
    ("eval_iters", 0, "eval_iters must be >= 1"),
    ("grad_accum", 0, "grad_accum must be >= 1"),
    ("weight_decay", -0.1, "weight_decay must be >= 0"),
    ("processes", 0, "processes must be >= 1"),
    ("device", "cuda", "processes=2 splits batches over CPU cores")])
def test_bad_config_values_are_named(field, value, words, text_file, tmp_path):
    with pytest.raises(ValueError, match=words):
        tiny(text_file, tmp_path, **{"processes": 2, field: value})


def test_resuming_a_finished_run_says_so(text_file, tmp_path):
    train(tiny(text_file, tmp_path / "run", max_iters=3), log=quiet)
    for max_iters in (3, 1):
        with pytest.raises(ValueError, match="already at iter 3 and max_iters is .*larger "
                                             "--max-iters"):
            train(resume_config(tmp_path / "run", max_iters=max_iters), resume=True, log=quiet)


def test_out_that_is_a_file_is_refused(text_file, tmp_path):
    (tmp_path / "afile").write_text("x")
    with pytest.raises(ValueError, match="afile is a file; pass a directory"):
        train(tiny(text_file, tmp_path / "afile"), log=quiet)


def test_incomplete_or_mistyped_checkpoint_config_is_named(text_file, tmp_path):
    train(tiny(text_file, tmp_path / "run", max_iters=0), log=quiet)
    config = find_checkpoint(tmp_path / "run") / "config.json"
    good = json.loads(config.read_text())
    for edit, words in [(lambda m: m.pop("rng"), "'rng' is missing"),
                        (lambda m: m["rng"].pop("data"), "data sampler"),
                        (lambda m: m.update(iter="3"), "'iter' is missing or of the wrong")]:
        meta = json.loads(json.dumps(good))
        edit(meta)
        config.write_text(json.dumps(meta))
        with pytest.raises(CheckpointError, match=words):
            resume_config(tmp_path / "run")
    meta = json.loads(json.dumps(good))
    meta["train"]["batch_size"] = "x"
    config.write_text(json.dumps(meta))
    with pytest.raises(CheckpointError, match="training arguments .* not valid .*batch_size"):
        resume_config(tmp_path / "run")
    config.write_text(json.dumps(good))
    with pytest.raises(ValueError, match="batch_size must be >= 1"):   # the user's, not the file's
        resume_config(tmp_path / "run", batch_size=0)
    (tmp_path / "run" / "latest").write_bytes(b"\xff\xfe")
    with pytest.raises(CheckpointError, match="latest is corrupted"):
        resume_config(tmp_path / "run")


def test_a_relative_data_path_is_saved_absolute(text_file, tmp_path, monkeypatch):
    monkeypatch.chdir(text_file.parent)
    train(tiny(text_file.name, tmp_path / "run", max_iters=3), log=quiet)
    monkeypatch.chdir(tmp_path.parent)                  # resume from another directory
    cfg = resume_config(tmp_path / "run", max_iters=6)
    assert cfg.data == str(text_file.resolve())
    train(cfg, resume=True, log=quiet)


@pytest.mark.parametrize("processes", [1, 2])
def test_each_step_uses_the_schedule_clipping_and_nanogpts_adamw(text_file, tmp_path,
                                                                  monkeypatch, processes):
    """The loop's wiring, step by step: the learning rate of cfg.lr_at(it), gradient
    clipping at cfg.grad_clip, weight decay on the matrices only, the configured betas; in
    one process (clip_grad_norm_ and optimizer.step) and over two (their train_step)."""
    cfg = tiny(text_file, tmp_path / "run", max_iters=6, warmup_iters=2, grad_clip=0.5,
               weight_decay=0.2, beta2=0.95, processes=processes)
    steps, clips = [], []
    configure = GPT.configure_optimizers

    def record(opt):
        steps.append([(g["lr"], g["weight_decay"], tuple(g["betas"]))
                      for g in opt.param_groups])

    def recording_optimizer(model, *args, **kwargs):
        opt = configure(model, *args, **kwargs)
        step = opt.step

        def recording_step(*a, **k):
            record(opt)
            return step(*a, **k)
        opt.step = recording_step
        return opt
    clip = train_mod.optim.clip_grad_norm_

    def recording_clip(params, max_norm, *args, **kwargs):
        clips.append(max_norm)
        return clip(params, max_norm, *args, **kwargs)
    train_step = ProcessDataParallel.train_step

    def recording_train_step(dp, *inputs, max_norm=None):
        clips.append(max_norm)
        record(dp.optimizer)
        return train_step(dp, *inputs, max_norm=max_norm)
    monkeypatch.setattr(GPT, "configure_optimizers", recording_optimizer)
    monkeypatch.setattr(train_mod.optim, "clip_grad_norm_", recording_clip)
    monkeypatch.setattr(ProcessDataParallel, "train_step", recording_train_step)
    train(cfg, log=quiet)
    assert len(steps) == 6 and clips == [0.5] * 6
    for it, (decay, no_decay) in enumerate(steps):
        lr = cfg.lr_at(it)
        assert decay == (pytest.approx(lr), 0.2, (0.9, 0.95))
        assert no_decay == (pytest.approx(lr), 0.0, (0.9, 0.95))
    assert len({round(s[0][0], 12) for s in steps}) == 6          # warmup, then decay


def test_resume_on_another_text_is_refused(text_file, tmp_path):
    train(tiny(text_file, tmp_path / "run", max_iters=3), log=quiet)
    other = tmp_path / "other.txt"
    other.write_text(TEXT[::-1])                       # the same characters, another text
    cfg = resume_config(tmp_path / "run", max_iters=6, data=str(other))
    with pytest.raises(CheckpointError, match="is not the one checkpoint .* was trained on"):
        train(cfg, resume=True, log=quiet)


def test_missing_and_foreign_checkpoint_files_are_named(text_file, tmp_path):
    """Each way a checkpoint directory can be incomplete or not ours gets its own message:
    a missing weights file, `latest` naming a directory without config.json, a config.json
    of something else, a directory without one, and optimiser state of another model."""
    out = tmp_path / "run"
    train(tiny(text_file, out, max_iters=0), log=quiet)
    ckpt = find_checkpoint(out)
    config = ckpt / "config.json"
    good = config.read_text()

    (ckpt / "model.safetensors").rename(tmp_path / "weights")
    with pytest.raises(CheckpointError, match="incomplete: model.safetensors is missing"):
        load_checkpoint(out)
    (tmp_path / "weights").rename(ckpt / "model.safetensors")

    config.rename(tmp_path / "config.json")
    with pytest.raises(CheckpointError, match="names ckpt-0000000, which is missing or "
                                              "incomplete"):
        find_checkpoint(out)
    with pytest.raises(CheckpointError, match="not a checkpoint: config.json is missing"):
        read_checkpoint(ckpt)
    config.write_text(json.dumps({"format": "something-else"}))
    with pytest.raises(CheckpointError, match="is not a minitransformer checkpoint"):
        read_checkpoint(ckpt)
    config.write_text(good)

    # optimiser state of a bigger model, its checksum updated so only the fit is wrong
    other = tmp_path / "other"
    train(tiny(text_file, other, max_iters=1, eval_interval=1, n_embd=32), log=quiet)
    shutil.copy(find_checkpoint(other) / "optimizer.safetensors", ckpt)
    meta = json.loads(good)
    del meta["files"]["optimizer.safetensors"]
    config.write_text(json.dumps(meta))
    read = read_checkpoint(ckpt)
    model = read.model()
    optimizer = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-3,
                                           betas=(0.9, 0.99))
    with pytest.raises(CheckpointError, match="optimizer state does not fit"):
        read.restore(model, optimizer)


def test_checkpoint_activations_is_the_same_run(text_file, tmp_path):
    """--checkpoint-activations trades memory for compute only: with dropout, the same
    losses and weights as the plain run, up to rounding, and a smaller memory estimate."""
    plain = train(tiny(text_file, tmp_path / "plain"), log=quiet)
    cfg = tiny(text_file, tmp_path / "ckpt", checkpoint_activations=True)
    again = train(cfg, log=quiet)
    np.testing.assert_allclose(again.losses, plain.losses, rtol=1e-5)
    a = read_checkpoint(again.checkpoint).model().state_dict()
    b = read_checkpoint(plain.checkpoint).model().state_dict()
    for name in b:
        np.testing.assert_allclose(a[name].numpy(), b[name].numpy(), rtol=1e-4, atol=1e-6,
                                   err_msg=name)
    assert read_checkpoint(again.checkpoint).meta["train"]["checkpoint_activations"]
    big = TrainConfig.from_preset("small")
    assert train_config.step_bytes(dataclasses.replace(big, checkpoint_activations=True),
                                   65) < 0.5 * train_config.step_bytes(big, 65)
