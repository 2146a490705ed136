"""minitransformer layers (article 2.2.4 - 2.2.5): positional encoding, feed-forward,
Add & Norm, encoder and decoder layers and stacks — against the closed form, against
PyTorch's TransformerEncoderLayer / TransformerDecoderLayer with copied weights (post-norm
and pre-norm, outputs and gradients), and by gradcheck in float64."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
from minitransformer import (AddNorm, Decoder, DecoderLayer, Encoder, EncoderLayer,
                             FeedForward, LearnedPositionalEmbedding,
                             SinusoidalPositionalEncoding, causal_mask, combine_masks,
                             padding_mask, sinusoidal_table)
from mt_helpers import assert_all_close, copy_by_name, gradcheck_module, grads_by_name


# ---- positional encoding (2.2.5.2) -------------------------------------------------------------
@pytest.mark.parametrize("max_len, d", [(4, 4), (50, 16), (7, 5)])
def test_sinusoidal_table_equals_closed_form(max_len, d):
    pe = sinusoidal_table(max_len, d, dtype=mg.float64).numpy()
    for pos in range(max_len):
        for i in range((d + 1) // 2):
            angle = pos / 10000 ** (2 * i / d)
            assert pe[pos, 2 * i] == pytest.approx(math.sin(angle), abs=1e-15)
            if 2 * i + 1 < d:
                assert pe[pos, 2 * i + 1] == pytest.approx(math.cos(angle), abs=1e-15)


def test_sinusoidal_table_d4_is_the_articles_matrix():
    """Article 2.2.5.2 builds P for d=4: columns sin(pos), cos(pos), sin(pos/100), cos(pos/100)."""
    pe = sinusoidal_table(3, 4, dtype=mg.float64).numpy()
    pos = np.arange(3.0)
    want = np.stack([np.sin(pos), np.cos(pos), np.sin(pos / 100), np.cos(pos / 100)], 1)
    np.testing.assert_allclose(pe, want, atol=1e-15)


def test_positional_encodings_add_to_the_input():
    x = mg.randn(2, 5, 8)
    pe = SinusoidalPositionalEncoding(8, max_len=10).eval()
    np.testing.assert_allclose(pe(x).numpy(), x.numpy() + pe.pe.numpy()[:5], atol=1e-6)
    assert "pe" in pe.state_dict() and not list(pe.parameters())
    learned = LearnedPositionalEmbedding(10, 8)
    w = learned.embedding.weight.numpy()
    np.testing.assert_allclose(learned(x).numpy(), x.numpy() + w[:5], atol=1e-6)
    gradcheck_module(learned, mg.randn(1, 3, 8, dtype=mg.float64, requires_grad=True))


# ---- feed-forward (2.2.5.1) and Add & Norm (2.2.5.3, 2.2.5.4) ----------------------------------
def test_feedforward_is_linear_relu_linear():
    mg.manual_seed(0)
    ffn = FeedForward(4, 8, dropout=0.0).double()
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    W1, b1 = ffn.linear1.weight.numpy(), ffn.linear1.bias.numpy()
    W2, b2 = ffn.linear2.weight.numpy(), ffn.linear2.bias.numpy()
    want = np.maximum(x @ W1.T + b1, 0) @ W2.T + b2
    np.testing.assert_allclose(ffn(mg.tensor(x)).numpy(), want, atol=1e-12)
    gradcheck_module(FeedForward(3, 5, activation="gelu"),
                     mg.randn(2, 3, dtype=mg.float64, requires_grad=True))
    with pytest.raises(ValueError, match="unknown activation"):
        FeedForward(4, 8, activation="swishy")


@pytest.mark.parametrize("norm_first", [False, True])
def test_add_norm_wirings(norm_first):
    mg.manual_seed(1)
    an = AddNorm(4, dropout=0.0, norm_first=norm_first).double()
    lin = nn.Linear(4, 4).double()
    x = mg.randn(2, 3, 4, dtype=mg.float64)
    ln = lambda h: nn.functional.layer_norm(h, (4,), an.weight, an.bias)   # noqa: E731
    want = x + lin(ln(x)) if norm_first else ln(x + lin(x))
    np.testing.assert_allclose(an(x, lin).numpy(), want.numpy(), atol=1e-12)
    gradcheck_module(an, mg.randn(2, 4, dtype=mg.float64, requires_grad=True), sublayer=lin)


def test_learned_positions_start_as_gpt2s():
    mg.manual_seed(0)
    w = LearnedPositionalEmbedding(512, 64).embedding.weight.numpy()
    assert abs(w.std() - 0.02) < 0.001 and abs(w.mean()) < 0.001


def test_dropout_sits_on_the_sublayer_output_and_inside_the_ffn():
    """Under one seed each module equals its formula written with F.dropout: the FFN drops
    between its two Linears; Add & Norm drops the sublayer's output before the residual
    add, in both wirings (PyTorch's dropout1/dropout2)."""
    x = mg.randn(2, 3, 4)
    ffn = FeedForward(4, 8, dropout=0.4)
    mg.manual_seed(2)
    got = ffn(x).numpy()
    mg.manual_seed(2)
    want = ffn.linear2(F.dropout(F.relu(ffn.linear1(x)), 0.4))
    np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6)
    lin = nn.Linear(4, 4)
    for norm_first in (False, True):
        an = AddNorm(4, dropout=0.4, norm_first=norm_first)
        ln = lambda h: F.layer_norm(h, (4,), an.weight, an.bias)   # noqa: E731
        mg.manual_seed(3)
        got = an(x, lin).numpy()
        mg.manual_seed(3)
        want = x + F.dropout(lin(ln(x)), 0.4) if norm_first else ln(x + F.dropout(lin(x), 0.4))
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-6, atol=1e-6)
        assert not np.allclose(got, an.eval()(x, lin).numpy(), atol=1e-3)


# ---- encoder / decoder layers against PyTorch ------------------------------------------------
def _probe(out, torch=None):
    """A fixed, non-uniform linear functional of the output, so backward checks everything."""
    w = np.sin(np.arange(int(np.prod(out.shape)))).reshape(out.shape)
    if torch is None:
        return (out * mg.tensor(w)).sum()
    return (out * torch.tensor(w)).sum()


@pytest.mark.parametrize("norm_first", [False, True])
@pytest.mark.parametrize("activation", ["relu", "gelu"])
def test_encoder_layer_matches_torch(norm_first, activation):
    torch = pytest.importorskip("torch")
    mg.manual_seed(2)
    d, h, ff, B, S = 8, 2, 16, 2, 5
    ours = EncoderLayer(d, h, ff, dropout=0.0, activation=activation,
                        norm_first=norm_first).double().eval()
    ref = torch.nn.TransformerEncoderLayer(d, h, ff, dropout=0.0, activation=activation,
                                           batch_first=True, norm_first=norm_first,
                                           dtype=torch.float64).eval()
    copy_by_name(ours, ref, torch)
    src = [[4, 5, 6, 7, 8], [4, 5, 6, 0, 0]]
    x = np.random.default_rng(3).standard_normal((B, S, d))
    xm = mg.tensor(x, requires_grad=True)
    out = ours(xm, src_mask=padding_mask(src, 0))
    _probe(out).backward()
    xt = torch.tensor(x, requires_grad=True)
    tout = ref(xt, src_key_padding_mask=torch.tensor(np.array(src) == 0))
    _probe(tout, torch).backward()
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), atol=1e-11)
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), atol=1e-11)
    assert_all_close(*grads_by_name(ours, ref), atol=1e-10)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_matches_torch(norm_first):
    torch = pytest.importorskip("torch")
    mg.manual_seed(4)
    d, h, ff, B, T, S = 8, 2, 16, 2, 4, 5
    ours = DecoderLayer(d, h, ff, dropout=0.0, norm_first=norm_first).double().eval()
    ref = torch.nn.TransformerDecoderLayer(d, h, ff, dropout=0.0, batch_first=True,
                                           norm_first=norm_first, dtype=torch.float64).eval()
    copy_by_name(ours, ref, torch)
    rng = np.random.default_rng(5)
    x, mem = rng.standard_normal((B, T, d)), rng.standard_normal((B, S, d))
    src, tgt = [[4, 5, 6, 7, 8], [4, 5, 0, 0, 0]], [[1, 3, 4, 5], [1, 3, 0, 0]]
    xm, mm = mg.tensor(x, requires_grad=True), mg.tensor(mem, requires_grad=True)
    out = ours(xm, mm, tgt_mask=combine_masks(causal_mask(T), padding_mask(tgt, 0)),
               memory_mask=padding_mask(src, 0))
    _probe(out).backward()
    xt, mt = torch.tensor(x, requires_grad=True), torch.tensor(mem, requires_grad=True)
    tout = ref(xt, mt, tgt_mask=~torch.tensor(np.tril(np.ones((T, T), bool))),
               tgt_key_padding_mask=torch.tensor(np.array(tgt) == 0),
               memory_key_padding_mask=torch.tensor(np.array(src) == 0))
    _probe(tout, torch).backward()
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), atol=1e-11)
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), atol=1e-11)
    np.testing.assert_allclose(mm.grad.numpy(), mt.grad.numpy(), atol=1e-11)
    assert_all_close(*grads_by_name(ours, ref), atol=1e-10)


@pytest.mark.parametrize("norm_first", [False, True])
def test_stacks_match_torch(norm_first):
    torch = pytest.importorskip("torch")
    mg.manual_seed(6)
    d, h, ff, n, B, T, S = 8, 2, 12, 2, 2, 3, 4
    enc = Encoder(d, h, ff, n, dropout=0.0, norm_first=norm_first).double().eval()
    dec = Decoder(d, h, ff, n, dropout=0.0, norm_first=norm_first).double().eval()
    kw = dict(dropout=0.0, batch_first=True, norm_first=norm_first, dtype=torch.float64)
    tenc = torch.nn.TransformerEncoder(
        torch.nn.TransformerEncoderLayer(d, h, ff, **kw), n, enable_nested_tensor=False,
        norm=torch.nn.LayerNorm(d, dtype=torch.float64) if norm_first else None).eval()
    tdec = torch.nn.TransformerDecoder(
        torch.nn.TransformerDecoderLayer(d, h, ff, **kw), n,
        norm=torch.nn.LayerNorm(d, dtype=torch.float64) if norm_first else None).eval()
    copy_by_name(enc, tenc, torch)                        # whole stacks, by name
    copy_by_name(dec, tdec, torch)
    rng = np.random.default_rng(7)
    x, y = rng.standard_normal((B, S, d)), rng.standard_normal((B, T, d))
    mem = enc(mg.tensor(x))
    out = dec(mg.tensor(y), mem, tgt_mask=causal_mask(T))
    tmem = tenc(torch.tensor(x))
    tout = tdec(torch.tensor(y), tmem, tgt_mask=~torch.tensor(np.tril(np.ones((T, T), bool))))
    np.testing.assert_allclose(mem.numpy(), tmem.detach().numpy(), atol=1e-11)
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), atol=1e-11)


# ---- self-contained checks: gradcheck and properties -----------------------------------------
@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_gradcheck(norm_first):
    mg.manual_seed(8)
    layer = EncoderLayer(4, 2, 6, dropout=0.0, norm_first=norm_first)
    x = mg.randn(2, 3, 4, dtype=mg.float64, requires_grad=True)
    gradcheck_module(layer, x, padding_mask([[1, 1, 1], [1, 1, 0]], 0))


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_gradcheck(norm_first):
    mg.manual_seed(9)
    layer = DecoderLayer(4, 2, 6, dropout=0.0, norm_first=norm_first)
    x = mg.randn(1, 3, 4, dtype=mg.float64, requires_grad=True)
    mem = mg.randn(1, 2, 4, dtype=mg.float64, requires_grad=True)
    gradcheck_module(layer, x, mem, causal_mask(3))


def test_decoder_is_causal_over_the_target():
    mg.manual_seed(10)
    dec = Decoder(8, 2, 16, 2, dropout=0.0).eval()
    mem = mg.randn(1, 4, 8)
    y = np.random.default_rng(11).standard_normal((1, 5, 8)).astype(np.float32)
    y2 = y.copy()
    y2[:, 3:] += 1.0
    a = dec(mg.tensor(y), mem, tgt_mask=causal_mask(5)).numpy()
    b = dec(mg.tensor(y2), mem, tgt_mask=causal_mask(5)).numpy()
    np.testing.assert_array_equal(a[:, :3], b[:, :3])
    assert not np.allclose(a[:, 3:], b[:, 3:])


def test_layers_return_attention_weights_on_request():
    mg.manual_seed(12)
    layer = DecoderLayer(8, 2, 16, dropout=0.0).eval()
    x, mem = mg.randn(2, 3, 8), mg.randn(2, 4, 8)
    out, w = layer(x, mem, memory_mask=padding_mask([[1, 1, 1, 1], [1, 1, 0, 0]], 0),
                   need_weights=True)
    assert w.shape == (2, 2, 3, 4) and (w.numpy()[1, :, :, 2:] == 0).all()
    np.testing.assert_allclose(out.numpy(), layer(x, mem, memory_mask=padding_mask(
        [[1, 1, 1, 1], [1, 1, 0, 0]], 0)).numpy(), atol=1e-6)
    _, sw = EncoderLayer(8, 2, 16).eval()(x, need_weights=True)
    assert sw.shape == (2, 2, 3, 3)


def test_positional_encodings_take_max_len_positions_and_drop_out_the_sum():
    x = mg.randn(2, 6, 8)
    for pe in (SinusoidalPositionalEncoding(8, max_len=6, dropout=0.5),
               LearnedPositionalEmbedding(6, 8, dropout=0.5)):
        table = pe.pe if hasattr(pe, "pe") else pe.embedding.weight
        mg.manual_seed(4)
        got = pe(x).numpy()                        # exactly max_len positions: allowed
        mg.manual_seed(4)
        want = F.dropout(x + table[:6], 0.5).numpy()   # the paper: dropout on x + PE
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-6)
        assert (got == 0).any()
        np.testing.assert_allclose(pe.eval()(x).numpy(), (x + table[:6]).numpy(), atol=1e-6)
        with pytest.raises(ValueError, match="longer than the positional table"):
            pe(mg.randn(1, 7, 8))


# ---- the layers' wiring by formula (no torch): which norm, which residual, which mask ----------
def _randomise_norms(module, seed):
    """Layer norms start as the identity affine map (ones, zeros), under which using the
    wrong one is invisible: give each its own weights."""
    rng = np.random.default_rng(seed)
    for m in module.modules():
        if isinstance(m, nn.LayerNorm):
            m.weight.data[...] = rng.uniform(0.5, 1.5, m.weight.shape)
            m.bias.data[...] = rng.standard_normal(m.bias.shape)
    return module


def _ln(norm, h):
    return F.layer_norm(h, (h.shape[-1],), norm.weight, norm.bias, norm.eps)


def _ffn(layer, h):
    return layer.linear2(F.relu(layer.linear1(h)))


@pytest.mark.parametrize("norm_first", [False, True])
def test_encoder_layer_and_stack_by_formula(norm_first):
    mg.manual_seed(21)
    enc = _randomise_norms(Encoder(8, 2, 16, 2, dropout=0.0, norm_first=norm_first).double(), 0)
    x = mg.randn(2, 4, 8, dtype=mg.float64)
    mask = padding_mask([[1, 1, 1, 1], [1, 1, 1, 0]], 0)
    h = x
    for layer in enc.layers:
        sa = lambda t: layer.self_attn(t, attn_mask=mask)            # noqa: E731
        if norm_first:
            h = h + sa(_ln(layer.norm1, h))
            h = h + _ffn(layer, _ln(layer.norm2, h))
        else:
            h = _ln(layer.norm1, h + sa(h))
            h = _ln(layer.norm2, h + _ffn(layer, h))
    if norm_first:                                 # pre-norm stacks end with a LayerNorm
        h = _ln(enc.norm, h)
    else:
        assert enc.norm is None
    np.testing.assert_allclose(enc(x, mask).numpy(), h.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("norm_first", [False, True])
def test_decoder_layer_and_stack_by_formula(norm_first):
    mg.manual_seed(22)
    dec = _randomise_norms(Decoder(8, 2, 16, 2, dropout=0.0, norm_first=norm_first).double(), 1)
    x, mem = mg.randn(2, 3, 8, dtype=mg.float64), mg.randn(2, 5, 8, dtype=mg.float64)
    tgt_mask = causal_mask(3)
    mem_mask = padding_mask([[1, 1, 1, 1, 1], [1, 1, 1, 0, 0]], 0)
    h = x
    for layer in dec.layers:
        sa = lambda t: layer.self_attn(t, attn_mask=tgt_mask)                 # noqa: E731
        ca = lambda t: layer.multihead_attn(t, mem, attn_mask=mem_mask)       # noqa: E731
        if norm_first:
            h = h + sa(_ln(layer.norm1, h))
            h = h + ca(_ln(layer.norm2, h))
            h = h + _ffn(layer, _ln(layer.norm3, h))
        else:
            h = _ln(layer.norm1, h + sa(h))
            h = _ln(layer.norm2, h + ca(h))
            h = _ln(layer.norm3, h + _ffn(layer, h))
    if norm_first:
        h = _ln(dec.norm, h)
    else:
        assert dec.norm is None
    np.testing.assert_allclose(dec(x, mem, tgt_mask, mem_mask).numpy(), h.numpy(),
                               rtol=1e-10, atol=1e-12)
    out, weights = dec(x, mem, tgt_mask, mem_mask, need_weights=True)
    np.testing.assert_allclose(out.numpy(), h.numpy(), rtol=1e-10, atol=1e-12)
    assert len(weights) == 2 and all((w.numpy()[1, :, :, 3:] == 0).all() for w in weights)


def test_add_norm_uses_its_eps():
    an = AddNorm(4, dropout=0.0, eps=2.0).double()
    x = mg.tensor([[1.0, 2.0, 4.0, 9.0]], dtype=mg.float64)
    y = x.numpy() * 2
    want = (y - y.mean()) / np.sqrt(y.var() + 2.0)
    np.testing.assert_allclose(an(x, lambda h: h).numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("activation, fn", [
    ("gelu", lambda a: 0.5 * a * (1 + __import__("scipy.special").special.erf(a / np.sqrt(2)))),
    ("gelu_tanh", lambda a: 0.5 * a * (1 + np.tanh(np.sqrt(2 / np.pi) * (a + 0.044715 * a ** 3)))),
    ("tanh", np.tanh),
])
def test_feedforward_activations_by_name_and_dropout_after_them(activation, fn):
    mg.manual_seed(0)
    ffn = FeedForward(4, 8, dropout=0.0, activation=activation).double()
    x = np.random.default_rng(0).standard_normal((2, 3, 4))
    W1, b1 = ffn.linear1.weight.numpy(), ffn.linear1.bias.numpy()
    W2, b2 = ffn.linear2.weight.numpy(), ffn.linear2.bias.numpy()
    want = fn(x @ W1.T + b1) @ W2.T + b2
    np.testing.assert_allclose(ffn(mg.tensor(x)).numpy(), want, rtol=1e-10, atol=1e-12)
    ffn = FeedForward(4, 8, dropout=0.5, activation=activation).double()  # act, then drop
    mg.manual_seed(5)
    got = ffn(mg.tensor(x)).numpy()
    mg.manual_seed(5)
    a = ffn.linear1(mg.tensor(x))
    want = ffn.linear2(F.dropout(a.__class__(fn(a.numpy())), 0.5)).numpy()
    np.testing.assert_allclose(got, want, rtol=1e-10, atol=1e-12)
