"""Grad mode switches beside no_grad/enable_grad: set_grad_enabled (a call that takes effect
at once, a context manager, a decorator) and inference_mode, each per thread, as PyTorch's."""
import threading

import pytest

import minigrad as mg


@pytest.fixture(autouse=True)
def grad_mode_restored():
    """A failing test must not leave grad mode off for the tests after it."""
    yield
    mg.set_grad_enabled(True)


def _records():
    """Whether an op on a tensor that requires grad records a graph now."""
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    return (x * 2).requires_grad


def test_set_grad_enabled_as_a_call_switches_at_once():
    mg.set_grad_enabled(False)
    assert not mg.is_grad_enabled() and not _records()
    mg.set_grad_enabled(True)
    assert mg.is_grad_enabled() and _records()


def test_set_grad_enabled_as_a_context_restores_the_mode_found_at_the_call():
    with mg.set_grad_enabled(False):
        assert not _records()
    assert _records()
    with mg.no_grad():
        with mg.set_grad_enabled(True):
            assert _records()
        assert not _records()
    assert _records()


def test_set_grad_enabled_nested():
    with mg.set_grad_enabled(False):
        with mg.set_grad_enabled(True):
            with mg.set_grad_enabled(False):
                assert not mg.is_grad_enabled()
            assert mg.is_grad_enabled()
        assert not mg.is_grad_enabled()
    assert mg.is_grad_enabled()


def test_set_grad_enabled_as_a_decorator_sets_the_mode_around_each_call_only():
    @mg.set_grad_enabled(False)
    def evaluate(x):
        """Docstring kept."""
        return mg.is_grad_enabled(), (x * 2).requires_grad

    assert mg.is_grad_enabled()                  # decorating changed nothing
    x = mg.tensor([1.0], requires_grad=True)
    assert evaluate(x) == (False, False)
    assert mg.is_grad_enabled()
    assert evaluate.__name__ == "evaluate" and evaluate.__doc__ == "Docstring kept."

    @mg.set_grad_enabled(True)
    def train_step(x):
        return (x * 2).requires_grad

    with mg.no_grad():
        assert train_step(x) is True
        assert not mg.is_grad_enabled()


def test_set_grad_enabled_restores_after_an_exception():
    with pytest.raises(ValueError, match="inside"):
        with mg.set_grad_enabled(False):
            raise ValueError("inside")
    assert mg.is_grad_enabled()

    @mg.set_grad_enabled(False)
    def fails():
        raise KeyError("boom")

    with pytest.raises(KeyError):
        fails()
    assert mg.is_grad_enabled()


def test_set_grad_enabled_needs_a_bool():
    for bad in (0, 1, None, "False"):
        with pytest.raises(TypeError, match="set_grad_enabled: mode must be a bool"):
            mg.set_grad_enabled(bad)
    assert mg.is_grad_enabled()                  # a refused call changed nothing


def test_grad_mode_is_per_thread():
    seen = {}

    def worker():
        seen["start"] = mg.is_grad_enabled()     # a new thread starts with grad on
        mg.set_grad_enabled(False)
        seen["after"] = _records()
        ready.set()
        go.wait(5)

    ready, go = threading.Event(), threading.Event()
    with mg.no_grad():
        t = threading.Thread(target=worker)
        t.start()
        ready.wait(5)
        assert not mg.is_grad_enabled()
    assert _records()                           # the worker's switch did not reach here
    go.set()
    t.join(5)
    assert seen == {"start": True, "after": False}


def test_inference_mode_is_no_grad():
    with mg.inference_mode():
        assert not _records()
    assert _records()
    with mg.inference_mode(True):
        assert not mg.is_grad_enabled()


def test_inference_mode_false_does_not_disable_grad():
    with mg.inference_mode(False):
        assert _records()
    with mg.no_grad():
        with mg.inference_mode(False):           # as PyTorch: it turns grad mode back on
            assert _records()
        assert not mg.is_grad_enabled()


def test_inference_mode_as_a_decorator_with_and_without_parentheses():
    @mg.inference_mode()
    def a():
        return mg.is_grad_enabled()

    @mg.inference_mode
    def b():
        """Doc."""
        return mg.is_grad_enabled()

    @mg.inference_mode(False)
    def c():
        return mg.is_grad_enabled()

    assert (a(), b(), mg.is_grad_enabled()) == (False, False, True)
    assert b.__name__ == "b" and b.__doc__ == "Doc."
    with mg.no_grad():
        assert c() is True and not mg.is_grad_enabled()


def test_inference_mode_restores_after_an_exception_and_checks_its_argument():
    with pytest.raises(RuntimeError):
        with mg.inference_mode():
            raise RuntimeError
    assert mg.is_grad_enabled()
    with pytest.raises(TypeError, match="inference_mode: mode must be a bool or a function"):
        mg.inference_mode(0)


def _script(lib):
    """The same sequence of switches, read back after each step."""
    seen = []
    lib.set_grad_enabled(False)
    seen.append(lib.is_grad_enabled())
    with lib.set_grad_enabled(True):
        seen.append(lib.is_grad_enabled())
    seen.append(lib.is_grad_enabled())
    ctx = lib.set_grad_enabled(True)             # takes effect here, before any `with`
    seen.append(lib.is_grad_enabled())
    with ctx:
        seen.append(lib.is_grad_enabled())
    seen.append(lib.is_grad_enabled())           # back to the mode found at the call

    @lib.set_grad_enabled(True)
    def f():
        return lib.is_grad_enabled()
    seen += [lib.is_grad_enabled(), f(), lib.is_grad_enabled()]
    with lib.inference_mode(False):
        seen.append(lib.is_grad_enabled())
    with lib.inference_mode():
        seen.append(lib.is_grad_enabled())
    lib.set_grad_enabled(True)
    return seen


def test_same_sequence_of_modes_as_torch():
    torch = pytest.importorskip("torch")
    assert _script(mg) == _script(torch)
    assert _script(mg) == [False, True, False, True, True, False, False, True, False, True,
                           False]


@pytest.mark.parametrize("make,inside", [
    # made in the test: set_grad_enabled(False) takes effect when it is called, and at
    # collection that would switch grad mode off for every test after
    (lambda: mg.no_grad(), False), (lambda: mg.no_grad, False),
    (lambda: mg.enable_grad(), True), (lambda: mg.set_grad_enabled(False), False),
    (lambda: mg.inference_mode(), False)])
def test_decorated_generators_run_in_the_mode_at_every_resumption(make, inside):
    """A generator's body runs at next(), after the decorated call has returned: the mode
    must be set around each resumption (sampling loops are often generators)."""
    @make()
    def steps(x):
        got = yield (x * 2).requires_grad
        yield got, mg.is_grad_enabled()
        return "done"

    outside = not inside
    with mg.set_grad_enabled(outside):
        g = steps(mg.tensor([1.0], requires_grad=True))
        assert next(g) is inside and mg.is_grad_enabled() is outside
        assert g.send("sent") == ("sent", inside) and mg.is_grad_enabled() is outside
        with pytest.raises(StopIteration) as stop:
            next(g)
        assert stop.value.value == "done"


def test_decorators_keep_the_function_s_identity():
    def evaluate(x, *, scale=2):
        """Docs."""
        return x * scale
    for deco in (mg.no_grad(), mg.no_grad, mg.enable_grad(), mg.set_grad_enabled(False)):
        f = deco(evaluate)                          # (decorating restores the mode)
        assert (f.__name__, f.__doc__, f.__qualname__) == (
            "evaluate", "Docs.", evaluate.__qualname__) and f.__wrapped__ is evaluate


def test_a_decorated_generator_receives_throws_and_closes_in_its_mode():
    """contextlib.contextmanager over @no_grad(): the exception of the with-block reaches
    the generator, and its cleanup runs, in no-grad mode (as PyTorch)."""
    import contextlib
    log = []

    @contextlib.contextmanager
    @mg.no_grad()
    def ctx():
        try:
            yield
        except KeyError:
            log.append(("handled", mg.is_grad_enabled()))
        finally:
            log.append(("cleanup", mg.is_grad_enabled()))

    with ctx():
        raise KeyError
    assert log == [("handled", False), ("cleanup", False)] and mg.is_grad_enabled()

    @mg.no_grad()
    def numbers():
        try:
            yield 1
            yield 2
        finally:
            log.append(("closed", mg.is_grad_enabled()))
    it = numbers()
    assert next(it) == 1
    it.close()
    assert log[-1] == ("closed", False)
