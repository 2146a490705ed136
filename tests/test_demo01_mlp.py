"""Demo 01 runs from the repo root as documented, reaches 100% training accuracy, and
saves its plot (or skips it cleanly without matplotlib)."""
import importlib.util
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEMO = os.path.join(ROOT, "demos", "01_mlp_classifier.py")


def test_default_run_reaches_full_accuracy_and_plots(tmp_path):
    png = tmp_path / "boundary.png"
    run = subprocess.run([sys.executable, DEMO, "--out", str(png)], cwd=ROOT,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr
    assert "final training accuracy 100.0%" in run.stdout
    assert "step    1  loss" in run.stdout                 # progress is printed as it goes
    if importlib.util.find_spec("matplotlib") is not None:
        assert png.exists() and png.stat().st_size > 1000


def test_plot_is_skipped_without_matplotlib(tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("demo01", DEMO)
    demo = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(demo)
    monkeypatch.setitem(sys.modules, "matplotlib", None)   # makes `import matplotlib` fail
    acc = demo.main(["--steps", "5", "--out", str(tmp_path / "x.png")])
    assert 0.0 <= acc <= 1.0
    assert "skipping the plot" in capsys.readouterr().out
    assert not (tmp_path / "x.png").exists()
