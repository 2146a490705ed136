"""Training a GPT on a text, nanoGPT's train.py loop: AdamW with weight decay on matrices only,
warmup + cosine learning rate, gradient clipping, periodic train/val evaluation, checkpoints.

A checkpoint is a directory `OUT/ckpt-NNNNNNN/` (N = optimiser steps taken) holding
`model.safetensors`, `optimizer.safetensors` and `config.json` (model config, tokenizer, train
arguments, RNG state, iteration, and the sha256 of the two weight files). It is written into a
temporary directory, renamed into place, and only then does the one-line file `OUT/latest` get
atomically replaced to name it: a run killed at any moment leaves `latest` naming a complete
checkpoint. `--resume` continues from it and reproduces the uninterrupted run's losses exactly:
the data-sampling generator's state is saved, and the dropout generator is re-seeded from
(seed, iteration) at every evaluation, so it restarts identically on any device.
"""
import hashlib
import json
import math
import os
import shutil
import secrets
import time
from dataclasses import dataclass, asdict, field, fields
from pathlib import Path

import numpy as np

import minigrad as mg
from minigrad import optim
from minigrad.checkpoint import CheckpointError as _FileCheckpointError
from minitransformer.data import (load_text, train_val_split, check_split, get_batch,
                                  write_atomic, sha256_of)
from minitransformer.gpt import GPT, GPTConfig
from minitransformer.tokenizer import CharTokenizer

CHECKPOINT_FORMAT = "minitransformer-gpt-checkpoint"
CHECKPOINT_VERSION = 1
MODEL_FIELDS = ("n_layer", "n_head", "n_embd", "block_size", "bias")

# nanoGPT's config/train_shakespeare_char.py; "baby" is its README's CPU run
PRESETS = {
    "baby": dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=12, max_iters=2000,
                 lr=1e-3, min_lr=1e-4, warmup_iters=100, dropout=0.0, eval_interval=250,
                 eval_iters=20),
    "small": dict(n_layer=6, n_head=6, n_embd=384, block_size=256, batch_size=64,
                  max_iters=5000, lr=1e-3, min_lr=1e-4, warmup_iters=100, dropout=0.2,
                  eval_interval=250, eval_iters=200),
}


class CheckpointError(RuntimeError):
    """A checkpoint that is missing, corrupted, or does not fit what was asked of it."""


class TrainingDiverged(RuntimeError):
    """The loss became NaN or infinite; the last good checkpoint is kept."""


class DeviceError(RuntimeError):
    """The requested device cannot be used here."""


@dataclass
class TrainConfig:
    """Every knob of a training run (defaults: the "baby" preset)."""
    data: str = None              # a UTF-8 text; None: $MINITRANSFORMER_DATA or Tiny Shakespeare
    out: str = "out-baby"
    device: str = "cpu"
    seed: int = 1337
    # model
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    block_size: int = 64
    dropout: float = 0.0
    bias: bool = False            # nanoGPT's default for this run
    # optimisation
    batch_size: int = 12
    max_iters: int = 2000
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup_iters: int = 100
    lr_decay_iters: int = None    # None: max_iters
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.99
    grad_clip: float = 1.0        # 0 disables clipping
    # evaluation and output
    eval_interval: int = 250
    eval_iters: int = 20
    progress: bool = True
    plot: bool = True

    @classmethod
    def from_preset(cls, preset="baby", **overrides):
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; valid: {sorted(PRESETS)}")
        values = {**PRESETS[preset], "out": f"out-{preset}"}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)

    def __post_init__(self):
        for name in ("batch_size", "max_iters", "eval_interval", "eval_iters"):
            if getattr(self, name) < (0 if name == "max_iters" else 1):
                raise ValueError(f"TrainConfig: {name} must be positive, got "
                                 f"{getattr(self, name)}")
        if self.warmup_iters < 0 or self.lr < 0 or self.min_lr < 0 or self.grad_clip < 0:
            raise ValueError("TrainConfig: warmup_iters, lr, min_lr and grad_clip must be >= 0")

    @property
    def decay_iters(self):
        return self.max_iters if self.lr_decay_iters is None else self.lr_decay_iters

    def model_config(self, vocab_size):
        return GPTConfig(vocab_size=vocab_size, block_size=self.block_size,
                         n_layer=self.n_layer, n_head=self.n_head, n_embd=self.n_embd,
                         dropout=self.dropout, bias=self.bias)

    def lr_at(self, it):
        """nanoGPT's schedule; a run shorter than its warmup warms up over the whole run."""
        warmup = min(self.warmup_iters, self.decay_iters)
        return optim.warmup_cosine(it, self.lr, self.min_lr, warmup, self.decay_iters)


@dataclass
class TrainResult:
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
        raise DeviceError(f"--device {device} is not usable here: {e}{hint}") from None


def dropout_seed(seed, it):
    """The seed minigrad's generators restart from at iteration `it`."""
    return int(np.random.SeedSequence([seed, it]).generate_state(1)[0])


# ---- the loop ----------------------------------------------------------------------------
def train(cfg, resume=False, log=print):
    """Train per `cfg` (a TrainConfig); with resume=True continue from the latest checkpoint
    in cfg.out (see `resume_config` for taking the arguments from it). Returns a TrainResult."""
    out = Path(cfg.out)
    check_device(cfg.device)
    ckpt = None
    if resume:
        ckpt = read_checkpoint(find_checkpoint(out))
        _check_same_shape(cfg, ckpt)
    elif _pointed(out) is not None:
        raise CheckpointError(f"{out} already holds a training run (see {out / 'latest'}); pass "
                              f"--resume to continue it, or choose another --out")
    text, data_path = load_text(cfg.data)
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

    mg.manual_seed(cfg.seed)
    model = GPT(cfg.model_config(tokenizer.vocab_size)).to(cfg.device)
    optimizer = model.configure_optimizers(cfg.weight_decay, cfg.lr, (cfg.beta1, cfg.beta2))
    data_rng = np.random.default_rng(cfg.seed)
    it, elapsed_before = 0, 0.0
    if ckpt is not None:
        ckpt.restore(model, optimizer)
        data_rng.bit_generator.state = ckpt.meta["rng"]["data"]
        it, elapsed_before = ckpt.meta["iter"], ckpt.meta["elapsed_s"]
    out.mkdir(parents=True, exist_ok=True)
    metrics_path = out / "metrics.jsonl"
    _keep_metrics_up_to(metrics_path, it if ckpt is not None else None)
    log(f"GPT: {model.num_parameters() / 1e6:.2f}M parameters, vocab {tokenizer.vocab_size}, "
        f"{len(train_ids):,} train / {len(val_ids):,} val tokens from {data_path}; "
        f"device {cfg.device}" + (f"; resuming at iter {it} from {ckpt.path}" if ckpt else ""))

    result = TrainResult(out=out, start_iter=it, checkpoint=ckpt.path if ckpt else None)
    tokens_per_step = cfg.batch_size * cfg.block_size
    run_start = time.perf_counter()
    bar = _progress(cfg, it)
    start_it, window_tokens, window_time, tok_per_s = it, 0, 0.0, 0.0
    try:
        while True:
            if (it % cfg.eval_interval == 0 or it == cfg.max_iters) and not \
                    (ckpt is not None and it == start_it):
                losses = estimate_loss(model, train_ids, val_ids, cfg, it)
                _check_finite(losses, it, result.checkpoint, "evaluation")
                elapsed = elapsed_before + time.perf_counter() - run_start
                row = dict(iter=it, train_loss=losses["train"], val_loss=losses["val"],
                           lr=cfg.lr_at(it), tokens_per_sec=round(
                               window_tokens / window_time if window_time else 0.0, 1),
                           elapsed_s=round(elapsed, 3))
                result.checkpoint = save_checkpoint(
                    out, model, optimizer, cfg=cfg, tokenizer=tokenizer, iter=it,
                    elapsed_s=elapsed, rng={"data": data_rng.bit_generator.state},
                    val_loss=losses["val"], data_sha256=data_sha256)
                with open(metrics_path, "a") as f:  # after the checkpoint: a row, a checkpoint
                    f.write(json.dumps(row) + "\n")
                result.history.append(row)
                _say(bar, log, f"iter {it}: train loss {losses['train']:.4f}, val loss "
                               f"{losses['val']:.4f}, lr {row['lr']:.2e}, "
                               f"{row['tokens_per_sec']:,.0f} tok/s, {elapsed:.0f} s")
                window_tokens, window_time = 0, 0.0
            if it % cfg.eval_interval == 0 or it == start_it:
                # dropout's generator restarts at every checkpoint, so a resumed run draws
                # the same masks as an uninterrupted one (on any device: no state to save)
                mg.manual_seed(dropout_seed(cfg.seed, it))
            if it >= cfg.max_iters:
                break
            t0 = time.perf_counter()
            lr = cfg.lr_at(it)
            optim.set_lr(optimizer, lr)
            x, y = get_batch(train_ids, cfg.batch_size, cfg.block_size, data_rng, cfg.device)
            _, loss = model(x, y)
            loss_value = loss.item()
            _check_finite({"train": loss_value}, it, result.checkpoint, "training")
            optimizer.zero_grad()
            loss.backward()
            if cfg.grad_clip > 0:
                optim.clip_grad_norm_(model.parameters(), cfg.grad_clip)
            optimizer.step()
            dt = time.perf_counter() - t0
            it += 1
            window_tokens += tokens_per_step
            window_time += dt
            result.losses.append(loss_value)
            tok_per_s = tokens_per_step / dt if not tok_per_s else \
                0.9 * tok_per_s + 0.1 * tokens_per_step / dt
            if bar is not None:
                bar.update(1)
                bar.set_postfix_str(f"loss {loss_value:.4f}, lr {lr:.2e}, {tok_per_s:,.0f} tok/s",
                                    refresh=False)
    finally:
        if bar is not None:
            bar.close()
    if cfg.plot and result.history:
        from minitransformer.plot import plot_metrics, PlotUnavailable
        try:
            log(f"loss curve: {plot_metrics(metrics_path)}")
        except PlotUnavailable as e:
            log(str(e))
    return result


def estimate_loss(model, train_ids, val_ids, cfg, it):
    """Mean loss over cfg.eval_iters random batches of each split, in eval mode without
    gradients. The batches come from a generator seeded by (seed, iter, split), so an
    evaluation neither depends on nor disturbs the training stream."""
    model.eval()
    out = {}
    with mg.no_grad():
        for k, (name, ids) in enumerate((("train", train_ids), ("val", val_ids))):
            rng = np.random.default_rng([cfg.seed, it, k])
            total = 0.0
            for _ in range(cfg.eval_iters):
                x, y = get_batch(ids, cfg.batch_size, cfg.block_size, rng, cfg.device)
                total += model(x, y)[1].item()
            out[name] = total / cfg.eval_iters
    model.train()
    return out


def _check_finite(losses, it, checkpoint, where):
    bad = {k: v for k, v in losses.items() if not math.isfinite(v)}
    if bad:
        kept = f"the last good checkpoint is kept: {checkpoint}" if checkpoint else \
            "no checkpoint had been written yet"
        raise TrainingDiverged(
            f"the {where} loss became {_show_losses(bad)} at iteration "
            f"{it}; training stopped and {kept}. Try a lower --lr, a smaller --grad-clip, or "
            f"check the data.")


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


def _keep_metrics_up_to(path, last_iter):
    """A resumed run drops the rows after its checkpoint (it will write them again); a fresh
    run starts a fresh file."""
    if not path.exists():
        return
    keep = []
    if last_iter is not None:
        for line in path.read_text().splitlines():
            try:
                if json.loads(line)["iter"] <= last_iter:
                    keep.append(line)
            except (ValueError, KeyError, TypeError):
                pass
    write_atomic(path, "".join(line + "\n" for line in keep).encode())


def resume_config(out, **overrides):
    """The TrainConfig of the run in `out` (from its latest checkpoint), with `overrides`
    (those not None) on top, e.g. a larger max_iters or another device."""
    ckpt = read_checkpoint(find_checkpoint(out))
    names = {f.name for f in fields(TrainConfig)}
    unknown = set(overrides) - names
    if unknown:
        raise ValueError(f"resume_config: unknown option(s) {sorted(unknown)}")
    values = {k: v for k, v in ckpt.meta["train"].items() if k in names}
    values.update({k: v for k, v in overrides.items() if v is not None})
    values["out"] = str(out)
    cfg = TrainConfig(**values)
    _check_same_shape(cfg, ckpt)
    return cfg


def _check_same_shape(cfg, ckpt):
    saved = ckpt.config.to_dict()
    for name in MODEL_FIELDS:
        if getattr(cfg, name) != saved[name]:
            raise CheckpointError(f"checkpoint {ckpt.path} was trained with {name}="
                                  f"{saved[name]}; cannot resume with {name}="
                                  f"{getattr(cfg, name)} (the weights would not fit). Drop "
                                  f"the flag, or train afresh with another --out")


# ---- checkpoints -------------------------------------------------------------------------
def save_checkpoint(out, model, optimizer, *, cfg, tokenizer, iter, elapsed_s, rng,
                    val_loss=None, data_sha256=None):
    """Write a complete checkpoint directory and point OUT/latest at it (see module doc)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    current = _pointed(out)
    final = out / f"ckpt-{iter:07d}"
    if final.exists() and final == current:      # re-saving the checkpoint `latest` names
        final = out / f"ckpt-{iter:07d}-{os.getpid()}-{time.monotonic_ns()}"
    tmp = out / f".ckpt-tmp-{secrets.token_hex(6)}"
    tmp.mkdir()
    try:
        mg.save(model.state_dict(), tmp / "model.safetensors")
        tensors, opt_meta = optimizer.flat_state_dict()
        mg.save(tensors, tmp / "optimizer.safetensors", metadata=opt_meta)
        meta = {"format": CHECKPOINT_FORMAT, "version": CHECKPOINT_VERSION,
                "model": model.config.to_dict(), "tokenizer": tokenizer.to_dict(),
                "train": asdict(cfg), "iter": iter, "elapsed_s": elapsed_s,
                "val_loss": val_loss, "rng": rng, "data_sha256": data_sha256,
                "files": {name: _file_sha256(tmp / name)
                          for name in ("model.safetensors", "optimizer.safetensors")}}
        write_atomic(tmp / "config.json", json.dumps(meta, indent=1).encode())
        if final.exists():
            shutil.rmtree(final)   # a complete but unreferenced leftover of a killed run
        os.rename(tmp, final)
        write_atomic(out / "latest", (final.name + "\n").encode())   # the commit point
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for old in out.iterdir():    # only now may older checkpoints go
        if old != final and old.is_dir() and (old.name.startswith("ckpt-") or
                                              old.name.startswith(".ckpt-tmp-")):
            shutil.rmtree(old, ignore_errors=True)
    return final


def _file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _pointed(out):
    pointer = Path(out) / "latest"
    if not pointer.is_file():
        return None
    return Path(out) / pointer.read_text().strip()


def find_checkpoint(path):
    """A checkpoint directory: `path` itself if it is one, else the one `path/latest` names."""
    path = Path(path)
    if (path / "config.json").is_file():
        return path
    target = _pointed(path)
    if target is None:
        if not path.exists():
            raise CheckpointError(f"{path} does not exist; pass the --out directory of a "
                                  f"training run (or one of its ckpt-* directories)")
        raise CheckpointError(f"no checkpoint in {path} (no 'latest' file or config.json); "
                              f"train first, or check the directory")
    if not (target / "config.json").is_file():
        raise CheckpointError(f"{path}/latest names {target.name}, which is missing or "
                              f"incomplete")
    return target


class Checkpoint:
    """A checkpoint read from disk: its metadata, model config and tokenizer; `model(device)`
    builds the model, `restore(model, optimizer)` loads weights and optimiser state."""

    def __init__(self, path, meta):
        self.path, self.meta = Path(path), meta
        self.config = GPTConfig.from_dict(meta["model"])
        self.tokenizer = CharTokenizer.from_dict(meta["tokenizer"])

    def _tensors(self, name, device="cpu"):
        file = self.path / name
        if not file.is_file():
            raise CheckpointError(f"checkpoint {self.path} is incomplete: {name} is missing")
        want = self.meta.get("files", {}).get(name)
        if want is not None and _file_sha256(file) != want:
            raise CheckpointError(f"checkpoint {self.path} is corrupted: {name} does not match "
                                  f"the sha256 recorded in config.json")
        try:
            return mg.load(file, device=device, with_metadata=True)
        except _FileCheckpointError as e:
            raise CheckpointError(f"checkpoint {self.path} is corrupted: {e}") from None

    def load_weights(self, model):
        tensors, _ = self._tensors("model.safetensors")
        try:
            model.load_state_dict(tensors)
        except RuntimeError as e:
            raise CheckpointError(f"checkpoint {self.path} does not fit this model (config "
                                  f"{self.config}): {e}") from None

    def model(self, device="cpu"):
        model = GPT(self.config)
        self.load_weights(model)
        return model.to(device)

    def restore(self, model, optimizer):
        self.load_weights(model)
        tensors, metadata = self._tensors("optimizer.safetensors")
        try:
            optimizer.load_flat_state_dict(tensors, metadata)
        except (KeyError, ValueError) as e:
            raise CheckpointError(f"checkpoint {self.path}: optimizer state does not fit: "
                                  f"{e}") from None


def read_checkpoint(path):
    """Read and check a checkpoint directory's config.json; returns a Checkpoint."""
    path = Path(path)
    try:
        meta = json.loads((path / "config.json").read_text())
    except FileNotFoundError:
        raise CheckpointError(f"{path} is not a checkpoint: config.json is missing") from None
    except (ValueError, UnicodeDecodeError) as e:
        raise CheckpointError(f"checkpoint {path} is corrupted: config.json is not valid JSON "
                              f"({e})") from None
    if not isinstance(meta, dict) or meta.get("format") != CHECKPOINT_FORMAT:
        raise CheckpointError(f"{path}/config.json is not a minitransformer checkpoint")
    try:
        return Checkpoint(path, meta)
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"checkpoint {path} is corrupted: bad config.json ({e})") from None


def load_checkpoint(path, device="cpu"):
    """(model in eval mode on `device`, tokenizer, Checkpoint) from an --out directory or a
    checkpoint directory."""
    ckpt = read_checkpoint(find_checkpoint(path))
    model = ckpt.model(device)
    model.eval()
    return model, ckpt.tokenizer, ckpt
