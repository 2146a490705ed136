"""Fused ops with hand-derived backward: softmax, log_softmax, cross_entropy (ignore_index,
label_smoothing, reduction), layer_norm (affine or not, multi-dim normalized_shape), GELU
and the fused elementwise activations (their kinks, inf and NaN: the activation test files).
Each is checked against PyTorch, by gradcheck, and against its unfused composition from
primitive minigrad ops (forward, gradient and second order)."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from op_helpers import (OpCase, check_vs_torch, check_gradcheck, check_double_backward_vs_torch,
                        check_fused_vs_unfused)


def _tf():
    import torch.nn.functional
    return torch.nn.functional


def _torch_long(a):
    import torch
    return torch.from_numpy(a)


_TARGET = np.array([1, 0, 4, 2])
_TARGET_IGNORED = np.array([1, -100, 4, -100])
_TARGET_IGNORE2 = np.array([2, 0, 2, 3])


def _ce(name, target, as_tensor=False, **kw):
    def fn(x):
        t = mg.tensor(target, device=x.device) if as_tensor else target
        return F.cross_entropy(x, t, **kw)
    return OpCase(name, fn, ((4, 5),),
                  torch_fn=lambda x: _tf().cross_entropy(x, _torch_long(target), **kw))


def _ln(name, shapes, normalized_shape, affine="", eps=1e-5):
    def fn(x, *p):
        w = p[0] if "w" in affine else None
        b = p[-1] if "b" in affine else None
        return F.layer_norm(x, normalized_shape, w, b, eps=eps)

    def torch_fn(x, *p):
        import torch
        shape = (normalized_shape,) if isinstance(normalized_shape, int) else normalized_shape
        # a unit weight beside a lone bias: torch's double backward fails on weight=None there
        w = p[0] if "w" in affine else torch.ones(shape, dtype=x.dtype)
        b = p[-1] if "b" in affine else None
        return _tf().layer_norm(x, shape, w, b, eps=eps)
    return OpCase(name, fn, shapes, torch_fn=torch_fn)


CASES = [
    OpCase("softmax", lambda x: x.softmax(-1), ((2, 3),)),
    OpCase("softmax_dim1", lambda x: x.softmax(1), ((2, 3, 4),)),
    OpCase("F.softmax_dim0", lambda x: F.softmax(x, 0), ((3, 2),),
           torch_fn=lambda x: _tf().softmax(x, 0)),
    OpCase("log_softmax", lambda x: x.log_softmax(-1), ((2, 3),)),
    OpCase("log_softmax_dim0", lambda x: x.log_softmax(0), ((2, 3, 4),)),
    OpCase("F.log_softmax", lambda x: F.log_softmax(x, dim=1), ((3, 4),),
           torch_fn=lambda x: _tf().log_softmax(x, dim=1)),
    _ce("ce", _TARGET),
    _ce("ce_tensor_target", _TARGET, as_tensor=True),
    _ce("ce_sum", _TARGET, reduction="sum"),
    _ce("ce_none", _TARGET, reduction="none"),
    _ce("ce_ignore", _TARGET_IGNORED),
    _ce("ce_ignore_none", _TARGET_IGNORED, reduction="none"),
    _ce("ce_ignore_index2", _TARGET_IGNORE2, ignore_index=2),
    _ce("ce_smooth", _TARGET, label_smoothing=0.1),
    _ce("ce_smooth_ignore_sum", _TARGET_IGNORED, label_smoothing=0.2, reduction="sum"),
    _ce("ce_smooth_ignore", _TARGET_IGNORED, as_tensor=True, label_smoothing=0.3),
    _ln("layer_norm", ((2, 3, 4),), (4,)),
    _ln("layer_norm_int_shape", ((3, 4),), 4),
    _ln("layer_norm_affine", ((2, 3, 4), (4,), (4,)), (4,), "wb"),
    _ln("layer_norm_weight", ((3, 4), (4,)), (4,), "w"),
    _ln("layer_norm_bias", ((3, 4), (4,)), (4,), "b"),
    _ln("layer_norm_2d_shape", ((2, 3, 4), (3, 4), (3, 4)), (3, 4), "wb", eps=1e-3),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case, device):
    check_gradcheck(case, device)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_double_backward_vs_torch(case, device):
    check_double_backward_vs_torch(case, device)


# ---- the unfused compositions, from primitive ops ------------------------------------------
def softmax_unfused(x, dim):
    e = (x - x.max(dim, keepdim=True)[0].detach()).exp()
    return e / e.sum(dim, keepdim=True)


def log_softmax_unfused(x, dim):
    z = x - x.max(dim, keepdim=True)[0].detach()
    return z - z.exp().sum(dim, keepdim=True).log()


def cross_entropy_unfused(x, target, ignore_index=-100, label_smoothing=0.0, reduction="mean"):
    valid = target != ignore_index
    logp = log_softmax_unfused(x, 1)
    nll = -logp[np.arange(len(target)), np.where(valid, target, 0)]
    loss = (1 - label_smoothing) * nll - label_smoothing * logp.mean(1)
    loss = loss * mg.tensor(valid, dtype=x.dtype, device=x.device)
    if reduction == "none":
        return loss
    return loss.sum() if reduction == "sum" else loss.sum() / int(valid.sum())


def layer_norm_unfused(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    dims = tuple(range(x.ndim - len(normalized_shape), x.ndim))
    xc = x - x.mean(dims, keepdim=True)
    y = xc / ((xc * xc).mean(dims, keepdim=True) + eps).sqrt()
    y = y if weight is None else y * weight
    return y if bias is None else y + bias


def gelu_unfused(x, approximate="none"):
    if approximate == "tanh":
        return 0.5 * x * (1 + (math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)).tanh())
    return 0.5 * x * (1 + (x / math.sqrt(2)).erf())


_RNG = np.random.default_rng(5)


@pytest.mark.parametrize("dim", [-1, 0, 1])
def test_softmax_vs_unfused(dim, device):
    a = [_RNG.standard_normal((2, 3, 4)) * 3]
    check_fused_vs_unfused(lambda x: x.softmax(dim), lambda x: softmax_unfused(x, dim), a,
                           device, "softmax")
    check_fused_vs_unfused(lambda x: x.log_softmax(dim), lambda x: log_softmax_unfused(x, dim),
                           a, device, "log_softmax")


@pytest.mark.parametrize("target,kw", [
    (_TARGET, {}), (_TARGET, {"reduction": "sum"}), (_TARGET, {"reduction": "none"}),
    (_TARGET_IGNORED, {}), (_TARGET_IGNORE2, {"ignore_index": 2}),
    (_TARGET, {"label_smoothing": 0.1}),
    (_TARGET_IGNORED, {"label_smoothing": 0.25, "reduction": "none"})])
def test_cross_entropy_vs_unfused(target, kw, device):
    check_fused_vs_unfused(lambda x: F.cross_entropy(x, target, **kw),
                           lambda x: cross_entropy_unfused(x, target, **kw),
                           [_RNG.standard_normal((4, 5)) * 2], device, f"cross_entropy {kw}")


@pytest.mark.parametrize("shapes,normalized_shape", [
    (((2, 3, 4),), (4,)), (((2, 3, 4), (4,), (4,)), (4,)), (((2, 3, 4), (3, 4), (3, 4)), (3, 4))])
def test_layer_norm_vs_unfused(shapes, normalized_shape, device):
    arrays = [_RNG.standard_normal(s) for s in shapes]
    check_fused_vs_unfused(lambda *a: F.layer_norm(a[0], normalized_shape, *a[1:]),
                           lambda *a: layer_norm_unfused(a[0], normalized_shape, *a[1:]),
                           arrays, device, "layer_norm")


@pytest.mark.parametrize("shapes", [((2, 3, 4), (5, 4), (5,)), ((4,), (3, 4)), ((3, 4), (2, 4))])
def test_linear_vs_unfused(shapes, device):
    arrays = [_RNG.standard_normal(s) for s in shapes]
    check_fused_vs_unfused(lambda *a: F.linear(*a),
                           lambda x, w, *b: x @ w.mT + b[0] if b else x @ w.mT,
                           arrays, device, "linear")


@pytest.mark.parametrize("approximate", ["none", "tanh"])
def test_gelu_vs_unfused(approximate, device):
    check_fused_vs_unfused(lambda x: F.gelu(x, approximate=approximate),
                           lambda x: gelu_unfused(x, approximate),
                           [_RNG.uniform(-4, 4, (3, 4))], device, f"gelu {approximate}")


def _softplus_unfused(x, beta, threshold):
    z = x * beta
    return mg.where(z > threshold, x, (z.relu() + (-z.abs()).exp().log1p()) / beta)


ACTIVATIONS_UNFUSED = {   # name: (fused, composed of primitive ops)
    "leaky_relu": (lambda x: F.leaky_relu(x, -0.3), lambda x: mg.where(x > 0, x, x * -0.3)),
    "hardtanh": (lambda x: F.hardtanh(x, -1.5, 2.0), lambda x: x.clip(-1.5, 2.0)),
    "relu6": (lambda x: F.relu6(x * 2), lambda x: (x * 2).clip(0, 6)),
    "elu": (lambda x: F.elu(x, 0.7),
            lambda x: mg.where(x > 0, x, 0.7 * mg.where(x > 0, 0.0, x).expm1())),
    "selu": (F.selu, lambda x: 1.0507009873554805 * mg.where(
        x > 0, x, 1.6732632423543772 * mg.where(x > 0, 0.0, x).expm1())),
    "softplus": (lambda x: F.softplus(x, 2.0, 1.5), lambda x: _softplus_unfused(x, 2.0, 1.5)),
    "logsigmoid": (F.logsigmoid, lambda x: x.sigmoid().log()),
}


@pytest.mark.parametrize("name", list(ACTIVATIONS_UNFUSED))
def test_activations_vs_unfused(name, device):
    check_fused_vs_unfused(*ACTIVATIONS_UNFUSED[name], [_RNG.uniform(-4, 4, (3, 4))], device,
                           name)


def test_softmax_stable_for_large_and_masked_inputs(device):
    x = mg.tensor([[1000.0, 1000.0, -np.inf], [-np.inf, -np.inf, -np.inf]], device=device)
    np.testing.assert_array_equal(x.softmax(-1).numpy(), [[0.5, 0.5, 0.0], [0.0, 0.0, 0.0]])
    np.testing.assert_allclose(x[:1].log_softmax(-1).numpy()[0, :2], [-math.log(2)] * 2)


def test_cross_entropy_all_ignored_is_nan_as_torch(device):
    x = mg.randn(2, 3, device=device, requires_grad=True)
    loss = F.cross_entropy(x, np.array([-100, -100]))
    assert math.isnan(loss.item())
    sum_loss = F.cross_entropy(x, np.array([-100, -100]), reduction="sum")
    assert sum_loss.item() == 0.0
    sum_loss.backward()
    assert x.grad.abs().sum().item() == 0.0


@pytest.mark.parametrize("label_smoothing", [0.0, 0.1])
def test_cross_entropy_all_ignored_mean_has_zero_gradient_as_torch(label_smoothing, device):
    # the loss is nan (0 / 0 rows), but its gradient is 0, not NaN in every logit
    x = mg.randn(3, 2, device=device, requires_grad=True)
    loss = F.cross_entropy(x, np.array([0, 0, 0]), ignore_index=0,
                           label_smoothing=label_smoothing)
    assert math.isnan(loss.item())
    loss.backward()
    np.testing.assert_array_equal(x.grad.numpy(), 0.0)
    gx, = mg.grad(F.cross_entropy(x, np.array([0, 0, 0]), ignore_index=0), x,
                  create_graph=True)                     # the reference backward too
    np.testing.assert_array_equal(gx.numpy(), 0.0)


@pytest.mark.parametrize("create_graph", [False, True])
def test_cross_entropy_ignored_rows_get_zero_even_from_a_nan_gradient(create_graph, device):
    # that nan loss passed through another op (exp, a max) sends NaN back: the ignored rows
    # still get 0, as PyTorch's (only the rows that count take the NaN)
    x = mg.randn(2, 3, dtype=mg.float64, device=device, requires_grad=True)
    loss = F.cross_entropy(x, np.array([0, 1]), ignore_index=0, reduction="none")
    gx, = mg.grad((loss * math.nan).sum(), x, create_graph=create_graph)
    assert gx[0].tolist() == [0.0] * 3 and np.isnan(gx[1].numpy()).all()


def test_layer_norm_gradients_keep_float32_precision_far_from_zero():
    """Backward rebuilds nothing from a saved x̂ but works from x and the row statistics;
    with rows whose mean is 1000 standard deviations away from zero, float32 gradients
    still agree with float64 ones (a formula that subtracts μ·Σĝ from Σĝ⊙x afterwards
    loses about three digits here)."""
    rng = np.random.default_rng(4)
    x = 1000 + rng.standard_normal((64, 96))
    w, g = rng.standard_normal(96), rng.standard_normal((64, 96))

    def grads(dtype):
        xt, wt = (mg.tensor(a, dtype=dtype, requires_grad=True) for a in (x, w))
        (F.layer_norm(xt, (96,), wt) * mg.tensor(g, dtype=dtype)).sum().backward()
        return xt.grad.numpy().astype(np.float64), wt.grad.numpy().astype(np.float64)
    (gx, gw), (want_x, want_w) = grads("float32"), grads("float64")
    # the floor is float32's own spacing at 1000 (6e-5 of σ); the cancelling formula
    # measured 1.3e-4 on the weight gradient
    assert np.abs(gx - want_x).max() <= 2e-5 * np.abs(want_x).max()
    assert np.abs(gw - want_w).max() <= 7e-5 * np.abs(want_w).max()


def test_layer_norm_of_very_wide_rows_far_from_zero():
    """Rows of 2²¹ values near 1000: BLAS's running float32 sum drifted (the mean 1e-4
    relative off, x̂ up to 0.1 off); such rows are summed pairwise, as NumPy's sum."""
    rng = np.random.default_rng(0)
    d = 1 << 21
    x = (1000 + rng.standard_normal((1, d))).astype(np.float32)
    g = rng.standard_normal((1, d)).astype(np.float32)
    xt = mg.tensor(x, requires_grad=True)
    y = F.layer_norm(xt, (d,))
    y.backward(mg.tensor(g))
    x64, g64 = x.astype(np.float64), g.astype(np.float64)
    xc = x64 - x64.mean()
    r = 1 / np.sqrt((xc * xc).mean() + 1e-5)
    xhat = xc * r
    want_gx = r * (g64 - g64.mean() - xhat * (g64 * xhat).mean())
    assert np.abs(y.numpy() - xhat).max() < 1e-4
    assert np.abs(xt.grad.numpy() - want_gx).max() < 1e-5


# ---- forward against NumPy formulas, and non-contiguous inputs (no PyTorch needed) ----------
def _np_softmax(x, axis=-1):
    e = np.exp(x - x.max(axis, keepdims=True))
    return e / e.sum(axis, keepdims=True)


def _np_layer_norm(x, w, b, eps=1e-5):
    mu, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)
    return (x - mu) / np.sqrt(var + eps) * w + b


def _np_gelu_tanh(x):
    return 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3)))


_T = np.array([3, 0, 1, 3, 2])        # class ids for 5 rows of 4 classes
_FUSED = {   # name: (minigrad fn of (x, w, b), NumPy formula of the same)
    "softmax": (lambda x, w, b: x.softmax(-1), lambda x, w, b: _np_softmax(x)),
    "log_softmax": (lambda x, w, b: x.log_softmax(-1),
                    lambda x, w, b: np.log(_np_softmax(x))),
    "cross_entropy": (lambda x, w, b: F.cross_entropy(x, _T),
                      lambda x, w, b: -np.log(_np_softmax(x))[np.arange(5), _T].mean()),
    "cross_entropy_smoothed": (
        lambda x, w, b: F.cross_entropy(x, _T, label_smoothing=0.1),
        lambda x, w, b: (0.9 * -np.log(_np_softmax(x))[np.arange(5), _T]
                         + 0.1 * -np.log(_np_softmax(x)).mean(-1)).mean()),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (4,), w, b), _np_layer_norm),
    "gelu": (lambda x, w, b: F.gelu(x),
             lambda x, w, b: 0.5 * x * (1 + np.vectorize(math.erf)(x / math.sqrt(2)))),
    "gelu_tanh": (lambda x, w, b: F.gelu(x, approximate="tanh"),
                  lambda x, w, b: _np_gelu_tanh(x)),
    "linear": (lambda x, w, b: F.linear(x, w.reshape(1, 4).expand(3, 4) * 1.0, b[:3]),
               lambda x, w, b: x @ np.tile(w, (3, 1)).T + b[:3]),
}


@pytest.mark.parametrize("name", sorted(_FUSED))
def test_forward_matches_numpy_and_strided_inputs_gradcheck(name, device):
    fn, reference = _FUSED[name]
    rng = np.random.default_rng(0)
    x = rng.standard_normal((4, 5)).T * 2                     # (5, 4), a transposed view
    w, b = rng.uniform(0.5, 1.5, 4), rng.standard_normal(4)
    assert not x.flags.c_contiguous
    args = [mg.tensor(a, dtype=mg.float64, device=device) for a in (x, w, b)]
    np.testing.assert_allclose(fn(*args).numpy(), reference(x, w, b), rtol=1e-12, atol=1e-12)
    for a in args:
        a.requires_grad_()
    xt = mg.tensor(x.T, dtype=mg.float64, device=device).T.detach().requires_grad_()
    assert not xt._data.flags.c_contiguous                     # gradcheck keeps the layout
    assert mg.gradcheck(fn, [xt, args[1], args[2]])
    y32 = fn(*[mg.tensor(a, device=device) for a in (x, w, b)])   # float32, strided x
    np.testing.assert_allclose(y32.numpy(), reference(x, w, b), rtol=1e-5, atol=1e-5)
