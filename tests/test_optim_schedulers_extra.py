"""ConstantLR, PolynomialLR, CosineAnnealingWarmRestarts and CyclicLR (triangular,
triangular2, exp_range, a scale_fn of one's own; cycling SGD's momentum or Adam's beta1):
their lr (and momentum) sequences against PyTorch where it is installed (skipped elsewhere),
their closed forms by hand, state-dict round trips (ours, and PyTorch's both ways), and bad
arguments."""
import json
import math

import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.optim import lr_scheduler


def _torch():
    return pytest.importorskip("torch")


LRS = (0.1, 0.5)


def _ours(kind="sgd", lrs=LRS):
    """A minigrad optimiser with one group per lr."""
    groups = [{"params": [nn.Parameter(mg.zeros(1))], "lr": lr} for lr in lrs]
    return {"sgd": lambda: optim.SGD(groups, momentum=0.9),
            "adam": lambda: optim.Adam(groups),
            "nadam": lambda: optim.NAdam(groups),
            "rmsprop": lambda: optim.RMSprop(groups),
            "adagrad": lambda: optim.Adagrad(groups)}[kind]()


def _theirs(torch, kind="sgd", lrs=LRS):
    groups = [{"params": [torch.zeros(1, requires_grad=True)], "lr": lr} for lr in lrs]
    return {"sgd": lambda: torch.optim.SGD(groups, momentum=0.9),
            "adam": lambda: torch.optim.Adam(groups),
            "nadam": lambda: torch.optim.NAdam(groups),
            "rmsprop": lambda: torch.optim.RMSprop(groups),
            "adagrad": lambda: torch.optim.Adagrad(groups)}[kind]()


# name -> (optimiser kind, (optimizer, module) -> scheduler): one line builds ours (module =
# minigrad's lr_scheduler) and PyTorch's (module = torch.optim.lr_scheduler)
SCHEDULES = {
    "constant_default": ("sgd", lambda o, m: m.ConstantLR(o)),
    "constant_half_3": ("sgd", lambda o, m: m.ConstantLR(o, factor=0.5, total_iters=3)),
    "polynomial_default": ("sgd", lambda o, m: m.PolynomialLR(o)),
    "polynomial_square": ("sgd", lambda o, m: m.PolynomialLR(o, total_iters=12, power=2.0)),
    "polynomial_root": ("sgd", lambda o, m: m.PolynomialLR(o, total_iters=7, power=0.5)),
    "warm_restarts": ("sgd", lambda o, m: m.CosineAnnealingWarmRestarts(o, T_0=4)),
    "warm_restarts_doubling": ("sgd", lambda o, m: m.CosineAnnealingWarmRestarts(
        o, T_0=3, T_mult=2, eta_min=0.01)),
    "cyclic_triangular_momentum": ("sgd", lambda o, m: m.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=4)),
    "cyclic_triangular2_uneven": ("sgd", lambda o, m: m.CyclicLR(
        o, base_lr=[0.01, 0.02], max_lr=[0.1, 0.3], step_size_up=3, step_size_down=5,
        mode="triangular2", base_momentum=[0.8, 0.85], max_momentum=0.95)),
    "cyclic_exp_range": ("sgd", lambda o, m: m.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=5, mode="exp_range", gamma=0.97)),
    "cyclic_adam_beta1": ("adam", lambda o, m: m.CyclicLR(
        o, base_lr=1e-4, max_lr=1e-2, step_size_up=6, mode="triangular2")),
    "cyclic_nadam_beta1_exp_range": ("nadam", lambda o, m: m.CyclicLR(
        o, base_lr=1e-4, max_lr=1e-2, step_size_up=2, step_size_down=7, mode="exp_range",
        gamma=0.9, base_momentum=0.7)),
    "cyclic_rmsprop_momentum": ("rmsprop", lambda o, m: m.CyclicLR(
        o, base_lr=1e-3, max_lr=1e-2, step_size_up=4)),
    "cyclic_no_momentum": ("adagrad", lambda o, m: m.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=4, cycle_momentum=False)),
    "cyclic_scale_fn_iterations": ("sgd", lambda o, m: m.CyclicLR(
        o, base_lr=0.01, max_lr=0.1, step_size_up=3, scale_fn=_halving,
        scale_mode="iterations")),
    "constant_then_restarts": ("sgd", lambda o, m: m.SequentialLR(
        o, [m.ConstantLR(o, factor=0.2, total_iters=10), m.CosineAnnealingWarmRestarts(o, 5)],
        milestones=[4])),
    "restarts_then_polynomial": ("sgd", lambda o, m: m.SequentialLR(
        o, [m.CosineAnnealingWarmRestarts(o, 3, T_mult=2), m.PolynomialLR(o, 10, 2.0)],
        milestones=[11])),
}


def _halving(x):
    return 0.5 ** (x / 10)


def _momenta(opt):
    return [g["betas"][0] if "betas" in g else g.get("momentum") for g in opt.param_groups]


def _lrs(opt):
    return [g["lr"] for g in opt.param_groups]


@pytest.mark.filterwarnings("ignore::UserWarning")         # torch's, for an optimiser not
@pytest.mark.parametrize("name", sorted(SCHEDULES))        # stepped (these have no grads)
def test_matches_torch_lr_and_momentum_for_40_steps_with_two_groups(name):
    torch = _torch()
    kind, make = SCHEDULES[name]
    mo, to = _ours(kind), _theirs(torch, kind)
    ours, theirs = make(mo, lr_scheduler), make(to, torch.optim.lr_scheduler)
    for step in range(41):
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12, abs=1e-15)
        assert _lrs(mo) == pytest.approx(_lrs(to), rel=1e-12, abs=1e-15), step
        assert _momenta(mo) == pytest.approx(_momenta(to), rel=1e-12), step
        assert ours.last_epoch == theirs.last_epoch
        mo.step(), to.step()
        ours.step(), theirs.step()
    assert [g["initial_lr"] for g in mo.param_groups] == \
        [g["initial_lr"] for g in to.param_groups]


@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_state_dict_round_trip_resumes_the_same_sequence(name):
    """Save at step 13 (through JSON, as into a checkpoint's metadata), rebuild optimiser and
    scheduler as a new run would, load both, and go on: the same lrs and momenta."""
    kind, make = SCHEDULES[name]
    opt = _ours(kind)
    sched = make(opt, lr_scheduler)
    for _ in range(13):
        opt.step(), sched.step()
    saved_opt = opt.state_dict()
    saved = json.loads(json.dumps(sched.state_dict()))
    opt2 = _ours(kind)
    sched2 = make(opt2, lr_scheduler)
    opt2.load_state_dict(saved_opt)
    sched2.load_state_dict(saved)
    assert sched2.last_epoch == sched.last_epoch == 13
    for _ in range(30):
        assert sched2.get_last_lr() == sched.get_last_lr() and _lrs(opt2) == _lrs(opt)
        assert _momenta(opt2) == _momenta(opt)
        opt.step(), sched.step(), opt2.step(), sched2.step()


def _copy_groups(src, dst):
    """What the optimiser's own state dict brings: each group's lr and momentum/betas."""
    for g, h in zip(src.param_groups, dst.param_groups):
        for key in ("lr", "momentum", "betas", "initial_lr"):
            if key in g:
                h[key] = g[key]


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("name", sorted(SCHEDULES))
def test_a_torch_state_dict_loads_here_and_ours_there(name):
    """PyTorch's scheduler state after 13 steps loads into ours, which goes on as PyTorch's;
    ours after 20 more loads into a new PyTorch scheduler, which goes on as ours."""
    torch = _torch()
    kind, make = SCHEDULES[name]
    to, mo = _theirs(torch, kind), _ours(kind)
    theirs, ours = make(to, torch.optim.lr_scheduler), make(mo, lr_scheduler)
    for _ in range(13):
        to.step(), theirs.step()
    ours.load_state_dict(theirs.state_dict())
    _copy_groups(to, mo)
    for _ in range(20):
        to.step(), theirs.step(), mo.step(), ours.step()
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12)
        assert _momenta(mo) == pytest.approx(_momenta(to), rel=1e-12)
    to2 = _theirs(torch, kind)
    theirs2 = make(to2, torch.optim.lr_scheduler)
    theirs2.load_state_dict(ours.state_dict())
    _copy_groups(mo, to2)
    for _ in range(20):
        to2.step(), theirs2.step(), mo.step(), ours.step()
        assert theirs2.get_last_lr() == pytest.approx(ours.get_last_lr(), rel=1e-12)
        assert _momenta(to2) == pytest.approx(_momenta(mo), rel=1e-12)


# ---- CosineAnnealingWarmRestarts' epochs, and its resumption ----------------------------
@pytest.mark.parametrize("t_mult", [1, 2, 3])
def test_warm_restarts_fractional_and_interleaved_epochs_as_torch(t_mult):
    """step(epoch + i / iters) per batch, as PyTorch's docs show, then a jump to epoch 26
    and plain steps from there (26, 27, ...)."""
    torch = _torch()
    mo, to = _ours(), _theirs(torch)
    ours = optim.CosineAnnealingWarmRestarts(mo, T_0=2, T_mult=t_mult, eta_min=0.001)
    theirs = torch.optim.lr_scheduler.CosineAnnealingWarmRestarts(to, T_0=2, T_mult=t_mult,
                                                                  eta_min=0.001)
    iters = 5
    for epoch in range(12):
        for i in range(iters):
            ours.step(epoch + i / iters)
            theirs.step(epoch + i / iters)
            assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12)
            assert (ours.T_cur, ours.T_i) == pytest.approx((theirs.T_cur, theirs.T_i))
            assert ours.last_epoch == theirs.last_epoch == epoch
    ours.step(26)
    theirs.step(26)
    for _ in range(5):
        ours.step()
        theirs.step()
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12)


C3 = (1 + math.cos(math.pi / 3)) / 2              # the cosine's factor a third of the way
C23 = (1 + math.cos(2 * math.pi / 3)) / 2


def _sequence(make, steps, lr=1.0, kind="sgd"):
    opt = _ours(kind, (lr,))
    sched = make(opt)
    out = [sched.get_last_lr()[0]]
    for _ in range(steps):
        sched.step()
        out.append(opt.param_groups[0]["lr"])
    return out


@pytest.mark.parametrize("make, lr, want", [
    (lambda o: optim.ConstantLR(o, factor=0.25, total_iters=3), 2.0,
     [0.5, 0.5, 0.5, 2.0, 2.0]),
    (lambda o: optim.ConstantLR(o, factor=0.0, total_iters=2), 2.0, [0.0, 0.0, 2.0, 2.0]),
    # base · (1 - t/4)²: 1, 9/16, 1/4, 1/16, 0, then 0
    (lambda o: optim.PolynomialLR(o, total_iters=4, power=2.0), 1.0,
     [1.0, 0.5625, 0.25, 0.0625, 0.0, 0.0]),
    (lambda o: optim.PolynomialLR(o, total_iters=2, power=0.0), 1.0, [1.0, 1.0, 1.0, 1.0]),
    # periods of 3: the cosine at 0, 1/3, 2/3 of the way, then back to the top
    (lambda o: optim.CosineAnnealingWarmRestarts(o, T_0=3), 1.0,
     [1.0, C3, C23, 1.0, C3, C23, 1.0]),
    # T_0 = 1, T_mult = 3: periods 1, 3, 9: restarts at epochs 1 and 4; eta_min 0.5
    (lambda o: optim.CosineAnnealingWarmRestarts(o, T_0=1, T_mult=3, eta_min=0.5), 1.5,
     [1.5, 1.5, 0.5 + C3, 0.5 + C23, 1.5]),
    # up 0.1 → 0.5 in 2 steps, down in 2: 0.1, 0.3, 0.5, 0.3, 0.1, 0.3, ...
    (lambda o: optim.CyclicLR(o, 0.1, 0.5, step_size_up=2, cycle_momentum=False), 0.0,
     [0.1, 0.3, 0.5, 0.3, 0.1, 0.3, 0.5]),
    # triangular2: the second cycle's peak is half as high above base_lr
    (lambda o: optim.CyclicLR(o, 0.1, 0.5, step_size_up=2, mode="triangular2"), 0.0,
     [0.1, 0.3, 0.5, 0.3, 0.1, 0.2, 0.3, 0.2, 0.1]),
    # up 1 step, down 3: 0.1, 0.5, then down a third of the height each step
    (lambda o: optim.CyclicLR(o, 0.1, 0.4, step_size_up=1, step_size_down=3), 0.0,
     [0.1, 0.4, 0.3, 0.2, 0.1, 0.4]),
    # exp_range: the height times gamma^step: at step 2 (the top) 0.4 · 0.5²
    (lambda o: optim.CyclicLR(o, 0.1, 0.5, step_size_up=2, mode="exp_range", gamma=0.5),
     0.0, [0.1, 0.1 + 0.2 * 0.5, 0.1 + 0.4 * 0.25, 0.1 + 0.2 * 0.125, 0.1]),
], ids=["constant", "constant_0", "polynomial", "polynomial_power_0", "restarts",
        "restarts_t_mult", "cyclic", "cyclic_triangular2", "cyclic_uneven", "cyclic_exp"])
def test_closed_forms_by_hand(make, lr, want):
    assert _sequence(make, len(want) - 1, lr) == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_cyclic_momentum_goes_against_the_lr_by_hand():
    sgd = _ours("sgd", (0.0,))
    optim.CyclicLR(sgd, 0.1, 0.5, step_size_up=2, base_momentum=0.8, max_momentum=0.9)
    group = sgd.param_groups[0]
    assert group["momentum"] == 0.9 and group["max_momentum"] == 0.9 and \
        group["base_momentum"] == 0.8
    adam = _ours("adam", (0.0,))
    sched = optim.CyclicLR(adam, 0.1, 0.5, step_size_up=2, base_momentum=0.8,
                           max_momentum=0.9)
    betas = []
    for _ in range(5):
        betas.append(adam.param_groups[0]["betas"])
        sched.step()
    assert [b[0] for b in betas] == pytest.approx([0.9, 0.85, 0.8, 0.85, 0.9], rel=1e-12)
    assert all(b[1] == 0.999 for b in betas)


def test_warm_restarts_step_to_an_epoch_by_hand():
    opt = _ours("sgd", (1.0,))
    sched = optim.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)   # periods 2, 4, 8, 16
    sched.step(7.5)                                # 1.5 into the period of 8 from epoch 6
    assert (sched.T_cur, sched.T_i, sched.last_epoch) == (1.5, 8, 7)
    assert sched.get_last_lr() == pytest.approx([(1 + math.cos(math.pi * 1.5 / 8)) / 2])
    sched.step()                                   # goes on from there by one
    assert (sched.T_cur, sched.T_i, sched.last_epoch) == (2.5, 8, 8)
    sched.step(14)                                 # the restart at 14 exactly
    assert (sched.T_cur, sched.T_i) == (0, 16) and sched.get_last_lr() == [1.0]
    with pytest.raises(ValueError, match=r"CosineAnnealingWarmRestarts.step: epoch must be "
                                         r">= 0, got -1"):
        sched.step(-1)


def test_warm_restarts_resumed_by_last_epoch_is_in_the_right_period():
    """last_epoch=k continues at epoch k + 1 with the period it lies in (PyTorch's starts
    T_cur from k in the first period, which past it is wrong for T_mult > 1)."""
    opt = _ours("sgd", (1.0,))
    run = optim.CosineAnnealingWarmRestarts(opt, T_0=2, T_mult=2)
    for _ in range(10):
        run.step()
    fresh = _ours("sgd", (1.0,))
    fresh.load_state_dict(opt.state_dict())               # brings initial_lr
    resumed = optim.CosineAnnealingWarmRestarts(fresh, T_0=2, T_mult=2, last_epoch=9)
    assert (resumed.T_cur, resumed.T_i, resumed.last_epoch) == (run.T_cur, run.T_i, 10) == \
        (4, 8, 10)
    assert resumed.get_last_lr() == run.get_last_lr()
    for _ in range(12):
        run.step()
        resumed.step()
        assert resumed.get_last_lr() == run.get_last_lr()


def test_cyclic_base_lrs_are_its_base_lr_whatever_initial_lr_says():
    opt = _ours("sgd", (0.3,))
    optim.StepLR(opt, 2)                           # leaves initial_lr = 0.3 in the group
    sched = optim.CyclicLR(opt, 0.01, 0.1, step_size_up=2)
    assert sched.base_lrs == [0.01] and sched.get_last_lr() == [0.01]
    assert opt.param_groups[0]["initial_lr"] == 0.3


def test_cyclic_scale_fn_is_code_not_state():
    opt = _ours()
    sched = optim.CyclicLR(opt, 0.01, 0.1, step_size_up=3, scale_fn=_halving)
    for _ in range(5):
        sched.step()
    state = sched.state_dict()
    assert state["_scale_fn_custom"] is None and "scale_fn" not in state
    assert json.loads(json.dumps(state)) == state
    again = optim.CyclicLR(_ours(), 0.01, 0.1, step_size_up=3, scale_fn=_halving)
    again.load_state_dict(state)
    assert again._scale_fn_custom is _halving
    sched.step(), again.step()
    assert again.get_last_lr() == sched.get_last_lr()


def test_cyclic_momentum_needs_an_optimiser_that_has_one():
    with pytest.raises(ValueError, match=r"CyclicLR: cycle_momentum=True needs an optimiser "
                                         r"with momentum or betas \(Adadelta has neither\)"):
        optim.CyclicLR(optim.Adadelta([nn.Parameter(mg.zeros(1))]), 0.01, 0.1)
    opt = optim.Adadelta([nn.Parameter(mg.zeros(1))])
    optim.CyclicLR(opt, 0.01, 0.1, cycle_momentum=False)
    assert "max_momentum" not in opt.param_groups[0]


def test_new_schedulers_compose_only_through_sequential_lr():
    opt = _ours("sgd", (1.0,))
    first = optim.ConstantLR(opt, factor=0.5, total_iters=2)
    second = optim.PolynomialLR(opt, total_iters=4)
    second.step()
    with pytest.raises(RuntimeError, match="ConstantLR.step: group 0's lr is 0.75"):
        first.step()


# ---- bad arguments ----------------------------------------------------------------------
@pytest.mark.parametrize("make, error, match", [
    (lambda o: optim.ConstantLR(o, factor=1.5), ValueError,
     r"ConstantLR: factor must be in \[0, 1\], got 1.5"),
    (lambda o: optim.ConstantLR(o, factor=-0.1), ValueError, r"factor must be in \[0, 1\]"),
    (lambda o: optim.ConstantLR(o, factor=float("nan")), ValueError, "factor must be in"),
    (lambda o: optim.ConstantLR(o, total_iters=0), ValueError,
     "total_iters must be an integer >= 1, got 0"),
    (lambda o: optim.PolynomialLR(o, total_iters=2.5), TypeError,
     "PolynomialLR: total_iters must be an integer"),
    (lambda o: optim.PolynomialLR(o, power=-1.0), ValueError,
     "PolynomialLR: power must be >= 0, got -1.0"),
    (lambda o: optim.CosineAnnealingWarmRestarts(o, T_0=0), ValueError,
     "CosineAnnealingWarmRestarts: T_0 must be an integer >= 1, got 0"),
    (lambda o: optim.CosineAnnealingWarmRestarts(o, T_0=2.0), TypeError,
     "T_0 must be an integer >= 1, got 2.0"),
    (lambda o: optim.CosineAnnealingWarmRestarts(o, 2, T_mult=0), ValueError,
     "T_mult must be an integer >= 1, got 0"),
    (lambda o: optim.CosineAnnealingWarmRestarts(o, 2, T_mult=1.5), TypeError,
     "T_mult must be an integer"),
    (lambda o: optim.CosineAnnealingWarmRestarts(o, 2, eta_min="0"), TypeError,
     "eta_min must be a number >= 0"),
    (lambda o: optim.CyclicLR(o, 0.01, 0.1, mode="triangle"), ValueError,
     r"CyclicLR: mode must be 'triangular', 'triangular2' or 'exp_range' \(or give scale_fn\)"),
    (lambda o: optim.CyclicLR(o, [0.01], 0.1), ValueError,
     "CyclicLR: base_lr has 1 values for 2 parameter groups"),
    (lambda o: optim.CyclicLR(o, 0.01, [0.1, 0.2, 0.3]), ValueError,
     "max_lr has 3 values for 2"),
    (lambda o: optim.CyclicLR(o, -0.01, 0.1), ValueError, "base_lr must be >= 0, got -0.01"),
    (lambda o: optim.CyclicLR(o, 0.01, 0.1, step_size_up=0), ValueError,
     "step_size_up must be > 0, got 0"),
    (lambda o: optim.CyclicLR(o, 0.01, 0.1, step_size_down=-1), ValueError,
     "step_size_down must be >= 0"),
    (lambda o: optim.CyclicLR(o, 0.01, 0.1, scale_fn=3), TypeError,
     "scale_fn must be a function"),
    (lambda o: optim.CyclicLR(o, 0.01, 0.1, scale_fn=_halving, scale_mode="epoch"), ValueError,
     "scale_mode must be 'cycle' or 'iterations'"),
    (lambda o: optim.CyclicLR(o, 0.01, 0.1, gamma=-0.5), ValueError, "gamma must be >= 0"),
    (lambda o: optim.CyclicLR(o, 0.01, 0.1, base_momentum=[0.8]), ValueError,
     "base_momentum has 1 values for 2"),
    (lambda o: optim.CyclicLR(o, 0.01, 0.1, cycle_momentum="yes"), TypeError,
     "cycle_momentum must be True or False"),
    (lambda o: optim.CyclicLR("opt", 0.01, 0.1), TypeError,
     "optimizer must be a minigrad Optimizer"),
    (lambda o: optim.CyclicLR(o, 0.01, 0.1, last_epoch=-2), ValueError,
     "last_epoch must be an integer >= -1"),
])
def test_bad_scheduler_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make(_ours())


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("kind, make", [
    ("sgd", lambda o, m: m.ConstantLR(o, factor=1.5)),
    ("sgd", lambda o, m: m.CosineAnnealingWarmRestarts(o, T_0=0)),
    ("sgd", lambda o, m: m.CosineAnnealingWarmRestarts(o, 2, T_mult=0)),
    ("sgd", lambda o, m: m.CyclicLR(o, 0.01, 0.1, mode="triangle")),
    ("sgd", lambda o, m: m.CyclicLR(o, [0.01], 0.1)),
    ("adagrad", lambda o, m: m.CyclicLR(o, 0.01, 0.1)),        # no momentum, no betas
], ids=["factor", "T_0", "T_mult", "mode", "base_lr_list", "no_momentum"])
def test_torch_refuses_the_same(kind, make):
    torch = _torch()
    with pytest.raises(ValueError):
        make(_theirs(torch, kind), torch.optim.lr_scheduler)
    with pytest.raises(ValueError):
        make(_ours(kind), lr_scheduler)


def test_loading_another_kind_of_state_is_refused():
    opt = _ours()
    with pytest.raises(ValueError, match="expected the state dict of a CyclicLR"):
        optim.CyclicLR(opt, 0.01, 0.1).load_state_dict(
            optim.CosineAnnealingWarmRestarts(_ours(), 3).state_dict())


def test_what_pytorch_accepts_is_accepted():
    """A group copied from a torch optimiser (its foreach/fused/... switched off), CyclicLR's
    gamma 0 and a scale_mode it ignores without scale_fn: accepted, as PyTorch."""
    ps = [nn.Parameter(mg.ones(2))]
    for make in (optim.Adagrad, optim.NAdam, optim.RAdam, optim.Adamax, optim.Adadelta):
        opt = make([{"params": ps, "foreach": False, "differentiable": False,
                     "capturable": False, "fused": None}])
        assert "fused" not in opt.param_groups[0]
    with pytest.raises(ValueError, match="fused=True is an option of PyTorch's"):
        optim.Adagrad([{"params": ps, "fused": True}])
    sgd = optim.SGD(ps, lr=0.1, momentum=0.9)
    optim.CyclicLR(sgd, 0.01, 0.1, mode="exp_range", gamma=0.0)
    optim.CyclicLR(sgd, 0.01, 0.1, scale_mode="ignored")


def test_step_lr_takes_a_whole_float_step_size():
    # the text classification tutorial's StepLR(optimizer, 1.0, gamma=0.1); 2.5 stays refused
    opt = _ours(lrs=(1.0,))
    sched = lr_scheduler.StepLR(opt, 1.0, gamma=0.1)
    assert sched.step_size == 1 and isinstance(sched.step_size, int)
    lrs = [(opt.step(), sched.step(), sched.get_last_lr()[0])[2] for _ in range(3)]
    assert lrs == pytest.approx([0.1, 0.01, 0.001])
    with pytest.raises(TypeError, match="step_size must be an integer"):
        lr_scheduler.StepLR(_ours(), 2.5)
