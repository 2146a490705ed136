"""KV-cache generation against re-running the whole context, on the same model and seed.

    python benchmarks/bench_generate.py                      # baby shape, block 512
    python benchmarks/bench_generate.py --ckpt out-baby      # a trained checkpoint

Each new token with the cache costs one position; without it, the whole context so far. The
speed-up grows with the number of tokens generated while the context fits the model's
block_size. Past block_size the window slides by one each step, every cached key changes
position (learned absolute positions), and both paths must recompute the window: then the
cache cannot help, and this script shows that too (use --block-size 64, as the baby preset).
"""
import argparse
import time

import minigrad as mg
from minitransformer.gpt import GPT, GPTConfig
from minitransformer.argtypes import positive_int, non_negative_int


def timed_generate(model, prompt, n, use_cache, seed):
    mg.manual_seed(seed)
    t = time.perf_counter()
    out = model.generate(prompt, n, temperature=1.0, top_k=None, use_cache=use_cache)
    return out, time.perf_counter() - t


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ckpt", help="a checkpoint directory from `minitransformer train`")
    ap.add_argument("--tokens", type=positive_int, default=500)
    ap.add_argument("--block-size", type=positive_int, default=512)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=non_negative_int, default=0)
    ap.add_argument("--repeat", type=positive_int, default=1, help="timed runs of each path (the "
                    "fastest counts), alternating")
    args = ap.parse_args()
    if args.ckpt:
        from minitransformer.train import load_checkpoint, CheckpointError
        try:
            model = load_checkpoint(args.ckpt, args.device)[0]
        except CheckpointError as e:
            ap.error(f"--ckpt: {e}")
    else:  # the baby preset's shape, with a context long enough for the whole sample
        mg.manual_seed(args.seed)
        model = GPT(GPTConfig(vocab_size=65, block_size=args.block_size, n_layer=4, n_head=4,
                              n_embd=128, dropout=0.0, bias=False)).to(args.device)
    prompt = mg.tensor([[0]], device=args.device)
    for use_cache in (True, False):   # warm-up: the first run of either path pays for
        timed_generate(model, prompt, 8, use_cache, args.seed)   # allocations, kernels
    t_fast = t_slow = float("inf")
    for _ in range(args.repeat):
        fast, t = timed_generate(model, prompt, args.tokens, True, args.seed)
        t_fast = min(t_fast, t)
        slow, t = timed_generate(model, prompt, args.tokens, False, args.seed)
        t_slow = min(t_slow, t)
    same = fast.tolist() == slow.tolist()
    cfg = model.config
    print(f"{args.tokens} tokens, block_size {cfg.block_size}, {cfg.n_layer} layers, "
          f"n_embd {cfg.n_embd}, device {args.device}")
    print(f"  KV cache : {t_fast:6.2f} s  ({args.tokens / t_fast:7.0f} tokens/s)")
    print(f"  no cache : {t_slow:6.2f} s  ({args.tokens / t_slow:7.0f} tokens/s)")
    print(f"  speed-up {t_slow / t_fast:.1f}x; same tokens: {same}")
    if not same:
        raise SystemExit("KV-cache and no-cache generation disagree")


if __name__ == "__main__":
    main()
