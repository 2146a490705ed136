"""Tensor basics: creation and dtype rules, conversion (.numpy, .item, .to), and the small
protocol methods a user touches (repr, len, bool, float)."""
import numpy as np
import pytest

import minigrad as mg


def test_dtype_rules(device):
    assert mg.tensor([1.0, 2.0], device=device).dtype == mg.float32     # Python floats
    assert mg.tensor(3.0, device=device).dtype == mg.float32
    assert mg.tensor([1, 2], device=device).dtype == mg.int64           # Python ints
    assert mg.tensor([True, False], device=device).dtype == mg.bool
    for dt in (np.float64, np.float32, np.int32, np.int64, np.bool_):   # arrays keep theirs
        assert mg.tensor(np.zeros(2, dt), device=device).dtype == np.dtype(dt)
    assert mg.tensor([1, 2], dtype="float64", device=device).dtype == mg.float64
    assert mg.tensor([1.5], dtype=mg.int64, device=device).tolist() == [1]
    assert mg.float64 == np.dtype("float64") and mg.int64 == np.dtype("int64")
    for name in ("float", "double", "long", "int", "half", "bool"):
        assert mg.zeros(1, dtype=name).dtype == mg.backend.dtype(name)


def test_tensor_copies_its_source(device):
    a = np.ones(3, dtype=np.float32)
    t = mg.tensor(a, device=device, requires_grad=True)
    with mg.no_grad():
        t[0] = 5.0
    assert a[0] == 1.0                                   # a new tensor, as torch.tensor
    u = mg.tensor(t, device=device)
    assert not u.requires_grad and u.is_leaf
    with mg.no_grad():
        u[1] = 7.0
    assert t.tolist() == [5.0, 1.0, 1.0]


def test_factories(device):
    assert mg.zeros(2, 3, device=device).shape == (2, 3)
    assert mg.ones((2, 3), device=device).tolist() == [[1.0] * 3] * 2
    assert mg.full((2,), 7.0, device=device).tolist() == [7.0, 7.0]
    assert mg.arange(4, device=device).tolist() == [0, 1, 2, 3]
    assert mg.arange(4, device=device).dtype == mg.int64
    assert mg.arange(0, 1, 0.5, device=device).dtype == mg.float32
    assert mg.arange(1, 7, 2, dtype=mg.float64, device=device).tolist() == [1.0, 3.0, 5.0]
    r = mg.randn(3, 4, device=device, requires_grad=True)
    assert r.requires_grad and r.dtype == mg.float32 and r.device == device
    u = mg.rand(1000, dtype=mg.float64, device=device).numpy()
    assert u.min() >= 0 and u.max() < 1
    i = mg.randint(0, 5, (100,), device=device).numpy()
    assert i.dtype == np.int64 and i.min() >= 0 and i.max() < 5
    j = mg.randint(3, (200,), device=device).numpy()          # randint(high, size), as torch
    assert j.dtype == np.int64 and j.min() == 0 and j.max() == 2 and j.shape == (200,)
    assert mg.randint(2, 4, size=(2, 3), device=device).shape == (2, 3)
    x = mg.randn(2, 3, dtype=mg.float64, device=device)
    for like in (mg.zeros_like(x), mg.ones_like(x), mg.randn_like(x)):
        assert like.shape == (2, 3) and like.dtype == mg.float64 and like.device == device


def test_manual_seed_reproducible(device):
    mg.manual_seed(42)
    a = mg.randn(5, device=device).numpy()
    mg.manual_seed(42)
    np.testing.assert_array_equal(mg.randn(5, device=device).numpy(), a)
    assert not np.array_equal(mg.randn(5, device=device).numpy(), a)


def test_conversions(device):
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    h = x.numpy()
    assert isinstance(h, np.ndarray) and h.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert isinstance(x.sum().numpy(), np.ndarray) and x.sum().numpy().shape == ()
    assert x.sum().item() == 10.0 and float(x[0, 1]) == 2.0 and int(x[1, 1]) == 4
    assert len(x) == 2 and x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert x.to(device) is x and x.to("float32") is x and x.contiguous() is x
    assert x.to("float64").dtype == mg.float64 and x.to(mg.float64).dtype == mg.float64
    assert x.double().dtype == mg.float64 and x.long().dtype == mg.int64
    assert x.bool().dtype == mg.bool and x.double().float().dtype == mg.float32
    assert x.cpu().device == "cpu" and isinstance(x.cpu().data, np.ndarray)
    assert bool(mg.tensor([1.0], device=device)) and not bool(mg.tensor(0.0, device=device))


def test_repr():
    assert repr(mg.tensor([1.0, 2.0])) == "tensor([1., 2.], dtype=float32)"
    assert "requires_grad=True" in repr(mg.ones(2, requires_grad=True))
    assert "grad_fn=Mul" in repr(mg.ones(2, requires_grad=True) * 2)


def test_protocol_errors():
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(mg.ones(2))
    with pytest.raises(TypeError, match="0-d"):
        len(mg.tensor(1.0))
    with pytest.raises(RuntimeError, match="detach"):
        (mg.ones(2, requires_grad=True) * 2).requires_grad_(False)


def test_numpy_array_on_the_left_defers_to_tensor(device):
    x = mg.ones(2, device=device, requires_grad=True)
    y = np.array([2.0, 3.0], dtype=np.float32) * x
    assert isinstance(y, mg.Tensor) and y.requires_grad and y.tolist() == [2.0, 3.0]


def test_zero_and_setitem_under_no_grad(device):
    x = mg.ones(2, 3, device=device, requires_grad=True)
    (x * 2).sum().backward()
    x.grad.zero_()
    assert x.grad.tolist() == [[0.0] * 3] * 2
    s = x.sum()
    with mg.no_grad():
        s.detach().zero_()                                # a 0-d result is an array too


def test_keep_freed_host_memory_reports_whether_it_applied():
    import sys
    applied = mg.keep_freed_host_memory()
    assert isinstance(applied, bool)
    if sys.platform.startswith("linux"):
        import platform
        assert applied == (platform.libc_ver()[0] == "glibc")


def test_iterating_gives_the_rows_and_a_0d_tensor_refuses(device):
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    assert [r.tolist() for r in x] == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(mg.tensor(1.0, device=device))


def test_a_list_of_tensors_becomes_one_tensor_of_their_values(device):
    t = mg.tensor([mg.tensor(1.0, device=device), mg.tensor(2.0, device=device)])
    assert t.dtype == mg.float32 and t.tolist() == [1.0, 2.0]
    t64 = mg.tensor([mg.tensor(1.0, dtype=mg.float64, device=device)] * 2)
    assert t64.dtype == mg.float64                      # their dtype, as torch.tensor
    rows = mg.tensor((mg.ones(2, device=device), mg.zeros(2, device=device)))
    assert rows.shape == (2, 2) and rows.tolist() == [[1.0, 1.0], [0.0, 0.0]]
    with pytest.raises(ValueError, match=r"one shape.*\(2,\).*\(3,\)"):
        mg.tensor([mg.ones(2), mg.ones(3)])


def test_clamp_with_tensor_bounds(device):
    x = mg.tensor([1.0, 5.0, 2.5], device=device, requires_grad=True)
    lo = mg.tensor(2.0, dtype=mg.float64, device=device)
    y = x.clamp(lo, mg.tensor([3.0, 3.0, 3.0], device=device))
    assert y.dtype == mg.float32 and y.tolist() == [2.0, 3.0, 2.5]
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]
    assert mg.clamp(x, max=mg.tensor(0.0, device=device)).tolist() == [0.0, 0.0, 0.0]


def test_np_asarray_of_a_tensor():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    a = np.asarray(x)
    assert isinstance(a, np.ndarray) and a.dtype == np.float32 and a.tolist() == [1.0, 2.0]
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert np.asarray([mg.tensor(1.0), mg.tensor(2.0)]).tolist() == [1.0, 2.0]



def test_full_takes_its_dtype_from_the_value_as_torch(device):
    assert mg.full((2,), 7, device=device).dtype == mg.int64
    assert mg.full((2,), True, device=device).dtype == mg.bool
    assert mg.full((2,), 7.0, device=device).dtype == mg.float32
    assert mg.full((2,), 7, dtype=mg.float64, device=device).dtype == mg.float64


def test_method_spellings_match_the_operators(device):
    """x.add(y), x.mul(y), ... are the operators under PyTorch's method names: same values,
    same gradients."""
    a = mg.tensor([1.0, -2.0, 3.0], device=device, dtype=mg.float64, requires_grad=True)
    b = mg.tensor([0.5, 4.0, -1.0], device=device, dtype=mg.float64, requires_grad=True)
    pairs = [(a.add(b), a + b), (a.sub(b), a - b), (a.mul(b), a * b), (a.div(b), a / b),
             (a.pow(2), a ** 2), (a.matmul(b), a @ b), (a.neg(), -a), (a.square(), a * a),
             (a.add(2.0), a + 2.0), (a.view_as(b), a.reshape(3)),
             (a.reshape_as(mg.zeros(3, 1)), a.reshape(3, 1))]
    for got, want in pairs:
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        ga = mg.grad(got.sum(), [a], allow_unused=True)[0]
        wa = mg.grad(want.sum(), [a], allow_unused=True)[0]
        np.testing.assert_array_equal(ga.numpy(), wa.numpy())
    with pytest.raises(ValueError, match="cannot view"):
        a.view_as(mg.zeros(2, 2))
