"""The Transformer encoder (article 2.2.4.1 编码器结构): a stack of identical layers, each
multi-head self-attention then a feed-forward network, each wrapped in Add & Norm."""
from minigrad import nn

from minitransformer.attention import MultiHeadAttention
from minitransformer.feedforward import feed_forward, get_activation
from minitransformer.sublayer import AddNorm


class EncoderLayer(nn.Module):
    """Article 2.2.4.1 编码器结构, one layer: "core processing" (self-attention, FFN) and
    "post-processing" (residual + layer norm) of the article's three-part split.

        x = AddNorm₁(x, x -> SelfAttention(x, mask=src_mask))
        x = AddNorm₂(x, FFN)

    Post-norm by default (the paper), pre-norm with norm_first=True. Equivalent to
    torch.nn.TransformerEncoderLayer(d_model, n_heads, d_ff, dropout, activation,
    batch_first=True, norm_first=...), with the mask convention flipped (here True = may
    attend). Sub-modules as PyTorch's (state dicts map by name): self_attn, linear1,
    dropout, linear2 (the FFN, 2.2.5.1), norm1, norm2."""

    def __init__(self, d_model, n_heads, d_ff, dropout=0.1, activation="relu",
                 norm_first=False):
        super().__init__()
        self.d_model = d_model
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self.linear1 = nn.Linear(d_model, d_ff)          # the FFN (article 2.2.5.1)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.activation = get_activation(activation)
        self.norm1 = AddNorm(d_model, dropout=dropout, norm_first=norm_first)
        self.norm2 = AddNorm(d_model, dropout=dropout, norm_first=norm_first)

    def ffn(self, x):
        return feed_forward(x, self.linear1, self.linear2, self.dropout, self.activation)

    def forward(self, x, src_mask=None, need_weights=False):
        """x: (B, S, d_model); src_mask: boolean, broadcast to (B, heads, S, S), usually
        padding_mask(src, pad_id). With need_weights, also the self-attention weights."""
        out = self.self_attn(self.norm1.before(x), attn_mask=src_mask,
                             need_weights=need_weights)
        out, weights = out if need_weights else (out, None)
        x = self.norm1.after(x, out)                     # self-attention, Add & Norm
        x = self.norm2(x, self.ffn)
        return (x, weights) if need_weights else x


class Encoder(nn.Module):
    """Article 2.2.4.1: `num_layers` EncoderLayers (the paper: 6). With pre-norm the stack
    ends with a LayerNorm (`norm`), since no layer normalises its own output."""

    def __init__(self, d_model, n_heads, d_ff, num_layers, dropout=0.1, activation="relu",
                 norm_first=False):
        super().__init__()
        self.layers = nn.ModuleList(
            EncoderLayer(d_model, n_heads, d_ff, dropout, activation, norm_first)
            for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model) if norm_first else None

    def forward(self, x, src_mask=None):
        for layer in self.layers:
            x = layer(x, src_mask)
        return x if self.norm is None else self.norm(x)
