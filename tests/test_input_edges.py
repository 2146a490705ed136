"""NumPy scalars and out-of-range numbers as operands, bounds and fill values: each is taken
as the number it is or refused with words that name the op and what was wrong, never cast
into a dtype that changes it (NumPy's long double, complex scalars, integers past a dtype).
Each case states what PyTorch does."""
import numpy as np
import pytest

import minigrad as mg


def test_a_long_double_number_is_the_float_it_holds():
    """np.longdouble's item() is itself, so 1.5 beside an integer tensor was not seen as a
    float: i64 + np.longdouble(1.5) gave [2, 3] and == 1.5 matched 1; clamp made a float128
    tensor. PyTorch takes it as a Python float."""
    x, half = mg.tensor([1, 2]), np.longdouble(1.5)
    assert (x + half).tolist() == [2.5, 3.5] and (x + half).dtype == mg.float32
    assert (x == half).tolist() == [False, False] and (x < half).tolist() == [True, False]
    assert mg.where(mg.tensor([True, False]), x, half).tolist() == [1.0, 1.5]
    assert x.clamp(max=half).dtype == mg.float32 and x.clamp(max=half).tolist() == [1.0, 1.5]
    assert (x // half).tolist() == [0.0, 1.0]


@pytest.mark.parametrize("value", [np.complex64(1 + 1j), np.clongdouble(1 + 1j)])
def test_complex_numpy_scalars_are_refused_as_operands_bounds_and_values(value):
    """They were NumPy scalars to is_scalar, so cast to the tensor's dtype: x[0] = 1+1j wrote
    1, clamp(min=1+1j) made a complex tensor, x + np.clongdouble(1j) gave bare TypeErrors."""
    x = mg.tensor([1.0, 2.0], dtype=mg.float16)
    for use in (lambda: x + value, lambda: mg.tensor([1, 2]) * value, lambda: x == value,
                lambda: x.clamp(min=value), lambda: x.__setitem__(0, value),
                lambda: x.masked_fill(mg.tensor([True, False]), value),
                lambda: mg.where(mg.tensor([True, False]), x, value)):
        with pytest.raises(TypeError, match="complex|must be a number"):
            use()
    assert x.tolist() == [1.0, 2.0]                                 # nothing written


def test_a_number_the_computing_dtype_cannot_hold_is_named():
    """bool + 2**63 computes in int64 and float32 + 10**400 in float32: NumPy's 'Python int
    too large to convert to C long' named neither the op nor the number."""
    with pytest.raises(OverflowError, match="9223372036854775808 cannot be converted to int64"
                                            ", the dtype the op computes in beside a bool"):
        mg.tensor([True]) + 2 ** 63
    for x in (mg.ones(2), mg.ones(2, dtype=mg.float16)):
        with pytest.raises(OverflowError, match="cannot be converted to float"):
            x * 10 ** 400
    assert (mg.ones(1) + 2 ** 70).item() == float(2 ** 70)        # a float holds it: fine
    x = mg.ones(2, dtype=mg.float16)
    x[0] = 10 ** 400                                            # float16 setitem: inf, as
    assert x.tolist() == [float("inf"), 1.0]                    # PyTorch's from 65520 on


def test_clamp_bounds_must_fit_the_dtype_as_pytorch():
    """A bound past the dtype reached NumPy: bare 'Python integer 300 out of bounds for
    uint8' or 'int too large to convert to float' errors, or u8.clamp(max=300) ran."""
    u8 = mg.tensor([1, 2], dtype=mg.uint8)
    assert u8.clamp(min=-1).tolist() == [255, 255]              # wrapped, as PyTorch
    for bad in (lambda: u8.clamp(min=300), lambda: u8.clamp(max=2 ** 70),
                lambda: mg.ones(2).clamp(min=10 ** 400),
                lambda: mg.tensor([True]).clamp(min=2 ** 70)):
        with pytest.raises(ValueError, match="clamp: value .* cannot be converted to"):
            bad()
    assert mg.tensor([True, False]).clamp(min=2).tolist() == [2, 2]    # int64, as PyTorch


def test_scatter_and_full_check_their_number_as_the_fills_do():
    x = mg.tensor([1, 2, 3])
    for value in (float("nan"), float("inf"), 2 ** 63, 1e300):
        with pytest.raises(ValueError, match="scatter: value .* cannot be converted to int64"):
            x.scatter(0, mg.tensor([0]), value)                 # was NumPy's bare words
    assert mg.tensor([1, 2, 3], dtype=mg.uint8).scatter(0, mg.tensor([0]), -1).tolist() == \
        [255, 2, 3]                                             # wrapped, as PyTorch
    assert mg.full((2,), 2 ** 70, dtype=mg.bool).tolist() == [True, True]   # was bare
    assert mg.tensor([True, False]).masked_fill(mg.tensor([False, True]), 2 ** 70).tolist() \
        == [True, True]


def test_edge_operands_match_torch(torch):
    for values in ([1, 2], [200, 3]):
        for dtype in ("int64", "uint8"):
            x = mg.tensor(values, dtype=getattr(mg, dtype))
            tx = torch.tensor(values, dtype=getattr(torch, dtype))
            for v in (np.longdouble(1.5), -1, 300):
                for op in (lambda a, b: a + b, lambda a, b: a / b, lambda a, b: a == b):
                    try:
                        want = op(tx, v)
                    except RuntimeError:
                        continue
                    got = op(x, v)
                    assert str(got.dtype) == str(want.dtype).removeprefix("torch.")
                    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-7)
    u8, tu8 = mg.tensor([1, 2], dtype=mg.uint8), torch.tensor([1, 2], dtype=torch.uint8)
    assert u8.clamp(min=-1).tolist() == tu8.clamp(min=-1).tolist()
    for bad in (lambda t: t.clamp(min=300), lambda t: t ** 256, lambda t: t ** -1):
        with pytest.raises(RuntimeError):
            bad(tu8)
        with pytest.raises(ValueError):
            bad(u8)
