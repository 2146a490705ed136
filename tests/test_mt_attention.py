"""minitransformer attention (article 2.2.3.2 - 2.2.3.4): scaled dot-product attention,
multi-head attention and masks — against the formula, against PyTorch with copied
weights, and by property (causality, padding) and gradcheck."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minitransformer import (MultiHeadAttention, causal_mask, combine_masks, key_padding,
                             lengths_mask, padding_mask, scaled_dot_product_attention)
from mt_helpers import copy_by_name, gradcheck_module, grads_by_name


def softmax_np(s):
    e = np.exp(s - s.max(-1, keepdims=True))
    return e / e.sum(-1, keepdims=True)


def test_sdpa_is_minigrads_fused_op_and_matches_the_formula():
    assert scaled_dot_product_attention is F.scaled_dot_product_attention
    rng = np.random.default_rng(0)
    q, k, v = (rng.standard_normal((2, 3, 4)) for _ in range(3))
    out = scaled_dot_product_attention(mg.tensor(q), mg.tensor(k), mg.tensor(v))
    want = softmax_np(q @ k.transpose(0, 2, 1) / np.sqrt(4)) @ v
    np.testing.assert_allclose(out.numpy(), want, atol=1e-12)


# ---- masks -----------------------------------------------------------------------------------
def test_causal_mask_is_lower_triangular_true_means_may_attend():
    m = causal_mask(4)
    assert m.dtype == mg.bool and m.shape == (4, 4)
    np.testing.assert_array_equal(m.numpy(), np.tril(np.ones((4, 4), bool)))
    assert causal_mask(2, 3).numpy().tolist() == [[True, False, False], [True, True, False]]


def test_padding_and_lengths_masks_agree_and_combine():
    tokens = [[5, 6, 7, 0], [8, 0, 0, 0]]
    pm = padding_mask(tokens, pad_id=0)
    assert pm.shape == (2, 1, 1, 4)
    assert key_padding(tokens, 0).numpy().tolist() == [[True, True, True, False],
                                                       [True, False, False, False]]
    np.testing.assert_array_equal(pm.numpy(), lengths_mask([3, 1], 4).numpy())
    assert lengths_mask([3, 1]).shape == (2, 1, 1, 3)    # max_len defaults to the longest
    both = combine_masks(causal_mask(4), pm, None)
    assert both.shape == (2, 1, 4, 4)
    np.testing.assert_array_equal(both.numpy()[1, 0, 3], [True, False, False, False])
    assert combine_masks(None, None) is None


# ---- multi-head attention against PyTorch ------------------------------------------------------
@pytest.mark.parametrize("cross", [False, True])
def test_mha_matches_torch_outputs_weights_and_gradients(cross):
    torch = pytest.importorskip("torch")
    mg.manual_seed(0)
    d, h, B, Tq, Tk = 12, 3, 2, 5, 4 if cross else 5
    ours = MultiHeadAttention(d, h).double()
    ref = torch.nn.MultiheadAttention(d, h, batch_first=True, dtype=torch.float64)
    copy_by_name(ours, ref, torch)
    rng = np.random.default_rng(1)
    xq = rng.standard_normal((B, Tq, d))
    xk = rng.standard_normal((B, Tk, d)) if cross else xq
    keys = [[1] * Tk, [1] * (Tk - 2) + [0, 0]]              # second sequence: 2 pad keys
    mask = padding_mask(keys, pad_id=0)

    q = mg.tensor(xq, requires_grad=True)
    k = mg.tensor(xk, requires_grad=True) if cross else q
    out, w = ours(q, k, k, attn_mask=mask, need_weights=True)
    (out * mg.tensor(np.cos(np.arange(out.numel())).reshape(out.shape))).sum().backward()

    tq = torch.tensor(xq, requires_grad=True)
    tk = torch.tensor(xk, requires_grad=True) if cross else tq
    tout, tw = ref(tq, tk, tk, key_padding_mask=torch.tensor(np.array(keys) == 0),
                   need_weights=True, average_attn_weights=False)
    (tout * torch.cos(torch.arange(tout.numel(), dtype=torch.float64)).reshape(tout.shape)
     ).sum().backward()

    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(w.numpy(), tw.detach().numpy(), atol=1e-12)
    np.testing.assert_allclose(q.grad.numpy(), tq.grad.numpy(), atol=1e-12)
    if cross:
        np.testing.assert_allclose(k.grad.numpy(), tk.grad.numpy(), atol=1e-12)
    for a, b in zip(*grads_by_name(ours, ref)):
        np.testing.assert_allclose(a, b, atol=1e-11)


def test_mha_fused_path_equals_weights_path_and_per_head_formula():
    """Without PyTorch: the fused path, the need_weights path, and the article's recipe
    (project, split into heads, softmax(QKᵀ/√d_head)V per head, concat, project) in NumPy."""
    mg.manual_seed(3)
    d, h, B, T = 8, 2, 2, 4
    mha = MultiHeadAttention(d, h).double().eval()
    x = np.random.default_rng(2).standard_normal((B, T, d))
    mask = causal_mask(T)
    fused = mha(mg.tensor(x), attn_mask=mask)
    out, w = mha(mg.tensor(x), attn_mask=mask, need_weights=True)
    np.testing.assert_allclose(fused.numpy(), out.numpy(), atol=1e-12)

    def proj(weight, bias, a):
        return a @ weight.T + bias
    split = lambda a: a.reshape(B, T, h, d // h).transpose(0, 2, 1, 3)   # noqa: E731
    W, b = mha.in_proj_weight.numpy(), mha.in_proj_bias.numpy()   # W_Q, W_K, W_V stacked
    Q, K, V = (split(proj(W[i * d:(i + 1) * d], b[i * d:(i + 1) * d], x)) for i in range(3))
    s = Q @ K.transpose(0, 1, 3, 2) / np.sqrt(d // h)
    s = np.where(np.tril(np.ones((T, T), bool)), s, -np.inf)
    p = softmax_np(s)
    want = proj(mha.out_proj.weight.numpy(), mha.out_proj.bias.numpy(), (p @ V).transpose(0, 2, 1, 3).reshape(B, T, d))
    np.testing.assert_allclose(w.numpy(), p, atol=1e-12)
    np.testing.assert_allclose(out.numpy(), want, atol=1e-12)
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0, atol=1e-12)


def test_numpy_masks_are_accepted_and_moved_to_the_querys_device():
    import spy_backend
    mg.manual_seed(4)
    mha = MultiHeadAttention(8, 2).eval()
    x = np.random.default_rng(4).standard_normal((2, 5, 8)).astype(np.float32)
    tokens = np.array([[3, 1, 4, 0, 0], [2, 7, 1, 8, 2]])
    mask = np.tril(np.ones((5, 5), bool)) & (tokens != 0)[:, None, None, :]
    want = mha(mg.tensor(x), attn_mask=mg.tensor(mask)).numpy()
    np.testing.assert_array_equal(mha(mg.tensor(x), attn_mask=mask).numpy(), want)
    out, w = mha(mg.tensor(x), attn_mask=mask, need_weights=True)   # the unfused path
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    # the helpers take NumPy masks too, and join them to the tensors' device
    both = combine_masks(np.tril(np.ones((5, 5), bool)), padding_mask(tokens, 0))
    np.testing.assert_array_equal(both.numpy(), mask)
    spy_backend.register()
    try:
        on_spy = mha.to("spy")(mg.tensor(x, device="spy"), attn_mask=mask)
        assert on_spy.device == "spy"
        np.testing.assert_allclose(on_spy.numpy(), want, rtol=1e-6, atol=1e-7)
    finally:
        mha.to("cpu")
        spy_backend.unregister()


# ---- properties --------------------------------------------------------------------------------
def test_causal_output_at_t_ignores_later_tokens():
    mg.manual_seed(4)
    mha = MultiHeadAttention(8, 2).eval()
    x = np.random.default_rng(5).standard_normal((1, 6, 8)).astype(np.float32)
    y = x.copy()
    y[:, 4:] = np.random.default_rng(6).standard_normal((1, 2, 8))   # change positions 4, 5
    a = mha(mg.tensor(x), attn_mask=causal_mask(6)).numpy()
    b = mha(mg.tensor(y), attn_mask=causal_mask(6)).numpy()
    np.testing.assert_array_equal(a[:, :4], b[:, :4])
    assert not np.allclose(a[:, 4:], b[:, 4:])


def test_padded_keys_get_exactly_zero_weight_and_do_not_matter():
    mg.manual_seed(7)
    mha = MultiHeadAttention(8, 4).eval()
    tokens = [[3, 4, 5, 0, 0], [3, 4, 5, 6, 7]]
    mask = padding_mask(tokens, 0)
    x = np.random.default_rng(8).standard_normal((2, 5, 8)).astype(np.float32)
    out, w = mha(mg.tensor(x), attn_mask=mask, need_weights=True)
    assert (w.numpy()[0, :, :, 3:] == 0.0).all()              # exactly zero, every head/query
    assert (w.numpy()[1] > 0).all()
    x2 = x.copy()
    x2[0, 3:] = 100.0                                         # garbage in the padded slots
    out2 = mha(mg.tensor(x2), attn_mask=mask)
    np.testing.assert_allclose(out2.numpy()[0, :3], out.numpy()[0, :3], atol=1e-6)


def test_dropout_only_in_training():
    mg.manual_seed(9)
    mha = MultiHeadAttention(8, 2, dropout=0.5)
    x = mg.randn(2, 5, 8)
    mha.eval()
    np.testing.assert_array_equal(mha(x).numpy(), mha(x).numpy())
    mha.train()
    assert not np.allclose(mha(x).numpy(), mha(x).numpy())
    out, w = mha(x, need_weights=True)                        # weights path drops out too
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0, atol=1e-5)   # (undropped weights)
    mg.manual_seed(1)
    fused = mha(x)
    mg.manual_seed(1)                                    # the same mask on both paths
    np.testing.assert_allclose(mha(x, need_weights=True)[0].numpy(), fused.numpy(),
                               rtol=1e-5, atol=1e-6)


@pytest.mark.parametrize("cross", [False, True])
def test_mha_gradcheck_float64(cross):
    mg.manual_seed(10)
    mha = MultiHeadAttention(4, 2)
    q = mg.randn(2, 3, 4, dtype=mg.float64, requires_grad=True)
    if cross:
        k = mg.randn(2, 2, 4, dtype=mg.float64, requires_grad=True)
        v = mg.randn(2, 2, 4, dtype=mg.float64, requires_grad=True)
        gradcheck_module(mha, q, k, v, attn_mask=padding_mask([[1, 1], [1, 0]], 0))
    else:
        gradcheck_module(mha, q, attn_mask=causal_mask(3))


def test_attention_with_weights_drops_out_only_when_training():
    from minitransformer.attention import attention_with_weights
    rng = np.random.default_rng(0)
    q, k, v = (mg.tensor(rng.standard_normal((1, 2, 3, 4))) for _ in range(3))
    want = softmax_np(q.numpy() @ k.numpy().swapaxes(-1, -2) / 2.0) @ v.numpy()
    out, w = attention_with_weights(q, k, v, dropout_p=0.5, training=False)
    np.testing.assert_allclose(out.numpy(), want, rtol=1e-5, atol=1e-6)
    mg.manual_seed(0)
    out, w = attention_with_weights(q, k, v, dropout_p=0.5, training=True)
    assert not np.allclose(out.numpy(), want)
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0, rtol=1e-6)   # undropped weights


def test_a_bad_mask_is_reported_by_the_module_that_got_it():
    with pytest.raises(ValueError, match=r"^MultiHeadAttention: attn_mask of shape \(4, 4\)"):
        MultiHeadAttention(8, 2)(mg.randn(2, 5, 8), attn_mask=causal_mask(4))


def test_multi_head_attention_starts_as_torchs_module():
    """torch.nn.MultiheadAttention: in_proj Xavier-uniform over the stacked (3d, d) matrix
    (bound √(6 / 4d)), both biases zero, out_proj's weight an nn.Linear's (bound 1/√d)."""
    mg.manual_seed(0)
    d = 256
    mha = MultiHeadAttention(d, 8)
    w = mha.in_proj_weight.numpy()
    bound = math.sqrt(6 / (d + 3 * d))
    assert w.shape == (3 * d, d) and np.abs(w).max() <= bound
    assert abs(w.std() - bound / math.sqrt(3)) < 0.02 * bound        # uniform's std
    assert not mha.in_proj_bias.numpy().any() and not mha.out_proj.bias.numpy().any()
    assert np.abs(mha.out_proj.weight.numpy()).max() <= 1 / math.sqrt(d)
    with mg.no_grad():
        mha.in_proj_bias.add_(1.0)
    mha.reset_parameters()
    assert not mha.in_proj_bias.numpy().any()
    assert MultiHeadAttention(8, 2, bias=False).in_proj_bias is None


@pytest.mark.parametrize("max_len", [2.5, -1, "4"])
def test_lengths_mask_names_a_bad_max_len(max_len):
    with pytest.raises(ValueError, match="max_len must be an integer >= 0"):
        lengths_mask([1], max_len)


def test_attention_arguments_checked_exactly():
    from minitransformer import attention_with_weights
    q = mg.randn(1, 2, 4)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\)"):
        attention_with_weights(q, q, q, dropout_p=1.0)
    for args in ((8, True), (0, 1)):
        with pytest.raises(ValueError, match="must be a positive integer"):
            MultiHeadAttention(*args)
