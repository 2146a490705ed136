"""F.multi_head_attention_forward, PyTorch's functional multi-head attention, and the one
implementation nn.MultiheadAttention calls: (L, N, E) inputs (or unbatched (L, E)), the
projections given as tensors, PyTorch's masks (a boolean one True where attending is NOT
allowed, a float one added to the scores), bias_k/bias_v, add_zero_attn, static_k/static_v.

Two differences from PyTorch's, as nn.MultiheadAttention's (see nn/attention.py): a query row
whose every key is masked gets zero weights and a zero output, not NaN; and is_causal=True
with need_weights=False keeps to the attn_mask given when a key is added (bias_k or
add_zero_attn), where PyTorch's hides that key from the queries by the hint alone."""
import math

from minigrad import backend
from minigrad.creation import as_tensor, zeros
from minigrad.tensor import Tensor
from minigrad.ops.attention import scaled_dot_product_attention
from minigrad.ops.elementwise import where
from minigrad.ops.linear import linear
from minigrad.ops.pad import pad
from minigrad.ops.random import dropout
from minigrad.ops.shape import cat


def multi_head_attention_forward(query, key, value, embed_dim_to_check, num_heads,
                                 in_proj_weight, in_proj_bias, bias_k, bias_v, add_zero_attn,
                                 dropout_p, out_proj_weight, out_proj_bias, training=True,
                                 key_padding_mask=None, need_weights=True, attn_mask=None,
                                 use_separate_proj_weight=False, q_proj_weight=None,
                                 k_proj_weight=None, v_proj_weight=None, static_k=None,
                                 static_v=None, average_attn_weights=True, is_causal=False):
    """(output, weights or None): output (L, N, E) (or (L, E) unbatched); weights (N, L, S)
    averaged over the heads, or (N, heads, L, S) with average_attn_weights=False. The
    projections are in_proj_weight (3E, E), or with use_separate_proj_weight=True
    q_proj_weight (E, E), k_proj_weight (E, kdim), v_proj_weight (E, vdim); in_proj_bias
    (3E,) or None; bias_k, bias_v (1, 1, E) or None; static_k, static_v (N·heads, S,
    E/heads) replace the projected keys, values."""
    return attend(query, key, value, embed_dim_to_check, num_heads, in_proj_weight,
                  in_proj_bias, bias_k, bias_v, add_zero_attn, dropout_p, out_proj_weight,
                  out_proj_bias, training, key_padding_mask, need_weights, attn_mask,
                  use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight,
                  static_k, static_v, average_attn_weights, is_causal,
                  op="multi_head_attention_forward")


def attend(query, key, value, E, num_heads, in_proj_weight, in_proj_bias, bias_k, bias_v,
           add_zero_attn, dropout_p, out_proj_weight, out_proj_bias, training,
           key_padding_mask, need_weights, attn_mask, use_separate_proj_weight, q_proj_weight,
           k_proj_weight, v_proj_weight, static_k, static_v, average_attn_weights, is_causal,
           op):
    """multi_head_attention_forward's body; `op` names the caller in errors."""
    if is_causal and attn_mask is None:
        raise RuntimeError(f"{op}: is_causal is a hint that attn_mask is the causal mask; "
                           f"pass that mask too (True above the diagonal)")
    if not (isinstance(num_heads, int) and num_heads > 0 and E % num_heads == 0):
        raise ValueError(f"{op}: embed_dim ({E}) must be a positive multiple of num_heads "
                         f"({num_heads!r})")
    unbatched = query.ndim == 2
    _check_inputs(query, key, value, E, unbatched, op)
    if unbatched:
        query, key, value = (t.unsqueeze(0) for t in (query, key, value))
    else:                                            # (L, N, E) -> (N, L, E)
        query, key, value = (t.transpose(0, 1) for t in (query, key, value))
    N, L, _ = query.shape
    hd = E // num_heads
    q, k, v = _project(query, key, value, E, in_proj_weight, in_proj_bias,
                       use_separate_proj_weight, q_proj_weight, k_proj_weight, v_proj_weight,
                       op)
    S = k.shape[1] if static_k is None else static_k.shape[-2]   # the keys the masks cover
    mask = _mask(attn_mask, key_padding_mask, N, num_heads, L, S, unbatched, out_proj_weight,
                 op)
    if (bias_k is None) != (bias_v is None):
        raise ValueError(f"{op}: bias_k and bias_v come together (both (1, 1, {E})) or not "
                         f"at all")
    if bias_k is not None:                           # one more key and value, learned
        if static_k is not None or static_v is not None:
            raise ValueError(f"{op}: bias_k/bias_v cannot be added to static_k/static_v")
        k = cat([k, bias_k.reshape(1, 1, E).expand(N, 1, E)], 1)
        v = cat([v, bias_v.reshape(1, 1, E).expand(N, 1, E)], 1)
        mask = None if mask is None else pad(mask, (0, 1))
    q, k, v = (t.reshape(N, t.shape[1], num_heads, hd).transpose(1, 2) for t in (q, k, v))
    k = _static(k, static_k, N, num_heads, hd, "static_k", op)
    v = _static(v, static_v, N, num_heads, hd, "static_v", op)
    if k.shape[2] != v.shape[2]:
        raise ValueError(f"{op}: keys and values must be as many, got {k.shape[2]} and "
                         f"{v.shape[2]} (static_k/static_v)")
    if add_zero_attn:                                # and a zero key and value
        z = zeros(N, num_heads, 1, hd, device=q.device, dtype=q.dtype)
        k, v = cat([k, z], 2), cat([v, z], 2)
        mask = None if mask is None else pad(mask, (0, 1))
    p = dropout_p if training else 0.0
    if need_weights:                                 # the weights themselves: composed
        s = (q @ k.mT) * (1 / math.sqrt(hd))
        weights = (s if mask is None else s + mask).softmax(-1)
        if p:
            weights = dropout(weights, p)            # (returned after dropout, as PyTorch)
        y = weights @ v
    else:
        weights = None
        causal = is_causal and key_padding_mask is None and bias_k is None and \
            not add_zero_attn                        # PyTorch's shortcut: the hint alone
        y = scaled_dot_product_attention(q, k, v, attn_mask=None if causal else mask,
                                         dropout_p=p, is_causal=causal)
    out = linear(y.transpose(1, 2).reshape(N, L, E), out_proj_weight, out_proj_bias)
    if weights is not None and average_attn_weights:
        weights = weights.mean(1)
    if unbatched:
        return out.squeeze(0), None if weights is None else weights.squeeze(0)
    return out.transpose(0, 1), weights


def _check_inputs(query, key, value, E, unbatched, op):
    ts = (query, key, value)
    if not all(isinstance(t, Tensor) for t in ts):
        raise TypeError(f"{op}: query, key, value must be Tensors, got "
                        f"{[type(t).__name__ for t in ts]}")
    if unbatched:
        fits = all(t.ndim == 2 for t in ts) and key.shape[0] == value.shape[0]
    else:
        fits = all(t.ndim == 3 for t in ts) and key.shape[0] == value.shape[0] \
            and query.shape[1] == key.shape[1] == value.shape[1]
    if not fits or query.shape[-1] != E:
        raise ValueError(f"{op}: query, key, value must be (L, {E}), (S, kdim), (S, vdim), "
                         f"or batched (L, N, {E}), (S, N, kdim), (S, N, vdim); got "
                         f"{query.shape}, {key.shape}, {value.shape}")


def _project(query, key, value, E, in_proj_weight, in_proj_bias, separate, wq, wk, wv, op):
    """Q, K, V: each input times its block of the input projection, plus its bias."""
    if separate:
        ws = [wq, wk, wv]
        want = [(E, E), (E, key.shape[-1]), (E, value.shape[-1])]
        names = "q_proj_weight, k_proj_weight, v_proj_weight"
    else:
        ws = [None if in_proj_weight is None else in_proj_weight[i * E:(i + 1) * E]
              for i in range(3)]
        want = [(E, query.shape[-1]), (E, key.shape[-1]), (E, value.shape[-1])]
        names = f"in_proj_weight ((3·{E}, {E}), split in three)"
        if in_proj_weight is None or in_proj_weight.shape != (3 * E, E):
            ws = [None] * 3
    if any(w is None or tuple(w.shape) != s for w, s in zip(ws, want)):
        got = [getattr(w, "shape", None) for w in (ws if separate else [in_proj_weight])]
        raise ValueError(f"{op}: with use_separate_proj_weight={separate} the projections "
                         f"are {names}, needed as {want}; got {got}")
    if in_proj_bias is not None and tuple(in_proj_bias.shape) != (3 * E,):
        raise ValueError(f"{op}: in_proj_bias must be (3·{E},) = ({3 * E},) or None, got "
                         f"{in_proj_bias.shape}")
    bs = [None] * 3 if in_proj_bias is None else \
        [in_proj_bias[i * E:(i + 1) * E] for i in range(3)]
    return tuple(linear(x, w, b) for x, w, b in zip((query, key, value), ws, bs))


def _static(t, static, N, H, hd, name, op):
    """Keys or values given already projected, (N·heads, S, head_dim), in place of t."""
    if static is None:
        return t
    if static.ndim != 3 or static.shape[0] != N * H or static.shape[2] != hd:
        raise ValueError(f"{op}: {name} must be ({N * H}, S, {hd}) (batch × heads, keys, "
                         f"head_dim), got {static.shape}")
    return static.reshape(N, H, static.shape[1], hd)


def _mask(attn_mask, key_padding_mask, N, H, L, S, unbatched, like, op):
    """Both masks as one float mask added to the scores, broadcastable to (N, heads, L,
    S): -inf where a boolean mask is True, a float mask's values as they are. Unbatched
    (N = 1), the shapes expected and named are PyTorch's: (S,), (L, S), (heads, L, S)."""
    total = None
    if attn_mask is not None:
        m = _additive(attn_mask, "attn_mask", like, op)
        if m.shape == (L, S):
            m = m.reshape(1, 1, L, S)
        elif m.shape == (N * H, L, S):
            m = m.reshape(N, H, L, S)
        else:
            raise ValueError(f"{op}: attn_mask must be ({L}, {S}) or ({N * H}, {L}, {S}) ("
                             f"{'heads' if unbatched else 'batch × heads'}, queries, "
                             f"keys), got {m.shape}")
        total = m
    if key_padding_mask is not None:
        m = _additive(key_padding_mask, "key_padding_mask", like, op)
        want = (S,) if unbatched else (N, S)        # named as the caller's input has it
        if m.shape != want:
            raise ValueError(f"{op}: key_padding_mask must be {want} "
                             f"({'keys, for unbatched input' if unbatched else 'batch, keys'})"
                             f", got {m.shape}")
        m = m.reshape(N, 1, 1, S)
        total = m if total is None else total + m
    return total


def _additive(m, name, like, op):
    """A mask as one added to the scores, on `like`'s device and dtype, as PyTorch turns it:
    a boolean one -inf where True (not allowed), 0 elsewhere."""
    m = as_tensor(m, device=like.device)
    if m.dtype == bool:
        z = zeros(m.shape, device=like.device, dtype=like.dtype)
        return where(m, z - math.inf, z)
    if not backend.is_floating(m.dtype):
        raise TypeError(f"{op}: {name} must be boolean or floating point, got {m.dtype}")
    return m.to(dtype=like.dtype)
