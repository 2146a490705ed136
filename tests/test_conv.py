"""Convolutions (ops/conv.py, ops/conv_functional.py, nn/conv.py): F.conv1d/2d/3d,
F.conv_transpose1d/2d/3d, F.unfold/F.fold and their layers, against PyTorch (values and the
gradients of input, weight and bias, every device, float32 and float64), float64 gradient
checks to second order (no torch needed), the spy device, and the errors for bad
arguments."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
from nn_helpers import compare_with_torch, gradcheck_module
from op_helpers import (OpCase, check_vs_torch, check_gradcheck, check_spy_matches_cpu,
                        check_double_backward_vs_torch)

# torch's own note on 'same' with an even kernel (it pads a copy, as minigrad always does)
pytestmark = pytest.mark.filterwarnings("ignore:Using padding='same'")


def _case(fn_name, shapes, **kw):
    """F.<fn_name>(*inputs, **kw) on minigrad and torch.nn.functional alike."""
    def torch_fn(*ts):
        import torch
        return getattr(torch.nn.functional, fn_name)(*ts, **kw)
    args = ",".join(f"{k}={v}" for k, v in kw.items()).replace(" ", "")
    return OpCase(f"{fn_name}[{args}]", lambda *ts: getattr(F, fn_name)(*ts, **kw),
                  shapes, torch_fn)


CASES = [
    _case("conv1d", [(2, 4, 9), (6, 2, 3), (6,)], stride=2, padding=1, dilation=2, groups=2),
    _case("conv1d", [(2, 3, 7), (4, 3, 4)], padding="same"),     # even kernel: odd pad after
    _case("conv1d", [(3, 8), (2, 3, 3)], padding="valid"),       # unbatched
    _case("conv2d", [(2, 3, 6, 5), (4, 3, 3, 3), (4,)]),
    _case("conv2d", [(2, 3, 7, 6), (4, 3, 3, 2)], stride=(2, 1), padding=(1, 2),
          dilation=(1, 2)),
    _case("conv2d", [(2, 4, 5, 5), (8, 1, 3, 3), (8,)], padding=1, groups=4),   # depthwise
    _case("conv2d", [(1, 2, 5, 6), (4, 2, 2, 3)], padding="same", dilation=(2, 1)),
    _case("conv2d", [(3, 5, 4), (2, 3, 2, 2), (2,)], stride=2),                  # unbatched
    _case("conv3d", [(1, 2, 4, 5, 3), (4, 2, 2, 3, 2), (4,)], stride=(1, 2, 1),
          padding=(1, 0, 1)),
    _case("conv3d", [(2, 4, 3, 3, 3), (2, 2, 2, 1, 2)], padding="same", groups=2),
    _case("conv_transpose1d", [(2, 4, 5), (4, 3, 3), (3,)], stride=3, padding=1,
          output_padding=2),
    _case("conv_transpose1d", [(4, 5), (4, 1, 3)], groups=2, dilation=2),        # unbatched
    _case("conv_transpose2d", [(2, 4, 3, 4), (4, 3, 3, 2), (6,)], stride=2, padding=(1, 0),
          output_padding=(1, 0), groups=2, dilation=(1, 2)),
    # output_padding >= stride, allowed below the dilation
    _case("conv_transpose2d", [(1, 2, 3, 3), (2, 2, 2, 2)], dilation=2, output_padding=1),
    _case("conv_transpose3d", [(1, 2, 3, 2, 3), (2, 2, 2, 2, 2), (2,)], stride=2,
          output_padding=(1, 0, 1), padding=(0, 1, 0)),
    _case("unfold", [(2, 3, 5, 6)], kernel_size=(2, 3), dilation=(1, 2), padding=1,
          stride=(2, 1)),
    _case("unfold", [(3, 4, 3)], kernel_size=1),                 # a reshape, but a copy
    _case("fold", [(2, 12, 9)], output_size=(5, 6), kernel_size=(2, 3), padding=1, stride=2),
    _case("fold", [(8, 4)], output_size=(3, 4), kernel_size=2, dilation=(1, 2)),
]
# tiny, for the float64 checks to second order (numerical Hessian-vector products)
SECOND_ORDER = [
    _case("conv1d", [(1, 4, 6), (4, 2, 3), (4,)], stride=2, padding=1, dilation=2, groups=2),
    _case("conv1d", [(1, 2, 5), (2, 2, 4)], padding="same"),
    _case("conv2d", [(1, 2, 4, 3), (4, 1, 2, 2), (4,)], padding=1, groups=2),
    _case("conv1d", [(2, 3, 7), (3, 1, 3), (3,)], stride=2, padding=1, groups=3),  # depthwise
    _case("conv3d", [(1, 1, 3, 3, 2), (2, 1, 2, 2, 1), (2,)], stride=(1, 2, 1),
          padding=(1, 0, 1)),
    _case("conv_transpose1d", [(1, 2, 3), (2, 2, 3), (2,)], stride=3, padding=1,
          output_padding=2),
    _case("conv_transpose2d", [(1, 2, 2, 3), (2, 1, 2, 2)], groups=2, dilation=2,
          output_padding=1),
    _case("conv_transpose3d", [(1, 1, 2, 2, 2), (1, 2, 2, 1, 2), (2,)], stride=2,
          output_padding=(1, 0, 1), padding=(0, 0, 1)),
    _case("unfold", [(1, 2, 4, 4)], kernel_size=(2, 3), dilation=(1, 2), padding=1,
          stride=(2, 1)),
    _case("fold", [(1, 12, 9)], output_size=(4, 5), kernel_size=(2, 3), padding=1, stride=2),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_values_and_gradients_match_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", SECOND_ORDER, ids=str)
def test_gradcheck_to_second_order(case):
    check_gradcheck(case, "cpu")


@pytest.mark.parametrize("case", SECOND_ORDER, ids=str)
def test_double_backward_matches_torch(case):
    check_double_backward_vs_torch(case, "cpu")


@pytest.mark.parametrize("case", [CASES[i] for i in (0, 5, 9, 12, 15, 17)], ids=str)
def test_on_the_gpu_stand_in(case, spy):
    """No NumPy behind the backend's back (as_strided from xp.lib.stride_tricks, as CuPy)."""
    check_spy_matches_cpu(case, spy)


@pytest.mark.parametrize("op", ["conv2d", "conv_transpose2d"])
def test_fast_backward_matches_reference_and_skips_what_is_not_wanted(op):
    """backward_arrays against the Tensor-op backward (float64), and a constant input gets
    no gradient computed: a first layer on data pays for no dX."""
    rng = np.random.default_rng(0)
    x, w, b = (mg.tensor(rng.standard_normal(s), dtype="float64", requires_grad=True)
               for s in [(2, 4, 5, 4), (4, 2, 3, 2), (4,)])
    fn = lambda x, w, b: getattr(F, op)(x, w, b, stride=2, padding=1, groups=2)  # noqa
    fast = mg.grad((fn(x, w, b) ** 2).sum(), [x, w, b])
    ref = mg.grad((fn(x, w, b) ** 2).sum(), [x, w, b], create_graph=True)
    for f, r in zip(fast, ref):
        np.testing.assert_allclose(f.numpy(), r.numpy(), rtol=1e-12, atol=1e-12)
    y = fn(x.detach(), w, b)
    assert y._ctx.backward_arrays(y._data)[0] is None
    assert y._ctx.backward(y)[0] is None


# ---- depthwise convolution (ops/conv_depthwise.py): the general path is its reference -----
DEPTHWISE = [   # input, weight (C·m, 1, *kernel), conv arguments
    ((2, 3, 9), (3, 1, 3), dict(stride=2, padding=2, dilation=2)),
    ((2, 4, 7, 6), (4, 1, 3, 3), dict(padding=1)),
    ((2, 4, 7, 6), (8, 1, 3, 2), dict(stride=(2, 1), padding=(1, 0), dilation=(1, 2))),
    ((1, 3, 5, 6), (3, 1, 2, 3), dict(padding="same", dilation=2)),    # the odd pad after
    ((2, 3, 8, 7), (3, 1, 2, 2), dict(stride=3)),        # phases that no tap reads
    ((2, 2, 4, 5, 3), (4, 1, 2, 3, 2), dict(stride=(1, 2, 2), padding=1)),
    ((1, 3, 3, 4, 4), (3, 1, 3, 1, 3), dict(padding="same"))]


def _conv_both_ways(monkeypatch, x, w, b, kw, upstream):
    """[y, dx, dw, db] by the depthwise path (its shifted forward whatever the size) and
    by the general path."""
    from minigrad.ops import conv_depthwise
    monkeypatch.setattr(conv_depthwise.DepthwiseConv, "min_row", 0)
    conv = getattr(F, f"conv{x.ndim - 2}d")
    results = []
    for depthwise in (True, False):
        if not depthwise:
            monkeypatch.setattr(conv_depthwise, "is_depthwise", lambda *args: False)
        ts = [mg.tensor(a, requires_grad=True) for a in (x, w, b)]
        with np.errstate(invalid="ignore"):       # inf · 0
            y = conv(*ts, groups=x.shape[1], **kw)
            assert (type(y._ctx).__name__ == "DepthwiseConv") == depthwise
            y.backward(mg.tensor(upstream))
        results.append([y.numpy()] + [t.grad.numpy() for t in ts])
    return results


@pytest.mark.parametrize("shapes", DEPTHWISE, ids=str)
def test_depthwise_matches_the_general_path(shapes, monkeypatch):
    """Output and every gradient (float64) of the shifted passes against the general path's
    GEMMs: strides (phases), dilation, 'same' padding, multiplier 2, 1-3 spatial dims."""
    xs, ws, kw = shapes
    rng = np.random.default_rng(0)
    x, w, b = rng.standard_normal(xs), rng.standard_normal(ws), rng.standard_normal(ws[0])
    y = getattr(F, f"conv{len(xs) - 2}d")(mg.tensor(x), mg.tensor(w), groups=xs[1], **kw)
    fast, general = _conv_both_ways(monkeypatch, x, w, b, kw, rng.standard_normal(y.shape))
    for f, g in zip(fast, general):
        np.testing.assert_allclose(f, g, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("where", ["input", "weight"])
def test_depthwise_with_inf_and_nan_matches_the_general_path(where, monkeypatch):
    """The places that start no window hold dy = 0; against an inf or NaN there (of x for
    dW, of w for dX) 0 · inf would be NaN where the general path, whose products are the
    windows' own, has a number: those take the general path."""
    rng = np.random.default_rng(1)
    x, w, b = rng.standard_normal((2, 3, 6, 5)), rng.standard_normal((3, 1, 3, 3)), \
        rng.standard_normal(3)
    # the first column (and the first sample's first row) is also read by the places past
    # the previous row's (sample's) last window, through the flat shift; and the last
    # column of taps spreads those places' dy into it
    if where == "input":
        x[0, 1, 2, 0], x[1, 2, 0, 3] = np.inf, np.nan
    else:
        w[1, 0, 1, 2] = np.inf
    upstream = rng.standard_normal((2, 3, 6, 5))
    fast, general = _conv_both_ways(monkeypatch, x, w, b, dict(padding=1), upstream)
    for f, g in zip(fast, general):
        np.testing.assert_allclose(f, g, rtol=1e-12, atol=1e-12)


def test_depthwise_in_any_cache_block_gives_the_same_numbers(monkeypatch):
    """The passes run a block of channels at a time (one at a time here, with a block of
    one element): the numbers do not depend on the blocks."""
    from minigrad import backend
    rng = np.random.default_rng(2)
    x, w, b = rng.standard_normal((2, 5, 6, 7)), rng.standard_normal((10, 1, 3, 2)), \
        rng.standard_normal(10)
    upstream = rng.standard_normal((2, 10, 6, 8))
    runs = []
    for block in (None, 1, 100, 1 << 16):
        monkeypatch.setattr(backend.get("cpu"), "cache_block", block)
        runs.append(_conv_both_ways(monkeypatch, x, w, b, dict(padding=1), upstream)[0])
        monkeypatch.undo()
    for run in runs[1:]:
        for got, want in zip(run, runs[0]):
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("shapes", DEPTHWISE[1::2], ids=str)
def test_depthwise_matches_torch(shapes, dtype, monkeypatch):
    from minigrad.ops import conv_depthwise
    monkeypatch.setattr(conv_depthwise.DepthwiseConv, "min_row", 0)
    xs, ws, kw = shapes
    check_vs_torch(_case(f"conv{len(xs) - 2}d", [xs, ws, ws[:1]], groups=xs[1], **kw),
                   "cpu", dtype)


def test_same_padding_keeps_the_size_and_puts_the_odd_pad_after():
    x = mg.arange(6.0).reshape(1, 1, 6)
    first_tap = mg.tensor([[[1.0, 0.0, 0.0, 0.0]]])     # kernel 4: pads 1 before, 2 after
    np.testing.assert_array_equal(F.conv1d(x, first_tap, padding="same").numpy(),
                                  [[[0, 0, 1, 2, 3, 4]]])


def test_unfold_of_a_1x1_window_is_a_copy():
    """A 1×1 window without padding is a reshape of the input: a copy still, as torch's, so
    a later in-place change of the input does not reach it."""
    x = mg.arange(12.0).reshape(1, 3, 2, 2)
    cols = F.unfold(x, 1)
    x.add_(1)
    np.testing.assert_array_equal(cols.numpy(), np.arange(12.0).reshape(1, 3, 4))


def test_empty_batch():
    x, w = mg.zeros(0, 2, 4, 4, requires_grad=True), mg.ones(3, 2, 3, 3, requires_grad=True)
    y = F.conv2d(x, w, padding=1)
    y.sum().backward()
    assert y.shape == (0, 3, 4, 4) and x.grad.shape == x.shape
    assert not w.grad.numpy().any()


ERRORS = [
    (lambda: F.conv2d(mg.zeros(2, 4, 5, 5), mg.zeros(6, 3, 3, 3)), ValueError,
     "input has 4 channels (shape (2, 4, 5, 5)), but weight (6, 3, 3, 3) with groups=1 "
     "expects 3"),
    (lambda: F.conv2d(mg.zeros(2, 4, 5, 5), mg.zeros(5, 2, 3, 3), groups=2), ValueError,
     "weight.shape[0] (out_channels) = 5 must be a positive multiple of groups=2"),
    # no filters at all: refused, as torch (the general path made an empty output)
    (lambda: F.conv1d(mg.zeros(2, 3, 50), mg.zeros(0, 1, 3), groups=3), ValueError,
     "weight.shape[0] (out_channels) = 0 must be a positive multiple of groups=3"),
    (lambda: F.conv2d(mg.zeros(2, 4, 5, 5), mg.zeros(6, 4, 3, 3), groups=0), ValueError,
     "groups must be >= 1"),
    (lambda: F.conv2d(mg.zeros(2, 4, 5, 5), mg.zeros(6, 4, 7, 7)), ValueError,
     "the kernel spans (7, 7) (kernel_size=(7, 7), dilation=(1, 1)), more than the padded "
     "input (5, 5)"),
    (lambda: F.conv1d(mg.zeros(1, 1, 4), mg.zeros(1, 1, 3), dilation=2), ValueError,
     "the kernel spans (5,)"),
    (lambda: F.conv2d(mg.zeros(5, 5), mg.zeros(6, 4, 3, 3)), ValueError,
     "expected a 3-D (unbatched) or 4-D (batched) input"),
    (lambda: F.conv1d(mg.zeros(2, 4, 5, 5), mg.zeros(6, 4, 3)), ValueError,
     "conv1d: expected a 2-D (unbatched) or 3-D (batched) input"),
    (lambda: F.conv2d(mg.zeros(2, 4, 5, 5), mg.zeros(6, 4, 3)), ValueError,
     "weight must be 4-D (out_channels, in_channels/groups, *kernel_size), got shape"),
    (lambda: F.conv2d(mg.zeros(1, 4, 5, 5), mg.zeros(6, 4, 3, 3), padding="same", stride=2),
     ValueError, "padding='same' is not supported for strided convolutions"),
    (lambda: F.conv2d(mg.zeros(1, 4, 5, 5), mg.zeros(6, 4, 3, 3), padding="full"),
     ValueError, "padding must be an int, 2 ints, 'valid' or 'same', got 'full'"),
    (lambda: F.conv2d(mg.zeros(1, 4, 5, 5), mg.zeros(6, 4, 3, 3), padding=-1), ValueError,
     "padding must be >= 0"),
    (lambda: F.conv2d(mg.zeros(1, 4, 5, 5), mg.zeros(6, 4, 3, 3), stride=(1, 2, 3)),
     ValueError, "stride must be an int or 2 ints (one per spatial dim), got (1, 2, 3)"),
    (lambda: F.conv2d(mg.zeros(1, 4, 5, 5), mg.zeros(6, 4, 3, 3), stride=0), ValueError,
     "stride must be >= 1"),
    (lambda: F.conv2d(mg.zeros(1, 4, 5, 5), mg.zeros(6, 4, 3, 3), stride=1.5), TypeError,
     "stride must be an int, got float 1.5"),
    (lambda: F.conv2d(mg.zeros(1, 4, 5, 5), mg.zeros(6, 4, 3, 3), mg.zeros(5)), ValueError,
     "bias must have shape (6,) (out_channels), got shape (5,)"),
    (lambda: F.conv2d(mg.zeros(1, 4, 5, 5, dtype="float64"), mg.zeros(6, 4, 3, 3)),
     TypeError, "input, weight and bias have dtypes float64, float32"),
    (lambda: F.conv_transpose2d(mg.zeros(1, 4, 5, 5), mg.zeros(3, 3, 3, 3)), ValueError,
     "input has 4 channels (shape (1, 4, 5, 5)), but weight (3, 3, 3, 3) with groups=1 "
     "expects 3 (weight.shape[0])"),
    (lambda: F.conv_transpose2d(mg.zeros(1, 4, 5, 5), mg.zeros(4, 3, 3, 3), stride=2,
                                output_padding=2), ValueError,
     "output_padding=(2, 2) must be smaller than either stride=(2, 2) or dilation=(1, 1)"),
    (lambda: F.conv_transpose2d(mg.zeros(1, 4, 2, 2), mg.zeros(4, 3, 3, 3), padding=3),
     ValueError, "the output would have size (-2, -2)"),
    (lambda: F.conv_transpose1d(mg.zeros(1, 4, 5), mg.zeros(4, 3, 3), padding="same"),
     TypeError, "padding must be an int or 1 ints, got 'same'"),
    (lambda: F.unfold(mg.zeros(2, 3, 5, 5), 6), ValueError, "has (0, 0) windows"),
    (lambda: F.unfold(mg.zeros(3, 5), 2), ValueError, "expected a 3-D (unbatched) or 4-D"),
    (lambda: F.fold(mg.zeros(2, 36, 9), (5, 5), 2), ValueError,
     "has 4 x 4 windows, but the input holds 9"),
    (lambda: F.fold(mg.zeros(2, 35, 16), (5, 5), 2), ValueError,
     "input's dim 1 (35) must be C·kH·kW, divisible by the kernel's 4 taps"),
    (lambda: nn.Conv2d(4, 6, 3, groups=3), ValueError,
     "Conv2d: in_channels=4 must be divisible by groups=3"),
    (lambda: nn.ConvTranspose1d(3, 5, 3, groups=3), ValueError,
     "ConvTranspose1d: out_channels=5 must be divisible by groups=3"),
    (lambda: nn.Conv2d(3, 6, 3, padding="same", stride=2), ValueError,
     "Conv2d: padding='same' is not supported for strided convolutions"),
    (lambda: nn.Conv2d(3, 6, 3, padding_mode="foo"), ValueError,
     "padding_mode must be one of 'zeros', 'reflect', 'replicate', 'circular', got 'foo'"),
    (lambda: nn.ConvTranspose2d(3, 6, 3, padding_mode="reflect"), ValueError,
     "only padding_mode='zeros' is supported for a transposed convolution, got 'reflect'"),
    (lambda: nn.Conv3d(3, 6, (3, 3)), ValueError, "Conv3d: kernel_size must be an int or 3"),
    (lambda: nn.ConvTranspose2d(4, 3, 3, stride=2)(mg.zeros(1, 4, 5, 5), output_size=(13, 12)),
     ValueError, "requested an output size of (13, 12), but valid sizes range from (11, 11) "
     "to (12, 12)"),
]


@pytest.mark.parametrize("call, error, words", ERRORS)
def test_bad_arguments_are_named(call, error, words):
    with pytest.raises(error) as e:
        call()
    assert words in str(e.value), str(e.value)


# ---- the layers --------------------------------------------------------------------------
LAYERS = ["nn.Conv1d(3, 4, 3, stride=2, padding=1)",
          "nn.Conv1d(4, 4, 4, padding='same', groups=4)",
          "nn.Conv2d(4, 6, (3, 2), stride=2, padding=1, dilation=2, groups=2, bias=False)",
          "nn.Conv2d(3, 2, 3, padding='valid')", "nn.Conv3d(2, 3, 2, dilation=(1, 2, 1))",
          "nn.ConvTranspose1d(3, 2, 3, stride=2, output_padding=1)",
          "nn.ConvTranspose2d(4, 6, 3, stride=2, padding=1, output_padding=1, groups=2)",
          "nn.ConvTranspose3d(2, 2, 2, bias=False, dilation=2)",
          "nn.Unfold(3, padding=1)", "nn.Fold((4, 5), 2)", "nn.Unfold((2, 3), dilation=(1, 2))",
          "nn.Conv1d(3, 2, 3, padding=2, padding_mode='reflect')",
          "nn.Conv2d(2, 4, (3, 2), padding=(1, 2), padding_mode='replicate', groups=2)",
          "nn.Conv2d(2, 3, 4, padding='same', dilation=(1, 2), padding_mode='circular')",
          "nn.Conv3d(2, 2, 3, padding=1, stride=2, padding_mode='reflect', bias=False)"]
INPUTS = [(2, 3, 7), (2, 4, 6), (2, 4, 9, 8), (3, 5, 5), (1, 2, 3, 5, 3), (2, 3, 4),
          (1, 4, 3, 3), (1, 2, 2, 2, 2), (2, 3, 4, 5), (2, 12, 12), (1, 2, 4, 6),
          (2, 3, 6), (2, 2, 5, 6), (1, 2, 6, 9), (1, 2, 4, 5, 4)]


@pytest.mark.parametrize("ctor, shape", list(zip(LAYERS, INPUTS)))
def test_layers_match_torch(ctor, shape):
    """Repr, attributes and parameter shapes as torch's; torch's state dict loads; the same
    outputs and gradients (of the input and every parameter)."""
    torch = pytest.importorskip("torch")
    m, t = eval(ctor, {"nn": nn}), eval(ctor, {"nn": torch.nn})
    assert repr(m) == repr(t)
    for name in ("kernel_size", "stride", "padding", "dilation", "output_padding", "groups",
                 "transposed", "padding_mode", "in_channels", "out_channels"):
        assert getattr(m, name, None) == getattr(t, name, None), name
    assert {k: v.shape for k, v in m.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in t.state_dict().items()}
    x = np.random.default_rng(0).standard_normal(shape)
    compare_with_torch(m, t, [x])
    compare_with_torch(m, t, [x], dtype="float32")


def test_conv_transpose_output_size_picks_the_output_padding():
    torch = pytest.importorskip("torch")
    m, t = nn.ConvTranspose2d(4, 3, 3, stride=2), torch.nn.ConvTranspose2d(4, 3, 3, stride=2)
    call = lambda mod, x: mod(x, output_size=[1, 3, 12, 11])  # noqa: E731 (the whole shape)
    compare_with_torch(m, t, [np.random.default_rng(0).standard_normal((1, 4, 5, 5))],
                       call=call)


@pytest.mark.parametrize("layer, fan_in", [(lambda: nn.Conv2d(16, 32, 3, groups=4), 4 * 9),
                                           (lambda: nn.ConvTranspose2d(16, 32, 3, groups=4),
                                            8 * 9),
                                           (lambda: nn.Conv1d(6, 60, 5), 6 * 5)])
def test_default_initialisation_is_torchs(layer, fan_in):
    """kaiming_uniform(a=√5) = U(±1/√fan_in) for the weight, the bias the same bound, fan_in
    = weight.shape[1]·∏kernel_size (the transposed layer's too)."""
    mg.manual_seed(0)
    m, bound = layer(), 1 / np.sqrt(fan_in)
    for p in (m.weight, m.bias):
        v = p.numpy()
        assert np.abs(v).max() <= bound and np.abs(v).max() > 0.8 * bound
        assert v.std() > 0.8 * bound / np.sqrt(3)       # spread as U(±bound)


def test_layer_gradcheck_and_device(device):
    m = nn.Conv2d(2, 4, 3, padding=1, groups=2)
    gradcheck_module(m, mg.randn(1, 2, 4, 3))
    m = nn.ConvTranspose1d(2, 3, 3, stride=2).to(device)
    x = mg.randn(2, 2, 4, device=device, requires_grad=True)
    m(x).sum().backward()
    assert x.grad.device == device and m.weight.grad.device == device


@pytest.mark.parametrize("pad", [0, 2])
def test_conv_tbc_as_torch(pad):
    """conv_tbc: a time-major (time, batch, channels) conv1d, weight (k, in, out): values
    and the gradients of input, weight and bias against torch's."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(4)
    xs = [rng.standard_normal(s) for s in ((6, 2, 3), (3, 3, 4), (4,))]
    got = [mg.tensor(x, requires_grad=True) for x in xs]
    want = [torch.tensor(x, requires_grad=True) for x in xs]
    g, w = F.conv_tbc(*got, pad), torch.conv_tbc(*want, pad)
    np.testing.assert_allclose(g.numpy(), w.detach().numpy(), rtol=1e-10)
    (g * g).sum().backward(), (w * w).sum().backward()
    for a, b in zip(got, want):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-10)


@pytest.mark.parametrize("shapes", [((6, 2), (3, 3, 4), (4,)), ((6, 2, 3), (3, 2, 4), (4,)),
                                    ((6, 2, 3), (3, 3, 4), (3,))])
def test_conv_tbc_names_the_shapes_it_expected(shapes):
    with pytest.raises(ValueError, match=r"conv_tbc: expected input \(time, batch"):
        F.conv_tbc(*(mg.zeros(s) for s in shapes))
