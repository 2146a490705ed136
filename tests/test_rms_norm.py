"""RMSNorm (F.rms_norm, nn.RMSNorm) as torch's: x / √(mean(x²) + eps) · weight over the
trailing dims, eps the dtype's machine epsilon by default; gradients checked in float64."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn

RNG = np.random.default_rng(0)


@pytest.mark.parametrize("shape, normalized", [((4, 6), (6,)), ((2, 3, 4), (3, 4)),
                                               ((5,), 5)])
@pytest.mark.parametrize("affine, eps", [(True, None), (False, None), (True, 1e-3)])
def test_as_torch(shape, normalized, affine, eps, device, dtype):
    torch = pytest.importorskip("torch")
    x = RNG.normal(size=shape).astype(dtype)
    wshape = (normalized,) if isinstance(normalized, int) else normalized
    w = RNG.normal(size=wshape).astype(dtype) if affine else None
    mx = mg.tensor(x, device=device, requires_grad=True)
    mw = mg.tensor(w, device=device, requires_grad=True) if affine else None
    tx = torch.tensor(x, requires_grad=True)
    tw = torch.tensor(w, requires_grad=True) if affine else None
    got = F.rms_norm(mx, normalized, mw, eps)
    want = torch.nn.functional.rms_norm(tx, wshape, tw, eps)
    tol = 1e-5 if dtype == "float32" else 1e-12
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=tol, atol=tol)
    g = RNG.normal(size=shape).astype(dtype)
    got.backward(mg.tensor(g, device=device))
    want.backward(torch.tensor(g))
    np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), rtol=tol * 10, atol=tol)
    if affine:
        np.testing.assert_allclose(mw.grad.numpy(), tw.grad.numpy(), rtol=tol * 10, atol=tol)


def test_gradcheck_and_the_closed_form():
    x = mg.tensor(RNG.normal(size=(3, 5)), dtype=mg.float64, requires_grad=True)
    w = mg.tensor(RNG.normal(size=5), dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(lambda x, w: F.rms_norm(x, 5, w), (x, w))
    assert mg.gradgradcheck(lambda x, w: F.rms_norm(x, 5, w, 1e-2), (x, w))
    a = x.numpy()
    want = a / np.sqrt((a * a).mean(-1, keepdims=True) + np.finfo(np.float64).eps) * w.numpy()
    np.testing.assert_allclose(F.rms_norm(x, (5,), w).numpy(), want, rtol=1e-14)
    y = F.rms_norm(x, 5).numpy()                     # unit root mean square per row
    np.testing.assert_allclose(np.sqrt((y * y).mean(-1)), 1.0, rtol=1e-12)


def test_float16_is_computed_in_float32_as_torch():
    """x² overflows float16 from |x| > 256 (the output was all zeros), and float16's
    epsilon (~1e-3) swamps small activations: PyTorch computes in float32 with float32's
    epsilon and returns float16; so do we, gradients included."""
    x = mg.tensor(np.array([[300.0, -200.0, 250.0, 100.0], [1e-3, 2e-3, -1e-3, 5e-4]],
                           np.float16), requires_grad=True)
    y = nn.RMSNorm(4).half()(x)
    ref = x.numpy().astype(np.float32)
    want = ref / np.sqrt((ref * ref).mean(1, keepdims=True) + np.finfo(np.float32).eps)
    assert y.dtype == mg.float16
    np.testing.assert_allclose(y.numpy().astype(np.float32), want, rtol=2e-3)
    y.sum().backward()
    assert x.grad.dtype == mg.float16 and np.isfinite(x.grad.numpy()).all()


def test_module(device):
    norm = mg.nn.RMSNorm(8, device=device)
    assert list(norm.state_dict()) == ["weight"] and norm.weight.tolist() == [1.0] * 8
    assert "elementwise_affine=True" in repr(norm)
    x = mg.randn(2, 3, 8, device=device)
    np.testing.assert_allclose(norm(x).numpy(), F.rms_norm(x, 8).numpy(), rtol=1e-6)
    assert list(mg.nn.RMSNorm((3, 8), elementwise_affine=False).state_dict()) == []


def test_on_the_gpu_stand_in(spy):
    x = mg.randn(2, 4, device=spy, requires_grad=True)
    F.rms_norm(x, 4, mg.ones(4, device=spy)).sum().backward()
    assert x.grad.device == spy


@pytest.mark.parametrize("call, error, words", [
    (lambda: F.rms_norm(mg.ones(2, 3), (4,)), ValueError, ["rms_norm", "(4,)", "(2, 3)"]),
    (lambda: F.rms_norm(mg.ones(2, 3), 3, mg.ones(4)), ValueError, ["weight", "(4,)"]),
    (lambda: F.rms_norm(mg.ones(2, 3, dtype=mg.int64), 3), TypeError, ["floating-point"]),
    (lambda: F.rms_norm(mg.ones(2, 3), 3, eps=-1.0), ValueError, ["eps must be >= 0"]),
    (lambda: mg.nn.RMSNorm(-1), TypeError, ["RMSNorm", "normalized_shape[0]"]),
])
def test_bad_input(call, error, words):
    with pytest.raises(error) as e:
        call()
    for w in words:
        assert w in str(e.value), (w, str(e.value))
