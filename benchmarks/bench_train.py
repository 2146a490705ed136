"""Time GPT training steps: minigrad's GPT against the same architecture in PyTorch (when
installed), on the same weights and batches, interleaved in one run.

    python benchmarks/bench_train.py --preset baby --steps 20
    python benchmarks/bench_train.py --preset small --steps 3 --device cuda

Prints ms/step, tokens/s, peak memory (each framework measured alone in a child process),
the minigrad/PyTorch ratios, and model-FLOPs utilisation against a float32 GEMM peak that
it measures on this machine first.
"""
import argparse
import json
import os
import resource
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from minitransformer.train import PRESETS  # noqa: E402  (model and batch of each preset)
VOCAB = 65  # Tiny Shakespeare's characters


def gemm_peak(device, n=2048, reps=5):
    """Float32 GEMM GFLOP/s of the array library itself: the ceiling for MFU."""
    import minigrad as mg
    a, b = mg.randn(n, n, device=device).data, mg.randn(n, n, device=device).data
    xp = mg.backend.get(device).xp
    xp.matmul(a, b)
    best = float("inf")
    for _ in range(reps):
        _sync(device)
        t = time.perf_counter()
        xp.matmul(a, b)
        _sync(device)
        best = min(best, time.perf_counter() - t)
    return 2 * n ** 3 / best / 1e9


def _sync(device):
    if device == "cuda":
        import cupy
        cupy.cuda.Device().synchronize()


class MinigradRun:
    def __init__(self, cfg, args):
        import minigrad as mg
        from minigrad import optim
        from minitransformer.gpt import GPT
        self.mg, self.device = mg, args.device
        mg.manual_seed(args.seed)
        self.model = GPT(cfg).to(args.device)
        self.model.train()
        self.opt = self.model.configure_optimizers(weight_decay=0.1, learning_rate=1e-3,
                                                   betas=(0.9, 0.99)) \
            if hasattr(self.model, "configure_optimizers") else \
            optim.AdamW(self.model.parameters(), lr=1e-3, betas=(0.9, 0.99), weight_decay=0.1)
        self.n_params = sum(p.numel() for p in self.model.parameters())

    def weights(self):
        return {k: v.numpy() for k, v in self.model.state_dict().items()}

    def step(self, x, y):
        mg = self.mg
        xb, yb = mg.tensor(x, device=self.device), mg.tensor(y, device=self.device)
        _, loss = self.model(xb, yb)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        mg.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        _sync(self.device)
        return loss.item()


class TorchRun:
    def __init__(self, cfg, args, weights):
        import torch
        from torch_gpt import TorchGPT, load_from
        self.torch = torch
        self.dev = "cuda" if args.device == "cuda" else "cpu"
        self.model = load_from(TorchGPT(cfg), weights).to(self.dev)
        decay = [p for p in self.model.parameters() if p.dim() >= 2]
        no_decay = [p for p in self.model.parameters() if p.dim() < 2]
        self.opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                      {"params": no_decay, "weight_decay": 0.0}],
                                     lr=1e-3, betas=(0.9, 0.99), foreach=True)

    def step(self, x, y):
        torch = self.torch
        xb, yb = torch.from_numpy(x).to(self.dev), torch.from_numpy(y).to(self.dev)
        _, loss = self.model(xb, yb)
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.opt.step()
        if self.dev == "cuda":
            torch.cuda.synchronize()
        return loss.item()


def make_config(args):
    from minitransformer.gpt import GPTConfig
    p = PRESETS[args.preset]
    return GPTConfig(vocab_size=VOCAB, block_size=p["block_size"], n_layer=p["n_layer"],
                     n_head=p["n_head"], n_embd=p["n_embd"], dropout=p["dropout"], bias=False)


def batches(args, n):
    import numpy as np
    rng = np.random.default_rng(args.seed)
    p = PRESETS[args.preset]
    shape = (p["batch_size"], p["block_size"])
    return [(rng.integers(0, VOCAB, shape), rng.integers(0, VOCAB, shape)) for _ in range(n)]


def peak_rss_mib():
    """This process's peak resident memory. Linux's VmHWM belongs to the address space, so
    unlike ru_maxrss it does not inherit the parent's peak across fork + exec."""
    try:
        with open("/proc/self/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def peak_memory_child(args):
    """Run warm-up + steps of one framework alone; print its peak memory as JSON."""
    cfg = make_config(args)
    data = batches(args, args.warmup + args.steps)
    run = MinigradRun(cfg, args)
    if args.child == "torch":
        run = TorchRun(cfg, args, run.weights())
    for x, y in data:
        run.step(x, y)
    out = {"rss_mib": peak_rss_mib()}
    if args.device == "cuda":
        if args.child == "torch":
            out["gpu_mib"] = run.torch.cuda.max_memory_allocated() / 2 ** 20
        else:
            import cupy
            out["gpu_mib"] = cupy.get_default_memory_pool().total_bytes() / 2 ** 20
    print(json.dumps(out))


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--preset", choices=PRESETS, default="baby")
    ap.add_argument("--steps", type=int, default=20)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--no-memory", action="store_true", help="skip the peak-memory children")
    ap.add_argument("--child", choices=["minigrad", "torch"], help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return peak_memory_child(args)

    cfg = make_config(args)
    p = PRESETS[args.preset]
    tokens = p["batch_size"] * p["block_size"]
    mgr = MinigradRun(cfg, args)
    try:
        tr = TorchRun(cfg, args, mgr.weights())
        import torch
        threads = torch.get_num_threads()
    except ImportError:
        tr, threads = None, None
    data = batches(args, args.warmup + args.steps)
    times = {"minigrad": [], "torch": []}
    losses = {"minigrad": [], "torch": []}
    for i, (x, y) in enumerate(data):  # interleaved: both see the same machine state
        for name, run in (("minigrad", mgr), ("torch", tr)):
            if run is None:
                continue
            t = time.perf_counter()
            losses[name].append(run.step(x, y))
            if i >= args.warmup:
                times[name].append(time.perf_counter() - t)

    from torch_gpt import flops_per_token
    n_params = mgr.n_params - cfg.block_size * cfg.n_embd  # nanoGPT excludes wpe
    peak = gemm_peak(args.device)
    print(f"preset {args.preset}: {mgr.n_params / 1e6:.2f}M params, {tokens} tokens/step, "
          f"device {args.device}, {os.cpu_count()} cores, torch threads {threads}")
    print(f"float32 GEMM peak (2048^3, {'CuPy' if args.device == 'cuda' else 'NumPy'}): "
          f"{peak:.0f} GFLOP/s")
    print(f"first losses  minigrad {losses['minigrad'][0]:.4f}  torch "
          f"{losses['torch'][0] if tr else float('nan'):.4f}  (same weights, same batch)")
    mem = {}
    if not args.no_memory:
        for name in ("minigrad", "torch") if tr else ("minigrad",):
            cmd = [sys.executable, __file__, "--child", name, "--preset", args.preset,
                   "--steps", str(args.steps), "--warmup", str(args.warmup),
                   "--device", args.device, "--seed", str(args.seed)]
            mem[name] = json.loads(subprocess.check_output(cmd).decode().strip().splitlines()[-1])
    rows = {}
    for name, ts in times.items():
        if not ts:
            continue
        ts = sorted(ts)
        ms = ts[len(ts) // 2] * 1e3
        tps = tokens / (ms / 1e3)
        mfu = flops_per_token(cfg, n_params) * tps / (peak * 1e9)
        rows[name] = (ms, tps, mfu)
        m = mem.get(name, {})
        extra = f", peak RSS {m['rss_mib']:.0f} MiB" if "rss_mib" in m else ""
        extra += f", peak GPU {m['gpu_mib']:.0f} MiB" if "gpu_mib" in m else ""
        print(f"{name:>9}: {ms:8.1f} ms/step (median of {len(ts)}), {tps:9.0f} tokens/s, "
              f"MFU {mfu * 100:5.1f}%{extra}")
    if "torch" in rows:
        print(f"ratio minigrad/torch: tokens/s {rows['minigrad'][1] / rows['torch'][1]:.2f}x", end="")
        if "rss_mib" in mem.get("torch", {}):
            print(f", peak RSS {mem['minigrad']['rss_mib'] / mem['torch']['rss_mib']:.2f}x", end="")
        print()


if __name__ == "__main__":
    main()
