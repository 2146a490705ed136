"""cross_entropy and nll_loss as PyTorch takes them: a per-class `weight` (with ignore_index
and label smoothing), the class dim second for (N, C, d1, ...) inputs, a (C,) input with a
0-d target; and the module forms with `weight` as a buffer. linear_cross_entropy (torch
2.13's) and its module too."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F

RNG = np.random.default_rng(0)
LOGITS = RNG.normal(size=(6, 4))
TARGET = np.array([0, 3, 1, -100, 2, 3])
WEIGHT = np.array([0.5, 2.0, 1.0, 0.25])
KWARGS = [dict(reduction=r, label_smoothing=ls, ignore_index=ii)
          for r in ("mean", "sum", "none") for ls in (0.0, 0.2) for ii in (-100, 3)]


def _target(kw):                    # the ignored row marked with this case's ignore_index
    return np.where(TARGET == -100, kw["ignore_index"], TARGET)


def _ids(kw):
    return "-".join(f"{k}={v}" for k, v in kw.items())


@pytest.mark.parametrize("kw", KWARGS, ids=[_ids(k) for k in KWARGS])
def test_weighted_cross_entropy_as_torch(kw, device):
    torch = pytest.importorskip("torch")
    target = _target(kw)
    x = mg.tensor(LOGITS, device=device, requires_grad=True)
    w = mg.tensor(WEIGHT, device=device)
    got = F.cross_entropy(x, mg.tensor(target, device=device), w, **kw)
    tx = torch.tensor(LOGITS, requires_grad=True)
    want = torch.nn.functional.cross_entropy(tx, torch.tensor(target), torch.tensor(WEIGHT),
                                             **kw)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12, atol=1e-14)
    g = RNG.normal(size=want.shape)
    got.backward(mg.tensor(g, device=device))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy(), rtol=1e-11, atol=1e-14)


def test_weighted_cross_entropy_gradcheck():
    w = mg.tensor(WEIGHT)
    for ls in (0.0, 0.3):
        assert mg.gradcheck(lambda x: F.cross_entropy(x, TARGET, w, label_smoothing=ls),
                            (mg.tensor(LOGITS, requires_grad=True),))
        assert mg.gradgradcheck(lambda x: F.cross_entropy(x, TARGET, w, label_smoothing=ls),
                                (mg.tensor(LOGITS, requires_grad=True),))


def test_unit_weights_are_the_unweighted_loss(dtype):
    x = mg.tensor(LOGITS, dtype=dtype)
    for kw in KWARGS:
        np.testing.assert_allclose(
            F.cross_entropy(x, _target(kw), mg.ones(4, dtype=dtype), **kw).numpy(),
            F.cross_entropy(x, _target(kw), **kw).numpy(), rtol=1e-6 if dtype == "float32" else 1e-12)


@pytest.mark.parametrize("op", ["cross_entropy", "nll_loss"])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_class_dim_second_as_torch(op, reduction, device):
    torch = pytest.importorskip("torch")
    x = RNG.normal(size=(2, 4, 3, 5))                    # (N, C, d1, d2)
    t = RNG.integers(0, 4, size=(2, 3, 5))
    t[0, 1, 2] = -100
    mx = mg.tensor(x, device=device, requires_grad=True)
    tx = torch.tensor(x, requires_grad=True)
    got = getattr(F, op)(mx, mg.tensor(t, device=device), reduction=reduction)
    want = getattr(torch.nn.functional, op)(tx, torch.tensor(t), reduction=reduction)
    assert got.shape == tuple(want.shape)
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12)
    got.sum().backward()
    want.sum().backward()
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=1e-11, atol=1e-15)


def test_one_row_with_a_0d_target():
    x = mg.tensor(LOGITS[0], requires_grad=True)
    loss = F.cross_entropy(x, mg.tensor(2))
    want = -(LOGITS[0, 2] - np.log(np.exp(LOGITS[0]).sum()))
    assert loss.shape == () and abs(loss.item() - want) < 1e-6
    assert F.cross_entropy(x, mg.tensor(2), reduction="none").shape == ()


def test_sequence_logits_transposed_equal_the_flattened_loss():
    x = mg.tensor(RNG.normal(size=(3, 7, 5)), dtype=mg.float64)     # (B, T, C)
    y = mg.tensor(RNG.integers(0, 5, size=(3, 7)))
    flat = F.cross_entropy(x.reshape(-1, 5), y.reshape(-1), reduction="none").reshape(3, 7)
    np.testing.assert_allclose(F.cross_entropy(x.transpose(1, 2), y, reduction="none").numpy(),
                               flat.numpy(), rtol=1e-14)


def test_modules_keep_weight_as_a_buffer():
    w = mg.tensor(WEIGHT, dtype=mg.float32)
    loss = mg.nn.CrossEntropyLoss(w, label_smoothing=0.1)
    assert "weight" in loss.state_dict()
    x = mg.tensor(LOGITS, dtype=mg.float32)
    np.testing.assert_allclose(loss(x, TARGET).item(),
                               F.cross_entropy(x, TARGET, w, label_smoothing=0.1).item())
    t3 = _target({"ignore_index": 3})
    assert mg.nn.NLLLoss(w, ignore_index=3)(x.log_softmax(1), t3).item() == \
        F.nll_loss(x.log_softmax(1), t3, w, ignore_index=3).item()


@pytest.mark.parametrize("call, error, words", [
    (lambda: F.cross_entropy(mg.ones(2, 3), [0, 1], mg.ones(4)), TypeError,
     ["cross_entropy", "weight must be a tensor of shape (3,)"]),
    (lambda: F.cross_entropy(mg.ones(2, 3), [0, 1], mg.ones(3, requires_grad=True)),
     RuntimeError, ["weight requires grad"]),
    (lambda: F.cross_entropy(mg.ones(2, 3, 4), mg.tensor([[0, 1, 2]] * 2)), ValueError,
     ["(2, 3, 4)", "(2, 3)", "class dim second"]),
    (lambda: F.cross_entropy(mg.ones(3), mg.tensor([1])), ValueError, ["(3,)", "(1,)"]),
    # a target of the input's shape holds class probabilities: integers there are refused
    # (as torch), naming both readings; nll_loss takes none (as torch)
    (lambda: F.cross_entropy(mg.ones(2, 3), mg.zeros(2, 3, dtype=mg.int64)), TypeError,
     ["class probabilities", "floating-point", "int64", "(2,)"]),
    (lambda: F.nll_loss(mg.ones(2, 3), mg.full((2, 3), 1 / 3)), ValueError,
     ["(2, 3) and (2, 3)", "class probabilities", "cross_entropy's, not nll_loss's"]),
    (lambda: F.cross_entropy(mg.ones(2, 3), mg.full((2, 3), 1 / 3), ignore_index=0),
     ValueError, ["ignore_index=0", "class probabilities"]),
    (lambda: F.cross_entropy(mg.ones(2, 3), mg.full((2, 3), 1 / 3), mg.ones(4)), TypeError,
     ["weight", "shape (3,)", "(4,)"]),
    # PyTorch's positions (weight, size_average, ignore_index, ...): 0 is no weight
    (lambda: F.cross_entropy(mg.ones(2, 3), [0, 1], 0, 1), TypeError, ["weight", "got int"]),
    (lambda: F.cross_entropy(mg.tensor([[1, 2]]), [0]), TypeError,
     ["cross_entropy", "floating-point", "int64"]),
])
def test_bad_input(call, error, words):
    with pytest.raises(error) as e:
        call()
    for w in words:
        assert w in str(e.value), (w, str(e.value))


@pytest.mark.parametrize("weight", [None, WEIGHT])
@pytest.mark.parametrize("smoothing", [0.0, 0.1])
@pytest.mark.parametrize("reduction", ["mean", "sum", "none"])
def test_an_ignored_row_with_a_banned_class_counts_for_nothing(reduction, smoothing, weight):
    """A language model's padding rows: their targets ignore_index, a logit of theirs -inf
    (a banned class). They count for nothing, in the loss and its gradient, as PyTorch: the
    loss is that of the other rows alone, not NaN, and nothing warns."""
    target = np.array([2, 3, -100, 1, -100, 3])
    keep = target != -100
    logits = LOGITS.copy()
    logits[~keep, 0] = -np.inf
    kw = dict(reduction=reduction, label_smoothing=smoothing)
    w = None if weight is None else mg.tensor(weight)
    x = mg.tensor(logits, requires_grad=True)
    with np.errstate(all="raise"):                   # a NumPy warning would raise here
        loss = F.cross_entropy(x, mg.tensor(target), w, **kw)
        loss.sum().backward()
    alone = mg.tensor(logits[keep], requires_grad=True)
    want = F.cross_entropy(alone, mg.tensor(target[keep]), w, **kw)
    want.sum().backward()
    got = loss.numpy()[keep] if reduction == "none" else loss.numpy()
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-12)
    if reduction == "none":
        assert np.all(loss.numpy()[~keep] == 0)
    np.testing.assert_allclose(x.grad.numpy()[keep], alone.grad.numpy(), rtol=1e-12)
    assert np.all(x.grad.numpy()[~keep] == 0)


@pytest.mark.filterwarnings("ignore:`NLLLoss2d` has been deprecated")
def test_nll_loss_2d_is_nll_loss_as_torch():
    """nn.NLLLoss2d: PyTorch's older name of NLLLoss for (N, C, H, W) inputs."""
    torch = pytest.importorskip("torch")
    x = RNG.normal(size=(2, 4, 3, 3))
    t = RNG.integers(0, 4, size=(2, 3, 3))
    got = mg.nn.NLLLoss2d(mg.tensor(WEIGHT), ignore_index=1)(mg.tensor(x), mg.tensor(t))
    want = torch.nn.NLLLoss2d(torch.tensor(WEIGHT), ignore_index=1)(torch.tensor(x),
                                                                    torch.tensor(t))
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12)
    assert repr(mg.nn.NLLLoss2d()) == repr(torch.nn.NLLLoss2d()) == "NLLLoss2d()"


# ---- linear_cross_entropy: cross_entropy(linear(input, W, b), target) --------------------
LCE_CASES = [  # input shape, weight shape, bias?, target shape, kwargs
    ((5, 4), (6, 4), False, (5,), {}),
    ((5, 4), (6, 4), True, (5,), dict(reduction="none", label_smoothing=0.1)),
    ((4,), (6, 4), True, (), dict(reduction="sum")),
    ((5, 4), (6, 3, 4), True, (5, 3),
     dict(label_smoothing=0.2, weight=WEIGHT[[0, 1, 2, 3, 0, 1]])),
    ((5, 4), (6, 3, 2, 4), False, (5, 3, 2), dict(ignore_index=2, reduction="sum")),
    ((5, 4), (6, 4), True, (5,), dict(options="chunked")),
]


@pytest.mark.parametrize("xs, ws, bias, ts, kw", LCE_CASES)
def test_linear_cross_entropy_as_torch(xs, ws, bias, ts, kw):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    x, w, b = rng.normal(size=xs), rng.normal(size=ws), rng.normal(size=ws[:-1])
    t = rng.integers(0, ws[0], size=ts)
    t.flat[0] = kw.get("ignore_index", -100)        # one ignored target (None means -100)
    args = [(x, w, b) if bias else (x, w)]
    got, want = [], []
    for lib, Fn, opts, out in ((mg, F, mg.nn.LinearCrossEntropyOptions, got),
                               (torch, torch.nn.functional,
                                torch.nn.LinearCrossEntropyOptions, want)):
        k = dict(kw)
        if "weight" in k:
            k["weight"] = lib.tensor(k["weight"])
        if k.get("options"):
            k["options"] = opts(batch_chunk_size=2)
        ts_ = [lib.tensor(a, requires_grad=True) for a in args[0]]
        loss = Fn.linear_cross_entropy(ts_[0], ts_[1], lib.tensor(t),
                                       linear_bias=ts_[2] if bias else None, **k)
        loss.sum().backward()
        out += [loss.detach().numpy()] + [a.grad.numpy() for a in ts_]
    for g, wnt in zip(got, want):
        np.testing.assert_allclose(g, wnt, rtol=1e-10, atol=1e-12)


def test_linear_cross_entropy_loss_module_as_torch():
    torch = pytest.importorskip("torch")
    m = mg.nn.LinearCrossEntropyLoss(4, 6, out_features=(3,), bias=True, ignore_index=1)
    tm = torch.nn.LinearCrossEntropyLoss(4, 6, out_features=(3,), bias=True, ignore_index=1,
                                         dtype=torch.float64)
    assert repr(m) == repr(tm).replace("float64", "")
    m.load_state_dict({k: mg.tensor(v.detach().numpy(), dtype=mg.float32)
                       for k, v in tm.state_dict().items()})
    x, t = RNG.normal(size=(5, 4)), RNG.integers(0, 6, size=(5, 3))
    np.testing.assert_allclose(m(mg.tensor(x, dtype=mg.float32), t).item(),
                               tm(torch.tensor(x), torch.tensor(t)).item(), rtol=1e-5)
    assert list(m.state_dict()) == ["linear.weight", "linear.bias"]
    assert "weight" in mg.nn.LinearCrossEntropyLoss(4, 6, weight=mg.ones(6)).state_dict()


@pytest.mark.parametrize("call, error, words", [
    (lambda: F.linear_cross_entropy(mg.ones(2, 1, 4), mg.ones(3, 4), mg.tensor([[0], [1]])),
     ValueError, ["(in_features,) or (N, in_features)", "(2, 1, 4)"]),
    (lambda: F.linear_cross_entropy(mg.ones(2, 4), mg.ones(4), mg.tensor([0, 1])),
     ValueError, ["at least 2-D", "(4,)"]),
    (lambda: F.linear_cross_entropy(mg.ones(2, 4), mg.ones(3, 5), mg.tensor([0, 1])),
     ValueError, ["in_features", "(2, 4) and (3, 5)"]),
    (lambda: F.linear_cross_entropy(mg.ones(2, 4), mg.ones(3, 2, 4), mg.tensor([[0, 1]] * 2),
                                    linear_bias=mg.ones(3)), ValueError, ["(3, 2)", "(3,)"]),
    (lambda: F.linear_cross_entropy(mg.ones(4), mg.ones(3, 2, 4), mg.tensor([0, 1])),
     ValueError, ["needs batched input", "(4,)"]),
    (lambda: F.linear_cross_entropy(mg.ones(2, 4), mg.ones(3, 4), mg.full((2, 3), 1 / 3),
                                    ignore_index=-100), ValueError, ["probabilities", "None"]),
    # a float target of the wrong shape is no probability target: cross_entropy's error
    (lambda: F.linear_cross_entropy(mg.ones(2, 4), mg.ones(3, 4), mg.full((2,), 0.5),
                                    ignore_index=-100), TypeError, ["integer class indices"]),
    (lambda: F.linear_cross_entropy(mg.ones(2, 4), mg.ones(3, 4), mg.tensor([0, 1]),
                                    options={}), TypeError, ["LinearCrossEntropyOptions"]),
    (lambda: F.linear_cross_entropy(mg.ones(2, 4), mg.ones(3, 4), mg.tensor([0, 1]),
                                    reduction="avg"), ValueError, ["'mean', 'sum' or 'none'"]),
    (lambda: mg.nn.LinearCrossEntropyOptions(batch_chunk_size=0), ValueError,
     ["batch_chunk_size", "positive int"]),
    (lambda: mg.nn.LinearCrossEntropyOptions(chunking_method="aspect_ratio:0"), ValueError,
     ["chunking_method", "'aspect_ratio:K'"]),
    (lambda: mg.nn.LinearCrossEntropyOptions(acc_policy="fast"), ValueError, ["acc_policy"]),
    (lambda: mg.nn.LinearCrossEntropyOptions(acc_dtype=mg.int32), ValueError, ["acc_dtype"]),
])
def test_linear_cross_entropy_bad_input(call, error, words):
    test_bad_input(call, error, words)


# ---- cross_entropy against class probabilities (a floating target of the input's shape) --
PROB_CASES = [  # input shape, kwargs (weight=True: WEIGHT)
    ((5, 4), dict()),
    ((5, 4), dict(reduction="sum", label_smoothing=0.3)),
    ((5, 4), dict(weight=True, label_smoothing=0.2)),          # mean: over rows, not Σ w
    ((5, 4), dict(weight=True, reduction="none", ignore_index=-1)),
    ((4,), dict(weight=True, label_smoothing=0.1)),              # unbatched
    ((4,), dict(reduction="none")),
    ((2, 4, 3, 2), dict(weight=True, label_smoothing=0.1)),      # (N, C, d1, d2)
    ((2, 4, 3), dict(weight=True, reduction="none")),
    ((0, 4), dict()),                                            # no rows: nan, as torch
]


@pytest.mark.parametrize("shape, kw", PROB_CASES, ids=[str(c) for c in PROB_CASES])
def test_probability_targets_as_torch(shape, kw):
    """Soft labels, as torch: -Σ_c w_c·q_ic·log softmax(x)_ic, q = (1-ε)·t + ε/C, with
    gradients in the input, the target and the weight (torch gives all three)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    x, t = rng.normal(size=shape), rng.dirichlet(np.ones(4), size=shape[:1] + shape[2:])
    t = np.moveaxis(t, -1, 1) if len(shape) > 1 else t[0]
    got, want = [], []
    for lib, Fn, out in ((mg, F, got), (torch, torch.nn.functional, want)):
        k = dict(kw)
        leaves = [lib.tensor(a, requires_grad=True) for a in (x, t, WEIGHT)]
        k["weight"] = leaves[2] if kw.get("weight") else None
        loss = Fn.cross_entropy(leaves[0], leaves[1], **k)
        loss.sum().backward()
        used = leaves if kw.get("weight") else leaves[:2]
        out += [loss.detach().numpy()] + [a.grad.numpy() for a in used]
    assert got[0].shape == want[0].shape
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-10, atol=1e-12)


def test_probability_targets_mean_divides_by_rows_and_smooths_uniformly():
    """Without torch: 'mean' is the sum over N rows / N (class-index targets divide by
    Σ w[t_i] instead), and label smoothing mixes t with the uniform 1/C."""
    x, t = LOGITS[:3], np.array([[0.5, 0.5, 0, 0], [0, 0, 1, 0], [0.1, 0.2, 0.3, 0.4]])
    logp = x - np.log(np.exp(x).sum(1, keepdims=True))
    q = 0.8 * t + 0.2 / 4
    want = -(WEIGHT * q * logp).sum(1)
    got = F.cross_entropy(mg.tensor(x), mg.tensor(t), mg.tensor(WEIGHT), label_smoothing=0.2)
    np.testing.assert_allclose(got.item(), want.mean(), rtol=1e-12)
    module = mg.nn.CrossEntropyLoss(mg.tensor(WEIGHT), label_smoothing=0.2, reduction="none")
    np.testing.assert_allclose(module(mg.tensor(x), mg.tensor(t)).numpy(), want, rtol=1e-12)


def test_probability_targets_gradcheck():
    from minigrad.gradcheck import gradcheck, gradgradcheck
    x = mg.tensor(RNG.normal(size=(3, 4, 2)), requires_grad=True)
    t = mg.tensor(RNG.random((3, 4, 2)), requires_grad=True)
    w = mg.tensor(WEIGHT, requires_grad=True)

    def f(a, b, c):
        return F.cross_entropy(a, b, c, label_smoothing=0.1)
    assert gradcheck(f, (x, t, w)) and gradgradcheck(f, (x, t, w))


def test_probability_targets_dtypes_as_torch():
    """The loss takes the promoted dtype, as torch (a float64 target with float32 logits is
    float64, not refused); float16 logits and target give float16, computed in float32."""
    torch = pytest.importorskip("torch")
    x, t = LOGITS[:3], RNG.dirichlet(np.ones(4), size=3)
    for dx, dt in (("float32", "float64"), ("float64", "float32"), ("float32", "float16"),
                   ("float16", "float16")):
        got = F.cross_entropy(mg.tensor(x, dtype=dx), mg.tensor(t, dtype=dt))
        want = torch.nn.functional.cross_entropy(torch.tensor(x, dtype=getattr(torch, dx)),
                                                 torch.tensor(t, dtype=getattr(torch, dt)))
        assert str(got.dtype) == str(want.dtype).replace("torch.", ""), (dx, dt)
        ref = F.cross_entropy(mg.tensor(x, dtype=dx).double(), mg.tensor(t, dtype=dt).double())
        np.testing.assert_allclose(got.item(), ref.item(), rtol=1e-3 if "16" in dx else 1e-6)


@pytest.mark.parametrize("xs, ws, kw", [((5, 4), (6, 4), dict(label_smoothing=0.1)),
                                        ((4,), (6, 4), dict(reduction="none")),
                                        ((5, 4), (6, 3, 4), dict(reduction="sum"))])
def test_linear_cross_entropy_probability_targets_as_torch(xs, ws, kw):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(2)
    x, w = rng.normal(size=xs), rng.normal(size=ws)
    tshape = (xs[0], *ws[:-1]) if len(xs) == 2 else ws[:-1]
    t = rng.random(tshape)
    got, want = [], []
    for lib, Fn, out in ((mg, F, got), (torch, torch.nn.functional, want)):
        leaves = [lib.tensor(a, requires_grad=True) for a in (x, w, t)]
        loss = Fn.linear_cross_entropy(*leaves, **kw)
        loss.sum().backward()
        out += [loss.detach().numpy()] + [a.grad.numpy() for a in leaves]
    for g, wnt in zip(got, want):
        np.testing.assert_allclose(g, wnt, rtol=1e-10, atol=1e-12)
