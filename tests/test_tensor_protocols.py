"""How a Tensor meets Python and NumPy: what it is made from (masked, matrix, big-endian
arrays; NumPy scalars in a list; numbers that do not fit), ==/in against other objects,
copy and pickle, and indices that PyTorch and NumPy read differently."""
import copy
import math
import pickle

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")    # np.matrix's own
def test_array_subclasses_become_plain_arrays_and_masked_ones_are_refused():
    with pytest.raises(TypeError, match=r"masked array.*a.filled"):
        mg.tensor(np.ma.array([1.0, 2.0, 3.0], mask=[0, 1, 0]))
    with pytest.raises(TypeError, match="masked array"):
        mg.as_tensor(np.ma.array([1.0]))
    m = mg.tensor(np.matrix([[1.0, 2.0], [3.0, 4.0]]))
    assert m[0].shape == (2,) and m.sum(0).shape == (2,)
    shared = np.matrix([[1.0, 2.0]])
    t = mg.from_numpy(shared)
    t[0, 0] = 9.0
    assert shared[0, 0] == 9.0 and type(t._data) is np.ndarray     # still its memory


def test_big_endian_arrays_become_native_or_are_refused_where_shared():
    a = np.array([1.0, 2.0], dtype=">f4")
    for t in (mg.tensor(a), mg.as_tensor(a), mg.Tensor(a)):
        assert t.dtype == mg.float32 and t.dtype.isnative
        np.testing.assert_array_equal(t.numpy(), [1.0, 2.0])
    x = mg.tensor(a, requires_grad=True)
    mg.nn.functional.linear(x[None], mg.ones(2, 2)).sum().backward()
    assert x.grad.dtype == mg.float32
    with pytest.raises(TypeError, match="byte order '>f4'"):
        mg.from_numpy(a)


def test_numpy_values_in_a_list_keep_their_dtype():
    assert mg.tensor([np.float64(0.1)]).dtype == mg.float64
    assert mg.tensor([np.int32(1), np.int32(2)]).dtype == mg.int32
    assert mg.tensor([np.float16(1), np.float16(2)]).dtype == mg.float16
    assert mg.tensor([np.array([1.0, 2.0])]).shape == (1, 2)
    assert mg.tensor([np.array([1.0, 2.0])]).dtype == mg.float64
    assert mg.tensor([1.0, 2.0]).dtype == mg.float32                  # Python's: default


@pytest.mark.parametrize("data, dtype", [([2 ** 40], mg.int32), ([float("inf")], mg.int64),
                                         ([float("nan")], mg.int32), ([300], np.uint8),
                                         ([-129], np.int8), (2.0 ** 63, mg.int64)])
def test_python_numbers_that_do_not_fit_an_integer_dtype_are_refused(data, dtype):
    with pytest.raises(ValueError, match="without overflow"):
        mg.tensor(data, dtype=dtype)


def test_numbers_that_fit_are_converted_as_pytorch():
    np.testing.assert_array_equal(mg.tensor([1.7, -1.7], dtype=mg.int64).numpy(), [1, -1])
    assert mg.tensor([2 ** 63 - 1], dtype=mg.int64).item() == 2 ** 63 - 1
    assert mg.tensor([255, 0], dtype=np.uint8).dtype == np.uint8
    assert mg.tensor(np.array([2 ** 40]), dtype=mg.int32).item() == 0   # arrays cast, as torch


def test_where_and_masked_fill_refuse_integers_their_dtype_cannot_hold():
    i8, mask = mg.tensor([1, 2], dtype=np.int8), mg.tensor([True, False])
    with pytest.raises(ValueError, match="1000 cannot be converted to int8"):
        mg.where(mask, i8, 1000)
    with pytest.raises(ValueError, match="1000 cannot be converted to int8"):
        mg.where(mask, 1000, i8)
    with pytest.raises(ValueError, match="cannot be converted to int8"):
        i8.masked_fill(mask, 1000)
    with pytest.raises(ValueError, match="cannot be converted to float16"):
        mg.zeros(2, dtype=mg.float16).masked_fill(mask, -1e9)
    np.testing.assert_array_equal(mg.where(mask, i8, 3).numpy(), [1, 3])
    assert mg.where(mask, i8, 3).dtype == np.int8
    np.testing.assert_array_equal(i8.masked_fill(mask, 2.5).numpy(), [2, 2])   # x's dtype
    assert mg.zeros(2).masked_fill(mask, float("-inf"))[0].item() == float("-inf")


def test_equality_with_other_objects_is_false_not_an_error():
    t = mg.tensor(1.0)
    assert (t == "auto") is False and (t != "auto") is True
    assert (t == None) is False and (t != None) is True                  # noqa: E711
    assert (t == object()) is False and (t == {}) is False
    assert t in ["a", 1.0] and ["x", t].index(t) == 1
    with pytest.raises(TypeError):
        t.eq("auto")                                        # the method still compares
    assert bool(t == 1.0) and bool(t.eq(mg.tensor(1.0)))


def test_in_searches_the_elements():
    t = mg.tensor([[1, 2], [3, 4]])
    assert 2 in t and 5 not in t and mg.tensor(3) in t
    with pytest.raises(TypeError, match="takes a number or a tensor"):
        "a" in t


def test_a_one_element_value_goes_into_a_single_element():
    t = mg.zeros(3)
    t[1] = mg.ones(1)
    m = mg.zeros(2, 2)
    m[0, 1] = mg.tensor([[5.0]])
    m[1] = mg.tensor([[1.0, 2.0]])
    np.testing.assert_array_equal(t.numpy(), [0, 1, 0])
    np.testing.assert_array_equal(m.numpy(), [[0, 5], [1, 2]])
    with pytest.raises(ValueError, match=r"shape \(2,\) cannot be assigned to the part of "
                                         r"shape \(\)"):
        m[0, 0] = mg.tensor([1.0, 2.0])


def test_unsigned_sums_are_int64():
    u = mg.tensor([[200, 100]], dtype=np.uint8)
    assert u.sum().dtype == mg.int64 and u.sum().item() == 300
    assert u.sum(0).dtype == mg.int64


def test_a_uint8_index_is_refused_as_ambiguous():
    t = mg.tensor([10, 20, 30])
    for index in (mg.from_numpy(np.array([1, 0, 1], dtype=np.uint8)),
                  np.array([1, 0, 1], dtype=np.uint8)):
        with pytest.raises(IndexError, match=r"uint8.*\.bool\(\) for a mask"):
            t[index]
        with pytest.raises(IndexError, match="uint8"):
            t[index] = 0
    np.testing.assert_array_equal(t[mg.tensor([True, False, True])].numpy(), [10, 30])


def test_pickle_and_copies():
    y = mg.tensor([1.0, 2.0], requires_grad=True) * 2           # inside a graph
    z = pickle.loads(pickle.dumps(y))
    assert z.is_leaf and z.requires_grad and z.grad is None
    np.testing.assert_array_equal(z.numpy(), [2.0, 4.0])
    with pytest.raises(RuntimeError, match="graph leaves"):
        copy.deepcopy(y)
    x = mg.tensor([1.0], requires_grad=True)
    x.register_hook(lambda g: g)
    (x * 3).sum().backward()
    x2 = pickle.loads(pickle.dumps(x))                          # hooks and grad left behind
    assert x2.grad is None and x2.requires_grad
    shallow = copy.copy(x)
    assert shallow.grad is None and np.shares_memory(shallow._data, x._data)
    deep = copy.deepcopy(x)
    assert deep.grad is not x.grad and deep.grad.item() == 3.0
    assert not np.shares_memory(deep._data, x._data)


def test_deepcopy_of_a_module_keeps_ties_and_leaves_grads():
    m = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    m[1].weight = m[0].weight
    m(mg.ones(1, 2)).sum().backward()
    c = copy.deepcopy(m)
    assert c[0].weight is c[1].weight and c[0].weight is not m[0].weight
    assert isinstance(c[0].weight, nn.Parameter) and c[0].weight.grad is None   # as PyTorch
    np.testing.assert_array_equal(c[0].weight.numpy(), m[0].weight.numpy())
    p = pickle.loads(pickle.dumps(m))
    assert p[0].weight is p[1].weight and isinstance(p[0].bias, nn.Parameter)


def test_deepcopy_keeps_views_of_one_tensor_sharing_memory_as_pytorch():
    base = mg.arange(6.0)
    b, v1, v2, vt = copy.deepcopy([base, base[:3], base[2:], base.view(2, 3).t()])
    v1.data[2] = 100.0                          # one element seen through all four copies
    assert v2[0].item() == b[2].item() == vt[2, 0].item() == 100.0
    assert base[2].item() == 2.0 and vt._data.strides == (4, 12)   # layout kept, as torch
    m = nn.Module()
    w = mg.zeros(4)
    m.a, m.b = nn.Parameter(w[:3]), nn.Parameter(w[1:])            # overlapping weights
    c = copy.deepcopy(m)
    c.a.data[1] = 5.0
    assert c.b[0].item() == 5.0 and m.b[0].item() == 0.0
    e = copy.deepcopy(mg.ones(1, 3).expand(4, 3))                # a broadcast view stays one
    with pytest.raises(ValueError, match="broadcast view"):
        e.add_(1)


def test_deepcopy_copies_a_grad_held_elsewhere_once():
    g = mg.ones(2)
    w = mg.zeros(2, requires_grad=True)
    w.grad = g
    w1, g1 = copy.deepcopy([w, g])
    g2, w2 = copy.deepcopy([g, w])                 # as PyTorch: one copy, in either order
    assert w1.grad is g1 and w2.grad is g2 and g1 is not g


def test_an_ellipsis_between_index_arrays_keeps_them_adjacent_as_pytorch():
    x = mg.arange(12.0).reshape(2, 3, 2)
    got = x[:, mg.tensor([0, 2]), ..., mg.tensor([1, 0])]       # the ... stands for no dim
    np.testing.assert_array_equal(got.numpy(), [[1.0, 4.0], [7.0, 10.0]])
    assert mg.zeros(3, 4, 1)[:, mg.tensor([0]), ..., mg.tensor([0, 0])].shape == (3, 2)
    assert x[mg.tensor([0, 1]), ..., mg.tensor([1, 0])].shape == (2, 3)   # ... a real dim
    t = mg.zeros(2, 3, 2)
    t[:, mg.tensor([0, 2]), ..., mg.tensor([1, 0])] = mg.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert t[0, 0, 1].item() == 1.0 and t[1, 2, 0].item() == 4.0
    torch = pytest.importorskip("torch")
    tx = torch.arange(12.0).reshape(2, 3, 2)
    np.testing.assert_array_equal(
        x[mg.tensor([[0], [1]]), ..., mg.tensor([1, 0])].numpy(),
        tx[torch.tensor([[0], [1]]), ..., torch.tensor([1, 0])].numpy())


def test_max_along_dim_0_of_a_0d_tensor_keeps_its_dtype_and_transpose_is_itself():
    for dtype in (mg.int32, mg.bool, np.uint8):
        t = mg.tensor(5, dtype=dtype)
        assert t.max(dim=0).values.dtype == dtype and t.min(0).values.dtype == dtype
    assert mg.tensor(1.0).transpose(0, 0).item() == 1.0
    with pytest.raises(TypeError, match="abs: not supported for a bool tensor"):
        mg.tensor([True]).abs()


def test_an_infinite_logit_makes_softmax_nan_as_pytorch():
    inf = math.inf
    with np.errstate(invalid="ignore"):
        assert np.isnan(mg.nn.functional.softmax(mg.tensor([inf, 1.0, 2.0]), 0).numpy()).all()
        assert np.isnan(mg.nn.functional.log_softmax(mg.tensor([inf, 1.0, -inf]), 0)
                        .numpy()).all()
    np.testing.assert_array_equal(mg.nn.functional.softmax(mg.tensor([-inf, -inf]), 0)
                                  .numpy(), [0.0, 0.0])            # all masked: zeros, kept


def test_to_another_tensor_takes_its_dtype():
    other = mg.zeros(1, dtype=mg.float64)
    assert mg.zeros(2).to(other).dtype == mg.float64
    assert nn.Linear(2, 2).to(other).weight.dtype == mg.float64


def test_a_list_mixing_arrays_and_lists_is_one_tensor():
    np.testing.assert_array_equal(mg.tensor([np.array([1, 2]), [3, 4]]).numpy(), [[1, 2], [3, 4]])
    assert mg.tensor([[1, 2], np.array([3, 4])]).shape == (2, 2)


def test_unsigned_dtypes_wrap_negative_numbers_as_pytorch():
    assert mg.tensor([-1], dtype=mg.uint8).tolist() == [255]
    assert mg.full((2,), -1, dtype=mg.uint8).tolist() == [255, 255]
    assert mg.zeros(2, dtype=mg.uint8).fill_(-2).tolist() == [254, 254]
    mask = mg.tensor([True, False])
    assert mg.zeros(2, dtype=mg.uint8).masked_fill(mask, -1).tolist() == [255, 0]
    assert mg.where(mask, mg.zeros(2, dtype=mg.uint8), -1).tolist() == [0, 255]
    with pytest.raises(ValueError, match="without overflow"):
        mg.tensor([-256], dtype=mg.uint8)
    with pytest.raises(ValueError, match="without overflow"):
        mg.tensor([2 ** 31 - 0.5], dtype=mg.int32)                 # as PyTorch: above max
    assert mg.tensor([-2.0 ** 63], dtype=mg.int64).item() == -2 ** 63


def test_integer_arguments_may_be_0d_integer_tensors():
    assert mg.ones(2, 2).tril(mg.tensor(1)).sum().item() == 4
    assert mg.nn.functional.one_hot(mg.tensor([0, 1]), mg.tensor(3)).shape == (2, 3)
    with pytest.raises(TypeError, match="diagonal must be an int"):
        mg.ones(2, 2).tril(mg.tensor(True))


class _Noted(mg.Tensor):
    pass


def test_a_users_tensor_subclass_pickles_and_deep_copies_with_its_attributes():
    t = _Noted([1.0, 2.0])
    t.note = "kept"
    for c in (pickle.loads(pickle.dumps(t)), copy.deepcopy(t)):
        assert type(c) is _Noted and c.note == "kept" and c.tolist() == [1.0, 2.0]


def test_integer_dtypes_are_attributes():
    assert (mg.uint8, mg.int8, mg.int16) == (np.dtype("uint8"), np.dtype("int8"),
                                            np.dtype("int16"))


def test_bools_and_masks_beside_an_ellipsis_count_their_dims():
    x = mg.arange(24.0).reshape(2, 3, 4)
    want = x.numpy()[[0, 1], :, [1, 0], True]                      # True adds a dim of 1
    np.testing.assert_array_equal(x[[0, 1], ..., [1, 0], True].numpy(), want)
    y = mg.arange(120.0).reshape(2, 3, 4, 5)
    m = np.zeros((2, 3), bool)
    m[0, 1] = m[1, 2] = True
    np.testing.assert_array_equal(y[mg.tensor(m), ..., [0, 1]].numpy(),
                                  y.numpy()[m, :, [0, 1]])


def test_bool_arguments_are_not_ints_and_tuples_compare():
    with pytest.raises(TypeError, match="diagonal must be an int"):
        mg.ones(2, 2).tril(True)
    with pytest.raises(TypeError, match="num_classes must be an int"):
        mg.nn.functional.one_hot(mg.tensor([0]), True)
    assert (mg.tensor([1, 2]) == (1, 2)).tolist() == [True, True]
    with pytest.raises(TypeError):
        mg.tensor([1, 2]).ne(None)                                  # as torch.ne
