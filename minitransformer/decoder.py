"""The Transformer decoder (article 2.2.4.2 解码器结构): like the encoder, but each layer
has three sublayers — masked self-attention, cross-attention to the encoder's output
(`memory`), and the feed-forward network — each wrapped in Add & Norm."""
from minigrad import nn

from minitransformer.attention import MultiHeadAttention
from minitransformer.feedforward import feed_forward, get_activation
from minitransformer.sublayer import AddNorm


class DecoderLayer(nn.Module):
    """Article 2.2.4.2 解码器结构, one layer:

        x = AddNorm₁(x, SelfAttention(x, mask=tgt_mask))           masked (causal), 2.2.3.4
        x = AddNorm₂(x, CrossAttention(query=x, key=value=memory))  encoder-decoder attention
        x = AddNorm₃(x, FFN)

    Equivalent to torch.nn.TransformerDecoderLayer(batch_first=True, norm_first=...) with
    the mask convention flipped (here True = may attend). Sub-modules as PyTorch's (state
    dicts map by name): self_attn, multihead_attn (the cross-attention), linear1, dropout,
    linear2 (the FFN, 2.2.5.1), norm1, norm2, norm3."""

    def __init__(self, d_model, n_heads, d_ff, dropout=0.1, activation="relu",
                 norm_first=False):
        super().__init__()
        self.d_model = d_model
        self.self_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self.multihead_attn = MultiHeadAttention(d_model, n_heads, dropout=dropout)
        self.linear1 = nn.Linear(d_model, d_ff)          # the FFN (article 2.2.5.1)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)
        self.activation = get_activation(activation)
        self.norm1 = AddNorm(d_model, dropout=dropout, norm_first=norm_first)
        self.norm2 = AddNorm(d_model, dropout=dropout, norm_first=norm_first)
        self.norm3 = AddNorm(d_model, dropout=dropout, norm_first=norm_first)

    def ffn(self, x):
        return feed_forward(x, self.linear1, self.linear2, self.dropout, self.activation)

    def forward(self, x, memory, tgt_mask=None, memory_mask=None, need_weights=False):
        """x: (B, T, d_model) target-side states; memory: (B, S, d_model) the encoder's
        output. tgt_mask (usually causal & target padding) broadcasts to (B, heads, T, T);
        memory_mask (usually padding_mask(src)) to (B, heads, T, S). With need_weights,
        also returns the cross-attention weights (B, heads, T, S)."""
        if memory.ndim != 3 or memory.shape[-1] != self.d_model or \
                memory.shape[0] != x.shape[0]:
            raise ValueError(f"DecoderLayer(d_model={self.d_model}): memory (the encoder's "
                             f"output) must be (batch={x.shape[0]}, source length, "
                             f"{self.d_model}), got shape {memory.shape}")
        x = self.norm1(x, lambda h: self.self_attn(h, attn_mask=tgt_mask))
        out = self.multihead_attn(self.norm2.before(x), memory, attn_mask=memory_mask,
                                  need_weights=need_weights)
        out, weights = out if need_weights else (out, None)
        x = self.norm2.after(x, out)                     # cross-attention, Add & Norm
        x = self.norm3(x, self.ffn)
        return (x, weights) if need_weights else x


class Decoder(nn.Module):
    """Article 2.2.4.2: `num_layers` DecoderLayers (the paper: 6), plus a final LayerNorm
    (`norm`) when pre-norm. With need_weights, also every layer's cross-attention weights."""

    def __init__(self, d_model, n_heads, d_ff, num_layers, dropout=0.1, activation="relu",
                 norm_first=False):
        super().__init__()
        self.layers = nn.ModuleList(
            DecoderLayer(d_model, n_heads, d_ff, dropout, activation, norm_first)
            for _ in range(num_layers))
        self.norm = nn.LayerNorm(d_model) if norm_first else None

    def forward(self, x, memory, tgt_mask=None, memory_mask=None, need_weights=False):
        all_weights = []
        for layer in self.layers:
            if need_weights:
                x, w = layer(x, memory, tgt_mask, memory_mask, need_weights=True)
                all_weights.append(w)
            else:
                x = layer(x, memory, tgt_mask, memory_mask)
        x = x if self.norm is None else self.norm(x)
        return (x, all_weights) if need_weights else x
