"""ParameterList and ParameterDict (registration, names, .to(), optimisers, list and dict
behaviour), the initialisers trunc_normal_, orthogonal_ and eye_, parameters_to_vector /
vector_to_parameters, and Module.get_buffer. BatchNorm1d: test_nn_more_batchnorm.py."""
import math
from collections import OrderedDict

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.nn import init
from minigrad.nn.batchnorm import BatchNorm1d
from minigrad.nn.containers import ParameterDict, ParameterList
from minigrad.nn.utils import parameters_to_vector, vector_to_parameters


# ---- ParameterList / ParameterDict --------------------------------------------------------
def _net(lib, ParamList, ParamDict):
    """The same model in minigrad or torch: parameters in a list and in a dict."""
    class Net(lib.nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib.nn.Parameter(lib.ones(2))
            self.plist = ParamList([lib.nn.Parameter(lib.ones(2, 3)), lib.zeros(3)])
            self.pdict = ParamDict({"scale": lib.ones(3), "bias": lib.zeros(3)})
            self.norm = lib.nn.BatchNorm1d(3) if lib is not mg else BatchNorm1d(3)

        def forward(self, x):                      # x (N, 2)
            h = self.norm((x * self.w) @ self.plist[0])
            return h * self.pdict["scale"] + self.pdict["bias"] + self.plist[1]
    return Net()


def test_parameters_are_registered_under_torchs_names():
    net = _net(mg, ParameterList, ParameterDict)
    names = [n for n, _ in net.named_parameters()]
    assert names == ["w", "plist.0", "plist.1", "pdict.bias", "pdict.scale",
                     "norm.weight", "norm.bias"]        # a plain dict: sorted, as PyTorch
    assert all(isinstance(p, nn.Parameter) and p.requires_grad for p in net.parameters())
    torch = pytest.importorskip("torch")
    tnet = _net(torch, torch.nn.ParameterList, torch.nn.ParameterDict)
    assert names == [n for n, _ in tnet.named_parameters()]
    assert list(net.state_dict()) == list(tnet.state_dict())
    net.load_state_dict(tnet.state_dict())          # a torch checkpoint loads by name
    assert repr(net.plist) == repr(tnet.plist).replace("torch.", "")


def test_optimiser_and_to_reach_contained_parameters():
    mg.manual_seed(0)
    net = _net(mg, ParameterList, ParameterDict)
    before = {n: p.numpy().copy() for n, p in net.named_parameters()}
    opt = optim.SGD(net.parameters(), lr=0.1)
    loss = (net(mg.randn(5, 2)) * mg.randn(5, 3)).sum()
    loss.backward()
    grads = {n: p.grad.numpy().copy() for n, p in net.named_parameters()}
    opt.step()
    for n in ("plist.0", "plist.1", "pdict.scale", "pdict.bias"):
        assert np.abs(grads[n]).min() > 1e-3, n
        np.testing.assert_allclose(net.get_parameter(n).numpy(), before[n] - 0.1 * grads[n])
    net.to(dtype=mg.float64)
    assert net.plist[0].dtype == mg.float64 and net.pdict["bias"].dtype == mg.float64
    assert net.plist[0].grad.dtype == mg.float64


def test_parameter_list_behaves_as_a_list():
    t = mg.zeros(2)
    plist = ParameterList([t])
    assert isinstance(plist[0], nn.Parameter) and plist[0]._data is t._data  # wrapped, shared
    plist.append(nn.Parameter(mg.ones(1))).extend([mg.ones(3)])
    plist += [mg.ones(4)]
    assert len(plist) == 4 and [p.shape for p in plist] == [(2,), (1,), (3,), (4,)]
    assert plist[-1] is plist[3] and [p.shape for p in plist[1:3]] == [(1,), (3,)]
    assert isinstance(plist[::2], ParameterList) and plist[::2][1] is plist[2]
    plist[0] = mg.ones(5)
    assert plist[0].shape == (5,) and list(plist.state_dict()) == ["0", "1", "2", "3"]
    with pytest.raises(IndexError, match="index 4 is out of range for 4"):
        plist[4]
    with pytest.raises(TypeError, match="must be integers"):
        plist["0"]
    with pytest.raises(TypeError, match="iterable"):
        plist.extend(mg.ones(3))               # a tensor is not unpacked into rows
    with pytest.raises(RuntimeError, match="should not be called"):
        plist(mg.ones(1))
    with pytest.raises(TypeError, match="cannot assign"):
        plist[1] = "not a parameter"           # as PyTorch: a parameter's slot stays one
    assert len(ParameterList()) == 0 and repr(ParameterList()) == "ParameterList()"


def test_parameter_dict_behaves_as_a_dict():
    pdict = ParameterDict(OrderedDict([("b", mg.ones(1)), ("a", mg.ones(2))]))
    assert list(pdict) == ["b", "a"]           # an OrderedDict keeps its order
    pdict.update([("c", mg.ones(3))])          # so do (key, value) pairs
    pdict["d"] = nn.Parameter(mg.zeros(4))
    assert list(pdict.keys()) == ["b", "a", "c", "d"] and len(pdict) == 4 and "c" in pdict
    assert [n for n, _ in pdict.named_parameters()] == ["b", "a", "c", "d"]
    assert pdict.get("zz") is None and pdict.get("a").shape == (2,)
    assert pdict.pop("b").shape == (1,) and "b" not in pdict and "b" not in pdict.state_dict()
    del pdict["c"]
    assert list(pdict) == ["a", "d"] and [k for k, _ in pdict.items()] == ["a", "d"]
    assert pdict.setdefault("e", mg.ones(5)).shape == (5,) and len(list(pdict.values())) == 3
    copy = pdict.copy()
    assert copy["a"] is pdict["a"] and list(copy) == list(pdict)
    pdict.clear()
    assert len(pdict) == 0 and list(pdict.parameters()) == []
    with pytest.raises(KeyError, match="no key 'x'"):
        pdict["x"]
    with pytest.raises(TypeError, match="must be strings"):
        pdict[0] = mg.ones(1)
    for bad in ("a.b", "", "training", "_keys"):
        with pytest.raises(KeyError, match="cannot be a key"):
            pdict[bad] = mg.ones(1)
    assert len(pdict) == 0
    with pytest.raises(ValueError, match="element #0"):
        pdict.update([("a", mg.ones(1), 3)])
    with pytest.raises(TypeError, match="mapping or an iterable"):
        pdict.update(3)


def test_parameter_dict_has_the_rest_of_dicts_api():
    pdict = ParameterDict(OrderedDict([("b", mg.ones(1)), ("a", mg.ones(2))]))
    assert list(reversed(pdict)) == ["a", "b"]        # (it indexed by position: an error)
    merged = pdict | {"z": mg.ones(3), "c": mg.ones(4)}     # PyTorch's: a plain dict sorted
    assert list(merged) == ["b", "a", "c", "z"] and merged["b"] is pdict["b"]
    assert list({"y": mg.ones(1)} | pdict) == ["y", "b", "a"] and len(pdict) == 2
    pdict |= [("q", mg.ones(5))]
    assert list(pdict) == ["b", "a", "q"]
    key, value = pdict.popitem()                     # the last added, as dict.popitem
    assert key == "q" and value.shape == (5,) and "q" not in pdict.state_dict()
    fresh = pdict.fromkeys(["x", "y"], mg.zeros(2))
    assert list(fresh) == ["x", "y"] and isinstance(fresh["x"], nn.Parameter)
    with pytest.raises(KeyError, match="empty"):
        ParameterDict().popitem()


# ---- initialisers ---------------------------------------------------------------------------
def _truncated_moments(mean, std, a, b):
    """Mean and std of N(mean, std²) truncated to [a, b], in closed form."""
    alpha, beta = (a - mean) / std, (b - mean) / std

    def pdf(z):
        return 0.0 if math.isinf(z) else math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    z = 0.5 * (math.erfc(alpha / math.sqrt(2)) - math.erfc(beta / math.sqrt(2)))
    za = 0.0 if math.isinf(alpha) else alpha * pdf(alpha)
    zb = 0.0 if math.isinf(beta) else beta * pdf(beta)
    shift = (pdf(alpha) - pdf(beta)) / z
    return mean + std * shift, std * math.sqrt(1 + (za - zb) / z - shift ** 2)


@pytest.mark.parametrize("mean, std, a, b", [
    (0.0, 1.0, -2.0, 2.0),          # PyTorch's default: the normal proposal
    (1.0, 0.5, 0.0, 1.2),
    (0.0, 1.0, -0.01, 0.02),        # narrow around 0: the uniform proposal
    (0.0, 1.0, 4.0, 4.05),          # narrow in a tail: uniform
    (0.0, 1.0, 5.0, math.inf),      # far in a tail: the exponential proposal
    (3.0, 2.0, -math.inf, -9.0),    # the mirrored tail
    (0.0, 0.02, -2.0, 2.0),         # bounds far outside: a plain normal
])
def test_trunc_normal_bounds_and_moments(mean, std, a, b):
    w = init.trunc_normal_(mg.zeros(400, 500, dtype=mg.float64), mean, std, a, b,
                           generator=0).numpy()
    assert w.min() >= a and w.max() <= b
    mu, sd = _truncated_moments(mean, std, a, b)
    assert abs(w.mean() - mu) < 0.01 * sd and abs(w.std() / sd - 1) < 0.01


def test_trunc_normal_default_reproducible_and_errors():
    mg.manual_seed(0)
    w = init.trunc_normal_(nn.Parameter(mg.zeros(300, 300))).numpy()
    assert w.dtype == np.float32 and w.min() >= -2 and w.max() <= 2
    assert abs(w.std() - _truncated_moments(0, 1, -2, 2)[1]) < 0.01
    mg.manual_seed(0)
    assert np.array_equal(w, init.trunc_normal_(mg.zeros(300, 300)).numpy())
    assert np.array_equal(init.trunc_normal_(mg.zeros(5), generator=3).numpy(),
                          init.trunc_normal_(mg.zeros(5), generator=3).numpy())
    with pytest.raises(ValueError, match="std must be > 0"):
        init.trunc_normal_(mg.zeros(3), std=0.0)
    with pytest.raises(ValueError, match="needs a < b"):
        init.trunc_normal_(mg.zeros(3), a=1.0, b=1.0)
    with pytest.raises(TypeError, match="floating-point"):
        init.trunc_normal_(mg.zeros(3, dtype=mg.int64))
    with pytest.raises(ValueError, match="float64 cannot represent"):
        init.trunc_normal_(mg.zeros(3), a=100.0, b=101.0)


@pytest.mark.parametrize("shape", [(3, 7), (7, 3), (5, 5), (4, 2, 3)])
def test_orthogonal_rows_or_columns_are_orthonormal(shape):
    gain = 1.5
    w = init.orthogonal_(nn.Parameter(mg.zeros(*shape, dtype=mg.float64)), gain,
                         generator=1).numpy().reshape(shape[0], -1)
    rows, cols = w.shape
    gram = w @ w.T if rows <= cols else w.T @ w            # QQᵀ or QᵀQ
    np.testing.assert_allclose(gram, gain ** 2 * np.eye(min(rows, cols)), atol=1e-12)
    # PyTorch's construction: Q of the QR of the same normal draws (transposed when wide),
    # with R's diagonal made positive, so Qᵀ·draws is upper triangular with a positive one
    draws = np.random.default_rng(1).standard_normal((rows, cols))
    tall, q = (draws, w / gain) if rows >= cols else (draws.T, w.T / gain)
    r = q.T @ tall
    np.testing.assert_allclose(np.tril(r, -1), 0, atol=1e-10)
    assert (np.diag(r) > 0).all()


def test_orthogonal_float32_empty_and_errors():
    w = init.orthogonal_(mg.zeros(64, 32)).numpy()
    np.testing.assert_allclose(w.T @ w, np.eye(32), atol=1e-5)
    assert init.orthogonal_(mg.zeros(0, 3)).shape == (0, 3)
    with pytest.raises(ValueError, match=r"at least 2 dims, got shape \(4,\)"):
        init.orthogonal_(mg.zeros(4))
    with pytest.raises(TypeError, match="floating-point"):
        init.orthogonal_(mg.zeros(3, 3, dtype=mg.int64))


def test_eye():
    assert init.eye_(mg.zeros(3, 3)).numpy().tolist() == np.eye(3).tolist()
    w = nn.Parameter(mg.ones(2, 4))
    assert init.eye_(w) is w and w.numpy().tolist() == np.eye(2, 4).tolist()
    assert init.eye_(mg.zeros(3, 2, dtype=mg.int64)).numpy().tolist() == np.eye(3, 2).tolist()
    for shape in [(3,), (2, 2, 2)]:
        with pytest.raises(ValueError, match="needs a 2-D tensor"):
            init.eye_(mg.zeros(*shape))


# ---- parameters as one vector ---------------------------------------------------------------
def test_parameters_to_vector_round_trip():
    mg.manual_seed(0)
    model = nn.Sequential(nn.Linear(3, 4), nn.Linear(4, 2, bias=False))
    params = list(model.parameters())
    vec = parameters_to_vector(model.parameters())
    assert vec.shape == (3 * 4 + 4 + 4 * 2,)
    np.testing.assert_array_equal(vec.numpy(), np.concatenate([p.numpy().ravel()
                                                               for p in params]))
    vec.sum().backward()                                   # differentiable: grads of 1
    assert all(np.array_equal(p.grad.numpy(), np.ones(p.shape)) for p in params)
    new = mg.arange(vec.numel(), dtype=mg.float64)         # cast into each float32 param
    vector_to_parameters(new, model.parameters())
    assert [p is q for p, q in zip(params, model.parameters())] == [True] * 3
    np.testing.assert_array_equal(parameters_to_vector(model.parameters()).numpy(),
                                  np.arange(vec.numel()))
    assert model[1].weight.numpy().tolist() == [[16, 17, 18, 19], [20, 21, 22, 23]]
    torch = pytest.importorskip("torch")                  # the order is PyTorch's
    t = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Linear(4, 2, bias=False))
    model.load_state_dict(t.state_dict())
    np.testing.assert_array_equal(parameters_to_vector(model.parameters()).numpy(),
                                  torch.nn.utils.parameters_to_vector(t.parameters())
                                  .detach().numpy())


def test_vector_to_parameters_errors():
    params = [nn.Parameter(mg.zeros(2, 3)), nn.Parameter(mg.zeros(4))]
    with pytest.raises(ValueError, match=r"1-D vector of 10 elements \(the 2 parameters "
                                         r"together\), got shape \(9,\)"):
        vector_to_parameters(mg.zeros(9), params)
    with pytest.raises(ValueError, match="got shape"):
        vector_to_parameters(mg.zeros(11), params)
    with pytest.raises(ValueError, match=r"got shape \(2, 5\)"):
        vector_to_parameters(mg.zeros(2, 5), params)
    with pytest.raises(TypeError, match="expected a Tensor, got ndarray"):
        vector_to_parameters(np.zeros(10), params)
    with pytest.raises(ValueError, match="no parameters"):
        parameters_to_vector([])
    assert not any(p.numpy().any() for p in params)        # nothing written by a failure


# ---- get_buffer -----------------------------------------------------------------------------
def test_get_buffer_as_torch():
    model = nn.Sequential(nn.Linear(2, 3), BatchNorm1d(3))
    assert model.get_buffer("1.running_mean") is model[1].running_mean
    assert model[1].get_buffer("num_batches_tracked") is model[1].num_batches_tracked
    with pytest.raises(AttributeError, match="`weight` is not a buffer"):
        model.get_buffer("1.weight")
    with pytest.raises(AttributeError, match="BatchNorm1d has no attribute `nope`"):
        model.get_buffer("1.nope")
    with pytest.raises(AttributeError, match="Sequential has no attribute `5`"):
        model.get_buffer("5.running_mean")
    assert model.get_parameter("1.weight") is model[1].weight     # its sibling still works
    with pytest.raises(AttributeError, match="`running_var` is not an nn.Parameter"):
        model.get_parameter("1.running_var")
    torch = pytest.importorskip("torch")
    t = torch.nn.Sequential(torch.nn.Linear(2, 3), torch.nn.BatchNorm1d(3))
    assert t.get_buffer("1.running_mean") is t[1].running_mean
