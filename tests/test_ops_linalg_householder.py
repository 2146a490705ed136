"""linalg.householder_product (ops/linalg_householder.py) against torch: values and
gradients on tall, square and batched shapes, float64 gradcheck and gradgradcheck, the
orgqr spellings, and torch's refusals."""
import numpy as np
import pytest

import minigrad as mg

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None

rng = np.random.default_rng(0)


@pytest.mark.parametrize("shape,k", [((5, 3), 3), ((4, 4), 4), ((4, 4), 2), ((2, 3, 6, 4), 3),
                                     ((5, 3), 0)])
def test_householder_product_values_and_grads_vs_torch(torch, shape, k):
    a, tau = rng.standard_normal(shape), rng.standard_normal(shape[:-2] + (k,))
    A, T = mg.tensor(a, requires_grad=True), mg.tensor(tau, requires_grad=True)
    tA, tT = torch.tensor(a, requires_grad=True), torch.tensor(tau, requires_grad=True)
    q, tq = mg.linalg.householder_product(A, T), torch.linalg.householder_product(tA, tT)
    np.testing.assert_allclose(q.numpy(), tq.detach().numpy(), atol=1e-12)
    w = rng.standard_normal(q.shape)
    (q * mg.tensor(w)).sum().backward()
    (tq * torch.tensor(w)).sum().backward()
    for g, tg in ((A.grad, tA.grad), (T.grad, tT.grad)):      # (k = 0: torch's None)
        np.testing.assert_allclose(g.numpy(), 0 if tg is None else tg.numpy(), atol=1e-12)


def test_householder_product_of_geqrf_is_q(torch):
    """The reflectors of a QR (torch.geqrf's) give its Q, as orgqr and the method."""
    a = rng.standard_normal((6, 4))
    h, tau = torch.geqrf(torch.tensor(a))
    q = mg.orgqr(mg.tensor(h.numpy()), mg.tensor(tau.numpy()))
    np.testing.assert_allclose(q.numpy(), np.linalg.qr(a)[0] * np.sign(
        np.diag(np.linalg.qr(a)[1]) * np.diag(h.numpy())), atol=1e-12)
    assert np.array_equal(mg.tensor(h.numpy()).orgqr(mg.tensor(tau.numpy())).numpy(),
                          q.numpy())
    assert q.dtype == mg.float64 and mg.linalg.householder_product(
        mg.tensor(a, dtype="float32"), mg.zeros(2)).dtype == mg.float32


def test_householder_product_gradcheck_and_gradgradcheck():
    A = mg.tensor(rng.standard_normal((2, 5, 3)), requires_grad=True)
    T = mg.tensor(rng.standard_normal((2, 2)), requires_grad=True)
    assert mg.gradcheck(mg.linalg.householder_product, (A, T))
    assert mg.gradgradcheck(mg.linalg.householder_product, (A, T))


@pytest.mark.parametrize("a,tau,error,match", [
    ((3, 5), (2,), ValueError, "at least as many rows"),
    ((5, 3), (4,), ValueError, "only 3 columns"),
    ((5,), (2,), ValueError, "at least 2 dims"),
    ((2, 5, 3), (2,), ValueError, "one dim less"),
    ((2, 5, 3), (1, 2), ValueError, "batch dims"),
])
def test_householder_product_refuses_bad_shapes_as_torch(torch, a, tau, error, match):
    with pytest.raises(RuntimeError):
        torch.linalg.householder_product(torch.zeros(a), torch.zeros(tau))
    with pytest.raises(error, match=match):
        mg.linalg.householder_product(mg.zeros(*a), mg.zeros(*tau))


def test_householder_product_refuses_other_dtypes():
    with pytest.raises(TypeError, match="float32 or float64"):
        mg.linalg.householder_product(mg.zeros(5, 3, dtype=mg.int64),
                                      mg.zeros(2, dtype=mg.int64))
    with pytest.raises(TypeError, match="does not match"):
        mg.linalg.householder_product(mg.zeros(5, 3), mg.zeros(2, dtype=mg.float64))
