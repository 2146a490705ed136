"""What a PyTorch user's everyday lines do with a Tensor: f-strings, abs(), `== None`,
range(t), size(dim), assigning .grad, making a tensor from Python values (big integers,
ragged lists, strings, lists of tensors), full/randint/arange's dtype and range rules, and
PyTorch's device and dtype spellings. Each case states PyTorch's answer."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


def test_a_one_element_tensor_formats_as_its_number():
    loss = mg.tensor(1.23456)
    assert f"{loss:.3f}" == "1.235" and f"iter 3: {loss:.1e}" == "iter 3: 1.2e+00"
    for several in (mg.ones(2), mg.ones(1)):               # not 0-d: no spec applies
        with pytest.raises(TypeError):
            f"{several:.3f}"
    assert abs(mg.tensor([-1.0, 2.0])).tolist() == [1.0, 2.0] and +loss is loss


def test_an_empty_tensor_names_its_dtype_unless_float32():
    assert repr(mg.zeros(0, dtype=mg.int64)) == "tensor([], dtype=int64)"
    assert repr(mg.zeros(0)) == "tensor([])" and repr(mg.tensor([1, 2])) == "tensor([1, 2])"


def test_none_compares_unequal_and_only_integers_and_bools_index():
    t = mg.ones(2)
    assert (t == None) is False and (t != None) is True    # noqa: E711 (the habit under test)
    assert list(range(mg.tensor(3))) == [0, 1, 2] and [10, 20][mg.tensor(True)] == 20
    with pytest.raises(TypeError, match="only an integer tensor of one element can be an "
                                        "index, got dtype float32"):
        range(mg.tensor(2.9))                              # was truncated to range(2)


def test_size_of_a_dim_out_of_range_names_the_valid_ones():
    assert mg.ones(2, 3).size(-1) == 3
    with pytest.raises(IndexError, match=r"dim 5 is out of range for a tensor of 2 dims "
                                         r"\(valid: -2 .. 1\)"):
        mg.ones(2, 3).size(5)
    with pytest.raises(IndexError, match="0 dims"):
        mg.tensor(1.0).size(0)


def test_an_assigned_grad_must_fit_its_tensor():
    """PyTorch refuses a .grad of another shape, dtype or device when it is set; it was
    accepted here, to fail later (a shape) or silently upcast the next backward's sum."""
    x = mg.zeros(2, requires_grad=True)
    for g, error, words in ((mg.zeros(5), RuntimeError, r"shape \(5,\), but the tensor's is "
                                                        r"\(2,\)"),
                            (mg.zeros(2, dtype=mg.float64), RuntimeError,
                             "dtype float64, but the tensor's is float32"),
                            (np.zeros(2), TypeError, "a Tensor or None, got ndarray")):
        with pytest.raises(error, match=words):
            x.grad = g
    x.grad = mg.ones(2)
    (x * 2).sum().backward()
    assert x.grad.tolist() == [3.0, 3.0] and x.grad.dtype == mg.float32
    x.grad = None


@pytest.mark.parametrize("data, error, words", [
    ([2 ** 63], OverflowError, "beyond int64's range"),          # wrapped to -2**63
    ((2 ** 63,), OverflowError, "beyond int64's range"),         # a tuple too
    ([2 ** 64 - 1], OverflowError, "beyond int64's range"),      # wrapped to -1
    (2 ** 70, OverflowError, "beyond int64's range"),            # an object tensor
    ([[1, 2], [3]], ValueError, "nested lists must be rectangular"),
    ([1, None], TypeError, "cannot make a tensor of object values"),
    (["a"], TypeError, "cannot make a tensor of <U1 values"),
    (np.array(["x"]), TypeError, "cannot make a tensor of <U1 values"),
])
def test_values_a_tensor_cannot_hold_are_refused(data, error, words):
    with pytest.raises(error, match=words):
        mg.tensor(data)


def test_complex_values_are_refused_wherever_they_enter():
    """minigrad's tensors are real: complex values used to be taken by mg.tensor (exp() then
    dropped the imaginary part), and dropped silently by `x + complex_array`,
    new_tensor([1j]) and `x[0] = np.array(1j)`."""
    x = mg.ones(2)
    entries = [lambda: mg.tensor([1j]), lambda: mg.as_tensor(np.ones(2, np.complex64)),
               lambda: mg.Tensor(np.ones(2, np.complex64)), lambda: x + np.array([1j, 2j]),
               lambda: x.new_tensor([1j]), lambda: x.__setitem__(0, np.array(1j)),
               lambda: x.__setitem__(slice(None), [1j, 2.0]),
               lambda: x.add_(np.array([1j, 1j]))]
    for make in entries:
        with pytest.raises(TypeError, match="complex.*minigrad's tensors are real"):
            make()
    for fill in (lambda: mg.full((2,), np.complex64(1)), lambda: x.fill_(np.complex64(1j))):
        with pytest.raises(TypeError, match="is complex; minigrad's tensors are real"):
            fill()
    assert x.tolist() == [1.0, 1.0]                                    # nothing written


def test_the_edges_of_int64_and_lists_of_tensors_take_pytorchs_dtypes():
    assert mg.tensor([-2 ** 63, 2 ** 63 - 1]).tolist() == [-2 ** 63, 2 ** 63 - 1]
    assert mg.tensor(2 ** 70, dtype=mg.float32).item() == float(2 ** 70)   # as a float: fine
    for items, dtype in (([mg.tensor(1.0), 2.0], mg.float32),            # was float64
                         ([mg.tensor(1.0), mg.tensor(2)], mg.float32),   # was float64
                         ([mg.tensor(1.0, dtype=mg.float64), 2.0], mg.float64),
                         ([mg.tensor(1), 2], mg.int64), ([mg.tensor(True), False], mg.bool)):
        assert mg.tensor(items).dtype == dtype, items


def test_full_randint_and_arange_follow_pytorchs_rules():
    assert mg.full((2,), np.int32(2)).dtype == mg.int64                # was float32
    assert mg.full((2,), np.bool_(True)).dtype == mg.float32         # PyTorch's answer too
    with pytest.raises(ValueError, match=r"\[0, 1099511627776\) does not fit int32"):
        mg.randint(0, 2 ** 40, (3,), dtype=mg.int32)                   # wrapped silently
    with pytest.raises(ValueError, match="needs low < high"):
        mg.randint(5, 5, (3,))
    assert mg.randint(2 ** 31 - 3, 2 ** 31, (5,), dtype=mg.int32).min().item() >= 2 ** 31 - 3
    with pytest.raises(ValueError, match="does not fit int32"):
        mg.randint(-2 ** 31 - 1, 0, (3,), dtype=mg.int32)              # below the lowest
    with pytest.raises(ValueError, match="a step of -1 never gets from 0 to 5"):
        mg.arange(0, 5, -1)                                            # was empty
    assert mg.arange(5, 0, -2).tolist() == [5, 3, 1]
    with pytest.raises(TypeError, match=r"sizes must be integers, got shape \(True,\)"):
        mg.zeros(True)                                                 # was shape (1,)


def test_pytorchs_device_and_dtype_spellings():
    assert mg.ones(2).to("cpu:0").device == "cpu"
    torch = pytest.importorskip("torch")
    assert mg.ones(2).to(torch.float64).dtype == mg.float64
    assert mg.zeros(2, dtype=torch.int64).dtype == mg.int64
    assert nn.Linear(2, 2).to(torch.float64).weight.dtype == mg.float64


def test_an_assigned_grad_must_be_on_the_tensors_device(spy):
    x = mg.zeros(2, requires_grad=True)
    with pytest.raises(RuntimeError, match="assigned grad has device spy, but the tensor's is "
                                           "cpu"):
        x.grad = mg.zeros(2, device=spy)


@pytest.mark.parametrize("dtype", [np.complex64, object, str, np.longdouble, np.void,
                                   np.dtype(">f4"), np.dtype("datetime64[D]")])
def test_numpy_dtypes_no_tensor_has_are_refused_where_a_dtype_is_taken(dtype):
    """np.dtype took them all: mg.zeros(2, dtype=object) made an object tensor, .to('>f4')
    a big-endian one, .to(np.complex64) a complex one, which ops then got wrong."""
    for make in (lambda: mg.tensor([1, 2], dtype=dtype), lambda: mg.zeros(2, dtype=dtype),
                 lambda: mg.ones(2).to(dtype), lambda: mg.ones(2).to(dtype=dtype),
                 lambda: mg.full((2,), 1, dtype=dtype), lambda: mg.ones(2).sum(dtype=dtype)):
        with pytest.raises(TypeError, match="cannot be a tensor's: tensors are bool, "
                                            "integer or floating-point"):
            make()
    assert mg.ones(2).to(np.float64).dtype == mg.float64 and mg.zeros(1, dtype=float).dtype \
        == mg.float64                                       # what NumPy spells, still taken


def test_long_double_values_are_refused_as_pytorch_does():
    """A float128 array became a float128 tensor (PyTorch refuses it), and `int tensor +
    float128 array` computed in float128."""
    for data in (np.ones(2, np.longdouble), np.longdouble(1.5), [np.longdouble(1.5)],
                 [mg.tensor(1.0), np.longdouble(1.5)]):
        for make in (mg.tensor, mg.as_tensor):
            with pytest.raises(TypeError, match="float128 values .NumPy's long double"):
                make(data)
    with pytest.raises(TypeError, match="long double"):
        mg.tensor([1, 2]) + np.ones(2, np.longdouble)


def test_a_list_of_arrays_and_tensors_takes_the_dtype_that_holds_them_all():
    """int8 with uint8 took int8 (the larger itemsize, the first of equals): 200 became -56.
    PyTorch gives int16."""
    t = mg.tensor([np.array([1], np.int8), np.array([200], np.uint8)])
    assert t.dtype == mg.int16 and t.tolist() == [[1], [200]]
    assert mg.tensor([mg.tensor(1, dtype=mg.int8), mg.tensor(200, dtype=mg.uint8)]).tolist() \
        == [1, 200]
    with pytest.raises(TypeError, match="no integer dtype holds both uint64 and signed"):
        mg.tensor([np.uint64(2 ** 64 - 1), 1])                  # was uint64 [0, 1]
    with pytest.raises(OverflowError, match="beyond int64's range"):
        mg.tensor([mg.tensor(1), 2 ** 70])                      # was NumPy's bare words
    with pytest.raises(TypeError, match="masked array: its mask would be lost"):
        mg.tensor([mg.tensor([1.0]), np.ma.array([2.0], mask=[True])])   # 2.0 was used


def test_a_dtype_minigrad_lacks_is_not_taken_for_a_device(torch):
    for dtype in (torch.complex64, torch.uint16):
        with pytest.raises(TypeError, match="unknown dtype"):      # was "unknown device"
            mg.ones(2).to(dtype)
    with pytest.raises(TypeError, match="cannot be a tensor's"):
        mg.ones(2).to(np.complex64)


def test_a_list_of_one_element_tensors_is_a_list_of_numbers():
    """mg.tensor([t.view(1), ...]) stacked them into n x 1 (PyTorch: each tensor in the list
    is a number, t.item(), whatever its shape: 1-D); of more elements they stay stacked."""
    ones = [mg.tensor([1.0]), mg.tensor([[2.0]]), mg.tensor(3.0)]
    assert mg.tensor(ones).tolist() == [1.0, 2.0, 3.0]
    assert mg.tensor((mg.tensor([True]), mg.tensor([False]))).tolist() == [True, False]
    assert mg.tensor([mg.tensor([1]), 2], dtype=mg.float32).tolist() == [1.0, 2.0]
    assert mg.tensor([mg.tensor([1, 2]), mg.tensor([3, 4])]).tolist() == [[1, 2], [3, 4]]


def test_a_list_of_one_element_tensors_as_torch(torch):
    for lib in (mg, torch):
        t = lib.tensor([lib.tensor([1]), lib.tensor([[2]])], dtype=lib.float32)
        assert tuple(t.shape) == (2,) and t.tolist() == [1.0, 2.0]


def test_shapes_are_sizes_as_torchs():
    """t.shape and t.size() are mg.Size, a tuple with numel(), as torch.Size (ported code
    calls x.size().numel() and checks isinstance(s, torch.Size)); they print as tuples."""
    import pickle
    x = mg.zeros(2, 3)
    assert isinstance(x.shape, mg.Size) and isinstance(x.size(), mg.Size)
    assert x.size().numel() == 6 and mg.Size([]).numel() == 1 and mg.zeros(0, 4).shape.numel() == 0
    assert x.shape == (2, 3) == mg.Size([2, 3]) and repr(x.shape) == "(2, 3)"
    assert mg.zeros(mg.Size([4, 1])).shape == (4, 1) and x.view(mg.Size([3, 2])).shape == (3, 2)
    assert pickle.loads(pickle.dumps(x.shape)) == (2, 3)
