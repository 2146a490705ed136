"""BatchNorm1d and F.batch_norm: against PyTorch (outputs, gradients, running statistics
over several steps, eval mode, state-dict names), float64 gradient checks to second order
(no torch needed), and the errors for bad input."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.nn.batchnorm import BatchNorm1d
from minigrad.ops.batch_norm import batch_norm
from nn_helpers import compare_with_torch, gradcheck_module


def _torch():
    return pytest.importorskip("torch")


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape) * 2.0 + 0.5


def _pair(torch, seed=0, **kw):
    """A minigrad and a torch BatchNorm1d(3) in float64 with the same random affine weights."""
    m, t = BatchNorm1d(3, **kw).double(), torch.nn.BatchNorm1d(3, **kw).double()
    rng = np.random.default_rng(seed)
    with torch.no_grad():
        for p in t.parameters():
            p.copy_(torch.tensor(rng.standard_normal(3)))
    m.load_state_dict({k: v.numpy() for k, v in t.state_dict().items()})
    return m, t


def _step(torch, m, t, x, seed):
    """One forward and backward of both with the same random output weighting; asserts equal
    outputs and input gradients."""
    g = np.random.default_rng(seed).standard_normal(x.shape)
    xm, xt = mg.tensor(x, requires_grad=True), torch.tensor(x, requires_grad=True)
    ym, yt = m(xm), t(xt)
    np.testing.assert_allclose(ym.numpy(), yt.detach().numpy(), rtol=1e-10, atol=1e-10)
    (ym * mg.tensor(g)).sum().backward()
    (yt * torch.tensor(g)).sum().backward()
    np.testing.assert_allclose(xm.grad.numpy(), xt.grad.numpy(), rtol=1e-9, atol=1e-9)


def _assert_same_state(m, t):
    ts = t.state_dict()
    assert list(m.state_dict()) == list(ts)
    for k, v in m.state_dict().items():
        np.testing.assert_allclose(v.numpy(), ts[k].numpy(), rtol=1e-10, atol=1e-12,
                                   err_msg=k)
    for n, p in t.named_parameters():
        np.testing.assert_allclose(dict(m.named_parameters())[n].grad.numpy(),
                                   p.grad.numpy(), rtol=1e-9, atol=1e-9, err_msg=n)


@pytest.mark.parametrize("shape", [(6, 3), (4, 3, 5)], ids=["2d", "3d"])
@pytest.mark.parametrize("momentum", [0.1, None], ids=["momentum", "cumulative"])
def test_training_steps_then_eval_match_torch(shape, momentum):
    torch = _torch()
    m, t = _pair(torch, momentum=momentum)
    for step in range(4):       # gradients of weight and bias accumulate over the steps
        _step(torch, m, t, _x(*shape, seed=step), seed=10 + step)
    _assert_same_state(m, t)    # running_mean, running_var, num_batches_tracked, grads
    assert int(m.num_batches_tracked) == 4 and m.num_batches_tracked.dtype == mg.int64
    m.eval(), t.eval()
    _step(torch, m, t, _x(*shape, seed=9), seed=19)   # eval: the running statistics
    _assert_same_state(m, t)                          # and eval changes none of them


@pytest.mark.parametrize("kw", [dict(affine=False), dict(track_running_stats=False),
                                dict(affine=False, track_running_stats=False),
                                dict(bias=False), dict(eps=1e-2, momentum=0.5)],
                         ids=["no_affine", "no_stats", "neither", "no_bias", "eps_momentum"])
def test_options_match_torch_in_training_and_eval(kw):
    torch = _torch()
    m, t = _pair(torch, **kw)
    for step in range(2):
        _step(torch, m, t, _x(5, 3, 2, seed=step), seed=step)
    m.eval(), t.eval()                  # without running stats, eval uses the batch's
    _step(torch, m, t, _x(5, 3, 2, seed=7), seed=7)
    _assert_same_state(m, t)
    assert repr(m) == repr(t)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("train", [True, False], ids=["train", "eval"])
def test_one_step_matches_torch_with_the_layer_helper(dtype, train):
    torch = _torch()
    t = torch.nn.BatchNorm1d(4)
    with torch.no_grad():               # running statistics other than 0 and 1
        t.running_mean.copy_(torch.tensor([0.5, -1.0, 0.0, 2.0]))
        t.running_var.copy_(torch.tensor([2.0, 0.5, 1.0, 3.0]))
        t.weight.copy_(torch.tensor([1.5, -0.5, 1.0, 2.0]))
    m = BatchNorm1d(4)
    m.train(train), t.train(train)
    compare_with_torch(m, t, [_x(5, 4, 3)], dtype)


def test_state_dict_keys_and_loading_equal_torch():
    torch = _torch()
    for kw in (dict(), dict(affine=False), dict(track_running_stats=False), dict(bias=False)):
        assert list(BatchNorm1d(3, **kw).state_dict()) == \
            list(torch.nn.BatchNorm1d(3, **kw).state_dict()), kw
    t = torch.nn.BatchNorm1d(3)
    t(torch.tensor(_x(8, 3)).float())          # trained stats, loaded into minigrad
    m = BatchNorm1d(3)
    m.load_state_dict(t.state_dict())
    assert int(m.num_batches_tracked) == 1
    m.eval(), t.eval()
    x = _x(4, 3, seed=1).astype("float32")
    np.testing.assert_allclose(m(mg.tensor(x)).numpy(), t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-5, atol=1e-6)
    assert m.get_buffer("running_var") is m.running_var


def test_functional_batch_norm_matches_torch_and_updates_given_stats():
    torch = _torch()
    import torch.nn.functional as TF
    x, w, b = _x(6, 3, 4), _x(3, seed=1), _x(3, seed=2)
    rm, rv = mg.tensor(_x(3, seed=3)), mg.tensor(np.abs(_x(3, seed=4)))
    trm, trv = torch.tensor(rm.numpy()), torch.tensor(rv.numpy())
    for training in (True, False):
        y = batch_norm(mg.tensor(x), rm, rv, mg.tensor(w), mg.tensor(b), training, 0.3, 1e-3)
        ty = TF.batch_norm(torch.tensor(x), trm, trv, torch.tensor(w), torch.tensor(b),
                           training, 0.3, 1e-3)
        np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-10, atol=1e-10)
        np.testing.assert_allclose(rm.numpy(), trm.numpy(), rtol=1e-12)
        np.testing.assert_allclose(rv.numpy(), trv.numpy(), rtol=1e-12)
    y = batch_norm(mg.tensor(x), None, None, training=True)    # batch stats, nothing kept
    ty = TF.batch_norm(torch.tensor(x), None, None, training=True)
    np.testing.assert_allclose(y.numpy(), ty.numpy(), rtol=1e-10, atol=1e-10)


# ---- self-contained: gradients to second order, float64, no torch ------------------------
@pytest.mark.parametrize("shape", [(5, 3), (3, 3, 4)], ids=["2d", "3d"])
def test_training_forward_passes_gradcheck_and_gradgradcheck(shape):
    mg.manual_seed(0)
    x = mg.randn(*shape, dtype=mg.float64, requires_grad=True)
    w = mg.randn(3, dtype=mg.float64, requires_grad=True)
    b = mg.randn(3, dtype=mg.float64, requires_grad=True)

    def f(x, w, b):
        return batch_norm(x, None, None, w, b, training=True, eps=1e-3)
    assert mg.gradcheck(f, [x, w, b])
    assert mg.gradgradcheck(f, [x, w, b])
    m = BatchNorm1d(3)                      # the layer: input, weight and bias, training
    with mg.no_grad():
        m.weight.copy_(mg.tensor([0.5, -1.5, 2.0]))
        m.bias.copy_(mg.tensor([0.1, 0.2, -0.3]))
    gradcheck_module(m, mg.randn(*shape))
    assert int(m.num_batches_tracked) > 0


def test_eval_forward_passes_gradcheck_and_gradgradcheck():
    mg.manual_seed(1)
    x = mg.randn(4, 3, 2, dtype=mg.float64, requires_grad=True)
    w = mg.randn(3, dtype=mg.float64, requires_grad=True)
    rm, rv = mg.randn(3, dtype=mg.float64), mg.rand(3, dtype=mg.float64) + 0.5

    def f(x, w):
        return batch_norm(x, rm, rv, w, None, training=False)
    assert mg.gradcheck(f, [x, w]) and mg.gradgradcheck(f, [x, w])


def test_running_stats_follow_the_formulas():
    """Without torch: the running mean and unbiased variance, by momentum and cumulative."""
    xs = [_x(5, 3, 2, seed=s).astype("float32") for s in range(3)]   # the layers' dtype
    m, avg = BatchNorm1d(3), BatchNorm1d(3, momentum=None)
    for x in xs:
        m(mg.tensor(x)), avg(mg.tensor(x))
    mean, var = np.zeros(3), np.ones(3)
    for x in xs:
        mean = 0.9 * mean + 0.1 * x.mean((0, 2))
        var = 0.9 * var + 0.1 * x.var((0, 2), ddof=1)
    np.testing.assert_allclose(m.running_mean.numpy(), mean, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(m.running_var.numpy(), var, rtol=1e-5)
    np.testing.assert_allclose(avg.running_mean.numpy(),
                               np.mean([x.mean((0, 2)) for x in xs], 0), rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(avg.running_var.numpy(),
                               np.mean([x.var((0, 2), ddof=1) for x in xs], 0), rtol=1e-5)
    y = m.train()(mg.tensor(xs[0])).numpy()          # training output: the batch's stats
    np.testing.assert_allclose(y.mean((0, 2)), 0, atol=1e-5)
    np.testing.assert_allclose(y.var((0, 2)), 1, rtol=1e-3)


def test_a_graph_built_before_a_running_stats_update_still_backpropagates():
    m = BatchNorm1d(3)
    x = mg.randn(4, 3, requires_grad=True)
    y = m(x)
    m(mg.randn(4, 3))                       # updates the buffers in place
    y.sum().backward()                      # the buffers are not in the graph of y
    np.testing.assert_allclose(x.grad.numpy(), 0, atol=1e-5)   # Σ of a normalised column


def test_dtypes_and_devices_of_buffers():
    m = BatchNorm1d(3, dtype=mg.float64)
    assert m.running_mean.dtype == mg.float64 and m.num_batches_tracked.dtype == mg.int64
    m.float()
    assert m.running_var.dtype == mg.float32 and m.num_batches_tracked.dtype == mg.int64
    x = mg.randn(6, 3)
    y16 = BatchNorm1d(3).half()(x.half())             # statistics in float32 inside
    assert y16.dtype == mg.float16
    np.testing.assert_allclose(y16.float().numpy(), BatchNorm1d(3)(x).numpy(), atol=2e-3)
    assert m.get_buffer("num_batches_tracked") is m.num_batches_tracked
    assert BatchNorm1d(3, track_running_stats=False).get_buffer("running_mean") is None


def test_reset_running_stats_and_empty_batch():
    m = BatchNorm1d(2)
    m(mg.randn(4, 2) * 3 + 1)
    m.reset_running_stats()
    assert m.running_mean.numpy().tolist() == [0, 0] and m.running_var.numpy().tolist() == \
        [1, 1] and int(m.num_batches_tracked) == 0
    assert m(mg.zeros(0, 2)).shape == (0, 2)          # as PyTorch: counted, stats untouched
    assert m.running_mean.numpy().tolist() == [0, 0] and int(m.num_batches_tracked) == 1


def test_the_same_on_every_device(device):
    x = _x(6, 3, 2).astype("float32")
    g = _x(6, 3, 2, seed=1).astype("float32")
    results = []
    for dev in ("cpu", device):
        m = BatchNorm1d(3, momentum=None, device=dev)
        assert m.running_var.device == dev and m.num_batches_tracked.device == dev
        xt = mg.tensor(x, device=dev, requires_grad=True)
        (m(xt) * mg.tensor(g, device=dev)).sum().backward()
        m(xt * 2)
        y = m.eval()(xt)
        results.append([y.numpy(), xt.grad.numpy(), m.weight.grad.numpy(),
                        m.running_mean.numpy(), m.running_var.numpy()])
        assert int(m.num_batches_tracked) == 2
    for a, b in zip(*results):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-5)


def test_stays_on_the_device(spy):
    """On the spy device (a stand-in for CuPy that refuses NumPy on its data), training,
    the running-statistics update and eval never touch the host arrays."""
    m = BatchNorm1d(3, momentum=None, device=spy)
    x = mg.tensor(_x(6, 3, 2).astype("float32"), device=spy, requires_grad=True)
    m(x).sum().backward()
    assert m.eval()(x).device == spy and x.grad.device == spy


# ---- errors ---------------------------------------------------------------------------------
def test_bad_input_errors_are_clear():
    m = BatchNorm1d(3)
    with pytest.raises(ValueError, match=r"BatchNorm1d\(3\): input has shape \(4, 5\), "
                                         r"expected 3 channels at dim 1"):
        m(mg.randn(4, 5))
    with pytest.raises(ValueError, match="expected 3 channels"):
        m(mg.randn(4, 2, 3))
    with pytest.raises(ValueError, match=r"expected 2D or 3D input.*4D"):
        m(mg.randn(2, 3, 2, 2))
    for shape in [(1, 3), (1, 3, 1)]:
        with pytest.raises(ValueError, match="Expected more than 1 value per channel when "
                                             "training"):
            m(mg.randn(*shape))
    assert int(m.num_batches_tracked) == 0            # a batch that raised is not counted
    m(mg.randn(1, 3, 2))                              # 2 values per channel: fine
    assert m.eval()(mg.randn(1, 3)).shape == (1, 3)   # eval: the running statistics
    x = mg.randn(4, 3)
    with pytest.raises(ValueError, match=r"weight has shape \(2,\).*expected shape \(3,\)"):
        batch_norm(x, None, None, mg.ones(2), training=True)
    with pytest.raises(ValueError, match=r"running_mean has shape \(4,\)"):
        batch_norm(x, mg.zeros(4), mg.ones(4))
    with pytest.raises(ValueError, match="must be given in evaluation mode"):
        batch_norm(x, None, None, training=False)
    with pytest.raises(ValueError, match="both be None or neither"):
        batch_norm(x, mg.zeros(3), None, training=True)
    with pytest.raises(ValueError, match=r"channels at dim 1, got shape \(3,\)"):
        batch_norm(mg.randn(3), None, None, training=True)
    with pytest.raises(TypeError, match="floating-point"):
        batch_norm(mg.tensor([[1, 2], [3, 4]]), None, None, training=True)
    with pytest.raises(TypeError, match="momentum must be a number"):
        batch_norm(x, mg.zeros(3), mg.ones(3), training=True, momentum=None)
    with pytest.raises(TypeError, match="num_features"):
        BatchNorm1d(2.5)
    with pytest.raises(ValueError, match="momentum"):
        BatchNorm1d(3, momentum=1.5)


def test_a_state_dict_without_num_batches_tracked_loads_and_keeps_the_count():
    """State dicts saved before the count existed lack it: PyTorch loads them strictly and
    keeps the module's count; any other missing key is still an error."""
    m = mg.nn.Sequential(BatchNorm1d(3))
    m.train()
    m(mg.randn(4, 3))
    sd = {k: v for k, v in m.state_dict().items() if not k.endswith("num_batches_tracked")}
    sd["0.running_mean"] = mg.full((3,), 0.5)
    fresh = mg.nn.Sequential(BatchNorm1d(3))
    fresh[0].num_batches_tracked.fill_(7)
    assert fresh.load_state_dict(sd).missing_keys == []
    assert fresh[0].running_mean.numpy().tolist() == [0.5] * 3
    assert int(fresh[0].num_batches_tracked) == 7
    del sd["0.running_var"]
    with pytest.raises(RuntimeError, match=r"missing keys: 0\.running_var$"):
        fresh.load_state_dict(sd)
