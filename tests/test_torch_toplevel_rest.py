"""The last of torch's top-level names a port meets (torch_names.py, torch_runtime.py,
torch_copies.py, torch_native.py, torch_segments.py): dtype names and constants,
mg.compile, the *_copy family, ATen's native_* layers, segment_reduce, histogramdd,
nonzero_static (mg.testing.assert_close and mg.random: test_testing_random.py). Values,
shapes and dtypes against torch; gradients against torch and by float64 gradcheck; the
errors."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from op_helpers import OpCase, check_vs_torch, check_gradcheck

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None


def lib(x):
    return mg if isinstance(x, mg.Tensor) else torch


def C(name, fn, *shapes, gradgrad=True):
    return OpCase(name, fn, shapes, gradgrad=gradgrad)


CASES = [
    C("view_copy", lambda x: lib(x).view_copy(x, (3, 2)), (2, 3)),
    C("permute_transpose_t_copy", lambda x: (lib(x).permute_copy(x, (2, 0, 1)),
                                             lib(x).transpose_copy(x, 0, 2),
                                             lib(x).t_copy(x[0])), (2, 3, 4)),
    C("expand_copy", lambda x: lib(x).expand_copy(x, (2, 3, 4)), (3, 1)),
    C("squeeze_unsqueeze_copy", lambda x: (lib(x).squeeze_copy(x), lib(x).squeeze_copy(x, 1),
                                           lib(x).unsqueeze_copy(x, -1)), (2, 1, 3)),
    C("select_slice_narrow_copy", lambda x: (lib(x).select_copy(x, 1, 2),
                                             lib(x).slice_copy(x, 1, 1, None, 2),
                                             lib(x).slice_copy(x),
                                             lib(x).narrow_copy(x, 0, 1, 2)), (3, 5)),
    C("diagonal_alias_copy", lambda x: (lib(x).diagonal_copy(x, 1, 1, 2),
                                        lib(x).alias_copy(x)), (2, 3, 4)),
    C("split_unbind_copy", lambda x: (*lib(x).split_copy(x, 2, 1),
                                      *lib(x).split_with_sizes_copy(x, [1, 4], 1),
                                      *lib(x).unbind_copy(x, 0)), (2, 5)),
    C("unfold_copy", lambda x: lib(x).unfold_copy(x, 1, 2, 2), (2, 5)),
    C("unsafe_split_chunk", lambda x: (*lib(x).unsafe_chunk(x, 2, 1),
                                       *lib(x).unsafe_split(x, 2),
                                       *lib(x).unsafe_split_with_sizes(x, [1, 2], 1)), (3, 3)),
    C("resolve_conj_neg", lambda x: (lib(x).resolve_conj(x) * 2, lib(x).resolve_neg(x) + 1,
                                     lib(x).conj_physical(x) * 3), (2, 3)),
    C("fill_value_tensor", lambda v: lib(v).fill(lib(v).zeros(2, 3, dtype=v.dtype), v[0]), (1,)),
    C("native_layer_norm", lambda x, w, b: lib(x).native_layer_norm(x, [3, 4], w, b, 1e-5),
      (2, 3, 4), (3, 4), (3, 4)),
    C("native_batch_norm", lambda x, w, b: lib(x).native_batch_norm(
        x, w, b, None, None, True, 0.1, 1e-5), (4, 3, 2), (3,), (3,)),
    C("native_group_norm", lambda x, w, b: lib(x).native_group_norm(x, w, b, 2, 4, 3, 2, 1e-5),
      (2, 4, 3), (4,), (4,)),
    C("convolution", lambda x, w, b: lib(x).convolution(x, w, b, [1], [1], [1], False, [0], 1),
      (2, 2, 5), (3, 2, 3), (3,)),
    C("convolution_transposed", lambda x, w: lib(x).convolution(
        x, w, None, [2, 1], [1, 0], [1, 1], True, [1, 0], 1), (1, 2, 3, 3), (2, 3, 2, 2)),
    C("constant_pad_nd", lambda x: lib(x).constant_pad_nd(x, [1, 2, 0, 1], 0.5), (2, 3)),
    C("norm_except_dim", lambda x: (lib(x).norm_except_dim(x, 2, 0),
                                    lib(x).norm_except_dim(x, 3, 1),
                                    lib(x).norm_except_dim(x, 2, -1),
                                    lib(x).norm_except_dim(x, 2, -2),
                                    lib(x).norm_except_dim(x, 2, -3)), (2, 3, 4)),
    C("frobenius_nuclear_norm", lambda x: (lib(x).frobenius_norm(x, [1, 2]),
                                           lib(x).frobenius_norm(x, [0], True),
                                           lib(x).nuclear_norm(x[0]),
                                           lib(x).nuclear_norm(x, [1, 2], True),
                                           lib(x).nuclear_norm(x),       # one per matrix
                                           lib(x).nuclear_norm(x, True)), (2, 3, 4),
      gradgrad=False),
]

SEGMENTS = [2, 0, 3, 1]


def segments(x):
    return lib(x).tensor(SEGMENTS)


def segment_reduce(x, how):
    """Plain (empty segments: 0 sum, NaN mean, ∓inf max/min, made finite to compare) and
    with initial."""
    return (lib(x).segment_reduce(x, how, lengths=segments(x)).nan_to_num(0.0, 9.0, -9.0),
            lib(x).segment_reduce(x, how, lengths=segments(x), initial=0.25))


CASES += [C(f"segment_reduce_{how}", lambda x, how=how: segment_reduce(x, how), (6, 2),
            gradgrad=False) for how in ("sum", "mean", "max", "min")]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vs_torch(case, dtype, torch):
    check_vs_torch(case, "cpu", dtype)


# the differentiable ones by float64 gradcheck (the statistics native_* return beside the
# output are constants, as torch's, and left out: finite differences would see them move)
GRADCHECKED = [c for c in CASES if c.name not in (
    "native_layer_norm", "native_batch_norm")] + [
    C("native_layer_norm_out", lambda x, w: mg.native_layer_norm(x, [4], w, None, 1e-5)[0],
      (2, 4), (4,)),
    C("native_batch_norm_out", lambda x: mg.native_batch_norm(x, None, None, None, None, True,
                                                              0.1, 1e-5)[0], (4, 3)),
]


@pytest.mark.parametrize("case", GRADCHECKED, ids=str)
def test_gradcheck(case):
    check_gradcheck(case, "cpu")


# ---- dtype names and constants -------------------------------------------------------
def test_dtype_names_are_torchs(torch):
    for name in ("float", "double", "half", "long", "int", "short"):
        assert str(getattr(mg, name)) == str(getattr(torch, name)).removeprefix("torch."), name
    assert isinstance(mg.float32, mg.dtype) and isinstance(mg.randn(2).dtype, mg.dtype)
    assert (mg.pi, mg.e, mg.inf) == (torch.pi, torch.e, torch.inf) and math.isnan(mg.nan)
    assert mg.randn(3)[:, mg.newaxis].shape == (3, 1)


def test_dtype_names_work_wherever_a_dtype_is_taken():
    assert mg.zeros(2, dtype=mg.long).dtype == "int64"
    assert mg.ones(2, dtype=mg.short).dtype == "int16"
    t = mg.tensor([1.5, 2.5], dtype=mg.double)
    assert t.to(mg.half).dtype == "float16" and t.type(mg.double).dtype == "float64"
    assert t.to(dtype=mg.int).dtype == "int32" and t.float().dtype == mg.float
    assert mg.arange(3, dtype=mg.float).dtype == "float32"
    # the builtins are untouched where minigrad uses them
    assert float("1.5") == 1.5 and int("3") == 3


# ---- compile and the runtime switches --------------------------------------------------
def test_compile_returns_the_model_unchanged():
    model = mg.nn.Linear(2, 3)
    assert mg.compile(model) is model
    assert mg.compile(model, mode="max-autotune", fullgraph=True, dynamic=False) is model

    @mg.compile
    def f(x):
        return x * 2

    @mg.compile(backend="eager", disable=True)
    def g(x):
        return x + 1
    assert f(3) == 6 and g(3) == 4
    assert mg.compile(model, name="block", recompile_limit=4, isolate_recompiles=True,
                      shapes_spec=None) is model
    assert mg.compile(name="f", mode="lite")(print) is print        # torch 2.13's keywords


@pytest.mark.parametrize("args, kwargs, error, words", [
    ((3,), {}, TypeError, "module or a function"),
    ((print,), {"mode": "fastest"}, ValueError, "unknown mode"),
    ((print,), {"mode": "default", "options": {}}, ValueError, "not both"),
    ((print,), {"fullgraph": 1}, TypeError, "fullgraph must be a bool"),
    ((print,), {"dynamic": "yes"}, TypeError, "dynamic must be"),
    ((print,), {"options": [1]}, TypeError, "options must be a dict"),
    ((print,), {"backend": 3}, TypeError, "backend must be"),
    ((print,), {"name": 3}, TypeError, "name must be None or a str"),
    ((print,), {"isolate_recompiles": 1}, TypeError, "isolate_recompiles must be a bool"),
    ((print,), {"recompile_limit": 1.5}, TypeError, "recompile_limit must be None or an"),
])
def test_compile_errors(args, kwargs, error, words):
    with pytest.raises(error, match=words):
        mg.compile(*args, **kwargs)


def test_runtime_switches_and_queries(torch):
    assert not mg.is_warn_always_enabled()
    mg.set_warn_always(True)
    assert mg.is_warn_always_enabled()
    mg.set_warn_always(False)
    with pytest.raises(TypeError, match="expected a bool"):
        mg.set_warn_always(1)
    before = mg.get_num_interop_threads()
    mg.set_num_interop_threads(3)
    assert mg.get_num_interop_threads() == 3
    mg.set_num_interop_threads(before)
    with pytest.raises(ValueError, match="positive integer"):
        mg.set_num_interop_threads(0)
    assert mg.typename(mg.randn(2)) == "minigrad.FloatTensor"
    assert mg.typename(1) == torch.typename(1) == "int"
    assert mg.typename(mg.nn.Linear) == "minigrad.nn.layers.Linear"
    for obj in (math.sqrt, len, math, test_runtime_switches_and_queries, None, [1]):
        assert mg.typename(obj) == torch.typename(obj), obj   # a function's own name
    assert mg.is_storage(mg.randn(2)) is False
    t = mg.randn(2)
    assert not mg.is_conj(t) and not mg.is_neg(t) and not mg.is_inference(t)
    with pytest.raises(TypeError, match="expected a Tensor"):
        mg.is_conj([1.0])


def test_inference_mode_enabled_as_torch(torch):
    for lib_ in (mg, torch):
        seen = [lib_.is_inference_mode_enabled()]
        with lib_.inference_mode():
            seen.append(lib_.is_inference_mode_enabled())
            with lib_.inference_mode(False):
                seen.append(lib_.is_inference_mode_enabled())
            with lib_.no_grad():
                seen.append(lib_.is_inference_mode_enabled())
        with lib_.no_grad():
            seen.append(lib_.is_inference_mode_enabled())

        @lib_.inference_mode()
        def inside():
            return lib_.is_inference_mode_enabled(), lib_.is_grad_enabled()
        seen += [*inside(), lib_.is_inference_mode_enabled()]
        assert seen == [False, True, False, True, False, True, False, False], lib_.__name__


def test_grad_scaler_is_amps():
    assert mg.GradScaler is mg.amp.GradScaler
    assert mg.GradScaler("cpu").get_scale() == 2.0 ** 16


# ---- in-place and filled ---------------------------------------------------------------
def test_fill_detach_index_put_and_inplace_dropouts(torch):
    x = mg.randn(2, 3, requires_grad=True)
    out = mg.fill(x, 2.5)
    assert out.tolist() == torch.fill(torch.zeros(2, 3), 2.5).tolist() and x.tolist() != \
        out.tolist()
    assert mg.fill(mg.zeros(2, dtype=mg.long), 3).dtype == "int64"
    with pytest.raises(ValueError, match="0-dim tensor"):
        mg.fill(x, mg.ones(2))
    y = x.detach().clone().requires_grad_()
    z = y * 2
    assert mg.detach_(z) is z and not z.requires_grad
    t = mg.zeros(4)
    assert mg.index_put_(t, (mg.tensor([1, 1, 3]),), mg.tensor([1.0, 2.0, 3.0]), True) is t
    assert t.tolist() == [0.0, 3.0, 0.0, 3.0]
    for name in ("dropout_", "alpha_dropout_", "feature_alpha_dropout_"):
        t = mg.ones(4, 3, 2)
        assert getattr(mg, name)(t, 0.5, False) is t and t.tolist() == mg.ones(4, 3, 2).tolist()
        mg.manual_seed(0)
        assert getattr(mg, name)(t, 0.5, True) is t and t.tolist() != mg.ones(4, 3, 2).tolist()


def test_native_dropout():
    x = mg.randn(50, 40, requires_grad=True)
    out, mask = mg.native_dropout(x, 0.25, True)
    assert mask.dtype == "bool" and 0.65 < mask.float().mean().item() < 0.85
    np.testing.assert_allclose(out.numpy(), np.where(mask.numpy(), x.numpy() / 0.75, 0),
                               rtol=1e-6)
    out.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), mask.numpy() / 0.75, rtol=1e-6)
    out, mask = mg.native_dropout(x, 0.25, False)
    assert out.tolist() == x.tolist() and bool(mask.all())
    out, mask = mg.native_dropout(x, 1.0, True)
    assert not bool(mask.any()) and not bool(out.isnan().any())
    with pytest.raises(ValueError, match=r"p must be in \[0, 1\]"):
        mg.native_dropout(x, 1.5, True)


def test_native_batch_norm_eval_and_running_stats(torch):
    x = np.random.default_rng(0).standard_normal((4, 3, 2))
    mine = (mg.zeros(3, dtype=mg.float64), mg.ones(3, dtype=mg.float64))   # x's dtype
    ref = (torch.zeros(3, dtype=torch.float64), torch.ones(3, dtype=torch.float64))
    mg.native_batch_norm(mg.tensor(x), None, None, *mine, True, 0.1, 1e-5)
    torch.native_batch_norm(torch.tensor(x), None, None, *ref, True, 0.1, 1e-5)
    for a, b in zip(mine, ref):
        np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)
    out, m, r = mg.native_batch_norm(mg.tensor(x), None, None, *mine, False, 0.1, 1e-5)
    tout, tm, tr = torch.native_batch_norm(torch.tensor(x), None, None, *ref, False, 0.1, 1e-5)
    np.testing.assert_allclose(out.numpy(), tout.numpy(), rtol=1e-6)
    assert m.shape == tuple(tm.shape) == (0,) and r.shape == tuple(tr.shape)


# ---- layers' and norms' errors ---------------------------------------------------------
@pytest.mark.parametrize("call, error, words", [
    (lambda: mg.native_group_norm(mg.randn(2, 4, 3), None, None, 2, 4, 4, 2, 1e-5),
     ValueError, "do not describe"),
    (lambda: mg.native_group_norm(mg.randn(2, 4, 3), None, None, 2, 4, 3, 3, 1e-5),
     ValueError, "must divide C=4"),
    (lambda: mg.native_batch_norm(mg.randn(3), None, None, None, None, True, 0.1, 1e-5),
     ValueError, r"\(N, C, ...\)"),
    (lambda: mg.convolution(mg.randn(1, 2, 3), mg.randn(2, 3), None, [1], [0], [1], False,
                            [0], 1), ValueError, "3, 4 or 5 dimensions"),
    (lambda: mg.convolution(mg.randn(1, 2, 3), mg.randn(2, 2, 1), None, [1], [0], [1], False,
                            [1], 1), ValueError, "transposed convolution only"),
    (lambda: mg.norm_except_dim(mg.randn(2, 3), 2, 2), IndexError, "out of range"),
    (lambda: mg.norm_except_dim(mg.randn(2, 3), 2, -3), IndexError, "out of range"),
    (lambda: mg.nuclear_norm(mg.randn(3)), ValueError, "at least 2 dims"),
    (lambda: mg.slice_copy(mg.randn(3), 0, 0, 2, 0), ValueError, "positive integer"),
    (lambda: mg.slice_copy(mg.randn(3), 1), IndexError, "out of range"),
    (lambda: mg.view_copy([1.0], (1,)), TypeError, "expected a Tensor first"),
    (lambda: mg.native_layer_norm(3.0, [1], None, None, 1e-5), TypeError, "expected a Tensor"),
])
def test_layer_and_copy_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_convolution_takes_ints_as_F_does():       # (not a bare "'int' ... not iterable")
    x, w = mg.randn(2, 3, 5), mg.randn(4, 3, 3)
    lists = mg.convolution(x, w, None, [1], [1], [1], False, [0], 1).numpy()
    for padding in (1, "same"):
        np.testing.assert_allclose(mg.convolution(x, w, None, 1, padding, 1, False, 0, 1)
                                   .numpy(), lists)
    assert mg.convolution(x, w.transpose(0, 1), None, 2, 1, 1, True, 1, 1).shape == (2, 4, 10)


def test_nuclear_norm_keepdim_overload(torch):
    a = np.random.default_rng(0).standard_normal((3, 4))
    for keepdim in (False, True):
        np.testing.assert_allclose(mg.nuclear_norm(mg.tensor(a), keepdim).numpy(),
                                   torch.nuclear_norm(torch.tensor(a), keepdim).numpy())


# ---- segment_reduce, histogramdd, nonzero_static ----------------------------------------
def test_segment_reduce_offsets_unsafe_and_empty(torch):
    data = np.arange(12.0).reshape(6, 2)
    for how in ("sum", "mean", "max", "min", "prod"):
        for kw in ({"lengths": [2, 0, 4]}, {"offsets": [0, 2, 2, 6]}):
            ours = mg.segment_reduce(mg.tensor(data), how,
                                     **{k: mg.tensor(v) for k, v in kw.items()})
            ref = torch.segment_reduce(torch.tensor(data), how,
                                       **{k: torch.tensor(v) for k, v in kw.items()})
            np.testing.assert_array_equal(ours.numpy(), ref.numpy(), err_msg=f"{how} {kw}")
    ours = mg.segment_reduce(mg.tensor(data[:, 0]), "sum", lengths=mg.tensor([2, 1]),
                             unsafe=True)
    ref = torch.segment_reduce(torch.tensor(data[:, 0]), "sum", lengths=torch.tensor([2, 1]),
                               unsafe=True)
    np.testing.assert_array_equal(ours.numpy(), ref.numpy())


def _segments_both(torch, data, how, grad_out=None, **kw):
    """(values, data's gradient) from mg and torch for segment_reduce(data, how, **kw)."""
    out = []
    for lib in (mg, torch):
        x = lib.tensor(data, requires_grad=True)
        y = lib.segment_reduce(x, how, **{k: lib.tensor(v) if isinstance(v, list) else v
                                          for k, v in kw.items()})
        y.backward(lib.tensor(grad_out if grad_out is not None else
                              np.arange(1.0, y.numel() + 1).reshape(tuple(y.shape))))
        out.append((y.detach().numpy(), x.grad.numpy()))
    return out


@pytest.mark.parametrize("how", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce_along_other_axes_as_torch(torch, how):
    data = np.random.default_rng(0).integers(-3, 4, (2, 6, 3)).astype(np.float64)
    lengths = [[2, 0, 4], [1, 3, 2]]
    for kw in ({"lengths": lengths, "axis": 1}, {"lengths": lengths, "axis": -2},
               {"offsets": [[0, 2, 2, 6], [0, 1, 4, 6]], "axis": 1},
               {"lengths": lengths, "axis": 1, "initial": 0.5},
               {"lengths": [[[1, 2], [3, 0], [0, 3]] * 2] * 2, "axis": 2},
               {"lengths": [[1, 1], [2, 1]], "axis": 1, "unsafe": True}):
        (mine, gm), (ref, gr) = _segments_both(torch, data, how, **kw)
        assert mine.shape == ref.shape
        finite = np.isfinite(ref)          # empty segments: ±inf both, inf·0 gradients
        np.testing.assert_allclose(mine[finite], ref[finite], err_msg=f"{how} {kw}")
        assert (mine[~finite] == ref[~finite]).all() or np.isnan(ref[~finite]).all()
        np.testing.assert_allclose(gm, gr, rtol=1e-12, err_msg=f"{how} {kw}")


@pytest.mark.parametrize("how", ["sum", "mean", "max", "min", "prod"])
def test_segment_reduce_along_axis_1_gradcheck(how):
    x = mg.tensor(np.random.default_rng(1).normal(size=(2, 5, 2)), requires_grad=True)
    lengths = mg.tensor([[2, 3], [4, 1]])
    assert mg.gradcheck(lambda t: mg.segment_reduce(t, how, lengths=lengths, axis=1), (x,))


@pytest.mark.parametrize("how", ["max", "min"])
def test_segment_reduce_max_with_nan_sends_the_gradient_to_the_nans_as_torch(torch, how):
    # a NaN result is the segment's NaNs (sharing g, as ties); through scatter_reduce's
    # gradient every member had 0 (or NaN)
    nan = float("nan")
    data = [5.0, nan, 5.0, nan, 2.0, 2.0, 1.0, 3.0]
    for kw in ({"lengths": [4, 3, 0, 1]}, {"lengths": [4, 3, 0, 1], "initial": 5.0}):
        (mine, gm), (ref, gr) = _segments_both(torch, data, how, **kw)
        np.testing.assert_array_equal(mine, ref)
        np.testing.assert_array_equal(gm, gr)
    assert gm.tolist()[:4] == [0.0, 0.5, 0.0, 0.5]


@pytest.mark.parametrize("kwargs, error, words", [
    ({"reduce": "median", "lengths": [6]}, ValueError, "reduce must be one of"),
    ({"reduce": "sum", "lengths": [2, 3]}, ValueError, "sum to 5, not to data's 6 rows"),
    ({"reduce": "sum", "lengths": [7, -1]}, ValueError, "negative length"),
    ({"reduce": "sum"}, ValueError, "exactly one of lengths= and offsets="),
    ({"reduce": "sum", "lengths": [6], "axis": 1}, TypeError, r"shape \(6, 'S'\)"),
    ({"reduce": "sum", "lengths": [6], "axis": 2}, ValueError, "axis must name one of"),
    ({"reduce": "sum", "lengths": [6.0]}, TypeError, "integer tensor of shape"),
    ({"reduce": "sum", "lengths": [[2, 0], [1, 1]]}, TypeError, "integer tensor of shape"),
])
def test_segment_reduce_errors(kwargs, error, words):
    kwargs = {k: mg.tensor(v) if k == "lengths" else v for k, v in kwargs.items()}
    with pytest.raises(error, match=words):
        mg.segment_reduce(mg.randn(6, 2), **kwargs)


def test_histogramdd_vs_torch(torch):
    rng = np.random.default_rng(0)
    pts = rng.standard_normal((40, 2)).astype(np.float32)
    w = rng.uniform(0, 1, 40).astype(np.float32)
    edges = [np.array([-1.0, 0.0, 0.5, 2.0], np.float32), np.array([-2.0, 0.0, 2.0], np.float32)]
    for kw in ({"bins": 3}, {"bins": [2, 4], "range": [-1.0, 1.0, -0.5, 2.0]},
               {"bins": [3, 2], "weight": w, "density": True}, {"bins": edges}):
        def args(lib_):
            return {k: [lib_.tensor(e) for e in v] if k == "bins" and isinstance(v, list) and
                    isinstance(v[0], np.ndarray) else lib_.tensor(v) if k == "weight" else v
                    for k, v in kw.items()}
        conv, tconv = args(mg), args(torch)
        hist, bin_edges = mg.histogramdd(mg.tensor(pts), **conv)
        ref = torch.histogramdd(torch.tensor(pts), **tconv)
        assert hist.dtype == "float32" and len(bin_edges) == 2
        np.testing.assert_allclose(hist.numpy(), ref.hist.numpy(), rtol=1e-5, err_msg=str(kw))
        for a, b in zip(bin_edges, ref.bin_edges):
            np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-6)


def test_histogramdd_errors():
    with pytest.raises(TypeError, match="float tensor of points"):
        mg.histogramdd(mg.tensor([[1, 2]]))
    with pytest.raises(ValueError, match="bins must give 2 values"):
        mg.histogramdd(mg.randn(4, 2), bins=[2, 2, 2])
    with pytest.raises(ValueError, match="range must hold 4 values"):
        mg.histogramdd(mg.randn(4, 2), range=[0.0, 1.0])
    with pytest.raises(ValueError, match=r"weight must be a tensor of shape \(4,\)"):
        mg.histogramdd(mg.randn(4, 2), weight=mg.ones(2))


def test_nonzero_static_vs_torch(torch):
    x = [[0, 1, 0], [2, 0, 3]]
    for size, fill in ((5, -1), (2, 9), (3, 0), (0, -1)):
        ours = mg.nonzero_static(mg.tensor(x), size=size, fill_value=fill)
        ref = torch.nonzero_static(torch.tensor(x), size=size, fill_value=fill)
        assert ours.dtype == "int64" and ours.tolist() == ref.tolist()
    with pytest.raises(ValueError, match="non-negative integer"):
        mg.nonzero_static(mg.tensor(x), size=-1)


def test_new_array_code_stays_on_the_device(spy):
    pts = mg.randn(10, 2, device=spy)
    hist, edges = mg.histogramdd(pts, bins=3, weight=mg.ones(10, device=spy))
    found = mg.nonzero_static(pts > 0, size=25)
    for t in (hist, *edges, found):
        assert t.device == "spy"
