"""GLU, hardtanh, ReLU6, log-sigmoid, Mish, softsign, SELU, PReLU and the losses smooth_l1,
huber and kl_div, and pairwise_distance: forward against NumPy formulas, gradcheck and
gradgradcheck in float64 (no torch), values, gradients and second order against PyTorch
where installed, PyTorch's gradients at each kink, and extreme inputs. The modules, errors
and the spy device are in test_activations_losses_more_nn.py."""
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from op_helpers import (OpCase, unary, binary, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch, check_fast_backward_everywhere,
                        check_special_values_vs_torch, SPECIAL_VALUES, special_upstreams)

SELU_ALPHA, SELU_SCALE = 1.6732632423543772848170429916717, 1.0507009873554804934193349852946


def _tf():
    """torch.nn.functional, imported only by torch-side lambdas (skipped without torch)."""
    return __import__("torch").nn.functional


def _const(a, like):
    """A constant of `like`'s dtype: minigrad or torch, whichever `like` is."""
    if isinstance(like, mg.Tensor):
        return mg.tensor(a, dtype=like.dtype, device=like.device)
    return __import__("torch").tensor(a, dtype=like.dtype)


def _quiet(fn):
    """fn with warnings ignored (kl_div's reduction='mean' warns, in both libraries)."""
    def call(*xs):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return fn(*xs)
    return call


def _np_glu(a, dim=-1):
    x, g = np.split(a, 2, axis=dim)
    return x / (1 + np.exp(-g))


def _np_prelu(x, w):
    w = w.reshape([w.size if i == 1 else 1 for i in range(x.ndim)]) if x.ndim != w.ndim else w
    return np.where(x > 0, x, w * x)


def _reduce(loss, r, n=None):
    return {"none": loss, "sum": loss.sum(), "mean": loss.mean(),
            "batchmean": loss.sum() / (n or 1)}[r]


def _np_smooth_l1(a, b, beta, r):
    d = np.abs(a - b)
    loss = d if beta == 0 else np.where(d < beta, 0.5 * d * d / beta, d - 0.5 * beta)
    return _reduce(loss, r)


def _np_huber(a, b, delta, r):
    d = np.abs(a - b)
    return _reduce(np.where(d < delta, 0.5 * d * d, delta * (d - 0.5 * delta)), r)


def _np_kl(x, t, r, log_target=False):
    if log_target:
        loss = np.exp(t) * (t - x)
    else:
        loss = np.where(t > 0, t * np.log(np.where(t > 0, t, 1)), 0.0) - t * x
    return _reduce(loss, r, x.shape[0] if x.ndim else None)


def _np_pdist(a, b, p, keepdim=False):
    d = np.abs(a - b + 1e-6)
    out = d.max(-1) if p == np.inf else (d ** p).sum(-1) ** (1 / p)
    return out[..., None] if keepdim else out


# ---- activations: the op-suite cases ---------------------------------------------------------
_GLU_SHAPES = [((2, 4), -1), ((4, 3), 0), ((2, 6, 2), 1), ((2,), 0)]
ACTIVATIONS = (
    [OpCase(f"glu_dim{d}", lambda x, d=d: F.glu(x, d), (s,),
            torch_fn=lambda x, d=d: _tf().glu(x, d), np_fn=lambda a, d=d: _np_glu(a, d))
     for s, d in _GLU_SHAPES]
    # "real" (-2, 2) crosses both bounds; the second also a bound away from ±1
    + unary("hardtanh", F.hardtanh, torch_fn=lambda x: _tf().hardtanh(x),
            np_fn=lambda a: np.clip(a, -1, 1))
    + unary("hardtanh_-0.5_1.5", lambda x: F.hardtanh(x, -0.5, 1.5),
            torch_fn=lambda x: _tf().hardtanh(x, -0.5, 1.5),
            np_fn=lambda a: np.clip(a, -0.5, 1.5))
    # ×4: (-8, 8) crosses both 0 and 6
    + unary("relu6", lambda x: F.relu6(x * 4), torch_fn=lambda x: _tf().relu6(x * 4),
            np_fn=lambda a: np.clip(a * 4, 0, 6))
    + unary("logsigmoid", lambda x: F.logsigmoid(x * 3), torch_fn=lambda x: _tf().logsigmoid(
        x * 3), np_fn=lambda a: -np.logaddexp(0, -3 * a))
    + unary("mish", lambda x: F.mish(x * 2), torch_fn=lambda x: _tf().mish(x * 2),
            np_fn=lambda a: 2 * a * np.tanh(np.logaddexp(0, 2 * a)))
    + unary("softsign", F.softsign, torch_fn=lambda x: _tf().softsign(x),
            np_fn=lambda a: a / (1 + np.abs(a)), domain="nonzero")
    + unary("selu", F.selu, torch_fn=lambda x: _tf().selu(x), domain="nonzero",
            np_fn=lambda a: SELU_SCALE * np.where(a > 0, a, SELU_ALPHA * np.expm1(a)))
)

# prelu: (input, weight) shapes, both differentiable: per channel, one for all, 0-d weight
_PRELU_SHAPES = [((2, 3), (3,)), ((2, 3, 4), (3,)), ((2, 3), (1,)), ((3,), (1,)), ((), (1,)),
                 ((2, 3), ())]
ACTIVATIONS += binary("prelu", F.prelu, shapes=_PRELU_SHAPES,
                      torch_fn=lambda x, w: _tf().prelu(x, w), np_fn=_np_prelu,
                      domain=("nonzero", "positive"))

# ---- losses and distances: input and target both differentiable ------------------------------
_PAIRS = [((), ()), ((3,), (3,)), ((2, 3), (2, 3)), ((2, 1, 3), (2, 1, 3))]
_R = ("mean", "sum", "none")
LOSSES = (
    [c for r in _R for beta in (1.0, 0.5, 0.0) for c in binary(
        f"smooth_l1_{r}_beta{beta}",
        lambda a, b, r=r, beta=beta: F.smooth_l1_loss(a, b, reduction=r, beta=beta),
        shapes=_PAIRS[1:] if r == "none" else _PAIRS[2:],
        torch_fn=lambda a, b, r=r, beta=beta: _tf().smooth_l1_loss(a, b, reduction=r, beta=beta),
        np_fn=lambda a, b, r=r, beta=beta: _np_smooth_l1(a, b, beta, r))]
    + binary("smooth_l1_default", F.smooth_l1_loss, shapes=_PAIRS[:1],
             torch_fn=lambda a, b: _tf().smooth_l1_loss(a, b),
             np_fn=lambda a, b: _np_smooth_l1(a, b, 1.0, "mean"))
    + [c for r in _R for delta in (1.0, 0.7) for c in binary(
        f"huber_{r}_delta{delta}",
        lambda a, b, r=r, delta=delta: F.huber_loss(a, b, reduction=r, delta=delta),
        shapes=_PAIRS[1:] if r == "none" else _PAIRS[2:],
        torch_fn=lambda a, b, r=r, delta=delta: _tf().huber_loss(a, b, reduction=r, delta=delta),
        np_fn=lambda a, b, r=r, delta=delta: _np_huber(a, b, delta, r))]
    + binary("huber_default", F.huber_loss, shapes=_PAIRS[:1],
             torch_fn=lambda a, b: _tf().huber_loss(a, b),
             np_fn=lambda a, b: _np_huber(a, b, 1.0, "mean"))
    # kl_div: log-probabilities (any real) against positive targets (or their logs)
    + [c for r in _R + ("batchmean",) for c in binary(
        f"kl_div_{r}", _quiet(lambda x, t, r=r: F.kl_div(x, t, reduction=r)),
        shapes=_PAIRS[:3], domain=("real", "positive"),
        torch_fn=_quiet(lambda x, t, r=r: _tf().kl_div(x, t, reduction=r)),
        np_fn=lambda x, t, r=r: _np_kl(x, t, r))]
    + [c for r in ("batchmean", "none") for c in binary(
        f"kl_div_log_target_{r}", lambda x, t, r=r: F.kl_div(x, t, reduction=r, log_target=True),
        shapes=_PAIRS[1:3],
        torch_fn=lambda x, t, r=r: _tf().kl_div(x, t, reduction=r, log_target=True),
        np_fn=lambda x, t, r=r: _np_kl(x, t, r, log_target=True))]
    + [c for p in (2.0, 1.0, 3.0, np.inf) for c in binary(
        f"pairwise_distance_p{p}", lambda a, b, p=p: F.pairwise_distance(a, b, p),
        shapes=[((2, 3), (2, 3)), ((2, 3), (3,)), ((3,), (3,)), ((2, 1, 3), (4, 3))],
        torch_fn=lambda a, b, p=p: _tf().pairwise_distance(a, b, p),
        np_fn=lambda a, b, p=p: _np_pdist(a, b, p), domain="nonzero")]
    + binary("pairwise_distance_keepdim", lambda a, b: F.pairwise_distance(
        a, b, eps=1e-6, keepdim=True), shapes=[((2, 3), (2, 3))],
        torch_fn=lambda a, b: _tf().pairwise_distance(a, b, keepdim=True),
        np_fn=lambda a, b: _np_pdist(a, b, 2, keepdim=True))
)

# kl_div with a fixed target holding zeros: those contribute 0 (value and input gradient)
KL_T0 = np.array([[0.0, 0.3, 0.7], [0.5, 0.0, 0.5]])
LOSSES += [OpCase(f"kl_div_zero_targets_{r}", lambda x, r=r: F.kl_div(x, _const(KL_T0, x),
                                                                   reduction=r),
                  ((2, 3),), torch_fn=lambda x, r=r: _tf().kl_div(x, _const(KL_T0, x),
                                                                  reduction=r),
                  np_fn=lambda x, r=r: _np_kl(x, KL_T0, r)) for r in ("sum", "batchmean")]
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


# ---- the kinks: PyTorch's gradient and second derivative at each ------------------------------
def _first_and_second(fn, arrays, lib):
    """(value, d Σout/dx_i, d(Σ_i Σ grad_i)/dx_i) for each input, as float64 NumPy arrays."""
    if lib == "torch":
        torch = __import__("torch")
        xs = [torch.tensor(a, dtype=torch.float64, requires_grad=True) for a in arrays]
        grad, detach = torch.autograd.grad, (lambda t: t.detach().numpy(force=True))
    else:
        xs = [mg.tensor(a, dtype="float64", requires_grad=True) for a in arrays]
        grad, detach = mg.grad, (lambda t: t.numpy())
    out = fn(*xs)
    gs = grad(out.sum(), xs, create_graph=True)
    s = sum(g.sum() for g in gs)
    hs = grad(s, xs, allow_unused=True) if s.requires_grad else [None] * len(xs)
    return ([detach(out)] + [detach(g) for g in gs] +
            [np.zeros(a.shape) if h is None else detach(h) for h, a in zip(hs, arrays)])


_D = np.array([-2.0, -1.0, -0.5, 0.0, 0.5, 1.0, 2.0])       # differences and kinks
KINKS = [
    # name, minigrad fn, torch fn, inputs, hand values (grad of input 0) or None
    ("hardtanh", F.hardtanh, lambda x: _tf().hardtanh(x), [_D], [0, 0, 1, 1, 1, 0, 0]),
    ("hardtanh_bounds", lambda x: F.hardtanh(x, -0.5, 0.5),
     lambda x: _tf().hardtanh(x, -0.5, 0.5), [_D], [0, 0, 0, 1, 0, 0, 0]),
    ("relu6", F.relu6, lambda x: _tf().relu6(x), [np.array([-1.0, 0.0, 3.0, 6.0, 7.0])],
     [0, 0, 1, 0, 0]),
    ("selu", F.selu, lambda x: _tf().selu(x), [_D], None),
    ("elu", lambda x: F.elu(x, 0.7), lambda x: _tf().elu(x, 0.7), [_D], None),
    ("softsign", F.softsign, lambda x: _tf().softsign(x), [_D], None),
    ("logsigmoid", F.logsigmoid, lambda x: _tf().logsigmoid(x), [_D], None),
    ("mish", F.mish, lambda x: _tf().mish(x), [_D], None),
    ("prelu", F.prelu, lambda x, w: _tf().prelu(x, w), [_D, np.array([0.3])],
     [0.3, 0.3, 0.3, 0.3, 1, 1, 1]),
    ("prelu_channels", F.prelu, lambda x, w: _tf().prelu(x, w),
     [np.array([[0.0, -1.0], [2.0, 0.0]]), np.array([0.3, -0.2])], None),
    ("smooth_l1", lambda a, b: F.smooth_l1_loss(a, b, reduction="sum"),
     lambda a, b: _tf().smooth_l1_loss(a, b, reduction="sum"), [_D, np.zeros(7)],
     [-1, -1, -0.5, 0, 0.5, 1, 1]),
    ("smooth_l1_beta0.5", lambda a, b: F.smooth_l1_loss(a, b, reduction="sum", beta=0.5),
     lambda a, b: _tf().smooth_l1_loss(a, b, reduction="sum", beta=0.5), [_D, np.zeros(7)],
     [-1, -1, -1, 0, 1, 1, 1]),
    ("smooth_l1_beta0", lambda a, b: F.smooth_l1_loss(a, b, reduction="sum", beta=0.0),
     lambda a, b: _tf().smooth_l1_loss(a, b, reduction="sum", beta=0.0), [_D, np.zeros(7)],
     [-1, -1, -1, 0, 1, 1, 1]),
    ("huber", lambda a, b: F.huber_loss(a, b, reduction="sum", delta=0.5),
     lambda a, b: _tf().huber_loss(a, b, reduction="sum", delta=0.5), [_D, np.zeros(7)],
     [-0.5, -0.5, -0.5, 0, 0.5, 0.5, 0.5]),
    ("pairwise_distance_equal", F.pairwise_distance, lambda a, b: _tf().pairwise_distance(
        a, b), [np.ones((2, 3)), np.ones((2, 3))], None),
]


@pytest.mark.parametrize("case", KINKS, ids=lambda c: c[0])
def test_gradients_at_the_kinks(case):
    """Hand values where given (no torch needed), and everything against PyTorch."""
    name, fn, torch_fn, arrays, want = case
    mine = _first_and_second(fn, arrays, "mg")
    if want is not None:
        np.testing.assert_array_equal(mine[1], want, err_msg=f"{name}: gradient")
    pytest.importorskip("torch")
    theirs = _first_and_second(torch_fn, arrays, "torch")
    for i, (m, t) in enumerate(zip(mine, theirs)):
        np.testing.assert_allclose(m, t, rtol=1e-12, atol=1e-15, err_msg=f"{name} part {i}")


# ---- the fused ops: fast backward against the reference, both against PyTorch -----------------
FUSED = {   # name: (minigrad, torch); SPECIAL_VALUES holds each one's kinks and bounds
    "hardtanh": (F.hardtanh, lambda x: _tf().hardtanh(x)),
    "hardtanh_-0.5_1.5": (lambda x: F.hardtanh(x, -0.5, 1.5),
                          lambda x: _tf().hardtanh(x, -0.5, 1.5)),
    "hardtanh_3_3": (lambda x: F.hardtanh(x, 3.0, 3.0), lambda x: _tf().hardtanh(x, 3.0, 3.0)),
    "relu6": (F.relu6, lambda x: _tf().relu6(x)),
    "selu": (F.selu, lambda x: _tf().selu(x)),
    "logsigmoid": (F.logsigmoid, lambda x: _tf().logsigmoid(x)),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(FUSED))
def test_fast_backward_matches_reference(name, dtype, device):
    check_fast_backward_everywhere(FUSED[name][0], dtype, device, name)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", list(FUSED))
def test_special_values_as_pytorch(name, dtype, device):
    """Values and gradients at the bounds, at ±inf and at NaN (PyTorch's gradient at NaN is
    0 for hardtanh and relu6, NaN for the others; an inf or NaN upstream outside
    hardtanh's range gives 0)."""
    x = SPECIAL_VALUES.astype(dtype)
    for upstream in special_upstreams(x.size):
        check_special_values_vs_torch(*FUSED[name], x, upstream, device, name)


def test_hardtanh_gradient_is_zero_at_the_bounds_where_clip_gives_one():
    x = mg.tensor([-1.0, 1.0], requires_grad=True)
    (g,) = mg.grad(F.hardtanh(x).sum(), [x])
    (c,) = mg.grad(x.clip(-1, 1).sum(), [x])
    assert g.numpy().tolist() == [0, 0] and c.numpy().tolist() == [1, 1]


def test_integer_inputs_as_pytorch():
    """hardtanh and relu6 keep an integer tensor integer (bounds truncated toward 0, as
    PyTorch); softsign gives float32, as true division."""
    h = F.hardtanh(mg.tensor([1, -3, 5]), -1.5, 2.5)
    assert h.dtype == mg.int64 and h.numpy().tolist() == [1, -1, 2]
    r = F.relu6(mg.tensor([1, -3, 7]))
    assert r.dtype == mg.int64 and r.numpy().tolist() == [1, 0, 6]
    s = F.softsign(mg.tensor([1, -3]))
    assert s.dtype == mg.float32 and s.numpy().tolist() == [0.5, -0.75]


# ---- extreme inputs ------------------------------------------------------------------------
EXTREME = np.array([-1e30, -1000.0, -100.0, -30.0, -1e-10, 0.0, 1e-10, 1.0, 30.0, 100.0,
                    1000.0, 1e30])


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", ["logsigmoid", "mish", "softsign", "selu", "glu", "hardtanh",
                                  "relu6"])
def test_large_inputs_are_finite_and_warning_free(name, dtype, device):
    x = mg.tensor(EXTREME, dtype=dtype, device=device, requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # an overflow or 0·inf would warn
        y = getattr(F, name)(x)
        (g,) = mg.grad(y.sum(), [x], create_graph=True)
        gg = mg.grad(g.sum(), [x])[0] if g.requires_grad else mg.zeros_like(x)
    assert y.dtype == x.dtype and g.dtype == x.dtype
    for what, v in (("value", y), ("grad", g), ("grad of grad", gg)):
        assert np.isfinite(v.numpy()).all(), f"{name} {what}: {v.numpy()}"


@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_logsigmoid_is_exact_in_both_tails(dtype):
    x = mg.tensor([-1e30, -1000.0, -50.0, 30.0, 50.0, 100.0], dtype=dtype)
    y = F.logsigmoid(x).numpy()
    # left: x itself (log σ(x) = x - log(1 + eˣ)); right: -e⁻ˣ, not a rounded 0
    assert y[0] == -1e30 if dtype == "float64" else np.isclose(y[0], -1e30)
    assert y[1] == -1000.0 and y[2] == -50.0
    np.testing.assert_allclose(y[3:], -np.log1p(np.exp(-np.array([30.0, 50.0, 100.0]))),
                               rtol=1e-6 if dtype == "float32" else 1e-14, atol=1e-44)


def test_mish_and_selu_tails():
    x = mg.tensor([-1000.0, -40.0, 40.0, 1000.0], dtype="float64")
    np.testing.assert_array_equal(F.mish(x).numpy()[2:], [40.0, 1000.0])
    np.testing.assert_allclose(F.mish(x).numpy()[1], -40 * np.tanh(np.exp(-40.0)), rtol=1e-14)
    np.testing.assert_allclose(F.selu(x).numpy(),
                               SELU_SCALE * np.array([-SELU_ALPHA, -SELU_ALPHA, 40, 1000]),
                               rtol=1e-15)
    # near 0 SELU keeps expm1's precision
    np.testing.assert_allclose(F.selu(mg.tensor([-1e-10], dtype="float64")).numpy(),
                               SELU_SCALE * SELU_ALPHA * np.expm1([-1e-10]), rtol=1e-14)


# ---- kl_div: zeros, reductions, the warning --------------------------------------------------
def test_kl_div_zero_target_contributes_zero_not_nan(device):
    x = mg.tensor([[-1.0, -2.0, -0.5], [-np.inf, -1.0, -3.0]], dtype="float64", device=device,
                  requires_grad=True)
    t = mg.tensor([[0.0, 0.5, 0.5], [0.0, 1.0, 0.0]], dtype="float64", device=device,
                  requires_grad=True)
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # no log(0) warning
        loss = F.kl_div(x[:1], t[:1], reduction="none")
        # 0·log 0 = 0, and 0·input too when input is finite
        np.testing.assert_allclose(loss.numpy(), [[0.0, 0.5 * (np.log(0.5) + 2),
                                                   0.5 * (np.log(0.5) + 0.5)]])
        F.kl_div(x[:1], t[:1], reduction="sum").backward()
    np.testing.assert_allclose(x.grad.numpy()[0], [0.0, -0.5, -0.5])
    # the target's gradient, log t + 1 - input; at t = 0 it is -input (PyTorch's is NaN)
    np.testing.assert_allclose(t.grad.numpy()[0], [1.0, np.log(0.5) + 3, np.log(0.5) + 1.5])


def test_kl_div_negative_or_nan_target_is_nan_without_a_warning():
    t = mg.tensor([-0.5, np.nan, 0.5], dtype="float64")
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss = F.kl_div(mg.zeros(3, dtype="float64"), t, reduction="none").numpy()
    assert np.isnan(loss[:2]).all() and loss[2] == 0.5 * np.log(0.5)


def test_kl_div_reductions(device):
    rng = np.random.default_rng(0)
    x = mg.tensor(np.log(rng.dirichlet(np.ones(5), 4)), dtype="float64", device=device)
    t = mg.tensor(rng.dirichlet(np.ones(5), 4), dtype="float64", device=device)
    none = F.kl_div(x, t, reduction="none").numpy()
    with pytest.warns(UserWarning, match="'batchmean' divides only by the batch size"):
        mean = F.kl_div(x, t).item()
    assert mean == pytest.approx(none.mean(), rel=1e-14)
    assert F.kl_div(x, t, reduction="sum").item() == pytest.approx(none.sum(), rel=1e-14)
    assert F.kl_div(x, t, reduction="batchmean").item() == pytest.approx(none.sum() / 4,
                                                                         rel=1e-14)
    # log_target=True takes log t and gives the same divergence
    same = F.kl_div(x, t.log(), reduction="batchmean", log_target=True)
    assert same.item() == pytest.approx(none.sum() / 4, rel=1e-12)
    # a 0-d input: batchmean is the sum (no batch dim), as PyTorch
    assert F.kl_div(x[0, 0], t[0, 0], reduction="batchmean").item() == \
        pytest.approx(none[0, 0], rel=1e-14)
    with warnings.catch_warnings():
        warnings.simplefilter("error")              # only 'mean' warns
        for r in ("sum", "none", "batchmean"):
            F.kl_div(x, t, reduction=r)


def test_kl_div_is_the_kl_divergence():
    """batchmean of softmax targets against log-softmax inputs is Σ p log(p/q) per row."""
    rng = np.random.default_rng(1)
    p, q = rng.dirichlet(np.ones(4), 3), rng.dirichlet(np.ones(4), 3)
    got = F.kl_div(mg.tensor(np.log(q), dtype="float64"), mg.tensor(p, dtype="float64"),
                   reduction="batchmean").item()
    assert got == pytest.approx((p * np.log(p / q)).sum(1).mean(), rel=1e-13)


@pytest.mark.parametrize("loss", ["smooth_l1_loss", "huber_loss"])
def test_smooth_losses_broadcast_warn_as_pytorch(loss):
    a, b = mg.randn(3, 1), mg.randn(3)
    with pytest.warns(UserWarning, match="different to the input size"):
        out = getattr(F, loss)(a, b, reduction="none")
    assert out.shape == (3, 3)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        getattr(F, loss)(a, a)


def test_huber_is_delta_times_smooth_l1():
    a, b = mg.randn(4, 5, dtype="float64"), mg.randn(4, 5, dtype="float64")
    np.testing.assert_allclose(F.huber_loss(a, b, delta=0.3).numpy(),
                               0.3 * F.smooth_l1_loss(a, b, beta=0.3).numpy(), rtol=1e-14)


@pytest.mark.parametrize("dtype, d, beta", [("float16", 2e4, 0.1), ("float32", 1e36, 1e-3),
                                            ("float16", 1.0, 1e-6)])
def test_smooth_l1_far_side_has_a_finite_gradient(dtype, d, beta):
    """Where |d| ≥ β the loss is |d| - β/2 and its gradient ±1: the quadratic side, not
    taken there, must not overflow into a NaN gradient (PyTorch: 0.5 and -0.5 here)."""
    x = mg.tensor([d, -d / 3], dtype=dtype, requires_grad=True)
    F.smooth_l1_loss(x, mg.zeros(2, dtype=dtype), beta=beta).backward()
    assert x.grad.tolist() == [0.5, -0.5]


@pytest.mark.parametrize("dtype", ["float64", "float32", "float16"])
def test_huber_and_smooth_l1_values_and_gradients_on_a_grid(dtype):
    """The fused op against PyTorch's formulas, bit for bit (PyTorch 2.13 agrees on this
    grid): each side computed as PyTorch does, the gradient clip(d, -δ, δ) (over β)."""
    d = np.array([0.0, 0.3, -0.3, 0.5, -0.5, 0.7, 2.0, -5.0, np.inf, -np.inf, np.nan])
    dd = d.astype(dtype)
    for name, k in (("huber_loss", "delta"), ("smooth_l1_loss", "beta")):
        x = mg.tensor(dd, requires_grad=True)
        loss = getattr(F, name)(x, mg.zeros(len(d), dtype=dtype), reduction="none", **{k: 0.5})
        loss.backward(mg.ones(len(d), dtype=dtype))
        a, h = np.abs(dd), np.asarray(0.5, dtype)
        half = np.asarray(0.5, dtype)
        with np.errstate(invalid="ignore"):
            if name == "huber_loss":
                want = np.where(a < h, half * dd * dd, h * (a - half * h))
                grad = np.clip(dd, -h, h)
            else:
                want = np.where(a < h, half * dd * dd / h, a - half * h)
                grad = np.clip(dd, -h, h) / h
        np.testing.assert_array_equal(loss.numpy(), want.astype(dtype))
        np.testing.assert_array_equal(x.grad.numpy(), grad.astype(dtype))
