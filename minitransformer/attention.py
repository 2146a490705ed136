"""Scaled dot-product attention (article 2.2.3.2 自注意力机制) and multi-head attention
(2.2.3.3 多头注意力机制), built on minigrad's fused attention op.

    Attention(Q, K, V) = softmax(Q Kᵀ / √d_k) V

Masks follow `minitransformer.masks`: boolean, True = may attend.
"""
import minigrad as mg
import minigrad.functional as F
from minigrad import backend, nn

from minitransformer.masks import check_mask

# The fused op (forward and hand-derived backward in one place), re-exported under its
# PyTorch name: scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0,
# is_causal=False, scale=None), q (..., Tq, d_k), k (..., Tk, d_k), v (..., Tk, d_v).
scaled_dot_product_attention = F.scaled_dot_product_attention


def attention_with_weights(q, k, v, attn_mask=None, dropout_p=0.0, training=True):
    """The same attention, unfused, returning (output, weights): weights = softmax(QKᵀ/√d_k)
    with each row summing to 1 (a fully masked row is all zeros). Dropout, if any, is
    applied to the weights used for the output; the returned weights are the undropped
    ones (what one plots)."""
    out, weights = F.attention_with_weights(q, k, v, attn_mask=attn_mask)
    if not 0.0 <= dropout_p < 1.0:                      # (NaN too)
        raise ValueError(f"attention_with_weights: dropout_p must be in [0, 1), got "
                         f"{dropout_p!r}")
    if dropout_p > 0 and training:
        out = F.dropout(weights, dropout_p, training) @ v
    return out, weights


class MultiHeadAttention(nn.Module):
    """Multi-head attention, article 2.2.3.3 多头注意力机制.

    1. project: Q = query·W_Qᵀ + b_Q, K = key·W_Kᵀ + b_K, V = value·W_Vᵀ + b_V, with
       W_Q, W_K, W_V the three (d_model, d_model) blocks of `in_proj_weight` (and the biases
       those of `in_proj_bias`),
    2. split d_model into `n_heads` heads of d_head = d_model / n_heads,
    3. attend in every head independently: softmax(Q_h K_hᵀ / √d_head) V_h,
    4. concatenate the heads and project with `out_proj`.

    Self-attention: `mha(x)`; cross-attention (decoder → encoder memory): `mha(x, memory)`.
    Inputs are batch-first (B, T, d_model). `attn_mask` is boolean, True = may attend, and
    broadcasts to (B, n_heads, Tq, Tk): a Tensor on the query's device, or a NumPy array
    (moved there). With `need_weights=True` it returns (out, weights) with the per-head
    weights (B, n_heads, Tq, Tk).

    The parameters are those of `torch.nn.MultiheadAttention(d_model, n_heads,
    batch_first=True)`, by name: in_proj_weight, in_proj_bias, out_proj.weight/bias.
    (`minigrad.nn.MultiheadAttention` is PyTorch's module itself: its arguments, layouts
    and True-means-blocked masks, for code written against it.)
    """

    def __init__(self, d_model, n_heads, dropout=0.0, bias=True):
        super().__init__()
        for name, n in (("d_model", d_model), ("n_heads", n_heads)):
            if not backend.is_integer(n) or isinstance(n, bool):
                raise ValueError(f"MultiHeadAttention: {name} must be a positive integer, got "
                                 f"{n!r}")
        if d_model < 1:
            raise ValueError(f"MultiHeadAttention: d_model must be a positive integer, got "
                             f"{d_model}")
        if n_heads <= 0 or d_model % n_heads:
            raise ValueError(f"MultiHeadAttention: n_heads must be a positive integer that "
                             f"divides d_model={d_model} (each head gets d_model / n_heads "
                             f"dims), got n_heads={n_heads}; valid n_heads here: "
                             f"{[h for h in range(1, d_model + 1) if d_model % h == 0]}")
        if not 0.0 <= dropout < 1.0:      # said now, not at the first training step
            raise ValueError(f"MultiHeadAttention: dropout must be in [0, 1), got {dropout!r}")
        self.d_model, self.n_heads, self.d_head = d_model, n_heads, d_model // n_heads
        self.dropout = dropout  # on the attention weights, as PyTorch's
        # W_Q, W_K, W_V stacked, as PyTorch stores them
        self.in_proj_weight = nn.Parameter(mg.empty(3 * d_model, d_model))
        self.in_proj_bias = nn.Parameter(mg.empty(3 * d_model)) if bias else None
        self.out_proj = nn.Linear(d_model, d_model, bias=bias)
        self.reset_parameters()

    def reset_parameters(self):
        """As torch.nn.MultiheadAttention starts: in_proj Xavier-uniform over the whole
        stacked (3·d_model, d_model) matrix, both biases zero, out_proj's weight as an
        nn.Linear's."""
        nn.init.xavier_uniform_(self.in_proj_weight)
        if self.in_proj_bias is not None:
            nn.init.zeros_(self.in_proj_bias)
            nn.init.zeros_(self.out_proj.bias)

    def project(self, x, i):
        """x·Wᵢᵀ + bᵢ with the i-th block of in_proj: i = 0 gives Q, 1 K, 2 V."""
        rows = slice(i * self.d_model, (i + 1) * self.d_model)
        bias = None if self.in_proj_bias is None else self.in_proj_bias[rows]
        return F.linear(x, self.in_proj_weight[rows], bias)

    def _split_heads(self, x):
        """(B, T, d_model) -> (B, n_heads, T, d_head)."""
        B, T, _ = x.shape
        return x.reshape(B, T, self.n_heads, self.d_head).transpose(1, 2)

    def _check_inputs(self, query, key, value):
        for name, t in (("query", query), ("key", key), ("value", value)):
            if t.ndim != 3 or t.shape[-1] != self.d_model:
                raise ValueError(f"MultiHeadAttention(d_model={self.d_model}): {name} must be "
                                 f"(batch, length, {self.d_model}), got shape {t.shape}")
        if key.shape[:2] != value.shape[:2] or key.shape[0] != query.shape[0]:
            raise ValueError(f"MultiHeadAttention: query {query.shape}, key {key.shape} and "
                             f"value {value.shape} must share the batch size, key and value "
                             f"the length")

    def forward(self, query, key=None, value=None, attn_mask=None, need_weights=False):
        key = query if key is None else key
        value = key if value is None else value
        self._check_inputs(query, key, value)
        B, Tq, Tk = query.shape[0], query.shape[1], key.shape[1]
        attn_mask = check_mask(attn_mask, (B, self.n_heads, Tq, Tk), query.device,
                               "MultiHeadAttention")
        q, k, v = (self._split_heads(self.project(x, i))
                   for i, x in enumerate((query, key, value)))
        p = self.dropout if self.training else 0.0
        if need_weights:
            heads, weights = attention_with_weights(q, k, v, attn_mask, p, self.training)
        else:
            heads = scaled_dot_product_attention(q, k, v, attn_mask=attn_mask, dropout_p=p)
        out = self.out_proj(heads.transpose(1, 2).reshape(B, Tq, self.d_model))
        return (out, weights) if need_weights else out

    def extra_repr(self):
        return f"d_model={self.d_model}, n_heads={self.n_heads}, dropout={self.dropout}"
