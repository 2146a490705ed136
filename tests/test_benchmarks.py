"""The benchmark scripts run (with tiny settings) and print their figures. They time
nothing here: speed is measured by running them in full (benchmarks/README.md)."""
import importlib.util
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def run(script, *args):
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", script), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


@pytest.mark.parametrize("script, args, expect", [
    ("bench_generate.py", ["--tokens", "5", "--block-size", "16"],
     ["KV cache", "no cache", "same tokens: True"]),
    ("bench_ops.py", ["--ops", "add", "--large", "1024", "--min-time", "0.01"],
     ["tiny add forward+backward", "mg f+b", "1024 |"]),
    ("bench_train.py", ["--preset", "baby", "--steps", "2", "--warmup", "0", "--block", "1",
                        "--pause", "0", "--peak-size", "256"],
     ["dtype float32,", "GEMM peak (256^3", "minigrad:", "ms/step", "MFU", "peak RSS",
      "turn by turn (2 pairs"]),
    ("bench_train.py", ["--dtype", "float16", "--steps", "1", "--warmup", "0", "--block", "1",
                        "--pause", "0", "--peak-size", "256"],
     ["dtype float16 (autocast + GradScaler on both sides)", "minigrad:", "ms/step", "MFU"]),
    ("bench_gemm.py", ["--preset", "baby"], ["attn.c_attn", "384 x 128 -> 384", "NumPy"]),
    ("bench_layers.py", ["--cases", "gru", "hardtanh", "--repeat", "1"],
     ["forward + backward, ms (best of 1)", "gru", "hardtanh"]),
    ("profile_step.py", ["--steps", "1", "--warmup", "0", "--batch-size", "2", "--rows", "50"],
     ["ms/step while profiled", "unprofiled", "LinearBackward", "Optimizer.step#AdamW.step",
      "clip_grad_norm_", "Self time total"]),
])
def test_benchmark_scripts_run(script, args, expect):
    out = run(script, *args)
    if importlib.util.find_spec("torch") is None:       # side by side needs PyTorch
        expect = [e for e in expect if not e.startswith("turn by turn")]
    for text in expect:
        assert text in out, out[-2000:]


@pytest.mark.parametrize("script, args, words", [
    ("bench_ops.py", ["--ops", "foo"], "--ops: unknown foo; valid: add"),
    ("bench_layers.py", ["--cases", "foo"], "unknown cases ['foo']; valid: lstm, gru"),
    ("bench_train.py", ["--steps", "0"], "argument --steps: must be an integer >= 1, got '0'"),
    ("bench_train.py", ["--dtype", "bfloat16"], "argument --dtype: invalid choice: 'bfloat16'"),
    ("bench_generate.py", ["--tokens", "0"], "argument --tokens: must be an integer >= 1"),
    ("bench_gemm.py", ["--processes", "0"], "argument --processes: must be an integer >= 1"),
    ("profile_step.py", ["--steps", "0"], "argument --steps: must be an integer >= 1"),
    ("bench_generate.py", ["--ckpt", "no-such-run"], "--ckpt: no-such-run does not exist"),
])
def test_bad_arguments_are_named_not_a_traceback(script, args, words, tmp_path):
    # ... before any work: a `torch` that refuses to load stands first on the path (PyTorch
    # takes seconds to load, which a bad flag should not wait for)
    (tmp_path / "torch").mkdir()
    (tmp_path / "torch" / "__init__.py").write_text(
        "raise RuntimeError('PyTorch loaded before the arguments were checked')\n")
    path = os.pathsep.join(filter(None, [str(tmp_path), os.environ.get("PYTHONPATH")]))
    done = subprocess.run([sys.executable, os.path.join(ROOT, "benchmarks", script), *args],
                          cwd=ROOT, capture_output=True, text=True, timeout=120,
                          env={**os.environ, "PYTHONPATH": path})
    assert done.returncode == 2 and words in done.stderr, done.stderr[-2000:]
    assert "Traceback" not in done.stderr
