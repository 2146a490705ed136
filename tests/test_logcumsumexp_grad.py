"""logcumsumexp's backward, dx_j = Σ_{i≥j} g_i exp(x_j - y_i), is linear in g: its own
derivatives (in g, x and through y) at g = 0 as elsewhere, with -inf inputs, along any
dim, to third order, and stable in float32 on large inputs."""
import numpy as np
import pytest

import minigrad as mg

NEG_INF = float("-inf")
RNG = np.random.default_rng(3)
X = RNG.standard_normal((3, 4))
G = np.array([[0.0, 1.0, 0.0, -2.0], [0.0] * 4, [1.0, 0.0, 0.5, 0.0]])   # zeros in g


def backward_of(dim):
    """(x, g) -> dx, recorded: the backward as a function to differentiate."""
    def dx(x, g):
        return mg.autograd.grad(x.logcumsumexp(dim), x, g, create_graph=True)[0]
    return dx


def _leaves(*arrays, dtype="float64"):
    return [mg.tensor(a, dtype=dtype, requires_grad=True) for a in arrays]


@pytest.mark.parametrize("dim", [0, 1, -1])
def test_the_backward_is_differentiable_where_the_gradient_is_zero(dim):
    assert mg.gradcheck(backward_of(dim), _leaves(X, G))


def test_its_derivative_in_g_is_the_same_at_zero_as_elsewhere():
    """Σ_j dx_j = Σ_i g_i Σ_{j≤i} softmax(x_{≤i})_j = Σ_i g_i: its gradient in g is all ones,
    whatever g, 0 included."""
    for g in (G, np.zeros_like(G), RNG.standard_normal(G.shape)):
        x, g = _leaves(X, g)
        dg, = mg.autograd.grad(backward_of(1)(x, g).sum(), g)
        np.testing.assert_allclose(dg.numpy(), np.ones_like(G), rtol=1e-12)


def test_third_order():
    assert mg.gradgradcheck(backward_of(1), _leaves(X, G))


def test_minus_infinity_inputs():
    """-inf after a finite value: its weight exp(-inf - y) is 0, as a very negative x's."""
    x = X.copy()
    x[:, 1] = x[0, 3] = NEG_INF
    xt = mg.tensor(x, requires_grad=True)              # (gradcheck perturbs finite x only)
    assert mg.gradcheck(lambda g: backward_of(1)(xt, g), _leaves(G))
    w = RNG.standard_normal(G.shape)
    got = []
    for low in (NEG_INF, -1e3):
        xt, g = _leaves(np.where(x == NEG_INF, low, x), G)
        got.append(mg.autograd.grad((backward_of(1)(xt, g) * mg.tensor(w)).sum(), [xt, g]))
    for inf_case, finite_case in zip(*got):
        assert np.isfinite(inf_case.numpy()).all()
        np.testing.assert_allclose(inf_case.numpy(), finite_case.numpy(), rtol=1e-12)


def test_float32_on_large_inputs_agrees_with_float64():
    """Values ~1e3: exp of them overflows, the log-space sums do not."""
    x, g = 1e3 * RNG.standard_normal((2, 6)), RNG.standard_normal((2, 6))
    g[0, 2] = g[1, :3] = 0.0
    w = RNG.standard_normal((2, 6))
    grads = {}
    for dt in ("float32", "float64"):
        xt, gt = _leaves(x, g, dtype=dt)
        dx = backward_of(1)(xt, gt)
        grads[dt] = [dx, *mg.autograd.grad((dx * mg.tensor(w, dtype=dt)).sum(), [xt, gt])]
    for low, high in zip(grads["float32"], grads["float64"]):
        assert low.dtype == mg.float32 and np.isfinite(low.numpy()).all()
        np.testing.assert_allclose(low.numpy(), high.numpy(), rtol=1e-4, atol=1e-5)


def test_second_derivatives_as_torch_where_g_is_not_zero(torch):
    """Away from g = 0 PyTorch's formula is right (at 0 it gives NaN or 0 in g)."""
    g = RNG.standard_normal(G.shape)
    w = RNG.standard_normal(G.shape)
    x, gm = _leaves(X, g)
    mine = mg.autograd.grad((backward_of(0)(x, gm) * mg.tensor(w)).sum(), [x, gm])
    xt, gt = (torch.tensor(a, requires_grad=True) for a in (X, g))
    dx, = torch.autograd.grad(xt.logcumsumexp(0), xt, gt, create_graph=True)
    theirs = torch.autograd.grad((dx * torch.tensor(w)).sum(), [xt, gt])
    for m, t in zip(mine, theirs):
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-10, atol=1e-12)
