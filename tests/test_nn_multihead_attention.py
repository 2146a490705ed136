"""nn.MultiheadAttention with PyTorch's signature: the same outputs, weights and gradients as
torch.nn.MultiheadAttention given its state dict (layouts, biases, kdim/vdim, bias_kv,
zero_attn, boolean and float masks, unbatched input); and without PyTorch, the properties
that define it: padded keys get zero weight, a causal mask hides the future, the names."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

# PyTorch's own deprecation notice for a boolean key_padding_mask beside a float attn_mask
pytestmark = pytest.mark.filterwarnings("ignore:Support for mismatched key_padding_mask")

E, H, L, S, N = 8, 2, 4, 5, 3

CONFIGS = [dict(), dict(batch_first=True), dict(bias=False), dict(kdim=6, vdim=5),
           dict(add_bias_kv=True), dict(add_zero_attn=True),
           dict(add_bias_kv=True, add_zero_attn=True, batch_first=True)]

_rng = np.random.default_rng(0)
_KPM = np.zeros((N, S), bool)
_KPM[0, 3:] = True
_KPM[2, 0] = True
_BOOL = _rng.random((L, S)) > 0.6
_BOOL[:, 0] = False                            # every query may attend to key 0
_FLOAT = _rng.standard_normal((L, S))
_BOOL3 = _rng.random((N * H, L, S)) > 0.6
_BOOL3[..., 1] = False

MASKS = {"none": {}, "key_padding": dict(key_padding_mask=_KPM),
         "bool": dict(attn_mask=_BOOL), "float": dict(attn_mask=_FLOAT),
         "bool_per_head": dict(attn_mask=_BOOL3),
         "float_and_padding": dict(attn_mask=_FLOAT, key_padding_mask=_KPM)}


def _inputs(cfg, unbatched=False):
    rng = np.random.default_rng(1)
    kd, vd = cfg.get("kdim", E), cfg.get("vdim", E)
    shape = (lambda t, d: (t, d)) if unbatched else \
        (lambda t, d: (N, t, d)) if cfg.get("batch_first") else (lambda t, d: (t, N, d))
    return [rng.standard_normal(shape(L, E)), rng.standard_normal(shape(S, kd)),
            rng.standard_normal(shape(S, vd))]


def _pair(cfg):
    torch = pytest.importorskip("torch")
    torch.manual_seed(0)
    theirs = torch.nn.MultiheadAttention(E, H, **cfg).double()
    with torch.no_grad():                     # non-zero biases, so they count
        for name, p in theirs.named_parameters():
            if "bias" in name:
                p.normal_()
    ours = nn.MultiheadAttention(E, H, **cfg).double()
    ours.load_state_dict(theirs.state_dict())
    return torch, theirs, ours


def _compare(cfg, masks, unbatched=False, **kw):
    torch, theirs, ours = _pair(cfg)
    arrays = _inputs(cfg, unbatched)
    t_in = [torch.tensor(a, requires_grad=True) for a in arrays]
    m_in = [mg.tensor(a, requires_grad=True) for a in arrays]
    t_masks = {k: torch.tensor(v) for k, v in masks.items()}
    t_out, t_w = theirs(*t_in, **t_masks, **kw)
    m_out, m_w = ours(*m_in, **masks, **kw)
    np.testing.assert_allclose(m_out.numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    assert (m_w is None) == (t_w is None)
    if t_w is not None:
        np.testing.assert_allclose(m_w.numpy(), t_w.detach().numpy(), rtol=1e-10, atol=1e-12)
    g = np.random.default_rng(2).standard_normal(t_out.shape)
    (t_out * torch.tensor(g)).sum().backward()
    (m_out * mg.tensor(g)).sum().backward()
    for a, b in zip(m_in, t_in):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-9, atol=1e-12)
    t_params = dict(theirs.named_parameters())
    for name, p in ours.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), t_params[name].grad.numpy(), rtol=1e-9,
                                   atol=1e-12, err_msg=name)


@pytest.mark.parametrize("cfg", CONFIGS, ids=str)
@pytest.mark.parametrize("mask", sorted(MASKS))
def test_matches_torch(cfg, mask):
    _compare(cfg, MASKS[mask])


@pytest.mark.parametrize("need_weights,average", [(False, True), (True, False)])
def test_weights_per_head_or_none_match_torch(need_weights, average):
    _compare(dict(batch_first=True), MASKS["float_and_padding"], need_weights=need_weights,
             average_attn_weights=average)


@pytest.mark.parametrize("need_weights", [True, False])
def test_a_causal_mask_with_the_hint_matches_torch(need_weights):
    causal = np.triu(np.ones((L, L), bool), 1)           # True: not allowed
    torch, theirs, ours = _pair(dict(batch_first=True))
    x = np.random.default_rng(3).standard_normal((N, L, E))
    t, _ = theirs(*[torch.tensor(x)] * 3, attn_mask=torch.tensor(causal), is_causal=True,
                  need_weights=need_weights)
    m, _ = ours(*[mg.tensor(x)] * 3, attn_mask=causal, is_causal=True,
                need_weights=need_weights)
    np.testing.assert_allclose(m.numpy(), t.detach().numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("cfg", [dict(add_bias_kv=True), dict(add_zero_attn=True)], ids=str)
def test_the_hint_keeps_the_added_key_visible_with_or_without_weights(cfg):
    """The documented difference: PyTorch's need_weights=False path attends by the hint
    alone, hiding the added key; here the mask given holds on both paths."""
    causal = np.triu(np.ones((L, L), bool), 1)
    mg.manual_seed(0)
    ours = nn.MultiheadAttention(E, H, batch_first=True, **cfg).double()
    x = mg.tensor(np.random.default_rng(3).standard_normal((N, L, E)))
    fused, _ = ours(x, x, x, attn_mask=causal, is_causal=True, need_weights=False)
    composed, w = ours(x, x, x, attn_mask=causal, is_causal=True)
    np.testing.assert_allclose(fused.numpy(), composed.numpy(), rtol=1e-12, atol=1e-12)
    assert w.shape == (N, L, L + 1) and (w.numpy()[..., -1] > 0).all()


def test_unbatched_matches_torch():
    _compare(dict(), {"key_padding_mask": _KPM[0], "attn_mask": _FLOAT}, unbatched=True)


# ---- without PyTorch --------------------------------------------------------------------
def test_padded_keys_get_zero_weight_and_do_not_change_the_output():
    mg.manual_seed(0)
    mha = nn.MultiheadAttention(E, H, batch_first=True).double()
    x = np.random.default_rng(4).standard_normal((N, S, E))
    kpm = np.zeros((N, S), bool)
    kpm[:, 3:] = True
    y, w = mha(mg.tensor(x), mg.tensor(x), mg.tensor(x), key_padding_mask=kpm)
    assert w.shape == (N, S, S) and np.all(w.numpy()[..., 3:] == 0)
    np.testing.assert_allclose(w.numpy().sum(-1), 1.0)
    changed = x.copy()
    changed[:, 3:] = 7.0                       # the padded keys' values: no effect
    y2, _ = mha(mg.tensor(x), mg.tensor(changed), mg.tensor(changed), key_padding_mask=kpm)
    np.testing.assert_allclose(y.numpy(), y2.numpy(), rtol=1e-12)


def test_a_causal_mask_hides_the_future():
    mg.manual_seed(0)
    mha = nn.MultiheadAttention(E, H, batch_first=True).double()
    causal = np.triu(np.ones((L, L), bool), 1)
    a = np.random.default_rng(5).standard_normal((N, L, E))
    b = a.copy()
    b[:, 2:] = 3.0
    ya, yb = (mha(mg.tensor(t), mg.tensor(t), mg.tensor(t), attn_mask=causal,
                  need_weights=False)[0].numpy() for t in (a, b))
    np.testing.assert_allclose(ya[:, :2], yb[:, :2], rtol=1e-12)
    assert not np.allclose(ya[:, 2:], yb[:, 2:])


@pytest.mark.parametrize("need_weights", [True, False])
def test_dropout_in_training_only_and_reproducible_under_a_seed(need_weights):
    mg.manual_seed(0)
    mha = nn.MultiheadAttention(E, H, dropout=0.5, batch_first=True).double()
    x = mg.tensor(np.random.default_rng(6).standard_normal((N, L, E)))

    def run(seed):
        mg.manual_seed(seed)
        return mha(x, x, x, need_weights=need_weights)[0].numpy()
    a, b, c = run(1), run(1), run(2)
    assert np.array_equal(a, b) and not np.allclose(a, c)
    mha.eval()
    plain = nn.MultiheadAttention(E, H, batch_first=True).double()
    plain.load_state_dict(mha.state_dict())
    np.testing.assert_allclose(run(1), plain(x, x, x)[0].numpy(), rtol=1e-12)


def test_parameters_are_named_as_pytorchs():
    names = lambda m: [n for n, _ in m.named_parameters()]       # noqa: E731
    assert names(nn.MultiheadAttention(E, H)) == ["in_proj_weight", "in_proj_bias",
                                                   "out_proj.weight", "out_proj.bias"]
    assert names(nn.MultiheadAttention(E, H, bias=False, kdim=3, vdim=4, add_bias_kv=True)) \
        == ["q_proj_weight", "k_proj_weight", "v_proj_weight", "bias_k", "bias_v",
            "out_proj.weight"]


def test_bad_arguments_are_named():
    with pytest.raises(ValueError, match="positive multiple of num_heads"):
        nn.MultiheadAttention(10, 3)
    mha = nn.MultiheadAttention(E, H)
    x = mg.randn(L, N, E)
    with pytest.raises(RuntimeError, match="pass that mask too"):
        mha(x, x, x, is_causal=True)
    with pytest.raises(ValueError, match=r"attn_mask must be \(4, 4\) or \(6, 4, 4\)"):
        mha(x, x, x, attn_mask=np.zeros((3, 4), bool))
    with pytest.raises(ValueError, match=r"key_padding_mask must be \(3, 4\)"):
        mha(x, x, x, key_padding_mask=np.zeros((3, 5), bool))
    with pytest.raises(TypeError, match="boolean or floating point"):
        mha(x, x, x, attn_mask=np.zeros((4, 4), np.int64))
    with pytest.raises(ValueError, match="query, key, value must be"):
        mha(x, mg.randn(L, N + 1, E), x)


def test_bad_shapes_are_named_as_the_caller_gave_them():
    """Unbatched input's masks and a wrong embedding width were reported in the module's
    internal batch-first shapes ("key_padding_mask must be (1, 5), got (1, 1, 5)" for a
    (1, 5) mask; linear's error on a transposed (3, 4, 6) for a (4, 3, 6) query)."""
    mha = nn.MultiheadAttention(E, H, kdim=6, vdim=6)
    q, kv = mg.randn(L, E), mg.randn(S, 6)
    with pytest.raises(ValueError, match=r"key_padding_mask must be \(5,\) \(keys, for "
                                         r"unbatched input\), got \(1, 5\)"):
        mha(q, kv, kv, key_padding_mask=np.zeros((1, S), bool))
    with pytest.raises(ValueError, match=r"\(2, 4, 5\) \(heads, queries, keys\), got "
                                         r"\(3, 4, 5\)"):
        mha(q, kv, kv, attn_mask=np.zeros((3, L, S), bool))
    for args in ((mg.randn(L, N, 6), mg.randn(S, N, 6), mg.randn(S, N, 6)),   # query width
                 (mg.randn(L, N, E), mg.randn(S, N, E), mg.randn(S, N, E)),   # kdim
                 (q, mg.randn(S, N, 6), mg.randn(S, N, 6))):                  # mixed ranks
        shapes = ", ".join(str(tuple(a.shape)) for a in args)
        with pytest.raises(ValueError, match=r"\(L, 8\), \(S, 6\), \(S, 6\), or batched "
                                             r"as \(L, N, E\).*got " + shapes.replace(
                                                 "(", r"\(").replace(")", r"\)")):
            mha(*args)


@pytest.mark.parametrize("cfg", [dict(), dict(kdim=6, vdim=5, add_bias_kv=True,
                                              add_zero_attn=True, batch_first=True)], ids=str)
def test_gradcheck_through_inputs_and_parameters(cfg):
    """Gradients by central differences (float64), through the inputs and every parameter,
    with both kinds of mask."""
    mg.manual_seed(0)
    mha = nn.MultiheadAttention(E, H, **cfg).double()
    names = [n for n, _ in mha.named_parameters()]
    q, k, v = (mg.tensor(a, requires_grad=True) for a in _inputs(cfg))
    masks = dict(key_padding_mask=_KPM, attn_mask=_FLOAT)
    assert mg.gradcheck(lambda q, k, v: mha(q, k, v, **masks), [q, k, v])
    params = [mg.tensor(p.numpy(), requires_grad=True) for p in mha.parameters()]
    assert mg.gradcheck(lambda *ps: nn.utils.functional_call(
        mha, dict(zip(names, ps)), (q.detach(), k.detach(), v.detach()), masks)[0], params)


# ---- F.multi_head_attention_forward: the function the module calls -----------------------
FUNC_CASES = [dict(), dict(unbatched=True), dict(separate=True), dict(bias_kv=True),
              dict(add_zero_attn=True, need_weights=False),
              dict(static=True, average_attn_weights=False),
              dict(masks="float_and_padding", no_bias=True),
              dict(masks="bool_per_head", separate=True, add_zero_attn=True)]


@pytest.mark.parametrize("case", FUNC_CASES, ids=str)
def test_multi_head_attention_forward_matches_torch(case):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    kd = vd = E
    arrays = dict(q=rng.standard_normal((L, E) if case.get("unbatched") else (L, N, E)),
                  k=rng.standard_normal((S, kd) if case.get("unbatched") else (S, N, kd)),
                  v=rng.standard_normal((S, vd) if case.get("unbatched") else (S, N, vd)),
                  w_in=rng.standard_normal((3 * E, E)), b_in=rng.standard_normal(3 * E),
                  wq=rng.standard_normal((E, E)), wk=rng.standard_normal((E, kd)),
                  wv=rng.standard_normal((E, vd)), bk=rng.standard_normal((1, 1, E)),
                  bv=rng.standard_normal((1, 1, E)), w_out=rng.standard_normal((E, E)),
                  b_out=rng.standard_normal(E), sk=rng.standard_normal((N * H, S, E // H)),
                  sv=rng.standard_normal((N * H, S, E // H)))
    masks = MASKS[case.get("masks", "none")]
    results = []
    for lib, Fn in ((torch, torch.nn.functional), (mg, mg.nn.functional)):
        t = {k: lib.tensor(a, requires_grad=True) for k, a in arrays.items()}
        sep, bkv, static = case.get("separate"), case.get("bias_kv"), case.get("static")
        out, w = Fn.multi_head_attention_forward(
            t["q"], t["k"], t["v"], E, H, None if sep else t["w_in"],
            None if case.get("no_bias") else t["b_in"], t["bk"] if bkv else None,
            t["bv"] if bkv else None, case.get("add_zero_attn", False), 0.0, t["w_out"],
            None if case.get("no_bias") else t["b_out"], training=False,
            need_weights=case.get("need_weights", True),
            average_attn_weights=case.get("average_attn_weights", True),
            use_separate_proj_weight=bool(sep), q_proj_weight=t["wq"] if sep else None,
            k_proj_weight=t["wk"] if sep else None, v_proj_weight=t["wv"] if sep else None,
            static_k=t["sk"] if static else None, static_v=t["sv"] if static else None,
            **{k: lib.tensor(m) for k, m in masks.items()})
        (out * lib.tensor(np.cos(np.arange(out.numel())).reshape(out.shape))).sum().backward()
        results.append([out.detach().numpy(), None if w is None else w.detach().numpy()] +
                       [None if a.grad is None else a.grad.numpy() for a in t.values()])
    for name, a, b in zip(["out", "weights"] + list(arrays), *results):
        assert (a is None) == (b is None), name
        if a is not None:
            np.testing.assert_allclose(b, a, rtol=1e-9, atol=1e-11, err_msg=name)


def test_multi_head_attention_forward_bad_arguments_are_named():
    F = mg.nn.functional
    q = mg.ones(L, N, E)
    w_in, w_out = mg.ones(3 * E, E), mg.ones(E, E)
    with pytest.raises(ValueError, match=r"multi_head_attention_forward: query, key, value"):
        F.multi_head_attention_forward(q, q, q, E + 2, H, w_in, None, None, None, False, 0.0,
                                       w_out, None)
    with pytest.raises(ValueError, match=r"use_separate_proj_weight=True .* q_proj_weight"):
        F.multi_head_attention_forward(q, q, q, E, H, None, None, None, None, False, 0.0,
                                       w_out, None, use_separate_proj_weight=True)
    with pytest.raises(ValueError, match=r"static_k must be \(6, S, 4\)"):
        F.multi_head_attention_forward(q, q, q, E, H, w_in, None, None, None, False, 0.0,
                                       w_out, None, static_k=mg.ones(N, S, E))
