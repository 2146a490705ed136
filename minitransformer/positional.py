"""Positional encodings (article 2.2.5.2 位置编码): the paper's fixed sinusoids, and a
learned table (as GPT uses). Either is ADDED to the token embeddings, because attention
by itself does not know the order of its inputs.

    PE(pos, 2i)   = sin(pos / 10000^(2i / d_model))
    PE(pos, 2i+1) = cos(pos / 10000^(2i / d_model))
"""
import math

import minigrad as mg
from minigrad import nn


def sinusoidal_table(max_len, d_model, dtype=None, device="cpu"):
    """The (max_len, d_model) matrix of the closed form above: row = position, even columns
    sines, odd columns cosines, wavelengths from 2π to 10000·2π. Built in plain Python
    floats (a constant, computed once), then made a tensor."""
    if max_len < 0 or d_model <= 0:
        raise ValueError(f"sinusoidal_table: need max_len >= 0 and d_model > 0, got "
                         f"{max_len}, {d_model}")
    denominators = [10000 ** ((c - c % 2) / d_model) for c in range(d_model)]  # c - c%2 = 2i
    rows = [[math.sin(pos / w) if c % 2 == 0 else math.cos(pos / w)
             for c, w in enumerate(denominators)] for pos in range(max_len)]
    table = mg.tensor(rows, dtype=mg.float64, device=device)
    return table.to(dtype=dtype or mg.float32).reshape(max_len, d_model)


def _check_length(module, x):
    if x.ndim != 3 or x.shape[-1] != module.d_model:
        raise ValueError(f"{type(module).__name__}: input must be (batch, length, "
                         f"{module.d_model}), got shape {x.shape}")
    if x.dtype.kind != "f":
        raise TypeError(f"{type(module).__name__}: input must be floating-point embeddings "
                        f"(batch, length, {module.d_model}), got dtype {x.dtype}; token ids "
                        f"go through an nn.Embedding first")
    if x.shape[1] > module.max_len:
        raise ValueError(f"{type(module).__name__}: a sequence of length {x.shape[1]} is "
                         f"longer than the positional table (max_len={module.max_len}); "
                         f"build it with a larger max_len or shorten the input")


class SinusoidalPositionalEncoding(nn.Module):
    """Article 2.2.5.2 位置编码: x + PE[:T] then dropout (the paper uses dropout 0.1 on
    this sum). PE is a fixed buffer (saved in the state dict, never trained)."""

    def __init__(self, d_model, max_len=1024, dropout=0.0):
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.dropout = nn.Dropout(dropout)
        self.register_buffer("pe", sinusoidal_table(max_len, d_model))

    def forward(self, x):
        """x: (B, T, d_model) -> x + PE[:T] (broadcast over the batch)."""
        _check_length(self, x)
        return self.dropout(x + self.pe[:x.shape[1]].to(dtype=x.dtype))

    def extra_repr(self):
        return f"d_model={self.d_model}, max_len={self.max_len}"


class LearnedPositionalEmbedding(nn.Module):
    """Article 2.2.5.2, the learned variant (GPT, BERT): one trained vector per position,
    the rows of `embedding.weight` (max_len, d_model), added to the input. Cannot go beyond
    max_len."""

    def __init__(self, max_len, d_model, dropout=0.0):
        super().__init__()
        self.d_model, self.max_len = d_model, max_len
        self.embedding = nn.Embedding(max_len, d_model)
        nn.init.normal_(self.embedding.weight, std=0.02)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x):
        _check_length(self, x)
        positions = mg.arange(x.shape[1], device=x.device)
        return self.dropout(x + self.embedding(positions))

    def extra_repr(self):
        return f"max_len={self.max_len}, d_model={self.d_model}"
