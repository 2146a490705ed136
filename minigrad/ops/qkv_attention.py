"""Multi-head attention straight from one (B, T, 3C) projection of queries, keys and values
(article 2.2.3.3): the same arithmetic as GPT's readable lines

    q, k, v = qkv.split(C, dim=2)
    q, k, v = (t.reshape(B, T, n_head, C // n_head).transpose(1, 2) for t in (q, k, v))
    y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
    y = y.transpose(1, 2).reshape(B, T, C)

as one op. Those are eleven ops around the attention; each costs the engine's bookkeeping
twice (forward and backward), and the split's backward adds three slices into a zeroed
buffer. Here q, k, v are views of qkv, the output is laid out (B, T, heads, head size) so
the re-assembly is a view, and the backward writes dQ, dK, dV straight into the thirds of
one gradient array. GPT uses it on the CPU and keeps the lines above beside it (with a
KV cache, and on a GPU), and a test checks that the two agree to the bit.
"""
import math
import numbers

from minigrad import backend
from minigrad.grad_mode import autocast_half, autocast_set
from minigrad.ops.attention import (ScaledDotProductAttention, _causal, _causal_ceiling,
                                    scaled_dot_product_attention)
from minigrad.tensor import Tensor


class QKVAttention(ScaledDotProductAttention):
    """ScaledDotProductAttention over the heads of a (B, T, 3C) projection."""

    def forward(self, qkv, n_head, dropout_p, is_causal):
        B, T, C3 = qkv.shape
        self.n_head, self.head = n_head, C3 // 3 // n_head
        q, k, v = _heads(qkv, n_head)
        allowed = _causal(self.xp, T, T) if is_causal else None     # both kept between
        ceiling = _causal_ceiling(self.xp, T, T, qkv.dtype) if is_causal else None  # calls
        out = super().forward(q, k, v, scale=1 / math.sqrt(self.head), allowed=allowed,
                              additive=None, ceiling=ceiling, dropout_p=dropout_p)
        return out.transpose(0, 2, 1, 3).reshape(B, T, C3 // 3)   # heads side by side

    def backward(self, g):                   # the reference, under create_graph=True:
        qkv, = self.inputs                   # the readable lines' graph
        B, T, C3 = qkv.shape
        q, k, v = (t.reshape(B, T, self.n_head, self.head).transpose(1, 2)
                   for t in qkv.split(C3 // 3, dim=2))
        gq, gk, gv = self.reference_grads(
            q, k, v, g.reshape(B, T, self.n_head, self.head).transpose(1, 2))
        from minigrad.ops.shape import cat
        return (cat([t.transpose(1, 2).reshape(B, T, C3 // 3) for t in (gq, gk, gv)], 2),)

    def backward_arrays(self, g):
        qkv = self.inputs[0]._data
        B, T, C3 = qkv.shape
        grad = self.xp.empty(qkv.shape, g.dtype)         # dQ, dK, dV side by side
        g = g.reshape(B, T, self.n_head, self.head).transpose(0, 2, 1, 3)
        self.grads_into(*_heads(qkv, self.n_head), g, *_heads(grad, self.n_head))
        return (grad,)


def _heads(a, n_head):
    """The thirds of a (B, T, 3C) array as (B, heads, T, head size) views."""
    B, T, C3 = a.shape
    parts = a.reshape(B, T, 3, n_head, C3 // 3 // n_head)
    return tuple(parts[:, :, i].transpose(0, 2, 1, 3) for i in range(3))


def qkv_attention(qkv, n_head, dropout_p=0.0, is_causal=False):
    """Attention of the heads of qkv (B, T, 3C), its last dim queries, keys and values side
    by side (GPT's c_attn output): (B, T, C), the heads re-assembled. Causal with
    is_causal; dropout on the attention weights."""
    if not isinstance(qkv, Tensor) or qkv.ndim != 3 or qkv.shape[-1] % 3 or \
            isinstance(n_head, bool) or not isinstance(n_head, numbers.Integral) or n_head < 1 or \
            (qkv.shape[-1] // 3) % n_head:
        shape = qkv.shape if isinstance(qkv, Tensor) else type(qkv).__name__
        raise ValueError(f"qkv_attention: qkv must be a (B, T, 3C) Tensor with C divisible by "
                         f"n_head, got {shape} and n_head={n_head!r}")
    if not backend.is_floating(qkv.dtype):
        raise TypeError(f"qkv_attention: qkv must be floating-point, got {qkv.dtype}")
    if not 0.0 <= dropout_p < 1.0:
        raise ValueError(f"qkv_attention: dropout_p must be in [0, 1), got {dropout_p}")
    qkv = autocast_half(qkv)             # on autocast's float16 list
    if qkv.dtype == backend.float16:     # float32 inside, as scaled_dot_product_attention:
        with autocast_set(None):         # (autocast would cast it back to float16)
            up = qkv_attention(qkv.to(dtype=backend.float32), n_head, dropout_p, is_causal)
        return up.to(dtype=qkv.dtype)    # float16 scores overflow (65504) into NaN rows
    if qkv.numel() == 0:             # an empty batch, sequence or width: the readable lines
        B, T, C3 = qkv.shape
        q, k, v = (qkv[..., i * C3 // 3:(i + 1) * C3 // 3].reshape(
            B, T, n_head, C3 // 3 // n_head).transpose(1, 2) for i in range(3))
        y = scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=is_causal)
        return y.transpose(1, 2).reshape(B, T, C3 // 3)
    return QKVAttention.apply(qkv, n_head=int(n_head), dropout_p=dropout_p,
                              is_causal=bool(is_causal))
