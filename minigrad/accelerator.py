"""torch.accelerator's calls, the device-generic spelling PyTorch's newer tutorials use
(`device = torch.accelerator.current_accelerator().type if torch.accelerator.is_available()
else "cpu"`). minigrad's one accelerator is the GPU of its CuPy backend, so each call is
torch.cuda's (minigrad/cuda.py); without one, as PyTorch's CPU build: is_available() False,
current_accelerator() None, device_count() 0, and a call that needs the device a
RuntimeError."""
from minigrad import backend, cuda


def is_available():
    """Whether an accelerator (here a CUDA GPU CuPy can use) is there to run on."""
    return cuda.is_available()


def current_accelerator(check_available=False):
    """The accelerator's device, mg.device("cuda"), or None where there is none (minigrad
    has no build without a GPU backend to tell apart: `check_available` changes nothing)."""
    return backend.device_name("cuda") if cuda.is_available() else None


def device_count():
    """How many accelerator devices there are (0 with none)."""
    return cuda.device_count()


def _need(op):
    if not cuda.is_available():
        raise RuntimeError(f"accelerator.{op}: cannot access an accelerator device when none "
                           f"is available (torch.accelerator.is_available() is False)")


def current_device_index():
    """The index of the accelerator device in use."""
    _need("current_device_index")
    return cuda.current_device()


def set_device_index(device, /):
    """Use that device: the one minigrad computes on (see mg.cuda.set_device)."""
    _need("set_device_index")
    cuda.set_device(device)


def synchronize(device=None, /):
    """Wait until the accelerator has run all the work queued on it."""
    _need("synchronize")
    cuda.synchronize(device)


def empty_cache():
    """Hand the accelerator's cached, unused memory back (mg.cuda.empty_cache)."""
    _need("empty_cache")
    cuda.empty_cache()


def memory_allocated(device_index=None, /):
    """Bytes held by the accelerator's tensors (mg.cuda.memory_allocated)."""
    _need("memory_allocated")
    return cuda.memory_allocated(device_index)


current_device_idx, set_device_idx = current_device_index, set_device_index   # older names
