"""Forward + backward of whole layers and of ops that once ran far behind PyTorch (the
recurrent layers, the fused activations, unbind/stack, topk, median, conv2d, depthwise
conv2d, the 2-d pools, CTC and upsampling): minigrad's time, and PyTorch's beside it when
installed, on the same inputs.

    python benchmarks/bench_layers.py                  # all cases, one thread
    python benchmarks/bench_layers.py --cases lstm gru --threads 2
"""
import argparse
import os

from minitransformer.argtypes import positive_int  # imports minigrad, before NumPy
from bench_ops import timeit


def best_of(fn, repeat):
    """Seconds per call: the best of `repeat` rounds of bench_ops' timer (0.2 s each)."""
    return min(timeit(fn, min_time=0.2, warmup=1 if i == 0 else 0) for i in range(repeat))


def cases(lib, nn, F):
    """name -> function of nothing that runs forward and backward once (built for `lib`,
    minigrad or torch, which share the names used here)."""
    def seeded(shape, grad=True):
        lib.manual_seed(0)
        return lib.randn(*shape, requires_grad=grad)

    def recurrent(kind):
        layer = getattr(nn, kind)(32, 64)
        x = seeded((50, 16, 32))

        def run():
            out, _ = layer(x)
            out.sum().backward()
        return run

    def elementwise(fn):
        x = seeded((1000, 1000))
        return lambda: fn(x).sum().backward()

    def unbind_stack():
        x = seeded((1000, 100))
        return lambda: lib.stack(x.unbind(0)[::2]).sum().backward()

    def topk():
        x = seeded((1000, 1000))
        return lambda: x.topk(5, dim=0)[0].sum().backward()

    def inplace_residual():
        """A residual added in place, `h += f(h)`, in 8 blocks: each write is recorded by
        autograd after an op read h (minigrad must find that op; it once searched the
        whole heap for it). (f reads a clone: PyTorch refuses the write where Linear saved
        h itself; minigrad would not.)"""
        blocks = [nn.Linear(128, 128) for _ in range(8)]
        x = seeded((12, 64, 128))

        def run():
            h = x * 1.0
            for block in blocks:
                h += block(h.clone()).relu()
            h.sum().backward()
        return run

    def conv2d():
        """A 3x3 convolution with a bias, padding 1: im2col, one batched GEMM, col2im."""
        x, weight, bias = seeded((16, 32, 32, 32)), seeded((64, 32, 3, 3)), seeded((64,))
        return lambda: F.conv2d(x, weight, bias, padding=1).sum().backward()

    def depthwise_conv2d():
        """MobileNet's 3x3 depthwise convolution (groups = channels), padding 1."""
        x, weight = seeded((16, 64, 32, 32)), seeded((64, 1, 3, 3))
        return lambda: F.conv2d(x, weight, padding=1, groups=64).sum().backward()

    def interpolate(mode):
        """Upsampling 32x32 feature maps to 64x64 (a decoder's or U-Net's)."""
        x = seeded((16, 64, 32, 32))
        return lambda: F.interpolate(x, size=(64, 64), mode=mode).sum().backward()

    def ctc_loss():
        """CTC over 50 frames of 20 classes, 16 targets of 15 labels (speech-sized)."""
        x = seeded((50, 16, 20))
        lib.manual_seed(1)
        targets = lib.randint(1, 20, (16, 15))
        lengths, target_lengths = lib.full((16,), 50), lib.full((16,), 15)
        return lambda: F.ctc_loss(x.log_softmax(-1), targets, lengths,
                                  target_lengths).backward()

    def pool(kind):
        """A ResNet stem's pool (3x3 windows, stride 2) over 64 channels of 56x56."""
        x = seeded((32, 64, 56, 56))
        return lambda: getattr(F, kind)(x, 3, 2).sum().backward()

    def median():
        x = seeded((1_000_000,))
        return lambda: x.median().backward()

    return {
        "lstm": lambda: recurrent("LSTM"), "gru": lambda: recurrent("GRU"),
        "rnn": lambda: recurrent("RNN"),
        "leaky_relu": lambda: elementwise(F.leaky_relu), "elu": lambda: elementwise(F.elu),
        "softplus": lambda: elementwise(F.softplus),
        "logsigmoid": lambda: elementwise(F.logsigmoid),
        "hardtanh": lambda: elementwise(F.hardtanh),
        "unbind_stack": unbind_stack, "topk": topk, "median": median,
        "inplace_residual": inplace_residual, "conv2d": conv2d,
        "max_pool2d": lambda: pool("max_pool2d"), "avg_pool2d": lambda: pool("avg_pool2d"),
        "depthwise_conv2d": depthwise_conv2d, "ctc_loss": ctc_loss,
        "bilinear_up": lambda: interpolate("bilinear"),
        "bicubic_up": lambda: interpolate("bicubic"),
    }


def main():
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--cases", nargs="*", help="which cases (default: all)")
    p.add_argument("--threads", type=positive_int, default=1,
                   help="BLAS/OpenMP threads for both libraries (default 1)")
    p.add_argument("--repeat", type=positive_int, default=5,
                   help="rounds of 0.2 s per case; the best is printed (default 5)")
    args = p.parse_args()
    os.environ.setdefault("OMP_NUM_THREADS", str(args.threads))
    import minigrad as mg
    mg.keep_freed_host_memory()          # as the trainer: freed activations reused, not faulted
    mine = cases(mg, mg.nn, mg.nn.functional)
    names = args.cases or list(mine)
    unknown = [n for n in names if n not in mine]
    if unknown:                          # before PyTorch takes seconds to load
        p.error(f"unknown cases {unknown}; valid: {', '.join(mine)}")
    try:
        import torch
        torch.set_num_threads(args.threads)
    except ImportError:
        torch = None
    theirs = cases(torch, torch.nn, torch.nn.functional) if torch else {}
    print(f"forward + backward, ms (best of {args.repeat}), {args.threads} thread(s)")
    print(f"{'case':<14}{'minigrad':>10}{'torch':>10}{'ratio':>8}")
    for name in names:
        t_mg = best_of(mine[name](), args.repeat) * 1e3
        t_torch = best_of(theirs[name](), args.repeat) * 1e3 if torch else None
        tail = f"{t_torch:>10.2f}{t_mg / t_torch:>7.1f}x" if torch else f"{'-':>10}"
        print(f"{name:<14}{t_mg:>10.2f}{tail}")


if __name__ == "__main__":
    main()
