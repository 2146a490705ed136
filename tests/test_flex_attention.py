"""nn.attention.flex_attention (nn/flex_attention.py, nn/flex_masks.py) and nn.attention.bias
(nn/attention_bias.py). Forward values, lse and BlockMask metadata against PyTorch's own
flex_attention on the CPU (its eager path, run without its Dynamo wrapper, which would trace
every new lambda); gradients, which PyTorch's flex_attention refuses on the CPU, against
PyTorch's SDPA with the same bias as a float mask, and by gradcheck."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad.nn.attention.flex_attention import (AuxRequest, BlockMask, and_masks,
                                                  create_block_mask, create_mask,
                                                  flex_attention, noop_mask, or_masks)
from minigrad.nn.attention.bias import (CausalBias, CausalVariant, causal_lower_right,
                                        causal_upper_left)


@pytest.fixture
def tflex(torch, monkeypatch):
    """torch.nn.attention.flex_attention, its eager path called directly."""
    import torch.nn.attention.flex_attention as tf
    monkeypatch.setattr(tf, "_FLEX_ATTENTION_DISABLE_COMPILE_DEBUG", True)
    return tf


def _arrays(B=2, Hq=2, Hkv=2, L=6, S=6, E=4, Ev=3, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal((B, Hq, L, E)), rng.standard_normal((B, Hkv, S, E)),
            rng.standard_normal((B, Hkv, S, Ev)))


def _both(torch, arrays, requires_grad=False):
    """(minigrad tensors, torch tensors) of the same float64 arrays."""
    return ([mg.tensor(a, requires_grad=requires_grad) for a in arrays],
            [torch.tensor(a, requires_grad=requires_grad) for a in arrays])


def causal(b, h, q, kv):
    return q >= kv


def window(b, h, q, kv):
    return q - kv <= 2


def prefix(b, h, q, kv):
    return kv < 3


def _documents(lib):
    """A document-masking mask_mod over the captured ids (per batch) of `lib`'s tensor."""
    ids = lib.tensor([[0, 0, 1, 1, 1, 2], [0, 0, 0, 0, 1, 1]])
    return lambda b, h, q, kv: ids[b, q] == ids[b, kv]


def _dead_rows(b, h, q, kv):
    """Queries 0 and 1 may attend to nothing."""
    return (q >= 2) & (kv <= q)


MASKS = {
    "causal": lambda lib: (causal, None),
    "sliding_window": lambda lib: (and_masks(causal, window) if lib is mg else
                                   lib.nn.attention.flex_attention.and_masks(causal, window),
                                   None),
    "prefix_lm": lambda lib: (or_masks(prefix, causal) if lib is mg else
                              lib.nn.attention.flex_attention.or_masks(prefix, causal), None),
    "documents": lambda lib: (and_masks(causal, _documents(lib)) if lib is mg else
                              lib.nn.attention.flex_attention.and_masks(causal,
                                                                        _documents(lib)), 2),
    "dead_rows": lambda lib: (_dead_rows, None),
}


def _compare(torch, tflex, arrays, mask=None, B=None, score_mods=(None, None), **kw):
    """minigrad's (out, lse) against PyTorch's flex_attention's."""
    (q, k, v), (tq, tk, tv) = _both(torch, arrays)
    L, S = q.shape[2], k.shape[2]
    bm = tbm = None
    if mask is not None:
        bm = create_block_mask(MASKS[mask](mg)[0], B, None, L, S)
        tbm = tflex.create_block_mask(MASKS[mask](torch)[0], B, None, L, S, device="cpu")
    out, lse = flex_attention(q, k, v, score_mods[0], bm, return_lse=True, **kw)
    tout, aux = tflex.flex_attention(tq, tk, tv, score_mods[1], tbm,
                                     return_aux=tflex.AuxRequest(lse=True), **kw)
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(lse.numpy(), aux.lse.numpy(), rtol=1e-10, atol=1e-12)
    return out, lse


@pytest.mark.parametrize("mask", list(MASKS))
def test_masks_match_torch(torch, tflex, mask):
    _compare(torch, tflex, _arrays(), mask, B=MASKS[mask](mg)[1])


def _relative(lib, table):
    return lambda s, b, h, q, kv: s + table[q - kv + 5]


def _alibi(lib, slopes):
    return lambda s, b, h, q, kv: s + slopes[h] * (kv - q)


def _softcap(lib, _):
    return lambda s, b, h, q, kv: 2.0 * (s / 2.0).tanh()


SCORE_MODS = {"relative_bias": (_relative, np.linspace(-1, 1, 11)),
              "alibi": (_alibi, np.array([0.5, 0.25])),
              "softcap": (_softcap, None)}


@pytest.mark.parametrize("mod", list(SCORE_MODS))
def test_score_mods_match_torch(torch, tflex, mod):
    make, captured = SCORE_MODS[mod]
    mods = tuple(make(lib, None if captured is None else lib.tensor(captured))
                 for lib in (mg, torch))
    _compare(torch, tflex, _arrays(seed=1) if mod != "softcap" else
             [4 * a for a in _arrays(seed=1)], "causal", score_mods=mods)


def test_gqa_and_scale_match_torch(torch, tflex):
    _compare(torch, tflex, _arrays(Hq=4, Hkv=2, L=5, S=7, Ev=2), "causal",
             enable_gqa=True, scale=0.3)
    q, k, v = (mg.tensor(a) for a in _arrays(Hq=4, Hkv=2))
    with pytest.raises(ValueError, match="enable_gqa=True"):
        flex_attention(q, k, v)
    with pytest.raises(ValueError, match="multiple"):
        flex_attention(q[:, :3], k, v, enable_gqa=True)


@pytest.mark.filterwarnings("error::RuntimeWarning")      # no log(0) on the way either
def test_fully_masked_rows_give_zero_output_lse_minus_inf_and_no_nan_gradient(torch, tflex):
    (q, k, v), (tq, tk, tv) = _both(torch, _arrays(), requires_grad=True)
    out, lse = _compare(torch, tflex, _arrays(), "dead_rows")
    assert (out.numpy()[:, :, :2] == 0).all() and (lse.numpy()[:, :, :2] == -np.inf).all()
    out, lse = flex_attention(q, k, v, block_mask=create_block_mask(_dead_rows, None, None,
                                                                    6, 6), return_lse=True)
    (out.sum() + lse.sum()).backward()                  # lse's -inf rows too: no NaN
    assert all(np.isfinite(t.grad.numpy()).all() for t in (q, k, v))
    assert (q.grad.numpy()[:, :, :2] == 0).all()


def test_relative_bias_gradients_match_torch_sdpa(torch):
    """The captured bias table's gradient, and q, k, v's, as PyTorch's SDPA given the same
    bias as a float mask (PyTorch's flex_attention has no CPU backward)."""
    arrays, table = _arrays(L=5, S=6, seed=2), np.linspace(-1, 1, 11)
    (q, k, v), (tq, tk, tv) = _both(torch, arrays, requires_grad=True)
    bias, tbias = mg.tensor(table, requires_grad=True), torch.tensor(table, requires_grad=True)
    w = np.random.default_rng(3).standard_normal((2, 2, 5, 3))
    out = flex_attention(q, k, v, lambda s, b, h, i, j: s + bias[i - j + 5],
                         create_block_mask(causal, None, None, 5, 6))
    (out * mg.tensor(w)).sum().backward()
    i, j = torch.arange(5)[:, None], torch.arange(6)
    tmask = tbias[i - j + 5].masked_fill(i < j, -math.inf)
    tout = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=tmask)
    (tout * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(out.numpy(), tout.detach().numpy(), rtol=1e-10)
    for a, b in ((q, tq), (k, tk), (v, tv), (bias, tbias)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)


def test_gradcheck_q_k_v_and_captured_bias():
    arrays = _arrays(B=1, Hq=2, Hkv=1, L=4, S=5, E=3, Ev=2, seed=4)
    q, k, v = (mg.tensor(a, requires_grad=True) for a in arrays)
    slopes = mg.tensor([0.3, -0.7], dtype=mg.float64, requires_grad=True)
    bm = create_block_mask(lambda b, h, i, j: (i >= 1) & (j <= i + 1), None, None, 4, 5)

    def f(q, k, v, slopes):
        out, lse = flex_attention(q, k, v, lambda s, b, h, i, j: s + slopes[h] * (j - i), bm,
                                  enable_gqa=True, return_lse=True)
        return out.sum() + (out * out).sum() + lse[:, :, 1:].sum()   # query 0 sees nothing
    assert mg.gradcheck(f, (q, k, v, slopes))


def test_lse_is_the_natural_logsumexp_and_aux_outputs():
    q, k, v = (mg.tensor(a) for a in _arrays(B=1, Hq=1, Hkv=1, L=3, S=4))
    out, aux = flex_attention(q, k, v, return_aux=AuxRequest(lse=True, max_scores=True))
    s = q.numpy() @ k.numpy().swapaxes(-1, -2) / 2.0               # scale 1/sqrt(4)
    np.testing.assert_allclose(aux.lse.numpy(), np.log(np.exp(s).sum(-1)), rtol=1e-12)
    np.testing.assert_allclose(aux.max_scores.numpy(), s.max(-1), rtol=1e-12)
    p = np.exp(s - np.log(np.exp(s).sum(-1, keepdims=True)))
    np.testing.assert_allclose(out.numpy(), p @ v.numpy(), rtol=1e-12)
    _, none = flex_attention(q, k, v, return_aux=AuxRequest())
    assert none.lse is None and none.max_scores is None
    with pytest.raises(ValueError, match="not both"):
        flex_attention(q, k, v, return_lse=True, return_aux=AuxRequest(lse=True))


def test_half_inputs_compute_in_float32_and_key_batch_broadcasts():
    q, k, v = (mg.tensor(a, dtype=mg.float16) for a in _arrays(L=3, S=4))
    out, lse = flex_attention(q, k, v, return_lse=True)
    assert out.dtype == mg.float16 and lse.dtype == mg.float32
    ref = flex_attention(*(t.to(dtype=mg.float32) for t in (q, k, v)))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), atol=2e-3)
    one = flex_attention(q, k[:1], v[:1])
    np.testing.assert_allclose(one.numpy(), flex_attention(
        q, k[:1].expand(2, 2, 4, 4), v[:1].expand(2, 2, 4, 3)).numpy())


@pytest.mark.parametrize("B,H,L,S,size", [(2, 3, 300, 260, 128), (None, None, 300, 260, (64, 32)),
                                          (None, 2, 5, 6, 128)])
def test_block_mask_metadata_matches_torch(torch, tflex, B, H, L, S, size):
    bm = create_block_mask(causal, B, H, L, S, BLOCK_SIZE=size)
    tbm = tflex.create_block_mask(causal, B, H, L, S, device="cpu", BLOCK_SIZE=size)
    assert bm.shape == tbm.shape and bm.BLOCK_SIZE == tbm.BLOCK_SIZE
    assert bm.seq_lengths == tbm.seq_lengths and bm.mask_mod is causal
    np.testing.assert_array_equal(bm.to_dense().numpy(), tbm.to_dense().numpy())
    assert bm.to_dense().dtype == mg.int32
    assert bm.sparsity() == pytest.approx(tbm.sparsity())
    assert str(bm).split("...")[0] == str(tbm).split("...")[0]        # the drawn blocks
    for index in (0, -1, (0, 1), (slice(0, 1), slice(None))):
        assert bm[index].shape == tbm[index].shape
    assert "mask_mod=causal" in repr(bm) and "BLOCK_SIZE" in repr(bm)


def test_sliced_block_mask_keeps_its_batches_mask():
    bm = create_block_mask(_documents(mg), 2, None, 6, 6)
    one = bm[1]
    np.testing.assert_array_equal(one.dense.numpy(), bm.dense.numpy()[1:2])
    with pytest.raises(RuntimeError, match="sliced"):
        one.mask_mod(*(mg.arange(1),) * 4)
    q, k, v = (mg.tensor(a[1:]) for a in _arrays())
    np.testing.assert_allclose(flex_attention(q, k, v, block_mask=one).numpy(),
                               flex_attention(mg.tensor(_arrays()[0]), *(
                                   mg.tensor(a) for a in _arrays()[1:]),
                                   block_mask=bm).numpy()[1:], rtol=1e-12)


def test_create_mask_matches_torch(torch, tflex):
    for mod in (causal, lambda s, b, h, q, kv: s.masked_fill(q < kv, -math.inf)):
        np.testing.assert_array_equal(create_mask(mod, None, 2, 3, 4).numpy(),
                                      tflex.create_mask(mod, None, 2, 3, 4).numpy())
    np.testing.assert_array_equal(create_mask(noop_mask, 2, None, 2, 2).numpy(),
                                  tflex.create_mask(tflex.noop_mask, 2, None, 2, 2).numpy())


def test_mask_combinators_closed_forms():
    everything, nothing = create_mask(and_masks(), 1, 1, 2, 3), create_mask(or_masks(), 1, 1, 2, 3)
    assert everything.numpy().all() and not nothing.numpy().any()
    both = create_mask(and_masks(causal, window), None, None, 5, 5).numpy()[0, 0]
    i, j = np.indices((5, 5))
    np.testing.assert_array_equal(both, (i >= j) & (i - j <= 2))
    with pytest.raises(TypeError, match="mask_mod function"):
        and_masks(causal, 3)


def test_errors_name_what_was_wrong():
    q, k, v = (mg.tensor(a) for a in _arrays())
    with pytest.raises(ValueError, match="4-D"):
        flex_attention(q[0], k[0], v[0])
    with pytest.raises(ValueError, match=r"created for \(Q_LEN, KV_LEN\) = \(7, 6\)"):
        flex_attention(q, k, v, block_mask=create_block_mask(causal, None, None, 7, 6))
    with pytest.raises(TypeError, match="requires a mask_mod"):
        create_block_mask(lambda s, b, h, i, j: s, None, None, 6, 6)
    with pytest.raises(TypeError, match="boolean Tensor"):
        create_block_mask(lambda b, h, i, j: i - j, None, None, 6, 6)
    with pytest.raises(TypeError, match="one floating dtype"):
        flex_attention(q, k.to(dtype=mg.float32), v)
    with pytest.raises(TypeError, match="kernel_options"):
        flex_attention(q, k, v, kernel_options=3)
    with pytest.raises(ValueError, match="BLOCK_SIZE"):
        create_block_mask(causal, None, None, 6, 6, BLOCK_SIZE=0)
    assert isinstance(create_block_mask(causal, 1, 1, 6, 6), BlockMask)


def test_numpy_integer_sizes_are_taken_as_torchs_are():
    """Sizes read off arrays (NumPy integers) are ints, as PyTorch takes them."""
    n = np.int64(6)
    bm = create_block_mask(causal, np.int64(2), None, n, n, BLOCK_SIZE=np.int64(4))
    assert bm.shape == (2, 1, 6, 6) and bm.BLOCK_SIZE == (4, 4)
    assert all(type(x) is int for x in bm.shape + bm.BLOCK_SIZE)
    assert create_mask(causal, None, None, n, np.int32(4)).shape == (1, 1, 6, 4)
    bias = causal_lower_right(np.int64(3), np.int64(5))
    assert (bias.seq_len_q, bias.seq_len_kv) == (3, 5)
    np.testing.assert_array_equal(bias._materialize().numpy(), np.tri(3, 5, 2, dtype=bool))
    with pytest.raises(ValueError, match="Q_LEN must be a non-negative int"):
        create_block_mask(causal, None, None, 6.0, 6)


def test_submodules_import_as_torchs():
    import minigrad.nn.attention.flex_attention as fa
    import minigrad.nn.attention.bias as bias
    assert fa.flex_attention is flex_attention and bias.CausalBias is CausalBias
    assert mg.nn.attention.flex_attention is fa and callable(mg.nn.attention.sdpa_kernel)


@pytest.mark.filterwarnings("ignore:Lower right causal bias")  # (no NaN here or there)
@pytest.mark.parametrize("L,S", [(3, 5), (5, 3), (4, 4)])
@pytest.mark.parametrize("make", ["causal_upper_left", "causal_lower_right"])
def test_causal_bias_in_sdpa_matches_torch(torch, make, L, S):
    from torch.nn.attention import bias as tbias
    (q, k, v), (tq, tk, tv) = _both(torch, _arrays(L=L, S=S))
    mine, theirs = globals()[make](L, S), getattr(tbias, make)(L, S)
    np.testing.assert_array_equal(mine._materialize().numpy(), theirs._materialize().numpy())
    out = F.scaled_dot_product_attention(q, k, v, attn_mask=mine)
    tout = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, attn_mask=theirs)
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-10, atol=1e-12)
    assert mine.variant == CausalVariant[theirs.variant.name] == theirs.variant


def test_causal_bias_errors():
    q, k, v = (mg.tensor(a) for a in _arrays(L=3, S=5))
    with pytest.raises(ValueError, match="is_causal"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(3, 5),
                                       is_causal=True)
    with pytest.raises(ValueError, match="for 3 queries and 4 keys"):
        F.scaled_dot_product_attention(q, k, v, attn_mask=causal_lower_right(3, 4))
    with pytest.raises(ValueError, match="two sizes"):
        causal_upper_left(3)
    with pytest.raises(TypeError, match="CausalVariant"):
        CausalBias(1, 3, 5)
    assert "True" in repr(causal_lower_right(2, 3))
