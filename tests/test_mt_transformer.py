"""The encoder-decoder Transformer (article 2.2.4): composition, gradcheck, greedy and beam
search decoding."""
import itertools
import math

import numpy as np
import pytest

import minigrad as mg
from minitransformer import Transformer, causal_mask, padding_mask
from mt_helpers import gradcheck_module

BOS, EOS = 1, 2


def tiny(seed=0, **kw):
    mg.manual_seed(seed)
    cfg = dict(d_model=8, n_heads=2, num_encoder_layers=1, num_decoder_layers=1, d_ff=16,
               dropout=0.0, max_len=16)
    cfg.update(kw)
    return Transformer(7, 6, **cfg).eval()


def test_paper_defaults():
    import inspect
    p = inspect.signature(Transformer).parameters
    assert (p["d_model"].default, p["n_heads"].default, p["num_encoder_layers"].default,
            p["num_decoder_layers"].default, p["d_ff"].default, p["dropout"].default,
            p["norm_first"].default) == (512, 8, 6, 6, 2048, 0.1, False)


def test_forward_is_the_composition_of_its_parts():
    m = tiny()
    src, tgt = [[3, 4, 5, 0], [6, 5, 4, 3]], [[BOS, 3, 4], [BOS, 5, 0]]
    logits = m(src, tgt)
    assert logits.shape == (2, 3, 6)
    emb = m.src_embed(src)
    np.testing.assert_allclose(emb.numpy(), m.src_embed.embedding.weight.numpy()[src] *
                               math.sqrt(8), atol=1e-6)
    smask = padding_mask(src, 0)
    mem = m.encoder(m.positional(emb), smask)
    tmask = causal_mask(3) & padding_mask(tgt, 0)
    want = m.generator(m.decoder(m.positional(m.tgt_embed(tgt)), mem, tmask, smask))
    np.testing.assert_allclose(logits.numpy(), want.numpy(), atol=1e-6)
    assert (m.src_embed.embedding.weight.numpy()[0] == 0).all()        # pad row


def test_transformer_gradcheck_float64():
    m = tiny(d_model=4, d_ff=4, norm_first=True)
    m.src_embed.embedding.padding_idx = None   # so every embedding row gets a gradient
    gradcheck_module(m, [[3, 4, 0]], [[BOS, 5]])


def _sequence_logp(m, src, seq):
    logits = m([src], [[BOS] + seq[:-1]])
    logp = logits.log_softmax(-1).numpy()[0]
    return sum(logp[i, t] for i, t in enumerate(seq))


def test_greedy_decode_takes_the_argmax_each_step():
    m = tiny(1)
    src = [[3, 4, 5, 6]]
    out = m.greedy_decode(src, BOS, EOS, max_len=5)[0]
    seq = [BOS]
    for _ in range(5):
        nxt = int(m(src, [seq]).numpy()[0, -1].argmax())
        if nxt == EOS:
            break
        seq.append(nxt)
    assert out == seq[1:]


def test_decoding_arguments_are_checked_and_ties_go_to_the_lower_id():
    m = tiny(1)
    for call, words in (
            (lambda: m.greedy_decode([[3, 4]], BOS, EOS, max_len=0), "max_len must be an integer"),
            (lambda: m.beam_search([[3, 4]], BOS, EOS, max_len=-1), "max_len must be an integer"),
            (lambda: m.beam_search([[3, 4]], BOS, EOS, beam_size=0), "beam_size must be"),
            (lambda: m.beam_search([[3, 4]], BOS, EOS, length_penalty=-1.0),
             "length_penalty must be a finite number >= 0"),
            (lambda: m.greedy_decode(np.zeros((0, 2), int), BOS, EOS), "batch >= 1"),
            (lambda: m.greedy_decode([[3, 4]], BOS, 99), "eos_id must be a target token id")):
        with pytest.raises(ValueError, match=words):
            call()
    # every logit equal: greedy's argmax takes token 0, and so must a beam of one
    m.generator.weight.data[...] = 0
    m.generator.bias.data[...] = 0
    greedy = m.greedy_decode([[3, 4]], BOS, EOS, max_len=3)
    assert greedy == [[0, 0, 0]] and m.beam_search([[3, 4]], BOS, EOS, beam_size=1,
                                                   max_len=3) == greedy


def test_beam_of_one_is_greedy_and_wide_beam_is_exhaustive():
    for seed in range(3):
        m = tiny(seed + 2)
        src = [[3, 4, 5], [6, 6, 0]]
        greedy = m.greedy_decode(src, BOS, EOS, max_len=3)
        assert m.beam_search(src, BOS, EOS, beam_size=1, max_len=3) == greedy
        for alpha in (0.0, 0.6, 3.0):      # GNMT's length normalisation ((5 + |y|) / 6)^α
            # 130 beams hold every live prefix of 3 tokens: the search is exhaustive, so only
            # a wrong score or a wrong early stop can make it miss the best output
            beam = m.beam_search(src, BOS, EOS, beam_size=130, max_len=4, length_penalty=alpha)
            for b, s in enumerate(src):
                # every output that ends with EOS within 4 steps, scored exactly
                cands = [list(p) + [EOS] for n in range(4) for p in itertools.product(
                    [0, 1, 3, 4, 5], repeat=n)]
                best = max(cands, key=lambda c: _sequence_logp(m, s, c)
                           / ((5 + len(c)) / 6) ** alpha)
                assert beam[b] == best[:-1], (seed, b, alpha)


def test_training_step_reduces_the_loss_on_a_toy_copy_task():
    import minigrad.functional as F
    m = tiny(5)
    m.train()
    src = [[3, 4, 5, 3], [5, 5, 4, 3]]
    tgt_in, tgt_out = [[BOS, 3, 4, 5, 3], [BOS, 5, 5, 4, 3]], [[3, 4, 5, 3, EOS],
                                                               [5, 5, 4, 3, EOS]]
    losses = []
    for _ in range(30):
        logits = m(src, tgt_in)
        loss = F.cross_entropy(logits.reshape(-1, 6), mg.tensor(tgt_out).reshape(-1))
        m.zero_grad()
        loss.backward()
        with mg.no_grad():
            for p in m.parameters():
                p.data -= 0.1 * p.grad.data
        losses.append(loss.item())
    assert losses[-1] < 0.5 * losses[0]


@pytest.mark.parametrize("norm_first", [False, True])
def test_a_sentence_decodes_the_same_alone_and_in_a_padded_batch(norm_first):
    # the source padding mask (encoder self-attention and cross-attention) and the target
    # padding + causal mask must make padding invisible: same logits, same outputs
    short, long_ = [3, 4, 5], [6, 5, 4, 3, 3, 4, 5]
    batch = [short + [0] * 4, long_]
    for seed in range(3):
        m = tiny(seed, norm_first=norm_first, num_encoder_layers=2, num_decoder_layers=2)
        alone = m([short], [[BOS, 3, 4]]).numpy()[0]
        padded = m(batch, [[BOS, 3, 4, 0, 0], [BOS, 5, 4, 3, 3]]).numpy()[0, :3]
        np.testing.assert_allclose(padded, alone, atol=1e-5)
        for decode, kw in ((m.greedy_decode, {}), (m.beam_search, {"beam_size": 3})):
            together = decode(batch, BOS, EOS, max_len=6, **kw)
            assert together == [decode([s], BOS, EOS, max_len=6, **kw)[0]
                                for s in (short, long_)]
