"""F.embedding_bag and nn.EmbeddingBag (ops/embedding_bag.py, nn/embedding_bag.py) against
torch: sum, mean and max bags from offsets (with include_last_offset, empty bags) or a 2-D
input, per_sample_weights, padding_idx, max_norm; gradients to the table and the weights,
gradcheck and gradgradcheck in float64, the spy device, the module (init, repr, state dict,
from_pretrained) and errors. scale_grad_by_freq is checked by hand: torch 2.13's CPU kernel
divides some rows by another row's count (pytorch/pytorch#190063)."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from op_helpers import OpCase, check_vs_torch, check_gradcheck, check_spy_matches_cpu

IDS = np.array([1, 2, 4, 5, 4, 3, 2, 9])
BAGS = [
    dict(input=IDS, offsets=np.array([0, 4])),
    dict(input=IDS, offsets=np.array([0, 4, 4, 8])),                    # two empty bags
    dict(input=IDS, offsets=np.array([0, 3, 8]), include_last_offset=True),
    dict(input=IDS.reshape(2, 4)),
    dict(input=np.array([1, 2, 4, 2, 2, 2, 2, 9]), offsets=np.array([0, 4, 5]), padding_idx=2),
]


def _case(which, mode, weighted=False):
    kw = dict(BAGS[which])
    ids, offsets = kw.pop("input"), kw.pop("offsets", None)

    def call(Fn, lib, table, *weights):
        off = None if offsets is None else lib.tensor(offsets, device=table.device)
        return Fn.embedding_bag(lib.tensor(ids, device=table.device), table, off, mode=mode,
                                per_sample_weights=weights[0] if weights else None, **kw)

    def torch_fn(*xs):
        import torch
        return call(torch.nn.functional, torch, *xs)
    shapes = ((10, 3),) + ((ids.shape,) if weighted else ())
    return OpCase(f"embedding_bag_{mode}{'_weighted' * weighted}_bags{which}",
                  lambda *xs: call(F, mg, *xs), shapes, torch_fn=torch_fn)


CASES = [_case(i, mode) for i in range(len(BAGS)) for mode in ("sum", "mean", "max")] + \
    [_case(i, "sum", weighted=True) for i in range(len(BAGS))]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_as_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES[::3], ids=str)
def test_gradcheck(case):
    check_gradcheck(case, "cpu")


@pytest.mark.parametrize("case", CASES[1::2], ids=str)
def test_on_the_gpu_stand_in(case, spy):
    check_spy_matches_cpu(case, spy)


def test_max_takes_the_first_of_equals_as_torch():
    w = mg.tensor([[1.0, 2.0], [1.0, 2.0], [0.0, 3.0]], requires_grad=True)
    out = F.embedding_bag(mg.tensor([0, 1, 2]), w, mg.tensor([0]), mode="max")
    out.sum().backward()
    np.testing.assert_array_equal(out.numpy(), [[1.0, 3.0]])
    np.testing.assert_array_equal(w.grad.numpy(), [[1, 0], [0, 0], [0, 1]])


def test_scale_grad_by_freq_divides_by_each_rows_own_count():
    w = mg.zeros(10, 1, requires_grad=True)
    ids = mg.tensor([1, 2, 4, 2, 2, 2, 2, 9])          # row 2 five times, the rest once
    F.embedding_bag(ids, w, mg.tensor([0, 4, 5]), mode="sum",
                    scale_grad_by_freq=True).sum().backward()
    np.testing.assert_allclose(w.grad.numpy()[:, 0], [0, 1, 1, 0, 1, 0, 0, 0, 0, 1])
    w.grad = None
    F.embedding_bag(ids, w, mg.tensor([0, 4, 5]), mode="mean",
                    scale_grad_by_freq=True).sum().backward()
    # bags [1, 2, 4, 2], [2], [2, 2, 9]: row 2 gets (2/4 + 1 + 2/3)/5
    np.testing.assert_allclose(w.grad.numpy()[[1, 2, 4, 9], 0],
                               [1 / 4, (2 / 4 + 1 + 2 / 3) / 5, 1 / 4, 1 / 3])


def test_max_norm_renormalises_the_rows_used_as_torch():
    torch = pytest.importorskip("torch")
    table = np.random.default_rng(0).standard_normal((10, 3)) * 3
    a, b = mg.tensor(table), torch.tensor(table)
    out = F.embedding_bag(mg.tensor(IDS), a, mg.tensor([0, 4]), max_norm=1.0)
    ref = torch.nn.functional.embedding_bag(torch.tensor(IDS), b, torch.tensor([0, 4]),
                                            max_norm=1.0)
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-12)
    np.testing.assert_allclose(a.numpy(), b.numpy(), rtol=1e-12)


def test_module_as_torch():
    torch = pytest.importorskip("torch")
    kw = dict(max_norm=1.0, scale_grad_by_freq=True, mode="max", padding_idx=2,
              include_last_offset=True)
    assert repr(nn.EmbeddingBag(10, 3)) == repr(torch.nn.EmbeddingBag(10, 3))
    assert repr(nn.EmbeddingBag(10, 3, **{**kw, "mode": "sum"})) == repr(
        torch.nn.EmbeddingBag(10, 3, **{**kw, "mode": "sum"}))
    m = nn.EmbeddingBag(10, 3, mode="sum", padding_idx=-1)
    assert m.padding_idx == 9 and not m.weight.numpy()[9].any() and m.weight.numpy().std() > 0
    assert list(m.state_dict()) == ["weight"] and m.weight.shape == (10, 3)
    table = np.random.default_rng(1).standard_normal((10, 3))
    t = torch.nn.EmbeddingBag.from_pretrained(torch.tensor(table), mode="sum")
    p = nn.EmbeddingBag.from_pretrained(mg.tensor(table), mode="sum")
    assert not p.weight.requires_grad
    assert nn.EmbeddingBag.from_pretrained(table, freeze=False).weight.requires_grad
    ids, off, psw = IDS, np.array([0, 3]), np.linspace(0.5, 2, 8)
    np.testing.assert_allclose(p(mg.tensor(ids), mg.tensor(off), mg.tensor(psw)).numpy(),
                               t(torch.tensor(ids), torch.tensor(off),
                                 torch.tensor(psw)).numpy(), rtol=1e-12)


@pytest.mark.parametrize("mode", ["sum", "mean", "max"])
def test_an_empty_batch_gives_no_bags_as_torch(mode):
    # torch: a (0, L) input, or an empty 1-D one with no offsets, is 0 bags, (0, dim)
    w = mg.randn(10, 3, requires_grad=True)
    out = nn.EmbeddingBag(10, 3, mode=mode)(mg.zeros(0, 4, dtype=mg.int64))
    assert out.shape == (0, 3)
    none = mg.zeros(0, dtype=mg.int64)
    out = F.embedding_bag(none, w, none, mode=mode, padding_idx=1, max_norm=1.0)
    assert out.shape == (0, 3)
    out.sum().backward()
    assert not w.grad.numpy().any()


@pytest.mark.parametrize("call, error, words", [
    (lambda w: F.embedding_bag(mg.tensor(IDS), w, mg.tensor([0, 4]), mode="x"), ValueError,
     "mode has to be one of"),
    (lambda w: F.embedding_bag(mg.tensor(IDS), w), ValueError, "offsets has to be a 1D"),
    (lambda w: F.embedding_bag(mg.tensor(IDS.reshape(2, 4)), w, mg.tensor([0, 4])),
     ValueError, "if input is 2D, then offsets has to be None"),
    (lambda w: F.embedding_bag(mg.tensor(IDS.reshape(2, 2, 2)), w), ValueError,
     "input has to be 1D or 2D"),
    (lambda w: F.embedding_bag(mg.tensor(IDS), w, mg.tensor([1, 4])), ValueError,
     r"offsets\[0\] has to be 0"),
    (lambda w: F.embedding_bag(mg.tensor(IDS), w, mg.tensor([0, 9])), ValueError,
     r"offsets\[-1\] can not be greater"),
    (lambda w: F.embedding_bag(mg.tensor(IDS), w, mg.zeros(0, dtype=mg.int64)),
     ValueError, "only an empty input may have no bags"),
    (lambda w: F.embedding_bag(mg.tensor(IDS), w, mg.tensor([0, 5, 3])), ValueError,
     "must not decrease"),
    (lambda w: F.embedding_bag(mg.tensor(IDS), w, mg.tensor([0, 3, 6]),
                               include_last_offset=True), ValueError, "the last bag's end"),
    (lambda w: F.embedding_bag(mg.tensor(IDS), w, mg.tensor([0, 4]), mode="max",
                               per_sample_weights=mg.ones(8)), NotImplementedError,
     "only supported for mode='sum'"),
    (lambda w: F.embedding_bag(mg.tensor(IDS), w, mg.tensor([0, 4]), mode="sum",
                               per_sample_weights=mg.ones(7)), ValueError, "same shape"),
    (lambda w: F.embedding_bag(mg.tensor(IDS), w, mg.tensor([0, 4]), mode="sum",
                               per_sample_weights=mg.ones(8, dtype="float64")), TypeError,
     "weight's dtype"),
    (lambda w: F.embedding_bag(mg.tensor([1, 11]), w, mg.tensor([0])), IndexError,
     "index 11 is out of range"),
    (lambda w: F.embedding_bag(mg.tensor(IDS).float(), w, mg.tensor([0, 4])), TypeError,
     "input must be an integer"),
    (lambda w: F.embedding_bag(mg.tensor(IDS), w, mg.tensor([0.0, 4.0])), TypeError,
     "offsets must be an integer"),
    (lambda w: F.embedding_bag(mg.tensor(IDS), w, mg.tensor([0, 4]), padding_idx=10),
     ValueError, "padding_idx must be within"),
    (lambda w: F.embedding_bag(mg.tensor(IDS), w, mg.tensor([0, 4]), mode="max",
                               scale_grad_by_freq=True), ValueError, "max mode does not"),
    (lambda w: F.embedding_bag(mg.tensor(IDS), w[0], mg.tensor([0, 4])), ValueError,
     "weight has to be a 2D"),
    (lambda w: nn.EmbeddingBag(10, 3, mode="avg"), ValueError, "mode has to be one of"),
])
def test_errors(call, error, words):
    with pytest.raises(error, match=words):
        call(mg.randn(10, 3))
