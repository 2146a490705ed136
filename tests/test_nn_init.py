"""Initialisers: their statistics, PyTorch's default layer inits, and seeding (the same
seed gives the same weights; a `generator` argument draws from its own stream)."""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.nn import init


def _w(*shape, dtype=None):
    return nn.Parameter(mg.zeros(*shape, dtype=dtype))


def test_uniform_and_normal_statistics():
    mg.manual_seed(0)
    w = init.uniform_(_w(300, 300), -2.0, 1.0).numpy()
    assert w.min() >= -2.0 and w.max() < 1.0
    assert abs(w.mean() - (-0.5)) < 0.02 and abs(w.std() - 3 / math.sqrt(12)) < 0.02
    w = init.normal_(_w(300, 300), 1.0, 0.5).numpy()
    assert abs(w.mean() - 1.0) < 0.01 and abs(w.std() - 0.5) < 0.01


@pytest.mark.parametrize("fn, expected_std", [
    (lambda w: init.xavier_uniform_(w), math.sqrt(2 / (200 + 400))),
    (lambda w: init.xavier_normal_(w, gain=2.0), 2 * math.sqrt(2 / (200 + 400))),
    (lambda w: init.kaiming_uniform_(w, nonlinearity="relu"), math.sqrt(2 / 400)),
    (lambda w: init.kaiming_normal_(w, mode="fan_out", nonlinearity="relu"), math.sqrt(2 / 200)),
    (lambda w: init.kaiming_uniform_(w, a=math.sqrt(5)), 1 / math.sqrt(3 * 400)),
])
def test_fan_based_inits_have_the_right_std(fn, expected_std):
    mg.manual_seed(0)
    w = fn(_w(200, 400)).numpy()          # (fan_out, fan_in) = (200, 400)
    assert abs(w.std() / expected_std - 1) < 0.02 and abs(w.mean()) < 0.1 * expected_std


def test_uniform_fan_inits_stay_in_their_bound():
    mg.manual_seed(0)
    w = init.xavier_uniform_(_w(30, 50)).numpy()
    bound = math.sqrt(6 / 80)
    assert np.abs(w).max() <= bound and np.abs(w).max() > 0.9 * bound


def test_calculate_gain_and_fans():
    assert init.calculate_gain("relu") == pytest.approx(math.sqrt(2))
    assert init.calculate_gain("tanh") == pytest.approx(5 / 3)
    assert init.calculate_gain("leaky_relu", 0.2) == pytest.approx(math.sqrt(2 / 1.04))
    assert init.calculate_gain("linear") == 1.0
    assert init.calculate_gain("selu") == 0.75                       # PyTorch's table
    assert init.calculate_gain("conv3d") == init.calculate_gain("conv_transpose2d") == 1.0
    with pytest.raises(ValueError, match="negative_slope True is not a valid number"):
        init.calculate_gain("leaky_relu", True)
    assert init.fans(_w(4, 3, 5)) == (15, 20)
    with pytest.raises(ValueError, match="nonlinearity"):
        init.calculate_gain("swish")
    with pytest.raises(ValueError, match="at least 2 dims"):
        init.xavier_uniform_(_w(3))


def test_calculate_gain_matches_torch():
    torch = pytest.importorskip("torch")
    for name, param in [("relu", None), ("tanh", None), ("leaky_relu", 0.3), ("sigmoid", None)]:
        assert init.calculate_gain(name, param) == pytest.approx(
            torch.nn.init.calculate_gain(name, param))


def test_constant_inits_and_dtype_kept():
    w = _w(2, 3, dtype=mg.float64)
    assert not init.zeros_(w).numpy().any() and w.dtype == mg.float64
    assert (init.ones_(w).numpy() == 1).all()
    assert (init.constant_(w, 0.25).numpy() == 0.25).all()
    assert init.normal_(w).dtype == mg.float64


def test_layer_default_inits_follow_torch():
    mg.manual_seed(0)
    lin = nn.Linear(64, 300)
    bound = 1 / math.sqrt(64)                     # PyTorch: U(±1/√in_features), bias too
    for p in (lin.weight, lin.bias):
        v = p.numpy()
        assert np.abs(v).max() <= bound and np.abs(v).max() > 0.95 * bound
    emb = nn.Embedding(300, 64).weight.numpy()     # N(0, 1)
    assert abs(emb.std() - 1) < 0.02
    ln = nn.LayerNorm(5)
    assert (ln.weight.numpy() == 1).all() and not ln.bias.numpy().any()


def test_same_seed_same_weights():
    def build():
        return nn.Sequential(nn.Linear(3, 4), nn.GRU(4, 2), nn.Embedding(5, 2))
    mg.manual_seed(1)
    a = build()
    mg.manual_seed(1)
    b = build()
    mg.manual_seed(2)
    c = build()
    for (n, p), q, r in zip(a.named_parameters(), b.parameters(), c.parameters()):
        np.testing.assert_array_equal(p.numpy(), q.numpy(), err_msg=n)
        assert not np.array_equal(p.numpy(), r.numpy()), n


def test_generator_argument():
    w1, w2 = _w(4, 4), _w(4, 4)
    init.normal_(w1, generator=np.random.default_rng(3))
    init.normal_(w2, generator=np.random.default_rng(3))
    np.testing.assert_array_equal(w1.numpy(), w2.numpy())
    init.kaiming_uniform_(w2, generator=3)          # an int seed makes a fresh generator
    init.kaiming_uniform_(w1, generator=3)
    np.testing.assert_array_equal(w1.numpy(), w2.numpy())
    # a generator of one's own leaves the global stream alone
    mg.manual_seed(0)
    expected = mg.randn(3).numpy()
    mg.manual_seed(0)
    init.uniform_(w1, generator=np.random.default_rng(9))
    np.testing.assert_array_equal(mg.randn(3).numpy(), expected)


def test_bad_arguments_are_named():
    w = mg.zeros(3, 4)
    with pytest.raises(ValueError, match="mode must be 'fan_in' or 'fan_out', got 'fan_avg'"):
        init.kaiming_uniform_(w, mode="fan_avg")
    with pytest.raises(ValueError, match="a <= b"):
        init.uniform_(w, 1, 0)
    with pytest.raises(ValueError, match="std must be >= 0"):
        init.normal_(w, 0, -1)
    with pytest.raises(TypeError, match="floating-point tensor, got dtype int64"):
        init.uniform_(mg.zeros(3, dtype=mg.int64))


# ---- defaults and arguments that PyTorch defines (checked without torch) -------------------------
def test_leaky_relu_gain_defaults_to_slope_0_01():
    # PyTorch: gain = √(2 / (1 + slope²)), slope 0.01 when no param is given
    assert init.calculate_gain("leaky_relu") == pytest.approx(math.sqrt(2 / (1 + 0.01 ** 2)),
                                                              rel=1e-12)


def test_an_int_generator_seeds_a_fresh_numpy_generator_with_that_seed():
    w = _w(3, 5, dtype=mg.float64)
    init.normal_(w, generator=7)
    np.testing.assert_array_equal(w.numpy(), np.random.default_rng(7).normal(0, 1, (3, 5)))
    init.normal_(w, generator=8)
    assert not np.array_equal(w.numpy(), np.random.default_rng(7).normal(0, 1, (3, 5)))


def test_normal_with_zero_std_is_the_constant_mean():
    w = init.normal_(_w(2, 3), mean=0.5, std=0.0)   # std = 0 is valid (torch allows it)
    assert (w.numpy() == 0.5).all()


@pytest.mark.parametrize("make", [lambda: nn.LayerNorm(4), lambda: nn.RMSNorm(4),
                                  lambda: nn.LayerNorm(4, bias=False),
                                  lambda: nn.LayerNorm(4, elementwise_affine=False)])
def test_norm_layers_reset_to_ones_and_zeros(make):
    m = make()
    with mg.no_grad():
        for p in m.parameters():
            p.add_(3.0)
    m.reset_parameters()                      # the usual "re-initialise every module" loop
    if m.weight is not None:
        np.testing.assert_array_equal(m.weight.numpy(), np.ones(4))
    if getattr(m, "bias", None) is not None:
        np.testing.assert_array_equal(m.bias.numpy(), np.zeros(4))


def test_constant_takes_a_0d_tensor_and_fans_go_by_torchs_name():
    np.testing.assert_array_equal(init.constant_(mg.zeros(2, 3), mg.tensor(2.0)).numpy(),
                                  np.full((2, 3), 2.0))
    assert init._calculate_fan_in_and_fan_out(mg.zeros(3, 4, 5)) == (20, 15)


@pytest.mark.parametrize("a, b", [(-math.inf, 0.0), (0.0, math.inf), (-1e300, 1e300)])
def test_uniform_refuses_bounds_the_dtype_cannot_hold(a, b):
    with pytest.raises(ValueError, match="must be finite values of float32"):
        init.uniform_(mg.zeros(3), a, b)
    with pytest.raises(ValueError, match="must be finite values"):
        mg.zeros(3).uniform_(a, b)


def test_initialisers_write_through_a_parameters_data_and_its_raw_array():
    """PyTorch's DCGAN idiom `init.normal_(m.weight.data, 0.0, 0.02)`: `.data` shares the
    parameter's memory, so the initialiser's write changes the parameter; a raw array (the
    parameter's `._data`) is written in place too."""
    conv = nn.Conv2d(3, 8, 3)
    bn = nn.BatchNorm2d(8)
    mg.manual_seed(0)
    data, version = conv.weight.data, conv.weight._version
    out = init.normal_(data, 0.0, 0.02)
    assert out is data and conv.weight._version == version   # hidden from autograd, as torch
    assert abs(float(conv.weight.std()) - 0.02) < 0.004
    raw = conv.weight._data
    assert init.zeros_(raw) is raw and not conv.weight.numpy().any()
    init.constant_(bn.bias.data, 0.5)
    init.kaiming_uniform_(bn.weight.data.reshape(8, 1), a=1.0)   # a view: written through
    w = bn.weight.numpy()                                     # bound sqrt(3) for fan_in 1
    assert bn.bias.numpy().tolist() == [0.5] * 8 and (w != 1).all() and abs(w).max() <= 3 ** .5
