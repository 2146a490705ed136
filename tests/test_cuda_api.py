"""mg.cuda's torch.cuda calls (and mg.accelerator's, which are they) on the CPU: without a
GPU (compared with torch's CPU build), and their logic on a fake CuPy (a few counters and
classes standing in for CuPy's runtime, memory pool, hooks, events and streams). The real
GPU's figures: tests/test_gpu.py."""
import types

import numpy as np
import pytest

import minigrad as mg
from minigrad import backend, cuda_memory
from minigrad.autograd import Function


@pytest.fixture(autouse=True)
def _fresh(monkeypatch):
    """Each test starts with no GPU backend built, its own seeds and peaks."""
    monkeypatch.setattr(backend, "_BACKENDS", {"cpu": backend.get("cpu")})
    monkeypatch.setattr(backend, "_DEVICE_SEEDS", {})
    monkeypatch.setattr(cuda_memory, "_PEAKS", cuda_memory._Peaks())
    yield
    mg.manual_seed(0)


@pytest.fixture
def no_gpu(monkeypatch):
    """No CuPy (so these run the same on a GPU machine)."""
    def missing():
        raise RuntimeError("device 'cuda' needs CuPy and an NVIDIA GPU (ModuleNotFoundError: "
                           "No module named 'cupy')")
    monkeypatch.setitem(backend._FACTORIES, "cuda", missing)


class FakeOOM(MemoryError):
    """CuPy's cupy.cuda.memory.OutOfMemoryError: made from sizes, its message from them."""

    def __init__(self, size, total, limit=0):
        super().__init__(f"Out of memory allocating {size:,} bytes (allocated so far: "
                         f"{total:,} bytes).")


FakeOOM.__module__, FakeOOM.__name__ = "cupy.cuda.memory", "OutOfMemoryError"


class FakePool:
    """CuPy's memory pool as its hooks see it (cupy/cuda/memory.pyx, SingleDeviceMemoryPool
    .malloc, _try_malloc, _alloc and PooledMemory.free): blocks rounded to 512 bytes, a
    freed block stays cached (reserved) until free_all_blocks; every hook registered gets
    all the calls CuPy makes, with CuPy's keyword arguments."""

    def __init__(self, hooks):
        self.hooks, self.used, self.total, self.fail = hooks, 0, 0, False

    def used_bytes(self): return self.used
    def total_bytes(self): return self.total
    def free_all_blocks(self, stream=None): self.total = self.used

    def _call(self, what, **kw):
        for h in list(self.hooks.values()):
            getattr(h, what)(device_id=0, **kw)

    def malloc(self, size):
        mem_size = -(-size // 512) * 512
        self._call("malloc_preprocess", size=size, mem_size=mem_size)
        ptr = 0
        try:
            if mem_size and self.total - self.used < mem_size:   # no cached block: grow
                self.total += mem_size
                self._call("alloc_preprocess", mem_size=mem_size)
                if self.fail:               # (cudaMalloc failed: CuPy's OutOfMemoryError)
                    self.total -= mem_size
                    self._call("alloc_postprocess", mem_size=mem_size, mem_ptr=0)
                    raise FakeOOM(mem_size, self.total)
                self._call("alloc_postprocess", mem_size=mem_size, mem_ptr=1)
            self.used += mem_size
            ptr = 1 if mem_size else 0      # (size 0: a null pointer, outside the pool)
        finally:
            self._call("malloc_postprocess", size=size, mem_size=mem_size, mem_ptr=ptr,
                       pmem_id=ptr)
        return mem_size

    def free(self, mem_size):
        self._call("free_preprocess", mem_size=mem_size, mem_ptr=1, pmem_id=1)
        self.used -= mem_size
        self._call("free_postprocess", mem_size=mem_size, mem_ptr=1, pmem_id=1)


def fake_cupy(capability=(9, 0), count=1):
    """A module standing in for CuPy: NumPy's arrays, plus the runtime calls mg.cuda makes."""
    hooks = {}                   # this thread's registered hooks, by name (CuPy's are too)

    class MemoryHook:            # cupy/cuda/memory_hook.pyx: six callbacks, doing nothing
        name = "MemoryHook"

        def __enter__(self):
            if self.name in hooks:
                raise KeyError(f"memory hook {self.name} already exists")
            hooks[self.name] = self
            return self

        def __exit__(self, *exc): del hooks[self.name]
        def alloc_preprocess(self, **kw): pass
        def alloc_postprocess(self, **kw): pass
        def malloc_preprocess(self, **kw): pass
        def malloc_postprocess(self, **kw): pass
        def free_preprocess(self, **kw): pass
        def free_postprocess(self, **kw): pass

    class Event:                 # cupy/cuda/stream.pyx
        def __init__(self, block=False, disable_timing=False, interprocess=False):
            if interprocess and not disable_timing:
                raise ValueError("Timing must be disabled for interprocess events")
            self.timing, self.stream, self.done = not disable_timing, None, True
        def record(self, stream=None): self.stream = stream
        def synchronize(self): pass

    class Stream:
        ptr_next = [16]

        def __init__(self, null=False, non_blocking=False, ptds=False, priority=None):
            self.ptr, self.done, self.waits = 0 if null else Stream.ptr_next[0], True, []
            Stream.ptr_next[0] += 16
        def __enter__(self): current.append(self); return self
        def __exit__(self, *exc): current.pop()
        def __eq__(self, other): return isinstance(other, Stream) and self.ptr == other.ptr
        def __hash__(self): return self.ptr
        def synchronize(self): pass
        def wait_event(self, e): self.waits.append(e)

    class Rng:                   # CuPy's Generator: draws, and cuRAND states in `_state`
        def __init__(self, seed):
            self.seed, self.rng = seed, np.random.default_rng(seed)
            self.bit_generator = types.SimpleNamespace(_state=np.arange(12, dtype=np.int8))
        def __getattr__(self, name): return getattr(self.rng, name)

    current = [types.SimpleNamespace()]
    Stream.null = Stream(null=True)
    current[0] = Stream.null
    props = {"name": b"Fake GPU", "totalGlobalMem": 80 * 2 ** 30, "major": capability[0],
             "minor": capability[1], "multiProcessorCount": 132}
    runtime = types.SimpleNamespace(getDeviceCount=lambda: count, getDevice=lambda: 0,
                                    getDeviceProperties=lambda i: dict(props),
                                    memGetInfo=lambda: (70 * 2 ** 30, 80 * 2 ** 30))
    cuda = types.SimpleNamespace(runtime=runtime, MemoryHook=MemoryHook, Event=Event,
                                 Stream=Stream, get_current_stream=lambda: current[-1],
                                 get_elapsed_time=lambda a, b: 1.5)
    pool = FakePool(hooks)
    fake = types.SimpleNamespace(cuda=cuda, get_default_memory_pool=lambda: pool,
                                 random=types.SimpleNamespace(default_rng=Rng),
                                 asarray=np.asarray, hooks=hooks, pool=pool)
    for name in ("ndarray", "zeros", "ones", "full", "float32", "uint8", "int8", "asarray"):
        setattr(fake, name, getattr(np, name))
    return fake


@pytest.fixture
def gpu(monkeypatch):
    """A fake GPU: the "cuda" backend built on fake_cupy()."""
    def install(**kw):
        fake = fake_cupy(**kw)
        b = backend.Backend("cuda", fake, None, None, np.asarray, np.asarray)
        monkeypatch.setitem(backend._FACTORIES, "cuda", lambda: b)
        backend._BACKENDS.pop("cuda", None)
        return fake
    return install


# -- without a GPU: as torch's CPU build ----------------------------------------------------

def test_without_a_gpu_the_sensible_calls_answer_as_torch(no_gpu, torch):
    c, t = mg.cuda, torch.cuda
    for name in ("is_available", "device_count", "memory_allocated", "max_memory_allocated",
                 "memory_reserved", "max_memory_reserved", "is_bf16_supported",
                 "is_tf32_supported", "is_initialized", "get_rng_state_all", "empty_cache"):
        assert getattr(c, name)() == getattr(t, name)(), name
    assert dict(c.memory_stats()) == dict(t.memory_stats()) == {}
    for name in ("manual_seed", "manual_seed_all"):               # silently accepted
        assert getattr(c, name)(3) is getattr(t, name)(3) is None
    assert c.seed() is t.seed() is None and c.seed_all() is t.seed_all() is None
    state = mg.zeros(16, dtype=mg.uint8)
    assert c.set_rng_state(state) is None and c.set_rng_state_all([state]) is None
    with c.stream(None), c.device(-1), c.device(None):
        pass
    assert c.set_device(-1) is None
    assert issubclass(c.OutOfMemoryError, RuntimeError)
    assert issubclass(t.OutOfMemoryError, RuntimeError)


@pytest.mark.parametrize("call", [
    lambda c: c.initial_seed(), lambda c: c.get_rng_state(), lambda c: c.current_device(),
    lambda c: c.set_device(0), lambda c: c.device(0).__enter__(), lambda c: c.init(),
    lambda c: c.get_device_name(), lambda c: c.get_device_capability(),
    lambda c: c.get_device_properties(0), lambda c: c.mem_get_info(),
    lambda c: c.Event(enable_timing=True), lambda c: c.Stream(),
    lambda c: c.current_stream(), lambda c: c.default_stream(), lambda c: c.synchronize(),
    lambda c: c.reset_peak_memory_stats(), lambda c: c.reset_max_memory_allocated(),
    lambda c: c.memory_summary()])
@pytest.mark.filterwarnings("ignore:torch.cuda.reset_max_memory_allocated")
def test_without_a_gpu_gpu_questions_raise_a_clear_error(call, no_gpu, torch):
    with pytest.raises(Exception):                      # torch's CPU build refuses too
        call(torch.cuda)
    with pytest.raises(RuntimeError, match="needs CuPy and an NVIDIA GPU"):
        call(mg.cuda)


def test_set_device_refuses_a_non_cuda_device_as_torch(no_gpu, torch):
    with pytest.raises(ValueError):
        torch.cuda.set_device("cpu")
    with pytest.raises(ValueError, match="expected a CUDA device"):
        mg.cuda.set_device("cpu")


def test_bad_seeds_and_states_are_refused(no_gpu):
    with pytest.raises(ValueError, match="non-negative integer"):
        mg.cuda.manual_seed(-1)
    with pytest.raises(TypeError, match="uint8 tensor"):
        mg.cuda.set_rng_state(mg.zeros(16))


# -- on a fake GPU: the logic over CuPy --------------------------------------------------

def test_device_queries(gpu):
    gpu()
    c = mg.cuda
    assert not c.is_initialized()
    c.init()
    assert c.is_initialized() and c.is_available() and c.device_count() == 1
    p = c.get_device_properties()
    assert (p.name, p.major, p.minor, p.multi_processor_count, p.total_memory) == \
        ("Fake GPU", 9, 0, 132, 80 * 2 ** 30)
    assert "Fake GPU" in repr(p) and "81920MB" in repr(p)
    assert c.get_device_name("cuda:0") == "Fake GPU" and c.get_device_capability(0) == (9, 0)
    assert c.current_device() == 0 and c.is_tf32_supported() and not c.is_bf16_supported()
    assert c.mem_get_info() == (70 * 2 ** 30, 80 * 2 ** 30)
    c.set_device(0)
    c.set_device(mg.device("cuda"))
    with c.device("cuda:0"):
        pass
    with pytest.raises(ValueError, match="no GPU 3; this machine has 1"):
        c.get_device_properties(3)
    with pytest.raises(ValueError, match="expected a CUDA device"):
        c.get_device_name("cuda:x")


def test_another_gpu_is_refused_with_the_way_to_use_it(gpu):
    gpu(count=2)
    assert mg.cuda.get_device_name(1) == "Fake GPU"        # a question about it is fine
    with pytest.raises(ValueError, match="CUDA_VISIBLE_DEVICES=1"):
        mg.cuda.set_device(1)
    with pytest.raises(ValueError, match="one GPU"):
        mg.cuda.memory_allocated("cuda:1")


def test_tf32_needs_an_ampere_gpu(gpu):
    gpu(capability=(7, 5))
    assert not mg.cuda.is_tf32_supported()


def test_peaks_are_counted_from_the_reset(gpu):
    fake = gpu()
    c, pool = mg.cuda, fake.pool
    first = pool.malloc(5000)                             # before any peak query
    assert c.max_memory_allocated() == c.memory_allocated() == 5120   # a query starts it
    pool.free(first)
    c.reset_peak_memory_stats()
    assert c.max_memory_allocated() == 0 and c.max_memory_reserved() == 5120
    a, b = pool.malloc(1000), pool.malloc(2000)           # 1024 + 2048 (the cached 5120)
    pool.free(b)
    pool.malloc(10000)                                    # 10240: the pool grows
    assert c.memory_allocated() == 1024 + 10240 and c.max_memory_allocated() == 11264
    assert c.memory_reserved() == c.max_memory_reserved() == 5120 + 10240
    pool.free(a)
    c.empty_cache()
    assert c.memory_reserved() == 10240 and c.max_memory_reserved() == 15360
    stats = c.memory_stats()
    assert stats == {"allocated_bytes.all.current": 10240, "allocated_bytes.all.peak": 11264,
                     "reserved_bytes.all.current": 10240, "reserved_bytes.all.peak": 15360}
    c.reset_max_memory_allocated()
    assert c.max_memory_allocated() == 10240 and c.max_memory_reserved() == 10240
    assert len(fake.hooks) == 1                           # one hook, whatever the queries
    text = c.memory_summary()
    assert "allocated" in text and "0.0 MiB" in text and "reserved" in text


def test_peaks_skip_failed_and_empty_allocations(gpu):
    """CuPy calls malloc_postprocess with mem_ptr=0 when an allocation fails (and for a
    0-byte array, which never enters the pool): neither may count towards the peak."""
    fake = gpu()
    c, pool = mg.cuda, fake.pool
    c.reset_peak_memory_stats()
    pool.fail = True
    with pytest.raises(MemoryError, match="allocating 4,096 bytes"):
        pool.malloc(4096)
    pool.fail = False
    pool.malloc(0)
    assert c.memory_allocated() == c.max_memory_allocated() == 0
    assert c.max_memory_reserved() == 0


def test_memory_stats_keys_are_torchs(gpu, torch):
    gpu()
    # the keys exist in torch's memory_stats (on a GPU); their names, as its docs give them
    for key in mg.cuda.memory_stats():
        kind, pool, stat = key.split(".")
        assert kind in ("allocated_bytes", "reserved_bytes") and pool == "all" and \
            stat in ("current", "peak")
    assert callable(torch.cuda.memory_stats)


def test_cuda_manual_seed_seeds_the_gpu_generator_only(gpu):
    gpu()
    mg.cuda.manual_seed(5)                               # before the backend is built: kept
    cpu_draw = mg.rand(3).numpy()
    assert mg.cuda.initial_seed() == 5 and backend.get("cuda").rng.seed == 5
    mg.cuda.manual_seed_all(6)
    assert backend.get("cuda").rng.seed == 6 and mg.cuda.initial_seed() == 6
    mg.manual_seed(0)
    np.testing.assert_array_equal(mg.rand(3).numpy(), cpu_draw)  # the CPU's untouched
    assert mg.cuda.initial_seed() == 0 and backend.get("cuda").rng.seed == 0
    mg.manual_seed(7)                                    # mg.manual_seed: every device's
    assert mg.cuda.initial_seed() == 7
    mg.cuda.seed()
    assert mg.cuda.initial_seed() != 7


def test_rng_state_round_trip(gpu):
    gpu()
    mg.cuda.manual_seed(9)
    state = mg.cuda.get_rng_state()
    assert state.dtype == mg.uint8 and state.device == "cpu" and state.shape == (20,)
    assert mg.cuda.get_rng_state_all()[0].tolist() == state.tolist()
    cu = backend.get("cuda").rng.bit_generator._state
    cu[:] = 0
    mg.cuda.manual_seed(1)
    backend.get("cuda").rng.bit_generator._state = cu     # (reseeding made a new one)
    mg.cuda.set_rng_state(state)
    assert cu.tolist() == list(range(12)) and mg.cuda.initial_seed() == 9
    with pytest.raises(ValueError, match="a state of 20 bytes"):
        mg.cuda.set_rng_state(state[:-1])


def test_events_and_streams_wrap_cupys(gpu):
    gpu()
    c = mg.cuda
    start, end = c.Event(enable_timing=True), c.Event(enable_timing=True)
    with pytest.raises(RuntimeError, match="record"):
        start.elapsed_time(end)
    start.record()
    s = c.Stream()
    end.record(s)
    assert end.event.stream is s.stream and end.query() and start.elapsed_time(end) == 1.5
    end.synchronize()
    with pytest.raises(RuntimeError, match="enable_timing=True"):
        c.Event().elapsed_time(end)
    assert c.current_stream() == c.default_stream() and c.current_stream() != s
    with c.stream(s) as entered:
        assert entered is s and c.current_stream() == s
    assert c.current_stream() == c.default_stream()
    s.wait_stream(c.default_stream())
    assert len(s.stream.waits) == 1 and s.query() and s.cuda_stream == s.stream.ptr


def test_an_interprocess_event_cannot_time(gpu):
    gpu()
    with pytest.raises(ValueError, match="enable_timing=False"):
        mg.cuda.Event(enable_timing=True, interprocess=True)
    assert not mg.cuda.Event(interprocess=True).enable_timing


class _OOMForward(Function):
    def forward(self, a): raise FakeOOM(8, 0)


class _OOMBackward(Function):
    def forward(self, a): return a * 1
    def backward(self, g): raise FakeOOM(8, 0)


def test_cupys_out_of_memory_is_raised_as_torchs(gpu, monkeypatch):
    fake = gpu()
    x = mg.ones(2, requires_grad=True)
    for run in (lambda: _OOMForward.apply(x), lambda: _OOMBackward.apply(x).sum().backward()):
        with pytest.raises(mg.cuda.OutOfMemoryError, match="allocating 8 bytes") as e:
            run()
        assert isinstance(e.value, RuntimeError) and isinstance(e.value, MemoryError)

    def full(*a, **k):
        raise FakeOOM(1024, 0)
    monkeypatch.setattr(fake, "zeros", full)
    with pytest.raises(mg.cuda.OutOfMemoryError, match="empty_cache"):
        mg.zeros(3, device="cuda")


def test_other_memory_errors_pass_unchanged():
    class Other(MemoryError):
        pass
    with pytest.raises(Other):
        class _F(Function):
            def forward(self, a): raise Other("host")
        _F.apply(mg.ones(1))


# -- mg.accelerator: torch.accelerator's device-generic calls (the newer tutorials' spelling) --

def test_accelerator_without_a_gpu_as_torchs_cpu_build(no_gpu, torch):
    for a in (mg.accelerator, torch.accelerator):
        assert a.is_available() is False and a.device_count() == 0
        assert a.current_accelerator() is None and a.current_accelerator(True) is None
    device = mg.accelerator.current_accelerator().type if mg.accelerator.is_available() \
        else "cpu"                                  # the tutorials' line
    assert mg.zeros(2).to(device).device == "cpu"


@pytest.mark.parametrize("name", ["current_device_index", "synchronize", "empty_cache",
                                  "memory_allocated"])
def test_accelerator_without_a_gpu_device_calls_raise_as_torch(name, no_gpu, torch):
    with pytest.raises(RuntimeError):
        getattr(torch.accelerator, name)()
    with pytest.raises(RuntimeError, match="none is available"):
        getattr(mg.accelerator, name)()
    with pytest.raises(RuntimeError, match="none is available"):
        mg.accelerator.set_device_index(0)


def test_accelerator_without_a_gpu_no_torch_needed(no_gpu):
    assert not mg.accelerator.is_available() and mg.accelerator.current_accelerator() is None
    with pytest.raises(RuntimeError, match="accelerator.current_device_index"):
        mg.accelerator.current_device_idx()


def test_accelerator_on_a_gpu_is_cuda(gpu):
    gpu()
    a = mg.accelerator
    assert a.is_available() and a.device_count() == 1
    assert a.current_accelerator() == "cuda" and a.current_accelerator().type == "cuda"
    assert a.current_device_index() == 0 and a.memory_allocated() == 0
    a.set_device_index(0)
    with pytest.raises(ValueError, match="there is no GPU 1"):
        a.set_device_index(1)
