"""Bad input to minitransformer gives a clear error that names the problem."""
import pytest

import minigrad as mg
from minitransformer import (DecoderLayer, LearnedPositionalEmbedding, MultiHeadAttention,
                             SinusoidalPositionalEncoding, Transformer, causal_mask)


def test_d_model_not_divisible_by_heads():
    with pytest.raises(ValueError, match=r"d_model=10 must be divisible by n_heads=3"):
        MultiHeadAttention(10, 3)
    with pytest.raises(ValueError, match="divisible"):
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
