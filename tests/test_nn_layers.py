"""The basic layers against PyTorch with copied weights (float64 and float32: outputs, input
and parameter gradients), plus a float64 gradcheck of each that needs no torch."""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
import minigrad.functional as F
from nn_helpers import compare_with_torch, gradcheck_module


def _torch():
    return pytest.importorskip("torch")


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ---- against torch -----------------------------------------------------------------------
def _pairs():
    """(name, minigrad module factory, torch module factory, inputs factory)"""
    def tn():
        import torch.nn as tnn
        return tnn
    idx = np.array([[0, 3, 1], [2, 0, 4]])
    return [
        ("linear", lambda: nn.Linear(4, 3), lambda: tn().Linear(4, 3), lambda: [_x(2, 5, 4)]),
        ("linear_nobias", lambda: nn.Linear(4, 3, bias=False),
         lambda: tn().Linear(4, 3, bias=False), lambda: [_x(5, 4)]),
        ("embedding", lambda: nn.Embedding(5, 3), lambda: tn().Embedding(5, 3), lambda: [idx]),
        ("embedding_padding", lambda: nn.Embedding(5, 3, padding_idx=0),
         lambda: tn().Embedding(5, 3, padding_idx=0), lambda: [idx]),
        ("layernorm", lambda: nn.LayerNorm(4), lambda: tn().LayerNorm(4), lambda: [_x(2, 3, 4)]),
        ("layernorm_2d", lambda: nn.LayerNorm((3, 4), eps=1e-3),
         lambda: tn().LayerNorm((3, 4), eps=1e-3), lambda: [_x(2, 3, 4)]),
        ("layernorm_noaffine", lambda: nn.LayerNorm(4, elementwise_affine=False),
         lambda: tn().LayerNorm(4, elementwise_affine=False), lambda: [_x(3, 4)]),
        ("relu", nn.ReLU, lambda: tn().ReLU(), lambda: [_x(3, 4)]),
        ("gelu", nn.GELU, lambda: tn().GELU(), lambda: [_x(3, 4)]),
        ("gelu_tanh", lambda: nn.GELU("tanh"), lambda: tn().GELU("tanh"), lambda: [_x(3, 4)]),
        ("tanh", nn.Tanh, lambda: tn().Tanh(), lambda: [_x(3, 4)]),
        ("sigmoid", nn.Sigmoid, lambda: tn().Sigmoid(), lambda: [_x(3, 4)]),
        ("identity", nn.Identity, lambda: tn().Identity(), lambda: [_x(3, 4)]),
        ("softmax", lambda: nn.Softmax(-1), lambda: tn().Softmax(-1), lambda: [_x(3, 4)]),
        ("log_softmax", lambda: nn.LogSoftmax(0), lambda: tn().LogSoftmax(0),
         lambda: [_x(3, 4)]),
        ("dropout_eval", lambda: nn.Dropout(0.5).eval(), lambda: tn().Dropout(0.5).eval(),
         lambda: [_x(3, 4)]),
        ("mlp", lambda: nn.Sequential(nn.Linear(4, 8), nn.GELU(), nn.LayerNorm(8),
                                      nn.Linear(8, 2)),
         lambda: tn().Sequential(tn().Linear(4, 8), tn().GELU(), tn().LayerNorm(8),
                                 tn().Linear(8, 2)), lambda: [_x(6, 4)]),
    ]


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("case", _pairs(), ids=lambda c: c[0])
def test_layer_matches_torch(case, dtype):
    torch = _torch()
    torch.manual_seed(0)
    _, make_mg, make_torch, make_inputs = case
    compare_with_torch(make_mg(), make_torch(), make_inputs(), dtype)


def test_losses_match_torch():
    torch = _torch()
    logits, target = _x(5, 4), np.array([0, 3, 1, 1, 2])
    for kw in (dict(), dict(label_smoothing=0.1), dict(ignore_index=1), dict(reduction="sum")):
        compare_with_torch(nn.CrossEntropyLoss(**kw), torch.nn.CrossEntropyLoss(**kw),
                           [logits, target])
    compare_with_torch(nn.MSELoss(), torch.nn.MSELoss(), [_x(3, 2), _x(3, 2, seed=1)])


# ---- self-contained gradient checks (float64, no torch) -------------------------------------
GRADCHECKS = [
    ("linear", lambda: nn.Linear(3, 2), lambda: [mg.randn(2, 3)]),
    ("linear_nobias", lambda: nn.Linear(3, 2, bias=False), lambda: [mg.randn(4, 3)]),
    # the padding row's gradient is zero by design, not the true derivative: not looked up here
    ("embedding_padding", lambda: nn.Embedding(4, 2, padding_idx=1),
     lambda: [mg.tensor([[0, 2], [3, 0]])]),
    ("layernorm", lambda: nn.LayerNorm(3), lambda: [mg.randn(2, 3)]),
    ("relu", nn.ReLU, lambda: [mg.tensor([[-1.3, 0.4, 2.0]])]),
    ("gelu", nn.GELU, lambda: [mg.randn(2, 3)]),
    ("gelu_tanh", lambda: nn.GELU("tanh"), lambda: [mg.randn(2, 3)]),
    ("tanh", nn.Tanh, lambda: [mg.randn(2, 3)]),
    ("sigmoid", nn.Sigmoid, lambda: [mg.randn(2, 3)]),
    ("softmax", lambda: nn.Softmax(-1), lambda: [mg.randn(2, 3)]),
    ("log_softmax", lambda: nn.LogSoftmax(1), lambda: [mg.randn(2, 3)]),
    ("dropout_eval", lambda: nn.Dropout(0.3).eval(), lambda: [mg.randn(2, 3)]),
    ("identity", nn.Identity, lambda: [mg.randn(2, 3)]),
    ("mse_loss", nn.MSELoss, lambda: [mg.randn(3, 2), mg.randn(3, 2)]),
    ("mse_loss_sum", lambda: nn.MSELoss(reduction="sum"),
     lambda: [mg.randn(3, 2), mg.randn(3, 2)]),
    ("mse_loss_none", lambda: nn.MSELoss(reduction="none"),
     lambda: [mg.randn(3, 2), mg.randn(3, 2)]),
    ("cross_entropy_loss", lambda: nn.CrossEntropyLoss(label_smoothing=0.1, ignore_index=1),
     lambda: [mg.randn(5, 4), mg.tensor([0, 3, 1, 1, 2])]),
    ("mlp", lambda: nn.Sequential(nn.Linear(2, 3), nn.Tanh(), nn.Linear(3, 1)),
     lambda: [mg.randn(2, 2)]),
]


@pytest.mark.parametrize("case", GRADCHECKS, ids=lambda c: c[0])
def test_layer_gradcheck(case):
    mg.manual_seed(0)
    _, make, inputs = case
    gradcheck_module(make(), *inputs())


def test_dropout_training_gradcheck_with_fixed_mask():
    # the mask is random, so re-seed before every evaluation to check a fixed mask
    layer = nn.Dropout(0.4)
    x = mg.randn(3, 4, dtype=mg.float64, requires_grad=True)

    def fn(x):
        mg.manual_seed(5)
        return layer(x)
    assert mg.gradcheck(fn, [x])


# ---- behaviour that torch cannot check by equality --------------------------------------------
def test_dropout_statistics_scaling_and_modes():
    mg.manual_seed(0)
    layer = nn.Dropout(0.25)
    x = mg.ones(200, 200, requires_grad=True)
    y = layer(x)
    kept = y.numpy() != 0
    assert abs(kept.mean() - 0.75) < 0.01
    np.testing.assert_allclose(y.numpy()[kept], 1 / 0.75, rtol=1e-6)
    y.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), y.numpy(), rtol=1e-6)  # grad = mask / (1-p)
    layer.eval()
    assert layer(x) is x
    assert not nn.Dropout(1.0)(mg.ones(5)).numpy().any()
    assert nn.Dropout(0.0)(x) is x
    with pytest.raises(ValueError, match="probability"):
        nn.Dropout(1.5)


def test_dropout_is_reproducible_with_the_seed():
    layer = nn.Dropout(0.5)
    mg.manual_seed(3)
    a = layer(mg.ones(50)).numpy()
    mg.manual_seed(3)
    assert (layer(mg.ones(50)).numpy() == a).all()


def test_embedding_from_pretrained_copies_and_freezes_as_torch():
    table = mg.tensor(np.arange(6.0, dtype=np.float32).reshape(3, 2))
    emb = nn.Embedding.from_pretrained(table)
    assert not emb.weight.requires_grad and emb.weight.dtype == mg.float32
    assert emb(mg.tensor([2, 0])).tolist() == [[4.0, 5.0], [0.0, 1.0]]
    table.data[0, 0] = 9.0                               # a copy, not the caller's table
    assert emb.weight.numpy()[0, 0] == 0.0
    trained = nn.Embedding.from_pretrained(np.ones((3, 2)), freeze=False, padding_idx=1)
    assert trained.weight.requires_grad and trained.weight.numpy()[1].tolist() == [1, 1]
    trained(mg.tensor([1, 2])).sum().backward()          # the padding row: kept, not trained
    assert trained.weight.grad.numpy()[1].tolist() == [0, 0]
    with pytest.raises(ValueError, match=r"embeddings must be 2-D \(rows, dim\), got shape"):
        nn.Embedding.from_pretrained(np.ones(3))
    mg.manual_seed(0)
    want = mg.randn(2).tolist()
    mg.manual_seed(0)
    ids = nn.Embedding.from_pretrained(np.arange(4).reshape(2, 2))   # integers, frozen
    assert mg.randn(2).tolist() == want                 # no draws spent on a thrown-away init
    assert ids(mg.tensor([1])).tolist() == [[2, 3]]


def test_embedding_padding_row_is_zero_and_gets_no_gradient():
    mg.manual_seed(0)
    emb = nn.Embedding(4, 3, padding_idx=-1)
    assert emb.padding_idx == 3 and not emb.weight.numpy()[3].any()
    emb(mg.tensor([3, 3, 1])).sum().backward()
    assert not emb.weight.grad.numpy()[3].any() and emb.weight.grad.numpy()[1].tolist() == [1] * 3
    with pytest.raises(ValueError, match="padding_idx"):
        nn.Embedding(4, 3, padding_idx=4)


def test_linear_and_layer_errors():
    with pytest.raises(ValueError, match="expected last dim 3"):
        nn.Linear(3, 2)(mg.ones(2, 4))
    with pytest.raises(ValueError, match=r"weight must be 2-D \(out_features, in_features\)"):
        F.linear(mg.ones(2, 4), mg.ones(1, 2, 4))     # (a 1-D weight is x·w, as PyTorch)
    with pytest.raises(ValueError, match=r"bias has shape \(3,\), expected \(2,\)"):
        F.linear(mg.ones(2, 4), mg.ones(2, 4), mg.ones(3))
    with pytest.raises(ValueError, match="expects in_features=4"):
        F.linear(mg.tensor(1.0), mg.ones(2, 4))
    with pytest.raises(ValueError, match="normalized_shape"):
        nn.LayerNorm(3)(mg.ones(2, 4))
    with pytest.raises(IndexError, match="out of range"):
        nn.Embedding(3, 2)(mg.tensor([3]))


def test_layers_accept_device_and_dtype():
    lin = nn.Linear(3, 2, dtype=mg.float64, device="cpu")
    assert lin.weight.dtype == mg.float64 and lin.weight.device == "cpu"
    ln = nn.LayerNorm(3, dtype="float64")
    assert ln.weight.dtype == mg.float64


def test_zero_size_linear_layers_work_as_torch():
    m = nn.Linear(0, 2)
    assert m.weight.shape == (2, 0) and m.bias.tolist() == [0.0, 0.0]
    x = mg.ones(3, 0, requires_grad=True)
    y = m(x)
    assert y.shape == (3, 2)
    y.sum().backward()
    assert m.weight.grad.shape == (2, 0) and m.bias.grad.tolist() == [3.0, 3.0]
    assert x.grad.shape == (3, 0)
    assert nn.Linear(2, 0)(mg.ones(3, 2)).shape == (3, 0)


def test_losses_by_their_formulas():
    """nn.MSELoss and nn.CrossEntropyLoss against NumPy (no torch needed)."""
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 2)), rng.standard_normal((3, 2))
    ta, tb = mg.tensor(a, dtype=mg.float64), mg.tensor(b, dtype=mg.float64)
    for reduction, want in (("mean", ((a - b) ** 2).mean()), ("sum", ((a - b) ** 2).sum()),
                            ("none", (a - b) ** 2)):
        np.testing.assert_allclose(nn.MSELoss(reduction=reduction)(ta, tb).numpy(), want,
                                   rtol=1e-12)
    logits, target = rng.standard_normal((5, 4)), np.array([0, 3, 1, 1, 2])
    logp = logits - np.log(np.exp(logits).sum(-1, keepdims=True))
    nll = -logp[np.arange(5), target]
    keep = target != 1
    loss = nn.CrossEntropyLoss(ignore_index=1)(mg.tensor(logits, dtype=mg.float64), target)
    np.testing.assert_allclose(loss.item(), nll[keep].mean(), rtol=1e-12)
    smooth = 0.9 * nll - 0.1 * logp.mean(-1)
    loss = nn.CrossEntropyLoss(label_smoothing=0.1)(mg.tensor(logits, dtype=mg.float64), target)
    np.testing.assert_allclose(loss.item(), smooth.mean(), rtol=1e-12)
    x = mg.randn(2, 3)
    assert nn.Identity()(x) is x


# ---- each module's defining formula and arguments, without torch ------------------------------
def test_linear_bias_is_symmetric_around_zero():
    mg.manual_seed(0)
    b = nn.Linear(16, 2000).bias.numpy()           # PyTorch: U(-1/√in, 1/√in)
    assert b.min() < -0.9 / 4 and b.max() > 0.9 / 4 and abs(b.mean()) < 0.02


def test_layer_norm_uses_its_eps_and_bias_flag():
    x = np.array([[1.0, 2.0, 4.0, 9.0]])
    for eps in (1e-5, 0.5, 3.0):
        mean, var = x.mean(-1, keepdims=True), x.var(-1, keepdims=True)   # biased variance
        want = (x - mean) / np.sqrt(var + eps)                               # eps inside √
        got = nn.LayerNorm(4, eps=eps).double()(mg.tensor(x, dtype=mg.float64)).numpy()
        np.testing.assert_allclose(got, want, rtol=1e-12)
    ln = nn.LayerNorm(4, bias=False)
    assert ln.bias is None and [n for n, _ in ln.named_parameters()] == ["weight"]
    ln = nn.LayerNorm(4, elementwise_affine=False)
    assert ln.weight is None and ln.bias is None and not list(ln.parameters())


def test_activation_modules_by_their_formulas():
    x = np.linspace(-3, 3, 13).reshape(1, 13)
    t = mg.tensor(x, dtype=mg.float64)
    np.testing.assert_allclose(nn.Tanh()(t).numpy(), np.tanh(x), rtol=1e-12)
    np.testing.assert_allclose(nn.Sigmoid()(t).numpy(), 1 / (1 + np.exp(-x)), rtol=1e-12)
    np.testing.assert_allclose(nn.ReLU()(t).numpy(), np.maximum(x, 0), rtol=1e-12)
    tanh_gelu = 0.5 * x * (1 + np.tanh(np.sqrt(2 / np.pi) * (x + 0.044715 * x ** 3)))
    np.testing.assert_allclose(nn.GELU("tanh")(t).numpy(), tanh_gelu, rtol=1e-12)
    from scipy.special import erf
    np.testing.assert_allclose(nn.GELU()(t).numpy(), 0.5 * x * (1 + erf(x / np.sqrt(2))),
                               rtol=1e-12)


def test_softmax_modules_normalise_along_their_dim():
    x = np.random.default_rng(0).standard_normal((3, 4))
    t = mg.tensor(x, dtype=mg.float64)
    e = np.exp(x)
    np.testing.assert_allclose(nn.Softmax(-1)(t).numpy(), e / e.sum(-1, keepdims=True),
                               rtol=1e-12)
    np.testing.assert_allclose(nn.Softmax(0)(t).numpy(), e / e.sum(0, keepdims=True),
                               rtol=1e-12)
    np.testing.assert_allclose(nn.LogSoftmax(0)(t).numpy(),
                               x - np.log(e.sum(0, keepdims=True)), rtol=1e-12)
    np.testing.assert_allclose(nn.LogSoftmax(-1)(t).numpy(),
                               x - np.log(e.sum(-1, keepdims=True)), rtol=1e-12)


def test_cross_entropy_loss_module_reductions():
    rng = np.random.default_rng(1)
    logits, target = rng.standard_normal((5, 4)), np.array([0, 3, 1, 1, 2])
    nll = -(logits - np.log(np.exp(logits).sum(-1, keepdims=True)))[np.arange(5), target]
    t = mg.tensor(logits, dtype=mg.float64)
    np.testing.assert_allclose(nn.CrossEntropyLoss(reduction="sum")(t, target).item(),
                               nll.sum(), rtol=1e-12)
    np.testing.assert_allclose(nn.CrossEntropyLoss(reduction="none")(t, target).numpy(), nll,
                               rtol=1e-12)


@pytest.mark.parametrize("norm_type", [2.0, 1.0, math.inf])
def test_embedding_max_norm_renormalises_the_rows_it_picks(norm_type):
    w = np.random.default_rng(0).normal(0, 2, (6, 4))
    emb = nn.Embedding.from_pretrained(mg.tensor(w), freeze=False, max_norm=1.5,
                                       norm_type=norm_type)
    out = emb(mg.tensor([[0, 2, 2], [5, 1, 0]]))
    out.sum().backward()
    got = emb.weight.detach().numpy()
    norms = np.linalg.norm(got, ord=norm_type, axis=1)
    assert (norms[[0, 1, 2, 5]] <= 1.5 + 1e-6).all()               # picked: at most max_norm
    np.testing.assert_array_equal(got[[3, 4]], w[[3, 4]])            # the others untouched
    np.testing.assert_allclose(out.detach().numpy()[0, 0], got[0])
    torch = pytest.importorskip("torch")
    te = torch.nn.Embedding.from_pretrained(torch.tensor(w), freeze=False, max_norm=1.5,
                                            norm_type=norm_type)
    te(torch.tensor([[0, 2, 2], [5, 1, 0]])).sum().backward()
    np.testing.assert_allclose(got, te.weight.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(emb.weight.grad.numpy(), te.weight.grad.numpy())


def test_embedding_refuses_what_it_does_not_implement():
    with pytest.raises(NotImplementedError, match="sparse gradients are not implemented"):
        nn.Embedding(3, 2, sparse=True)
    with pytest.raises(TypeError, match="scale_grad_by_freq must be True or False"):
        nn.Embedding(3, 2, scale_grad_by_freq=1)
    with pytest.raises(ValueError, match="max_norm and norm_type must be > 0"):
        nn.Embedding(3, 2, max_norm=-1.0)(mg.tensor([0]))
    assert "max_norm=1.0" in repr(nn.Embedding(3, 2, max_norm=1.0))


def test_embedding_scale_grad_by_freq_as_pytorch():
    """Each row's gradient over how often the batch picked it (PyTorch's figures), the
    padding row still held at zero."""
    e = nn.Embedding(5, 2, scale_grad_by_freq=True, padding_idx=0)
    assert repr(e) == "Embedding(5, 2, padding_idx=0, scale_grad_by_freq=True)"
    idx = mg.tensor([[1, 1, 2], [0, 1, 3]])
    e(idx).sum().backward()
    assert e.weight.grad.tolist() == [[0, 0], [1, 1], [1, 1], [1, 1], [0, 0]]
    w = mg.zeros(5, 2, requires_grad=True)
    out = F.embedding(idx, w, scale_grad_by_freq=True)
    (out * mg.arange(12.0).reshape(2, 3, 2)).sum().backward()
    np.testing.assert_allclose(w.grad.numpy(), [[6, 7], [10 / 3, 13 / 3], [4, 5], [10, 11],
                                                [0, 0]], rtol=1e-6)
    # (not the derivative on purpose, so no gradcheck; under create_graph it is the same)
    g, = mg.grad((F.embedding(idx, w, scale_grad_by_freq=True) ** 2).sum(), w,
                 create_graph=True)
    np.testing.assert_allclose(g.detach().numpy()[1], 2 * w.detach().numpy()[1])
    pre = nn.Embedding.from_pretrained(mg.ones(3, 2), freeze=False, scale_grad_by_freq=True)
    pre(mg.tensor([2, 2, 2, 1])).sum().backward()
    assert pre.weight.grad.tolist() == [[0, 0], [1, 1], [1, 1]]
