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
    """The memory the OS could give this process now without swapping (Linux's MemAvailable),
    or None where it cannot be read."""
    try:
        with open("/proc/meminfo") as f:
            for line in f:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024      # the file counts kB
    except (OSError, ValueError, IndexError):
        pass
    return None
