"""Fused scaled dot-product attention (article 2.2.3.2): against PyTorch, by gradcheck and
second order, and against the unfused `F.attention_with_weights` (also with dropout under a
fixed seed); masks boolean and float, is_causal, and fully-masked rows (zeros, never NaN)."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from op_helpers import (OpCase, check_vs_torch, check_gradcheck, check_double_backward_vs_torch,
                        check_fused_vs_unfused)

_BOOL_MASK = np.random.default_rng(3).random((3, 5)) > 0.3
_BOOL_MASK[:, 0] = True                                       # every query sees some key
_BATCH_MASK = np.random.default_rng(4).random((2, 1, 3, 5)) > 0.4
_BATCH_MASK[..., 1] = True
_FLOAT_MASK = np.random.default_rng(5).standard_normal((3, 5))

_QKV = ((2, 3, 4), (2, 5, 4), (2, 5, 3))
_QKV4 = ((2, 2, 3, 4), (2, 2, 5, 4), (2, 2, 5, 2))
_SELF = ((2, 4, 3),) * 3


def _sdpa_case(name, shapes, mask=None, **kw):
    def fn(q, k, v):
        m = None if mask is None else mg.tensor(mask, device=q.device)
        return F.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)

    def torch_fn(q, k, v):
        import torch
        m = None if mask is None else torch.from_numpy(mask).to(
            q.dtype if mask.dtype.kind == "f" else torch.bool)
        return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=m, **kw)
    return OpCase(name, fn, shapes, torch_fn=torch_fn)


CASES = [
    _sdpa_case("sdpa", _QKV),
    _sdpa_case("sdpa_4d", _QKV4),
    _sdpa_case("sdpa_bool_mask", _QKV, _BOOL_MASK),
    _sdpa_case("sdpa_batch_bool_mask", _QKV4, _BATCH_MASK),
    _sdpa_case("sdpa_float_mask", _QKV, _FLOAT_MASK),
    _sdpa_case("sdpa_causal", _SELF, is_causal=True),
    _sdpa_case("sdpa_causal_rect", _QKV, is_causal=True),
    _sdpa_case("sdpa_scale", _QKV, scale=0.3),
    # grouped-query attention: 4 query heads share 2 kv heads
    _sdpa_case("sdpa_gqa", ((2, 4, 3, 4), (2, 2, 5, 4), (2, 2, 5, 3)), enable_gqa=True,
               is_causal=True),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case, device):
    check_gradcheck(case, device)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_double_backward_vs_torch(case, device):
    check_double_backward_vs_torch(case, device)


def _arrays(shapes, seed=0):
    rng = np.random.default_rng(seed)
    return [rng.standard_normal(s) for s in shapes]


@pytest.mark.parametrize("shapes,mask,causal", [
    (_QKV, None, False), (_QKV, _BOOL_MASK, False), (_QKV4, _BATCH_MASK, True),
    (_QKV, _FLOAT_MASK, False), (_SELF, None, True)])
def test_sdpa_vs_unfused_reference(shapes, mask, causal, device):
    def m(q):
        return None if mask is None else mg.tensor(mask, device=q.device)
    check_fused_vs_unfused(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, m(q), is_causal=causal),
        lambda q, k, v: F.attention_with_weights(q, k, v, m(q), is_causal=causal)[0],
        _arrays(shapes), device, "sdpa")


def test_reference_is_the_article_formula(device):
    """F.attention_with_weights itself against softmax(QKᵀ/√d_k)·V written out by hand."""
    q, k, v = (mg.tensor(a, dtype=mg.float64, device=device) for a in _arrays(_QKV))
    s = (q @ k.transpose(-2, -1)) / np.sqrt(4)
    e = (s - s.max(-1, keepdim=True)[0]).exp()
    out, weights = F.attention_with_weights(q, k, v)
    np.testing.assert_allclose(weights.numpy(), (e / e.sum(-1, keepdim=True)).numpy(), 1e-12)
    np.testing.assert_allclose(out.numpy(), ((e / e.sum(-1, keepdim=True)) @ v).numpy(), 1e-12)


@pytest.mark.parametrize("shapes,mask", [(_QKV, None), (_QKV4, _BATCH_MASK)])
def test_sdpa_dropout_matches_reference_under_a_seed(shapes, mask, device):
    """Same seed, same draw: fused dropout on the weights equals F.dropout on the reference's
    weights; forward, gradients and second order."""
    def m(q):
        return None if mask is None else mg.tensor(mask, device=q.device)

    def fused(q, k, v):
        mg.manual_seed(7)
        return F.scaled_dot_product_attention(q, k, v, m(q), dropout_p=0.4)

    def unfused(q, k, v):
        mg.manual_seed(7)
        return F.dropout(F.attention_with_weights(q, k, v, m(q))[1], p=0.4) @ v
    check_fused_vs_unfused(fused, unfused, _arrays(shapes), device, "sdpa dropout")
    q, k, v = (mg.tensor(a, device=device) for a in _arrays(shapes))
    out = fused(q, k, v)
    np.testing.assert_array_equal(out.numpy(), fused(q, k, v).numpy())       # reproducible
    assert not np.allclose(out.numpy(), F.scaled_dot_product_attention(q, k, v, m(q)).numpy())


def test_fully_masked_rows_give_zeros_not_nan(device):
    mask = _BOOL_MASK.copy()
    mask[1] = False                                    # query 1 may attend to nothing
    q, k, v = (mg.tensor(a, device=device, requires_grad=True) for a in _arrays(_QKV))
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mg.tensor(mask, device=device))
    np.testing.assert_array_equal(out.numpy()[:, 1], 0.0)
    out.sum().backward()
    for t in (q, k, v):
        assert np.isfinite(t.grad.numpy()).all()
    np.testing.assert_array_equal(q.grad.numpy()[:, 1], 0.0)
    _, weights = F.attention_with_weights(q, k, v, mg.tensor(mask, device=device))
    np.testing.assert_array_equal(weights.numpy()[:, 1], 0.0)
    arrays = [t.numpy().astype(np.float64) for t in (q, k, v)]
    xs = [mg.tensor(a, device=device, requires_grad=True) for a in arrays]
    assert mg.gradcheck(lambda *t: F.scaled_dot_product_attention(*t, attn_mask=mask), xs)
    assert mg.gradgradcheck(lambda *t: F.scaled_dot_product_attention(*t, attn_mask=mask), xs)


@pytest.mark.parametrize("bad", [np.nan, np.inf])
@pytest.mark.parametrize("how", ["causal", "bool"])
def test_a_masked_key_that_overflowed_stays_out_of_the_row(device, bad, how):
    """Masked scores are set to -inf, not added -inf to (as PyTorch's masked_fill): a NaN or
    inf in a key no query may see (a future one, under the causal mask) changes no output,
    so the outputs at t still do not depend on anything after t."""
    q, k, v = (mg.tensor(a, device=device) for a in _arrays(_SELF))
    mask = np.tri(4, dtype=bool) if how == "causal" else np.ones((4, 4), bool)
    if how == "bool":
        mask[:, 3] = False
    kwargs = {"is_causal": True} if how == "causal" else {"attn_mask": mask}
    ref = F.scaled_dot_product_attention(q, k, v, **kwargs).numpy()
    k2 = k.numpy().copy()
    k2[:, 3] = bad
    with np.errstate(invalid="ignore"):                  # inf·x in the masked scores
        out = F.scaled_dot_product_attention(q, mg.tensor(k2, device=device), v,
                                             **kwargs).numpy()
    rows = slice(0, 3) if how == "causal" else slice(None)
    np.testing.assert_array_equal(out[:, rows], ref[:, rows])


@pytest.mark.parametrize("bad", [np.nan, np.inf])
def test_a_visible_key_that_overflowed_poisons_only_the_rows_that_see_it(device, bad):
    """The other side of the test above: a NaN or inf score a query may see is not hidden
    (the mask's ceiling of +inf leaves it NaN or inf): under the causal mask the rows that
    see key 3 come out NaN, as PyTorch's, and the rows before it are untouched."""
    q, k, v = (mg.tensor(a, device=device) for a in _arrays(_SELF))
    ref = F.scaled_dot_product_attention(q, k, v, is_causal=True).numpy()
    k2 = k.numpy().copy()
    k2[:, 3] = bad
    with np.errstate(invalid="ignore", over="ignore"):
        out = F.scaled_dot_product_attention(q, mg.tensor(k2, device=device), v,
                                             is_causal=True).numpy()
    np.testing.assert_array_equal(out[:, :3], ref[:, :3])
    assert np.isnan(out[:, 3]).all()


def test_bool_mask_and_causal_combine(device):
    q, k, v = (mg.tensor(a, dtype=mg.float64, device=device) for a in _arrays(_SELF))
    mask = np.ones((4, 4), dtype=bool)
    mask[:, 0] = False
    mask[0, 0] = True
    both = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, is_causal=True)
    explicit = F.scaled_dot_product_attention(q, k, v, attn_mask=mask & np.tri(4, dtype=bool))
    np.testing.assert_allclose(both.numpy(), explicit.numpy(), rtol=1e-12)


def test_a_learned_float_mask_gets_its_gradient(device):
    # a bias that requires grad (relative positions, ALiBi) is trained, as PyTorch's; it had
    # no gradient: the fused op takes masks as constants
    rng = np.random.default_rng(3)
    q, k, v = (mg.tensor(rng.standard_normal((2, 3, 4)), dtype="float64", device=device,
                         requires_grad=True) for _ in range(3))
    bias = mg.tensor(rng.standard_normal((3, 3)), dtype="float64", device=device,
                     requires_grad=True)
    for causal in (False, True):
        assert mg.gradcheck(lambda q, b: F.scaled_dot_product_attention(
            q, k, v, attn_mask=b, is_causal=causal), [q, bias])
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=bias.detach())
    fused = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    np.testing.assert_allclose(fused.detach().numpy(), out.detach().numpy(), rtol=1e-12)
    mg.manual_seed(0)
    F.scaled_dot_product_attention(q, k, v, attn_mask=bias, dropout_p=0.5).sum().backward()
    assert bias.grad is not None and bias.grad.shape == (3, 3)


def test_mask_with_a_bigger_batch_than_q(device):
    """A (2, L, S) mask on (1, L, E) queries: the output takes the mask's batch (as torch)."""
    mask = _BATCH_MASK[:, 0]                                  # (2, 3, 5)

    def m(q):
        return mg.tensor(mask, device=q.device)
    check_fused_vs_unfused(lambda q, k, v: F.scaled_dot_product_attention(q, k, v, m(q)),
                           lambda q, k, v: F.attention_with_weights(q, k, v, m(q))[0],
                           _arrays(((1, 3, 4), (1, 5, 4), (1, 5, 2))), device, "sdpa mask batch")


def test_public_names_for_attention_weights_and_unbind():
    """F.attention_with_weights and mg.unbind are the public names; the old internal ones
    (minigrad.ops.attention.attention_reference, minigrad.nn.rnn.time_steps) still import."""
    from minigrad.ops.attention import attention_reference
    from minigrad.nn.rnn import time_steps
    assert attention_reference is F.attention_with_weights and time_steps is mg.unbind
    assert mg.Tensor.unbind(mg.ones(2, 3), 1)[2].shape == (2,)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("high,low", [(30.0, -30.0), (100.0, -200.0)])
def test_large_and_small_scores(dtype, high, low):
    """On the CPU the softmax skips the shift by each row's max; rows whose exponentials
    would overflow (scores near 100) or underflow (near -200) are redone with it, and
    moderate ones (±30) keep full precision. All as the exact, shifted softmax."""
    rng = np.random.default_rng(9)
    scores = np.full((1, 3, 6), high)
    scores[0, 1] = low
    scores += rng.standard_normal(scores.shape)              # row 0 near 100, row 1 near low
    q, k, v = (mg.tensor(rng.standard_normal(s), dtype=dtype, requires_grad=True)
               for s in ((1, 3, 4), (1, 6, 4), (1, 6, 2)))
    mask = mg.tensor(scores, dtype=dtype)
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mask)
    ref, weights = F.attention_with_weights(q, k, v, attn_mask=mask)
    assert np.isfinite(weights.numpy()).all()
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=tol, atol=tol)
    grads = mg.grad((out * out).sum(), [q, k, v])
    ref_grads = mg.grad((ref * ref).sum(), [q, k, v])
    for g, r in zip(grads, ref_grads):
        np.testing.assert_allclose(g.numpy(), r.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("shapes", [
    ((2, 3, 4, 8), (1, 3, 5, 8), (1, 3, 5, 8)),       # keys/values shared across the batch
    ((1, 3, 4, 8), (2, 3, 5, 8), (2, 3, 5, 8)),       # one query set for every batch row
    ((2, 1, 4, 8), (2, 3, 5, 8), (1, 3, 5, 8)),       # heads broadcast too
    ((4, 8), (2, 3, 5, 8), (2, 3, 5, 8))])            # no batch dims on q
def test_q_k_v_batch_dims_broadcast(shapes, device):
    """Batch dims broadcast between q, k and v (as PyTorch's SDPA); the gradients of the
    broadcast inputs are summed back to their shapes (fused vs the composed reference)."""
    check_fused_vs_unfused(
        lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=False),
        lambda q, k, v: F.attention_with_weights(q, k, v)[0], _arrays(shapes), device, "sdpa")
    q, k, v = (mg.tensor(a, dtype=mg.float64, device=device, requires_grad=True)
               for a in _arrays(shapes, seed=1))
    assert mg.gradcheck(F.scaled_dot_product_attention, [q, k, v])


@pytest.mark.parametrize("fused", ["sdpa", "qkv"])
def test_a_one_hot_softmax_row_gives_exact_zero_query_and_key_gradients(device, fused):
    """Where a row's weights are one-hot (the first causal row; saturated scores) the scores'
    gradient P⊙(dP - Σ dP⊙P) is exactly 0: Σ is summed from dP itself. (Summed as G·O,
    FlashAttention's shortcut, it left rounding noise: 12% of dK's size at q·100.)"""
    rng = np.random.default_rng(4)
    B, H, T, D = 1, 2, 6, 8
    q, k, v, g = (rng.standard_normal((B, H, T, D)).astype(np.float32) for _ in range(4))
    q *= 1000                                            # every row one-hot
    if fused == "sdpa":
        ts = [mg.tensor(a, device=device, requires_grad=True) for a in (q, k, v)]
        out = F.scaled_dot_product_attention(*ts, is_causal=True)
        out.backward(mg.tensor(g, device=device))
        gq, gk = ts[0].grad.cpu().numpy(), ts[1].grad.cpu().numpy()
    else:
        from minigrad.ops.qkv_attention import qkv_attention
        packed = np.concatenate([a.transpose(0, 2, 1, 3).reshape(B, T, H * D)
                                 for a in (q, k, v)], -1)
        qkv = mg.tensor(packed, device=device, requires_grad=True)
        out = qkv_attention(qkv, H, is_causal=True)
        out.backward(mg.tensor(g.transpose(0, 2, 1, 3).reshape(B, T, H * D), device=device))
        gq, gk = np.split(qkv.grad.cpu().numpy(), 3, -1)[:2]
    assert not gq.any() and not gk.any()


@pytest.mark.parametrize("dtypes", [("float32", "float64", "float64"),
                                    ("float64", "float64", "float32"),
                                    ("float32", "float32", "float16")])
def test_q_k_v_of_different_dtypes_are_refused(dtypes):
    """As PyTorch's SDPA: the fused op computed such inputs silently in mixed precision
    (and returned q's dtype) where the composed path raised matmul's error."""
    q, k, v = (mg.randn(*s, dtype=d) for s, d in zip(_QKV, dtypes))
    for fn in (F.scaled_dot_product_attention, F.attention_with_weights):
        with pytest.raises(TypeError, match=f"{fn.__name__}: q, k, v must share one dtype"):
            fn(q, k, v)


@pytest.mark.parametrize("shapes", [((2, 4, 3, 4), (2, 3, 5, 4), (2, 3, 5, 4)),
                                    ((2, 4, 3, 4), (2, 2, 5, 4), (2, 1, 5, 4)),
                                    ((3, 4), (5, 4), (5, 4))])
def test_gqa_heads_that_do_not_divide_are_refused(shapes):
    q, k, v = (mg.randn(*s) for s in shapes)
    with pytest.raises(ValueError, match="enable_gqa"):
        F.scaled_dot_product_attention(q, k, v, enable_gqa=True)
