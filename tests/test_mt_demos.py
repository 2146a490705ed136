"""Demos 02-07 run from the repo root, print the article section they teach, check their
own numbers, and save PNGs (or skip them cleanly without matplotlib). 05 and 06 run with
--quick (tiny data, 10 steps): training quality is measured by running them in full."""
import importlib.util
import json
import os
import subprocess
import sys

import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
HAS_MPL = importlib.util.find_spec("matplotlib") is not None


def run_demo(name, *args, out):
    run = subprocess.run([sys.executable, os.path.join(ROOT, "demos", name), "--out", str(out),
                          *args], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-3000:]
    return run.stdout


@pytest.mark.parametrize("name, section, png, expect", [
    ("02_self_attention_by_hand.py", "2.2.3.2 自注意力机制", "02_self_attention_weights.png",
     ["row sums: 1.000000  1.000000  1.000000", "checked against the plain formula"]),
    ("03_positional_encoding.py", "2.2.5.2 位置编码", "03_positional_encoding.png",
     ["sin(pos/1), cos(pos/1), sin(pos/100), cos(pos/100)", "0.8415    0.5403    0.0100"]),
    ("04_multi_head_and_masks.py", "2.2.3.3 多头注意力机制", "04_multi_head_and_masks.png",
     ["2.2.3.4", "outputs 0-2 move by 0.0e+00", "largest difference"]),
    ("07_encoder_decoder_layers.py", "2.2.5.3 残差连接", "07_layer_norm_and_residual.png",
     ["2.2.4.1 编码器结构", "2.2.4.2 解码器结构", "2.2.5.1 前馈神经网络", "2.2.5.4 层归一化",
      "moves: 0.000  0.000  0.879  0.000  0.000", "by hand vs EncoderLayer 0.0e+00",
      "18,914,304 parameters", "moves: 0.000  0.000  0.000"]),
])
def test_lesson_demos(tmp_path, name, section, png, expect):
    out = run_demo(name, out=tmp_path)
    assert section in out
    for text in expect:
        assert text in out
    if HAS_MPL:
        assert (tmp_path / png).stat().st_size > 1000


def test_demo05_and_06_quick(tmp_path):
    out5 = run_demo("05_seq2seq_bahdanau.py", "--quick", out=tmp_path)
    assert "2.2.3.1 前Transformer时代的注意力机制" in out5
    assert "no attention" in out5 and "Bahdanau" in out5 and "longer inputs" in out5
    r5 = json.loads((tmp_path / "05_results.json").read_text())
    assert set(r5["Bahdanau"]) >= {"held_out", "longer"}
    out6 = run_demo("06_transformer_translate.py", "--quick", out=tmp_path)
    assert "2.2.4 Transformer架构组成" in out6 and "beam search" in out6
    assert "Bahdanau" in out6.split("exact match")[-1]       # the table includes demo 05's rows
    if HAS_MPL:
        assert (tmp_path / "05_bahdanau_alignment.png").stat().st_size > 1000
        assert (tmp_path / "06_cross_attention.png").stat().st_size > 1000


def test_plots_are_skipped_without_matplotlib(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # makes `import matplotlib` fail
    monkeypatch.syspath_prepend(os.path.join(ROOT, "demos"))
    for name, args in (("02_self_attention_by_hand.py", []), ("03_positional_encoding.py", []),
                       ("04_multi_head_and_masks.py", []), ("05_seq2seq_bahdanau.py", ["--quick"]),
                       ("07_encoder_decoder_layers.py", [])):
        spec = importlib.util.spec_from_file_location(name[:-3], os.path.join(ROOT, "demos",
                                                                                name))
        demo = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(demo)
        demo.main(["--out", str(tmp_path), *args])
        assert "skipping the plot" in capsys.readouterr().out
    assert not list(tmp_path.glob("*.png"))
