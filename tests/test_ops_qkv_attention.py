"""F.qkv_attention: multi-head attention from one (B, T, 3C) projection, as one op. Against
the readable composition it replaces (split, per-head views, SDPA, re-assembly) and PyTorch;
by gradcheck and second order; causal; GPT's two paths equal to the bit."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from op_helpers import (OpCase, check_vs_torch, check_gradcheck, check_double_backward_vs_torch,
                        check_fused_vs_unfused)
from minitransformer.gpt import GPT, GPTConfig, CausalSelfAttention


def readable(qkv, n_head, is_causal, dropout_p=0.0):
    """The lines GPT keeps beside the fused op."""
    B, T, C3 = qkv.shape
    q, k, v = (t.reshape(B, T, n_head, C3 // 3 // n_head).transpose(1, 2)
               for t in qkv.split(C3 // 3, dim=2))
    y = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=is_causal)
    return y.transpose(1, 2).reshape(B, T, C3 // 3)


def _case(name, shape, n_head, is_causal):
    def torch_fn(qkv):
        import torch
        B, T, C3 = qkv.shape
        q, k, v = (t.reshape(B, T, n_head, C3 // 3 // n_head).transpose(1, 2)
                   for t in qkv.split(C3 // 3, dim=2))
        s = q @ k.transpose(-1, -2) / (C3 // 3 // n_head) ** 0.5   # (the math kernel: its
        if is_causal:                                             # second order exists)
            s = s.masked_fill(~torch.ones(T, T, dtype=torch.bool).tril(), float("-inf"))
        y = s.softmax(-1) @ v
        return y.transpose(1, 2).reshape(B, T, C3 // 3)
    return OpCase(name, lambda x: F.qkv_attention(x, n_head, is_causal=is_causal), [shape],
                  torch_fn=torch_fn)


CASES = [_case("causal_2_heads", (2, 5, 12), 2, True), _case("full_1_head", (3, 4, 6), 1, False),
         _case("causal_3_heads", (1, 6, 18), 3, True)]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck_and_second_order(case, device):
    check_gradcheck(case, device)
    check_double_backward_vs_torch(case, device)


@pytest.mark.parametrize("n_head,is_causal", [(2, True), (3, False)])
def test_the_same_as_the_readable_composition(n_head, is_causal, device):
    arrays = [np.random.default_rng(0).standard_normal((2, 5, 18))]
    check_fused_vs_unfused(lambda x: F.qkv_attention(x, n_head, is_causal=is_causal),
                           lambda x: readable(x, n_head, is_causal), arrays, device)


def test_causal_output_at_t_ignores_positions_after_t():
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 6, 12))
    b = a.copy()
    b[:, 4:] = rng.standard_normal((2, 2, 12))             # only positions 4 and 5 change
    ya, yb = (F.qkv_attention(mg.tensor(x), 2, is_causal=True).numpy() for x in (a, b))
    np.testing.assert_array_equal(ya[:, :4], yb[:, :4])
    assert not np.allclose(ya[:, 4:], yb[:, 4:])


def test_dropout_draws_the_readable_paths_mask():
    x = mg.tensor(np.random.default_rng(2).standard_normal((2, 5, 12)), requires_grad=True)
    outs = []
    for fn in (lambda t: F.qkv_attention(t, 2, 0.4, is_causal=True),
               lambda t: readable(t, 2, True, 0.4)):
        mg.manual_seed(7)
        y = fn(x)
        outs.append((y.numpy(), mg.grad((y * y).sum(), [x])[0].numpy()))
    for a, b in zip(*outs):
        np.testing.assert_array_equal(a, b)


@pytest.mark.parametrize("dropout,training", [(0.0, True), (0.3, True), (0.3, False)])
def test_gpt_takes_the_same_steps_on_either_path(dropout, training):
    """GPT's attention through the fused op (training on the CPU) and through the readable
    lines: the same loss and gradients, to the bit, dropout included."""
    cfg = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=8,
                    dropout=dropout, bias=True)
    x, y = (mg.tensor(np.random.default_rng(s).integers(0, 11, (3, 8))) for s in (0, 1))
    results = []
    for fused in (True, False):
        mg.manual_seed(0)
        model = GPT(cfg)
        model.train(training)
        model.transformer.h[0].attn.fused_qkv = fused
        model.transformer.h[1].attn.fused_qkv = fused
        mg.manual_seed(5)
        _, loss = model(x, y)
        loss.backward()
        results.append((loss.item(), [p.grad.numpy() for p in model.parameters()]))
    assert results[0][0] == results[1][0]
    for a, b in zip(results[0][1], results[1][1]):
        np.testing.assert_array_equal(a, b)
    assert CausalSelfAttention.fused_qkv                  # the class default: on


def test_bad_arguments_are_named():
    x = mg.zeros((2, 3, 12))
    for bad in [dict(qkv=mg.zeros((2, 3, 10)), n_head=1), dict(qkv=x, n_head=3),
                dict(qkv=x, n_head=0), dict(qkv=mg.zeros((3, 12)), n_head=2)]:
        with pytest.raises(ValueError, match=r"qkv must be a \(B, T, 3C\) Tensor"):
            F.qkv_attention(**bad)
    with pytest.raises(ValueError, match=r"dropout_p must be in \[0, 1\)"):
        F.qkv_attention(x, 2, dropout_p=1.0)
    with pytest.raises(TypeError, match="qkv must be floating-point, got int64"):
        F.qkv_attention(mg.zeros((2, 3, 12), dtype=mg.int64), 2)   # was NumPy's cast error


def test_float16_attends_in_float32_as_the_readable_lines(device):
    """float16 scores overflow (65504): the readable lines (SDPA) attend in float32 inside,
    as PyTorch; the fused op attended in float16 and gave a NaN row here. Now both agree to
    the bit, the gradients too."""
    a = np.random.default_rng(0).standard_normal((1, 4, 6)) * 200
    outs, grads = [], []
    for fn in (lambda x: F.qkv_attention(x, 1, is_causal=True), lambda x: readable(x, 1, True)):
        x = mg.tensor(a, dtype=mg.float16, device=device, requires_grad=True)
        out = fn(x)
        out.sum().backward()
        outs.append(out.cpu().numpy())
        grads.append(x.grad.cpu().numpy())
    assert outs[0].dtype == np.float16 and np.isfinite(outs[0]).all()
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(grads[0], grads[1])
