"""torch.cuda's memory figures, read from CuPy's default memory pool (where every GPU
array minigrad makes is allocated), and torch.cuda.OutOfMemoryError.

What the figures count, against torch's caching allocator:
- memory_allocated: the bytes of the pool's blocks in use by arrays, each rounded up to a
  multiple of 512 bytes (CuPy's pool.used_bytes(); torch rounds to 512 bytes too).
- memory_reserved: the bytes the pool holds from the driver, in use or cached for reuse
  (pool.total_bytes()). CuPy asks the driver for each block's own rounded size, where torch
  reserves segments of 2 MiB and more, so this runs lower than torch's figure.
- max_memory_allocated / max_memory_reserved: the highest of those since the peak was last
  reset. CuPy keeps no peak, so minigrad counts one with a CuPy MemoryHook, put in place by
  the first reset_peak_memory_stats() or peak query (a hook costs two Python calls on every
  allocation and every free; a program that never asks pays nothing). Until then, and at
  the first query, the peak is the current figure: call reset_peak_memory_stats() before
  the code to measure (as with torch after a warm-up). CuPy's hooks are per thread: what
  other threads allocate and free is seen only when a figure is read (until then, their
  frees of this thread's arrays can leave the peak high).
- CuPy's generator keeps its cuRAND states on the GPU (1.5 MiB in recent CuPy, allocated when
  the GPU backend starts), so the figures start there rather than at torch's 0.
Without CuPy or a GPU the figures are 0 and memory_stats() is {} (torch's CPU build); calls
that only a GPU can answer (mem_get_info, reset_peak_memory_stats, memory_summary) raise a
RuntimeError saying what to install.
"""
from minigrad import backend


class OutOfMemoryError(RuntimeError, MemoryError):
    """The GPU ran out of memory, as torch.cuda.OutOfMemoryError (a RuntimeError); also a
    MemoryError, as CuPy's own, which minigrad raises as this one from its ops, their
    gradients and its tensor factories."""


def raise_if_out_of_memory(e):
    """Raise CuPy's out-of-memory error `e` as OutOfMemoryError (anything else: return)."""
    if type(e).__name__ == "OutOfMemoryError" and type(e).__module__.startswith("cupy"):
        raise OutOfMemoryError(f"CUDA out of memory: {e} (mg.cuda.memory_summary() tells "
                               f"what minigrad holds; mg.cuda.empty_cache() frees the "
                               f"cached blocks)") from e


def _pool(device, op):
    """CuPy's default memory pool (None without a GPU), `device` checked."""
    from minigrad import cuda
    if not cuda.is_available():
        return None
    if device is not None:
        cuda._one_gpu(cuda._index(device, op), op)
    return cuda._cupy().get_default_memory_pool()


def _needed(device, op):
    pool = _pool(device, op)
    if pool is None:
        from minigrad import cuda
        try:
            cuda._cupy()
        except RuntimeError as e:
            raise RuntimeError(f"cuda.{op}: {e}") from None
    return pool


class _Peaks:
    """The peaks, counted by a CuPy MemoryHook (see the module's docstring)."""

    def __init__(self):
        self.hook = None
        self.used = self.peak = self.peak_reserved = 0

    def read(self, pool):
        """Bring the figures up to date with the pool's own (and start counting)."""
        if self.hook is None:
            self.hook = _make_hook(self, pool)
        self.used = pool.used_bytes()           # (drops any drift from other threads)
        self.peak = max(self.peak, self.used)
        self.peak_reserved = max(self.peak_reserved, pool.total_bytes())

    def reset(self, pool):
        self.read(pool)
        self.peak, self.peak_reserved = self.used, pool.total_bytes()


_PEAKS = _Peaks()


def _make_hook(peaks, pool):
    """A MemoryHook (CuPy's class, so made here, once CuPy is loaded) that keeps `peaks`
    for the pool's device, entered for good in this thread."""
    from minigrad import cuda
    cupy, gpu = cuda._cupy(), cuda.current_device()

    class PeakHook(cupy.cuda.MemoryHook):
        name = "minigrad_peak_memory"
        grew = False

        def malloc_postprocess(self, device_id=None, mem_size=0, mem_ptr=0, **_):
            if mem_ptr and device_id == gpu:
                peaks.used += mem_size
                if peaks.used > peaks.peak:
                    peaks.peak = peaks.used
                if self.grew:       # the pool took more from the driver: now in its total
                    self.grew = False
                    peaks.peak_reserved = max(peaks.peak_reserved, pool.total_bytes())

        def free_postprocess(self, device_id=None, mem_size=0, **_):
            if device_id == gpu:
                peaks.used -= mem_size

        def alloc_postprocess(self, device_id=None, mem_ptr=0, **_):
            if mem_ptr and device_id == gpu:
                self.grew = True

    hook = PeakHook()
    hook.__enter__()
    return hook


def memory_allocated(device=None):
    """Bytes in use by GPU arrays (0 without a GPU); see the module's docstring."""
    pool = _pool(device, "memory_allocated")
    return 0 if pool is None else pool.used_bytes()


def max_memory_allocated(device=None):
    """The most bytes in use at once since reset_peak_memory_stats() (or this first call)."""
    pool = _pool(device, "max_memory_allocated")
    if pool is None:
        return 0
    _PEAKS.read(pool)
    return _PEAKS.peak


def memory_reserved(device=None):
    """Bytes the pool holds from the driver, in use or cached (0 without a GPU)."""
    pool = _pool(device, "memory_reserved")
    return 0 if pool is None else pool.total_bytes()


def max_memory_reserved(device=None):
    """The most bytes held at once since reset_peak_memory_stats() (or this first call)."""
    pool = _pool(device, "max_memory_reserved")
    if pool is None:
        return 0
    _PEAKS.read(pool)
    return _PEAKS.peak_reserved


def reset_peak_memory_stats(device=None):
    """Start the peaks again from the current figures (and count them from now on)."""
    _PEAKS.reset(_needed(device, "reset_peak_memory_stats"))


def reset_max_memory_allocated(device=None):
    """reset_peak_memory_stats (torch's older name, which resets both peaks too)."""
    reset_peak_memory_stats(device)


def empty_cache():
    """Give the pool's cached, unused blocks back to the driver, so that other programs
    (and nvidia-smi) see them free. Nothing without a GPU."""
    pool = _pool(None, "empty_cache")
    if pool is not None:
        pool.free_all_blocks()


def mem_get_info(device=None):
    """(free, total) bytes of the GPU, as the driver sees them (other programs' use too)."""
    from minigrad import cuda
    _needed(device, "mem_get_info")
    free, total = cuda._cupy().cuda.runtime.memGetInfo()
    return int(free), int(total)


def memory_stats(device=None):
    """torch's keys that CuPy's pool can fill: allocated_bytes.all.current/peak and
    reserved_bytes.all.current/peak ({} without a GPU, as torch's CPU build)."""
    pool = _pool(device, "memory_stats")
    if pool is None:
        return {}
    _PEAKS.read(pool)
    return {"allocated_bytes.all.current": _PEAKS.used,
            "allocated_bytes.all.peak": _PEAKS.peak,
            "reserved_bytes.all.current": pool.total_bytes(),
            "reserved_bytes.all.peak": _PEAKS.peak_reserved}


def memory_summary(device=None, abbreviated=False):
    """memory_stats() as a few lines of text, in MiB."""
    _needed(device, "memory_summary")
    stats = memory_stats(device)

    def mib(key):
        return f"{stats[key] / 2 ** 20:12.1f} MiB"
    return ("minigrad CUDA memory (CuPy's default pool)\n"
            f"  allocated  now {mib('allocated_bytes.all.current')}   "
            f"peak {mib('allocated_bytes.all.peak')}\n"
            f"  reserved   now {mib('reserved_bytes.all.current')}   "
            f"peak {mib('reserved_bytes.all.peak')}\n")
