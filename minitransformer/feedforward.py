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


class FeedForward(nn.Module):
    """Article 2.2.5.1 前馈神经网络: expand d_model -> d_ff (the paper: 512 -> 2048), apply
    the non-linearity, drop out, project back d_ff -> d_model.

    Inside an EncoderLayer/DecoderLayer this module is `ffn`, so its weights are
    `ffn.linear1.*` and `ffn.linear2.*` where torch.nn.TransformerEncoderLayer has `linear1.*`
    and `linear2.*` (drop the `ffn.` prefix to map a state dict); `dropout` here is torch's
    `dropout` (the one between the two Linears). torch's `dropout1`/`dropout2` (on each
    sublayer's output, before the residual add) are the `dropout` of our `norm1`/`norm2`
    (AddNorm); they hold no weights."""

    def __init__(self, d_model, d_ff, dropout=0.1, activation="relu"):
        super().__init__()
        self.activation_name = activation if isinstance(activation, str) else \
            getattr(activation, "__name__", "custom")
        self.activation = get_activation(activation)
        self.linear1 = nn.Linear(d_model, d_ff)
        self.dropout = nn.Dropout(dropout)
        self.linear2 = nn.Linear(d_ff, d_model)

    def forward(self, x):
        return self.linear2(self.dropout(self.activation(self.linear1(x))))

    def extra_repr(self):
        return f"activation={self.activation_name}"
