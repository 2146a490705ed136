"""mg.autograd.forward_ad (forward_ad.py): tangents against torch.autograd.forward_ad and
against finite differences, and the level's rules (duals, unrelated tensors, exit, errors,
no_grad)."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.autograd.forward_ad as fwAD
import minigrad.nn.functional as F

RNG = np.random.default_rng(0)
X, V = RNG.standard_normal((3, 4)), RNG.standard_normal((3, 4))
W, B = RNG.standard_normal((4, 5)), RNG.standard_normal(5)
W2 = RNG.standard_normal((5, 2))


def compositions(lib, nnf):
    """name -> f(x) in minigrad's or torch's spelling (lib, its functional module)."""
    t = (lambda a: mg.tensor(a)) if lib is mg else (lambda a: lib.tensor(a))
    w, b, w2 = t(W), t(B), t(W2)
    return {
        "elementwise": lambda x: (x.sin() * x.exp() + x ** 2 / (1 + x.abs())).tanh(),
        "matmul": lambda x: x @ w @ w.T,
        "softmax": lambda x: nnf.softmax(x * 3, dim=-1),
        "layer_norm": lambda x: nnf.layer_norm(x, (4,)) * x,
        "mlp": lambda x: nnf.gelu(x @ w + b) @ w2,
    }


def mg_tangent(f, x, v):
    with fwAD.dual_level():
        out = f(fwAD.make_dual(mg.tensor(x), mg.tensor(v)))
        return fwAD.unpack_dual(out).tangent


@pytest.mark.parametrize("name", ["elementwise", "matmul", "softmax", "layer_norm", "mlp"])
def test_tangents_match_torch(torch, name):
    import torch.autograd.forward_ad as tfwAD
    ours = mg_tangent(compositions(mg, F)[name], X, V)
    with tfwAD.dual_level():
        out = compositions(torch, torch.nn.functional)[name](
            tfwAD.make_dual(torch.tensor(X), torch.tensor(V)))
        theirs = tfwAD.unpack_dual(out).tangent
    np.testing.assert_allclose(ours.numpy(), theirs.numpy(), rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("name", ["elementwise", "matmul", "softmax", "layer_norm", "mlp"])
def test_tangents_match_finite_differences(name):
    f = compositions(mg, F)[name]
    eps = 1e-6
    fd = (f(mg.tensor(X + eps * V)).numpy() - f(mg.tensor(X - eps * V)).numpy()) / (2 * eps)
    np.testing.assert_allclose(mg_tangent(f, X, V).numpy(), fd, rtol=1e-6, atol=1e-8)


def test_several_duals_sum_their_contributions_and_cache():
    x, y, u, v = (mg.tensor(a) for a in RNG.standard_normal((4, 3)))
    with fwAD.dual_level():
        out = fwAD.make_dual(x, u) * fwAD.make_dual(y, v)
        tangent = fwAD.unpack_dual(out).tangent
        np.testing.assert_allclose(tangent.numpy(), (u * y + x * v).numpy(), rtol=1e-12)
        assert fwAD.unpack_dual(out).tangent is tangent      # computed once per tensor


def test_a_backward_linear_only_piecewise_in_its_gradient_gets_its_tangent():
    """A backward split by g's sign through log|g| (logcumsumexp's once was) is right in g
    everywhere but at g = 0, so the dummy of the double-vjp must not be 0."""
    f = lambda x: x.logcumsumexp(dim=1)
    eps = 1e-6
    fd = (f(mg.tensor(X + eps * V)).numpy() - f(mg.tensor(X - eps * V)).numpy()) / (2 * eps)
    np.testing.assert_allclose(mg_tangent(f, X, V).numpy(), fd, rtol=1e-6, atol=1e-8)
    _, jvp_fn = mg.func.linearize(f, mg.tensor(X))
    np.testing.assert_allclose(jvp_fn(mg.tensor(V)).numpy(), fd, rtol=1e-6, atol=1e-8)


def test_tangents_run_no_hooks_and_fill_no_retained_grad():
    """Reverse mode's hooks and retain_grad stay out of the two backward passes (PyTorch's
    forward mode runs none), and stay on for a backward after."""
    calls = []
    with fwAD.dual_level():
        x = fwAD.make_dual(mg.tensor(X), mg.tensor(V))
        x.register_hook(lambda g: calls.append("x") or g * 3)
        h = x * 2
        h.retain_grad()
        h.register_hook(lambda g: calls.append("h") or g * 10)
        y = h.sin()
        np.testing.assert_allclose(fwAD.unpack_dual(y).tangent.numpy(),
                                   2 * np.cos(2 * X) * V, rtol=1e-12)
        assert calls == [] and h.grad is None and x.grad is None
        y.sum().backward()
        assert calls == ["h", "x"] and h.grad is not None


def test_dual_unrelated_tensor_and_exit():
    x, v = mg.tensor(X), mg.tensor(V)
    with fwAD.dual_level() as level:
        assert level == 0
        d = fwAD.make_dual(x, v)
        primal, tangent = fwAD.unpack_dual(d)
        assert tangent is v and np.array_equal(primal.numpy(), X)
        assert fwAD.unpack_dual(x).tangent is None          # no dual ancestry
        assert fwAD.unpack_dual(d.floor()).tangent.abs().sum().item() == 0
        assert not fwAD.unpack_dual(d * 2).primal.requires_grad
    assert fwAD.unpack_dual(d).tangent is None              # the level dropped the duals
    assert fwAD.unpack_dual(3) == (3, None)


def test_a_dual_of_a_tensor_with_a_tangent_is_refused_as_torch():
    with fwAD.dual_level():
        inner = fwAD.make_dual(mg.tensor(X), mg.tensor(V))
        for t in (inner, inner * 3):
            with pytest.raises(RuntimeError, match="already has a forward gradient"):
                fwAD.make_dual(t, mg.tensor(V))


def test_reverse_mode_still_reaches_a_primal_that_requires_grad():
    x = mg.tensor(X, requires_grad=True)
    with fwAD.dual_level():
        y = (fwAD.make_dual(x, mg.tensor(V)) ** 2).sum()
        assert fwAD.unpack_dual(y).primal.requires_grad
        y.backward()
    np.testing.assert_allclose(x.grad.numpy(), 2 * X)


def test_no_grad_is_refused_clearly_and_make_dual_works_there():
    with fwAD.dual_level():
        with mg.no_grad():
            d = fwAD.make_dual(mg.tensor(X), mg.tensor(V))
            out = d * 2            # recorded nothing: its tangent cannot be known here
            with pytest.raises(RuntimeError, match="no_grad"):
                fwAD.unpack_dual(out)
        np.testing.assert_allclose(fwAD.unpack_dual(d * 2).tangent.numpy(), 2 * V)


def test_errors():
    x = mg.tensor(X)
    with pytest.raises(RuntimeError, match="no level exists"):
        fwAD.make_dual(x, x)
    with pytest.raises(RuntimeError, match="no forward AD level"):
        fwAD.exit_dual_level()
    with fwAD.dual_level():
        with pytest.raises(RuntimeError, match="Nested"):
            fwAD.enter_dual_level()
        with pytest.raises(RuntimeError, match=r"size \[3, 4\] .* size \[4\]"):
            fwAD.make_dual(x, mg.zeros(4, dtype=mg.float64))
        with pytest.raises(ValueError, match="floating point"):
            fwAD.make_dual(mg.tensor([1, 2]), mg.tensor([1, 2]))
        with pytest.raises(TypeError, match="tangent to be a Tensor"):
            fwAD.make_dual(x, V)
    assert mg.autograd.forward_ad is fwAD and fwAD.enter_dual_level() == 0
    fwAD.exit_dual_level()


def test_a_tangent_lost_to_a_freed_graph_is_refused_not_none():
    """A backward without retain_graph frees the graph the tangents ride on: unpack_dual
    after it must not answer None (PyTorch answers the tangent); one asked before keeps."""
    with fwAD.dual_level():
        d = fwAD.make_dual(mg.tensor(X, requires_grad=True), mg.tensor(V))
        asked, y = d.sin(), d ** 2
        before = fwAD.unpack_dual(asked).tangent
        (y.sum() + asked.sum()).backward()
        with pytest.raises(RuntimeError, match="freed by a backward"):
            fwAD.unpack_dual(y)
        assert fwAD.unpack_dual(asked).tangent is before


def test_unpack_dual_refuses_a_level_that_is_not_the_current_one():
    with fwAD.dual_level() as level:
        d = fwAD.make_dual(mg.tensor(X), mg.tensor(V))
        assert fwAD.unpack_dual(d * 2, level=level).tangent is not None
        with pytest.raises(RuntimeError, match="level 5 is not the current one"):
            fwAD.unpack_dual(d * 2, level=5)
