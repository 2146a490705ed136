"""Scaled dot-product attention (article 2.2.3.2): softmax(QKᵀ/√d_k)·V, fused into one op.

Masks follow PyTorch's SDPA: a boolean `attn_mask` is True where a query may attend to a key
(a float mask is added to the scores instead); `is_causal` keeps key j ≤ query i. A query
that may attend to nothing gets zero weights and a zero output, never NaN."""
import math

from minigrad import backend
from minigrad.autograd import Function, is_grad_enabled
from minigrad.tensor import Tensor
from minigrad.ops.softmax import stable_softmax
from minigrad.ops.blocks import in_row_pieces
from minigrad.ops.elementwise import where
from minigrad.ops.shape import raw_index


def _scores(xp, q, k, scale, allowed, additive):
    """The masked, scaled scores on raw arrays, in place on the fresh product Q·Kᵀ."""
    s = xp.matmul(q, xp.swapaxes(k, -1, -2))
    s *= scale
    if additive is not None:
        if backend.broadcast_shapes(s.shape, additive.shape) == s.shape:
            s += additive
        else:                                             # a mask with more batch dims
            s = s + additive
    if allowed is not None:
        if backend.broadcast_shapes(s.shape, allowed.shape) == s.shape:
            xp.copyto(s, -xp.inf, where=xp.logical_not(allowed))
        else:
            s = xp.where(allowed, s, -xp.inf)
    return s


class ScaledDotProductAttention(Function):
    def forward(self, q, k, v, scale, allowed, additive, dropout_p, rng):
        xp = self.xp
        self.scale, self.allowed, self.additive = scale, allowed, additive
        s = _scores(xp, q, k, scale, allowed, additive)
        in_row_pieces(backend.get(self.device), lambda r: stable_softmax(xp, r, -1, out=r), s)
        self.probs = s
        p = self.probs
        self.keep, self.dropout_scale = None, 1 / (1 - dropout_p)
        if dropout_p > 0:                                 # a boolean mask: a quarter the memory
            self.keep = rng.random(p.shape, dtype=p.dtype) >= dropout_p
            p = p * self.keep
            p *= self.dropout_scale
        return xp.matmul(p, v)

    def backward(self, g):
        q, k, v = self.inputs
        if is_grad_enabled():   # double backward: the probabilities as a graph of q and k
            s = (q @ k.mT) * self.scale
            if self.additive is not None:
                s = s + self.const(self.additive)
            if self.allowed is not None:
                s = where(self.const(self.allowed), s, -math.inf)  # the mask may add batch dims
            p = s.softmax(-1)
        else:
            p = self.const(self.probs)
        keep = None if self.keep is None else \
            self.const(self.keep.astype(p.dtype) * self.dropout_scale)
        pd = p if keep is None else p * keep
        gv = pd.mT @ g                                    # dV = Pᵀ·G
        gp = g @ v.mT                                     # dP = G·Vᵀ
        if keep is not None:
            gp = gp * keep
        gs = p * (gp - (gp * p).sum(-1, keepdim=True)) * self.scale   # softmax backward
        return gs @ k, gs.mT @ q, gv                      # dQ = dS·K, dK = dSᵀ·Q

    def backward_arrays(self, g):                         # the same on arrays
        xp = self.xp
        q, k, v = (t.data for t in self.inputs)
        p, keep = self.probs, self.keep
        if keep is None:
            pd = p
        else:
            pd = p * keep
            pd *= self.dropout_scale
        gv = xp.matmul(xp.swapaxes(pd, -1, -2), g)
        gs = xp.matmul(g, xp.swapaxes(v, -1, -2))        # dP, then dS in place

        def softmax_grad(gs, p, *keep):                  # on cache-sized blocks of rows
            if keep:
                gs *= keep[0]
                gs *= self.dropout_scale
            gs *= p
            gs -= p * gs.sum(axis=-1, keepdims=True)     # dS = P⊙(dP - Σ dP⊙P)
            gs *= self.scale
        in_row_pieces(backend.get(self.device), softmax_grad, gs, p,
                      *(() if keep is None else (keep,)))
        return xp.matmul(gs, k), xp.matmul(xp.swapaxes(gs, -1, -2), q), gv


def _mask_arrays(q, k, attn_mask, is_causal, op="scaled_dot_product_attention"):
    """(allowed, additive): a boolean array of where attending is allowed, and/or a float
    array added to the scores, each broadcastable to the scores' shape."""
    xp = q.backend.xp
    L, S = q.shape[-2], k.shape[-2]
    score_shape = backend.broadcast_shapes(q.shape[:-2], k.shape[:-2]) + (L, S)
    allowed = additive = None
    if attn_mask is not None:
        m = raw_index(attn_mask, q, op, "attn_mask")
        if not hasattr(m, "dtype"):
            m = xp.asarray(m)
        try:
            backend.broadcast_shapes(m.shape, score_shape)
            if m.ndim > len(score_shape):
                raise ValueError
        except ValueError:
            raise ValueError(f"{op}: attn_mask of shape "
                             f"{tuple(m.shape)} cannot broadcast to the attention scores' "
                             f"shape {score_shape} (..., queries, keys)") from None
        if m.dtype == bool:
            allowed = m
        else:
            additive = m.astype(q.dtype)
    if is_causal:
        causal = xp.tril(xp.ones((L, S), dtype=bool))
        allowed = causal if allowed is None else allowed & causal
    return allowed, additive


def scaled_dot_product_attention(q, k, v, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None):
    """softmax(Q·Kᵀ·scale + mask)·V with scale = 1/√d_k by default. q: (..., L, E),
    k: (..., S, E), v: (..., S, Ev) -> (..., L, Ev). A boolean mask and is_causal combine."""
    if q.ndim < 2 or k.ndim < 2 or v.ndim < 2:
        raise ValueError(f"scaled_dot_product_attention: q, k, v need at least 2 dims, got "
                         f"{q.shape}, {k.shape}, {v.shape}")
    if q.shape[-1] != k.shape[-1] or k.shape[-2] != v.shape[-2]:
        raise ValueError(f"scaled_dot_product_attention: q {q.shape} and k {k.shape} must "
                         f"share the last dim, k and v {v.shape} the number of keys")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1), got "
                         f"{dropout_p}")
    allowed, additive = _mask_arrays(q, k, attn_mask, is_causal)
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    return ScaledDotProductAttention.apply(q, k, v, scale=scale, allowed=allowed,
                                           additive=additive, dropout_p=dropout_p,
                                           rng=q.backend.rng)


def attention_with_weights(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """The same attention composed from primitive ops, returning (output, weights): for when
    the attention weights themselves are wanted (to plot them, or as need_weights), and the
    readable reference the fused op is tested against. The weights are differentiable too."""
    allowed, additive = _mask_arrays(q, k, attn_mask, is_causal, "attention_with_weights")
    scale = 1.0 / math.sqrt(q.shape[-1]) if scale is None else scale
    s = (q @ k.mT) * scale
    if additive is not None:
        s = s + Tensor._make(additive, q.device)
    if allowed is not None:
        s = where(Tensor._make(allowed, q.device), s, -math.inf)  # may add batch dims
    p = s.softmax(-1)
    return p @ v, p


attention_reference = attention_with_weights  # the old name, kept for one release
