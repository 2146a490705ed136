"""--dtype: the trainer's precision, as nanoGPT's train.py. float32 (the default), or float16
mixed precision: the forward and loss under mg.autocast (the matrix products in float16,
softmax, layer norm and the loss in float32; minigrad/amp.py), the parameters and AdamW's
state kept in float32, and the loss scaled by a GradScaler so that small float16 gradients do
not flush to zero (a step whose gradients overflow is skipped and the scale halved).

float16 is for the GPU (--device cuda): NumPy has no float16 arithmetic of its own, so on
the CPU each float16 product is converted and runs slower than in float32. bfloat16,
nanoGPT's choice where the GPU has it, does not exist in NumPy or CuPy."""
import contextlib
import mmap

import numpy as np

import minigrad as mg

DTYPES = ("float32", "float16")


def check_dtype(dtype, what="TrainConfig: dtype"):
    """Refuse a dtype the trainer cannot run, saying what it can."""
    if dtype == "bfloat16":
        raise ValueError(f"{what} bfloat16 is not available: NumPy and CuPy have no "
                         f"bfloat16; use float16 (mixed precision, meant for --device cuda) "
                         f"or float32")
    if dtype not in DTYPES:
        raise ValueError(f"{what} must be one of {', '.join(DTYPES)}, got {dtype!r}")


def device_type(device):
    return str(device).partition(":")[0]


def autocast(dtype, device):
    """nanoGPT's ctx: autocast on `device` for float16, nothing for float32."""
    if dtype == "float16":
        return mg.autocast(device_type(device), dtype=mg.float16)
    return contextlib.nullcontext()


def grad_scaler(dtype, device):
    """A GradScaler, disabled (every call a no-op, the float32 step unchanged) for float32."""
    return mg.amp.GradScaler(device_type(device), enabled=dtype == "float16")


class ScaledLoss:
    """The loss of ProcessDataParallel's parts under float16: the forward under autocast and,
    in training (a graph), times the GradScaler's scale, so that each worker's backward runs
    on the scaled loss as scaler.scale(loss).backward() does in one process. The workers are
    forked with a snapshot of this object, so the scale lives in memory shared with them:
    set `value` before each step. An evaluation (no graph) gets the plain loss."""

    def __init__(self, device):
        self.device = device
        # made before the fork: every process reads the one float
        self._shared = np.ndarray((1,), np.float32, buffer=mmap.mmap(-1, 4))
        self._shared[0] = 1.0

    @property
    def value(self):
        return float(self._shared[0])

    @value.setter
    def value(self, scale):
        self._shared[0] = scale

    def __call__(self, model, x, y):
        with autocast("float16", self.device):
            loss = model(x, y)[1]
        if not loss.requires_grad:
            return loss
        return loss * mg.tensor(self._shared[0], dtype=mg.float32, device=loss.device)
