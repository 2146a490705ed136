"""dtype= on the reductions and softmax (the input cast first, as PyTorch; an integer or bool
dtype is the result's too), t.max(other), torch.div's rounding modes, and integer numbers
beside integer tensors in true division and as pow's exponent."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F


def test_reductions_cast_their_input_to_dtype_first():
    x = mg.tensor([[1, 2], [3, 4]], dtype=mg.int32)
    assert x.sum(dtype=mg.float64).dtype == mg.float64 and x.sum(dtype=mg.float64).item() == 10
    assert mg.sum(x, 0, dtype=mg.float32).dtype == mg.float32
    np.testing.assert_array_equal(x.mean(0, dtype=mg.float64).numpy(), [2.0, 3.0])
    assert mg.mean(x, dtype=mg.float32).item() == 2.5               # ints need a dtype
    assert x.prod(dtype=mg.float32).item() == 24.0
    np.testing.assert_array_equal(x.cumsum(0, dtype=mg.float64).numpy(), [[1, 2], [4, 6]])
    cancel = mg.tensor([1e8, 1.0, -1e8])                  # float32 values: 1e8 + 1 rounds
    assert cancel.sum(dtype=mg.float64).item() == 1.0       # back in float32, not float64


@pytest.mark.parametrize("fn", ["softmax", "log_softmax"])
def test_softmax_dtype_runs_in_that_dtype_and_grads_come_back_in_the_inputs(fn):
    h = mg.tensor([[1.0, 2.0, 30.0]], dtype=mg.float16, requires_grad=True)
    y = getattr(F, fn)(h, -1, dtype=mg.float32)
    assert y.dtype == mg.float32 and getattr(h, fn)(-1, mg.float32).dtype == mg.float32
    y.sum().backward()
    assert h.grad.dtype == mg.float16
    want = getattr(F, fn)(h.detach().float(), -1)
    np.testing.assert_array_equal(y.detach().numpy(), want.numpy())


def test_max_and_min_of_another_tensor_are_elementwise():
    a, b = mg.tensor([1.0, 5.0]), mg.tensor([3.0, 2.0])
    np.testing.assert_array_equal(a.max(b).numpy(), [3.0, 5.0])
    np.testing.assert_array_equal(a.min(b).numpy(), [1.0, 2.0])
    np.testing.assert_array_equal(mg.max(a, b).numpy(), [3.0, 5.0])
    np.testing.assert_array_equal(mg.min(a, other=b).numpy(), [1.0, 2.0])
    assert a.max().item() == 5.0 and a.max(0).indices.item() == 1


INTS = [(7, 2), (-7, 2), (7, -2), (-7, -2), (0, 3), (6, -3), (-1, 5)]


@pytest.mark.parametrize("mode", ["trunc", "floor"])
def test_div_rounding_of_integers_keeps_integers(mode):
    a, b = (mg.tensor([p[i] for p in INTS]) for i in (0, 1))
    q = mg.div(a, b, rounding_mode=mode)
    want = [math.trunc(x / y) if mode == "trunc" else x // y for x, y in INTS]
    assert q.dtype == mg.int64 and q.tolist() == want
    assert a.div(b, rounding_mode=mode).tolist() == want
    with pytest.raises(ZeroDivisionError, match="division by zero"):
        mg.div(a, mg.zeros(len(INTS), dtype=mg.int64), rounding_mode=mode)


def test_div_rounding_of_floats_and_its_gradient():
    a = mg.tensor([7.5, -7.5, 1e-3, -0.0], requires_grad=True)
    b = mg.tensor([2.0, 2.0, -1e-4, 3.0])
    np.testing.assert_array_equal(mg.div(a, b, rounding_mode="trunc").detach().numpy(),
                                  [3.0, -3.0, -10.0, -0.0])
    np.testing.assert_array_equal(mg.div(a, b, rounding_mode="floor").detach().numpy(),
                                  [3.0, -4.0, -11.0, -0.0])
    mg.div(a, b, rounding_mode="trunc").sum().backward()
    np.testing.assert_array_equal(a.grad.numpy(), [0.0] * 4)       # a step: 0, as PyTorch
    assert mg.div(mg.tensor([3]), 2).item() == 1.5 and mg.true_divide(mg.tensor([3]), 2).dtype \
        == mg.float32
    assert mg.divide(7, mg.tensor([2]), rounding_mode="trunc").tolist() == [3]
    with pytest.raises(ValueError, match="'trunc' or 'floor'"):
        mg.div(a, b, rounding_mode="round")


def test_div_matches_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    fa, fb = rng.normal(0, 10, 200), rng.normal(0, 3, 200)
    ia, ib = rng.integers(-50, 50, 200), rng.choice([-7, -3, -1, 1, 2, 5], 200)
    for mode in (None, "trunc", "floor"):
        for a, b in ((fa, fb), (ia, ib)):
            got = mg.div(mg.tensor(a), mg.tensor(b), rounding_mode=mode)
            want = torch.div(torch.tensor(a), torch.tensor(b), rounding_mode=mode)
            assert str(got.dtype) == str(want.dtype).removeprefix("torch.")
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-15)


def test_div_trunc_by_zero_has_a_zero_gradient():
    a = mg.tensor([1.0, 2.0], requires_grad=True)
    b = mg.tensor([0.0, 3.0], requires_grad=True)
    with np.errstate(divide="ignore"):
        q = mg.div(a, b, rounding_mode="trunc")
    q.sum().backward()
    assert q[0].item() == math.inf
    np.testing.assert_array_equal(a.grad.numpy(), [0.0, 0.0])     # not NaN, as PyTorch
    np.testing.assert_array_equal(b.grad.numpy(), [0.0, 0.0])


def test_add_alpha_scales_after_the_promotion():
    assert mg.tensor(0.0, dtype=mg.float64).sub(mg.tensor([-4]), alpha=-0.5).dtype == \
        mg.float64
    assert mg.tensor([1.0], dtype=mg.float16).add(mg.tensor([3]), alpha=0.5).dtype == \
        mg.float16
    np.testing.assert_array_equal(mg.tensor([1, 2]).add(mg.tensor([1.0, 1.0]), alpha=0.5)
                                  .numpy(), [1.5, 2.5])
    with pytest.raises(TypeError, match="dtype int64 alpha must be an integer"):
        mg.tensor([1, 2]).add(mg.tensor([1, 1]), alpha=0.5)


def test_add_alpha_scales_in_the_wider_float():
    assert mg.tensor([1.0], dtype=mg.float64).add(mg.tensor([3.0]), alpha=0.1).item() == 1.3
    assert mg.tensor([0.0], dtype=mg.float64).sub(mg.tensor([1.0]), alpha=1 / 3).item() == \
        -1 / 3


def test_var_and_std_take_correction_none_as_the_default():
    x = mg.tensor([1.0, 2.0, 3.0, 4.0])
    assert abs(x.var(correction=None).item() - 5 / 3) < 1e-6
    assert abs(x.std(correction=None).item() - math.sqrt(5 / 3)) < 1e-6


def test_an_integer_or_bool_dtype_is_the_reductions_result():
    """sum(dtype=int8) was int64 (the sum of int8s), so u8.sum(dtype=uint8) gave 303, not
    PyTorch's wrapped 47; cumprod(dtype=int8) -16800, not 96."""
    x = mg.tensor([200, 100, 3], dtype=mg.uint8)
    for got, dtype, want in ((x.sum(dtype=mg.uint8), mg.uint8, 47),
                             (mg.sum(x, 0, dtype=mg.int16), mg.int16, 303),
                             (x.nansum(dtype=mg.int8), mg.int8, 47),
                             (x.float().sum(dtype=mg.bool), mg.bool, True)):
        assert got.dtype == dtype and got.item() == want
    assert x.cumsum(0, dtype=mg.int8).tolist() == [-56, 44, 47]
    assert x.cumprod(0, dtype=mg.uint8).tolist() == [200, 32, 96]
    assert x.cumsum(0, dtype=mg.int8).dtype == mg.int8 and x.cumsum(0).dtype == mg.int64
    for running in (x.cumsum, x.cumprod):
        with pytest.raises(TypeError, match="dtype=bool is not supported"):
            running(0, dtype=mg.bool)                   # as PyTorch (was int64 counts)


def test_an_integer_number_divides_an_integer_tensor_as_a_float():
    """The number was first made a tensor of the integer tensor's dtype, wrapping it: u8 / -1
    divided by 255, u8 / 300 by 44, i64 / 2**63 by -2**63."""
    u8 = mg.tensor([1, 2], dtype=mg.uint8)
    assert (u8 / -1).tolist() == [-1.0, -2.0] and (u8 / 300).dtype == mg.float32
    np.testing.assert_allclose((u8 / 300).numpy(), [1 / 300, 2 / 300], rtol=1e-7)
    assert (mg.tensor([1]) / 2 ** 63).item() == 2.0 ** -63
    assert (-1 / u8).tolist() == [-1.0, -0.5] and mg.div(u8, np.int64(-2)).tolist() == \
        [-0.5, -1.0]


@pytest.mark.parametrize("exponent, words", [(256, "exponent 256 cannot be converted to "
                                                    "the base's uint8"),
                                             (-1, "negative integer power"),
                                             (2 ** 63, "cannot be converted")])
def test_an_integer_tensors_exponent_must_fit_its_dtype(exponent, words):
    """Wrapped into uint8, u8 ** 256 was u8 ** 0 (all ones) and u8 ** -1 was u8 ** 255."""
    with pytest.raises(ValueError, match=words):
        mg.tensor([2, 3], dtype=mg.uint8) ** exponent
    assert (mg.tensor([2, 3], dtype=mg.uint8) ** 255).tolist() == [0, 3 ** 255 % 256]


def test_integer_dtypes_and_numbers_match_torch(torch):
    x, tx = mg.tensor([200, 100, 3], dtype=mg.uint8), torch.tensor([200, 100, 3],
                                                                    dtype=torch.uint8)
    for name in ("int8", "int16", "uint8", "bool"):
        got, want = x.sum(dtype=getattr(mg, name)), tx.sum(dtype=getattr(torch, name))
        assert str(got.dtype) == name and got.item() == want.item()
    for name in ("int8", "int16", "uint8"):
        for op in ("cumsum", "cumprod"):
            got = getattr(x, op)(0, dtype=getattr(mg, name))
            assert got.tolist() == getattr(tx, op)(0, dtype=getattr(torch, name)).tolist()
    for n in (-1, 300, 2 ** 63):
        np.testing.assert_allclose((x / n).numpy(), (tx / n).numpy(), rtol=1e-7)
