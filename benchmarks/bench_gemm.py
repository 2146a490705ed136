"""The GPT step's matrix products alone: every Linear layer's three GEMMs (forward
X·Wᵀ, backward G·W and Gᵀ·X) at a preset's shapes, timed in NumPy (its BLAS, usually
OpenBLAS) and in PyTorch (MKL / oneDNN on x86), one thread each, as one data-parallel
process of the trainer runs them.

    python benchmarks/bench_gemm.py --preset baby

About half of a baby CPU step is these GEMMs, so how the two BLAS libraries compare at
these small shapes moves bench_train.py's ratio by CPU: the same code measured 0.91x
PyTorch's tokens/s on an Intel Xeon, where NumPy's GEMMs (OpenBLAS, SkylakeX kernels) took
1.18x PyTorch's time at the baby's shapes, and 1.1x on an AMD EPYC.
"""
import argparse
import os
import sys
import timeit

os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")   # before NumPy loads its BLAS
sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import numpy as np  # noqa: E402

from minitransformer.argtypes import positive_int  # noqa: E402
from minitransformer.train import PRESETS  # noqa: E402
VOCAB = 65


def shapes(preset, processes):
    """(name, rows, in, out, count) of every Linear in the preset's GPT, rows being one
    process's share of the batch's tokens."""
    p = PRESETS[preset]
    rows = p["batch_size"] * p["block_size"] // processes
    c, n = p["n_embd"], p["n_layer"]
    return [("attn.c_attn", rows, c, 3 * c, n), ("attn.c_proj", rows, c, c, n),
            ("mlp.c_fc", rows, c, 4 * c, n), ("mlp.c_proj", rows, 4 * c, c, n),
            ("lm_head", rows, c, VOCAB, 1)]


def best_us(fn, number):
    return min(timeit.repeat(fn, number=number, repeat=7)) / number * 1e6


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--preset", choices=PRESETS, default="baby")
    ap.add_argument("--processes", type=positive_int, default=2,
                    help="the trainer's processes: each multiplies its share of the rows")
    args = ap.parse_args()
    try:
        import torch
        torch.set_num_threads(1)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    total = {"numpy": 0.0, "torch": 0.0}
    print(f"preset {args.preset}, one thread, {args.processes} process(es)' share of the rows")
    print(f"{'layer':12s} {'rows x in -> out':>18s} | {'NumPy us':>9s} {'GFLOP/s':>7s} | "
          f"{'PyTorch us':>10s} {'GFLOP/s':>7s} | count")
    for name, rows, n_in, n_out, count in shapes(args.preset, args.processes):
        x, g = (rng.standard_normal(s, dtype=np.float32) for s in ((rows, n_in), (rows, n_out)))
        w = rng.standard_normal((n_out, n_in), dtype=np.float32)
        number = max(1, int(2e8 // (rows * n_in * n_out)))
        us = {"numpy": sum(best_us(f, number) for f in
                           (lambda: x @ w.T, lambda: g @ w, lambda: g.T @ x))}
        if torch is not None:
            tx, tw, tg = (torch.from_numpy(a) for a in (x, w, g))
            us["torch"] = sum(best_us(f, number) for f in
                              (lambda: tx @ tw.t(), lambda: tg @ tw, lambda: tg.t() @ tx))
        flops = 3 * 2 * rows * n_in * n_out
        row = f"{name:12s} {f'{rows} x {n_in} -> {n_out}':>18s} | {us['numpy']:9.0f} " \
              f"{flops / us['numpy'] / 1e3:7.0f} | "
        row += f"{us['torch']:10.0f} {flops / us['torch'] / 1e3:7.0f}" if "torch" in us \
            else f"{'-':>10s} {'-':>7s}"
        print(f"{row} | x{count}")
        for k in us:
            total[k] += us[k] * count
    line = f"all of a step's Linear GEMMs, one process: NumPy {total['numpy'] / 1e3:.2f} ms"
    if torch is not None:
        line += f", PyTorch {total['torch'] / 1e3:.2f} ms, NumPy/PyTorch time " \
                f"{total['numpy'] / total['torch']:.2f}x"
    print(line)


if __name__ == "__main__":
    main()
