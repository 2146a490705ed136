"""The position-wise feed-forward network (article 2.2.5.1 前馈神经网络):
FFN(x) = Linear₂(Dropout(act(Linear₁(x)))), applied to every position independently."""
import minigrad.functional as F
from minigrad import nn

ACTIVATIONS = {
    "relu": F.relu,                                   # the paper's choice
    "gelu": F.gelu,                                   # BERT / GPT's choice (exact erf form)
    "gelu_tanh": lambda x: F.gelu(x, approximate="tanh"),
    "tanh": F.tanh,
}


def get_activation(activation):
    """An activation by name (one of ACTIVATIONS) or any callable Tensor -> Tensor."""
    if callable(activation):
        return activation
    if activation not in ACTIVATIONS:
        raise ValueError(f"unknown activation {activation!r}; valid: {sorted(ACTIVATIONS)} "
                         f"or a callable")
    return ACTIVATIONS[activation]


def feed_forward(x, linear1, linear2, dropout, activation):
    """FFN(x) = linear2(dropout(activation(linear1(x)))), position by position."""
    return linear2(dropout(activation(linear1(x))))


class FeedForward(nn.Module):
    """Article 2.2.5.1 前馈神经网络: expand d_model -> d_ff (the paper: 512 -> 2048), apply
    the non-linearity, drop out, project back d_ff -> d_model.

    The article adds that "Dropout and Layer Normalization" are often placed between these
    layers; here, as in PyTorch's TransformerEncoderLayer (and tensor2tensor), dropout sits
    between them and layer norm outside, in the Add & Norm around the whole FFN
    (sublayer.py). (The paper itself puts dropout only on each sublayer's output and on the
    embeddings plus positional encoding, §5.4.)

    An EncoderLayer/DecoderLayer holds the same parts, `linear1`, `dropout`, `linear2`,
    directly (as torch.nn.TransformerEncoderLayer does, so state dicts map by name)."""

    def __init__(self, d_model, d_ff, dropout=0.1, activation="relu"):
        super().__init__()
        self.activation_name = activation if isinstance(activation, str) else \
            getattr(activation, "__name__", "custom")
        self.activation = get_activation(activation)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return feed_forward(x, self.linear1, self.linear2, self.dropout, self.activation)

    def extra_repr(self):
        return f"activation={self.activation_name}"
