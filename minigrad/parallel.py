"""Running the pieces of a fused op's work on every core of the CPU.

NumPy runs each operation on one core; only BLAS (matmul) uses them all. The fused ops cut
big arrays into cache-sized pieces anyway (ops/blocks.py), and attention works on groups of
whole score matrices; the pieces are independent, so several threads can work through them
at once: NumPy lets go of Python's global lock (GIL) inside each operation on more than a few
hundred elements. PyTorch runs its elementwise kernels on all cores the same way.

It pays only on big arrays. Waking a thread costs tens of microseconds here, and the GIL
goes back and forth between the threads at every operation of a chain: `run` is given the
pieces' total size and uses threads from MIN_SIZE elements (the small GPT preset's
activations: 1.15x a training step on 2 cores; the baby preset's arrays stay below it and
run as before). And only when BLAS's idle threads let go of the cores: OpenBLAS's spin for a
while after every matmul, on the cores these threads need (backend_blas.py says whether they
stop soon enough). Meanwhile BLAS is held to one thread, since the pieces call it too
(attention's per-head products).

Results do not depend on the thread count: each piece writes only its own part of the
outputs, the pieces are cut the same way for any number of threads, and a caller that sums
over pieces keeps partial sums over runs of pieces fixed by the shape, added up in order
afterwards. (One exception, in float64 only: outside a threaded section OpenBLAS may split
a long dot product, such as a layer norm's mean over rows of 2^17+ elements, across its own
threads, which rounds differently in the last bit.)
"""
import contextlib
import contextvars
import os
import queue
import threading

from minigrad import backend_blas

MIN_SIZE = 1 << 20          # elements below which threads cost more than they save

_local = threading.local()  # .inside: this thread is a worker (a piece must not fan out)
_lock = threading.Lock()    # one caller at a time uses the workers; others run serially
_workers = []
_threads = [None]           # set by set_num_threads; None: the default


def cores():
    """The cores this process may run on (its affinity where the OS tells it)."""
    try:
        return len(os.sched_getaffinity(0))             # the cores this process may use
    except AttributeError:                              # (not on macOS or Windows)
        return os.cpu_count() or 1


def get_num_threads():
    """How many threads the fused CPU ops use, the calling one included: set_num_threads's
    value, else the cores (up to 8) where BLAS's idle threads let go of them, else 1."""
    if _threads[0] is not None:
        return _threads[0]
    return max(1, min(cores(), 8)) if backend_blas.lets_go()[0] else 1


def why_one_thread():
    """Why the default is one thread ("" where it is not, or where set_num_threads chose)."""
    if _threads[0] is not None:
        return ""
    return backend_blas.lets_go()[1]


def describe():
    """"2 threads", or "1 thread" and why where BLAS holds the cores (for a run's header)."""
    n, why = get_num_threads(), why_one_thread()
    return f"{n} thread{'s' if n > 1 else ''}{': ' + why if n == 1 and why else ''}"


def set_num_threads(n):
    """Use n threads (the calling one included) for the fused CPU ops; 1 turns threading
    off. As torch.set_num_threads, but BLAS keeps its own thread count for plain matmuls."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_threads: n must be a positive integer, got {n!r}")
    _threads[0] = n


@contextlib.contextmanager
def threads(n):
    """set_num_threads(n) inside the block only (data_parallel.py runs its part on one)."""
    previous = _threads[0]
    set_num_threads(n)
    try:
        yield
    finally:
        _threads[0] = previous


class _Worker:
    """A thread that runs the jobs put to it, one at a time, each in a copy of its caller's
    context (NumPy's errstate lives there); None ends it. Queues, not events: a Ctrl-C can
    land anywhere in the caller, and SimpleQueue's put is safe against that."""

    def __init__(self):
        self.jobs, self.results = queue.SimpleQueue(), queue.SimpleQueue()
        threading.Thread(target=self._loop, name="minigrad-worker", daemon=True).start()

    def _loop(self):
        _local.inside = True
        while (job := self.jobs.get()) is not None:
            context, work = job
            try:
                context.run(work)
                self.results.put(None)
            except BaseException as e:                  # raised again by the caller
                self.results.put(e)


def run(fn, pieces, size):
    """fn(*piece) for each piece (a tuple or list of arguments); the pieces must write
    disjoint outputs. On several threads when `size`, their elements in all, is at least
    MIN_SIZE: thread k runs the k-th of as many contiguous runs of pieces as there are
    threads, the calling thread the first. An exception in any piece is raised here, after
    every thread has stopped."""
    n = 1 if size < MIN_SIZE or len(pieces) < 2 else min(get_num_threads(), len(pieces))
    if n < 2 or getattr(_local, "inside", False) or not _lock.acquire(blocking=False):
        for piece in pieces:                            # (nested, or another caller has
            fn(*piece)                                  # the workers)
        return
    try:
        while len(_workers) < n - 1:
            _workers.append(_Worker())
        busy = _workers[:n - 1]
        bounds = [len(pieces) * k // n for k in range(n + 1)]

        def job(k):
            def work():
                for piece in pieces[bounds[k]:bounds[k + 1]]:
                    fn(*piece)
            return work
        finished = False
        try:
            with backend_blas.one_thread():
                for k, w in enumerate(busy, start=1):
                    w.jobs.put((contextvars.copy_context(), job(k)))
                try:
                    job(0)()
                    error = None
                except Exception as e:
                    error = e
                errors = [w.results.get() for w in busy]
            finished = True
        finally:
            if not finished:            # interrupted (Ctrl-C): the workers may still be
                for w in _workers:      # running their pieces; each ends after them, and
                    w.jobs.put(None)    # new ones take their place
                _workers.clear()
        error = error or next((e for e in errors if e is not None), None)
        if error is not None:
            raise error
    finally:
        _lock.release()


def _forget_workers():                                  # a fork's child has no threads
    global _lock
    _workers.clear()
    _lock = threading.Lock()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_forget_workers)
