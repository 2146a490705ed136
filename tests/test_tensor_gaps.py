"""Tensor API gaps filled against PyTorch (reference only): unfold, sum_to_size, byte/short/
char, mH/H, new_empty_strided, storage_offset/data_ptr, broadcast_shapes, vander."""
import numpy as np
import pytest

import minigrad as mg

try:
    import torch             # the reference: tests comparing with it take the torch fixture
except ImportError:         # (CI installs none: the file's other tests run all the same)
    torch = None


def _pair(a, requires_grad=False):
    a = np.asarray(a)
    return (mg.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


@pytest.mark.parametrize("args", [(1, 2, 2), (1, 2, 1), (-1, 5, 1), (0, 1, 3), (1, 0, 1),
                                  (1, 3, 2), (0, 2, 1)])
def test_unfold_matches_torch_values_and_gradients(torch, args):
    a = np.random.default_rng(0).standard_normal((2, 5))
    x, tx = _pair(a, requires_grad=True)
    u, tu = x.unfold(*args), tx.unfold(*args)
    assert u.shape == tuple(tu.shape) and u.dtype == mg.float64
    np.testing.assert_array_equal(u.detach().numpy(), tu.detach().numpy())
    w = np.random.default_rng(1).standard_normal(u.shape)
    (u * mg.tensor(w)).sum().backward()
    (tu * torch.tensor(w)).sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())     # overlaps sum


def test_unfold_gradcheck_and_gradgradcheck_in_float64():
    x = mg.tensor(np.random.default_rng(2).standard_normal((3, 7)), requires_grad=True)
    assert mg.gradcheck(lambda t: t.unfold(1, 3, 2) ** 2, (x,))
    assert mg.gradgradcheck(lambda t: t.unfold(-1, 2, 3) ** 3, (x,))


def test_unfold_of_0d_and_errors_match_torch(torch):
    s, ts = _pair(3.0)
    for args in [(0, 1, 1), (0, 0, 1), (-1, 1, 2)]:
        assert s.unfold(*args).shape == tuple(ts.unfold(*args).shape)
    x, tx = _pair(np.zeros((2, 5)))
    for args, err in [((2, 2, 1), IndexError), ((1, 6, 1), RuntimeError),
                      ((1, 2, 0), RuntimeError), ((1, -1, 1), RuntimeError)]:
        with pytest.raises(err):
            tx.unfold(*args)
        with pytest.raises(err):
            x.unfold(*args)
    with pytest.raises(RuntimeError, match="maximum size"):
        s.unfold(0, 2, 1)


def test_unfold_without_overlap_is_a_view_written_through(torch):
    x = mg.arange(6.0)
    u = x.unfold(0, 2, 2)
    u[1, 0] = 10.0
    assert x.tolist() == [0.0, 1.0, 10.0, 3.0, 4.0, 5.0]
    a, ta = _pair(np.arange(6.0), requires_grad=True)
    for leaf, t in ((a, mg), (ta, torch)):      # a view written in grad mode
        h = leaf * 1
        h.unfold(0, 2, 3).mul_(t.tensor([[2.0, 3.0]], dtype=h.dtype))
        (h * h).sum().backward()
    np.testing.assert_allclose(a.grad.numpy(), ta.grad.numpy())
    overlapping = x.unfold(0, 3, 1)           # a copy, deliberately (see ops/windows.py)
    overlapping[0, 0] = -1.0
    assert x[0].item() == 0.0


def test_sum_to_size_matches_torch_with_gradients(torch):
    a = np.random.default_rng(3).standard_normal((2, 3, 4))
    x, tx = _pair(a, requires_grad=True)
    for size in [(1, 3, 1), ((2, 1, 4),), ([3, 4],), (4,), (2, 3, 4), (1, 1, 1)]:
        got, want = x.sum_to_size(*size), tx.sum_to_size(*size)
        assert got.shape == tuple(want.shape)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy())
    assert mg.gradcheck(lambda t: t.sum_to_size(3, 1), (x,))
    for size in [(5,), (2, 2), (1, 2, 3, 4), (3, 1, 4)]:
        with pytest.raises(RuntimeError, match="not expandable"):
            tx.sum_to_size(*size)
        with pytest.raises(RuntimeError, match="not expandable"):
            x.sum_to_size(*size)


def test_byte_short_char_cast_as_torch(torch):
    a = np.array([-1.0, 3.7, 127.0, 2.0])
    x, tx = _pair(a)
    for name, dtype in [("byte", mg.uint8), ("short", mg.int16), ("char", mg.int8)]:
        got, want = getattr(x, name)(), getattr(tx, name)()
        assert got.dtype == dtype
        assert got.tolist() == want.tolist()


@pytest.mark.filterwarnings("ignore:Tensor.m?H is deprecated")
def test_mH_and_H_are_the_transposes_with_torchs_errors(torch):
    for shape in [(), (2, 3), (4, 2, 3)]:
        x, tx = _pair(np.arange(float(np.prod(shape))).reshape(shape))
        np.testing.assert_array_equal(x.mH.numpy(), tx.mH.numpy())
        if len(shape) != 3:
            np.testing.assert_array_equal(x.H.numpy(), tx.H.numpy())
    with pytest.raises(RuntimeError, match="batches of matrices"):
        mg.zeros(3).mH
    with pytest.raises(RuntimeError, match="only supported on matrices"):
        mg.zeros(3).H
    with pytest.raises(RuntimeError, match="consider using tensor.mH"):
        mg.zeros(2, 3, 4).H
    x = mg.tensor(np.ones((2, 3)), requires_grad=True)
    (x.mH * mg.tensor(np.arange(6.0).reshape(3, 2))).sum().backward()
    assert x.grad.tolist() == [[0.0, 2.0, 4.0], [1.0, 3.0, 5.0]]


def test_new_empty_strided_shape_dtype_device():
    x = mg.zeros(2, dtype=mg.float64)
    y = x.new_empty_strided((2, 3), (1, 2))
    assert y.shape == (2, 3) and y.dtype == mg.float64 and y.device == x.device
    assert not y.requires_grad
    with pytest.raises(RuntimeError, match="mismatch in length"):
        x.new_empty_strided((2, 3), (1,))


def test_storage_offset_and_data_ptr_as_torch(torch):
    x, tx = _pair(np.arange(6.0).reshape(2, 3))
    for view in [lambda t: t, lambda t: t[1:], lambda t: t.T, lambda t: t[:, 1],
                 lambda t: t[1, 2], lambda t: t.reshape(3, 2)[2:]]:
        assert view(x).storage_offset() == view(tx).storage_offset()
    assert x[1:].data_ptr() - x.data_ptr() == 3 * 8


def test_storage_offset_of_unfold_windows_counts_from_the_memory_owner(torch):
    """unfold's view is made by as_strided, whose base is no array: the offset still counts
    from the memory's owner, as torch's."""
    x, tx = _pair(np.arange(12.0).reshape(3, 4))
    for view in [lambda t: t[:, 1:].unfold(1, 1, 2), lambda t: t.unfold(1, 2, 2)[1:, 1]]:
        assert view(x).storage_offset() == view(tx).storage_offset()


def test_broadcast_shapes_matches_torch(torch):
    for shapes in [((2, 1), (3,)), (), (3, (2, 1)), ((0, 1), (1, 4)), ((5,),)]:
        assert mg.broadcast_shapes(*shapes) == tuple(torch.broadcast_shapes(*shapes))
    with pytest.raises(RuntimeError, match="length 3 at -1"):
        mg.broadcast_shapes((2,), (3,))
    with pytest.raises(ValueError, match="negative"):
        mg.broadcast_shapes((-1,))


def test_vander_matches_torch_with_gradients(torch):
    x, tx = _pair(np.array([1.5, 0.0, -2.0]), requires_grad=True)
    for n in [None, 1, 2, 5, 0]:
        got, want = mg.vander(x, N=n), torch.vander(tx, N=n)
        assert got.shape == tuple(want.shape)
        np.testing.assert_allclose(got.detach().numpy(), want.detach().numpy())
    i, ti = _pair(np.array([2, 3], dtype=np.int32))
    assert mg.vander(i).dtype == mg.int64 and mg.vander(i).tolist() == torch.vander(ti).tolist()
    assert mg.gradcheck(lambda t: mg.vander(t, N=4), (x,))
    assert mg.gradgradcheck(lambda t: mg.vander(t), (x,))
    with pytest.raises(RuntimeError, match="one-dimensional"):
        mg.vander(mg.zeros(2, 2))
    with pytest.raises(RuntimeError, match="non-negative"):
        mg.vander(x, N=-1)

