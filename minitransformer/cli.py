"""The `minitransformer` command: train a character GPT, sample from it, plot its loss curve.

    minitransformer train --preset baby                 # nanoGPT's shakespeare_char CPU run
    minitransformer train --preset baby --resume        # continue the run in out-baby/
    minitransformer sample --ckpt out-baby --prompt "ROMEO:" --max-new-tokens 300
    minitransformer plot out-baby                       # out-baby/loss.png
"""
import argparse
import os
import sys

import minigrad as mg
from minigrad.backend import MATMUL_PRECISIONS
from minigrad.data_parallel import WorkerLost

from minitransformer.argtypes import non_negative_int, positive_float, positive_int
from minitransformer.data import DataError, DATA_ENV
from minitransformer.plot import PlotUnavailable
from minitransformer.precision import autocast, check_dtype
from minitransformer.tokenizer import UnknownCharacterError
from minitransformer.train import (PRESETS, MODEL_FIELDS, TrainConfig, CheckpointError,
                                   TrainingDiverged, DeviceError, train, resume_config,
                                   load_checkpoint, check_device, pointed_checkpoint)

# (flag, TrainConfig field, type, help) of the values a preset sets and a flag overrides
TRAIN_FLAGS = [
    ("--n-layer", "n_layer", int, "Transformer blocks"),
    ("--n-head", "n_head", int, "attention heads (must divide --n-embd)"),
    ("--n-embd", "n_embd", int, "embedding / residual width"),
    ("--block-size", "block_size", int, "context length in characters"),
    ("--dropout", "dropout", float, "dropout probability"),
    ("--batch-size", "batch_size", int, "sequences per forward pass (per micro-batch)"),
    ("--grad-accum", "grad_accum", int, "micro-batches per step, their gradients summed "
                                        "(nanoGPT's gradient_accumulation_steps): a step of "
                                        "N x --batch-size sequences in the memory of one"),
    ("--processes", "processes", positive_int, "CPU processes sharing each batch, one core "
                                               "each (default: one per core, up to 8; 1: no "
                                               "workers)"),
    ("--max-iters", "max_iters", int, "optimiser steps"),
    ("--lr", "lr", float, "peak learning rate"),
    ("--min-lr", "min_lr", float, "learning rate at the end of the cosine decay"),
    ("--warmup-iters", "warmup_iters", int, "linear warmup steps"),
    ("--lr-decay-iters", "lr_decay_iters", int, "step where the cosine reaches --min-lr "
                                                "(default: --max-iters)"),
    ("--weight-decay", "weight_decay", float, "AdamW weight decay on ≥2-D weights"),
    ("--beta1", "beta1", float, "AdamW β1"),
    ("--beta2", "beta2", float, "AdamW β2"),
    ("--grad-clip", "grad_clip", float, "clip the global gradient norm (0: off)"),
    ("--eval-interval", "eval_interval", int, "evaluate and checkpoint every N steps"),
    ("--eval-iters", "eval_iters", int, "batches per split in each evaluation"),
    ("--log-interval", "log_interval", int, "read the training loss (progress bar, NaN check) "
                                            "every N steps; each read waits for the device "
                                            "(default: 10)"),
]

# the other TrainConfig fields a flag sets, for error messages
OTHER_FLAGS = [("--seed", "seed", int, ""), ("--device", "device", str, ""),
               ("--data", "data", str, ""), ("--matmul-precision", "matmul_precision", str, ""),
               ("--dtype", "dtype", str, "")]

class RunStopped(RuntimeError):
    """Training stopped by something outside it (a lost worker process)."""


USER_ERRORS = (DataError, CheckpointError, TrainingDiverged, DeviceError, UnknownCharacterError,
               PlotUnavailable, OSError, ValueError, RunStopped)


def _resume_hint(out):
    """"; its last checkpoint is ..., continue the run with: ..." where there is one."""
    try:
        ckpt = pointed_checkpoint(out)
    except CheckpointError:
        ckpt = None
    return "" if ckpt is None else (f"; its last checkpoint is {ckpt}, continue the run "
                                    f"with: minitransformer train --resume --out {out}")


def _presets_text():
    import textwrap
    lines = ["presets (the other values: the defaults of TrainConfig in train_config.py):"]
    for name, values in sorted(PRESETS.items()):
        lines += textwrap.wrap(", ".join(f"{k}={v}" for k, v in values.items()), 80,
                               initial_indent=f"  {name}: ", subsequent_indent="    ")
    return "\n".join(lines)


def build_parser():
    parser = argparse.ArgumentParser(
        prog="minitransformer",
        description="Train a character-level GPT on minigrad, sample from it, plot its loss.")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    t = sub.add_parser("train", help="train a GPT (Tiny Shakespeare by default)",
                       description="Train a GPT. A preset sets the values listed below; each "
                                   "flag overrides one.", epilog=_presets_text(),
                       formatter_class=argparse.RawDescriptionHelpFormatter)
    t.add_argument("--preset", choices=sorted(PRESETS), default=None,
                   help="baby: nanoGPT's shakespeare_char CPU run (minutes); small: its GPU "
                        "run (default: baby; with --resume, the run's own values)")
    t.add_argument("--data", help=f"a UTF-8 text file to train on (default: ${DATA_ENV}, else "
                                  f"Tiny Shakespeare, downloaded once and cached)")
    t.add_argument("--out", help="directory for checkpoints, metrics.jsonl and loss.png "
                                 "(default: out-PRESET)")
    t.add_argument("--device", default=None, help="cpu or cuda (default: cpu)")
    t.add_argument("--seed", type=int, default=None, help="random seed (default: 1337)")
    for flag, name, typ, text in TRAIN_FLAGS:
        t.add_argument(flag, dest=name, type=typ, default=None, help=text)
    t.add_argument("--bias", action=argparse.BooleanOptionalAction, default=None,
                   help="biases in Linear and LayerNorm (default: off, as nanoGPT)")
    t.add_argument("--checkpoint-activations", action=argparse.BooleanOptionalAction,
                   default=None, help="recompute each block's activations in backward "
                                      "instead of keeping them: the same run in less "
                                      "memory, about a third slower (default: off)")
    t.add_argument("--matmul-precision", choices=MATMUL_PRECISIONS, default=None,
                   help="float32 GEMMs on an NVIDIA GPU: high (or medium) lets them use "
                        "TensorFloat-32 tensor cores, as nanoGPT; highest keeps them float32. "
                        "The CPU computes in float32 either way (default: high)")
    # not argparse choices: bfloat16 gets its own message (precision.check_dtype)
    t.add_argument("--dtype", default=None,
                   help="float32, or float16: mixed precision as nanoGPT's --dtype (the "
                        "forward under autocast, the loss scaled by a GradScaler), meant for "
                        "--device cuda: on the CPU float16 is slower than float32. No "
                        "bfloat16 (NumPy and CuPy lack it) (default: float32)")
    t.add_argument("--resume", action="store_true",
                   help="continue the run in --out from its latest checkpoint, with its "
                        "saved values (flags given override them). Exact (the losses of a "
                        "run never stopped) for an interrupted run resumed with the same "
                        "flags. The LR schedule is kept (--lr-decay-iters stays the saved "
                        "one unless given), so a larger --max-iters trains on at --min-lr; "
                        "other flags take effect from the checkpoint on")
    t.add_argument("--no-progress", action="store_true", help="no progress bar")
    t.add_argument("--no-plot", action="store_true", help="do not write loss.png")

    s = sub.add_parser("sample", help="generate text from a checkpoint",
                       description="Continue --prompt with text sampled from a trained "
                                   "model, printed as it is generated.")
    s.add_argument("--ckpt", default="out-baby",
                   help="a training --out directory or a ckpt-* directory (default: out-baby)")
    s.add_argument("--prompt", default="\n", help="text to continue (default: a newline)")
    s.add_argument("--max-new-tokens", type=non_negative_int, default=500,
                   help="characters to generate (default: 500)")
    s.add_argument("--temperature", type=positive_float, default=0.8,
                   help="divide the logits by this before sampling: lower is more "
                        "conservative; --top-k 1 is greedy decoding (default: 0.8)")
    s.add_argument("--top-k", type=positive_int, default=None,
                   help="sample only among the K most likely characters (default: all)")
    s.add_argument("--num-samples", type=positive_int, default=1,
                   help="independent samples to print (default: 1)")
    s.add_argument("--seed", type=non_negative_int, default=1337,
                   help="random seed (default: 1337)")
    s.add_argument("--device", default="cpu", help="cpu or cuda (default: cpu)")
    s.add_argument("--dtype", default=None,
                   help="float32, or float16 (generation under autocast, as the run's "
                        "evaluations) (default: the run's --dtype)")
    s.add_argument("--no-cache", action="store_true",
                   help="recompute the whole context for every token (no KV cache)")

    p = sub.add_parser("plot", help="draw loss.png from a run's metrics.jsonl",
                       description="Draw the train and validation loss curves of a run "
                                   "(needs matplotlib).")
    p.add_argument("run", nargs="?", default="out-baby",
                   help="a training --out directory or a metrics.jsonl file (default: out-baby)")
    p.add_argument("-o", "--output", help="PNG path (default: loss.png beside metrics.jsonl)")
    return parser


def cmd_train(args):
    overrides = {name: getattr(args, name) for _, name, _, _ in TRAIN_FLAGS}
    overrides.update(data=args.data, device=args.device, seed=args.seed, bias=args.bias,
                     matmul_precision=args.matmul_precision, dtype=args.dtype,
                     checkpoint_activations=args.checkpoint_activations)
    preset = args.preset or "baby"
    out = args.out or f"out-{preset}"
    flags = dict(progress=not args.no_progress, plot=not args.no_plot)
    try:
        if args.resume:
            cfg = resume_config(out, **overrides, **flags)
            if args.preset:
                _check_preset_of_run(args.preset, cfg, out)
        else:
            cfg = TrainConfig.from_preset(preset, out=out, **overrides, **flags)
    except ValueError as e:          # the config's field names, as the flags that set them
        message = str(e)
        for flag, name, _, _ in TRAIN_FLAGS + OTHER_FLAGS:
            message = message.replace(f"TrainConfig: {name} ", f"{flag} ")
        e.args = (message,)
        raise
    try:
        result = train(cfg, resume=args.resume)
    except KeyboardInterrupt as e:       # Ctrl-C: say where the run can pick up again
        e.hint = _resume_hint(out)
        raise
    except WorkerLost as e:              # one line and what to do, not a traceback
        raise RunStopped(f"{e}: one of the processes sharing each batch was lost (killed, "
                         f"perhaps by the system for memory; --processes 1 trains in one)"
                         f"{_resume_hint(out)}") from None
    if result.history:
        last = result.history[-1]
        print(f"done: iter {last['iter']}, train loss {last['train_loss']:.4f}, val loss "
              f"{last['val_loss']:.4f}, {last['elapsed_s']:.0f} s; checkpoint "
              f"{result.checkpoint}")
        print(f"sample with: minitransformer sample --ckpt {out}")
    return 0


def _check_preset_of_run(preset, cfg, out):
    """--preset with --resume: the run must be of that preset's model (it only names the
    default --out there; the run's own values are kept)."""
    for name in MODEL_FIELDS:
        want = PRESETS[preset].get(name)
        if want is not None and getattr(cfg, name) != want:
            raise ValueError(f"--preset {preset}: the run in {out} is not a {preset} run "
                             f"({name}={getattr(cfg, name)}, the preset has {want}); resume "
                             f"it without --preset, which keeps the run's own values")


def cmd_sample(args):
    import minigrad as mg
    if any("\udc80" <= c <= "\udcff" for c in args.prompt):   # bytes Python could not decode
        raise ValueError("--prompt is not valid UTF-8 (the shell passed raw bytes); pass the "
                         "text in UTF-8")
    if not args.prompt:
        raise ValueError("--prompt must hold at least one character (the default is a "
                         "newline)")
    if args.dtype is not None:
        check_dtype(args.dtype, "--dtype")
    check_device(args.device)
    model, tokenizer, ckpt = load_checkpoint(args.ckpt, device=args.device)
    dtype = args.dtype or ckpt.meta["train"].get("dtype", "float32")
    try:
        ids = tokenizer.encode(args.prompt)
    except UnknownCharacterError as e:
        if args.prompt != "\n":
            raise
        raise UnknownCharacterError(f"{e}; the default prompt is a newline, which this "
                                    f"model's text never had: pass --prompt TEXT") from None
    mg.manual_seed(args.seed)
    for k in range(args.num_samples):
        if k:
            _show("---------------\n")
        _show(args.prompt)
        # each character as it is sampled: a long sample shows itself growing, and Ctrl-C
        # keeps what was printed
        with autocast(dtype, args.device):
            for step in model.stream([ids], args.max_new_tokens,
                                     temperature=args.temperature, top_k=args.top_k,
                                     use_cache=not args.no_cache):
                _show(tokenizer.decode(step[0]))
        _show("\n")
    return 0


def _show(text):
    try:
        print(text, end="", flush=True)
    except UnicodeEncodeError:
        raise ValueError(f"this terminal's encoding ({sys.stdout.encoding}) cannot show "
                         f"the sample's characters; set PYTHONIOENCODING=utf-8") from None


def cmd_plot(args):
    from minitransformer.plot import plot_metrics
    print(plot_metrics(args.run, args.output))
    return 0


def main(argv=None):
    args = build_parser().parse_args(argv)
    command = {"train": cmd_train, "sample": cmd_sample, "plot": cmd_plot}[args.command]
    mg.keep_freed_host_memory()  # reuse freed activations' pages: ~20% faster CPU steps
    try:
        return command(args)
    except BrokenPipeError:          # the reader left (| head): stop quietly, as `cat` does
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except USER_ERRORS as e:
        print(f"minitransformer {args.command}: error: {e}", file=sys.stderr)
        return 1
    except MemoryError as e:
        fix = {"train": "lower --batch-size or --block-size, or the model's size (--n-embd, "
                        "--n-layer); --grad-accum N keeps the step's size in less memory",
               "sample": "lower --max-new-tokens or --num-samples"}.get(args.command, "")
        print(f"minitransformer {args.command}: error: out of memory ({e}); {fix}",
              file=sys.stderr)
        return 1
    except KeyboardInterrupt as e:
        print(f"\nminitransformer {args.command}: interrupted{getattr(e, 'hint', '')}",
              file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
