"""nn.MultiheadAttention with PyTorch's signature: its arguments, its parameters by name (a
PyTorch state dict loads), its masks and its (output, weights) result, so code written for
torch.nn.MultiheadAttention runs as it is. The article's lesson version, batch-first with
True-means-attend masks, is minitransformer/attention.py; both attend through
F.scaled_dot_product_attention.

Masks, as PyTorch's: a boolean attn_mask or key_padding_mask is True where attending is NOT
allowed (the opposite of SDPA's); a float one is added to the scores. Two differences: a
query row whose every key is masked gets zero weights and a zero output here, where
PyTorch's gives NaN; and with add_bias_kv or add_zero_attn, is_causal=True with
need_weights=False keeps to the attn_mask given (the added key visible to every query, as
with need_weights=True), where PyTorch's attends by the hint alone and so hides that key
from queries 0..L-1.
"""
import math

from minigrad import backend, functional as F
from minigrad.creation import as_tensor, empty, zeros
from minigrad.nn import init
from minigrad.nn.layers import Linear
from minigrad.nn.module import Module, Parameter
from minigrad.ops.elementwise import where
from minigrad.ops.shape import cat


class MultiheadAttention(Module):
    """Multi-head attention (article 2.2.3.3): the query, key and value projected, split
    into heads, each head's scaled dot-product attention, the heads joined and projected.

    forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (output, weights or None), shaped
    (L, N, E) or, with batch_first=True, (N, L, E); unbatched (L, E) inputs too. The
    weights are (N, L, S) averaged over the heads, or (N, heads, L, S)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        if not (isinstance(embed_dim, int) and isinstance(num_heads, int) and embed_dim > 0
                and num_heads > 0 and embed_dim % num_heads == 0):
            raise ValueError(f"MultiheadAttention: embed_dim ({embed_dim!r}) must be a positive "
                             f"multiple of num_heads ({num_heads!r}): each head gets "
                             f"embed_dim // num_heads dims")
        if not 0.0 <= dropout < 1.0:
            raise ValueError(f"MultiheadAttention: dropout must be in [0, 1), got {dropout}")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first, self.add_zero_attn = dropout, batch_first, add_zero_attn
        kw = dict(device=device, dtype=dtype)
        if self._qkv_same_embed_dim:                 # one (3E, E) matrix, as PyTorch
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
        self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:                              # a learned key and value appended
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self):
        """PyTorch's initialisation: Xavier-uniform projections, zero biases."""
        for w in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight,
                  self.v_proj_weight):
            if w is not None:
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                init.xavier_normal_(b)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        if is_causal and attn_mask is None:
            raise RuntimeError("MultiheadAttention: is_causal is a hint that attn_mask is the "
                               "causal mask; pass that mask too (True above the diagonal)")
        unbatched = query.ndim == 2
        self._check_inputs(query, key, value, unbatched)
        if unbatched:
            query, key, value = (t.unsqueeze(0) for t in (query, key, value))
        elif not self.batch_first:                   # (L, N, E) -> (N, L, E)
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        N, L, E = query.shape
        q, k, v = self._project(query, key, value)
        mask = self._mask(attn_mask, key_padding_mask, N, L, k.shape[1], unbatched)
        if self.bias_k is not None:                  # one more key and value, learned
            k = cat([k, self.bias_k.expand(N, 1, E)], 1)
            v = cat([v, self.bias_v.expand(N, 1, E)], 1)
            mask = None if mask is None else F.pad(mask, (0, 1))
        q, k, v = (t.reshape(N, t.shape[1], self.num_heads, self.head_dim).transpose(1, 2)
                   for t in (q, k, v))
        if self.add_zero_attn:                       # and a zero key and value
            pad = zeros(N, self.num_heads, 1, self.head_dim, device=q.device, dtype=q.dtype)
            k, v = cat([k, pad], 2), cat([v, pad], 2)
            mask = None if mask is None else F.pad(mask, (0, 1))
        p = self.dropout if self.training else 0.0
        if need_weights:                             # the weights themselves: composed
            s = (q @ k.mT) * (1 / math.sqrt(self.head_dim))
            weights = (s if mask is None else s + mask).softmax(-1)
            if p:
                weights = F.dropout(weights, p)      # (returned after dropout, as PyTorch)
            y = weights @ v
        else:
            weights = None
            causal = is_causal and key_padding_mask is None and self.bias_k is None and \
                not self.add_zero_attn               # PyTorch's shortcut: the hint alone
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=None if causal else mask,
                                               dropout_p=p, is_causal=causal)
        out = self.out_proj(y.transpose(1, 2).reshape(N, L, E))
        if weights is not None and average_attn_weights:
            weights = weights.mean(1)
        if unbatched:
            return out.squeeze(0), None if weights is None else weights.squeeze(0)
        return (out if self.batch_first else out.transpose(0, 1)), weights

    def _check_inputs(self, query, key, value, unbatched):
        """The inputs' shapes as the caller gave them, or an error naming them all."""
        ts, dims = (query, key, value), (self.embed_dim, self.kdim, self.vdim)
        if unbatched:
            fits = all(t.ndim == 2 for t in ts) and key.shape[0] == value.shape[0]
        else:
            b = 0 if self.batch_first else 1         # the batch dim; the other is the length
            fits = all(t.ndim == 3 for t in ts) and key.shape[1 - b] == value.shape[1 - b] \
                and query.shape[b] == key.shape[b] == value.shape[b]
        if not fits or any(t.shape[-1] != d for t, d in zip(ts, dims)):
            E, kd, vd = dims
            form = "(N, L, E)" if self.batch_first else "(L, N, E)"
            raise ValueError(f"MultiheadAttention: query, key, value must be (L, {E}), "
                             f"(S, {kd}), (S, {vd}), or batched as {form} (batch_first="
                             f"{self.batch_first}) with one batch size N; got {query.shape}, "
                             f"{key.shape}, {value.shape}")

    def _project(self, query, key, value):
        """Q, K, V: each input times its block of the input projection, plus its bias."""
        E = self.embed_dim
        ws = [self.in_proj_weight[i * E:(i + 1) * E] for i in range(3)] \
            if self._qkv_same_embed_dim else \
            [self.q_proj_weight, self.k_proj_weight, self.v_proj_weight]
        bs = [None] * 3 if self.in_proj_bias is None else \
            [self.in_proj_bias[i * E:(i + 1) * E] for i in range(3)]
        return tuple(F.linear(x, w, b) for x, w, b in zip((query, key, value), ws, bs))

    def _mask(self, attn_mask, key_padding_mask, N, L, S, unbatched=False):
        """Both masks as one float mask added to the scores, broadcastable to (N, heads, L,
        S): -inf where a boolean mask is True, a float mask's values as they are. Unbatched
        (N = 1), the shapes expected and named are PyTorch's: (S,), (L, S), (heads, L, S)."""
        total = None
        if attn_mask is not None:
            m = _additive(attn_mask, "attn_mask", self)
            if m.shape == (L, S):
                m = m.reshape(1, 1, L, S)
            elif m.shape == (N * self.num_heads, L, S):
                m = m.reshape(N, self.num_heads, L, S)
            else:
                raise ValueError(f"MultiheadAttention: attn_mask must be ({L}, {S}) or "
                                 f"({N * self.num_heads}, {L}, {S}) ("
                                 f"{'heads' if unbatched else 'batch × heads'}, queries, "
                                 f"keys), got {m.shape}")
            total = m
        if key_padding_mask is not None:
            m = _additive(key_padding_mask, "key_padding_mask", self)
            want = (S,) if unbatched else (N, S)    # named as the caller's input has it
            if m.shape != want:
                raise ValueError(f"MultiheadAttention: key_padding_mask must be {want} "
                                 f"({'keys, for unbatched input' if unbatched else 'batch, keys'})"
                                 f", got {m.shape}")
            m = m.reshape(N, 1, 1, S)
            total = m if total is None else total + m
        return total


def _additive(m, name, module):
    """A mask as one added to the scores, on the module's device and dtype, as PyTorch
    turns it: a boolean one -inf where True (not allowed), 0 elsewhere."""
    w = module.out_proj.weight
    m = as_tensor(m, device=w.device)
    if m.dtype == bool:
        z = zeros(m.shape, device=w.device, dtype=w.dtype)
        return where(m, z - math.inf, z)
    if not backend.is_floating(m.dtype):
        raise TypeError(f"MultiheadAttention: {name} must be boolean or floating point, got "
                        f"{m.dtype}")
    return m.to(dtype=w.dtype)
