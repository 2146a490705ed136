"""PyTorch's cheaper Tensor and Module methods that minigrad lacked: hardshrink/prelu,
narrow_copy, the unsafe_ splits, the flags of what minigrad's tensors never are, layout,
pin_memory/share_memory_, new, the cauchy_/log_normal_/geometric_ fills, apply_/map_,
triangular_solve, ormqr, bfloat16's refusal; Module.set_submodule, to_empty, type,
share_memory, compile, register_backward_hook and bfloat16's refusal."""
import pickle

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


def _pair(torch, a, requires_grad=True):
    a = np.asarray(a)
    return (mg.tensor(a, requires_grad=requires_grad),
            torch.tensor(a, requires_grad=requires_grad))


def _close(x, t, atol=1e-6):
    np.testing.assert_allclose(x.numpy() if isinstance(x, mg.Tensor) else x,
                               t.detach().numpy(), rtol=1e-6, atol=atol)


# ---- activations and copies under their Tensor spellings ---------------------------------
@pytest.mark.parametrize("lambd", [0.5, -1.0])
def test_hardshrink_method_values_and_grad_as_torch(torch, lambd):
    a = np.array([-1.5, -0.3, 0.2, 0.7, 2.0])
    x, t = _pair(torch, a)
    y, u = x.hardshrink(lambd), t.hardshrink(lambd)
    _close(y, u)
    y.sum().backward(), u.sum().backward()
    _close(x.grad, t.grad)


def test_prelu_method_values_grads_and_errors(torch):
    a = np.random.default_rng(0).standard_normal((2, 3, 4))
    x, t = _pair(torch, a)
    w, v = _pair(torch, np.array([0.1, 0.2, 0.3]))
    y, u = x.prelu(w), t.prelu(v)
    _close(y, u)
    (y * y).sum().backward(), (u * u).sum().backward()
    _close(x.grad, t.grad), _close(w.grad, v.grad)
    with pytest.raises(ValueError, match="weight has 2 parameters"):
        x.prelu(mg.ones(2, dtype=mg.float64))


def test_narrow_copy_is_a_copy_with_narrows_gradient(torch):
    x, t = _pair(torch, np.arange(12.0).reshape(3, 4))
    y, u = x.narrow_copy(1, 1, 2), t.narrow_copy(1, 1, 2)
    _close(y, u)
    assert not np.shares_memory(y.numpy(), x.numpy())
    (y * 3).sum().backward(), (u * 3).sum().backward()
    _close(x.grad, t.grad)


def test_unsafe_splits_are_chunk_and_split(torch):
    a = np.arange(12.0).reshape(3, 4)
    x, t = mg.tensor(a), torch.tensor(a)
    for name, args in (("unsafe_chunk", (2, 1)), ("unsafe_split", (3, 1)),
                       ("unsafe_split_with_sizes", ([1, 3], 1))):
        ours, theirs = getattr(x, name)(*args), getattr(t, name)(*args)
        assert len(ours) == len(theirs)
        for y, u in zip(ours, theirs):
            _close(y, u)


# ---- what minigrad's tensors never are -----------------------------------------------------
def test_flags_as_torch_for_a_plain_cpu_tensor(torch):
    x, t = mg.randn(2, 3), torch.randn(2, 3)
    for name in ("is_conj", "is_neg", "is_inference", "is_pinned", "is_shared"):
        assert getattr(x, name)() is getattr(t, name)() is False, name
    for name in ("is_sparse", "is_quantized", "is_meta", "is_nested", "is_mkldnn"):
        assert getattr(x, name) is getattr(t, name) is False, name
    assert x.resolve_conj() is x and x.resolve_neg() is x


def test_layout_is_the_strided_singleton():
    x = mg.randn(2)
    assert x.layout is mg.strided and x[::2].layout is mg.strided
    assert repr(mg.strided) == "minigrad.strided"
    assert pickle.loads(pickle.dumps(mg.strided)) is mg.strided


def test_pin_memory_is_a_differentiable_copy_and_share_memory_a_no_op():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    p = x.pin_memory()
    assert p is not x and not np.shares_memory(p.numpy(), x.detach().numpy())
    (p * 2).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), [2.0, 2.0])
    assert x.share_memory_() is x and not x.is_shared()


def test_pin_memory_refuses_a_gpu_tensor(spy):
    with pytest.raises(RuntimeError, match="only CPU tensors"):
        mg.ones(2, device=spy).pin_memory()


def test_bfloat16_is_refused_with_an_alternative():
    with pytest.raises(TypeError, match="half"):
        mg.ones(2).bfloat16()


# ---- new, the legacy constructor -----------------------------------------------------------
def test_new_as_torch(torch):
    x, t = mg.zeros(2, dtype=mg.float64), torch.zeros(2, dtype=torch.float64)
    for args in ((), (2, 3)):
        y, u = x.new(*args), t.new(*args)
        assert y.shape == tuple(u.shape) and y.dtype == mg.float64
    for data in ([1, 2], (2, 3), [[1.5], [2.0]]):
        y, u = x.new(data), t.new(data)
        assert y.dtype == mg.float64 and not y.requires_grad
        _close(y, u)
    w = mg.ones(2, dtype=mg.float64, requires_grad=True)
    alias = x.new(w)
    assert np.shares_memory(alias.data, w.data) and alias.requires_grad
    with pytest.raises(TypeError, match="float64"):
        x.new(mg.ones(2, dtype=mg.int64))
    with pytest.raises(TypeError, match="sequence"):
        x.new(2.5)


def test_new_of_a_tensor_is_an_alias_on_its_graph_as_torch(torch):
    """torch's t.new(w) aliases w, graph included: gradients through it reach w (it was
    detached, so they were silently lost)."""
    w, tw = _pair(torch, [1.0, 2.0])
    a, ta = mg.zeros(1, dtype=mg.float64).new(w), torch.zeros(1, dtype=torch.float64).new(tw)
    (a * a).sum().backward()
    (ta * ta).sum().backward()
    assert a.requires_grad and not a.is_leaf
    _close(w.grad, tw.grad)
    a.data[0] = 7.0                                       # the same memory
    assert w.data[0] == 7.0


# ---- the random fills ----------------------------------------------------------------------
def test_cauchy_log_normal_geometric_draw_from_the_generator():
    rng = np.random.default_rng(3)
    x = mg.zeros(4, dtype=mg.float64).cauchy_(1.0, 2.0, generator=np.random.default_rng(3))
    np.testing.assert_allclose(x.numpy(), 1.0 + 2.0 * rng.standard_cauchy(4))
    y = mg.zeros(4, dtype=mg.float64).log_normal_(0.5, 0.25, generator=7)
    np.testing.assert_allclose(y.numpy(), np.random.default_rng(7).lognormal(0.5, 0.25, 4))
    z = mg.zeros(500, dtype=mg.int64).geometric_(0.25, generator=1)
    assert z.dtype == mg.int64 and z.numpy().min() >= 1
    assert abs(z.numpy().mean() - 4.0) < 0.5                  # mean 1/p
    mg.manual_seed(5)
    a = mg.zeros(3).cauchy_()
    mg.manual_seed(5)
    np.testing.assert_array_equal(a.numpy(), mg.zeros(3).cauchy_().numpy())


@pytest.mark.parametrize("call, err, match", [
    (lambda: mg.zeros(3).cauchy_(0, 0), ValueError, "sigma must be a number > 0"),
    (lambda: mg.zeros(3).log_normal_(0, -1), ValueError, "std must be a number > 0"),
    (lambda: mg.zeros(3).geometric_(1), ValueError, r"p must be a number in \(0, 1\)"),
    (lambda: mg.zeros(3).geometric_(0), ValueError, r"in \(0, 1\)"),
    (lambda: mg.zeros(3, dtype=mg.int64).cauchy_(), TypeError, "floating-point"),
    (lambda: mg.zeros(3, dtype=mg.int64).log_normal_(), TypeError, "floating-point"),
    (lambda: mg.zeros(3, dtype=mg.bool).geometric_(0.5), TypeError, "numeric"),
    (lambda: mg.zeros(3, requires_grad=True).cauchy_(), RuntimeError, "leaf"),
])
def test_fills_refuse_what_torch_refuses(call, err, match):
    with pytest.raises(err, match=match):
        call()


# ---- apply_ and map_ -----------------------------------------------------------------------
def test_apply_and_map_as_torch(torch):
    x, t = mg.arange(4.0), torch.arange(4.0)
    _close(x.apply_(lambda v: v * 2 + 1), t.apply_(lambda v: v * 2 + 1))
    _close(x.map_(mg.ones(1), lambda a, b: a - b), t.map_(torch.ones(1), lambda a, b: a - b))
    n, u = mg.ones(2, dtype=mg.int64), torch.ones(2, dtype=torch.int64)
    _close(n.apply_(lambda v: v * 2.7), u.apply_(lambda v: v * 2.7))       # truncated
    view = mg.zeros(2, 3)
    view[1].apply_(lambda v: 5.0)                                           # through a view
    np.testing.assert_array_equal(view.numpy(), [[0, 0, 0], [5, 5, 5]])
    v0 = x._version
    x.apply_(lambda v: v)
    assert x._version == v0 + 1


def test_apply_and_map_refusals(spy):
    with pytest.raises(RuntimeError, match="requires grad"):
        mg.ones(2, requires_grad=True).apply_(lambda v: v)
    with pytest.raises(RuntimeError, match="requires grad"):
        (mg.ones(2, requires_grad=True) * 1).apply_(lambda v: v)
    with pytest.raises(TypeError, match="return a number"):
        mg.ones(2).apply_(lambda v: "a")
    with pytest.raises(TypeError, match="got NoneType"):     # (was a silent NaN)
        mg.ones(2).apply_(lambda v: None)
    with pytest.raises(TypeError, match="got NoneType"):
        mg.ones(2).map_(mg.ones(2), lambda a, b: None)
    with pytest.raises(TypeError, match="float32"):
        mg.ones(2).map_(mg.ones(2, dtype=mg.int64), lambda a, b: a)
    with pytest.raises(ValueError, match="does not broadcast"):
        mg.ones(4).map_(mg.ones(3), lambda a, b: a)
    with pytest.raises(RuntimeError, match="only for CPU tensors"):
        mg.ones(2, device=spy).apply_(lambda v: v)


@pytest.mark.parametrize("value", [300, 127.9, -129.0, float("nan")])
def test_apply_refuses_a_value_its_integer_dtype_cannot_hold_as_torch(torch, value):
    """int8's apply_ returning 300 wrapped round silently to 44; torch refuses."""
    with pytest.raises(RuntimeError):
        torch.tensor([1], dtype=torch.int8).apply_(lambda v: value)
    x = mg.tensor([1, 2], dtype=mg.int8)
    with pytest.raises(RuntimeError, match="int8 cannot hold"):
        x.apply_(lambda v: value)
    assert x.tolist() == [1, 2]                           # left as it was
    assert mg.tensor([1, 2], dtype=mg.int8).apply_(lambda v: 126.9 * v - 254).tolist() == [-127, 0]


# ---- triangular_solve and ormqr ------------------------------------------------------------
@pytest.mark.filterwarnings("ignore:torch.triangular_solve is deprecated")
@pytest.mark.parametrize("upper, transpose, unit", [
    (True, False, False), (False, False, False), (True, True, False), (False, True, True)])
def test_triangular_solve_values_and_grads_as_torch(torch, upper, transpose, unit):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((3, 3)) + 4 * np.eye(3)
    A, TA = _pair(torch, a)
    B, TB = _pair(torch, rng.standard_normal((2, 3, 2)))
    ours = B.triangular_solve(A, upper, transpose, unit)
    theirs = TB.triangular_solve(TA, upper, transpose, unit)
    _close(ours.solution, theirs.solution), _close(ours.cloned_coefficient,
                                                   theirs.cloned_coefficient)
    assert ours.cloned_coefficient.shape == (2, 3, 3)
    (ours.solution ** 2).sum().backward(), (theirs.solution ** 2).sum().backward()
    _close(A.grad, TA.grad, 1e-10), _close(B.grad, TB.grad, 1e-10)
    with pytest.raises(ValueError, match="at least 2 dims"):
        mg.ones(3, dtype=mg.float64).triangular_solve(A)


@pytest.mark.parametrize("left, transpose", [(True, False), (True, True), (False, False),
                                             (False, True)])
@pytest.mark.parametrize("shape", [(5, 3), (3, 3)])
def test_ormqr_values_and_grads_as_torch(torch, left, transpose, shape):
    rng = np.random.default_rng(2)
    a, tau = (r.numpy() for r in torch.geqrf(torch.tensor(rng.standard_normal(shape))))
    c = rng.standard_normal((shape[0], 2) if left else (2, shape[0]))
    (A, TA), (T, TT), (C, TC) = _pair(torch, a), _pair(torch, tau), _pair(torch, c)
    y, u = A.ormqr(T, C, left, transpose), torch.ormqr(TA, TT, TC, left, transpose)
    _close(y, u, 1e-10)
    (y * y.detach().sin()).sum().backward(), (u * u.detach().sin()).sum().backward()
    for g, h in ((A, TA), (T, TT), (C, TC)):
        _close(g.grad, h.grad, 1e-10)
    _close(mg.ormqr(A, T, C, left, transpose), u, 1e-10)


def test_ormqr_refusals():
    a, tau = mg.randn(5, 3, dtype=mg.float64), mg.randn(3, dtype=mg.float64)
    with pytest.raises(ValueError, match="needs 5 rows"):
        a.ormqr(tau, mg.randn(4, 2, dtype=mg.float64))
    with pytest.raises(ValueError, match="needs 5 columns"):
        a.ormqr(tau, mg.randn(2, 4, dtype=mg.float64), left=False)
    with pytest.raises(TypeError, match="does not match"):
        a.ormqr(tau, mg.randn(5, 2))
    with pytest.raises(ValueError, match="at least 2 dims"):
        a.ormqr(tau, mg.randn(5, dtype=mg.float64))


# ---- Module ----------------------------------------------------------------------------------
def _nested():
    return nn.Sequential(nn.Linear(2, 3), nn.Sequential(nn.ReLU(), nn.Linear(3, 1)))


def test_set_submodule_as_torch():
    m = _nested()
    tanh = nn.Tanh()
    m.set_submodule("1.0", tanh)
    assert m.get_submodule("1.0") is tanh and m[1][0] is tanh
    m.set_submodule("1.extra", nn.ReLU())                 # a new name, strict=False
    assert isinstance(m.get_submodule("1.extra"), nn.ReLU)
    with pytest.raises(AttributeError, match="has no attribute `9`"):
        m.set_submodule("1.9", nn.ReLU(), strict=True)
    with pytest.raises(AttributeError, match="has no attribute `q`"):
        m.set_submodule("q.0", nn.ReLU())
    with pytest.raises(AttributeError, match="`in_features` is not an nn.Module"):
        m.set_submodule("0.in_features", nn.ReLU())
    with pytest.raises(AttributeError, match="`weight` is not an nn.Module"):
        m.set_submodule("0.weight.x", nn.ReLU())
    with pytest.raises(ValueError, match="target name"):
        m.set_submodule("", nn.ReLU())
    with pytest.raises(ValueError, match="not an nn.Module"):
        m.set_submodule("1.0", 5)


def test_to_empty_moves_and_keeps_values(spy):
    m = _nested()
    w = m[0].weight.numpy().copy()
    assert m.to_empty(device=spy, recurse=False) is m
    assert m[0].weight.device == "cpu"                   # not its own: left
    m.to_empty(device=spy)
    assert m[0].weight.device == spy and m[1][1].bias.device == spy
    np.testing.assert_array_equal(m[0].weight.to("cpu").numpy(), w)
    with pytest.raises(TypeError):
        m.to_empty(spy)                                   # device is keyword-only


def test_module_type_casts_every_parameter_and_buffer_as_torch(torch):
    m, tm = nn.Linear(2, 2), torch.nn.Linear(2, 2)
    m.register_buffer("idx", mg.arange(3)), tm.register_buffer("idx", torch.arange(3))
    assert m.type(mg.float64) is m and tm.type(torch.float64) is tm
    assert m.weight.dtype == mg.float64 and m.idx.dtype == mg.float64 == np.dtype(
        str(tm.idx.dtype).split(".")[1])
    m.type("torch.FloatTensor")
    assert m.weight.dtype == mg.float32 and m.idx.dtype == mg.float32
    with pytest.raises(TypeError, match="cannot become integers"):
        m.type(mg.int64)
    with pytest.raises(TypeError, match="half"):
        m.bfloat16()


def test_share_memory_compile_and_backward_hook():
    m = nn.Linear(2, 1)
    assert m.share_memory() is m and m.compile(fullgraph=True) is None
    seen = []
    handle = m.register_backward_hook(lambda mod, gi, go: seen.append((mod, gi, go)))
    x = mg.ones(1, 2, requires_grad=True)
    m(x).sum().backward()
    assert len(seen) == 1 and seen[0][0] is m
    np.testing.assert_allclose(seen[0][1][0].numpy(), m.weight.detach().numpy())
    handle.remove()
    m(x).sum().backward()
    assert len(seen) == 1
