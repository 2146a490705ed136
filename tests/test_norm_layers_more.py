"""Group, instance and local response normalisation (ops/norm_layers.py,
nn/normalization.py) and BatchNorm2d/3d (nn/batchnorm.py) against torch: values, gradients,
second order, running statistics, modules, reprs, state dicts, the spy device and errors."""
import warnings

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn.functional as F
from minigrad import nn
from op_helpers import (OpCase, check_vs_torch, check_gradcheck, check_spy_matches_cpu,
                        check_double_backward_vs_torch)


def _case(name, call, shapes, domain="real"):
    """An OpCase calling `call(F, *tensors)`, F minigrad's functional or torch's."""
    def torch_fn(*xs):
        import torch.nn.functional as TF
        return call(TF, *xs)
    return OpCase(name, lambda *xs: call(F, *xs), shapes, torch_fn=torch_fn, domain=domain)


CASES = [
    _case("group_norm", lambda F, x, w, b: F.group_norm(x, 3, w, b), ((2, 6, 2, 2), (6,), (6,))),
    _case("group_norm_1_group", lambda F, x: F.group_norm(x, 1, eps=1e-2), ((3, 4, 5),)),
    _case("group_norm_per_channel", lambda F, x, w: F.group_norm(x, 4, w), ((2, 4, 3), (4,))),
    _case("group_norm_2d", lambda F, x: F.group_norm(x, 2), ((3, 8),)),
    _case("instance_norm", lambda F, x, w, b: F.instance_norm(x, weight=w, bias=b),
          ((2, 3, 4, 2), (3,), (3,))),
    _case("instance_norm_1d", lambda F, x: F.instance_norm(x, eps=1e-3), ((2, 3, 5),)),
    _case("local_response_norm", lambda F, x: F.local_response_norm(x, 3, 0.1, 0.75, 1.0),
          ((2, 5, 3),)),
    _case("local_response_norm_even", lambda F, x: F.local_response_norm(x, 2, 0.5, 0.6, 2.0),
          ((2, 4, 2, 3),)),
    _case("local_response_norm_wide", lambda F, x: F.local_response_norm(x, 7, 0.3),
          ((1, 3, 2, 2, 2),)),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_as_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case):
    check_gradcheck(case, "cpu")


@pytest.mark.parametrize("case", CASES[::2], ids=str)
def test_double_backward_as_torch(case):
    check_double_backward_vs_torch(case, "cpu")


@pytest.mark.parametrize("case", CASES[::2], ids=str)
def test_on_the_gpu_stand_in(case, spy):
    check_spy_matches_cpu(case, spy)


# ---- running statistics ---------------------------------------------------------------
@pytest.mark.parametrize("use_input_stats", [True, False])
def test_instance_norm_running_stats_as_torch(use_input_stats, device):
    """Training moves running_mean / running_var towards the batch's average of each
    instance's mean and unbiased variance; use_input_stats=False normalises with them."""
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(0)
    x, mean, var = rng.standard_normal((3, 2, 5)), rng.standard_normal(2), rng.uniform(1, 2, 2)
    m_mean, m_var = mg.tensor(mean, device=device), mg.tensor(var, device=device)
    t_mean, t_var = torch.tensor(mean), torch.tensor(var)
    got = F.instance_norm(mg.tensor(x, device=device), m_mean, m_var,
                          use_input_stats=use_input_stats, momentum=0.3)
    want = torch.nn.functional.instance_norm(torch.tensor(x), t_mean, t_var,
                                             use_input_stats=use_input_stats, momentum=0.3)
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(m_mean.numpy(), t_mean.numpy(), rtol=1e-12)
    np.testing.assert_allclose(m_var.numpy(), t_var.numpy(), rtol=1e-12)


@pytest.mark.parametrize("name, shape", [("InstanceNorm1d", (2, 3, 5)),
                                         ("InstanceNorm1d", (3, 6)),       # unbatched
                                         ("InstanceNorm2d", (2, 3, 4, 3)),
                                         ("InstanceNorm3d", (3, 2, 3, 2))])
@pytest.mark.parametrize("kw", [{}, dict(affine=True, track_running_stats=True),
                                dict(track_running_stats=True, momentum=None)])
def test_instance_norm_modules_as_torch(name, shape, kw):
    """Training then eval, outputs and state dicts (names and values): momentum=None leaves
    the running statistics and the count as they are, as PyTorch's."""
    torch = pytest.importorskip("torch")
    mine, theirs = getattr(nn, name)(3, **kw), getattr(torch.nn, name)(3, **kw)
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    for training in (True, False):
        mine.train(training)
        theirs.train(training)
        np.testing.assert_allclose(mine(mg.tensor(x)).numpy(),
                                   theirs(torch.tensor(x)).detach().numpy(), atol=1e-5)
    assert mine.state_dict().keys() == theirs.state_dict().keys()
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(mine.state_dict()[key].numpy(), value.numpy(), atol=1e-6)


@pytest.mark.parametrize("name, shape", [("BatchNorm2d", (4, 3, 2, 3)),
                                         ("BatchNorm3d", (2, 3, 2, 2, 3))])
@pytest.mark.parametrize("kw", [{}, dict(momentum=None), dict(affine=False),
                                dict(track_running_stats=False)])
def test_batch_norm_2d_3d_as_torch(name, shape, kw):
    torch = pytest.importorskip("torch")
    mine, theirs = getattr(nn, name)(3, **kw), getattr(torch.nn, name)(3, **kw)
    assert repr(mine) == repr(theirs)
    rng = np.random.default_rng(2)
    for training in (True, True, False):
        mine.train(training)
        theirs.train(training)
        x = rng.standard_normal(shape).astype(np.float32)
        mx, tx = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
        got, want = mine(mx), theirs(tx)
        np.testing.assert_allclose(got.numpy(), want.detach().numpy(), atol=1e-5)
        (got * got).sum().backward()
        (want * want).sum().backward()
        np.testing.assert_allclose(mx.grad.numpy(), tx.grad.numpy(), atol=1e-4)
    assert mine.state_dict().keys() == theirs.state_dict().keys()
    for key, value in theirs.state_dict().items():
        np.testing.assert_allclose(mine.state_dict()[key].numpy(), value.numpy(), atol=1e-6)


def test_group_norm_module_as_torch():
    torch = pytest.importorskip("torch")
    mine, theirs = nn.GroupNorm(2, 4), torch.nn.GroupNorm(2, 4)
    with torch.no_grad():
        theirs.weight.copy_(torch.tensor([1.0, -2.0, 0.5, 3.0]))
        theirs.bias.copy_(torch.tensor([0.1, 0.2, -0.3, 0.0]))
    mine.load_state_dict({k: mg.tensor(v.numpy()) for k, v in theirs.state_dict().items()})
    x = np.random.default_rng(3).standard_normal((3, 4, 5)).astype(np.float32)
    np.testing.assert_allclose(mine(mg.tensor(x)).numpy(),
                               theirs(torch.tensor(x)).detach().numpy(), atol=1e-5)
    assert [n for n, _ in mine.named_parameters()] == ["weight", "bias"]


@pytest.mark.parametrize("make", [
    lambda nn: nn.GroupNorm(2, 6), lambda nn: nn.GroupNorm(3, 6, eps=1e-3, affine=False),
    lambda nn: nn.GroupNorm(1, 2, bias=False),
    lambda nn: nn.InstanceNorm1d(3), lambda nn: nn.InstanceNorm2d(4, affine=True),
    lambda nn: nn.InstanceNorm3d(2, momentum=None, track_running_stats=True),
    lambda nn: nn.LocalResponseNorm(2), lambda nn: nn.LocalResponseNorm(3, 1e-3, 0.5, 2),
    lambda nn: nn.BatchNorm2d(3), lambda nn: nn.BatchNorm3d(3, affine=False, momentum=None)])
def test_reprs_as_torch(make):
    torch = pytest.importorskip("torch")
    assert repr(make(nn)) == repr(make(torch.nn))


def test_float16_group_norm_is_computed_in_float32():
    """float16 squares overflow past 256: the statistics are float32's (layer norm's), the
    result float16, as PyTorch."""
    x = np.array([[[300.0, -200.0], [250.0, 100.0]]], np.float16)
    y = F.group_norm(mg.tensor(x), 1)
    assert y.dtype == mg.float16
    ref = x.astype(np.float32)
    want = (ref - ref.mean()) / np.sqrt(ref.var() + 1e-5)
    np.testing.assert_allclose(y.numpy().astype(np.float32), want, rtol=2e-3)


# ---- errors -----------------------------------------------------------------------------
@pytest.mark.parametrize("call, error, words", [
    (lambda x: F.group_norm(x, 4), ValueError, "divisible by num_groups"),
    (lambda x: F.group_norm(x, 3, mg.ones(5)), ValueError, "weight of shape \\(5,\\)"),
    (lambda x: F.group_norm(x[0, 0, 0], 1), ValueError, "at least 2 dims"),
    (lambda x: F.group_norm(x, 0), ValueError, "num_groups must be >= 1"),
    (lambda x: nn.GroupNorm(4, 6), ValueError, "must be divisible by num_groups"),
    (lambda x: nn.GroupNorm(3, 6)(x[:, :3]), ValueError, "number of channels"),
    (lambda x: F.instance_norm(x[:, :, :1, :1]), ValueError, "more than 1 spatial element"),
    (lambda x: F.instance_norm(x, use_input_stats=False), ValueError, "running_mean and"),
    (lambda x: F.instance_norm(x.long()), TypeError, "floating-point"),
    (lambda x: F.instance_norm(x, mg.zeros(5), mg.ones(5)), ValueError, "running_mean has"),
    (lambda x: nn.InstanceNorm2d(6)(x[0, 0]), ValueError, "expected 3D or 4D input"),
    (lambda x: nn.InstanceNorm2d(5, affine=True)(x), ValueError, "match num_features \\(5\\)"),
    (lambda x: nn.BatchNorm2d(6)(x[0]), ValueError, "expected 4D input"),
    (lambda x: nn.BatchNorm3d(6)(x), ValueError, "expected 5D input"),
    (lambda x: F.local_response_norm(x[0, 0], 2), ValueError, "3D or higher"),
    (lambda x: F.local_response_norm(x, 0), ValueError, "size must be >= 1")])
def test_errors_name_the_problem(call, error, words):
    with pytest.raises(error, match=words):
        call(mg.randn(2, 6, 3, 4))


def test_instance_norm_warns_of_unused_num_features_as_torch():
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nn.InstanceNorm1d(4)(mg.randn(2, 3, 5))
    assert any("does not match num_features" in str(w.message) for w in caught)
