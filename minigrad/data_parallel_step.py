"""ProcessDataParallel.train_step's second half: once every process has run the backward of
its part of the batch, each one sums, clips and updates its own share of the parameters,
all at once, instead of the calling process doing it alone while the workers wait. This is
stage 1 of ZeRO (Rajbhandari et al. 2020: the optimiser's state and work divided over the
processes), here for time rather than memory.

Why: in the baby GPT's step on 2 cores, after the parts (~33 ms each), the calling process
alone summed the two parts' gradients (~1 ms), clipped them (~0.5 ms) and ran AdamW
(~2.9 ms) while the worker had nothing to do.

How a step goes after the parts (each message carries the step's number):
  reduce   each process sums the parts' gradients of the parameters it owns, in part order
           and with forward_backward's arithmetic (so the bits are the same), and sends back
           each sum's Σg²
  update   the calling process adds the Σg² up in parameter order, as clip_grad_norm_ does,
           and sends the clip factor, the groups' options (a scheduler's lr) and the states'
           numbers (Adam's step count); each process scales its sums and runs the
           optimiser's own per-parameter update on its parameters
A worker's gradients for parameters another process owns go through shared memory, and the
optimiser state of the workers' parameters lives in a pool of shared memory made before the
fork. That state stays in the calling process's optimizer.state, so state_dict(), checkpoints
and a plain optimizer.step() see it whole: an array put there (a load_state_dict, a first
step) is copied into the pool at the next step, and one a worker's update makes (a first
step's zeros) comes back through the pipe. (An optimiser's _update must not write into its
gradient argument, which the calling process may be reading: none of minigrad's does.)
"""
import mmap
import warnings

from minigrad import backend
from minigrad.nn.utils import clip_coefficient, squared_norm
from minigrad.optim.optimizer import ascent

ALIGN = 64                   # bytes: each state array starts on a cache line


def owners(params, processes):
    """Which process (0: the calling one) owns each parameter: the biggest first, each to
    the process with the fewest elements so far."""
    owner, load = [0] * len(params), [0] * processes
    for i in sorted(range(len(params)), key=lambda i: -params[i].numel()):
        k = load.index(min(load))
        owner[i], load[k] = k, load[k] + params[i].numel()
    return owner


def sum_parts(terms, scale, out=None):
    """Σ weight·array over the (array, weight) terms, in order, times scale; into `out` if
    given. Summed first and scaled once, since the weights are mostly equal (two passes,
    not four)."""
    xp = backend.get("cpu").xp
    base = terms[0][1]
    arrays = [a if w == base else a * (w / base) for a, w in terms]
    if len(arrays) == 1:
        return xp.multiply(arrays[0], base * scale, out=out)
    acc = xp.add(arrays[0], arrays[1], out=out)
    for a in arrays[2:]:
        acc += a
    acc *= base * scale
    return acc


def square_sum(a):
    """Σa² as clip_grad_norm_ takes it (float16 summed in float32)."""
    xp = backend.get("cpu").xp
    return squared_norm(xp, a.astype(backend.float32) if a.dtype == backend.float16 else a)


class StatePool:
    """Shared memory, made before the fork, for the optimiser state of the workers'
    parameters: one slot per (parameter index, state name), reused when that state is
    replaced by another of its shape and dtype."""

    def __init__(self, nbytes):
        self.buffer = mmap.mmap(-1, max(nbytes, 1))
        self.size, self.used, self.slots = nbytes, 0, {}

    def place(self, key, array):
        """`array` copied into key's slot (made if there is none and there is room): the
        slot's view of it, or None when the pool is full."""
        slot = self.slots.get(key)
        if slot is None or slot[1] != array.shape or slot[2] != array.dtype.str:
            start = -(-self.used // ALIGN) * ALIGN
            if start + array.nbytes > self.size:
                return None
            slot = self.slots[key] = (start, array.shape, array.dtype.str)
            self.used = start + array.nbytes
        view = self.view(slot)
        view[...] = array
        return view

    def view(self, slot):
        start, shape, dtype = slot
        return backend.get("cpu").xp.ndarray(shape, dtype, buffer=self.buffer, offset=start)


def is_array(v):
    return isinstance(v, backend.get("cpu").xp.ndarray)


class ShardedStep:
    """What train_step needs beyond forward_backward, made before the fork: who owns which
    parameter, the calling process's shared gradient buffers for the workers' parameters,
    and the state pool."""

    def __init__(self, dp, optimizer, shared_like):
        from minigrad.optim.optimizer import Optimizer
        if not isinstance(optimizer, Optimizer):
            raise TypeError(f"ProcessDataParallel: optimizer must be a minigrad optimiser "
                            f"(minigrad.optim), got {type(optimizer).__name__}")
        where = {id(p): i for i, p in enumerate(dp.params)}
        self.group_of = [None] * len(dp.params)      # parameter index -> its group's index
        for gi, group in enumerate(optimizer.param_groups):
            for p in group["params"]:
                if id(p) not in where:
                    raise ValueError(f"ProcessDataParallel: the optimizer has a parameter "
                                     f"(shape {p.shape}) that is not the model's; give it "
                                     f"the model's parameters")
                self.group_of[where[id(p)]] = gi
        self.optimizer, self.groups = optimizer, _group_ids(optimizer)
        self.owner = owners(dp.params, dp.processes)
        theirs = [i for i, k in enumerate(self.owner) if k]
        self.main_grads = {i: shared_like(dp.params[i]._data) for i in theirs}
        # room for four state arrays per parameter (Adam with amsgrad keeps three)
        self.pool = StatePool(4 * sum(dp.params[i]._data.nbytes + ALIGN for i in theirs))
        self.views = {}                              # (i, name) -> the pool's view in use
        self.warned = False

    # ---- the calling process ------------------------------------------------------------
    def ready(self, dp):
        """Whether this step can be split: the optimiser's groups are those of the build,
        no gradient is there yet (no accumulation), and the state of the workers'
        parameters fits the pool (copied in where it is not there yet)."""
        if _group_ids(self.optimizer) != self.groups:
            raise RuntimeError("ProcessDataParallel: the optimizer's parameter groups changed "
                               "after it was built; build a new one")
        if any(p.grad is not None for p in dp.params):
            return False
        for i, p in enumerate(dp.params):
            state = self.optimizer.state.get(p) if self.owner[i] else None
            for name, v in (state or {}).items():
                if is_array(v) and v is not self.views.get((i, name)):
                    view = self.pool.place((i, name), v)
                    if view is None:
                        if not self.warned:
                            self.warned = True
                            warnings.warn("ProcessDataParallel.train_step: the optimiser "
                                          "state of the workers' parameters outgrew its "
                                          "shared pool (4 arrays a parameter); the steps run "
                                          "unsplit (the same numbers, slower)", stacklevel=3)
                        return False
                    state[name] = self.views[(i, name)] = view
        return True

    def share_part(self, dp, grads, wanted, share):
        """Right after this process's part: its gradients of the workers' parameters into
        shared memory, and with one worker, the go for its sum (it needs nothing more)."""
        for j, i in enumerate(wanted):
            if grads[j] is not None and i in self.main_grads:
                self.main_grads[i][...] = grads[j]._data
        if len(dp._workers) == 1:
            dp._send(dp._workers[0][1], ("reduce", dp._seq, share,
                                         [[g is not None for g in grads], None]))

    def finish(self, dp, grads, replies, share, wanted, max_norm):
        """Everything after the parts, in the calling process: returns nothing; the clipped
        gradients end in .grad and the parameters are updated."""
        xp, opt, workers = backend.get("cpu").xp, self.optimizer, dp._workers
        written = [[g is not None for g in grads]] + [r[1] for r in replies]
        if len(workers) > 1:            # each sum needs every part's gradients
            for _, conn, _ in workers:
                dp._send(conn, ("reduce", dp._seq, share, written))
        own = {j: g._data for j, g in enumerate(grads) if g is not None}
        sums = {i: sum_parts(terms, 1.0) for i, terms in
                self._terms(dp, 0, wanted, written, share, own)}
        squares = {i: square_sum(a) for i, a in sums.items()}
        for worker in workers:
            squares.update(dp._answer(worker, "sum"))
        order = sorted(squares)                       # parameter order, as clip_grad_norm_
        coef = None
        if max_norm is not None and order:
            dtype = dp.params[order[0]].dtype
            dtype = backend.float32 if dtype == backend.float16 else dtype
            total = xp.asarray(xp.sqrt(sum(squares[i] for i in order))).astype(dtype)
            c = clip_coefficient(xp, total, max_norm)
            coef = None if c >= 1 else c              # g·1 is g: no pass (as the clip)
        options = [{k: v for k, v in g.items() if k != "params"} for g in opt.param_groups]
        try:     # from the first "update" sent on, a cut (a Ctrl-C held back during a send
            # and raised after it) leaves some parameters updated and others not
            for k, (_, conn, _) in enumerate(workers, start=1):
                mine = [i for i in order if self.owner[i] == k and self.group_of[i] is not None]
                states = {i: {n: v for n, v in opt.state.get(dp.params[i], {}).items()
                              if not is_array(v)} for i in mine}
                slots = {i: {n: self.pool.slots[(i, n)]
                             for n, v in opt.state.get(dp.params[i], {}).items()
                             if v is self.views.get((i, n))} for i in mine}
                dp._send(conn, ("update", dp._seq, coef, options, states, slots))
            self._update_own(dp, order, sums, coef)
        except BaseException:
            # the workers' updates may be done and their states not brought back, or
            # this process's half done: the model and optimiser no longer agree
            dp._broken = dp._broken or ("a train_step was cut short during its update (the "
                                        "optimiser state of some parameters may not match "
                                        "them)")
            raise

    def _update_own(self, dp, order, sums, coef):
        """This process's updates, the gradients into .grad, the workers' states back."""
        opt, workers = self.optimizer, dp._workers
        from minigrad.tensor import Tensor
        for i in order:
            if i in sums:
                g = sums[i]
                if coef is not None:
                    g *= coef.astype(g.dtype)
                if self.group_of[i] is not None:
                    group = opt.param_groups[self.group_of[i]]
                    opt._update(dp.params[i], ascent(g, group),
                                opt.state.setdefault(dp.params[i], {}), group)
            else:                    # a worker's sum (read as it updates: a copy, scaled)
                g = _times(dp._grads[self.owner[i]][i], coef)
                g = g.copy() if coef is None else g
            dp.params[i].grad = Tensor._make(g, "cpu")
        for worker in workers:
            for i, entries in dp._answer(worker, "update").items():
                opt.state.setdefault(dp.params[i], {}).update(entries)
        for i in order:
            if self.group_of[i] is not None:          # an update counts as an in-place change
                dp.params[i]._version_counter[0] += 1

    def _terms(self, dp, rank, wanted, written, share, own):
        """(i, [(array, weight) of each part]) for the wanted parameters `rank` owns that
        some part has a gradient for; `own` holds this process's part's, by wanted index."""
        for j, i in enumerate(wanted):
            if self.owner[i] != rank:
                continue
            terms = []
            for k, w in enumerate(share):
                if written[k][j]:
                    a = own[j] if k == rank else \
                        self.main_grads[i] if k == 0 else dp._grads[k][i]
                    terms.append((a, w))
            if terms:
                yield i, terms

    # ---- a worker -----------------------------------------------------------------------
    def reduce(self, dp, rank, step, share, written):
        """A worker's sums of its parameters' gradients (into its shared buffers, where the
        calling process copies them from) and their Σg². `written[k]`: which gradients part
        k has (this worker's own: None, it knows them)."""
        written = list(written)
        written[rank] = step["written"]
        step["sums"] = {i: sum_parts(terms, 1.0, out=dp._grads[rank][i]) for i, terms in
                        self._terms(dp, rank, step["wanted"], written, share, step["own"])}
        return {i: square_sum(a) for i, a in step["sums"].items()}

    def update(self, dp, step, coef, options, states, slots):
        """A worker's update of its parameters: returns, per parameter, the state entries
        the calling process does not share (numbers, and arrays the update made)."""
        opt = self.optimizer
        for group, values in zip(opt.param_groups, options):
            group.update(values)
        back = {}
        for i, g in step["sums"].items():
            if self.group_of[i] is None:
                continue
            shared = {n: self.pool.view(slot) for n, slot in slots.get(i, {}).items()}
            state = {**states.get(i, {}), **shared}
            # the sum stays as it is: the calling process reads it meanwhile
            group = opt.param_groups[self.group_of[i]]
            opt._update(dp.params[i], ascent(_times(g, coef), group), state, group)
            back[i] = {n: v for n, v in state.items() if v is not shared.get(n)}
        return back


def _times(g, coef):
    """g·coef as clip_grad_norm_ computes it (a new array); g itself without a factor."""
    return g if coef is None else g * coef.astype(g.dtype)


def _group_ids(optimizer):
    return [[id(p) for p in g["params"]] for g in optimizer.param_groups]
