"""Time GPT training steps: minigrad's GPT against the same architecture in PyTorch (when
installed), on the same weights and batches, interleaved in one run.

    python benchmarks/bench_train.py --preset baby --steps 20
    python benchmarks/bench_train.py --preset small --steps 3 --device cuda
    python benchmarks/bench_train.py --preset small --device cuda --matmul-precision highest
    python benchmarks/bench_train.py --preset small --device cuda --dtype float16

Each framework runs in its own worker process and the two take turns, a few steps each
(with a short pause between turns), so neither one's idle-spinning BLAS/OpenMP threads slow
the other; the median step time is reported. Prints ms/step, tokens/s, each worker's peak memory, the minigrad/PyTorch ratios, and
model-FLOPs utilisation against a float32 GEMM peak measured on this machine. On a GPU both
sides use the same float32 matmul precision (default "high": TensorFloat-32 tensor cores,
as the trainer and nanoGPT; "highest": float32), and the peak is measured with it.

--dtype float16: mixed precision, the same recipe on both sides, as the trainer's --dtype
float16 (minitransformer/precision.py): the forward and loss under autocast (mg.autocast /
torch.autocast, dtype float16), then a GradScaler's scale, backward, unscale_, clip, step,
update (mg.amp.GradScaler / torch.amp.GradScaler). On a GPU the MFU is then against a
float16 GEMM peak; on the CPU against float32's (minigrad runs float16 products in float32
there, NumPy having no float16 BLAS), where float16 is slower than float32 on both sides.
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
from minitransformer.argtypes import positive_int, non_negative_int  # noqa: E402
VOCAB = 65  # Tiny Shakespeare's characters


def gemm_peak(device, n=2048, reps=5, dtype="float32"):
    """GEMM GFLOP/s of the array library itself in `dtype`: the ceiling for MFU."""
    import minigrad as mg
    a, b = (mg.randn(n, n, device=device).to(dtype=dtype)._data for _ in range(2))
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


def machine():
    """The CPU model and the BLAS libraries loaded, for the record: the same code's ratio to
    PyTorch moved from 0.93x to 1.1x between two 2-core machines (OpenBLAS against MKL, by
    CPU)."""
    import platform
    cpu = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            cpu = next(line.split(":", 1)[1].strip() for line in f
                       if line.startswith("model name"))
    except (OSError, StopIteration):
        pass
    try:
        from threadpoolctl import threadpool_info
        blas = [f"{i['internal_api']} {i['version']} ({i.get('architecture', '?')} kernels)"
                for i in threadpool_info() if i["user_api"] == "blas"]
    except ImportError:
        blas = []
    return f"{cpu}; BLAS loaded (NumPy's, SciPy's): {', '.join(blas) or 'unknown'}"


def _sync(device):
    if device == "cuda":
        import cupy
        cupy.cuda.Device().synchronize()


class MinigradRun:
    def __init__(self, cfg, args):
        import minigrad as mg
        from minitransformer.gpt import GPT
        from minitransformer.precision import ScaledLoss, autocast, grad_scaler
        self.mg, self.device = mg, args.device
        # float16 as the trainer's (train.py's _train_step); float32: a disabled scaler,
        # whose calls are no-ops, and no autocast
        self.autocast = lambda: autocast(args.dtype, args.device)
        self.scaler = grad_scaler(args.dtype, args.device)
        mg.set_float32_matmul_precision(args.matmul_precision)
        mg.manual_seed(args.seed)
        self.model = GPT(cfg).to(args.device)
        self.model.train()
        # the trainer's optimiser: AdamW, weight decay on >= 2-D weights only
        self.opt = self.model.configure_optimizers(weight_decay=0.1, learning_rate=1e-3,
                                                   betas=(0.9, 0.99))
        # the trainer's split of each batch over processes (TrainConfig.processes_used)
        from minigrad.data_parallel import ProcessDataParallel
        from minitransformer.train_config import TrainConfig
        n = TrainConfig.from_preset(args.preset, device=args.device,
                                    processes=args.processes).processes_used()
        loss_fn = ScaledLoss(args.device) if self.scaler.is_enabled() else \
            (lambda m, x, y: m(x, y)[1])
        self.dp = ProcessDataParallel(self.model, loss_fn, n, optimizer=self.opt) \
            if n > 1 else None

    def step(self, x, y):
        mg = self.mg
        xb, yb = mg.tensor(x, device=self.device), mg.tensor(y, device=self.device)
        self.opt.zero_grad(set_to_none=True)
        scaler = self.scaler
        if self.dp is not None and not scaler.is_enabled():
            # the trainer's float32 step: clip and update split over the processes too
            loss = self.dp.train_step(xb, yb, max_norm=1.0)
        else:
            if self.dp is not None:      # each part's loss scaled (precision.ScaledLoss)
                self.dp.loss_fn.value = scaler.get_scale()
                loss = self.dp.forward_backward(xb, yb) / scaler.get_scale()
            else:
                with self.autocast():
                    _, loss = self.model(xb, yb)
                scaler.scale(loss).backward()
            scaler.unscale_(self.opt)    # the clipping sees the true gradients
            mg.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
            scaler.step(self.opt)
            scaler.update()
        _sync(self.device)
        return float(loss)

    def pids(self):
        return [] if self.dp is None else self.dp.pids


class TorchRun:
    def __init__(self, cfg, args, weights):
        import torch
        from torch_gpt import TorchGPT, load_from
        self.torch = torch
        self.dev = "cuda" if args.device == "cuda" else "cpu"
        if self.dev == "cuda":     # on the CPU, "medium" may let oneDNN use bfloat16
            torch.set_float32_matmul_precision(args.matmul_precision)
        self.model = load_from(TorchGPT(cfg), weights).to(self.dev)
        decay = [p for p in self.model.parameters() if p.dim() >= 2]
        no_decay = [p for p in self.model.parameters() if p.dim() < 2]
        self.opt = torch.optim.AdamW([{"params": decay, "weight_decay": 0.1},
                                      {"params": no_decay, "weight_decay": 0.0}],
                                     lr=1e-3, betas=(0.9, 0.99), foreach=True)
        # minigrad's recipe for float16 (disabled, both no-ops, for float32)
        half = args.dtype == "float16"
        self.autocast = lambda: torch.autocast(self.dev, dtype=torch.float16, enabled=half)
        self.scaler = torch.amp.GradScaler(self.dev, enabled=half)

    def step(self, x, y):
        torch = self.torch
        xb, yb = torch.from_numpy(x).to(self.dev), torch.from_numpy(y).to(self.dev)
        with self.autocast():
            _, loss = self.model(xb, yb)
        self.opt.zero_grad(set_to_none=True)
        self.scaler.scale(loss).backward()
        self.scaler.unscale_(self.opt)
        torch.nn.utils.clip_grad_norm_(self.model.parameters(), 1.0)
        self.scaler.step(self.opt)
        self.scaler.update()
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


def peak_rss_mib(pids=()):
    """Peak resident memory of this process plus that of its data-parallel workers (`pids`;
    pages they share are counted in each, so the sum is an upper bound). Linux's VmHWM
    belongs to the address space, so unlike ru_maxrss it does not inherit the parent's peak
    across fork + exec."""
    if pids:
        return peak_rss_mib() + sum(_vm_hwm_mib(pid) or 0 for pid in pids)
    return _vm_hwm_mib("self") or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def _vm_hwm_mib(pid):
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def worker(args):
    """One framework in its own process: build the model (PyTorch copies minigrad's initial
    weights from --weights), then answer "step I" with the step's time and loss, and "done"
    with the peak memory. Each framework's threads (OpenBLAS, OpenMP) spin for a while after
    work; in separate processes that take turns, neither slows the other down."""
    import minigrad as mg
    mg.keep_freed_host_memory()  # as the `minitransformer` CLI does; the same for PyTorch
    cfg = make_config(args)
    data = batches(args, args.warmup + args.steps)
    if args.child == "minigrad":
        run = MinigradRun(cfg, args)
        mg.save(run.model.state_dict(), args.weights)
    else:
        run = TorchRun(cfg, args, {k: v.numpy() for k, v in mg.load(args.weights).items()})
    print("ready", flush=True)
    for line in sys.stdin:
        cmd = line.split()
        if cmd[0] == "step":
            x, y = data[int(cmd[1])]
            t = time.perf_counter()
            loss = run.step(x, y)
            print(json.dumps({"s": time.perf_counter() - t, "loss": loss}), flush=True)
        else:
            out = {"rss_mib": peak_rss_mib(run.pids() if hasattr(run, "pids") else ())}
            # the GPU memory each framework's allocator holds at its peak: CuPy's pool keeps
            # every block it ever took (until told to free them), so what it holds now is
            # its peak; PyTorch's caching allocator counts the same as max reserved (its
            # max allocated would leave out the cached free blocks CuPy's figure includes)
            if args.device == "cuda" and args.child == "torch":
                out["gpu_mib"] = run.torch.cuda.max_memory_reserved() / 2 ** 20
            elif args.device == "cuda":
                import cupy
                out["gpu_mib"] = cupy.get_default_memory_pool().total_bytes() / 2 ** 20
            print(json.dumps(out), flush=True)
            return


def start_worker(name, args, weights):
    cmd = [sys.executable, __file__, "--child", name, "--weights", weights,
           "--preset", args.preset, "--steps", str(args.steps), "--warmup", str(args.warmup),
           "--device", args.device, "--seed", str(args.seed), "--dtype", args.dtype,
           "--matmul-precision", args.matmul_precision] + \
        ([] if args.processes is None else ["--processes", str(args.processes)])
    p = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    if p.stdout.readline().strip() != "ready":
        raise SystemExit(f"the {name} worker failed to start")
    return p


def ask(p, line):
    p.stdin.write(line + "\n")
    p.stdin.flush()
    return json.loads(p.stdout.readline())


def _processes(args):
    from minitransformer.train_config import TrainConfig
    return TrainConfig.from_preset(args.preset, device=args.device,
                                   processes=args.processes).processes_used()


def flops_per_token(cfg, n_params):
    """nanoGPT's estimate: 6N for the weights plus 12·L·T·C for attention (fwd + bwd)."""
    return 6 * n_params + 12 * cfg.n_layer * cfg.block_size * cfg.n_embd


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", choices=PRESETS, default="baby")
    ap.add_argument("--steps", type=positive_int, default=20)
    ap.add_argument("--warmup", type=non_negative_int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=non_negative_int, default=0)
    ap.add_argument("--matmul-precision", choices=["highest", "high", "medium"], default="high",
                    help="float32 GEMMs on a GPU: high/medium allow TF32 (default: high)")
    ap.add_argument("--dtype", choices=["float32", "float16"], default="float32",
                    help="float16: mixed precision (autocast + GradScaler) on both sides, "
                         "as the trainer's --dtype float16 (default: float32)")
    ap.add_argument("--processes", type=positive_int, default=None,
                    help="minigrad's processes per batch, as the trainer's --processes "
                         "(default: the trainer's, one per core)")
    ap.add_argument("--block", type=positive_int, default=5, help="steps per turn")
    ap.add_argument("--peak-size", type=positive_int, default=2048,
                    help="side of the square GEMM that measures the peak (default 2048)")
    ap.add_argument("--pause", type=float, default=0.3,
                    help="seconds between turns, so the other side's threads go idle")
    ap.add_argument("--child", choices=["minigrad", "torch"], help=argparse.SUPPRESS)
    ap.add_argument("--weights", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return worker(args)

    import importlib.util
    import tempfile
    # only whether the comparison can run: its worker loads PyTorch (seconds) itself
    have_torch = importlib.util.find_spec("torch") is not None
    cfg = make_config(args)
    p = PRESETS[args.preset]
    tokens = p["batch_size"] * p["block_size"]
    # The GEMM peak is best-of: once before the workers start and once after they end. One
    # reading alone, taken while a worker still spun or freed its memory, came out at half.
    import minigrad as mg
    mg.set_float32_matmul_precision(args.matmul_precision)
    # float16 products run as float16 GEMMs on a GPU, as float32 ones on the CPU (matmul.py)
    peak_dtype = "float16" if args.dtype == "float16" and args.device != "cpu" else "float32"
    peak = gemm_peak(args.device, n=args.peak_size, dtype=peak_dtype)
    with tempfile.TemporaryDirectory() as tmp:
        weights = os.path.join(tmp, "init.safetensors")
        workers = {"minigrad": start_worker("minigrad", args, weights)}
        if have_torch:
            workers["torch"] = start_worker("torch", args, weights)
        times = {name: [] for name in workers}
        turns = {name: [] for name in workers}     # each turn's timed steps, side by side
        losses = {name: [] for name in workers}
        total = args.warmup + args.steps
        for start in range(0, total, args.block):  # interleaved: turns of `block` steps
            for name, w in workers.items():
                time.sleep(args.pause)
                turn = []
                for i in range(start, min(start + args.block, total)):
                    r = ask(w, f"step {i}")
                    losses[name].append(r["loss"])
                    if i >= args.warmup:
                        turn.append(r["s"])
                times[name] += turn
                if turn:
                    turns[name].append(_median(turn))
        mem = {name: ask(w, "done") for name, w in workers.items()}

    from minitransformer.gpt import GPT
    mg.manual_seed(args.seed)
    n_params = sum(q.numel() for q in GPT(cfg).parameters())
    time.sleep(args.pause)
    peak = max(peak, gemm_peak(args.device, n=args.peak_size, dtype=peak_dtype))
    print(f"preset {args.preset}: {n_params / 1e6:.2f}M params, {tokens} tokens/step, "
          f"device {args.device}, dtype {args.dtype}"
          + (" (autocast + GradScaler on both sides)" if args.dtype == "float16" else "")
          + f", {os.cpu_count()} cores; minigrad in {_processes(args)} process(es) "
          f"(--processes)")
    print(f"machine: {machine()}")
    lib = f"CuPy, matmul precision {args.matmul_precision}" if args.device == "cuda" else "NumPy"
    print(f"{peak_dtype} GEMM peak ({args.peak_size}^3, {lib}): {peak:.0f} GFLOP/s")
    print("losses, step by step (same weights, same batches): " + "; ".join(
        f"{name} " + " ".join(f"{v:.4f}" for v in losses[name][:4]) for name in losses))
    rows = {}
    for name, ts in times.items():
        ms = _median(ts) * 1e3
        tps = tokens / (ms / 1e3)
        mfu = flops_per_token(cfg, n_params - cfg.block_size * cfg.n_embd) * tps / (peak * 1e9)
        rows[name] = (ms, tps)
        m = mem[name]
        extra = f", peak GPU {m['gpu_mib']:.0f} MiB" if "gpu_mib" in m else ""
        print(f"{name:>9}: {ms:8.1f} ms/step (median of {len(ts)}), {tps:9.0f} tokens/s, "
              f"MFU {mfu * 100:5.1f}%, peak RSS {m['rss_mib']:.0f} MiB{extra}")
    if "torch" in rows:
        print(f"ratio minigrad/torch: tokens/s {rows['minigrad'][1] / rows['torch'][1]:.2f}x, "
              f"peak RSS {mem['minigrad']['rss_mib'] / mem['torch']['rss_mib']:.2f}x")
        # the machine's speed drifts between turns; each pair of adjacent turns compares
        # the two at one moment, so their spread says how far to trust the ratio above
        pairs = sorted(t / m for m, t in zip(turns["minigrad"], turns["torch"]))
        if len(pairs) > 1:
            print(f"tokens/s ratio turn by turn ({len(pairs)} pairs of adjacent turns): "
                  f"median {_median(pairs):.2f}x, range {pairs[0]:.2f}-{pairs[-1]:.2f}x")


def _median(values):
    values = sorted(values)
    return values[len(values) // 2]


if __name__ == "__main__":
    main()
