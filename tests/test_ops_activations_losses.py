"""SiLU, leaky ReLU, softplus, ELU and the losses nll_loss, binary_cross_entropy(_with_logits)
and l1_loss: forward against NumPy formulas and hand values, gradcheck and gradgradcheck in
float64 (no torch), values, gradients and second order against PyTorch where installed,
PyTorch's errors, extreme inputs, the nn modules, and a run on the spy device (no NumPy on
device data)."""
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
import spy_backend
from minigrad.nn import (SiLU, LeakyReLU, Softplus, ELU, NLLLoss, BCEWithLogitsLoss,
                         BCELoss, L1Loss)
from op_helpers import (OpCase, unary, binary, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch, check_fast_backward_everywhere,
                        check_special_values_vs_torch, SPECIAL_VALUES, special_upstreams)
from nn_helpers import compare_with_torch, gradcheck_module


def _tf():
    """torch.nn.functional, imported only by torch-side lambdas (skipped without torch)."""
    return __import__("torch").nn.functional


def _torch():
    return __import__("torch")


def _const(a, like):
    """A constant of `like`'s dtype and device: minigrad or torch, whichever `like` is."""
    if isinstance(like, mg.Tensor):
        return mg.tensor(a, dtype=like.dtype, device=like.device)
    return _torch().tensor(a, dtype=like.dtype)


def _np_softplus(a, beta=1.0, threshold=20.0):
    z = a * beta
    return np.where(z > threshold, a, np.logaddexp(0, z) / beta)


def _np_elu(a, alpha=1.0):
    return np.where(a > 0, a, alpha * np.expm1(np.minimum(a, 0)))


# ---- activations: the op-suite cases -------------------------------------------------------
ACTIVATIONS = (
    unary("silu", F.silu, torch_fn=lambda x: _tf().silu(x), np_fn=lambda a: a / (1 + np.exp(-a)))
    + unary("leaky_relu", F.leaky_relu, torch_fn=lambda x: _tf().leaky_relu(x),
            np_fn=lambda a: np.where(a > 0, a, 0.01 * a), domain="nonzero")
    + unary("leaky_relu_0.2", lambda x: F.leaky_relu(x, negative_slope=0.2),
            torch_fn=lambda x: _tf().leaky_relu(x, negative_slope=0.2),
            np_fn=lambda a: np.where(a > 0, a, 0.2 * a), domain="nonzero")
    + unary("leaky_relu_-0.3", lambda x: F.leaky_relu(x, negative_slope=-0.3),
            torch_fn=lambda x: _tf().leaky_relu(x, negative_slope=-0.3),
            np_fn=lambda a: np.where(a > 0, a, -0.3 * a), domain="nonzero")
    + unary("softplus", F.softplus, torch_fn=lambda x: _tf().softplus(x), np_fn=_np_softplus)
    # beta and a low threshold: inputs on both sides of it
    + unary("softplus_beta2_thr1.5", lambda x: F.softplus(x, beta=2, threshold=1.5),
            torch_fn=lambda x: _tf().softplus(x, beta=2, threshold=1.5),
            np_fn=lambda a: _np_softplus(a, 2, 1.5))
    + unary("elu", F.elu, torch_fn=lambda x: _tf().elu(x), np_fn=_np_elu, domain="nonzero")
    + unary("elu_0.5", lambda x: F.elu(x, alpha=0.5), torch_fn=lambda x: _tf().elu(x, 0.5),
            np_fn=lambda a: _np_elu(a, 0.5), domain="nonzero")
)

# ---- losses: fixed targets and weights, the inputs differentiable --------------------------
TGT = np.array([1, 0, 4, 2])                       # N = 4 rows, C = 5 classes
TGT_IGN = np.array([1, -100, 4, 2])
TGT_IGN3 = np.array([1, 3, 4, 3])                  # ignore_index=3
CLASS_W = np.array([0.5, 2.0, 1.0, 0.25, 3.0])
Y = np.array([[0.0, 1.0, 0.3], [1.0, 0.8, 0.0]])   # BCE targets, (2, 3)
PW = np.array([2.0, 0.5, 3.0])                     # one per class (last dim)
ELEM_W = np.array([[1.5], [0.5]])                  # broadcasts over (2, 3)


def _np_nll(x, t, w=None, ignore_index=-100, reduction="mean"):
    w = np.ones(x.shape[1]) if w is None else w
    valid = t != ignore_index
    ts = np.where(valid, t, 0)
    wi = w[ts] * valid
    losses = np.where(valid, -x[np.arange(len(t)), ts] * wi, 0.0)
    return {"none": losses, "sum": losses.sum(), "mean": losses.sum() / wi.sum()}[reduction]


def _nll_case(name, target, reduction="mean", weight=None, ignore_index=-100):
    def fn(x):
        w = None if weight is None else _const(weight, x)
        return F.nll_loss(x, target, weight=w, ignore_index=ignore_index, reduction=reduction)

    def torch_fn(x):
        w = None if weight is None else _const(weight, x)
        return _tf().nll_loss(x, _torch().tensor(target), weight=w, ignore_index=ignore_index,
                              reduction=reduction)
    return OpCase(name, fn, ((4, 5),), torch_fn=torch_fn,
                  np_fn=lambda a: _np_nll(a, target, weight, ignore_index, reduction))


def _np_bce_logits(x, y, pw=None, w=None, reduction="mean"):
    pw = 1.0 if pw is None else pw
    loss = (1 - y) * x + (1 + (pw - 1) * y) * (np.log1p(np.exp(-np.abs(x))) + np.maximum(-x, 0))
    loss = loss if w is None else loss * w
    return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]


def _bce_logits_case(name, reduction="mean", pos_weight=None, weight=None, grad_target=False):
    def call(f, x, y):
        return f(x, y, weight=None if weight is None else _const(weight, x),
                 pos_weight=None if pos_weight is None else _const(pos_weight, x),
                 reduction=reduction)
    if grad_target:                                 # the target differentiable too
        return OpCase(name, lambda x, y: call(F.binary_cross_entropy_with_logits, x, y),
                      ((2, 3), (2, 3)),
                      torch_fn=lambda x, y: call(_tf().binary_cross_entropy_with_logits, x, y),
                      np_fn=lambda x, y: _np_bce_logits(x, y, pos_weight, weight, reduction),
                      domain=("real", "unit"))
    return OpCase(name, lambda x: call(F.binary_cross_entropy_with_logits, x, _const(Y, x)),
                  ((2, 3),),
                  torch_fn=lambda x: call(_tf().binary_cross_entropy_with_logits, x,
                                          _const(Y, x)),
                  np_fn=lambda x: _np_bce_logits(x, Y, pos_weight, weight, reduction))


def _np_bce(p, y, w=None, reduction="mean"):
    loss = -(y * np.maximum(np.log(p), -100) + (1 - y) * np.maximum(np.log(1 - p), -100))
    loss = loss if w is None else loss * w
    return {"none": loss, "sum": loss.sum(), "mean": loss.mean()}[reduction]


def _prob(x):
    return x * 0.5 + 0.5                           # the "unit" domain (-0.9, 0.9) -> (0.05, 0.95)


def _bce_case(name, reduction="mean", weight=None, grad_target=False):
    def call(f, x, y):
        return f(_prob(x), y, weight=None if weight is None else _const(weight, x),
                 reduction=reduction)
    if grad_target:
        return OpCase(name, lambda x, y: call(F.binary_cross_entropy, x, _prob(y)),
                      ((2, 3), (2, 3)),
                      torch_fn=lambda x, y: call(_tf().binary_cross_entropy, x, _prob(y)),
                      np_fn=lambda x, y: _np_bce(_prob(x), _prob(y), weight, reduction),
                      domain="unit")
    return OpCase(name, lambda x: call(F.binary_cross_entropy, x, _const(Y, x)), ((2, 3),),
                  torch_fn=lambda x: call(_tf().binary_cross_entropy, x, _const(Y, x)),
                  np_fn=lambda x: _np_bce(_prob(x), Y, weight, reduction), domain="unit")


_L1_SHAPES = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 1, 3), (2, 1, 3))]
LOSSES = (
    [_nll_case("nll_" + r, TGT, r) for r in ("mean", "sum", "none")]
    + [_nll_case("nll_ignored_" + r, TGT_IGN, r) for r in ("mean", "sum", "none")]
    + [_nll_case("nll_weight_" + r, TGT_IGN, r, weight=CLASS_W) for r in ("mean", "sum", "none")]
    + [_nll_case("nll_weight_ignore3", TGT_IGN3, weight=CLASS_W, ignore_index=3)]
    + [_bce_logits_case("bce_logits_" + r, r) for r in ("mean", "sum", "none")]
    + [_bce_logits_case("bce_logits_pos_weight_" + r, r, pos_weight=PW)
       for r in ("mean", "sum", "none")]
    + [_bce_logits_case("bce_logits_pos_weight_scalar", pos_weight=2.5),
       _bce_logits_case("bce_logits_weight", weight=ELEM_W),
       _bce_logits_case("bce_logits_all", "sum", pos_weight=PW, weight=ELEM_W),
       _bce_logits_case("bce_logits_grad_target", pos_weight=PW, weight=ELEM_W,
                        grad_target=True)]
    + [_bce_case("bce_" + r, r) for r in ("mean", "sum", "none")]
    + [_bce_case("bce_weight", "sum", weight=ELEM_W),
       _bce_case("bce_grad_target", weight=ELEM_W, grad_target=True)]
    + [c for r in ("mean", "sum", "none") for c in binary(
        "l1_" + r, lambda a, b, r=r: F.l1_loss(a, b, reduction=r), shapes=_L1_SHAPES,
        torch_fn=lambda a, b, r=r: _tf().l1_loss(a, b, reduction=r),
        np_fn=lambda a, b, r=r: {"none": np.abs(a - b), "sum": np.abs(a - b).sum(),
                                 "mean": np.abs(a - b).mean()}[r])]
)
ALL = ACTIVATIONS + LOSSES


@pytest.mark.parametrize("case", ALL, ids=str)
def test_gradcheck_and_numpy_forward(case, device):
    check_gradcheck(case, device)


@pytest.mark.parametrize("case", ALL, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", ALL, ids=str)
def test_double_backward_vs_torch(case, device):
    check_double_backward_vs_torch(case, device)


# ---- activations: extreme inputs, kinks, dtypes ----------------------------------------
EXTREME = np.array([-1e30, -1000.0, -200.0, -50.0, -1e-10, 0.0, 1e-10, 1.0, 19.0, 20.0, 21.0,
                    100.0, 1000.0, 1e30])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["silu", "leaky_relu", "softplus", "elu"])
def test_activation_large_inputs_are_finite_and_warning_free(name, dtype, device):
    x = mg.tensor(EXTREME, dtype=dtype, device=device, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # an overflow or 0·inf would warn
        y = getattr(F, name)(x)
        (g,) = mg.grad(y.sum(), [x], create_graph=True)
        # leaky_relu's gradient is a constant (no graph): its second derivative is 0
        gg = mg.grad(g.sum(), [x])[0] if g.requires_grad else mg.zeros_like(x)
    assert y.dtype == x.dtype and g.dtype == x.dtype
    for what, v in (("value", y), ("grad", g), ("grad of grad", gg)):
        assert np.isfinite(v.numpy()).all(), f"{name} {what}: {v.numpy()}"
    # far from 0 each is x (slope 1) on the right; on the left 0, -0.01|x| or -1
    np.testing.assert_array_equal(y.numpy()[-3:], x.numpy()[-3:])
    np.testing.assert_array_equal(g.numpy()[-3:], 1)


def test_softplus_threshold_and_tails():
    x = mg.tensor([-745.0, -200.0, -50.0, -1e-10, 10.0, 20.0, 20.5, 1e30], dtype="float64")
    y = F.softplus(x).numpy()
    # log(1 + e^x) = e^x to full precision in the left tail (no rounding to 0)
    np.testing.assert_allclose(y[:3], np.exp([-745.0, -200.0, -50.0]), rtol=1e-12)
    np.testing.assert_allclose(y[3], np.log(2) - 5e-11, rtol=1e-15)
    np.testing.assert_allclose(y[4], np.log1p(np.exp(10.0)), rtol=1e-15)
    assert y[5] == np.log1p(np.exp(20.0))           # at the threshold: still the formula
    assert y[6] == 20.5 and y[7] == 1e30            # above it: x itself, as PyTorch
    # beta scales the threshold: beta*x = 22 > 20 gives x; beta*x = 18 the formula
    z = F.softplus(mg.tensor([11.0, 9.0], dtype="float64"), beta=2.0).numpy()
    assert z[0] == 11.0 and z[1] == np.log1p(np.exp(18.0)) / 2


def test_elu_near_zero_keeps_precision():
    # alpha·(e^x - 1) as expm1: exp(x) - 1 would lose about 7 digits at x = -1e-10
    x = np.array([-1e-10, -1e-5, -0.3, -30.0])
    np.testing.assert_allclose(F.elu(mg.tensor(x, dtype="float64"), alpha=0.7).numpy(),
                               0.7 * np.expm1(x), rtol=1e-14)


@pytest.mark.parametrize("fn, grad, gradgrad", [
    (lambda x: F.leaky_relu(x, 0.2), 0.2, 0.0),      # PyTorch: x > 0 ? 1 : slope
    (lambda x: F.elu(x, alpha=0.5), 0.5, None),      # x > 0 ? 1 : alpha·e^x
    (F.softplus, 0.5, 0.25),                          # smooth: σ(0), σ'(0)
    (F.silu, 0.5, 0.5),
])
def test_gradient_at_zero_is_pytorchs(fn, grad, gradgrad, device):
    x = mg.tensor([0.0], dtype="float64", device=device, requires_grad=True)
    (g,) = mg.grad(fn(x).sum(), [x], create_graph=True)
    assert g.item() == pytest.approx(grad, abs=1e-15)
    if gradgrad is not None and g.requires_grad:
        (gg,) = mg.grad(g.sum(), [x])
        assert gg.item() == pytest.approx(gradgrad, abs=1e-15)


# ---- the fused ops: fast backward against the reference, both against PyTorch ---------------
FUSED = {   # name: (minigrad, torch); SPECIAL_VALUES holds each one's kinks and threshold
    "leaky_relu": (F.leaky_relu, lambda x: _tf().leaky_relu(x)),
    "leaky_relu_0": (lambda x: F.leaky_relu(x, 0.0), lambda x: _tf().leaky_relu(x, 0.0)),
    "leaky_relu_-0.3": (lambda x: F.leaky_relu(x, -0.3), lambda x: _tf().leaky_relu(x, -0.3)),
    "leaky_relu_2": (lambda x: F.leaky_relu(x, 2.0), lambda x: _tf().leaky_relu(x, 2.0)),
    "softplus": (F.softplus, lambda x: _tf().softplus(x)),                 # threshold at 20
    "softplus_beta2_thr3": (lambda x: F.softplus(x, 2.0, 3.0),             # and at 1.5
                            lambda x: _tf().softplus(x, 2.0, 3.0)),
    "softplus_beta-0.5": (lambda x: F.softplus(x, -0.5), lambda x: _tf().softplus(x, -0.5)),
    "elu": (F.elu, lambda x: _tf().elu(x)),
    "elu_0.7": (lambda x: F.elu(x, 0.7), lambda x: _tf().elu(x, 0.7)),
    "elu_-0.5": (lambda x: F.elu(x, -0.5), lambda x: _tf().elu(x, -0.5)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(FUSED))
def test_fast_backward_matches_reference(name, dtype, device):
    check_fast_backward_everywhere(FUSED[name][0], dtype, device, name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(FUSED))
def test_special_values_as_pytorch(name, dtype, device):
    """Values and gradients at the kinks, at ±inf and at NaN (PyTorch's NaN gradient is
    leaky_relu's slope there, and NaN for the others)."""
    x = SPECIAL_VALUES.astype(dtype)
    for upstream in special_upstreams(x.size):
        check_special_values_vs_torch(*FUSED[name], x, upstream, device, name)


@pytest.mark.parametrize("name", ["silu", "leaky_relu", "softplus", "elu"])
def test_activation_refuses_integers(name):
    with pytest.raises(TypeError, match=f"{name}.*int64"):
        getattr(F, name)(mg.tensor([1, -2]))


# ---- losses: hand values, ignore_index, weights, extremes ---------------------------------
def test_nll_loss_hand_values(device):
    logp = np.log(np.array([[0.5, 0.25, 0.25], [0.1, 0.6, 0.3], [0.2, 0.2, 0.6]]))
    x = mg.tensor(logp, dtype="float64", device=device)
    t = mg.tensor([0, 2, -100], device=device)
    w = mg.tensor([2.0, 1.0, 4.0], dtype="float64", device=device)
    want = [-logp[0, 0], -logp[1, 2], 0.0]
    np.testing.assert_allclose(F.nll_loss(x, t, reduction="none").numpy(), want)
    np.testing.assert_allclose(F.nll_loss(x, t, reduction="sum").item(), sum(want))
    np.testing.assert_allclose(F.nll_loss(x, t).item(), sum(want) / 2)    # 2 rows count
    # weighted: the mean divides by the summed weights of the rows that count (2 + 4)
    np.testing.assert_allclose(F.nll_loss(x, t, weight=w).item(),
                               (2 * want[0] + 4 * want[1]) / 6)
    # an ignore_index inside the class range ignores that class
    np.testing.assert_allclose(F.nll_loss(x, [0, 2, 1], ignore_index=2).item(),
                               (want[0] - logp[2, 1]) / 2)
    assert F.nll_loss(x, t, weight=w).dtype == mg.float64


def test_nll_loss_everything_ignored_is_nan_with_zero_gradient(device):
    x = mg.tensor(np.log(np.full((3, 4), 0.25)), device=device, requires_grad=True)
    t = mg.tensor([-100, -100, -100], device=device)
    loss = F.nll_loss(x, t)
    assert np.isnan(loss.item())
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 0)   # as PyTorch: padding only, no NaN
    assert F.nll_loss(x, t, reduction="sum").item() == 0
    np.testing.assert_array_equal(F.nll_loss(x, t, reduction="none").numpy(), 0)


def test_nll_loss_ignored_row_with_minus_inf_is_zero():
    x = mg.tensor([[-1.0, -np.inf], [-2.0, -0.5]], requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = F.nll_loss(x, [1, 1], ignore_index=1, reduction="none")
        np.testing.assert_array_equal(loss.numpy(), [0, 0])
        loss = F.nll_loss(x, [1, 0])
        loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), [[0, -0.5], [-0.5, 0]])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_bce_with_logits_extreme_logits(dtype, device):
    x = mg.tensor([100.0, -100.0, 100.0, -100.0, -50.0, 0.0], dtype=dtype, device=device,
                  requires_grad=True)
    y = mg.tensor([1.0, 0.0, 0.0, 1.0, 0.0, 1.0], dtype=dtype, device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = F.binary_cross_entropy_with_logits(x, y, reduction="none")
        (g,) = mg.grad(loss.sum(), [x], create_graph=True)
        (gg,) = mg.grad(g.sum(), [x])
    assert str(loss.dtype) == str(g.dtype) == dtype
    # right answers to full relative precision: log(1 + e^-100) = e^-100 (a denormal in
    # float32) twice, 100, 100, log(1 + e^-50), log 2
    np.testing.assert_allclose(loss.numpy(), [np.exp(-100), np.exp(-100), 100, 100, np.exp(-50),
                                              np.log(2)], rtol=1e-6 if dtype == "float32"
                               else 1e-12, atol=1e-44)
    np.testing.assert_allclose(g.numpy(), [0, 0, 1, -1, np.exp(-50), -0.5], atol=1e-7)
    np.testing.assert_allclose(gg.numpy(), [0, 0, 0, 0, np.exp(-50), 0.25], atol=1e-7)
    # pos_weight multiplies the positive term: y = 1 at x = -100 costs 3·100
    lp = F.binary_cross_entropy_with_logits(x, y, pos_weight=mg.tensor(3.0, dtype=dtype,
                                                                        device=device),
                                            reduction="none")
    np.testing.assert_allclose(lp.numpy()[[2, 3, 5]], [100, 300, 3 * np.log(2)], rtol=1e-6)


def test_bce_with_logits_pos_weight_hand_value():
    x, y, pw = 0.7, 0.4, 3.0
    want = -(pw * y * np.log(1 / (1 + np.exp(-x))) + (1 - y) * np.log(1 - 1 / (1 + np.exp(-x))))
    got = F.binary_cross_entropy_with_logits(mg.tensor([x], dtype="float64"),
                                             mg.tensor([y], dtype="float64"),
                                             pos_weight=mg.tensor([pw], dtype="float64"))
    np.testing.assert_allclose(got.item(), want, rtol=1e-14)


def test_bce_clamps_the_logs_at_minus_100(device):
    p = mg.tensor([0.0, 1.0, 0.0, 1.0, 0.5], dtype="float64", device=device,
                  requires_grad=True)
    y = mg.tensor([0.0, 1.0, 1.0, 0.0, 1.0], dtype="float64", device=device)
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # no log(0) warning, no 0·inf
        loss = F.binary_cross_entropy(p, y, reduction="none")
        (g,) = mg.grad(loss.sum(), [p])
    np.testing.assert_allclose(loss.numpy(), [0, 0, 100, 100, np.log(2)])
    # PyTorch's gradient (p - y)/max(p(1 - p), 1e-12): a confidently wrong p = 0 (y = 1)
    # gets a large push, not the clamped loss's zero slope
    np.testing.assert_allclose(g.numpy(), [0, 0, -1e12, 1e12, -2.0])


def test_weights_keep_the_inputs_dtype(device):
    """A float64 weight or pos_weight does not upcast a float32 loss (as PyTorch)."""
    x = mg.randn(2, 3, device=device)
    y = mg.tensor(Y, dtype="float32", device=device)
    w64 = mg.tensor(PW, dtype="float64", device=device)
    assert F.binary_cross_entropy_with_logits(x, y, weight=w64, pos_weight=w64).dtype == \
        mg.float32
    assert F.binary_cross_entropy(x.sigmoid(), y, weight=w64).dtype == mg.float32
    for fn in (F.nll_loss, F.l1_loss, F.binary_cross_entropy_with_logits):
        args = (mg.randn(4, 5, dtype="float64", device=device), TGT) if fn is F.nll_loss \
            else (x.double(), y.double())
        assert fn(*args).dtype == mg.float64


@pytest.mark.parametrize("loss", ["l1_loss", "mse_loss", "MSELoss"])
def test_l1_and_mse_loss_broadcast_warn_as_pytorch(loss):
    a, b = mg.randn(3, 1), mg.randn(3)
    fn = mg.nn.MSELoss(reduction="none") if loss == "MSELoss" else \
        lambda a, b: getattr(F, loss)(a, b, reduction="none")
    with pytest.warns(UserWarning, match="different to the input size"):
        out = fn(a, b)
    assert out.shape == (3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")                   # the same shapes: no warning,
        fn(a, a)                                         # nor for a list of them
        if loss != "MSELoss":
            fn(mg.randn(3), [1.0, 2.0, 3.0])


def test_l1_loss_gradient_is_zero_where_equal():
    x = mg.tensor([1.0, 2.0, 3.0], requires_grad=True)
    F.l1_loss(x, mg.tensor([1.0, 0.0, 5.0]), reduction="sum").backward()
    np.testing.assert_array_equal(x.grad.numpy(), [0, 1, -1])


# ---- errors: PyTorch's cases, with messages that name the op and what was wrong -----------
_X45, _P23 = (lambda: mg.randn(4, 5)), (lambda: mg.rand(2, 3))
ERRORS = [
    ("nll float target", lambda: F.nll_loss(_X45(), mg.tensor([0.0, 1, 2, 3])), TypeError,
     ["nll_loss", "float32", "integer"]),
    ("nll bool target", lambda: F.nll_loss(_X45(), np.array([True, False, True, True])),
     TypeError, ["nll_loss", "bool"]),
    ("nll int input", lambda: F.nll_loss(mg.tensor([[1, 2]]), [0]), TypeError,
     ["nll_loss", "int64"]),
    ("nll batch mismatch", lambda: F.nll_loss(_X45(), [0, 1]), ValueError,
     ["nll_loss", "(4, 5)", "(2,)"]),
    ("nll 2-d target", lambda: F.nll_loss(_X45(), TGT[:, None]), ValueError,
     ["nll_loss", "(4, 1)"]),
    ("nll 3-d input", lambda: F.nll_loss(mg.randn(2, 5, 3), [0, 1]), ValueError,
     ["nll_loss", "(2, 5, 3)", "(N, d1, ...)"]),
    ("nll target too big", lambda: F.nll_loss(_X45(), [0, 5, 1, 1]), IndexError,
     ["nll_loss", "5", "0..4"]),
    ("nll negative target", lambda: F.nll_loss(_X45(), [0, -1, 1, 1]), IndexError,
     ["nll_loss", "-1", "ignore_index=-100"]),
    ("nll weight shape", lambda: F.nll_loss(_X45(), TGT, weight=mg.ones(4)), TypeError,
     ["nll_loss", "(5,)", "(4,)"]),
    ("nll weight dtype", lambda: F.nll_loss(_X45(), TGT, weight=mg.ones(5, dtype="float64")),
     TypeError, ["nll_loss", "float64", "float32"]),
    ("nll weight grad", lambda: F.nll_loss(_X45(), TGT, weight=mg.ones(5, requires_grad=True)),
     RuntimeError, ["nll_loss", "weight", "detach"]),
    ("nll reduction", lambda: F.nll_loss(_X45(), TGT, reduction="avg"), ValueError,
     ["nll_loss", "'avg'", "'mean'"]),
    ("bce_logits target shape", lambda: F.binary_cross_entropy_with_logits(
        mg.randn(2, 3), mg.rand(3)), ValueError,
     ["binary_cross_entropy_with_logits", "(3,)", "(2, 3)"]),
    ("bce_logits int target", lambda: F.binary_cross_entropy_with_logits(
        mg.randn(2), mg.tensor([0, 1])), TypeError, ["binary_cross_entropy_with_logits", "int64"]),
    ("bce_logits bool target", lambda: F.binary_cross_entropy_with_logits(
        mg.randn(2), np.array([True, False])), TypeError, ["with_logits", "bool"]),
    ("bce_logits pos_weight", lambda: F.binary_cross_entropy_with_logits(
        _P23(), _P23(), pos_weight=mg.ones(2)), ValueError, ["pos_weight", "(2,)", "(2, 3)"]),
    ("bce_logits weight grows", lambda: F.binary_cross_entropy_with_logits(
        _P23(), _P23(), weight=mg.ones(4, 2, 3), reduction="none"), ValueError,
     ["weight", "(4, 2, 3)", "(2, 3)"]),
    ("bce_logits reduction", lambda: F.binary_cross_entropy_with_logits(
        _P23(), _P23(), reduction=None), ValueError, ["with_logits", "None"]),
    ("bce target shape", lambda: F.binary_cross_entropy(_P23(), mg.rand(3)), ValueError,
     ["binary_cross_entropy", "(3,)", "(2, 3)"]),
    ("bce target dtype", lambda: F.binary_cross_entropy(_P23(), _P23().double()), TypeError,
     ["binary_cross_entropy", "float64", "float32"]),
    ("bce int target", lambda: F.binary_cross_entropy(mg.rand(2), mg.tensor([0, 1])),
     TypeError, ["binary_cross_entropy", "int64"]),
    ("bce input range", lambda: F.binary_cross_entropy(_P23() + 1, _P23()), ValueError,
     ["binary_cross_entropy", "input", "between 0 and 1"]),
    ("bce nan input", lambda: F.binary_cross_entropy(mg.tensor([0.5, np.nan]), mg.rand(2)),
     ValueError, ["input", "between 0 and 1"]),
    ("bce target range", lambda: F.binary_cross_entropy(_P23(), _P23() - 1), ValueError,
     ["binary_cross_entropy", "target", "between 0 and 1"]),
    ("bce weight", lambda: F.binary_cross_entropy(_P23(), _P23(), weight=mg.ones(2)),
     ValueError, ["weight", "(2,)", "(2, 3)"]),
    ("l1 reduction", lambda: F.l1_loss(_P23(), _P23(), reduction="mean "), ValueError,
     ["l1_loss", "'mean '"]),
    ("NLLLoss reduction", lambda: NLLLoss(reduction="x"), ValueError, ["NLLLoss", "'x'"]),
    ("BCELoss reduction", lambda: BCELoss(reduction="x"), ValueError, ["BCELoss"]),
    ("BCEWithLogitsLoss reduction", lambda: BCEWithLogitsLoss(reduction="x"), ValueError,
     ["BCEWithLogitsLoss"]),
    ("L1Loss reduction", lambda: L1Loss(reduction="x"), ValueError, ["L1Loss"]),
]


@pytest.mark.parametrize("case", ERRORS, ids=lambda c: c[0])
def test_errors_name_the_op_and_what_was_wrong(case):
    _, call, kind, words = case
    with pytest.raises(kind) as info:
        call()
    for w in words:
        assert w in str(info.value), f"{w!r} not in: {info.value}"


# not compared: reductions (PyTorch's modules check theirs on first use), a weight that
# requires grad (PyTorch refuses it at backward), and (N, C, d) input, which PyTorch takes
# and minigrad asks to reshape, as its cross_entropy does
_NOT_IN_TORCH = ("nll weight grad", "nll 3-d input")


@pytest.mark.parametrize("case", [c for c in ERRORS if not c[0].endswith("reduction")
                                  and c[0] not in _NOT_IN_TORCH], ids=lambda c: c[0])
def test_pytorch_refuses_the_same(case):
    """Each error case is one PyTorch refuses too (its exception classes differ: it raises
    RuntimeError for dtypes and values, we TypeError and ValueError, as the rest of
    minigrad)."""
    torch = pytest.importorskip("torch")
    name = case[0]
    x45, p23 = torch.randn(4, 5), torch.rand(2, 3)
    nll, bce, bcel = (torch.nn.functional.nll_loss, torch.nn.functional.binary_cross_entropy,
                      torch.nn.functional.binary_cross_entropy_with_logits)
    tgt = torch.tensor(TGT)
    calls = {
        "nll float target": lambda: nll(x45, tgt.float()),
        "nll bool target": lambda: nll(x45, tgt > 1),
        "nll int input": lambda: nll(torch.tensor([[1, 2]]), torch.tensor([0])),
        "nll batch mismatch": lambda: nll(x45, tgt[:2]),
        "nll 2-d target": lambda: nll(x45, tgt[:, None]),
        "nll target too big": lambda: nll(x45, torch.tensor([0, 5, 1, 1])),
        "nll negative target": lambda: nll(x45, torch.tensor([0, -1, 1, 1])),
        "nll weight shape": lambda: nll(x45, tgt, weight=torch.ones(4)),
        "nll weight dtype": lambda: nll(x45, tgt, weight=torch.ones(5, dtype=torch.float64)),
        "bce_logits target shape": lambda: bcel(p23, torch.rand(3)),
        "bce_logits int target": lambda: bcel(torch.randn(2), torch.tensor([0, 1])),
        "bce_logits bool target": lambda: bcel(torch.randn(2), torch.tensor([True, False])),
        "bce_logits pos_weight": lambda: bcel(p23, p23, pos_weight=torch.ones(2)),
        "bce_logits weight grows": lambda: bcel(p23, p23, weight=torch.ones(4, 2, 3),
                                                reduction="none"),
        "bce target shape": lambda: bce(p23, torch.rand(3)),
        "bce target dtype": lambda: bce(p23, p23.double()),
        "bce int target": lambda: bce(torch.rand(2), torch.tensor([0, 1])),
        "bce input range": lambda: bce(p23 + 1, p23),
        "bce nan input": lambda: bce(torch.tensor([0.5, float("nan")]), torch.rand(2)),
        "bce target range": lambda: bce(p23, p23 - 1),
        "bce weight": lambda: bce(p23, p23, weight=torch.ones(2)),
    }
    with pytest.raises((RuntimeError, ValueError, IndexError, NotImplementedError)):
        calls[name]()


# ---- the nn modules ----------------------------------------------------------------------
def test_module_reprs_match_pytorch():
    w = mg.ones(3)
    assert [repr(m) for m in (SiLU(), LeakyReLU(), LeakyReLU(0.2), Softplus(),
                              Softplus(beta=2, threshold=10), ELU(), ELU(alpha=0.5))] == [
        "SiLU()", "LeakyReLU(negative_slope=0.01)", "LeakyReLU(negative_slope=0.2)",
        "Softplus(beta=1.0, threshold=20.0)", "Softplus(beta=2, threshold=10)",
        "ELU(alpha=1.0)", "ELU(alpha=0.5)"]
    assert [repr(m) for m in (NLLLoss(weight=w), BCEWithLogitsLoss(pos_weight=w), BCELoss(),
                              L1Loss())] == ["NLLLoss()", "BCEWithLogitsLoss()", "BCELoss()",
                                             "L1Loss()"]


def test_modules_are_their_functions(device):
    x = mg.randn(4, 5, device=device)
    for module, fn in ((SiLU(), F.silu), (LeakyReLU(0.3), lambda v: F.leaky_relu(v, 0.3)),
                       (Softplus(2.0, 3.0), lambda v: F.softplus(v, 2.0, 3.0)),
                       (ELU(0.4), lambda v: F.elu(v, 0.4))):
        np.testing.assert_array_equal(module(x).numpy(), fn(x).numpy())
    logp, w = x.log_softmax(1), mg.tensor(CLASS_W, dtype="float32", device=device)
    np.testing.assert_array_equal(
        NLLLoss(weight=w, ignore_index=4, reduction="sum")(logp, TGT).numpy(),
        F.nll_loss(logp, TGT, weight=w, ignore_index=4, reduction="sum").numpy())
    p, y = mg.rand(2, 3, device=device), mg.tensor(Y, dtype="float32", device=device)
    pw, ew = mg.tensor(PW, dtype="float32", device=device), mg.tensor(ELEM_W, device=device)
    np.testing.assert_array_equal(
        BCEWithLogitsLoss(weight=ew, reduction="none", pos_weight=pw)(p, y).numpy(),
        F.binary_cross_entropy_with_logits(p, y, ew, reduction="none", pos_weight=pw).numpy())
    np.testing.assert_array_equal(BCELoss(weight=ew)(p, y).numpy(),
                                  F.binary_cross_entropy(p, y, ew).numpy())
    np.testing.assert_array_equal(L1Loss(reduction="sum")(p, y).numpy(),
                                  F.l1_loss(p, y, reduction="sum").numpy())


def test_loss_weights_are_buffers():
    """As PyTorch: saved in state_dict (only when given) and cast/moved with the module."""
    m = BCEWithLogitsLoss(pos_weight=mg.tensor(PW, dtype="float32"))
    assert list(m.state_dict()) == ["pos_weight"] and not list(m.parameters())
    assert list(NLLLoss(weight=mg.ones(5)).state_dict()) == ["weight"]
    assert list(NLLLoss().state_dict()) == []
    nll = NLLLoss(weight=mg.tensor(CLASS_W, dtype="float32")).double()
    assert nll.weight.dtype == mg.float64
    assert nll(mg.randn(4, 5, dtype="float64").log_softmax(1), TGT).dtype == mg.float64


MODULE_GRADCHECKS = [
    ("silu", SiLU, lambda: [mg.randn(2, 3)]),
    ("leaky_relu", lambda: LeakyReLU(0.1), lambda: [mg.tensor([[-1.3, 0.4, 2.0]])]),
    ("softplus", lambda: Softplus(2.0, 2.0), lambda: [mg.randn(2, 3)]),
    ("elu", ELU, lambda: [mg.tensor([[-1.3, 0.4, 2.0]])]),
    ("nll_loss", lambda: NLLLoss(weight=mg.tensor(CLASS_W), ignore_index=0),
     lambda: [mg.randn(4, 5), mg.tensor(TGT)]),
    ("bce_with_logits", lambda: BCEWithLogitsLoss(pos_weight=mg.tensor(PW)),
     lambda: [mg.randn(2, 3), mg.tensor(Y)]),
    ("bce", BCELoss, lambda: [mg.rand(2, 3) * 0.8 + 0.1, mg.tensor(Y) * 0.8 + 0.1]),
    ("l1", lambda: L1Loss(reduction="sum"), lambda: [mg.randn(2, 3), mg.randn(2, 3)]),
]


@pytest.mark.parametrize("case", MODULE_GRADCHECKS, ids=lambda c: c[0])
def test_module_gradcheck(case):
    mg.manual_seed(0)
    _, make, inputs = case
    gradcheck_module(make(), *inputs())


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_modules_match_torch(dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x45, x23 = rng.standard_normal((4, 5)), rng.standard_normal((2, 3))
    pairs = [
        (SiLU(), torch.nn.SiLU(), [x23]),
        (LeakyReLU(0.2), torch.nn.LeakyReLU(0.2), [x23]),
        (Softplus(2.0, 1.0), torch.nn.Softplus(2.0, 1.0), [x23]),
        (ELU(0.5), torch.nn.ELU(0.5), [x23]),
        (NLLLoss(weight=mg.tensor(CLASS_W), ignore_index=2),
         torch.nn.NLLLoss(weight=torch.tensor(CLASS_W), ignore_index=2), [x45, TGT]),
        (BCEWithLogitsLoss(weight=mg.tensor(ELEM_W), pos_weight=mg.tensor(PW)),
         torch.nn.BCEWithLogitsLoss(weight=torch.tensor(ELEM_W), pos_weight=torch.tensor(PW)),
         [x23, Y]),
        (BCELoss(reduction="sum"), torch.nn.BCELoss(reduction="sum"), [_prob(x23 / 3), Y]),
        (L1Loss(), torch.nn.L1Loss(), [x23, Y]),
    ]
    for m, t, inputs in pairs:
        compare_with_torch(m, t, inputs, dtype)


# ---- the spy device: no op of these reaches NumPy with device data ------------------------
@pytest.fixture(scope="module")
def spy():
    spy_backend.register()
    yield "spy"
    spy_backend.unregister()


SPY_CASES = [
    ("activations", lambda x: (F.silu(x), F.leaky_relu(x), F.softplus(x, 2.0, 1.0), F.elu(x)),
     (4, 5)),
    ("nll_loss", lambda x: (F.nll_loss(x, TGT_IGN, weight=_const(CLASS_W, x)),
                            F.nll_loss(x, mg.tensor(TGT, device=x.device), reduction="none"),
                            F.nll_loss(x, np.full(4, -100))), (4, 5)),
    ("bce_with_logits", lambda x: F.binary_cross_entropy_with_logits(
        x, _const(Y, x), weight=_const(ELEM_W, x), pos_weight=_const(PW, x)), (2, 3)),
    ("bce", lambda x: F.binary_cross_entropy(x.sigmoid(), _const(Y, x), reduction="sum"),
     (2, 3)),
    ("l1_loss", lambda x: F.l1_loss(x, _const(Y, x), reduction="none"), (2, 3)),
]


def _run(fn, a, device):
    x = mg.tensor(a, dtype="float64", device=device, requires_grad=True)
    outs = fn(x)
    outs = list(outs) if isinstance(outs, tuple) else [outs]
    loss = sum((o * mg.tensor(np.linspace(-1, 1, o.numel()).reshape(o.shape),
                              device=device)).sum() for o in outs if o.requires_grad)
    (g,) = mg.grad(loss, [x], create_graph=True)
    second = mg.grad((g * g).sum(), [x]) if g.requires_grad else []
    return outs + [g] + list(second)


@pytest.mark.parametrize("case", SPY_CASES, ids=lambda c: c[0])
def test_stays_on_the_device(case, spy):
    name, fn, shape = case
    a = np.random.default_rng(0).standard_normal(shape)
    for i, (s, c) in enumerate(zip(_run(fn, a, spy), _run(fn, a, "cpu"))):
        assert isinstance(s._data, spy_backend.SpyArray) and s.device == "spy", f"{name} {i}"
        np.testing.assert_allclose(s.numpy(), c.numpy(), rtol=1e-12, atol=1e-12,
                                   err_msg=f"{name} {i}: spy != cpu")


def test_no_device_sync_without_a_check(spy):
    """The activations, BCE with logits and L1 have nothing to validate on the device: their
    forward and backward never wait for it. nll_loss reads one flag (targets in range) and
    gather one more; binary_cross_entropy one per value range check."""
    x = mg.randn(2, 3, device=spy, requires_grad=True)
    y = mg.rand(2, 3, device=spy)
    with spy_backend.counted() as n:
        loss = (F.silu(x) + F.leaky_relu(x) + F.softplus(x) + F.elu(x)).sum() + \
            F.binary_cross_entropy_with_logits(x, y, pos_weight=mg.ones(3, device=spy)) + \
            F.l1_loss(x, y)
        loss.backward()
    assert n["sync"] == 0
    with spy_backend.counted() as n:
        F.nll_loss(mg.randn(4, 5, device=spy), TGT)
    assert n["sync"] <= 2


def test_bce_gradients_at_the_boundaries_match_torch():
    torch = pytest.importorskip("torch")
    x = np.array([0.0, 1.0, 0.3, 1e-13, 0.7, 0.0, 1.0])
    y = np.array([1.0, 0.0, 0.6, 0.5, 0.2, 0.0, 1.0])
    w = np.array([1.0, 2.0, 0.5, 1.0, 3.0, 1.0, 1.0])
    xm, ym = (mg.tensor(a, dtype="float64", requires_grad=True) for a in (x, y))
    xt, yt = (torch.tensor(a, requires_grad=True) for a in (x, y))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)    # log(0) in the target's gradient
        F.binary_cross_entropy(xm, ym, weight=mg.tensor(w, dtype="float64"),
                               reduction="sum").backward()
    torch.nn.functional.binary_cross_entropy(xt, yt, weight=torch.tensor(w),
                                             reduction="sum").backward()
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(ym.grad.numpy(), yt.grad.numpy(), rtol=1e-12)
    np.testing.assert_array_equal(np.isinf(ym.grad.numpy()), np.isinf(yt.grad.numpy()))


@pytest.mark.parametrize("make,text", [
    (lambda: nn.ReLU(inplace=True), "ReLU(inplace=True)"), (lambda: nn.ReLU(), "ReLU()"),
    (lambda: nn.SiLU(inplace=True), "SiLU(inplace=True)"),
    (lambda: nn.LeakyReLU(0.2, inplace=True), "LeakyReLU(negative_slope=0.2, inplace=True)"),
    (lambda: nn.ELU(inplace=True), "ELU(alpha=1.0, inplace=True)"),
    (lambda: nn.Dropout(0.1, inplace=True), "Dropout(p=0.1, inplace=True)"),
    (lambda: nn.Dropout(), "Dropout(p=0.5, inplace=False)")])
def test_inplace_modules_write_into_their_input_as_pytorch(make, text):
    """inplace=True writes the result into the input and returns it, as PyTorch's; False
    leaves the input as it was."""
    m = make()
    x = mg.tensor([-1.0, 2.0])
    y = m.eval()(x) if isinstance(m, nn.Dropout) else m(x)
    assert repr(m) == text
    if m.inplace and not isinstance(m, nn.Dropout):
        assert y is x and x.tolist() == y.tolist() != [-1.0, 2.0]
    else:
        assert x.tolist() == [-1.0, 2.0]


INPLACE_F = [("relu", ()), ("relu6", ()), ("selu", ()), ("silu", ()), ("mish", ()),
             ("hardswish", ()), ("hardsigmoid", ()), ("elu", (0.5,)), ("celu", (0.5,)),
             ("leaky_relu", (0.2,)), ("hardtanh", (-0.5, 0.5)), ("threshold", (0.1, 20.0)),
             ("rrelu", (0.1, 0.3, False))]


@pytest.mark.parametrize("name, args", INPLACE_F, ids=[c[0] for c in INPLACE_F])
def test_functional_inplace_as_torch_and_recorded(name, args):
    """F.f(x, ..., inplace=True) (and F.f_ where PyTorch has one) write into x, seen by a
    view of x; on a tensor with a history the write is recorded: gradients as PyTorch's."""
    torch = pytest.importorskip("torch")
    tF = torch.nn.functional
    data = [[-1.5, -0.25, 0.0], [0.3, 1.0, 4.0]]
    got = []
    for lib, fns in ((torch, tF), (mg, F)):
        w = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        h = w * 2
        row = h[1]
        assert getattr(fns, name)(h, *args, inplace=True) is h
        values = [h.detach().numpy().copy(), row.detach().numpy().copy()]
        (h * lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64)).sum().backward()
        got.append(values + [w.grad.numpy()])
    # (torch's float64 hardsigmoid and celu gradients use float32 constants: 3e-8 off)
    rtol = 1e-7 if name in ("hardsigmoid", "celu") else 1e-12
    for ours, theirs in zip(got[1], got[0]):            # h, its row, w's gradient
        np.testing.assert_allclose(ours, theirs, rtol=rtol)
    if hasattr(tF, name + "_"):
        x, t = mg.tensor(data, dtype=mg.float64), torch.tensor(data, dtype=torch.float64)
        assert getattr(F, name + "_")(x, *args) is x
        np.testing.assert_allclose(x.numpy(), getattr(tF, name + "_")(t, *args).numpy(),
                                   rtol=1e-12)


@pytest.mark.parametrize("name, args", INPLACE_F, ids=[c[0] for c in INPLACE_F])
def test_functional_inplace_on_a_view_keeps_its_gradient_as_torch(name, args):
    """F.f(h[0], inplace=True) on a row of an intermediate: the activation's backward reads
    the row's old values, not the written ones (PyTorch's in-place activations keep what
    they need; computed from the view, then copied in, it was refused at backward)."""
    torch = pytest.importorskip("torch")
    data = [[-1.5, -0.25, 0.0], [0.3, 1.0, 4.0]]
    got = []
    for lib, fns in ((torch, torch.nn.functional), (mg, F)):
        w = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        h = w * 2
        row = h[0]
        assert getattr(fns, name)(row, *args, inplace=True) is row
        (h * lib.tensor([1.0, -2.0, 3.0], dtype=lib.float64)).sum().backward()
        got.append((h.detach().numpy().copy(), w.grad.numpy()))
    rtol = 1e-7 if name in ("hardsigmoid", "celu") else 1e-12
    for ours, theirs in zip(got[1], got[0]):
        np.testing.assert_allclose(ours, theirs, rtol=rtol)


def test_inplace_on_a_parameter_is_refused_as_pytorch():
    w = mg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        F.relu(w, inplace=True)
    assert F.dropout(w, 0.5, training=False, inplace=True) is w    # eval: nothing written


@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
@pytest.mark.parametrize("loss", ["l1_loss", "mse_loss", "huber_loss"])
def test_elementwise_losses_take_a_weight_as_pytorch(loss, reduction):
    """weight= of input's shape scales each element's loss; 'mean' divides by Σ weight for
    l1 and mse, by the element count for huber (PyTorch 2.13's rules); the weight gets a
    gradient too."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x, t, w = (rng.standard_normal((3, 4)) for _ in range(3))
    mx, mw = mg.tensor(x, requires_grad=True), mg.tensor(w, requires_grad=True)
    tx, tw = torch.tensor(x, requires_grad=True), torch.tensor(w, requires_grad=True)
    got = getattr(F, loss)(mx, mg.tensor(t), reduction=reduction, weight=mw)
    want = getattr(torch.nn.functional, loss)(tx, torch.tensor(t), reduction=reduction,
                                              weight=tw)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12)
    got.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-12)
    np.testing.assert_allclose(mw.grad.numpy(), tw.grad.numpy(), rtol=1e-12)
    for bad, words in ((mg.ones(4), r"input's shape \(3, 4\), got shape \(4,\)"),
                       (np.ones((3, 4)), "got ndarray")):
        with pytest.raises(ValueError, match=words):
            getattr(F, loss)(mx, mg.tensor(t), weight=bad)


@pytest.mark.parametrize("pos_weight", [None, 2.5])
def test_bce_with_logits_gradient_keeps_its_digits_far_left(pos_weight):
    """y = 0, x ≪ 0: the gradient is p·σ(x) - w·y = σ(x) (PyTorch's form), not 1 - σ(-x),
    which float32 rounded to 0 from x = -17 (the terms' own gradients cancel)."""
    x = mg.tensor([-20.0, -15.0, -10.0], requires_grad=True)
    w = None if pos_weight is None else mg.tensor([pos_weight] * 3)
    F.binary_cross_entropy_with_logits(x, mg.zeros(3), pos_weight=w, reduction="sum").backward()
    want = 1 / (1 + np.exp(-np.array([-20.0, -15.0, -10.0])))
    np.testing.assert_allclose(x.grad.numpy(), want, rtol=1e-6)


def test_binary_cross_entropy_of_tiny_probabilities_keeps_its_digits():
    """log(1 - x) as log1p(-x): in float32 1 - 1e-9 rounds to 1, and the loss was 0."""
    x = mg.tensor([1e-9, 1e-7, 1e-5], dtype=mg.float32)
    loss = F.binary_cross_entropy(x, mg.zeros(3), reduction="none")
    np.testing.assert_allclose(loss.numpy(), -np.log1p(-np.array([1e-9, 1e-7, 1e-5])),
                               rtol=1e-6)


@pytest.mark.parametrize("op", ["elu", "selu", "expm1"])
def test_gradients_of_exp_minus_one_keep_their_digits_far_left(op):
    """d(eˣ - 1) = eˣ from x: the output + 1 (and ELU's old 2t/(1 - t) form) cancelled to
    0 for x ≪ 0 in float32 (x = -20: e⁻²⁰ = 2.1e-9)."""
    x = mg.tensor([-30.0, -20.0, -10.0], requires_grad=True)
    fn = getattr(F, op, None) or getattr(mg, op)
    fn(x).sum().backward()
    scale = {"elu": 1.0, "selu": 1.0507009873554805 * 1.6732632423543772,
             "expm1": 1.0}[op]
    np.testing.assert_allclose(x.grad.numpy(), scale * np.exp([-30.0, -20.0, -10.0]),
                               rtol=1e-6)


def test_bce_with_logits_pos_weight_gradient_is_y_times_softplus_of_minus_x():
    x, y = np.array([-2.0, 0.5, 3.0]), np.array([0.2, 1.0, 0.0])
    w = mg.tensor([2.0, 3.0, 4.0], dtype=mg.float64, requires_grad=True)
    F.binary_cross_entropy_with_logits(mg.tensor(x), mg.tensor(y), pos_weight=w,
                                       reduction="sum").backward()
    np.testing.assert_allclose(w.grad.numpy(), y * np.log1p(np.exp(-x)), rtol=1e-12)
