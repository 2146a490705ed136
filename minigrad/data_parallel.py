"""Data parallelism over the CPU's cores: each batch split into parts, one per process, each
part's forward and backward run by its own process on one core, and the gradients added up
into `.grad` in the calling process (PyTorch's DistributedDataParallel, on one machine).

Why it pays: NumPy runs every elementwise operation on one core and BLAS splits each GEMM
over all of them, so most of a step leaves the other cores idle, and each GEMM's output lands
half in another core's cache. With the batch split, every operation of a part runs on the
core that made its inputs. The baby GPT's step on 2 cores: 70 ms in one process, 45 ms in two.

Why processes, not threads: a step is thousands of NumPy calls, and Python's global lock
(GIL) changes hands around each; two threads, one half batch each, took 61 ms.

How the processes share the work:
- Parameters move into shared memory (anonymous mmap, made before the fork): the optimiser's
  in-place update in this process is what every worker reads at its next part; no copies.
- Each worker writes its gradients into shared memory of its own; this process adds them up,
  each part weighted by its share of the batch, so the result is the gradient of the whole
  batch's mean loss (for a loss that is a mean over the batch's rows).
- Buffers (BatchNorm's running statistics) are this process's: copied to the workers before
  each part (DDP's broadcast_buffers); updates a worker makes to them are dropped.
- Random draws (dropout): this process's generator seeds each worker's part, so a run is
  reproducible and restarts identically from a reseed (the trainer's checkpoints).
- The result depends on the number of parts (the order of the sum), not on timing.
- train_step also splits what follows the parts (the sum, the clipping, the optimiser's
  update) over the processes, each its own share of the parameters: data_parallel_step.py.
- What a worker runs, and the messages between them: data_parallel_worker.py.

Linux only (fork); elsewhere, and for a model on a GPU, processes=1 runs in this process.
"""
import multiprocessing
import numbers
import sys
import weakref

from minigrad import backend, backend_blas, parallel
from minigrad.autograd import enable_grad, no_grad
from minigrad.backward import _into_grad
from minigrad.grad_hooks import _POST_ACCUMULATE, run_post_accumulate_hooks
from minigrad.optim.optimizer_hooks import has_step_hooks
from minigrad.data_parallel_step import ShardedStep, sum_parts
from minigrad.data_parallel_worker import (_part, _scalar, _shared_like, _stop, _survey,
                                           _whole_messages, _worker_loop)
from minigrad.tensor import Tensor


def can_fork():
    return sys.platform.startswith("linux") and "fork" in multiprocessing.get_all_start_methods()


def default_processes():
    """processes=None's choice: one per core this process may use (up to 8), where fork
    exists; else 1."""
    return max(1, min(parallel.cores(), 8)) if can_fork() else 1


class WorkerLost(RuntimeError):
    """A worker process is gone (killed, e.g. by the system for memory, or crashed)."""


class ProcessDataParallel:
    """Run `loss_fn(model, *inputs)` and its backward over a batch split in `processes`
    parts along the first dim of every input, one part per process (this one included).

        dp = ProcessDataParallel(model, lambda m, x, y: m(x, y)[1])
        loss = dp.forward_backward(x, y)     # a float; the gradients are in p.grad
        optimizer.step()
        dp.close()                           # or use it as a context manager

    or, given the optimizer, the whole step (the trainer's way; faster, see train_step):

        dp = ProcessDataParallel(model, loss_fn, optimizer=optimizer)
        loss = dp.train_step(x, y, max_norm=1.0)

    Build it after the model is on its device and before the training loop: the workers are
    forked here, each with a snapshot of the model and loss_fn. What reaches them afterwards
    is the parameters' values (shared memory), the buffers' values, requires_grad and
    train/eval; any other change to the model (a layer swapped, a dropout's p) is not seen,
    and one that changes its modules, parameters or buffers is refused. Only the model's
    parameters get gradients (a tensor outside it that requires grad gets none), and their
    hooks see each part's gradient, not the sum. The same holds for the optimizer (a
    minigrad.optim one over the model's parameters): the workers run their share of its
    updates with the options (lr ...) sent at each step; a new parameter group is refused.

    Call mg.keep_freed_host_memory() first, as the trainer does: without it the calling
    process, whose heap holds the optimiser's state, ran its half of a baby GPT step in
    44.6 ms against a worker's 39.2 (with it, 36.7 and 37.7), and the slowest part sets
    the pace."""

    def __init__(self, model, loss_fn, processes=None, optimizer=None):
        n = default_processes() if processes is None else processes
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"ProcessDataParallel: processes must be a positive integer or "
                             f"None (one per core), got {processes!r}")
        self.model, self.loss_fn, self.processes = model, loss_fn, n
        self.optimizer = optimizer
        self.params = list(model.parameters())
        self._layout = _survey(model)[0]
        self._workers, self._seq, self._broken, self._sharded = [], 0, None, None
        if n == 1:
            if optimizer is not None:
                ShardedStep(self, optimizer, _shared_like)    # (its checks only)
            return
        if not can_fork():
            raise ValueError(f"ProcessDataParallel: processes={n} needs fork (Linux); use "
                             f"processes=1 on {sys.platform}")
        on = {t.device for t in self.params + list(model.buffers())} - {"cpu"}
        if on:
            raise ValueError(f"ProcessDataParallel: the model is on {sorted(on)[0]}; "
                             f"processes > 1 split CPU work only: use processes=1 there")
        for p in self.params:                 # into shared memory, before the fork
            view = _shared_like(p._data)
            view[...] = p._data
            p._data = view
        self._shared = [p._data for p in self.params]
        self._shared_buffers = [_shared_like(b._data) for b in model.buffers()]
        # each worker's gradients, all made before any fork so every process sees them all
        self._grads = [None] + [[_shared_like(p._data) for p in self.params]
                                for _ in range(1, n)]
        if optimizer is not None:
            self._sharded = ShardedStep(self, optimizer, _shared_like)
        ctx = multiprocessing.get_context("fork")
        for rank in range(1, n):
            here, there = ctx.Pipe()
            proc = ctx.Process(target=_worker_loop, args=(self, rank, here, there),
                               daemon=True, name=f"minigrad-data-parallel-{rank}")
            proc.start()
            there.close()        # so that a dead worker is an EOF here, not a hang
            self._workers.append((proc, here, self._grads[rank]))
        weakref.finalize(self, _stop, self._workers)

    @property
    def pids(self):
        """The worker processes' ids (this process's is os.getpid())."""
        return [proc.pid for proc, _, _ in self._workers]

    def forward_backward(self, *inputs, scale=1.0):
        """The loss over the whole batch (each part's loss weighted by its rows), as a float;
        the gradient of scale·loss is added into each parameter's .grad, as
        (scale·loss).backward() would."""
        inputs, parts = self._checked(inputs)
        if parts == 1:
            with enable_grad():
                loss = _scalar(self.loss_fn(self.model, *inputs))
                (loss * scale).backward()
            return loss.item()
        total, grads, replies, share, wanted = self._run_parts(inputs, parts, sharded=False)
        with no_grad():                    # as backward(): added into .grad in place
            for j, i in enumerate(wanted):
                terms = [] if grads[j] is None else [(grads[j]._data, share[0])]
                terms += [(self._grads[k][i], w) for k, ((_, written), w)
                          in enumerate(zip(replies, share[1:]), start=1) if written[j]]
                if terms:
                    _into_grad(self.params[i], Tensor._make(sum_parts(terms, scale), "cpu"),
                               owned=True)
                    if id(self.params[i]) in _POST_ACCUMULATE:     # as backward() runs them
                        run_post_accumulate_hooks(self.params[i])
        return total

    def loss(self, *inputs):
        """The whole batch's loss (each part's weighted by its rows), as a float, without
        gradients: an evaluation split over the processes as a training step is. The
        model's train/eval flags are sent as for a step (the trainer's estimate_loss calls
        model.eval() first)."""
        inputs, parts = self._checked(inputs)
        if parts == 1:
            with no_grad():
                return _scalar(self.loss_fn(self.model, *inputs), backward=False).item()
        return self._run_parts(inputs, parts, sharded=False, backward=False)[0]

    def train_step(self, *inputs, max_norm=None):
        """One whole training step on a batch: forward_backward(*inputs), then
        clip_grad_norm_(parameters, max_norm) unless max_norm is None, then
        optimizer.step(); returns the loss as a float. Needs the optimizer given at build.

        Split over the processes, each summing, clipping and updating its own share of the
        parameters at once (data_parallel_step.py): on the baby GPT's step on 2 cores,
        ~39 → ~37 ms. The results are those of the three calls (the same arithmetic); .grad
        ends holding each parameter's clipped gradient, as after them. A step with gradients
        already in .grad (accumulation), a batch of fewer rows than processes, optimiser
        state too big for the shared pool (four arrays per parameter), or a hook (a
        post-accumulate one, or an optimizer step hook) runs the three calls instead."""
        if self.optimizer is None:
            raise ValueError("ProcessDataParallel.train_step: build it with optimizer=... "
                             "(the optimiser over the model's parameters), or call "
                             "forward_backward and step the optimiser yourself")
        if max_norm is not None and not (isinstance(max_norm, numbers.Real) and
                                         not isinstance(max_norm, bool) and max_norm > 0):
            raise ValueError(f"ProcessDataParallel.train_step: max_norm must be a positive "
                             f"number or None (no clipping), got {max_norm!r}")
        inputs, parts = self._checked(inputs)
        # a post-accumulate hook runs between the sum and the update, and the optimiser's
        # step hooks around optimizer.step(): the three calls run them
        hooked = any(id(p) in _POST_ACCUMULATE for p in self.params) or \
            has_step_hooks(self.optimizer)
        if self._sharded is None or hooked or parts < self.processes or \
                not self._sharded.ready(self):
            from minigrad.nn.utils import clip_grad_norm_
            loss = self.forward_backward(*inputs)
            if max_norm is not None:
                clip_grad_norm_(self.params, max_norm)
            self.optimizer.step()
            return loss
        total, grads, replies, share, wanted = self._run_parts(inputs, parts, sharded=True)
        with no_grad(), backend_blas.one_thread(), parallel.threads(1):
            self._sharded.finish(self, grads, replies, share, wanted,
                                 None if max_norm is None else float(max_norm))
        return total

    def _checked(self, inputs):
        """(inputs as Tensors, the number of parts), or a clear error."""
        if self._broken:
            raise RuntimeError(f"ProcessDataParallel: {self._broken}; build a new one")
        inputs = [_as_batch(x, i) for i, x in enumerate(inputs)]
        rows = inputs[0].shape[0] if inputs else 0
        if not inputs or any(x.shape[0] != rows for x in inputs) or rows == 0:
            raise ValueError(f"ProcessDataParallel: inputs must share a non-empty first "
                             f"(batch) dim, got shapes {[x.shape for x in inputs]}")
        parts = min(self.processes, rows)
        if parts > 1 and any(x.device != "cpu" for x in inputs):
            raise ValueError(f"ProcessDataParallel: the inputs must be on the CPU, got "
                             f"{sorted({x.device for x in inputs})}")
        return inputs, parts

    def _run_parts(self, inputs, parts, sharded, backward=True):
        """Each part's forward and backward, the first here, the others in the workers:
        (the whole batch's loss, this part's gradients, the workers' (loss, which gradients
        they wrote), each part's share of the rows, the wanted parameters' indices).
        backward=False: the forward only, without gradients (wanted is then None)."""
        rows = inputs[0].shape[0]
        bounds = [rows * k // parts for k in range(parts + 1)]
        share = [(bounds[k + 1] - bounds[k]) / rows for k in range(parts)]
        # (the weights are right for a loss that is a mean over rows: not for BatchNorm's
        # statistics, which each part takes over its own rows, nor an ignore_index)
        wanted = [i for i, p in enumerate(self.params) if p.requires_grad] if backward \
            else None
        layout, modes, buffers = _survey(self.model)
        self._check_model(layout)
        # dropout's seeds for the workers' parts; none for an evaluation in eval mode, which
        # then leaves this process's generator as it was
        seeds = backend.host_rng().integers(0, 2 ** 63, parts - 1) \
            if backward or any(modes) else [None] * (parts - 1)
        for b, s in zip(buffers, self._shared_buffers):
            s[...] = b._data
        self._seq += 1
        for k, worker in enumerate(self._workers[:parts - 1], start=1):
            part = [x._data[bounds[k]:bounds[k + 1]] for x in inputs]
            seed = None if seeds[k - 1] is None else int(seeds[k - 1])
            self._send(worker[1], ("part", self._seq, part, seed, modes, wanted,
                                   sharded))
        with backend_blas.one_thread(), parallel.threads(1):   # one core each
            loss, grads = _part(self, [x[:bounds[1]] for x in inputs], wanted)
            if sharded:
                self._sharded.share_part(self, grads, wanted, share)
        replies = [self._answer(w, "part") for w in self._workers[:parts - 1]]
        total = loss * share[0] + sum(r[0] * w for r, w in zip(replies, share[1:]))
        return total, grads, replies, share, wanted

    def _send(self, conn, message):
        try:
            with _whole_messages():
                conn.send(message)
        except OSError:                                  # (BrokenPipeError)
            proc = next(proc for proc, c, _ in self._workers if c is conn)
            raise self._dead(proc) from None

    def _answer(self, worker, what):
        """A worker's answer to this step's `what` (part, sum, update), or its error raised."""
        _, error, payload = self._reply(worker)
        if error is not None:
            k = self._workers.index(worker) + 1
            if what != "part":           # the step is half done: the model is not whole
                self._broken = f"worker {k} failed in the step's {what}"
            raise RuntimeError(f"ProcessDataParallel: the {what} in worker {k} failed:\n"
                               f"{error}")
        return payload

    def _check_model(self, layout):
        """The model has the modules, parameters and buffers (names, shapes, dtypes) the
        workers were forked with, and its parameters are still the ones in shared memory (an
        assignment p.data = ... is copied in)."""
        if layout != self._layout:
            raise RuntimeError("ProcessDataParallel: the model's modules, parameters or "
                               "buffers changed after it was built (a layer added or "
                               "replaced, a buffer reshaped); build a new one")
        for i, (p, view) in enumerate(zip(self.params, self._shared)):
            if p._data is not view:
                if p.device != "cpu" or p._data.shape != view.shape or \
                        p._data.dtype != view.dtype:
                    raise RuntimeError(f"ProcessDataParallel: parameter {i} is now "
                                       f"{p.shape} {p.dtype} on {p.device}, not {view.shape} "
                                       f"{view.dtype} on cpu; build a new one")
                view[...] = p._data
                p._data = view

    def _reply(self, worker):
        proc, conn, _ = worker
        while True:
            try:
                conn.poll(None)            # waiting: a Ctrl-C may stop it here
                with _whole_messages():
                    reply = conn.recv()
            except (EOFError, OSError):
                raise self._dead(proc) from None
            if reply[0] == self._seq:      # (a part cut short by Ctrl-C answers late)
                return reply

    def _dead(self, proc):
        """The error for a worker that is gone; this object then refuses further work."""
        proc.join(1)
        self._broken = f"worker process {proc.pid} exited (exit code {proc.exitcode})"
        return WorkerLost(f"ProcessDataParallel: {self._broken}")

    def close(self):
        """Stop the workers and let their gradient buffers go (the parameters, and any
        optimiser state, stay in the shared memory, which is ordinary memory once the
        workers are gone)."""
        _stop(self._workers)
        self._broken = self._broken or "closed"
        # a model's worth of memory per worker, and the split step's as much again: a
        # closed object keeps none of it alive (a training script may hold it to the end)
        self._grads, self._shared_buffers, self._sharded = [], [], None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _as_batch(x, i):
    if isinstance(x, backend.get("cpu").xp.ndarray):
        x = Tensor._make(x, "cpu")
    if not isinstance(x, Tensor) or x.ndim == 0:
        raise TypeError(f"ProcessDataParallel: input {i} must be an array or Tensor with a "
                        f"batch dim, got {type(x).__name__}"
                        + (" of shape ()" if isinstance(x, Tensor) else ""))
    return x
