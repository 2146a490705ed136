"""F.ctc_loss and nn.CTCLoss (ops/ctc.py, nn/losses_extra.py) against torch: padded and
concatenated targets, unbatched, every reduction, zero_infinity, a sample no alignment fits
(inf, NaN gradient as torch's), the gradient w.r.t. log_probs as torch's (e^lp - γ), gradcheck
and gradgradcheck in float64 through a log_softmax, the array recursions (forward, fast
backward) against the Tensor reference and both against torch on random ragged batches, a
class masked to -inf, padding frames, the spy device, the module and errors."""
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from op_helpers import OpCase, check_spy_matches_cpu

T, N, C = 6, 4, 5
TARGETS = np.array([[1, 1, 2], [1, 2, 0], [3, 4, 4], [2, 2, 2]])
INPUT_LENGTHS, TARGET_LENGTHS = [6, 5, 6, 4], [3, 2, 0, 3]   # the last fits no alignment


def _log_probs(seed=0, shape=(T, N, C)):
    x = np.random.default_rng(seed).standard_normal(shape)
    return x - np.log(np.exp(x).sum(-1, keepdims=True))


def _both(fn_args, dtype, device, **kw):
    """(minigrad loss, its lp.grad, torch loss, its lp.grad) for the same weighted sum."""
    torch = pytest.importorskip("torch")
    lp, targets, il, tl = fn_args
    a = mg.tensor(lp, dtype=dtype, device=device, requires_grad=True)
    b = torch.tensor(lp, dtype=getattr(torch, dtype), requires_grad=True)
    mine = F.ctc_loss(a, mg.tensor(targets, device=device), il, tl, **kw)
    theirs = torch.nn.functional.ctc_loss(b, torch.tensor(targets), il, tl, **kw)
    w = np.random.default_rng(1).standard_normal(tuple(theirs.shape))
    (mine * mg.tensor(w, dtype=dtype, device=device)).sum().backward()
    (theirs * torch.tensor(w, dtype=getattr(torch, dtype))).sum().backward()
    return mine.numpy(), a.grad.numpy(), theirs.detach().numpy(), b.grad.numpy()


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("zero_infinity", [False, True])
def test_as_torch(reduction, zero_infinity, device, dtype):
    tol = 1e-5 if dtype == "float32" else 1e-10
    loss, grad, t_loss, t_grad = _both((_log_probs(), TARGETS, INPUT_LENGTHS, TARGET_LENGTHS),
                                       dtype, device, reduction=reduction,
                                       zero_infinity=zero_infinity)
    assert loss.dtype == np.dtype(dtype)
    np.testing.assert_allclose(loss, t_loss, rtol=tol, atol=tol)
    # without zero_infinity the sample that fits no alignment has a NaN gradient, as torch's
    np.testing.assert_allclose(grad, t_grad, rtol=tol, atol=tol, equal_nan=True)
    assert np.isnan(grad).any() == (not zero_infinity)


def test_concatenated_targets_blank_and_tensor_lengths():
    flat = np.array([1, 1, 0, 2, 3, 0, 0])       # lengths 3, 1, 0, 3; blank 3 inside one
    il, tl = [6, 6, 3, 5], [3, 1, 0, 3]
    loss, grad, t_loss, t_grad = _both((_log_probs(2), flat, il, tl), "float64", "cpu",
                                       blank=3, reduction="none")
    np.testing.assert_allclose(loss, t_loss, rtol=1e-10)
    np.testing.assert_allclose(grad, t_grad, rtol=1e-10, atol=1e-12)
    as_tensors = F.ctc_loss(mg.tensor(_log_probs(2)), mg.tensor(flat), mg.tensor(il),
                            mg.tensor(np.array(tl, dtype=np.int32)), blank=3, reduction="none")
    np.testing.assert_allclose(as_tensors.numpy(), loss)


def test_a_target_holding_the_blank_class_gives_torchs_value():
    # torch's docs forbid it but compute it unchecked, skipping to a blank label from the
    # label two states back as to any other. (torch's gradient is then off at the last
    # frame of a target that ends in the blank class; ours is the loss's, gradchecked)
    targets = np.array([[1, 0, 2], [2, 0, 0], [0, 3, 0], [1, 2, 3]])
    loss, _, t_loss, _ = _both((_log_probs(3), targets, [6, 6, 6, 6], [3, 3, 3, 3]),
                               "float64", "cpu", reduction="none")
    np.testing.assert_allclose(loss, t_loss, rtol=1e-10)
    x = mg.tensor(np.random.default_rng(4).standard_normal((5, 2, 3)), dtype="float64",
                  requires_grad=True)
    assert mg.gradcheck(lambda x: F.ctc_loss(F.log_softmax(x, 2), mg.tensor([[1, 0], [0, 2]]),
                                             [5, 4], [2, 2]), [x])


@pytest.mark.parametrize("reduction", ["none", "mean"])
def test_unbatched_as_torch(reduction):
    loss, grad, t_loss, t_grad = _both((_log_probs(3, (7, C)), np.array([2, 2, 4]), [7], [3]),
                                       "float64", "cpu", reduction=reduction)
    assert loss.shape == t_loss.shape == ()
    np.testing.assert_allclose(loss, t_loss, rtol=1e-10)
    np.testing.assert_allclose(grad, t_grad, rtol=1e-10, atol=1e-12)


def test_gradient_is_torchs_not_the_plain_derivative():
    """torch's gradient w.r.t. log_probs is e^lp - γ (the logits' gradient under a
    log_softmax), not -γ: it sums to e^lp summed minus 1 over the classes of each frame."""
    lp = mg.tensor(_log_probs(), dtype="float64", requires_grad=True)
    F.ctc_loss(lp, mg.tensor(TARGETS), INPUT_LENGTHS, TARGET_LENGTHS, reduction="sum",
               zero_infinity=True).backward()
    per_frame = lp.grad.numpy().sum(-1)                # Σ_c e^lp = 1, Σ_c γ = 1
    np.testing.assert_allclose(per_frame[:, :3], 0, atol=1e-12)
    assert np.abs(lp.grad.numpy()).max() > 0.1


def _through_log_softmax(x):
    return F.ctc_loss(F.log_softmax(x, 2), mg.tensor(np.array([[1, 2, 2], [2, 0, 0]])),
                      [4, 3], [3, 1], reduction="mean")


def test_gradcheck_through_log_softmax():
    x = mg.tensor(np.random.default_rng(4).standard_normal((4, 2, 3)), dtype="float64",
                  requires_grad=True)
    assert mg.gradcheck(_through_log_softmax, [x])


def test_gradgradcheck_through_log_softmax():
    """The Tensor-level backward runs the recursions with a graph: second derivatives
    (which torch's ctc_loss does not have)."""
    def fn(x):
        return F.ctc_loss(F.log_softmax(x, 1), mg.tensor(np.array([1, 1])), [3], [2])
    x = mg.tensor(np.random.default_rng(4).standard_normal((3, 2)), dtype="float64",
                  requires_grad=True)
    assert mg.gradgradcheck(fn, [x])


@pytest.mark.parametrize("zero_infinity", [False, True])
def test_fast_backward_matches_reference(zero_infinity):
    """The array backward (ordinary backward) against the Tensor-level one (create_graph)."""
    lp = mg.tensor(_log_probs(5), dtype="float64", requires_grad=True)
    grads = []
    for create_graph in (False, True):
        loss = F.ctc_loss(lp, mg.tensor(TARGETS), INPUT_LENGTHS, TARGET_LENGTHS,
                          reduction="sum", zero_infinity=zero_infinity)
        (g,) = mg.grad(loss, [lp], create_graph=create_graph)
        grads.append(g.numpy())
    np.testing.assert_allclose(grads[0], grads[1], rtol=1e-12, atol=1e-14, equal_nan=True)


def test_on_the_gpu_stand_in(spy):
    case = OpCase("ctc", _through_log_softmax, ((4, 2, 3),))
    check_spy_matches_cpu(case, spy)


def test_module():
    torch = pytest.importorskip("torch")
    m = nn.CTCLoss(blank=2, reduction="sum", zero_infinity=True)
    assert repr(m) == repr(torch.nn.CTCLoss()) == "CTCLoss()"
    assert (m.blank, m.reduction, m.zero_infinity) == (2, "sum", True)
    lp = mg.tensor(_log_probs())
    args = (mg.tensor(TARGETS % 2), INPUT_LENGTHS, TARGET_LENGTHS)
    np.testing.assert_allclose(m(lp, *args).numpy(), F.ctc_loss(
        lp, *args, blank=2, reduction="sum", zero_infinity=True).numpy())
    with pytest.raises(ValueError, match="reduction"):
        nn.CTCLoss(reduction="avg")


@pytest.mark.parametrize("call, error, words", [
    (lambda lp, t: F.ctc_loss(lp, t, [6, 6, 6, 6], [3, 2, 0, 3], blank=5), ValueError,
     "blank must be a class in"),
    (lambda lp, t: F.ctc_loss(lp[:, :0], t[:0], [], []), ValueError, "one sample"),
    (lambda lp, t: F.ctc_loss(lp, t, [6, 6, 6], [3, 2, 0, 3]), ValueError,
     "input_lengths must have one entry per batch element"),
    (lambda lp, t: F.ctc_loss(lp, t, [7, 6, 6, 6], [3, 2, 0, 3]), ValueError, "at most the 6"),
    (lambda lp, t: F.ctc_loss(lp, t, [6, 6, 6, 6], [4, 2, 0, 3]), ValueError,
     "padded targets hold 3"),
    (lambda lp, t: F.ctc_loss(lp, t, [6, 6, 6, 6], [3, -1, 0, 3]), ValueError, ">= 0"),
    (lambda lp, t: F.ctc_loss(lp, t.reshape(2, 6), [6] * 4, [3, 2, 0, 3]), ValueError,
     "one row per batch element"),
    (lambda lp, t: F.ctc_loss(lp, t.float(), [6] * 4, [3, 2, 0, 3]), TypeError, "integer"),
    (lambda lp, t: F.ctc_loss(lp, t + 3, [6] * 4, [3, 2, 0, 3]), ValueError,
     r"labels must lie in \[0, 5\)"),
    (lambda lp, t: F.ctc_loss(lp, t.reshape(-1), [6] * 4, [3, 2, 0, 4]), ValueError,
     "concatenated targets hold 12 labels"),
    (lambda lp, t: F.ctc_loss(lp, t, [6.5] * 4, [3, 2, 0, 3]), TypeError, "ints"),
    (lambda lp, t: F.ctc_loss(lp.to(dtype="int64"), t, [6] * 4, [3, 2, 0, 3]), TypeError,
     "float32 or float64"),
    (lambda lp, t: F.ctc_loss(lp, t, [6] * 4, [3, 2, 0, 3], reduction="avg"), ValueError,
     "reduction"),
])
def test_errors(call, error, words):
    with pytest.raises(error, match=words):
        call(mg.tensor(_log_probs()), mg.tensor(TARGETS))


def _grads_both_ways(lp, targets, il, tl, dtype="float64", **kw):
    """(loss, fast gradient, reference gradient) of the weighted losses of reduction 'none'."""
    a = mg.tensor(lp, dtype=dtype, requires_grad=True)
    w = mg.tensor(np.random.default_rng(1).standard_normal(len(il)), dtype=dtype)
    out = []
    for create_graph in (False, True):
        loss = F.ctc_loss(a, mg.tensor(targets), il, tl, reduction="none", **kw)
        out.append(mg.grad((loss * w).sum(), [a], create_graph=create_graph)[0].numpy())
    return loss.numpy(), out[0], out[1], w.numpy()


def _torch_ctc(lp, targets, il, tl, w, dtype="float64", **kw):
    torch = pytest.importorskip("torch")
    b = torch.tensor(lp, dtype=getattr(torch, dtype), requires_grad=True)
    loss = torch.nn.functional.ctc_loss(b, torch.tensor(targets), il, tl, reduction="none",
                                        **kw)
    (loss * torch.tensor(w, dtype=b.dtype)).sum().backward()
    return loss.detach().numpy(), b.grad.numpy()


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_random_batches_as_torch(seed, dtype):
    """Longer lattices, many repeated labels (few classes), ragged lengths, some samples no
    alignment fits, padded and concatenated targets: the array recursions (forward, fast
    backward) and the Tensor reference (create_graph) against torch."""
    rng = np.random.default_rng(seed)
    steps, n, classes, width = 25, 6, 4, 9
    lp = _log_probs(seed, (steps, n, classes))
    targets = rng.integers(1, classes, (n, width))
    tl = rng.integers(0, width + 1, n).tolist()
    il = rng.integers(1, steps + 1, n).tolist()
    flat = np.concatenate([row[:k] for row, k in zip(targets, tl)])
    tol = 1e-4 if dtype == "float32" else 1e-10
    for t in (targets, flat):
        loss, fast, ref, w = _grads_both_ways(lp, t, il, tl, dtype, zero_infinity=True)
        t_loss, t_grad = _torch_ctc(lp, t, il, tl, w, dtype, zero_infinity=True)
        np.testing.assert_allclose(loss, t_loss, rtol=tol, atol=tol)
        np.testing.assert_allclose(fast, t_grad, rtol=tol, atol=tol)
        np.testing.assert_allclose(ref, t_grad, rtol=tol, atol=tol)


def test_array_recursions_match_the_tensor_reference():
    from minigrad.ops.ctc import Lattice, _extended
    il, tl = np.array(INPUT_LENGTHS), np.array(TARGET_LENGTHS)
    lattice = Lattice(*_extended("ctc", mg.tensor(TARGETS), tl, True, C, 0), il, tl, "cpu")
    lp = mg.tensor(_log_probs(6), dtype="float64")
    lpe = lattice.picked(lp)
    lpe_arrays = lattice.picked_arrays(lp.numpy())
    np.testing.assert_array_equal(lpe_arrays, lpe.numpy())
    alpha, beta = lattice.alpha(lpe), lattice.beta(lpe)
    np.testing.assert_allclose(lattice.alpha_arrays(lpe_arrays), alpha.numpy(), rtol=1e-13)
    np.testing.assert_allclose(lattice.beta_arrays(lpe_arrays), beta.numpy(), rtol=1e-13)
    np.testing.assert_allclose(lattice.nll_arrays(alpha.numpy()), lattice.nll(alpha).numpy(),
                               rtol=1e-13)


def test_a_class_masked_to_minus_inf_in_the_target_gives_finite_gradients():
    """A log-probability of -inf (a class masked out at a frame) that the target uses: no
    alignment passes there, so that state's posterior is 0 and the gradient e^-inf - 0 = 0.
    (torch gives NaN at that entry; we used to give NaN for every class of the frame.)"""
    x = np.random.default_rng(7).standard_normal((6, 2, 5))
    x[0, :, 4] = x[3, 1, 1] = -np.inf
    lp = x - np.log(np.exp(x).sum(-1, keepdims=True))
    targets, il, tl = np.array([[4, 1], [1, 4]]), [6, 6], [2, 2]
    loss, fast, ref, w = _grads_both_ways(lp, targets, il, tl)
    t_loss, t_grad = _torch_ctc(lp, targets, il, tl, w)
    np.testing.assert_allclose(loss, t_loss, rtol=1e-12)
    masked = np.isinf(lp)
    for grad in (fast, ref):
        assert np.isfinite(grad).all()
        np.testing.assert_array_equal(grad[masked], 0.0)
        np.testing.assert_allclose(grad[~masked], t_grad[~masked], rtol=1e-10, atol=1e-12)


def test_frames_past_an_input_are_no_part_of_its_loss():
    """What lies past a sample's input_lengths (padding: NaN, inf) changes nothing and
    warns of nothing."""
    lp = _log_probs(8, (6, 3, 5))
    lp[4:, 0], lp[5:, 1] = np.nan, np.inf
    targets, il, tl = np.array([[1, 2], [3, 3], [2, 4]]), [4, 5, 6], [2, 2, 2]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        loss, fast, ref, w = _grads_both_ways(lp, targets, il, tl)
    t_loss, t_grad = _torch_ctc(lp, targets, il, tl, w)
    np.testing.assert_allclose(loss, t_loss, rtol=1e-12)
    for grad in (fast, ref):
        np.testing.assert_allclose(grad, t_grad, rtol=1e-10, atol=1e-12)
