"""Grad mode: whether ops record a graph for backward. One flag per thread (as PyTorch),
set by the context managers and decorators `no_grad`, `enable_grad`, `set_grad_enabled` and
`inference_mode`; `Function.apply` (autograd.py) reads it, and `_state.marks`: what else
it notes on each node it records (a checkpointed segment's token, anomaly mode's stack)."""
import functools
import inspect
import threading


class _ThreadState(threading.local):
    """Grad mode, one per thread (as PyTorch's): a thread that evaluates under no_grad()
    must not stop another thread's training step from recording its graph. threading.local
    runs __init__ once in each thread that reads it."""

    def __init__(self):
        self.grad_enabled = True
        # None, or the _Marks that Function.apply puts on every node it records: one
        # attribute for all of them, so that an op pays one read while none is on
        self.marks = None
        # None, or what autocast (amp.py) has on: Function.apply's one read while it is off
        self.autocast = None
        self.inference = False           # inside inference_mode(True) (is_inference_mode_enabled)


_state = _ThreadState()


class _Marks:
    """What a recorded node gets besides the graph, while one of these is on (never
    changed: set_marks makes a new one). `segment`: the token of the checkpointed function
    running (utils/checkpoint.py), which tells the nodes it records from those made before
    it. `anomaly`: anomaly mode (anomaly.py) is on, so each node keeps the stack of the code
    that recorded it; `check_nan`: its backward checks gradients for NaN."""

    __slots__ = ("segment", "anomaly", "check_nan")

    def __init__(self, segment, anomaly, check_nan):
        self.segment, self.anomaly, self.check_nan = segment, anomaly, check_nan

    def put_on(self, fn):
        if self.segment is not None:
            fn.segment = self.segment
        if self.anomaly:
            from minigrad.anomaly import forward_stack
            fn.forward_stack = forward_stack()


def get_marks(name, default=None):
    """The current setting `name` of _Marks in this thread (default while none is on)."""
    marks = _state.marks
    return default if marks is None else getattr(marks, name)


def set_marks(**changes):
    """Change some settings of _Marks in this thread (the others stay: a checkpointed
    function that turns anomaly mode on leaves it on); none on at all is None again."""
    now = {name: get_marks(name, default) for name, default in
           (("segment", None), ("anomaly", False), ("check_nan", True))}
    now.update(changes)
    on = now["segment"] is not None or now["anomaly"]
    _state.marks = _Marks(**now) if on else None


class autocast_set:
    """Context manager: _state.autocast is `setting` (amp.py's, or None: off) until exit."""

    def __init__(self, setting):
        self.setting = setting

    def __enter__(self):
        self.prev, _state.autocast = _state.autocast, self.setting

    def __exit__(self, *exc):
        _state.autocast = self.prev


def autocast_float32(x):
    """x as float32 when it is float16 and autocast (amp.py) is on for its device, else x:
    for the functions on torch's float32 autocast list that compute float16 in float32
    inside and cast the result back (softmax, cross_entropy...): under autocast they
    return float32, as torch's."""
    on = _state.autocast
    if on is None or getattr(x, "dtype", None) != "float16" or \
            str(x.device).partition(":")[0] not in on.dtypes:
        return x
    return x.float()


def autocast_off(fn, *args, **kwargs):
    """fn(*args, **kwargs) with autocast off: for an op given an explicit dtype= (sum, prod,
    cumsum, cumprod, softmax, the norms), whose dtype wins over autocast's float32 list as
    in torch's, and for ops on no list built from ones that are (trace's sum). Callers test
    `_state.autocast is not None` first, so that the ordinary path pays nothing."""
    with autocast_set(None):
        return fn(*args, **kwargs)


def autocast_half(x):
    """x as autocast's float16 when it is float32 and autocast is on for its device, else x:
    for the functions on torch's float16 list whose float16 path computes in float32 inside
    (attention): they cast first, then run that path with autocast off (autocast_set(None)),
    which Function.apply's cast would otherwise turn back into a float16 computation."""
    on = _state.autocast
    if on is None or getattr(x, "dtype", None) != "float32":
        return x
    half = on.dtypes.get(str(x.device).partition(":")[0])
    return x if half is None else x.to(dtype=half)


def is_grad_enabled():
    return _state.grad_enabled


class _GradMode:
    """Context manager and decorator that sets grad mode (`no_grad`, `enable_grad`)."""

    def __init__(self, enabled):
        self.enabled = enabled

    def __enter__(self):
        self.prev, _state.grad_enabled = _state.grad_enabled, self.enabled

    def __exit__(self, *exc):
        _state.grad_enabled = self.prev

    def _again(self):
        """A fresh context manager of this mode, for each call of a decorated function."""
        return _GradMode(self.enabled)

    def __call__(self, fn):
        """As a decorator: fn runs in this mode. A generator function's body runs lazily, at
        each next(), so there the mode is set around every resumption (as PyTorch does),
        not only around the call that makes the generator."""
        again = self._again
        if inspect.isgeneratorfunction(fn):
            @functools.wraps(fn)
            def generator(*args, **kwargs):
                gen = fn(*args, **kwargs)
                try:
                    with again():
                        value = gen.send(None)
                    while True:            # what the caller sends, throws or closes goes on
                        try:
                            sent = yield value
                        except GeneratorExit:
                            with again():
                                gen.close()
                            raise
                        except BaseException as e:
                            with again():
                                value = gen.throw(e)
                        else:
                            with again():
                                value = gen.send(sent)
                except StopIteration as stop:
                    return stop.value
            return generator

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with again():
                return fn(*args, **kwargs)
        return wrapper


def no_grad(fn=None):
    """Ops inside build no graph: for evaluation, sampling and optimiser updates. A context
    manager (`with mg.no_grad():`) or a decorator, `@mg.no_grad()` or bare `@mg.no_grad`."""
    return _GradMode(False) if fn is None else _GradMode(False)(fn)


def enable_grad(fn=None):
    """Ops inside record graphs again (within no_grad), as no_grad is used."""
    return _GradMode(True) if fn is None else _GradMode(True)(fn)


class set_grad_enabled(_GradMode):
    """Grad mode on (True) or off (False), as torch.set_grad_enabled. It takes effect at the
    call, so `mg.set_grad_enabled(False)` alone switches it; in a `with` block, or as a
    decorator around each call of a function, the mode found at the call comes back on exit
    (exception or not): `with mg.set_grad_enabled(is_train): ...`. Per thread, as every
    grad mode here."""

    def __init__(self, mode):
        if not isinstance(mode, bool):   # as PyTorch: 0/1 or None are mistakes, not modes
            raise TypeError(f"set_grad_enabled: mode must be a bool (True: record graphs, "
                            f"False: do not), got {type(mode).__name__} {mode!r}")
        super().__init__(mode)
        self.prev, _state.grad_enabled = _state.grad_enabled, mode

    def __enter__(self):                 # prev was taken at the call: restored by __exit__
        _state.grad_enabled = self.enabled

    def __call__(self, fn):
        """As a decorator: undo the setting made at the call; each call of fn sets it anew."""
        _state.grad_enabled = self.prev
        return super().__call__(fn)


class inference_mode(_GradMode):
    """PyTorch's inference mode, as a context manager or decorator (`@mg.inference_mode()`,
    or bare `@mg.inference_mode`). PyTorch adds inference tensors, which skip version counts
    and may never enter a graph later; minigrad has no such tensors, so inference_mode() is
    exactly no_grad(), and inference_mode(False) turns grad mode on (as PyTorch's does)."""

    def __new__(cls, mode=True):
        if isinstance(mode, bool):
            return super().__new__(cls)
        if callable(mode):                           # bare @inference_mode: mode is the fn
            return cls()(mode)
        raise TypeError(f"inference_mode: mode must be a bool or a function to decorate, "
                        f"got {type(mode).__name__} {mode!r}")

    def __init__(self, mode=True):
        super().__init__(not mode)

    def _again(self):
        return inference_mode(not self.enabled)

    def __enter__(self):
        super().__enter__()
        self.prev_inference, _state.inference = _state.inference, not self.enabled

    def __exit__(self, *exc):
        super().__exit__(*exc)
        _state.inference = self.prev_inference


def is_inference_mode_enabled():
    """Whether an inference_mode(True) block is running in this thread (not no_grad's)."""
    return _state.inference
