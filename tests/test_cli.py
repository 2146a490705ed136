"""The `minitransformer` command end to end on a tiny text, and its messages for bad input."""
import json
import shutil
import socket
import subprocess
import sys

import pytest

from minitransformer import data
from minitransformer.cli import main

TEXT = ("ROMEO:\nBut soft, what light through yonder window breaks?\nIt is the east, and Juliet "
        "is the sun.\n\n") * 10
TINY = ["--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "16",
        "--batch-size", "4", "--eval-iters", "2", "--no-progress"]


@pytest.fixture
def text_file(tmp_path):
    p = tmp_path / "romeo.txt"
    p.write_text(TEXT)
    return p


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def test_train_then_sample_then_plot(text_file, tmp_path, capsys):
    out = tmp_path / "run"
    rc, stdout, err = run(capsys, "train", "--data", text_file, "--out", out, "--max-iters", 8,
                          "--eval-interval", 4, *TINY)
    assert rc == 0, err
    assert "iter 8: train loss" in stdout and "sample with" in stdout
    rows = [json.loads(x) for x in (out / "metrics.jsonl").read_text().splitlines()]
    assert [r["iter"] for r in rows] == [0, 4, 8]
    assert (out / "ckpt-0000008" / "model.safetensors").is_file()
    config = json.loads((out / "ckpt-0000008" / "config.json").read_text())
    assert config["model"]["n_embd"] == 16 and config["train"]["lr"] == 1e-3  # preset + flags
    assert config["iter"] == 8 and "optimizer.safetensors" in config["files"]
    pytest.importorskip("matplotlib")
    assert (out / "loss.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

    rc, cached, err = run(capsys, "sample", "--ckpt", out, "--prompt", "ROMEO:",
                          "--max-new-tokens", 40, "--seed", 7)
    assert rc == 0, err
    assert cached.startswith("ROMEO:") and len(cached.rstrip("\n")) >= 40
    rc, uncached, _ = run(capsys, "sample", "--ckpt", out / "ckpt-0000008", "--prompt", "ROMEO:",
                          "--max-new-tokens", 40, "--seed", 7, "--no-cache")
    assert uncached == cached

    (out / "loss.png").unlink()
    rc, stdout, _ = run(capsys, "plot", out)
    assert rc == 0 and (out / "loss.png").is_file()


def test_resume_continues_the_run(text_file, tmp_path, capsys):
    out = tmp_path / "run"
    common = ["--data", text_file, "--out", out, "--eval-interval", 3, "--no-plot", *TINY]
    assert run(capsys, "train", "--max-iters", 3, *common)[0] == 0
    rc, stdout, err = run(capsys, "train", "--max-iters", 6, "--resume", *common)
    assert rc == 0, err
    assert "resuming at iter 3" in stdout and "iter 6:" in stdout
    rc, _, err = run(capsys, "train", "--max-iters", 6, *common)
    assert rc == 1 and "--resume" in err


def test_checkpoint_activations_flag_is_saved_and_can_be_turned_off_on_resume(
        text_file, tmp_path, capsys):
    out = tmp_path / "run"
    common = ["--data", text_file, "--out", out, "--eval-interval", 2, "--no-plot", *TINY]
    assert run(capsys, "train", "--max-iters", 2, "--checkpoint-activations", *common)[0] == 0
    saved = json.loads((out / "ckpt-0000002" / "config.json").read_text())["train"]
    assert saved["checkpoint_activations"] is True
    rc, _, err = run(capsys, "train", "--max-iters", 4, "--resume",
                     "--no-checkpoint-activations", *common)
    assert rc == 0, err
    saved = json.loads((out / "ckpt-0000004" / "config.json").read_text())["train"]
    assert saved["checkpoint_activations"] is False


def test_ctrl_c_says_how_to_continue_the_run(text_file, tmp_path, capsys, monkeypatch):
    from minitransformer import train as train_mod
    evaluate, calls = train_mod.estimate_loss, []

    def interrupted_at_the_second_evaluation(*args):
        calls.append(1)
        if len(calls) == 2:
            raise KeyboardInterrupt
        return evaluate(*args)
    monkeypatch.setattr(train_mod, "estimate_loss", interrupted_at_the_second_evaluation)
    out = tmp_path / "run"
    rc, _, err = run(capsys, "train", "--data", text_file, "--out", out, "--max-iters", 8,
                     "--eval-interval", 4, *TINY)
    assert rc == 130
    assert f"interrupted; its last checkpoint is {out / 'ckpt-0000000'}, continue the run " \
           f"with: minitransformer train --resume --out {out}" in err
    monkeypatch.undo()
    rc, stdout, err = run(capsys, "train", "--resume", "--out", out, "--no-progress")
    assert rc == 0 and "iter 8: train loss" in stdout, err


def test_a_lost_worker_process_is_one_line_with_the_resume_command(text_file, tmp_path,
                                                                    capsys, monkeypatch):
    """A data-parallel worker killed (by the system, for memory, say) ends the run with one
    error line that says what happened and how to continue, not a 44-line traceback."""
    from minigrad.data_parallel import WorkerLost
    from minitransformer import train as train_mod
    evaluate, calls = train_mod.estimate_loss, []

    def lost_at_the_second_evaluation(*args):
        calls.append(1)
        if len(calls) == 2:
            raise WorkerLost("ProcessDataParallel: worker process 4242 exited (exit code -9)")
        return evaluate(*args)
    monkeypatch.setattr(train_mod, "estimate_loss", lost_at_the_second_evaluation)
    out = tmp_path / "run"
    rc, _, err = run(capsys, "train", "--data", text_file, "--out", out, "--max-iters", 8,
                     "--eval-interval", 4, *TINY)
    assert rc == 1 and err.count("\n") == 1 and "Traceback" not in err
    assert err.startswith("minitransformer train: error: ProcessDataParallel: worker process "
                          "4242 exited (exit code -9): one of the processes sharing each batch "
                          "was lost") and "--processes 1 trains in one" in err
    assert err.rstrip().endswith(f"continue the run with: minitransformer train --resume "
                                 f"--out {out}")


def test_prompt_with_unknown_characters_names_them(text_file, tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, "train", "--data", text_file, "--out", out, "--max-iters", 0, "--no-plot",
               *TINY)[0] == 0
    rc, _, err = run(capsys, "sample", "--ckpt", out, "--prompt", "ROMEO@{ü")
    assert rc == 1
    assert "not in the vocabulary" in err and "'@'" in err and "'{'" in err and "'ü'" in err


def test_sampling_arguments_are_checked(text_file, tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, "train", "--data", text_file, "--out", out, "--max-iters", 0, "--no-plot",
               *TINY)[0] == 0
    for flag, value, words in [("--temperature", t, "must be a finite number > 0")
                               for t in ("nan", "0", "-1", "inf")] + [
            ("--top-k", "0", "must be an integer >= 1"),
            ("--max-new-tokens", "-5", "must be an integer >= 0"),
            ("--num-samples", "0", "must be an integer >= 1"),
            ("--seed", "-1", "must be an integer >= 0")]:
        with pytest.raises(SystemExit) as e:             # argparse's refusal: usage, rc 2
            main(["sample", "--ckpt", str(out), flag, value])
        assert e.value.code == 2 and f"argument {flag}: {words}" in capsys.readouterr().err
    oneline = tmp_path / "oneline.txt"                   # a text without a newline
    oneline.write_text(TEXT.replace("\n", " "))
    assert run(capsys, "train", "--data", oneline, "--out", tmp_path / "flat", "--max-iters", 0,
               "--no-plot", *TINY)[0] == 0
    rc, _, err = run(capsys, "sample", "--ckpt", tmp_path / "flat")
    assert rc == 1 and "default prompt is a newline" in err and "--prompt" in err


def test_bad_metrics_lines_are_named(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # checked before it is needed
    metrics = tmp_path / "metrics.jsonl"
    for text, words in [('{"iter": 3}\n', "line 1, lacks a number for train_loss, val_loss"),
                        ('{"iter": 0, "train_loss": 4, "val_loss": 4}\n{"iter": 1, "tr',
                         "line 2, is not valid JSON")]:
        metrics.write_text(text)
        rc, _, err = run(capsys, "plot", metrics)
        assert rc == 1 and words in err, err


def test_out_that_is_a_file(text_file, tmp_path, capsys):
    (tmp_path / "afile").write_text("")
    rc, _, err = run(capsys, "train", "--data", text_file, "--out", tmp_path / "afile", *TINY)
    assert rc == 1 and "is a file; pass a directory" in err


@pytest.mark.parametrize("case", ["missing", "empty", "latin1", "short"])
def test_bad_data_files(case, tmp_path, capsys):
    path = tmp_path / "data.txt"
    if case == "empty":
        path.write_bytes(b"")
    elif case == "latin1":
        path.write_bytes("Très bien, monsieur\n".encode("latin-1") * 50)
    elif case == "short":
        path.write_text("too short for a block of sixteen, and its val split shorter\n")
    rc, _, err = run(capsys, "train", "--data", path, "--out", tmp_path / "run", *TINY)
    assert rc == 1
    expected = {"missing": "does not exist", "empty": "is empty", "latin1": "not UTF-8",
                "short": "block_size + 1 = 17"}[case]
    assert expected in err
    if case != "short":
        assert str(path) in err
    assert not (tmp_path / "run" / "latest").exists()


def test_n_embd_not_divisible_by_n_head(text_file, tmp_path, capsys):
    rc, _, err = run(capsys, "train", "--data", text_file, "--out", tmp_path / "run", *TINY,
                     "--n-head", 3)
    assert rc == 1 and "n_embd (16) must be divisible by n_head (3)" in err


def test_cuda_without_cupy_names_the_extra(text_file, tmp_path, capsys):
    import minigrad as mg
    if mg.cuda_is_available():
        pytest.skip("CuPy and a GPU are present here")
    rc, _, err = run(capsys, "train", "--data", text_file, "--out", tmp_path / "run", *TINY,
                     "--device", "cuda")
    assert rc == 1 and 'pip install -e ".[cuda12]"' in err
    rc, _, err = run(capsys, "sample", "--ckpt", tmp_path, "--device", "cuda")
    assert rc == 1 and 'pip install -e ".[cuda12]"' in err
    assert "or use --device cpu" in err and "device='cpu'" not in err   # the CLI's flag


def test_corrupted_checkpoint_via_cli(text_file, tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, "train", "--data", text_file, "--out", out, "--max-iters", 0, "--no-plot",
               *TINY)[0] == 0
    (out / "ckpt-0000000" / "model.safetensors").write_bytes(b"\x00" * 64)
    rc, _, err = run(capsys, "sample", "--ckpt", out)
    assert rc == 1 and "corrupted" in err and "model.safetensors" in err
    rc, _, err = run(capsys, "sample", "--ckpt", tmp_path / "nowhere")
    assert rc == 1 and "does not exist" in err
    with pytest.raises(SystemExit):                 # a bad flag: refused before the ckpt
        run(capsys, "sample", "--ckpt", tmp_path / "nowhere", "--seed", -1)
    assert "argument --seed: must be an integer >= 0, got '-1'" in capsys.readouterr().err


def test_offline_first_run_says_to_pass_data(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv(data.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(data.DATA_ENV, raising=False)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    url = f"http://127.0.0.1:{port}/input.txt"
    monkeypatch.setattr(data.tiny_shakespeare_path, "__defaults__",
                        (url, data.TINY_SHAKESPEARE_SHA256))
    rc, _, err = run(capsys, "train", "--out", tmp_path / "run", *TINY)
    assert rc == 1
    assert "could not download" in err and "--data PATH" in err
    assert str(tmp_path / "cache" / data.TINY_SHAKESPEARE_FILE) in err


def test_plot_without_matplotlib_is_a_clear_message(text_file, tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    assert run(capsys, "train", "--data", text_file, "--out", out, "--max-iters", 0, "--no-plot",
               *TINY)[0] == 0
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    rc, _, err = run(capsys, "plot", out)
    assert rc == 1 and 'pip install -e ".[plot]"' in err


def test_console_script_is_installed():
    exe = shutil.which("minitransformer")
    if exe is None:
        pytest.skip("the console script is not installed (pip install -e .)")
    r = subprocess.run([exe, "train", "--help"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "--preset" in r.stdout and "--resume" in r.stdout


def test_python_dash_m_runs_the_cli():
    import subprocess
    import sys
    r = subprocess.run([sys.executable, "-m", "minitransformer", "--help"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0 and "train" in r.stdout


def test_a_full_disk_is_a_message_and_the_last_checkpoint_stays(text_file, tmp_path, capsys,
                                                                 monkeypatch):
    import safetensors
    out = tmp_path / "run"
    assert run(capsys, "train", "--data", text_file, "--out", out, "--max-iters", 0,
               "--no-plot", *TINY)[0] == 0

    def full_disk(*args, **kwargs):
        raise safetensors.SafetensorError("I/O error: No space left on device (os error 28)")
    monkeypatch.setattr(safetensors.numpy, "save_file", full_disk)
    rc, _, err = run(capsys, "train", "--out", out, "--resume", "--max-iters", 2,
                     "--eval-interval", 2)
    assert rc == 1 and "error: mg.save: writing" in err and "No space left" in err
    assert "Traceback" not in err
    monkeypatch.undo()
    assert run(capsys, "sample", "--ckpt", out, "--max-new-tokens", 3)[0] == 0


def test_write_atomic_leaves_the_old_file_and_no_temporary_when_a_write_fails(tmp_path,
                                                                              monkeypatch):
    """A write that fails midway (a full disk) keeps what was there and cleans up."""
    target = tmp_path / "latest"
    target.write_text("ckpt-0000001\n")

    def full_disk(fd):
        raise OSError(28, "No space left on device")
    monkeypatch.setattr(data.os, "fsync", full_disk)
    with pytest.raises(OSError, match="No space left"):
        data.write_atomic(target, b"ckpt-0000002\n")
    assert target.read_text() == "ckpt-0000001\n"
    assert [p.name for p in tmp_path.iterdir()] == ["latest"]


def test_the_cache_folder_follows_xdg(tmp_path, monkeypatch):
    monkeypatch.delenv(data.CACHE_ENV, raising=False)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert data.cache_dir() == tmp_path / "minitransformer"
    monkeypatch.setenv(data.CACHE_ENV, str(tmp_path / "mine"))
    assert data.cache_dir() == tmp_path / "mine"


def test_dtype_float16_trains_shows_the_scale_and_samples_under_autocast(
        text_file, tmp_path, capsys, monkeypatch):
    out = tmp_path / "run"
    rc, stdout, err = run(capsys, "train", "--data", text_file, "--out", out, "--max-iters", 2,
                          "--eval-interval", 2, "--dtype", "float16", "--processes", 1,
                          "--no-plot", *TINY)
    assert rc == 0, err
    assert "float16 mixed precision" in stdout and "loss scale 65536, " in stdout
    from minitransformer import cli, precision
    seen = []

    def spy(dtype, device):
        seen.append(dtype)
        return precision.autocast(dtype, device)
    monkeypatch.setattr(cli, "autocast", spy)
    for flags, want in (([], "float16"), (["--dtype", "float32"], "float32")):
        rc, sample, err = run(capsys, "sample", "--ckpt", out, "--max-new-tokens", 3,
                              "--prompt", "R", *flags)
        assert rc == 0, err
        assert seen[-1] == want and len(sample) == 5      # the run's dtype by default


@pytest.mark.parametrize("command", ["train", "sample"])
def test_dtype_bfloat16_is_refused_saying_float16_is_there(command, text_file, tmp_path,
                                                           capsys):
    argv = ["--data", text_file, "--out", tmp_path / "run"] if command == "train" else \
        ["--ckpt", tmp_path / "run"]
    rc, _, err = run(capsys, command, "--dtype", "bfloat16", *argv)
    assert rc == 1
    assert "--dtype bfloat16 is not available: NumPy and CuPy have no bfloat16; use " \
           "float16" in err
    rc, _, err = run(capsys, command, "--dtype", "half", *argv)
    assert rc == 1 and "--dtype must be one of float32, float16, got 'half'" in err
