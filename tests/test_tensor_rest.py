"""tensor_rest.py's spellings: set_/is_set_to, storage queries, dim_order, nonzero_static,
hash_tensor, map2_, resize/resize_as, module_load, output_nr/name and the no-ops."""
import numpy as np
import pytest

import minigrad as mg


def test_set_aliases_the_source_as_torch(torch):
    def run(lib):
        a, b = lib.zeros(2), lib.ones(3)
        assert a.set_(b) is a
        b.add_(1)
        return a.numpy().copy(), a.is_set_to(b), b.is_set_to(a), a[:2].is_set_to(b)
    mine, ref = run(mg), run(torch)
    np.testing.assert_array_equal(mine[0], ref[0])
    assert mine[1:] == ref[1:]
    assert mg.ones(2).set_().shape == (0,)


def test_set_refusals():
    with pytest.raises(TypeError, match="no Storage objects"):
        mg.zeros(2).set_(mg.ones(2), 0, (2,), (1,))
    with pytest.raises(RuntimeError, match="could not set a tensor of float32"):
        mg.zeros(2).set_(mg.ones(2, dtype=mg.float64))
    with pytest.raises(RuntimeError, match="no_grad"):
        mg.zeros(2, requires_grad=True).set_(mg.ones(3))
    p = mg.zeros(2, requires_grad=True)
    with mg.no_grad():
        p.set_(mg.ones(3))                           # a leaf swapped under no_grad
    assert p.shape == (3,) and p.requires_grad


def test_storage_queries_as_torch(torch):
    x, t = mg.arange(4.0), torch.arange(4.0)
    for s, r in ((x.untyped_storage(), t.untyped_storage()), (x[1:].storage(), t[1:].storage())):
        assert (s.size(), s.nbytes(), s.element_size()) == (r.size(), r.nbytes(),
                                                             r.element_size())
    assert x[1:].untyped_storage().data_ptr() == x.data_ptr() == x.const_data_ptr()


def test_dim_order_as_torch(torch):
    for shape, perm in (((2, 1, 3), (0, 1, 2)), ((2, 3, 4), (2, 0, 1)), ((3, 1), (1, 0))):
        assert mg.zeros(*shape).permute(*perm).dim_order() == \
            torch.zeros(*shape).permute(*perm).dim_order()
    with pytest.raises(RuntimeError, match="unique dim order"):
        mg.zeros(2, 1, 3).dim_order(ambiguity_check=True)


@pytest.mark.parametrize("make", [
    lambda lib: lib.zeros(1, 4).expand(3, 4),                  # a stride 0 tells nothing
    lambda lib: lib.zeros(3, 4).expand(2, 3, 4),
    lambda lib: lib.empty_strided((1, 2, 3), (1, 1, 2)),       # a tie: the longer dim outer
    lambda lib: lib.zeros(2, 3, 4, 5).permute(0, 2, 3, 1),     # channels-last
    lambda lib: lib.zeros(2, 4, 6)[:, ::2].permute(2, 0, 1),
    lambda lib: lib.zeros(0, 3)])
def test_dim_order_of_expanded_and_tied_strides_as_torch(torch, make):
    for check in (False, True):
        try:
            want = tuple(make(torch).dim_order(ambiguity_check=check))
        except RuntimeError:
            with pytest.raises(RuntimeError, match="unique dim order"):
                make(mg).dim_order(ambiguity_check=check)
        else:
            assert make(mg).dim_order(ambiguity_check=check) == want


def test_nonzero_static_as_torch(torch):
    a = np.array([[0, 1, 0], [2, 0, 3]])
    for size, fill in ((5, -1), (2, 0), (0, 7)):
        np.testing.assert_array_equal(
            mg.tensor(a).nonzero_static(size=size, fill_value=fill).numpy(),
            torch.tensor(a).nonzero_static(size=size, fill_value=fill).numpy())
    for fill in (1.5, True):                          # an index, not cast to one (as torch)
        with pytest.raises(TypeError, match="'fill_value' must be an int"):
            mg.tensor(a).nonzero_static(size=5, fill_value=fill)


def test_hash_tensor_as_torch(torch):
    a = np.array([[1.5, -2.0, 0.25], [3.0, 0.0, -7.5]], dtype=np.float32)
    for arr in (a, a.astype(np.int64) - 3, a > 0):
        m, t = mg.tensor(arr), torch.tensor(arr)
        assert m.hash_tensor().item() == t.hash_tensor().view(torch.int64).item()
        for dim, keep in ((1, False), (0, True), ((0, 1), False)):
            np.testing.assert_array_equal(
                m.hash_tensor(dim, keepdim=keep).numpy(),
                torch.hash_tensor(t, dim, keepdim=keep).view(torch.int64).numpy())


def test_hash_tensor_refuses_xor_over_nothing_and_repeated_dims():
    """As PyTorch's: an empty tensor needs dim, and the dims reduced a size; a dim named
    twice is refused (a ValueError, as for minigrad's other reductions)."""
    for x, dim in ((mg.zeros(0), None), (mg.zeros(0, 3), ())):
        with pytest.raises(RuntimeError, match=r"hash_tensor: an empty tensor .* needs dim"):
            x.hash_tensor(dim)
    with pytest.raises(IndexError, match=r"hash_tensor: dim 1 has size 0"):
        mg.zeros(2, 0).hash_tensor((0, 1))
    for x, dim in ((mg.zeros(2, 3), (0, 0)), (mg.zeros(2, 3), [1, -1]), (mg.zeros(()), (0, 0))):
        with pytest.raises(ValueError, match=r"hash_tensor: dim .* names a dim more than once"):
            x.hash_tensor(dim)
    assert mg.zeros(2, 0, 3).hash_tensor((0, 2), keepdim=True).shape == (1, 0, 1)
    assert mg.zeros(()).hash_tensor(0).item() == 0


def test_map2_as_torch(torch):
    def run(lib):
        x = lib.tensor([1.0, 2.0, 3.0])
        return x.map2_(lib.tensor([10.0]), lib.tensor([1.0, 0.0, -1.0]),
                       lambda a, b, c: a * b + c).numpy()
    np.testing.assert_array_equal(run(mg), run(torch))
    with pytest.raises(TypeError, match="CPU tensor of float32"):
        mg.zeros(2).map2_(mg.zeros(2), mg.zeros(2, dtype=mg.int64), lambda a, b, c: a)


def test_resize_and_resize_as_keep_the_elements():
    x = mg.arange(6.0, requires_grad=True)
    with pytest.warns(UserWarning, match="deprecated"):
        y = x.resize(2, 3)
    y.sum().backward()
    assert y.shape == (2, 3) and x.grad.shape == (6,)
    with pytest.warns(UserWarning), pytest.raises(RuntimeError, match="6 elements"):
        x.resize(4)
    with pytest.warns(UserWarning):
        assert x.resize_as(mg.zeros(3, 2)).shape == (3, 2)


def test_module_load_output_nr_name_and_no_ops():
    p, v = mg.zeros(2), mg.ones(2)
    got = p.module_load(v)
    assert got is not p and got is not v and p.tolist() == [1.0, 1.0]
    assert p.module_load(v, assign=True) is not v
    x = mg.arange(3.0, requires_grad=True)
    parts = (x * 1).unbind()
    assert [t.output_nr for t in parts] == [0, 1, 2] and x.output_nr == 0
    assert x.name is None and x.to_dense() is x and x.to_dense(mg.float64).dtype == mg.float64
    assert x.conj_physical() is x and x.record_stream(None) is None
    assert mg.zeros(2).conj_physical_().shape == (2,)
