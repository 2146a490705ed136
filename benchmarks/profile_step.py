"""Where a GPT training step's time goes, op by op: mg.profiler's table for a preset's step
(one process, the batch whole), and with --torch PyTorch's profiler on the same model.

    python benchmarks/profile_step.py --preset baby --steps 10
    python benchmarks/profile_step.py --preset baby --steps 10 --torch --trace step.json
    python benchmarks/profile_step.py --preset small --steps 1 --batch-size 8 --device cuda

The step is the trainer's: forward, backward, gradient clipping, AdamW; each is a region of
its own in the table. Open the --trace file in ui.perfetto.dev to see one step's time line.
"""
import argparse
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from bench_train import VOCAB, make_config  # noqa: E402
from minitransformer.argtypes import non_negative_int, positive_int  # noqa: E402
from minitransformer.train import PRESETS  # noqa: E402


def batches(preset, batch_size, n, seed=0):
    import numpy as np
    rng = np.random.default_rng(seed)
    shape = (batch_size, PRESETS[preset]["block_size"])
    return [(rng.integers(0, VOCAB, shape), rng.integers(0, VOCAB, shape)) for _ in range(n)]


def minigrad_steps(cfg, data, args):
    import minigrad as mg
    from minigrad.profiler import profile, record_function
    from minitransformer.gpt import GPT
    mg.keep_freed_host_memory()          # as the trainer: no page faults on fresh buffers
    mg.manual_seed(0)
    model = GPT(cfg).to(args.device)
    opt = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-3, betas=(0.9, 0.99))

    def step(x, y):
        x, y = mg.tensor(x, device=args.device), mg.tensor(y, device=args.device)
        opt.zero_grad(set_to_none=True)
        with record_function("forward"):
            _, loss = model(x, y)
        with record_function("backward"):
            loss.backward()
        with record_function("clip_grad_norm_"):
            mg.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        return float(loss)

    for x, y in data[:args.warmup]:
        step(x, y)
    t = time.perf_counter()          # the same steps unprofiled, for the profiler's cost
    for x, y in data[args.warmup:]:
        step(x, y)
    plain = (time.perf_counter() - t) / args.steps
    t = time.perf_counter()
    with profile(record_shapes=args.shapes) as prof:
        for x, y in data[args.warmup:]:
            step(x, y)
    return prof, (time.perf_counter() - t) / args.steps, plain


def torch_table(cfg, data, args):
    import torch
    from torch_gpt import TorchGPT
    model = TorchGPT(cfg)
    opt = torch.optim.AdamW(model.parameters(), lr=1e-3, betas=(0.9, 0.99), foreach=True)

    def step(x, y):
        _, loss = model(torch.from_numpy(x), torch.from_numpy(y))
        opt.zero_grad(set_to_none=True)
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()

    for x, y in data[:args.warmup]:
        step(x, y)
    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
        for x, y in data[args.warmup:]:
            step(x, y)
    return prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=args.rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--preset", choices=sorted(PRESETS), default="baby")
    ap.add_argument("--steps", type=positive_int, default=10, help="steps profiled")
    ap.add_argument("--warmup", type=non_negative_int, default=3,
                    help="steps run first, unprofiled")
    ap.add_argument("--batch-size", type=positive_int, default=None,
                    help="sequences per step (default: the preset's)")
    ap.add_argument("--device", default="cpu", choices=["cpu", "cuda"])
    ap.add_argument("--rows", type=positive_int, default=25, help="rows of each table")
    ap.add_argument("--shapes", action="store_true", help="group the rows by input shapes too")
    ap.add_argument("--trace", default=None, help="write minigrad's events to this Chrome trace")
    ap.add_argument("--torch", action="store_true", help="also PyTorch's profiler table")
    args = ap.parse_args()
    cfg = make_config(args)
    batch = args.batch_size or PRESETS[args.preset]["batch_size"]
    data = batches(args.preset, batch, args.warmup + args.steps)
    print(f"preset {args.preset}, batch {batch}x{cfg.block_size}, device {args.device}, "
          f"{args.steps} steps profiled after {args.warmup}, one process")
    prof, per_step, plain = minigrad_steps(cfg, data, args)
    print(f"\nminigrad: {per_step * 1e3:.1f} ms/step while profiled, {plain * 1e3:.1f} "
          f"unprofiled (the same steps just before)")
    print(prof.key_averages(group_by_input_shape=args.shapes).table(
        sort_by="self_cpu_time_total", row_limit=args.rows))
    if args.trace:
        prof.export_chrome_trace(args.trace)
        print(f"trace written to {args.trace}")
    if args.torch:
        if args.device != "cpu":
            sys.exit("--torch compares on the CPU only")
        import torch
        torch.set_num_threads(1 if os.environ.get("OMP_NUM_THREADS") == "1"
                              else torch.get_num_threads())
        print(f"\nPyTorch {torch.__version__} ({torch.get_num_threads()} threads):")
        print(torch_table(cfg, data, args))


if __name__ == "__main__":
    main()
