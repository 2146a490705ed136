"""The encoder-decoder Transformer (article 2.2.4): composition, gradcheck, greedy and beam
search decoding."""
import itertools
import math

import numpy as np
import pytest

import minigrad as mg
from minitransformer import Transformer, causal_mask, padding_mask
from minitransformer.inference import never_pad
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


def _sequence_logps(m, src, seqs):
    """log p of each of `seqs` (all one length), each step's distribution over every token
    but the padding (0), which decoding never outputs. One batch: the rows share the source
    and the causal mask keeps each row's steps its own."""
    logits = m([src] * len(seqs), [[BOS] + seq[:-1] for seq in seqs])
    logp = never_pad(logits, 0, EOS).log_softmax(-1).numpy()
    return [sum(logp[k, i, t] for i, t in enumerate(seq)) for k, seq in enumerate(seqs)]


def _all_sequence_logps(m, src, seqs):
    """_sequence_logps over seqs of any lengths, in `seqs`' order: one batch per length."""
    out = {}
    for n in sorted({len(s) for s in seqs}):
        ks = [k for k, s in enumerate(seqs) if len(s) == n]
        out.update(zip(ks, _sequence_logps(m, src, [seqs[k] for k in ks])))
    return [out[k] for k in range(len(seqs))]


def test_greedy_decode_takes_the_argmax_each_step():
    m = tiny(1)
    src = [[3, 4, 5, 6]]
    out = m.greedy_decode(src, BOS, EOS, max_len=5)[0]
    seq = [BOS]
    for _ in range(5):
        row = m(src, [seq]).numpy()[0, -1]
        row[0] = -np.inf                                 # the padding is never an output
        nxt = int(row.argmax())
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
    # every logit equal: greedy's argmax takes the lowest id that is not the padding (0),
    # and so must a beam of one
    m.generator.weight.data[...] = 0
    m.generator.bias.data[...] = 0
    greedy = m.greedy_decode([[3, 4]], BOS, EOS, max_len=3)
    assert greedy == [[1, 1, 1]] and m.beam_search([[3, 4]], BOS, EOS, beam_size=1,
                                                   max_len=3) == greedy


def test_beam_of_one_is_greedy_and_wide_beam_is_exhaustive():
    for seed in range(3):
        m = tiny(seed + 2)
        src = [[3, 4, 5], [6, 6, 0]]
        greedy = m.greedy_decode(src, BOS, EOS, max_len=3)
        assert m.beam_search(src, BOS, EOS, beam_size=1, max_len=3) == greedy
        # every output that ends with EOS within 4 steps, and every one cut at 4 tokens
        # without it, scored exactly (never the padding, 0), once per source
        cands = [list(p) + [EOS] for n in range(4) for p in itertools.product(
            [1, 3, 4, 5], repeat=n)] + [list(p) for p in itertools.product(
                [1, 3, 4, 5], repeat=4) if EOS not in p]
        logps = [_all_sequence_logps(m, s, cands) for s in src]
        for alpha in (0.0, 0.6, 3.0):      # GNMT's length normalisation ((5 + |y|) / 6)^α
            # 130 beams hold every live prefix of 3 tokens: the search is exhaustive, so only
            # a wrong score or a wrong early stop can make it miss the best output
            beam = m.beam_search(src, BOS, EOS, beam_size=130, max_len=4, length_penalty=alpha)
            for b in range(len(src)):
                best = max(range(len(cands)), key=lambda k: logps[b][k]
                           / ((5 + len(cands[k])) / 6) ** alpha)
                assert beam[b] == [t for t in cands[best] if t != EOS], (seed, b, alpha)


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


def test_weight_matrices_start_xavier_uniform():
    """As the paper's reference code and torch.nn.Transformer: every parameter of 2+ dims
    (embeddings included) ~ U(±√(6 / (fan_in + fan_out))); the pad rows then zero."""
    mg.manual_seed(0)
    m = Transformer(50, 60, d_model=32, n_heads=4, num_encoder_layers=1, num_decoder_layers=1,
                    d_ff=64, dropout=0.0, max_len=8)
    for name, p in m.named_parameters():
        if p.ndim < 2:
            continue
        w = p.numpy()
        bound = math.sqrt(6 / (w.shape[0] + w.shape[1]))
        if "embed" in name:
            w = w[1:]                                                  # row 0 is the pad row
        assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound, name


def test_default_max_len_fills_the_positional_table_exactly():
    """With no max_len, decoding runs until BOS + outputs fill the max_len positions of the
    table (max_len - 1 new tokens), never past it."""
    m = tiny(max_len=5)
    with mg.no_grad():
        m.generator.bias.data[EOS] = -1e4                  # EOS never wins: decode to the end
    out = m.greedy_decode([[3, 4, 5]], BOS, EOS)
    assert len(out[0]) == 4
    assert len(m.beam_search([[3, 4, 5]], BOS, EOS, beam_size=2)[0]) == 4


def _narrow_beam_by_hand(m, src, K, max_len, alpha):
    """Beam search written plainly: each live beam proposes its K best next tokens, the K
    best-scoring live candidates (summed log p) survive, every candidate ending in EOS is a
    finished hypothesis scored by log p / ((5 + len) / 6)^α; run to max_len, no early stop."""
    memory = m.encode([src])
    beams, finished = [([BOS], 0.0)], []
    for _ in range(max_len):
        cands = []
        for seq, score in beams:
            last = never_pad(m.decode([seq], memory)[:, -1], 0, EOS)
            row = last.log_softmax(-1).numpy()[0].astype(np.float64)
            for t in sorted(range(len(row)), key=lambda t: (-row[t], t))[:K]:
                cands.append((score + row[t], seq + [t]))
        cands.sort(key=lambda c: -c[0])
        finished += [(s / ((5 + len(q) - 1) / 6) ** alpha, q) for s, q in cands if q[-1] == EOS]
        beams = [(q, s) for s, q in cands if q[-1] != EOS][:K]
    pool = finished + [(s / ((5 + len(q) - 1) / 6) ** alpha, q + [EOS]) for q, s in beams]
    best = max(pool, key=lambda c: c[0])[1]
    return best[1:best.index(EOS)]


def test_a_beam_cut_at_max_len_competes_with_the_finished_ones():
    """A near-certain output that has not ended by max_len beats an unlikely one that has:
    every beam size returns it, as greedy does (the live beams used to count only when no
    hypothesis had finished)."""
    m = tiny(0)
    with mg.no_grad():
        m.generator.weight.mul_(0.0)
        m.generator.bias[...] = mg.tensor([0.0, -5.0, -3.0, 5.0, -5.0, -5.0])   # 3 ≈ sure
    greedy = m.greedy_decode([[3, 4]], BOS, EOS, max_len=3)
    assert greedy == [[3, 3, 3]]
    for k in (1, 2, 3):
        assert m.beam_search([[3, 4]], BOS, EOS, beam_size=k, max_len=3) == greedy, k


def test_narrow_beam_keeps_the_best_candidates():
    for seed in range(2):
        m = tiny(seed + 5)
        src = [[3, 4, 5], [6, 5, 0]]
        with mg.no_grad():
            got = m.beam_search(src, BOS, EOS, beam_size=2, max_len=4, length_penalty=0.6)
            want = [_narrow_beam_by_hand(m, s, 2, 4, 0.6) for s in src]
        assert got == want, seed


def test_encode_masks_source_padding_by_default_and_every_layer_reports_weights():
    m = tiny(num_decoder_layers=2)
    src = [[3, 4, 0, 0]]
    np.testing.assert_array_equal(m.encode(src).numpy(),
                                  m.encode(src, padding_mask(src, 0)).numpy())
    # the real positions do not depend on what the pads hold
    mem = m.encode(src).numpy()
    logits, weights = m(src, [[BOS, 3]], need_weights=True)
    assert len(weights) == 2 and all(w.shape == (1, 2, 2, 4) for w in weights)
    assert all((w.numpy()[..., 2:] == 0).all() for w in weights)
    assert mem.shape == (1, 4, 8)


def test_pad_id_none_means_no_padding():
    """pad_id=None: no token is padding, so no embedding row is zeroed and id 0 is attended
    like any other; the target mask is the causal mask alone."""
    m = tiny(pad_id=None)
    assert (m.src_embed.embedding.weight.numpy() != 0).all()
    assert m.src_mask(mg.tensor([[3, 0]])) is None
    np.testing.assert_array_equal(m.tgt_mask(mg.tensor([[BOS, 0, 0]])).numpy(),
                                  causal_mask(3).numpy())
    _, weights = m([[3, 0, 0]], [[BOS, 0]], need_weights=True)
    assert (weights[0].numpy()[..., 1:] > 0).all()      # with pad_id=0 these would be 0
    assert m.greedy_decode([[3, 0]], BOS, EOS, max_len=3) == \
        m.beam_search([[3, 0]], BOS, EOS, beam_size=1, max_len=3)


def test_decoding_runs_with_dropout_off_and_restores_each_modules_mode():
    """greedy_decode and beam_search decode as inference even on a model left in training
    mode (dropout 0.5 would otherwise change every call's output), and hand every
    submodule back its own mode."""
    m = tiny(3, dropout=0.5).train()
    m.encoder.eval()                                     # a submodule the user froze
    src = [[3, 4, 5, 6], [6, 5, 0, 0]]
    greedy = m.greedy_decode(src, BOS, EOS, max_len=5)
    beam = m.beam_search(src, BOS, EOS, beam_size=2, max_len=5)
    assert m.training and not m.encoder.training and m.decoder.training
    m.eval()
    assert greedy == m.greedy_decode(src, BOS, EOS, max_len=5)
    assert beam == m.beam_search(src, BOS, EOS, beam_size=2, max_len=5)


def test_decoding_never_outputs_the_padding_token():
    """A model that favours the padding token still never decodes it (fairseq's rule too):
    a decoded pad would be hidden from every later step as padding. Without a pad_id,
    token 0 is an ordinary token."""
    m = tiny(4)
    m.generator.bias.data[0] = 50.0                      # the padding token would win
    assert all(0 not in out for out in m.greedy_decode([[3, 4, 5]], BOS, EOS, max_len=4)
               + m.beam_search([[3, 4, 5]], BOS, EOS, beam_size=3, max_len=4))
    free = tiny(4, pad_id=None)
    free.generator.bias.data[0] = 50.0
    assert free.greedy_decode([[3, 4, 5]], BOS, EOS, max_len=4) == [[0, 0, 0, 0]]


def test_never_pad_leaves_the_logits_when_pad_is_eos_or_none():
    logits = mg.zeros(1, 4)
    assert never_pad(logits, 2, 2) is logits and never_pad(logits, None, 2) is logits
    assert never_pad(logits, 0, 2).tolist() == [[-float("inf"), 0.0, 0.0, 0.0]]


def test_beam_search_takes_a_numpy_length_penalty():
    m = tiny(max_len=5)
    out = m.beam_search([[3, 4, 5]], BOS, EOS, beam_size=2, length_penalty=np.float32(0.5))
    assert out == m.beam_search([[3, 4, 5]], BOS, EOS, beam_size=2, length_penalty=0.5)
    with pytest.raises(ValueError, match="length_penalty"):
        m.beam_search([[3, 4, 5]], BOS, EOS, length_penalty=True)


def test_beam_search_refuses_an_infinite_length_penalty():
    with pytest.raises(ValueError, match="length_penalty"):
        tiny(max_len=5).beam_search([[3, 4, 5]], BOS, EOS, length_penalty=math.inf)
