"""What a careless user of `minitransformer` gets: each mistake a message that names the flag
(or file) and what would be valid, never a traceback or a silent surprise."""
import json
import socket
import sys

import pytest

from minitransformer import data, train as train_mod, train_config
from minitransformer.cli import main

TEXT = ("ROMEO:\nBut soft, what light through yonder window breaks?\nIt is the east, and Juliet "
        "is the sun.\n\n") * 10
TINY = ["--n-layer", "1", "--n-head", "2", "--n-embd", "16", "--block-size", "16",
        "--batch-size", "4", "--eval-iters", "2", "--no-progress", "--no-plot"]


@pytest.fixture
def text_file(tmp_path):
    p = tmp_path / "romeo.txt"
    p.write_text(TEXT)
    return p


@pytest.fixture
def trained(text_file, tmp_path, capsys):
    out = tmp_path / "run"
    assert run(capsys, "train", "--data", text_file, "--out", out, "--max-iters", 0,
               *TINY)[0] == 0
    return out


def run(capsys, *argv):
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


@pytest.mark.parametrize("flags, words", [
    (["--min-lr", "0.01"], "--min-lr (0.01) must not exceed the peak learning rate"),
    (["--lr-decay-iters", "-5"], "--lr-decay-iters must be >= 0, got -5"),
    (["--batch-size", "0"], "--batch-size must be >= 1, got 0"),
    (["--seed", "-1"], "--seed must be >= 0, got -1"),
])
def test_config_errors_name_the_flag_before_any_work(flags, words, text_file, tmp_path, capsys):
    rc, out, err = run(capsys, "train", "--data", text_file, "--out", tmp_path / "run", *TINY,
                       *flags)
    assert rc == 1 and words in err, err
    assert "TrainConfig" not in err and "parameters" not in out   # no model was built
    assert not (tmp_path / "run").exists()


def test_preset_with_resume_must_match_the_run(trained, capsys):
    rc, _, err = run(capsys, "train", "--resume", "--out", trained, "--preset", "small",
                     "--max-iters", 1)
    assert rc == 1 and "--preset small: the run in" in err and "n_layer=1" in err, err
    # without --preset the run's own values are kept
    rc, out, err = run(capsys, "train", "--resume", "--out", trained, "--max-iters", 1,
                       "--no-progress", "--no-plot")
    assert rc == 0 and "iter 1: train loss" in out, err


def test_out_that_cannot_be_made_names_out(text_file, tmp_path, capsys):
    (tmp_path / "afile").write_text("")
    rc, _, err = run(capsys, "train", "--data", text_file, "--out", tmp_path / "afile" / "run",
                     *TINY)
    assert rc == 1 and f"--out {tmp_path / 'afile' / 'run'}: cannot create" in err, err


def test_out_of_memory_says_which_flags_to_lower(text_file, tmp_path, capsys, monkeypatch):
    """NumPy's MemoryError, where the estimate below does not catch it first."""
    monkeypatch.setattr(train_mod, "check_memory", lambda cfg, vocab_size: None)
    rc, _, err = run(capsys, "train", "--data", text_file, "--out", tmp_path / "run", *TINY,
                     "--batch-size", 10 ** 12)
    assert rc == 1 and "out of memory" in err and "--batch-size" in err, err


def test_a_run_too_big_for_memory_is_refused_before_it_starts(text_file, tmp_path, capsys,
                                                               monkeypatch):
    """Linux's OOM killer ends a process without a word, so a step that clearly cannot fit
    is refused up front, with the estimate, what is free and the flags to lower."""
    monkeypatch.setattr(train_config, "available_host_bytes", lambda: 2 ** 30)
    rc, _, err = run(capsys, "train", "--data", text_file, "--out", tmp_path / "run", *TINY,
                     "--batch-size", 200000)
    assert rc == 1 and "more than the 1.0 GiB free" in err and "--batch-size" in err, err
    assert "--block-size" in err and "200000x16 tokens" in err
    assert not (tmp_path / "run").exists()                  # nothing left behind
    (tmp_path / "mine").mkdir()                             # a directory the user made: kept
    assert run(capsys, "train", "--data", text_file, "--out", tmp_path / "mine", *TINY,
               "--batch-size", 200000)[0] == 1
    assert (tmp_path / "mine").is_dir()
    rc, _, err = run(capsys, "train", "--data", text_file, "--out", tmp_path / "run2", *TINY,
                     "--max-iters", 1)
    assert rc == 0, err                                     # a run that fits is not refused
    monkeypatch.setenv(train_config.MEMORY_CHECK_ENV, "0")  # the way to run it anyway
    cfg = train_config.TrainConfig.from_preset("baby", batch_size=200000)
    train_config.check_memory(cfg, 65, available=2 ** 30)


def test_available_memory_is_the_tighter_of_the_host_and_a_container_limit(monkeypatch):
    from minigrad import host_memory
    files = {"/sys/fs/cgroup/memory.max": 3 * 2 ** 30,
             "/sys/fs/cgroup/memory.current": 2 ** 30}
    monkeypatch.setattr(host_memory, "_meminfo_available", lambda: 20 * 2 ** 30)
    monkeypatch.setattr(host_memory, "_read_int", files.get)
    assert host_memory.available_host_bytes() == 2 * 2 ** 30
    files["/sys/fs/cgroup/memory.max"] = None                # "max": no container limit
    assert host_memory.available_host_bytes() == 20 * 2 ** 30
    monkeypatch.setattr(host_memory, "_meminfo_available", lambda: None)
    assert host_memory.available_host_bytes() is None


def test_the_step_estimate_follows_the_measured_peaks():
    """step_bytes against peak RSS measured on 2026-12-01 (one process, minus ~100 MiB of
    interpreter and libraries): a little under each (so a refusal is a run that would not
    fit), never far under, and monotone in each size."""
    MiB = 2 ** 20
    for preset, kw, measured in [("baby", dict(block_size=512), 494),
                                 ("baby", dict(block_size=1024, batch_size=8), 930),
                                 ("baby", dict(block_size=2048, batch_size=4), 1538),
                                 ("baby", dict(block_size=4096, batch_size=1), 1546),
                                 ("small", dict(batch_size=8, dropout=0.0), 605),
                                 ("small", dict(batch_size=16), 1261),
                                 # measured 2026-12-01 (1371 MiB without, same losses)
                                 ("small", dict(batch_size=16, checkpoint_activations=True),
                                  420)]:
        est = train_config.step_bytes(train_config.TrainConfig.from_preset(preset, **kw), 65)
        assert 0.8 < est / (measured * MiB) < 1.05, (preset, kw, est / MiB)
    base = train_config.TrainConfig.from_preset("baby")
    for field in ("batch_size", "block_size", "n_layer", "n_embd"):
        bigger = train_config.TrainConfig.from_preset("baby", **{field: 2 * getattr(base, field)})
        assert train_config.step_bytes(bigger, 65) > train_config.step_bytes(base, 65)


def test_a_diverging_run_prints_no_numpy_warnings(text_file, tmp_path, capsys, recwarn):
    rc, _, err = run(capsys, "train", "--data", text_file, "--out", tmp_path / "run", *TINY,
                     "--lr", 1e6, "--grad-clip", 0, "--max-iters", 20, "--log-interval", 1)
    assert rc == 1 and "became" in err and "--lr" in err, err
    assert not [w for w in recwarn if issubclass(w.category, RuntimeWarning)]


def test_prompt_of_raw_bytes_is_not_valid_utf8(trained, capsys):
    rc, _, err = run(capsys, "sample", "--ckpt", trained, "--prompt", b"\xff\xfe".decode(
        "utf-8", "surrogateescape"))
    assert rc == 1 and "--prompt is not valid UTF-8" in err, err


def _edit_config(run_dir, edit):
    ckpt = run_dir / (run_dir / "latest").read_text().strip()
    meta = json.loads((ckpt / "config.json").read_text())
    edit(meta)
    (ckpt / "config.json").write_text(json.dumps(meta))


def test_checkpoint_of_a_newer_format_says_so(trained, capsys):
    _edit_config(trained, lambda m: m.update(version=99))
    rc, _, err = run(capsys, "sample", "--ckpt", trained)
    assert rc == 1 and "format version 99" in err and "newer one: upgrade" in err, err


def test_checkpoint_whose_tokenizer_does_not_fit_its_model(trained, capsys):
    def shorten(meta):
        meta["tokenizer"]["chars"] = meta["tokenizer"]["chars"][:-1]
    _edit_config(trained, shorten)
    rc, _, err = run(capsys, "sample", "--ckpt", trained)
    assert rc == 1 and "corrupted" in err and "its tokenizer has" in err, err


def test_plot_output_without_suffix_or_a_folder(trained, tmp_path, capsys):
    pytest.importorskip("matplotlib")
    rc, out, _ = run(capsys, "plot", trained, "-o", tmp_path / "curve")
    assert rc == 0 and out.strip() == str(tmp_path / "curve.png")
    assert (tmp_path / "curve.png").is_file()
    (tmp_path / "pics").mkdir()
    rc, out, _ = run(capsys, "plot", trained, "-o", tmp_path / "pics")
    assert rc == 0 and (tmp_path / "pics" / "loss.png").is_file()


def test_plot_of_a_file_that_is_not_utf8_names_it(tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    bad = tmp_path / "latin1.jsonl"
    bad.write_bytes("café\n".encode("latin-1"))
    rc, _, err = run(capsys, "plot", bad)
    assert rc == 1 and f"{bad} is not UTF-8" in err, err


def test_a_cached_corpus_that_fails_its_check_is_named(tmp_path, capsys, monkeypatch):
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / data.TINY_SHAKESPEARE_FILE).write_text("not the corpus")
    monkeypatch.setenv(data.CACHE_ENV, str(cache))
    monkeypatch.delenv(data.DATA_ENV, raising=False)
    with socket.socket() as s:                              # a port nobody listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    monkeypatch.setattr(data.tiny_shakespeare_path, "__defaults__",
                        (f"http://127.0.0.1:{port}/input.txt", data.TINY_SHAKESPEARE_SHA256))
    rc, _, err = run(capsys, "train", "--out", tmp_path / "run", *TINY)
    assert rc == 1 and "does not match its sha256" in err and "could not download" in err, err


def test_a_run_saved_with_min_lr_above_lr_still_resumes(trained, capsys):
    # runs saved before min_lr > lr was refused keep their schedule; a flag that sets
    # either is checked
    _edit_config(trained, lambda m: m["train"].update(lr=1e-5, min_lr=1e-4))
    rc, out, err = run(capsys, "train", "--resume", "--out", trained, "--max-iters", 1,
                       "--no-progress", "--no-plot")
    assert rc == 0 and "iter 1: train loss" in out, err
    rc, _, err = run(capsys, "train", "--resume", "--out", trained, "--max-iters", 2,
                     "--lr", 2e-5)
    assert rc == 1 and "--min-lr (0.0001) must not exceed" in err and "corrupted" not in err


def test_an_empty_prompt_and_samples_apart(trained, capsys):
    rc, _, err = run(capsys, "sample", "--ckpt", trained, "--prompt", "")
    assert rc == 1 and "--prompt must hold at least one character" in err, err
    rc, out, _ = run(capsys, "sample", "--ckpt", trained, "--prompt", "R",
                     "--max-new-tokens", 5, "--num-samples", 3)
    assert rc == 0 and out.count("---------------\n") == 2, out   # between samples only
    assert all(s.startswith("R") for s in out.split("---------------\n"))


def test_a_terminal_that_cannot_show_the_sample_says_what_to_set(trained, capsys,
                                                                  monkeypatch):
    import builtins

    def ascii_only(*args, **kwargs):
        raise UnicodeEncodeError("ascii", "é", 0, 1, "ordinal not in range(128)")
    monkeypatch.setattr(builtins, "print", ascii_only)
    with pytest.raises(ValueError, match="cannot show the sample's characters; set "
                                         "PYTHONIOENCODING=utf-8"):
        from minitransformer.cli import cmd_sample, build_parser
        cmd_sample(build_parser().parse_args(["sample", "--ckpt", str(trained)]))


def test_sample_prints_as_it_goes_and_ctrl_c_keeps_what_was_shown(trained):
    """The sample appears character by character (the first ones arrive long before a
    100,000-character sample could finish), and Ctrl-C ends the run with them still on
    the screen: exit 130 and a one-line note, no traceback."""
    import os
    import signal
    import subprocess
    proc = subprocess.Popen([sys.executable, "-m", "minitransformer", "sample", "--ckpt",
                             str(trained), "--prompt", "ROMEO:", "--max-new-tokens", "100000"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "PYTHONIOENCODING": "utf-8"},
                            # A job started in the background by a non-interactive shell (as
                            # CI may start pytest) inherits SIGINT ignored, and Python then
                            # never turns it into KeyboardInterrupt: give the child the
                            # default a terminal would.
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        shown = proc.stdout.read(6 + 20)                 # the prompt and 20 sampled characters
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert shown.startswith(b"ROMEO:") and len(shown) == 26
    assert proc.returncode == 130, err
    assert err.decode().strip() == "minitransformer sample: interrupted"
    assert len(shown + rest) < 100000


def test_a_reader_that_leaves_early_ends_the_run_quietly(trained):
    """`minitransformer sample ... | head -1`: the reader's end of the pipe is gone (here
    closed before the start); exit 0 and nothing on stderr, as `cat`, not a traceback."""
    import os
    import subprocess
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run([sys.executable, "-m", "minitransformer", "sample", "--ckpt",
                               str(trained), "--max-new-tokens", "20"], stdout=write,
                              stderr=subprocess.PIPE, text=True, timeout=120)
    finally:
        os.close(write)
    assert done.returncode == 0 and done.stderr == "", done.stderr
