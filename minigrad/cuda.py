"""torch.cuda's calls, for code written against PyTorch (training scripts, benchmarks):
whether the GPU backend can run and which GPU it is, its generator's seed and state,
waiting for queued work, events and streams (thin wrappers of CuPy's), memory figures
(cuda_memory.py) and torch.cuda.amp's autocast and GradScaler (amp.py).

minigrad runs on one GPU, CuPy's current device (device 0 unless CUDA_VISIBLE_DEVICES says
otherwise); calls naming another GPU are refused. Without CuPy or a GPU each call behaves as
in PyTorch's CPU build where that is sensible: is_available() is False, device_count() 0,
seeding is silently accepted, memory figures are 0, and a question only a GPU can answer
(current_device, get_device_name, Event, ...) raises the RuntimeError saying what to install.
"""
from minigrad import backend
from minigrad.amp import cuda_amp as amp  # noqa: F401


def is_available():
    """True when CuPy imports and finds an NVIDIA GPU (as mg.cuda_is_available())."""
    return backend.cuda_is_available()


def device_count():
    """The number of NVIDIA GPUs CuPy sees; 0 without CuPy or a GPU."""
    return _cupy().cuda.runtime.getDeviceCount() if is_available() else 0


def _cupy():
    """The CuPy module; without CuPy or a GPU, backend.get's RuntimeError saying what to
    install."""
    return backend.get("cuda").xp


def _index(device, op):
    """The GPU index `device` names (None: the current one; an int, "cuda", "cuda:N", or a
    torch.device-like object); a negative int as it is (torch's "no device")."""
    if device is None:
        return current_device()
    if backend.is_integer(device):
        index = int(device)
    else:
        name = str(device)
        kind, _, number = name.partition(":")
        if kind != "cuda" or (number and not number.isdigit()):
            raise ValueError(f"{op}: expected a CUDA device (an index, 'cuda' or 'cuda:N'), "
                             f"got {device!r}")
        index = int(number) if number else current_device()
    if index >= 0:
        _cupy()                                 # no GPU: backend.get's clear error
        count = device_count()
        if index >= count:
            raise ValueError(f"{op}: there is no GPU {index}; this machine has {count} "
                             f"(valid: 0..{count - 1})")
    return index


def _one_gpu(index, op):
    """Refuse a GPU other than the one minigrad computes on."""
    if index >= 0 and index != current_device():
        raise ValueError(f"{op}: minigrad runs on one GPU, device {current_device()}; to use "
                         f"GPU {index}, start the program with CUDA_VISIBLE_DEVICES={index}")


def synchronize(device=None):
    """Wait until the GPU has run every kernel queued so far. Kernels run asynchronously,
    so a timer read without this measures only their launch."""
    b = backend.get("cuda")             # no GPU: backend.get's clear error
    if device is not None:
        _one_gpu(_index(device, "synchronize"), "synchronize")
    b.synchronize()


def init():
    """Start the GPU backend now rather than at the first GPU tensor (a RuntimeError
    saying what to install where CuPy or a GPU is missing, as torch's CPU build raises)."""
    backend.get("cuda")


def is_initialized():
    """Whether the GPU backend has been started (by init() or a first GPU tensor)."""
    return any(b.name == "cuda" for b in backend.started())


def current_device():
    """The index of the GPU minigrad computes on (CuPy's current device)."""
    return _cupy().cuda.runtime.getDevice()


def set_device(device):
    """Accepted for the GPU minigrad already uses (a negative index: nothing, as torch's);
    another one is refused: minigrad runs on one GPU, chosen by CUDA_VISIBLE_DEVICES."""
    _one_gpu(_index(device, "set_device"), "set_device")


class device:
    """`with mg.cuda.device(0): ...`, as torch.cuda.device: a block run on that GPU, which
    must be the one minigrad uses (None or a negative index: nothing)."""

    def __init__(self, device):
        self.device = device

    def __enter__(self):
        if self.device is not None and not (backend.is_integer(self.device)
                                            and self.device < 0):
            set_device(self.device)
        return self

    def __exit__(self, *exc):
        return False


class _DeviceProperties:
    """What get_device_properties gives: the fields of torch's that training scripts read."""

    def __init__(self, props):
        name = props["name"]
        self.name = name.decode() if isinstance(name, bytes) else str(name)
        self.total_memory = int(props["totalGlobalMem"])
        self.major, self.minor = int(props["major"]), int(props["minor"])
        self.multi_processor_count = int(props["multiProcessorCount"])

    def __repr__(self):
        return (f"_CudaDeviceProperties(name='{self.name}', major={self.major}, "
                f"minor={self.minor}, total_memory={self.total_memory // 2 ** 20}MB, "
                f"multi_processor_count={self.multi_processor_count})")


def get_device_properties(device=None):
    """name, total_memory (bytes), major, minor (the compute capability) and
    multi_processor_count of a GPU (the current one by default)."""
    index = _index(device, "get_device_properties")
    return _DeviceProperties(_cupy().cuda.runtime.getDeviceProperties(max(index, 0)))


def get_device_name(device=None):
    """The GPU's name, e.g. 'NVIDIA H100 80GB HBM3'."""
    return get_device_properties(device).name


def get_device_capability(device=None):
    """The GPU's compute capability as (major, minor): (8, 0) for an A100."""
    p = get_device_properties(device)
    return p.major, p.minor


def is_bf16_supported(including_emulation=True):
    """False: minigrad has no bfloat16 dtype (neither NumPy nor CuPy has one), so no
    bfloat16 tensor can be made on any GPU; autocast uses float16."""
    return False


def is_tf32_supported():
    """Whether the GPU has TensorFloat-32 tensor cores (compute capability 8.0, the A100,
    or later): what set_float32_matmul_precision("high") turns on."""
    return is_available() and get_device_capability() >= (8, 0)


# -- the GPU's generator (the draws of mg.randn(..., device="cuda") etc.) --------------------

def manual_seed(seed):
    """Seed the GPU's generator only (mg.manual_seed seeds every device's). Without a GPU,
    accepted and kept for a GPU backend started later, as torch's."""
    from minigrad.generator import _check_seed
    seed = _check_seed(seed, "cuda.manual_seed")
    backend.set_device_seed("cuda", seed)


manual_seed_all = manual_seed          # (one GPU)


def seed():
    """Seed the GPU's generator from the operating system's entropy (None, as torch's)."""
    from minigrad.generator import _fresh_seed
    manual_seed(_fresh_seed())


seed_all = seed


def initial_seed():
    """The seed the GPU's generator started from (cuda.manual_seed's or mg.manual_seed's,
    whichever came last)."""
    _cupy()
    return backend.device_seed("cuda")


def _bit_generator(op):
    # a CuPy Generator's cuRAND states live in one device array, `_state` (CuPy's name)
    rng = backend.get("cuda").rng
    if type(rng).__name__ == "_RefusingRng":     # vmap's wrapper (func_vmap.py)
        rng = rng.rng
    state = getattr(getattr(rng, "bit_generator", None), "_state", None)
    if state is None:
        raise RuntimeError(f"{op}: this CuPy's generator ({type(rng).__name__}) keeps no "
                           f"state minigrad can read")
    return state


def get_rng_state(device="cuda"):
    """The GPU generator's state as a uint8 CPU tensor (its seed, 8 bytes, then CuPy's
    cuRAND states: 1.5 MiB in recent CuPy, not torch's 16 bytes); for set_rng_state."""
    _one_gpu(_index(device, "get_rng_state"), "get_rng_state")
    from minigrad.tensor import Tensor
    host = backend.get("cpu").xp
    raw = backend.get("cuda").to_numpy(_bit_generator("get_rng_state")).view(host.uint8)
    seed = host.frombuffer(backend.device_seed("cuda").to_bytes(8, "little"), host.uint8)
    return Tensor(host.concatenate([seed, raw.ravel()]))


def set_rng_state(new_state, device="cuda"):
    """Put the GPU generator back in a state get_rng_state() returned. Without a GPU the
    state is checked and ignored (torch's CPU build queues it for a GPU that never comes)."""
    from minigrad.tensor import Tensor
    if not isinstance(new_state, Tensor) or new_state.dtype != backend.uint8 or \
            new_state.ndim != 1:
        raise TypeError(f"cuda.set_rng_state: expected the uint8 tensor get_rng_state() "
                        f"returned, got {getattr(new_state, 'dtype', type(new_state).__name__)}")
    if not is_available():
        return
    _one_gpu(_index(device, "set_rng_state"), "set_rng_state")
    state = _bit_generator("set_rng_state")
    raw = new_state.numpy().tobytes()
    if len(raw) != 8 + state.nbytes:
        raise ValueError(f"cuda.set_rng_state: a state of {8 + state.nbytes} bytes is "
                         f"needed (get_rng_state()'s on this GPU), got {len(raw)}")
    host = backend.get("cpu").xp
    state[...] = _cupy().asarray(host.frombuffer(raw[8:], state.dtype).reshape(state.shape))
    backend.set_device_seed("cuda", int.from_bytes(raw[:8], "little"), reseed=False)


def get_rng_state_all():
    """[get_rng_state()] (one GPU); [] without a GPU, as torch's."""
    return [get_rng_state()] if is_available() else []


def set_rng_state_all(new_states):
    for state in new_states:
        set_rng_state(state)


# -- events and streams: CuPy's, under torch's names -----------------------------------------

class Event:
    """A marker in a stream's queue of kernels, as torch.cuda.Event; with enable_timing=True
    two of them time the GPU work between them:

        start, end = mg.cuda.Event(enable_timing=True), mg.cuda.Event(enable_timing=True)
        start.record(); step(); end.record(); end.synchronize()
        ms = start.elapsed_time(end)
    """

    def __init__(self, enable_timing=False, blocking=False, interprocess=False):
        if interprocess and enable_timing:      # (CUDA refuses; CuPy in its own words)
            raise ValueError("cuda.Event: an interprocess event cannot time; make it with "
                             "enable_timing=False")
        self.enable_timing = enable_timing
        self.event = _cupy().cuda.Event(block=blocking, disable_timing=not enable_timing,
                                        interprocess=interprocess)
        self.recorded = False

    def record(self, stream=None):
        """Mark the point reached in `stream`'s queue (the current stream by default)."""
        self.event.record(None if stream is None else stream.stream)
        self.recorded = True

    def wait(self, stream=None):
        """Make `stream` (the current one by default) wait for this event."""
        (stream or current_stream()).wait_event(self)

    def query(self):
        """Whether the work queued before record() has finished."""
        return bool(self.event.done)

    def synchronize(self):
        """Wait for the work queued before record()."""
        self.event.synchronize()

    def elapsed_time(self, end_event):
        """Milliseconds of GPU time from this event to `end_event` (both recorded, both
        made with enable_timing=True)."""
        if not (self.enable_timing and end_event.enable_timing):
            raise RuntimeError("Event.elapsed_time: both events must be made with "
                               "mg.cuda.Event(enable_timing=True)")
        if not (self.recorded and end_event.recorded):
            raise RuntimeError("Event.elapsed_time: record() both events first")
        return float(_cupy().cuda.get_elapsed_time(self.event, end_event.event))

    def __repr__(self):
        return f"<minigrad.cuda.Event enable_timing={self.enable_timing}>"


class Stream:
    """A queue of GPU work, as torch.cuda.Stream (CuPy's Stream underneath, `.stream`).
    `with mg.cuda.stream(s):` (or `with s:`) queues minigrad's kernels on it."""

    def __init__(self, device=None, priority=0):
        cupy = _cupy()
        if device is not None:
            _one_gpu(_index(device, "Stream"), "Stream")
        self.stream = cupy.cuda.Stream(non_blocking=True, priority=priority or None)

    @classmethod
    def _wrap(cls, cupy_stream):
        s = cls.__new__(cls)
        s.stream = cupy_stream
        return s

    @property
    def cuda_stream(self):
        """The CUDA stream's handle, as an int."""
        return self.stream.ptr

    def query(self):
        """Whether all the work queued on it has finished."""
        return bool(self.stream.done)

    def synchronize(self):
        """Wait for all the work queued on it."""
        self.stream.synchronize()

    def wait_event(self, event):
        """Make work queued after this call wait for `event`."""
        self.stream.wait_event(event.event)

    def record_event(self, event=None):
        """Record `event` (a new one if None) on this stream; returns it."""
        event = event or Event()
        event.record(self)
        return event

    def wait_stream(self, stream):
        """Make work queued after this call wait for what `stream` has queued so far."""
        self.wait_event(stream.record_event())

    def __enter__(self):
        self.stream.__enter__()
        return self

    def __exit__(self, *exc):
        return self.stream.__exit__(*exc)

    def __eq__(self, other):
        return isinstance(other, Stream) and self.stream.ptr == other.stream.ptr

    def __hash__(self):
        return hash(self.stream.ptr)

    def __repr__(self):
        return f"<minigrad.cuda.Stream cuda_stream={self.stream.ptr:#x}>"


def current_stream(device=None):
    """The stream minigrad's kernels are queued on now."""
    cupy = _cupy()
    if device is not None:
        _one_gpu(_index(device, "current_stream"), "current_stream")
    return Stream._wrap(cupy.cuda.get_current_stream())


def default_stream(device=None):
    """The GPU's default (null) stream."""
    cupy = _cupy()
    if device is not None:
        _one_gpu(_index(device, "default_stream"), "default_stream")
    return Stream._wrap(cupy.cuda.Stream.null)


class stream:
    """`with mg.cuda.stream(s):` queues the block's kernels on stream s; stream(None) does
    nothing (also without a GPU, as torch's)."""

    def __init__(self, stream):
        self.stream = stream

    def __enter__(self):
        if self.stream is not None:
            self.stream.__enter__()
        return self.stream

    def __exit__(self, *exc):
        if self.stream is not None:
            self.stream.__exit__(*exc)
        return False


from minigrad.cuda_memory import (  # noqa: E402,F401  (torch.cuda's memory calls)
    OutOfMemoryError, empty_cache, mem_get_info, memory_allocated, max_memory_allocated,
    memory_reserved, max_memory_reserved, reset_peak_memory_stats, reset_max_memory_allocated,
    memory_stats, memory_summary)
