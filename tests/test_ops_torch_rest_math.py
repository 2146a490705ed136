"""The rest of torch's elementwise math (ops/math_extra.py), shape helpers
(ops/shape_extra.py), bitwise ops (ops/bitwise.py) and tensor properties: each through the op
suite (vs torch in float32 and float64, float64 gradcheck, double backward), then their edge
values (±1, 0, ±inf, NaN), integer and bool inputs, in-place twins and errors, against torch.
(The spy device runs them in test_backend_seam.py's table.)"""
import math

import numpy as np
import pytest

import minigrad as mg
from op_helpers import (OpCase, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch)

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None

INF, NAN = float("inf"), float("nan")
UNARY = [(), (2, 3)]
BINARY = [((2, 3), (3,)), ((), (2, 3)), ((2, 1, 3), (1, 4, 1))]


def _unary(name, fn, domain="real", np_fn=None, shapes=UNARY):
    return [OpCase(name, fn, (s,), domain=domain, np_fn=np_fn) for s in shapes]


def _binary(name, fn, domain="real", np_fn=None, shapes=BINARY):
    return [OpCase(name, fn, pair, domain=domain, np_fn=np_fn) for pair in shapes]


CASES = (
    _unary("asin", lambda x: x.asin(), "unit", np.arcsin)
    + _unary("acos", lambda x: x.acos(), "unit", np.arccos)
    + _unary("atan", lambda x: x.arctan(), np_fn=np.arctan)
    + _unary("asinh", lambda x: x.asinh(), np_fn=np.arcsinh)
    + _unary("acosh", lambda x: (x + 1.5).acosh(), "positive", lambda a: np.arccosh(a + 1.5))
    + _unary("atanh", lambda x: x.atanh(), "unit", np.arctanh)
    + _unary("erfc", lambda x: x.erfc())
    + _unary("sinc", lambda x: x.sinc(), np_fn=np.sinc)
    + _unary("deg2rad", lambda x: x.deg2rad(), np_fn=np.deg2rad, shapes=[(2, 3)])
    + _unary("rad2deg", lambda x: x.rad2deg(), np_fn=np.rad2deg, shapes=[(2, 3)])
    + _binary("hypot", lambda a, b: a.hypot(b), np_fn=np.hypot)
    + _binary("copysign", lambda a, b: a.copysign(b), "nonzero", np.copysign)
    + _binary("logaddexp", lambda a, b: a.logaddexp(b), np_fn=np.logaddexp)
    + _binary("logaddexp2", lambda a, b: a.logaddexp2(b), np_fn=np.logaddexp2)
    + _binary("fmax", lambda a, b: a.fmax(b), np_fn=np.fmax)
    + _binary("fmin", lambda a, b: a.fmin(b), np_fn=np.fmin)
    + _binary("ldexp", lambda a, b: a.ldexp(b), np_fn=lambda a, b: a * 2.0 ** b)
    + [OpCase("float_power", lambda a, b: a.float_power(b), ((2, 3), (3,)),
              domain=("positive", "real"), np_fn=np.power),
       OpCase("float_power_scalar", lambda a: a.float_power(3), ((2, 3),),
              np_fn=lambda a: a ** 3),
       OpCase("ravel", lambda x: x.transpose(0, 1).ravel(), ((2, 3),),
              np_fn=lambda a: a.T.ravel()),
       OpCase("fliplr_flipud", lambda x: (x.fliplr(), x.flipud()), ((2, 3),),
              np_fn=lambda a: (np.fliplr(a), np.flipud(a))),
       OpCase("hsplit", lambda x: x.hsplit([1, 3]), ((2, 4),),
              np_fn=lambda a: np.hsplit(a, [1, 3])),
       OpCase("vsplit_dsplit", lambda x: x.vsplit(2) + x.dsplit([1]), ((2, 3, 2),),
              np_fn=lambda a: tuple(np.vsplit(a, 2)) + tuple(np.dsplit(a, [1]))),
       OpCase("split_with_sizes", lambda x: x.split_with_sizes([1, 2], dim=1), ((2, 3),),
              np_fn=lambda a: (a[:, :1], a[:, 1:])),
       OpCase("diagflat", lambda x: (x.diagflat(), x.diagflat(-2)), ((2, 2),),
              np_fn=lambda a: (np.diagflat(a), np.diagflat(a, -2)))]
)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case, device):
    check_gradcheck(case, device)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_double_backward_vs_torch(case, device):
    check_double_backward_vs_torch(case, device)


# ---- edge values against torch: values, gradients (float64) -----------------------------------
def _both(name, values, device, *others, dtype="float64", upstream=None):
    """(mg output, mg grads, torch output, torch grads) of op `name` on the values."""
    results = []
    for lib, kw in ((mg, {"device": device}), (torch, {})):
        xs = [lib.tensor(v, dtype=getattr(lib, dtype), requires_grad=True, **kw)
              for v in (values,) + others]
        out = getattr(lib, name)(*xs)
        up = lib.tensor(np.ones(out.shape) if upstream is None else upstream,
                        dtype=getattr(lib, dtype), **kw)
        grads = (lib.autograd.grad if lib is torch else mg.grad)(out, xs, up,
                                                                   allow_unused=True)
        as_np = (lambda t: t.detach().numpy()) if lib is torch else (lambda t: t.numpy())
        results += [as_np(out), [None if g is None else as_np(g) for g in grads]]
    return results


def _assert_same(name, values, device, *others, dtype="float64"):
    mine, my_grads, theirs, their_grads = _both(name, values, device, *others, dtype=dtype)
    tol = 1e-6 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(mine, theirs, rtol=tol, err_msg=f"{name} value")
    for m, t in zip(my_grads, their_grads):
        np.testing.assert_allclose(m, t, rtol=tol, err_msg=f"{name} grad")


@pytest.mark.parametrize("name", ["asin", "acos", "atan", "asinh", "acosh", "atanh"])
def test_inverse_functions_at_and_beyond_their_ends_as_torch(torch, name, device):
    """±1 (the gradient ±inf of asin, acos, atanh, acosh: (1 - x)(1 + x) is +0 at both
    ends), beyond (NaN), 0, ±inf and NaN."""
    values = [-INF, -2.0, -1.0, -0.5, -0.0, 0.0, 0.5, 1.0, 2.0, INF, NAN]
    with np.errstate(invalid="ignore", divide="ignore"):
        _assert_same(name, values, device)


def test_inverse_functions_near_one_are_accurate_in_float32(device):
    """asin'(x) = 1/√((1 - x)(1 + x)): exact near 1 in float32, where 1 - x·x loses digits."""
    x = mg.tensor([0.99999, -0.9999], device=device, requires_grad=True)
    x.asin().sum().backward()
    exact = 1 / np.sqrt(1 - np.float64(np.float32([0.99999, -0.9999])) ** 2)
    np.testing.assert_allclose(x.grad.numpy(), exact, rtol=1e-6)


def test_sinc_at_zero_integers_and_near_zero(torch, device):
    """sinc(0) = 1 with gradient 0, and second derivative -π²/3 (torch's is NaN there); near
    0 the gradient is a series (torch's (cos πx - sinc x)/x cancels: 36% off at 1e-8)."""
    _assert_same("sinc", [0.0, -0.0, 1.0, -2.0, 0.5, 0.04, -0.1, 1e30], device)
    _assert_same("sinc", [0.0, 1.0, 0.25], device, dtype="float32")
    x = mg.tensor([1e-8, -1e-3, 0.03], dtype=mg.float64, device=device, requires_grad=True)
    x.sinc().sum().backward()
    y = math.pi * x.detach().numpy()                    # the series to 12 terms: exact
    exact = math.pi * sum((-1) ** n * 2 * n * y ** (2 * n - 1) / math.factorial(2 * n + 1)
                          for n in range(1, 13))
    np.testing.assert_allclose(x.grad.numpy(), exact, rtol=1e-12)
    x = mg.tensor([0.0, 1.0], dtype=mg.float64, device=device, requires_grad=True)
    (g,) = mg.grad(x.sinc().sum(), [x], create_graph=True)
    (gg,) = mg.grad(g.sum(), [x])
    assert g.numpy().tolist() == [0.0, -1.0]
    np.testing.assert_allclose(gg.numpy(), [-math.pi ** 2 / 3, 2.0], rtol=1e-12)
    h = mg.tensor([0.0, 0.5], dtype=mg.float16, device=device).sinc()   # no 0/0 in float16
    assert h.dtype == mg.float16 and h.numpy().tolist() == [1.0, np.float16(2 / math.pi)]


def test_erfc_keeps_its_digits_in_the_tail(torch, device):
    """erfc(5) = 1.5e-12, where 1 - erf(5) in float32 is 0."""
    _assert_same("erfc", [-INF, -3.0, 0.0, 5.0, 10.0, INF, NAN], device, dtype="float32")
    _assert_same("erfc", [-3.0, 0.0, 5.0, 26.0], device)


_PAIRS = ([INF, INF, -INF, INF, NAN, 1.0, 1e4, -1e4, 0.0, 3.0],
          [INF, -INF, -INF, 2.0, 1.0, NAN, 1e4, 1.0, 0.0, 3.0])


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2", "fmax", "fmin", "hypot"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_binary_ops_at_infinities_nan_and_ties_as_torch(torch, name, dtype, device):
    """No overflow (logaddexp(1e4, 1e4) is 1e4 + ln 2, not inf), NaN ignored by fmax/fmin
    (the gradient of a tie all to the first, as torch's); hypot's (0, 0) is left out: its
    gradient is 0 here, NaN in torch."""
    a, b = _PAIRS
    if name == "hypot":
        a, b = a[:-2], b[:-2]
    with np.errstate(invalid="ignore"):
        _assert_same(name, a, device, b, dtype=dtype)


def test_hypot_does_not_overflow_and_is_zero_graded_at_the_origin(device):
    x = mg.tensor([1e200, 0.0, 3e-200], dtype=mg.float64, device=device, requires_grad=True)
    y = mg.tensor([1e200, 0.0, 4e-200], dtype=mg.float64, device=device, requires_grad=True)
    h = mg.hypot(x, y)
    np.testing.assert_allclose(h.numpy(), [math.sqrt(2) * 1e200, 0.0, 5e-200], rtol=1e-15)
    h.sum().backward()                          # 0 at the origin, not 0/0 (a norm's rule)
    np.testing.assert_allclose(x.grad.numpy(), [math.sqrt(0.5), 0.0, 0.6], rtol=1e-15)
    np.testing.assert_allclose(y.grad.numpy(), [math.sqrt(0.5), 0.0, 0.8], rtol=1e-15)
    f = mg.tensor([3e30], device=device).hypot(mg.tensor([4e30], device=device))
    assert f.dtype == mg.float32 and f.numpy().tolist() == [np.float32(5e30)]


def test_copysign_signs_zeros_and_gradients_as_torch(torch, device):
    """-0.0 counts as negative; d/da is ±1 (0 at a = 0), d/db zeros, as torch; at a = ±inf
    ±1 here (torch's result/a is NaN there)."""
    a = [0.0, -0.0, 2.0, -3.0, 1.5, NAN]
    b = [-1.0, 1.0, -0.0, 0.0, NAN, -1.0]
    _assert_same("copysign", a, device, b)
    out = mg.copysign(mg.tensor([1.0, 2.0], device=device), mg.tensor([-0.0, -NAN]))
    assert out.numpy().tolist() == [-1.0, -2.0]
    x = mg.tensor([INF, -INF], device=device, requires_grad=True)
    x.copysign(mg.tensor([-1.0, -1.0], device=device)).sum().backward()
    assert x.grad.numpy().tolist() == [-1.0, 1.0]


def test_fmax_fmin_split_no_gradient_on_ties():
    a = mg.tensor([1.0, NAN], requires_grad=True)
    b = mg.tensor([1.0, NAN], requires_grad=True)
    (mg.fmax(a, b) * 3).sum().backward()
    assert a.grad.numpy().tolist() == [3.0, 3.0] and b.grad.numpy().tolist() == [0.0, 0.0]


def test_heaviside_values_and_gradients(torch, device):
    """torch's values (0 at NaN); the gradient to values where x is 0 (x's is 0: a step,
    as floor's; torch has no derivative)."""
    x = [-INF, -1.0, -0.0, 0.0, 2.0, NAN]
    values = [0.5, 0.25, 0.75, 1.5, 3.0, 4.0]
    expected = torch.heaviside(torch.tensor(x), torch.tensor(values)).numpy()
    xm = mg.tensor(x, device=device, requires_grad=True)
    vm = mg.tensor(values, device=device, requires_grad=True)
    out = mg.heaviside(xm, vm)
    np.testing.assert_array_equal(out.numpy(), expected)
    (out * 2).sum().backward()
    assert xm.grad.numpy().tolist() == [0.0] * 6
    assert vm.grad.numpy().tolist() == [0.0, 0.0, 2.0, 2.0, 0.0, 0.0]
    assert xm.heaviside(0.5).numpy().tolist() == [0.0, 0.0, 0.5, 0.5, 1.0, 0.0]
    i = mg.tensor([-2, 0, 3], device=device)
    assert i.heaviside(mg.tensor([7], device=device)).numpy().tolist() == [0, 7, 1]
    with pytest.raises(TypeError, match="heaviside: x and values must have the same dtype"):
        xm.heaviside(mg.tensor([1.0], dtype=mg.float64, device=device))
    with pytest.raises(TypeError, match="heaviside: values float32 for x of dtype int64"):
        i.heaviside(0.5)


# ---- integer and bool inputs ----------------------------------------------------------------
_INTS = {"int64": [-2, 0, 1, 3], "int32": [-2, 0, 1, 3], "uint8": [0, 1, 2, 200],
         "bool": [True, False, True, False]}


@pytest.mark.parametrize("kind", list(_INTS))
@pytest.mark.parametrize("name", ["asin", "acos", "atan", "asinh", "acosh", "atanh", "erfc",
                                  "sinc", "deg2rad", "rad2deg", "signbit", "isposinf",
                                  "isneginf", "sgn", "fix", "positive"])
def test_unary_integer_and_bool_inputs_as_torch(torch, name, kind, device):
    """The same dtype (float32 for the smooth ones) and values as torch, or its refusal."""
    t = torch.tensor(_INTS[kind], dtype=getattr(torch, kind))
    m = mg.tensor(_INTS[kind], dtype=kind, device=device)
    try:
        expected = getattr(torch, name)(t)
    except (RuntimeError, NotImplementedError):
        with pytest.raises(TypeError, match=r"bool"):
            getattr(mg, name)(m)
        return
    with np.errstate(invalid="ignore", divide="ignore"):
        got = getattr(m, name)()
    assert str(got.dtype) == str(expected.dtype).replace("torch.", "")
    np.testing.assert_allclose(got.numpy().astype(float), expected.numpy().astype(float),
                               rtol=1e-6)


_OPERANDS = {"int": [1, 2, -3], "bool": [True, False, True], "f32": [0.5, -1.0, 2.0],
             "f64": [0.25, 1.5, -2.0], "f16": [0.5, 1.0, -1.5]}
_DTYPES = {"int": "int64", "bool": "bool", "f32": "float32", "f64": "float64", "f16": "float16"}
_COMBOS = [("int", "int"), ("bool", "bool"), ("f32", "int"), ("int", "f32"), ("f32", "f64"),
           ("f16", "f32"), ("bool", "f64"), ("f16", "int")]


@pytest.mark.parametrize("combo", _COMBOS, ids="-".join)
@pytest.mark.parametrize("name", ["hypot", "copysign", "logaddexp", "logaddexp2", "fmax",
                                  "fmin", "float_power", "ldexp"])
def test_binary_dtype_promotion_as_torch(torch, name, combo, device):
    """Result dtypes and values as torch (integers give float32, float_power float64), and
    its refusals (two integer tensors for hypot and logaddexp)."""
    ta, tb = (torch.tensor(_OPERANDS[k], dtype=getattr(torch, _DTYPES[k])) for k in combo)
    ma, mb = (mg.tensor(_OPERANDS[k], dtype=_DTYPES[k], device=device) for k in combo)
    try:
        expected = getattr(torch, name)(ta, tb)
    except NotImplementedError:
        with pytest.raises(TypeError, match=f"{name}: not implemented for integer or bool"):
            getattr(mg, name)(ma, mb)
        return
    with np.errstate(invalid="ignore"):         # float_power(-1.0, 1.5): NaN, as torch's
        got = getattr(mg, name)(ma, mb)
    assert str(got.dtype) == str(expected.dtype).replace("torch.", "")
    rtol = 1e-3 if "float16" in str(expected.dtype) else 1e-6
    np.testing.assert_allclose(got.numpy().astype(float), expected.numpy().astype(float),
                               rtol=rtol)


def test_binary_ops_take_a_number_as_a_weak_operand(device):
    x = mg.tensor([3.0, -4.0], dtype=mg.float64, device=device)
    assert x.hypot(4).dtype == mg.float64 and x.hypot(4).numpy().tolist() == [5.0, 4 * 2 ** .5]
    assert mg.copysign(x, -1).numpy().tolist() == [-3.0, -4.0]
    i = mg.tensor([1, 2], device=device)
    assert i.float_power(2).dtype == mg.float64 and i.float_power(-1).tolist() == [1.0, 0.5]
    assert mg.float_power(2, i).tolist() == [2.0, 4.0]
    np.testing.assert_allclose(i.ldexp(mg.tensor([0.5, 3], device=device)).numpy(),
                               [2 ** 0.5, 16.0], rtol=1e-7)
    assert mg.ldexp(i, 2).dtype == mg.float32 and mg.ldexp(i, 2).tolist() == [4.0, 8.0]


def test_ldexp_with_an_integer_exponent_past_the_dtypes_range_of_powers(device):
    """2^17 is inf in float16 and 2^130 in float32, yet x·2^other is not: 13.1 and 1.36e9,
    as torch (they were inf; 2^-150 was 0 where 1e30·2^-150 is 7e-16)."""
    h = mg.tensor([1e-4, 3e4], dtype=mg.float16, device=device, requires_grad=True)
    y = h.ldexp(mg.tensor([17, -17], device=device))
    assert y.dtype == mg.float16
    np.testing.assert_allclose(y.numpy().astype(float), [13.1094, 0.2289], rtol=1e-3)
    (y * mg.tensor([2.0 ** -10, 1.0], dtype=mg.float16, device=device)).sum().backward()
    assert h.grad.dtype == mg.float16 and h.grad.numpy().tolist() == [2.0 ** 7, 2.0 ** -17]
    f = mg.ldexp(mg.tensor([1e-30, 1e30], device=device), mg.tensor([130, -150], device=device))
    assert f.dtype == mg.float32
    np.testing.assert_allclose(f.numpy(), [1e-30 * 2.0 ** 130, 1e30 * 2.0 ** -150], rtol=1e-6)


def test_float_power_gradients_come_back_in_the_inputs_dtype(device):
    x = mg.tensor([0.5, 2.0], device=device, requires_grad=True)
    y = x.float_power(3)
    assert y.dtype == mg.float64
    y.sum().backward()
    assert x.grad.dtype == mg.float32 and x.grad.numpy().tolist() == [0.75, 12.0]


def test_positive_sgn_fix():
    x = mg.tensor([-1.5, 0.0, 2.5])
    assert x.positive() is x and mg.positive(x) is x
    assert x.sgn().tolist() == [-1.0, 0.0, 1.0] and x.fix().tolist() == [-1.0, 0.0, 2.0]
    with pytest.raises(TypeError, match=r"positive \(unary \+\): not supported for a bool"):
        mg.tensor([True]).positive()
    for name in ("positive", "sgn", "fix", "signbit", "isposinf"):
        with pytest.raises(TypeError, match=f"{name}: expected a Tensor, got list"):
            getattr(mg, name)([1.0])


def test_signbit_and_infinity_predicates_as_torch(torch, device):
    values = [-INF, -1.0, -0.0, 0.0, 1.0, INF, NAN, -NAN]
    t = torch.tensor(values)
    m = mg.tensor(values, device=device)
    for name in ("signbit", "isposinf", "isneginf"):
        got = getattr(m, name)()
        assert got.dtype == mg.bool and not got.requires_grad
        assert got.tolist() == getattr(torch, name)(t).tolist(), name


# ---- in-place twins --------------------------------------------------------------------------
_TWINS = [("asin_", ()), ("arcsin_", ()), ("acos_", ()), ("arccos_", ()), ("atan_", ()),
          ("arctan_", ()), ("asinh_", ()), ("arcsinh_", ()), ("atanh_", ()), ("arctanh_", ()),
          ("erfc_", ()), ("sinc_", ()), ("deg2rad_", ()), ("rad2deg_", ()), ("sgn_", ()),
          ("fix_", ()), ("hypot_", ([1.0, 2.0, 3.0],)), ("copysign_", ([-1.0, 1.0, -2.0],)),
          ("heaviside_", ([0.5],)), ("float_power_", (2.5,)), ("ldexp_", ([1.0, -2.0, 3.0],))]


@pytest.mark.parametrize("case", _TWINS, ids=lambda c: c[0])
def test_in_place_twins_write_what_torch_writes(torch, case):
    name, args = case
    data = [[0.5, -0.25, 0.0], [0.125, 0.75, -0.5]]
    t = torch.tensor(data, dtype=torch.float64)
    m = mg.tensor(data, dtype=mg.float64)
    view = m[:]
    getattr(t, name)(*(torch.tensor(a, dtype=torch.float64) if isinstance(a, list) else a
                       for a in args))
    with np.errstate(invalid="ignore"):         # float_power_(-0.25, 2.5): NaN, as torch's
        assert getattr(m, name)(*(mg.tensor(a, dtype=mg.float64) if isinstance(a, list)
                                  else a for a in args)) is m
    np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(view.numpy(), m.numpy())
    assert m._version == 1


@pytest.mark.parametrize("name, args", [
    ("bitwise_and_", ([6, 3, 5],)), ("bitwise_or_", ([6, 3, 5],)), ("bitwise_xor_", ([6, 3, 5],)),
    ("bitwise_not_", ()), ("bitwise_left_shift_", ([1, 70, 2],)),
    ("bitwise_right_shift_", ([1, -1, 2],)), ("gcd_", ([6, 4, 0],)), ("lcm_", ([6, 4, 0],)),
    ("acosh_", ()), ("arccosh_", ())])
def test_integer_and_acosh_twins_write_what_torch_writes(torch, name, args):
    data = [1.5, 2.0, 4.0] if "cosh" in name else [12, -8, 7]
    t, m = torch.tensor(data), mg.tensor(data)
    getattr(t, name)(*(torch.tensor(a) for a in args))
    assert getattr(m, name)(*(mg.tensor(a) for a in args)) is m
    np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-6)
    assert m.dtype == (mg.float32 if "cosh" in name else mg.int64)


def test_recorded_twins_have_the_gradients_of_the_ops(torch):
    """acosh_ and hypot_ on a tensor with a history are recorded (torch has no derivative
    for acosh_: the out-of-place ops give the expected gradient)."""
    t = torch.tensor([1.5, 2.0, 3.0], dtype=torch.float64, requires_grad=True)
    torch.hypot((t * 1.0).acosh(), t).sum().backward()
    x = mg.tensor([1.5, 2.0, 3.0], dtype=mg.float64, requires_grad=True)
    h = x * 1.0
    h.acosh_()
    h.hypot_(x)
    h.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_in_place_twins_refuse_what_the_tensor_cannot_hold():
    """As torch: float_power_ needs a float64 tensor; asin_ of integers a float one."""
    with pytest.raises(TypeError, match="float_power_: x has dtype float32"):
        mg.tensor([1.0]).float_power_(2)
    with pytest.raises(TypeError, match="asin_: the result is float32"):
        mg.tensor([1]).asin_()


# ---- properties --------------------------------------------------------------------------------
@pytest.mark.parametrize("dtype", ["bool", "uint8", "int8", "int32", "int64", "float16",
                                   "float32", "float64"])
def test_properties_as_torch(torch, dtype):
    t = torch.zeros(2, 3, dtype=getattr(torch, dtype))
    m = mg.zeros(2, 3, dtype=dtype)
    for name in ("is_cuda", "is_cpu", "itemsize", "nbytes"):
        assert getattr(m, name) == getattr(t, name), name
    for name in ("get_device", "is_signed", "is_complex"):
        assert getattr(m, name)() == getattr(t, name)() == getattr(mg, name)(m), name
    assert m[:, None].expand(2, 4, 3).nbytes == t[:, None].expand(2, 4, 3).nbytes == \
        24 * t.itemsize                         # the elements', not the memory's


def test_is_nonzero_and_is_same_size_as_torch():
    assert mg.tensor([NAN]).is_nonzero() and not mg.tensor(0.0).is_nonzero()
    assert mg.tensor([[3]]).is_nonzero() and not mg.is_nonzero(mg.tensor([False]))
    with pytest.raises(RuntimeError, match="with more than one value is ambiguous"):
        mg.tensor([1, 2]).is_nonzero()
    with pytest.raises(RuntimeError, match="with no values is ambiguous"):
        mg.zeros(0).is_nonzero()
    assert mg.zeros(2, 3).is_same_size(mg.ones(2, 3, dtype=mg.int64))
    assert not mg.is_same_size(mg.zeros(2, 3), mg.zeros(3, 2))
    with pytest.raises(TypeError, match="is_same_size: expected a Tensor, got int"):
        mg.zeros(2).is_same_size(2)


# ---- shape helpers --------------------------------------------------------------------------
def test_shape_helpers_values_as_torch(torch):
    a = np.arange(24.0).reshape(2, 3, 4)
    t, m = torch.tensor(a), mg.tensor(a)
    for fn in (lambda x: x.hsplit(3), lambda x: x.hsplit([1, 5]), lambda x: x.vsplit([1]),
               lambda x: x.dsplit(4), lambda x: x[0].hsplit(4), lambda x: x[0, 0].hsplit(2),
               lambda x: x.split_with_sizes([2, 0, 2], -1), lambda x: (x.ravel(),),
               lambda x: (x[0].fliplr(), x.flipud(), x[0, 0].flipud()),
               lambda x: (x[0, :2, :2].diagflat(1), x[0, 0].diagflat(-3), x[0, 0, 0].diagflat(),
                          x[0, 0, :0].diagflat())):
        got, want = fn(m), fn(t)
        assert len(got) == len(want)
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert mg.hsplit(m, 3)[0].shape == (2, 1, 4) and mg.diagflat(m[0, 0]).shape == (4, 4)
    assert mg.split_with_sizes(m, [1, 1])[1].shape == (1, 3, 4)


@pytest.mark.parametrize("call, message", [
    (lambda x: x[0].fliplr(), r"fliplr: needs a tensor with at least 2 dim"),
    (lambda x: x[0, 0].flipud(), r"flipud: needs a tensor with at least 1 dim"),
    (lambda x: x.hsplit(2), r"hsplit: cannot split dim 1 of size 3 into 2 equal pieces"),
    (lambda x: x.hsplit(0), r"hsplit: cannot split dim 1 of size 3 into 0 equal"),
    (lambda x: x[0].hsplit(4), r"hsplit: cannot split dim 0 of size 3"),
    (lambda x: x[0, 0].hsplit(1), r"hsplit: needs a tensor with at least 1 dim"),
    (lambda x: x[0].vsplit(1), r"vsplit: needs a tensor with at least 2 dim"),
    (lambda x: x.dsplit(1), r"dsplit: needs a tensor with at least 3 dim"),
    (lambda x: x.vsplit(3), r"vsplit: cannot split dim 0 of size 2 into 3 equal"),
    (lambda x: x.split_with_sizes([1, 2]), r"split: sizes \[1, 2\] sum to 3, but dim 0 has 2"),
    (lambda x: x.split_with_sizes([3, -1]), r"split: sizes must be non-negative"),
    (lambda x: x.split_with_sizes(1), r"split_with_sizes: split_sizes must be a list of ints"),
])
def test_shape_helpers_refuse_what_torch_refuses(torch, call, message):
    with pytest.raises((ValueError, TypeError), match=message):
        call(mg.zeros(2, 3))
    with pytest.raises((RuntimeError, TypeError)):
        call(torch.zeros(2, 3))


# ---- bitwise ---------------------------------------------------------------------------------
_BITS = {"int8": [5, -3, 127, -128, 0], "uint8": [5, 3, 255, 128, 0],
         "int32": [5, -3, 2 ** 31 - 1, -2 ** 31, 0], "int64": [5, -3, 2 ** 40, -2 ** 40, 0],
         "bool": [True, False, True, False, True]}
_SHIFTS = [1, 0, 3, 7, 2]


@pytest.mark.parametrize("kind", list(_BITS))
@pytest.mark.parametrize("name", ["bitwise_and", "bitwise_or", "bitwise_xor",
                                  "bitwise_left_shift", "bitwise_right_shift", "gcd", "lcm"])
def test_bitwise_binary_ops_as_torch(torch, name, kind, device):
    """Values and dtypes as torch on each integer dtype, beside itself, an int64 tensor and
    a bool one; torch's refusals (two bools for shifts, gcd, lcm) refused."""
    t, m = torch.tensor(_BITS[kind], dtype=getattr(torch, kind)), \
        mg.tensor(_BITS[kind], dtype=kind, device=device)
    for other in (_BITS[kind], _SHIFTS, [True, False, False, True, True]):
        dt = kind if other is _BITS[kind] else "int64" if other is _SHIFTS else "bool"
        to, mo = torch.tensor(other, dtype=getattr(torch, dt)), \
            mg.tensor(other, dtype=dt, device=device)
        try:
            want = getattr(torch, name)(t, to)
        except (RuntimeError, NotImplementedError):
            with pytest.raises(TypeError, match=f"{name}.*: needs integer tensors"):
                getattr(mg, name)(m, mo)
            continue
        got = getattr(m, name)(mo)
        assert str(got.dtype) == str(want.dtype).replace("torch.", ""), (other, got.dtype)
        assert got.tolist() == want.tolist(), other


def test_shifts_out_of_range_and_operators_as_torch(torch, device):
    """A shift by the width or more, or by a negative amount, moves every bit out: 0, or -1
    for a negative number shifted right (NumPy's shifts are undefined there)."""
    values, amounts = [5, -3, 1, -1, 2 ** 40], [70, 64, 63, -1, -70]
    for dtype in ("int64", "int8", "uint8", "int32"):
        v = [x % 256 if dtype == "uint8" else x for x in values]
        if dtype in ("int8", "int32"):
            v = [x if -128 <= x < 128 else 7 for x in v]
        t, m = torch.tensor(v, dtype=getattr(torch, dtype)), mg.tensor(v, dtype=dtype,
                                                                       device=device)
        ta, ma = torch.tensor(amounts), mg.tensor(amounts, device=device)
        assert (m << ma).tolist() == (t << ta).tolist(), dtype
        assert (m >> ma).tolist() == (t >> ta).tolist(), dtype
        assert (m << 9).tolist() == (t << 9).tolist() and (m >> 9).tolist() == (t >> 9).tolist()
    i = mg.tensor([5, -3], device=device)
    assert (1 << i).tolist() == (1 << torch.tensor([5, -3])).tolist() == [32, 0]
    assert (64 >> mg.tensor([2], device=device)).tolist() == [16]
    assert mg.tensor([1], dtype=mg.int8, device=device).__lshift__(7).tolist() == [-128]


def test_bitwise_not_and_refusals_as_torch(device):
    i, b = mg.tensor([5, -3], device=device), mg.tensor([True, False], device=device)
    assert i.bitwise_not().tolist() == [-6, 2] and mg.bitwise_not(b).tolist() == [False, True]
    f = mg.tensor([1.5], device=device)
    for call in (lambda: f.bitwise_not(), lambda: f.bitwise_and(f), lambda: mg.bitwise_or(i, f)):
        with pytest.raises(TypeError, match="needs bool or integer tensors"):
            call()
    for call, name in ((lambda: f << 1, "left_shift"), (lambda: i >> 1.5, "right_shift"),
                       (lambda: b << b, "left_shift"), (lambda: mg.gcd(f, i), "gcd"),
                       (lambda: b.lcm(b), "lcm"), (lambda: mg.gcd(3, 4), "gcd")):
        with pytest.raises(TypeError, match=f"{name}.*(needs integer tensors|expected a)"):
            call()


def test_bitwise_in_place_operators_write_into_the_tensor(device):
    """x &= y (|=, ^=, <<=, >>=) changes x itself, as torch: a view, or another name for
    x, sees it (Python alone would rebind x to a new tensor)."""
    for op, expected in (("__iand__", [1, 0, 2]), ("__ior__", [3, 6, 7]),
                         ("__ixor__", [2, 6, 5]), ("__ilshift__", [6, 16, 48]),
                         ("__irshift__", [1, 1, 0])):
        x = mg.tensor([3, 4, 6], device=device)
        view = x[:]
        assert getattr(x, op)(mg.tensor([1, 2, 3], device=device)) is x
        assert x.tolist() == view.tolist() == expected, op
    m = mg.tensor([True, False], device=device)
    m &= mg.tensor([False, False], device=device)
    assert m.tolist() == [False, False]
    x = mg.tensor([1], device=device)
    # the error names the dtypes given (it named the promoted float32 twice)
    with pytest.raises(TypeError, match=r"bitwise_left_shift \(<<\): needs integer tensors"
                                        r".*got int64 and float32"):
        x <<= mg.tensor([1.0], device=device)
    with pytest.raises(TypeError, match=r"x \|= y: the result is int64, which x of dtype bool"):
        m |= mg.tensor([2], device=device)        # as torch: bool can't hold int64


def test_gcd_lcm_signs_and_zeros_as_torch(torch, device):
    a, b = [0, -4, 6, -2 ** 63, 7, 0], [0, 6, -9, 0, -5, -3]
    t = torch.tensor(a), torch.tensor(b)
    m = mg.tensor(a, device=device), mg.tensor(b, device=device)
    assert mg.gcd(*m).tolist() == torch.gcd(*t).tolist()
    assert m[0].lcm(m[1]).tolist() == torch.lcm(*t).tolist()
