"""Training a GPT on a text, nanoGPT's train.py loop: AdamW with weight decay on matrices only,
warmup + cosine learning rate, gradient clipping, gradient accumulation over micro-batches,
periodic train/val evaluation, checkpoints (every eval_interval steps and at the end; see
`minitransformer.checkpointing`); --dtype float16 as nanoGPT's (precision.py).

Resuming (`--resume`, `train(cfg, resume=True)`) continues from the latest checkpoint in OUT,
with the arguments saved there (flags given override them). Exact, i.e. the same losses as if
the run had never stopped, when an interrupted run continues with the same arguments: the
data-sampling generator's state is saved (and a --dtype float16 run's GradScaler), and the
dropout generator is re-seeded from (seed, iteration) at every evaluation and at the start
of a run, so it restarts identically
(on any device: no generator state to save; another device only rounds differently).
The learning-rate schedule is kept too: the resolved --lr-decay-iters (by default the first
run's --max-iters) is saved, and a resume keeps it unless --lr-decay-iters is given again. So
continuing a finished run with a larger --max-iters trains on at --min-lr, exactly as one
uninterrupted run with that --max-iters and --lr-decay-iters = the old --max-iters would, if
the old --max-iters is a multiple of --eval-interval (else dropout restarts at the resume
point where that run's would not). Other changed flags (--lr, --batch-size, --dropout,
--eval-interval, ...) continue the run from the checkpoint under the new values.
"""
import math
import time
from dataclasses import dataclass, field, fields, replace
from pathlib import Path

import numpy as np

import minigrad as mg
from minigrad import optim
from minigrad.data_parallel import ProcessDataParallel
from minitransformer.checkpointing import (  # noqa: F401 (re-exported: the trainer's API)
    CheckpointError, Checkpoint, save_checkpoint, read_checkpoint, find_checkpoint,
    load_checkpoint, pointed_checkpoint, checkpoint_dirs, run_lock)
from minitransformer.data import load_text, train_val_split, check_split, get_batch, sha256_of
from minitransformer.gpt import GPT
from minitransformer.metrics import append_row, keep_rows_up_to
from minitransformer.precision import ScaledLoss, autocast, grad_scaler
from minitransformer.tokenizer import CharTokenizer
from minitransformer.train_config import (  # noqa: F401 (re-exported)
    MODEL_FIELDS, PRESETS, TrainConfig, check_memory)


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""


class DeviceError(RuntimeError):
    """The requested device cannot be used here."""


@dataclass
class TrainResult:
    """What `train` returns: the output directory, the last checkpoint, the evaluations."""
    out: Path
    checkpoint: Path = None
    history: list = field(default_factory=list)   # one dict per evaluation (as metrics.jsonl)
    losses: list = field(default_factory=list)    # training loss of every step this run took
    start_iter: int = 0


def check_device(device):
    """Fail early, and clearly, if the device cannot be used."""
    if device == "cpu":
        return
    try:
        mg.zeros(1, device=device)
    except (RuntimeError, ValueError) as e:
        hint = "" if ".[cuda12]" in str(e) else (
            "\nFor an NVIDIA GPU install CuPy with the project's extra: "
            "pip install -e \".[cuda12]\" (CUDA 12) or \".[cuda13]\" (CUDA 13).")
        # the backend speaks to Python callers (device='cpu'); here the fix is a flag
        message = str(e).replace("device='cpu'", "--device cpu")
        raise DeviceError(f"--device {device} is not usable here: {message}{hint}") from None


def dropout_seed(seed, it):
    """The seed minigrad's generators restart from at iteration `it`."""
    return int(np.random.SeedSequence([seed, it]).generate_state(1)[0])


# ---- the loop ----------------------------------------------------------------------------
def train(cfg, resume=False, log=print):
    """Train per `cfg` (a TrainConfig); with resume=True continue from the latest checkpoint
    in cfg.out (the module doc says which continuations are exact; `resume_config` takes the
    arguments from the checkpoint). Returns a TrainResult."""
    out = Path(cfg.out)
    if out.exists() and not out.is_dir():
        raise ValueError(f"--out {out} is a file; pass a directory for the checkpoints and "
                         f"metrics.jsonl")
    if (out / "config.json").is_file():
        raise ValueError(f"--out {out} is a checkpoint directory; pass the run's directory "
                         f"(its parent, {out.parent}) to train or resume")
    check_device(cfg.device)
    if resume:
        find_checkpoint(out)     # nothing to resume: say so before the lock makes OUT
    else:
        cfg.check_schedule()
    made = not out.exists()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise OSError(f"--out {out}: cannot create the directory ({e.strerror or e})") from None
    previous = mg.get_float32_matmul_precision()
    mg.set_float32_matmul_precision(cfg.matmul_precision)
    try:
        # one run at a time per OUT; a diverging run's overflow warnings are left to the
        # loss check, which stops it with a message that says what to do
        with run_lock(out, remove_if_unused=made), \
                np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            return _train(cfg, out, resume, log)
    finally:
        mg.set_float32_matmul_precision(previous)


def _train(cfg, out, resume, log):
    ckpt = None
    if resume:
        ckpt = read_checkpoint(find_checkpoint(out))
        _check_same_shape(cfg, ckpt)
        if cfg.lr_decay_iters is None:   # not given again: keep the run's schedule
            cfg = replace(cfg, lr_decay_iters=_saved_decay_iters(ckpt))
    elif pointed_checkpoint(out) is not None or checkpoint_dirs(out, complete=False):
        raise CheckpointError(f"{out} already holds a training run (its ckpt-* directories); "
                              f"pass --resume to continue it, or choose another --out")
    text, data_path = load_text(cfg.data)
    if cfg.data is not None:           # saved absolute: a resume may start elsewhere
        cfg = replace(cfg, data=str(Path(data_path).resolve()))
    data_sha256 = sha256_of(text.encode("utf-8"))
    if ckpt is not None:
        tokenizer = ckpt.tokenizer
        if ckpt.meta.get("data_sha256") not in (None, data_sha256):
            raise CheckpointError(f"the text at {data_path} is not the one checkpoint "
                                  f"{ckpt.path} was trained on; pass the same --data to resume")
    else:
        tokenizer = CharTokenizer.from_text(text)
    ids = np.asarray(tokenizer.encode(text), dtype=np.int64)
    train_ids, val_ids = train_val_split(ids)
    check_split("train", train_ids, cfg.block_size)
    check_split("val", val_ids, cfg.block_size)

    check_memory(cfg, tokenizer.vocab_size)
    mg.manual_seed(cfg.seed)
    model = GPT(cfg.model_config(tokenizer.vocab_size)).to(cfg.device)
    model.gradient_checkpointing = cfg.checkpoint_activations
    optimizer = model.configure_optimizers(cfg.weight_decay, cfg.lr, (cfg.beta1, cfg.beta2))
    data_rng = np.random.default_rng(cfg.seed)
    scaler = grad_scaler(cfg.dtype, cfg.device)      # float32: disabled, every call a no-op
    it, elapsed_before = 0, 0.0
    if ckpt is not None:
        ckpt.restore(model, optimizer, scaler)
        try:
            data_rng.bit_generator.state = ckpt.meta["rng"]["data"]
        except (ValueError, TypeError, KeyError) as e:
            raise CheckpointError(f"checkpoint {ckpt.path} is corrupted: the data sampler's "
                                  f"state in config.json is not valid ({e})") from None
        it, elapsed_before = ckpt.meta["iter"], ckpt.meta["elapsed_s"]
        if it >= cfg.max_iters:
            raise ValueError(f"the run in {out} is already at iter {it} and max_iters is "
                             f"{cfg.max_iters}: pass a larger --max-iters to train on")
    metrics_path = out / "metrics.jsonl"
    dropped = keep_rows_up_to(metrics_path, it if ckpt is not None else None)
    if dropped:
        log(f"warning: {dropped} unreadable line(s) of {metrics_path} dropped")
    log(f"GPT: {_millions(model.num_parameters())} parameters (as nanoGPT counts: without "
        f"the position embedding), vocab {tokenizer.vocab_size}, "
        f"{len(train_ids):,} train / {len(val_ids):,} val tokens from {data_path}; "
        f"device {cfg.device}" + (f" ({_cpu_work(cfg)})" if cfg.device == "cpu" else "")
        + ("; float16 mixed precision (autocast, loss scaling)" if scaler.is_enabled() else "")
        + (f"; resuming at iter {it} from {ckpt.path}" if ckpt else ""))

    result = TrainResult(out=out, start_iter=it, checkpoint=ckpt.path if ckpt else None)
    run_start = time.perf_counter()
    bar = _progress(cfg, it)
    steps = _StepLosses(result, bar, tokens_per_step=cfg.grad_accum * cfg.batch_size *
                                                   cfg.block_size, scaler=scaler)
    start_it = it
    # each batch split over processes, one core each (minigrad/data_parallel.py says why)
    # (float16: each part's forward under autocast and its backward on the scaled loss)
    loss_fn = ScaledLoss(cfg.device) if scaler.is_enabled() else _lm_loss
    dp = ProcessDataParallel(model, loss_fn, cfg.processes_used(), optimizer=optimizer) \
        if cfg.processes_used() > 1 else None
    try:
        while True:
            if (it % cfg.eval_interval == 0 or it == cfg.max_iters) and not \
                    (ckpt is not None and it == start_it):
                steps.report(it)    # a NaN step stops before any checkpoint
                tokens_per_sec = steps.tokens_per_sec()
                losses = estimate_loss(model, train_ids, val_ids, cfg, it, dp)
                _check_finite(losses, it, result.checkpoint, "evaluation", cfg.dtype)
                elapsed = elapsed_before + time.perf_counter() - run_start
                row = dict(iter=it, train_loss=losses["train"], val_loss=losses["val"],
                           lr=cfg.lr_at(it), tokens_per_sec=round(tokens_per_sec, 1),
                           elapsed_s=round(elapsed, 3))
                if scaler.is_enabled():
                    row["loss_scale"] = scaler.get_scale()
                # the row first, then the checkpoint: killed in between, a resume starts
                # from the previous checkpoint, drops this row and writes it again; the
                # other order would lose the row for good (a resume never re-evaluates
                # the iteration it starts at)
                append_row(metrics_path, row)
                result.checkpoint = save_checkpoint(
                    out, model, optimizer, train_args=cfg.to_dict(), tokenizer=tokenizer,
                    iter=it, elapsed_s=elapsed, rng={"data": data_rng.bit_generator.state},
                    val_loss=losses["val"], data_sha256=data_sha256,
                    scaler=scaler.state_dict() if scaler.is_enabled() else None)
                result.history.append(row)
                speed = f"{row['tokens_per_sec']:,.0f} tok/s, " if it > start_it else ""
                _say(bar, log, f"iter {it}: train loss {losses['train']:.4f}, val loss "
                               f"{losses['val']:.4f}, lr {row['lr']:.2e}, "
                               f"{_scale_text(scaler)}{speed}{elapsed:.0f} s")
                steps.restart_window()
            if it % cfg.eval_interval == 0 or it == start_it:
                # dropout's generator restarts at every checkpoint, so a resumed run draws
                # the same masks as an uninterrupted one (on any device: no state to save)
                mg.manual_seed(dropout_seed(cfg.seed, it))
            if it >= cfg.max_iters:
                break
            lr = cfg.lr_at(it)
            optim.set_lr(optimizer, lr)
            optimizer.zero_grad()
            step_loss = _train_step(model, optimizer, dp, cfg, train_ids, data_rng, scaler)
            steps.add(mg.as_tensor(step_loss), lr)
            it += 1
            if it % cfg.log_interval == 0:
                steps.report(it)
    finally:
        if dp is not None:
            dp.close()
        if bar is not None:
            bar.close()
    if cfg.plot and result.history:
        from minitransformer.plot import plot_metrics, PlotUnavailable
        try:
            log(f"loss curve: {plot_metrics(metrics_path)}")
        except PlotUnavailable as e:
            log(str(e))
    return result


def _train_step(model, optimizer, dp, cfg, train_ids, data_rng, scaler):
    """One optimiser step over grad_accum micro-batches: their mean loss (a tensor on the
    device, or a float from the processes). float16: nanoGPT's loop, the forward under
    autocast, the backward on the scaled loss, the gradients unscaled before the clipping,
    the step skipped where they overflowed."""
    if dp is not None and cfg.grad_accum == 1 and not scaler.is_enabled():
        # the whole step split over the processes, the update too (the same numbers); it
        # clips and steps without a scaler, so float16 takes the three calls below
        x, y = get_batch(train_ids, cfg.batch_size, cfg.block_size, data_rng, cfg.device)
        return dp.train_step(x, y, max_norm=cfg.grad_clip or None)
    step_loss = 0.0
    if dp is not None and scaler.is_enabled():
        dp.loss_fn.value = scaler.get_scale()         # the workers' scale for this step
    for _ in range(cfg.grad_accum):
        x, y = get_batch(train_ids, cfg.batch_size, cfg.block_size, data_rng, cfg.device)
        if dp is not None:
            # (float16: the parts' losses were scaled by a power of two; exactly undone)
            step_loss += dp.forward_backward(x, y, scale=1 / cfg.grad_accum) / \
                scaler.get_scale()
            continue
        with autocast(cfg.dtype, cfg.device):
            _, loss = model(x, y)
        # each micro-batch's graph is freed by its backward; the gradients add up in .grad
        # to those of the mean loss over all of them
        scaler.scale(loss / cfg.grad_accum).backward()
        step_loss = step_loss + loss.detach()
    scaler.unscale_(optimizer)              # the clipping sees the true gradients
    if cfg.grad_clip > 0:
        optim.clip_grad_norm_(model.parameters(), cfg.grad_clip)
    scaler.step(optimizer)
    scaler.update()
    return step_loss / cfg.grad_accum


def _scale_text(scaler):
    """"loss scale 65536, " for a float16 run's log lines; "" for float32."""
    return f"loss scale {scaler.get_scale():g}, " if scaler.is_enabled() else ""


def _lm_loss(model, x, y):
    return model(x, y)[1]


def _millions(n):
    """0.81M as nanoGPT prints it; a tiny model's count in full rather than 0.00M."""
    return f"{n / 1e6:.2f}M" if n >= 100_000 else f"{n:,}"


def _cpu_work(cfg):
    n, cores = cfg.processes_used(), mg.parallel.cores()
    if n == 1:
        return mg.parallel.describe()
    if n > cores:         # allowed (a test of the split, say), but say what it costs
        return (f"{n} processes on {cores} cores: they take turns, and every step waits "
                f"for the slowest; --processes {cores} fits this machine")
    return f"{n} processes, one core each"


def estimate_loss(model, train_ids, val_ids, cfg, it, dp=None):
    """Mean loss over cfg.eval_iters random batches of each split, in eval mode without
    gradients; each batch split over the training's processes (`dp`) where there are
    several. The batches come from a generator seeded by (seed, iter, split), so an
    evaluation neither depends on nor disturbs the training stream."""
    model.eval()
    out = {}
    with mg.no_grad():
        for k, (name, ids) in enumerate((("train", train_ids), ("val", val_ids))):
            rng = np.random.default_rng([cfg.seed, it, k])
            batch_losses = []
            for _ in range(cfg.eval_iters):
                x, y = get_batch(ids, cfg.batch_size, cfg.block_size, rng, cfg.device)
                if dp is not None:     # (its loss_fn autocasts where the run does)
                    batch_losses.append(mg.as_tensor(dp.loss(x, y)))
                    continue
                with autocast(cfg.dtype, cfg.device):
                    batch_losses.append(model(x, y)[1])
            # averaged on the device: one wait for it per split, not one per batch
            out[name] = mg.stack(batch_losses).mean().item()
    model.train()
    return out


class _StepLosses:
    """The training losses of the steps since the last report, left on the device. Reading a
    loss makes the host wait until the device has computed it, so `report` reads them every
    log_interval steps (and before each evaluation), all in one transfer, instead of
    stalling the loop at every step. Also the training throughput since the last evaluation."""

    def __init__(self, result, bar, tokens_per_step, scaler):
        self.result, self.bar, self.tokens_per_step = result, bar, tokens_per_step
        self.scaler = scaler
        self.pending, self.lr = [], None
        self.restart_window()

    def restart_window(self):
        self.window_start, self.window_steps = time.perf_counter(), 0

    def add(self, loss, lr):
        self.pending.append(loss.detach())
        self.lr = lr
        self.window_steps += 1

    def tokens_per_sec(self):
        seconds = time.perf_counter() - self.window_start
        return self.window_steps * self.tokens_per_step / seconds if self.window_steps else 0.0

    def report(self, it):
        """Read the pending losses (of steps it - len(pending) .. it - 1) into result.losses,
        stop at a non-finite one, and move the progress bar on."""
        if not self.pending:
            return
        values = mg.stack(self.pending).numpy().tolist()
        self.pending.clear()
        for step, value in enumerate(values, start=it - len(values)):
            _check_finite({"train": value}, step, self.result.checkpoint, "training",
                          "float16" if self.scaler.is_enabled() else "float32")
        self.result.losses.extend(values)
        if self.bar is not None:
            self.bar.update(len(values))
            self.bar.set_postfix_str(f"loss {values[-1]:.4f}, lr {self.lr:.2e}, "
                                     f"{_scale_text(self.scaler)}"
                                     f"{self.tokens_per_sec():,.0f} tok/s", refresh=False)


def _check_finite(losses, it, checkpoint, where, dtype="float32"):
    bad = {k: v for k, v in losses.items() if not math.isfinite(v)}
    if bad:
        kept = f"the last good checkpoint is kept: {checkpoint}" if checkpoint else \
            "no checkpoint had been written yet"
        raise TrainingDiverged(
            f"the {where} loss became {_show_losses(bad)} at iteration "
            f"{it}; training stopped and {kept}. Try a lower --lr, a smaller --grad-clip, or "
            f"check the data." + _HALF_HINT * (dtype == "float16"))


# the GradScaler skips a step whose gradients overflow; a forward that overflows is a loss
# of inf or NaN, which it cannot mend
_HALF_HINT = (" Under --dtype float16 the forward's matrix products overflow past 65504, "
              "which the loss scaling does not prevent: --dtype float32 avoids it.")


def _show_losses(losses):
    if len(losses) == 1:
        return str(next(iter(losses.values())))
    return ", ".join(f"{v} ({k})" for k, v in losses.items())


def _progress(cfg, it):
    if not cfg.progress:
        return None
    from tqdm import tqdm
    return tqdm(total=cfg.max_iters, initial=it, desc="train", unit="it", dynamic_ncols=True)


def _say(bar, log, message):
    if bar is not None:
        bar.write(message)
    else:
        log(message)


def resume_config(out, **overrides):
    """The TrainConfig of the run in `out` (from its latest checkpoint), with `overrides`
    (those not None) on top, e.g. a larger max_iters or another device."""
    ckpt = read_checkpoint(find_checkpoint(out))
    names = {f.name for f in fields(TrainConfig)}
    unknown = set(overrides) - names
    if unknown:
        raise ValueError(f"resume_config: unknown option(s) {sorted(unknown)}")
    saved = {k: v for k, v in ckpt.meta["train"].items() if k in names}
    try:
        cfg = TrainConfig(**{**saved, "out": str(out)})
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"checkpoint {ckpt.path} is corrupted: its training arguments "
                              f"in config.json are not valid ({e})") from None
    changes = {k: v for k, v in overrides.items() if v is not None}
    if changes.get("device", cfg.device) != cfg.device and "processes" not in changes:
        changes["processes"] = None      # the saved count was the other device's
    cfg = replace(cfg, **changes)
    if overrides.get("lr") is not None or overrides.get("min_lr") is not None:
        cfg.check_schedule()
    _check_same_shape(cfg, ckpt)
    return cfg


def _saved_decay_iters(ckpt):
    """The checkpointed run's decay_iters (older checkpoints saved None: their max_iters)."""
    saved = ckpt.meta["train"]
    return saved["max_iters"] if saved.get("lr_decay_iters") is None else \
        saved["lr_decay_iters"]


def _check_same_shape(cfg, ckpt):
    saved = ckpt.config.to_dict()
    for name in MODEL_FIELDS:
        if getattr(cfg, name) != saved[name]:
            raise CheckpointError(f"checkpoint {ckpt.path} was trained with {name}="
                                  f"{saved[name]}; cannot resume with {name}="
                                  f"{getattr(cfg, name)} (the weights would not fit). Drop "
                                  f"the flag, or train afresh with another --out")
