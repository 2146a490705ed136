"""nn.Buffer (nn/buffer.py, registered by Module.__setattr__) and nn.LazyLinear with its
UninitializedParameters (nn/lazy.py), as torch's: registration and persistence, state
dicts, materialisation at the first forward or at load_state_dict, an optimiser built
before, .to() before, reprs and errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim


def test_buffer_registers_itself_with_its_persistence():
    m = nn.Module()
    b = nn.Buffer(mg.ones(2), persistent=False)
    m.x = b
    assert m.x is b and dict(m.named_buffers()) == {"x": b}
    assert list(m.state_dict()) == []                   # not persistent
    m.y = nn.Buffer(mg.ones(3))
    m.y = mg.zeros(3)                                   # a buffer stays a buffer
    assert list(m.state_dict()) == ["y"] and not m.y.numpy().any()
    m.x = nn.Buffer(mg.ones(2))                         # now persistent, in its place
    assert list(m.state_dict()) == ["x", "y"]
    m.to(dtype="float64")
    assert m.x.dtype == mg.float64


def test_buffer_shares_memory_and_keeps_requires_grad():
    t = mg.ones(3, requires_grad=True)
    b = nn.Buffer(t)
    assert b.requires_grad and b.data is t.data
    assert nn.Buffer().shape == (0,) and nn.Buffer().dtype == mg.float32
    assert nn.Buffer(mg.ones(1)).persistent and not nn.Buffer(persistent=False).persistent


def test_buffer_errors_as_torch():
    m = nn.Module()
    m.p = nn.Parameter(mg.ones(2))
    with pytest.raises(TypeError, match="cannot assign a Buffer as parameter 'p'"):
        m.p = nn.Buffer(mg.ones(2))
    m.child = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="child module 'child'"):
        m.child = nn.Buffer(mg.ones(2))
    with pytest.raises(TypeError, match="data must be a Tensor"):
        nn.Buffer([1.0, 2.0])


def test_lazy_linear_materialises_at_the_first_forward():
    m = nn.LazyLinear(3)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert m.has_uninitialized_params() and m.in_features == 0
    assert repr(m.weight) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="uninitialized parameter"):
        m.weight.shape
    opt = optim.SGD(m.parameters(), lr=0.1)             # built before: keeps them
    weight = m.weight
    y = m(mg.ones(2, 5))
    assert type(m) is nn.Linear and repr(m) == "Linear(in_features=5, out_features=3, bias=True)"
    assert m.weight is weight and type(weight) is nn.Parameter and weight.shape == (3, 5)
    assert np.abs(weight.numpy()).max() <= 1 / np.sqrt(5) and weight.numpy().std() > 0
    before = weight.numpy().copy()
    y.sum().backward()
    opt.step()
    np.testing.assert_allclose(weight.numpy(), before - 0.1 * 2)


def test_lazy_linear_state_dict_load_and_dtype():
    torch = pytest.importorskip("torch")
    assert repr(nn.LazyLinear(3, bias=False)) == repr(torch.nn.LazyLinear(3, bias=False))
    sd = nn.LazyLinear(3).state_dict()
    assert list(sd) == ["weight", "bias"] and repr(sd["weight"]) == "<UninitializedParameter>"
    t = torch.nn.Linear(4, 3)
    m = nn.Sequential(nn.LazyLinear(3))
    m.load_state_dict({"0." + k: v for k, v in t.state_dict().items()})
    assert type(m[0]) is nn.Linear and m[0].in_features == 4
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(m(mg.tensor(x)).numpy(), t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6)
    d = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2)).to(dtype="float64")
    assert d(mg.ones(3, 7, dtype="float64")).dtype == mg.float64
    assert d[0].weight.dtype == d[2].weight.dtype == mg.float64
    assert nn.LazyLinear(2, dtype=mg.float64)(mg.ones(1, 3, dtype="float64")).shape == (1, 2)


def test_lazy_linear_errors():
    with pytest.raises(ValueError, match="feature dim"):
        nn.LazyLinear(3)(mg.tensor(1.0))
    with pytest.raises(TypeError, match="out_features"):
        nn.LazyLinear(-1)
