"""Where a step's time goes, op by op: the most used part of torch.profiler.

    with mg.profiler.profile(record_shapes=True) as prof:
        logits, loss = model(x, y)
        loss.backward()
        optimizer.step()
    print(prof.key_averages().table(sort_by="self_cpu_time_total", row_limit=12))

What is timed (each an event, with its start and end):
- every op's forward, named after its op class ("Linear", "Softmax", ...);
- every op's backward, "<Op>Backward" (the node's name, as in anomaly mode);
- every region marked with `record_function(name)`, and these the library marks itself:
  an optimiser's step ("Optimizer.step#AdamW.step", PyTorch's name) and a custom
  autograd Function's forward (its class name).
An event's *total* time is from its start to its end; its *self* time leaves out the events
inside it (an op's Tensor-level backward runs other ops, a region holds many): the self
times of all events add up to the time spent in ops and regions, with nothing counted twice.

On a GPU the kernels run asynchronously, so a timer alone measures their launch. While
`ProfilerActivity.CUDA` is profiled (the default), the profiler waits for the GPU before
and after each event, so an event's time is that of its own kernels. The waiting makes the
whole step slower than it runs unprofiled: the table says where the time goes, not how long
a step takes (benchmarks/bench_train.py says that).

Not recorded: ops that run in other processes (minigrad/parallel.py's data-parallel workers:
profile with one process), memory, the forward of a node with several outputs made without
Function.apply (unbind's views: its backward is recorded), and PyTorch's schedules and trace
handlers. Off, the cost is one read of `active` per op (and per region: a record_function
that finds no profiler). One profiler runs at a time; it records every thread.
"""
import enum
import json
import os
import threading
import time

from minigrad import backend

# the running profiler, or None: Function.apply and the backward pass read it on every op
active = None


class ProfilerActivity(enum.Enum):
    """What to profile, as torch.profiler.ProfilerActivity: CPU (the Python and array calls)
    and CUDA (the GPU: the profiler then waits for the device around each event)."""
    CPU = "cpu"
    CUDA = "cuda"


class profile:
    """Record every op and marked region while on: a context manager, or `start()` and
    `stop()`. `record_shapes`: keep each event's input shapes (key_averages can then group
    by them). `activities`: a list of ProfilerActivity (default both); without CUDA the
    GPU is not waited for. `enabled=False` records nothing (as torch.autograd.profiler)."""

    def __init__(self, activities=None, record_shapes=False, enabled=True):
        if activities is None:
            activities = [ProfilerActivity.CPU, ProfilerActivity.CUDA]
        activities = list(activities)
        wrong = [a for a in activities if not isinstance(a, ProfilerActivity)]
        if wrong:
            raise TypeError(f"profile: activities must be ProfilerActivity members "
                            f"(ProfilerActivity.CPU, ProfilerActivity.CUDA), got {wrong!r}")
        if not isinstance(record_shapes, bool) or not isinstance(enabled, bool):
            raise TypeError(f"profile: record_shapes and enabled must be bools, got "
                            f"{record_shapes!r} and {enabled!r}")
        self.wait_for_gpu = ProfilerActivity.CUDA in activities
        self.record_shapes, self.enabled = record_shapes, enabled
        self._events = []                # (name, kind, start_ns, end_ns, self_ns, tid, shapes)
        self._stacks = threading.local()  # per thread: the frames of its open events
        self._t0 = None
        self._running = False

    # ---- switching on and off --------------------------------------------------------
    def start(self):
        global active
        if not self.enabled:
            return self
        if active is not None:
            which = "this profiler is" if active is self else "another profiler is"
            raise RuntimeError(f"profile: {which} already running; stop it first "
                               f"(one profiler runs at a time)")
        # fresh stacks: a region a generator left open in an earlier run is not a parent now
        self._stacks = threading.local()
        self._events, self._t0, self._running = [], time.perf_counter_ns(), True
        active = self
        return self

    def stop(self):
        global active
        if active is self:
            active = None
        self._running = False

    def __enter__(self):
        return self.start()

    def __exit__(self, *exc):
        self.stop()

    # ---- recording (Function.apply, the backward pass, record_function) ----------------
    def run(self, name, kind, device, inputs, call, *args):
        """Call `call(*args)` as one event of an op on `device` whose inputs are `inputs`
        (Tensors: their shapes are kept under record_shapes); returns what it returns."""
        frame = self._open(device)
        start = time.perf_counter_ns()
        try:
            return call(*args)
        finally:
            self._close(frame, name, kind, device, inputs, start)

    def _open(self, device):
        """Open an event: its frame, [time of the events inside so far, the thread's stack]."""
        stack = getattr(self._stacks, "open", None)
        if stack is None:
            stack = self._stacks.open = []
        self._wait(device)              # work queued earlier is not this event's
        frame = [0, stack]
        stack.append(frame)
        return frame

    def _wait(self, device):
        """Wait for `device`'s queued work; None (a region, whose code may use any device):
        for every device started so far."""
        if not self.wait_for_gpu or device == "cpu":
            return
        backends = backend.started() if device is None else [backend.get(device)]
        for b in backends:
            if b.synchronize is not None:   # (None: a device whose arrays are host arrays)
                b.synchronize()

    def _close(self, frame, name, kind, device, inputs, start):
        self._wait(device)
        end = time.perf_counter_ns()
        inside, stack = frame
        # this event's own frame, not merely the last: a generator's region, closed while
        # its caller's are open, ends out of order
        at = next(i for i in range(len(stack) - 1, -1, -1) if stack[i] is frame)
        del stack[at]
        if at:                          # the enclosing event's self time excludes this one
            stack[at - 1][0] += end - start
        if self._running and start >= self._t0:     # (not one begun in an earlier run)
            self._events.append((name, kind, start, end, end - start - inside,
                                 threading.get_ident(),
                                 shapes_of(inputs) if self.record_shapes else None))

    # ---- results -----------------------------------------------------------------------
    def events(self):
        """Every event recorded, in the order they ended, as FunctionEvent."""
        return [FunctionEvent(*e[:2], (e[2] - self._t0) / 1e3, (e[3] - e[2]) / 1e3,
                              e[4] / 1e3, e[5], e[6]) for e in self._events]

    def key_averages(self, group_by_input_shape=False):
        """The events summed by name (and input shapes, with group_by_input_shape=True,
        which needs record_shapes=True), as an EventList of FunctionEventAvg."""
        if group_by_input_shape and not self.record_shapes:
            raise ValueError("key_averages(group_by_input_shape=True) needs the shapes: "
                             "profile with record_shapes=True")
        rows = {}
        for e in self.events():
            key = (e.name, str(e.input_shapes)) if group_by_input_shape else e.name
            if key not in rows:
                rows[key] = FunctionEventAvg(e.name, e.kind,
                                             e.input_shapes if group_by_input_shape else None)
            rows[key].add(e)
        return EventList(rows.values(), with_shapes=group_by_input_shape)

    def export_chrome_trace(self, path):
        """Write the events as a Chrome trace (JSON): open it in Perfetto
        (ui.perfetto.dev) or chrome://tracing to see each op on a time line. Written to a
        fresh file first and renamed, so an existing trace is never left half written."""
        trace = [{"name": e.name, "cat": e.kind, "ph": "X", "ts": e.start_us,
                  "dur": e.cpu_time_total, "pid": os.getpid(), "tid": e.thread,
                  **({"args": {"Input Shapes": e.input_shapes}} if e.input_shapes else {})}
                 for e in self.events()]
        path = os.fspath(path)
        tmp = f"{path}.{os.getpid()}.tmp"
        try:
            with open(tmp, "w", encoding="utf-8") as f:
                json.dump({"traceEvents": trace, "displayTimeUnit": "ms"}, f)
            os.replace(tmp, path)
        except OSError as e:            # a missing folder, a directory, no room: name `path`
            if os.path.exists(tmp):     # (and leave no half-written temporary behind)
                os.remove(tmp)
            raise type(e)(f"export_chrome_trace: cannot write the trace to {path!r}: "
                          f"{e.strerror or e}; give a file path in an existing, "
                          f"writable folder") from None


class record_function:
    """Mark a region of your own code, so that the profiler shows it as one event (its
    self time: what the ops inside do not account for). A context manager, or a decorator
    that marks each call. Costs nothing while no profiler runs."""

    def __init__(self, name):
        if not isinstance(name, str):
            raise TypeError(f"record_function: name must be a str, got "
                            f"{type(name).__name__}")
        self.name = name
        self._open = []     # (profiler, frame, start) per entry: one object may be re-entered

    def __enter__(self):
        prof = active
        if prof is not None:            # (None: the code inside may use any device)
            frame = prof._open(None)
            self._open.append((prof, frame, time.perf_counter_ns()))
        else:
            self._open.append(None)
        return self

    def __exit__(self, *exc):
        entry = self._open.pop()
        if entry is not None:
            prof, frame, start = entry
            prof._close(frame, self.name, "user_annotation", None, None, start)

    def __call__(self, fn):
        import functools

        @functools.wraps(fn)
        def marked(*args, **kwargs):
            with record_function(self.name):
                return fn(*args, **kwargs)
        return marked


def shapes_of(tensors):
    """Input shapes as record_shapes keeps them: a list per input, [] for a non-tensor
    (None: a gradient that did not come)."""
    if tensors is None:
        return []
    if not isinstance(tensors, (tuple, list)):
        tensors = (tensors,)
    return [list(getattr(t, "shape", ())) for t in tensors]


class FunctionEvent:
    """One recorded event; times in microseconds (PyTorch's unit). `cpu_time_total` and
    `self_cpu_time_total` are wall times: on a GPU, waited for (see the module's note)."""

    def __init__(self, name, kind, start_us, total_us, self_us, thread, input_shapes):
        self.name, self.kind, self.start_us, self.thread = name, kind, start_us, thread
        self.cpu_time_total, self.self_cpu_time_total = total_us, self_us
        self.input_shapes = input_shapes

    def __repr__(self):
        return (f"<FunctionEvent {self.name} ({self.kind}) total={self.cpu_time_total:.1f}us "
                f"self={self.self_cpu_time_total:.1f}us>")


class FunctionEventAvg:
    """Events of one name (and shapes) summed: count, total and self time (us), and the
    average total time per call, `cpu_time`."""

    def __init__(self, key, kind, input_shapes):
        self.key, self.kind, self.input_shapes = key, kind, input_shapes
        self.count, self.cpu_time_total, self.self_cpu_time_total = 0, 0.0, 0.0

    def add(self, e):
        self.count += 1
        self.cpu_time_total += e.cpu_time_total
        self.self_cpu_time_total += e.self_cpu_time_total

    @property
    def cpu_time(self):
        return self.cpu_time_total / self.count

    @property
    def self_cpu_time(self):
        return self.self_cpu_time_total / self.count

    def __repr__(self):
        return (f"<FunctionEventAvg {self.key} count={self.count} "
                f"total={self.cpu_time_total:.1f}us self={self.self_cpu_time_total:.1f}us>")


# table(sort_by=...): PyTorch's keys; on a GPU the times include the waited-for kernels,
# so its CUDA keys sort by the same times
_SORT_KEYS = {"cpu_time_total": "cpu_time_total", "self_cpu_time_total": "self_cpu_time_total",
              "cpu_time": "cpu_time", "self_cpu_time": "self_cpu_time", "count": "count",
              "cuda_time_total": "cpu_time_total", "self_cuda_time_total": "self_cpu_time_total",
              "device_time_total": "cpu_time_total",
              "self_device_time_total": "self_cpu_time_total"}


class EventList(list):
    """key_averages' rows: a list of FunctionEventAvg, with `table()` to print them."""

    def __init__(self, rows, with_shapes=False):
        super().__init__(rows)
        self.with_shapes = with_shapes

    def table(self, sort_by=None, row_limit=100):
        """The rows as a text table, most expensive first by `sort_by` (one of
        PyTorch's keys: "self_cpu_time_total", "cpu_time_total", "count", ...; None: in
        the order first seen), at most `row_limit` of them (-1: all). Percentages are of the
        sum of self times, which is the time spent in everything recorded."""
        rows = list(self)
        if sort_by is not None:
            if sort_by not in _SORT_KEYS:
                raise ValueError(f"table: sort_by must be one of {sorted(_SORT_KEYS)} or "
                                 f"None, got {sort_by!r}")
            rows.sort(key=lambda r: getattr(r, _SORT_KEYS[sort_by]), reverse=True)
        if row_limit is not None and row_limit >= 0:
            rows = rows[:row_limit]
        whole = sum(r.self_cpu_time_total for r in self) or 1.0
        head = ["Name", "Self %", "Self", "Total %", "Total", "Avg", "Calls"]
        lines = [[r.key, f"{100 * r.self_cpu_time_total / whole:.1f}%",
                  _time(r.self_cpu_time_total),
                  f"{100 * r.cpu_time_total / whole:.1f}%", _time(r.cpu_time_total),
                  _time(r.cpu_time), str(r.count)] for r in rows]
        if self.with_shapes:
            head.append("Input Shapes")
            for line, r in zip(lines, rows):
                line.append(str(r.input_shapes))
        widths = [max(len(x) for x in col) for col in zip(head, *lines)]
        def fmt(cells):       # names left, figures right, the shapes (last) unpadded
            return "  ".join(c.ljust(w) if i == 0 else c if i == 7 else c.rjust(w)
                             for i, (c, w) in enumerate(zip(cells, widths)))
        rule = "-" * len(fmt(head))
        return "\n".join([rule, fmt(head), rule, *map(fmt, lines), rule,
                          f"Self time total: {_time(whole)}"])

    def total_average(self):
        """All rows summed into one FunctionEventAvg (key "Total")."""
        total = FunctionEventAvg("Total", "total", None)
        for r in self:
            total.count += r.count
            total.cpu_time_total += r.cpu_time_total
            total.self_cpu_time_total += r.self_cpu_time_total
        return total


def _time(us):
    """A time in microseconds, shown as PyTorch's tables do (us, ms or s)."""
    if us >= 1e6:
        return f"{us / 1e6:.3f}s"
    if us >= 1e3:
        return f"{us / 1e3:.3f}ms"
    return f"{us:.3f}us"
