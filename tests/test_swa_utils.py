"""minigrad.optim.swa_utils, as torch.optim.swa_utils: AveragedModel (SWA and EMA, with
and without buffers), update_bn over a minigrad DataLoader, and SWALR; against PyTorch
where it is installed (skipped elsewhere) and by their definitions without it."""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.optim import swa_utils
from minigrad.utils.data import DataLoader, TensorDataset


def _torch():
    return pytest.importorskip("torch")


def _model():
    return nn.Sequential(nn.Linear(3, 4), nn.BatchNorm1d(4), nn.Linear(4, 2))


def _models(torch):
    torch.manual_seed(0)
    tm = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.BatchNorm1d(4),
                             torch.nn.Linear(4, 2))
    mm = _model()
    mm.load_state_dict({k: v.detach().numpy() for k, v in tm.state_dict().items()})
    return mm, tm


AVERAGES = {
    "swa": lambda S: {},
    "swa-buffers": lambda S: dict(use_buffers=True),
    "ema-multi": lambda S: dict(multi_avg_fn=S.get_ema_multi_avg_fn(0.9)),
    "ema-multi-buffers": lambda S: dict(multi_avg_fn=S.get_ema_multi_avg_fn(0.9),
                                        use_buffers=True),
    "ema-one": lambda S: dict(avg_fn=S.get_ema_avg_fn(0.8), use_buffers=True),
    "swa-multi": lambda S: dict(multi_avg_fn=S.get_swa_multi_avg_fn()),
}


@pytest.mark.parametrize("kind", sorted(AVERAGES))
def test_averaged_model_matches_pytorch(kind):
    torch = _torch()
    from torch.optim import swa_utils as ts
    mm, tm = _models(torch)
    ours, theirs = (swa_utils.AveragedModel(mm, **AVERAGES[kind](swa_utils)),
                    ts.AveragedModel(tm, **AVERAGES[kind](ts)))
    rng = np.random.default_rng(0)
    for _ in range(5):
        for p, q in zip(mm.parameters(), tm.parameters()):
            with torch.no_grad():
                q.add_(torch.tensor(rng.standard_normal(tuple(q.shape)).astype(np.float32)))
            p.data[...] = q.detach().numpy()
        x = rng.standard_normal((5, 3)).astype(np.float32)
        mm(mg.tensor(x)), tm(torch.tensor(x))          # moves BatchNorm's statistics
        ours.update_parameters(mm)
        theirs.update_parameters(tm)
    want, got = theirs.state_dict(), ours.state_dict()
    assert list(got) == list(want)
    assert got["n_averaged"].dtype == mg.int64 and int(got["n_averaged"]) == 5
    for k, v in want.items():
        # (PyTorch's lerp fuses its multiply-add: the last bit may differ)
        np.testing.assert_allclose(got[k].numpy(), v.numpy(), rtol=1e-6, atol=1e-6,
                                   err_msg=k)
    x = rng.standard_normal((2, 3)).astype(np.float32)
    ours.eval(), theirs.eval()
    np.testing.assert_allclose(ours(mg.tensor(x)).numpy(), theirs(torch.tensor(x)).detach(),
                               rtol=1e-5, atol=1e-6)


def test_a_pytorch_averaged_model_state_dict_loads():
    torch = _torch()
    from torch.optim import swa_utils as ts
    mm, tm = _models(torch)
    theirs = ts.AveragedModel(tm)
    theirs.update_parameters(tm)
    ours = swa_utils.AveragedModel(mm)
    ours.load_state_dict({k: v.numpy() for k, v in theirs.state_dict().items()})
    assert int(ours.n_averaged) == 1


def test_swa_is_the_plain_mean_without_pytorch():
    lin = nn.Linear(2, 2)
    avg = swa_utils.AveragedModel(lin)
    seen = []
    for k in range(4):
        lin.weight.data[...] = k * 1.5 - 1
        seen.append(lin.weight.numpy().copy())
        avg.update_parameters(lin)
    np.testing.assert_allclose(avg.module.weight.numpy(), np.mean(seen, axis=0), rtol=1e-6)
    assert int(avg.n_averaged) == 4
    assert list(avg.state_dict()) == ["n_averaged", "module.weight", "module.bias"]


def test_ema_of_an_integer_buffer_truncates_as_pytorch():
    bn = nn.BatchNorm1d(2)
    avg = swa_utils.AveragedModel(bn, multi_avg_fn=swa_utils.get_ema_multi_avg_fn(0.5),
                                  use_buffers=True)
    for _ in range(3):
        bn(mg.randn(4, 2))
        avg.update_parameters(bn)
    # counts 1, 2, 3: 1, then trunc(0.5·1 + 0.5·2) = 1, then trunc(0.5·1 + 0.5·3) = 2
    assert int(avg.module.num_batches_tracked) == 2


def test_bad_arguments_are_refused():
    lin = nn.Linear(2, 2)
    with pytest.raises(ValueError, match="only one of avg_fn and multi_avg_fn"):
        swa_utils.AveragedModel(lin, avg_fn=swa_utils.get_ema_avg_fn(),
                                multi_avg_fn=swa_utils.get_ema_multi_avg_fn())
    for make in (swa_utils.get_ema_avg_fn, swa_utils.get_ema_multi_avg_fn):
        with pytest.raises(ValueError, match=r"Invalid decay value 1.5.*\[0,1\]"):
            make(1.5)
    opt = optim.SGD(lin.parameters(), lr=0.1)
    with pytest.raises(ValueError, match="swa_lr must have the same length"):
        swa_utils.SWALR(opt, [0.1, 0.2])
    with pytest.raises(ValueError, match="anneal_strategy must be one of"):
        swa_utils.SWALR(opt, 0.1, anneal_strategy="exp")
    with pytest.raises(ValueError, match="anneal_epochs must be equal or greater than 0"):
        swa_utils.SWALR(opt, 0.1, anneal_epochs=-1)


# ---- update_bn -----------------------------------------------------------------------
def test_update_bn_matches_pytorch_over_a_dataloader():
    torch = _torch()
    from torch.optim import swa_utils as ts
    mm, tm = _models(torch)
    xs = np.random.default_rng(1).standard_normal((12, 3)).astype(np.float32)
    mm.eval(), tm.eval()
    swa_utils.update_bn(DataLoader(TensorDataset(mg.tensor(xs)), batch_size=5), mm)
    ts.update_bn(torch.utils.data.DataLoader(torch.utils.data.TensorDataset(
        torch.tensor(xs)), batch_size=5), tm)
    for k, v in tm.state_dict().items():
        np.testing.assert_allclose(mm.state_dict()[k].numpy(), v.numpy(), rtol=1e-6,
                                   atol=1e-7, err_msg=k)
    assert not mm.training and mm[1].momentum == 0.1


def test_update_bn_averages_every_batch_and_leaves_instance_norm_alone():
    model = nn.Sequential(nn.BatchNorm1d(2))
    batches = [mg.tensor([[0.0, 1.0], [2.0, 3.0]]), mg.tensor([[4.0, 5.0], [6.0, 9.0]])]
    swa_utils.update_bn([(b, None) for b in batches], model)
    np.testing.assert_allclose(model[0].running_mean.numpy(), [3.0, 4.5])   # the mean of both
    assert model[0].momentum == 0.1 and model.training
    # an InstanceNorm is no BatchNorm to PyTorch's update_bn: not reset, nothing run
    norm = nn.InstanceNorm1d(2, track_running_stats=True)
    norm.running_mean.data[...] = 7.0
    norm.eval()
    swa_utils.update_bn([mg.ones(1, 2, 3)], norm)
    np.testing.assert_allclose(norm.running_mean.numpy(), [7.0, 7.0])
    assert not norm.training and norm.momentum == 0.1


# ---- SWALR ---------------------------------------------------------------------------
SWALRS = {
    "cos": lambda S, o: S.SWALR(o, 0.01, anneal_epochs=4),
    "linear": lambda S, o: S.SWALR(o, 0.01, anneal_epochs=3, anneal_strategy="linear"),
    "at-once": lambda S, o: S.SWALR(o, [0.02], anneal_epochs=0),
}


def _swa_lrs(opt, lib, make):
    """A cosine schedule for 6 epochs, then SWALR (built then) from where it left the lr."""
    cos = lib.lr_scheduler.CosineAnnealingLR(opt, T_max=20)
    out = []
    for i in range(15):
        if i == 6:
            swa = make(lib.swa_utils, opt)
        (swa if i >= 6 else cos).step()
        out.append(opt.param_groups[0]["lr"])
    return np.array(out), swa


@pytest.mark.parametrize("kind", sorted(SWALRS))
def test_swalr_matches_pytorch_after_another_schedule(kind):
    torch = _torch()
    ours = optim.SGD([nn.Parameter(mg.zeros(2))], lr=0.1)
    theirs = torch.optim.SGD([torch.zeros(2, requires_grad=True)], lr=0.1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, s1 = _swa_lrs(ours, optim, SWALRS[kind])
        want, s2 = _swa_lrs(theirs, torch.optim, SWALRS[kind])
    np.testing.assert_allclose(got, want, rtol=1e-14)
    assert set(s1.state_dict()) <= set(s2.state_dict())
    assert ours.param_groups[0]["swa_lr"] == theirs.param_groups[0]["swa_lr"]


def test_swalr_state_dicts_and_optimiser_state_with_swa_lr_load():
    opt = optim.SGD([nn.Parameter(mg.zeros(2))], lr=0.1)
    sched = swa_utils.SWALR(opt, 0.05, anneal_epochs=4, anneal_strategy="linear")
    sched.step()
    saved_opt, saved = opt.state_dict(), sched.state_dict()
    opt2 = optim.SGD([nn.Parameter(mg.zeros(2))], lr=0.1)
    opt2.load_state_dict(saved_opt)                       # its groups hold "swa_lr"
    sched2 = swa_utils.SWALR(opt2, 0.05, anneal_epochs=4)
    sched2.load_state_dict(saved)
    opt2.load_state_dict(saved_opt)
    sched.step(), sched2.step()
    assert opt2.param_groups[0]["lr"] == opt.param_groups[0]["lr"] == pytest.approx(
        0.1 * 0.5 + 0.05 * 0.5)
    assert sched2._anneal_strategy == "linear"


def test_swalr_first_in_a_sequential_lr_starts_at_its_epoch_0():
    """As PyTorch's: SequentialLR restarts its first scheduler's count, so SWALR's first
    epoch (the lr it starts from) is not skipped: 1.0, then ¼ of the way to swa_lr."""
    opt = optim.SGD([nn.Parameter(mg.zeros(2))], lr=1.0)
    swa = swa_utils.SWALR(opt, swa_lr=0.05, anneal_epochs=3)
    seq = optim.SequentialLR(opt, [swa, optim.CosineAnnealingLR(opt, 10)], milestones=[4])
    lrs = []
    for _ in range(5):
        lrs.append(opt.param_groups[0]["lr"])
        seq.step()
    np.testing.assert_allclose(lrs, [1.0, 0.7625, 0.2875, 0.05, 1.0], rtol=1e-14)


def test_swalr_and_chained_scheduler_do_not_mix_silently():
    opt = optim.SGD([nn.Parameter(mg.zeros(2))], lr=1.0)
    swa = swa_utils.SWALR(opt, swa_lr=0.05)
    with pytest.raises(TypeError, match="schedulers.1. is a SWALR.*cannot be chained"):
        optim.ChainedScheduler([optim.ExponentialLR(opt, 0.9), swa])
    chain = optim.ChainedScheduler([optim.ExponentialLR(opt, 0.9)])
    with pytest.raises(TypeError, match="not a SequentialLR or ChainedScheduler"):
        optim.SequentialLR(opt, [optim.ConstantLR(opt), chain], milestones=[2])
