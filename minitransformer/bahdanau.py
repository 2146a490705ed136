"""Bahdanau (additive) attention (article 2.2.3.1 前Transformer时代的注意力机制): the
attention of "Neural Machine Translation by Jointly Learning to Align and Translate" (2015),
before the Transformer, on top of an RNN encoder-decoder.

    e_j = score(s, h_j) = vᵀ tanh(W s + U h_j)     for every source position j
    α   = softmax(e)          over source positions (padding excluded: α_j = 0 there)
    c   = Σ_j α_j h_j         the context vector for this decoder step
"""
import math

import minigrad as mg
from minigrad import nn

from minitransformer.masks import as_mask


class AdditiveAttention(nn.Module):
    """Article 2.2.3.1: additive attention score(s, h) = vᵀ tanh(W s + U h).

    The query `s` is the decoder's state (query_dim), the keys/values `h_j` the encoder's
    outputs (key_dim); W (`W`: query_dim -> hidden_dim), U (`U`: key_dim -> hidden_dim) and
    v (`v`: hidden_dim -> 1) are bias-free, exactly as in the formula. In the Q/K/V words of
    2.2.3.2: the query is s, the keys and values are both the h_j.

    forward(query (B, query_dim), keys (B, S, key_dim), values=None (= keys), mask=None)
    -> (context (B, value_dim), weights (B, S)). `mask` (B, S) is boolean, True = a real
    source token (see masks.key_padding); padded positions get exactly zero weight.
    U h_j does not depend on the decoder step: pass `projected_keys=attn.project_keys(h)`
    to compute it once per source sentence instead of once per step."""

    def __init__(self, query_dim, key_dim, hidden_dim):
        super().__init__()
        self.query_dim, self.key_dim, self.hidden_dim = query_dim, key_dim, hidden_dim
        self.W = nn.Linear(query_dim, hidden_dim, bias=False)
        self.U = nn.Linear(key_dim, hidden_dim, bias=False)
        self.v = nn.Linear(hidden_dim, 1, bias=False)

    def project_keys(self, keys):
        """U h_j for every source position: (B, S, key_dim) -> (B, S, hidden_dim)."""
        return self.U(keys)

    def scores(self, query, keys, projected_keys=None):
        """e (B, S): vᵀ tanh(W s + U h_j), before masking and softmax."""
        if query.ndim != 2 or query.shape[-1] != self.query_dim:
            raise ValueError(f"AdditiveAttention: query must be (batch, {self.query_dim}), got "
                             f"shape {query.shape}")
        if keys.ndim != 3 or keys.shape[-1] != self.key_dim or keys.shape[0] != query.shape[0]:
            raise ValueError(f"AdditiveAttention: keys must be (batch={query.shape[0]}, source "
                             f"length, {self.key_dim}), got shape {keys.shape}")
        if projected_keys is None:
            uh = self.project_keys(keys)
        elif tuple(projected_keys.shape) != keys.shape[:2] + (self.hidden_dim,):
            raise ValueError(f"AdditiveAttention: projected_keys must be project_keys(keys), "
                             f"shape {keys.shape[:2] + (self.hidden_dim,)}, got "
                             f"{projected_keys.shape}")
        else:
            uh = projected_keys
        ws = self.W(query).unsqueeze(1)                      # (B, 1, hidden): broadcast over j
        return self.v((ws + uh).tanh()).squeeze(-1)           # (B, S)

    def forward(self, query, keys, values=None, mask=None, projected_keys=None):
        values = keys if values is None else values
        e = self.scores(query, keys, projected_keys)
        if values.ndim != 3 or values.shape[:2] != keys.shape[:2]:
            raise ValueError(f"AdditiveAttention: values must be (batch, source length, "
                             f"value_dim) with the keys' {keys.shape[:2]}, got shape "
                             f"{values.shape}")
        mask = as_mask(mask, e.device, "AdditiveAttention")
        if mask is not None:
            if mask.dtype != mg.bool:                         # 0/1 ints would index, not mask
                raise TypeError(f"AdditiveAttention: mask must be boolean (True = a real "
                                f"source token), got dtype {mask.dtype}")
            B, S = e.shape
            if mask.ndim == 4 and mask.shape[1:3] == (1, 1):  # a (B, 1, 1, S) padding mask
                mask = mask.reshape(mask.shape[0], mask.shape[-1])
            if tuple(mask.shape) != (B, S):
                raise ValueError(f"AdditiveAttention: mask must be (batch, source length) = "
                                 f"{(B, S)}, got shape {mask.shape}")
            e = e.masked_fill(~mask, -math.inf)
        weights = e.softmax(-1)                               # (B, S), rows sum to 1
        context = (weights.unsqueeze(1) @ values).squeeze(1)  # Σ_j α_j h_j: (B, value_dim)
        return context, weights

    def extra_repr(self):
        return f"query_dim={self.query_dim}, key_dim={self.key_dim}, hidden_dim={self.hidden_dim}"
