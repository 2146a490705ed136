"""nn.utils.parametrize, nn.utils.parametrizations (weight_norm, spectral_norm, orthogonal),
fuse_conv_bn_eval / fuse_linear_bn_eval, parametrized RNN weights, and the
gradient-norm halves get_total_norm / clip_grads_with_norm_, against PyTorch where it is
installed (the `torch` fixture)."""
import copy

import numpy as np
import pytest

import minigrad as mg
from minigrad.nn.utils import parametrize as P
from minigrad.nn.utils.parametrizations import orthogonal, spectral_norm, weight_norm


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


def test_remove_parametrizations_refuses_a_dtype_changing_parametrization(torch):
    # it used to leave the Parameter quietly in float64; PyTorch raises a RuntimeError
    class Wider(mg.nn.Module):
        def forward(self, X):
            return X.double()
    m = P.register_parametrization(_lin(), "weight", Wider(), unsafe=True)
    orig = m.parametrizations.weight.original
    with pytest.raises(RuntimeError, match="changes its dtype \\(float32 to float64\\).*"
                                           "leave_parametrized=False"):
        P.remove_parametrizations(m, "weight")
    assert P.is_parametrized(m, "weight") and orig.dtype == mg.float32   # left as it was
    P.remove_parametrizations(m, "weight", leave_parametrized=False)
    assert m.weight is orig and m.weight.dtype == mg.float32
    t = torch.nn.Linear(3, 3)
    torch.nn.utils.parametrize.register_parametrization(t, "weight", type(
        "Wider", (torch.nn.Module,), {"forward": lambda self, X: X.double()})(), unsafe=True)
    with pytest.raises(RuntimeError):
        torch.nn.utils.parametrize.remove_parametrizations(t, "weight")

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


@pytest.mark.parametrize("remove", [mg.nn.utils.remove_weight_norm,
                                    lambda m: P.remove_parametrizations(m, "weight")])
def test_removing_weight_norm_removes_its_old_keys_hook(remove):
    # the hook stayed: old weight_g / weight_v keys were renamed to keys nothing has
    m = remove(weight_norm(_lin(4, 5)))
    state = {"weight": np.ones((5, 4), "float32"), "bias": np.zeros(5, "float32"),
             "weight_g": np.ones((5, 1), "float32"), "weight_v": np.ones((5, 4), "float32")}
    assert m.load_state_dict(state, strict=False).unexpected_keys == ["weight_g", "weight_v"]
    m = weight_norm(weight_norm(_lin(4, 5)), "bias", dim=None)
    P.remove_parametrizations(m, "bias")                 # the weight's hook stays
    state = {"weight_g": np.full((5, 1), 2.0, "float32"), "bias": np.zeros(5, "float32"),
             "weight_v": np.ones((5, 4), "float32")}
    m.load_state_dict(state)
    np.testing.assert_allclose(m.weight.numpy(), np.ones((5, 4)))

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


@pytest.mark.parametrize("shape,orthogonal_map,triv", [
    ((4, 4), None, True), ((4, 4), "cayley", False), ((4, 4), "householder", False),
    ((5, 3), None, False), ((3, 5), "matrix_exp", True), ((3, 5), "cayley", True),
    ((3, 5), "householder", True)])
def test_orthogonal_matches_torch(torch, shape, orthogonal_map, triv):
    from torch.nn.utils.parametrizations import orthogonal as t_orth
    torch.manual_seed(0)
    t = t_orth(torch.nn.Linear(shape[1], shape[0]), orthogonal_map=orthogonal_map,
               use_trivialization=triv)
    m = orthogonal(mg.nn.Linear(shape[1], shape[0]), orthogonal_map=orthogonal_map,
                   use_trivialization=triv)
    assert list(m.state_dict()) == list(t.state_dict())
    with torch.no_grad():                  # off the identity; householder's diagonal stays ±1
        o = t.parametrizations.weight.original
        o.add_(0.3 * torch.randn(o.shape).tril(-1) + 0.3 * torch.randn(o.shape).triu(1))
    m.load_state_dict({k: v.numpy() for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((2, shape[1])).astype("float32")
    (t(torch.tensor(x)) ** 2).sum().backward()
    (m(mg.tensor(x)) ** 2).sum().backward()
    W = m.weight.numpy()
    np.testing.assert_allclose(W, t.weight.detach().numpy(), atol=2e-6)
    G = W.T @ W if shape[0] >= shape[1] else W @ W.T
    np.testing.assert_allclose(G, np.eye(len(G)), atol=2e-6)
    np.testing.assert_allclose(m.parametrizations.weight.original.grad.numpy(),
                               t.parametrizations.weight.original.grad.numpy(), atol=1e-5)
    A = np.random.default_rng(1).standard_normal(shape).astype("float32")
    if not triv and orthogonal_map == "cayley":
        with pytest.raises(NotImplementedError, match="use_trivialization=True"):
            m.weight = mg.tensor(A)
        return
    t.weight, m.weight = torch.tensor(A), mg.tensor(A)    # right_inverse: QR's Q of A
    np.testing.assert_allclose(m.weight.numpy(), t.weight.detach().numpy(), atol=2e-6)


def test_orthogonal_errors():
    with pytest.raises(ValueError, match="expected a matrix or batch of matrices, got a "
                                         "tensor of 1 dims"):
        orthogonal(_lin(), "bias")
    with pytest.raises(ValueError, match="orthogonal_map must be one of 'matrix_exp', "
                                         "'cayley', 'householder', got 'qr'"):
        orthogonal(_lin(), orthogonal_map="qr")
    m = orthogonal(_lin(3, 4))
    assert isinstance(m.parametrizations.weight[0], type(orthogonal(_lin()).parametrizations
                                                        .weight[0]))
    with pytest.raises(ValueError, match=r"expected a matrix or batch of matrices of shape "
                                         r"\(4, 3\), got a tensor of shape \(3, 4\)"):
        m.weight = mg.ones(3, 4)


def _bn_pair(torch, bn_cls, t_bn_cls, n, affine=True):
    t = t_bn_cls(n, affine=affine)
    with torch.no_grad():
        t.running_mean.copy_(torch.randn(n))
        t.running_var.copy_(torch.rand(n) + 0.5)
        if affine:
            t.weight.copy_(torch.randn(n))
            t.bias.copy_(torch.randn(n))
    m = bn_cls(n, affine=affine)
    m.load_state_dict({k: v.numpy() for k, v in t.state_dict().items()})
    return t.eval(), m.eval()


@pytest.mark.parametrize("kind", ["conv", "convT", "linear", "linear_bn1"])
@pytest.mark.parametrize("bias", [True, False])
def test_fuse_bn_eval_matches_torch_and_the_two_layers(torch, kind, bias):
    from torch.nn.utils import fuse_conv_bn_eval as t_conv, fuse_linear_bn_eval as t_lin
    torch.manual_seed(0)
    x = np.random.default_rng(0).standard_normal((2, 2, 5, 5) if kind.startswith("conv")
                                                 else (2, 4)).astype("float32")
    if kind.startswith("conv"):
        cls = "ConvTranspose2d" if kind == "convT" else "Conv2d"
        tl, ml = getattr(torch.nn, cls)(2, 3, 3, bias=bias), getattr(mg.nn, cls)(2, 3, 3, bias=bias)
        tb, mb = _bn_pair(torch, mg.nn.BatchNorm2d, torch.nn.BatchNorm2d, 3)
    else:
        tl, ml = torch.nn.Linear(4, 3, bias=bias), mg.nn.Linear(4, 3, bias=bias)
        n = 1 if kind == "linear_bn1" else 3
        tb, mb = _bn_pair(torch, mg.nn.BatchNorm1d, torch.nn.BatchNorm1d, n)
    ml.load_state_dict({k: v.numpy() for k, v in tl.state_dict().items()})
    tl.eval(), ml.eval()
    if kind.startswith("conv"):
        tf, mf = t_conv(tl, tb, kind == "convT"), mg.nn.utils.fuse_conv_bn_eval(ml, mb,
                                                                                 kind == "convT")
    else:
        tf, mf = t_lin(tl, tb), mg.nn.utils.fuse_linear_bn_eval(ml, mb)
    out = mf(mg.tensor(x)).numpy()
    np.testing.assert_allclose(out, tf(torch.tensor(x)).detach().numpy(), atol=2e-6)
    if kind != "linear_bn1":           # BatchNorm1d(1) does not take 3 features
        np.testing.assert_allclose(out, mb(ml(mg.tensor(x))).numpy(), atol=2e-6)
    assert isinstance(mf.weight, mg.nn.Parameter) and mf.bias.requires_grad == bias
    assert mf is not ml and ml.training is False


def test_fuse_bn_errors_and_affine_false():
    lin, bn = _lin(4, 3), mg.nn.BatchNorm1d(3, affine=False)
    with pytest.raises(ValueError, match="fuse_linear_bn_eval: fusion is only for eval mode "
                                         r".*the Linear is in training mode"):
        mg.nn.utils.fuse_linear_bn_eval(lin, bn.eval())
    lin.eval()
    with pytest.raises(ValueError, match="num_features \\(2\\) must equal "
                                         "linear.out_features \\(3\\) or be 1"):
        mg.nn.utils.fuse_linear_bn_eval(lin, mg.nn.BatchNorm1d(2).eval())
    with pytest.raises(ValueError, match="keeps no running statistics"):
        mg.nn.utils.fuse_conv_bn_eval(mg.nn.Conv1d(2, 3, 1).eval(),
                                      mg.nn.BatchNorm1d(3, track_running_stats=False).eval())
    bn.running_mean.data[...] = 1.0                # affine=False: γ = 1, β = 0
    x = mg.randn(2, 4)
    np.testing.assert_allclose(mg.nn.utils.fuse_linear_bn_eval(lin, bn)(x).numpy(),
                               bn(lin(x)).numpy(), atol=1e-6)


def test_rnn_weights_read_through_their_parametrizations(torch):
    from torch.nn.utils.parametrizations import weight_norm as t_wn
    torch.manual_seed(0)
    t = t_wn(t_wn(torch.nn.LSTM(3, 4), "weight_hh_l0"), "weight_ih_l0")
    m = weight_norm(weight_norm(mg.nn.LSTM(3, 4), "weight_hh_l0"), "weight_ih_l0")
    with torch.no_grad():
        t.parametrizations.weight_hh_l0.original0.mul_(2)     # not the weight's own norms
    assert list(m.state_dict()) == list(t.state_dict())
    m.load_state_dict({k: v.numpy() for k, v in t.state_dict().items()})
    x = np.random.default_rng(0).standard_normal((5, 2, 3)).astype("float32")
    to, mo = t(torch.tensor(x))[0], m(mg.tensor(x))[0]
    to.sum().backward()
    mo.sum().backward()
    np.testing.assert_allclose(mo.numpy(), to.detach().numpy(), atol=1e-6)
    for k in ("weight_hh_l0", "weight_ih_l0"):
        np.testing.assert_allclose(m.parametrizations[k].original0.grad.numpy(),
                                   t.parametrizations[k].original0.grad.numpy(), atol=1e-5)
    P.register_parametrization(m, "weight_hh_l0", Counting())
    Counting.calls = 0                     # computed once per forward, not once per step
    m(mg.tensor(x))
    assert Counting.calls == 1


def test_rnn_parametrization_raising_attribute_error_is_not_a_missing_bias():
    class Broken(mg.nn.Module):           # a bug in the parametrization: no self.scale
        def forward(self, x):
            return x * self.scale
    m = mg.nn.RNN(3, 4)
    P.register_parametrization(m, "bias_ih_l0", Broken(), unsafe=True)
    with pytest.raises(AttributeError, match="scale"):   # not a silent run without the bias
        m(mg.randn(5, 3))
