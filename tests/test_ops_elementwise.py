"""Elementwise ops: arithmetic (with Python scalars on either side), unary functions,
maximum/minimum/clip (ties split as PyTorch), where/masked_fill — all with broadcasting."""
import numpy as np
import pytest
from scipy.special import erf

import minigrad as mg
import minigrad.functional as F
from op_helpers import (OpCase, binary, unary, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch)


def _torch_gelu(approximate):
    def fn(x):
        import torch
        return torch.nn.functional.gelu(x, approximate=approximate)
    return fn


def _np_gelu_tanh(a):
    return 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3)))


CASES = (
    binary("add", lambda a, b: a + b, np_fn=lambda a, b: a + b)
    + binary("sub", lambda a, b: a - b, np_fn=lambda a, b: a - b)
    + binary("mul", lambda a, b: a * b, np_fn=lambda a, b: a * b)
    + binary("div", lambda a, b: a / b, np_fn=lambda a, b: a / b, domain=("real", "nonzero"))
    + binary("pow", lambda a, b: a ** b, np_fn=lambda a, b: a ** b,
             domain=("positive", "real"))
    + binary("maximum", lambda a, b: a.maximum(b), np_fn=np.maximum)
    + binary("minimum", lambda a, b: a.minimum(b), np_fn=np.minimum)
    # a Python scalar on either side becomes a constant of the tensor's dtype
    + [OpCase(name, fn, (s,), np_fn=fn, domain=dom) for s in [(), (2, 3)]
       for name, fn, dom in [
           ("x+2", lambda x: x + 2, "real"), ("2+x", lambda x: 2 + x, "real"),
           ("x-2.5", lambda x: x - 2.5, "real"), ("2.5-x", lambda x: 2.5 - x, "real"),
           ("x*3", lambda x: x * 3, "real"), ("3*x", lambda x: 3 * x, "real"),
           ("x/3", lambda x: x / 3, "real"), ("3/x", lambda x: 3 / x, "nonzero"),
           ("x**2", lambda x: x ** 2, "real"), ("x**3", lambda x: x ** 3, "real"),
           ("x**0.5", lambda x: x ** 0.5, "positive"),
           ("x**-1.5", lambda x: x ** -1.5, "positive"),
           ("2**x", lambda x: 2 ** x, "real"), ("neg", lambda x: -x, "real")]]
    + unary("exp", lambda x: x.exp(), np_fn=np.exp)
    + unary("log", lambda x: x.log(), np_fn=np.log, domain="positive")
    + unary("sqrt", lambda x: x.sqrt(), np_fn=np.sqrt, domain="positive")
    + unary("abs", lambda x: x.abs(), np_fn=np.abs, domain="nonzero")
    + unary("tanh", lambda x: x.tanh(), np_fn=np.tanh)
    + unary("sigmoid", lambda x: x.sigmoid(), np_fn=lambda a: 1 / (1 + np.exp(-a)))
    + unary("relu", lambda x: x.relu(), np_fn=lambda a: np.maximum(a, 0), domain="nonzero")
    + unary("erf", lambda x: x.erf(), np_fn=erf)
    + unary("gelu", lambda x: F.gelu(x), torch_fn=_torch_gelu("none"),
            np_fn=lambda a: 0.5 * a * (1 + erf(a / np.sqrt(2))))
    + unary("gelu_tanh", lambda x: F.gelu(x, approximate="tanh"), torch_fn=_torch_gelu("tanh"),
            np_fn=_np_gelu_tanh)
    + unary("clip", lambda x: x.clip(-0.5, 0.7), torch_fn=lambda x: x.clip(-0.5, 0.7),
            np_fn=lambda a: np.clip(a, -0.5, 0.7))
    + unary("clip_min", lambda x: x.clip(min=-0.5), np_fn=lambda a: np.maximum(a, -0.5))
    + unary("clamp_max", lambda x: x.clamp(max=0.3), np_fn=lambda a: np.minimum(a, 0.3))
)

_COND = np.array([[True, False, True], [False, False, True]])
_MASK = np.array([True, False, True])


def _torch_where(cond, b_scalar=None):
    def fn(a, b=None):
        import torch
        return torch.where(torch.from_numpy(cond), a, b_scalar if b is None else b)
    return fn


WHERE_CASES = [
    OpCase("where", lambda a, b: mg.where(_COND, a, b), ((2, 3), (3,)),
           torch_fn=_torch_where(_COND), np_fn=lambda a, b: np.where(_COND, a, b)),
    OpCase("where_bcast", lambda a, b: mg.where(_MASK, a, b), ((2, 1, 3), (4, 1)),
           torch_fn=_torch_where(_MASK), np_fn=lambda a, b: np.where(_MASK, a, b)),
    OpCase("where_tensor_cond_scalar", lambda a: mg.where(mg.tensor(_COND, device=a.device),
                                                          a, 0.5),
           ((2, 3),), torch_fn=_torch_where(_COND, 0.5)),
    OpCase("masked_fill", lambda x: x.masked_fill(_MASK, -1.5), ((2, 3),),
           torch_fn=lambda x: x.masked_fill(__import__("torch").from_numpy(_MASK), -1.5)),
    OpCase("masked_fill_tensor_mask",
           lambda x: mg.masked_fill(x, mg.tensor(_MASK[:, None], device=x.device), 2.0),
           ((2, 3, 2),),
           torch_fn=lambda x: x.masked_fill(__import__("torch").from_numpy(_MASK[:, None]), 2.0)),
]
ALL = CASES + WHERE_CASES


@pytest.mark.parametrize("case", ALL, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", ALL, ids=str)
def test_gradcheck(case, device):
    check_gradcheck(case, device)


@pytest.mark.parametrize("case", [c for c in ALL if c.gradgrad], ids=str)
def test_double_backward_vs_torch(case, device):
    check_double_backward_vs_torch(case, device)


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_scalar_keeps_dtype(dtype_name, device):
    x = mg.ones(2, dtype=dtype_name, device=device)
    for y in (x + 1, 1.5 * x, x / 3, 2 ** x, x ** 2, -x, x.maximum(0.5), mg.where(x > 0, x, 0.0)):
        assert y.dtype == x.dtype


@pytest.mark.parametrize("op", ["maximum", "minimum"])
def test_maximum_minimum_ties_split_evenly(op, device):
    torch = pytest.importorskip("torch")
    a, b = np.array([1.0, 2.0, 3.0]), np.array([1.0, 0.0, 3.0])
    x, y = (mg.tensor(v, device=device, requires_grad=True) for v in (a, b))
    tx, ty = (torch.tensor(v, requires_grad=True) for v in (a, b))
    getattr(x, op)(y).sum().backward()
    getattr(tx, op)(ty).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), tx.grad.numpy())
    np.testing.assert_array_equal(y.grad.numpy(), ty.grad.numpy())
    assert x.grad.numpy()[0] == 0.5 and y.grad.numpy()[2] == 0.5


def test_clip_gradient_at_the_bounds_as_torch(device):
    torch = pytest.importorskip("torch")
    a = np.array([-1.0, -0.5, 0.0, 0.5, 1.0])
    x, t = mg.tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)
    x.clip(-0.5, 0.5).sum().backward()
    t.clamp(-0.5, 0.5).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_activations_accurate_in_the_tails(dtype_name, device):
    """Relative accuracy far from 0, where naive formulas lose every digit (or give NaN)."""
    torch = pytest.importorskip("torch")
    a = np.array([-80.0, -40.0, -20.0, -8.0, -1e-3, 0.0, 1e-3, 8.0, 20.0, 40.0, 80.0])
    x = mg.tensor(a, dtype=dtype_name, device=device)
    t = torch.tensor(a, dtype=getattr(torch, dtype_name))
    tf = torch.nn.functional
    rtol = 1e-6 if dtype_name == "float32" else 1e-14
    for mine, ref in [(x.sigmoid(), t.sigmoid()), (x.tanh(), t.tanh()),
                      (F.gelu(x), tf.gelu(t)), (x.relu(), t.relu()),
                      (F.gelu(x, approximate="tanh"), tf.gelu(t, approximate="tanh"))]:
        np.testing.assert_allclose(mine.numpy(), ref.numpy(), rtol=rtol, atol=0)
    y = mg.tensor([-np.inf, -1.0, np.inf], dtype=dtype_name, device=device)
    np.testing.assert_array_equal(y.relu().numpy(), [0.0, 0.0, np.inf])
    np.testing.assert_allclose(y.sigmoid().numpy(), [0.0, 1 / (1 + np.e), 1.0], rtol=rtol)


def test_module_functions_match_methods(device):
    x = mg.randn(2, 3, device=device)
    y = mg.randn(2, 3, device=device)
    pairs = [(mg.exp(x), x.exp()), (mg.tanh(x), x.tanh()), (mg.sigmoid(x), x.sigmoid()),
             (mg.relu(x), x.relu()), (F.relu(x), x.relu()), (F.tanh(x), x.tanh()),
             (F.sigmoid(x), x.sigmoid()), (mg.maximum(x, y), x.maximum(y)),
             (mg.minimum(x, y), x.minimum(y)), (mg.clip(x, -0.1, 0.1), x.clamp(-0.1, 0.1)),
             (mg.clamp(x, max=0.0), x.clip(max=0.0)), (mg.sqrt(x.abs()), x.abs().sqrt()),
             (mg.log(x.abs()), x.abs().log())]
    for a, b in pairs:
        np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_comparisons_are_boolean_and_outside_the_graph(device):
    a, b = np.array([1.0, 2.0, 3.0]), np.array([3.0, 2.0, 1.0])
    x = mg.tensor(a, device=device, requires_grad=True)
    y = mg.tensor(b, device=device)
    for mine, ref in [(x < y, a < b), (x <= y, a <= b), (x > y, a > b), (x >= y, a >= b),
                      (x == y, a == b), (x != y, a != b), (x > 1.5, a > 1.5),
                      (~(x > 1.5), ~(a > 1.5)), ((x > 1) & (y > 1), (a > 1) & (b > 1)),
                      ((x > 2) | (y > 2), (a > 2) | (b > 2))]:
        assert mine.dtype == mg.bool and not mine.requires_grad
        np.testing.assert_array_equal(mine.numpy(), ref)


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_numpy_scalars_are_weak_like_python_scalars(dtype_name, device):
    """np.float64(2) beside a float32 tensor keeps float32, as PyTorch (NumPy would upcast)."""
    x = mg.ones(2, dtype=dtype_name, device=device)
    for s in (np.float64(2.0), np.float32(2.0), np.int64(2), np.bool_(True)):
        for y in (x + s, s * x, x / s, s - x, x ** s, x.maximum(s), x < s):
            assert y.dtype == (mg.bool if y.dtype == mg.bool else x.dtype), (s, y.dtype)
    np.testing.assert_array_equal((x * np.float64(3.0)).numpy(), [3.0, 3.0])


def test_a_float_beside_an_integer_tensor_gives_float32_as_torch(device):
    i = mg.arange(4, device=device)
    for y in (i + 0.5, 0.5 * i, i * np.float64(0.5), i / 2, i / i.maximum(1), 2.0 ** i,
              i + mg.ones(4, device=device), (i > 1) * 1.5, mg.where(i > 1, i, 0.5)):
        assert y.dtype == mg.float32, y.dtype
    np.testing.assert_array_equal((i / 2).numpy(), [0.0, 0.5, 1.0, 1.5])
    assert (i + 1).dtype == mg.int64 and ((i > 1) + 1).dtype == mg.int64
    assert i.masked_fill(i > 1, 7).dtype == mg.int64      # masked_fill keeps x's dtype


def test_where_of_two_scalars_as_torch(device):
    c = mg.arange(3, device=device) > 0
    y = mg.where(c, 1.0, 0.0)
    assert y.dtype == mg.float32 and y.device == device
    np.testing.assert_array_equal(y.numpy(), [0.0, 1.0, 1.0])
    z = mg.where(np.array([True, False]), 1, 0)
    assert z.dtype == mg.int64 and z.numpy().tolist() == [1, 0]


@pytest.mark.filterwarnings("ignore:divide by zero", "ignore:invalid value")
def test_pow_gradients_at_base_zero_are_zero_as_torch(device):
    x = mg.tensor([0.0, 1.0, 2.0], dtype=mg.float64, device=device, requires_grad=True)
    (x ** 0).sum().backward()                            # 0·0⁻¹ would be NaN
    assert x.grad.tolist() == [0.0, 0.0, 0.0]
    a = mg.tensor([0.0, 0.0, 2.0], dtype=mg.float64, device=device, requires_grad=True)
    b = mg.tensor([2.0, 0.0, -1.0], dtype=mg.float64, device=device, requires_grad=True)
    (a ** b).sum().backward()                            # 0ᵇ·ln 0 for b ≥ 0 would be NaN
    assert a.grad.tolist() == [0.0, 0.0, -0.25]
    np.testing.assert_allclose(b.grad.numpy(), [0.0, 0.0, 0.5 * np.log(2.0)])
    y = mg.tensor([0.0, 1.0], dtype=mg.float64, device=device, requires_grad=True)
    (y ** 2).sum().backward()                            # other values unchanged
    assert y.grad.tolist() == [0.0, 2.0]


@pytest.mark.parametrize("name", ["exp", "log", "sqrt", "tanh", "sigmoid", "erf", "gelu"])
def test_float_functions_of_integers_give_float32_as_torch(name, device):
    y = getattr(mg.tensor([1, 2], device=device), name)()
    assert y.dtype == mg.float32
    assert mg.tensor([1, 2], device=device).relu().dtype == mg.int64   # stays an integer


def test_a_0d_tensor_is_weak_beside_a_tensor_of_the_same_kind_as_torch(device):
    x = mg.ones(2, device=device)
    s = mg.tensor(2.0, dtype=mg.float64, device=device, requires_grad=True)
    y = x * s
    assert y.dtype == mg.float32 and (s + x).dtype == mg.float32
    y.sum().backward()
    assert s.grad.dtype == mg.float64 and s.grad.item() == 2.0
    assert (mg.ones(2, dtype=mg.int32, device=device) + mg.tensor(2, device=device)).dtype \
        == mg.int32
    # a 0-d float beside an integer tensor is of a higher kind: its dtype wins
    assert (mg.tensor([1, 2], device=device) * s.detach()).dtype == mg.float64
    assert (mg.tensor(1.0, device=device) * s).dtype == mg.float64   # both 0-d: promote


def test_clamp_with_numpy_float64_bounds_keeps_float32(device):
    # NumPy scalars are weak as Python ones: np.clip with np.float64 bounds computed float32
    # in float64
    x = mg.tensor([-1.0, 0.25, 3.0], device=device, requires_grad=True)
    y = x.clamp(np.float64(0.0), np.float64(1.0))
    assert y.dtype == mg.float32 and y.tolist() == [0.0, 0.25, 1.0]
    assert x.clamp(max=np.float64(0.5)).dtype == mg.float32
    y.sum().backward()
    assert x.grad.dtype == mg.float32 and x.grad.tolist() == [0.0, 1.0, 0.0]
    i = mg.tensor([-2, 0, 3], device=device)             # a float bound on integers: float32
    assert i.clamp(0.5, 2.5).dtype == mg.float32 and i.clamp(0.5, 2.5).tolist() == [0.5, 0.5,
                                                                                     2.5]
    assert i.clamp(np.float32(0.5)).dtype == mg.float32 and i.clamp(0, 2).dtype == mg.int64


def test_minus_on_a_bool_tensor_is_refused_as_torch(device):
    mask = mg.tensor([True, False], device=device)
    for fn in (lambda: -mask, lambda: mask - 1, lambda: 1 - mask, lambda: mask - 0.5,
               lambda: mg.tensor([1, 2], device=device) - mask):
        with pytest.raises(TypeError, match="bool tensor.*~"):
            fn()
    assert (~mask).tolist() == [False, True]
    assert (1 - mask.long()).tolist() == [0, 1]


def test_bool_to_a_bool_power_is_refused_and_other_powers_keep_our_dtypes(device):
    """NumPy answers bool ** bool in int8, which is not one of minigrad's dtypes: refused
    for two bool tensors, as PyTorch; a Python bool exponent gives bools, as PyTorch (x ** True
    is x, x ** False is all True). A bool base with a number, or a bool exponent, promotes as
    usual."""
    mask = mg.tensor([True, False], device=device)
    for fn in (lambda: mask ** mask, lambda: mg.pow(mask, mask)):
        with pytest.raises(TypeError, match=r"bool \*\* bool is not supported.*\.long\(\)"):
            fn()
    assert (mask ** True).tolist() == [True, False] and (mask ** False).tolist() == [True] * 2
    assert (mask ** True).dtype == mg.bool and mask.square().tolist() == [1, 0]
    assert (mask ** True) is not mask                    # a new tensor, as any power
    assert (mask ** 2).dtype == mg.int64 and (mask ** 2.0).dtype == mg.float32
    assert (mg.tensor([2, 3], device=device) ** mask).tolist() == [2, 1]


@pytest.mark.parametrize("op", [lambda a: a.relu(), lambda a: a.clamp(-0.5, 0.5),
                                lambda a: a.max(), lambda a: a.max(0)[0],
                                lambda a: a.maximum(mg.zeros(2)),
                                lambda a: mg.minimum(a, mg.zeros(2))])
def test_a_nan_upstream_gradient_stays_out_of_masked_off_inputs(op):
    """As PyTorch: the gradient is selected (where), not multiplied by a 0/1 mask, so a NaN
    reaching relu/clamp/max/maximum goes only where the output came from."""
    a = mg.tensor([-1.0, 2.0], requires_grad=True)
    out = op(a)
    out.backward(mg.full(out.shape, float("nan")))
    g = a.grad.numpy()
    assert np.isnan(g).sum() <= 1 and (g[~np.isnan(g)] == 0).all()


def test_a_nan_gets_its_gradient_where_pytorch_sends_it(device):
    """maximum/minimum: where a NaN leaves the order unknown, both inputs get the whole
    gradient (PyTorch's masks; all of it went to the other input, so the NaN's own input got
    none, and which one depended on the argument order); relu passes a NaN's gradient on;
    abs's is sign(x), 0 at NaN as mg.sign's (PyTorch's too)."""
    nan = float("nan")
    a = mg.tensor([nan, 1.0, 2.0, 3.0], device=device, requires_grad=True)
    b = mg.tensor([1.0, nan, 2.0, 1.0], device=device, requires_grad=True)
    mg.maximum(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0, 0.5, 1.0] and b.grad.tolist() == [1.0, 1.0, 0.5, 0.0]
    a.grad = b.grad = None
    mg.minimum(a, b).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0, 0.5, 0.0] and b.grad.tolist() == [1.0, 1.0, 0.5, 1.0]
    x = mg.tensor([nan, -1.0, 2.0], device=device, requires_grad=True)
    x.relu().sum().backward()
    assert x.grad.tolist() == [1.0, 0.0, 1.0]
    x.grad = None
    x.abs().sum().backward()
    assert x.grad.tolist() == [0.0, -1.0, 1.0] == x.detach().sign().tolist()


def test_a_python_int_beyond_an_integer_tensors_range_wraps_as_torch(device):
    """uint8 + (-1) is uint8 + 255 in PyTorch (the number wraps into the dtype); NumPy
    refuses with a bare "Python integer -1 out of bounds for uint8"."""
    u = mg.tensor(np.array([3, 200], np.uint8), device=device)
    assert (u + (-1)).tolist() == [2, 199] and (u * -1).tolist() == [253, 56]
    assert (u + (-1)).dtype == np.uint8
    assert (mg.tensor(np.array([255, 3], np.uint8), device=device) == -1).tolist() == \
        [True, False]                                    # -1 is 255 in uint8
    i = mg.tensor(np.array([1], np.int32), device=device)
    assert (i + 2 ** 40).tolist() == [1]                 # 2**40 wraps to 0 in int32
    with pytest.raises(OverflowError, match="too big for any 64-bit integer"):
        mg.tensor([0], device=device) == 2 ** 64         # PyTorch: "int too big to convert"
    u[:1] = -1                                           # a write below the lowest wraps
    assert u.tolist() == [255, 200]
    with pytest.raises(OverflowError, match=r"setitem: 300 does not fit uint8 \(at most 255\)"):
        u[:1] = 300                                      # above the highest: an error


def test_higher_derivatives_of_powers_at_zero_are_finite():
    """x**k's derivatives of every order at x = 0, and the exponent's at a base of 0: the
    discarded branch of pow's backward (0·x⁻¹ there) must not leak NaN into the next
    order, as it did from order k + 2. p(x) = 1 + 2x + 3x² + 4x³: p'' = 6 + 24x."""
    x = mg.tensor([0.0, 0.5], dtype=mg.float64, requires_grad=True)
    y = sum(c * x ** k for k, c in enumerate([1.0, 2.0, 3.0, 4.0])).sum()
    g, = mg.grad(y, [x], create_graph=True)
    h, = mg.grad(g.sum(), [x], create_graph=True)
    np.testing.assert_allclose(h.numpy(), [6.0, 18.0])
    np.testing.assert_allclose(mg.grad(h.sum(), [x])[0].numpy(), [24.0, 24.0])
    a = mg.tensor([0.0, 2.0], dtype=mg.float64, requires_grad=True)
    b = mg.tensor([2.0, 3.0], dtype=mg.float64, requires_grad=True)
    with np.errstate(all="raise"):                   # no 0·(-∞) computed, even discarded
        gb, = mg.grad((a ** b).sum(), [b], create_graph=True)
        ga, gbb = mg.grad(gb.sum(), [a, b])
    # d/db aᵇ = aᵇ ln a; its derivatives: d/da = aᵇ⁻¹(b ln a + 1), d/db = aᵇ ln² a
    np.testing.assert_allclose(gb.numpy(), [0.0, 8 * np.log(2)])
    np.testing.assert_allclose(ga.numpy(), [0.0, 4 * (3 * np.log(2) + 1)])
    np.testing.assert_allclose(gbb.numpy(), [0.0, 8 * np.log(2) ** 2])
