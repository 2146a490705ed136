"""PyTorch's smaller tensor methods: flip, repeat, cumsum, logsumexp, reciprocal/rsqrt,
mm/bmm/dot/outer (differentiable, through the op suite), and the boolean ones
(eq/ne/lt/le/gt/ge, isnan/isinf/isfinite, any/all)."""
import numpy as np
import pytest
from scipy.special import logsumexp as np_logsumexp

import minigrad as mg
from op_helpers import OpCase, unary, check_vs_torch, check_gradcheck, \
    check_double_backward_vs_torch, check_on_spy


CASES = (
    [OpCase("flip0", lambda x: x.flip(0), ((3, 4),), np_fn=lambda a: a[::-1]),
     OpCase("flip_02", lambda x: x.flip(0, -1), ((2, 3, 4),), torch_fn=lambda x: x.flip(0, -1),
            np_fn=lambda a: a[::-1, :, ::-1]),
     OpCase("repeat", lambda x: x.repeat(2, 3), ((2, 3),), np_fn=lambda a: np.tile(a, (2, 3))),
     OpCase("repeat_new_dims", lambda x: x.repeat(2, 1, 3), ((3,),),
            np_fn=lambda a: np.tile(a, (2, 1, 3))),
     OpCase("repeat_0d", lambda x: x.repeat(4), ((),), np_fn=lambda a: np.tile(a, 4)),
     OpCase("cumsum1", lambda x: x.cumsum(1), ((3, 4),), np_fn=lambda a: np.cumsum(a, 1)),
     OpCase("cumsum_neg", lambda x: x.cumsum(-3), ((2, 3, 4),),
            np_fn=lambda a: np.cumsum(a, 0)),
     OpCase("cumsum_0d", lambda x: x.cumsum(0), ((),), np_fn=lambda a: a),
     OpCase("logsumexp", lambda x: x.logsumexp(1), ((3, 4),),
            np_fn=lambda a: np_logsumexp(a, 1)),
     OpCase("logsumexp_keep", lambda x: x.logsumexp((0, 2), keepdim=True), ((2, 3, 4),),
            np_fn=lambda a: np_logsumexp(a, (0, 2), keepdims=True)),
     OpCase("mm", lambda a, b: a.mm(b), ((2, 3), (3, 4)), np_fn=lambda a, b: a @ b),
     OpCase("bmm", lambda a, b: a.bmm(b), ((2, 2, 3), (2, 3, 4)), np_fn=lambda a, b: a @ b),
     OpCase("dot", lambda a, b: a.dot(b), ((5,), (5,)), np_fn=lambda a, b: a @ b),
     OpCase("outer", lambda a, b: a.outer(b), ((3,), (4,)), np_fn=np.outer)]
    + unary("reciprocal", lambda x: x.reciprocal(), np_fn=lambda a: 1 / a, domain="nonzero")
    + unary("rsqrt", lambda x: x.rsqrt(), np_fn=lambda a: a ** -0.5, domain="positive")
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


@pytest.mark.filterwarnings("ignore::RuntimeWarning")        # NumPy on log(0), inf - inf
def test_logsumexp_extremes():
    x = mg.tensor([[1000.0, 1000.0], [-1000.0, -1000.0], [-np.inf, -np.inf],
                   [np.inf, 0.0], [np.nan, 0.0]], dtype="float64", requires_grad=True)
    y = x.logsumexp(1)
    np.testing.assert_allclose(y.numpy()[:2], [1000 + np.log(2), -1000 + np.log(2)])
    assert y.numpy()[2] == -np.inf and y.numpy()[3] == np.inf and np.isnan(y.numpy()[4])
    y[:2].sum().backward()                                 # the gradient is the softmax
    np.testing.assert_allclose(x.grad.numpy()[:2], 0.5)
    assert mg.zeros(0, 3).logsumexp(0).numpy().tolist() == [-np.inf] * 3


def test_logsumexp_of_integers_is_float32_as_torch():
    y = mg.tensor([1, 2]).logsumexp(0)
    assert y.dtype == mg.float32 and abs(y.numpy().item() - np_logsumexp([1, 2])) < 1e-6


def test_cumsum_of_integers_and_bools_is_int64_as_torch():
    for t in (mg.tensor([1, 2, 3], dtype="int32"), mg.tensor([True, False, True])):
        c = t.cumsum(0)
        assert c.dtype == mg.int64 and c.numpy().tolist() == np.cumsum(t.numpy()).tolist()


def test_boolean_methods(device):
    a = mg.tensor([[1.0, np.nan, 3.0], [np.inf, -2.0, 0.0]], device=device)
    b = mg.tensor([1.0, 0.0, 4.0], device=device)
    an, bn = a.numpy(), b.numpy()
    with np.errstate(invalid="ignore"):
        for name, ref in [("eq", an == bn), ("ne", an != bn), ("lt", an < bn),
                          ("le", an <= bn), ("gt", an > bn), ("ge", an >= bn)]:
            out = getattr(a, name)(b)
            assert out.dtype == mg.bool and out.numpy().tolist() == ref.tolist(), name
    for name in ("isnan", "isinf", "isfinite"):
        out = getattr(a, name)()
        assert out.dtype == mg.bool and not out.requires_grad
        assert out.numpy().tolist() == getattr(np, name)(an).tolist(), name
    z = mg.tensor([[0.0, 1.0], [0.0, 0.0]], device=device, requires_grad=True)
    assert z.any().numpy().item() is True and z.all().numpy().item() is False
    assert z.any(1).numpy().tolist() == [True, False]
    assert z.all(0, keepdim=True).shape == (1, 2) and z.any().dtype == mg.bool
    assert mg.tensor(2.0, device=device).all().shape == ()


def test_flip_and_repeat_are_copies_with_their_own_memory():
    x = mg.tensor([1.0, 2.0, 3.0])
    f, r = x.flip(0), x.repeat(2)
    with mg.no_grad():
        x[0] = 10.0
    assert f.numpy().tolist() == [3.0, 2.0, 1.0] and r.numpy().tolist() == [1, 2, 3, 1, 2, 3]


@pytest.mark.parametrize("call,match", [
    (lambda: mg.ones(2, 3).repeat(2), "one non-negative int per dim"),
    (lambda: mg.ones(2).repeat(-1), "one non-negative int per dim"),
    (lambda: mg.ones(2, 3).mm(mg.ones(3)), r"mm: needs two matrices.*\(2, 3\) and \(3,\)"),
    (lambda: mg.ones(2, 2, 3).bmm(mg.ones(3, 3, 4)), "bmm: batch sizes differ"),
    (lambda: mg.ones(3).dot(mg.ones(2, 3)), "dot: needs two vectors"),
    (lambda: mg.ones(3).dot(mg.ones(4)), r"dot: shapes \(3,\) and \(4,\) do not align"),
    (lambda: mg.ones(2, 3).mm(mg.ones(4, 2)), "mm: shapes .* do not align"),
    (lambda: mg.ones(2, 3).eq(mg.ones(4)), r"equal: shapes \(2, 3\) and \(4,\) do not broadcast"),
    (lambda: mg.ones(2, 3).outer(mg.ones(2)), "outer: needs two vectors"),
    (lambda: mg.ones(2, 3).cumsum(2), "dim 2"),
    (lambda: mg.ones(2, 3).cumsum((0, 1)), "cumsum: dim must be an int"),
    (lambda: mg.ones(2, 3).flip(3), "dim 3"),
    (lambda: mg.ones(2, 3).logsumexp(2), "dim 2"),
])
def test_bad_arguments_are_named(call, match):
    with pytest.raises((ValueError, TypeError, IndexError), match=match):
        call()


def test_module_level_spellings_match_the_methods():
    x = mg.randn(3, 4)
    v, w = mg.randn(4), mg.randn(4)
    for a, b in [(mg.flip(x, 1), x.flip(1)), (mg.flip(x, (0, 1)), x.flip(0, 1)),
                 (mg.cumsum(x, 0), x.cumsum(0)), (mg.logsumexp(x, 1), x.logsumexp(1)),
                 (mg.mm(x, x.T), x.mm(x.T)), (mg.bmm(x[None], x.T[None]), x[None].bmm(x.T[None])),
                 (mg.dot(v, w), v.dot(w)), (mg.outer(v, w), v.outer(w)),
                 (mg.isnan(x), x.isnan()), (mg.isinf(x), x.isinf()),
                 (mg.isfinite(x), x.isfinite())]:
        np.testing.assert_array_equal(a.numpy(), b.numpy())


@pytest.mark.parametrize("call", [lambda x: x.reshape(3.0, 2), lambda x: x.flip(0.5),
                                  lambda x: x.repeat(True, 1), lambda x: x.permute(1, 0.0),
                                  lambda x: x.view((2.0, 3)), lambda x: x.expand(2, 3.5)])
def test_sizes_and_dims_must_be_integers_not_truncated(call):
    with pytest.raises(TypeError, match="must be integers"):
        call(mg.ones(2, 3))


def test_repeat_and_cumsum_always_return_new_memory():
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]])
    y, z = x.repeat(1, 1), mg.tensor(3)
    c = z.cumsum(0)
    with mg.no_grad():
        y += 1
        c += 1
    assert x.numpy().tolist() == [[1.0, 2.0], [3.0, 4.0]] and z.item() == 3


@pytest.mark.parametrize("make", [lambda x: x.repeat(2, 1), lambda x: x.tile((3, 1)),
                                  lambda x: x.repeat_interleave(2, 0),
                                  lambda x: mg.repeat_interleave(x[:, 0], 3)])
def test_repeats_of_a_size_one_dim_are_writable_copies(make):
    """Tiles of a size-1 dim merge into a broadcast view of x when reshaped; the result
    must still be a copy (as PyTorch's), writable and blind to later writes to x."""
    x = mg.tensor([[1.0, 2.0]])
    y = make(x)
    before = y.numpy().copy()
    x[0, 0] = 9.0
    y[0] = 5.0                                           # (refused if a broadcast view)
    assert y.numpy()[1:].tolist() == before[1:].tolist() and x.tolist() == [[9.0, 2.0]]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")         # NumPy on sqrt(-inf), 1/-0
def test_cumsum_accumulates_wider_and_rsqrt_keeps_the_sign_of_zero():
    assert mg.full((5000,), 0.1, dtype="float16").cumsum(0)[-1].item() == 500.0
    assert mg.full((10 ** 6,), 0.1).cumsum(0)[-1].item() == pytest.approx(1e5, rel=1e-6)
    r = mg.tensor([-0.0, -np.inf, 4.0]).rsqrt().numpy()
    assert r[0] == -np.inf and np.isnan(r[1]) and r[2] == 0.5


@pytest.mark.parametrize("call", [lambda x: x.flip(0, 0), lambda x: x.sum((1, -1)),
                                  lambda x: x.logsumexp((0, 0)), lambda x: x.any((0, -2))])
def test_a_dim_named_twice_is_refused(call):
    with pytest.raises(ValueError, match="more than once"):
        call(mg.ones(2, 3))


def test_any_all_over_no_dims_and_logsumexp_needs_dims():
    x = mg.tensor([[0.0, 2.0], [1.0, 0.0]])
    assert x.any(()).numpy().tolist() == [[False, True], [True, False]]
    assert x.all(()).shape == (2, 2)
    for dim in (None, ()):
        with pytest.raises(TypeError, match="logsumexp: needs the dim"):
            x.logsumexp(dim)


@pytest.mark.parametrize("call,op", [(lambda x: x.reshape(3.0, 2), "reshape"),
                                     (lambda x: x.repeat(True, 1), "repeat")])
def test_the_size_error_names_the_op(call, op):
    with pytest.raises(TypeError, match=f"{op}: sizes and dims must be integers"):
        call(mg.ones(2, 3))


def test_dims_are_integers_numpy_ones_too_but_never_bools():
    x = mg.ones(2, 3)
    assert x.sum(np.int64(1)).shape == (2,) and x.max(np.int32(0))[0].shape == (3,)
    assert x.cumsum(np.int64(1)).shape == (2, 3) and x.sum((np.int64(0), 1)).shape == ()
    for call in (lambda: x.sum(True), lambda: x.transpose(True, 0), lambda: x.max(True),
                 lambda: x.softmax(False), lambda: x.cumsum(True), lambda: x.sum((0, True))):
        with pytest.raises(TypeError, match="dim must be an int"):
            call()


@pytest.mark.parametrize("call", [
    lambda: mg.full((2,), float("nan"), dtype="int64"), lambda: mg.full((2,), 1e300),
    lambda: mg.full((2,), 2 ** 40, dtype="int32"),
    lambda: mg.tensor([1, 2]).new_full((2,), float("inf")),
    lambda: mg.full_like(mg.tensor([1, 2]), float("nan")),
    lambda: __import__("minigrad.functional").functional.pad(mg.tensor([1, 2]), (1, 0),
                                                             value=float("nan"))])
def test_fill_values_the_dtype_cannot_hold_are_refused(call):
    """NumPy would write -2^63 (NaN into int64) or inf; PyTorch refuses, and so do we."""
    with pytest.raises(ValueError, match="cannot be converted to .* without overflow"):
        call()
    assert mg.full((2,), 2.7, dtype="int64").numpy().tolist() == [2, 2]   # truncation is fine
    assert np.isnan(mg.full((1,), float("nan")).numpy()).all()


@pytest.mark.parametrize("call", [
    lambda x1, x2: x1.index_select(None, [0]), lambda x1, x2: x2.transpose(None, 0),
    lambda x1, x2: x1.sort(None), lambda x1, x2: x2.unsqueeze(None),
    lambda x1, x2: mg.stack([x1, x1], None), lambda x1, x2: x2.unsqueeze(2.0),
    lambda x1, x2: x2.softmax(None), lambda x1, x2: mg.cat([x2, x2], (0,)),
    lambda x1, x2: x2.gather(None, mg.zeros(2, 3, dtype="int64"))])
def test_ops_along_one_dim_need_an_int(call):
    """dim=None on a 1-d tensor was taken as dim 0, on a 2-d one a bare unpacking error."""
    with pytest.raises(TypeError, match="dim must be an int"):
        call(mg.ones(3), mg.ones(2, 3))
