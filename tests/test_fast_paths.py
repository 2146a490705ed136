"""Each op's fast array backward (`backward_arrays`, or `scatter_backward` for indexing, used
when create_graph=False) matches its readable Tensor-op reference (`backward`, used when
create_graph=True); the engine's in-place accumulation is exercised by tensors used often."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad.autograd import Function
from minigrad.ops.rnn_cells import lstm_cell, gru_cell
from minigrad.ops.rnn_scan import rnn_scan, rnn_layer


def _both(fn, inputs):
    fast = mg.grad(fn(*inputs).sum(), inputs)                     # backward_arrays
    ref = mg.grad(fn(*inputs).sum(), inputs, create_graph=True)   # backward (Tensor ops)
    return fast, ref


def _scan(mode, gi, state, w, b=None, reverse=False):
    ys, finals = rnn_scan(mode, gi, state, w, b, reverse)
    return ys * ys.detach().exp() + sum(f * f for f in finals).sum()


def _layer(x, state, w_ih, w_hh, b_ih=None, b_hh=None, reverse=False, w_hr=None):
    """rnn_layer("LSTM"): the op that makes gi = W_ih x + b_ih itself, weighted as _scan."""
    ys, finals = rnn_layer("LSTM", x, state, w_ih, w_hh, b_ih, b_hh, reverse, w_hr)
    return ys * ys.detach().exp() + sum((f * f).sum() for f in finals)   # (h, c: P, H)


def _put(h, index, value):
    """h[index] = value, recorded by autograd (ops/inplace_autograd.py's IndexPut)."""
    h[index] = value
    return h


def _through_views(h, v):
    """Writes into views of h, held (ops/inplace_views.py's Put: at positions, and all)."""
    h.T[1:].mul_(v.T)
    h.unsqueeze(0).add_(v[:, :1])
    return h


_ZEROS = mg.tensor([[1.0, 0.0, 1.0, 1.0], [0.0, 1.0, 0.0, 1.0], [1.0, 1.0, 1.0, 0.0]])
CASES = {
    "gelu": (lambda x: F.gelu(x) * x, [(3, 5)]),
    "gelu_tanh": (lambda x: F.gelu(x, approximate="tanh") * x, [(3, 5)]),
    # the fused activations (their kinks, inf and NaN: the activation test files)
    "leaky_relu": (lambda x: F.leaky_relu(x, -0.3) * x, [(3, 5)]),
    "hardtanh": (lambda x: F.hardtanh(x, -0.5, 0.7) * x + F.relu6(x * 4), [(3, 5)]),
    "elu_selu": (lambda x: F.elu(x, 0.7) * x + F.selu(x), [(3, 5)]),
    "softplus": (lambda x: F.softplus(x, 2.0, 1.0) * x, [(3, 5)]),
    "logsigmoid": (lambda x: F.logsigmoid(x) * x, [(3, 5)]),
    "softmax": (lambda x: x.softmax(-1) * x, [(2, 3, 5)]),
    "softmax_dim0": (lambda x: x.softmax(0) * x, [(4, 3)]),
    "log_softmax": (lambda x: x.log_softmax(-1) * x, [(2, 3, 5)]),
    "layer_norm": (lambda x, w, b: F.layer_norm(x, (5,), w, b) * x, [(2, 3, 5), (5,), (5,)]),
    "layer_norm_2d": (lambda x, w: F.layer_norm(x, (3, 5), w) * x, [(2, 3, 5), (3, 5)]),
    "layer_norm_plain": (lambda x: F.layer_norm(x, (5,)) * x, [(4, 5)]),
    "cross_entropy": (lambda x: F.cross_entropy(x, mg.tensor([1, -100, 4]),
                                                label_smoothing=0.1) * x, [(3, 5)]),
    "cross_entropy_none": (lambda x: F.cross_entropy(x, mg.tensor([1, 2, 4]),
                                                     reduction="none") * x.sum(-1), [(3, 5)]),
    "getitem_slices": (lambda x: x[0] * x[1] + x[:, 1:].sum() * x[-1], [(3, 4)]),
    "getitem_repeated": (lambda x: x[mg.tensor([0, 2, 0, 0])] * x[1:, :2].sum(), [(3, 2)]),
    "getitem_mask_and_add": (lambda x: (x + x[0]) * x[x.detach() > 0].sum(), [(3, 4)]),
    "setitem_recorded": (lambda x, v: _put(x * x, (slice(None), mg.tensor([0, 2, 0])), v * v)
                         * x, [(2, 4), (1, 3)]),
    "write_through_views": (lambda x, v: _through_views(x * x, v) * x, [(2, 4), (2, 3)]),
    "embedding_tied": (lambda w: F.embedding(mg.tensor([[1, 1], [2, 0]]), w) @ w.T, [(3, 4)]),
    "sum_all": (lambda x: x.sum() * x, [(3, 4)]),
    "sum_dims": (lambda x: x.sum((0, 2), keepdim=True) * x.sum(1, keepdim=True) * x,
                 [(2, 3, 4)]),
    "var_all": (lambda x: x.var() * x, [(3, 4)]),
    "var_dims": (lambda x: x.var((0, 2), keepdim=True) * x, [(2, 3, 4)]),
    "std_all": (lambda x: x.std(correction=0) * x, [(3, 4)]),
    "std_dim": (lambda x: x.std(1) * x.sum(1), [(4, 5)]),
    "linear": (lambda x, w, b: F.linear(x, w, b) * F.linear(x, w, b), [(2, 3, 4), (5, 4), (5,)]),
    "linear_no_bias_1d": (lambda x, w: F.linear(x, w).exp(), [(4,), (3, 4)]),
    "reshape": (lambda x: x.reshape(4, 3).exp() * x.reshape(2, 6).sum(), [(2, 3, 2)]),
    "permute": (lambda x: x.permute(2, 0, 1).exp() * x.mT.sum(), [(2, 3, 4)]),
    "cat": (lambda x, y: mg.cat([x, y, x], 1).exp() * 2, [(2, 3), (2, 1)]),
    "stack": (lambda x, y: mg.stack([x, y, x], -1).exp().sum(-1) * x, [(2, 3), (2, 3)]),
    "unbind": (lambda x: x.unbind(1)[0] * x.unbind(1)[2].exp(), [(2, 3, 4)]),
    "prod": (lambda x: x.prod(1) * x.prod(0).sum(), [(3, 4)]),
    "prod_zeros": (lambda x: (x * _ZEROS).prod(1, keepdim=True) * x, [(3, 4)]),
    "cumprod": (lambda x: x.cumprod(1) * x, [(3, 4)]),
    "cumprod_zeros": (lambda x: (x * _ZEROS).cumprod(1) * x, [(3, 4)]),
    "lstm_cell": (lambda gates, c: lstm_cell(gates, c)[0] * lstm_cell(gates, c)[1].exp(),
                  [(3, 8), (3, 2)]),
    "lstm_cell_h": (lambda gates, c: lstm_cell(gates, c)[0] * c, [(3, 8), (3, 2)]),
    "lstm_cell_c": (lambda gates, c: lstm_cell(gates, c)[1] * c, [(3, 8), (3, 2)]),
    "gru_cell": (lambda gi, gh, h: gru_cell(gi, gh, h) * h.exp(), [(3, 6), (3, 6), (3, 2)]),
    # (the recurrent scans: their outputs weighted, each final state squared)
    "rnn_scan": (lambda gi, h, w, b: _scan("RNN_TANH", gi, (h,), w, b),
                 [(3, 2, 2), (2, 2), (2, 2), (2,)]),
    "rnn_scan_relu_reverse": (lambda gi, h, w: _scan("RNN_RELU", gi, (h,), w, reverse=True),
                              [(3, 2, 2), (2, 2), (2, 2)]),
    "gru_scan": (lambda gi, h, w, b: _scan("GRU", gi, (h,), w, b, reverse=True),
                 [(3, 2, 6), (2, 2), (6, 2), (6,)]),
    "lstm_scan": (lambda gi, h, c, w, b: _scan("LSTM", gi, (h, c), w, b),
                  [(3, 2, 8), (2, 2), (2, 2), (8, 2), (8,)]),
    "lstm_scan_reverse": (lambda gi, h, c, w: _scan("LSTM", gi, (h, c), w, reverse=True),
                          [(3, 2, 8), (2, 2), (2, 2), (8, 2)]),
    "lstm_layer": (lambda x, h, c, wi, w, bi, b: _layer(x, (h, c), wi, w, bi, b),
                   [(3, 2, 5), (2, 2), (2, 2), (8, 5), (8, 2), (8,), (8,)]),
    "lstm_layer_reverse_no_bias": (lambda x, h, c, wi, w: _layer(x, (h, c), wi, w,
                                                                 reverse=True),
                                   [(4, 3, 2), (3, 2), (3, 2), (8, 2), (8, 2)]),
    "lstm_layer_projected": (lambda x, h, c, wi, w, wr, b: _layer(x, (h, c), wi, w, b,
                                                                  reverse=True, w_hr=wr),
                             [(3, 2, 5), (2, 2), (2, 3), (12, 5), (12, 2), (2, 3), (12,)]),
    "huber": (lambda x: F.huber_loss(x, x.detach() * 0, reduction="none", delta=0.5) * x,
              [(3, 4)]),
    "smooth_l1": (lambda x: F.smooth_l1_loss(x * 3, x.detach() * 0, beta=0.7) * x, [(3, 4)]),
    "sdpa_causal": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True)
                    * q, [(2, 4, 3), (2, 4, 3), (2, 4, 3)]),
    "qkv_attention": (lambda x: F.qkv_attention(x, 2, is_causal=True) * x[..., :6],
                      [(2, 4, 18)]),
    "cdist": (lambda a, b: mg.cdist(a, b) * mg.cdist(a, b, 3.0) + mg.cdist(a, b, 1.0)
              + mg.cdist(a, b, float("inf")) + mg.cdist(a, b, 0.5) + mg.cdist(a, b, 0.0),
              [(2, 4, 3), (2, 5, 3)]),
    "cdist_coinciding": (lambda a: mg.cdist(a, a) * mg.cdist(a, a, 0.5) + mg.cdist(a, a, 3.0),
                         [(4, 2)]),
    "sdpa_mask": (lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, attn_mask=mg.tensor([[True, True, False, False]] * 2)),
        [(2, 2, 3), (2, 4, 3), (2, 4, 6)]),
    "conv2d": (lambda x, w, b: F.conv2d(x, w, b, stride=2, padding=1, groups=2) ** 2,
               [(2, 4, 5, 4), (4, 2, 3, 2), (4,)]),
    "conv2d_depthwise": (lambda x, w, b: F.conv2d(x, w, b, stride=(2, 1), padding=1,
                                                 groups=4) ** 2,
                         [(2, 4, 5, 4), (8, 1, 3, 2), (8,)]),
    "conv_transpose1d": (lambda x, w: F.conv_transpose1d(x, w, stride=2, output_padding=1) ** 2,
                         [(2, 2, 4), (2, 3, 3)]),
    "unfold_fold": (lambda x: F.fold(F.unfold(x, 2, padding=1) ** 2, (3, 4), 2, padding=1),
                    [(2, 2, 3, 4)]),
}


@pytest.mark.parametrize("name", list(CASES))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_fast_backward_matches_reference(name, dtype):
    fn, shapes = CASES[name]
    rng = np.random.default_rng(0)
    inputs = [mg.tensor(rng.standard_normal(s), dtype=dtype, requires_grad=True)
              for s in shapes]
    fast, ref = _both(fn, inputs)
    tol = 1e-12 if dtype == "float64" else 1e-5
    for f, r in zip(fast, ref):
        assert f.dtype == r.dtype
        np.testing.assert_allclose(f.numpy(), r.numpy(), rtol=tol, atol=tol)


def test_dropout_fast_matches_reference():
    x = mg.tensor(np.random.default_rng(2).standard_normal((4, 5)), dtype="float64",
                  requires_grad=True)

    def run(create_graph):
        mg.manual_seed(3)  # the same mask both times
        y = F.dropout(x, 0.4)
        return mg.grad((y * x).sum(), [x], create_graph=create_graph)[0]
    np.testing.assert_allclose(run(False).numpy(), run(True).numpy(), rtol=1e-12, atol=1e-12)


def test_sdpa_dropout_fast_matches_reference():
    rng = np.random.default_rng(1)
    q, k, v = (mg.tensor(rng.standard_normal((2, 4, 3)), dtype="float64", requires_grad=True)
               for _ in range(3))

    def run(create_graph):
        mg.manual_seed(7)  # the same dropout mask both times
        out = F.scaled_dot_product_attention(q, k, v, dropout_p=0.3)
        return mg.grad((out * out).sum(), [q, k, v], create_graph=create_graph)
    for f, r in zip(run(False), run(True)):
        np.testing.assert_allclose(f.numpy(), r.numpy(), rtol=1e-12, atol=1e-12)


def test_every_fast_path_is_covered():
    """A new backward_arrays must come with a case above."""
    import minigrad.ops  # noqa: F401  (registers every op)

    def subclasses(c):
        for s in c.__subclasses__():
            yield s
            yield from subclasses(s)
    fast = {c.__name__ for c in subclasses(Function)
            if "backward_arrays" in vars(c) or "scatter_backward" in vars(c)}
    covered = {"GetItem", "Dropout", "Gelu", "Softmax", "LogSoftmax", "LayerNorm", "CrossEntropy",
               "ScaledDotProductAttention", "QKVAttention", "Linear", "Sum", "Reshape",
               "Permute", "Cat", "Stack", "Prod", "CumProd", "LSTMCell", "LSTMOutput",
               "GRUCell", "RNNScan", "GRUScan", "LSTMScan",
               "LeakyRelu", "Hardtanh", "Elu", "Softplus", "LogSigmoid", "Var",
               "Huber", "Cdist", "IndexPut", "Put"}
    covered |= {"Conv", "ConvTranspose", "Unfold", "Fold"}           # ops/conv.py
    covered |= {"DepthwiseConv"}                                     # ops/conv_depthwise.py
    covered |= {"AvgPool"}          # test_pool.py::test_avg_pool_fast_backward_is_the_reference
    covered |= {"CTCLoss"}          # test_ctc_loss.py::test_fast_backward_matches_reference
    assert fast <= covered, f"fast paths without a test here: {fast - covered}"


@pytest.mark.parametrize("block", [1, 7, 64])
def test_cache_blocking_gives_the_same_numbers(block, monkeypatch):
    """The CPU runs GELU and attention's softmax piece by piece (ops/blocks.py); any piece
    size must give exactly what the whole arrays give."""
    from minigrad import backend
    cpu = backend.get("cpu")
    rng = np.random.default_rng(5)

    def run():
        x = mg.tensor(rng.standard_normal((3, 5, 8)), requires_grad=True)
        q, k, v = (mg.tensor(rng.standard_normal((2, 3, 6, 4)), requires_grad=True)
                   for _ in range(3))
        mg.manual_seed(11)
        y = F.gelu(x, approximate="tanh")
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.2)
        (y.sum() + (a * a).sum()).backward()
        return [t.numpy() for t in (y, a, x.grad, q.grad, k.grad, v.grad)]
    monkeypatch.setattr(cpu, "cache_block", None)
    rng = np.random.default_rng(5)
    whole = run()
    monkeypatch.setattr(cpu, "cache_block", block)
    rng = np.random.default_rng(5)
    pieces = run()
    for w, p in zip(whole, pieces):
        np.testing.assert_array_equal(w, p)


@pytest.mark.parametrize("block", [1, 7, 64])
@pytest.mark.parametrize("affine", [0, 1, 2])
def test_layer_norm_in_pieces_matches_whole(block, affine, monkeypatch):
    """Layer norm runs on blocks of rows on the CPU; its weight and bias gradients are then
    summed piece by piece, so they agree with the whole-array run to rounding."""
    from minigrad import backend
    cpu = backend.get("cpu")

    def run():
        rng = np.random.default_rng(6)
        x = mg.tensor(rng.standard_normal((3, 4, 2, 5)), dtype="float64", requires_grad=True)
        w = mg.tensor(rng.standard_normal((2, 5)), dtype="float64", requires_grad=True)
        b = mg.tensor(rng.standard_normal((2, 5)), dtype="float64", requires_grad=True)
        params = [w, b][:affine]
        y = F.layer_norm(x, (2, 5), *params)
        (y * y.detach().exp()).sum().backward()
        return [t.numpy() for t in [y, x.grad] + [p.grad for p in params]]
    monkeypatch.setattr(cpu, "cache_block", None)
    whole = run()
    monkeypatch.setattr(cpu, "cache_block", block)
    for w_, p_ in zip(whole, run()):
        np.testing.assert_allclose(p_, w_, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("block", [1, 7])
def test_fused_activations_in_pieces_match_whole(block, monkeypatch):
    """The fused activations run their chains piece by piece on the CPU; any piece size
    gives exactly the whole arrays' numbers, for a transposed input and a 0-d one too."""
    from minigrad import backend
    cpu = backend.get("cpu")
    fns = [lambda x: F.leaky_relu(x, 0.2), lambda x: F.hardtanh(x, -0.5, 0.7), F.elu, F.selu,
           lambda x: F.softplus(x, 2.0, 1.0), F.logsigmoid]

    def run():
        rng = np.random.default_rng(7)
        out = []
        for shape in [(5, 4, 3), ()]:
            x = mg.tensor(rng.standard_normal(shape) * 3, requires_grad=True)
            xt = x.permute(*reversed(range(x.ndim)))                # not C-contiguous
            ys = [fn(xt) for fn in fns]
            sum((y * y).sum() for y in ys).backward()
            out += [y.numpy() for y in ys] + [x.grad.numpy()]
        return out
    monkeypatch.setattr(cpu, "cache_block", None)
    whole = run()
    monkeypatch.setattr(cpu, "cache_block", block)
    for w, p in zip(whole, run()):
        np.testing.assert_array_equal(w, p)
