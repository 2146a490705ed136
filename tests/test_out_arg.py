"""out= on the top-level functions (minigrad/out_arg.py): the result written into an
existing tensor, which keeps its identity, with PyTorch's checks."""
import warnings

import numpy as np
import pytest

import minigrad as mg


def test_out_keeps_the_tensor_and_takes_the_values():
    a, b = mg.tensor([[1., 2.], [3., 4.]]), mg.tensor([[0., 1.], [1., 0.]])
    for fn, want in [(mg.matmul, [[2., 1.], [4., 3.]]), (mg.add, [[1., 3.], [4., 4.]]),
                     (mg.mul, [[0., 2.], [3., 0.]]), (mg.sub, [[1., 1.], [2., 4.]])]:
        c = mg.zeros(2, 2)
        view = c.view(4)
        assert fn(a, b, out=c) is c
        np.testing.assert_array_equal(c.numpy(), want)
        np.testing.assert_array_equal(view.numpy(), np.ravel(want))   # same memory


def test_out_is_resized_and_cast_as_pytorch():
    empty = mg.tensor([])
    mg.cat([mg.ones(2), mg.zeros(1)], out=empty)
    assert empty.tolist() == [1., 1., 0.]
    wide = mg.zeros(2, dtype=mg.float64)
    mg.add(mg.ones(2), 1, out=wide)
    assert wide.dtype == mg.float64 and wide.tolist() == [2., 2.]
    c = mg.zeros(2, 2)
    with pytest.warns(UserWarning, match="was resized"):
        mg.add(mg.ones(3), 1, out=c)
    assert c.shape == (3,)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        x = mg.rand(2, 2, out=mg.empty(2, 2, dtype=mg.float64))
    assert x.dtype == mg.float64 and ((x >= 0) & (x < 1)).all()


def test_out_refuses_what_pytorch_refuses():
    with pytest.raises(RuntimeError, match="can't be cast"):
        mg.add(mg.ones(2), 0.5, out=mg.zeros(2, dtype=mg.int64))
    with pytest.raises(RuntimeError, match="automatic differentiation"):
        mg.mul(mg.ones(2, requires_grad=True), 2, out=mg.zeros(2))
    with mg.no_grad():                                  # no graph needed: allowed
        c = mg.mul(mg.ones(2, requires_grad=True), 2, out=mg.zeros(2))
    assert c.tolist() == [2., 2.] and not c.requires_grad
    with pytest.raises(TypeError, match="must be a Tensor"):
        mg.add(mg.ones(2), 1, out=np.zeros(2))


def test_out_matches_torch(torch):
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    for lib in (mg, torch):
        c = lib.zeros(2, 2)
        assert lib.matmul(lib.tensor(a), lib.tensor(a).T, out=c) is c
    np.testing.assert_allclose(c.numpy(), a @ a.T)
    with pytest.raises(RuntimeError, match="can't be cast"):
        torch.add(torch.ones(2), 0.5, out=torch.zeros(2, dtype=torch.int64))
