"""mg.linalg.lstsq (ops/linalg_lstsq.py) through each LAPACK driver, as torch.linalg.lstsq:
which fields each fills (residuals only where m > n and the driver gives them; rank for
gelsy, gelsd, gelss; singular values for gelsd and gelss), their shapes and dtypes, rcond's
meaning per driver, rank-deficient A, gradients (the solution's is A⁺B's, the residuals' in
closed form), the GPU's 'gels'-only rule on the spy device, and errors. Closed-form values
first (no torch), then against torch. (The op suite's lstsq cases, vs torch, gradgradcheck
and the spy device, are in test_ops_linalg_decomp.py.)"""
import math

import numpy as np
import pytest

import minigrad as mg

DRIVERS = ("gels", "gelsy", "gelsd", "gelss")
# A = [[1, 0], [0, 1], [1, 1]], b = (1, 2, 4): x = (4/3, 7/3), residual r = (1, 1, -1)/3,
# ‖r‖² = 1/3; AᵀA has eigenvalues 3 and 1, so σ = (√3, 1)
TALL = [[1.0, 0.0], [0.0, 1.0], [1.0, 1.0]]
TALL_B = [[1.0], [2.0], [4.0]]


def f64(a, **kw):
    return mg.tensor(np.asarray(a, dtype=np.float64), **kw)


@pytest.mark.parametrize("driver", DRIVERS)
def test_each_driver_fills_the_fields_torch_fills(driver):
    out = mg.linalg.lstsq(f64(TALL), f64(TALL_B), driver=driver)
    np.testing.assert_allclose(out.solution.numpy(), [[4 / 3], [7 / 3]], rtol=1e-14)
    with_residuals = driver != "gelsy"
    assert out.residuals.shape == ((1,) if with_residuals else (0,))
    if with_residuals:
        np.testing.assert_allclose(out.residuals.numpy(), [1 / 3], rtol=1e-13)
    assert out.rank.dtype == mg.int64
    assert out.rank.shape == ((0,) if driver == "gels" else ())
    if driver != "gels":
        assert out.rank.item() == 2
    if driver in ("gelsd", "gelss"):
        np.testing.assert_allclose(out.singular_values.numpy(), [math.sqrt(3), 1.0],
                                   rtol=1e-14)
    else:
        assert out.singular_values.shape == (0,)
    assert out.residuals.dtype == out.singular_values.dtype == mg.float64


@pytest.mark.parametrize("driver", DRIVERS)
def test_no_residuals_where_the_system_is_square_or_wide(driver):
    for a, b in ((np.eye(2), np.ones((2, 1))), (np.eye(2, 3), np.ones((2, 1)))):
        out = mg.linalg.lstsq(f64(a), f64(b), driver=driver)
        assert out.residuals.shape == (0,)
    # wide: the minimum-norm solution (for gels too: A of full rank)
    np.testing.assert_allclose(out.solution.numpy(), [[1.0], [1.0], [0.0]], atol=1e-15)


@pytest.mark.parametrize("driver", DRIVERS[1:])
def test_rank_deficient_a_gets_the_minimum_norm_solution_and_no_residuals(driver):
    # A = [[1, 1], [2, 2], [0, 0]]: rank 1, σ = √10 along v = (1, 1)/√2; x = (1/2, 1/2)
    a = f64([[1.0, 1.0], [2.0, 2.0], [0.0, 0.0]])
    out = mg.linalg.lstsq(a, f64([[1.0], [2.0], [3.0]]), driver=driver)
    np.testing.assert_allclose(out.solution.numpy(), [[0.5], [0.5]], rtol=1e-13)
    assert out.rank.item() == 1 and out.residuals.shape == (0,)
    # batched: residuals need every matrix of full rank (gelsd, gelss)
    both = mg.stack([f64(TALL), a])
    out = mg.linalg.lstsq(both, mg.ones(2, 3, 1, dtype=mg.float64), driver=driver)
    assert out.rank.numpy().tolist() == [2, 1] and out.residuals.shape == (0,)
    out = mg.linalg.lstsq(both, mg.ones(2, 3, 1, dtype=mg.float64), driver="gels")
    assert out.residuals.shape == (2, 1)                 # gels: always, as PyTorch's


def test_gels_refuses_an_exactly_singular_a_naming_the_batch_element():
    singular = f64([[1.0, 0.0], [0.0, 0.0], [0.0, 0.0]])
    with pytest.raises(mg.linalg.LinAlgError, match="does not have full rank"):
        mg.linalg.lstsq(singular, mg.ones(3, 1, dtype=mg.float64), driver="gels")
    with pytest.raises(RuntimeError, match=r"\(Batch element 1\): .*full rank"):
        mg.linalg.lstsq(mg.stack([f64(TALL), singular]), mg.ones(2, 3, 1, dtype=mg.float64),
                        driver="gels")


@pytest.mark.parametrize("driver, rcond, rank, x", [
    # A = diag(1, 1e-3) over a zero row, b = 1: x = (1, 1000) at rank 2, (1, 0) at rank 1
    ("gelsd", None, 2, [1, 1000]), ("gelsd", 1e-2, 1, [1, 0]), ("gelsd", 1e-4, 2, [1, 1000]),
    ("gelsd", 2.0, 2, [1, 1000]),          # rcond ≥ 1 (or ≤ 0) reads as ε: LAPACK's dlalsd
    ("gelsd", -1.0, 2, [1, 1000]),
    ("gelss", 1e-2, 1, [1, 0]), ("gelss", 2.0, 0, [0, 0]), ("gelss", -1.0, 2, [1, 1000]),
    ("gelsy", 1e-2, 1, [1, 0]), ("gelsy", 1e-4, 2, [1, 1000]),
    ("gels", 1e-2, None, [1, 1000]),                     # gels ignores rcond
])
def test_rcond_as_each_driver_reads_it(driver, rcond, rank, x):
    a = f64([[1.0, 0.0], [0.0, 1e-3], [0.0, 0.0]])
    out = mg.linalg.lstsq(a, mg.ones(3, 1, dtype=mg.float64), rcond, driver=driver)
    np.testing.assert_allclose(out.solution.numpy()[:, 0], x, rtol=1e-12)
    if rank is None:
        assert out.rank.shape == (0,)
    else:
        assert out.rank.item() == rank


def test_shapes_vectors_broadcasting_and_empty_matrices():
    a, b = mg.randn(1, 5, 3, dtype=mg.float64), mg.randn(4, 5, 2, dtype=mg.float64)
    out = mg.linalg.lstsq(a, b, driver="gelsd")            # rank and σ: A's batch shape
    assert [t.shape for t in out] == [(4, 3, 2), (4, 2), (1,), (1, 3)]
    out = mg.linalg.lstsq(mg.randn(2, 5, 3, dtype=mg.float64), mg.randn(2, 5, dtype=mg.float64),
                          driver="gelss")                  # B a vector: (..., 1) residuals
    assert [t.shape for t in out] == [(2, 3), (2, 1), (2,), (2, 3)]
    b = f64([[1.0, 2.0], [3.0, 4.0]])
    for driver in DRIVERS:
        out = mg.linalg.lstsq(mg.zeros(2, 0, dtype=mg.float64), b, driver=driver)
        assert out.solution.shape == (0, 2)
        if driver != "gelsy":                   # n = 0: every residual is B's own norm
            assert out.residuals.numpy().tolist() == [10.0, 20.0]
        out = mg.linalg.lstsq(f64(TALL), mg.zeros(3, 0, dtype=mg.float64), driver=driver)
        assert out.solution.shape == (2, 0)     # k = 0: the rank is still A's
        assert out.rank.numpy().tolist() == ([] if driver == "gels" else 2)
        out = mg.linalg.lstsq(mg.zeros(0, 3, 2, dtype=mg.float64),
                              mg.zeros(0, 3, 1, dtype=mg.float64), driver=driver)
        assert out.solution.shape == (0, 2, 1)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("shapes", [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((2, 4, 3), (2, 4)),
                                    ((1, 4, 3), (2, 4, 2))])
def test_gradcheck_of_the_solution(driver, shapes):
    rng = np.random.default_rng(0)
    a, b = (f64(rng.standard_normal(s), requires_grad=True) for s in shapes)
    assert mg.gradcheck(lambda a, b: mg.linalg.lstsq(a, b, driver=driver).solution, [a, b])


@pytest.mark.parametrize("driver", ["gels", "gelsd", "gelss"])
def test_gradcheck_of_the_residuals_and_second_order(driver):
    rng = np.random.default_rng(1)
    a, b = (f64(rng.standard_normal(s), requires_grad=True) for s in ((2, 5, 3), (2, 5, 2)))
    fn = lambda a, b: mg.linalg.lstsq(a, b, driver=driver).residuals  # noqa: E731
    assert mg.gradcheck(fn, [a, b]) and mg.gradgradcheck(fn, [a, b])
    out = mg.linalg.lstsq(a, b, driver=driver)
    assert not out.rank.requires_grad and not out.singular_values.requires_grad


def test_the_gradient_at_a_rank_deficient_a_is_the_pseudo_inverses():
    """As PyTorch's: A⁺B's gradient (A⁺ at pinv's default tolerance) whatever the driver or
    rcond."""
    rng = np.random.default_rng(2)
    a_np = rng.standard_normal((5, 2)) @ rng.standard_normal((2, 3))
    b_np, w = rng.standard_normal((5, 2)), f64(rng.standard_normal((3, 2)))

    def grads(fn):
        a, b = f64(a_np, requires_grad=True), f64(b_np, requires_grad=True)
        (fn(a, b) * w).sum().backward()
        return a.grad.numpy(), b.grad.numpy()
    want = grads(lambda a, b: mg.linalg.pinv(a) @ b)
    for driver, rcond in (("gelsy", None), ("gelsd", None), ("gelss", 0.5)):
        got = grads(lambda a, b: mg.linalg.lstsq(a, b, rcond, driver=driver).solution)
        for g, h in zip(got, want):
            np.testing.assert_allclose(g, h, rtol=1e-9, atol=1e-12)


def test_bad_arguments_raise_clear_errors():
    a, b = mg.ones(3, 2), mg.ones(3, 1)
    for driver in ("gelsx", ""):
        with pytest.raises(ValueError, match="not one of gels, gelsy, gelsd, gelss"):
            mg.linalg.lstsq(a, b, driver=driver)
    with pytest.raises(TypeError, match="driver must be a str or None, got int"):
        mg.linalg.lstsq(a, b, driver=3)
    with pytest.raises(TypeError, match="rcond must be a float or None"):
        mg.linalg.lstsq(a, b, "1e-3")
    assert mg.linalg.lstsq(a, b, driver="GELSD").singular_values.shape == (2,)
    with pytest.raises(RuntimeError, match="A holds inf or NaN"):
        mg.linalg.lstsq(mg.tensor([[1.0, math.nan], [0.0, 1.0]]), mg.ones(2, 1))
    for bad_a, bad_b, error, match in (
            (a, mg.ones(2, 1), ValueError, "incompatible"),
            (mg.ones(2, 3, 2), mg.ones(3, 1), ValueError, "incompatible"),
            (mg.ones(2, 3, 2), mg.ones(3, 3, 1), ValueError, "do not broadcast"),
            (a, mg.ones(3, dtype=mg.float64), TypeError, "dtypes"),
            (a, mg.ones(3, dtype=mg.int64), TypeError, "dtypes"),
            (mg.ones(3, 2, dtype=mg.int64), mg.ones(3, 1, dtype=mg.int64), TypeError,
             "float32 or float64"),
            (mg.ones(3), mg.ones(3), ValueError, "at least 2 dims")):
        with pytest.raises(error, match=match):
            mg.linalg.lstsq(bad_a, bad_b)


def test_on_a_gpu_only_gels_as_torch_on_cuda(spy):
    """The spy device (a GPU's stand-in): the default is 'gels', the others are refused
    naming it; gels there is a QR solve equal to LAPACK's, residuals included."""
    rng = np.random.default_rng(3)
    for shapes in (((2, 5, 3), (2, 5, 2)), ((3, 5), (3,))):
        a_np, b_np = (rng.standard_normal(s) for s in shapes)
        mine = mg.linalg.lstsq(f64(a_np, device=spy), f64(b_np, device=spy))
        cpu = mg.linalg.lstsq(f64(a_np), f64(b_np), driver="gels")
        for m, c in zip(mine, cpu):
            assert m.device == spy and m.shape == c.shape and m.dtype == c.dtype
            np.testing.assert_allclose(m.numpy(), c.numpy(), rtol=1e-12, atol=1e-13)
    for driver in ("gelsy", "gelsd", "gelss", "nope"):
        with pytest.raises(ValueError, match="only driver is 'gels'"):
            mg.linalg.lstsq(mg.ones(3, 2, device=spy), mg.ones(3, 1, device=spy),
                            driver=driver)
    with pytest.raises(mg.linalg.LinAlgError, match="full rank"):
        mg.linalg.lstsq(f64([[1.0, 0.0], [0.0, 0.0]], device=spy),
                        mg.ones(2, 1, dtype=mg.float64, device=spy))
    a = f64(rng.standard_normal((4, 3)), device=spy, requires_grad=True)
    b = f64(rng.standard_normal((4, 2)), device=spy, requires_grad=True)
    assert mg.gradcheck(lambda a, b: mg.linalg.lstsq(a, b).residuals, [a, b])


# ---- against torch ----------------------------------------------------------------------
SHAPES = [((5, 3), (5, 2)), ((3, 5), (3, 2)), ((4, 4), (4, 1)), ((5, 3), (5,)),
          ((2, 5, 3), (2, 5)), ((1, 5, 3), (4, 5, 2)), ((0, 5, 3), (0, 5, 2)),
          ((2, 0, 0), (2, 0, 1)), ((0, 3), (0, 2))]


def assert_fields_as_torch(mine, theirs, rtol, solution=True):
    for field in mine._fields:
        m, t = getattr(mine, field), getattr(theirs, field)
        assert m.shape == tuple(t.shape) and str(m.dtype) == str(t.dtype)[6:], field
        if solution or field != "solution":
            np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=rtol, atol=rtol,
                                       err_msg=field)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("shapes", SHAPES, ids=str)
def test_fields_shapes_and_values_as_torch(torch, driver, shapes, dtype):
    rng = np.random.default_rng(4)
    a, b = (rng.standard_normal(s).astype(dtype) for s in shapes)
    mine = mg.linalg.lstsq(mg.tensor(a), mg.tensor(b), driver=driver)
    theirs = torch.linalg.lstsq(torch.tensor(a), torch.tensor(b), driver=driver)
    assert_fields_as_torch(mine, theirs, 1e-4 if dtype == "float32" else 1e-10)


@pytest.mark.parametrize("driver", DRIVERS)
def test_rcond_and_rank_deficiency_as_torch(torch, driver):
    """Singular values 1, 1e-3, 1e-6, and one exactly rank-deficient matrix in the batch
    (gels's garbage there is left out). gelsy's solution where it cuts the rank of a matrix
    of full rank depends on the pivots, which PyTorch's leaves uninitialised (its own
    backward avoids gelsy as non-deterministic): there the rank only."""
    rng = np.random.default_rng(5)
    u, _ = np.linalg.qr(rng.standard_normal((5, 5)))
    v, _ = np.linalg.qr(rng.standard_normal((3, 3)))
    graded = u[:, :3] @ np.diag([1.0, 1e-3, 1e-6]) @ v.T
    b = rng.standard_normal((5, 2))
    for rcond in (None, 1e-7, 1e-5, 1e-2, 2.0, -1.0):
        mine = mg.linalg.lstsq(mg.tensor(graded), mg.tensor(b), rcond, driver=driver)
        theirs = torch.linalg.lstsq(torch.tensor(graded), torch.tensor(b), rcond, driver=driver)
        assert_fields_as_torch(mine, theirs, 1e-7, driver != "gelsy" or mine.rank.item() == 3)
    if driver != "gels":
        deficient = np.stack([graded, rng.standard_normal((5, 2)) @ v[:2]])
        mine = mg.linalg.lstsq(mg.tensor(deficient), mg.tensor(b[None]), driver=driver)
        theirs = torch.linalg.lstsq(torch.tensor(deficient), torch.tensor(b[None]),
                                    driver=driver)
        assert_fields_as_torch(mine, theirs, 1e-7)


@pytest.mark.parametrize("driver", DRIVERS)
def test_gradients_of_solution_and_residuals_as_torch(torch, driver):
    rng = np.random.default_rng(6)
    a_np, b_np = rng.standard_normal((2, 5, 3)), rng.standard_normal((2, 5, 2))
    if driver != "gels":
        a_np[1] = rng.standard_normal((5, 2)) @ rng.standard_normal((2, 3))   # rank 2
    wx, wr = rng.standard_normal((2, 3, 2)), rng.standard_normal((2, 2))

    def grads(lib, tensor):
        a, b = tensor(a_np), tensor(b_np)
        a.requires_grad_(), b.requires_grad_()
        out = lib.linalg.lstsq(a, b, driver=driver)
        loss = (out.solution * tensor(wx)).sum()
        if out.residuals.numel():
            loss = loss + (out.residuals * tensor(wr)).sum()
        loss.backward()
        return a.grad.numpy(), b.grad.numpy()
    for m, t in zip(grads(mg, mg.tensor), grads(torch, torch.tensor)):
        np.testing.assert_allclose(m, t, rtol=1e-8, atol=1e-10)


def test_bad_drivers_are_refused_as_by_torch(torch):
    for driver in ("gelsx", ""):
        with pytest.raises(RuntimeError):
            torch.linalg.lstsq(torch.ones(3, 2), torch.ones(3, 1), driver=driver)
        with pytest.raises(ValueError, match="not one of"):
            mg.linalg.lstsq(mg.ones(3, 2), mg.ones(3, 1), driver=driver)
