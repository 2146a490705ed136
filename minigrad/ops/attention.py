"""Scaled dot-product attention (article 2.2.3.2): softmax(QKᵀ/√d_k)·V, fused into one op.

Masks follow PyTorch's SDPA: a boolean `attn_mask` is True where a query may attend to a key
(a float mask is added to the scores instead, and gets its gradient where it requires one,
as a learned bias); `is_causal` keeps key j ≤ query i. A query that may attend to nothing
gets zero weights and a zero output, never NaN."""
import math

from minigrad import backend, parallel
from minigrad.args import number_arg, tensor_args
from minigrad.autograd import Function
from minigrad.tensor import Tensor
from minigrad.ops.softmax import stable_softmax
from minigrad.ops.blocks import groups
from minigrad.ops.rows import row_sum
from minigrad.ops.elementwise import where
from minigrad.ops.index import raw_index
from minigrad.ops.random import dropout
from minigrad.grad_mode import autocast_half, autocast_set, is_grad_enabled


class ScaledDotProductAttention(Function):
    """Forward and the fast backward run on groups of whole score matrices (a range of the
    first batch dim): on the CPU as many as fit in cache (ops/blocks.py), so each group's
    scores go through the mask, softmax and dropout passes while in cache, then straight
    into the product with V. The groups of big inputs run on every core (parallel.py)."""
    fresh_grads = True                                   # see Function.fresh_grads

    def forward(self, q, k, v, scale, allowed, additive, ceiling, dropout_p):
        xp = self.xp
        self.scale, self.allowed, self.additive = scale, allowed, additive
        L, S = q.shape[-2], k.shape[-2]
        masks = [m.shape[:-2] for m in (allowed, additive) if m is not None]
        self.batch = _batch_shape(q, k, v, masks)
        full = self.batch or (1,)                       # groups split the first batch dim
        q, k, v = (_broadcast(xp, a, full + a.shape[-2:]) for a in (q, k, v))   # views
        bias = None if additive is None else _broadcast(
            xp, additive.astype(q.dtype, copy=False), full + (L, S))
        # a score not allowed is set to -inf, not added -inf to: a NaN or inf there (an
        # overflowed future key) stays out of the row, as masked_fill. As fmin(score,
        # ceiling), the ceiling -inf there and +inf elsewhere: one pass, twice as fast as
        # copyto(where=mask); fmin ignores a NaN, so a blocked NaN becomes -inf too
        if ceiling is not None:
            ceiling = _broadcast(xp, ceiling.astype(q.dtype, copy=False), full + (L, S))
        self.probs = xp.empty(full + (L, S), q.dtype)
        self.keep = None if dropout_p == 0 else xp.empty(full + (L, S), bool)
        self.dropout_scale = 1 / (1 - dropout_p)
        out = _empty_in_layout_of(xp, q, full + (L, v.shape[-1]), q.dtype)
        be = backend.get(self.device)
        unshifted = be.host and q.dtype.itemsize >= 4     # float16's exp range is too short
        spans = groups(be, full[0], math.prod(full[1:]) * L * S, blocks=4)
        # the CPU's dropout mask is drawn here, whole, so that it does not depend on how many
        # threads run the groups (parallel.py)
        drawn = self.keep is not None and be.host
        if drawn:
            be.keep_mask(self.keep.shape, dropout_p, out=self.keep)

        def group(lo, hi):
            s = xp.matmul(q[lo:hi] * scale, xp.swapaxes(k[lo:hi], -1, -2))    # QKᵀ·scale
            if bias is not None:
                s += bias[lo:hi]
            if ceiling is not None:
                xp.fmin(s, ceiling[lo:hi], out=s)
            p = _softmax(xp, s, self.probs[lo:hi], unshifted=unshifted, kernels=be.kernels)
            scaled = self.keep is None
            if self.keep is not None:               # drop weights, rescale the output
                keep = self.keep[lo:hi]
                if not drawn and be.kernels and str(p.dtype) in be.kernels.DTYPES and \
                        be.kernels("dropout", p, be.uniform(p.shape), dropout_p,
                                   self.dropout_scale, keep, s) is not None:
                    p, scaled = s, True             # one GPU kernel, scaled too
                else:
                    if not drawn:
                        be.keep_mask(p.shape, dropout_p, out=keep)
                    p = xp.multiply(p, keep, out=s)
            xp.matmul(p, v[lo:hi], out=out[lo:hi])
            if not scaled:
                out[lo:hi] *= self.dropout_scale
        parallel.run(group, spans, math.prod(full) * L * S)
        return out.reshape(self.batch + out.shape[-2:])

    def backward(self, g):              # the reference: runs only under create_graph=True,
        return self.reference_grads(*self.inputs, g)    # so p is a graph of q and k

    def reference_grads(self, q, k, v, g):
        """(dQ, dK, dV) as Tensor ops on the Tensors q, k, v (twice differentiable)."""
        s = (q @ k.mT) * self.scale
        if self.additive is not None:
            s = s + self.const(self.additive)
        if self.allowed is not None:
            s = where(self.const(self.allowed), s, -math.inf)  # the mask may add batch dims
        p = s.softmax(-1)
        keep = None if self.keep is None else self.const(
            self.keep.reshape(p.shape).astype(p.dtype) * self.dropout_scale)
        pd = p if keep is None else p * keep
        gv = pd.mT @ g                                    # dV = Pᵀ·G
        gp = g @ v.mT                                     # dP = G·Vᵀ
        if keep is not None:
            gp = gp * keep
        gs = p * (gp - (gp * p).sum(-1, keepdim=True)) * self.scale   # softmax backward
        return gs @ k, gs.mT @ q, gv                      # dQ = dS·K, dK = dSᵀ·Q

    def backward_arrays(self, g):                         # the same on arrays, group by group
        xp = self.xp
        full = self.probs.shape[:-2]
        q, k, v, g = (xp.broadcast_to(a, full + a.shape[-2:])
                      for a in [t._data for t in self.inputs] + [g])
        gq, gk, gv = (_empty_in_layout_of(xp, a, a.shape, g.dtype) for a in (q, k, v))
        self.grads_into(q, k, v, g, gq, gk, gv)
        # shaped as the broadcast batch; the engine sums back any broadcast dims
        return tuple(a.reshape(self.batch + a.shape[-2:]) for a in (gq, gk, gv))

    def grads_into(self, q, k, v, g, gq, gk, gv):
        """dQ, dK, dV written into gq, gk, gv (arrays of the full batch shape)."""
        xp, full = self.xp, self.probs.shape[:-2]
        # dS = P⊙(dP - Σ dP⊙P)·scale with dP = G·Vᵀ (times the dropout mask and its 1/(1-p)):
        # the constant factors go into V, which is smaller than the scores. Each row's
        # Σⱼ dPᵢⱼPᵢⱼ is summed as written, not as FlashAttention's Gᵢ·Oᵢ (equal, one pass
        # fewer): O's rounding differs from dP's, so where a row's softmax is one-hot (the
        # first causal row, saturated scores) dP - Σ would not cancel to the exact 0
        v_scale = self.scale * (1 if self.keep is None else self.dropout_scale)

        def group(lo, hi):
            p, gr = self.probs[lo:hi], g[lo:hi]
            ds = xp.matmul(gr, xp.swapaxes(v[lo:hi] * v_scale, -1, -2))     # dP·scale
            if self.keep is None:
                xp.matmul(xp.swapaxes(p, -1, -2), gr, out=gv[lo:hi])       # dV = Pᵀ·G
            else:
                keep = self.keep[lo:hi]
                pd = xp.multiply(p, keep)
                xp.matmul(xp.swapaxes(pd, -1, -2), gr, out=gv[lo:hi])
                gv[lo:hi] *= self.dropout_scale
                ds *= keep
            ds -= row_sum(xp, xp.multiply(ds, p))
            ds *= p
            xp.matmul(ds, k[lo:hi], out=gq[lo:hi])                          # dQ = dS·K
            xp.matmul(xp.swapaxes(ds, -1, -2), q[lo:hi], out=gk[lo:hi])    # dK = dSᵀ·Q
        parallel.run(group, groups(backend.get(self.device), full[0], self.probs[0].size,
                                   blocks=4), self.probs.size)


def _softmax(xp, s, into, unshifted, kernels=None):
    """Softmax over the last axis of scores s (n, L, S) into `into`; s is scratch.

    `unshifted` skips the shift by each row's max, which only guards exp against overflow
    and costs two passes (NumPy's max over short rows is slow, ops/rows.py). Each row still
    depends on its own scores alone (causal outputs stay bit-exact). A row whose sum of
    exponentials leaves [1e-20, 1e30] (a max above ~69 or below ~-46) is redone with the
    shift; inside it nothing above e^-30 of the row's largest weight underflows, so float32
    results are exact to rounding. The check reads a value back: CPU only."""
    if not unshifted:
        return stable_softmax(xp, s, -1, out=s, into=into, kernels=kernels)
    with xp.errstate(over="ignore"):                    # overflowing rows are redone
        e = xp.exp(s, out=into)
        den = row_sum(xp, e)
    if den.size and den.min() >= 1e-20 and den.max() <= 1e30:   # (a NaN fails both)
        return xp.divide(e, den, out=e)                 # the usual case: no row to redo
    redo = ~((den >= 1e-20) & (den <= 1e30))             # NaN sums too
    xp.divide(e, xp.where(redo, 1, den), out=e)
    if redo.any():
        rows = redo[..., 0]
        e[rows] = stable_softmax(xp, s[rows], -1)
    return e


def _empty_in_layout_of(xp, like, shape, dtype):
    """An empty array of `shape` whose dims lie in memory in the order of `like`'s strides,
    as PyTorch's preserve_format. GPT's q, k, v are (B, heads, T, dim) views of one
    (B, T, heads, dim) projection: an output and gradients laid out that way make the heads'
    re-assembly to (B, T, C), and its gradient, views instead of copies. NumPy only: CuPy's
    matmul writes a non-contiguous `out` through a temporary and a copy, so there the arrays
    are plain C-contiguous (and the re-assembly copies once)."""
    if not backend.is_numpy(xp):
        return xp.empty(shape, dtype)
    # broadcast (zero-stride) dims outermost, then the rest by decreasing stride
    order = sorted(range(len(shape)), key=lambda d: (like.strides[d] != 0, -like.strides[d]))
    a = xp.empty(tuple(shape[d] for d in order), dtype)
    return a.transpose([order.index(d) for d in range(len(shape))])


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
        elif m.dtype.kind == "f":
            additive = m.astype(q.dtype)
        else:                            # 0/1 integers would be added, masking nothing
            raise TypeError(f"{op}: attn_mask must be boolean (True = may attend) or "
                            f"floating (added to the scores), got {m.dtype}")
    if is_causal:
        causal = _causal(xp, L, S)
        allowed = causal if allowed is None else allowed & causal
    return allowed, additive


def _causal(xp, L, S):
    """The (L, S) boolean causal mask, key j allowed for query i when j <= i; kept between
    calls (backend.constant), as is its float form for the forward (_causal_ceiling)."""
    return backend.constant(xp, ("causal", L, S), lambda: xp.tril(xp.ones((L, S), dtype=bool)))


def _ceiling(xp, allowed, dtype):
    """The forward's mask as a float array: +inf where `allowed`, -inf elsewhere (the two
    infinities kept between calls: on a GPU each would be a copy from the host)."""
    inf = backend.constant(xp, ("+inf", str(dtype)), lambda: xp.asarray(math.inf, dtype))
    neg = backend.constant(xp, ("-inf", str(dtype)), lambda: xp.asarray(-math.inf, dtype))
    return xp.where(allowed, inf, neg)


def _causal_ceiling(xp, L, S, dtype):
    """_ceiling of the causal mask, kept between calls (one per dtype)."""
    return backend.constant(xp, ("causal ceiling", L, S, str(dtype)),
                            lambda: _ceiling(xp, _causal(xp, L, S), dtype))


def _batch_shape(q, k, v, masks):
    """The broadcast batch shape of q, k, v and the masks' batch shapes: q's own where
    they all match it (GPT's case; NumPy's broadcast_shapes costs ~10 us a call)."""
    lead = q.shape[:-2]
    if k.shape[:-2] == lead and v.shape[:-2] == lead and all(m == lead for m in masks):
        return lead
    return backend.broadcast_shapes(lead, k.shape[:-2], v.shape[:-2], *masks)


def _broadcast(xp, a, shape):
    """a broadcast to shape (a view), or a itself where it has that shape already."""
    return a if a.shape == shape else xp.broadcast_to(a, shape)


def default_scale(q):
    """1/√d_k; with d_k = 0 every score is 0 whatever the scale, so 1 (as PyTorch's result)."""
    return 1.0 / math.sqrt(q.shape[-1]) if q.shape[-1] else 1.0


def _check_one_dtype(op, q, k, v):
    """q, k, v of one dtype, as PyTorch requires: the fused op would otherwise compute in
    mixed precision and return q's dtype, silently."""
    if not q.dtype == k.dtype == v.dtype:
        raise TypeError(f"{op}: q, k, v must share one dtype, got {q.dtype}, {k.dtype}, "
                        f"{v.dtype}; convert first (.to(dtype)), as PyTorch requires")


def scaled_dot_product_attention(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False,
                                 scale=None, enable_gqa=False):
    """softmax(Q·Kᵀ·scale + mask)·V with scale = 1/√d_k by default. query: (..., L, E),
    key: (..., S, E), value: (..., S, Ev) -> (..., L, Ev). A boolean mask and is_causal combine.
    enable_gqa: grouped-query attention, k and v with fewer heads (dim -3) than q, each
    serving a group of consecutive query heads (as PyTorch's). attn_mask may also be a
    CausalBias (nn.attention.bias: causal_upper_left, causal_lower_right)."""
    if hasattr(attn_mask, "_sdpa_args"):  # nn.attention.bias's CausalBias: a mask, or is_causal
        attn_mask, is_causal = attn_mask._sdpa_args(query, key, is_causal)
    op = "scaled_dot_product_attention"
    if not (isinstance(query, Tensor) and isinstance(key, Tensor) and isinstance(value, Tensor)):
        tensor_args(op, query=query, key=key, value=value)
    if scale is not None:
        scale = number_arg(op, "scale", scale)
    if query.ndim < 2 or key.ndim < 2 or value.ndim < 2:
        raise ValueError(f"scaled_dot_product_attention: q, k, v need at least 2 dims, got "
                         f"{query.shape}, {key.shape}, {value.shape}")
    query, key, value = (autocast_half(t) for t in (query, key, value))  # autocast's float16 list
    if enable_gqa:
        key, value = _shared_heads(query, key, value)
    if not all(backend.is_floating(t.dtype) for t in (query, key, value)):
        raise TypeError(f"scaled_dot_product_attention: q, k, v must be floating-point, got "
                        f"{query.dtype}, {key.dtype}, {value.dtype}")
    _check_one_dtype("scaled_dot_product_attention", query, key, value)
    if query.shape[-1] != key.shape[-1] or key.shape[-2] != value.shape[-2]:
        raise ValueError(f"scaled_dot_product_attention: q {query.shape} and k {key.shape} must "
                         f"share the last dim, k and v {value.shape} the number of keys")
    lead = query._data.shape[:-2]
    if key._data.shape[:-2] != lead or value._data.shape[:-2] != lead:
        _check_batch_dims(query, key, value)
    try:
        in_range = 0.0 <= dropout_p <= 1.0
    except TypeError:                    # "0.1", None: say which argument
        in_range = number_arg(op, "dropout_p", dropout_p)
    if not in_range:
        raise ValueError(f"scaled_dot_product_attention: dropout_p must be in [0, 1], got "
                         f"{dropout_p}")
    if query.dtype == backend.float16:   # scores leave float16's range (65504) easily: float32
        up = [t.to(dtype=backend.float32) for t in (query, key, value)]        # inside, as PyTorch
        with autocast_set(None):     # (autocast would cast them back to float16)
            out = scaled_dot_product_attention(*up, attn_mask, dropout_p, is_causal, scale)
        return out.to(dtype=query.dtype)
    if dropout_p == 1.0 or \
            isinstance(attn_mask, Tensor) and attn_mask.requires_grad and is_grad_enabled():
        # a learned additive bias (relative positions, ALiBi): composed from ops that carry
        # its gradient; the fused op treats masks as constants. (And dropout_p = 1, every
        # weight dropped: a zero output, as PyTorch's, where 1/(1 - p) has no value.)
        out, p = attention_with_weights(query, key, value, attn_mask, is_causal, scale)
        return out if dropout_p == 0 else dropout(p, dropout_p) @ value
    if 0 in query.shape + key.shape + value.shape:
        # empty: the composed ops handle it (the fused op's row sums reshape(-1, 0), which
        # NumPy cannot)
        return attention_with_weights(query, key, value, attn_mask, is_causal, scale)[0]
    allowed, additive = _mask_arrays(query, key, attn_mask, is_causal)
    xp = query.backend.xp
    ceiling = None if allowed is None else \
        _causal_ceiling(xp, query.shape[-2], key.shape[-2], query.dtype) if is_causal and \
        attn_mask is None else _ceiling(xp, allowed, query.dtype)  # the causal one is kept
    scale = default_scale(query) if scale is None else scale
    return ScaledDotProductAttention.apply(query, key, value, scale=scale, allowed=allowed,
                                           additive=additive, ceiling=ceiling,
                                           dropout_p=dropout_p)


def _check_batch_dims(q, k, v):
    """q's, k's and v's batch dims (all but the last two) broadcast, or an error naming
    them (and enable_gqa, where k and v have fewer heads than q)."""
    try:
        backend.broadcast_shapes(q.shape[:-2], k.shape[:-2], v.shape[:-2])
    except ValueError:
        hint = ""
        if min(q.ndim, k.ndim) >= 3 and 0 < k.shape[-3] < q.shape[-3] and \
                q.shape[-3] % k.shape[-3] == 0:
            hint = ("; k and v with fewer heads (dim -3) than q, each serving a group of "
                    "query heads, need enable_gqa=True")
        raise ValueError(f"scaled_dot_product_attention: the batch dims (all but the last "
                         f"two) of q {q.shape}, k {k.shape} and v {v.shape} must be equal or "
                         f"broadcast{hint}") from None


def _shared_heads(q, k, v):
    """k and v with each of their H_kv heads repeated for the H_q / H_kv query heads it
    serves (heads 0..r-1 read kv head 0, and so on): grouped-query attention as PyTorch's
    enable_gqa, whose math path copies them the same way."""
    op = "scaled_dot_product_attention"
    if min(q.ndim, k.ndim, v.ndim) < 3:
        raise ValueError(f"{op}: enable_gqa needs q, k, v with a heads dim (..., H, L, E), "
                         f"got {q.shape}, {k.shape}, {v.shape}")
    heads, kv = q.shape[-3], k.shape[-3]
    if v.shape[-3] != kv or kv == 0 or heads % kv:
        raise ValueError(f"{op}: with enable_gqa, k and v must have the same number of "
                         f"heads (dim -3), dividing q's {heads}; got k {k.shape}, v "
                         f"{v.shape}")
    if heads == kv:
        return k, v
    return (k.repeat_interleave(heads // kv, dim=-3),
            v.repeat_interleave(heads // kv, dim=-3))


def attention_with_weights(q, k, v, attn_mask=None, is_causal=False, scale=None):
    """The same attention composed from primitive ops, returning (output, weights): for when
    the attention weights themselves are wanted (to plot them, or as need_weights), and the
    readable reference the fused op is tested against. The weights are differentiable too."""
    _check_one_dtype("attention_with_weights", q, k, v)
    if q.dtype == backend.float16:   # in float32, as the fused op (see there)
        with autocast_set(None):     # (autocast would run its matmuls in float16)
            out, p = attention_with_weights(*(t.to(dtype=backend.float32) for t in (q, k, v)),
                                            attn_mask, is_causal, scale)
        return out.to(dtype=q.dtype), p.to(dtype=q.dtype)
    allowed, additive = _mask_arrays(q, k, attn_mask, is_causal, "attention_with_weights")
    scale = default_scale(q) if scale is None else scale
    s = (q @ k.mT) * scale
    if additive is not None:       # a float mask that is a Tensor adds itself: differentiable
        s = s + (attn_mask.to(dtype=s.dtype) if isinstance(attn_mask, Tensor) and
                 attn_mask.requires_grad else Tensor._make(additive, q.device))
    if allowed is not None:
        s = where(Tensor._make(allowed, q.device), s, -math.inf)  # may add batch dims
    p = s.softmax(-1)
    return p @ v, p


attention_reference = attention_with_weights  # the old name, kept for one release
