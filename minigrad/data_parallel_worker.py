"""The other side of data_parallel.py: what each worker process runs, and the rules of the
pipes between it and the calling process.

A worker is forked by ProcessDataParallel with a snapshot of the model, and then loops:
a message in, its answer out, in order, until None or the caller's end of the pipe closes.
  ("part", step, rows, seed, modes, wanted, split)  forward and backward of its rows; its
        gradients into shared memory (in a train_step, those of the parameters another
        process owns; it keeps its own for the sum) -> (loss, which gradients it has)
  ("reduce", step, ...) and ("update", step, ...)   a train_step's second half
        (data_parallel_step.py) -> each sum's Σg², then the new optimiser state's numbers
A message of a step the caller gave up on (a Ctrl-C) is skipped; one that is not a job
ends the worker, and the caller names the exit at its next call.
"""
import contextlib
import mmap
import signal
import threading
import traceback

from minigrad import backend, backend_blas, parallel
from minigrad.autograd import enable_grad, grad, no_grad
from minigrad.tensor import Tensor


def _part(dp, inputs, wanted):
    """(loss, gradients of the wanted parameters) of one part, in this process; wanted
    None: the loss alone, without a graph."""
    if wanted is None:
        with no_grad():
            return _scalar(dp.loss_fn(dp.model, *inputs), backward=False).item(), []
    with enable_grad():
        loss = _scalar(dp.loss_fn(dp.model, *inputs))
    grads = grad(loss, [dp.params[i] for i in wanted], allow_unused=True)
    return loss.item(), grads


def _worker_loop(dp, rank, here, conn):
    """A worker: parts in, losses out (and a train_step's sum and update), until None or
    the caller's end of the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)      # Ctrl-C is for the calling process
    # the caller's ends of the pipes, inherited through the fork: closed, so that this
    # worker sees an EOF (and stops) when the caller dies, however it dies
    for end in [here] + [c for _, c, _ in dp._workers]:
        end.close()
    parallel.set_num_threads(1)
    step = {}                     # the train_step in progress: its number, its gradients
    _, _, buffers = _survey(dp.model)
    modules = list(dp.model.modules())
    with backend_blas.one_thread():
        while True:
            try:
                message = conn.recv()
            except (EOFError, OSError):
                return
            if message is None:
                return
            try:
                kind, seq, *args = message
            except (TypeError, ValueError):
                kind = None
            if kind not in ("part", "reduce", "update"):
                return       # not a job: the pipe is out of step; the caller sees the exit
            if kind != "part" and step.get("seq") != seq:
                continue     # the rest of a step the caller gave up on (a Ctrl-C)
            try:
                if kind == "part":
                    step = {}
                    payload, own = _worker_part(dp, rank, modules, buffers, *args)
                    if args[-1]:                             # a train_step: more to come
                        step = {"seq": seq, "own": own, "wanted": args[3],
                                "written": payload[1]}
                elif kind == "reduce":
                    payload = dp._sharded.reduce(dp, rank, step, *args)
                else:
                    payload = dp._sharded.update(dp, step, *args)
                conn.send((seq, None, payload))
            except BaseException as e:
                step = {}
                try:
                    conn.send((seq, traceback.format_exc(), None))
                except OSError:          # the caller is gone
                    return
                if not isinstance(e, Exception):
                    return   # a SystemExit and the like end the worker, its cause sent first


def _worker_part(dp, rank, modules, buffers, part, seed, modes, wanted, sharded):
    """A worker's part: ((loss, which wanted gradients exist), its gradients of the
    parameters it owns in a train_step, by wanted index). The others go to shared memory.
    (`modules`, `buffers`: its model's, listed once: its snapshot does not change.)"""
    for m, mode in zip(modules, modes):
        object.__setattr__(m, "training", mode)
    for i, p in enumerate(dp.params if wanted is not None else ()):
        p.requires_grad = i in wanted
    for b, s in zip(buffers, dp._shared_buffers):
        b._data[...] = s
    if seed is not None:
        backend.manual_seed(seed)
    loss, gs = _part(dp, [Tensor._make(x, "cpu") for x in part], wanted)
    own = {}
    for j, (i, g) in enumerate(zip(wanted or [], gs)):
        if g is None:
            continue
        if sharded and dp._sharded.owner[i] == rank:
            own[j] = g._data                      # summed here, at the reduce
        else:
            dp._grads[rank][i][...] = g._data
    return (loss, [g is not None for g in gs]), own


def _stop(workers):
    for proc, conn, _ in workers:
        try:
            conn.send(None)
        except (OSError, ValueError):
            pass
    for proc, conn, _ in workers:
        proc.join(2)
        if proc.is_alive():             # busy on a part a Ctrl-C cut short
            proc.terminate()
            proc.join(1)
            if proc.is_alive():
                proc.kill()
                proc.join()
        conn.close()
    workers.clear()


# the signals a program handles in Python (held back a few microseconds: harmless if not)
_HELD_SIGNALS = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP, signal.SIGALRM, signal.SIGUSR1,
                 signal.SIGUSR2}


@contextlib.contextmanager
def _whole_messages():
    """Ctrl-C (and the other signals a Python handler may raise from) held back while a
    message crosses a pipe: cut midway, the rest of it would be read as the next message.
    (Python runs signal handlers in the main thread only.)"""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = signal.pthread_sigmask(signal.SIG_BLOCK, _HELD_SIGNALS)
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, previous)


def _survey(model):
    """One walk over the model (each walk costs ~0.1 ms, on every step): (what the workers'
    snapshot must still match: the modules, the parameters, and the buffers' names, shapes
    and dtypes; each module's train/eval flag; the buffers, as model.buffers() lists them)."""
    modules = list(model.modules())
    params, buffers, layout, seen = [], [], [], set()
    for m in modules:                        # the order of parameters() and buffers()
        for p in m._parameters.values():
            if p is not None and id(p) not in seen:
                seen.add(id(p))
                params.append(id(p))
        for n, b in m._buffers.items():
            if b is not None and id(b) not in seen:
                seen.add(id(b))
                buffers.append(b)
                layout.append((id(m), n, b.shape, b.dtype))
    return ([id(m) for m in modules], params, layout), [m.training for m in modules], buffers


def _shared_like(a):
    """A zero array shaped and typed like `a`, in memory that processes forked later share."""
    xp = backend.get("cpu").xp
    return xp.ndarray(a.shape, a.dtype, buffer=mmap.mmap(-1, max(a.nbytes, 1)))


def _scalar(loss, backward=True):
    if not isinstance(loss, Tensor) or loss.numel() != 1 or (backward and
                                                              not loss.requires_grad):
        raise TypeError("ProcessDataParallel: loss_fn must return a one-element Tensor"
                        + (" that requires grad" if backward else "")
                        + f", got {type(loss).__name__}"
                        + (f" of shape {loss.shape}" if isinstance(loss, Tensor) else ""))
    return loss
