"""mg.gradcheck / mg.gradgradcheck: pass on correct gradients, raise GradcheckError naming the
worst element on a wrong one, refuse NaN/inf inputs, and never change the inputs."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad.autograd import Function


class WrongSquare(Function):
    """x² with a backward off by 50%."""
    def forward(self, a): return a * a
    def backward(self, g): return g * self.inputs[0] * 3


class FirstOrderOnlySquare(Function):
    """x² whose backward is right but built from a constant: its second derivative is lost."""
    def forward(self, a): return a * a
    def backward(self, g): return g * self.const(2 * self.inputs[0]._data)


def _x(shape=(2, 3), seed=0, dtype=mg.float64):
    return mg.tensor(np.random.default_rng(seed).uniform(0.5, 2, shape), dtype=dtype,
                     requires_grad=True)


@pytest.mark.parametrize("fn,n", [
    (lambda x: (x * x).exp().sum(1), 1),
    (lambda x, y: x @ y.T, 2),
    (lambda x, y: (x / y).log_softmax(-1), 2),
    (lambda x, y: (x.max(dim=1), y.tanh()), 2),                # tuples, and integer outputs
    (lambda x, y: F.layer_norm(x, (3,), y[0], y[1]), 2),
])
def test_passes_on_correct_ops(fn, n):
    xs = [_x(seed=i) for i in range(n)]
    assert mg.gradcheck(fn, xs) is True
    assert mg.gradgradcheck(fn, xs) is True


def test_non_tensor_and_constant_inputs_are_passed_through():
    x, c = _x(), mg.tensor(np.ones((2, 3)), dtype=mg.float64)
    assert mg.gradcheck(lambda a, b, k: (a * b) ** k, [x, c, 3])
    assert mg.gradcheck(lambda a: a.sum(), x)                  # a single tensor, not a list
    assert mg.gradgradcheck(lambda a: a * 2.0, [x])             # linear: a zero 2nd derivative


def test_raises_with_the_worst_element_on_a_wrong_backward():
    x = _x()
    with pytest.raises(mg.GradcheckError, match=r"input 0 \(shape \(2, 3\)\) differs at "
                                                r"\(\d, \d\): analytic .*, numeric .*"):
        mg.gradcheck(lambda a: WrongSquare.apply(a), [x])
    assert mg.gradcheck(lambda a: WrongSquare.apply(a), [x], raise_exception=False) is False
    assert issubclass(mg.GradcheckError, AssertionError)


class NaNAtOneElement(Function):
    """2x whose backward is right except for one element, NaN there."""
    def forward(self, a): return a * 2
    def backward(self, g):
        poison = np.ones(self.inputs[0].shape)
        poison.flat[-1] = np.nan
        return g * 2 * self.const(poison)


def test_a_nan_or_infinite_gradient_is_a_mismatch_and_named():
    """A NaN compares False with every tolerance, so `error > tolerance` let it pass: a
    backward returning NaN was certified. Now a NaN on either side fails, and is reported
    as the worst element (here the one NaN among right values)."""
    with pytest.raises(mg.GradcheckError, match=r"differs at \(1, 2\): analytic nan"):
        mg.gradcheck(lambda a: NaNAtOneElement.apply(a), [_x()])
    at_zero = mg.tensor([0.0, 1.0], dtype=mg.float64, requires_grad=True)
    with np.errstate(divide="ignore", invalid="ignore"):   # √x at 0: inf against NaN
        assert mg.gradcheck(lambda a: a.sqrt(), [at_zero], raise_exception=False) is False
        negative = mg.tensor([-1.0, -4.0], dtype=mg.float64, requires_grad=True)
        assert mg.gradcheck(lambda a: a.sqrt(), [negative], raise_exception=False) is False


def test_gradgradcheck_catches_a_lost_second_derivative():
    x = _x()
    assert mg.gradcheck(lambda a: FirstOrderOnlySquare.apply(a), [x])
    with pytest.raises(mg.GradcheckError):
        mg.gradgradcheck(lambda a: FirstOrderOnlySquare.apply(a), [x])
    assert mg.gradgradcheck(lambda a: FirstOrderOnlySquare.apply(a), [x],
                            raise_exception=False) is False


@pytest.mark.parametrize("bad", [float("nan"), float("inf"), -float("inf")])
def test_rejects_non_finite_inputs(bad):
    x = mg.tensor([1.0, bad], dtype=mg.float64, requires_grad=True)
    with pytest.raises(ValueError, match="NaN or inf"):
        mg.gradcheck(lambda a: a * 2, [x])


def test_needs_an_input_that_requires_grad():
    with pytest.raises(ValueError, match="no input requires grad"):
        mg.gradcheck(lambda a: a * 2, [mg.ones(2)])


def test_inputs_are_left_unchanged_and_float32_is_checked_in_float64(device):
    x = _x(dtype=mg.float32).to(device)
    x = x.detach().requires_grad_()
    before = x.numpy().copy()
    seen = []
    assert mg.gradcheck(lambda a: (seen.append(a.dtype), a.tanh())[1], [x])
    np.testing.assert_array_equal(x.numpy(), before)
    assert x.dtype == mg.float32 and x.grad is None
    assert set(seen) == {mg.float64}


class WrongWhenStrided(Function):
    """x² whose backward is off by 50% only for a non-contiguous input."""
    def forward(self, a): return a * a
    def backward(self, g):
        x = self.inputs[0]
        return g * x * (2 if x._data.flags.c_contiguous else 3)


def test_non_contiguous_and_broadcast_inputs():
    """A strided input reaches the function strided (and is perturbed through its view)."""
    seen = []

    def square(a):
        seen.append(a._data.flags.c_contiguous)
        return a * a
    for x in (mg.randn(3, 2, dtype=mg.float64).T, mg.randn(2, 6, dtype=mg.float64)[:, ::2]):
        x = x.detach().requires_grad_()
        seen.clear()
        assert mg.gradcheck(square, [x]) and not any(seen)
        with pytest.raises(mg.GradcheckError):
            mg.gradcheck(lambda a: WrongWhenStrided.apply(a), [x])
    assert mg.gradcheck(lambda a: WrongWhenStrided.apply(a), [_x()])   # contiguous: right
    e = mg.ones(3, dtype=mg.float64).expand(2, 3).detach().requires_grad_()
    assert mg.gradcheck(lambda a: (a * a).sum(0), [e])


def test_outputs_nested_in_tuples_are_all_checked():
    x = _x()
    with pytest.raises(mg.GradcheckError):                      # nested one level down
        mg.gradcheck(lambda a: (a.tanh(), (WrongSquare.apply(a),)), [x])
    with pytest.raises(ValueError, match="returned no Tensor"):
        mg.gradcheck(lambda a: "nothing", [x])
