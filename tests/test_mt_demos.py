"""Demos 02-08 run from the repo root, print the article section they teach, check their
own numbers, and save PNGs (or skip them cleanly without matplotlib). 05, 06 and 08 run
with --quick (tiny data or model, 10-20 steps): training quality is measured by running
them in full. 08 trains on a small text the test writes: no corpus, no internet."""
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
    assert "the RNN rows: demo 05's own run, 10 steps" in out6
    r5["quick"] = False                                  # a full run's rows: other pairs
    (tmp_path / "05_results.json").write_text(json.dumps(r5))
    out6 = run_demo("06_transformer_translate.py", "--quick", "--no-plot", out=tmp_path)
    assert "Bahdanau" not in out6.split("exact match")[-1] and "same --out, task and --quick" \
        in out6
    if HAS_MPL:
        assert (tmp_path / "05_bahdanau_alignment.png").stat().st_size > 1000
        assert (tmp_path / "06_cross_attention.png").stat().st_size > 1000


@pytest.mark.parametrize("name, args, words", [
    ("05_seq2seq_bahdanau.py", ["--batch-size", "0"], "argument --batch-size: must be an "
                                                      "integer >= 1, got '0'"),
    ("06_transformer_translate.py", ["--lr", "nan"], "argument --lr: must be a finite "
                                                    "number > 0, got 'nan'"),
    ("01_mlp_classifier.py", ["--hidden", "0"], "argument --hidden: must be an integer >= 1"),
    ("06_transformer_translate.py", ["--dropout", "1.5"], "argument --dropout: must be a "
                                                         "number in [0, 1), got '1.5'"),
    ("06_transformer_translate.py", ["--heads", "3"], "--heads 3 must divide --d-model 64"),
    ("07_encoder_decoder_layers.py", ["--seed", "-1"], "argument --seed: must be an integer "
                                                      ">= 0, got '-1'"),
    ("08_gpt_char_lm.py", ["--temperature", "0"], "argument --temperature: must be a finite "
                                                  "number > 0, got '0'"),
    ("08_gpt_char_lm.py", ["--steps", "0"], "argument --steps: must be an integer >= 1"),
])
def test_demo_flags_out_of_range_are_named(tmp_path, name, args, words):
    run = subprocess.run([sys.executable, os.path.join(ROOT, "demos", name), *args], cwd=ROOT,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 2 and words in run.stderr and "Traceback" not in run.stderr


def test_plots_are_skipped_without_matplotlib(tmp_path, monkeypatch, capsys):
    monkeypatch.setitem(sys.modules, "matplotlib", None)     # makes `import matplotlib` fail
    monkeypatch.syspath_prepend(os.path.join(ROOT, "demos"))
    for name, args in (("02_self_attention_by_hand.py", []), ("03_positional_encoding.py", []),
                       ("04_multi_head_and_masks.py", []), ("05_seq2seq_bahdanau.py", ["--quick"]),
                       ("07_encoder_decoder_layers.py", []),
                       ("08_gpt_char_lm.py", ["--quick", "--data", small_text(tmp_path)])):
        spec = importlib.util.spec_from_file_location(name[:-3], os.path.join(ROOT, "demos",
                                                                                name))
        demo = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(demo)
        demo.main(["--out", str(tmp_path), *args])
        assert "skipping the plot" in capsys.readouterr().out
    assert not list(tmp_path.glob("*.png"))


def small_text(folder):
    """A made-up text of ~2,000 characters (the val split must hold a --quick block)."""
    words = "the cat sat on a mat and a dog ran to see it while birds sang".split()
    lines = [" ".join(words[(7 * i + 3 * j) % len(words)] for j in range(8)).capitalize() + "."
             for i in range(60)]
    path = folder / "small.txt"
    path.write_text("Small Text:\n" + "\n".join(lines) + "\n", encoding="utf-8")
    return str(path)


def test_demo08_gpt_quick(tmp_path):
    out = run_demo("08_gpt_char_lm.py", "--quick", "--data", small_text(tmp_path), out=tmp_path)
    for text in ("2.2.3.4 掩码注意力机制", "2.2.4.2 解码器结构", "生成式模型（如GPT）",
                 "y is x shifted by one", "tied: transformer.wte.weight is lm_head.weight -> True",
                 "ln(vocab) = ln ", "(preset 'baby')", "val loss "):
        assert text in out
    # the causal mask: changing tokens 16..31 leaves the logits at 0..15 exactly unchanged
    assert "largest change of the logits at positions 0..15: 0.0e+00; smallest at 16..31: " \
        in out and "smallest at 16..31: 0.0e+00" not in out
    assert "the same 40 tokens with the cache and without: True" in out   # same seed
    assert out.split("the sample:\n\n")[1].startswith("Small Text:")
    if HAS_MPL:
        assert (tmp_path / "08_gpt_loss.png").stat().st_size > 1000


def test_demo08_bad_data_and_prompt_are_named(tmp_path):
    demo = os.path.join(ROOT, "demos", "08_gpt_char_lm.py")
    env = {**os.environ, "MINITRANSFORMER_DATA": str(tmp_path / "missing.txt")}
    run = subprocess.run([sys.executable, demo, "--quick", "--no-plot"], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=60)
    assert run.returncode == 1 and "Traceback" not in run.stderr
    assert "does not exist" in run.stderr and "pass --data PATH" in run.stderr
    for prompt, words in (("", "--prompt must hold 1 to 31 characters"),
                          ("Zebra", "--prompt: CharTokenizer: 1 character(s) not in the")):
        run = subprocess.run([sys.executable, demo, "--quick", "--no-plot", "--data",
                              small_text(tmp_path), "--prompt", prompt], cwd=ROOT,
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 2 and words in run.stderr and "Traceback" not in run.stderr


def load_demo(name):
    sys.path[:0] = [os.path.join(ROOT, "demos")]
    try:
        spec = importlib.util.spec_from_file_location(name[:-3], os.path.join(ROOT, "demos",
                                                                                name))
        demo = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(demo)
        return demo
    finally:
        sys.path.remove(os.path.join(ROOT, "demos"))


def test_demo05_reads_the_bottleneck_off_held_out_lengths_only(capsys):
    demo = load_demo("05_seq2seq_bahdanau.py")
    from minitransformer.tasks import reversal_task
    task = reversal_task(n_train=50, n_held_out=60, n_longer=5)
    ranges = demo.common.length_buckets(task)
    assert ranges[0][0] == 3 and ranges[-2][1] == 12 and ranges[-1] == (13, 18)
    assert all(a == b + 1 for (a, _), (_, b) in zip(ranges[1:], ranges))    # no gaps

    def row(*acc):
        return {"by_length": dict(zip(["3-5", "6-9", "10-12", "13-18"], acc))}

    # measured with --task reversal: the plain model collapses with length, attention not
    demo.explain_by_length({"no attention": row(.98, .64, .08, .00),
                            "Bahdanau": row(1.0, 1.0, 1.0, .27)}, task)
    assert "is the bottleneck" in capsys.readouterr().out
    # flat over the lengths seen in training, failing only on unseen ones: that is
    # extrapolation, no evidence of the bottleneck
    demo.explain_by_length({"no attention": row(.60, .60, .60, .00),
                            "Bahdanau": row(1.0, 1.0, 1.0, .95)}, task)
    assert "does not grow" in capsys.readouterr().out


def test_demo_evaluation_scores_stray_special_tokens_as_wrong(capsys):
    common = load_demo("05_seq2seq_bahdanau.py").common
    from minitransformer.tasks import reversal_task
    task = reversal_task(n_train=50, n_held_out=20, n_longer=20)
    v = task.tgt_vocab

    class Oracle:                         # right characters, with a <bos> inside some
        def __init__(self, stray):
            self.stray = stray

        def greedy_decode(self, src, bos_id, eos_id, max_len):
            outs = []
            for row in src.numpy().tolist():
                ids = v.encode(task.src_vocab.decode(row)[::-1])
                outs.append(ids[:1] + [bos_id] + ids[1:] if self.stray else ids)
            return outs

    assert common.evaluate(Oracle(False), task, "oracle")["held_out"] == 1.0
    r = common.evaluate(Oracle(True), task, "stray")
    assert r["held_out"] == r["longer"] == 0.0 and "<bos>" in capsys.readouterr().out
