"""autograd.graph's register_multi_grad_hook and increment_version (autograd_graph.py),
against PyTorch's where it is installed."""
import gc

import pytest

import minigrad as mg
from minigrad import autograd_graph


def _shapes(grads):
    return [None if g is None else tuple(g.shape) for g in grads]


def _scenario(lib, with_grad=True):
    """What an "all" and an "any" hook see over the passes below (the last after remove).
    (PyTorch refuses the mg.grad pass: its hook cannot tell whether a leaf is needed there.)"""
    a = lib.ones(2, 3, requires_grad=True)
    b = lib.ones(2, 3, requires_grad=True)
    c, d = a * b, a * b * 2
    seen = []
    h = lib.autograd.graph.register_multi_grad_hook(
        (a, b, c, d), lambda gs: seen.append(("all", _shapes(gs))))
    lib.autograd.graph.register_multi_grad_hook(
        (a, b, c, d), lambda g: seen.append(("any", float(g.sum()))), mode="any")
    c.sum().backward(retain_graph=True)               # d is not reached: not waited for
    seen.append("|")
    c.sum().backward(inputs=(a, c), retain_graph=True)   # b is not needed: None
    seen.append("|")
    if with_grad:
        lib.autograd.grad(d.sum(), (a,))              # c and b are not needed
        seen.append("|")
    h.remove()
    c.sum().backward()
    return seen


def test_multi_grad_hooks_as_torchs(torch):
    assert _scenario(mg, False) == _scenario(torch, False)


def test_multi_grad_hooks_gather_one_pass_at_a_time():
    seen = _scenario(mg)
    assert seen == [("any", 6.0), ("all", [(2, 3), (2, 3), (2, 3), None]), "|",
                    ("any", 6.0), ("all", [(2, 3), None, (2, 3), None]), "|",
                    ("any", 6.0), ("all", [(2, 3), None, None, (2, 3)]), "|",
                    ("any", 6.0)]


def test_a_tensor_reached_without_a_gradient_is_reported_at_the_end_of_the_pass():
    class FirstOnly(mg.autograd.Function):          # no gradient for its second input
        @staticmethod
        def forward(ctx, x, w):
            return x * 1

        @staticmethod
        def backward(ctx, g):
            return g, None
    x, w = mg.ones(3, requires_grad=True), mg.ones(3, requires_grad=True)
    seen = []
    mg.autograd.graph.register_multi_grad_hook((x, w), lambda gs: seen.append(_shapes(gs)))
    FirstOnly.apply(x, w).sum().backward()
    assert seen == [[(3,), None]]


def test_bad_arguments_are_named():
    x = mg.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="mode must be 'all' or 'any', got 'first'"):
        mg.autograd.graph.register_multi_grad_hook((x,), print, mode="first")
    with pytest.raises(RuntimeError, match="tensor 1 does not require grad"):
        mg.autograd.graph.register_multi_grad_hook((x, mg.ones(2)), print)
    with pytest.raises(TypeError, match="expected a function, got int"):
        mg.autograd.graph.register_multi_grad_hook((x,), 3)


def test_a_pass_costs_nothing_once_the_hooks_are_gone():
    gc.collect()                                      # hooks of earlier tests' tensors
    x = mg.ones(2, requires_grad=True)
    live = autograd_graph.LIVE[0]
    h = mg.autograd.graph.register_multi_grad_hook((x,), print)
    assert autograd_graph.LIVE[0] == live + 1
    h.remove()
    h.remove()                                        # twice: counted off once
    assert autograd_graph.LIVE[0] == live
    y = mg.ones(2, requires_grad=True)
    mg.autograd.graph.register_multi_grad_hook((y,), print)
    del y
    gc.collect()                                      # gone with its tensor
    assert autograd_graph.LIVE[0] == live
    assert autograd_graph.frame([], None) is autograd_graph._NO_FRAME


def test_increment_version_makes_a_backward_that_saved_the_value_refuse():
    x = mg.ones(2, requires_grad=True)
    y = x.exp()
    v = y._version
    mg.autograd.graph.increment_version(y)
    assert y._version == v + 1
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()
    with pytest.raises(TypeError, match="expected Tensors, got int"):
        mg.autograd.graph.increment_version([y, 3])


def test_saved_tensor_hooks_are_refused_with_the_reason_and_save_on_cpu_runs(monkeypatch):
    with pytest.raises(NotImplementedError, match="holds its ops' inputs themselves.*"
                                                  "mg.utils.checkpoint"):
        mg.autograd.graph.saved_tensors_hooks(lambda t: t, lambda t: t)
    with mg.autograd.graph.disable_saved_tensors_hooks("no"):
        pass
    x = mg.ones(2, requires_grad=True)
    from minigrad import backend
    monkeypatch.setattr(backend, "cuda_is_available", lambda: False)
    with mg.autograd.graph.save_on_cpu(pin_memory=True):   # on the CPU: nothing to move
        y = (x * 2).sum()
    y.backward()
    assert x.grad.tolist() == [2.0, 2.0]
    monkeypatch.setattr(backend, "cuda_is_available", lambda: True)
    with pytest.warns(UserWarning, match="save_on_cpu moves nothing"):
        with mg.autograd.graph.save_on_cpu():
            pass
