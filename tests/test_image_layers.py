"""The image-style layers besides pooling and normalisation: F.interpolate / nn.Upsample
(all modes, antialias, lanczos; and nn.UpsamplingNearest2d / UpsamplingBilinear2d),
pixel (un)shuffle, channel shuffle, Softmax2d, F.bilinear / nn.Bilinear, F.pad's reflect,
replicate and circular modes and the padding modules, and channel / alpha dropout — against
torch (values, gradients, second order), gradcheck, the spy device, reprs and errors."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from op_helpers import (OpCase, check_vs_torch, check_gradcheck, check_spy_matches_cpu,
                        check_double_backward_vs_torch)


def _case(name, call, shapes):
    """An OpCase calling `call(F, *tensors)`, F minigrad's functional or torch's."""
    def torch_fn(*xs):
        import torch.nn.functional as TF
        return call(TF, *xs)
    return OpCase(name, lambda *xs: call(F, *xs), shapes, torch_fn=torch_fn)


SPATIAL = {"linear": (2, 3, 5), "bilinear": (1, 2, 4, 5), "trilinear": (1, 2, 3, 2, 4)}
RESIZES = [dict(scale_factor=2), dict(scale_factor=0.6), dict(size=7), dict(size=1),
           dict(scale_factor=1.7, recompute_scale_factor=True)]
CASES = (
    [_case(f"interpolate_{mode}_{kw}_{corners}",
           lambda F, x, mode=mode, kw=kw, c=corners: F.interpolate(x, mode=mode,
                                                                   align_corners=c, **kw),
           (SPATIAL[mode],))
     for mode in SPATIAL for kw in RESIZES for corners in (False, True)] +
    [_case(f"interpolate_nearest_{kw}", lambda F, x, kw=kw: F.interpolate(x, **kw), (s,))
     for kw in RESIZES[:3] for s in SPATIAL.values()] +
    [_case(f"interpolate_nearest-exact_{kw}",
           lambda F, x, kw=kw: F.interpolate(x, mode="nearest-exact", **kw), (s,))
     for kw in RESIZES for s in SPATIAL.values()] +
    [_case("interpolate_sizes", lambda F, x: F.interpolate(x, (3, 7), mode="bilinear"),
           ((1, 2, 4, 5),)),
     _case("pixel_shuffle", lambda F, x: F.pixel_shuffle(x, 2), ((2, 8, 3, 2),)),
     _case("pixel_unshuffle", lambda F, x: F.pixel_unshuffle(x, 3), ((3, 6, 3),)),
     _case("channel_shuffle", lambda F, x: F.channel_shuffle(x, 3), ((2, 6, 2),)),
     _case("bilinear", lambda F, a, b, w, c: F.bilinear(a, b, w, c),
           ((4, 3), (4, 2), (5, 3, 2), (5,))),
     _case("bilinear_batched", lambda F, a, b, w: F.bilinear(a, b, w),
           ((2, 3, 3), (2, 3, 2), (4, 3, 2)))] +
    [_case(f"pad_{mode}_{pad}", lambda F, x, mode=mode, pad=pad: F.pad(x, pad, mode=mode),
           (shape,)) for mode in ("reflect", "replicate", "circular")
     for shape, pad in (((2, 5), (2, 3)), ((1, 2, 5), (-1, 2)), ((2, 3, 4), (1, 2, 2, 0)),
                        ((1, 1, 3, 3, 4), (1, 2, 0, 1, 2, 1)))])


@pytest.mark.parametrize("case", CASES, ids=str)
def test_as_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES[::5], ids=str)
def test_gradcheck(case):
    check_gradcheck(case, "cpu")


@pytest.mark.parametrize("case", CASES[1::7], ids=str)
def test_double_backward_as_torch(case):
    check_double_backward_vs_torch(case, "cpu")


@pytest.mark.parametrize("case", CASES[2::4], ids=str)
def test_on_the_gpu_stand_in(case, spy):
    check_spy_matches_cpu(case, spy)


# bicubic, area and antialias: none keeps a dim's size under a scale_factor, where PyTorch's
# backward is not its forward's (see test_dims_that_keep_their_size_as_torch)
AA_RESIZES = [dict(scale_factor=0.3), dict(size=(3, 4)), dict(scale_factor=(1.6, 0.45)),
              dict(size=(13, 2)), dict(scale_factor=0.5, recompute_scale_factor=True)]
RESAMPLE_CASES = (
    [_case(f"interpolate_bicubic_{kw}_{corners}",
           lambda F, x, kw=kw, c=corners: F.interpolate(x, mode="bicubic", align_corners=c,
                                                        **kw), ((1, 2, 4, 5),))
     for kw in RESIZES + [dict(size=(2, 9))] for corners in (False, True)] +
    [_case(f"interpolate_area_{kw}", lambda F, x, kw=kw: F.interpolate(x, mode="area", **kw),
           (s,)) for kw in RESIZES for s in SPATIAL.values()] +
    [_case(f"interpolate_{mode}_antialias_{kw}_{corners}",
           lambda F, x, mode=mode, kw=kw, c=corners: F.interpolate(
               x, mode=mode, align_corners=c, antialias=True, **kw), ((1, 1, 9, 7),))
     for mode in ("bilinear", "bicubic") for kw in AA_RESIZES for corners in (False, True)] +
    # lanczos: batch and channels > 1, but 2 each: its gradcheck and gradgradcheck take
    # one forward per element, each as big as the input (quadratic in the input's size)
    [_case(f"interpolate_lanczos_{kw}_{corners}",        # (antialias only, no align_corners)
           lambda F, x, kw=kw, c=corners: F.interpolate(
               x, mode="lanczos", align_corners=c, antialias=True, **kw), ((2, 2, 9, 7),))
     for kw in AA_RESIZES + [dict(size=(9, 16)), dict(scale_factor=2.5)]
     for corners in (None, False)])


@pytest.mark.parametrize("case", RESAMPLE_CASES, ids=str)
def test_bicubic_area_antialias_as_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", RESAMPLE_CASES[::3], ids=str)
def test_bicubic_area_antialias_gradcheck(case):
    check_gradcheck(case, "cpu")


@pytest.mark.parametrize("case", RESAMPLE_CASES[1::4], ids=str)
def test_bicubic_area_antialias_double_backward_as_torch(case):
    check_double_backward_vs_torch(case, "cpu")


@pytest.mark.parametrize("case", RESAMPLE_CASES[2::5], ids=str)
def test_bicubic_area_antialias_on_the_gpu_stand_in(case, spy):
    check_spy_matches_cpu(case, spy)


@pytest.mark.parametrize("mode, shape, scale", [
    ("linear", (1, 2, 3), (1.2,)), ("linear", (1, 2, 10), (1.09,)),
    ("bilinear", (1, 2, 3, 4), (1.2, 2.0)), ("trilinear", (1, 1, 2, 3, 3), (1.5, 2.0, 1.2)),
    ("nearest", (1, 2, 4, 3), (1.7, 1.2)), ("nearest", (1, 2, 3), (1.2,)),
    ("nearest", (1, 1, 3, 2, 3), (1.2, 2.0, 1.2)), ("bicubic", (1, 2, 3, 4), (1.2, 2.0)),
    ("bicubic", (1, 2, 3, 3), (1.2, 1.2)), ("bilinear_aa", (1, 2, 3, 5), (1.2, 0.5)),
    ("lanczos_aa", (1, 2, 5, 3), (0.5, 1.2))])
def test_dims_that_keep_their_size_as_torch(mode, shape, scale):
    """A scale_factor that leaves a dim's size as it was (3·1.2 -> 3) but would shift its
    places: PyTorch's linear modes, 2-D nearest and antialias copy that dim, bicubic and 1-D
    and 3-D nearest resample it. Forward as torch's; the gradient is the forward's (PyTorch's
    backward copies where its bicubic and 1-D nearest forwards resampled every dim, and
    resamples where its antialias forward copied)."""
    torch = pytest.importorskip("torch")
    mode, antialias = mode.replace("_aa", ""), mode.endswith("_aa")
    x = np.random.default_rng(0).standard_normal(shape)
    mine = F.interpolate(mg.tensor(x), scale_factor=scale, mode=mode, antialias=antialias)
    theirs = torch.nn.functional.interpolate(torch.tensor(x), scale_factor=scale, mode=mode,
                                             antialias=antialias)
    np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-12, atol=1e-12)
    assert mg.gradcheck(lambda t: F.interpolate(t, scale_factor=scale, mode=mode,
                                                antialias=antialias),
                        [mg.tensor(x, requires_grad=True)])


def test_antialias_to_one_column_as_torch_on_the_transposed_image():
    """PyTorch 2.13's antialiased forward to a width of 1 from several rows gives every row
    the first one's value (its backward is right); minigrad's is the transposed image's."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(1).standard_normal((2, 3, 9, 4))
    for mode in ("bilinear", "bicubic", "lanczos"):
        mine = F.interpolate(mg.tensor(x), size=(3, 1), mode=mode, antialias=True).numpy()
        theirs = torch.nn.functional.interpolate(torch.tensor(x).transpose(2, 3), size=(1, 3),
                                                 mode=mode, antialias=True)
        np.testing.assert_allclose(mine, theirs.transpose(2, 3).numpy(), rtol=1e-12)


def test_lanczos_values():
    """Lanczos-3, sinc(x)·sinc(x/3), normalised over the places in its support (stretched
    by the scale when shrinking); PyTorch 2.13's values, float64, which it keeps."""
    down = F.interpolate(mg.arange(8.0, dtype=mg.float64).reshape(1, 1, 1, 8), size=(1, 3),
                         mode="lanczos", antialias=True)
    assert down.dtype == mg.float64
    np.testing.assert_allclose(down.numpy().ravel(), [0.8111426507713778, 3.5,
                                                      6.188857349228622], rtol=1e-12)
    up = F.interpolate(mg.arange(4.0, dtype=mg.float64).reshape(1, 1, 1, 4) ** 2,
                       size=(1, 9), mode="lanczos", antialias=True)
    np.testing.assert_allclose(up.numpy().ravel(), [
        -0.020562539188673956, 0.025290012207117477, 0.39424000824695765, 1.0918601677357072,
        1.9285714285714288, 3.68646352663503, 6.395430474129288, 8.510522270841529,
        9.59069537090698], rtol=1e-12, atol=1e-15)


@pytest.mark.filterwarnings("ignore:invalid value")    # (a real tap's 0·inf, as PyTorch's)
@pytest.mark.parametrize("mode", ["bilinear", "bicubic", "lanczos"])
def test_antialias_an_infinite_or_nan_place_reaches_only_the_outputs_reading_it(mode):
    """Each output reads as many places as the widest one's filter; the extra ones are
    padding and must add nothing, not 0·inf = NaN, as PyTorch's."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(2).standard_normal((1, 2, 5, 6))
    x[0, 0, 1, 1], x[0, 1, 3, 4] = np.inf, np.nan
    for size in [(2, 9), (8, 8), (3, 2)]:
        mine = F.interpolate(mg.tensor(x), size=size, mode=mode, antialias=True).numpy()
        theirs = torch.nn.functional.interpolate(torch.tensor(x), size=size, mode=mode,
                                                 antialias=True)
        np.testing.assert_allclose(mine, theirs.numpy(), rtol=1e-12, err_msg=f"{size}")


@pytest.mark.parametrize("kw", [dict(size=(0, 2)), dict(scale_factor=0.2)])
def test_area_to_an_empty_size_as_torch(kw):
    """'area' (adaptive average pooling) allows an empty output, as PyTorch's."""
    assert F.interpolate(mg.randn(1, 2, 3, 3), mode="area", **kw).shape == \
        (1, 2) + ((0, 2) if "size" in kw else (0, 0))


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode, sizes", [
    # (length, output length) where a source place lands within rounding of an integer, and
    # PyTorch's rounding (float32, or the input's float64) decides the side
    ("nearest", [(14, 46), (26, 22), (26, 44), (28, 46), (30, 58), (39, 33), (7, 3)]),
    ("nearest-exact", [(2, 41), (2, 47), (26, 11), (28, 23), (30, 29), (14, 23), (5, 3)])])
def test_nearest_modes_round_their_places_as_torch(mode, sizes, dtype):
    torch = pytest.importorskip("torch")
    for length, out in sizes:
        x = np.arange(length, dtype=dtype).reshape(1, 1, length)
        mine = F.interpolate(mg.tensor(x), size=out, mode=mode).numpy()
        theirs = torch.nn.functional.interpolate(torch.tensor(x), size=out, mode=mode)
        np.testing.assert_array_equal(mine, theirs.numpy(), err_msg=f"{length} -> {out}")



@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("mode, shape, kw", [
    # outputs of H + W <= 128: float32 places for any dtype, a dim of unchanged size copied
    # and a doubled one halved
    ("nearest-exact", (2, 2), dict(size=(2, 41))), ("nearest-exact", (3, 14), dict(size=(4, 23))),
    ("nearest", (2, 2), dict(size=(2, 82))), ("nearest", (4, 100), dict(scale_factor=(2.0001, 1))),
    # larger ones as 1-D and 3-D: a dim of unchanged size resampled
    ("nearest", (4, 200), dict(scale_factor=(1.01, 1))),
    ("nearest-exact", (2, 40), dict(size=(2, 133)))])
def test_2d_nearest_modes_take_torchs_two_kernels(mode, shape, kw, dtype):
    """PyTorch's 2-D nearest kernels: one for small outputs, the generic one for larger."""
    torch = pytest.importorskip("torch")
    x = np.arange(math.prod(shape), dtype=dtype).reshape((1, 1) + shape)
    mine = F.interpolate(mg.tensor(x), mode=mode, **kw).numpy()
    theirs = torch.nn.functional.interpolate(torch.tensor(x), mode=mode, **kw)
    np.testing.assert_array_equal(mine, theirs.numpy())

# ---- modules ----------------------------------------------------------------------------
@pytest.mark.parametrize("make", [
    lambda nn: nn.Upsample(scale_factor=2), lambda nn: nn.Upsample(size=(3, 4),
                                                                   mode="bilinear"),
    lambda nn: nn.Upsample(scale_factor=(2, 1.5), mode="bilinear", align_corners=True),
    lambda nn: nn.Upsample(scale_factor=2, mode="nearest-exact"),
    lambda nn: nn.Upsample(size=(3, 4), mode="bicubic", align_corners=True),
    lambda nn: nn.Upsample(scale_factor=0.5, mode="area"),
    lambda nn: nn.UpsamplingNearest2d(scale_factor=2), lambda nn: nn.UpsamplingNearest2d(3),
    lambda nn: nn.UpsamplingBilinear2d(size=(3, 4)),
    lambda nn: nn.PixelShuffle(2), lambda nn: nn.PixelUnshuffle(3),
    lambda nn: nn.ChannelShuffle(2), lambda nn: nn.Softmax2d(),
    lambda nn: nn.Dropout1d(0.2), lambda nn: nn.Dropout2d(0.3, inplace=True),
    lambda nn: nn.Dropout3d(), lambda nn: nn.AlphaDropout(0.1),
    lambda nn: nn.Bilinear(2, 3, 4), lambda nn: nn.Bilinear(2, 3, 4, bias=False),
    lambda nn: nn.ZeroPad1d(2), lambda nn: nn.ZeroPad2d((1, 2, 3, 4)), lambda nn: nn.ZeroPad3d(1),
    lambda nn: nn.ConstantPad1d(2, 3.5), lambda nn: nn.ConstantPad2d((1, 0, 2, 1), -1.0),
    lambda nn: nn.ConstantPad3d(1, 2.0), lambda nn: nn.ReflectionPad1d(2),
    lambda nn: nn.ReflectionPad2d((1, 2, 0, 1)), lambda nn: nn.ReflectionPad3d(1),
    lambda nn: nn.ReplicationPad1d(3), lambda nn: nn.ReplicationPad2d(1),
    lambda nn: nn.ReplicationPad3d((1, 0, 2, 1, 0, 1)), lambda nn: nn.CircularPad1d(1),
    lambda nn: nn.CircularPad2d((1, 2, 2, 1)), lambda nn: nn.CircularPad3d(1)])
def test_module_reprs_as_torch(make):
    torch = pytest.importorskip("torch")
    assert repr(make(nn)) == repr(make(torch.nn))


@pytest.mark.parametrize("make, shape", [
    (lambda nn: nn.Upsample(scale_factor=2, mode="linear", align_corners=True), (2, 3, 4)),
    (lambda nn: nn.Upsample(size=(5, 3)), (1, 2, 3, 4)),
    (lambda nn: nn.Upsample(scale_factor=(1.5, 0.7), mode="nearest-exact"), (1, 2, 3, 4)),
    (lambda nn: nn.Upsample(scale_factor=1.5, mode="bicubic"), (1, 2, 3, 4)),
    (lambda nn: nn.Upsample(size=(2, 3), mode="area"), (1, 2, 5, 4)),
    (lambda nn: nn.UpsamplingNearest2d(scale_factor=2), (1, 2, 3, 4)),
    (lambda nn: nn.UpsamplingBilinear2d(size=(5, 7)), (2, 1, 3, 4)),
    (lambda nn: nn.UpsamplingBilinear2d(scale_factor=1.5), (1, 2, 3, 3)),
    (lambda nn: nn.PixelShuffle(2), (1, 4, 2, 3)), (lambda nn: nn.PixelUnshuffle(2),
                                                    (1, 1, 4, 2)),
    (lambda nn: nn.ChannelShuffle(2), (2, 4, 3)), (lambda nn: nn.Softmax2d(), (2, 3, 2, 2)),
    (lambda nn: nn.Softmax2d(), (3, 2, 2)),
    (lambda nn: nn.ZeroPad2d((1, 0, 2, 1)), (1, 2, 3, 3)),
    (lambda nn: nn.ConstantPad1d((2, -1), 3.5), (2, 3, 4)),
    (lambda nn: nn.ReflectionPad2d(2), (1, 3, 3)), (lambda nn: nn.ReplicationPad3d(1),
                                                    (1, 2, 2, 2)),
    (lambda nn: nn.CircularPad1d((1, 3)), (1, 2, 4))])
def test_modules_as_torch(make, shape):
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal(shape)
    np.testing.assert_allclose(make(nn)(mg.tensor(x)).numpy(),
                               make(torch.nn)(torch.tensor(x)).numpy(), rtol=1e-12)


def test_bilinear_module_as_torch():
    torch = pytest.importorskip("torch")
    theirs = torch.nn.Bilinear(3, 2, 4).double()
    mine = nn.Bilinear(3, 2, 4, dtype=mg.float64)
    assert [n for n, _ in mine.named_parameters()] == ["weight", "bias"]
    mine.load_state_dict({k: mg.tensor(v.detach().numpy()) for k, v in
                          theirs.state_dict().items()})
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((5, 3)), rng.standard_normal((5, 2))
    np.testing.assert_allclose(mine(mg.tensor(a), mg.tensor(b)).numpy(),
                               theirs(torch.tensor(a), torch.tensor(b)).detach().numpy(),
                               rtol=1e-12)
    w = nn.Bilinear(4, 2, 3).weight.numpy()           # U(±1/√in1) as PyTorch's
    assert w.shape == (3, 4, 2) and np.abs(w).max() <= 0.5 and np.abs(w).max() > 0.2


# ---- dropout of channels, alpha dropout -------------------------------------------------
@pytest.mark.parametrize("fn, shape, kept", [(F.dropout1d, (40, 50, 3), 2),
                                             (F.dropout1d, (50, 3), 1),
                                             (F.dropout2d, (40, 50, 2, 2), 2),
                                             (F.dropout3d, (40, 50, 2, 1, 2), 2),
                                             (F.dropout3d, (50, 2, 1, 2), 1)])
def test_channel_dropout_zeroes_whole_channels(fn, shape, kept, device):
    mg.manual_seed(0)
    x = mg.tensor(np.random.default_rng(0).uniform(1, 2, shape), device=device,
                  requires_grad=True)
    y = fn(x, 0.3)
    (y * 1).sum().backward()
    ratio = (y / x).numpy()                        # 0 or 1/(1-p), the same along a channel
    per_channel = ratio.reshape(shape[:kept] + (-1,))
    np.testing.assert_allclose(per_channel, np.broadcast_to(per_channel[..., :1],
                                                            per_channel.shape), rtol=1e-12)
    assert set(np.unique(ratio.round(6))) <= {0.0, round(1 / 0.7, 6)}
    assert 0.2 < (per_channel[..., 0] == 0).mean() < 0.4
    np.testing.assert_allclose(x.grad.numpy(), ratio, rtol=1e-6)    # the mask is the grad
    assert fn(x, 0.3, training=False) is x
    assert np.all(fn(x, 1.0).numpy() == 0)


def test_dropout2d_of_a_3d_input_drops_its_channels_with_torch_warning():
    mg.manual_seed(1)
    with pytest.warns(UserWarning, match="dropout2d: received a 3D input"):
        y = F.dropout2d(mg.ones(30, 40, 5), 0.5).numpy()
    assert np.all(y == y[:, :, :1])                # (N, C, L): whole (n, c) rows


def test_channel_dropout_in_place_and_modules():
    mg.manual_seed(2)
    x = mg.ones(4, 6, 3)
    assert F.dropout1d(x, 0.5, inplace=True) is x
    assert set(np.unique(x.numpy())) <= {0.0, 2.0}
    m = nn.Dropout2d(0.5)
    y = m(mg.ones(8, 9, 2, 2)).numpy()
    assert np.all(y == y[:, :, :1, :1]) and 0 < (y == 0).mean() < 1
    m.eval()
    z = mg.ones(2, 3, 2, 2)
    assert m(z) is z


def test_alpha_dropout_keeps_mean_and_variance():
    """A standard normal input keeps mean 0 and variance 1 (the point of alpha dropout);
    dropped values are a·(-λα) + b, kept ones a·x + b; identity by default, as torch's
    F.alpha_dropout (training=False)."""
    mg.manual_seed(3)
    x = mg.tensor(np.random.default_rng(3).standard_normal(200_000))
    y = F.alpha_dropout(x, 0.2, training=True).numpy()
    assert abs(y.mean()) < 0.01 and abs(y.std() - 1) < 0.01
    p, floor = 0.2, -1.0507009873554805 * 1.6732632423543772
    a = ((1 - p) * (1 + p * floor ** 2)) ** -0.5
    b = -a * floor * p
    dropped = np.isclose(y, a * floor + b)
    assert 0.19 < dropped.mean() < 0.21
    np.testing.assert_allclose(y[~dropped], a * x.numpy()[~dropped] + b, rtol=1e-6)
    assert F.alpha_dropout(x, 0.2) is x
    assert np.all(nn.AlphaDropout(1.0)(x).numpy() == 0)


@pytest.mark.parametrize("call", [
    lambda x: F.pixel_shuffle(x, 1), lambda x: F.pixel_unshuffle(x, 1),
    lambda x: F.pixel_shuffle(x[:, :, :4, :1, :1], 2),      # 1×1 images: nothing moves
    lambda x: F.channel_shuffle(x, 1), lambda x: F.channel_shuffle(x, 4)])
def test_shuffles_that_move_nothing_are_copies(call):
    """As PyTorch's, a new tensor: writing into it leaves the input alone."""
    x = mg.zeros(2, 4, 4, 2, 2)
    y = call(x)
    y.add_(1)
    assert float(x.abs().sum()) == 0


# ---- errors -----------------------------------------------------------------------------
@pytest.mark.parametrize("call, error, words", [
    (lambda x: F.interpolate(x, mode="bilinear", scale_factor=2), NotImplementedError,
     "bilinear mode needs 4D input"),
    (lambda x: F.interpolate(x, scale_factor=2, align_corners=True), ValueError,
     "align_corners option can only be set"),
    (lambda x: F.interpolate(x, size=3, scale_factor=2), ValueError, "only one of"),
    (lambda x: F.interpolate(x, size=3, mode="nearest-exact", align_corners=False),
     ValueError, "align_corners option can only be set"),
    (lambda x: F.interpolate(x), ValueError, "either size or scale_factor"),
    (lambda x: F.interpolate(x, scale_factor=math.inf), ValueError, "positive number"),
    (lambda x: F.interpolate(x[:, :, :0], size=2), ValueError, "non-empty spatial"),
    (lambda x: F.interpolate(x, scale_factor=2, mode="bicubic"), NotImplementedError,
     "bicubic mode needs 4D input"),
    (lambda x: F.interpolate(x, scale_factor=2, mode="lanczos"), NotImplementedError,
     "lanczos mode needs 4D input"),
    (lambda x: F.interpolate(x, scale_factor=2, mode="lanczos2"), NotImplementedError,
     "'lanczos2' is not implemented; the modes are .*'lanczos'"),
    (lambda x: F.interpolate(x[None], size=2, mode="lanczos"), ValueError,
     "lanczos mode requires antialias=True"),
    (lambda x: F.interpolate(x[None], size=2, mode="lanczos", align_corners=True,
                             antialias=True), ValueError,
     "lanczos mode does not support align_corners=True"),
    (lambda x: F.interpolate(x, size=2, mode="lanczos", antialias=True), ValueError,
     "restricted to the bilinear, bicubic and lanczos modes, with a 4D input"),
    (lambda x: F.interpolate(x[None].int(), size=2, mode="lanczos", antialias=True),
     TypeError, "'lanczos' needs a floating-point input"),
    (lambda x: F.interpolate(x, size=2, mode="area", align_corners=False), ValueError,
     "align_corners option can only be set"),
    (lambda x: F.interpolate(x, size=2, mode="linear", antialias=True), ValueError,
     "antialias=True is restricted to the bilinear, bicubic and lanczos"),
    (lambda x: F.interpolate(x[None], size=2, mode="nearest", antialias=True), ValueError,
     "antialias=True is restricted"),
    (lambda x: F.interpolate(x[None].int(), size=2, mode="bicubic"), TypeError,
     "'bicubic' needs a floating-point input"),
    (lambda x: F.interpolate(x[None], size=0, mode="bicubic"), ValueError, "size"),
    (lambda x: F.interpolate(x, size=(2, 3)), ValueError, "must have 1 values"),
    (lambda x: F.interpolate(x[0], size=2), ValueError, "3D, 4D or 5D"),
    (lambda x: F.pixel_shuffle(x, 2), ValueError, "divisible by upscale_factor"),
    (lambda x: F.pixel_unshuffle(x, 2), ValueError, "divisible by downscale_factor"),
    (lambda x: F.channel_shuffle(x, 2), ValueError, "divisible by groups"),
    (lambda x: nn.Softmax2d()(x[0]), ValueError, "3D or 4D"),
    (lambda x: F.bilinear(x[0], x[0], mg.ones(2, 5, 4)), ValueError,
     "expects its last dim to be 4"),
    (lambda x: F.bilinear(x[0], x[:1, :2], mg.ones(2, 5, 5)), ValueError,
     "same leading dims"),
    (lambda x: F.pad(x, (5, 1), mode="reflect"), ValueError, "must be less than the size"),
    (lambda x: F.pad(x, (6, 1), mode="circular"), ValueError, "more than once"),
    (lambda x: F.pad(x, (1, 1), mode="replicate", value=2), ValueError, "takes no value"),
    (lambda x: F.pad(x, (1, 1) * 3, mode="reflect"), NotImplementedError,
     "6 pad values for an input of shape"),
    (lambda x: F.dropout1d(x[0, 0], 0.5), ValueError, "expected a 2D or 3D input"),
    (lambda x: F.dropout2d(x, 1.5), ValueError, "probability must be in"),
    (lambda x: F.alpha_dropout(x, -0.1), ValueError, "probability must be in"),
    (lambda x: F.interpolate(x, size=3, recompute_scale_factor=True), ValueError,
     "not meaningful with an explicit size"),
    (lambda x: nn.Upsample(scale_factor=0)(x), ValueError, "positive number"),
    (lambda x: F.pixel_shuffle(x.numpy(), 1), TypeError, "input must be a Tensor"),
    (lambda x: F.channel_shuffle(x.numpy(), 1), TypeError, "input must be a Tensor"),
    (lambda x: F.pad(x[:, :, :0], (1, 1), mode="replicate"), ValueError, "empty dim"),
    (lambda x: F.bilinear(x[0], x[0].double(), mg.ones(2, 5, 5)), TypeError,
     "float32, float64, float32; convert"),
    (lambda x: F.bilinear(x[0].numpy(), x[0], mg.ones(2, 5, 5)), TypeError,
     "input1 must be a Tensor")])
def test_errors_name_the_problem(call, error, words):
    with pytest.raises(error, match=words):
        call(mg.randn(3, 5, 5))


@pytest.mark.parametrize("name, kw", [
    ("upsample", dict(scale_factor=2, mode="bilinear", align_corners=False)),
    ("upsample", dict(size=(3, 5))), ("upsample_nearest", dict(scale_factor=(2, 1.5))),
    ("upsample_bilinear", dict(size=(4, 7)))])
def test_upsample_older_names_as_torch(name, kw):
    """F.upsample, upsample_nearest and upsample_bilinear (align_corners=True) are
    interpolate as PyTorch's older names: the values and the gradient."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(3).standard_normal((1, 2, 3, 4))
    got, want = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    with pytest.warns(UserWarning):                  # torch's deprecation notes
        y = getattr(torch.nn.functional, name)(want, **kw)
    g = getattr(F, name)(got, **kw)
    np.testing.assert_allclose(g.numpy(), y.detach().numpy(), rtol=1e-12)
    (g * g).sum().backward(), (y * y).sum().backward()
    np.testing.assert_allclose(got.grad.numpy(), want.grad.numpy(), rtol=1e-12)


def test_native_channel_shuffle_as_torch():
    torch = pytest.importorskip("torch")
    x = np.arange(24.0).reshape(1, 6, 2, 2)
    np.testing.assert_array_equal(F.native_channel_shuffle(mg.tensor(x), 3).numpy(),
                                  torch.native_channel_shuffle(torch.tensor(x), 3).numpy())
