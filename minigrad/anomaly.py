"""Anomaly detection, as torch.autograd's: `detect_anomaly()` (a context manager or
decorator) and `set_detect_anomaly(mode)`. While it is on, every op recorded keeps the stack
of the code that recorded it (`Function.forward_stack`, put there by grad_mode._Marks: the
only cost when it is off is the one read of `_state.marks` that checkpointing needs too),
and backward checks what each op's backward returns: a NaN gradient raises

    RuntimeError: Function 'SqrtBackward' returned nan values in its 0th output.

followed by that op's forward stack, and any error in an op's backward is preceded by a
warning naming the op, with that stack (PyTorch's words; minigrad names a node after its op
class, `Sqrt` -> 'SqrtBackward', where PyTorch says 'SqrtBackward0'). Per thread, as grad
mode here: PyTorch's setting is one for the whole process.
"""
import functools
import os
import sys
import traceback
import warnings

from minigrad.grad_mode import get_marks, set_marks

# the folders of the Tensor methods, ops and recording machinery: the innermost frames of a
# forward stack, there, are left off, so that it ends where PyTorch's does, at the code that
# called the op (a layer's forward, or the user's line)
_MACHINERY = (os.path.dirname(__file__), os.path.join(os.path.dirname(__file__), "ops"))


def is_anomaly_enabled():
    """Whether anomaly mode is on in this thread."""
    return get_marks("anomaly", False)


def is_anomaly_check_nan_enabled():
    """Whether anomaly mode, if on, checks gradients for NaN."""
    return get_marks("check_nan", True)


class set_detect_anomaly:
    """Anomaly mode on (True) or off (False), from the call on, as
    torch.autograd.set_detect_anomaly: alone it switches the mode; in a `with` block, or as
    a decorator around each call of a function, the setting found at the call comes back
    on exit (exception or not)."""

    def __init__(self, mode, check_nan=True):
        if not isinstance(mode, bool) or not isinstance(check_nan, bool):
            raise TypeError(f"set_detect_anomaly: mode and check_nan must be bools, got "
                            f"{mode!r} and {check_nan!r}")
        self.mode, self.check_nan = mode, check_nan
        self.prev = (is_anomaly_enabled(), is_anomaly_check_nan_enabled())
        set_marks(anomaly=mode, check_nan=check_nan)

    def __enter__(self):
        set_marks(anomaly=self.mode, check_nan=self.check_nan)

    def __exit__(self, *exc):
        set_marks(anomaly=self.prev[0], check_nan=self.prev[1])

    def __call__(self, fn):
        """As a decorator: undo the setting made at the call; each call of fn sets it."""
        self.__exit__()

        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with type(self)(self.mode, self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


class detect_anomaly(set_detect_anomaly):
    """Anomaly mode on inside a `with` block (or each call of a decorated function), with
    PyTorch's warning that it slows everything down. `check_nan=False` keeps the forward
    stacks for errors raised in backward but does not look for NaN."""

    def __init__(self, check_nan=True):
        if not isinstance(check_nan, bool):
            raise TypeError(f"detect_anomaly: check_nan must be a bool, got {check_nan!r}")
        self.mode, self.check_nan = True, check_nan     # set on entering, not at the call
        self.prevs = []         # one per entry: the object may be entered again inside

    def __enter__(self):
        warnings.warn("Anomaly Detection has been enabled. This mode will increase the "
                      "runtime and should only be enabled for debugging.", stacklevel=2)
        self.prevs.append((is_anomaly_enabled(), is_anomaly_check_nan_enabled()))
        super().__enter__()

    def __exit__(self, *exc):
        self.prev = self.prevs.pop()
        super().__exit__()

    def __call__(self, fn):
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with detect_anomaly(self.check_nan):
                return fn(*args, **kwargs)
        return wrapper


def forward_stack():
    """The stack of the code recording a node now, up to the call of the op."""
    stack = traceback.extract_stack(sys._getframe(1))
    while stack and os.path.dirname(stack[-1].filename) in _MACHINERY:
        stack.pop()
    return stack


def node_name(ctx):
    """A node's event name in the profiler ('MulBackward'; messages use ctx.name())."""
    name = type(ctx).__name__
    return name if name.endswith("Backward") else name + "Backward"


def _where(ctx):
    stack = ctx.forward_stack
    if stack is None:
        return ("No forward pass information available. Enable detect anomaly during "
                "forward pass for more information.")
    return "Traceback of forward call that caused the error:\n" + \
        "".join(traceback.format_list(stack)).rstrip()


class Checks:
    """What backward (backward.py) does for anomaly mode, for one node at a time."""

    def __init__(self, check_nan):
        self.check_nan = check_nan

    def check(self, ctx, in_grads):
        """Refuse a NaN in the gradients that node ctx's backward returned."""
        if not self.check_nan:
            return
        for i, g in enumerate(in_grads):
            if g is not None and bool(g.backend.xp.isnan(g._data).any()):
                raise RuntimeError(f"Function '{ctx.name()}' returned nan values in its "
                                   f"{i}th output.\n\n{_where(ctx)}")

    def blame(self, ctx, error):
        """Warn, once, which node's backward raised `error`, with its forward stack."""
        if not getattr(error, "_anomaly_blamed", False):
            error._anomaly_blamed = True   # (a checkpoint's inner backward warned already)
            warnings.warn(f"Error detected in {ctx.name()}. {_where(ctx)}", stacklevel=2)


def checks():
    """The Checks for a backward starting now: None while anomaly mode is off."""
    return Checks(is_anomaly_check_nan_enabled()) if is_anomaly_enabled() else None
