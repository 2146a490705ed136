"""Shared by demos 05 and 06: train a sequence-to-sequence model with teacher forcing on a
generated task, measure exact-match accuracy with greedy decoding, save an attention heatmap.
Works for any model with forward(src, tgt_in) -> logits and
greedy_decode(src, bos_id, eos_id, max_len) -> token-id lists (Seq2Seq, Transformer)."""
import json
import os
import random
import time

import minigrad.functional as F
from minigrad import optim
from minitransformer.tasks import date_task, exact_match, reversal_task


def make_task(name, quick):
    """The task of demos 05 and 06: "dates" (default) or "reversal"; small with --quick."""
    if name == "reversal":
        if quick:
            return reversal_task(n_train=400, n_held_out=40, n_longer=40)
        return reversal_task(n_train=10000, n_held_out=1000, n_longer=1000)
    if quick:
        return date_task(n_train=400, n_held_out=40, n_longer=40)
    return date_task(n_train=20000, n_held_out=1000, n_longer=1000)


def train(model, task, steps, batch_size=64, lr=3e-3, warmup=0, seed=0, log_every=100,
          clip=1.0, label="model"):
    """Adam with a (warmup +) cosine learning-rate schedule, cross-entropy over the target
    tokens (padding ignored), gradient clipping. Returns the seconds it took."""
    opt = optim.Adam(model.parameters(), lr=lr, betas=(0.9, 0.98))
    batches = task.batches(batch_size, random.Random(seed))
    pad = task.tgt_vocab.pad_id
    model.train()
    start = time.time()
    for step in range(steps):
        optim.set_lr(opt, optim.warmup_cosine(step, lr, lr / 20, warmup, steps))
        src, tgt_in, tgt_out = next(batches)
        logits = model(src, tgt_in)                          # teacher forcing
        loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), tgt_out.reshape(-1),
                               ignore_index=pad)
        opt.zero_grad()
        loss.backward()
        optim.clip_grad_norm_(model.parameters(), clip)
        opt.step()
        if (step + 1) % log_every == 0 or step == 0 or step + 1 == steps:
            print(f"  [{label}] step {step + 1:4d}/{steps}  loss {loss.item():.4f}  "
                  f"({time.time() - start:.0f} s)", flush=True)
    model.eval()
    return time.time() - start


def predictor(model, task):
    """sources (strings) -> token-id lists, greedy decoding."""
    max_len = task.max_target_len() + 1
    v = task.tgt_vocab
    return lambda texts: model.greedy_decode(task.sources(texts), v.bos_id, v.eos_id,
                                             max_len=max_len)


def evaluate(model, task, label):
    """Exact-match accuracy on the held-out and the longer set; prints a few mistakes."""
    predict = predictor(model, task)
    result = {}
    for split in ("held_out", "longer"):
        pairs = getattr(task, split)
        result[split] = exact_match(predict, pairs, task.tgt_vocab)
        wrong = [(s, t, task.tgt_vocab.decode(o)) for (s, t), o in
                 zip(pairs[:200], predict([s for s, _ in pairs[:200]]))
                 if task.tgt_vocab.decode(o) != t]
        examples = "; ".join(f"{s!r} -> {o!r} (want {t})" for s, t, o in wrong[:2])
        print(f"  [{label}] {split:8s} exact match {result[split]:7.2%}"
              + (f"   e.g. {examples}" if examples else ""))
    return result


def pyplot():
    """matplotlib.pyplot (files only), or None with a message when it is not installed."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
        return plt
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install -e \".[plot]\")")
        return None


def heatmap(ax, weights, src, out, title):
    """Attention weights (output steps x source positions) with characters as labels."""
    ax.imshow(weights, cmap="viridis", aspect="auto", vmin=0)
    ax.set_xticks(range(len(src)), [c if c != " " else "␣" for c in src], fontsize=7)
    ax.set_yticks(range(len(out)), list(out), fontsize=8)
    ax.set_xlabel("source character")
    ax.set_ylabel("output character")
    ax.set_title(title, fontsize=9)


def save_results(path, results):
    os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
    with open(path, "w") as f:
        json.dump(results, f, indent=2)


def load_results(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None
