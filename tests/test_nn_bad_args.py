"""Bad arguments to the nn layers and to minigrad.functional that used to fail with a bare
Python or NumPy error (an AttributeError on a list, NumPy's broadcast words) or to compute
something PyTorch refuses (an integer input cast to float, float64 mixed into float32
norms); each now refused with a message naming the op, the argument and what is valid.
And what PyTorch computes that was refused here: a 1-D weight or a broadcast bias in
F.linear, dropout_p = 1 in attention, a NumPy integer as LayerNorm's shape."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn

x = mg.ones(2, 3)
x4 = mg.ones(2, 4, 3, 3)
w = mg.ones(2, 3)
q = mg.ones(2, 3, 4, 8)
idx = mg.tensor([0, 1])

NOT_TENSORS = {
    "Linear list": (lambda: nn.Linear(3, 2)([[1.0, 2.0, 3.0]]),
                    r"Linear\(3, 2\): input must be a Tensor, got list"),
    "linear None": (lambda: F.linear(None, w), "linear: input must be a Tensor, got NoneType"),
    "linear weight": (lambda: F.linear(x, [[1.0] * 3]), "linear: weight must be a Tensor"),
    "linear bias": (lambda: F.linear(x, w, [1.0, 2.0]), "linear: bias must be a Tensor"),
    "LayerNorm list": (lambda: nn.LayerNorm(3)([[1.0, 2.0, 3.0]]),
                       "layer_norm: input must be a Tensor, got list"),
    "layer_norm weight": (lambda: F.layer_norm(x, (3,), [1.0] * 3),
                          "layer_norm: weight must be a Tensor"),
    "rms_norm list": (lambda: F.rms_norm([[1.0, 2.0]], (2,)), "rms_norm: input must be"),
    "Dropout list": (lambda: nn.Dropout(0.5)([1.0, 2.0]), "dropout: input must be a Tensor"),
    "dropout eval None": (lambda: F.dropout(None, 0.5, training=False),
                          "dropout: input must be a Tensor"),
    "dropout2d list": (lambda: F.dropout2d([[1.0]], 0.5), "dropout2d: input must be"),
    "alpha_dropout None": (lambda: F.alpha_dropout(None, 0.5), "alpha_dropout: input must"),
    "cross_entropy None": (lambda: F.cross_entropy(None, idx),
                           "cross_entropy: input must be a Tensor"),
    "nll_loss target None": (lambda: F.nll_loss(x, None), "nll_loss: target must be"),
    "normalize None": (lambda: F.normalize(None), "normalize: input must be a Tensor"),
    "cosine list": (lambda: F.cosine_similarity(x, [[1.0] * 3] * 2),
                    "cosine_similarity: x2 must be a Tensor"),
    "pad None": (lambda: F.pad(None, (1, 1)), "pad: input must be a Tensor"),
    "batch_norm None": (lambda: F.batch_norm(None, None, None, training=True),
                        "batch_norm: input must be a Tensor"),
    "batch_norm stats list": (lambda: F.batch_norm(x, [0.0] * 3, [1.0] * 3),
                              "batch_norm: running_mean must be a Tensor"),
    "sdpa None": (lambda: F.scaled_dot_product_attention(None, q, q),
                  "scaled_dot_product_attention: query must be a Tensor"),
    "sdpa value list": (lambda: F.scaled_dot_product_attention(q, q, [1.0]),
                        "value must be a Tensor, got list"),
    "MHA key None": (lambda: nn.MultiheadAttention(8, 2)(mg.ones(3, 2, 8), None, None),
                     "MultiheadAttention: key must be a Tensor"),
    "embedding weight list": (lambda: F.embedding(idx, [[1.0], [2.0]]),
                              "embedding: weight must be a Tensor"),
}


@pytest.mark.parametrize("name", NOT_TENSORS)
def test_a_non_tensor_argument_is_named(name):
    call, words = NOT_TENSORS[name]
    with pytest.raises(TypeError, match=words):
        call()


BAD_SETTINGS = {
    "LayerNorm float": (lambda: nn.LayerNorm(2.0), TypeError,
                        "LayerNorm: normalized_shape must be an int or a tuple of ints"),
    "LayerNorm None": (lambda: nn.LayerNorm(None), TypeError, "normalized_shape must be"),
    "RMSNorm float": (lambda: nn.RMSNorm(2.0), TypeError, "RMSNorm: normalized_shape"),
    "Dropout str": (lambda: nn.Dropout("0.5"), TypeError, "Dropout: p must be a number"),
    "Dropout None": (lambda: nn.Dropout(None), TypeError, "Dropout: p must be a number"),
    "Dropout2d big": (lambda: nn.Dropout2d(1.5), ValueError, r"Dropout2d: probability"),
    "padding_idx float": (lambda: nn.Embedding(5, 3, padding_idx=1.0), TypeError,
                          "Embedding: padding_idx must be an int"),
    "padding_idx str": (lambda: nn.Embedding(5, 3, padding_idx="1"), TypeError,
                        "Embedding: padding_idx must be an int"),
    "max_norm str": (lambda: nn.Embedding(5, 3, max_norm="1"), TypeError,
                     "Embedding: max_norm must be a number"),
    "F max_norm str": (lambda: F.embedding(idx, mg.ones(5, 3), max_norm="1"), TypeError,
                       "embedding: max_norm must be a number"),
    "norm_type str": (lambda: F.embedding(idx, mg.ones(5, 3), max_norm=1.0, norm_type="2"),
                      TypeError, "embedding: norm_type must be a number"),
    "BatchNorm momentum": (lambda: nn.BatchNorm1d(3, momentum="x"), TypeError,
                           "BatchNorm1d: momentum must be a number"),
    "batch_norm eps": (lambda: F.batch_norm(x, None, None, training=True, eps="x"),
                       TypeError, "batch_norm: eps must be a number"),
    "rms_norm eps": (lambda: F.rms_norm(x, (3,), eps="a"), TypeError,
                     "rms_norm: eps must be a number"),
    "cosine eps": (lambda: F.cosine_similarity(x, x, eps="a"), TypeError,
                   "cosine_similarity: eps must be a number"),
    "MHA kdim": (lambda: nn.MultiheadAttention(8, 2, kdim=4.0), TypeError,
                 "MultiheadAttention: kdim must be an int"),
    "MHA dropout": (lambda: nn.MultiheadAttention(8, 2, dropout=1.5), ValueError,
                    r"dropout must be in \[0, 1\]"),
    "sdpa dropout_p str": (lambda: F.scaled_dot_product_attention(q, q, q, dropout_p="0.1"),
                           TypeError, "dropout_p must be a number"),
    "sdpa dropout_p big": (lambda: F.scaled_dot_product_attention(q, q, q, dropout_p=1.5),
                           ValueError, r"dropout_p must be in \[0, 1\]"),
    "KLDivLoss reduction": (lambda: nn.KLDivLoss(reduction="batch"), ValueError,
                            "'mean', 'batchmean', 'sum' or 'none'"),
    "l1_loss shapes": (lambda: F.l1_loss(mg.ones(4, 3), mg.ones(4)), ValueError,
                       r"l1_loss: shapes \(4, 3\) and \(4,\) do not broadcast"),
    "mse_loss shapes": (lambda: F.mse_loss(mg.ones(4, 3), mg.ones(2)), ValueError,
                        "mse_loss: shapes"),
}


@pytest.mark.parametrize("name", BAD_SETTINGS)
def test_a_bad_setting_is_named(name):
    call, error, words = BAD_SETTINGS[name]
    with pytest.raises(error, match=words):
        call()


def test_sdpa_batch_dims_that_do_not_broadcast_are_named():
    """Not NumPy's "objects cannot be broadcast to a single shape"; fewer k/v heads than
    q's is grouped-query attention, which enable_gqa asks for."""
    with pytest.raises(ValueError, match=r"batch dims .* must be equal or broadcast$"):
        F.scaled_dot_product_attention(q, mg.ones(3, 3, 6, 8), mg.ones(3, 3, 6, 5))
    kv = mg.ones(2, 3, 6, 8)
    with pytest.raises(ValueError, match="need enable_gqa=True"):
        F.scaled_dot_product_attention(mg.ones(2, 6, 4, 8), kv, kv)
    assert F.scaled_dot_product_attention(mg.ones(2, 6, 4, 8), kv, kv,
                                          enable_gqa=True).shape == (2, 6, 4, 8)
    assert F.scaled_dot_product_attention(q, kv[:1], kv[:1]).shape == (2, 3, 4, 8)


# ---- what PyTorch refuses was computed, cast or promoted silently ------------------------
def test_an_integer_input_to_linear_is_refused():
    """Token ids fed to a Linear (meant for an Embedding) were cast to float."""
    with pytest.raises(TypeError, match="linear: input has dtype int64 but weight float32"):
        nn.Linear(3, 2)(mg.tensor([[1, 2, 3]]))
    with pytest.raises(TypeError, match="input has dtype int64"):
        nn.MultiheadAttention(4, 2)(*[mg.ones(3, 2, 4, dtype=mg.int64)] * 3)
    with pytest.raises(TypeError, match="float64 and float32"):
        F.linear(x.double(), w)


@pytest.mark.parametrize("call, words", [
    (lambda: nn.LayerNorm(3)(x.double()), "layer_norm: weight has dtype float32 but the "
                                          "input float64"),
    (lambda: F.layer_norm(x, (3,), x[0].double()), "weight has dtype float64 but the input "
                                                   "float32"),
    (lambda: nn.GroupNorm(2, 4)(x4.double()), "group_norm: weight has dtype float32"),
    (lambda: F.group_norm(x4, 2, mg.ones(4, dtype=mg.float64)), "group_norm: weight"),
    (lambda: nn.BatchNorm2d(4)(x4.double()), "batch_norm: running_mean has dtype float32"),
    (lambda: F.batch_norm(x, mg.zeros(3, dtype=mg.float64), mg.ones(3, dtype=mg.float64),
                          training=True), "running_mean has dtype float64 but the input"),
    (lambda: F.instance_norm(x4, weight=mg.ones(4, dtype=mg.float64)), "instance_norm"),
])
def test_float64_mixed_into_a_norm_is_refused(call, words):
    """NumPy promoted the output to float64 (or normalised with float64 statistics)."""
    with pytest.raises(TypeError, match=words):
        call()


def test_float16_inputs_keep_float32_norm_parameters():
    """PyTorch's mixed precision: a float16 input with float32 weights is fine, and stays
    float16."""
    h = mg.tensor([[1.0, 2.0, 4.0], [0.0, 1.0, -1.0]], dtype=mg.float16)
    for layer in (nn.LayerNorm(3), nn.RMSNorm(3), nn.BatchNorm1d(3)):
        assert layer(h).dtype == mg.float16
    assert nn.GroupNorm(1, 3)(h.unsqueeze(-1)).dtype == mg.float16


def test_rms_norm_keeps_the_input_dtype():
    """A float64 weight scales a float32 input's result, which stays float32 (PyTorch's);
    a float64 input with a float32 weight stays float64."""
    a = mg.tensor([[3.0, 4.0]])
    y = F.rms_norm(a, (2,), mg.tensor([1.0, 2.0], dtype=mg.float64), eps=0.0)
    rms = np.sqrt(12.5)
    assert y.dtype == mg.float32
    np.testing.assert_allclose(y.numpy(), [[3 / rms, 8 / rms]], rtol=1e-6)
    assert F.rms_norm(a.double(), (2,), mg.ones(2)).dtype == mg.float64


# ---- what PyTorch computes, now computed too --------------------------------------------
def test_layer_norm_takes_a_numpy_integer_shape():
    assert nn.LayerNorm(np.int64(3)).normalized_shape == (3,)
    assert nn.RMSNorm([np.int32(2), 3]).normalized_shape == (2, 3)


def test_linear_with_a_1d_weight_or_a_broadcast_bias():
    """weight (in,) gives x·w with the last dim gone; a bias broadcast to the output is
    added (PyTorch's addmm rule), but not one that would grow it."""
    a = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]])
    np.testing.assert_allclose(F.linear(a, mg.tensor([1.0, 0.0, -1.0])).numpy(), [-2, -2])
    np.testing.assert_allclose(F.linear(a, mg.tensor([1.0, 0.0, -1.0]), mg.tensor(1.0)).numpy(),
                               [-1, -1])
    y = F.linear(a, mg.eye(3)[:2], mg.tensor([[10.0], [20.0]]))
    np.testing.assert_allclose(y.numpy(), [[11, 12], [24, 25]])
    with pytest.raises(ValueError, match=r"bias has shape \(3, 2, 2\), expected \(2,\)"):
        F.linear(a, mg.eye(3)[:2], mg.ones(3, 2, 2))
    with pytest.raises(ValueError, match="must match the 1-D weight's 2"):
        F.linear(a, mg.ones(2))


def test_linear_1d_weight_and_broadcast_bias_gradcheck():
    r = np.random.default_rng(0)
    a, v, m = (mg.tensor(r.standard_normal(s), requires_grad=True) for s in
               ((2, 3), (3,), (4, 3)))
    b = mg.tensor(r.standard_normal((2, 1)), requires_grad=True)
    assert mg.gradcheck(lambda a, v: F.linear(a, v), (a, v))
    assert mg.gradcheck(lambda a, m, b: F.linear(a, m, b), (a, m, b))


def test_attention_dropout_of_one_drops_everything():
    """dropout_p = 1 (1/(1 - p) has no value): a zero output and zero gradients, as
    PyTorch's; MultiheadAttention(dropout=1) in training leaves out_proj's bias alone."""
    qq = mg.randn(2, 3, 4, 8, requires_grad=True)
    out = F.scaled_dot_product_attention(qq, qq, qq, dropout_p=1.0)
    assert out.shape == (2, 3, 4, 8) and not out.numpy().any()
    out.sum().backward()
    assert not qq.grad.numpy().any()
    mha = nn.MultiheadAttention(8, 2, dropout=1.0)
    nn.init.normal_(mha.out_proj.bias)
    s = mg.randn(3, 2, 8)
    for need in (True, False):
        y, _ = mha(s, s, s, need_weights=need)
        np.testing.assert_allclose(y.detach().numpy(),
                                   np.broadcast_to(mha.out_proj.bias.detach().numpy(), (3, 2, 8)))


# ---- the same against PyTorch -------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:Mismatch dtype")   # torch.rms_norm's own
def test_against_torch(torch):
    tF = torch.nn.functional
    r = np.random.default_rng(1)
    a, v, m = (r.standard_normal(s).astype(np.float32) for s in ((4, 3), (3,), (2, 3)))
    b2 = r.standard_normal((4, 1)).astype(np.float32)
    pairs = [
        (F.linear(mg.tensor(a), mg.tensor(v)), tF.linear(torch.tensor(a), torch.tensor(v))),
        (F.linear(mg.tensor(a), mg.tensor(m), mg.tensor(b2)),
         tF.linear(torch.tensor(a), torch.tensor(m), torch.tensor(b2))),
        (F.rms_norm(mg.tensor(a), (3,), mg.tensor(v.astype(np.float64))),
         tF.rms_norm(torch.tensor(a), (3,), torch.tensor(v.astype(np.float64)))),
        (F.scaled_dot_product_attention(*[mg.tensor(a)] * 3, dropout_p=1.0),
         tF.scaled_dot_product_attention(*[torch.tensor(a)] * 3, dropout_p=1.0)),
    ]
    for mine, theirs in pairs:
        assert mine.shape == tuple(theirs.shape)
        assert str(mine.dtype) == str(theirs.dtype).replace("torch.", "")
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-5, atol=1e-6)
    for bad in (lambda t: t.nn.LayerNorm(3)(t.ones(2, 3, dtype=t.float64)),
                lambda t: t.nn.Linear(3, 2)(t.ones(2, 3, dtype=t.int64)),
                lambda t: t.nn.functional.batch_norm(t.ones(2, 3), t.zeros(3, dtype=t.float64),
                                                     t.ones(3, dtype=t.float64))):
        for lib in (mg, torch):                      # both refuse
            with pytest.raises((TypeError, RuntimeError)):
                bad(lib)
