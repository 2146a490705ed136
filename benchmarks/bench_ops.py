"""Per-op overhead on tiny tensors and throughput on large ones, forward and backward:
minigrad against NumPy itself (the floor: the same forward math on raw arrays, no graph) and
PyTorch when it is installed.

    python benchmarks/bench_ops.py            # all ops
    python benchmarks/bench_ops.py --ops add matmul --threads 2
"""
import argparse
import os
import time

from minitransformer.argtypes import (  # imports minigrad, before NumPy
    positive_float, positive_int)


def timeit(fn, min_time=0.3, warmup=3):
    """Median-free simple timer: repeat until min_time has passed, return seconds per call."""
    for _ in range(warmup):
        fn()
    n, start = 0, time.perf_counter()
    while True:
        fn()
        n += 1
        elapsed = time.perf_counter() - start
        if elapsed >= min_time:
            return elapsed / n


def cases(np, mg, F, torch):
    """name -> (shapes, minigrad fn, numpy forward fn, torch fn). Each fn takes its inputs."""
    tF = torch.nn.functional if torch else None
    from scipy.special import erf

    def sm(x):
        e = np.exp(x - x.max(-1, keepdims=True))
        return e / e.sum(-1, keepdims=True)

    def ln(x):
        mu = x.mean(-1, keepdims=True)
        return (x - mu) / np.sqrt(((x - mu) ** 2).mean(-1, keepdims=True) + 1e-5)

    def conv(x, w):    # 3×3, padding 1: the windows as a strided view, one tensordot
        win = np.lib.stride_tricks.sliding_window_view(
            np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1))), (3, 3), axis=(2, 3))
        return np.tensordot(win, w, ([1, 4, 5], [1, 2, 3])).transpose(0, 3, 1, 2)

    return {
        "add": (lambda n: [(n,), (n,)], lambda a, b: a + b, lambda a, b: a + b,
                lambda a, b: a + b),
        "mul": (lambda n: [(n,), (n,)], lambda a, b: a * b, lambda a, b: a * b,
                lambda a, b: a * b),
        "exp": (lambda n: [(n,)], lambda a: a.exp(), np.exp, lambda a: a.exp()),
        "gelu": (lambda n: [(n,)], lambda a: F.gelu(a), lambda a: 0.5 * a * (1 + erf(a / 2 ** .5)),
                 lambda a: tF.gelu(a)),
        "sum": (lambda n: [(n,)], lambda a: a.sum(), lambda a: a.sum(), lambda a: a.sum()),
        "softmax": (lambda n: [(max(n // 256, 1), min(n, 256))], lambda a: a.softmax(-1), sm,
                    lambda a: a.softmax(-1)),
        "layer_norm": (lambda n: [(max(n // 256, 1), min(n, 256))],
                       lambda a: F.layer_norm(a, (a.shape[-1],)), ln,
                       lambda a: tF.layer_norm(a, (a.shape[-1],))),
        "matmul": (lambda n: [(int(n ** .5),) * 2] * 2, lambda a, b: a @ b, lambda a, b: a @ b,
                   lambda a, b: a @ b),
        "conv2d": (lambda n: [(1, 16) + (max(int((n / 16) ** .5), 3),) * 2, (16, 16, 3, 3)],
                   lambda x, w: F.conv2d(x, w, padding=1), conv,
                   lambda x, w: tF.conv2d(x, w, padding=1)),
    }


def tiny_overhead(mg, torch, min_time=1.0):
    """The per-op cost of the machinery itself: c = a + b; c.backward() on 1-element
    tensors (the issue's target: at most 2x PyTorch's)."""
    a, b = mg.tensor([1.0], requires_grad=True), mg.tensor([2.0], requires_grad=True)

    def mg_add():
        (a + b).backward()
    t_mg = timeit(mg_add, min_time=min_time)
    line = f"tiny add forward+backward (1 element): minigrad {t_mg * 1e6:.1f} us"
    if torch is not None:
        ta, tb = (torch.tensor([v], requires_grad=True) for v in (1.0, 2.0))

        def t_add():
            (ta + tb).backward()
        t_t = timeit(t_add, min_time=min_time)
        line += f", PyTorch {t_t * 1e6:.1f} us, ratio {t_mg / t_t:.2f}x"
    print(line + "\n")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ops", nargs="*", default=None)
    ap.add_argument("--threads", type=positive_int, default=None,
                    help="threads for PyTorch and minigrad's fused ops (default: cores)")
    ap.add_argument("--large", type=positive_int, default=1 << 22,
                    help="elements in the large case")
    ap.add_argument("--min-time", type=positive_float, default=None,
                    help="seconds each figure is timed for (default: 1 for the tiny add, "
                         "0.3 for the others)")
    args = ap.parse_args()
    import minigrad as mg              # before NumPy: how BLAS threads idle (parallel.py)
    import minigrad.functional as F
    import numpy as np
    valid = cases(np, mg, F, None)     # the names, before PyTorch takes seconds to load
    unknown = sorted(set(args.ops or ()) - set(valid))
    if unknown:
        ap.error(f"--ops: unknown {', '.join(unknown)}; valid: {', '.join(valid)}")
    if args.threads:
        mg.set_num_threads(args.threads)
    try:
        import torch
        torch.set_num_threads(args.threads or os.cpu_count())
    except ImportError:
        torch = None
    table = cases(np, mg, F, torch)
    timed = {} if args.min_time is None else {"min_time": args.min_time}
    tiny_overhead(mg, torch, **timed)
    print(f"{'op':<11}{'size':>9} | {'numpy fwd':>10} {'mg fwd':>10} {'torch fwd':>10} | "
          f"{'mg f+b':>10} {'torch f+b':>10} {'mg/torch':>8}")
    for name in args.ops or table:
        shapes_of, mg_fn, np_fn, t_fn = table[name]
        for n in (1, args.large):
            shapes = shapes_of(n)
            arrays = [np.random.default_rng(0).standard_normal(s).astype(np.float32)
                      for s in shapes]
            mx = [mg.tensor(a, requires_grad=True) for a in arrays]
            time.sleep(0.3)  # let PyTorch's idle OpenMP threads stop spinning first
            t_np = timeit(lambda: np_fn(*arrays), **timed)
            with mg.no_grad():
                t_mg = timeit(lambda: mg_fn(*mx), **timed)

            def mg_fb():
                mg_fn(*mx).sum().backward()
            t_mg_fb = timeit(mg_fb, **timed)
            row = f"{name:<11}{arrays[0].size:>9} | {t_np * 1e6:>8.1f}us {t_mg * 1e6:>8.1f}us "
            if torch is not None:
                tx = [torch.from_numpy(a).requires_grad_() for a in arrays]
                with torch.no_grad():
                    t_t = timeit(lambda: t_fn(*tx), **timed)

                def t_fb():
                    t_fn(*tx).sum().backward()
                t_t_fb = timeit(t_fb, **timed)
                row += (f"{t_t * 1e6:>8.1f}us | {t_mg_fb * 1e6:>8.1f}us {t_t_fb * 1e6:>8.1f}us "
                        f"{t_mg_fb / t_t_fb:>7.2f}x")
            else:
                row += f"{'-':>10} | {t_mg_fb * 1e6:>8.1f}us {'-':>10} {'-':>8}"
            print(row, flush=True)


if __name__ == "__main__":
    main()
