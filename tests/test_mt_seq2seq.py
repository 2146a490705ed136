"""RNN Seq2Seq without and with Bahdanau attention (article 2.2.3.1): the additive score
against a direct NumPy computation, padding handling, PyTorch's GRU as a reference for the
encoder, gradcheck of every piece, teacher forcing and greedy decoding."""
import numpy as np
import pytest

import minigrad as mg
from minitransformer import (AdditiveAttention, Seq2Seq, Seq2SeqDecoder, Seq2SeqEncoder,
                             key_padding)
from mt_helpers import gradcheck_module

BOS, EOS = 1, 2


def test_additive_attention_equals_the_formula_in_numpy():
    mg.manual_seed(0)
    att = AdditiveAttention(query_dim=3, key_dim=4, hidden_dim=5).double()
    rng = np.random.default_rng(0)
    s, h = rng.standard_normal((2, 3)), rng.standard_normal((2, 6, 4))
    keep = np.array([[1, 1, 1, 1, 1, 1], [1, 1, 1, 1, 0, 0]], bool)
    ctx, a = att(mg.tensor(s), mg.tensor(h), mask=mg.tensor(keep))
    W, U, v = att.W.weight.numpy(), att.U.weight.numpy(), att.v.weight.numpy()[0]
    for b in range(2):
        e = np.array([v @ np.tanh(W @ s[b] + U @ h[b, j]) for j in range(6)])   # vᵀtanh(Ws+Uh)
        e = np.where(keep[b], e, -np.inf)
        alpha = np.exp(e - e.max()) / np.exp(e - e.max()).sum()
        np.testing.assert_allclose(a.numpy()[b], alpha, atol=1e-14)
        np.testing.assert_allclose(ctx.numpy()[b], alpha @ h[b], atol=1e-14)
    assert (a.numpy()[1, 4:] == 0.0).all()                  # padding: exactly zero weight
    ctx2, a2 = att(mg.tensor(s), mg.tensor(h), mask=mg.tensor(keep),
                   projected_keys=att.project_keys(mg.tensor(h)))
    np.testing.assert_array_equal(a2.numpy(), a.numpy())


def test_additive_attention_gradcheck_and_bad_mask():
    mg.manual_seed(1)
    att = AdditiveAttention(2, 3, 4)
    s = mg.randn(2, 2, dtype=mg.float64, requires_grad=True)
    h = mg.randn(2, 3, 3, dtype=mg.float64, requires_grad=True)
    gradcheck_module(att, s, h, mask=mg.tensor([[True, True, True], [True, True, False]]))
    with pytest.raises(ValueError, match=r"mask must be \(batch, source length\)"):
        att(s, h, mask=mg.ones(2, 4, dtype=mg.bool))       # (the module is float64 now)
    with pytest.raises(ValueError, match=r"keys must be \(batch=2, source length, 3\)"):
        att(s, mg.randn(2, 3, 5, dtype=mg.float64))
    with pytest.raises(TypeError, match="linear: operands have dtypes float32 and float64"):
        att(mg.randn(2, 2), h)                              # no silent upcast


# ---- encoder ------------------------------------------------------------------------------------
def test_encoder_matches_torch_bidirectional_gru():
    torch = pytest.importorskip("torch")
    mg.manual_seed(2)
    enc = Seq2SeqEncoder(9, 4, 5, bidirectional=True).double()
    gru = torch.nn.GRU(4, 5, batch_first=True, bidirectional=True, dtype=torch.float64)
    with torch.no_grad():
        for sfx, cell in (("", enc.forward_cell), ("_reverse", enc.backward_cell)):
            for name in ("weight_ih", "weight_hh", "bias_ih", "bias_hh"):
                getattr(gru, f"{name}_l0{sfx}").copy_(torch.tensor(getattr(cell, name).numpy()))
    src = [[3, 4, 5, 6], [8, 7, 6, 5]]                       # no padding: torch's GRU applies
    out, final, _ = enc(src)
    tout, th = gru(torch.tensor(enc.embedding.weight.numpy()[src]))
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(final.numpy(), torch.cat([th[0], th[1]], -1).detach().numpy(),
                               atol=1e-12)


@pytest.mark.parametrize("bidirectional", [False, True])
def test_encoder_ignores_padding(bidirectional):
    mg.manual_seed(3)
    enc = Seq2SeqEncoder(9, 4, 5, bidirectional=bidirectional).eval()
    alone_out, alone_final, _ = enc([[3, 4, 5]])
    out, final, keep = enc([[3, 4, 5, 0, 0], [3, 4, 5, 6, 7]])
    np.testing.assert_allclose(final.numpy()[0], alone_final.numpy()[0], atol=1e-6)
    np.testing.assert_allclose(out.numpy()[0, :3], alone_out.numpy()[0], atol=1e-6)
    assert (out.numpy()[0, 3:] == 0).all()
    assert keep.numpy().tolist()[0] == [True, True, True, False, False]
    assert out.shape == (2, 5, 10 if bidirectional else 5)


# ---- decoder and the whole model -------------------------------------------------------------
@pytest.mark.parametrize("attention", [False, True])
def test_seq2seq_gradcheck(attention):
    mg.manual_seed(4)
    model = Seq2Seq(6, 5, emb_dim=2, hidden_size=3, attention=attention, attn_dim=2)
    for emb in (model.encoder.embedding, model.decoder.embedding):
        emb.padding_idx = None        # so every row of the tables is checked too
    gradcheck_module(model, [[3, 4, 0], [5, 3, 4]], [[BOS, 3], [BOS, 4]])


def test_decoder_context_fixed_without_attention_fresh_with_it():
    mg.manual_seed(5)
    src = [[3, 4, 5, 6, 0], [6, 5, 4, 3, 7]]
    tgt_in = [[BOS, 3, 4, 3], [BOS, 4, 4, 3]]
    plain = Seq2Seq(9, 6, emb_dim=4, hidden_size=6, attention=False).eval()
    logits, w = plain(src, tgt_in, need_weights=True)
    assert logits.shape == (2, 4, 6) and w is None
    att = Seq2Seq(9, 6, emb_dim=4, hidden_size=6, attention=True).eval()
    logits, w = att(src, tgt_in, need_weights=True)
    assert w.shape == (2, 4, 5)
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0, atol=1e-6)
    assert (w.numpy()[0, :, 4] == 0.0).all()                  # the pad
    assert not np.allclose(w.numpy()[:, 0], w.numpy()[:, 1])  # a new context every step
    # the context vector is the only route for the source in the plain model: changing the
    # source's last real token changes its logits
    other = plain([[3, 4, 5, 7, 0], [6, 5, 4, 3, 7]], tgt_in)
    assert not np.allclose(other.numpy()[0], plain(src, tgt_in).numpy()[0])


@pytest.mark.parametrize("attention", [False, True])
def test_teacher_forcing_is_causal_and_greedy_feeds_back_its_argmax(attention):
    mg.manual_seed(6)
    model = Seq2Seq(9, 6, emb_dim=4, hidden_size=6, attention=attention).eval()
    src = [[3, 4, 5, 6]]
    a = model(src, [[BOS, 3, 4, 5]]).numpy()
    b = model(src, [[BOS, 3, 5, 3]]).numpy()
    np.testing.assert_array_equal(a[:, :2], b[:, :2])        # step t sees tokens < t only
    out, w = model.greedy_decode(src, BOS, EOS, max_len=6, return_weights=True)
    seq = [BOS]
    for _ in range(6):
        row = model(src, [seq]).numpy()[0, -1]
        row[0] = -np.inf                                 # the padding is never an output
        nxt = int(row.argmax())
        if nxt == EOS:
            break
        seq.append(nxt)
    assert out[0] == seq[1:]
    assert (w is None) == (not attention)


def test_seq2seq_bad_input():
    model = Seq2Seq(6, 5, emb_dim=2, hidden_size=3)
    with pytest.raises(IndexError, match="out of range"):
        model([[3, 9]], [[BOS]])
    dec = Seq2SeqDecoder(5, 2, 3, enc_size=6)
    with pytest.raises(ValueError, match=r"encoder outputs must be \(batch, source length, 6\)"):
        dec([[BOS]], mg.randn(1, 2, 4), mg.randn(1, 6), key_padding([[3, 3]], 0))


@pytest.mark.parametrize("attention", [False, True])
def test_a_sentence_decodes_the_same_alone_and_in_a_padded_batch(attention):
    # padding must change nothing: not the encoder's states, not the attention, not the
    # decoder's steps, and a batch whose rows end at different steps decodes each row alone
    mg.manual_seed(7)
    model = Seq2Seq(9, 9, emb_dim=4, hidden_size=6, attention=attention).eval()
    short, long_ = [3, 4, 5], [6, 7, 8, 3, 4, 5, 6]
    batch = [short + [0] * 4, long_]
    alone = model([short], [[BOS, 3, 4]]).numpy()[0]
    padded = model(batch, [[BOS, 3, 4, 0, 0], [BOS, 5, 6, 7, 8]]).numpy()[0, :3]
    np.testing.assert_allclose(padded, alone, atol=1e-5)
    for _ in range(3):                       # several random models: different end times
        together = model.greedy_decode(batch, BOS, EOS, max_len=8)
        assert together == [model.greedy_decode([s], BOS, EOS, max_len=8)[0]
                            for s in (short, long_)]
        model = Seq2Seq(9, 9, emb_dim=4, hidden_size=6, attention=attention).eval()


def test_greedy_decode_checks_its_token_ids():
    model = Seq2Seq(6, 5, emb_dim=2, hidden_size=3).eval()
    for kw, words in ((dict(eos_id=5), "eos_id must be a target token id in 0..4"),
                      (dict(bos_id=-1), "bos_id must be a target token id"),
                      (dict(eos_id=2.0), "eos_id must be")):
        with pytest.raises(ValueError, match=words):
            model.greedy_decode([[3, 4]], **{"bos_id": BOS, "eos_id": EOS, **kw})


# ---- the encoder-decoder's wiring, written out with its own cells (no torch) -----------------
def _seq2seq_by_hand(model, src, tgt_in, p):
    """Article 2.2.3.1's equations with the model's parts, right-padded src, dropout p drawn in
    the model's order (source embeddings, target embeddings, then each step's output)."""
    import minigrad.functional as F
    enc, dec = model.encoder, model.decoder
    src_np = np.array(src)
    B, S = src_np.shape
    keep = src_np != 0
    xs = F.dropout(enc.embedding(mg.tensor(src_np)), p)
    H = enc.hidden_size
    fwd, bwd = [None] * S, [None] * S
    h = mg.zeros(B, H)
    for t in range(S):                                   # forward GRU, pads carry the state
        h = mg.where(mg.tensor(keep[:, t:t + 1]), enc.forward_cell(xs[:, t], h), h)
        fwd[t] = h
    h_f = h
    h = mg.zeros(B, H)
    for t in reversed(range(S)):                         # backward GRU: from the end
        h = mg.where(mg.tensor(keep[:, t:t + 1]), enc.backward_cell(xs[:, t], h), h)
        bwd[t] = h
    outs = mg.cat([mg.stack(fwd, 1), mg.stack(bwd, 1)], -1) * mg.tensor(
        keep[:, :, None].astype(np.float32))
    final = mg.cat([h_f, h], -1)                         # [last forward; last backward]
    s = dec.bridge(final).tanh()                         # s_0 = tanh(bridge(h_final))
    ys = F.dropout(dec.embedding(mg.tensor(tgt_in)), p)
    logits = []
    for t in range(len(tgt_in[0])):
        y = ys[:, t]
        if dec.attention is None:
            c = final
        else:
            c, _ = dec.attention(s, outs, mask=mg.tensor(keep))
        s = dec.cell(mg.cat([y, c], -1), s)
        logits.append(dec.out(F.dropout(mg.cat([s, c, y], -1), p)))
    return mg.stack(logits, 1)


@pytest.mark.parametrize("attention", [False, True])
def test_seq2seq_by_its_equations(attention):
    mg.manual_seed(7)
    model = Seq2Seq(9, 6, emb_dim=4, hidden_size=5, attention=attention, dropout=0.3)
    src, tgt_in = [[3, 4, 5, 6, 0], [6, 5, 7, 0, 0]], [[BOS, 3, 4], [BOS, 4, 5]]
    model.eval()
    np.testing.assert_allclose(model(src, tgt_in).numpy(),
                               _seq2seq_by_hand(model, src, tgt_in, 0.0).numpy(),
                               rtol=1e-5, atol=1e-6)
    model.train()
    mg.manual_seed(3)
    got = model(src, tgt_in).numpy()
    mg.manual_seed(3)
    np.testing.assert_allclose(got, _seq2seq_by_hand(model, src, tgt_in, 0.3).numpy(),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("attention", [False, True])
def test_greedy_decode_stops_before_eos(attention):
    """The same model with one of its emitted tokens declared EOS returns what came before
    the first occurrence of that token, EOS excluded."""
    mg.manual_seed(8)
    model = Seq2Seq(9, 8, emb_dim=4, hidden_size=6, attention=attention).eval()
    src = [[3, 4, 5, 6]]
    with mg.no_grad():
        model.decoder.out.bias.data[7] = -1e4                # id 7 never wins: an unused EOS
    free = model.greedy_decode(src, BOS, 7, max_len=6)[0]
    assert len(free) == 6
    for eos in set(free):
        assert model.greedy_decode(src, BOS, eos, max_len=6) == [free[:free.index(eos)]]


def test_additive_attention_takes_a_4d_padding_mask():
    mg.manual_seed(9)
    attn = AdditiveAttention(3, 4, 5)
    q, k = mg.randn(2, 3), mg.randn(2, 6, 4)
    keep = key_padding([[1, 1, 1, 1, 0, 0], [1, 1, 1, 1, 1, 0]], 0)
    a, wa = attn(q, k, mask=keep)
    b, wb = attn(q, k, mask=keep.reshape(2, 1, 1, 6))
    np.testing.assert_array_equal(wa.numpy(), wb.numpy())
    assert (wb.numpy()[0, 4:] == 0).all() and (wb.numpy()[1, 5:] == 0).all()


def test_greedy_decode_runs_with_dropout_off_and_pad_id_none_pads_nothing():
    """A model left in training mode with dropout still decodes as inference (the same
    tokens every call) and stays in training mode; pad_id=None makes id 0 a real token."""
    mg.manual_seed(8)
    model = Seq2Seq(9, 9, emb_dim=4, hidden_size=6, dropout=0.5, pad_id=None).train()
    src = [[3, 0, 0, 5]]
    first = model.greedy_decode(src, BOS, EOS, max_len=6)
    assert model.training and model.greedy_decode(src, BOS, EOS, max_len=6) == first
    model.eval()
    assert model.greedy_decode(src, BOS, EOS, max_len=6) == first
    _, _, keep = model.encoder(src)
    assert keep.numpy().all()


def test_additive_attention_names_a_4d_mask_of_the_wrong_shape():
    att = AdditiveAttention(4, 4, 8)
    keys = mg.randn(2, 3, 4)
    with pytest.raises(ValueError, match=r"mask must be \(batch, source length\)"):
        att(mg.randn(2, 4), keys, mask=mg.ones(2, 2, 1, 3, dtype=mg.bool))
    context, weights = att(mg.randn(2, 4), keys, mask=mg.ones(2, 1, 1, 3, dtype=mg.bool))
    assert weights.shape == (2, 3)
