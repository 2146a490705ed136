"""Bad input to minitransformer gives a clear error that names the problem."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minitransformer import (DecoderLayer, LearnedPositionalEmbedding, MultiHeadAttention,
                             Seq2Seq, SinusoidalPositionalEncoding, Transformer, causal_mask)
from minitransformer.bahdanau import AdditiveAttention
from minitransformer.gpt import GPT, GPTConfig
from minitransformer.masks import combine_masks, key_padding, lengths_mask
from minitransformer.positional import sinusoidal_table
from minitransformer.tokenizer import CharTokenizer


def test_d_model_not_divisible_by_heads():
    with pytest.raises(ValueError, match=r"n_heads must be a positive integer that divides "
                                         r"d_model=10 .*got n_heads=3; valid n_heads here: "
                                         r"\[1, 2, 5, 10\]"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="got n_heads=0"):
        MultiHeadAttention(10, 0)
    with pytest.raises(ValueError, match="divides"):
        Transformer(5, 5, d_model=10, n_heads=4)


def test_mask_that_cannot_broadcast_to_the_scores():
    mha = MultiHeadAttention(8, 2)
    x = mg.randn(2, 5, 8)
    with pytest.raises(ValueError, match=r"attn_mask of shape \(4, 4\) cannot broadcast .*"
                                         r"\(2, 2, 5, 5\)"):
        mha(x, attn_mask=causal_mask(4))
    with pytest.raises(ValueError, match="cannot broadcast"):
        mha(x, attn_mask=mg.ones(3, 1, 1, 5, dtype=mg.bool))     # batch 3 vs 2
    with pytest.raises(TypeError, match="boolean"):
        mha(x, attn_mask=mg.ones(5, 5))


def test_mask_on_another_device_names_both_devices():
    import spy_backend
    spy_backend.register()
    try:
        mask = causal_mask(5, device="spy")
        with pytest.raises(RuntimeError, match=r"MultiHeadAttention: the mask is on spy but the "
                                               r"attention runs on cpu"):
            MultiHeadAttention(8, 2)(mg.randn(2, 5, 8), attn_mask=mask)
    finally:
        spy_backend.unregister()


def test_token_ids_must_be_integers():
    m = Transformer(6, 5, d_model=8, n_heads=2, num_encoder_layers=1, num_decoder_layers=1,
                    d_ff=8)
    with pytest.raises(TypeError, match="Transformer: token ids must be integers, got "
                                        "dtype float32"):
        m(mg.tensor([[3.0, 4.0]]), [[1, 3]])


def test_sequence_longer_than_the_positional_table():
    with pytest.raises(ValueError, match=r"length 6 is longer than the positional table "
                                         r"\(max_len=5\)"):
        SinusoidalPositionalEncoding(8, max_len=5)(mg.randn(1, 6, 8))
    with pytest.raises(ValueError, match="max_len=5"):
        LearnedPositionalEmbedding(5, 8)(mg.randn(1, 6, 8))
    m = Transformer(6, 6, d_model=8, n_heads=2, num_encoder_layers=1, num_decoder_layers=1,
                    d_ff=8, max_len=4)
    with pytest.raises(ValueError, match="positional table"):
        m([[3, 3, 3, 3, 3]], [[1, 3]])


def test_token_id_outside_the_vocabulary():
    m = Transformer(6, 5, d_model=8, n_heads=2, num_encoder_layers=1, num_decoder_layers=1,
                    d_ff=8)
    with pytest.raises(IndexError, match=r"source token embedding: index 6 is out of range "
                                         r"for a table of 6 rows \(valid: 0..5\)"):
        m([[3, 6]], [[1, 3]])
    with pytest.raises(IndexError, match=r"target token embedding: index -1"):
        m([[3, 4]], [[1, -1]])


def test_decoder_given_memory_of_the_wrong_width():
    layer = DecoderLayer(8, 2, 16)
    with pytest.raises(ValueError, match=r"memory \(the encoder's output\) must be "
                                         r"\(batch=2, source length, 8\), got shape "
                                         r"\(2, 3, 6\)"):
        layer(mg.randn(2, 4, 8), mg.randn(2, 3, 6))


def test_mha_input_of_the_wrong_width():
    with pytest.raises(ValueError, match=r"query must be \(batch, length, 8\)"):
        MultiHeadAttention(8, 2)(mg.randn(2, 3, 4))


# ---- every remaining bad input, one row each: (call, error type, words of the message) ------
def _mha():
    return MultiHeadAttention(4, 2)


def _s2s():
    return Seq2Seq(6, 6, emb_dim=4, hidden_size=4)


_BAD_INPUTS = [
    (lambda: F.scaled_dot_product_attention(mg.ones(3), mg.ones(3, 2), mg.ones(3, 2)),
     ValueError, "need at least 2 dims"),
    (lambda: F.scaled_dot_product_attention(mg.ones(2, 3), mg.ones(2, 4), mg.ones(2, 4)),
     ValueError, "must share the last dim"),
    (lambda: F.scaled_dot_product_attention(mg.ones(2, 3), mg.ones(2, 3), mg.ones(2, 3),
                                            dropout_p=1.5), ValueError, r"dropout_p must be in \[0, 1\]"),
    (lambda: F.scaled_dot_product_attention(mg.ones(2, 3), mg.ones(4, 3), mg.ones(4, 3),
                                            attn_mask=np.ones((3, 4), bool)),
     ValueError, r"attn_mask of shape \(3, 4\) cannot broadcast"),
    (lambda: F.cross_entropy(mg.ones(2, 3), mg.tensor([0.5, 1.0])), TypeError,
     "targets must be integer class indices"),
    (lambda: F.cross_entropy(mg.ones(2, 3), mg.tensor([0, 1]), label_smoothing=1.5),
     ValueError, r"label_smoothing must be in \[0, 1\]"),
    (lambda: F.layer_norm(mg.ones(2, 3), (3,), mg.ones(4)), ValueError,
     r"weight has shape \(4,\), expected \(3,\)"),
    (lambda: _mha()(mg.ones(2, 3, 4), mg.ones(3, 3, 4)), ValueError,
     "must share the batch size"),
    (lambda: GPTConfig(n_layer=0), ValueError, "n_layer must be a positive integer"),
    (lambda: GPTConfig(dropout=1.0), ValueError, r"dropout must be in \[0, 1\)"),
    (lambda: causal_mask(-1), ValueError, "sizes must be non-negative"),
    (lambda: key_padding(mg.tensor([1, 2, 0]), 0), ValueError,
     r"tokens must be \(batch, length\)"),
    (lambda: lengths_mask(mg.tensor([[1, 2]])), ValueError, "lengths must be 1-D"),
    (lambda: combine_masks(mg.ones(2, 2)), TypeError, "masks must be boolean"),
    (lambda: _mha()(mg.ones(1, 2, 4), attn_mask=[[True, False]]), TypeError,
     "a mask must be a boolean minigrad Tensor or NumPy array"),
    (lambda: sinusoidal_table(4, 0), ValueError, "need max_len >= 0 and d_model > 0"),
    (lambda: SinusoidalPositionalEncoding(4, max_len=3)(mg.ones(1, 5, 4)), ValueError,
     "a sequence of length 5"),
    (lambda: LearnedPositionalEmbedding(3, 4)(mg.ones(1, 2, 5)), ValueError,
     r"input must be \(batch, length"),
    (lambda: causal_mask(2.5), TypeError, "sizes must be integers, got 2.5"),
    (lambda: lengths_mask(np.array([1.9, 2.0])), TypeError,
     "lengths_mask: lengths must be integers, got float64"),
    (lambda: Transformer(6, 5, d_model=8, n_heads=2, num_encoder_layers=1,
                         num_decoder_layers=1, d_ff=8)(np.array([[1.7, 2.2]]), [[1, 3]]),
     TypeError, "token ids must be integers, got float64 values"),
    (lambda: SinusoidalPositionalEncoding(4)(mg.zeros(1, 2, 4, dtype=mg.int64)), TypeError,
     "must be floating-point embeddings"),
    (lambda: _s2s()([1, 2], [[1, 2]]), ValueError,
     r"src must be token ids \(batch, source length\).*got shape \(2,\)"),
    (lambda: _s2s()(np.zeros((2, 0), int), [[1], [1]]), ValueError, "length >= 1"),
    (lambda: _s2s()([[1, 2], [3, 4]], [[1, 2]]), ValueError,
     r"tgt_in must be token ids \(batch=2 as the source"),
    (lambda: _s2s().greedy_decode([[1, 2]], 1, 2, max_len=0), ValueError,
     "max_len must be an integer >= 1"),
    (lambda: AdditiveAttention(3, 4, 5)(mg.ones(2, 3), mg.ones(2, 6, 4), mg.ones(2, 5, 4)),
     ValueError, r"values must be \(batch, source length, value_dim\)"),
    (lambda: AdditiveAttention(3, 4, 5)(mg.ones(2, 3), mg.ones(2, 6, 4),
                                        projected_keys=mg.ones(2, 6, 4)),
     ValueError, "projected_keys must be project_keys"),
    (lambda: AdditiveAttention(3, 4, 5)(mg.ones(2, 3), mg.ones(2, 6, 4), mask=mg.ones(2, 6)),
     TypeError, "mask must be boolean"),
    (lambda: LearnedPositionalEmbedding(-1, 8), TypeError, "must be a non-negative integer"),
    (lambda: MultiHeadAttention(4, 2, dropout=2), ValueError, r"dropout must be in \[0, 1\)"),
    (lambda: Transformer(6, 5, d_model=8, n_heads=2, pad_id=-1), ValueError,
     r"pad_id must be a token id in both vocabularies, 0..4, or None"),
    (lambda: Transformer(6, 5, d_model=8, n_heads=2, pad_id=5), ValueError, "got 5"),
    (lambda: Transformer(0, 5, d_model=8, n_heads=2), ValueError,
     "src_vocab_size must be a positive integer, got 0"),
    (lambda: Transformer(6, None, d_model=8, n_heads=2), ValueError,
     "tgt_vocab_size must be a positive integer, got None"),
    (lambda: Transformer(6, 5, d_model=8, n_heads=2, num_encoder_layers=1,
                         num_decoder_layers=1, d_ff=8)([[1, 2], [3, 4]], [[1, 3]]),
     ValueError, r"src and tgt_in must be .* the same batch, got shapes \(2, 2\) and \(1, 2\)"),
    (lambda: GPT(GPTConfig(vocab_size=5, block_size=4, n_layer=1, n_head=1, n_embd=4))(
        np.zeros((1, 0), int)), ValueError, r"at least one of each, got shape \(1, 0\)"),
    (lambda: lengths_mask([-1, 1], 4), ValueError, r"lengths must be in 0..max_len=4, got "
                                                   r"\[-1, 1\]"),
    (lambda: lengths_mask([5, 1], 4), ValueError, r"lengths must be in 0..max_len=4"),
    (lambda: key_padding([[1, 0]], 0.5), TypeError, "pad_id must be a token id"),
    (lambda: key_padding([[1, 2]], True), TypeError, "pad_id must be a token id"),
    (lambda: CharTokenizer([]), ValueError, "the vocabulary is empty"),
    (lambda: CharTokenizer(["a", "a"]), ValueError, "distinct single characters"),
    (lambda: CharTokenizer.from_dict({"type": "bpe", "chars": "ab"}), ValueError,
     "cannot load a tokenizer of type 'bpe'"),
]


@pytest.mark.parametrize("call,error,words", _BAD_INPUTS,
                         ids=[w.split()[0] + str(i) for i, (_, _, w) in enumerate(_BAD_INPUTS)])
def test_bad_input_is_named(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_an_unnamed_token_embedding_says_token_embedding_once():
    from minitransformer.transformer import TokenEmbedding
    with pytest.raises(IndexError, match=r"^token embedding: index 7 is out of range"):
        TokenEmbedding(5, 4)(mg.tensor([[7]]))
