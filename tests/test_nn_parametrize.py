"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm) and the
gradient-norm halves get_total_norm / clip_grads_with_norm_, against PyTorch where it is
installed (the `torch` fixture)."""
import copy

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn.utils import parametrize as P
from minigrad.nn.utils.parametrizations import spectral_norm, weight_norm


class Symmetric(mg.nn.Module):
    def forward(self, X):
        return X.triu() + X.triu(1).transpose(0, 1)

    def right_inverse(self, A):
        return A.triu()


class Double(mg.nn.Module):               # no right_inverse
    def forward(self, X):
        return X * 2


class Counting(mg.nn.Module):
    calls = 0

    def forward(self, X):
        Counting.calls += 1
        return X + 1


def _lin(n_in=3, n_out=3, seed=0):
    mg.manual_seed(seed)
    return mg.nn.Linear(n_in, n_out)


def test_parametrized_weight_is_computed_from_the_original_parameter():
    m = _lin()
    w = m.weight
    P.register_parametrization(m, "weight", Symmetric())
    assert P.is_parametrized(m) and P.is_parametrized(m, "weight")
    assert not P.is_parametrized(m, "bias")
    orig = m.parametrizations.weight.original
    assert orig is w                               # the same Parameter: optimisers keep it
    np.testing.assert_array_equal(orig.numpy(), np.triu(orig.numpy()))   # right_inverse
    np.testing.assert_allclose(m.weight.numpy(), m.weight.numpy().T)
    assert list(m.state_dict()) == ["bias", "parametrizations.weight.original"]
    assert [n for n, _ in m.named_parameters()] == ["bias", "parametrizations.weight.original"]
    m(mg.ones(2, 3)).sum().backward()
    # d/dX of sum(triu(X) + triu(X,1)ᵀ) · colsum: upper entries get their own and mirror's
    np.testing.assert_allclose(orig.grad.numpy(), np.triu(np.full((3, 3), 2.0)) +
                               np.triu(np.full((3, 3), 2.0), 1))


def test_optimizer_steps_the_original_and_assignment_goes_through_right_inverse():
    m = P.register_parametrization(_lin(), "weight", Symmetric())
    opt = mg.optim.SGD(m.parameters(), lr=0.1)
    before = m.weight.numpy().copy()
    m(mg.ones(1, 3)).sum().backward()
    opt.step()
    assert not np.allclose(m.weight.numpy(), before)
    A = mg.tensor(np.arange(9.0, dtype="float32").reshape(3, 3))
    m.weight = A                                    # original ← right_inverse(A) = triu(A)
    np.testing.assert_array_equal(m.parametrizations.weight.original.numpy(), np.triu(A.numpy()))
    d = P.register_parametrization(_lin(), "weight", Double())
    with pytest.raises(RuntimeError, match="Double does not implement right_inverse"):
        d.weight = A


def test_remove_parametrizations_keeps_the_parameter_object():
    m = P.register_parametrization(_lin(), "weight", Symmetric())
    orig, value = m.parametrizations.weight.original, m.weight.numpy()
    P.remove_parametrizations(m, "weight")
    assert m.weight is orig and not P.is_parametrized(m) and "parametrizations" not in m._modules
    np.testing.assert_array_equal(m.weight.numpy(), value)
    assert list(m.state_dict()) == ["bias", "weight"]      # re-registered last, as PyTorch
    m = P.register_parametrization(_lin(), "weight", Symmetric())
    raw = m.parametrizations.weight.original.numpy().copy()
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    np.testing.assert_array_equal(m.weight.numpy(), raw)
    with pytest.raises(ValueError, match="no parametrization on 'weight'"):
        P.remove_parametrizations(m, "weight")


def test_chained_parametrizations_and_cached():
    m = P.register_parametrization(_lin(), "weight", Counting())
    P.register_parametrization(m, "weight", Double())
    orig = m.parametrizations.weight.original.numpy()
    np.testing.assert_allclose(m.weight.numpy(), (orig + 1) * 2)
    Counting.calls = 0
    with P.cached():
        a, b = m.weight, m.weight
        assert a is b and Counting.calls == 1
    m.weight
    assert Counting.calls == 2                      # the cache ends with the block


def test_registration_errors():
    m = _lin()
    with pytest.raises(ValueError, match="no parameter, buffer or parametrized tensor named "
                                         "'nope'"):
        P.register_parametrization(m, "nope", Double())

    class Shrink(mg.nn.Module):
        def forward(self, X):
            return X[:1]
    with pytest.raises(ValueError, match="may not change the shape"):
        P.register_parametrization(m, "weight", Shrink())
    assert "weight" in m._parameters                # left as it was
    P.register_parametrization(m, "weight", Shrink(), unsafe=True)
    assert m.weight.shape == (1, 3)


def test_deepcopy_and_save_load_of_a_parametrized_module(tmp_path):
    m = weight_norm(_lin(4, 5))
    c = copy.deepcopy(m)
    np.testing.assert_array_equal(c.weight.numpy(), m.weight.numpy())
    assert c.parametrizations.weight.original0 is not m.parametrizations.weight.original0
    mg.save(m.state_dict(), tmp_path / "m.safetensors")
    n = weight_norm(_lin(4, 5, seed=1))
    n.load_state_dict(mg.load(tmp_path / "m.safetensors"))
    np.testing.assert_allclose(n.weight.numpy(), m.weight.numpy())


def test_weight_norm_dims_and_old_state_dict_keys():
    m = weight_norm(mg.nn.Conv1d(2, 3, 4), dim=1)
    assert m.parametrizations.weight.original0.shape == (1, 2, 1)
    m = weight_norm(mg.nn.Conv1d(2, 3, 4), dim=None)
    assert m.parametrizations.weight.original0.shape == ()
    m = weight_norm(_lin(4, 5))
    g, v = np.full((5, 1), 2.0, "float32"), np.ones((5, 4), "float32")
    m.load_state_dict({"weight_g": g, "weight_v": v, "bias": np.zeros(5, "float32")})
    np.testing.assert_allclose(m.weight.numpy(), np.ones((5, 4)))   # 2 · v/‖v‖, ‖v‖ = 2


def test_weight_norm_matches_torch(torch):
    from torch.nn.utils.parametrizations import weight_norm as t_wn
    t = t_wn(torch.nn.Conv2d(2, 3, 3), dim=0)
    m = weight_norm(mg.nn.Conv2d(2, 3, 3))
    assert list(m.state_dict()) == list(t.state_dict())
    m.load_state_dict(t.state_dict())
    x = np.random.default_rng(0).standard_normal((2, 2, 5, 5)).astype("float32")
    (t(torch.tensor(x)) ** 2).sum().backward()
    (m(mg.tensor(x)) ** 2).sum().backward()
    np.testing.assert_allclose(m.weight.numpy(), t.weight.detach().numpy(), rtol=1e-5)
    for k in ("original0", "original1"):
        np.testing.assert_allclose(getattr(m.parametrizations.weight, k).grad.numpy(),
                                   getattr(t.parametrizations.weight, k).grad.numpy(),
                                   rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("layer", ["linear", "convT"])
def test_spectral_norm_matches_torch(torch, layer):
    from torch.nn.utils.parametrizations import spectral_norm as t_sn
    if layer == "linear":
        t, m, shape = t_sn(torch.nn.Linear(4, 5)), spectral_norm(mg.nn.Linear(4, 5)), (3, 4)
    else:
        t = t_sn(torch.nn.ConvTranspose1d(2, 3, 3))
        m = spectral_norm(mg.nn.ConvTranspose1d(2, 3, 3))
        shape = (2, 2, 5)
    assert list(m.state_dict()) == list(t.state_dict())
    m.load_state_dict(t.state_dict())
    x = np.random.default_rng(1).standard_normal(shape).astype("float32")
    for _ in range(2):                          # each training-mode call: one power step
        (t(torch.tensor(x)) ** 2).sum().backward()
        (m(mg.tensor(x)) ** 2).sum().backward()
    sd = t.state_dict()
    for k, v in m.state_dict().items():
        np.testing.assert_allclose(v.numpy(), sd[k].numpy(), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.parametrizations.weight.original.grad.numpy(),
                               t.parametrizations.weight.original.grad.numpy(),
                               rtol=1e-4, atol=1e-5)
    u = m.parametrizations.weight[0]._u.numpy().copy()
    m.eval()
    m(mg.tensor(x))
    np.testing.assert_array_equal(m.parametrizations.weight[0]._u.numpy(), u)


def test_spectral_norm_bounds_the_largest_singular_value():
    m = spectral_norm(_lin(6, 4), n_power_iterations=5)
    s = np.linalg.svd(m.weight.numpy(), compute_uv=False)
    assert abs(s[0] - 1) < 1e-3
    with pytest.raises(ValueError, match="no parameter or buffer named 'w'"):
        spectral_norm(_lin(), name="w")


def test_get_total_norm_and_clip_grads_with_norm_compose_clip_grad_norm_(torch):
    rng = np.random.default_rng(2)
    gs = [rng.standard_normal(s).astype("float32") * 3 for s in ((3, 4), (5,))]
    for norm_type in (2.0, 1.0, float("inf"), 3.0):
        total = mg.nn.utils.get_total_norm([mg.tensor(g) for g in gs], norm_type)
        ref = torch.nn.utils.get_total_norm([torch.tensor(g) for g in gs], norm_type)
        np.testing.assert_allclose(total.numpy(), ref.numpy(), rtol=1e-5)
    ps, tps = [mg.nn.Parameter(mg.zeros(*g.shape)) for g in gs], \
        [torch.nn.Parameter(torch.zeros(g.shape)) for g in gs]
    for p, tp, g in zip(ps, tps, gs):
        p.grad, tp.grad = mg.tensor(g), torch.tensor(g)
    assert mg.nn.utils.clip_grads_with_norm_(ps, 1.0, total) is None
    torch.nn.utils.clip_grads_with_norm_(tps, 1.0, ref)
    for p, tp in zip(ps, tps):
        np.testing.assert_allclose(p.grad.numpy(), tp.grad.numpy(), rtol=1e-5)


def test_get_total_norm_errors_and_clip_with_a_number():
    with pytest.raises(RuntimeError, match="get_total_norm: the total norm"):
        mg.nn.utils.get_total_norm(mg.tensor([float("inf"), 1.0]), error_if_nonfinite=True)
    assert float(mg.nn.utils.get_total_norm([])) == 0.0
    p = mg.nn.Parameter(mg.zeros(2))
    p.grad = mg.tensor([3.0, 4.0])
    mg.nn.utils.clip_grads_with_norm_([p], 1.0, 5.0)
    np.testing.assert_allclose(p.grad.numpy(), [0.6, 0.8], rtol=1e-5)
    with pytest.raises(TypeError, match="total_norm must be a tensor or a number"):
        mg.nn.utils.clip_grads_with_norm_([p], 1.0, "5")


def test_old_spellings_delegate_to_the_parametrizations():
    m = mg.nn.utils.weight_norm(_lin(4, 5))
    w = m.weight.numpy()
    with pytest.raises(ValueError, match="remove_spectral_norm: weight of Linear has no "
                                         "spectral_norm"):
        mg.nn.utils.remove_spectral_norm(m)
    mg.nn.utils.remove_weight_norm(m)
    assert not P.is_parametrized(m) and isinstance(m.weight, mg.nn.Parameter)
    np.testing.assert_allclose(m.weight.numpy(), w)
    m = mg.nn.utils.remove_spectral_norm(mg.nn.utils.spectral_norm(_lin()))
    assert list(m.state_dict()) == ["bias", "weight"]
