"""Pooling (ops/pool.py, nn/pool.py): max, average, Lp and adaptive pools in 1, 2 and 3 dims
against torch (values, indices, gradients, second order) over their options, gradcheck in
float64, the fast backward against the reference, the spy device, modules and errors."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from op_helpers import (OpCase, check_vs_torch, check_gradcheck, check_fast_backward,
                        check_double_backward_vs_torch, check_spy_matches_cpu)

SHAPES = {1: (2, 3, 7), 2: (2, 2, 7, 6), 3: (1, 2, 4, 5, 3)}


def _case(name, n, call, shape=None, domain="real"):
    """An OpCase calling `call(F, x)`: F is minigrad's functional or torch's."""
    def torch_fn(x):
        import torch.nn.functional as TF
        return call(TF, x)
    return OpCase(f"{name}{n}d", lambda x: call(F, x), (shape or SHAPES[n],),
                  torch_fn=torch_fn, domain=domain)


MAX = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
       dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
       dict(kernel_size=2, stride=1, padding=1, dilation=2),
       dict(kernel_size=(3, 2, 2), stride=(2, 1, 3), ceil_mode=True)]
AVG = [dict(kernel_size=2), dict(kernel_size=3, stride=2, padding=1),
       dict(kernel_size=3, stride=2, padding=1, ceil_mode=True),
       dict(kernel_size=3, stride=2, padding=1, ceil_mode=True, count_include_pad=False),
       dict(kernel_size=(2, 3, 2), stride=(3, 1, 2), ceil_mode=True)]


def _sized(kw, n):
    """kw with tuple sizes cut to n dims."""
    return {k: v[:n] if isinstance(v, tuple) else v for k, v in kw.items()}


CASES = (
    [_case("max_pool", n, lambda F, x, n=n, kw=kw: getattr(F, f"max_pool{n}d")(x, **_sized(
        kw, n))) for n in (1, 2, 3) for kw in MAX] +
    [_case("avg_pool", n, lambda F, x, n=n, kw=kw: getattr(F, f"avg_pool{n}d")(x, **_sized(
        kw, n))) for n in (1, 2, 3) for kw in AVG] +
    [_case("avg_pool_divisor_override", n, lambda F, x, n=n: getattr(F, f"avg_pool{n}d")(
        x, 3, 2, 1, True, divisor_override=5)) for n in (2, 3)] +
    [_case("adaptive_avg_pool", n, lambda F, x, n=n, o=o: getattr(
        F, f"adaptive_avg_pool{n}d")(x, o)) for n in (1, 2, 3)
     for o in (1, 4, (3, None, 2)[:n] if n > 1 else 5)] +
    [_case("adaptive_max_pool", n, lambda F, x, n=n, o=o: getattr(
        F, f"adaptive_max_pool{n}d")(x, o)) for n in (1, 2) for o in (1, 4, (3, None)[:n])] +
    # sizes that divide the input's (max pool's windows) and not, in 3 dims
    [_case("adaptive_max_pool", 3, lambda F, x, o=o: F.adaptive_max_pool3d(x, o))
     for o in ((2, 5, 1), (3, 2, 2))] +
    [_case("lp_pool", n, lambda F, x, n=n, p=p, kw=kw: getattr(F, f"lp_pool{n}d")(
        x, p, **kw), domain="positive") for n in (1, 2)
     for p, kw in ((2, dict(kernel_size=2)), (3, dict(kernel_size=3, stride=2,
                                                         ceil_mode=True)))] +
    # unbatched (C, *spatial) inputs
    [_case("max_pool_unbatched", 2, lambda F, x: F.max_pool2d(x, 2), (3, 4, 5)),
     _case("avg_pool_unbatched", 1, lambda F, x: F.avg_pool1d(x, 3, 1, 1), (3, 6)),
     _case("adaptive_max_unbatched", 2, lambda F, x: F.adaptive_max_pool2d(x, 3), (2, 5, 4))])


@pytest.mark.parametrize("case", CASES, ids=str)
def test_as_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES[::3], ids=str)
def test_gradcheck(case):
    check_gradcheck(case, "cpu")


@pytest.mark.parametrize("case", CASES[::4], ids=str)
def test_double_backward_as_torch(case):
    check_double_backward_vs_torch(case, "cpu")


@pytest.mark.parametrize("case", CASES[::2], ids=str)
def test_on_the_gpu_stand_in(case, spy):
    check_spy_matches_cpu(case, spy)


@pytest.mark.parametrize("n, kw", [(1, dict(kernel_size=3, stride=2, padding=1)),
                                   (2, dict(kernel_size=(3, 2), stride=1, ceil_mode=True)),
                                   (3, dict(kernel_size=2, padding=1, divisor_override=3))])
def test_avg_pool_fast_backward_is_the_reference(n, kw, dtype):
    """AvgPool's backward_arrays (the spread of g/divisor on arrays) gives what its
    reference (AvgPoolSpread, twice differentiable) gives."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPES[n]).astype(dtype)
    y = getattr(F, f"avg_pool{n}d")(mg.tensor(x), **kw)
    check_fast_backward(lambda t: getattr(F, f"avg_pool{n}d")(t, **kw), x,
                        rng.standard_normal(y.shape), what=f"avg_pool{n}d{kw}")


# ---- indices, ties, NaN and -inf as torch --------------------------------------------------
NAN, INF = float("nan"), float("inf")


@pytest.mark.parametrize("values, kw", [
    ([2.0, 2.0, 1.0, 1.0, 3.0, 3.0], dict(kernel_size=3, stride=1, padding=1)),   # ties
    ([1.0, NAN, 3.0, NAN, 2.0, 2.0], dict(kernel_size=4, stride=2, padding=1)),   # NaN
    ([-INF, -INF, -INF, 0.0, -INF], dict(kernel_size=2, padding=1)),   # -inf and padding
    ([5.0, 1.0, 4.0, 4.0, 2.0, 0.0, 7.0], dict(kernel_size=2, dilation=3, ceil_mode=True)),
    # the first window reads the padding and -inf, not 5: its first place in the input
    ([5.0, -INF, -INF, 1.0], dict(kernel_size=2, stride=1, padding=1, dilation=2))])
def test_max_pool_picks_and_indices_as_torch(values, kw):
    torch = pytest.importorskip("torch")
    x = np.array([[values]])
    t = torch.tensor(x, requires_grad=True)
    want, want_at = torch.nn.functional.max_pool1d(t, return_indices=True, **kw)
    want.sum().backward()
    m = mg.tensor(x, requires_grad=True)
    got, at = F.max_pool1d(m, return_indices=True, **kw)
    got.sum().backward()
    np.testing.assert_array_equal(got.numpy(), want.detach().numpy())
    assert at.dtype == mg.int64
    np.testing.assert_array_equal(at.numpy(), want_at.numpy())
    np.testing.assert_array_equal(m.grad.numpy(), t.grad.numpy())   # g went to the same one


@pytest.mark.parametrize("n, call", [
    (2, lambda F, x: F.max_pool2d(x, 3, 2, 1, ceil_mode=True, return_indices=True)),
    (3, lambda F, x: F.max_pool3d(x, 2, (1, 2, 2), 1, dilation=(2, 1, 1),
                                  return_indices=True)),
    (1, lambda F, x: F.adaptive_max_pool1d(x, 3, return_indices=True)),
    (2, lambda F, x: F.adaptive_max_pool2d(x, (4, 3), return_indices=True)),
    (2, lambda F, x: F.adaptive_max_pool2d(x, (7, 2), return_indices=True)),     # divides
    (3, lambda F, x: F.adaptive_max_pool3d(x, (3, 5, 2), return_indices=True))])
def test_indices_as_torch(n, call):
    """Flat positions within each (*spatial) plane, as torch; integer inputs are pooled
    too (rounded to few values, so ties are many)."""
    torch = pytest.importorskip("torch")
    import torch.nn.functional as TF
    x = np.round(np.random.default_rng(3).standard_normal(SHAPES[n]))
    got, at = call(F, mg.tensor(x))
    want, want_at = call(TF, torch.tensor(x))
    np.testing.assert_array_equal(got.numpy(), want.numpy())
    np.testing.assert_array_equal(at.numpy(), want_at.numpy())


def _in_padding(F, x):
    """Windows at -2, -1, 0 reading 2 places 4 apart of 3: the middle one reads none."""
    return F.max_pool1d(x, 2, 1, 2, 4)


def test_max_pool_window_wholly_in_the_padding_is_minus_inf_as_torch():
    """A dilation larger than the input can leave a window nothing but padding: its max is
    -inf (the fill; gradient 0), its index PyTorch's, past the input; not an input value."""
    torch = pytest.importorskip("torch")
    x = np.array([[[1.0, 2.0]]])                     # one window, at -1 and 2
    want, want_at = torch.nn.functional.max_pool1d(torch.tensor(x), 2, 3, 1, 3,
                                                   return_indices=True)
    got, at = F.max_pool1d(mg.tensor(x), 2, 3, 1, 3, return_indices=True)
    assert got.numpy().tolist() == want.numpy().tolist() == [[[-np.inf]]]
    assert at.numpy().tolist() == want_at.numpy().tolist() == [[[2]]]
    x = np.random.default_rng(0).standard_normal((2, 3, 3))
    m = mg.tensor(x, requires_grad=True)
    got = _in_padding(F, m)            # (torch refuses padding over half the kernel size)
    np.testing.assert_array_equal(got.detach().numpy(), np.stack(
        [x[..., 2], np.full(x.shape[:-1], -np.inf), x[..., 0]], -1))
    got.sum().backward()                             # to x[2] and x[0], not to the middle
    np.testing.assert_array_equal(m.grad.numpy(), np.broadcast_to([1.0, 0.0, 1.0], x.shape))
    ints = _in_padding(F, mg.tensor(np.ones((1, 3), np.int32)))
    assert ints.numpy().tolist() == [[1, np.iinfo(np.int32).min, 1]]


def test_max_pool_window_wholly_in_the_padding_on_the_gpu_stand_in(spy):
    check_spy_matches_cpu(OpCase("max_pool_in_padding", lambda x: _in_padding(F, x),
                                 ((2, 3, 3),)), spy)


def _geometries(count, seed):
    """Random pool geometries (1 to 3 dims; padding, dilation, ceil_mode), as Windows."""
    from minigrad.ops.pool import Windows
    rng, found = np.random.default_rng(seed), []
    while len(found) < count:
        n = int(rng.integers(1, 4))
        size, kernel, stride, dilation = (tuple(int(v) for v in rng.integers(1, hi, n))
                                          for hi in (7, 4, 4, 3))
        padding = tuple(int(rng.integers(0, (d * (k - 1) + 1) // 2 + 1))
                        for k, d in zip(kernel, dilation))
        try:
            found.append(Windows("t", size, kernel, stride, padding, dilation,
                                 bool(rng.integers(2))))
        except ValueError:                           # no window fits: draw again
            pass
    return rng, found


def test_grid_max_is_the_window_views_first_max():
    """Max pool's maxima on the grid and their places found by matching (_grid_max) against
    the reference, the running first maximum over the strided view of the windows
    (_first_max): the same places (ties, NaN, -inf beside the padding, windows wholly in
    it, integers at their minimum), and the same values, with and without the places."""
    from minigrad.ops.pool import _grid_max, _first_max, _empty_windows
    rng, geos = _geometries(150, 5)
    for i, geo in enumerate(geos):
        if i % 3 == 2:
            fill = np.iinfo(np.int32).min
            x = rng.integers(-3, 3, (2, 2) + geo.spatial).astype(np.int32)
            x[rng.random(x.shape) < 0.3] = fill
        else:
            fill, x = -np.inf, rng.integers(-2, 2, (2, 2) + geo.spatial).astype(np.float32)
            x[rng.random(x.shape) < 0.3] = -np.inf
            x[rng.random(x.shape) < 0.2 * (i % 3)] = np.nan
        want = _first_max(np, geo.view(np, x, fill), geo.tables(), geo.spatial)
        flat = x.reshape(x.shape[:2] + (-1,))
        want_values = np.where(_empty_windows(geo.tables(), geo.spatial), fill,
                               np.take_along_axis(flat, np.minimum(want, flat.shape[-1] - 1)
                                                  .reshape(flat.shape[:2] + (-1,)), -1)
                               .reshape(want.shape))
        values, at = _grid_max(np, geo, x, fill, True)
        # host=True: the NaNs' places looked for only where there are NaNs
        host_values, host_at = _grid_max(np, geo, x, fill, True, host=True)
        only, none = _grid_max(np, geo, x, fill, False)
        what = f"{geo.spatial} {geo.kernel} {geo.stride} {geo.padding} {geo.dilation}"
        np.testing.assert_array_equal(at, want, err_msg=what)
        np.testing.assert_array_equal(host_at, want, err_msg=what)
        np.testing.assert_array_equal(values, want_values, err_msg=what)
        np.testing.assert_array_equal(host_values, want_values, err_msg=what)
        np.testing.assert_array_equal(only, want_values, err_msg=what)
        assert at.dtype == np.int64 and none is None


def test_adaptive_max_is_the_references_first_max():
    """Adaptive max pool's maxima and places (_adaptive_max: max pool's grid where the sizes
    divide, else matching over the gathered windows) against the reference, the running
    first maximum over the gathered windows: ties, NaN, ±inf, integers; output sizes that
    divide the input's, that don't, larger than it; with and without the places."""
    from minigrad.ops.pool_more import _adaptive_max, _adaptive_first_max
    rng = np.random.default_rng(7)
    for i in range(120):
        n = 1 + i % 3
        spatial = tuple(rng.integers(1, 9, n))
        sizes = tuple(int(rng.integers(1, 2 * L + 1)) if rng.random() < 0.5 else
                      int(rng.choice([d for d in range(1, L + 1) if L % d == 0]))
                      for L in spatial)
        x = rng.integers(-2, 2, (2, 3) + spatial).astype(np.int64 if i % 4 == 3 else
                                                          np.float64)
        if x.dtype == np.float64:
            x[rng.random(x.shape) < 0.2] = rng.choice([np.inf, -np.inf])
            x[rng.random(x.shape) < 0.1 * (i % 3)] = np.nan
        want = _adaptive_first_max(np, x, sizes)
        want_values = np.take_along_axis(x.reshape(6, -1), want.reshape(6, -1), 1)
        what = f"{spatial} -> {sizes}, {x.dtype}"
        for host in (False, True):
            values, at = _adaptive_max(np, x, sizes, True, host)
            np.testing.assert_array_equal(at, want, err_msg=what)
            assert at.dtype == np.int64
            np.testing.assert_array_equal(values.reshape(6, -1), want_values, err_msg=what)
        only, none = _adaptive_max(np, x, sizes, False, True)
        assert none is None
        np.testing.assert_array_equal(only.reshape(6, -1), want_values, err_msg=what)


@pytest.mark.parametrize("size", [(2, 3), (3, 4), (6, 2), 1])
def test_adaptive_max_pool_special_values_as_torch(size):
    """Values, indices and gradients with ties, NaN (the last NaN wins) and ±inf, as
    torch's, for sizes that divide the input's (6, 6) and that don't."""
    torch = pytest.importorskip("torch")
    x = np.round(np.random.default_rng(8).standard_normal((2, 3, 6, 6)))
    x[0, 0, :3, :3] = -np.inf
    x[0, 1, 1, 1] = x[0, 1, 4, 2] = x[1, 2, 2, 5] = np.nan
    x[1, 0, 3:, :] = np.inf
    t = torch.tensor(x, requires_grad=True)
    want, want_at = torch.nn.functional.adaptive_max_pool2d(t, size, return_indices=True)
    upstream = np.random.default_rng(9).standard_normal(want.shape)
    want.backward(torch.tensor(upstream))
    m = mg.tensor(x, requires_grad=True)
    got, at = F.adaptive_max_pool2d(m, size, return_indices=True)
    got.backward(mg.tensor(upstream))
    np.testing.assert_array_equal(got.numpy(), want.detach().numpy())
    np.testing.assert_array_equal(at.numpy(), want_at.numpy())
    np.testing.assert_array_equal(m.grad.numpy(), t.grad.numpy())


@pytest.mark.parametrize("size", [(2, 3), (3, 4), 1])
def test_adaptive_avg_pool_of_inf_and_nan_reaches_only_their_windows(size):
    """An infinite or NaN value makes only the windows that hold it inf or NaN, as torch's
    (the averaging product spread 0·inf = NaN to every window), and the gradient is the
    same linear map's."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(8).standard_normal((2, 3, 6, 7))
    x[0, 0, 0, 0], x[0, 1, 3, 3], x[0, 1, 2, 3], x[1, 2, 5, 6] = np.inf, np.inf, -np.inf, np.nan
    t = torch.tensor(x, requires_grad=True)
    want = torch.nn.functional.adaptive_avg_pool2d(t, size)
    upstream = np.random.default_rng(9).standard_normal(want.shape)
    want.backward(torch.tensor(upstream))
    m = mg.tensor(x, requires_grad=True)
    got = F.adaptive_avg_pool2d(m, size)
    got.backward(mg.tensor(upstream))
    np.testing.assert_allclose(got.numpy(), want.detach().numpy(), rtol=1e-12)
    np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=1e-12)


def test_window_sums_and_their_spread_match_the_window_view():
    """avg pool's window sums on the grid against the sums over the strided view of the
    windows, and the spread as their transpose: <spread(g), x> = <g, sums(x)> (integers in
    float64: exact)."""
    rng, geos = _geometries(100, 6)
    for geo in geos:
        n = len(geo.spatial)
        x = rng.integers(-5, 5, (2, 3) + geo.spatial).astype(np.float64)
        g = rng.integers(-5, 5, (2, 3) + geo.out).astype(np.float64)
        sums = geo.sums(np, x, np.float64)
        np.testing.assert_array_equal(sums, geo.view(np, x, 0).sum(tuple(range(-n, 0))))
        spread = geo.spread(np, g)
        assert spread.shape == x.shape and (spread * x).sum() == (g * sums).sum()


def test_max_pool_without_a_gradient_skips_the_places():
    """Under no_grad (or for an input not requiring grad) the maxima are the answer, read
    off the grid with no places found and no indexing: the same values as with them, and
    no graph."""
    x = np.random.default_rng(4).standard_normal((2, 3, 9, 8)).astype(np.float32)
    x[0, 0, :3, :3] = -np.inf
    x[1, 2, 4, 4] = np.nan
    with_grad = F.max_pool2d(mg.tensor(x, requires_grad=True), 3, 2, 1, ceil_mode=True)
    with mg.no_grad():
        plain = F.max_pool2d(mg.tensor(x, requires_grad=True), 3, 2, 1, ceil_mode=True)
    assert plain.grad_fn is None and with_grad.grad_fn is not None
    np.testing.assert_array_equal(plain.numpy(), with_grad.detach().numpy())
    assert F.max_pool2d(mg.tensor(x[0]), 2).shape == (3, 4, 4)    # unbatched


def test_max_pool_without_a_gradient_on_the_gpu_stand_in(spy):
    x = np.random.default_rng(4).standard_normal((2, 3, 9, 8)).astype(np.float32)
    x[1, 2, 4, 4] = np.nan
    got = F.max_pool2d(mg.tensor(x, device=spy), 3, 2, 1, ceil_mode=True)
    np.testing.assert_array_equal(got.cpu().numpy(), F.max_pool2d(
        mg.tensor(x), 3, 2, 1, ceil_mode=True).numpy())


def test_adaptive_avg_pool_of_the_same_size_is_a_copy():
    """Nothing to pool: still a new tensor (PyTorch's), so writing into it leaves x alone."""
    for x, size in ((mg.zeros(2, 3, 4, 4), 4), (mg.zeros(3, 4, 5), (4, None))):
        y = F.adaptive_avg_pool2d(x, size)
        y.add_(1)
        assert y.shape == x.shape and float(x.abs().sum()) == 0


def test_avg_pool_of_float16_sums_in_float32_as_torch():
    """25 values of 3000 sum past float16's 65504: the mean is still 3000, as PyTorch's."""
    x = mg.full((1, 1, 5, 5), 3000.0, dtype=mg.float16)
    y = F.avg_pool2d(x, 5)
    assert y.dtype == mg.float16 and y.numpy().ravel().tolist() == [3000.0]


def test_integer_max_pool_and_empty_batches():
    torch = pytest.importorskip("torch")
    x = np.arange(48).reshape(1, 3, 4, 4) % 7
    got = F.max_pool2d(mg.tensor(x), 2, 1, 1)
    assert got.dtype == mg.int64
    np.testing.assert_array_equal(got.numpy(), torch.nn.functional.max_pool2d(
        torch.tensor(x), 2, 1, 1).numpy())
    assert F.max_pool2d(mg.zeros(0, 2, 4, 4), 2).shape == (0, 2, 2, 2)
    assert F.avg_pool1d(mg.zeros(0, 2, 4), 2).shape == (0, 2, 2)
    assert F.adaptive_avg_pool2d(mg.zeros(2, 3, 4, 4), (0, 2)).shape == (2, 3, 0, 2)


@pytest.mark.parametrize("n", [1, 2, 3])
@pytest.mark.parametrize("kind", ["avg", "max"])
@pytest.mark.parametrize("lead", [(0, 3), (0,), (2, 0), (0, 0)])
def test_adaptive_pools_of_no_channels_as_torch(n, kind, lead):
    """PyTorch 2.13's adaptive pools take an empty batch, no channels unbatched, and
    batched no channels only in the 1d and 2d average pools: the empty result, and the
    empty gradient; what PyTorch refuses is refused, naming the dims."""
    torch = pytest.importorskip("torch")
    shape, name = lead + (5,) * n, f"adaptive_{kind}_pool{n}d"
    try:
        want = getattr(torch.nn.functional, name)(torch.zeros(shape), 3)
    except RuntimeError:
        with pytest.raises(ValueError, match="other than the batch are not empty"):
            getattr(F, name)(mg.zeros(shape), 3)
        return
    x = mg.zeros(shape, requires_grad=True)
    got = getattr(F, name)(x, 3)
    assert got.shape == tuple(want.shape)
    got.sum().backward()
    assert x.grad.shape == shape
    if kind == "max":
        assert getattr(F, name)(x, 2, return_indices=True)[1].shape == lead + (2,) * n


def test_adaptive_pools_refuse_empty_spatial_dims():
    for x in (mg.zeros(2, 3, 0, 5), mg.zeros(0, 0, 5), mg.zeros(3, 0, 5)):
        with pytest.raises(ValueError, match="spatial dims are not empty"):
            F.adaptive_avg_pool2d(x, 2)


def test_lp_pool_of_zero_windows_has_zero_gradient_as_torch():
    """(Σ x²)^½ of a window of zeros (after a ReLU): PyTorch's gradient there is 0, not the
    NaN of ∞·0 from the square root's slope."""
    x = mg.zeros(1, 1, 4, requires_grad=True)
    with np.errstate(divide="ignore", invalid="ignore"):     # 0^(-½) on the way
        F.lp_pool1d(x, 2, 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.zeros((1, 1, 4)))


# ---- modules ----------------------------------------------------------------------------
@pytest.mark.parametrize("module, text", [
    (lambda nn: nn.MaxPool2d(3),
     "MaxPool2d(kernel_size=3, stride=3, padding=0, dilation=1, ceil_mode=False)"),
    (lambda nn: nn.MaxPool3d((3, 2, 2), stride=1, padding=1, dilation=2, ceil_mode=True),
     "MaxPool3d(kernel_size=(3, 2, 2), stride=1, padding=1, dilation=2, ceil_mode=True)"),
    (lambda nn: nn.AvgPool1d(3), "AvgPool1d(kernel_size=(3,), stride=(3,), padding=(0,))"),
    (lambda nn: nn.AvgPool2d(3, 2, 1), "AvgPool2d(kernel_size=3, stride=2, padding=1)"),
    (lambda nn: nn.AvgPool3d(2, divisor_override=2),
     "AvgPool3d(kernel_size=2, stride=2, padding=0)"),
    (lambda nn: nn.AdaptiveAvgPool2d((3, None)), "AdaptiveAvgPool2d(output_size=(3, None))"),
    (lambda nn: nn.AdaptiveMaxPool1d(3, return_indices=True),
     "AdaptiveMaxPool1d(output_size=3)"),
    (lambda nn: nn.LPPool1d(2, 3, stride=2, ceil_mode=True),
     "LPPool1d(norm_type=2, kernel_size=3, stride=2, ceil_mode=True)")])
def test_module_reprs_as_torch(module, text):
    assert repr(module(nn)) == text
    torch = pytest.importorskip("torch")
    assert repr(module(torch.nn)) == text


@pytest.mark.parametrize("make, n", [
    (lambda nn: nn.MaxPool1d(3, 2, 1, return_indices=True), 1),
    (lambda nn: nn.MaxPool2d(2, ceil_mode=True), 2), (lambda nn: nn.MaxPool3d(2), 3),
    (lambda nn: nn.AvgPool1d(3, 2, 1, count_include_pad=False), 1),
    (lambda nn: nn.AvgPool2d(3, 2, 1, divisor_override=2), 2),
    (lambda nn: nn.AvgPool3d(2, ceil_mode=True), 3),
    (lambda nn: nn.AdaptiveAvgPool1d(3), 1), (lambda nn: nn.AdaptiveAvgPool2d((2, None)), 2),
    (lambda nn: nn.AdaptiveAvgPool3d(2), 3),
    (lambda nn: nn.AdaptiveMaxPool1d(2, return_indices=True), 1),
    (lambda nn: nn.AdaptiveMaxPool2d(3), 2),
    (lambda nn: nn.LPPool1d(2, 2), 1), (lambda nn: nn.LPPool2d(1.5, (2, 3), 1), 2)])
def test_modules_as_torch(make, n):
    torch = pytest.importorskip("torch")
    x = np.abs(np.random.default_rng(1).standard_normal(SHAPES[n]))
    got, want = make(nn)(mg.tensor(x)), make(torch.nn)(torch.tensor(x))
    for g, w in zip(got if isinstance(got, tuple) else (got,),
                    want if isinstance(want, tuple) else (want,)):
        np.testing.assert_allclose(g.numpy(), w.numpy(), rtol=1e-12)


# ---- errors -----------------------------------------------------------------------------
@pytest.mark.parametrize("call, error, words", [
    (lambda x: F.max_pool2d(x, 3, padding=2), ValueError, "at most half of effective kernel"),
    (lambda x: F.avg_pool2d(x, 2, padding=2), ValueError, "at most half"),
    (lambda x: F.max_pool2d(x[0, 0], 2), ValueError, "3D or 4D input"),
    (lambda x: F.max_pool1d(x, 2), ValueError, "2D or 3D input"),
    (lambda x: F.max_pool2d(x, 6), ValueError, "too small"),
    (lambda x: F.max_pool2d(x, 0), ValueError, "kernel_size must be positive"),
    (lambda x: F.max_pool2d(x, 2, stride=0), ValueError, "stride must be positive"),
    (lambda x: F.max_pool2d(x, 2, dilation=0), ValueError, "dilation must be positive"),
    (lambda x: F.max_pool2d(x, 2, padding=-1), ValueError, "padding must be non-negative"),
    (lambda x: F.max_pool2d(x, (2, 2, 2)), TypeError, "a tuple of 2 ints"),
    (lambda x: F.max_pool2d(x, 2.5), TypeError, "kernel_size must be an int"),
    (lambda x: F.avg_pool2d(x, 2, divisor_override=0), ValueError, "must not be zero"),
    (lambda x: F.avg_pool2d(x.long(), 2), TypeError, "floating-point"),
    (lambda x: F.adaptive_avg_pool2d(x, (3,) * 3), ValueError, "tuple of 2 ints"),
    (lambda x: F.adaptive_max_pool2d(x, -1), TypeError, "non-negative ints"),
    (lambda x: F.max_pool2d(mg.zeros(1, 0, 4, 4), 2), ValueError, "not empty"),
    (lambda x: F.max_pool2d(x.numpy(), 2), TypeError, "must be a Tensor"),
    (lambda x: F.lp_pool2d(x, 0, 2), ValueError, "norm_type must be nonzero")])
def test_errors_name_the_problem(call, error, words):
    with pytest.raises(error, match=words):
        call(mg.randn(1, 2, 5, 5))
