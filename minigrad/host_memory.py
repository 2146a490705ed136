"""Host memory: glibc's malloc asked to keep freed memory for reuse (a training loop's
activations are freed and allocated again every step)."""


def keep_freed_host_memory():
    """Ask glibc's malloc to keep freed memory for reuse instead of handing it back to the
    OS: a training loop frees and reallocates the same large activations every step, and
    with glibc's defaults each of them is a fresh mmap whose pages fault on first touch
    (about a fifth of a CPU step of the baby GPT). Process-wide, so applications (the
    `minitransformer` CLI, the benchmarks) call it, not the library on import. Returns False
    where it does not apply (not Linux/glibc). PyTorch users get the same from jemalloc.
    The price: the process's resident memory no longer shrinks below its peak (a one-off
    spike, say a large evaluation batch, stays resident, and is reused)."""
    import ctypes
    import sys
    if not sys.platform.startswith("linux"):
        return False
    try:
        libc = ctypes.CDLL("libc.so.6")
        M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # from glibc's <malloc.h>
        never = ctypes.c_int(2 ** 31 - 1)
        return bool(libc.mallopt(M_TRIM_THRESHOLD, never) and
                    libc.mallopt(M_MMAP_THRESHOLD, never))
    except (OSError, AttributeError):  # musl or another libc without mallopt
        return False


def available_host_bytes():
    """The memory this process could have now without swapping: Linux's MemAvailable, or
    less where a container's memory limit (cgroup v2 or v1) leaves less; None where neither
    can be read."""
    free = [_meminfo_available()]
    for limit, usage in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                         ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                          "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        cap, used = _read_int(limit), _read_int(usage)
        if cap is not None and used is not None and cap < 2 ** 60:     # "max": no limit
            free.append(max(cap - used, 0))
    free = [f for f in free if f is not None]
    return min(free) if free else None


def _meminfo_available():
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024      # the file counts kB
    except (OSError, ValueError, IndexError):
        pass
    return None


def _read_int(path):
    try:
        with open(path) as f:
            return int(f.read().strip())
    except (OSError, ValueError):                   # absent, or "max"
        return None
