"""The losses' deprecated size_average and reduce (ops/loss_legacy.py): the reduction each
pair stands for, on every loss function and module PyTorch gives them to, in PyTorch's
positions, with its deprecation warning; closed forms without torch, then against torch."""
import re
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from minigrad.ops.loss_legacy import legacy_reduction

# (size_average, reduce) -> the reduction they stand for (None: `reduction` is kept)
TABLE = [((None, None), None), ((None, False), "none"), ((False, None), "sum"),
         ((True, None), "mean"), ((None, True), "mean"), ((True, True), "mean"),
         ((False, True), "sum"), ((True, False), "none"), ((False, False), "none")]

_R = np.random.default_rng(0)
X, Y = _R.standard_normal((3, 4)), _R.standard_normal((3, 4))
P, Q = _R.uniform(0.1, 0.9, (3, 4)), _R.uniform(0.1, 0.9, (3, 4))
CLS = np.array([1, 0, 3])
SIGN = np.array([1.0, -1.0, 1.0])
MULTI = np.array([[3, 0, -1, 1], [0, -1, 2, 3], [2, 1, -1, -1]])


def _cases(lib):
    """name -> (the loss function's name, its leading arguments, the module's class name
    and its leading arguments)."""
    t = lib.tensor
    x, y, p, q = t(X), t(Y), t(P), t(Q)
    return {
        "l1_loss": ((x, y), "L1Loss", ()), "mse_loss": ((x, y), "MSELoss", ()),
        "smooth_l1_loss": ((x, y), "SmoothL1Loss", ()),
        "kl_div": ((x.log_softmax(1), q), "KLDivLoss", ()),
        "nll_loss": ((x.log_softmax(1), t(CLS)), "NLLLoss", ()),
        "cross_entropy": ((x, t(CLS)), "CrossEntropyLoss", ()),
        "binary_cross_entropy": ((p, q), "BCELoss", ()),
        "binary_cross_entropy_with_logits": ((x, q), "BCEWithLogitsLoss", ()),
        "soft_margin_loss": ((x, t(np.sign(Y))), "SoftMarginLoss", ()),
        "multilabel_soft_margin_loss": ((x, t((Y > 0) * 1.0)), "MultiLabelSoftMarginLoss", ()),
        "multilabel_margin_loss": ((x, t(MULTI)), "MultiLabelMarginLoss", ()),
        "multi_margin_loss": ((x, t(CLS)), "MultiMarginLoss", ()),
        "margin_ranking_loss": ((x[:, 0], y[:, 0], t(SIGN), 0.1), "MarginRankingLoss", (0.1,)),
        "hinge_embedding_loss": ((x, t(np.sign(Y)), 0.5), "HingeEmbeddingLoss", (0.5,)),
        "cosine_embedding_loss": ((x, y, t(SIGN), 0.1), "CosineEmbeddingLoss", (0.1,)),
        "triplet_margin_loss": ((x, y, p), "TripletMarginLoss", ()),
        "poisson_nll_loss": ((x, q), "PoissonNLLLoss", ()),
    }


def _np(t):
    return t.detach().numpy() if hasattr(t, "detach") else t.numpy()


def test_the_table_in_closed_form():
    """mse_loss of [[1, 2], [3, 4]] against 0: 'none' the squares, 'sum' 30, 'mean' 7.5."""
    x, zero = mg.tensor([[1.0, 2.0], [3.0, 4.0]]), mg.zeros(2, 2)
    closed = {"none": [[1.0, 4.0], [9.0, 16.0]], "sum": 30.0, "mean": 7.5}
    for (sa, r), want in TABLE:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = F.mse_loss(x, zero, size_average=sa, reduce=r, reduction="sum")
            module = nn.MSELoss(sa, r, "sum")
            assert want is None or legacy_reduction(sa, r, "op") == want
        key = want or "sum"
        np.testing.assert_array_equal(got.numpy(), closed[key], err_msg=str((sa, r)))
        assert module.reduction == key
        np.testing.assert_array_equal(module(x, zero).numpy(), closed[key])


@pytest.mark.filterwarnings("ignore:.*size_average and reduce")
@pytest.mark.filterwarnings("ignore:kl_div. reduction='mean'")
@pytest.mark.parametrize("name", sorted(_cases(mg)))
def test_each_loss_and_module_takes_them(name):
    args, module, margs = _cases(mg)[name]
    fn, cls = getattr(F, name), getattr(nn, module)
    for (sa, r), want in TABLE:
        want = want or "mean"
        expected = _np(fn(*args, reduction=want))
        np.testing.assert_allclose(_np(fn(*args, size_average=sa, reduce=r)), expected,
                                   rtol=1e-12, err_msg=str((sa, r)))
        m = cls(*margs, size_average=sa, reduce=r)
        assert m.reduction == want
        np.testing.assert_allclose(_np(m(*args[:len(args) - len(margs)])), expected,
                                   rtol=1e-12, err_msg=str((sa, r)))


def test_the_warning_says_what_to_write_instead():
    x = mg.tensor([1.0, 2.0])
    with pytest.warns(UserWarning, match=r"mse_loss: size_average and reduce are deprecated"
                                         r".*reduction='sum' instead"):
        F.mse_loss(x, x, size_average=False)
    with pytest.warns(UserWarning, match=r"CrossEntropyLoss: .*deprecated.*reduction='none'"):
        nn.CrossEntropyLoss(reduce=False)
    with pytest.warns(UserWarning, match=r"MarginRankingLoss: .*reduction='mean'") as rec:
        nn.MarginRankingLoss(size_average=True)
    assert rec[0].filename == __file__               # points at the caller's line
    with warnings.catch_warnings():                  # not passed: no warning at all
        warnings.simplefilter("error")
        F.mse_loss(x, x, reduction="sum")
        nn.MSELoss()


def test_kl_div_legacy_skips_the_mean_warning():
    x, t = mg.tensor([[-1.0, -0.5]]), mg.tensor([[0.3, 0.7]])
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        F.kl_div(x, t, size_average=True)
    assert [str(w.message)[:6] for w in rec] == ["kl_div"] and "deprecated" in \
        str(rec[0].message)


def test_torch_positions():
    """Passed by position, as old code does: nll_loss(x, t, weight, size_average=False),
    poisson_nll_loss(x, t, log_input, full, size_average, eps, reduce)."""
    x, t = mg.tensor(X).log_softmax(1), mg.tensor(CLS)
    with pytest.warns(UserWarning):
        got = F.nll_loss(x, t, None, False)
    np.testing.assert_allclose(got.numpy(), F.nll_loss(x, t, reduction="sum").numpy())
    q = mg.tensor(Q)
    with pytest.warns(UserWarning):
        got = F.poisson_nll_loss(x, q, True, False, None, 1e-8, False)
    assert got.shape == (3, 4)
    with pytest.warns(UserWarning):
        assert nn.PoissonNLLLoss(True, False, False).reduction == "sum"


def test_a_reduction_in_their_place_is_refused():
    """F.mse_loss(x, y, "sum") once meant reduction; now that place is size_average's, and
    a string there (truthy: 'mean' in PyTorch, silently) is an error saying what to write."""
    x = mg.tensor([1.0])
    with pytest.raises(TypeError, match=r"mse_loss: size_average must be a bool or None, "
                                        r"got 'sum'; .*reduction='sum'"):
        F.mse_loss(x, x, "sum")
    with pytest.raises(TypeError, match=r"L1Loss: size_average .*reduction='none'"):
        nn.L1Loss("none")


def _torch_reduction(torch, sa, r):
    with warnings.catch_warnings(record=True) as rec:
        warnings.simplefilter("always")
        got = torch.nn.MSELoss(sa, r, "sum").reduction
    said = re.findall(r"reduction='(\w+)'", " ".join(str(w.message) for w in rec))
    return got, said


def test_the_table_and_warnings_match_torch(torch):
    for (sa, r), _ in TABLE:
        theirs, their_said = _torch_reduction(torch, sa, r)
        with warnings.catch_warnings(record=True) as rec:
            warnings.simplefilter("always")
            ours = nn.MSELoss(sa, r, "sum").reduction
        our_said = re.findall(r"reduction='(\w+)'", " ".join(str(w.message) for w in rec))
        assert (ours, our_said) == (theirs, their_said), (sa, r)
        assert all(w.category is UserWarning for w in rec)


@pytest.mark.filterwarnings("ignore:.*size_average and reduce")
@pytest.mark.filterwarnings("ignore:.*reduction.*'mean' divides the total loss")
@pytest.mark.parametrize("name", ["nll_loss", "cross_entropy", "binary_cross_entropy",
                                  "kl_div", "poisson_nll_loss", "multi_margin_loss",
                                  "triplet_margin_loss", "cosine_embedding_loss"])
def test_functions_and_modules_match_torch(torch, name):
    ours, theirs = _cases(mg), _cases(torch)
    args, module, margs = ours[name]
    targs = theirs[name][0]
    n = len(args) - len(margs)
    for (sa, r), _ in TABLE[1:]:
        got = _np(getattr(F, name)(*args, size_average=sa, reduce=r))
        want = getattr(torch.nn.functional, name)(*targs, size_average=sa, reduce=r)
        np.testing.assert_allclose(got, want.numpy(), rtol=1e-10, err_msg=str((sa, r)))
        m = getattr(nn, module)(*margs, size_average=sa, reduce=r)
        tm = getattr(torch.nn, module)(*margs, size_average=sa, reduce=r)
        assert m.reduction == tm.reduction
        np.testing.assert_allclose(_np(m(*args[:n])), tm(*targs[:n]).numpy(), rtol=1e-10)
