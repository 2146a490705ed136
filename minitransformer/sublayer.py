"""The "Add & Norm" box of the Transformer figure: a residual connection (article 2.2.5.3
残差连接) around a sublayer, with layer normalisation (2.2.5.4 层归一化). Two wirings:

    post-norm (the paper, norm_first=False):  x = LayerNorm(x + Dropout(sublayer(x)))
    pre-norm  (GPT-2 on, norm_first=True):    x = x + Dropout(sublayer(LayerNorm(x)))

Pre-norm leaves an un-normalised residual path from input to output, which trains deep
stacks more easily (it needs less learning-rate warm-up); the stack then ends with one
final LayerNorm.
"""
from minigrad import nn


class AddNorm(nn.LayerNorm):
    """Article 2.2.5.3 残差连接 + 2.2.5.4 层归一化: `norm(x, sublayer)` (a layer's
    `self.norm2(x, self.ffn)`) wraps the callable `sublayer` (attention or feed-forward) in
    a residual connection plus layer norm. It IS the layer norm (its `weight`, `bias` are the norm's, with PyTorch's
    biased variance and eps inside the square root), so a layer's `norm1`, `norm2` carry
    the same names as in torch.nn.TransformerEncoderLayer."""

    def __init__(self, d_model, dropout=0.1, norm_first=False, eps=1e-5):
        super().__init__(d_model, eps=eps)
        self.norm_first = norm_first
        self.dropout = nn.Dropout(dropout)

    def normalize(self, x):
        return nn.LayerNorm.forward(self, x)

    def forward(self, x, sublayer):
        return self.after(x, sublayer(self.before(x)))

    def before(self, x):
        """What the sublayer reads: LayerNorm(x) with pre-norm, x itself with post-norm."""
        return self.normalize(x) if self.norm_first else x

    def after(self, x, y):
        """The residual connection around the sublayer's output y, then (post-norm) the
        norm. `before`/`after` serve a sublayer that also returns something else (the
        attention weights), which `forward`'s callable cannot."""
        y = x + self.dropout(y)
        return y if self.norm_first else self.normalize(y)

    def extra_repr(self):
        return f"{self.normalized_shape}, norm_first={self.norm_first}"
