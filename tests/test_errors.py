"""Bad input gives a clear error: each test asserts the message names what was wrong (the op,
the shapes / dtypes / devices involved) and, where there is one, what would be valid."""
import importlib.util
import re

import numpy as np
import pytest
from scipy.special import erf

import minigrad as mg
import minigrad.functional as F
from minigrad import backend, nn


@pytest.fixture
def fake_device():
    """A second device on the CPU (NumPy arrays, its own name), to test device mixing."""
    backend.register_device(
        "fake", lambda: backend.Backend("fake", np, erf, np.add.at, np.copy, np.array))
    yield "fake"
    backend._FACTORIES.pop("fake", None)
    backend._BACKENDS.pop("fake", None)


def _message(exc_type, fn):
    with pytest.raises(exc_type) as info:
        fn()
    return str(info.value)


def test_shape_mismatch_names_op_and_both_shapes():
    msg = _message(ValueError, lambda: mg.ones(2, 3) + mg.ones(4))
    assert "Add" in msg and "(2, 3)" in msg and "(4,)" in msg
    msg = _message(ValueError, lambda: mg.ones(2, 3) @ mg.ones(4, 5))
    assert "matmul" in msg and "(2, 3)" in msg and "(4, 5)" in msg


def test_backward_on_non_scalar_needs_a_gradient():
    y = mg.ones(2, 3, requires_grad=True) * 2
    msg = _message(RuntimeError, y.backward)
    assert "scalar" in msg and "(2, 3)" in msg
    msg = _message(RuntimeError, lambda: y.backward(mg.ones(3)))
    assert "(3,)" in msg and "(2, 3)" in msg


def test_second_backward_through_a_freed_graph():
    y = (mg.ones(2, requires_grad=True).exp()).sum()
    y.backward()
    msg = _message(RuntimeError, y.backward)
    assert "second time" in msg and "retain_graph=True" in msg


def test_requires_grad_on_an_integer_tensor():
    msg = _message(RuntimeError, lambda: mg.tensor([1, 2], requires_grad=True))
    assert "floating" in msg and "int64" in msg
    msg = _message(RuntimeError, lambda: mg.arange(3).requires_grad_())
    assert "int64" in msg


def test_mixed_devices(fake_device):
    x = mg.ones(2, device="cpu")
    y = mg.ones(2, device=fake_device)
    assert y.device == "fake"
    msg = _message(RuntimeError, lambda: x + y)
    assert "Add" in msg and "cpu" in msg and "fake" in msg and ".to(" in msg
    msg = _message(RuntimeError, lambda: x[mg.tensor([0], device=fake_device)])
    assert "cpu" in msg and "fake" in msg
    assert (x + y.to("cpu")).device == "cpu"                 # the fix the message suggests


def test_unknown_device():
    msg = _message(ValueError, lambda: mg.zeros(2, device="tpu"))
    assert "'tpu'" in msg and "cpu" in msg and "cuda" in msg


def test_index_out_of_range_names_the_shape():
    msg = _message(IndexError, lambda: mg.ones(3, 4)[5])
    assert "5" in msg and "(3, 4)" in msg
    msg = _message(IndexError, lambda: mg.ones(3, 4)[:, [0, 9]])
    assert "(3, 4)" in msg
    msg = _message(IndexError, lambda: F.embedding(mg.tensor([0, 7]), mg.ones(5, 2)))
    assert "7" in msg and "5 rows" in msg


def test_nan_in_gradcheck_inputs():
    x = mg.tensor([1.0, float("nan")], dtype=mg.float64, requires_grad=True)
    msg = _message(ValueError, lambda: mg.gradcheck(lambda t: t * 2, [x]))
    assert "NaN" in msg and "input 0" in msg


class _SquareWrongAtOneElement(mg.autograd.Function):
    """x², whose backward adds 1 to the gradient of element (1, 0) only."""
    def forward(self, a): return a * a

    def backward(self, g):
        x = self.inputs[0]
        bump = np.zeros(x.shape)
        bump[1, 0] = 1.0
        return g * x * 2 + self.const(x.backend.from_numpy(bump))


def test_gradcheck_names_the_worst_element():
    x = mg.tensor([[1.0, 2.0], [3.0, -0.5]], dtype=mg.float64, requires_grad=True)
    msg = _message(mg.GradcheckError,
                   lambda: mg.gradcheck(lambda t: _SquareWrongAtOneElement.apply(t).sum(), [x]))
    m = re.search(r"at \(1, 0\): analytic ([-\d.e]+), numeric ([-\d.e]+)", msg)
    assert m, msg                                  # the place, then both values
    analytic, numeric = float(m[1]), float(m[2])
    assert analytic == pytest.approx(numeric + 1.0, rel=1e-6)
    assert "input 0" in msg and "(2, 2)" in msg


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
def test_cuda_without_cupy_names_the_extra():
    msg = _message(RuntimeError, lambda: mg.zeros(2, device="cuda"))
    assert "CuPy" in msg and "cuda12" in msg and "pip install" in msg
    assert not mg.cuda_is_available()
    assert not mg.cuda.is_available() and mg.cuda.device_count() == 0   # torch.cuda's names
    msg = _message(RuntimeError, mg.cuda.synchronize)
    assert "CuPy" in msg and "pip install" in msg


@pytest.mark.parametrize("call,exc,words", [
    (lambda: mg.ones(2, 3).reshape(4, 2), ValueError, ["reshape", "(2, 3)", "(4, 2)"]),
    (lambda: mg.ones(2, 3).permute(0, 0), ValueError, ["permute", "(2, 3)"]),
    (lambda: mg.ones(2, 3).sum(dim=2), IndexError, ["sum", "dim 2", "-2..1"]),
    (lambda: mg.ones(2, 1).expand(3, 4), ValueError, ["expand", "(2, 1)", "(3, 4)"]),
    (lambda: mg.cat([mg.ones(2, 3), mg.ones(2, 4)]), ValueError, ["cat", "(2, 3)", "(2, 4)"]),
    (lambda: mg.stack([mg.ones(2), mg.ones(3)]), ValueError, ["stack", "(2,)", "(3,)"]),
    (lambda: mg.ones(3).masked_fill(np.ones(4, bool), 0.0), ValueError,
     ["masked_fill", "(4,)", "(3,)"]),
    (lambda: mg.ones(3).masked_fill(np.ones((2, 3), bool), 0.0), ValueError,
     ["masked_fill", "(2, 3)", "(3,)"]),
    (lambda: mg.where(np.ones(3), mg.ones(3), 0.0), TypeError, ["where", "boolean", "float64"]),
    (lambda: F.cross_entropy(mg.ones(2, 3, 4), np.zeros(2, int)), ValueError,
     ["cross_entropy", "(2, 3, 4)", "(N, d1, ...)", "class dim second"]),
    (lambda: F.cross_entropy(mg.ones(2, 3), np.array([0, 3])), IndexError,
     ["cross_entropy", "3", "0..2"]),
    (lambda: F.layer_norm(mg.ones(2, 3), (4,)), ValueError, ["layer_norm", "(4,)", "(2, 3)"]),
    (lambda: F.scaled_dot_product_attention(mg.ones(2, 3), mg.ones(2, 4), mg.ones(2, 4)),
     ValueError, ["scaled_dot_product_attention", "(2, 3)", "(2, 4)"]),
    (lambda: F.dropout(mg.ones(2), 1.5), ValueError, ["dropout", "1.5"]),
    (lambda: F.gelu(mg.ones(2), approximate="fast"), ValueError, ["gelu", "'fast'", "'tanh'"]),
    (lambda: mg.ones(2, dtype="float128"), TypeError, ["float128", "float32"]),
    (lambda: mg.grad(mg.ones(2, requires_grad=True).sum(), mg.ones(2)), RuntimeError,
     ["does not require grad"]),
    (lambda: mg.ones(2).sum().backward(), RuntimeError, ["does not require grad", "no_grad"]),
    (lambda: mg.ones(2, 2).item(), ValueError, ["item", "(2, 2)"]),
])
def test_more_errors_name_what_was_wrong(call, exc, words):
    msg = _message(exc, call)
    for w in words:
        assert w in msg, f"{w!r} not in: {msg}"


def test_an_index_mask_or_target_on_another_device_names_the_op(fake_device):
    def on_fake(a):
        return mg.tensor(a, device=fake_device)
    x, w, logits = mg.ones(3, 2), mg.ones(5, 2), mg.ones(2, 3)
    q = mg.ones(1, 2, 2)
    mask = np.ones((2, 2), bool)

    def setitem():
        with mg.no_grad():
            x[on_fake([0])] = 0.0
    for call, words in [
        (lambda: x[on_fake([0])], "getitem: index on fake, tensor on cpu"),
        (setitem, "setitem: index on fake, tensor on cpu"),
        (lambda: F.embedding(on_fake([0]), w), "embedding: indices on fake, tensor on cpu"),
        (lambda: F.cross_entropy(logits, on_fake([0, 1])),
         "cross_entropy: target on fake, tensor on cpu"),
        (lambda: F.scaled_dot_product_attention(q, q, q, attn_mask=on_fake(mask)),
         "scaled_dot_product_attention: attn_mask on fake, tensor on cpu"),
        (lambda: F.attention_with_weights(q, q, q, attn_mask=on_fake(mask)),
         "attention_with_weights: attn_mask on fake, tensor on cpu"),
    ]:
        msg = _message(RuntimeError, call)
        assert words in msg and ".to('cpu')" in msg, msg


def test_embedding_negative_index_names_it():
    msg = _message(IndexError, lambda: F.embedding(mg.tensor([2, -1, 9]), mg.ones(5, 2)))
    assert "index -1" in msg and "5 rows" in msg and "0..4" in msg


@pytest.mark.parametrize("call,exc,words", [
    (lambda: mg.ones(3).expand(-1, 3), ValueError, ["expand", "-1", "leading dim 0", "(3,)"]),
    (lambda: F.mse_loss(mg.ones(3), mg.zeros(3), reduction="avg"), ValueError,
     ["mse_loss", "'avg'", "'mean', 'sum' or 'none'"]),
    (lambda: nn.MSELoss(reduction="avg"), ValueError, ["MSELoss", "'avg'", "'none'"]),
    (lambda: nn.CrossEntropyLoss(reduction="avg"), ValueError, ["CrossEntropyLoss", "'avg'"]),
    (lambda: mg.ones(6).chunk(0), ValueError, ["chunk", "positive integer", "0"]),
    (lambda: mg.arange(0, 1, 0), ValueError, ["arange", "step", "nonzero"]),
    (lambda: mg.cat([mg.tensor(1.0), mg.tensor(2.0)]), ValueError,
     ["cat", "position 0", "0-d", "mg.stack"]),
    (lambda: nn.Linear(3, 2)(mg.tensor(1.0)), ValueError, ["Linear(3, 2)", "()", "last dim 3"]),
    (lambda: nn.Linear(3.5, 2), TypeError,
     ["Linear", "in_features", "non-negative integer", "3.5"]),
    (lambda: nn.Embedding(-1, 3), TypeError, ["Embedding", "num_embeddings", "-1"]),
    (lambda: nn.LayerNorm(-2), TypeError, ["LayerNorm", "normalized_shape[0]", "-2"]),
    (lambda: mg.zeros(3.5), TypeError, ["integers", "3.5"]),
    (lambda: F.layer_norm(mg.tensor([[1, 2]]), (2,)), TypeError,
     ["layer_norm", "floating", "int64", ".float()"]),
    (lambda: mg.tensor([1, 2]).softmax(-1), TypeError, ["softmax", "floating", "int64"]),
    (lambda: mg.tensor([1, 2]).log_softmax(-1), TypeError, ["log_softmax", "floating"]),
    (lambda: mg.ones(3).sum(1.0), TypeError, ["sum", "dim", "int or a tuple of ints", "1.0"]),
    (lambda: mg.ones(6).split([5, -1]), ValueError, ["split", "non-negative", "[5, -1]"]),
    (lambda: mg.ones(6).split(2.5), TypeError, ["split", "int or a list", "2.5"]),
    (lambda: mg.zeros(0, 3).reshape(-1, 0), ValueError, ["reshape", "(0, 3)", "(-1, 0)"]),
    (lambda: mg.zeros(0, 3).max(0), ValueError, ["max", "dim 0", "size 0"]),
    (lambda: mg.zeros(0, 3).min(), ValueError, ["min", "empty", "(0, 3)"]),
])
def test_errors_found_in_review_name_what_was_wrong(call, exc, words):
    msg = _message(exc, call)
    for w in words:
        assert w in msg, f"{w!r} not in: {msg}"


def test_setitem_with_a_value_of_the_wrong_shape_names_both_shapes():
    t = mg.zeros(3)
    msg = _message(ValueError, lambda: t.__setitem__(0, mg.tensor([1.0, 2.0])))
    assert "setitem" in msg and "(2,)" in msg and "part of shape ()" in msg and "(3,)" in msg
    assert t._version == 0 and t.tolist() == [0.0, 0.0, 0.0]        # nothing written


def test_a_buffer_takes_only_a_tensor_or_none():
    m = nn.Module()
    m.register_buffer("running", mg.zeros(2))
    msg = _message(TypeError, lambda: setattr(m, "running", 3))
    assert "buffer 'running'" in msg and "int" in msg and "Tensor or None" in msg


def test_np_asarray_of_a_tensor_on_another_device_says_to_copy_it_first(fake_device):
    msg = _message(TypeError, lambda: np.asarray(mg.ones(2, device=fake_device)))
    assert "'fake'" in msg and ".cpu() or .numpy()" in msg


def test_matrix_products_refuse_mixed_float_dtypes():
    """float32 @ float64 would silently compute in float64; PyTorch refuses it too."""
    a, b = mg.ones(2, 3), mg.ones(3, 2, dtype=mg.float64)
    with pytest.raises(TypeError, match="matmul: operands have dtypes float32 and float64"):
        a @ b
    with pytest.raises(TypeError, match="linear: operands have dtypes float32 and float64"):
        F.linear(a, b.T)
    with pytest.raises(TypeError, match="linear: operands have dtypes float32 and float64"):
        F.linear(a, mg.ones(2, 3), mg.zeros(2, dtype=mg.float64))
    assert (a + b.T).dtype == mg.float64                   # elementwise ops promote, as torch


def test_broadcast_failures_say_what_would_broadcast():
    with pytest.raises(ValueError, match=r"Add: .*\(2, 3\), \(4,\); broadcasting needs each "
                                         r"dim, counted from the last, to be equal or 1"):
        mg.ones(2, 3) + mg.ones(4)
