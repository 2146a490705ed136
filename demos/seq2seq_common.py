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
from minitransformer.tasks import date_task, is_exact, reversal_task


def make_task(name, quick):
    """The task of demos 05 and 06: "reversal" (their default) or "dates"; small with
    --quick."""
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


def length_buckets(task, n=3):
    """Source-length ranges for the per-length accuracy: the held-out lengths cut into `n`
    ranges of about equal width, then the longer set as one more range."""
    lengths = sorted(len(s) for s, _ in task.held_out)
    lo, hi = lengths[0], lengths[-1]
    edges = [lo + round(i * (hi - lo + 1) / n) for i in range(n + 1)]
    ranges = [(a, b - 1) for a, b in zip(edges, edges[1:]) if b > a]
    return ranges + [(hi + 1, max(len(s) for s, _ in task.longer))]


def evaluate(model, task, label):
    """Exact-match accuracy (greedy decoding, token ids compared: `tasks.is_exact`) on the
    held-out and the longer set, and per source-length range (`by_length`, the article's
    point: one fixed context vector has to hold the whole source, so it fails more as the
    source grows); prints a few mistakes as the model wrote them."""
    predict = predictor(model, task)
    v = task.tgt_vocab
    result, hits = {}, {}
    for split in ("held_out", "longer"):
        pairs = getattr(task, split)
        outs = [o for i in range(0, len(pairs), 256)
                for o in predict([s for s, _ in pairs[i:i + 256]])]
        hits[split] = [(len(s), is_exact(o, t, v)) for (s, t), o in zip(pairs, outs)]
        result[split] = sum(h for _, h in hits[split]) / len(pairs)
        wrong = [(s, t, v.decode(o, show_special=True)) for (s, t), (_, h), o in
                 zip(pairs, hits[split], outs) if not h]
        examples = "; ".join(f"{s!r} -> {o!r} (want {t})" for s, t, o in wrong[:2])
        print(f"  [{label}] {split:8s} exact match {result[split]:7.2%}"
              + (f"   e.g. {examples}" if examples else ""))
    both = hits["held_out"] + hits["longer"]
    result["by_length"] = {}
    for a, b in length_buckets(task):
        got = [h for n, h in both if a <= n <= b]
        if got:
            result["by_length"][f"{a}-{b}"] = sum(got) / len(got)
    return result


def print_by_length(rows, task):
    """The per-length table: one row per model, one column per source-length range."""
    ranges = list(rows[0][1]["by_length"])
    print(f"\nexact match by source length (characters; the last range is the longer set, "
          f"> {task.info['max_train_len']}):")
    print("  " + " " * 14 + "".join(f"{r:>9s}" for r in ranges))
    for label, r in rows:
        print(f"  {label:14s}" + "".join(f"{r['by_length'][k]:9.1%}" for k in ranges))


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
