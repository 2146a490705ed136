"""PyTorch's legacy tensor types, mg.FloatTensor, mg.LongTensor ... (minigrad/legacy_types.py):
built from values or sizes, an instance check by dtype and device, a target of t.type().
The Annotated Transformer's greedy decoding starts from `torch.LongTensor([[0, 1, ...]])`."""
import numpy as np
import pytest

import minigrad as mg

_NAMES = ["FloatTensor", "DoubleTensor", "HalfTensor", "LongTensor", "IntTensor",
          "ShortTensor", "CharTensor", "ByteTensor", "BoolTensor"]


def test_each_type_builds_its_dtype_from_values_sizes_or_nothing():
    assert mg.LongTensor([[0, 1, 2]]).dtype == mg.int64
    assert mg.LongTensor([[0, 1, 2]]).tolist() == [[0, 1, 2]]
    assert mg.LongTensor([1.7, -1.7]).tolist() == [1, -1]             # truncated, as torch
    assert mg.FloatTensor([[0, 0.5]]).dtype == mg.float32
    assert mg.FloatTensor((2, 3)).tolist() == [2.0, 3.0]               # a tuple is values
    assert mg.FloatTensor(2, 3).shape == (2, 3) and mg.LongTensor().shape == (0,)
    assert mg.DoubleTensor(np.ones(2, np.float32)).dtype == mg.float64
    assert mg.BoolTensor([1, 0]).tolist() == [True, False]
    assert [getattr(mg, n)([1]).dtype for n in _NAMES] == [
        mg.float32, mg.float64, mg.float16, mg.int64, mg.int32, mg.int16, mg.int8, mg.uint8,
        mg.bool]


def test_a_tensor_of_its_dtype_is_an_alias_and_an_instance():
    t = mg.ones(2)
    alias = mg.FloatTensor(t)
    alias[0] = 5.0
    assert t.tolist() == [5.0, 1.0]
    assert isinstance(t, mg.FloatTensor) and not isinstance(t, mg.LongTensor)
    assert isinstance(t.long(), mg.LongTensor) and not isinstance(t, mg.cuda.FloatTensor)
    assert not isinstance(t.numpy(), mg.FloatTensor) and not mg.FloatTensor.is_cuda


def test_t_type_converts_to_a_legacy_type():
    t = mg.tensor([1.5, 2.5])
    assert t.type(mg.LongTensor).tolist() == [1, 2] and t.type(mg.LongTensor).dtype == mg.int64
    assert t.type(mg.FloatTensor) is t
    assert repr(mg.LongTensor) == "<class 'minigrad.LongTensor'>"
    assert repr(mg.cuda.LongTensor) == "<class 'minigrad.cuda.LongTensor'>"


def test_what_the_types_refuse():
    with pytest.raises(TypeError, match="expected a tensor of dtype float32.*got int64"):
        mg.FloatTensor(mg.ones(2).long())
    with pytest.raises(TypeError, match=r"expected sizes.*got \(float\)"):
        mg.FloatTensor(2.5)
    with pytest.raises(TypeError, match=r"got \(int, float\)"):
        mg.FloatTensor(2, 3.0)
    with pytest.raises(RuntimeError, match="use minigrad.cuda.FloatTensor there"):
        mg.FloatTensor([1.0], device="cuda")


def test_as_torch(torch):
    for name in _NAMES:
        mine, theirs = getattr(mg, name)([[1, 0], [3, 2]]), getattr(torch, name)([[1, 0], [3, 2]])
        assert str(mine.dtype) == str(theirs.dtype).replace("torch.", "")
        assert mine.tolist() == theirs.tolist()
        assert isinstance(mine, getattr(mg, name)) == isinstance(theirs, getattr(torch, name))
    assert mg.FloatTensor(2, 3).shape == tuple(torch.FloatTensor(2, 3).shape)
    assert mg.FloatTensor((2, 3)).tolist() == torch.FloatTensor((2, 3)).tolist()
    assert mg.LongTensor([1.7, -1.7]).tolist() == torch.LongTensor([1.7, -1.7]).tolist()
    assert mg.ones(2).type(mg.LongTensor).tolist() == \
        torch.ones(2).type(torch.LongTensor).tolist()
