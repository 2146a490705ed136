"""The last of torch.nn's, torch.nn.init's and torch.nn.utils's names: init.dirac_,
init.sparse_ and the deprecated init spellings, nn.grad (convolution gradients),
CrossMapLRN2d, Container, DataParallel, utils.skip_init and the module paths PyTorch code
imports from (nn.parameter, nn.modules, nn.utils.clip_grad, ...)."""
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
from minigrad.nn import grad as G
from minigrad.nn import init


def _r(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


# ---- init.dirac_, init.sparse_ and the old spellings ----

@pytest.mark.parametrize("d,groups,cin,cout", [(1, 1, 3, 3), (2, 2, 4, 6), (3, 1, 2, 2),
                                               (2, 1, 3, 5)])
def test_dirac_makes_a_conv_pass_its_input_through(d, groups, cin, cout):
    w = mg.zeros(*(cout, cin // groups) + (3, 5, 3)[:d])
    assert init.dirac_(w, groups) is w
    x = mg.tensor(_r(2, cin, *(4, 6, 5)[:d]))
    y = getattr(F, f"conv{d}d")(x, w.double(), padding=(1, 2, 1)[:d], groups=groups).numpy()
    per, cpg = cout // groups, cin // groups
    for g in range(groups):
        for i in range(per):
            out = y[:, g * per + i]
            if i < cpg:          # output channel i of the group is its input channel i
                np.testing.assert_array_equal(out, x.numpy()[:, g * cpg + i])
            else:
                assert not out.any()


def test_dirac_matches_torch(torch):
    for shape, groups in [((6, 4, 3, 3), 2), ((2, 5, 4), 1), ((4, 2, 2, 3, 3), 4),
                          ((5, 2, 3, 3), 1)]:
        w, tw = mg.ones(*shape), torch.ones(shape)
        init.dirac_(w, groups), torch.nn.init.dirac_(tw, groups)
        np.testing.assert_array_equal(w.numpy(), tw.numpy())


def test_dirac_errors():
    with pytest.raises(ValueError, match="3, 4 or 5 dims"):
        init.dirac_(mg.zeros(3, 3))
    with pytest.raises(ValueError, match="divisible by groups=4"):
        init.dirac_(mg.zeros(6, 2, 3), groups=4)


def test_sparse_zeros_each_column_and_draws_the_rest():
    w = init.sparse_(mg.zeros(400, 30), 0.3, std=0.5, generator=1)
    a = w.numpy()
    assert ((a == 0).sum(0) == math.ceil(0.3 * 400)).all()
    assert abs(a[a != 0].std() - 0.5) < 0.02 and abs(a[a != 0].mean()) < 0.02
    np.testing.assert_array_equal(a, init.sparse_(mg.zeros(400, 30), 0.3, 0.5, 1).numpy())
    assert (init.sparse_(mg.zeros(3, 2), 0.1).numpy() == 0).sum(0).tolist() == [1, 1]


def test_sparse_errors():
    with pytest.raises(ValueError, match="only 2-D"):
        init.sparse_(mg.zeros(2, 3, 4), 0.5)
    with pytest.raises(ValueError, match=r"in \[0, 1\]"):
        init.sparse_(mg.zeros(2, 3), 1.5)
    with pytest.raises(TypeError, match="floating-point"):
        init.sparse_(mg.zeros(2, 3, dtype=mg.int64), 0.5)


@pytest.mark.parametrize("name,args", [
    ("uniform", ()), ("normal", ()), ("constant", (0.5,)), ("xavier_uniform", ()),
    ("xavier_normal", ()), ("kaiming_uniform", ()), ("kaiming_normal", ()),
    ("orthogonal", ()), ("eye", ()), ("dirac", ()), ("sparse", (0.5,))])
def test_old_init_spellings_warn_and_do_the_same(name, args):
    shape = (3, 4, 3) if name == "dirac" else (3, 4)
    mg.manual_seed(3)
    want = getattr(init, name + "_")(mg.zeros(*shape), *args).numpy()
    mg.manual_seed(3)
    with pytest.warns(FutureWarning, match=f"`nn.init.{name}` is now deprecated in favor "
                                           f"of `nn.init.{name}_`"):
        got = getattr(init, name)(mg.zeros(*shape), *args)
    np.testing.assert_array_equal(got.numpy(), want)


def test_the_names_are_there():
    for where, names in ((init, "dirac_ sparse_ dirac sparse eye normal uniform constant "
                                "xavier_normal xavier_uniform kaiming_normal "
                                "kaiming_uniform orthogonal"),
                         (nn, "grad CrossMapLRN2d Container DataParallel parameter modules "
                              "common_types"),
                         (nn.utils, "skip_init clip_grad clip_grad_norm convert_parameters "
                                    "stateless init memory_format fusion "
                                    "convert_conv2d_weight_memory_format "
                                    "convert_conv3d_weight_memory_format")):
        assert not [n for n in names.split() if not hasattr(where, n)], where.__name__


# ---- nn.grad ----

_CASES = [(1, dict(stride=2, padding=1, dilation=2, groups=2)),
          (2, dict(stride=(2, 1), padding=(1, 0), dilation=1, groups=1)),
          (2, dict(stride=3, padding=2, dilation=(1, 2), groups=2)),
          (3, dict(stride=2, padding=1, dilation=1, groups=1))]


def _conv_case(d, kw):
    cin, cout = 4, 6
    x = _r(2, cin, *(7, 8, 5)[:d])
    w = _r(cout, cin // kw["groups"], *(3, 2, 3)[:d], seed=1)
    y = getattr(F, f"conv{d}d")(mg.tensor(x), mg.tensor(w), **kw)
    return x, w, _r(*y.shape, seed=2)


@pytest.mark.parametrize("d,kw", _CASES)
def test_conv_grads_are_autograds(d, kw):
    x, w, go = _conv_case(d, kw)
    xt, wt = mg.tensor(x, requires_grad=True), mg.tensor(w, requires_grad=True)
    y = getattr(F, f"conv{d}d")(xt, wt, **kw)
    gx, gw = mg.grad(y, [xt, wt], mg.tensor(go))
    got_x = getattr(G, f"conv{d}d_input")(x.shape, mg.tensor(w), mg.tensor(go), **kw)
    got_w = getattr(G, f"conv{d}d_weight")(mg.tensor(x), w.shape, mg.tensor(go), **kw)
    np.testing.assert_allclose(got_x.numpy(), gx.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(got_w.numpy(), gw.numpy(), rtol=1e-12, atol=1e-12)
    assert got_x.shape == x.shape and got_w.shape == w.shape


@pytest.mark.parametrize("d,kw", _CASES)
def test_conv_grads_match_torch(torch, d, kw):
    x, w, go = _conv_case(d, kw)
    tg = torch.nn.grad
    want_x = getattr(tg, f"conv{d}d_input")(x.shape, torch.tensor(w), torch.tensor(go), **kw)
    want_w = getattr(tg, f"conv{d}d_weight")(torch.tensor(x), w.shape, torch.tensor(go), **kw)
    got_x = getattr(G, f"conv{d}d_input")(x.shape, mg.tensor(w), mg.tensor(go), **kw)
    got_w = getattr(G, f"conv{d}d_weight")(mg.tensor(x), w.shape, mg.tensor(go), **kw)
    np.testing.assert_allclose(got_x.numpy(), want_x.numpy(), rtol=1e-10, atol=1e-12)
    np.testing.assert_allclose(got_w.numpy(), want_w.numpy(), rtol=1e-10, atol=1e-12)


def test_conv_grads_gradcheck():
    kw = dict(stride=2, padding=1, groups=2)
    x, w, go = (mg.tensor(_r(*shape, seed=i), requires_grad=True) for i, shape in
                enumerate([(1, 2, 4, 3), (2, 1, 2, 2), (1, 2, 3, 2)]))
    assert mg.gradcheck(lambda w, go: G.conv2d_input((1, 2, 4, 3), w, go, **kw), (w, go))
    assert mg.gradcheck(lambda x, go: G.conv2d_weight(x, (2, 1, 2, 2), go, **kw), (x, go))
    with mg.no_grad():                 # usable without autograd too, as PyTorch's
        assert not G.conv2d_weight(x, (2, 1, 2, 2), go, **kw).requires_grad


def test_conv_grads_errors():
    w, go = mg.zeros(6, 4, 3), mg.zeros(2, 6, 5)
    with pytest.raises(ValueError, match="output size"):
        G.conv1d_input((2, 4, 9), w, go)
    with pytest.raises(ValueError, match="has 3 channels, but weight"):
        G.conv1d_input((2, 3, 7), w, go)
    with pytest.raises(TypeError, match="input_size must be a shape"):
        G.conv1d_input(7, w, go)
    with pytest.raises(ValueError, match="output shape"):
        G.conv1d_weight(mg.zeros(2, 4, 9), (6, 4, 3), go)
    with pytest.raises(ValueError, match="weight_size must be"):
        G.conv2d_weight(mg.zeros(2, 4, 9, 9), (6, 4), mg.zeros(2, 6, 7, 7))


# ---- CrossMapLRN2d ----

def test_cross_map_lrn2d_closed_form():
    x = mg.full((1, 5, 1, 1), 2.0)            # x_c² = 4: s_c counts the channels summed
    y = nn.CrossMapLRN2d(1, 1.0, 1.0, 1.0)(x).numpy().ravel()
    # size 1: s_0 = x_0², and from c = 1 on x_c² + x_0² (PyTorch's running sum)
    np.testing.assert_allclose(y, [2 / 5] + [2 / 9] * 4)
    y = nn.CrossMapLRN2d(3, 1.0, 1.0, 1.0)(x).numpy().ravel()
    # size 3: window c-1..c+1 inside 0..4, plus x_0² from c = 2
    np.testing.assert_allclose(y, [2 / (1 + 8 / 3), 2 / 5, 2 / (1 + 16 / 3),
                                   2 / (1 + 16 / 3), 2 / 5])


def test_cross_map_lrn2d_matches_torch(torch):
    x = _r(2, 7, 3, 2)
    for channels in (1, 2, 3, 7):
        for size in (1, 2, 3, 4, 5, 6, 9, 15):
            want = torch.nn.CrossMapLRN2d(size, 0.3, 0.6, 1.5)(torch.tensor(x[:, :channels]))
            got = nn.CrossMapLRN2d(size, 0.3, 0.6, 1.5)(mg.tensor(x[:, :channels]))
            np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-14)
    assert repr(nn.CrossMapLRN2d(3)) == repr(torch.nn.CrossMapLRN2d(3))


@pytest.mark.parametrize("size", [1, 2, 3])
def test_cross_map_lrn2d_gradcheck(size):
    x = mg.tensor(_r(1, 4, 2, 2), requires_grad=True)
    assert mg.gradcheck(lambda x: nn.CrossMapLRN2d(size, 0.3, 0.6, 1.5)(x), (x,))


def test_cross_map_lrn2d_errors():
    with pytest.raises(ValueError, match="expected a 4-D input"):
        nn.CrossMapLRN2d(3)(mg.zeros(2, 3, 4))
    with pytest.raises(ValueError, match="size must be >= 1"):
        nn.CrossMapLRN2d(0)(mg.zeros(1, 3, 4, 4))


# ---- Container, DataParallel ----

def test_container_warns_and_holds_its_modules():
    with pytest.warns(FutureWarning, match="nn.Container` is deprecated"):
        c = nn.Container(a=nn.Linear(2, 3), b=nn.ReLU())
    assert list(c.state_dict()) == ["a.weight", "a.bias"] and c.b.__class__ is nn.ReLU


def test_data_parallel_runs_the_module_as_it_is():
    m = nn.Linear(2, 3)
    dp = nn.DataParallel(m, device_ids=[0], dim=0)
    x = mg.tensor(_r(4, 2), dtype=mg.float32)
    assert dp.module is m and dp.device_ids == [] and dp.dim == 0
    np.testing.assert_array_equal(dp(x).numpy(), m(x).numpy())
    state = dp.state_dict()
    assert list(state) == ["module.weight", "module.bias"]
    other = nn.DataParallel(nn.Linear(2, 3))
    other.load_state_dict(state)
    np.testing.assert_array_equal(other(x).numpy(), m(x).numpy())
    dp(x).sum().backward()
    assert m.weight.grad is not None
    with pytest.raises(TypeError, match="must be an nn.Module"):
        nn.DataParallel(lambda x: x)


def test_data_parallel_state_dict_keys_match_torch(torch):
    ours = nn.DataParallel(nn.Sequential(nn.Linear(2, 3), nn.BatchNorm1d(3)))
    theirs = torch.nn.DataParallel(torch.nn.Sequential(torch.nn.Linear(2, 3),
                                                       torch.nn.BatchNorm1d(3)))
    assert list(ours.state_dict()) == list(theirs.state_dict())


# ---- nn.utils: skip_init and the module paths ----

def test_skip_init_draws_nothing_and_leaves_zeros():
    mg.manual_seed(0)
    first = mg.rand(3).numpy()
    mg.manual_seed(0)
    conv = nn.utils.skip_init(nn.Conv2d, 2, 4, kernel_size=3, bias=True, dtype=mg.float64)
    np.testing.assert_array_equal(mg.rand(3).numpy(), first)    # no random numbers spent
    assert conv.weight.shape == (4, 2, 3, 3) and conv.weight.dtype == mg.float64
    assert not conv.weight.numpy().any() and not conv.bias.numpy().any()
    assert nn.Linear(3, 4).weight.numpy().any()             # initialised again afterwards


@pytest.mark.parametrize("cls, args", [(nn.LSTM, (3, 4)), (nn.Embedding, (5, 3)),
                                       (nn.MultiheadAttention, (4, 2)), (nn.LayerNorm, (4,))])
def test_skip_init_of_modules_that_draw(cls, args):
    """No random numbers spent; the parameters keep what they are made with (zeros, a
    norm's weight its ones), as skip_init's docstring says."""
    state = mg.get_rng_state().tolist()
    module = nn.utils.skip_init(cls, *args)
    assert mg.get_rng_state().tolist() == state
    for name, p in module.named_parameters():
        expected = 1.0 if cls is nn.LayerNorm and name == "weight" else 0.0
        assert (p.numpy() == expected).all(), name


def test_skip_init_errors():
    class NoDevice(nn.Module):
        def __init__(self, n):
            super().__init__()
    with pytest.raises(RuntimeError, match="'device' argument"):
        nn.utils.skip_init(NoDevice, 3)
    with pytest.raises(RuntimeError, match="expected a Module class"):
        nn.utils.skip_init(nn.Linear(2, 2))
    with pytest.raises(TypeError):                 # the constructor's own error comes through
        nn.utils.skip_init(nn.Linear, 2)
    assert init.normal_(mg.zeros(5)).numpy().any()     # the switch is off again


def test_utils_module_paths():
    from minigrad.nn.utils.clip_grad import clip_grad_norm_, clip_grad_value_  # noqa
    from minigrad.nn.utils.convert_parameters import (parameters_to_vector,  # noqa
                                                      vector_to_parameters)
    from minigrad.nn.utils.fusion import fuse_conv_bn_eval
    from minigrad.nn.utils.init import skip_init
    from minigrad.nn.utils.memory_format import convert_conv2d_weight_memory_format
    from minigrad.nn.utils.stateless import functional_call
    assert clip_grad_norm_ is nn.utils.clip_grad_norm_ and skip_init is nn.utils.skip_init
    assert fuse_conv_bn_eval is nn.utils.fuse_conv_bn_eval
    assert parameters_to_vector is nn.utils.parameters_to_vector
    m = nn.Conv2d(2, 2, 1)
    assert convert_conv2d_weight_memory_format(m, "channels_last") is m
    assert nn.utils.convert_conv3d_weight_memory_format(m, None) is m
    x = mg.ones(1, 2, 1, 1)
    with pytest.warns(FutureWarning, match="stateless.functional_call` is deprecated"):
        y = functional_call(m, {"weight": mg.zeros(2, 2, 1, 1)}, (x,))
    np.testing.assert_array_equal(y.numpy(), m.bias.detach().numpy().reshape(1, 2, 1, 1))


def test_clip_grad_norm_old_spelling():
    p = nn.Parameter(mg.ones(4))
    p.grad = mg.full((4,), 2.0)
    with pytest.warns(FutureWarning, match="in favor of `torch.nn.utils.clip_grad_norm_`"):
        total = nn.utils.clip_grad_norm(p, 1.0)
    assert float(total) == 4.0
    np.testing.assert_allclose(p.grad.numpy(), 0.5, rtol=1e-5)


def test_nn_module_paths():
    from minigrad.nn.common_types import _size_2_t  # noqa: F401
    from minigrad.nn.modules import CrossMapLRN2d, Linear, Module
    from minigrad.nn.parameter import Buffer, Parameter, UninitializedParameter  # noqa
    assert Module is nn.Module and Linear is nn.Linear and CrossMapLRN2d is nn.CrossMapLRN2d
    assert Parameter is nn.Parameter and Buffer is nn.Buffer
    assert not hasattr(nn.modules, "Tensor")
    with warnings.catch_warnings():
        warnings.simplefilter("error")      # importing them warns about nothing
        import minigrad.nn.modules  # noqa: F401
