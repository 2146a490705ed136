"""The baby recipe's final validation loss over several seeds: minigrad's trainer against the
same recipe in PyTorch, written as nanoGPT's train.py runs it (its initialisation, batches
from torch.randint, AdamW, warmup + cosine schedule, clipping at 1.0, the exact erf GELU).

Why: nanoGPT's README reports val loss 1.88 for this run, one 20-batch estimate of one seed.
Such an estimate moves by ~0.015 from batch draw to batch draw, and the seed moves the
trained model too; this script shows where each framework's runs land, on the trainer's own
20-batch estimate and on a fixed set of many validation batches (the same for all runs).

    python benchmarks/recipe_seeds.py --seeds 1337 1 2 --data ../shared/data/tinyshakespeare.txt

PyTorch is optional (its rows are skipped without it). Each run takes a minute or two on 2
cores.
"""
import argparse
import math
import os
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np                                   # noqa: E402

import minigrad as mg                                # noqa: E402
from minitransformer.checkpointing import load_checkpoint   # noqa: E402
from minitransformer.data import get_batch, load_text, train_val_split  # noqa: E402
from minitransformer.tokenizer import CharTokenizer  # noqa: E402
from minitransformer.train import TrainConfig, train  # noqa: E402


def fixed_val_batches(val_ids, cfg, n):
    """n validation batches drawn once, the same for every run."""
    rng = np.random.default_rng(12345)
    return [get_batch(val_ids, cfg.batch_size, cfg.block_size, rng) for _ in range(n)]


def minigrad_run(seed, data, batches, max_iters):
    cfg = TrainConfig.from_preset("baby", seed=seed, data=str(data), plot=False, progress=False,
                                  max_iters=max_iters)
    with tempfile.TemporaryDirectory() as out:
        cfg.out = out
        start = time.perf_counter()
        result = train(cfg, log=lambda *a: None)
        wall = time.perf_counter() - start
        model, _, _ = load_checkpoint(result.checkpoint)
    model.eval()
    with mg.no_grad():
        losses = [model(x, y)[1].item() for x, y in batches]
    return result.history[-1]["val_loss"], float(np.mean(losses)), wall


def torch_run(seed, train_ids, val_ids, vocab_size, batches, max_iters):
    import torch
    from torch_gpt import TorchGPT
    from minitransformer.gpt import GPTConfig
    torch.set_num_threads(os.cpu_count() or 1)
    cfg = TrainConfig.from_preset("baby", max_iters=max_iters)
    torch.manual_seed(seed)
    gcfg = GPTConfig(vocab_size=vocab_size, block_size=cfg.block_size, n_layer=cfg.n_layer,
                     n_head=cfg.n_head, n_embd=cfg.n_embd, dropout=cfg.dropout, bias=cfg.bias)
    model = TorchGPT(gcfg, approximate="none")
    for name, p in model.named_parameters():          # nanoGPT's _init_weights
        if name.endswith("c_proj.weight"):
            torch.nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * cfg.n_layer))
        elif p.dim() >= 2:
            torch.nn.init.normal_(p, 0.0, 0.02)
        elif name.endswith("bias"):
            torch.nn.init.zeros_(p)
    decay = [p for p in model.parameters() if p.dim() >= 2]
    rest = [p for p in model.parameters() if p.dim() < 2]
    opt = torch.optim.AdamW([{"params": decay, "weight_decay": cfg.weight_decay},
                             {"params": rest, "weight_decay": 0.0}],
                            lr=cfg.lr, betas=(cfg.beta1, cfg.beta2))
    train_data = torch.from_numpy(train_ids.astype(np.int64))
    val_data = torch.from_numpy(val_ids.astype(np.int64))

    def batch(data):                                  # nanoGPT's get_batch
        ix = torch.randint(len(data) - cfg.block_size, (cfg.batch_size,))
        return (torch.stack([data[i:i + cfg.block_size] for i in ix]),
                torch.stack([data[i + 1:i + 1 + cfg.block_size] for i in ix]))

    def estimate(data):
        model.eval()
        with torch.no_grad():
            loss = float(np.mean([model(*batch(data))[1].item() for _ in range(cfg.eval_iters)]))
        model.train()
        return loss

    start = time.perf_counter()
    for it in range(cfg.max_iters + 1):
        if it % cfg.eval_interval == 0 or it == cfg.max_iters:
            estimate(train_data)            # as nanoGPT: the evaluations draw from the same
            val = estimate(val_data)        # generator as the training batches
        if it == cfg.max_iters:
            break
        for g in opt.param_groups:
            g["lr"] = cfg.lr_at(it)
        _, loss = model(*batch(train_data))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), cfg.grad_clip)
        opt.step()
    wall = time.perf_counter() - start
    model.eval()
    with torch.no_grad():
        losses = [model(torch.from_numpy(x.numpy()), torch.from_numpy(y.numpy()))[1].item()
                  for x, y in batches]
    return val, float(np.mean(losses)), wall


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seeds", type=int, nargs="+", default=[1337, 1, 2])
    ap.add_argument("--data", default=None, help="the corpus (default: Tiny Shakespeare)")
    ap.add_argument("--val-batches", type=int, default=500)
    ap.add_argument("--max-iters", type=int, default=2000, help="fewer for a quick try")
    ap.add_argument("--skip-torch", action="store_true")
    args = ap.parse_args()
    mg.keep_freed_host_memory()
    text, path = load_text(args.data)
    tok = CharTokenizer.from_text(text)
    train_ids, val_ids = train_val_split(tok.encode(text))
    cfg = TrainConfig.from_preset("baby")
    batches = fixed_val_batches(val_ids, cfg, args.val_batches)
    try:
        import torch  # noqa: F401
        frameworks = ["minigrad"] + ([] if args.skip_torch else ["torch"])
    except ImportError:
        frameworks = ["minigrad"]
    print(f"baby recipe on {path}: final val loss, the trainer's {cfg.eval_iters}-batch "
          f"estimate and over {args.val_batches} fixed batches")
    rows = {f: [] for f in frameworks}
    for seed in args.seeds:
        for f in frameworks:
            if f == "minigrad":
                est, fixed, wall = minigrad_run(seed, path, batches, args.max_iters)
            else:
                est, fixed, wall = torch_run(seed, train_ids, val_ids, tok.vocab_size, batches,
                                             args.max_iters)
            rows[f].append((est, fixed))
            print(f"  seed {seed:5d} {f:8s}  estimate {est:.4f}  fixed {fixed:.4f}  "
                  f"({wall:.0f} s)", flush=True)
    for f, r in rows.items():
        est, fixed = np.array(r).T
        print(f"{f:8s} mean over {len(r)} seeds: estimate {est.mean():.4f} "
              f"(min {est.min():.4f}), fixed {fixed.mean():.4f} ± {fixed.std():.4f}")


if __name__ == "__main__":
    main()
