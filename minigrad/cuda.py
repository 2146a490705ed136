"""torch.cuda's most used calls, for code written against PyTorch: whether the GPU backend
can run, how many GPUs there are, and waiting for the GPU's queued work; and
torch.cuda.amp's autocast and GradScaler (amp.py)."""
from minigrad import backend
from minigrad.amp import cuda_amp as amp  # noqa: F401


def is_available():
    """True when CuPy imports and finds an NVIDIA GPU (as mg.cuda_is_available())."""
    return backend.cuda_is_available()


def device_count():
    """The number of NVIDIA GPUs CuPy sees; 0 without CuPy or a GPU."""
    return backend.get("cuda").xp.cuda.runtime.getDeviceCount() if is_available() else 0


def synchronize():
    """Wait until the GPU has run every kernel queued so far. Kernels run asynchronously,
    so a timer read without this measures only their launch."""
    backend.get("cuda").synchronize()   # no GPU: backend.get's clear error
