"""index_select, masked_select, roll, unflatten and F.pad (all composed of indexing, slicing
and cat, so their gradients are indexing's), nn.Flatten/Unflatten, and the tensor
factories type_as and new_zeros/new_ones/new_full/new_tensor. Each differentiable one
through the op suite (vs torch, float64 gradcheck with a NumPy forward, double backward,
the spy device), then edge values (repeated indices, negative dims, empty tensors, crops)
and errors."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import nn
from op_helpers import (OpCase, check_vs_torch, check_gradcheck,
                        check_double_backward_vs_torch, check_on_spy)

import spy_backend

_IDX = np.array([2, 0, 2])                      # repeated: the gradients of row 2 add up
_MASK = np.array([True, False, True])
_MASK_COL = np.array([[True], [False]])         # (2, 1) against (1, 3): both grow


def _t(a):
    import torch
    return torch.from_numpy(a)


def _np_pad(a, pad, value=0.0):
    """F.pad in NumPy: pairs from the last dim backwards, a negative amount crops."""
    for i in range(len(pad) // 2):
        d, (lo, hi) = a.ndim - 1 - i, pad[2 * i:2 * i + 2]
        a = np.moveaxis(np.moveaxis(a, d, 0)[max(-lo, 0):a.shape[d] - max(-hi, 0)], 0, d)
        width = [(0, 0)] * a.ndim
        width[d] = (max(lo, 0), max(hi, 0))
        a = np.pad(a, width, constant_values=value)
    return a


def _torch_pad(pad, **kw):
    def fn(x):
        import torch
        return torch.nn.functional.pad(x, pad, **kw)
    return fn


def _torch_module(name, *args):
    def fn(x):
        import torch
        return getattr(torch.nn, name)(*args)(x)
    return fn


def _np_masked_select(mask):
    def fn(a):
        a, m = np.broadcast_arrays(a, mask)
        return a[m]
    return fn


CASES = [
    OpCase("index_select", lambda x: x.index_select(0, mg.tensor(_IDX, device=x.device)),
           ((3, 4),), torch_fn=lambda x: x.index_select(0, _t(_IDX)), np_fn=lambda a: a[_IDX]),
    OpCase("index_select_neg_dim", lambda x: mg.index_select(x, -1, _IDX.astype(np.int32)),
           ((2, 3),), torch_fn=lambda x: x.index_select(-1, _t(_IDX.astype(np.int32))),
           np_fn=lambda a: a[:, _IDX]),
    OpCase("index_select_0d_index",
           lambda x: x.index_select(1, mg.tensor(1, device=x.device)), ((2, 3, 2),),
           torch_fn=lambda x: x.index_select(1, _t(np.array(1))), np_fn=lambda a: a[:, [1]]),
    OpCase("masked_select", lambda x: x.masked_select(mg.tensor(_MASK, device=x.device)),
           ((2, 3),), torch_fn=lambda x: x.masked_select(_t(_MASK)),
           np_fn=_np_masked_select(_MASK)),
    OpCase("masked_select_bcast", lambda x: x.masked_select(_MASK_COL), ((1, 3),),
           torch_fn=lambda x: x.masked_select(_t(_MASK_COL)),
           np_fn=_np_masked_select(_MASK_COL)),
    OpCase("roll_flat", lambda x: x.roll(2), ((2, 3),), np_fn=lambda a: np.roll(a, 2)),
    OpCase("roll_dims", lambda x: x.roll((1, -4), (0, -1)), ((2, 3, 2),),
           np_fn=lambda a: np.roll(a, (1, -4), (0, -1))),
    OpCase("roll_same_dim_twice", lambda x: mg.roll(x, (1, 1), (1, 1)), ((2, 3),),
           torch_fn=lambda x: x.roll((1, 1), (1, 1)), np_fn=lambda a: np.roll(a, 2, 1)),
    OpCase("roll_0d", lambda x: x.roll(3), ((),), np_fn=lambda a: a),
    OpCase("unflatten", lambda x: x.unflatten(1, (2, -1)), ((3, 4),),
           np_fn=lambda a: a.reshape(3, 2, 2)),
    OpCase("unflatten_neg_dim", lambda x: mg.unflatten(x, -2, [1, 3, 1]), ((2, 3, 2),),
           torch_fn=lambda x: x.unflatten(-2, (1, 3, 1)),
           np_fn=lambda a: a.reshape(2, 1, 3, 1, 2)),
    OpCase("pad_last", lambda x: F.pad(x, (1, 2)), ((2, 3),), torch_fn=_torch_pad((1, 2)),
           np_fn=lambda a: _np_pad(a, (1, 2))),
    OpCase("pad_two_dims_value", lambda x: F.pad(x, (1, 0, 2, 1), value=0.5), ((2, 3),),
           torch_fn=_torch_pad((1, 0, 2, 1), value=0.5),
           np_fn=lambda a: _np_pad(a, (1, 0, 2, 1), 0.5)),
    OpCase("pad_crop", lambda x: F.pad(x, (-1, 1, 0, -1)), ((2, 3, 4),),
           torch_fn=_torch_pad((-1, 1, 0, -1)), np_fn=lambda a: _np_pad(a, (-1, 1, 0, -1))),
    OpCase("pad_all_dims", lambda x: F.pad(x, (1, 1, 0, 2, 1, 0), "constant", -1.0),
           ((2, 2, 2),), torch_fn=_torch_pad((1, 1, 0, 2, 1, 0), mode="constant", value=-1.0),
           np_fn=lambda a: _np_pad(a, (1, 1, 0, 2, 1, 0), -1.0)),
    OpCase("Flatten", lambda x: nn.Flatten()(x), ((2, 3, 4),), torch_fn=_torch_module("Flatten"),
           np_fn=lambda a: a.reshape(2, 12)),
    OpCase("Flatten_dims", lambda x: nn.Flatten(0, -2)(x), ((2, 3, 4),),
           torch_fn=_torch_module("Flatten", 0, -2), np_fn=lambda a: a.reshape(6, 4)),
    OpCase("Unflatten", lambda x: nn.Unflatten(1, (2, 2))(x), ((3, 4),),
           torch_fn=_torch_module("Unflatten", 1, (2, 2)), np_fn=lambda a: a.reshape(3, 2, 2)),
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
    check_on_spy(case, spy)


def test_factories_on_the_gpu_stand_in(spy):
    x = mg.ones(2, 3, device=spy, requires_grad=True)
    made = [x.new_zeros(2), x.new_ones((1, 2)), x.new_full((3,), 2.5), x.new_tensor([1, 2]),
            mg.ones(2).type_as(x), x.index_select(0, mg.tensor([1], device=spy))]
    for t in made:
        assert t.device == spy and isinstance(t._data, spy_backend.SpyArray), repr(t)


# ---- edge values ----------------------------------------------------------------------------
def test_index_select_repeats_add_up_and_takes_0d_and_empty(device):
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0], [5.0, 6.0]], device=device, requires_grad=True)
    y = x.index_select(0, [2, 0, 2, 2])
    assert y.numpy().tolist() == [[5, 6], [1, 2], [5, 6], [5, 6]]
    y.sum().backward()
    assert x.grad.numpy().tolist() == [[1, 1], [0, 0], [3, 3]]
    assert x.index_select(1, mg.tensor([], dtype="int64")).shape == (3, 0)
    s = mg.tensor(5.0, device=device, requires_grad=True)
    for index in (mg.tensor([0]), mg.tensor(0)):      # a 0-d input keeps its 0 dims
        out = s.index_select(0, index.to(device))
        assert out.shape == () and out.item() == 5.0
    out.backward()
    assert s.grad.item() == 1.0
    with mg.no_grad():                                # a copy of the 0-d value, not a view
        out += 1
    assert s.item() == 5.0


def test_masked_select_broadcasts_both_ways_and_gradients_sum_back(device):
    x = mg.tensor([[1.0, 2.0, 3.0]], device=device, requires_grad=True)
    y = x.masked_select(mg.tensor([[True], [True]], device=device))
    assert y.numpy().tolist() == [1, 2, 3, 1, 2, 3]
    y.sum().backward()
    assert x.grad.numpy().tolist() == [[2, 2, 2]]
    s = mg.tensor(2.0, device=device)
    assert s.masked_select(mg.tensor(True, device=device)).numpy().tolist() == [2.0]
    assert s.masked_select(mg.tensor([True, False, True])).numpy().tolist() == [2.0, 2.0]
    assert mg.masked_select(mg.zeros(0, 3), mg.tensor(_MASK)).shape == (0,)


def test_roll_is_a_copy_and_handles_empty_and_0d(device):
    x = mg.tensor([1.0, 2.0, 3.0], device=device)
    for y in (x.roll(0), x.roll(3), x.roll(1)):
        with mg.no_grad():
            y += 10
    assert x.numpy().tolist() == [1.0, 2.0, 3.0]
    assert x.roll(-1).numpy().tolist() == [2.0, 3.0, 1.0]
    assert x.roll((1,)).numpy().tolist() == [3.0, 1.0, 2.0]      # one shift, no dims
    assert mg.zeros(0, 3, device=device).roll(1, 0).shape == (0, 3)
    assert mg.tensor(4.0, device=device).roll(2).item() == 4.0


def test_unflatten_infers_and_handles_empty(device):
    x = mg.zeros(2, 0, device=device)
    assert x.unflatten(1, (2, -1)).shape == (2, 2, 0)
    assert mg.ones(2, 6, device=device).unflatten(-1, [3, -1]).shape == (2, 3, 2)
    assert mg.ones(2, 6, device=device).unflatten(1, (6,)).shape == (2, 6)


def test_pad_values_crops_and_dtypes_as_torch(device):
    x = mg.tensor([[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]], device=device)
    assert F.pad(x, (-3, 1)).numpy().tolist() == [[0.0], [0.0]]          # crop to 0, pad 1
    assert F.pad(x, (-1, -2)).shape == (2, 0)
    assert F.pad(x, (1, 2), value=7).numpy().tolist() == [[7, 0, 1, 2, 7, 7],
                                                          [7, 3, 4, 5, 7, 7]]
    i = F.pad(x.long(), (1, 0), value=7.6)                       # the value takes the dtype
    assert i.dtype == mg.int64 and i.numpy()[:, 0].tolist() == [7, 7]
    b = F.pad(x > 2, (0, 1), value=True)
    assert b.dtype == mg.bool and b.numpy()[:, -1].tolist() == [True, True]
    for same in (F.pad(x, ()), F.pad(x, (0, 0)), F.pad(x, (-1, 0))):     # copies, not views
        with mg.no_grad():
            same += 1
    assert x.numpy().tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]]
    assert F.pad(mg.tensor(1.0, device=device), ()).item() == 1.0


def test_type_as_and_new_factories_as_torch(device):
    x = mg.tensor([[1.5, 2.5]], dtype="float64", device=device, requires_grad=True)
    i = mg.tensor([1, 2], device=device)
    assert i.type_as(x).dtype == mg.float64 and x.type_as(i).numpy().tolist() == [[1, 2]]
    for t, shape, value in [(x.new_zeros(2, 3), (2, 3), 0.0), (x.new_zeros((2,)), (2,), 0.0),
                            (x.new_ones([]), (), 1.0), (x.new_full((1, 2), 3.0), (1, 2), 3.0)]:
        assert t.shape == shape and t.dtype == x.dtype and t.device == device
        assert not t.requires_grad and (t.numpy() == value).all()
    assert i.new_full((2,), 3.7).numpy().tolist() == [3, 3]           # int64: truncated
    assert i.new_tensor([1.5, 2.0]).numpy().tolist() == [1, 2]
    n = x.new_tensor([1, 2])
    assert n.dtype == mg.float64 and not n.requires_grad
    copy = x.new_tensor(x)                              # a copy, out of the graph
    with mg.no_grad():
        copy += 1
    assert not copy.requires_grad and x.numpy().tolist() == [[1.5, 2.5]]


def test_flatten_unflatten_modules():
    f, u = nn.Flatten(), nn.Unflatten(1, (2, 5))
    assert repr(f) == "Flatten(start_dim=1, end_dim=-1)"
    assert repr(u) == "Unflatten(dim=1, unflattened_size=(2, 5))"
    assert repr(nn.Flatten(0, 2)) == "Flatten(start_dim=0, end_dim=2)"
    x = mg.randn(4, 10)
    assert u(x).shape == (4, 2, 5) and (f(u(x)) == x).all()
    assert not list(f.parameters()) and not list(u.parameters())
    with pytest.raises(TypeError, match="Unflatten: unflattened_size must be a tuple of ints"):
        nn.Unflatten(1, (2, 2.5))
    with pytest.raises(TypeError, match="Unflatten: dim must be an int"):
        nn.Unflatten("features", (2, 5))


def test_flatten_unflatten_reprs_are_torchs():
    torch = pytest.importorskip("torch")
    for mine, theirs in [(nn.Flatten(), torch.nn.Flatten()),
                         (nn.Flatten(0, -2), torch.nn.Flatten(0, -2)),
                         (nn.Unflatten(-1, (2, 5)), torch.nn.Unflatten(-1, (2, 5)))]:
        assert repr(mine) == repr(theirs)


@pytest.mark.parametrize("call,exc,match", [
    (lambda: mg.ones(2, 3).index_select(1, [3]), IndexError,
     r"index_select: index values must lie in \[0, 3\).*\(2, 3\)"),
    (lambda: mg.ones(2, 3).index_select(1, [-1]), IndexError, r"must lie in \[0, 3\)"),
    (lambda: mg.ones(2, 3).index_select(1, [[0]]), IndexError,
     r"index_select: index must be a vector.*\(1, 1\)"),
    (lambda: mg.ones(2, 3).index_select(1, mg.tensor([0.0])), TypeError,
     "index_select: index must be a tensor of integers.*float32"),
    (lambda: mg.ones(2, 3).index_select(2, [0]), IndexError, "index_select: dim 2 out of range"),
    (lambda: mg.tensor(1.0).index_select(0, [0, 0]), IndexError, "takes one index"),
    (lambda: mg.ones(2, 3).masked_select(mg.tensor([1, 0, 1])), TypeError,
     "masked_select: mask must be a bool tensor, got int64"),
    (lambda: mg.ones(2, 3).masked_select(mg.tensor([True, False])), ValueError,
     r"masked_select: mask of shape \(2,\) and tensor of shape \(2, 3\) do not broadcast"),
    (lambda: mg.ones(2, 3).roll((1, 2)), ValueError, "roll: shifts and dims must align"),
    (lambda: mg.ones(2, 3).roll((1, 2), (0,)), ValueError, "roll: shifts and dims must align"),
    (lambda: mg.ones(2, 3).roll([], []), ValueError, "roll: shifts and dims must align"),
    (lambda: mg.ones(2, 3).roll(1.5), TypeError, "roll: shifts and dims must be ints"),
    (lambda: mg.ones(2, 3).roll(1, 2), IndexError, "roll: dim 2 out of range"),
    (lambda: mg.tensor(1.0).roll(1, 0), IndexError, "roll: a 0-d tensor has no dim 0"),
    (lambda: mg.ones(2, 3).unflatten(1, (2, 2)), ValueError,
     r"unflatten: sizes \(2, 2\) do not multiply up to the size of dim 1 \(3\)"),
    (lambda: mg.ones(2, 3).unflatten(1, (-1, -1)), ValueError, "one -1 at most"),
    (lambda: mg.ones(2, 3).unflatten(1, ()), ValueError, "unflatten: sizes"),
    (lambda: mg.ones(2, 0).unflatten(1, (0, -1)), ValueError, "not beside a 0"),
    (lambda: mg.ones(2, 3).unflatten(1, 3), TypeError, "unflatten: sizes must be a tuple"),
    (lambda: mg.tensor(1.0).unflatten(0, (1,)), IndexError, "unflatten: a 0-d tensor"),
    (lambda: F.pad(mg.ones(2, 3), (1,)), ValueError, r"pad: pad must hold \(before, after\) "
                                                     r"pairs.*1 values \(1,\)"),
    (lambda: F.pad(mg.ones(2, 3), (1,) * 6), ValueError, r"one pair per dim.*\(2, 3\)"),
    (lambda: F.pad(mg.ones(2, 3), (-2, -2)), ValueError,
     r"pad: dim 1 of size 3 cropped by \(-2, -2\) would have a negative size"),
    (lambda: F.pad(mg.ones(2, 3), (1.5, 1)), TypeError, "pad: pad must be a tuple of ints"),
    (lambda: F.pad(mg.ones(2), (1, 1), mode="reflect"), NotImplementedError,
     "pad: mode 'reflect' pads the last 1, 2 or 3 dims of an input with 1 or 2 dims more"),
    (lambda: F.pad(mg.ones(2, 3), (1, 1), mode="foo"), NotImplementedError,
     "pad: mode 'foo' is not a padding mode"),
])
def test_bad_arguments_are_named(call, exc, match):
    with pytest.raises(exc, match=match):
        call()
