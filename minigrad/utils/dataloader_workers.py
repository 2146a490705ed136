"""DataLoader's worker processes (num_workers > 0), as torch.utils.data's.

Each worker is a process with its own copy of the dataset (forked: nothing is copied until
written). The calling process sends each worker, through the worker's own index queue, the
indices of a batch (for an IterableDataset, a request for its next batch); the worker fetches
and collates the batch and puts it, pickled, on the one result queue shared by all workers.
`prefetch_factor` batches per worker are asked for ahead. A batch is tagged with the number
it was sent under; `in_order=True` hands them out in that order (one that arrives early
waits), `in_order=False` as they arrive. Tensors are pickled as their NumPy arrays and
rebuilt as minigrad Tensors here (tensor_copy.py); datasets should hold CPU tensors (a GPU
is not usable in a forked child). A batch tensor with a grad_fn is refused, as PyTorch's:
rebuilt here as a leaf, it would cut the graph back to the dataset's tensors unsaid.

In a worker, get_worker_info() tells its id, num_workers, seed and its dataset copy (an
IterableDataset shards its stream by them); mg.manual_seed(seed), random.seed(seed) and
NumPy's global seed were set there, seed = base_seed + id, base_seed drawn once per set of
workers from the loader's generator (or mg.manual_seed's), so random transforms differ
between workers and repeat from run to run. worker_init_fn(id) runs next. base_seed is
drawn just after the epoch's order, so the first epoch's batches are num_workers=0's; the
draw moves the generator on (as PyTorch's), so later epochs' orders differ from those.

An exception in a worker reaches the caller as the same exception type with the worker's
id and its traceback in the message (RuntimeError where that type cannot be rebuilt). A
worker that dies (killed by a signal, os._exit) is an error naming it and how it ended, not
a hang. The workers stop when the iterator is exhausted or dropped, or, with
`persistent_workers=True`, when the loader goes; a worker whose calling process died stops
by itself.

Linux's "fork" by default; a `multiprocessing_context` ("spawn", "forkserver" or a context)
is honoured (the dataset, collate_fn and worker_init_fn must then pickle). Where fork is
missing and none is given, loading runs in the calling process with a warning.
`pin_memory` does nothing: there is no page-locked memory on the CPU.
"""
import io
import multiprocessing
import os
import pickle
import queue
import random
import signal
import time
import traceback
import warnings
import weakref

from minigrad import backend, backend_blas, parallel
from minigrad.backend import np

_POLL = 0.05              # seconds between checks that the workers are alive, while waiting
_PARENT_POLL = 0.5        # seconds between a worker's checks that the caller is alive
_WORKER_INFO = [None]


class WorkerInfo:
    """What get_worker_info() returns in a worker: id, num_workers, seed, dataset (this
    worker's copy). Read-only, as PyTorch's."""

    def __init__(self, **fields):
        for name, value in fields.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name, value):
        raise RuntimeError(f"WorkerInfo: cannot set {name!r}; its fields are read-only")

    def __repr__(self):
        return (f"WorkerInfo(id={self.id}, num_workers={self.num_workers}, seed={self.seed}, "
                f"dataset={type(self.dataset).__name__})")


def get_worker_info():
    """In a DataLoader worker process, its WorkerInfo (id, num_workers, seed, dataset);
    None in the calling process, as PyTorch's."""
    return _WORKER_INFO[0]


def start_method(context, op="DataLoader"):
    """The multiprocessing context to start workers with: `context` (a start method's name
    or a context), else fork where it exists; None: no workers here (load in-process)."""
    if context is None:
        return multiprocessing.get_context("fork") if can_fork() else None
    if isinstance(context, str):
        methods = multiprocessing.get_all_start_methods()
        if context not in methods:
            raise ValueError(f"{op}: multiprocessing_context option should specify a valid "
                             f"start method in {methods!r}, but got "
                             f"multiprocessing_context={context!r}")
        return multiprocessing.get_context(context)
    if not isinstance(context, multiprocessing.context.BaseContext):
        raise TypeError(f"{op}: multiprocessing_context option should be a start method's "
                        f"name or a multiprocessing context, but got {context!r}")
    return context


def can_fork():
    return os.name == "posix" and os.uname().sysname == "Linux" and \
        "fork" in multiprocessing.get_all_start_methods()


def warn_in_process():
    warnings.warn("DataLoader: num_workers > 0 needs the 'fork' start method (Linux) or a "
                  "multiprocessing_context; loading runs in this process", RuntimeWarning,
                  stacklevel=3)


class _Failure:
    """An exception raised in a worker, as it crosses to the caller: its type (where that
    pickles) and the worker's traceback."""

    def __init__(self, worker_id, where):
        self.worker_id = worker_id
        self.text = (f"Caught {type_name(where)} in DataLoader worker process {worker_id}.\n"
                     f"Original {traceback.format_exc()}")
        self.type = type(where)
        try:
            pickle.dumps(self.type)
        except Exception:            # a class that cannot be found by name on the other side
            self.type = RuntimeError

    def reraise(self):
        try:
            error = self.type(_Text(self.text))
        except Exception:            # a type whose constructor takes other arguments
            error = None
        if not isinstance(error, BaseException) or str(error) != self.text:
            error = RuntimeError(self.text)
        try:
            raise error
        finally:         # no cycle through this frame: a dropped iterator's workers stop
            del error    # at once, not at the next garbage collection


class _Text(str):
    """A message that a KeyError shows as it is (KeyError's str() is its argument's repr)."""

    def __repr__(self):
        return self


def type_name(e):
    return type(e).__name__


class _End:
    """A worker's answer when its IterableDataset has no more batches."""


class _Resume:
    """Start a new epoch (persistent workers): a new pass over an IterableDataset."""


def _worker_loop(fetch, dataset, indices, results, done, info, init_fn):
    """A worker: requests in (a batch's indices, _Resume, or None: stop), batches out, each
    tagged with its send number, until None, `done`, or the calling process is gone."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)         # Ctrl-C is for the calling process
    parent = os.getppid()
    seed = info["seed"]
    from minigrad import manual_seed                     # (minigrad imports this module)
    manual_seed(seed % 2 ** 64)
    random.seed(seed)
    np.random.seed(seed % 2 ** 32)
    parallel.set_num_threads(1)                          # one core per worker, as PyTorch
    _WORKER_INFO[0] = WorkerInfo(dataset=dataset, **info)
    init_error = None
    if init_fn is not None:
        try:
            init_fn(info["id"])
        except Exception as e:
            init_error = _Failure(info["id"], e)
    stream, ended = None, False
    with backend_blas.one_thread():
        while not done.is_set():
            try:
                request = indices.get(timeout=_PARENT_POLL)
            except queue.Empty:
                if os.getppid() != parent:               # orphaned: the caller died
                    break
                continue
            if request is None:
                break
            if isinstance(request, _Resume):
                stream, ended = None, False
                results.put((request, pickle.dumps(info["id"])))
                continue
            seq, index = request
            if ended:                        # an IterableDataset's end was already sent
                continue
            try:
                if init_error is not None:
                    data = init_error
                elif fetch.iterable:
                    if stream is None:
                        stream = iter(dataset)
                    try:
                        data = fetch.next_batch(stream)
                    except StopIteration:
                        data, ended = _End(), True
                else:
                    data = fetch.batch(dataset, index)
                payload = _dumps(data)               # here: a batch that cannot be pickled
            except Exception as e:                   # is an error, not a lost batch
                payload = pickle.dumps(_Failure(info["id"], e))
            results.put((seq, payload))
    results.cancel_join_thread()     # stopping: the caller reads no more, don't wait on it


class _BatchPickler(pickle.Pickler):
    """pickle's, refusing a tensor with a grad_fn (as PyTorch's): rebuilt here as a leaf,
    it would silently cut the graph back to the dataset's tensors."""

    def reducer_override(self, obj):
        from minigrad.tensor import Tensor
        if isinstance(obj, Tensor) and obj.grad_fn is not None:
            raise RuntimeError(
                "DataLoader worker: the batch holds a tensor with a grad_fn (made from "
                "tensors that require grad); autograd does not cross process boundaries, "
                "so its gradient would reach nothing. Return t.detach() from the dataset "
                "(or collate_fn), or load with num_workers=0")
        return NotImplemented


def _dumps(data):
    buffer = io.BytesIO()
    _BatchPickler(buffer).dump(data)
    return buffer.getvalue()


class WorkerIter:
    """The batches of one DataLoader, loaded by `num_workers` processes (see the module
    docstring); with persistent_workers, the loader keeps it and reset() starts each new
    epoch on the same processes."""

    def __init__(self, loader, context, fetch, length):
        self._n, self._in_order = loader.num_workers, loader.in_order
        self._length = length             # len(): the loader's, as PyTorch's iterator
        self._timeout, self._persistent = loader.timeout, loader.persistent_workers
        self._prefetch = 2 if loader.prefetch_factor is None else loader.prefetch_factor
        self._fetch = fetch
        self._procs, self._queues = [], []
        self._results = context.Queue()
        self._done = context.Event()
        self._order = self._indices(loader)
        first = next(self._order, _End)        # the epoch's order drawn before the seed,
        base_seed = int(backend.host_rng(loader.generator, "DataLoader")  # so the batches
                        .integers(0, 2 ** 63))      # are those of num_workers=0
        backend_blas._libraries()     # found once here, not by each worker (0.1 s each)
        # (before any start: one that fails, e.g. a dataset that won't pickle for "spawn",
        # still ends those started)
        self._stopper = weakref.finalize(self, _shutdown, os.getpid(), self._procs,
                                         self._queues, self._results, self._done)
        for i in range(self._n):
            q = context.Queue()
            info = dict(id=i, num_workers=self._n, seed=base_seed + i)
            proc = context.Process(target=_worker_loop, daemon=True,
                                   name=f"minigrad-dataloader-{i}",
                                   args=(fetch, loader.dataset, q, self._results, self._done,
                                         info, loader.worker_init_fn))
            proc.start()
            self._queues.append(q)
            self._procs.append(proc)
        self._start(first)

    def _indices(self, loader):
        """The epoch's requests: the sampler's batches of indices (or single indices); for
        an IterableDataset, endless requests (the workers say when their streams end)."""
        if self._fetch.iterable:
            return iter(int, 1)
        return iter(loader.batch_sampler if loader.batch_sampler is not None
                    else loader.sampler)

    def _start(self, first):
        self._sent = self._received = 0
        self._tasks = {}                  # send number -> [worker id] or [worker id, data]
        self._active = [True] * self._n
        self._turn = 0
        self._exhausted = first is _End
        self._pending = [] if self._exhausted else [first]
        for _ in range(self._prefetch * self._n):
            self._send()

    def reset(self, loader):
        """A new epoch on the same workers: each is told to start over, and whatever the
        last epoch left in flight is read and dropped."""
        self._check_running()
        for q in self._queues:
            q.put(_Resume())
        waiting = set(range(self._n))
        while waiting:
            tag, payload = self._get()
            if isinstance(tag, _Resume):
                waiting.discard(pickle.loads(payload))
        self._order = self._indices(loader)
        self._start(next(self._order, _End))

    def _send(self):
        """Ask the next active worker, in turn, for the next batch."""
        if self._exhausted or not any(self._active):
            return
        if not self._pending:
            index = next(self._order, _End)
            if index is _End:
                self._exhausted = True
                return
            self._pending.append(index)
        while not self._active[self._turn]:
            self._turn = (self._turn + 1) % self._n
        worker, self._turn = self._turn, (self._turn + 1) % self._n
        self._queues[worker].put((self._sent, self._pending.pop()))
        self._tasks[self._sent] = [worker]
        self._sent += 1

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._length)

    def __next__(self):
        while True:
            while self._received < self._sent:   # skip what was handed out already, and
                task = self._tasks.get(self._received)     # what a finished stream's
                if task is not None and (len(task) == 2 or self._active[task[0]]):
                    break                                  # worker will never answer
                self._tasks.pop(self._received, None)
                self._received += 1
            else:
                if not self._persistent:
                    self.close()
                raise StopIteration
            task = self._tasks[self._received]
            if len(task) == 2:
                del self._tasks[self._received]
                self._received += 1
                return self._deliver(task[1])
            seq, payload = self._get()
            if isinstance(seq, _Resume):
                continue
            data = pickle.loads(payload)
            worker = self._tasks[seq][0]
            if isinstance(data, _End):
                self._active[worker] = False
                continue
            if self._in_order and seq != self._received:
                self._tasks[seq].append(data)       # early: kept until its turn
                continue
            del self._tasks[seq]
            return self._deliver(data)

    def _deliver(self, data):
        self._send()
        if isinstance(data, _Failure):
            data.reraise()
        return data

    def _get(self):
        """The next (send number, pickled batch) off the result queue; an error if a worker
        died or `timeout` passed first."""
        deadline = time.monotonic() + self._timeout if self._timeout else None
        while True:
            wait = _POLL if deadline is None else min(_POLL, deadline - time.monotonic())
            try:
                return self._results.get(timeout=max(wait, 0))
            except queue.Empty:
                pass
            self._check_running()
            if deadline is not None and time.monotonic() >= deadline:
                self.close()
                raise RuntimeError(f"DataLoader timed out after {self._timeout} seconds "
                                   f"waiting for a batch from its worker processes "
                                   f"(timeout={self._timeout})")

    def _check_running(self):
        for i, proc in enumerate(self._procs):
            if proc.exitcode is not None:
                how = (f"was killed by signal {signal.Signals(-proc.exitcode).name}"
                       if proc.exitcode < 0 else f"exited with code {proc.exitcode}")
                self.close()
                raise RuntimeError(f"DataLoader worker {i} (pid {proc.pid}) {how}: it exited "
                                   f"unexpectedly, and loading stops")

    @property
    def running(self):
        """Whether the workers are still there (not yet closed)."""
        return self._stopper.alive

    @property
    def pids(self):
        """The worker processes' ids."""
        return [proc.pid for proc in self._procs]

    def close(self):
        """Stop the workers (they end and are reaped); the iterator then yields nothing."""
        self._stopper()
        self._exhausted, self._active = True, [False] * self._n
        self._tasks.clear()                        # early batches too: nothing more comes


def _shutdown(owner, procs, queues, results, done):
    """Tell each worker to stop, wait a moment, then end those still running; reap all."""
    if os.getpid() != owner:         # a copy inherited by a later loader's forked worker
        return
    done.set()
    for q in queues:
        try:
            q.put(None)
        except (OSError, ValueError):
            pass
    for proc in procs:
        proc.join(1)
        if proc.exitcode is None:
            proc.terminate()
            proc.join(1)
    for q in queues + [results]:
        q.cancel_join_thread()       # nothing left to deliver: exit need not wait on them
        q.close()
