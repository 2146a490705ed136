"""The host BLAS's threads, as parallel.py needs to know them: whether they let go of the cores
soon after a matmul, and holding BLAS to one thread while minigrad's own threads run.

After each matmul OpenBLAS's idle threads spin, waiting for more work, for 2^t CPU cycles,
t = OPENBLAS_THREAD_TIMEOUT (28 by default: ~0.1 s), read once when NumPy loads OpenBLAS. A
training step calls a matmul every few milliseconds, so with the default they spin all the
time, on the cores parallel.py's threads need: a chain that ran 2x faster on two threads ran
15% slower right after a matmul. minigrad/__init__.py asks for t = 22 (~1.5 ms) when it is
imported before NumPy; the baby preset's step, one small matmul after another, runs as fast
as with the default. Other BLAS libraries (MKL, an OpenMP build of OpenBLAS) spin by rules
of their own, so with them parallel.py's threads stay off unless asked for.

threadpoolctl finds the BLAS libraries NumPy loaded and sets their thread counts.
"""
import contextlib
import threading

MAX_TIMEOUT = 22            # OpenBLAS's idle spin of 2^22 cycles (~1.5 ms) or less
DEFAULT_TIMEOUT = 28        # OpenBLAS's own, when OPENBLAS_THREAD_TIMEOUT is not set

_found = {}
_lock = threading.Lock()


def _libraries():
    """threadpoolctl's controllers of the loaded BLAS libraries, or an Exception."""
    with _lock:
        if "libs" not in _found:
            try:
                from minigrad import backend  # noqa: F401  (NumPy, and so its BLAS, loaded)
                from threadpoolctl import ThreadpoolController
                _found["libs"] = ThreadpoolController().select(user_api="blas").lib_controllers
            except Exception as e:                      # not installed, or failed
                _found["libs"] = e
        return _found["libs"]


def spin_exponent(lib):
    """t of an OpenBLAS library's 2^t-cycle idle spin (OpenBLAS clamps it to 4..30)."""
    get = getattr(lib.dynlib, "openblas_thread_timeout", None)
    t = int(get()) if get is not None else 0
    return DEFAULT_TIMEOUT if t <= 0 else min(max(t, 4), 30)


def lets_go(libraries=None):
    """(True, "") when every BLAS library loaded either runs one thread or is a pthreads
    OpenBLAS whose idle threads spin 2^MAX_TIMEOUT cycles or less; else (False, why)."""
    libs = _libraries() if libraries is None else libraries
    if isinstance(libs, Exception):
        return False, f"threadpoolctl could not list the BLAS libraries ({libs!r})"
    for lib in libs:
        if lib.num_threads == 1:
            continue
        layer = getattr(lib, "threading_layer", None)
        if lib.internal_api != "openblas" or layer != "pthreads":
            return False, (f"{lib.internal_api} ({layer} threads) may keep the cores busy "
                           f"after a matmul")
        t = spin_exponent(lib)
        if t > MAX_TIMEOUT:
            return False, (f"OpenBLAS's idle threads spin 2^{t} cycles after each matmul; "
                           f"set OPENBLAS_THREAD_TIMEOUT={MAX_TIMEOUT} before NumPy is "
                           f"imported (importing minigrad first does)")
    return True, ""


_held = []                  # the thread counts to put back while BLAS is held to one


@contextlib.contextmanager
def one_thread():
    """BLAS on one thread inside the block (process-wide: OpenBLAS has one thread pool), as
    it was after it. A hold that a Ctrl-C cut short before it put the counts back (or that a
    fork's child inherited) is undone at the next one. Where another Python thread controls
    OpenBLAS's thread count through threadpoolctl, its setting stands (threadpoolctl's rule)."""
    libs = _libraries()
    libs = [] if isinstance(libs, Exception) else libs
    _release(libs)
    _held[:] = [lib.num_threads for lib in libs]
    try:
        for lib, n in zip(libs, _held):
            if n != 1:
                lib.set_num_threads(1)
        yield
    finally:
        _release(libs)


def _release(libs):
    for lib, n in zip(libs, _held):
        if n != 1:
            lib.set_num_threads(n)
            leave = getattr(type(lib), "clear_controlling_thread", None)
            if leave is not None:                   # (threadpoolctl >= 3.6) leave the
                leave()                             # control to other threads
    _held.clear()
