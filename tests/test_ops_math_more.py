"""sin/cos/log1p/expm1, the piecewise-constant sign/floor/ceil/round/trunc (gradient 0),
% and //, nan_to_num; the reductions prod, amax/amin and norm; F.normalize and F.cosine_similarity.
Each through the op suite (vs torch, float64 gradcheck with a NumPy forward, double
backward, the spy device), then their edge values (zeros, ties, NaN/inf, integers, empty
tensors) and their errors, torch-free where the expected values can be written down."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from op_helpers import (OpCase, unary, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch, check_on_spy)


INF = float("inf")


def _np_norm(p, axis=None, keepdims=False):
    def fn(a):
        a = np.abs(a)
        if abs(p) == INF:
            return (a.max if p > 0 else a.min)(axis, keepdims=keepdims)
        if p == 0:
            return (a != 0).sum(axis, keepdims=keepdims).astype(a.dtype)
        return (a ** p).sum(axis, keepdims=keepdims) ** (1 / p)
    return fn


def _np_cosine(a, b, axis):
    a, b = np.broadcast_arrays(a, b)
    na = np.maximum(np.sqrt((a * a).sum(axis, keepdims=True)), 1e-8)
    nb = np.maximum(np.sqrt((b * b).sum(axis, keepdims=True)), 1e-8)
    return ((a / na) * (b / nb)).sum(axis)


def _torch_f(name, **kw):
    def fn(*xs):
        import torch
        return getattr(torch.nn.functional, name)(*xs, **kw)
    return fn


SHAPES_2 = [(), (2, 3)]
CASES = (
    unary("sin", lambda x: x.sin(), np_fn=np.sin)
    + unary("cos", lambda x: x.cos(), np_fn=np.cos)
    + unary("log1p", lambda x: x.log1p(), np_fn=np.log1p, domain="unit")
    + unary("expm1", lambda x: x.expm1(), np_fn=np.expm1)
    # flat between jumps: values drawn away from them (integers, halves, 0)
    + unary("sign", lambda x: x.sign(), SHAPES_2, np_fn=np.sign, domain="nonzero")
    + unary("floor", lambda x: x.floor(), SHAPES_2, np_fn=np.floor)
    + unary("ceil", lambda x: x.ceil(), SHAPES_2, np_fn=np.ceil)
    + unary("trunc", lambda x: x.trunc(), SHAPES_2, np_fn=np.trunc)
    + unary("round", lambda x: x.round(), SHAPES_2, np_fn=np.round)
    + [OpCase("round_decimals", lambda x: x.round(decimals=1), ((2, 3),),
              np_fn=lambda a: np.round(a, 1)),
       OpCase("round_tens", lambda x: (x * 40).round(decimals=-1), ((2, 3),),
              np_fn=lambda a: np.round(a * 40, -1)),
       OpCase("nan_to_num_finite", lambda x: x.nan_to_num(), ((2, 3),), np_fn=np.nan_to_num),
       # % and // floored, as Python and PyTorch (the sign of b); values away from the jumps
       OpCase("remainder", lambda a, b: a % b, ((2, 3), (3,)), np_fn=np.remainder,
              domain=("real", "nonzero")),
       OpCase("remainder_scalars", lambda a: 5.5 % (a % 0.7 + 1), ((2, 3),),
              np_fn=lambda a: np.remainder(5.5, np.remainder(a, 0.7) + 1),
              torch_fn=lambda a: (a * 0 + 5.5) % (a % 0.7 + 1)),   # torch: no d(5.5 % b)/db
       OpCase("floor_divide", lambda a, b: a // b, ((2, 3), (3,)), np_fn=np.floor_divide,
              torch_fn=lambda a, b: (a / b).floor(), domain=("real", "nonzero")),
       OpCase("prod_all", lambda x: x.prod(), ((2, 3),), np_fn=np.prod),
       OpCase("prod_dim", lambda x: x.prod(1), ((3, 4),), np_fn=lambda a: a.prod(1)),
       OpCase("prod_keepdim_neg", lambda x: x.prod(-3, keepdim=True), ((2, 3, 4),),
              np_fn=lambda a: a.prod(0, keepdims=True)),
       OpCase("prod_0d", lambda x: x.prod(0), ((),), np_fn=lambda a: a),
       OpCase("amax_all", lambda x: x.amax(), ((2, 3),), np_fn=np.max),
       OpCase("amax_dims", lambda x: x.amax((0, 2)), ((2, 3, 4),),
              np_fn=lambda a: a.max((0, 2))),
       OpCase("amin_keepdim", lambda x: x.amin(-1, keepdim=True), ((3, 4),),
              np_fn=lambda a: a.min(-1, keepdims=True)),
       OpCase("amin_0d", lambda x: x.amin(), ((),), np_fn=lambda a: a),
       OpCase("norm", lambda x: x.norm(), ((2, 3),), np_fn=_np_norm(2)),
       OpCase("norm_0d", lambda x: x.norm(), ((),), np_fn=_np_norm(2), domain="nonzero"),
       OpCase("norm2_dim", lambda x: x.norm(2, 1), ((3, 4),), np_fn=_np_norm(2, 1)),
       OpCase("norm_fro_dims", lambda x: x.norm("fro", (0, 2), keepdim=True), ((2, 3, 4),),
              np_fn=_np_norm(2, (0, 2), True)),
       OpCase("norm1", lambda x: x.norm(1, 0), ((3, 4),), np_fn=_np_norm(1, 0),
              domain="nonzero"),
       OpCase("norm_inf", lambda x: x.norm(INF, 1), ((3, 4),), np_fn=_np_norm(INF, 1)),
       OpCase("norm_-inf", lambda x: x.norm(-INF), ((3, 4),), np_fn=_np_norm(-INF),
              domain="nonzero"),
       OpCase("norm3", lambda x: x.norm(3, -1), ((3, 4),), np_fn=_np_norm(3, -1)),
       OpCase("norm1.5", lambda x: x.norm(1.5, 0, keepdim=True), ((3, 4),),
              np_fn=_np_norm(1.5, 0, True), domain="nonzero"),
       OpCase("norm0.5", lambda x: x.norm(0.5, 1), ((3, 4),), np_fn=_np_norm(0.5, 1),
              domain="nonzero"),
       OpCase("norm-1", lambda x: x.norm(-1, 1), ((3, 4),), np_fn=_np_norm(-1, 1),
              domain="nonzero"),
       OpCase("norm0", lambda x: x.norm(0, 1), ((3, 4),), np_fn=_np_norm(0, 1)),
       OpCase("normalize", lambda x: F.normalize(x), ((2, 3),), torch_fn=_torch_f("normalize"),
              np_fn=lambda a: a / np.sqrt((a * a).sum(1, keepdims=True))),
       OpCase("normalize_p1_dim0", lambda x: F.normalize(x, p=1.0, dim=0), ((3, 4),),
              torch_fn=_torch_f("normalize", p=1.0, dim=0), domain="nonzero",
              np_fn=lambda a: a / np.abs(a).sum(0, keepdims=True)),
       OpCase("cosine_similarity", lambda a, b: F.cosine_similarity(a, b), ((2, 3), (2, 3)),
              torch_fn=_torch_f("cosine_similarity"), np_fn=lambda a, b: _np_cosine(a, b, 1)),
       OpCase("cosine_similarity_bcast", lambda a, b: F.cosine_similarity(a, b, dim=-1),
              ((3,), (4, 3)), torch_fn=_torch_f("cosine_similarity", dim=-1),
              np_fn=lambda a, b: _np_cosine(a, b, -1))]
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


@pytest.mark.parametrize("case", CASES, ids=str)
def test_on_the_gpu_stand_in(case, spy):
    check_on_spy(case, spy)


# ---- unary functions: integers, NaN, halves, zero gradients --------------------------------
def test_integer_and_bool_inputs_follow_torch(device):
    i = mg.tensor([-2, 0, 3], dtype="int32", device=device)
    for name in ("sin", "cos", "log1p", "expm1"):
        y = getattr(mg, name)(mg.tensor([1, 2], device=device))
        assert y.dtype == mg.float32, name
        np.testing.assert_allclose(y.numpy(), getattr(np, name)([1.0, 2.0]), rtol=1e-6)
    for name in ("floor", "ceil", "trunc", "round"):
        y = getattr(i, name)()
        assert y.dtype == i.dtype and y.numpy().tolist() == [-2, 0, 3], name
    assert i.sign().dtype == i.dtype and i.sign().numpy().tolist() == [-1, 0, 1]
    b = mg.tensor([True, False], device=device)
    assert b.sign().dtype == mg.bool and b.sign().numpy().tolist() == [True, False]
    assert i.nan_to_num().dtype == i.dtype and i.nan_to_num().numpy().tolist() == [-2, 0, 3]


def test_sign_is_zero_at_nan_as_torch(device):
    x = mg.tensor([np.nan, -0.0, -3.0, 2.0, np.inf], device=device)
    assert x.sign().numpy().tolist() == [0.0, 0.0, -1.0, 1.0, 1.0]


@pytest.mark.parametrize("dtype_name", ["float32", "float64"])
def test_round_half_to_even_and_decimals_as_torch(dtype_name, device):
    def r(values, **kw):
        return mg.tensor(values, dtype=dtype_name, device=device).round(**kw).numpy().tolist()
    assert r([0.5, 1.5, 2.5, -0.5, -2.5, 3.5]) == [0.0, 2.0, 2.0, -0.0, -2.0, 4.0]
    assert r([15.0, 25.0, 35.0, -25.0], decimals=-1) == [20.0, 20.0, 40.0, -20.0]
    assert r([1234.5], decimals=-2) == [1200.0]
    got = r([1.25, 1.35, 0.125], decimals=1)       # 1.25 is exact: half to even, 1.2
    np.testing.assert_allclose(got, [1.2, 1.4, 0.1], rtol=1e-7)
    assert mg.round(mg.tensor([2.5]), decimals=0).numpy().tolist() == [2.0]


@pytest.mark.parametrize("name", ["sign", "floor", "ceil", "trunc", "round"])
def test_piecewise_constant_functions_have_a_zero_gradient(name, device):
    x = mg.tensor([-1.5, 0.0, 0.5, 2.0], dtype="float64", device=device, requires_grad=True)
    y = getattr(x, name)()
    assert y.requires_grad and type(y._ctx).__name__ == "Step"
    (y * 3).sum().backward()
    assert x.grad is not None and x.grad.numpy().tolist() == [0.0] * 4


@pytest.mark.parametrize("dtype_name", ["float16", "float32", "float64"])
def test_nan_to_num_values_and_gradient(dtype_name, device):
    big = float(np.finfo(dtype_name).max)
    x = mg.tensor([np.nan, np.inf, -np.inf, 1.5], dtype=dtype_name, device=device,
                  requires_grad=True)
    assert x.nan_to_num().numpy().tolist() == [0.0, big, -big, 1.5]
    y = mg.nan_to_num(x, nan=2.0, posinf=3.0, neginf=-4.0)
    assert y.dtype == x.dtype and y.numpy().tolist() == [2.0, 3.0, -4.0, 1.5]
    assert x.nan_to_num(1.0, None, -1.0).numpy().tolist() == [1.0, big, -1.0, 1.5]
    (y * 5).sum().backward()                   # 1 where x was finite, 0 where replaced
    assert x.grad.numpy().tolist() == [0.0, 0.0, 0.0, 5.0]


# ---- prod: zeros and integers ---------------------------------------------------------------
_WITH_ZEROS = np.array([[2.0, -3.0, 0.5, 4.0], [2.0, 0.0, 0.5, 4.0], [0.0, 3.0, 0.0, 4.0],
                        [0.0, 0.0, 0.0, 0.0]])


def test_prod_gradient_with_one_or_several_zeros(device):
    """d/dxᵢ Πx is the product of the others: nonzero only at a lone zero of its row."""
    x = mg.tensor(_WITH_ZEROS, dtype="float64", device=device, requires_grad=True)
    x.prod(1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[-6.0, 4.0, -24.0, -3.0], [0.0, 4.0, 0.0, 0.0],
                                                [0.0] * 4, [0.0] * 4])
    for fn in (lambda a: a.prod(1), lambda a: a.prod(0, keepdim=True), lambda a: a.prod()):
        xs = [mg.tensor(_WITH_ZEROS, dtype="float64", device=device, requires_grad=True)]
        assert mg.gradcheck(fn, xs) and mg.gradgradcheck(fn, xs)


def test_prod_with_zeros_vs_torch_to_second_order(device):
    torch = pytest.importorskip("torch")
    v = np.random.default_rng(0).standard_normal(_WITH_ZEROS.shape)
    for dim in (None, 0, 1):
        x = mg.tensor(_WITH_ZEROS, dtype="float64", device=device, requires_grad=True)
        t = torch.tensor(_WITH_ZEROS, requires_grad=True)
        g, = mg.grad(x.prod() if dim is None else x.prod(dim).sum(), x, create_graph=True)
        tg, = torch.autograd.grad(t.prod() if dim is None else t.prod(dim).sum(), t,
                                  create_graph=True)
        hv, = mg.grad((g * mg.tensor(v, device=device)).sum(), x)
        thv, = torch.autograd.grad((tg * torch.tensor(v)).sum(), t)
        np.testing.assert_allclose(g.numpy(), tg.detach().numpy(), err_msg=str(dim))
        np.testing.assert_allclose(hv.numpy(), thv.numpy(), err_msg=str(dim))


def test_prod_of_integers_bools_and_empty_tensors_as_torch(device):
    i = mg.tensor([[2, 3], [4, 5]], dtype="int32", device=device)
    assert i.prod().dtype == mg.int64 and i.prod().item() == 120
    assert i.prod(0).numpy().tolist() == [8, 15] and i.prod(1, keepdim=True).shape == (2, 1)
    b = mg.tensor([True, False], device=device)
    assert b.prod().dtype == mg.int64 and b.prod().item() == 0
    assert mg.zeros(0, 3, device=device).prod(0).numpy().tolist() == [1.0] * 3
    assert mg.zeros(0, device=device).prod().item() == 1.0
    assert mg.prod(mg.tensor(3.0, device=device), 0).shape == ()


# ---- amax/amin: ties, NaN, empty ------------------------------------------------------------
def test_amax_amin_share_the_gradient_among_ties(device):
    x = mg.tensor([[1.0, 3.0, 3.0], [2.0, 2.0, 2.0]], device=device, requires_grad=True)
    x.amax(1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0.5, 0.5], [1 / 3] * 3], rtol=1e-6)
    x.grad = None
    mg.amin(x).backward()                      # the minimum 1.0 is unique
    np.testing.assert_allclose(x.grad.numpy(), [[1, 0, 0], [0, 0, 0]])
    x.grad = None
    x.amax(()).backward()                      # dim=() is every dim, as torch.amax
    np.testing.assert_allclose(x.grad.numpy(), [[0, 0.5, 0.5], [0, 0, 0]])


def test_amax_of_a_nan_slice_has_a_nan_gradient_as_torch(device):
    x = mg.tensor([[1.0, np.nan, 1.0], [2.0, 2.0, 1.0]], device=device, requires_grad=True)
    y = x.amax(1)
    assert np.isnan(y.numpy()[0]) and y.numpy()[1] == 2.0
    y.sum().backward()
    assert np.isnan(x.grad.numpy()[0]).all()
    np.testing.assert_allclose(x.grad.numpy()[1], [0.5, 0.5, 0.0])


def test_amax_of_integers_and_of_empty_tensors(device):
    i = mg.tensor([[1, 5], [7, 2]], device=device)
    assert i.amax().dtype == mg.int64 and i.amax().item() == 7
    assert i.amin(0).numpy().tolist() == [1, 2]
    assert mg.zeros(0, 3, device=device).amax(1).shape == (0,)
    for call in (lambda: mg.zeros(0, 3).amax(0), lambda: mg.zeros(0, 3).amin()):
        with pytest.raises(IndexError, match=r"a(max|min): dim 0 of shape \(0, 3\) has size 0"):
            call()


# ---- norm, normalize, cosine_similarity at zero ---------------------------------------------
@pytest.mark.parametrize("p", [2, "fro", 1, 3, 1.5, 0.5, INF, -INF, 0])
def test_norm_of_a_zero_slice_has_a_zero_gradient(p, device):
    x = mg.tensor([[0.0, 0.0, 0.0], [3.0, -4.0, 0.0]], dtype="float64", device=device,
                  requires_grad=True)
    y = x.norm(p, 1)
    assert y.numpy()[0] == 0.0
    y.sum().backward()
    assert x.grad.numpy()[0].tolist() == [0.0] * 3 and np.isfinite(x.grad.numpy()).all()


def test_norm_edges(device):
    x = mg.tensor([[3.0, -4.0, 0.0], [1.0, 1.0, 1.0]], device=device)
    assert x.norm().item() == pytest.approx(np.sqrt(28), rel=1e-6)
    assert x.norm(0, 1).numpy().tolist() == [2.0, 3.0]
    assert x.norm(-1, 1).numpy()[0] == 0.0          # a zero element: the -1 norm is 0
    assert x.norm(None, dim=1, keepdim=True).shape == (2, 1)
    assert x.norm(dim=()).item() == pytest.approx(x.norm().item())
    assert mg.norm(x, 1) == x.norm(1) and x.to("float16").norm(2, 1).dtype == mg.float16
    assert mg.zeros(0, 3, device=device).norm().item() == 0.0
    assert mg.zeros(0, 3, device=device).norm(INF, 1).shape == (0,)


def test_normalize_and_cosine_similarity_at_zero_vectors(device):
    z = mg.tensor([[0.0, 0.0], [3.0, 4.0]], device=device, requires_grad=True)
    y = F.normalize(z)
    np.testing.assert_allclose(y.numpy(), [[0, 0], [0.6, 0.8]], rtol=1e-6)
    y.sum().backward()
    assert np.isfinite(z.grad.numpy()).all()
    c = F.cosine_similarity(z, mg.tensor([[1.0, 2.0], [0.0, 0.0]], device=device))
    assert c.numpy().tolist() == [0.0, 0.0]
    i = F.cosine_similarity(mg.tensor([[1, 0]], device=device), mg.tensor([[1.0, 1.0]]).to(
        device))
    assert i.dtype == mg.float32 and i.item() == pytest.approx(2 ** -0.5)


def test_cosine_similarity_gradient_below_eps_is_the_norms_as_torch(device):
    """PyTorch clamps the norms at eps without recording it: where eps replaced a norm the
    gradient still goes through the norm. Values from torch 2.13."""
    a = mg.tensor([[1e-10, 0.0, 0.0], [3.0, 4.0, 0.0]], dtype="float64", device=device,
                  requires_grad=True)
    b = mg.tensor([[1.0, 2.0, 3.0], [0.0, 0.0, 0.0]], dtype="float64", device=device,
                  requires_grad=True)
    F.cosine_similarity(a, b).sum().backward()
    np.testing.assert_allclose(a.grad.numpy()[0], [26458862.94933, 53452248.38248, 80178372.57373],
                               rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), [[0.00248171153204, -0.000381801774161,
                                                 -0.000572702661241], [6e7, 8e7, 0.0]],
                               rtol=1e-9)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: mg.tensor([True]).floor(), TypeError, "floor: not implemented for bool"),
    (lambda: mg.tensor([1, 2]).round(decimals=1), TypeError, "round: decimals=1 needs a "
                                                              "floating-point tensor, got int64"),
    (lambda: mg.ones(2).round(decimals=1.5), TypeError, "round: decimals must be an int"),
    (lambda: mg.ones(2).nan_to_num(nan="x"), TypeError, "nan_to_num: nan must be a number"),
    (lambda: mg.ones(2, 3).prod(keepdim=True), TypeError, "prod: keepdim=True needs a dim"),
    (lambda: mg.ones(2, 3).prod((0, 1)), TypeError, r"prod: dim must be an int.*\(0, 1\)"),
    (lambda: mg.ones(2, 3).prod(2), IndexError, "prod: dim 2 out of range"),
    (lambda: mg.ones(2, 3).amax(2), IndexError, "amax: dim 2 out of range"),
    (lambda: mg.tensor([1, 2]).norm(), TypeError, "norm: needs a floating-point tensor, got "
                                                  "int64"),
    (lambda: mg.ones(2, 3).norm("foo"), ValueError, "norm: p='foo' is not supported; valid"),
    (lambda: mg.ones(2, 2, 2).norm("fro", (0, 1, 2)), ValueError, "'fro' takes at most 2 dims"),
    (lambda: mg.zeros(0, 3).norm(INF), ValueError, r"norm: cannot compute the inf norm over "
                                                   r"an empty dim.*\(0, 3\)"),
    (lambda: mg.zeros(0, 3).norm(-1, 0), ValueError, "cannot compute the -1.0 norm"),
    (lambda: F.normalize(mg.ones(3)), IndexError, "norm: dim 1 out of range"),
    (lambda: F.cosine_similarity(mg.ones(2, 3), mg.ones(2, 4)), ValueError,
     r"cosine_similarity: shapes \(2, 3\) and \(2, 4\) do not broadcast"),
    (lambda: F.cosine_similarity(mg.tensor([[1, 2]]), mg.tensor([[1, 2]])), TypeError,
     "cosine_similarity: needs a floating-point input, got int64 and int64"),
])
def test_bad_arguments_are_named(call, exc, match):
    with pytest.raises(exc, match=match):
        call()


def test_module_level_spellings_match_the_methods():
    x = mg.randn(3, 4)
    for name in ("sin", "cos", "log1p", "expm1", "sign", "floor", "ceil", "trunc", "round",
                 "nan_to_num", "prod", "amax", "amin", "norm"):
        np.testing.assert_array_equal(getattr(mg, name)(x.abs()).numpy(),
                                      getattr(x.abs(), name)().numpy(), err_msg=name)
    assert (mg.round(x, decimals=2) == x.round(decimals=2)).all()


def test_norm_with_p_none_is_the_2_norm_over_any_dims():
    x = mg.ones(2, 2, 2)
    assert x.norm(None, (0, 1, 2)).item() == pytest.approx(8 ** 0.5)
    with pytest.raises(ValueError, match="at most 2 dims"):
        x.norm("fro", (0, 1, 2))


# ---- % and fmod on edge values: PyTorch's answers, written down (observed with torch 2.13) ----
NAN = float("nan")
_MOD_A = [-4.0, 4.0, -0.0, 0.0, 5.5, -5.5, -1e-30, 1e30, INF, NAN]    # rows
_MOD_B = [2.0, -2.0, INF, -INF, 0.0, 0.1]                             # columns
_NAN_ROWS = [[NAN] * 6] * 2                                          # a = ±inf... and NaN
_TORCH_MOD = {
    ("remainder", "float64"): [
        [-0.0, -0.0, INF, -4.0, NAN, 2.220446049250313e-16],
        [0.0, 0.0, 4.0, -INF, NAN, 0.09999999999999978],
        [-0.0, -0.0, -0.0, -0.0, NAN, -0.0], [0.0, 0.0, 0.0, 0.0, NAN, 0.0],
        [1.5, -0.5, 5.5, -INF, NAN, 0.0999999999999997],
        [0.5, -1.5, INF, -5.5, NAN, 3.0531133177191805e-16],
        [2.0, -1e-30, INF, -1e-30, NAN, 0.1],
        [0.0, 0.0, 1e+30, -INF, NAN, 0.07495648791101958]] + _NAN_ROWS,
    ("fmod", "float64"): [
        [-0.0, -0.0, -4.0, -4.0, NAN, -0.09999999999999978],
        [0.0, 0.0, 4.0, 4.0, NAN, 0.09999999999999978],
        [-0.0, -0.0, -0.0, -0.0, NAN, -0.0], [0.0, 0.0, 0.0, 0.0, NAN, 0.0],
        [1.5, 1.5, 5.5, 5.5, NAN, 0.0999999999999997],
        [-1.5, -1.5, -5.5, -5.5, NAN, -0.0999999999999997],
        [-1e-30, -1e-30, -1e-30, -1e-30, NAN, -1e-30],
        [0.0, 0.0, 1e+30, 1e+30, NAN, 0.07495648791101958]] + _NAN_ROWS,
    ("remainder", "float32"): [
        [-0.0, -0.0, INF, -4.0, NAN, 5.960464477539063e-08],
        [0.0, 0.0, 4.0, -INF, NAN, 0.09999994188547134],
        [-0.0, -0.0, -0.0, -0.0, NAN, -0.0], [0.0, 0.0, 0.0, 0.0, NAN, 0.0],
        [1.5, -0.5, 5.5, -INF, NAN, 0.09999991953372955],
        [0.5, -1.5, INF, -5.5, NAN, 8.195638656616211e-08],
        [2.0, -1.0000000031710769e-30, INF, -1.0000000031710769e-30, NAN, 0.10000000149011612],
        [0.0, 0.0, 1.0000000150474662e+30, -INF, NAN, 0.0493038073182106]] + _NAN_ROWS,
    ("fmod", "float32"): [
        [-0.0, -0.0, -4.0, -4.0, NAN, -0.09999994188547134],
        [0.0, 0.0, 4.0, 4.0, NAN, 0.09999994188547134],
        [-0.0, -0.0, -0.0, -0.0, NAN, -0.0], [0.0, 0.0, 0.0, 0.0, NAN, 0.0],
        [1.5, 1.5, 5.5, 5.5, NAN, 0.09999991953372955],
        [-1.5, -1.5, -5.5, -5.5, NAN, -0.09999991953372955],
        [-1.0000000031710769e-30] * 4 + [NAN, -1.0000000031710769e-30],
        [0.0, 0.0, 1.0000000150474662e+30, 1.0000000150474662e+30, NAN, 0.0493038073182106]]
    + _NAN_ROWS,
}


@pytest.mark.parametrize("name, dtype", list(_TORCH_MOD))
def test_remainder_and_fmod_of_edge_values_as_torch(name, dtype, device):
    """Signed zeros (a zero keeps a's sign, in both), ±inf (x % inf is x, or inf when the
    signs differ), division by 0 (NaN), NaN, values far apart: bit for bit PyTorch's."""
    a = mg.tensor(np.array(_MOD_A)[:, None], dtype=dtype, device=device)
    b = mg.tensor(np.array(_MOD_B), dtype=dtype, device=device)
    with np.errstate(invalid="ignore", divide="ignore"):
        got = getattr(mg, name)(a, b).numpy()
    want = np.array(_TORCH_MOD[name, dtype], dtype=dtype)
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(np.signbit(got), np.signbit(want) & ~np.isnan(want) |
                                  np.signbit(got) & np.isnan(got))     # (a NaN's: any)


def test_remainder_and_fmod_of_integers_as_torch(device):
    a = mg.tensor([[7], [-7], [0], [2 ** 63 - 1], [-2 ** 63]], device=device)
    b = mg.tensor([3, -3, 1, -1], device=device)
    assert (a % b).tolist() == [[1, -2, 0, 0], [2, -1, 0, 0], [0, 0, 0, 0], [1, -2, 0, 0],
                                [1, -2, 0, 0]]
    assert mg.fmod(a, b).tolist() == [[1, 1, 0, 0], [-1, -1, 0, 0], [0, 0, 0, 0], [1, 1, 0, 0],
                                      [-2, -2, 0, 0]]


@pytest.mark.parametrize("name", ["remainder", "fmod"])
def test_remainder_and_fmod_match_numpy_on_random_values(name):
    """Away from zero results (whose sign NumPy's remainder takes from b), the formula
    fmod + b equals NumPy's remainder exactly; the gradient of b is -quotient only when b
    wants one, and a's is 1."""
    rng = np.random.default_rng(7)
    for dtype in (np.float32, np.float64):
        a = (rng.standard_normal(2000) * 10.0 ** rng.integers(-5, 6, 2000)).astype(dtype)
        b = (rng.standard_normal(2000) * 10.0 ** rng.integers(-5, 6, 2000)).astype(dtype)
        got = getattr(mg, name)(mg.tensor(a), mg.tensor(b)).numpy()
        np.testing.assert_array_equal(got, getattr(np, name)(a, b))
        x, y = mg.tensor(a, requires_grad=True), mg.tensor(b, requires_grad=True)
        getattr(mg, name)(x, y).sum().backward()
        quotient = np.floor_divide(a, b) if name == "remainder" else np.rint(
            (a - np.fmod(a, b)) / b)
        np.testing.assert_array_equal(x.grad.numpy(), np.ones_like(a))
        np.testing.assert_array_equal(y.grad.numpy(), -quotient)
        x = mg.tensor(a, requires_grad=True)
        getattr(mg, name)(x, mg.tensor(b)).sum().backward()
        np.testing.assert_array_equal(x.grad.numpy(), np.ones_like(a))
