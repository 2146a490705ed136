"""max_unpool1d/2d/3d and nn.MaxUnpool* (ops/unpool.py, nn/pool_extra.py), the
*_with_indices max pools, adaptive_max_pool3d and lp_pool3d (ops/pool.py), and
feature_alpha_dropout / nn.FeatureAlphaDropout against torch: values, gradients, gradcheck in
float64, the spy device, reprs and errors."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from op_helpers import OpCase, check_vs_torch, check_gradcheck, check_spy_matches_cpu

SHAPES = {1: (2, 3, 7), 2: (2, 2, 5, 6), 3: (1, 2, 4, 6, 4)}
POOLS = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
         dict(kernel_size=2, stride=1)]                  # overlapping: a place picked twice


def _pooled(n, kw, shape=None):
    """max_pool's (values, indices) of a fixed input, as NumPy arrays."""
    x = np.random.default_rng(n).standard_normal(shape or SHAPES[n])
    out, idx = getattr(F, f"max_pool{n}d")(mg.tensor(x), return_indices=True, **kw)
    return out.numpy(), idx.numpy(), x.shape


def _unpool_case(n, kw, output_size=False, shape=None):
    _, idx, in_shape = _pooled(n, kw, shape)
    size = in_shape[-n:] if output_size else None

    def call(Fn, lib, x):
        return getattr(Fn, f"max_unpool{n}d")(x, lib.tensor(idx, device=x.device),
                                              output_size=size, **kw)

    def torch_fn(x):
        import torch
        return call(torch.nn.functional, torch, x)
    return OpCase(f"max_unpool{n}d_{sorted(kw.items())}_{output_size}",
                  lambda x: call(F, mg, x), (idx.shape,), torch_fn=torch_fn)


def _pool_case(name, call, shape, domain="real"):
    def torch_fn(x):
        import torch.nn.functional as TF
        return call(TF, x)
    return OpCase(name, lambda x: call(F, x), (shape,), torch_fn=torch_fn, domain=domain)


CASES = ([_unpool_case(n, kw, out) for n in (1, 2, 3) for kw in POOLS
          for out in (False, True) if out or kw != POOLS[1]] +   # (its default is smaller)
         [_unpool_case(2, POOLS[0], True, (3, 5, 6))] +                     # unbatched
         [_pool_case("adaptive_max_pool3d", lambda Fn, x: Fn.adaptive_max_pool3d(
             x, (2, None, 3)), SHAPES[3]),
          _pool_case("lp_pool3d", lambda Fn, x: Fn.lp_pool3d(x, 2, (2, 3, 2), 1),
                     SHAPES[3], "positive"),
          _pool_case("lp_pool3d_ceil", lambda Fn, x: Fn.lp_pool3d(x, 3, 2, ceil_mode=True),
                     (2, 3, 3, 5), "positive")])


@pytest.mark.parametrize("case", CASES, ids=str)
def test_as_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


# (not the overlapping pools: an input another overwrote still gets g at its place, as
# torch's gradient, which is then not the derivative gradcheck measures)
@pytest.mark.parametrize("case", [c for c in CASES if "stride', 1" not in c.name][::3],
                         ids=str)
def test_gradcheck(case):
    check_gradcheck(case, "cpu")


@pytest.mark.parametrize("case", CASES[1::4], ids=str)
def test_on_the_gpu_stand_in(case, spy):
    check_spy_matches_cpu(case, spy)


@pytest.mark.parametrize("n", [1, 2, 3])
def test_with_indices_spellings_as_torch(n):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(n).standard_normal(SHAPES[n])
    for name, args in ((f"max_pool{n}d_with_indices", (2,)),
                       (f"adaptive_max_pool{n}d_with_indices", (3,))):
        mine = getattr(F, name)(mg.tensor(x), *args)
        theirs = getattr(torch.nn.functional, name)(torch.tensor(x), *args)
        assert isinstance(mine, tuple) and len(mine) == 2, name
        np.testing.assert_array_equal(mine[0].numpy(), theirs[0].numpy())
        np.testing.assert_array_equal(mine[1].numpy(), theirs[1].numpy())


def test_modules_as_torch():
    torch = pytest.importorskip("torch")
    for mine, theirs in ((nn.MaxUnpool2d(2), torch.nn.MaxUnpool2d(2)),
                         (nn.MaxUnpool1d(3, stride=2, padding=1),
                          torch.nn.MaxUnpool1d(3, stride=2, padding=1)),
                         (nn.MaxUnpool3d((2, 2, 1)), torch.nn.MaxUnpool3d((2, 2, 1))),
                         (nn.AdaptiveMaxPool3d(2, True), torch.nn.AdaptiveMaxPool3d(2, True)),
                         (nn.LPPool3d(2, 3), torch.nn.LPPool3d(2, 3)),
                         (nn.FeatureAlphaDropout(0.2), torch.nn.FeatureAlphaDropout(0.2))):
        assert repr(mine) == repr(theirs)
    out, idx, shape = _pooled(2, POOLS[1])
    up = nn.MaxUnpool2d(3, 2, 1)(mg.tensor(out), mg.tensor(idx), output_size=shape)
    ref = torch.nn.MaxUnpool2d(3, 2, 1)(torch.tensor(out), torch.tensor(idx),
                                        output_size=shape)
    np.testing.assert_array_equal(up.numpy(), ref.numpy())
    values, places = nn.AdaptiveMaxPool3d(2, return_indices=True)(mg.randn(1, 2, 4, 4, 4))
    assert values.shape == places.shape == (1, 2, 2, 2, 2)


def test_feature_alpha_dropout_drops_whole_channels_as_torch():
    torch = pytest.importorskip("torch")
    mg.manual_seed(0)
    x = mg.ones(64, 8, 3, 2)
    y = F.feature_alpha_dropout(x, 0.5, training=True).numpy()
    assert (y == y[:, :, :1, :1]).all()                        # one value per channel
    dropped, kept = np.unique(y)                               # (sorted: -0.78, 1.67)
    theirs = np.unique(torch.nn.functional.feature_alpha_dropout(
        torch.ones(64, 8, 3, 2), 0.5, training=True).numpy())
    np.testing.assert_allclose([dropped, kept], theirs, rtol=1e-6)
    assert 0.35 < (y[:, :, 0, 0] == kept).mean() < 0.65
    two_d = F.feature_alpha_dropout(mg.ones(200, 3), 0.5, True).numpy()   # each value
    assert len(np.unique(two_d[:, 0])) == 2
    assert F.feature_alpha_dropout(x, 0.5) is x                            # training=False
    assert not F.feature_alpha_dropout(x, 1.0, True).numpy().any()
    m = nn.FeatureAlphaDropout(0.3).eval()
    assert m(x) is x


def test_feature_alpha_dropout_gradient_is_the_scale_of_each_kept_channel():
    mg.manual_seed(1)
    x = mg.randn(4, 5, 3, requires_grad=True)
    y = F.feature_alpha_dropout(x, 0.4, True)
    y.sum().backward()
    grad = x.grad.numpy()
    a = ((1 - 0.4) * (1 + 0.4 * (1.0507009873554805 * 1.6732632423543772) ** 2)) ** -0.5
    np.testing.assert_allclose(np.unique(grad), [0.0, a], rtol=1e-6)
    assert (grad == grad[:, :, :1]).all()


def test_max_unpool_of_an_empty_batch_as_torch():
    # N = 0 is valid (torch gives (0, 3, 4, 4)); a reshape(-1) could not infer the plane size
    x = mg.zeros(0, 3, 2, 2, requires_grad=True)
    y = F.max_unpool2d(x, mg.zeros(0, 3, 2, 2, dtype=mg.int64), 2)
    assert y.shape == (0, 3, 4, 4)
    y.sum().backward()
    assert x.grad.shape == (0, 3, 2, 2)
    assert nn.MaxUnpool1d(2)(mg.zeros(0, 2, 3), mg.zeros(0, 2, 3, dtype=mg.int64),
                             output_size=(0, 2, 7)).shape == (0, 2, 7)


def test_feature_alpha_dropout_checks_dims_only_when_it_draws_channels():
    # as torch: eval, p = 0 and empty inputs pass any shape through, p = 1 zeros it
    x = mg.ones(3)
    assert F.feature_alpha_dropout(x, 0.5, False) is x
    assert nn.FeatureAlphaDropout(0.5).eval()(x) is x
    assert F.feature_alpha_dropout(x, 0.0, True) is x
    assert F.feature_alpha_dropout(mg.ones(0), 0.5, True).shape == (0,)
    assert not F.feature_alpha_dropout(x, 1.0, True).numpy().any()


@pytest.mark.parametrize("call, error, words", [
    (lambda o, i: F.max_unpool2d(o, i * 10, 2), IndexError, "invalid max index"),
    (lambda o, i: F.max_unpool2d(o, i, 2, output_size=(7, 7)), ValueError,
     "must be between 2 and 6"),
    (lambda o, i: F.max_unpool2d(o, i, 2, output_size=(5,)), ValueError,
     "2 or 4 elements"),
    (lambda o, i: F.max_unpool2d(o, i[:, :1], 2, output_size=(5, 6)), ValueError,
     "indices of the input's shape"),
    (lambda o, i: F.max_unpool2d(o, i.float(), 2), TypeError, "int64"),
    (lambda o, i: F.max_unpool2d(o[0, 0], i[0, 0], 2), ValueError, "3D or 4D input"),
    (lambda o, i: F.max_unpool2d(o, i.numpy(), 2), TypeError, "got ndarray"),
    (lambda o, i: F.max_unpool1d(o[0], i[0], 2, output_size=7), TypeError,
     "output_size must be a sequence"),
    (lambda o, i: F.feature_alpha_dropout(mg.ones(3), 0.5, True), ValueError,
     "at least 2 dimensions"),
    (lambda o, i: F.feature_alpha_dropout(o, 1.5, True), ValueError,
     "between 0 and 1"),
])
def test_errors(call, error, words):
    out, idx, _ = _pooled(2, POOLS[0])
    with pytest.raises(error, match=words):
        call(mg.tensor(out), mg.tensor(idx))
