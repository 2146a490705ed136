"""Matrix decompositions (ops/linalg_decomp.py, mg.linalg): qr, eigh, eigvalsh, svd, svdvals,
pinv, lstsq, matrix_rank, cond, solve_triangular and matrix_exp. Each through the op suite
(vs torch in float32/float64, gradcheck + gradgradcheck, double backward vs torch, the spy
device); then modes, errors, repeated eigenvalues and the non-differentiable results.

Eigenvectors and singular vectors are unique up to sign only (another LAPACK may flip them),
so the cases look at them through sign-free functions (squares, products of a pair)."""
import numpy as np
import pytest

import minigrad as mg
from op_helpers import (OpCase, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch, check_spy_matches_cpu)
from test_ops_linalg import lib, dominant


def sym(a):
    return a + a.mT


def qr_signed(a, mode="reduced"):
    """Q, R with R's diagonal made positive: one answer whatever sign convention."""
    q, r = lib(a).linalg.qr(a, mode=mode)
    k = min(r.shape[-2:])
    d = r.diagonal(0, -2, -1)[..., :k].sign()
    return q[..., :k] * d.unsqueeze(-2), r[..., :k, :] * d.unsqueeze(-1)


def eigh_parts(a, uplo="L"):
    w, v = lib(a).linalg.eigh(a, UPLO=uplo)
    return w, v * v, v[..., :1] * v[..., :1].mT          # (the first one's projector)


def svd_parts(a, full_matrices=False):
    u, s, vh = lib(a).linalg.svd(a, full_matrices=full_matrices)
    k = s.shape[-1]
    u, vh = u[..., :k], vh[..., :k, :]               # (the rest: any basis, no gradient)
    return u * u, s, vh * vh, u[..., :1] * vh[..., :1, :]


def tri(a, b, upper, left=True, unit=False):
    return lib(a).linalg.solve_triangular(dominant(a), b, upper=upper, left=left,
                                          unitriangular=unit)


COND_P = ("fro", "nuc", np.inf, -1)


def cond_by_norms(a, p):
    """‖A‖·‖A⁻¹‖ in torch: torch.linalg.cond's own backward fails for p 'fro', ±1 and
    ±inf in PyTorch 2.13 (it modifies its saved inverse in place); its values are checked
    against torch.linalg.cond in test_cond_values_as_torch."""
    linalg = lib(a).linalg
    return linalg.matrix_norm(a, p) * linalg.matrix_norm(linalg.inv(a), p)


CASES = [
    OpCase("qr_tall", qr_signed, ((4, 3),)),
    OpCase("qr_square_batched", qr_signed, ((2, 3, 3),)),
    OpCase("qr_wide", qr_signed, ((2, 3, 5),)),
    OpCase("qr_complete_wide", lambda a: qr_signed(a, "complete"), ((2, 4),)),
    OpCase("eigh", lambda a: eigh_parts(sym(a)), ((3, 3),)),
    OpCase("eigh_upper_batched", lambda a: eigh_parts(sym(a), "U"), ((2, 4, 4),)),
    OpCase("eigvalsh", lambda a: lib(a).linalg.eigvalsh(sym(a)), ((2, 3, 3),)),
    OpCase("svd_tall", svd_parts, ((4, 3),)),
    OpCase("svd_wide_batched", svd_parts, ((2, 3, 4),)),
    OpCase("svd_full_tall", lambda a: svd_parts(a, True), ((4, 2),)),
    OpCase("svdvals", lambda a: lib(a).linalg.svdvals(a), ((2, 4, 3),)),
    OpCase("pinv_tall", lambda a: lib(a).linalg.pinv(a), ((4, 3),)),
    OpCase("pinv_wide_batched", lambda a: lib(a).linalg.pinv(a), ((2, 2, 3),)),
    OpCase("pinv_hermitian", lambda a: lib(a).linalg.pinv(sym(a), hermitian=True), ((3, 3),)),
    OpCase("lstsq", lambda a, b: lib(a).linalg.lstsq(a, b).solution, ((5, 3), (5, 2))),
    OpCase("lstsq_wide_broadcast", lambda a, b: lib(a).linalg.lstsq(a, b).solution,
           ((2, 3, 4), (1, 3, 2))),
    OpCase("lstsq_vectors", lambda a, b: lib(a).linalg.lstsq(a, b).solution,
           ((2, 4, 3), (2, 4))),
    OpCase("cond", lambda a: lib(a).linalg.cond(a), ((2, 4, 3),)),
    OpCase("cond_minus_2", lambda a: lib(a).linalg.cond(dominant(a), -2), ((3, 3),)),
    OpCase("cond_fro_nuc_inf", lambda a: tuple(lib(a).linalg.cond(dominant(a), p)
                                               for p in COND_P), ((2, 3, 3),),
           torch_fn=lambda a: tuple(cond_by_norms(dominant(a), p) for p in COND_P)),
    OpCase("solve_triangular_upper", lambda a, b: tri(a, b, True), ((3, 3), (3, 2))),
    OpCase("solve_triangular_lower_broadcast", lambda a, b: tri(a, b, False),
           ((2, 3, 3), (3, 2))),
    OpCase("solve_triangular_right_unit", lambda a, b: tri(a, b, False, False, True),
           ((3, 3), (2, 2, 3))),
    OpCase("matrix_exp", lambda a: lib(a).linalg.matrix_exp(a), ((3, 3),)),
    OpCase("matrix_exp_squared_batched", lambda a: lib(a).linalg.matrix_exp(4 * a),
           ((2, 3, 3),)),
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


@pytest.mark.parametrize("uplo", ["L", "U"])
def test_eigh_reads_one_triangle_and_its_gradient_is_torchs(uplo):
    """On a matrix that is not symmetric: the values from the one triangle, the gradient
    the symmetric one PyTorch gives (not the derivative by that triangle's entries)."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((2, 3, 3))
    w = np.random.default_rng(1).standard_normal((2, 3, 3))
    t, x = torch.tensor(a, requires_grad=True), mg.tensor(a, requires_grad=True)
    for y, weight in ((t, torch.tensor(w)), (x, mg.tensor(w))):
        vals, squares, _ = eigh_parts(y, uplo)
        (vals.sum() + (squares * weight).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), atol=1e-12)
    np.testing.assert_allclose(mg.linalg.eigvalsh(x, uplo).numpy(),
                               np.linalg.eigvalsh(a, uplo), atol=1e-12)


def test_repeated_eigenvalues_and_singular_values():
    """The eigenvalues alone (eigvalsh, svdvals, or eigh's/svd's values with the vectors
    unused) have a finite gradient there, as PyTorch's; through the eigenvectors it is not
    finite (F_ij = 1/(λ_j − λ_i) is infinite), as PyTorch's, except where their gradient is
    all zeros (PyTorch: NaN; the derivative is 0 there)."""
    d = np.diag([1.0, 1.0, 2.0])
    for fn in (lambda a: mg.linalg.eigvalsh(a), lambda a: mg.linalg.eigh(a).eigenvalues,
               lambda a: mg.linalg.svdvals(a), lambda a: mg.linalg.svd(a).S):
        x = mg.tensor(d, requires_grad=True)
        fn(x).sum().backward()
        np.testing.assert_allclose(x.grad.numpy(), np.eye(3), atol=1e-15)
    x = mg.tensor(d, requires_grad=True)
    with np.errstate(all="ignore"):
        mg.linalg.eigh(x).eigenvectors.sum().backward()
    assert not np.isfinite(x.grad.numpy()).all()
    x = mg.tensor(d, requires_grad=True)
    w, v = mg.linalg.eigh(x)
    (w.sum() + (v * 0).sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), np.eye(3), atol=1e-15)


def test_qr_modes_and_what_they_differentiate_as_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((2, 4, 3))
    for mode in ("reduced", "complete", "r"):
        mine, theirs = mg.linalg.qr(mg.tensor(a), mode), torch.linalg.qr(torch.tensor(a), mode)
        assert [t.shape for t in mine] == [tuple(t.shape) for t in theirs]
        np.testing.assert_allclose(np.abs(mine.R.numpy()), np.abs(theirs.R.numpy()), atol=1e-12)
    for mode, match in (("r", "mode='r'"), ("complete", "nrows > ncols")):
        x = mg.tensor(a, requires_grad=True)
        with pytest.raises(RuntimeError, match=match):
            mg.linalg.qr(x, mode).R.sum().backward()
    x = mg.tensor(a.mT, requires_grad=True)      # wide: complete is reduced, differentiable
    q, r = mg.linalg.qr(x, mode="complete")
    (q.sum() + r.sum()).backward()
    t = torch.tensor(a.mT, requires_grad=True)
    q, r = torch.linalg.qr(t, mode="complete")
    (q.sum() + r.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), atol=1e-12)


def test_svd_full_matrices_gradient_skips_the_extra_columns_as_torch():
    """U's columns past min(m, n) are any basis of their subspace: their gradient is
    dropped, as PyTorch's documentation says (it is not refused)."""
    x = mg.tensor(np.random.default_rng(0).standard_normal((4, 3)), requires_grad=True)
    u, s, vh = mg.linalg.svd(x)
    assert u.shape == (4, 4) and vh.shape == (3, 3)
    u[:, 3].sum().backward()
    assert (x.grad.numpy() == 0).all()


def test_pinv_and_matrix_rank_tolerances_as_torch():
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    a = rng.standard_normal((2, 4, 2)) @ rng.standard_normal((2, 2, 3))     # rank 2
    a[1] *= np.array([1.0, 1.0, 1e-3])               # a small singular value in the second
    h = a[0] @ a[0].T
    calls = [dict(), dict(atol=0.5), dict(rtol=0.01), dict(atol=0.0), dict(atol=1e-9, rtol=1e-1)]
    for kw in calls:
        for fn in ("pinv", "matrix_rank"):
            mine = getattr(mg.linalg, fn)(mg.tensor(a), **kw).numpy()
            theirs = getattr(torch.linalg, fn)(torch.tensor(a), **kw).numpy()
            np.testing.assert_allclose(mine, theirs, atol=1e-9, err_msg=f"{fn} {kw}")
            mine = getattr(mg.linalg, fn)(mg.tensor(h), hermitian=True, **kw).numpy()
            theirs = getattr(torch.linalg, fn)(torch.tensor(h), hermitian=True, **kw).numpy()
            np.testing.assert_allclose(mine, theirs, atol=1e-9, err_msg=f"{fn} herm {kw}")
    atol = mg.tensor([0.0, 100.0], dtype=mg.float64)           # one per matrix of the batch
    assert mg.linalg.matrix_rank(mg.tensor(a), atol=atol).numpy().tolist() == \
        torch.linalg.matrix_rank(torch.tensor(a), atol=torch.tensor([0.0, 100.0])).tolist()
    assert mg.linalg.matrix_rank(mg.tensor(a)).dtype == mg.int64
    d = np.diag([1.0, 0.5])                          # a singular value at the cutoff: dropped
    assert mg.linalg.matrix_rank(mg.tensor(d), atol=0.5).item() == \
        torch.linalg.matrix_rank(torch.tensor(d), atol=0.5).item() == 1
    np.testing.assert_allclose(mg.linalg.pinv(mg.tensor(d), atol=0.5).numpy(),
                               [[1.0, 0.0], [0.0, 0.0]])


def test_cond_values_as_torch():
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((2, 3, 3)) + 2 * np.eye(3)
    for p in (None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf):
        np.testing.assert_allclose(mg.linalg.cond(mg.tensor(a), p).numpy(),
                                   torch.linalg.cond(torch.tensor(a), p).numpy(), rtol=1e-12)


def test_matrix_exp_values():
    """exp of a rotation generator is the rotation; of a diagonal, the diagonal's exps;
    a large norm goes through many squarings; an empty matrix is empty."""
    t = 10.0
    r = mg.linalg.matrix_exp(mg.tensor([[0.0, t], [-t, 0.0]], dtype=mg.float64)).numpy()
    np.testing.assert_allclose(r, [[np.cos(t), np.sin(t)], [-np.sin(t), np.cos(t)]],
                               atol=1e-13)
    d = mg.linalg.matrix_exp(mg.tensor(np.diag([-30.0, 0.0, 20.0]))).numpy()
    np.testing.assert_allclose(d, np.diag(np.exp([-30.0, 0.0, 20.0])), rtol=1e-13, atol=0)
    assert mg.linalg.matrix_exp(mg.zeros(2, 0, 0)).shape == (2, 0, 0)


def test_empty_matrices_give_torchs_shapes():
    for fn, shape, want in [(mg.linalg.qr, (0, 3), [(0, 0), (0, 3)]),
                            (mg.linalg.svd, (3, 0), [(3, 3), (0,), (0, 0)]),
                            (mg.linalg.eigh, (0, 2, 2), [(0, 2), (0, 2, 2)]),
                            (mg.linalg.pinv, (3, 0), [(0, 3)]),
                            (mg.linalg.cond, (2, 2, 0), [(2,)])]:
        out = fn(mg.zeros(*shape, dtype=mg.float64, requires_grad=True))
        assert [o.shape for o in (out if isinstance(out, tuple) else [out])] == want
    assert mg.linalg.cond(mg.zeros(2, 0, 0)).numpy().tolist() == [0.0, 0.0]


def test_solve_triangular_reads_one_triangle():
    """The other triangle (and, unitriangular, the diagonal) is not read, nor differentiated."""
    a = np.array([[2.0, 5.0], [3.0, 4.0]])
    b = np.array([[1.0], [2.0]])
    x = mg.tensor(a, requires_grad=True)
    out = mg.linalg.solve_triangular(x, mg.tensor(b), upper=False, unitriangular=True)
    np.testing.assert_allclose(out.numpy(), np.linalg.solve([[1.0, 0.0], [3.0, 1.0]], b))
    out.sum().backward()
    assert x.grad.numpy()[0, 1] == 0 and (np.diag(x.grad.numpy()) == 0).all()


@pytest.mark.parametrize("device", ["cpu", "spy"])
def test_a_zero_on_the_diagonal_gives_torchs_inf_and_nan(device, request):
    """solve_triangular does not refuse a singular triangle: its quotients are inf and NaN,
    PyTorch's to the bit; so QR's gradient at a rank-deficient A is PyTorch's too."""
    torch = pytest.importorskip("torch")
    if device == "spy":
        device = request.getfixturevalue("spy")
    b = np.array([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]])
    for a, upper in (([[0.0, 1, 2], [0, 3, 1], [0, 0, 2]], True),
                     ([[2.0, 0, 0], [1, 0, 0], [1, 1, 2]], False)):
        with np.errstate(all="ignore"):
            mine = mg.linalg.solve_triangular(mg.tensor(a, dtype=mg.float64, device=device),
                                              mg.tensor(b, device=device), upper=upper)
        theirs = torch.linalg.solve_triangular(torch.tensor(a, dtype=torch.float64),
                                               torch.tensor(b), upper=upper)
        np.testing.assert_array_equal(mine.numpy(), theirs.numpy())
    a = np.array([[1.0, 0, 2], [2, 0, 1], [3, 0, 1], [1, 0, 0]])       # a zero column
    x, t = mg.tensor(a, device=device, requires_grad=True), torch.tensor(a, requires_grad=True)
    with np.errstate(all="ignore"):
        q, r = mg.linalg.qr(x)
        (q.sum() + r.sum()).backward()
    q, r = torch.linalg.qr(t)
    (q.sum() + r.sum()).backward()
    np.testing.assert_allclose(x.grad.numpy(), t.grad.numpy(), rtol=1e-12)


@pytest.mark.parametrize("fn, error, match", [
    (lambda: mg.linalg.qr(mg.ones(3)), ValueError, "at least 2 dims"),
    (lambda: mg.linalg.qr(mg.ones(2, 2, dtype=mg.int64)), TypeError, "float32 or float64"),
    (lambda: mg.linalg.qr(mg.ones(2, 2), mode="full"), ValueError, "'reduced'"),
    (lambda: mg.linalg.svd([[1.0]]), TypeError, "Tensor"),
    (lambda: mg.linalg.eigh(mg.ones(2, 3)), ValueError, "square"),
    (lambda: mg.linalg.eigh(mg.eye(2), UPLO="X"), ValueError, "'L' or 'U'"),
    (lambda: mg.linalg.eigvalsh(mg.eye(2), UPLO="l"), ValueError, "'L' or 'U'"),
    (lambda: mg.linalg.matrix_exp(mg.ones(2, 3)), ValueError, "square"),
    (lambda: mg.linalg.cond(mg.eye(2), 3), ValueError, "valid: None"),
    (lambda: mg.linalg.cond(mg.ones(2, 3), "fro"), ValueError, "square"),
    (lambda: mg.linalg.solve_triangular(mg.eye(2), mg.ones(2), upper=True), ValueError,
     "at least 2 dims"),
    (lambda: mg.linalg.solve_triangular(mg.eye(2), mg.ones(3, 1), upper=True), ValueError,
     "incompatible"),
    (lambda: mg.linalg.solve_triangular(mg.eye(2).expand(2, 2, 2), mg.ones(3, 2, 1),
                                        upper=True), ValueError, "broadcast"),
])
def test_bad_arguments_raise_clear_errors(fn, error, match):
    with pytest.raises(error, match=match):
        fn()


def test_a_failed_factorisation_that_the_gpu_does_not_report_is_caught(spy, monkeypatch):
    """cuSOLVER (through CuPy) reports a failed SVD or eigh by NaN in the result, not an
    error: read as the failure, as NumPy's LinAlgError is on the CPU."""
    import spy_backend
    linalg = spy_backend.SpyModule.linalg
    nan = spy_backend.SpyModule().full_like
    monkeypatch.setattr(linalg, "svd", lambda a, *args: (nan(a, np.nan),) * 3)
    monkeypatch.setattr(linalg, "eigh", lambda a, *args: (nan(a, np.nan),) * 2)
    for fn in (mg.linalg.svd, mg.linalg.eigh, mg.linalg.pinv):
        with pytest.raises(RuntimeError, match="converge"):
            fn(mg.eye(2, device=spy))
    with pytest.raises(RuntimeError, match="converge"):     # NumPy's own report
        mg.linalg.svd(mg.tensor([[np.nan, 1.0], [1.0, 2.0]]))


@pytest.mark.parametrize("which", ["qr", "svd", "eigh"])
def test_writing_into_one_factor_leaves_the_others_and_their_users_alone(which):
    """Each factor has memory and a version counter of its own, as PyTorch's separate
    outputs: writing into Q (U, Vh; the eigenvectors) neither changes R (S; the eigenvalues)
    nor makes an op that saved R refuse its backward (it did: they were slices of one
    output, sharing one counter)."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((4, 3))
    a = a[:3] @ a[:3].T if which == "eigh" else a
    grads = []
    for lib_ in (torch, mg):
        parts = {"qr": lambda: lib_.linalg.qr(lib_.tensor(a)),
                 "svd": lambda: lib_.linalg.svd(lib_.tensor(a), full_matrices=False),
                 "eigh": lambda: lib_.linalg.eigh(lib_.tensor(a))[::-1]}[which]()
        kept, written = parts[1], [parts[0]] + list(parts[2:])
        before = kept.numpy().copy()
        z = lib_.tensor(np.arange(1.0, 1.0 + kept.numel()).reshape(kept.shape),
                        requires_grad=True)
        y = (kept * z).sum()
        written[0].mul_(2)
        written[-1].zero_()
        np.testing.assert_array_equal(kept.numpy(), before)
        y.backward()
        grads.append(z.grad.numpy())
    np.testing.assert_allclose(grads[1], grads[0], atol=1e-12)


def test_a_factor_written_in_place_leaves_the_decompositions_gradient_right():
    """The gradient through the decomposition is still the one at the values it computed
    (minigrad keeps those; PyTorch refuses this backward instead)."""
    a = np.random.default_rng(0).standard_normal((4, 3))
    grads = []
    for write in (False, True):
        x = mg.tensor(a, requires_grad=True)
        q, r = mg.linalg.qr(x)
        loss = (r ** 2).sum() + q.sum()
        if write:
            q.mul_(2)
            r.mul_(3)
        loss.backward()
        grads.append(x.grad.numpy())
    np.testing.assert_array_equal(grads[1], grads[0])


def test_the_rank_of_one_matrix_is_a_0d_tensor_as_torchs():
    """matrix_rank and lstsq's rank of an unbatched matrix held a NumPy scalar, not an
    array: .numpy() was no array, and writing into it was refused as read-only memory."""
    for rank in (mg.linalg.matrix_rank(mg.eye(3)),
                 mg.linalg.matrix_rank(mg.eye(3), hermitian=True),
                 mg.linalg.lstsq(mg.eye(3), mg.ones(3, 1)).rank):
        assert isinstance(rank.numpy(), np.ndarray) and rank.shape == ()
        assert rank.add_(1).item() == 4 and repr(rank) == "tensor(4)"


@pytest.mark.parametrize("p", [None, 2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf])
def test_the_condition_number_of_0_by_0_matrices_is_0_as_torch(p):
    out = mg.linalg.cond(mg.zeros(2, 0, 0, dtype=mg.float64), p)
    assert out.shape == (2,) and out.numpy().tolist() == [0.0, 0.0]


def test_solve_triangular_takes_integer_b_in_as_dtype_as_torch():
    torch = pytest.importorskip("torch")
    a = np.array([[2.0, 1.0], [0.0, 4.0]], dtype=np.float32)
    b = np.array([[1, 2], [3, 4]])
    for left in (True, False):
        mine = mg.linalg.solve_triangular(mg.tensor(a), mg.tensor(b), upper=True, left=left)
        theirs = torch.linalg.solve_triangular(torch.tensor(a), torch.tensor(b), upper=True,
                                               left=left)
        assert mine.dtype == mg.float32
        np.testing.assert_allclose(mine.numpy(), theirs.numpy(), rtol=1e-6)


def test_the_older_spellings_svd_qr_pinverse_matrix_exp_as_torch():
    """mg.svd / Tensor.svd is torch.svd: (U, S, V), V not Vh; some=False full; compute_uv
    False: zeros for U and V. mg.qr's some; mg.pinverse's rcond (rtol, default 1e-15)."""
    torch = pytest.importorskip("torch")
    a = np.random.default_rng(0).standard_normal((2, 4, 3))
    t, x = torch.tensor(a), mg.tensor(a)
    for some in (True, False):
        for uv in (True, False):
            mine, theirs = x.svd(some, uv), torch.svd(t, some, uv)
            assert mine._fields == ("U", "S", "V") and \
                [m.shape for m in mine] == [tuple(m.shape) for m in theirs]
            for m, th in zip(mine, theirs):      # (sign-free: the columns' squares)
                np.testing.assert_allclose(m.numpy() ** 2, th.numpy() ** 2, atol=1e-10)
        mine, theirs = mg.qr(x, some), x.qr(some)
        assert mine._fields == ("Q", "R") and [m.shape for m in mine] == \
            [tuple(m.shape) for m in torch.linalg.qr(t, "reduced" if some else "complete")]
        np.testing.assert_array_equal(mine.R.numpy(), theirs.R.numpy())
    u, s, v = mg.svd(x)
    np.testing.assert_allclose(((u * s.unsqueeze(-2)) @ v.mT).numpy(), a, atol=1e-12)
    d = np.diag([1.0, 1e-10, 8e-16])       # which count as 0: rcond decides (not pinv's)
    for rcond in ((), (1e-12,), (1e-3,)):
        np.testing.assert_allclose(mg.tensor(d).pinverse(*rcond).numpy(),
                                   torch.tensor(d).pinverse(*rcond).numpy(), rtol=1e-12)
        np.testing.assert_allclose(mg.pinverse(x, *rcond).numpy(),
                                   torch.pinverse(t, *rcond).numpy(), rtol=1e-10)
    sq = a[:, :3]
    np.testing.assert_allclose(mg.tensor(sq).matrix_exp().numpy(),
                               torch.tensor(sq).matrix_exp().numpy(), rtol=1e-12)
    assert mg.matrix_exp is mg.linalg.matrix_exp
    x = mg.tensor(a, requires_grad=True)             # S differentiable without U and V
    x.svd(compute_uv=False).S.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), (mg.linalg.svd(mg.tensor(a))[0][..., :3] @
                                                mg.linalg.svd(mg.tensor(a))[2]).numpy(),
                               atol=1e-8)
