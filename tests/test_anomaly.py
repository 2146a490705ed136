"""Anomaly detection (anomaly.py): detect_anomaly / set_detect_anomaly switch it, each node
recorded meanwhile keeps its forward stack, a NaN gradient raises PyTorch's error naming
the op followed by that stack, other errors in backward are preceded by PyTorch's warning;
and while it is off an op pays one read of the thread state for it and checkpointing
together."""
import threading
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import autograd
from minigrad.utils.checkpoint import checkpoint

NAN_AT = "Function 'SqrtBackward0' returned nan values in its 0th output."


def nan_gradient():
    """A graph whose backward meets 0·∞ in Sqrt's gradient (as torch's does)."""
    x = mg.tensor([0.0, 1.0], requires_grad=True)
    y = x.sqrt()                          # THE SQRT LINE
    return (y * 0).sum()


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")   # 0·∞
def test_nan_gradient_raises_with_the_forward_stack():
    with pytest.warns(UserWarning, match="Anomaly Detection has been enabled"):
        with mg.autograd.detect_anomaly():
            assert mg.autograd.is_anomaly_enabled() and mg.is_anomaly_enabled()
            loss = nan_gradient()
            with pytest.warns(UserWarning, match="Error detected in SqrtBackward0"), \
                    pytest.raises(RuntimeError) as info:
                loss.backward()
    message = str(info.value)
    assert message.startswith(NAN_AT + "\n\nTraceback of forward call that caused the error:")
    assert "in nan_gradient\n    y = x.sqrt()                          # THE SQRT LINE" \
        in message
    assert message.rstrip().endswith("# THE SQRT LINE")     # ends at the caller's line
    assert not mg.autograd.is_anomaly_enabled()


def test_off_nan_passes_and_nodes_keep_no_stack():
    loss = nan_gradient()
    assert loss._ctx.forward_stack is None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")           # NumPy's 0·∞
        loss.backward()                            # NaN in .grad, no error: as torch


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")   # ∞ - ∞
def test_scatter_path_blames_only_its_own_nan():
    """An indexing op's fast backward adds into its input's gradient: a NaN it makes
    (∞ and -∞ into one place) is its own, one that ∞ from one op and -∞ from another
    make when summed is no op's (torch's leaf then just gets NaN)."""
    inf = mg.tensor([np.inf, -np.inf])
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    with autograd.set_detect_anomaly(True):
        (x[0] * inf[0] + x[0] * inf[1]).backward()        # two GetItem nodes: fine
        assert np.isnan(x.grad.numpy()[0]) and x.grad.numpy()[1] == 0
        y = x[mg.tensor([0, 0])]
        with pytest.warns(UserWarning, match="Error detected in GetItemBackward0"), \
                pytest.raises(RuntimeError, match="Function 'GetItemBackward0' returned nan "
                              "values in its 0th output"):
            (y * inf).sum().backward()


def test_set_detect_anomaly_switches_restores_and_check_nan():
    autograd.set_detect_anomaly(True)
    try:
        assert mg.autograd.is_anomaly_enabled() and mg.autograd.is_anomaly_check_nan_enabled()
        loss = nan_gradient()
        assert loss._ctx.forward_stack is not None
    finally:
        autograd.set_detect_anomaly(False)
    assert not mg.autograd.is_anomaly_enabled()
    with autograd.set_detect_anomaly(True, check_nan=False):
        assert not mg.autograd.is_anomaly_check_nan_enabled()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            nan_gradient().backward()                # stacks kept, NaN not looked for
    assert mg.autograd.is_anomaly_check_nan_enabled() and not mg.is_anomaly_enabled()

    @autograd.set_detect_anomaly(True)
    def inside():
        return mg.autograd.is_anomaly_enabled()
    assert not mg.autograd.is_anomaly_enabled() and inside()

    @autograd.detect_anomaly()
    def decorated():
        return mg.autograd.is_anomaly_enabled()
    with pytest.warns(UserWarning, match="Anomaly Detection"):
        assert decorated()
    assert not mg.autograd.is_anomaly_enabled()
    with pytest.raises(TypeError, match="must be bools"):
        autograd.set_detect_anomaly(1)


def test_one_detect_anomaly_entered_twice_restores_each_level():
    """A detect_anomaly object kept and entered again inside itself (a recursive
    function's `with ANOMALY:`): leaving the outer block turns the mode off again."""
    anomaly = autograd.detect_anomaly()
    with pytest.warns(UserWarning, match="Anomaly Detection"):
        with anomaly:
            with anomaly:
                pass
            assert mg.autograd.is_anomaly_enabled()
    assert not mg.autograd.is_anomaly_enabled() and autograd._state.marks is None


def test_an_error_in_backward_is_preceded_by_the_forward_stack():
    class Broken(mg.autograd.Function):
        @staticmethod
        def forward(ctx, x):
            return x * 2

        @staticmethod
        def backward(ctx, g):
            raise ValueError("broken backward")

    with autograd.set_detect_anomaly(True):
        y = Broken.apply(mg.ones(2, requires_grad=True))   # THE BROKEN LINE
        with pytest.warns(UserWarning, match="Error detected in BrokenBackward. Traceback of "
                          "forward call that caused the error:\n(.|\n)*# THE BROKEN LINE"), \
                pytest.raises(ValueError, match="broken backward"):
            y.sum().backward()
    # a node recorded with the mode off has no stack to show: PyTorch's words
    y = Broken.apply(mg.ones(2, requires_grad=True))
    with autograd.set_detect_anomaly(True):
        with pytest.warns(UserWarning, match="No forward pass information available"), \
                pytest.raises(ValueError):
            y.sum().backward()


@pytest.mark.filterwarnings("ignore:invalid value:RuntimeWarning")   # 0·∞
def test_with_checkpoint_both_marks_hold():
    """Checkpointing and anomaly mode share the one per-thread setting: inside a
    checkpointed function both apply, and each restores only its own part."""
    w = mg.tensor([0.0, 1.0], requires_grad=True)
    with autograd.set_detect_anomaly(True):
        out = checkpoint(lambda a: a.sqrt() * 0, w, use_reentrant=False)
        assert mg.autograd.is_anomaly_enabled()            # the checkpoint left it on
        with pytest.warns(UserWarning, match="Error detected in SqrtBackward0"), \
                pytest.raises(RuntimeError, match="Function 'SqrtBackward0' returned nan"):
            out.sum().backward()        # the recomputed segment's nodes carry stacks too
    x = mg.tensor([1.0, 4.0], requires_grad=True)
    out = checkpoint(lambda a: (a.sqrt() * 3).sum(), x, use_reentrant=False)
    out.backward()
    np.testing.assert_allclose(x.grad.numpy(), 1.5 / np.sqrt([1.0, 4.0]))
    assert autograd._state.marks is None                  # all off again


def test_the_mode_is_per_thread():
    seen = []
    with autograd.set_detect_anomaly(True):
        t = threading.Thread(target=lambda: seen.append(mg.autograd.is_anomaly_enabled()))
        t.start()
        t.join()
    assert seen == [False]


class CountingState:
    """Stands for the thread state, counting the attributes read from it."""

    def __init__(self, state):
        object.__setattr__(self, "state", state)
        object.__setattr__(self, "reads", [])

    def __getattr__(self, name):
        self.reads.append(name)
        return getattr(self.state, name)


def test_off_an_op_pays_one_read_for_checkpoint_and_anomaly(monkeypatch):
    """Function.apply reads autocast, grad mode and _state.marks, nothing more, and
    record_outputs grad mode and _state.marks."""
    counting = CountingState(autograd._state)
    monkeypatch.setattr(autograd, "_state", counting)
    x = mg.ones(2, 3, requires_grad=True)
    x * 2                                                    # apply
    assert counting.reads == ["autocast", "grad_enabled", "marks"]
    counting.reads.clear()
    mg.unbind(x)                                             # record_outputs
    assert counting.reads == ["grad_enabled", "marks"]
