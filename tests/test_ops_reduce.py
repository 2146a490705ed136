"""Reductions: sum mean var std max min (dim / keepdim, and the axis / keepdims aliases;
max/min with a dim return (values, indices)), argmax/argmin, and ties as PyTorch."""
import math
import warnings

import numpy as np
import pytest

import minigrad as mg
from op_helpers import OpCase, check_vs_torch, check_gradcheck, check_double_backward_vs_torch

_DIMS = [dict(), dict(dim=0), dict(dim=1), dict(dim=-1), dict(dim=(0, 2)),
         dict(dim=1, keepdim=True), dict(dim=(0, -1), keepdim=True)]


def _reductions(name, np_name=None):
    def case(kw, shape):
        np_kw = {"axis": kw.get("dim"), "keepdims": kw.get("keepdim", False)}
        np_fn = (lambda a: getattr(np, np_name)(a, **np_kw)) if np_name else None
        label = name + "(" + ",".join(f"{k}={v}" for k, v in kw.items()) + ")"
        return OpCase(label, lambda x: getattr(x, name)(**kw), (shape,), np_fn=np_fn)
    return [case(kw, (2, 3, 4)) for kw in _DIMS] + [case({}, (3,)), case({}, ())] + \
        [case(dict(dim=0), (3,))]


def _extremum(name):
    """Without dim a tensor; with dim the (values, indices) pair, as PyTorch."""
    out = [OpCase(f"{name}()", lambda x: getattr(x, name)(), (s,)) for s in [(), (5,), (2, 3)]]
    for kw in [dict(dim=0), dict(dim=1), dict(dim=-1, keepdim=True)]:
        out.append(OpCase(f"{name}({kw})", lambda x, kw=kw: getattr(x, name)(**kw), ((2, 3, 4),)))
    return out


CASES = (
    _reductions("sum", "sum") + _reductions("mean", "mean")
    + [OpCase("mg.sum", lambda x: mg.sum(x, 1), ((2, 3),), torch_fn=lambda x: x.sum(1)),
       OpCase("mg.mean", lambda x: mg.mean(x, -1, True), ((2, 3),),
              torch_fn=lambda x: x.mean(-1, True))]
    + [OpCase(f"var({kw})", lambda x, kw=kw: x.var(**kw), ((2, 3, 4),),
              np_fn=lambda a, kw=kw: np.var(a, axis=kw.get("dim"), ddof=kw.get("correction", 1),
                                            keepdims=kw.get("keepdim", False)))
       for kw in [dict(), dict(dim=1), dict(dim=-1, keepdim=True), dict(dim=(0, 2)),
                  dict(dim=1, correction=0)]]
    + [OpCase("std(dim=1)", lambda x: x.std(dim=1), ((2, 3, 4),),
              np_fn=lambda a: np.std(a, axis=1, ddof=1)),
       OpCase("std()", lambda x: x.std(), ((2, 3, 4),), np_fn=lambda a: np.std(a, ddof=1)),
       OpCase("std(dim=(0, 2), keepdim=True, correction=0)",
              lambda x: x.std(dim=(0, 2), keepdim=True, correction=0), ((2, 3, 4),),
              torch_fn=lambda x: x.std(dim=(0, 2), keepdim=True, correction=0),
              np_fn=lambda a: np.std(a, axis=(0, 2), keepdims=True))]
    + _extremum("max") + _extremum("min")
)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case, device):
    check_gradcheck(case, device)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_double_backward_vs_torch(case, device):
    check_double_backward_vs_torch(case, device)


@pytest.mark.parametrize("name", ["sum", "mean", "var", "max", "min"])
def test_axis_keepdims_aliases(name, device):
    x = mg.randn(2, 3, 4, device=device)
    a = getattr(x, name)(axis=1, keepdims=True)
    b = getattr(x, name)(dim=1, keepdim=True)
    a, b = (v[0] if isinstance(v, tuple) else v for v in (a, b))
    assert a.shape == (2, 1, 4)
    np.testing.assert_array_equal(a.numpy(), b.numpy())


def test_max_min_with_dim_return_values_and_indices(device):
    a = np.array([[1.0, 5.0, 2.0], [7.0, 0.0, 7.0]])
    x = mg.tensor(a, device=device)
    values, indices = x.max(dim=1)
    assert values.tolist() == [5.0, 7.0] and indices.tolist() == [1, 0]
    assert indices.dtype == mg.int64
    values, indices = x.min(dim=0, keepdim=True)
    assert values.shape == (1, 3) and indices.tolist() == [[0, 1, 0]]
    assert x.max().item() == 7.0 and x.min().item() == 0.0
    assert x.argmax().item() == 3 and x.argmin(dim=1).tolist() == [0, 1]
    assert x.argmax(dim=1, keepdim=True).shape == (2, 1)
    r = x.max(1)                                         # a named tuple, as torch.return_types
    assert r.values.tolist() == [5.0, 7.0] and r.indices.tolist() == [1, 0]
    assert x.min(0).indices.tolist() == [0, 1, 0]
    assert mg.tensor(3.0, device=device).max(0).indices.item() == 0


@pytest.mark.parametrize("name", ["max", "min"])
def test_ties_as_torch(name, device):
    """Whole-tensor max/min share the gradient among ties; with a dim it goes to the
    returned (first) index."""
    torch = pytest.importorskip("torch")
    a = np.array([[3.0, 1.0, 3.0], [1.0, 1.0, 0.5]])
    a = a if name == "max" else -a
    for kw in [{}, {"dim": 1}, {"dim": 0}]:
        x = mg.tensor(a, device=device, requires_grad=True)
        t = torch.tensor(a, requires_grad=True)
        out, ref = getattr(x, name)(**kw), getattr(t, name)(**kw)
        if kw:
            assert out[1].tolist() == ref[1].tolist()
            out, ref = out[0], ref[0]
        (out * mg.tensor(np.arange(1.0, out.numel() + 1).reshape(out.shape), device=device)
         ).sum().backward()
        (ref * torch.arange(1.0, ref.numel() + 1, dtype=torch.float64).reshape(ref.shape)
         ).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), t.grad.numpy(), err_msg=str(kw))


def test_reductions_keep_float32(device):
    x = mg.randn(3, 4, device=device, requires_grad=True)
    for y in (x.sum(), x.mean(1), x.var(0), x.max(), x.min(1)[0], x.std()):
        assert y.dtype == mg.float32
        g, = mg.grad(y.sum(), x)
        assert g.dtype == mg.float32


def test_a_0d_tensor_reduces_over_dim_0_or_minus_1_as_torch(device):
    """dim 0 / -1 of a 0-d tensor reduces nothing (PyTorch), instead of an axis error."""
    x = mg.tensor(3.0, device=device, requires_grad=True)
    for y in (x.sum(0), x.mean(-1), x.var(0, correction=0) + x, x.max(0)[0], x.min(-1)[0],
              x.sum(0, keepdim=True)):
        assert y.shape == () and float(y) == 3.0
    values, indices = x.max(0)
    assert int(indices) == 0 and indices.dtype == mg.int64 and int(x.argmin(-1)) == 0
    values.backward()
    assert float(x.grad) == 1.0


def test_mean_of_an_empty_tensor_is_nan(device):
    with warnings.catch_warnings():
        warnings.simplefilter("error")                    # and no ZeroDivisionError either
        assert np.isnan(float(mg.zeros(0, device=device).mean()))
        assert np.isnan(mg.zeros(2, 0, device=device).mean(1).numpy()).all()


@pytest.mark.parametrize("op", ["mean", "var", "std"])
def test_mean_var_std_of_integers_raise_as_torch(op, device):
    for x, name in ((mg.arange(4, device=device), "int64"), (mg.ones(2, device=device) > 0,
                                                              "bool")):
        with pytest.raises(RuntimeError, match=rf"(mean|var)\(\): input dtype must be "
                                               rf"floating point, got {name}; use \.float\(\)"):
            getattr(x, op)()


def test_std_accepts_unbiased_as_torch(device):
    a = np.array([[1.0, 2.0, 4.0], [0.5, -1.0, 3.0]])
    x = mg.tensor(a, device=device)
    np.testing.assert_allclose(x.std(unbiased=False).numpy(), a.std(), rtol=1e-6)
    np.testing.assert_allclose(x.std(1, unbiased=True).numpy(), a.std(1, ddof=1), rtol=1e-6)


def test_max_along_a_nonempty_dim_of_an_empty_tensor_is_empty_as_torch(device):
    x = mg.zeros(0, 3, device=device, requires_grad=True)
    values, indices = x.max(1)
    assert values.shape == (0,) and indices.shape == (0,) and indices.dtype == mg.int64
    values.sum().backward()
    assert x.grad.shape == (0, 3)


def test_max_min_and_masked_fill_forward_match_numpy(device):
    """Values and indices against NumPy (no torch needed); ties pick the first index."""
    a = np.array([[3.0, -1.0, 3.0, 0.5], [-2.0, 7.0, 7.0, -2.0], [0.0, 0.0, -4.0, 1.0]])
    t = mg.tensor(a, dtype=mg.float64, device=device)
    for dim in (0, 1, -1):
        values, indices = t.max(dim)
        np.testing.assert_array_equal(values.numpy(), a.max(dim))
        np.testing.assert_array_equal(indices.numpy(), a.argmax(dim))
        values, indices = t.min(dim, keepdim=True)
        np.testing.assert_array_equal(values.numpy(), a.min(dim, keepdims=True))
        np.testing.assert_array_equal(indices.numpy(), np.expand_dims(a.argmin(dim), dim))
    assert t.max().item() == a.max() and t.min().item() == a.min()
    mask = a > 0.7
    np.testing.assert_array_equal(
        t.masked_fill(mg.tensor(mask, device=device), -9.0).numpy(), np.where(mask, -9.0, a))


def test_std_gradient_of_a_constant_row_is_zero_as_torch(device):
    # d√v = dv / (2√v) reads 0/0 where σ = 0; PyTorch gives 0 there, not NaN
    x = mg.tensor([[2.0, 2.0, 2.0], [1.0, 2.0, 4.0]], dtype=mg.float64, device=device,
                  requires_grad=True)
    s = x.std(1)
    np.testing.assert_allclose(s.numpy(), [0.0, np.std([1.0, 2.0, 4.0], ddof=1)])
    s.sum().backward()
    row = np.array([1.0, 2.0, 4.0])
    expected = (row - row.mean()) / (2 * np.std(row, ddof=1))   # dσ/dx = (x - μ)/((n-1)σ)
    np.testing.assert_array_equal(x.grad.numpy()[0], 0.0)
    np.testing.assert_allclose(x.grad.numpy()[1], expected, rtol=1e-12)
    z = mg.tensor(3.0, dtype=mg.float64, device=device, requires_grad=True)
    z.std(correction=0).backward()                       # a 0-d tensor: σ = 0 too
    assert z.grad.item() == 0.0
    for v, n in ((0.1, 3), (0.2497, 6)):                 # constants whose Σx/n rounds
        c = mg.tensor([v] * n, dtype=mg.float64, device=device, requires_grad=True)
        g, = mg.grad(c.std(), [c], create_graph=True)    # (the Tensor-level backward)
        c.std().backward()
        assert c.std().item() == 0.0 and g.tolist() == c.grad.tolist() == [0.0] * n


@pytest.mark.filterwarnings("ignore:overflow")
def test_var_of_values_near_the_largest_float64_is_inf_as_torch():
    """Shifted by the first element (above), ±1e308 would make inf - inf: the plain mean
    instead, and the variance overflows to inf, as PyTorch's."""
    x = mg.tensor([1e308, -1e308, 1e308], dtype=mg.float64)
    assert x.var().item() == math.inf and x.std(correction=0).item() == math.inf


@pytest.mark.parametrize("name", ["sum", "mean", "var", "std"])
def test_an_empty_dim_tuple_reduces_every_dim_as_torch(name, device):
    a = np.arange(6.0).reshape(2, 3) ** 2
    x = mg.tensor(a, dtype=mg.float64, device=device, requires_grad=True)
    y = getattr(x, name)(dim=())
    assert y.shape == () and getattr(x, name)(dim=(), keepdim=True).shape == (1, 1)
    np.testing.assert_allclose(y.item(), getattr(x, name)().item(), rtol=1e-12)
    y.backward()
    g = x.grad.numpy()
    x.grad = None
    getattr(x, name)().backward()
    np.testing.assert_allclose(g, x.grad.numpy(), rtol=1e-12)


def test_argmax_without_dim_keeps_dims_and_refuses_empty(device):
    a = np.array([[1.0, 5.0, 2.0], [0.0, 3.0, 9.0]])
    t = mg.tensor(a, device=device)
    assert t.argmax(keepdim=True).shape == (1, 1) and t.argmax(keepdim=True).item() == 5
    assert t.argmin(keepdim=True).shape == (1, 1) and t.argmin().item() == 3
    for fn in (lambda e: e.argmax(), lambda e: e.argmin(), lambda e: e.argmax(0)):
        with pytest.raises(ValueError, match=r"arg(max|min).*\(0, 3\)"):
            fn(mg.zeros(0, 3, device=device))
    assert mg.zeros(0, 3, device=device).argmax(1).shape == (0,)


def test_sums_over_a_leading_axis_do_not_drift():
    """NumPy adds over a leading axis one row at a time in the array's dtype: float16
    stalled at 2048, float32 over 10⁶ rows of 0.1 drifted. Summed wider (as PyTorch),
    through sum, mean, var, a broadcast's gradient, softmax and logsumexp along dim 0."""
    import minigrad.functional as F
    ones = mg.tensor(np.ones((10000, 3), np.float16))
    assert ones.sum(0).tolist() == [10000.0] * 3
    b = mg.tensor(np.zeros(3, np.float16), requires_grad=True)
    (ones + b).sum().backward()
    assert b.grad.tolist() == [10000.0] * 3
    zeros = mg.tensor(np.zeros((10000, 2), np.float16))
    np.testing.assert_allclose(F.softmax(zeros, 0).numpy()[0], 1e-4, rtol=1e-3)
    np.testing.assert_allclose(F.log_softmax(zeros, 0).numpy()[0], -np.log(1e4), rtol=1e-3)
    np.testing.assert_allclose(mg.logsumexp(zeros, 0).numpy(), np.log(1e4), rtol=1e-3)
    tenths = mg.tensor(np.full((1_000_000, 2), 0.1, np.float32))
    np.testing.assert_allclose(tenths.sum(0).numpy(), 100000.0, rtol=1e-6)
    data = np.random.default_rng(0).normal(1000.0, 1.0, (1_000_000, 2)).astype(np.float32)
    np.testing.assert_allclose(mg.tensor(data).var(0).numpy(), data.astype(np.float64)
                               .var(0, ddof=1), rtol=1e-3)


def test_float32_var_and_std_are_taken_in_float64_on_the_cpu():
    """As PyTorch's CPU: σ² of values near 1e20 passes float32's range (std was inf), and
    the gradient 2(x - μ)/(n - 1) of a widely spread row lost its small entries."""
    big = mg.tensor(np.array([1e20, -1e20, 3e20, 0], np.float32))
    np.testing.assert_allclose(big.std().numpy(), np.std([1e20, -1e20, 3e20, 0], ddof=1),
                               rtol=1e-6)
    x = mg.tensor(np.array([1e8, -1e8, 1, 0], np.float32), requires_grad=True)
    x.var().backward()
    assert x.var().dtype == x.std().dtype == x.grad.dtype == mg.float32
    np.testing.assert_allclose(x.grad.numpy()[2:], [0.5, -1 / 6], rtol=1e-6)


def test_float32_cumprod_accumulates_wider_as_pytorch():
    """A running product that leaves float32's range and comes back is the true one (it
    was 0 where 1e-30·1e-30·1e30·1e30 = 1), and a 0 after an overflow gives 0, not NaN."""
    back = mg.tensor(np.array([1e-30, 1e-30, 1e30, 1e30], np.float32)).cumprod(0)
    np.testing.assert_allclose(back.numpy(), [1e-30, 0.0, 1e-30, 1.0], rtol=1e-6)
    with np.errstate(over="ignore"):
        zero = mg.tensor(np.array([1e30, 1e30, 0, 2], np.float32)).cumprod(0)
    assert zero.numpy()[1] == np.inf and zero.numpy()[2:].tolist() == [0.0, 0.0]


def test_float16_softmax_gradient_and_cumprod_along_long_leading_axes():
    """The backward's sums along dim 0 are wide too: Σ g⊙y over 10⁴ rows is 1, so the
    gradient of softmax(x, 0).sum() is 0 (a float16 running sum stalls near 0.25); a float16
    running product passes 65504 in between and comes back."""
    import minigrad.functional as F
    for fn in (F.softmax, F.log_softmax):
        x = mg.tensor(np.zeros((10000, 2), np.float16), requires_grad=True)
        out = fn(x, 0)
        (out.exp() if fn is F.log_softmax else out).sum().backward()
        assert np.abs(x.grad.numpy().astype(np.float64)).max() < 1e-6, fn.__name__
    with np.errstate(over="ignore"):                     # (9e4 itself is inf in float16)
        p = mg.tensor(np.array([300, 300, 1 / 300, 1 / 300], np.float16)).cumprod(0)
    np.testing.assert_allclose(p.numpy()[-1], 1.0, rtol=2e-3)


def test_a_sum_along_a_non_contiguous_last_axis_does_not_drift():
    x = mg.tensor(np.full((1_000_000, 2), 0.1, np.float32))
    np.testing.assert_allclose(x.T.sum(1).numpy(), 100000.0, rtol=1e-6)


def _product_grads(op, x, g, create_graph):
    """The gradient of prod/cumprod along dim 1, by the fast path or (create_graph) the
    twice-differentiable reference."""
    t = mg.tensor(x, requires_grad=True)
    y = t.prod(1, keepdim=True) if op == "prod" else t.cumprod(1)
    gx, = mg.grad(y, t, mg.tensor(g[:, :y.shape[1]]), create_graph=create_graph)
    return gx.detach().numpy()


@pytest.mark.parametrize("op", ["prod", "cumprod"])
def test_product_gradients_with_zeros_fast_path_is_the_reference(op):
    """Rows with no zero, one, two and three: the graph-free backward (counting zeros, as
    PyTorch) agrees with the reference built of products only, and with the definition."""
    rng = np.random.default_rng(0)
    x = rng.choice([0.0, 0.5, -2.0, 3.0, 1.5], (400, 6))
    g = rng.standard_normal((400, 6))
    fast, ref = (_product_grads(op, x, g, cg) for cg in (False, True))
    np.testing.assert_allclose(fast, ref, rtol=1e-12, atol=1e-12)
    want = np.zeros_like(x)                              # d/dx_j Σ_i g_i Π_{k≤i} x_k
    for r in range(len(x)):
        for j in range(6):
            for i in (range(j, 6) if op == "cumprod" else [5]):
                others = np.delete(x[r, :i + 1], j)
                want[r, j] += g[r, i if op == "cumprod" else 0] * np.prod(others)
    np.testing.assert_allclose(fast, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype, x, prod_grad, cumprod_grad", [
    # PyTorch's figures, but for the last two, where PyTorch gives inf and NaN from an
    # overflow the float64 products here avoid (the true values: 1e40 is past float32)
    ("float32", [1, 0, 0, 1e20, 1e20], [0, 0, 0, 0, 0], [1, 1, 0, 0, 0]),
    ("float16", [2, 0, 0, 300, 300], [0, 0, 0, 0, 0], [1, 2, 0, 0, 0]),
    ("float32", [1, 0, 1e20, 1e20, 1e-30, 1e-30], [0, 1e-20, 0, 0, 0, 0],
     [1, np.inf, 0, 0, 0, 0]),
    ("float32", [3, 1e20, 1e20, 0, 2], [0, 0, 0, np.inf, 0], [np.inf, 3e20, 3e20, np.inf, 0]),
    ("float32", [0, 1e20, 1e20, 0, 5], [0, 0, 0, 0, 0], [np.inf, 0, 0, 0, 0])])
def test_product_gradients_where_partial_products_overflow(dtype, x, prod_grad, cumprod_grad):
    """A zero beside values whose partial products overflow: 0, not 0·inf = NaN."""
    for op, want in (("prod", prod_grad), ("cumprod", cumprod_grad)):
        t = mg.tensor(np.array(x, dtype=dtype), requires_grad=True)
        (t.prod() if op == "prod" else t.cumprod(0).sum()).backward()
        np.testing.assert_allclose(t.grad.numpy().astype(np.float64), want, rtol=1e-6)
    # an inf beside the one zero: 0·inf (NaN) for the others, 0 for the inf itself (its
    # others hold the zero), inf at the zero; huge values beside a zero: 0, where PyTorch's
    # products overflow into a NaN (its figures otherwise)
    for x, want in (([3.0, np.inf, 0.0, 2.0], [np.nan, 0.0, np.inf, np.nan]),
                    ([np.nan, 0.0, 2.0], [0.0, np.nan, np.nan]),
                    ([1e200, 1e200, 0.0, 3.0], [0.0, 0.0, np.inf, 0.0])):
        t = mg.tensor(x, dtype=mg.float64, requires_grad=True)
        t.prod().backward()
        np.testing.assert_array_equal(t.grad.numpy(), want)


def test_var_and_std_are_one_op_accurate_to_float32_in_value_and_gradient():
    """var/std of float32 on the CPU: one op (the input is not cast to float64 and back,
    its gradient graph stays float32), the mean and Σ(x - μ)² accumulated in float64. With
    mean 1e4 and σ = 1e-2, the value and the gradient 2(x - μ)/(n - 1) keep float32's digits
    (a float32 mean loses ~5% of each x - μ: PyTorch's gradient is 2e-2 off there)."""
    rng = np.random.default_rng(8)
    for shape, dim in (((20000,), None), ((300, 200), 0), ((200, 300), 1)):
        a = rng.normal(1e4, 1e-2, shape).astype(np.float32)
        a64 = a.astype(np.float64)
        n = a.size if dim is None else shape[dim]
        centered = a64 - a64.mean(axis=dim, keepdims=True)
        for name in ("var", "std"):
            x = mg.tensor(a, requires_grad=True)
            y = getattr(x, name)(dim)
            assert type(y._ctx).__name__ == "Var" and y._ctx.inputs[0] is x
            assert y.dtype == mg.float32 and y.shape == (() if dim is None else
                                                          (shape[1 - dim],))
            want = a64.var(axis=dim, ddof=1)
            want = want if name == "var" else np.sqrt(want)
            np.testing.assert_allclose(y.numpy(), want, rtol=2e-7)
            y.sum().backward()
            g = 2 * centered / (n - 1) if name == "var" else \
                centered / ((n - 1) * np.sqrt(a64.var(axis=dim, ddof=1, keepdims=True)))
            assert x.grad.dtype == mg.float32
            np.testing.assert_allclose(x.grad.numpy(), g, rtol=0, atol=3e-7 * np.abs(g).max())


def test_var_and_std_of_extreme_magnitudes_in_float32():
    """(x - μ)² of float32 values beyond 1.8e19 or below 1e-19 leaves float32's range;
    squared and summed in float64, σ comes back exact."""
    for values in ([3e19] + [0.0] * 99, [1e-20, 2e-20, 4e-20], [1e-30, 3e-30, 2e-30]):
        a = np.array(values, np.float32)
        np.testing.assert_allclose(mg.tensor(a).std().item(), np.std(a.astype(np.float64),
                                                                     ddof=1), rtol=1e-6)
        x = mg.tensor(a, requires_grad=True)
        x.std().backward()
        c = a.astype(np.float64) - a.astype(np.float64).mean()
        g = c / ((len(a) - 1) * np.std(a.astype(np.float64), ddof=1))
        np.testing.assert_allclose(x.grad.numpy(), g, rtol=1e-5, atol=1e-6 * np.abs(g).max())


@pytest.mark.parametrize("name", ["var", "std"])
def test_var_and_std_second_order_in_float32_match_float64(name):
    """The Tensor-level backward (create_graph=True) takes x - μ from the same accurate μ:
    its first gradient equals the fast one, its second order that of float64."""
    rng = np.random.default_rng(9)
    a, w = rng.normal(1e3, 1.0, (6, 7)), rng.standard_normal((6, 7))
    out = {}
    for dtype in ("float32", "float64"):
        x = mg.tensor(a, dtype=dtype, requires_grad=True)
        g, = mg.grad(getattr(x, name)(1).sum(), x, create_graph=True)
        fast, = mg.grad(getattr(x, name)(1).sum(), x)
        np.testing.assert_allclose(g.numpy(), fast.numpy(), rtol=1e-5, atol=1e-6)
        h, = mg.grad((g * g * mg.tensor(w, dtype=dtype)).sum(), x)   # (Σg² of σ is 1/(n-1))
        out[dtype] = g.numpy(), h.numpy()
    for f32, f64 in zip(out["float32"], out["float64"]):
        np.testing.assert_allclose(f32, f64, rtol=1e-3, atol=1e-4 * np.abs(f64).max())


def test_var_and_std_as_functions_as_torch():
    """torch.var(x, dim, ...) and torch.std are the methods under mg.'s name too."""
    x = mg.tensor([[1.0, 2.0, 4.0], [0.0, 0.0, 3.0]], dtype=mg.float64)
    np.testing.assert_allclose(mg.var(x, 1, correction=0).numpy(), [14 / 9, 2.0])
    assert mg.std(x, unbiased=False).item() == pytest.approx(x.numpy().std())
    with pytest.raises(TypeError, match="mg.var: expected a Tensor first"):
        mg.var([1.0, 2.0])
