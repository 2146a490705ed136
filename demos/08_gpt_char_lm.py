"""Demo 08 — article 2.2.3.4 掩码注意力机制 (masked attention) and 2.2.4.2 解码器结构 (the
decoder), as GPT: a decoder-only character language model.

The article says masked attention is what suits generative models like GPT: each position
may look only at the ones before it, so the model can learn to predict every next character
of a text at once and then write text one character at a time. A GPT is the decoder alone:
no encoder, so no cross-attention, two sublayers per block (masked self-attention, FFN).

(1) The data: a text, its characters as the vocabulary, and one (x, y) pair where y is x
shifted by one. (2) The model: its size, the output head tied to the token embedding, and
the causal mask checked on the untrained model. (3) The loss at initialisation, close to
ln(vocab). (4) Training with the trainer's recipe (the "baby" preset: AdamW, warmup +
cosine, clipping). (5) Sampling with and without the KV cache: the same tokens, timed, also
at a 4x longer context where the cache's saving shows. Saves the loss curve.

    python demos/08_gpt_char_lm.py [--data PATH] [--steps N] [--quick] [--out out] [--no-plot]
"""
import argparse
import math
import os
import sys
import time

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
               os.path.dirname(os.path.abspath(__file__))]
from plotting import save_figure  # noqa: E402
import minigrad as mg  # noqa: E402  (before NumPy: it sets how BLAS threads idle)
import numpy as np  # noqa: E402
from minigrad import optim  # noqa: E402
from minitransformer.argtypes import non_negative_int, positive_float, positive_int  # noqa: E402
from minitransformer import (GPT, CharTokenizer, GPTConfig, TrainConfig,  # noqa: E402
                             UnknownCharacterError)
from minitransformer.data import (DataError, check_split, get_batch, load_text,  # noqa: E402
                                  train_val_split)
from minitransformer.train import estimate_loss  # noqa: E402

# --quick: a model and run small enough for a smoke test (well under 10 s)
QUICK = dict(n_layer=2, n_head=2, n_embd=32, block_size=32, batch_size=8, warmup_iters=4,
             eval_iters=2)


def data(cfg, path):
    print("\n(1) the data: a text, one token per character")
    text, path = load_text(path)            # --data, else $MINITRANSFORMER_DATA, else Tiny
    tok = CharTokenizer.from_text(text)     # Shakespeare (cached, or downloaded once)
    ids = np.asarray(tok.encode(text), dtype=np.int64)
    train_ids, val_ids = train_val_split(ids)
    for name, split in (("train", train_ids), ("val", val_ids)):
        check_split(name, split, cfg.block_size)
    print(f"    {path}: {len(text):,} characters, {tok.vocab_size} distinct: the vocabulary\n"
          f"    {''.join(tok.chars)!r}")
    print(f"    first 90% for training ({len(train_ids):,} tokens), last 10% for validation "
          f"({len(val_ids):,})")
    x, y = get_batch(train_ids, 1, cfg.block_size, np.random.default_rng(cfg.seed))
    xs, ys = x[0].tolist(), y[0].tolist()
    print(f"    one training pair, block_size {cfg.block_size}:\n"
          f"      x = {tok.decode(xs)!r}\n      y = {tok.decode(ys)!r}")
    assert xs[1:] == ys[:-1]
    print("    y is x shifted by one (y[t] = x[t+1]): one pair holds block_size examples, "
          "'given x[0..t], the next is y[t]':")
    for t in range(4):
        print(f"      {tok.decode(xs[:t + 1])!r:>8} -> {tok.decode(ys[t:t + 1])!r}")
    return text, tok, train_ids, val_ids, x


def model_and_mask(cfg, tok, x):
    print("\n(2) the model: 2.2.4.2's decoder without the encoder (so without "
          "cross-attention), pre-norm")
    gcfg = cfg.model_config(tok.vocab_size)
    mg.manual_seed(cfg.seed)
    model = GPT(gcfg)
    print(f"    {gcfg}")
    print(f"    {model.num_parameters(non_embedding=False):,} parameters "
          f"({model.num_parameters():,} without the position embedding, as nanoGPT counts)")
    wte, head = model.transformer.wte.weight, model.lm_head.weight
    print(f"    tied: transformer.wte.weight is lm_head.weight -> {wte is head}; one "
          f"{tuple(wte.shape)} tensor, listed once by parameters() "
          f"({len(list(model.parameters()))} tensors), saved under both names in the "
          f"state dict ({len(model.state_dict())} entries)")
    assert wte is head
    # the causal mask, from outside: change the tokens after t, watch the logits at <= t
    model.eval()
    T, t = cfg.block_size, cfg.block_size // 2 - 1
    later = mg.cat([x[:, :t + 1], (x[:, t + 1:] + 1) % tok.vocab_size], 1)
    with mg.no_grad():
        a, _ = model(x)
        b, _ = model(later)
    moved = (a - b).abs().max(-1).values[0]
    before, after = moved[:t + 1].max().item(), moved[t + 1:].min().item()
    print(f"    2.2.3.4 causal mask on the untrained model: change tokens {t + 1}..{T - 1} of "
          f"the pair's x;\n    largest change of the logits at positions 0..{t}: "
          f"{before:.1e}; smallest at {t + 1}..{T - 1}: {after:.1e} (> 0)")
    assert before == 0.0 and after > 0.0
    print("    position t reads only tokens <= t: that is what lets one forward pass train "
          "every position,\n    and what makes generation one token after another possible")
    return model, a


def initial_loss(model, cfg, tok, train_ids, val_ids, logits):
    losses = estimate_loss(model, train_ids, val_ids, cfg, 0)
    uniform = math.log(tok.vocab_size)
    sigma = logits.std().item()
    print(f"\n(3) the loss at initialisation: train {losses['train']:.4f}, val "
          f"{losses['val']:.4f}; ln(vocab) = ln {tok.vocab_size} = {uniform:.4f}")
    print(f"    every weight starts N(0, 0.02), so the logits are near 0 and softmax spreads "
          f"its probability\n    about evenly: p ≈ 1/{tok.vocab_size} for every character, "
          f"so cross-entropy ≈ -ln(1/V) = ln V. The logits'\n    spread (std σ = {sigma:.3f}) "
          f"adds about σ²/2: ln V + σ²/2 = {uniform + sigma ** 2 / 2:.4f}. Far above would "
          f"mean a\n    confidently wrong start (too large an initialisation); training "
          f"brings it down from here")
    assert abs(losses["val"] - uniform) < 0.25
    return losses


def train(model, cfg, train_ids, val_ids, first):
    print(f"\n(4) training, the trainer's recipe (preset 'baby'): AdamW lr {cfg.lr:g} "
          f"(weight decay {cfg.weight_decay:g} on\n    matrices only), warmup "
          f"{cfg.warmup_iters} steps then cosine to {cfg.min_lr:g} at step {cfg.max_iters}, "
          f"gradients clipped\n    to norm {cfg.grad_clip:g}, batches of "
          f"{cfg.batch_size}x{cfg.block_size} tokens; CPU, {mg.parallel.describe()}")
    optimizer = model.configure_optimizers(cfg.weight_decay, cfg.lr, (cfg.beta1, cfg.beta2))
    rng = np.random.default_rng(cfg.seed)
    steps, evals = [], [(0, first["train"], first["val"])]
    start = time.perf_counter()
    print(f"    step {0:5d}: train {first['train']:.4f}  val {first['val']:.4f}")
    model.train()
    for it in range(cfg.max_iters):
        lr = cfg.lr_at(it)
        optim.set_lr(optimizer, lr)
        optimizer.zero_grad()
        x, y = get_batch(train_ids, cfg.batch_size, cfg.block_size, rng)
        _, loss = model(x, y)           # mean cross-entropy of every next character
        loss.backward()
        optim.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        optimizer.step()
        steps.append(loss.item())
        if (it + 1) % cfg.eval_interval == 0 or it + 1 == cfg.max_iters:
            ev = estimate_loss(model, train_ids, val_ids, cfg, it + 1)
            evals.append((it + 1, ev["train"], ev["val"]))
            print(f"    step {it + 1:5d}: train {ev['train']:.4f}  val {ev['val']:.4f}  "
                  f"lr {lr:.2e}  {time.perf_counter() - start:5.1f} s")
    drop = first["val"] - evals[-1][2]
    print(f"    val loss {first['val']:.3f} -> {evals[-1][2]:.3f} in {cfg.max_iters} steps "
          f"({time.perf_counter() - start:.1f} s)")
    assert drop > 0, "the loss did not go down"
    return steps, evals


def timed_stream(model, idx, n, seed, temperature, use_cache):
    """The n sampled ids and the seconds from the start to each step, from GPT.stream."""
    mg.manual_seed(seed)
    ids, times, start = [], [], time.perf_counter()
    for step in model.stream(idx, n, temperature=temperature, use_cache=use_cache):
        ids.append(int(step[0, 0]))
        times.append(time.perf_counter() - start)
    return ids, times


def both_ways(model, idx, n, seed, temperature, repeats=2):
    """n tokens sampled after idx with the KV cache and without, from the same seed: the ids
    and, for each way, the seconds to each step (the faster of `repeats` runs: other work
    on the machine only ever adds time). The ids must be the same every time."""
    for use_cache in (True, False):          # untimed warm-up: first calls allocate
        model.generate(idx, 2, use_cache=use_cache)
    runs = {True: [], False: []}
    for _ in range(repeats):
        for use_cache in (True, False):
            runs[use_cache].append(timed_stream(model, idx, n, seed, temperature, use_cache))
    ids = runs[True][0][0]
    assert all(r[0] == ids for way in runs.values() for r in way), \
        "the KV cache changed the sampled tokens"
    fastest = [min((r[1] for r in runs[way]), key=lambda t: t[-1]) for way in (True, False)]
    return ids, fastest[0], fastest[1]


def generation(model, cfg, tok, prompt, n, seed, temperature):
    P, block = len(prompt), cfg.block_size
    print(f"\n(5) generation: {n} characters after the prompt {prompt!r}, each sampled from "
          f"softmax(logits/{temperature:g}),\n    with the KV cache and without, both from "
          f"seed {seed} (each way timed twice, the faster kept)")
    idx = mg.tensor([tok.encode(prompt)])
    ids, t_cache, t_plain = both_ways(model, idx, n, seed, temperature)
    print(f"    the same {n} tokens with the cache and without: True")
    k = max(0, min(n, block - P + 1))       # steps whose context fits block_size
    if k:
        a, b = t_cache[k - 1], t_plain[k - 1]
        print(f"    steps 1-{k} (the context fits block_size {block}): with the cache "
              f"{a:.3f} s, without {b:.3f} s\n    (without/with {b / a:.1f}): with it each "
              f"step runs the one new position against the stored keys\n    and values, "
              f"without it the whole context again")
    if n > k:
        a = t_cache[-1] - (t_cache[k - 1] if k else 0.0)
        b = t_plain[-1] - (t_plain[k - 1] if k else 0.0)
        print(f"    steps {k + 1}-{n} (past block_size the window slides and every token "
              f"changes position,\n    so both recompute the last {block}): with the cache "
              f"{a:.3f} s, without {b:.3f} s")
    longer_context(model.config, idx, seed, temperature)
    print("    the sample:\n")
    print(prompt + tok.decode(ids))
    return ids


def longer_context(config, idx, seed, temperature):
    """What the cache saves grows with the context: without it step s recomputes s
    positions, with it one. The same shape at 4x the block_size, untrained."""
    wide = GPTConfig(**{**config.to_dict(), "block_size": 4 * config.block_size})
    mg.manual_seed(seed)
    n = wide.block_size - idx.shape[1]
    _, a, b = both_ways(GPT(wide), idx, n, seed, temperature)
    ratio = b[-1] / a[-1]
    print(f"    the same shape at block_size {wide.block_size} (untrained: only the time "
          f"counts), {n} tokens, the same\n    with and without: with the cache {a[-1]:.3f} s, "
          f"without {b[-1]:.3f} s (without/with {ratio:.1f})\n    " + (
              "without the cache step s recomputes all s positions, with it one: the saving "
              "grows with the context" if ratio > 1.5 else
              "a model this small spends a step mostly on the fixed cost of its ops: the "
              "saving does not show yet"))


def plot(steps, evals, vocab_size, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install -e \".[plot]\")")
        return None
    fig, ax = plt.subplots(figsize=(8, 4.5))
    ax.plot(range(1, len(steps) + 1), steps, lw=0.6, alpha=0.5, label="train (each step's batch)")
    its = [e[0] for e in evals]
    ax.plot(its, [e[1] for e in evals], "o-", label="train (estimate)")
    ax.plot(its, [e[2] for e in evals], "s-", label="val (estimate)")
    ax.axhline(math.log(vocab_size), color="gray", ls="--", lw=0.8,
               label=f"ln {vocab_size} (uniform guess)")
    ax.set_xlabel("step")
    ax.set_ylabel("cross-entropy (nats per character)")
    ax.set_title("GPT, character language model (2.2.3.4 masked attention)")
    ax.legend()
    return save_figure(fig, path, "the loss curve")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", default=None, help="a UTF-8 text file (default: Tiny "
                   "Shakespeare, as the trainer finds it: $MINITRANSFORMER_DATA, the cache, "
                   "a download)")
    p.add_argument("--steps", type=positive_int, default=1000, help="training steps")
    p.add_argument("--eval-interval", type=positive_int, default=100,
                   help="estimate train/val loss every N steps")
    p.add_argument("--tokens", type=positive_int, default=200, help="characters to sample")
    p.add_argument("--prompt", default=None, help="text to continue (default: the first "
                   "line of the data, up to 20 characters)")
    p.add_argument("--temperature", type=positive_float, default=0.8,
                   help="sampling temperature")
    p.add_argument("--seed", type=non_negative_int, default=1337, help="seeds the weights, "
                   "the batches and the sampling (the trainer's default)")
    p.add_argument("--quick", action="store_true", help="a tiny model, 20 steps (smoke test)")
    p.add_argument("--out", default="out", help="folder for the PNG")
    p.add_argument("--no-plot", action="store_true", help="do not save the PNG")
    args = p.parse_args(argv)
    small = dict(QUICK, max_iters=20, eval_interval=10) if args.quick else \
        dict(max_iters=args.steps, eval_interval=args.eval_interval)
    cfg = TrainConfig.from_preset("baby", seed=args.seed, **small)
    tokens = 40 if args.quick else args.tokens
    print("Demo 08 — article 2.2.3.4 掩码注意力机制 (masked attention) and 2.2.4.2 解码器结构 "
          "(the decoder): GPT,\n          a decoder-only character language model")
    print("  2.2.3.4: masked attention \"特别适用于生成式模型（如GPT）\" — it suits generative "
          "models like GPT")
    start = time.perf_counter()
    try:
        text, tok, train_ids, val_ids, x = data(cfg, args.data)
    except DataError as e:
        p.exit(1, f"{p.prog}: error: {e}\n")
    prompt = args.prompt if args.prompt is not None else text.split("\n")[0][:20] or text[0]
    if not 0 < len(prompt) < cfg.block_size:
        p.error(f"--prompt must hold 1 to {cfg.block_size - 1} characters (the model's "
                f"context is block_size {cfg.block_size}), got {len(prompt)}")
    try:
        tok.encode(prompt)
    except UnknownCharacterError as e:
        p.error(f"--prompt: {e}")
    model, logits = model_and_mask(cfg, tok, x)
    first = initial_loss(model, cfg, tok, train_ids, val_ids, logits)
    steps, evals = train(model, cfg, train_ids, val_ids, first)
    sample = generation(model, cfg, tok, prompt, tokens, args.seed,
                        args.temperature)
    print(f"\nthe whole demo: {time.perf_counter() - start:.1f} s")
    if not args.no_plot:
        plot(steps, evals, tok.vocab_size, os.path.join(args.out, "08_gpt_loss.png"))
    return dict(evals=evals, sample=sample)


if __name__ == "__main__":
    main()
