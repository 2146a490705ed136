"""The configuration of a training run: every knob of `minitransformer train`, nanoGPT's two
presets of them, and the checks that refuse a value (or a run too big for this machine's
memory) before any work starts."""
import math
import numbers
import os
from dataclasses import dataclass, asdict, fields

from minigrad import optim
from minigrad.backend import MATMUL_PRECISIONS
from minigrad.data_parallel import default_processes
from minigrad.host_memory import available_host_bytes
from minitransformer.gpt import GPTConfig
from minitransformer.precision import check_dtype

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


@dataclass
class TrainConfig:
    """Every knob of a training run (defaults: the "baby" preset)."""
    data: str = None              # a UTF-8 text; None: $MINITRANSFORMER_DATA or Tiny Shakespeare
    out: str = "out-baby"
    device: str = "cpu"
    seed: int = 1337
    matmul_precision: str = "high"  # TF32 GEMMs on an NVIDIA GPU, as nanoGPT; CPU: float32
    processes: int = None         # CPU processes sharing each batch; None: one per core
    dtype: str = "float32"        # or "float16": autocast + GradScaler (precision.py)
    # model
    n_layer: int = 4
    n_head: int = 4
    n_embd: int = 128
    block_size: int = 64
    dropout: float = 0.0
    bias: bool = False            # nanoGPT's default for this run
    # optimisation
    batch_size: int = 12
    grad_accum: int = 1           # micro-batches of batch_size per step (nanoGPT's
                                  # gradient_accumulation_steps): the same step, less memory
    max_iters: int = 2000
    lr: float = 1e-3
    min_lr: float = 1e-4
    warmup_iters: int = 100
    lr_decay_iters: int = None    # None: max_iters
    weight_decay: float = 0.1
    beta1: float = 0.9
    beta2: float = 0.99
    grad_clip: float = 1.0        # 0 disables clipping
    checkpoint_activations: bool = False  # recompute each block's activations in backward:
                                          # the same run in less memory, ~1/3 more compute
    # evaluation and output
    eval_interval: int = 250
    eval_iters: int = 20
    log_interval: int = 10        # read the loss (a wait for the device) every N steps
    progress: bool = True
    plot: bool = True

    @classmethod
    def from_preset(cls, preset="baby", **overrides):
        if preset not in PRESETS:
            raise ValueError(f"unknown preset {preset!r}; valid: {sorted(PRESETS)}")
        values = {**PRESETS[preset], "out": f"out-{preset}"}
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values).check_schedule()

    def check_schedule(self):
        """Refuse min_lr above lr, where the cosine would climb (a new run, or a resume that
        sets either; a run saved before this check resumes as it was). Returns self."""
        if self.min_lr > self.lr:
            raise ValueError(f"TrainConfig: min_lr ({self.min_lr:g}) must not exceed the peak "
                             f"learning rate lr ({self.lr:g}): the schedule decays from the "
                             f"peak down to it (a lower --lr needs a lower --min-lr too)")
        return self

    def __post_init__(self):
        for f in fields(self):              # the types first: a config may come from JSON
            value = getattr(self, f.name)
            if value is not None and not _has_type(value, f.type):
                kind = {int: "an integer", float: "a finite number", bool: "true or false",
                        str: "a string"}[f.type]
                raise ValueError(f"TrainConfig: {f.name} must be {kind}, got {value!r}")
        for name in ("batch_size", "grad_accum", "eval_interval", "eval_iters", "log_interval"):
            if getattr(self, name) < 1:
                raise ValueError(f"TrainConfig: {name} must be >= 1, got {getattr(self, name)}")
        for name in ("max_iters", "warmup_iters", "lr", "min_lr", "grad_clip", "weight_decay",
                     "seed"):
            if getattr(self, name) < 0:
                raise ValueError(f"TrainConfig: {name} must be >= 0, got {getattr(self, name)}")
        if self.processes is not None and self.processes < 1:
            raise ValueError(f"TrainConfig: processes must be >= 1 (or None: one per core), "
                             f"got {self.processes}")
        if self.processes not in (None, 1) and self.device != "cpu":
            raise ValueError(f"TrainConfig: processes={self.processes} splits batches over "
                             f"CPU cores; on {self.device} train in one process (processes=1)")
        if self.lr_decay_iters is not None and self.lr_decay_iters < 0:
            raise ValueError(f"TrainConfig: lr_decay_iters must be >= 0, got "
                             f"{self.lr_decay_iters}")
        check_dtype(self.dtype)
        if self.matmul_precision not in MATMUL_PRECISIONS:
            raise ValueError(f"TrainConfig: matmul_precision must be one of "
                             f"{', '.join(MATMUL_PRECISIONS)}, got "
                             f"{self.matmul_precision!r}")

    def processes_used(self):
        """How many processes share each batch: `processes`, else one per core (up to 8)
        on the CPU, never more than the batch's sequences; 1 on a GPU."""
        if self.device != "cpu":
            return 1
        n = default_processes() if self.processes is None else self.processes
        return min(n, self.batch_size)

    @property
    def decay_iters(self):
        return self.max_iters if self.lr_decay_iters is None else self.lr_decay_iters

    def to_dict(self):
        """The arguments as saved in a checkpoint, with the schedule's decay_iters resolved
        (a resume with a larger max_iters keeps the schedule; see the module doc), and the
        processes too: a resume on a machine with other cores splits batches the same way
        (each part draws its own dropout masks), so it stays exact."""
        return {**asdict(self), "lr_decay_iters": self.decay_iters,
                "processes": self.processes_used()}

    def model_config(self, vocab_size):
        return GPTConfig(vocab_size=vocab_size, block_size=self.block_size,
                         n_layer=self.n_layer, n_head=self.n_head, n_embd=self.n_embd,
                         dropout=self.dropout, bias=self.bias)

    def lr_at(self, it):
        """nanoGPT's schedule; a run shorter than its warmup warms up over the whole run."""
        warmup = min(self.warmup_iters, self.decay_iters)
        return optim.warmup_cosine(it, self.lr, self.min_lr, warmup, self.decay_iters)


def _has_type(value, kind):
    if kind is bool or isinstance(value, bool):
        return isinstance(value, bool) and kind is bool
    if kind is int:
        return isinstance(value, numbers.Integral)
    if kind is float:
        return isinstance(value, numbers.Real) and math.isfinite(value)
    return isinstance(value, kind)


def step_bytes(cfg, vocab_size):
    """Roughly what a float32 training step of `cfg` holds at its peak (0.85-1.0 of the peak
    RSS measured of the baby and small presets, blocks 64 to 4096): per layer and token,
    ~16·C floats kept for backward and an H·T row of attention weights, a quarter more with
    dropout's masks; one layer's attention gradient at a time; the logits three times; the
    parameters four times (weights, gradients, AdamW's two moments)."""
    c, h, t, n = cfg.n_embd, cfg.n_head, cfg.block_size, cfg.n_layer
    tokens = cfg.batch_size * t                     # one micro-batch (--grad-accum)
    per_token = (16 * c + h * t) * (1.25 if cfg.dropout > 0 else 1.0)
    params = 12 * n * c * c + (vocab_size + t) * c
    # --checkpoint-activations keeps each block's input, and one block's activations at a
    # time (the one being recomputed)
    kept = tokens * (n * c + per_token) if cfg.checkpoint_activations else n * tokens * per_token
    return 4 * (kept + tokens * h * t + 3 * tokens * vocab_size + 4 * params)


MEMORY_CHECK_ENV = "MINITRANSFORMER_MEMORY_CHECK"     # "0": skip check_memory


def check_memory(cfg, vocab_size, available=None):
    """Refuse a CPU run whose step cannot fit in memory: Linux's OOM killer would end it
    mid-step without a word. The estimate is at or a little under the measured peaks, so a
    refusal is a run that would not fit; MINITRANSFORMER_MEMORY_CHECK=0 skips the check
    (swap, or memory about to be freed)."""
    if cfg.device != "cpu" or os.environ.get(MEMORY_CHECK_ENV) == "0":
        return                     # CuPy raises OutOfMemoryError, which the CLI reports
    available = available_host_bytes() if available is None else available
    need = step_bytes(cfg, vocab_size)
    if available is not None and need > available:
        raise ValueError(
            f"a training step of this run needs about {need / 2 ** 30:.1f} GiB of memory "
            f"({cfg.n_layer} layers of {cfg.batch_size}x{cfg.block_size} tokens, attention "
            f"{cfg.n_head}x{cfg.block_size}x{cfg.block_size} per sequence), more than the "
            f"{available / 2 ** 30:.1f} GiB free; lower --batch-size (--grad-accum N keeps "
            f"the step's size), or --block-size, or pass --checkpoint-activations "
            f"({MEMORY_CHECK_ENV}=0 runs it anyway)")
