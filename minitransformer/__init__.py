"""minitransformer: every component of the Transformer article (transformer-basics.zh,
sections 2.2.3.1 - 2.2.5.4), built only on minigrad's public API.

    from minitransformer import MultiHeadAttention, EncoderLayer, Transformer, causal_mask
"""
import minigrad  # noqa: F401  (before NumPy: it sets how BLAS threads idle, see its __init__)
from minitransformer.masks import (causal_mask, padding_mask, key_padding,  # noqa: F401
                                   lengths_mask, combine_masks)
from minitransformer.attention import (scaled_dot_product_attention,  # noqa: F401
                                       attention_with_weights, MultiHeadAttention)
from minitransformer.positional import (sinusoidal_table,  # noqa: F401
                                        SinusoidalPositionalEncoding,
                                        LearnedPositionalEmbedding)
from minitransformer.feedforward import FeedForward  # noqa: F401
from minitransformer.sublayer import AddNorm  # noqa: F401
from minitransformer.encoder import EncoderLayer, Encoder  # noqa: F401
from minitransformer.decoder import DecoderLayer, Decoder  # noqa: F401
from minitransformer.transformer import TokenEmbedding, Transformer  # noqa: F401
from minitransformer.bahdanau import AdditiveAttention  # noqa: F401
from minitransformer.seq2seq import Seq2SeqEncoder, Seq2SeqDecoder, Seq2Seq  # noqa: F401
# GPT (decoder-only language model), its character tokenizer, data and trainer
from minitransformer.gpt import GPT, GPTConfig, KVCache  # noqa: F401,E402
from minitransformer.tokenizer import CharTokenizer, UnknownCharacterError  # noqa: F401,E402
from minitransformer.train import TrainConfig, resume_config, load_checkpoint  # noqa: F401,E402
