"""Dropout: statistics (mean preserved, zero fraction ≈ p), identity when not training,
reproducible under mg.manual_seed, and a gradient that is the same mask."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F


@pytest.mark.parametrize("p", [0.1, 0.5, 0.8])
def test_statistics(p, device, dtype):
    mg.manual_seed(0)
    x = mg.ones(200_000, dtype=dtype, device=device)
    y = F.dropout(x, p).numpy()
    assert y.dtype == np.dtype(dtype)
    assert abs((y == 0).mean() - p) < 0.01
    assert abs(y.mean() - 1.0) < 0.02                      # 1/(1-p) scaling keeps the mean
    np.testing.assert_allclose(np.unique(y), [0.0, 1 / (1 - p)], rtol=1e-6)


def test_identity_when_not_training(device):
    x = mg.randn(3, 4, device=device, requires_grad=True)
    y = F.dropout(x, 0.5, training=False)
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), 1.0)
    assert F.dropout(x, 0.0) is x or np.array_equal(F.dropout(x, 0.0).numpy(), x.numpy())
    np.testing.assert_array_equal(F.dropout(x, 1.0).numpy(), 0.0)


def test_reproducible_under_a_seed(device):
    x = mg.ones(4, 50, device=device)
    mg.manual_seed(123)
    a = F.dropout(x, 0.5).numpy()
    b = F.dropout(x, 0.5).numpy()
    mg.manual_seed(123)
    np.testing.assert_array_equal(F.dropout(x, 0.5).numpy(), a)
    np.testing.assert_array_equal(F.dropout(x, 0.5).numpy(), b)
    assert not np.array_equal(a, b)                         # the stream moves on


def test_gradient_is_the_same_mask(device):
    mg.manual_seed(1)
    x = mg.randn(5, 6, device=device, requires_grad=True)
    y = F.dropout(x, 0.3)
    g = np.random.default_rng(0).standard_normal((5, 6)).astype(np.float32)
    y.backward(mg.tensor(g, device=device))
    kept = y.numpy() != 0
    np.testing.assert_allclose(x.grad.numpy(), np.where(kept, g / 0.7, 0.0), rtol=1e-6)


def test_gradcheck_with_a_fixed_seed(device):
    def fn(x):
        mg.manual_seed(3)
        return F.dropout(x, 0.4) * x                       # * x: a nonzero second derivative
    x = mg.randn(3, 4, dtype=mg.float64, device=device, requires_grad=True)
    assert mg.gradcheck(fn, [x])
    assert mg.gradgradcheck(fn, [x])


@pytest.mark.parametrize("device_name", ["cpu", "spy"])
@pytest.mark.parametrize("p", [1e-6, 0.2, 0.999999])
def test_keep_mask_probability_and_shapes(device_name, p):
    """The backend's mask keeps each element with probability 1 - p, from raw 32-bit draws
    on the CPU and from floats elsewhere (the spy device), for any size, odd ones too."""
    import spy_backend
    from minigrad import backend
    if device_name == "cpu":
        b, host = backend.get("cpu"), np.asarray
    else:
        b, host = spy_backend.make_backend(), spy_backend.unwrap
    n = 1_000_001
    keep = host(b.keep_mask((n,), p))
    assert keep.shape == (n,) and keep.dtype == bool
    sigma = (p * (1 - p) / n) ** 0.5
    assert abs(1 - keep.mean() - p) < 6 * sigma + 2e-6
    out = b.xp.zeros((3, 5), dtype=bool)
    b.keep_mask((3, 5), 0.0, out=out)                      # p = 0 keeps everything
    assert host(out).all()


@pytest.mark.parametrize("name", ["dropout", "dropout1d", "dropout2d", "dropout3d",
                                  "alpha_dropout", "feature_alpha_dropout"])
def test_p_may_be_a_one_element_tensor_as_torch(name):
    # torch reads p=torch.tensor(0.5) as 0.5; each drop must see the number, not the tensor
    x = mg.ones(4, 3, 2) if name == "dropout1d" else mg.ones(4, 3, 2, 2)
    mg.manual_seed(0)
    ours = getattr(F, name)(x, mg.tensor(0.5), True).numpy()
    mg.manual_seed(0)
    np.testing.assert_array_equal(ours, getattr(F, name)(x, 0.5, True).numpy())
