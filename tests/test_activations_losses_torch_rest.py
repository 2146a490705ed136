"""The rest of torch.nn's activations and losses: celu, hardswish, hardsigmoid, hardshrink,
softshrink, tanhshrink, threshold, softmin, gumbel_softmax, rrelu; margin_ranking,
hinge_embedding, cosine_embedding, soft_margin, multilabel_soft_margin, multi_margin,
triplet_margin, poisson_nll and gaussian_nll losses; and their modules. Values, gradients
and second order against PyTorch (float64), gradcheck, each reduction, PyTorch's side at
each kink and at ±inf and NaN, the random ones' draws, the errors, reprs and state dicts."""
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
from op_helpers import (OpCase, unary, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch, check_fast_backward_everywhere,
                        check_special_values_vs_torch, SPECIAL_VALUES, special_upstreams)
from nn_helpers import compare_with_torch, gradcheck_module
from test_activations_losses_more import _first_and_second


def _tf():
    """torch.nn.functional, imported only by torch-side lambdas (skipped without torch)."""
    return __import__("torch").nn.functional


def _c(a, like):
    """A constant beside `like` (minigrad or torch, whichever it is), of its dtype for
    floating `a`."""
    a = np.asarray(a)
    if isinstance(like, mg.Tensor):
        return mg.tensor(a, dtype=like.dtype if a.dtype.kind == "f" else None,
                         device=like.device)
    torch = __import__("torch")
    return torch.tensor(a, dtype=like.dtype if a.dtype.kind == "f" else None)


def _celu(a, alpha):
    return np.where(a > 0, a, alpha * np.expm1(a / alpha))


# ---- activations -----------------------------------------------------------------------------
ACTIVATIONS = (
    # α with an exact float32 reciprocal: PyTorch's backward rounds 1/α to float32
    [c for a in (1.0, 0.5, 2.0) for c in unary(
        f"celu_{a}", lambda x, a=a: F.celu(x, a), torch_fn=lambda x, a=a: _tf().celu(x, a),
        np_fn=lambda x, a=a: _celu(x, a))]
    # ×2.5: (-5, 5) crosses both kinks at ±3
    + unary("hardswish", lambda x: F.hardswish(x * 2.5),
            torch_fn=lambda x: _tf().hardswish(x * 2.5),
            np_fn=lambda a: 2.5 * a * np.clip(2.5 * a + 3, 0, 6) / 6)
    # PyTorch's own hardsigmoid backward is 1/6 rounded to float32 (test below); its
    # relu6(x + 3)/6 is the same function, exactly
    + unary("hardsigmoid", lambda x: F.hardsigmoid(x * 2.5),
            torch_fn=lambda x: _tf().relu6(x * 2.5 + 3) / 6,
            np_fn=lambda a: np.clip(2.5 * a + 3, 0, 6) / 6)
    + [c for lam in (0.5, 1.2) for c in unary(
        f"hardshrink_{lam}", lambda x, lam=lam: F.hardshrink(x, lam),
        torch_fn=lambda x, lam=lam: _tf().hardshrink(x, lam),
        np_fn=lambda a, lam=lam: np.where(np.abs(a) <= lam, 0, a))]
    + [c for lam in (0.5, 0.0) for c in unary(
        f"softshrink_{lam}", lambda x, lam=lam: F.softshrink(x, lam),
        torch_fn=lambda x, lam=lam: _tf().softshrink(x, lam), domain="nonzero",
        np_fn=lambda a, lam=lam: np.sign(a) * np.maximum(np.abs(a) - lam, 0))]
    + unary("tanhshrink", F.tanhshrink, torch_fn=lambda x: _tf().tanhshrink(x),
            np_fn=lambda a: a - np.tanh(a))
    + unary("threshold", lambda x: F.threshold(x, 0.3, -2.0),
            torch_fn=lambda x: _tf().threshold(x, 0.3, -2.0),
            np_fn=lambda a: np.where(a > 0.3, a, -2.0))
    + [OpCase(f"softmin_dim{d}", lambda x, d=d: F.softmin(x, d), (s,),
              torch_fn=lambda x, d=d: _tf().softmin(x, d),
              np_fn=lambda a, d=d: np.exp(-a) / np.exp(-a).sum(d, keepdims=True))
       for s, d in (((2, 3), 1), ((2, 3), 0), ((2, 3, 4), -1), ((3,), 0))]
    + unary("rrelu_eval", F.rrelu, torch_fn=lambda x: _tf().rrelu(x), domain="nonzero",
            np_fn=lambda a: np.where(a > 0, a, a * (1 / 8 + 1 / 3) / 2))
)

# ---- losses: every differentiable input (a constant target where PyTorch has no gradient) ----
_R = ("mean", "sum", "none")
_W3 = np.array([0.5, 2.0, 1.5])                     # a weight per class
_Y23 = np.array([[1.0, -1.0, 1.0], [-1.0, 1.0, 0.5]])   # ±1 labels (0.5: neither)
_T3 = np.array([1.0, -1.0, 0.0])


def _losses(name, fn, torch_fn, shapes, **kw):
    """One case per reduction: fn(r) and torch_fn(r) make the loss functions."""
    return [OpCase(f"{name}_{r}", fn(r), s, torch_fn=torch_fn(r), **kw)
            for r in _R for s in shapes]


LOSSES = (
    [c for m in (0.0, 0.4) for c in _losses(
        f"margin_ranking_m{m}",
        lambda r, m=m: lambda a, b, y: F.margin_ranking_loss(a, b, y, m, reduction=r),
        lambda r, m=m: lambda a, b, y: _tf().margin_ranking_loss(a, b, y, m, reduction=r),
        [((3,), (3,), (3,)), ((2, 3), (1, 3), (2, 1))])]
    + [c for m in (1.0, 0.5) for c in _losses(
        f"hinge_embedding_m{m}",
        lambda r, m=m: lambda x: F.hinge_embedding_loss(x, _c(_Y23, x), m, reduction=r),
        lambda r, m=m: lambda x: _tf().hinge_embedding_loss(x, _c(_Y23, x), m, reduction=r),
        [((2, 3),)], domain="positive")]
    + _losses("soft_margin",
              lambda r: lambda x: F.soft_margin_loss(x * 3, _c(_Y23, x), reduction=r),
              lambda r: lambda x: _tf().soft_margin_loss(x * 3, _c(_Y23, x), reduction=r),
              [((2, 3),)])
    + [c for w in (None, _W3) for c in _losses(
        f"multilabel_soft_margin_w{w is not None}",
        lambda r, w=w: lambda x, y: F.multilabel_soft_margin_loss(
            x * 3, y, None if w is None else _c(w, x), reduction=r),
        lambda r, w=w: lambda x, y: _tf().multilabel_soft_margin_loss(
            x * 3, y, None if w is None else _c(w, x), reduction=r),
        [((2, 3), (2, 3)), ((3,), (3,)), ((2, 2, 3), (3,))], domain=("real", "unit"))]
    + [c for p in (1, 2) for m, w in ((1.0, None), (0.7, _W3)) for c in _losses(
        f"multi_margin_p{p}_m{m}_w{w is not None}",
        lambda r, p=p, m=m, w=w: lambda x: F.multi_margin_loss(
            x, _c([0, 2], x), p, m, None if w is None else _c(w, x), reduction=r),
        lambda r, p=p, m=m, w=w: lambda x: _tf().multi_margin_loss(
            x, _c([0, 2], x), p, m, None if w is None else _c(w, x), reduction=r),
        [((2, 3),)])]
    + _losses("multi_margin_1d", lambda r: lambda x: F.multi_margin_loss(x, _c(1, x),
                                                                          reduction=r),
              lambda r: lambda x: _tf().multi_margin_loss(x, _c(1, x), reduction=r),
              [((3,),)])
    + [c for p, m, swap in ((2, 1.0, False), (1.5, 0.5, True), (1, 2.0, True)) for c in _losses(
        f"triplet_margin_p{p}_m{m}_swap{swap}",
        lambda r, p=p, m=m, s=swap: lambda a, b, n: F.triplet_margin_loss(
            a, b, n, m, p, swap=s, reduction=r),
        lambda r, p=p, m=m, s=swap: lambda a, b, n: _tf().triplet_margin_loss(
            a, b, n, m, p, swap=s, reduction=r),
        [((3, 4), (3, 4), (3, 4)), ((4,), (4,), (4,)), ((2, 3, 4), (1, 3, 4), (2, 1, 4))])]
    # targets in (0.5, 2): the Stirling term counts from 1 on
    + [c for log_input in (True, False) for full in (False, True) for c in _losses(
        f"poisson_nll_log{log_input}_full{full}",
        lambda r, li=log_input, f=full: lambda x, t: F.poisson_nll_loss(x, t, li, f,
                                                                        reduction=r),
        lambda r, li=log_input, f=full: lambda x, t: _tf().poisson_nll_loss(x, t, li, f,
                                                                            reduction=r),
        [((2, 3), (2, 3)), ((2, 3), (3,))],
        domain=("real" if log_input else "positive", "positive"))]
    # var of the input's shape, one per row ((2,) and (2, 1)), one per column, a number
    + [c for full in (False, True) for c in _losses(
        f"gaussian_nll_full{full}",
        lambda r, f=full: lambda x, t, v: F.gaussian_nll_loss(x, t, v, f, reduction=r),
        lambda r, f=full: lambda x, t, v: _tf().gaussian_nll_loss(x, t, v, f, reduction=r),
        [((2, 3), (2, 3), (2, 3)), ((2, 3), (2, 3), (2,)), ((2, 3), (3,), (2, 1)),
         ((2, 3), (2, 3), (1, 3))], domain=("real", "real", "positive"))]
    + _losses("gaussian_nll_number_var",
              lambda r: lambda x, t: F.gaussian_nll_loss(x, t, 0.7, reduction=r),
              lambda r: lambda x, t: _tf().gaussian_nll_loss(x, t, 0.7, reduction=r),
              [((2, 3), (2, 3))])
    + [c for m in (0.0, 0.3, -0.5) for c in _losses(
        f"cosine_embedding_m{m}",
        lambda r, m=m: lambda a, b: F.cosine_embedding_loss(a, b, _c(_T3, a), m, reduction=r),
        lambda r, m=m: lambda a, b: _tf().cosine_embedding_loss(a, b, _c(_T3, a), m,
                                                                reduction=r),
        [((3, 4), (3, 4)), ((3, 4), (1, 4))])]
    + [c for y in (1.0, -1.0) for c in _losses(
        f"cosine_embedding_1d_y{y}",
        lambda r, y=y: lambda a, b: F.cosine_embedding_loss(a, b, _c(y, a), -0.5, reduction=r),
        lambda r, y=y: lambda a, b: _tf().cosine_embedding_loss(a, b, _c(y, a), -0.5,
                                                                reduction=r),
        [((4,), (4,))])]
)
ALL = ACTIVATIONS + LOSSES
# PyTorch has no double backward for these (its multi_margin_loss_backward is not
# differentiable); mg.gradgradcheck still checks ours
_NO_TORCH_DOUBLE = ("multi_margin",)


@pytest.mark.parametrize("case", ALL, ids=str)
def test_gradcheck_and_numpy_forward(case):
    check_gradcheck(case, "cpu")


@pytest.mark.parametrize("case", ALL, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", [c for c in ALL if not c.name.startswith(_NO_TORCH_DOUBLE)],
                         ids=str)
def test_double_backward_vs_torch(case):
    check_double_backward_vs_torch(case, "cpu")


def test_celu_gradient_is_exact_for_any_alpha():
    """α = 0.7 (no exact float32 reciprocal): gradient α·(1/α)·e^(x/α) = e^(x/α) exactly,
    where PyTorch's is ~1e-8 off in float64 (its backward rounds 1/α to float32)."""
    x = mg.tensor([-2.0, -0.3, 0.0, 1.0], dtype="float64", requires_grad=True)
    F.celu(x, 0.7).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [np.exp(-2 / 0.7), np.exp(-0.3 / 0.7), 1, 1],
                               rtol=1e-15)
    check_gradcheck(OpCase("celu_0.7", lambda x: F.celu(x, 0.7), ((2, 3),),
                           np_fn=lambda a: _celu(a, 0.7)), "cpu")


def test_hardsigmoid_vs_torch_own_kernel():
    """PyTorch's hardsigmoid: its values exactly, its gradient to float32 (1/6 rounded)."""
    torch = pytest.importorskip("torch")
    a = np.linspace(-4, 4, 17)
    x, t = mg.tensor(a, dtype="float64", requires_grad=True), torch.tensor(a,
                                                                           requires_grad=True)
    y, yt = F.hardsigmoid(x), _tf().hardsigmoid(t)
    np.testing.assert_array_equal(y.numpy(), yt.detach().numpy())
    y.sum().backward()
    yt.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-7)
    assert x.grad.numpy()[8] == 1 / 6


# ---- the kinks: PyTorch's gradient and second derivative at each ------------------------------
_K = np.array([-4.0, -3.0, -0.5, 0.0, 0.5, 3.0, 4.0])
KINKS = [
    # name, minigrad fn, torch fn, inputs, hand values (grad of input 0) or None
    ("hardswish", F.hardswish, lambda x: _tf().hardswish(x), [_K],
     [0, 0, 1 / 3, 0.5, 2 / 3, 1, 1]),
    ("hardsigmoid", F.hardsigmoid, lambda x: _tf().relu6(x + 3) / 6, [_K],
     [0, 0, 1 / 6, 1 / 6, 1 / 6, 0, 0]),
    ("hardshrink", F.hardshrink, lambda x: _tf().hardshrink(x), [_K], [1, 1, 0, 0, 0, 1, 1]),
    ("softshrink", F.softshrink, lambda x: _tf().softshrink(x), [_K], [1, 1, 0, 0, 0, 1, 1]),
    ("softshrink_0", lambda x: F.softshrink(x, 0.0), lambda x: _tf().softshrink(x, 0.0), [_K],
     [1, 1, 1, 0, 1, 1, 1]),
    ("threshold", lambda x: F.threshold(x, 0.5, 7.0), lambda x: _tf().threshold(x, 0.5, 7.0),
     [_K], [0, 0, 0, 0, 0, 1, 1]),
    ("celu", lambda x: F.celu(x, 0.5), lambda x: _tf().celu(x, 0.5), [_K], None),
    ("rrelu_eval", F.rrelu, lambda x: _tf().rrelu(x), [_K], None),
    ("margin_ranking", lambda a, b, y: F.margin_ranking_loss(a, b, y, 0.0, reduction="sum"),
     lambda a, b, y: _tf().margin_ranking_loss(a, b, y, 0.0, reduction="sum"),
     [np.array([1.0, 2.0, 1.5]), np.array([1.0, 1.0, 1.0]), np.array([1.0, 1.0, -1.0])],
     [-1, 0, 1]),
    ("hinge_embedding", lambda x: F.hinge_embedding_loss(x, _c([-1.0, -1.0, 1.0], x), 1.0,
                                                         reduction="sum"),
     lambda x: _tf().hinge_embedding_loss(x, _c([-1.0, -1.0, 1.0], x), 1.0, reduction="sum"),
     [np.array([1.0, 0.5, 0.0])], [-1, -1, 1]),
    ("triplet_margin", lambda a, b, n: F.triplet_margin_loss(a, b, n, 1.0, 1, 0.0, False,
                                                             reduction="sum"),
     lambda a, b, n: _tf().triplet_margin_loss(a, b, n, 1.0, 1, 0.0, reduction="sum"),
     [np.array([[0.0, 0.0]]), np.array([[1.0, 0.0]]), np.array([[2.0, 0.0]])], None),
    ("cosine_embedding", lambda a, b: F.cosine_embedding_loss(a, b, _c([-1.0], a), 0.6,
                                                              reduction="sum"),
     lambda a, b: _tf().cosine_embedding_loss(a, b, _c([-1.0], a), 0.6, reduction="sum"),
     [np.array([[3.0, 4.0]]), np.array([[1.0, 0.0]])], None),
]


@pytest.mark.parametrize("case", KINKS, ids=lambda c: c[0])
def test_gradients_at_the_kinks(case):
    """Hand values where given (no torch needed), and everything against PyTorch."""
    name, fn, torch_fn, arrays, want = case
    mine = _first_and_second(fn, arrays, "mg")
    if want is not None:
        np.testing.assert_allclose(mine[1], want, rtol=1e-15, err_msg=f"{name}: gradient")
    pytest.importorskip("torch")
    theirs = _first_and_second(torch_fn, arrays, "torch")
    for i, (m, t) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(m, t, rtol=1e-12, atol=1e-15, err_msg=f"{name} part {i}")


def test_multi_margin_gradient_at_the_hinge_is_zero_as_pytorch():
    """z = margin - x[y] + x[j] = 0 exactly: no gradient (PyTorch's backward counts z > 0
    only; it has no double backward to compare)."""
    a = np.array([[1.0, 0.0, 0.5]])
    x = mg.tensor(a, dtype="float64", requires_grad=True)
    F.multi_margin_loss(x, mg.tensor([0]), reduction="sum").backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[-1 / 3, 0, 1 / 3]])
    torch = pytest.importorskip("torch")
    t = torch.tensor(a, requires_grad=True)
    _tf().multi_margin_loss(t, torch.tensor([0]), reduction="sum").backward()
    np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy())


# ---- ±inf and NaN, with finite and with inf/NaN upstream gradients ---------------------------
ELEMENTWISE = {   # name: (minigrad, torch, whether an inf/NaN upstream matches PyTorch too)
    "hardswish": (F.hardswish, lambda x: _tf().hardswish(x), True),
    "hardsigmoid": (F.hardsigmoid, lambda x: _tf().hardsigmoid(x), True),
    "hardshrink": (F.hardshrink, lambda x: _tf().hardshrink(x), True),
    "softshrink": (F.softshrink, lambda x: _tf().softshrink(x), True),
    "threshold": (lambda x: F.threshold(x, 1.0, -3.0), lambda x: _tf().threshold(x, 1.0, -3.0),
                  True),
    "tanhshrink": (F.tanhshrink, lambda x: _tf().tanhshrink(x), False),
    "rrelu_eval": (F.rrelu, lambda x: _tf().rrelu(x), True),
}


def _torch_value_and_grad(torch_fn, a, upstream):
    """PyTorch's output and gradient, each element's gradient at NaN from a one-element
    call: PyTorch's vectorised kernels give another one there (hardswish NaN, hardshrink
    and softshrink 0, where their one-element kernels give the upstream gradient; ours is
    that one)."""
    torch = __import__("torch")
    t = torch.tensor(a, requires_grad=True)
    y = torch_fn(t)
    y.backward(torch.tensor(upstream, dtype=y.dtype))
    grad = t.grad.numpy().copy()
    for i in np.flatnonzero(np.isnan(a)):
        one = torch.tensor(a[i:i + 1], requires_grad=True)
        torch_fn(one).backward(torch.tensor(upstream[i:i + 1], dtype=y.dtype))
        grad[i] = one.grad.item()
    return y.detach().numpy(), grad


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(ELEMENTWISE))
def test_special_values_as_pytorch(name, dtype):
    pytest.importorskip("torch")
    fn, torch_fn, odd = ELEMENTWISE[name]
    a = SPECIAL_VALUES.astype(dtype)
    for upstream in special_upstreams(a.size)[:2 if odd else 1]:
        x = mg.tensor(a, requires_grad=True)
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            y = fn(x)
            y.backward(mg.tensor(upstream, dtype=dtype))
            theirs = _torch_value_and_grad(torch_fn, a, upstream)
        # hardsigmoid: PyTorch's gradient is 1/6 rounded to float32
        tol = 1e-7 if name == "hardsigmoid" and dtype == "float64" else \
            {"float32": 1e-6, "float64": 1e-12}[dtype]
        for what, mine, t in zip(("value", "grad"), (y.numpy(), x.grad.numpy()), theirs):
            np.testing.assert_allclose(mine, t, rtol=tol, atol=1e-30, equal_nan=True,
                                       err_msg=f"{name} {what} at {a}")


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("alpha", [1.0, 0.5, -2.0])
def test_celu_fused_op_special_values(alpha, dtype):
    """CELU is the fused ELU op with an input scale: its fast backward against its
    reference, and both against PyTorch at the special values."""
    fn = lambda x: F.celu(x, alpha)  # noqa: E731
    check_fast_backward_everywhere(fn, dtype, "cpu", f"celu {alpha}")
    x = SPECIAL_VALUES.astype(dtype)
    for upstream in special_upstreams(x.size):
        check_special_values_vs_torch(fn, lambda t: _tf().celu(t, alpha), x, upstream,
                                      what=f"celu {alpha}")


def test_elu_and_selu_unchanged_by_the_input_scale():
    """The input scale is 1 for elu and selu: the same values as before, bit for bit."""
    a = np.array([-3.0, -1e-3, 0.0, 2.0])
    x = mg.tensor(a, dtype="float64", requires_grad=True)
    y = F.elu(x, 0.7)
    y.sum().backward()
    np.testing.assert_allclose(y.numpy(), np.where(a > 0, a, 0.7 * np.expm1(a)), rtol=1e-15)
    np.testing.assert_allclose(x.grad.numpy(), np.where(a > 0, 1, 0.7 * np.exp(a)), rtol=1e-15)


def test_half_is_computed_in_float32():
    """float16 in, float16 out, computed in float32 and rounded once, as PyTorch's CPU
    kernels."""
    a = np.linspace(-5, 5, 41)
    for name in ("celu", "hardswish", "hardsigmoid"):
        y = getattr(F, name)(mg.tensor(a, dtype="float16"))
        want = getattr(F, name)(mg.tensor(a.astype("float16"), dtype="float32"))
        assert y.dtype == mg.float16
        np.testing.assert_array_equal(y.numpy(), want.numpy().astype("float16"), err_msg=name)


def test_softshrink_keeps_the_dtype_and_subtracts_lambda_exactly_as_pytorch():
    """softshrink subtracts λ in x's dtype (a float32 tensor of ±λ made float16 float32,
    and float64's x - 0.3 off by 1e-8), float16 compared and computed in float32."""
    torch = pytest.importorskip("torch")
    a = [0.3, -0.3, 0.7, -0.7, 0.30000001192092896, 0.2998, 5.0]
    for dt in ("float64", "float32", "float16"):
        y = F.softshrink(mg.tensor(a, dtype=dt), 0.3)
        want = _tf().softshrink(torch.tensor(a, dtype=getattr(torch, dt)), 0.3)
        assert y.dtype == getattr(mg, dt)
        np.testing.assert_array_equal(y.numpy(), want.numpy(), err_msg=dt)


def test_threshold_refuses_a_value_the_dtype_cannot_hold_as_pytorch():
    """A NaN or inf into an integer tensor (int() failed bare), 1e6 into float16 (inf)."""
    for x, value in ((mg.tensor([1, 5]), float("nan")), (mg.tensor([1, 5]), float("inf")),
                     (mg.tensor([1.0, 5.0], dtype="float16"), 1e6)):
        with pytest.raises(ValueError, match=f"threshold: value {value!r} cannot be"):
            F.threshold(x, 2, value)
    assert F.threshold(mg.tensor([1.0, 5.0], dtype="float16"), 2, -math.inf).tolist() == \
        [-math.inf, 5.0]


def test_integer_inputs_as_pytorch():
    """threshold keeps an integer tensor integer (value truncated), tanhshrink gives
    float32; the others refuse integers, as PyTorch."""
    y = F.threshold(mg.tensor([1, 2, 3]), 1.5, 2.7)
    assert y.dtype == mg.int64 and y.tolist() == [2, 2, 3]
    assert F.tanhshrink(mg.tensor([1, 2])).dtype == mg.float32
    for name in ("celu", "hardswish", "hardsigmoid", "hardshrink", "softshrink", "rrelu",
                 "gumbel_softmax"):
        with pytest.raises(TypeError, match=name):
            getattr(F, name)(mg.tensor([1, 2]))


def test_softmin_implicit_dim_warns_and_dtype_casts():
    x = mg.tensor([[1.0, 2.0, 0.5]])
    with pytest.warns(UserWarning, match="softmin"):
        y = F.softmin(x)
    np.testing.assert_allclose(y.numpy(), F.softmax(-x, 1).numpy())
    assert F.softmin(x, 1, dtype=mg.float64).dtype == mg.float64


# ---- gumbel_softmax and rrelu: the draws -----------------------------------------------------
def _gumbels(shape, seed, dtype):
    """The Gumbel noise gumbel_softmax draws after mg.manual_seed(seed)."""
    mg.manual_seed(seed)
    u = mg.rand(*shape, dtype=dtype).numpy()
    return -np.log(-np.log(np.maximum(u, np.finfo(dtype).tiny)))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("hard", [False, True])
def test_gumbel_softmax_is_softmax_of_the_generators_gumbel_noise(hard, dtype):
    """Values and gradients of PyTorch's formula given the same noise; hard=True is the
    one-hot of the largest entry, with the soft sample's gradient (straight-through)."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((4, 5))
    g = _gumbels(a.shape, 7, dtype)
    mg.manual_seed(7)
    x = mg.tensor(a, dtype=dtype, requires_grad=True)
    y = F.gumbel_softmax(x, tau=0.5, hard=hard, dim=0)
    t = torch.tensor(a.astype(dtype), requires_grad=True)
    soft = ((t + torch.tensor(g)) / 0.5).softmax(0)
    want = soft
    if hard:
        hot = torch.zeros_like(soft).scatter_(0, soft.argmax(0, keepdim=True), 1.0)
        want = hot - soft.detach() + soft
        assert (y.numpy().argmax(0) == soft.detach().numpy().argmax(0)).all()
        np.testing.assert_allclose(y.numpy(), hot.numpy(), atol=1e-6)
    w = np.random.default_rng(1).standard_normal(a.shape).astype(dtype)
    (y * mg.tensor(w)).sum().backward()
    (want * torch.tensor(w)).sum().backward()
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(y.numpy(), want.detach().numpy(), rtol=tol, atol=tol)
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)


def test_gumbel_softmax_samples_the_softmax_distribution():
    """The one-hot samples' frequencies are softmax(logits); a seed repeats a sample and
    the next call draws another."""
    logits = mg.tensor(np.log([[0.2, 0.5, 0.3]]), dtype="float64").expand(20000, 3)
    mg.manual_seed(0)
    hot = F.gumbel_softmax(logits, hard=True).numpy()
    np.testing.assert_allclose(hot.mean(0), [0.2, 0.5, 0.3], atol=0.015)
    assert (hot.sum(1) == 1).all()
    again = F.gumbel_softmax(logits, hard=True).numpy()
    mg.manual_seed(0)
    np.testing.assert_array_equal(F.gumbel_softmax(logits, hard=True).numpy(), hot)
    assert (again != hot).any()


def test_gumbel_softmax_details():
    x = mg.randn(2, 3)
    with pytest.warns(UserWarning, match="deprecated"):
        F.gumbel_softmax(x, eps=1e-5)
    for tau in (0, -1.0):
        with pytest.raises(ValueError, match="tau"):
            F.gumbel_softmax(x, tau=tau)
    assert F.gumbel_softmax(mg.tensor(0.5), hard=True).item() == 1.0
    y = F.gumbel_softmax(mg.randn(2, 3, 4), dim=1, hard=True)
    assert y.shape == (2, 3, 4) and (y.numpy().sum(1) == 1).all()


def test_rrelu_training_draws_a_slope_per_element():
    """Negative inputs are scaled by slopes from U(lower, upper) (also their gradients,
    with second derivative 0); positive ones pass; x = 0 gets a slope, as PyTorch."""
    mg.manual_seed(0)
    a = np.concatenate([-np.ones(4000), [0.0, 2.0, np.nan]])
    x = mg.tensor(a, dtype="float64", requires_grad=True)
    y = F.rrelu(x, 0.1, 0.3, training=True)
    (g,) = mg.grad(y.sum(), [x], create_graph=True)
    slopes = -y.numpy()[:4000]
    assert slopes.min() >= 0.1 and slopes.max() <= 0.3
    assert abs(slopes.mean() - 0.2) < 0.005 and abs(slopes.std() - 0.2 / 12 ** 0.5) < 0.005
    np.testing.assert_array_equal(g.numpy()[:4000], slopes)
    assert y.numpy()[4001] == 2.0 and np.isnan(y.numpy()[4002])
    assert 0.1 <= g.numpy()[4000] <= 0.3 and g.numpy()[4001:].tolist() == [1.0, 1.0]
    assert not g.requires_grad or not mg.grad(g.sum(), [x])[0].numpy().any()
    mg.manual_seed(0)
    np.testing.assert_array_equal(F.rrelu(x, 0.1, 0.3, training=True).numpy(), y.numpy())


def test_rrelu_module_trains_randomly_and_evaluates_the_mean_slope():
    m = nn.RReLU(0.1, 0.3)
    x = -mg.ones(1000)
    assert len(set(m(x).numpy().tolist())) > 100
    m.eval()
    np.testing.assert_allclose(m(x).numpy(), -0.2)
    np.testing.assert_array_equal(m(x).numpy(), F.leaky_relu(x, 0.2).numpy())


# ---- errors: what PyTorch refuses, with messages that name the op and what was wrong --------
_X = lambda: mg.randn(2, 3)  # noqa: E731
ERRORS = [
    ("celu alpha 0", lambda: F.celu(_X(), 0.0), ValueError, ["celu", "alpha"]),
    ("softshrink negative", lambda: F.softshrink(_X(), -1), ValueError,
     ["softshrink", "lambd", "-1"]),
    ("rrelu lower > upper", lambda: F.rrelu(_X(), 0.3, 0.1), ValueError,
     ["rrelu", "lower", "upper"]),
    ("rrelu lower > upper training", lambda: F.rrelu(_X(), 0.3, 0.1, True), ValueError,
     ["rrelu", "lower=0.3"]),
    ("margin_ranking dims", lambda: F.margin_ranking_loss(mg.randn(3), mg.randn(3),
                                                          mg.randn(3, 1)), ValueError,
     ["margin_ranking_loss", "same number of dims", "(3, 1)"]),
    ("margin_ranking shapes", lambda: F.margin_ranking_loss(mg.randn(3), mg.randn(4),
                                                            mg.randn(3)), ValueError,
     ["margin_ranking_loss", "(3,)", "(4,)"]),
    ("margin_ranking reduction", lambda: F.margin_ranking_loss(_X(), _X(), _X(), reduction="x"),
     ValueError, ["margin_ranking_loss", "'x'"]),
    ("hinge shapes", lambda: F.hinge_embedding_loss(mg.randn(3), mg.randn(4)), ValueError,
     ["hinge_embedding_loss", "(3,)", "(4,)"]),
    ("hinge reduction", lambda: F.hinge_embedding_loss(_X(), _X(), reduction="avg"),
     ValueError, ["hinge_embedding_loss", "'avg'"]),
    ("soft_margin target bigger", lambda: F.soft_margin_loss(mg.randn(3), mg.randn(3, 1)),
     ValueError, ["soft_margin_loss", "(3, 1)", "(3,)"]),
    ("multilabel 0-d", lambda: F.multilabel_soft_margin_loss(mg.tensor(1.0), mg.tensor(1.0)),
     ValueError, ["multilabel_soft_margin_loss", "0-d"]),
    ("multilabel shapes", lambda: F.multilabel_soft_margin_loss(_X(), mg.randn(2, 4)),
     ValueError, ["multilabel_soft_margin_loss", "(2, 4)"]),
    ("multi_margin p", lambda: F.multi_margin_loss(_X(), mg.tensor([0, 1]), p=3), ValueError,
     ["multi_margin_loss", "p == 1 and p == 2", "p=3"]),
    ("multi_margin target range", lambda: F.multi_margin_loss(_X(), mg.tensor([0, 3])),
     IndexError, ["multi_margin_loss", "target 3", "3 classes"]),
    ("multi_margin negative target", lambda: F.multi_margin_loss(_X(), mg.tensor([-1, 0])),
     IndexError, ["multi_margin_loss", "target -1"]),
    ("multi_margin target size", lambda: F.multi_margin_loss(_X(), mg.tensor([0, 1, 2])),
     ValueError, ["multi_margin_loss", "(3,)", "(2, 3)"]),
    ("multi_margin 3-d", lambda: F.multi_margin_loss(mg.randn(2, 3, 1), mg.tensor([1, 1])),
     ValueError, ["multi_margin_loss", "(2, 3, 1)"]),
    ("multi_margin no classes", lambda: F.multi_margin_loss(mg.randn(2, 0), mg.tensor([0, 0])),
     ValueError, ["multi_margin_loss", "(2, 0)"]),
    ("multi_margin float target", lambda: F.multi_margin_loss(_X(), mg.tensor([0.0, 1.0])),
     TypeError, ["multi_margin_loss", "integer", "float32"]),
    ("multi_margin weight size", lambda: F.multi_margin_loss(_X(), mg.tensor([0, 1]),
                                                             weight=mg.ones(2)), TypeError,
     ["multi_margin_loss", "(3,)", "(2,)"]),
    ("multi_margin weight 2-d", lambda: F.multi_margin_loss(_X(), mg.tensor([0, 1]),
                                                            weight=mg.ones(3, 1)), ValueError,
     ["multi_margin_loss", "one-dimensional"]),
    ("multi_margin weight dtype", lambda: F.multi_margin_loss(
        _X(), mg.tensor([0, 1]), weight=mg.ones(3, dtype="float64")), TypeError,
     ["multi_margin_loss", "float32", "float64"]),
    ("triplet margin 0", lambda: F.triplet_margin_loss(_X(), _X(), _X(), margin=0), ValueError,
     ["triplet_margin_loss", "margin", "greater than 0"]),
    ("triplet dims", lambda: F.triplet_margin_loss(_X(), _X(), mg.randn(3)), ValueError,
     ["triplet_margin_loss", "same number of dims", "(3,)"]),
    ("triplet shapes", lambda: F.triplet_margin_loss(_X(), _X(), mg.randn(2, 5)), ValueError,
     ["triplet_margin_loss", "(2, 5)"]),
    ("triplet reduction", lambda: F.triplet_margin_loss(_X(), _X(), _X(), reduction="x"),
     ValueError, ["triplet_margin_loss", "'x'"]),
    ("poisson reduction", lambda: F.poisson_nll_loss(_X(), _X(), reduction="x"), ValueError,
     ["poisson_nll_loss", "'x'"]),
    ("poisson shapes", lambda: F.poisson_nll_loss(_X(), mg.randn(4, 3)), ValueError,
     ["poisson_nll_loss", "(4, 3)"]),
    ("gaussian var size", lambda: F.gaussian_nll_loss(_X(), _X(), mg.ones(3)), ValueError,
     ["gaussian_nll_loss", "var is of incorrect size", "(3,)"]),
    ("gaussian negative var", lambda: F.gaussian_nll_loss(_X(), _X(), -mg.ones(2, 3)),
     ValueError, ["gaussian_nll_loss", "negative"]),
    ("gaussian negative number var", lambda: F.gaussian_nll_loss(_X(), _X(), -1.0),
     ValueError, ["gaussian_nll_loss", "negative", "-1.0"]),
    ("gaussian reduction", lambda: F.gaussian_nll_loss(_X(), _X(), mg.ones(2, 3),
                                                       reduction="x"), ValueError,
     ["gaussian_nll_loss", "'x'"]),
    ("cosine_embedding 2-d target", lambda: F.cosine_embedding_loss(
        mg.randn(2, 3, 4), mg.randn(2, 3, 4), mg.ones(2, 3)), ValueError,
     ["cosine_embedding_loss", "0-d or 1-d target"]),
    ("cosine_embedding 1-d target, 1-d inputs", lambda: F.cosine_embedding_loss(
        mg.randn(4), mg.randn(4), mg.ones(1)), ValueError,
     ["cosine_embedding_loss", "1-d target expects 2-d inputs"]),
    ("cosine_embedding target size", lambda: F.cosine_embedding_loss(
        mg.randn(3, 4), mg.randn(3, 4), mg.ones(4)), ValueError,
     ["cosine_embedding_loss", "(4,)"]),
    ("cosine_embedding input shapes", lambda: F.cosine_embedding_loss(
        mg.randn(3, 4), mg.randn(3, 5), mg.ones(3)), ValueError,
     ["cosine_embedding_loss", "(3, 4)", "(3, 5)"]),
    ("MultiMarginLoss p", lambda: nn.MultiMarginLoss(p=3), ValueError,
     ["MultiMarginLoss", "p == 1 and p == 2"]),
    ("MultiMarginLoss weight 2-d", lambda: nn.MultiMarginLoss(weight=mg.ones(3, 1)),
     ValueError, ["MultiMarginLoss", "one-dimensional"]),
    ("TripletMarginLoss margin", lambda: nn.TripletMarginLoss(margin=-1), ValueError,
     ["TripletMarginLoss", "margin", "-1"]),
    ("MarginRankingLoss reduction", lambda: nn.MarginRankingLoss(reduction="x"), ValueError,
     ["MarginRankingLoss", "'x'"]),
    ("GaussianNLLLoss reduction", lambda: nn.GaussianNLLLoss(reduction="x"), ValueError,
     ["GaussianNLLLoss", "'x'"]),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c[0])
def test_errors_name_the_op_and_what_was_wrong(case):
    _, call, kind, words = case
    with pytest.raises(kind) as info:
        call()
    for w in words:
        assert w in str(info.value), f"{w!r} not in: {info.value}"


def _torch_calls():
    torch = pytest.importorskip("torch")
    tf, tnn = torch.nn.functional, torch.nn
    x, r = torch.randn(2, 3), torch.randn
    return {
        "celu alpha 0": lambda: tf.celu(x, 0.0),
        "softshrink negative": lambda: tf.softshrink(x, -1),
        "rrelu lower > upper": lambda: tf.rrelu(x, 0.3, 0.1),
        "rrelu lower > upper training": lambda: tf.rrelu(x, 0.3, 0.1, True),
        "margin_ranking dims": lambda: tf.margin_ranking_loss(r(3), r(3), r(3, 1)),
        "margin_ranking shapes": lambda: tf.margin_ranking_loss(r(3), r(4), r(3)),
        "margin_ranking reduction": lambda: tf.margin_ranking_loss(x, x, x, reduction="x"),
        "hinge shapes": lambda: tf.hinge_embedding_loss(r(3), r(4)),
        "hinge reduction": lambda: tf.hinge_embedding_loss(x, x, reduction="avg"),
        "soft_margin target bigger": lambda: tf.soft_margin_loss(r(3), r(3, 1)),
        "multilabel 0-d": lambda: tf.multilabel_soft_margin_loss(r(()), r(())),
        "multilabel shapes": lambda: tf.multilabel_soft_margin_loss(x, r(2, 4)),
        "multi_margin p": lambda: tf.multi_margin_loss(x, torch.tensor([0, 1]), p=3),
        "multi_margin target range": lambda: tf.multi_margin_loss(x, torch.tensor([0, 3])),
        "multi_margin negative target": lambda: tf.multi_margin_loss(x, torch.tensor([-1, 0])),
        "multi_margin target size": lambda: tf.multi_margin_loss(x, torch.tensor([0, 1, 2])),
        "multi_margin 3-d": lambda: tf.multi_margin_loss(r(2, 3, 1), torch.tensor([1, 1])),
        "multi_margin no classes": lambda: tf.multi_margin_loss(r(2, 0), torch.tensor([0, 0])),
        "multi_margin float target": lambda: tf.multi_margin_loss(x, torch.tensor([0.0, 1.0])),
        "multi_margin weight size": lambda: tf.multi_margin_loss(x, torch.tensor([0, 1]),
                                                                 weight=torch.ones(2)),
        "multi_margin weight 2-d": lambda: tf.multi_margin_loss(x, torch.tensor([0, 1]),
                                                                weight=torch.ones(3, 1)),
        "multi_margin weight dtype": lambda: tf.multi_margin_loss(
            x, torch.tensor([0, 1]), weight=torch.ones(3, dtype=torch.float64)),
        "triplet margin 0": lambda: tf.triplet_margin_loss(x, x, x, margin=0),
        "triplet dims": lambda: tf.triplet_margin_loss(x, x, r(3)),
        "triplet shapes": lambda: tf.triplet_margin_loss(x, x, r(2, 5)),
        "triplet reduction": lambda: tf.triplet_margin_loss(x, x, x, reduction="x"),
        "poisson reduction": lambda: tf.poisson_nll_loss(x, x, reduction="x"),
        "poisson shapes": lambda: tf.poisson_nll_loss(x, r(4, 3)),
        "gaussian var size": lambda: tf.gaussian_nll_loss(x, x, torch.ones(3)),
        "gaussian negative var": lambda: tf.gaussian_nll_loss(x, x, -torch.ones(2, 3)),
        "gaussian negative number var": lambda: tf.gaussian_nll_loss(x, x, -1.0),
        "gaussian reduction": lambda: tf.gaussian_nll_loss(x, x, torch.ones(2, 3),
                                                           reduction="x"),
        "cosine_embedding 2-d target": lambda: tf.cosine_embedding_loss(
            r(2, 3, 4), r(2, 3, 4), torch.ones(2, 3)),
        "cosine_embedding 1-d target, 1-d inputs": lambda: tf.cosine_embedding_loss(
            r(4), r(4), torch.ones(1)),
        "cosine_embedding target size": lambda: tf.cosine_embedding_loss(r(3, 4), r(3, 4),
                                                                         torch.ones(4)),
        "cosine_embedding input shapes": lambda: tf.cosine_embedding_loss(r(3, 4), r(3, 5),
                                                                          torch.ones(3)),
        "MultiMarginLoss p": lambda: tnn.MultiMarginLoss(p=3),
        "MultiMarginLoss weight 2-d": lambda: tnn.MultiMarginLoss(weight=torch.ones(3, 1))(
            x, torch.tensor([0, 1])),
        "TripletMarginLoss margin": lambda: tnn.TripletMarginLoss(margin=-1),
        "MarginRankingLoss reduction": lambda: tnn.MarginRankingLoss(reduction="x")(x, x, x),
        "GaussianNLLLoss reduction": lambda: tnn.GaussianNLLLoss(reduction="x")(
            x, x, torch.ones(2, 3)),
    }


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c[0])
def test_pytorch_refuses_the_same(case):
    """Each error case is one PyTorch refuses too (with RuntimeError for most, where we
    raise ValueError, TypeError or IndexError, as the rest of minigrad; PyTorch's modules
    refuse a bad reduction on first use, ours when built)."""
    call = _torch_calls()[case[0]]
    with pytest.raises((RuntimeError, ValueError, TypeError, IndexError)):
        call()


# ---- modules: reprs, state dicts, forward = the function, against torch.nn ------------------
_W = lambda: mg.tensor(_W3)  # noqa: E731
MODULES = [   # (minigrad module, its repr, the same module spelled for torch.nn)
    (lambda: nn.CELU(), "CELU(alpha=1.0)", "CELU()"),
    (lambda: nn.CELU(0.5, True), "CELU(alpha=0.5, inplace=True)", "CELU(0.5, True)"),
    (lambda: nn.Hardswish(True), "Hardswish()", "Hardswish(True)"),
    (lambda: nn.Hardsigmoid(), "Hardsigmoid()", "Hardsigmoid()"),
    (lambda: nn.Hardshrink(), "Hardshrink(0.5)", "Hardshrink()"),
    (lambda: nn.Softshrink(0.3), "Softshrink(0.3)", "Softshrink(0.3)"),
    (lambda: nn.Tanhshrink(), "Tanhshrink()", "Tanhshrink()"),
    (lambda: nn.Threshold(0.1, 20), "Threshold(threshold=0.1, value=20)",
     "Threshold(0.1, 20)"),
    (lambda: nn.Threshold(0.1, 20, True), "Threshold(threshold=0.1, value=20, inplace=True)",
     "Threshold(0.1, 20, True)"),
    (lambda: nn.Softmin(1), "Softmin(dim=1)", "Softmin(1)"),
    (lambda: nn.RReLU(), "RReLU(lower=0.125, upper=0.3333333333333333)", "RReLU()"),
    (lambda: nn.RReLU(0.1, 0.3, True), "RReLU(lower=0.1, upper=0.3, inplace=True)",
     "RReLU(0.1, 0.3, True)"),
    (lambda: nn.MarginRankingLoss(0.5), "MarginRankingLoss()", "MarginRankingLoss(0.5)"),
    (lambda: nn.HingeEmbeddingLoss(), "HingeEmbeddingLoss()", "HingeEmbeddingLoss()"),
    (lambda: nn.CosineEmbeddingLoss(0.2), "CosineEmbeddingLoss()", "CosineEmbeddingLoss(0.2)"),
    (lambda: nn.SoftMarginLoss(), "SoftMarginLoss()", "SoftMarginLoss()"),
    (lambda: nn.MultiLabelSoftMarginLoss(_W()), "MultiLabelSoftMarginLoss()",
     "MultiLabelSoftMarginLoss(torch.tensor(_W3))"),
    (lambda: nn.MultiMarginLoss(), "MultiMarginLoss()", "MultiMarginLoss()"),
    (lambda: nn.MultiMarginLoss(2, 0.5, _W()), "MultiMarginLoss()",
     "MultiMarginLoss(2, 0.5, torch.tensor(_W3))"),
    (lambda: nn.TripletMarginLoss(swap=True), "TripletMarginLoss()",
     "TripletMarginLoss(swap=True)"),
    (lambda: nn.PoissonNLLLoss(), "PoissonNLLLoss()", "PoissonNLLLoss()"),
    (lambda: nn.GaussianNLLLoss(full=True), "GaussianNLLLoss()", "GaussianNLLLoss(full=True)"),
]


@pytest.mark.parametrize("case", MODULES, ids=lambda c: c[1] + c[2])
def test_repr_and_state_dict_as_pytorch(case):
    make, text, torch_spelling = case
    m = make()
    assert repr(m) == text
    torch = pytest.importorskip("torch")
    t = eval("torch.nn." + torch_spelling, {"torch": torch, "_W3": _W3})
    assert repr(m) == repr(t)
    assert list(m.state_dict()) == list(t.state_dict())
    for name, v in m.state_dict().items():
        np.testing.assert_array_equal(v.numpy(), t.state_dict()[name].numpy())
    assert not list(m.parameters())


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _module_pairs():
    """(name, minigrad module, torch module, inputs, the function it is) for each."""
    torch = pytest.importorskip("torch")
    tnn = torch.nn
    a, b, c = _x(3, 4), _x(3, 4, seed=1), _x(3, 4, seed=2)
    y3, cls = np.array([1.0, -1.0, 1.0]), np.array([0, 3, 1])
    w4 = np.array([0.5, 2.0, 1.0, 1.5])
    return [
        ("celu", nn.CELU(0.5), tnn.CELU(0.5), [a], lambda x: F.celu(x, 0.5)),
        ("hardswish", nn.Hardswish(), tnn.Hardswish(), [a * 3], F.hardswish),
        ("hardshrink", nn.Hardshrink(0.3), tnn.Hardshrink(0.3), [a],
         lambda x: F.hardshrink(x, 0.3)),
        # (λ exact in float32: PyTorch's vectorised kernel rounds it to float32)
        ("softshrink", nn.Softshrink(0.25), tnn.Softshrink(0.25), [a],
         lambda x: F.softshrink(x, 0.25)),
        ("tanhshrink", nn.Tanhshrink(), tnn.Tanhshrink(), [a], F.tanhshrink),
        ("threshold", nn.Threshold(0.2, -1.0), tnn.Threshold(0.2, -1.0), [a],
         lambda x: F.threshold(x, 0.2, -1.0)),
        ("softmin", nn.Softmin(0), tnn.Softmin(0), [a], lambda x: F.softmin(x, 0)),
        ("rrelu_eval", nn.RReLU(0.1, 0.2).eval(), tnn.RReLU(0.1, 0.2).eval(), [a],
         lambda x: F.rrelu(x, 0.1, 0.2)),
        ("margin_ranking", nn.MarginRankingLoss(0.3, reduction="sum"),
         tnn.MarginRankingLoss(0.3, reduction="sum"), [a[0], b[0], np.sign(c[0])],
         lambda x1, x2, y: F.margin_ranking_loss(x1, x2, y, 0.3, reduction="sum")),
        ("hinge", nn.HingeEmbeddingLoss(0.5), tnn.HingeEmbeddingLoss(0.5), [a, np.sign(b)],
         lambda x, y: F.hinge_embedding_loss(x, y, 0.5)),
        ("cosine_embedding", nn.CosineEmbeddingLoss(0.1, reduction="none"),
         tnn.CosineEmbeddingLoss(0.1, reduction="none"), [a, b, y3],
         lambda x1, x2, y: F.cosine_embedding_loss(x1, x2, y, 0.1, reduction="none")),
        ("soft_margin", nn.SoftMarginLoss(), tnn.SoftMarginLoss(), [a, np.sign(b)],
         F.soft_margin_loss),
        ("multilabel", nn.MultiLabelSoftMarginLoss(mg.tensor(w4)),
         tnn.MultiLabelSoftMarginLoss(torch.tensor(w4)), [a, (b > 0) * 1.0],
         lambda x, y: F.multilabel_soft_margin_loss(x, y, mg.tensor(w4, dtype=x.dtype))),
        ("multi_margin", nn.MultiMarginLoss(2, 0.5, mg.tensor(w4)),
         tnn.MultiMarginLoss(2, 0.5, torch.tensor(w4)), [a, cls],
         lambda x, t: F.multi_margin_loss(x, t, 2, 0.5, mg.tensor(w4, dtype=x.dtype))),
        ("triplet", nn.TripletMarginLoss(0.5, 1.0, swap=True),
         tnn.TripletMarginLoss(0.5, 1.0, swap=True), [a, b, c],
         lambda x, p, n: F.triplet_margin_loss(x, p, n, 0.5, 1.0, swap=True)),
        ("poisson", nn.PoissonNLLLoss(False, True), tnn.PoissonNLLLoss(False, True),
         [np.abs(a) + 0.1, np.abs(b) * 3], lambda x, t: F.poisson_nll_loss(x, t, False, True)),
        ("gaussian", nn.GaussianNLLLoss(full=True, eps=1e-3), tnn.GaussianNLLLoss(
            full=True, eps=1e-3), [a, b, np.abs(c[:, 0])],
         lambda x, t, v: F.gaussian_nll_loss(x, t, v, True, 1e-3)),
    ]


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_modules_match_torch_and_their_functions(dtype):
    for name, m, t, inputs, fn in _module_pairs():
        # PyTorch refuses a target of soft_margin_loss that requires grad
        call = (lambda mod, x, y: mod(x, y.detach())) if name == "soft_margin" else None
        compare_with_torch(m, t, inputs, dtype, call=call)
        xs = [mg.tensor(a.astype(dtype) if a.dtype.kind == "f" else a) for a in inputs]
        np.testing.assert_array_equal(m(*xs).numpy(), fn(*xs).numpy(), err_msg=name)


MODULE_GRADCHECKS = [
    ("hardswish", nn.Hardswish, lambda: [mg.randn(2, 3) * 3]),
    ("triplet", lambda: nn.TripletMarginLoss(swap=True),
     lambda: [mg.randn(2, 3), mg.randn(2, 3), mg.randn(2, 3)]),
    ("gaussian", lambda: nn.GaussianNLLLoss(full=True),
     lambda: [mg.randn(2, 3), mg.randn(2, 3), mg.rand(2, 1) + 0.5]),
]


@pytest.mark.parametrize("case", MODULE_GRADCHECKS, ids=lambda c: c[0])
def test_module_gradcheck(case):
    mg.manual_seed(0)
    _, make, inputs = case
    gradcheck_module(make(), *inputs())


def test_weight_buffers_move_with_the_module():
    m = nn.MultiMarginLoss(weight=mg.tensor(_W3)).double()
    assert m.weight.dtype == mg.float64 and [n for n, _ in m.named_buffers()] == ["weight"]
    x = mg.randn(2, 3, dtype="float64")
    np.testing.assert_array_equal(m(x, mg.tensor([0, 2])).numpy(), F.multi_margin_loss(
        x, mg.tensor([0, 2]), weight=mg.tensor(_W3, dtype="float64")).numpy())


# ---- numerics beyond PyTorch's, and the clamped variance ---------------------------------------
def test_soft_margin_loss_does_not_overflow():
    """PyTorch's log1p(exp(-y·x)) is inf at -y·x = 100 in float32 (its gradient NaN); this
    one is -y·x, gradient -y."""
    x = mg.tensor([100.0, -100.0, 0.0], requires_grad=True)
    loss = F.soft_margin_loss(x, mg.tensor([-1.0, 1.0, 1.0]), reduction="sum")
    loss.backward()
    np.testing.assert_allclose(loss.item(), 200 + np.log(2), rtol=1e-6)
    np.testing.assert_allclose(x.grad.numpy(), [1.0, -1.0, -0.5])


def test_gaussian_nll_clamped_variance_still_gets_its_gradient_as_pytorch():
    """var below eps counts as eps, but its gradient passes as if unclamped (PyTorch
    clamps without recording)."""
    torch = pytest.importorskip("torch")
    a, b, v = _x(2, 3), _x(2, 3, seed=1), np.array([[0.0, 1e-9, 0.5], [1e-3, 2.0, 0.0]])
    mine = [mg.tensor(z, dtype="float64", requires_grad=True) for z in (a, b, v)]
    theirs = [torch.tensor(z, requires_grad=True) for z in (a, b, v)]
    for r in _R:
        for xs, f in ((mine, F), (theirs, _tf())):
            for z in xs:
                z.grad = None
            loss = f.gaussian_nll_loss(*xs, eps=1e-2, reduction=r)
            loss.sum().backward()
        for m, t in zip(mine, theirs):
            np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-12)
        assert mine[2].grad.numpy()[0, 0] != 0


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_losses_are_warning_free_at_zero_targets_and_large_inputs(dtype):
    """No log(0) (poisson's Stirling term at target 0, gaussian's clamped var 0) and no
    overflow warning; the values finite."""
    x = mg.tensor([[-50.0, 0.0, 50.0]], dtype=dtype, requires_grad=True)
    t = mg.tensor([[0.0, 1.0, 3.0]], dtype=dtype)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        losses = [F.poisson_nll_loss(x * 0.1, t, full=True),
                  F.poisson_nll_loss(x.abs(), t, log_input=False, full=True),
                  F.gaussian_nll_loss(x, t, mg.zeros(1, 3, dtype=dtype)),
                  F.soft_margin_loss(x, -t.sign() - 1),
                  F.multilabel_soft_margin_loss(x * 10, t.clip(0, 1)),
                  F.cosine_embedding_loss(x * 0, x, mg.tensor([1.0], dtype=dtype))]
        sum(losses).backward()
    assert all(np.isfinite(v.item()) for v in losses)
    assert np.isfinite(x.grad.numpy()).all()


# ---- the spy device: every new function stays on it ------------------------------------------
def _spy_calls(x):
    """Everything new (but the random draws, whose generators differ by device) on x."""
    c = lambda a: mg.tensor(a, dtype=x.dtype, device=x.device)  # noqa: E731
    y, cls = c([[1.0, -1.0, 1.0], [-1.0, 1.0, 1.0]]), mg.tensor([0, 2], device=x.device)
    return [F.celu(x, 0.5), F.hardswish(x * 3), F.hardsigmoid(x * 3), F.hardshrink(x, 0.3),
            F.softshrink(x, 0.3), F.tanhshrink(x), F.threshold(x, 0.1, 2.0), F.softmin(x, 1),
            F.rrelu(x), F.margin_ranking_loss(x, x.flip(0), y, 0.2),
            F.hinge_embedding_loss(x, y), F.cosine_embedding_loss(x, x.flip(0), y[:, 0]),
            F.soft_margin_loss(x, y), F.multilabel_soft_margin_loss(x, (y + 1) / 2, c(_W3)),
            F.multi_margin_loss(x, cls, 2, 0.5, c(_W3)),
            F.triplet_margin_loss(x, x.flip(0), x * 2, swap=True),
            F.poisson_nll_loss(x, y.abs() * 2, full=True),
            F.gaussian_nll_loss(x, y, x[:, 0].abs())]


def test_stays_on_the_device(spy):
    import spy_backend
    a = np.random.default_rng(0).standard_normal((2, 3))
    runs = []
    for device in (spy, "cpu"):
        x = mg.tensor(a, dtype="float64", device=device, requires_grad=True)
        outs = _spy_calls(x)
        (g,) = mg.grad(sum(o.sum() for o in outs), [x])
        runs.append(outs + [g])
    for i, (s, c) in enumerate(zip(*runs)):
        assert isinstance(s._data, spy_backend.SpyArray) and s.device == "spy", i
        np.testing.assert_allclose(s.numpy(), c.numpy(), rtol=1e-12, atol=1e-12, err_msg=i)
    x = mg.randn(2, 3, device=spy, requires_grad=True)
    for out in (F.gumbel_softmax(x, hard=True), F.rrelu(x, training=True)):
        assert isinstance(out._data, spy_backend.SpyArray)
        out.sum().backward()
    assert isinstance(x.grad._data, spy_backend.SpyArray)
