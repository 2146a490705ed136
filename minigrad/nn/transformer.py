"""nn.Transformer and its parts with PyTorch's signatures: TransformerEncoderLayer,
TransformerDecoderLayer, TransformerEncoder, TransformerDecoder and Transformer, with
torch.nn's arguments, defaults, submodule and parameter names (a PyTorch state dict loads
and gives the same outputs) and masks (True = blocked, a float mask added; see
nn.MultiheadAttention). The article's lesson versions, batch-first with True-means-attend
masks, are in minitransformer/.

Differences from PyTorch: there is no inference "fast path" (PyTorch's fused kernels and
nested tensors in eval mode), so every call computes as PyTorch's training path does;
`enable_nested_tensor` is accepted and has no effect. Where PyTorch's encoder takes that fast
path with a src_key_padding_mask (eval mode, no grad), its output at padded positions is
zero; here those positions keep their computed values (the others are the same). A query
whose every key is masked gets a zero attention output, not NaN (nn.MultiheadAttention).
"""
import copy
import math

from minigrad import backend, creation, functional as F
from minigrad.creation import as_tensor
from minigrad.nn import init
from minigrad.nn.attention import MultiheadAttention
from minigrad.nn.containers import ModuleList
from minigrad.nn.layers import Dropout, LayerNorm, Linear
from minigrad.nn.module import Module
from minigrad.tensor import Tensor

_ACTIVATIONS = {"relu": F.relu, "gelu": F.gelu}


def _activation(who, activation):
    """The feed-forward's nonlinearity: "relu", "gelu" or any callable (F.silu, nn.GELU())."""
    if isinstance(activation, str):
        if activation not in _ACTIVATIONS:       # (RuntimeError, as PyTorch raises)
            raise RuntimeError(f"{who}: activation should be 'relu' or 'gelu' (or a "
                               f"callable such as F.silu), not {activation!r}")
        return _ACTIVATIONS[activation]
    if not callable(activation):
        raise TypeError(f"{who}: activation must be 'relu', 'gelu' or a callable, got "
                        f"{type(activation).__name__}")
    return activation


def _check_sizes(who, d_model, nhead, dim_feedforward):
    if not all(backend.is_integer(n) and n > 0 for n in (d_model, nhead, dim_feedforward)):
        raise ValueError(f"{who}: d_model, nhead and dim_feedforward must be positive "
                         f"integers, got {d_model!r}, {nhead!r}, {dim_feedforward!r}")
    if d_model % nhead:
        raise ValueError(f"{who}: d_model ({d_model}) must be divisible by nhead ({nhead}): "
                         f"each head attends with d_model // nhead dims")


def _check_sequence(who, name, x, d_model, batch_first):
    """x is (L, d_model) or batched (N, L, d_model) / (L, N, d_model), or a named error."""
    if not isinstance(x, Tensor) or x.ndim not in (2, 3) or x.shape[-1] != d_model:
        form = "(N, L, E)" if batch_first else "(L, N, E)"
        got = x.shape if isinstance(x, Tensor) else type(x).__name__
        raise ValueError(f"{who}: {name} must be (L, E) or batched {form} (batch_first="
                         f"{batch_first}) with E = d_model = {d_model}, got {got}")


def _check_memory(who, tgt, memory, batch_first):
    """The decoder's memory: batched as tgt is, with tgt's batch size."""
    b = 0 if batch_first else 1
    if memory.ndim != tgt.ndim or (tgt.ndim == 3 and memory.shape[b] != tgt.shape[b]):
        raise ValueError(f"{who}: tgt {tgt.shape} and memory {memory.shape} must both be "
                         f"unbatched (L, E) or both batched with one batch size (dim {b}, "
                         f"batch_first={batch_first})")


def _attend(who, attn, query, kv, mask, key_padding_mask, is_causal, names):
    """attn(query, kv, kv) with the masks, its weights not asked for (as PyTorch's layers);
    its mask errors reworded with the names the caller gave the masks."""
    mask_name, padding_name, causal_name = names
    if is_causal and mask is None:
        raise RuntimeError(f"{who}: {causal_name}=True is a hint that {mask_name} is the "
                           f"causal mask; pass that mask too (Transformer."
                           f"generate_square_subsequent_mask(L))")
    try:
        return attn(query, kv, kv, attn_mask=mask, key_padding_mask=key_padding_mask,
                    need_weights=False, is_causal=bool(is_causal))[0]
    except (ValueError, TypeError) as e:
        msg = str(e).replace("key_padding_mask", padding_name).replace("attn_mask",
                                                                       mask_name)
        raise type(e)(f"{who}: {msg}") from e


class TransformerEncoderLayer(Module):
    """One encoder layer (article 2.2.4.1): multi-head self-attention, then a position-wise
    feed-forward network (2.2.5.1), each wrapped in a residual connection (2.2.5.3) and a
    LayerNorm (2.2.5.4): after the addition (norm_first=False, the original paper's), or
    before each sublayer (norm_first=True, pre-LN, which trains deep stacks more stably).

    forward(src, src_mask=None, src_key_padding_mask=None, is_causal=False) -> same shape as
    src: (S, E) unbatched, (S, N, E), or (N, S, E) with batch_first=True."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        who = type(self).__name__
        _check_sizes(who, d_model, nhead, dim_feedforward)
        kw = dict(device=device, dtype=dtype)
        # the names and order of PyTorch's, so its state dict loads key for key
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)          # inside the feed-forward, after activation
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)         # on each sublayer's output, before the add
        self.dropout2 = Dropout(dropout)
        self.activation = _activation(who, activation)

    def forward(self, src, src_mask=None, src_key_padding_mask=None, is_causal=False):
        _check_sequence(type(self).__name__, "src", src, self.self_attn.embed_dim,
                        self.self_attn.batch_first)
        x = src
        if self.norm_first:                      # x + f(norm(x)): the residual path is clean
            x = x + self._sa_block(self.norm1(x), src_mask, src_key_padding_mask, is_causal)
            x = x + self._ff_block(self.norm2(x))
        else:                                    # norm(x + f(x)): "Add & Norm"
            x = self.norm1(x + self._sa_block(x, src_mask, src_key_padding_mask, is_causal))
            x = self.norm2(x + self._ff_block(x))
        return x

    def _sa_block(self, x, mask, key_padding_mask, is_causal):
        return self.dropout1(_attend(type(self).__name__, self.self_attn, x, x, mask,
                                     key_padding_mask, is_causal,
                                     ("src_mask", "src_key_padding_mask", "is_causal")))

    def _ff_block(self, x):
        """linear2(dropout(activation(linear1(x)))): up to dim_feedforward and back."""
        return self.dropout2(self.linear2(self.dropout(self.activation(self.linear1(x)))))


class TransformerDecoderLayer(Module):
    """One decoder layer (article 2.2.4.2): masked self-attention over the target, attention
    from the target to the encoder's output (memory), then the feed-forward network; each
    with its residual connection and LayerNorm, placed as in TransformerEncoderLayer.

    forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False) -> tgt's
    shape. The causal mask is not implied: pass tgt_mask (generate_square_subsequent_mask)."""

    def __init__(self, d_model, nhead, dim_feedforward=2048, dropout=0.1, activation=F.relu,
                 layer_norm_eps=1e-5, batch_first=False, norm_first=False, bias=True,
                 device=None, dtype=None):
        super().__init__()
        who = type(self).__name__
        _check_sizes(who, d_model, nhead, dim_feedforward)
        kw = dict(device=device, dtype=dtype)
        self.self_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                            batch_first=batch_first, **kw)
        self.multihead_attn = MultiheadAttention(d_model, nhead, dropout=dropout, bias=bias,
                                                 batch_first=batch_first, **kw)
        self.linear1 = Linear(d_model, dim_feedforward, bias=bias, **kw)
        self.dropout = Dropout(dropout)
        self.linear2 = Linear(dim_feedforward, d_model, bias=bias, **kw)
        self.norm_first = norm_first
        self.norm1 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm2 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.norm3 = LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw)
        self.dropout1 = Dropout(dropout)
        self.dropout2 = Dropout(dropout)
        self.dropout3 = Dropout(dropout)
        self.activation = _activation(who, activation)

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=False, memory_is_causal=False):
        who, E, bf = type(self).__name__, self.self_attn.embed_dim, self.self_attn.batch_first
        _check_sequence(who, "tgt", tgt, E, bf)
        _check_sequence(who, "memory", memory, E, bf)
        _check_memory(who, tgt, memory, bf)
        x = tgt
        if self.norm_first:
            x = x + self._sa_block(self.norm1(x), tgt_mask, tgt_key_padding_mask,
                                   tgt_is_causal)
            x = x + self._mha_block(self.norm2(x), memory, memory_mask,
                                    memory_key_padding_mask, memory_is_causal)
            x = x + self._ff_block(self.norm3(x))
        else:
            x = self.norm1(x + self._sa_block(x, tgt_mask, tgt_key_padding_mask,
                                              tgt_is_causal))
            x = self.norm2(x + self._mha_block(x, memory, memory_mask,
                                               memory_key_padding_mask, memory_is_causal))
            x = self.norm3(x + self._ff_block(x))
        return x

    def _sa_block(self, x, mask, key_padding_mask, is_causal):
        return self.dropout1(_attend(type(self).__name__, self.self_attn, x, x, mask,
                                     key_padding_mask, is_causal,
                                     ("tgt_mask", "tgt_key_padding_mask", "tgt_is_causal")))

    def _mha_block(self, x, memory, mask, key_padding_mask, is_causal):
        """Queries from the target, keys and values from the encoder's output."""
        return self.dropout2(_attend(type(self).__name__, self.multihead_attn, x, memory,
                                     mask, key_padding_mask, is_causal,
                                     ("memory_mask", "memory_key_padding_mask",
                                      "memory_is_causal")))

    def _ff_block(self, x):
        return self.dropout3(self.linear2(self.dropout(self.activation(self.linear1(x)))))


def _clones(who, layer, num_layers):
    """num_layers independent deep copies of layer (each its own parameters, all starting
    equal, as PyTorch's); the layer given is not itself registered."""
    if not isinstance(layer, Module):
        raise TypeError(f"{who}: the layer to stack must be a Module, got "
                        f"{type(layer).__name__}")
    if not backend.is_integer(num_layers) or num_layers < 0:
        raise ValueError(f"{who}: num_layers must be a non-negative integer, got "
                         f"{num_layers!r}")
    return ModuleList([copy.deepcopy(layer) for _ in range(num_layers)])


def _is_causal_mask(mask, size):
    """Whether mask is exactly the causal mask of size×size (PyTorch's detection when the
    is_causal hint is None): -inf (float) or True (boolean) above the diagonal only. It only
    lets attention take the causal shortcut; the result is the same either way."""
    if mask is None or size is None:
        return False
    if not isinstance(mask, Tensor):             # (a mask may come as a NumPy array;
        mask = as_tensor(mask)                   # a tensor stays where it is)
    if mask.shape != (size, size):
        return False
    if mask.dtype == bool:
        blocked = creation.ones(size, size, dtype=bool, device=mask.device).triu(1)
    elif backend.is_floating(mask.dtype):
        blocked = Transformer.generate_square_subsequent_mask(size, mask.device, mask.dtype)
    else:
        return False                             # (attention names the wrong dtype)
    return bool((mask == blocked).all().item())


def _seq_len(layers, x):
    """The sequence length of x, as the first layer's batch_first reads it (None: unknown)."""
    attn = getattr(layers[0], "self_attn", None) if len(layers) else None
    if not isinstance(x, Tensor) or attn is None or x.ndim not in (2, 3):
        return None
    return x.shape[1 if x.ndim == 3 and attn.batch_first else 0]


class TransformerEncoder(Module):
    """A stack of num_layers copies of encoder_layer (article 2.2.4: N identical layers),
    then `norm` (a LayerNorm, or None). enable_nested_tensor is accepted for PyTorch's
    signature and has no effect (no nested tensors here); mask_check is kept likewise.

    forward(src, mask=None, src_key_padding_mask=None, is_causal=None): is_causal=None
    detects whether mask is the causal mask, as PyTorch."""

    def __init__(self, encoder_layer, num_layers, norm=None, enable_nested_tensor=True,
                 mask_check=True):
        super().__init__()
        self.layers = _clones(type(self).__name__, encoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm
        self.enable_nested_tensor = enable_nested_tensor
        self.use_nested_tensor = False           # never: every call takes the plain path
        self.mask_check = mask_check

    def forward(self, src, mask=None, src_key_padding_mask=None, is_causal=None):
        if is_causal is None:
            is_causal = _is_causal_mask(mask, _seq_len(self.layers, src))
        out = src
        for layer in self.layers:
            out = layer(out, src_mask=mask, src_key_padding_mask=src_key_padding_mask,
                        is_causal=is_causal)
        return out if self.norm is None else self.norm(out)


class TransformerDecoder(Module):
    """A stack of num_layers copies of decoder_layer, each attending to the same memory (the
    encoder's output), then `norm` (a LayerNorm, or None). Article 2.2.4.2.

    forward(tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
    memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False)."""

    def __init__(self, decoder_layer, num_layers, norm=None):
        super().__init__()
        self.layers = _clones(type(self).__name__, decoder_layer, num_layers)
        self.num_layers = num_layers
        self.norm = norm

    def forward(self, tgt, memory, tgt_mask=None, memory_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, tgt_is_causal=None, memory_is_causal=False):
        if tgt_is_causal is None:
            tgt_is_causal = _is_causal_mask(tgt_mask, _seq_len(self.layers, tgt))
        out = tgt
        for layer in self.layers:
            out = layer(out, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                        tgt_key_padding_mask=tgt_key_padding_mask,
                        memory_key_padding_mask=memory_key_padding_mask,
                        tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)
        return out if self.norm is None else self.norm(out)


class Transformer(Module):
    """The encoder-decoder Transformer of "Attention Is All You Need" (article 2.2.4):
    num_encoder_layers encoder layers and num_decoder_layers decoder layers, each stack
    ending in a LayerNorm; or custom_encoder / custom_decoder in their place. Embeddings and
    positional encodings (2.2.5.2) are the caller's, as in PyTorch.

    forward(src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
    src_key_padding_mask=None, tgt_key_padding_mask=None, memory_key_padding_mask=None,
    src_is_causal=None, tgt_is_causal=None, memory_is_causal=False) -> tgt's shape."""

    def __init__(self, d_model=512, nhead=8, num_encoder_layers=6, num_decoder_layers=6,
                 dim_feedforward=2048, dropout=0.1, activation=F.relu, custom_encoder=None,
                 custom_decoder=None, layer_norm_eps=1e-5, batch_first=False,
                 norm_first=False, bias=True, device=None, dtype=None):
        super().__init__()
        layer_args = (d_model, nhead, dim_feedforward, dropout, activation, layer_norm_eps,
                      batch_first, norm_first, bias)
        kw = dict(device=device, dtype=dtype)
        if custom_encoder is not None:
            self.encoder = custom_encoder
        else:
            self.encoder = TransformerEncoder(
                TransformerEncoderLayer(*layer_args, **kw), num_encoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        if custom_decoder is not None:
            self.decoder = custom_decoder
        else:
            self.decoder = TransformerDecoder(
                TransformerDecoderLayer(*layer_args, **kw), num_decoder_layers,
                LayerNorm(d_model, eps=layer_norm_eps, bias=bias, **kw))
        self._reset_parameters()
        self.d_model, self.nhead, self.batch_first = d_model, nhead, batch_first

    def _reset_parameters(self):
        """PyTorch's: every matrix (custom encoder's and decoder's too) Xavier-uniform; the
        biases and LayerNorm parameters keep their modules' init. The cloned layers, equal
        until now, each get their own draw here."""
        for p in self.parameters():
            if p.ndim > 1:
                init.xavier_uniform_(p)

    def forward(self, src, tgt, src_mask=None, tgt_mask=None, memory_mask=None,
                src_key_padding_mask=None, tgt_key_padding_mask=None,
                memory_key_padding_mask=None, src_is_causal=None, tgt_is_causal=None,
                memory_is_causal=False):
        for name, x in (("src", src), ("tgt", tgt)):
            _check_sequence("Transformer", name, x, self.d_model, self.batch_first)
        b = 0 if self.batch_first else 1
        if src.ndim != tgt.ndim or (src.ndim == 3 and src.shape[b] != tgt.shape[b]):
            raise ValueError(f"Transformer: src {src.shape} and tgt {tgt.shape} must both be "
                             f"unbatched (L, E) or both batched with one batch size (dim "
                             f"{b}, batch_first={self.batch_first})")
        memory = self.encoder(src, mask=src_mask, src_key_padding_mask=src_key_padding_mask,
                              is_causal=src_is_causal)
        return self.decoder(tgt, memory, tgt_mask=tgt_mask, memory_mask=memory_mask,
                            tgt_key_padding_mask=tgt_key_padding_mask,
                            memory_key_padding_mask=memory_key_padding_mask,
                            tgt_is_causal=tgt_is_causal, memory_is_causal=memory_is_causal)

    @staticmethod
    def generate_square_subsequent_mask(sz, device=None, dtype=None):
        """The causal mask (article 2.2.3.4) as a float mask to add to the scores: -inf above
        the diagonal (a later position, hidden), 0 on and below it; (sz, sz)."""
        if not backend.is_integer(sz) or sz < 0:
            raise ValueError(f"generate_square_subsequent_mask: sz must be a non-negative "
                             f"integer, got {sz!r}")
        return creation.full((sz, sz), -math.inf, dtype=dtype, device=device).triu(1)
