"""Tensors with a dim of length 0 through the ops whose fused paths reshape rows: the result
and the gradients have PyTorch's shapes (and values), with no NumPy warning."""
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F


@pytest.fixture(autouse=True)
def no_numpy_warnings():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        yield


def _leaves(*shapes):
    mg.manual_seed(0)
    return [mg.randn(*s, dtype=mg.float64, requires_grad=True) for s in shapes]


@pytest.mark.parametrize("shapes, causal", [
    (((0, 3, 8), (0, 5, 8), (0, 5, 8)), False),     # no batch
    (((2, 3, 8), (2, 0, 8), (2, 0, 8)), False),     # no keys: the output is 0
    (((2, 3, 8), (2, 0, 8), (2, 0, 8)), True),
    (((2, 0, 8), (2, 0, 8), (2, 0, 8)), True),      # an empty sequence
    (((2, 3, 4), (2, 5, 4), (2, 5, 0)), False),     # values of width 0
    (((2, 3, 0), (2, 5, 0), (2, 5, 4)), False),     # d_k = 0: every score 0, the values' mean
])
def test_attention_over_empty_dims(shapes, causal):
    q, k, v = _leaves(*shapes)
    out = F.scaled_dot_product_attention(q, k, v, is_causal=causal)
    out.sum().backward()
    assert out.shape == q.shape[:-1] + v.shape[-1:]
    assert (q.grad.shape, k.grad.shape, v.grad.shape) == (q.shape, k.shape, v.shape)
    if k.shape[-2] == 0:
        assert not out.numpy().any()
    if q.shape[-1] == 0:
        np.testing.assert_allclose(out.numpy(), np.broadcast_to(
            v.numpy().mean(-2, keepdims=True), out.shape), rtol=1e-12)
    torch = pytest.importorskip("torch")
    tq, tk, tv = (torch.tensor(t.numpy(), requires_grad=True) for t in (q, k, v))
    t_out = torch.nn.functional.scaled_dot_product_attention(tq, tk, tv, is_causal=causal)
    t_out.sum().backward()
    np.testing.assert_allclose(out.numpy(), t_out.detach().numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(v.grad.numpy(), tv.grad.numpy(), rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("shape", [(0, 4, 6), (2, 0, 6), (2, 4, 0)])
def test_qkv_attention_and_multihead_attention_over_empty_dims(shape):
    x, = _leaves(shape)
    y = F.qkv_attention(x, 2, is_causal=True)
    y.sum().backward()
    assert y.shape == shape[:2] + (shape[2] // 3,) and x.grad.shape == shape
    m = nn.MultiheadAttention(8, 2, batch_first=True)
    keys = mg.randn(2, 0, 8)
    out, weights = m(mg.randn(2, 3, 8), keys, keys, need_weights=False)
    assert out.shape == (2, 3, 8) and weights is None


def test_layer_norm_over_nothing_and_batch_norm_of_no_channels():
    x, = _leaves((2, 3, 0))
    ln = nn.LayerNorm((3, 0)).double()
    y = ln(x)
    y.sum().backward()
    assert y.shape == (2, 3, 0) and x.grad.shape == (2, 3, 0) and ln.weight.grad.shape == (3, 0)
    assert F.layer_norm(mg.zeros(2, 0, dtype=mg.float16), (0,)).dtype == mg.float16
    x, = _leaves((4, 0))
    y = F.batch_norm(x, None, None, training=True)
    y.sum().backward()
    assert y.shape == (4, 0) and x.grad.shape == (4, 0)


def test_glu_and_split_of_an_empty_dim():
    assert F.glu(mg.zeros(3, 0)).shape == (3, 0)
    assert F.glu(mg.zeros(0, 4), 0).shape == (0, 4)
    pieces = mg.zeros(0, 3).split(0)
    assert len(pieces) == 1 and pieces[0].shape == (0, 3)
    with pytest.raises(ValueError, match="split_size must be a positive integer"):
        mg.zeros(2, 3).split(0)


def test_logsumexp_and_kl_div_of_nothing_give_torchs_values_without_warnings():
    x, = _leaves((0, 3))
    y = x.logsumexp(0)
    y.sum().backward()
    assert np.all(y.numpy() == -np.inf) and x.grad.shape == (0, 3)
    assert mg.zeros(2, 0).logsumexp(1, keepdim=True).shape == (2, 1)
    a, = _leaves((0, 4))
    loss = F.kl_div(a, mg.zeros(0, 4, dtype=mg.float64), reduction="batchmean")
    loss.backward()
    assert np.isnan(loss.item()) and a.grad.shape == (0, 4)


def test_save_takes_a_bare_empty_tensor_as_torch_save(tmp_path):
    mg.save(mg.zeros(0, 3), tmp_path / "x.safetensors")
    back = mg.load(tmp_path / "x.safetensors")
    assert isinstance(back, mg.Tensor) and back.shape == (0, 3) and back.dtype == mg.float32


def test_median_of_nothing_is_nan_as_pytorch():
    x, = _leaves((0, 5))
    m = x.median()
    m.backward()
    assert np.isnan(m.item()) and x.grad.shape == (0, 5)
