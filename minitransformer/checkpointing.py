"""GPT training checkpoints on disk: writing one so that a crash or power loss at any moment
leaves a complete one, and reading one back (checked against the sha256 it recorded).

A checkpoint is a directory `OUT/ckpt-NNNNNNN/` (N = optimiser steps taken) holding
`model.safetensors`, `optimizer.safetensors` and `config.json` (model config, tokenizer, train
arguments, RNG state, iteration, a float16 run's GradScaler state, and the sha256 of the two
weight files). It is written into a
temporary directory, renamed into place, and only then does the one-line file `OUT/latest` get
atomically replaced to name it; older checkpoints are deleted last. Each rename is made durable
(an fsync of OUT) before the next step, so even after a power loss `latest` names a complete
checkpoint that still exists.
"""
import hashlib
import json
import os
import re
import secrets
import shutil
import time
from contextlib import contextmanager
from pathlib import Path

import minigrad as mg
from minigrad.checkpoint import CheckpointError as _FileCheckpointError
from minitransformer.data import write_atomic, fsync_directory
from minitransformer.gpt import GPT, GPTConfig
from minitransformer.tokenizer import CharTokenizer

CHECKPOINT_FORMAT = "minitransformer-gpt-checkpoint"
CHECKPOINT_VERSION = 1


class CheckpointError(RuntimeError):
    """A checkpoint that is missing, corrupted, or does not fit what was asked of it."""


# ckpt-<iter>, or ckpt-<iter>-<pid>-<ns> when the iteration `latest` names is saved again
_CHECKPOINT_NAME = re.compile(r"ckpt-(\d{7})(-\d+-\d+)?")


@contextmanager
def run_lock(out, remove_if_unused=False):
    """Hold OUT/.lock while a training run writes to OUT: a second run started on the same
    OUT fails at once instead of interleaving its checkpoints (and deleting the other's
    temporary files). An advisory POSIX lock, released when the process ends, however it
    ends; where fcntl is missing (Windows) there is no lock. With remove_if_unused (OUT was
    made for this run), an OUT the run left holding only the lock is removed, still under
    the lock: a run refused at its start leaves no directory behind."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:
        yield
        return
    with open(out / ".lock", "a") as f:
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise CheckpointError(f"another training run is writing to {out} (it holds "
                                  f"{out / '.lock'}); wait for it to end, or choose another "
                                  f"--out") from None
        try:
            yield
        finally:
            if remove_if_unused and [p.name for p in out.iterdir()] == [".lock"]:
                (out / ".lock").unlink()
                out.rmdir()


def checkpoint_dirs(out, complete=True):
    """The checkpoint directories in OUT, oldest first; with complete=True only those with a
    config.json (the last file a checkpoint gets before it is renamed into place)."""
    out = Path(out)
    if not out.is_dir():
        return []
    found = [d for d in out.iterdir() if _CHECKPOINT_NAME.fullmatch(d.name) and d.is_dir()
             and (not complete or (d / "config.json").is_file())]
    return sorted(found, key=lambda d: (int(d.name[5:12]), d.stat().st_mtime_ns))


def save_checkpoint(out, model, optimizer, *, train_args, tokenizer, iter, elapsed_s, rng,
                    val_loss=None, data_sha256=None, scaler=None):
    """Write a complete checkpoint directory and point OUT/latest at it (see module doc).
    `train_args` is the run's TrainConfig as a dict; `scaler` a GradScaler's state_dict
    (float16 runs; None otherwise)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    current = pointed_checkpoint(out)
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
                "train": train_args, "iter": iter, "elapsed_s": elapsed_s,
                "val_loss": val_loss, "rng": rng, "data_sha256": data_sha256,
                "scaler": scaler,
                "files": {name: _file_sha256(tmp / name)
                          for name in ("model.safetensors", "optimizer.safetensors")}}
        write_atomic(tmp / "config.json", json.dumps(meta, indent=1).encode())
        if final.exists():
            shutil.rmtree(final)   # a complete but unreferenced leftover of a killed run
        os.rename(tmp, final)
        fsync_directory(out)       # the new directory must be on disk before `latest` names it
        write_atomic(out / "latest", (final.name + "\n").encode())   # the commit point
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    for old in out.iterdir():    # only now (`latest` durably replaced) may older ones go
        if old != final and old.is_dir() and (_CHECKPOINT_NAME.fullmatch(old.name) or
                                              old.name.startswith(".ckpt-tmp-")):
            shutil.rmtree(old, ignore_errors=True)
        elif old.is_file() and old.name.startswith(".") and old.name.endswith(".tmp"):
            old.unlink(missing_ok=True)   # a write_atomic temporary of a killed run
    return final


def _file_sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def pointed_checkpoint(out):
    """The checkpoint directory OUT/latest names, or None if there is no OUT/latest."""
    pointer = Path(out) / "latest"
    if not pointer.is_file():
        return None
    try:
        name = pointer.read_text(encoding="utf-8").strip()
    except UnicodeDecodeError:
        name = None
    if name is None or not _CHECKPOINT_NAME.fullmatch(name):
        raise CheckpointError(f"{pointer} is corrupted: it should hold the name of one of the "
                              f"ckpt-* directories beside it, not {name!r}")
    return Path(out) / name


def find_checkpoint(path):
    """A checkpoint directory: `path` itself if it is one, else the one `path/latest` names."""
    path = Path(path)
    if (path / "config.json").is_file():
        return path
    target = pointed_checkpoint(path)
    if target is None:
        if not path.exists():
            raise CheckpointError(f"{path} does not exist; pass the --out directory of a "
                                  f"training run (or one of its ckpt-* directories)")
        complete = checkpoint_dirs(path)
        if complete:                  # `latest` was lost: the newest complete checkpoint
            return complete[-1]
        raise CheckpointError(f"no checkpoint in {path} (no 'latest' file or config.json); "
                              f"train first, or check the directory")
    if not (target / "config.json").is_file():
        raise CheckpointError(f"{path}/latest names {target.name}, which is missing or "
                              f"incomplete; write the name of a complete ckpt-* directory "
                              f"there, or train into another --out")
    return target


class Checkpoint:
    """A checkpoint read from disk: its metadata, model config and tokenizer; `model(device)`
    builds the model, `restore(model, optimizer, scaler)` loads weights, optimiser state and
    a float16 run's loss scale."""

    def __init__(self, path, meta):
        self.path, self.meta = Path(path), meta
        for key, kind in (("train", dict), ("iter", int), ("elapsed_s", (int, float)),
                          ("rng", dict), ("files", dict)):
            if not isinstance(meta.get(key), kind) or isinstance(meta.get(key), bool):
                raise ValueError(f"{key!r} is missing or of the wrong type")
        if "data" not in meta["rng"]:
            raise ValueError("'rng' lacks the data sampler's state")
        self.config = GPTConfig.from_dict(meta["model"])
        self.tokenizer = CharTokenizer.from_dict(meta["tokenizer"])
        if self.tokenizer.vocab_size != self.config.vocab_size:
            raise ValueError(f"its tokenizer has {self.tokenizer.vocab_size} characters, its "
                             f"model a vocabulary of {self.config.vocab_size}")

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
        """The checkpoint's weights into `model`, a GPT of the checkpoint's shape: n_head
        changes no weight's shape but every output, so the configs are compared too."""
        own = getattr(model, "config", None)
        if isinstance(own, GPTConfig):
            saved = self.config.to_dict()
            for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd", "bias"):
                if getattr(own, name) != saved[name]:
                    raise CheckpointError(f"checkpoint {self.path} does not fit this model: "
                                          f"it has {name}={saved[name]}, the model "
                                          f"{name}={getattr(own, name)} (checkpoint config "
                                          f"{self.config})")
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

    def restore(self, model, optimizer, scaler=None):
        """Weights, optimiser state, and into an enabled `scaler` (a float16 run) the saved
        loss scale; a checkpoint of a float32 run has none, and the scaler starts afresh."""
        self.load_weights(model)
        tensors, metadata = self._tensors("optimizer.safetensors")
        try:
            optimizer.load_flat_state_dict(tensors, metadata)
        except (KeyError, ValueError) as e:
            raise CheckpointError(f"checkpoint {self.path}: optimizer state does not fit: "
                                  f"{e}") from None
        saved = self.meta.get("scaler")
        if scaler is None or not scaler.is_enabled():
            return
        if saved is None and self.meta["train"].get("dtype") == "float16":
            # every float16 checkpoint has one: a fresh scale would not resume exactly
            raise CheckpointError(f"checkpoint {self.path} is corrupted: it is of a "
                                  f"--dtype float16 run but config.json has no GradScaler "
                                  f"state (\"scaler\")")
        if saved is not None:
            try:
                scaler.load_state_dict(saved)       # (which refuses a NaN, inf or 0 scale)
            except (KeyError, TypeError, ValueError, AttributeError, RuntimeError) as e:
                raise CheckpointError(f"checkpoint {self.path} is corrupted: the GradScaler "
                                      f"state in config.json is not valid ({e!r})") from None


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
    version = meta.get("version")
    if not isinstance(version, int) or isinstance(version, bool) or \
            not 1 <= version <= CHECKPOINT_VERSION:
        newer = isinstance(version, int) and version > CHECKPOINT_VERSION
        raise CheckpointError(f"checkpoint {path} has format version {version!r}; this "
                              f"minitransformer reads versions 1 to {CHECKPOINT_VERSION}" +
                              ("; it was written by a newer one: upgrade" if newer else ""))
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
