"""torch.linalg's functions that are not factorisations (ops/linalg_more.py, mg.linalg):
vector_norm, matrix_norm, norm, cross, multi_dot, vecdot, diagonal, vander, tensorinv and
tensorsolve. Each through the op suite (vs torch in float32/float64, gradcheck +
gradgradcheck, double backward vs torch) and on the spy device; then the gradients at the
kinks, norm's dispatch, multi_dot's order, and the errors."""
import math

import numpy as np
import pytest

import minigrad as mg
from op_helpers import (OpCase, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch, check_spy_matches_cpu)

INF = math.inf


def L(x):
    """mg.linalg or torch.linalg, whichever x belongs to: one case function serves both."""
    if isinstance(x, mg.Tensor):
        return mg.linalg
    import torch
    return torch.linalg


def well_posed(a, n):
    """a reshaped to n x n plus 4I (entries in [-2, 2]: invertible), then back."""
    eye = mg.eye(n, dtype=a.dtype, device=a.device) if isinstance(a, mg.Tensor) else \
        __import__("torch").eye(n, dtype=a.dtype)
    return (a.reshape(n, n) + 4 * eye).reshape(a.shape)


def float64(x):
    return mg.float64 if isinstance(x, mg.Tensor) else __import__("torch").float64


CASES = [
    OpCase("vector_norm", lambda x: L(x).vector_norm(x), ((2, 3),),
           np_fn=lambda x: np.sqrt((x * x).sum())),
    OpCase("vector_norm_inf_keepdim", lambda x: L(x).vector_norm(x, INF, 1, True), ((2, 3),),
           np_fn=lambda x: abs(x).max(1, keepdims=True)),
    OpCase("vector_norm_-inf", lambda x: L(x).vector_norm(x, -INF, 0), ((2, 3),)),
    OpCase("vector_norm_0", lambda x: L(x).vector_norm(x, 0, (0, 2)), ((2, 3, 2),)),
    OpCase("vector_norm_1", lambda x: L(x).vector_norm(x, 1, -1), ((2, 3),), domain="nonzero"),
    OpCase("vector_norm_3_dims", lambda x: L(x).vector_norm(x, 3, (0, 2)), ((2, 3, 4),)),
    OpCase("vector_norm_0.5", lambda x: L(x).vector_norm(x, 0.5, 1), ((2, 3),)),
    OpCase("vector_norm_-1.5", lambda x: L(x).vector_norm(x, -1.5), ((4,),)),
    OpCase("vector_norm_dtype", lambda x: L(x).vector_norm(x, dtype=float64(x)), ((3,),)),
    OpCase("matrix_norm_fro", lambda a: L(a).matrix_norm(a), ((2, 3, 4),)),
    OpCase("matrix_norm_1", lambda a: L(a).matrix_norm(a, 1), ((2, 3, 4),),
           np_fn=lambda a: np.linalg.norm(a, 1, (-2, -1))),
    OpCase("matrix_norm_-1", lambda a: L(a).matrix_norm(a, -1), ((3, 4),),
           np_fn=lambda a: np.linalg.norm(a, -1)),
    OpCase("matrix_norm_inf", lambda a: L(a).matrix_norm(a, INF), ((2, 3, 4),),
           np_fn=lambda a: np.linalg.norm(a, INF, (-2, -1))),
    OpCase("matrix_norm_-inf_keepdim", lambda a: L(a).matrix_norm(a, -INF, keepdim=True),
           ((2, 3, 4),)),
    OpCase("matrix_norm_1_dims", lambda a: L(a).matrix_norm(a, 1, (2, 0), True), ((2, 3, 4),)),
    OpCase("matrix_norm_inf_dims", lambda a: L(a).matrix_norm(a, INF, (0, 2)), ((2, 3, 4),)),
    OpCase("matrix_norm_nuc", lambda a: L(a).matrix_norm(a, "nuc"), ((2, 3, 4),)),
    OpCase("matrix_norm_2_dims_keepdim", lambda a: L(a).matrix_norm(a, 2, (2, 0), True),
           ((3, 2, 4),)),
    OpCase("matrix_norm_-2", lambda a: L(a).matrix_norm(a, -2), ((2, 4, 3),)),
    OpCase("norm_2", lambda a: L(a).norm(a, 2), ((3, 3),)),
    OpCase("norm", lambda a: L(a).norm(a), ((2, 3, 4),)),
    OpCase("norm_matrix_1", lambda a: L(a).norm(a, 1), ((3, 4),)),
    OpCase("norm_matrix_fro", lambda a: L(a).norm(a, "fro"), ((3, 4),)),
    OpCase("norm_vector_3", lambda a: L(a).norm(a, 3), ((4,),)),
    OpCase("norm_dim_3", lambda a: L(a).norm(a, 3, (1,), True), ((2, 3),)),
    OpCase("norm_dims_inf", lambda a: L(a).norm(a, INF, (0, 2)), ((2, 3, 4),)),
    OpCase("norm_dims_none", lambda a: L(a).norm(a, dim=(0, 2)), ((2, 3, 4),)),
    OpCase("cross", lambda a, b: L(a).cross(a, b), ((2, 3), (2, 3)),
           np_fn=lambda a, b: np.cross(a, b)),
    OpCase("cross_broadcast", lambda a, b: L(a).cross(a, b), ((2, 1, 3), (1, 4, 3))),
    OpCase("cross_dim0", lambda a, b: L(a).cross(a, b, dim=0), ((3, 2), (3, 2))),
    OpCase("multi_dot", lambda a, b, c, d: L(a).multi_dot([a, b, c, d]),
           ((5, 2), (2, 6), (6, 3), (3, 4)), np_fn=lambda *ms: np.linalg.multi_dot(ms)),
    OpCase("multi_dot_vectors", lambda a, b, c: L(a).multi_dot((a, b, c)),
           ((3,), (3, 4), (4,)), np_fn=lambda *ms: np.linalg.multi_dot(ms)),
    OpCase("multi_dot_first_vector", lambda a, b: L(a).multi_dot([a, b]), ((3,), (3, 2))),
    OpCase("multi_dot_last_vector", lambda a, b, c: L(a).multi_dot([a, b, c]),
           ((2, 3), (3, 4), (4,))),
    OpCase("vecdot", lambda x, y: L(x).vecdot(x, y), ((2, 3), (3,)),
           np_fn=lambda x, y: (x * y).sum(-1)),
    OpCase("vecdot_dim0", lambda x, y: L(x).vecdot(x, y, dim=0), ((3, 2), (3, 1))),
    OpCase("diagonal", lambda a: L(a).diagonal(a), ((2, 3, 4),),
           np_fn=lambda a: np.diagonal(a, 0, -2, -1)),
    OpCase("diagonal_offset_dims", lambda a: L(a).diagonal(a, offset=1, dim1=0, dim2=2),
           ((2, 3, 4),)),
    OpCase("vander", lambda x: L(x).vander(x), ((3,),),
           np_fn=lambda x: np.vander(x, increasing=True)),
    OpCase("vander_N", lambda x: L(x).vander(x, N=5), ((2, 3),)),
    OpCase("tensorinv", lambda a: L(a).tensorinv(well_posed(a, 4), ind=1), ((4, 2, 2),),
           np_fn=lambda a: np.linalg.tensorinv(a.reshape(4, 4) + 4 * np.eye(4), 1)
           .reshape(2, 2, 4)),
    OpCase("tensorsolve", lambda a, b: L(a).tensorsolve(well_posed(a, 6), b),
           ((2, 3, 6), (2, 3))),
    OpCase("tensorsolve_dims", lambda a, b: L(a).tensorsolve(well_posed(a, 6), b, dims=(0,)),
           ((6, 2, 3), (2, 3))),
]


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
    check_spy_matches_cpu(case, spy)


@pytest.mark.parametrize("ord", [2, 1, 0.5, 3, -1, -0.5, INF, -INF, 0])
@pytest.mark.parametrize("values", [[0.0, 1.0, -2.0], [0.0, 0.0, 0.0]], ids=["one_0", "all_0"])
def test_vector_norm_gradient_at_0_is_torchs_not_nan(ord, values):
    """|x|ᵖ and the root have infinite slopes at 0; PyTorch answers 0 there (for p < 0 the
    norm is 0 with a 0 at all, every gradient 0)."""
    torch = pytest.importorskip("torch")
    x = mg.tensor(values, dtype=mg.float64, requires_grad=True)
    t = torch.tensor(values, dtype=torch.float64, requires_grad=True)
    mg.linalg.vector_norm(x, ord).backward()
    torch.linalg.vector_norm(t, ord).backward()
    expected = np.zeros(3) if t.grad is None else t.grad.numpy()       # ord 0: None
    np.testing.assert_allclose(x.grad.numpy(), expected, rtol=1e-12, atol=0)


@pytest.mark.parametrize("ord", [1, INF])
def test_matrix_norm_ties_share_the_gradient_as_torch(ord):
    """Two columns (rows) with the largest sum: each gets half, and an entry of 0 its
    sign's 0."""
    a = mg.tensor([[1.0, -1.0], [1.0, 1.0]], requires_grad=True)
    mg.linalg.matrix_norm(a, ord).backward()
    np.testing.assert_allclose(a.grad.numpy(), [[0.5, -0.5], [0.5, 0.5]])
    b = mg.tensor([[0.0, -1.0], [0.0, 1.0]], requires_grad=True)
    mg.linalg.matrix_norm(b, 1).backward()
    assert b.grad.numpy().tolist() == [[0.0, -1.0], [0.0, 1.0]]


def test_matrix_norms_of_empty_matrices():
    """The largest sum of no rows is 0, as PyTorch's; the smallest has no value (PyTorch
    fails inside amin), an error naming it."""
    for shape, ord in (((0, 3), INF), ((3, 0), 1), ((2, 0, 3), INF), ((3, 0), "fro"),
                       ((0, 3), -1)):
        out = mg.linalg.matrix_norm(mg.zeros(*shape), ord)
        assert out.shape == shape[:-2] and not out.numpy().any()
    with pytest.raises(ValueError, match=r"-1 norm of matrices of shape \(3, 0\): the min "
                                         r"over no columns"):
        mg.linalg.matrix_norm(mg.zeros(3, 0), -1)
    assert mg.linalg.matrix_norm(mg.zeros(0, 3, 3), -1).shape == (0,)


def test_vander_gradient_at_0_and_integers():
    """Running products: d/dx Σ x^k at 0 is 1, not 0·0⁻¹ (torch: [1, 17]); integer points
    give int64, as PyTorch."""
    x = mg.tensor([0.0, 2.0], requires_grad=True)
    mg.linalg.vander(x, N=4).sum().backward()
    assert x.grad.numpy().tolist() == [1.0, 17.0]
    v = mg.linalg.vander(mg.tensor([1, 2, 3], dtype=mg.int32))
    assert v.dtype == mg.int64 and v.numpy().tolist() == [[1, 1, 1], [1, 2, 4], [1, 3, 9]]
    assert mg.linalg.vander(mg.zeros(0), N=3).shape == (0, 3)


def test_multi_dot_multiplies_in_the_cheapest_order(monkeypatch):
    """For A (2, 50), B (50, 2): (AB)A costs 2·50·2 + 2·2·50 = 400 multiplications, A(BA)
    50·2·50 + 2·50·50 = 10,000; and B(AB) is the cheap order of B, A, B."""
    import minigrad.ops.linalg_more as lm
    pairs = []
    monkeypatch.setattr(lm, "matmul", lambda a, b: pairs.append((a.shape, b.shape)) or a @ b)
    a, b, c = mg.ones(2, 50), mg.ones(50, 2), mg.ones(2, 50)
    assert mg.linalg.multi_dot([a, b, c]).shape == (2, 50)
    assert pairs == [((2, 50), (50, 2)), ((2, 2), (2, 50))]
    pairs.clear()
    assert mg.linalg.multi_dot([b, a, b]).shape == (50, 2)
    assert pairs == [((2, 50), (50, 2)), ((50, 2), (2, 2))]


def test_linalg_cross_defaults_to_the_last_dim_and_tensor_cross_keeps_torch_cross():
    """torch.linalg.cross takes dim=-1; torch.cross (and mg.cross, Tensor.cross) without a
    dim the first dim of size 3. For (3, 3) inputs they differ."""
    rng = np.random.default_rng(0)
    a, b = (mg.tensor(rng.standard_normal((3, 3))) for _ in range(2))
    np.testing.assert_allclose(mg.linalg.cross(a, b).numpy(), np.cross(a.numpy(), b.numpy()))
    np.testing.assert_allclose(a.cross(b).numpy(), np.cross(a.numpy(), b.numpy(), axis=0))


def test_float16_vector_norm_does_not_overflow():
    """300² overflows float16: the squares are summed in float32, as PyTorch."""
    out = mg.linalg.vector_norm(mg.tensor([300.0, 400.0], dtype=mg.float16))
    assert out.dtype == mg.float16 and out.item() == 500.0
    assert mg.linalg.vector_norm(mg.tensor([3.0, 4.0], dtype=mg.float16),
                                 dtype=mg.float32).dtype == mg.float32


@pytest.mark.parametrize("fn, error, match", [
    (lambda: mg.linalg.vector_norm(mg.tensor([1, 2])), TypeError,
     "linalg.vector_norm: expected a floating-point tensor, got int64"),
    (lambda: mg.linalg.vector_norm(mg.ones(2), "fro"), TypeError, "ord must be a number"),
    (lambda: mg.linalg.vector_norm(mg.ones(2), True), TypeError, "ord must be a number"),
    (lambda: mg.linalg.vector_norm(mg.ones(2), math.nan), ValueError, "not NaN"),
    (lambda: mg.linalg.vector_norm(mg.ones(2, dtype=mg.float64), dtype=mg.float32),
     TypeError, "does not convert to dtype=float32 without narrowing"),
    (lambda: mg.linalg.vector_norm(mg.ones(2), dtype=mg.int64), TypeError,
     "dtype must be a floating-point dtype"),
    (lambda: mg.linalg.vector_norm(mg.zeros(0, 3), INF, 0), ValueError,
     "linalg.vector_norm: cannot compute the inf norm over an empty dim"),
    (lambda: mg.linalg.vector_norm(mg.ones(2, 3), dim=2), IndexError,
     r"linalg.vector_norm: dim 2 out of range"),
    (lambda: mg.linalg.vector_norm([1.0, 2.0]), TypeError, "input must be a Tensor"),
    (lambda: mg.linalg.matrix_norm(mg.ones(3)), ValueError, "at least 2 dims"),
    (lambda: mg.linalg.matrix_norm(mg.ones(2, 2), 3), ValueError,
     r"ord=3 is not a matrix norm; valid: 'fro', 'nuc', inf"),
    (lambda: mg.linalg.matrix_norm(mg.ones(2, 2), "nu"), ValueError, "not a matrix norm"),
    (lambda: mg.linalg.matrix_norm(mg.ones(2, 2), True), ValueError, "not a matrix norm"),
    (lambda: mg.linalg.matrix_norm(mg.ones(0, 2), -2), ValueError,
     "no smallest singular value"),
    (lambda: mg.linalg.matrix_norm(mg.ones(2, 2), dim=1), ValueError, "dim must be a pair"),
    (lambda: mg.linalg.matrix_norm(mg.ones(2, 2), dim=(0, -2)), ValueError,
     "names one dim twice"),
    (lambda: mg.linalg.matrix_norm(mg.ones(2, 2, dtype=mg.int64)), TypeError,
     "floating-point"),
    (lambda: mg.linalg.norm(mg.ones(2, 2, 2), 2), ValueError,
     "with ord=2 and no dim, A must be 1-D or 2-D"),
    (lambda: mg.linalg.norm(mg.ones(2, 2), dim=(0, 1, 1)), ValueError,
     "dim must be one dim .* or a pair"),
    (lambda: mg.linalg.norm(mg.ones(2, 2), dim=()), ValueError, "dim must be one dim"),
    (lambda: mg.linalg.norm(mg.ones(2, 2), "fro", dim=1), ValueError, "dim must be a pair"),
    (lambda: mg.linalg.norm(mg.ones(3), "fro"), ValueError, "at least 2 dims"),
    (lambda: mg.linalg.norm(mg.ones(2, 2), 3), ValueError, "not a matrix norm"),
    (lambda: mg.linalg.cross(mg.ones(2, 3), mg.ones(3)), ValueError,
     "one number of dims"),
    (lambda: mg.linalg.cross(mg.ones(2, 2), mg.ones(2, 2)), ValueError,
     "dim -1 must have size 3 in both inputs, got 2 and 2"),
    (lambda: mg.linalg.cross(mg.ones(3), mg.ones(3, dtype=mg.float64)), TypeError, "dtypes"),
    (lambda: mg.linalg.multi_dot([mg.ones(2, 2)]), ValueError, "at least 2 tensors, got 1"),
    (lambda: mg.linalg.multi_dot(mg.ones(2, 2)), TypeError, "a list or tuple of tensors"),
    (lambda: mg.linalg.multi_dot([mg.ones(2, 3, 3), mg.ones(3, 4)]), ValueError,
     "tensor 0 has shape .*; the first one must be 1-D or 2-D"),
    (lambda: mg.linalg.multi_dot([mg.ones(2, 3), mg.ones(3), mg.ones(3, 4)]), ValueError,
     "tensor 1 has shape .*; a middle one must be 2-D"),
    (lambda: mg.linalg.multi_dot([mg.ones(2, 3), mg.ones(4, 4)]), ValueError,
     r"tensors 0 and 1 of shapes \(2, 3\) and \(4, 4\) cannot be multiplied"),
    (lambda: mg.linalg.multi_dot([mg.ones(2, 3), mg.ones(3, 4, dtype=mg.float64)]),
     TypeError, "one dtype"),
    (lambda: mg.linalg.vecdot(mg.ones(2, 3), mg.ones(2)), ValueError, "broadcast"),
    (lambda: mg.linalg.vecdot(mg.ones(3, dtype=mg.int64), mg.ones(3, dtype=mg.int64)),
     TypeError, "floating-point"),
    (lambda: mg.linalg.vecdot(mg.ones(3), mg.ones(3), dim=5), IndexError, "out of range"),
    (lambda: mg.linalg.diagonal(mg.ones(3)), ValueError, "at least 2 dims"),
    (lambda: mg.linalg.vander(mg.ones(1)), ValueError, "N .* must be greater than 1, got 1"),
    (lambda: mg.linalg.vander(mg.ones(3), N=2.0), TypeError, "N must be an int"),
    (lambda: mg.linalg.vander(mg.tensor(2.0)), ValueError, "at least 1 dim"),
    (lambda: mg.linalg.vander(mg.tensor([True])), TypeError, "float or integer"),
    (lambda: mg.linalg.tensorinv(mg.ones(4, 2, 3), ind=1), ValueError,
     "is not square: 4 rows .* and 6 columns"),
    (lambda: mg.linalg.tensorinv(mg.ones(4, 4), ind=0), ValueError, "ind must be >= 1"),
    (lambda: mg.linalg.tensorinv(mg.ones(4, 4), ind=3), ValueError, "more than A's 2 dims"),
    (lambda: mg.linalg.tensorinv(mg.zeros(2, 2), ind=1), RuntimeError, "singular"),
    (lambda: mg.linalg.tensorsolve(mg.ones(2, 3, 5), mg.ones(2, 3)), ValueError,
     "not a square system"),
    (lambda: mg.linalg.tensorsolve(mg.ones(6, 6), mg.ones(6), dims=0), TypeError,
     "dims must be a tuple"),
])
def test_bad_arguments_are_refused_by_name(fn, error, match):
    with pytest.raises(error, match=match):
        fn()


def test_singular_value_norms_of_ties_and_empty_matrices_as_torch():
    torch = pytest.importorskip("torch")
    eye = mg.eye(2, requires_grad=True)
    mg.linalg.matrix_norm(eye, 2).backward()            # two equal largest: shared evenly
    t = torch.eye(2, requires_grad=True)
    torch.linalg.matrix_norm(t, 2).backward()
    np.testing.assert_allclose(eye.grad.numpy(), t.grad.numpy())
    for ord in ("nuc", 2):
        for shape in [(0, 3), (3, 0), (2, 0, 0)]:
            got = mg.linalg.matrix_norm(mg.zeros(*shape), ord)
            want = torch.linalg.matrix_norm(torch.zeros(shape), ord)
            assert got.shape == tuple(want.shape) and not got.numpy().any()

