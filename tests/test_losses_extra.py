"""multilabel_margin_loss, triplet_margin_with_distance_loss, pdist (ops/losses_extra.py),
their modules and AdaptiveLogSoftmaxWithLoss (nn/losses_extra.py, nn/adaptive.py) against
torch: values, gradients, second order, gradcheck in float64, the spy device, reprs, state
dicts and errors; multilabel_margin_loss also on random rows (ties at the hinge, repeats,
-1 ends, full and empty rows) and in O(N·C) memory."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from op_helpers import (OpCase, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch, check_spy_matches_cpu)
from nn_helpers import compare_with_torch

MULTILABEL = np.array([[3, 0, -1, 1, 2], [0, 1, 2, 3, 4], [4, 4, 1, -1, -1]])  # 4 listed twice


def _torch_f():
    import torch.nn.functional as TF
    return TF


def _multilabel(reduction, rows=3):
    t = MULTILABEL[:rows] if rows else MULTILABEL[0]

    def call(Fn, lib, x):
        return Fn.multilabel_margin_loss(x, lib.tensor(t, device=x.device), reduction=reduction)
    shape = (rows, 5) if rows else (5,)
    return OpCase(f"multilabel_margin_{reduction}_{rows}", lambda x: call(F, mg, x), (shape,),
                  torch_fn=lambda x: call(_torch_f(), __import__("torch"), x))


def _triplet(**kw):
    def call(Fn, a, p, n):
        return Fn.triplet_margin_with_distance_loss(a, p, n, **kw)
    return OpCase(f"triplet_with_distance_{sorted(kw)}", lambda *xs: call(F, *xs),
                  ((4, 3),) * 3, torch_fn=lambda *xs: call(_torch_f(), *xs))


def _l1(u, v):
    return (u - v).abs().sum(-1)


def _pdist(p, shape=(4, 3)):
    return OpCase(f"pdist_{p}", lambda x: F.pdist(x, p), (shape,),
                  torch_fn=lambda x: _torch_f().pdist(x, p), domain="nonzero")


CASES = ([_multilabel(r) for r in ("none", "mean", "sum")] + [_multilabel("none", 0)] +
         [_triplet(), _triplet(swap=True, reduction="none"),
          _triplet(margin=2.0, distance_function=_l1, reduction="sum")] +
         [_pdist(p) for p in (2, 1, 3, 0.5, float("inf"))] + [_pdist(2, (1, 3))])


@pytest.mark.parametrize("case", CASES, ids=str)
def test_as_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES[::2], ids=str)
def test_gradcheck(case):
    check_gradcheck(case, "cpu")


# (torch has no second derivative of multilabel_margin_loss or pdist: gradgradcheck above)
@pytest.mark.parametrize("case", [c for c in CASES if c.name.startswith("triplet")], ids=str)
def test_double_backward_as_torch(case):
    check_double_backward_vs_torch(case, "cpu")


@pytest.mark.parametrize("case", CASES[::3], ids=str)
def test_on_the_gpu_stand_in(case, spy):
    check_spy_matches_cpu(case, spy)


def test_multilabel_margin_gradient_at_the_hinge_is_zero_as_torch():
    torch = pytest.importorskip("torch")
    x, t = np.array([[1.0, 0.0, 0.0]]), np.array([[0, -1, 2]])   # 1 - (x0 - x1) = 0
    a, b = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    F.multilabel_margin_loss(a, mg.tensor(t)).backward()
    torch.nn.functional.multilabel_margin_loss(b, torch.tensor(t)).backward()
    np.testing.assert_array_equal(a.grad.numpy(), b.grad.numpy())


def _multilabel_rows(rng, n, c):
    """Scores on a half-integer grid (so pairs sit exactly at the hinge) and targets with
    repeats, -1 anywhere (the first ends the list), a row listing every class, and one
    listing none."""
    x = rng.integers(-4, 5, (n, c)) / 2.0
    t = rng.integers(-1, c, (n, c))
    t[0], t[-1] = rng.permutation(c), -1
    return x, t


@pytest.mark.parametrize("reduction", ["none", "mean", "sum"])
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_multilabel_margin_random_rows_as_torch(reduction, dtype):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(3)
    for n, c in [(6, 9), (4, 1), (1, 12)]:
        x, t = _multilabel_rows(rng, n, c)
        x += rng.standard_normal(x.shape) * (rng.random(x.shape) < 0.3)   # some off the grid
        a = mg.tensor(x, dtype=dtype, requires_grad=True)
        b = torch.tensor(x, dtype=getattr(torch, dtype), requires_grad=True)
        mine = F.multilabel_margin_loss(a, mg.tensor(t), reduction=reduction)
        theirs = torch.nn.functional.multilabel_margin_loss(b, torch.tensor(t),
                                                            reduction=reduction)
        w = rng.standard_normal(tuple(theirs.shape))
        (mine * mg.tensor(w, dtype=dtype)).sum().backward()
        (theirs * torch.tensor(w, dtype=b.dtype)).sum().backward()
        tol = 1e-6 if dtype == "float32" else 1e-13
        np.testing.assert_allclose(mine.numpy(), theirs.detach().numpy(), rtol=tol, atol=tol)
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=tol, atol=tol)


def test_multilabel_margin_gradcheck_with_repeats_and_full_rows():
    x, t = _multilabel_rows(np.random.default_rng(4), 4, 7)
    x = x + np.random.default_rng(5).standard_normal(x.shape) * 0.1       # off the kinks
    a = mg.tensor(x, dtype="float64", requires_grad=True)
    assert mg.gradcheck(lambda a: F.multilabel_margin_loss(a, mg.tensor(t), reduction="none"),
                         [a])
    assert mg.gradgradcheck(lambda a: F.multilabel_margin_loss(a, mg.tensor(t)) * a, [a])


def test_multilabel_margin_memory_is_linear_in_the_classes():
    """The pairs (target, non-target) are counted, not formed: forward and backward of
    (N, C) scores with C targets a row hold O(N·C) memory, not an (N, C, C) table."""
    import tracemalloc
    rng = np.random.default_rng(6)
    n, c = 2, 1500
    x = mg.tensor(rng.standard_normal((n, c)), dtype="float64", requires_grad=True)
    t = np.stack([rng.permutation(c) for _ in range(n)])
    t[:, c // 2] = -1                                           # c/2 targets a row
    t = mg.tensor(t)
    F.multilabel_margin_loss(x[:, :5], t[:, :5] % 5).backward()    # (what runs once: apart)
    tracemalloc.start()
    try:
        F.multilabel_margin_loss(x, t).backward()
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * n * c * 8, f"peak {peak} bytes"     # (about 20; the pairs: 190 MB)


def test_multilabel_margin_of_spread_out_float32_scores_as_torch():
    """Scores in the thousands, the targets' near the top (few pairs, each small): the
    pairs' sum must not carry the rounding of the scores' distance from the row's mean
    (it was off by 1e-4 of the loss at ±1000, 1e-3 at ±10⁴)."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(7)
    x = rng.standard_normal((16, 200)) * 1000
    t = np.full((16, 200), -1)
    t[:, :3] = rng.integers(0, 200, (16, 3))
    x[np.arange(16)[:, None], t[:, :3]] = x.max(1, keepdims=True) - rng.random((16, 3)) * 3
    x = x.astype(np.float32)
    mine = F.multilabel_margin_loss(mg.tensor(x), mg.tensor(t), reduction="none")
    exact = torch.nn.functional.multilabel_margin_loss(torch.tensor(x, dtype=torch.float64),
                                                       torch.tensor(t), reduction="none")
    assert mine.dtype == mg.float32
    np.testing.assert_allclose(mine.numpy(), exact.numpy(), rtol=2e-7)


def test_multilabel_margin_a_nan_score_is_in_no_pair_as_torch():
    """torch's test 1 - x[y] + x[i] > 0 is false where either is NaN: such a pair adds
    nothing (a NaN target's hinge was already so; a NaN non-target made the loss NaN)."""
    torch = pytest.importorskip("torch")
    x = np.array([[0.2, np.nan, 0.5, np.inf, -0.5], [np.nan, 0.0, 0.5, 1.0, 0.9]])
    t = np.array([[0, 3, -1, 0, 0], [0, 3, -1, 0, 0]])
    a, b = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    mine = F.multilabel_margin_loss(a, mg.tensor(t), reduction="none")
    theirs = torch.nn.functional.multilabel_margin_loss(b, torch.tensor(t), reduction="none")
    mine.sum().backward()
    theirs.sum().backward()
    np.testing.assert_allclose(mine.numpy(), theirs.detach().numpy(), rtol=1e-15)
    np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-15)


def test_pdist_of_equal_rows_has_zero_gradient_as_torch():
    x = mg.tensor([[1.0, 2.0], [1.0, 2.0], [0.0, 1.0]], requires_grad=True)
    F.pdist(x).sum().backward()
    assert np.isfinite(x.grad.numpy()).all()
    np.testing.assert_allclose(F.pdist(x).numpy(), [0, np.sqrt(2), np.sqrt(2)])


def test_loss_modules_as_torch():
    torch = pytest.importorskip("torch")
    assert repr(nn.MultiLabelMarginLoss()) == repr(torch.nn.MultiLabelMarginLoss())
    m = nn.TripletMarginWithDistanceLoss(margin=2.0, swap=True, reduction="sum")
    assert repr(m) == repr(torch.nn.TripletMarginWithDistanceLoss())
    assert (m.margin, m.swap, m.reduction) == (2.0, True, "sum")
    assert isinstance(m.distance_function, nn.PairwiseDistance)
    assert nn.TripletMarginWithDistanceLoss(distance_function=_l1).distance_function is _l1
    x = np.random.default_rng(0).standard_normal((3, 4, 2))
    t = torch.nn.TripletMarginWithDistanceLoss(margin=2.0, swap=True, reduction="sum")
    np.testing.assert_allclose(m(*map(mg.tensor, x)).numpy(), t(*map(torch.tensor, x)).numpy(),
                               rtol=1e-12)
    y = np.random.default_rng(1).standard_normal((3, 5))
    np.testing.assert_allclose(nn.MultiLabelMarginLoss(reduction="none")(
        mg.tensor(y), mg.tensor(MULTILABEL)).numpy(), torch.nn.MultiLabelMarginLoss(
        reduction="none")(torch.tensor(y), torch.tensor(MULTILABEL)).numpy(), rtol=1e-12)


def test_adaptive_log_softmax_as_torch():
    torch = pytest.importorskip("torch")
    mine = nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True)
    theirs = torch.nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 6], div_value=2.0, head_bias=True)
    assert repr(mine) == repr(theirs)
    assert list(mine.state_dict()) == list(theirs.state_dict())
    for name in ("cutoffs", "shortlist_size", "n_clusters", "head_size", "head_bias"):
        assert getattr(mine, name) == getattr(theirs, name), name
    x = np.random.default_rng(0).standard_normal((6, 8))
    target = np.array([0, 4, 7, 9, 2, 5])              # every cluster, and the shortlist
    compare_with_torch(mine, theirs, [x, target])       # output, loss; all gradients
    out = mine(mg.tensor(x), mg.tensor(target))
    assert type(out).__name__ == "_ASMoutput" and out._fields == ("output", "loss")
    t_x = torch.tensor(x)
    np.testing.assert_allclose(mine.log_prob(mg.tensor(x)).numpy(),
                               theirs.log_prob(t_x).detach().numpy(), rtol=1e-10)
    np.testing.assert_array_equal(mine.predict(mg.tensor(x)).numpy(), theirs.predict(t_x))
    one = mine(mg.tensor(x[1]), mg.tensor(4))               # unbatched
    assert one.output.shape == () and np.isclose(one.output.item(), out.output.numpy()[1])


def test_adaptive_log_softmax_predict_mixed_and_gradcheck():
    m = nn.AdaptiveLogSoftmaxWithLoss(4, 6, [2], div_value=2.0).double()
    x = mg.tensor(np.random.default_rng(2).standard_normal((20, 4)))
    np.testing.assert_array_equal(m.predict(x).numpy(), m.log_prob(x).numpy().argmax(1))
    params = list(m.parameters())
    target = mg.tensor([0, 3, 5])
    assert mg.gradcheck(lambda *ps: m(x[:3], target).loss, params)


@pytest.mark.parametrize("call, error, words", [
    (lambda x: F.multilabel_margin_loss(x, mg.tensor(MULTILABEL[:1])), ValueError,
     "inconsistent target size"),
    (lambda x: F.multilabel_margin_loss(x, mg.tensor(MULTILABEL) + 1), ValueError,
     r"must lie in \[-1, 5\)"),
    (lambda x: F.multilabel_margin_loss(x, mg.tensor(MULTILABEL).float()), TypeError,
     "integer class indices"),
    (lambda x: F.multilabel_margin_loss(x.reshape(3, 5, 1), mg.tensor(MULTILABEL)),
     ValueError, "vector or"),
    (lambda x: F.triplet_margin_with_distance_loss(x, x, x, margin=0), ValueError,
     "margin must be greater than 0"),
    (lambda x: nn.TripletMarginWithDistanceLoss(margin="1"), TypeError,
     "margin must be a number"),
    (lambda x: F.triplet_margin_with_distance_loss(x, x, x[0]), ValueError,
     "anchor 2D, positive 2D, and negative 1D"),
    (lambda x: F.triplet_margin_with_distance_loss(x, x, x, distance_function=3), TypeError,
     "callable"),
    (lambda x: F.pdist(x[0]), ValueError, "only supports 2D"),
    (lambda x: F.pdist(x, -1), ValueError, "non-negative p"),
    (lambda x: F.pdist(mg.tensor(MULTILABEL)), TypeError, "floating-point"),
    (lambda x: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [6, 3]), ValueError, "cutoffs should be"),
    (lambda x: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 10]), ValueError, "cutoffs should"),
    (lambda x: nn.AdaptiveLogSoftmaxWithLoss(8, 10, [3, 3]), ValueError, "cutoffs should"),
    (lambda x: nn.AdaptiveLogSoftmaxWithLoss(8, 10, ["3"]), ValueError, "cutoffs should"),
    (lambda x: nn.AdaptiveLogSoftmaxWithLoss(8, 10, 3), ValueError, "cutoffs should"),
    (lambda x: nn.AdaptiveLogSoftmaxWithLoss(5, 10, [3])(x.numpy(), [0, 1, 2]), TypeError,
     "input must be a Tensor"),
    (lambda x: nn.AdaptiveLogSoftmaxWithLoss(5, 10, [3])(x, mg.tensor([0, 4, 10])),
     ValueError, r"should be in \[0, 9\]"),
    (lambda x: nn.AdaptiveLogSoftmaxWithLoss(5, 10, [3])(x, mg.tensor([0, 4])), ValueError,
     "same size in the batch"),
    (lambda x: nn.AdaptiveLogSoftmaxWithLoss(5, 10, [3])(x, mg.tensor([[0, 4]])), ValueError,
     "multi-target not supported"),
    (lambda x: nn.AdaptiveLogSoftmaxWithLoss(5, 10, [3])(x, mg.tensor(1)), ValueError,
     "0D target tensor expects 1D"),
    (lambda x: nn.AdaptiveLogSoftmaxWithLoss(5, 10, [3]).log_prob(x[0]), ValueError,
     "expects a 2D input"),
])
def test_errors(call, error, words):
    with pytest.raises(error, match=words):
        call(mg.randn(3, 5))
