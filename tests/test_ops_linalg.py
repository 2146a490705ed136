"""Linear algebra (ops/linalg.py, mg.linalg): det, slogdet, logdet, inv/inverse, solve,
cholesky, matrix_power, mv, inner, vdot and kron. Each through the op suite (vs torch in
float32/float64, gradcheck + gradgradcheck, double backward vs torch) and on the spy device;
then the errors, the gradient of det at a singular matrix, and batching."""
import numpy as np
import pytest

import minigrad as mg
from op_helpers import (OpCase, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch, check_spy_matches_cpu)


def lib(x):
    """minigrad or torch, whichever x belongs to: one case function serves both."""
    if isinstance(x, mg.Tensor):
        return mg
    import torch
    return torch


def eye(x, n):
    return mg.eye(n, dtype=x.dtype, device=x.device) if isinstance(x, mg.Tensor) else \
        lib(x).eye(n, dtype=x.dtype)


def dominant(a):
    """a + 4I: for entries in [-2, 2] well conditioned, with det > 0."""
    return a + 4 * eye(a, a.shape[-1])


def spd(a):
    """a·aᵀ + nI: symmetric positive-definite."""
    return a @ a.mT + a.shape[-1] * eye(a, a.shape[-1])


CASES = [
    OpCase("det", lambda a: a.det(), ((3, 3),), np_fn=np.linalg.det),
    OpCase("linalg.det_batched", lambda a: lib(a).linalg.det(a), ((2, 3, 3),),
           np_fn=np.linalg.det),
    OpCase("det_1x1", lambda a: mg.det(a) if isinstance(a, mg.Tensor) else a.det(),
           ((2, 1, 1),)),
    OpCase("slogdet", lambda a: tuple(a.slogdet()), ((2, 3, 3),)),
    OpCase("linalg.slogdet", lambda a: tuple(lib(a).linalg.slogdet(dominant(a))), ((3, 3),)),
    OpCase("logdet", lambda a: lib(a).logdet(dominant(a)), ((2, 3, 3),)),
    OpCase("inverse", lambda a: a.inverse(), ((3, 3),), np_fn=np.linalg.inv),
    OpCase("linalg.inv_batched", lambda a: lib(a).linalg.inv(dominant(a)), ((2, 2, 3, 3),)),
    OpCase("solve_vector", lambda a, b: lib(a).linalg.solve(a, b), ((3, 3), (3,)),
           np_fn=np.linalg.solve),
    OpCase("solve_matrix_broadcast", lambda a, b: lib(a).linalg.solve(dominant(a), b),
           ((2, 3, 3), (3, 2))),
    OpCase("solve_batch_of_vectors", lambda a, b: lib(a).linalg.solve(dominant(a), b),
           ((2, 3, 3), (2, 3))),
    OpCase("solve_left_false", lambda a, b: lib(a).linalg.solve(dominant(a), b, left=False),
           ((3, 3), (2, 3))),
    OpCase("cholesky", lambda a: lib(a).linalg.cholesky(spd(a)), ((3, 3),)),
    OpCase("cholesky_upper_batched", lambda a: spd(a).cholesky(upper=True), ((2, 3, 3),),
           torch_fn=lambda a: lib(a).linalg.cholesky(spd(a), upper=True)),
    OpCase("matrix_power_3", lambda a: a.matrix_power(3), ((2, 3, 3),)),
    OpCase("matrix_power_0", lambda a: lib(a).linalg.matrix_power(a, 0), ((3, 3),)),
    OpCase("matrix_power_neg", lambda a: lib(a).matrix_power(dominant(a), -2), ((3, 3),)),
    OpCase("mv", lambda a, v: a.mv(v), ((2, 3), (3,)), np_fn=lambda a, v: a @ v),
    OpCase("inner", lambda a, b: lib(a).inner(a, b), ((2, 3), (4, 3)),
           np_fn=np.inner),
    OpCase("inner_0d", lambda a, b: a.inner(b), ((), (2, 3))),
    OpCase("vdot", lambda a, b: lib(a).vdot(a, b), ((3,), (3,)), np_fn=np.vdot),
    OpCase("kron", lambda a, b: a.kron(b), ((2, 3), (2, 2)), np_fn=np.kron),
    OpCase("kron_ndims", lambda a, b: lib(a).kron(a, b), ((2, 1, 3), (3, 2)),
           np_fn=np.kron),
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


def test_det_gradient_at_a_singular_matrix_is_the_cofactor_matrix():
    """d det/dA = cof(A) also where A⁻¹ does not exist (PyTorch answers 0 at [[1, 2], [2,
    4]]; the cofactor matrix [[4, -2], [-2, 1]] is the derivative: det(A + εE₀₀) = 4ε)."""
    a = mg.tensor([[1.0, 2.0], [2.0, 4.0]], dtype=mg.float64, requires_grad=True)
    a.det().backward()
    np.testing.assert_allclose(a.grad.numpy(), [[4.0, -2.0], [-2.0, 1.0]], atol=1e-12)
    rng = np.random.default_rng(0)
    m = rng.standard_normal((2, 3, 3))
    m[:, 2] = m[:, 0] + m[:, 1]                          # rank 2: det 0
    cof = np.array([[[(-1) ** (i + j) * np.linalg.det(np.delete(np.delete(b, i, 0), j, 1))
                      for j in range(3)] for i in range(3)] for b in m])
    x = mg.tensor(m, requires_grad=True)
    with np.errstate(all="ignore"):
        x.det().sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), cof, atol=1e-10)


@pytest.mark.parametrize("fn, match", [
    (lambda: mg.linalg.inv(mg.tensor([[1.0, 2.0], [2.0, 4.0]])), "singular"),
    (lambda: mg.tensor([[1.0, 2.0], [2.0, 4.0]]).inverse(), "singular"),
    (lambda: mg.linalg.solve(mg.zeros(2, 2), mg.ones(2)), "singular"),
    (lambda: mg.linalg.cholesky(mg.tensor([[1.0, 2.0], [2.0, 1.0]])), "positive-definite"),
    (lambda: mg.matrix_power(mg.zeros(2, 2), -1), "singular"),
])
def test_singular_and_indefinite_matrices_raise_as_torch(fn, match):
    with pytest.raises(RuntimeError, match=match):
        fn()


@pytest.mark.parametrize("fn, error, match", [
    (lambda: mg.det(mg.ones(2, 3)), ValueError, "square"),
    (lambda: mg.linalg.inv(mg.ones(3)), ValueError, "square"),
    (lambda: mg.linalg.slogdet(mg.ones(2, 2, 3)), ValueError, "2 by 3"),
    (lambda: mg.linalg.matrix_power(mg.ones(2, 3), 2), ValueError, "square"),
    (lambda: mg.linalg.matrix_power(mg.ones(2, 2), 1.5), TypeError, "int"),
    (lambda: mg.det(mg.ones(2, 2, dtype=mg.int64)), TypeError, "float"),
    (lambda: mg.linalg.solve(mg.eye(3), mg.ones(4)), ValueError, "incompatible"),
    (lambda: mg.linalg.solve(mg.eye(3), mg.ones(3, dtype=mg.float64)), TypeError, "dtypes"),
    (lambda: mg.linalg.solve(mg.eye(3).expand(2, 3, 3), mg.ones(4, 3, 1)), ValueError,
     "broadcast"),
    (lambda: mg.linalg.solve(mg.eye(3).expand(2, 3, 3), mg.ones(2, 3), left=False),
     ValueError, "vector per matrix"),              # (it gave (2, 2, 3); PyTorch refuses)
    (lambda: mg.mv(mg.ones(2, 3), mg.ones(2)), ValueError, "mismatch"),
    (lambda: mg.mv(mg.ones(2, 3, 3), mg.ones(3)), ValueError, "2-D"),
    (lambda: mg.inner(mg.ones(2, 3), mg.ones(4, 2)), ValueError, "last dim"),
    (lambda: mg.vdot(mg.ones(2, 3), mg.ones(2, 3)), ValueError, "1-D"),
    (lambda: mg.vdot(mg.ones(3), mg.ones(4)), ValueError, "length"),
])
def test_bad_arguments_raise_clear_errors(fn, error, match):
    with pytest.raises(error, match=match):
        fn()


def test_results_as_torch_where_shapes_are_special():
    torch = pytest.importorskip("torch")
    assert mg.linalg.det(mg.ones(2, 0, 0)).numpy().tolist() == [1.0, 1.0]
    s = mg.linalg.slogdet(mg.tensor([[0.0, 1.0], [1.0, 0.0]]))
    assert s.sign.item() == -1.0 and s.logabsdet.item() == 0.0
    assert np.isnan(mg.logdet(mg.tensor([[0.0, 1.0], [1.0, 0.0]])).item())
    assert mg.logdet(mg.zeros(2, 2)).item() == -np.inf
    a, b = np.arange(6.0).reshape(2, 3), np.arange(4.0).reshape(2, 2)
    assert mg.kron(mg.tensor(a), mg.tensor(b)).shape == (4, 6)
    assert mg.inner(mg.tensor(a), mg.tensor(a)).numpy().tolist() == \
        torch.inner(torch.tensor(a), torch.tensor(a)).tolist()
    assert mg.linalg.solve(mg.eye(3).expand(3, 3, 3), mg.ones(3, 3)).shape == (3, 3)  # vectors
    assert mg.linalg.solve(mg.eye(3), mg.ones(2, 3, 4)).shape == (2, 3, 4)


def test_log_abs_det_gradient_at_a_singular_matrix_is_infinite_as_torch():
    """log|det A| is -inf there: its gradient ±inf, not an error (PyTorch's too); another
    matrix of the batch keeps its A⁻ᵀ."""
    a = mg.tensor([[[1.0, 2.0], [2.0, 4.0]], [[2.0, 1.0], [1.0, 3.0]]], dtype=mg.float64,
                  requires_grad=True)
    mg.linalg.slogdet(a).logabsdet.sum().backward()
    assert np.isinf(a.grad.numpy()[0]).all()
    np.testing.assert_allclose(a.grad.numpy()[1], np.linalg.inv([[2, 1], [1, 3]]).T)


@pytest.mark.parametrize("fn", [mg.det, lambda a: mg.linalg.slogdet(a).logabsdet],
                         ids=["det", "slogdet"])
def test_a_singular_matrix_leaves_the_rest_of_its_batch_twice_differentiable(fn):
    """Only the singular matrix's gradient is a constant: the other's second derivative is
    the one it has alone (it was lost, mg.grad's result then no graph at all)."""
    m = np.array([[[1.0, 2.0], [2.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]]])
    x = mg.tensor(m, requires_grad=True)
    up = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
    g, = mg.grad(fn(x), x, grad_outputs=up, create_graph=True)
    with np.errstate(invalid="ignore"):          # slogdet's up.grad[0]: 0·inf, NaN
        (g[1] * g[1]).sum().backward()
    alone = mg.tensor(m[1], requires_grad=True)
    up1 = mg.tensor(2.0, dtype=mg.float64, requires_grad=True)
    g1, = mg.grad(fn(alone), alone, grad_outputs=up1, create_graph=True)
    (g1 * g1).sum().backward()
    np.testing.assert_allclose(x.grad.numpy()[1], alone.grad.numpy(), rtol=1e-12)
    assert (x.grad.numpy()[0] == 0).all()
    np.testing.assert_allclose(up.grad.numpy()[1], up1.grad.item(), rtol=1e-12)


def test_the_gradient_at_0x0_matrices_is_empty_not_none():
    """torch's x.grad is an empty tensor there; None read as "x was not reached"."""
    for fn in (mg.det, mg.logdet, lambda a: mg.linalg.slogdet(a).logabsdet):
        x = mg.zeros(2, 0, 0, dtype=mg.float64, requires_grad=True)
        fn(x).sum().backward()
        assert x.grad is not None and x.grad.shape == (2, 0, 0)


def test_a_failed_factorisation_that_the_gpu_does_not_report_is_caught(spy, monkeypatch):
    """cuSOLVER (through CuPy) raises nothing for a singular or indefinite matrix: inv
    leaves inf, cholesky a finite half-factored matrix. Both are read as the failure."""
    import spy_backend
    linalg = spy_backend.SpyModule.linalg
    monkeypatch.setattr(linalg, "inv", lambda a: spy_backend.SpyModule().full_like(a, np.inf))
    monkeypatch.setattr(linalg, "cholesky", spy_backend.SpyModule().tril)
    with pytest.raises(RuntimeError, match="singular"):
        mg.linalg.inv(mg.eye(2, device=spy))
    with pytest.raises(RuntimeError, match="positive-definite"):
        mg.linalg.cholesky(mg.tensor([[1.0, 2.0], [2.0, 1.0]], device=spy))
    monkeypatch.undo()
    assert mg.linalg.cholesky(mg.tensor([[4.0, 2.0], [2.0, 5.0]], device=spy)).numpy() \
        .tolist() == [[2.0, 0.0], [1.0, 2.0]]


def test_solve_refuses_a_backward_after_A_changed_in_place():
    """Both gradients read A (dB = A⁻ᵀG, dA = -dB·Xᵀ): a change of A after the solve is
    refused also where only A wants a gradient, as PyTorch."""
    a = mg.tensor([[2.0, 1.0], [1.0, 3.0]], requires_grad=True)
    b = mg.tensor([1.0, 2.0])
    y = a * 1
    x = mg.linalg.solve(y, b)
    with mg.no_grad():
        y[0, 0] = 5.0
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        x.sum().backward()


@pytest.mark.parametrize("fn, match", [
    (lambda: mg.linalg.inv(mg.zeros(2, 2)), "singular"),
    (lambda: mg.linalg.solve(mg.zeros(2, 2), mg.ones(2)), "singular"),
    (lambda: mg.linalg.cholesky(-mg.eye(2)), "positive-definite"),
    (lambda: mg.linalg.inv_ex(mg.zeros(2, 2), check_errors=True), "singular"),
    (lambda: mg.linalg.cholesky_ex(-mg.eye(2), check_errors=True), "positive-definite"),
    (lambda: mg.cholesky_inverse(mg.zeros(2, 2)), "singular"),
])
def test_a_matrix_the_factorisation_refuses_is_a_linalg_error(fn, match):
    """torch.linalg.LinAlgError's counterpart, a RuntimeError: code that catches either
    ports (mg.linalg had no LinAlgError)."""
    assert issubclass(mg.linalg.LinAlgError, RuntimeError)
    with pytest.raises(mg.linalg.LinAlgError, match=match):
        fn()


def test_a_matrix_holding_nan_gives_nan_as_torch():
    """LAPACK may skip a NaN when it picks a pivot and report a zero one: inv and solve
    raised "singular" for the whole batch, det gave 0 and slogdet -inf. PyTorch: NaN for
    that matrix (slogdet's sign 0), the others as alone; cholesky refuses it."""
    a = np.array([[[np.nan, 1.0], [1.0, 1.0]], [[2.0, 0.0], [0.0, 4.0]]])
    x = mg.tensor(a)
    with np.errstate(invalid="ignore"):
        for out in (mg.linalg.inv(x), mg.linalg.solve(x, mg.tensor(np.ones((2, 2, 1))))):
            assert np.isnan(out.numpy()[0]).all()
        np.testing.assert_array_equal(mg.linalg.inv(x).numpy()[1], [[0.5, 0], [0, 0.25]])
        np.testing.assert_array_equal(mg.linalg.solve(x, mg.ones(2, 2, dtype=mg.float64))
                                      .numpy(), [[np.nan, np.nan], [0.5, 0.25]])
        np.testing.assert_allclose(mg.linalg.det(x).numpy(), [np.nan, 8.0])
        sign, logabs = mg.linalg.slogdet(x)
        assert sign.numpy().tolist() == [0, 1] and np.isnan(logabs.numpy()[0])
        y = mg.tensor(a, requires_grad=True)
        mg.linalg.slogdet(y).logabsdet.sum().backward()
    assert np.isnan(y.grad.numpy()[0]).all()
    np.testing.assert_allclose(y.grad.numpy()[1], [[0.5, 0], [0, 0.25]])
    with pytest.raises(mg.linalg.LinAlgError, match="positive-definite"):
        mg.linalg.cholesky(x)
