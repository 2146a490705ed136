"""PyTorch's learning-rate scheduler classes (minigrad.optim.lr_scheduler: StepLR,
MultiStepLR, ExponentialLR, CosineAnnealingLR, LinearLR, SequentialLR, LambdaLR on the shared
LRScheduler base): their lr sequences against PyTorch where it is installed (skipped
elsewhere), their closed forms by hand, state-dict round trips, and bad arguments."""
import json
import math

import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.optim import lr_scheduler


def _torch():
    return pytest.importorskip("torch")


# ---- schedulers -------------------------------------------------------------------------
def _sgd(lrs=(0.1, 0.5)):
    """A minigrad SGD with one group per lr (the schedules scale each group's own base)."""
    return optim.SGD([{"params": [nn.Parameter(mg.zeros(1))], "lr": lr} for lr in lrs])


def _torch_sgd(torch, lrs=(0.1, 0.5)):
    return torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)], "lr": lr}
                            for lr in lrs])


# (optimizer, module) -> scheduler: the same line builds ours (module = minigrad's
# lr_scheduler) and PyTorch's (module = torch.optim.lr_scheduler)
SCHEDULES = {
    "step": lambda o, m: m.StepLR(o, step_size=7, gamma=0.5),
    "step_default_gamma": lambda o, m: m.StepLR(o, 4),
    "multistep": lambda o, m: m.MultiStepLR(o, milestones=[3, 10, 11, 25], gamma=0.3),
    "exponential": lambda o, m: m.ExponentialLR(o, gamma=0.9),
    "cosine_past_t_max": lambda o, m: m.CosineAnnealingLR(o, T_max=10, eta_min=0.001),
    "cosine_odd_t_max": lambda o, m: m.CosineAnnealingLR(o, T_max=7),
    "linear_default": lambda o, m: m.LinearLR(o),
    "linear_decay_to_0": lambda o, m: m.LinearLR(o, start_factor=1.0, end_factor=0.0,
                                                 total_iters=20),
    "warmup_then_cosine": lambda o, m: m.SequentialLR(
        o, [m.LinearLR(o, start_factor=0.1, total_iters=5),
            m.CosineAnnealingLR(o, T_max=20, eta_min=0.01)], milestones=[5]),
    "three_in_sequence": lambda o, m: m.SequentialLR(
        o, [m.LinearLR(o, 0.1, total_iters=5), m.ExponentialLR(o, 0.8),
            m.StepLR(o, step_size=3, gamma=0.5)], milestones=[4, 12]),
}


def _lrs(opt):
    return [g["lr"] for g in opt.param_groups]


@pytest.mark.parametrize("make", SCHEDULES.values(), ids=SCHEDULES)
def test_scheduler_matches_torch_over_30_steps_with_two_groups(make):
    torch = _torch()
    mo, to = _sgd(), _torch_sgd(torch)
    ours, theirs = make(mo, lr_scheduler), make(to, torch.optim.lr_scheduler)
    for _ in range(31):
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12, abs=1e-15)
        assert _lrs(mo) == pytest.approx(_lrs(to), rel=1e-12, abs=1e-15)
        assert ours.last_epoch == theirs.last_epoch
        mo.step(), to.step()                       # the optimiser first, as PyTorch asks
        ours.step(), theirs.step()
    assert [g["initial_lr"] for g in mo.param_groups] == [0.1, 0.5]


@pytest.mark.parametrize("make", SCHEDULES.values(), ids=SCHEDULES)
def test_state_dict_round_trip_resumes_the_same_sequence(make):
    """Save at step 12 (through JSON, as into a checkpoint's metadata), rebuild the optimiser
    and scheduler as a new run would, load both, and go on: the same lrs as never stopping."""
    opt = _sgd()
    sched = make(opt, lr_scheduler)
    for _ in range(12):
        opt.step(), sched.step()
    saved_opt = opt.state_dict()
    saved = json.loads(json.dumps(sched.state_dict()))
    opt2 = _sgd()
    sched2 = make(opt2, lr_scheduler)                # sets the lrs of epoch 0 ...
    opt2.load_state_dict(saved_opt)                  # ... which the optimiser's state undoes
    sched2.load_state_dict(saved)
    assert sched2.last_epoch == sched.last_epoch == 12
    assert sched2.get_last_lr() == sched.get_last_lr() and _lrs(opt2) == _lrs(opt)
    for _ in range(18):
        opt.step(), sched.step(), opt2.step(), sched2.step()
        assert sched2.get_last_lr() == sched.get_last_lr() and _lrs(opt2) == _lrs(opt)


@pytest.mark.parametrize("name", ["step", "multistep", "warmup_then_cosine"])
def test_a_torch_scheduler_state_dict_loads_and_continues_as_torch(name):
    torch = _torch()
    to = _torch_sgd(torch)
    theirs = SCHEDULES[name](to, torch.optim.lr_scheduler)
    for _ in range(12):
        to.step(), theirs.step()
    mo = _sgd()
    ours = SCHEDULES[name](mo, lr_scheduler)
    ours.load_state_dict(theirs.state_dict())
    for _ in range(15):
        to.step(), theirs.step(), mo.step(), ours.step()
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12)


def _sequence(make, steps, lrs=(1.0,)):
    opt = _sgd(lrs)
    sched = make(opt)
    out = [sched.get_last_lr()[0]]
    for _ in range(steps):
        sched.step()
        out.append(opt.param_groups[0]["lr"])
    return out


C = math.cos(math.pi / 4)                           # for T_max = 4


@pytest.mark.parametrize("make, lrs, want", [
    (lambda o: optim.StepLR(o, step_size=3, gamma=0.5), (0.8,),
     [0.8, 0.8, 0.8, 0.4, 0.4, 0.4, 0.2, 0.2]),
    (lambda o: optim.MultiStepLR(o, milestones=[2, 5], gamma=0.1), (1.0,),
     [1, 1, 0.1, 0.1, 0.1, 0.01, 0.01]),
    (lambda o: optim.ExponentialLR(o, gamma=0.5), (2.0,), [2, 1, 0.5, 0.25, 0.125]),
    # eta_min + (base - eta_min)(1 + cos(πt/4))/2, base 1.1, eta_min 0.1; past T_max it
    # climbs back along the cosine (PyTorch's closed form)
    (lambda o: optim.CosineAnnealingLR(o, T_max=4, eta_min=0.1), (1.1,),
     [1.1, 0.1 + (1 + C) / 2, 0.6, 0.1 + (1 - C) / 2, 0.1, 0.1 + (1 - C) / 2, 0.6,
      0.1 + (1 + C) / 2, 1.1]),
    # factor 0.25 → 1 over 4 steps: 0.25, 0.4375, 0.625, 0.8125, 1, then 1
    (lambda o: optim.LinearLR(o, start_factor=0.25, total_iters=4), (2.0,),
     [0.5, 0.875, 1.25, 1.625, 2.0, 2.0, 2.0]),
    # LinearLR for epochs 0-2, then ExponentialLR from its own epoch 0 at epoch 3
    (lambda o: optim.SequentialLR(o, [optim.LinearLR(o, 0.5, total_iters=2),
                                      optim.ExponentialLR(o, 0.5)], milestones=[3]), (1.0,),
     [0.5, 0.75, 1.0, 1.0, 0.5, 0.25]),
    (lambda o: optim.LambdaLR(o, lambda s: 1 / (s + 1)), (3.0,), [3.0, 1.5, 1.0, 0.75]),
], ids=["step", "multistep", "exponential", "cosine", "linear", "sequential", "lambda"])
def test_closed_forms_by_hand(make, lrs, want):
    assert _sequence(make, len(want) - 1, lrs) == pytest.approx(want, rel=1e-12, abs=1e-15)


def test_each_group_is_scaled_from_its_own_initial_lr():
    opt = _sgd((0.1, 0.5))
    sched = optim.StepLR(opt, step_size=1, gamma=0.5)
    sched.step()
    assert sched.get_last_lr() == [0.05, 0.25] and sched.base_lrs == [0.1, 0.5]
    # a second scheduler starts from initial_lr (kept in the group), not the current lr
    again = optim.ExponentialLR(opt, gamma=0.9)
    assert again.base_lrs == [0.1, 0.5] and _lrs(opt) == [0.1, 0.5]


def test_last_epoch_resumes_from_initial_lr_and_needs_it():
    opt = _sgd((0.8,))
    optim.StepLR(opt, step_size=3, gamma=0.5)
    opt.param_groups[0]["lr"] = 123.0                          # whatever it was left at
    resumed = optim.StepLR(opt, step_size=3, gamma=0.5, last_epoch=4)
    assert resumed.last_epoch == 5 and resumed.get_last_lr() == [0.4]   # PyTorch's counting
    with pytest.raises(ValueError, match="last_epoch=4 resumes .* 'initial_lr'"):
        optim.StepLR(_sgd(), step_size=3, last_epoch=4)


def test_groups_of_a_scheduled_optimizer_build_another():
    """initial_lr, which a scheduler writes into the groups, is a known group key."""
    opt = _sgd()
    optim.StepLR(opt, 3)
    again = optim.SGD([dict(g) for g in opt.param_groups])
    assert [g["initial_lr"] for g in again.param_groups] == [0.1, 0.5]


def test_a_group_added_after_the_scheduler_is_an_error_at_step():
    opt = _sgd((0.1,))
    sched = optim.ExponentialLR(opt, gamma=0.9)
    opt.add_param_group({"params": [nn.Parameter(mg.zeros(1))]})
    with pytest.raises(RuntimeError, match="2 parameter groups, the scheduler was built for 1"):
        sched.step()


def test_a_state_dict_of_the_old_lambda_lr_format_still_loads():
    """LambdaLR's state dict used to hold last_epoch and base_lrs only: the last lrs are then
    the optimiser's (restored by its own state dict)."""
    opt = _sgd()
    sched = optim.LambdaLR(opt, lambda s: 0.5 ** s)
    opt.param_groups[0]["lr"], opt.param_groups[1]["lr"] = 0.0125, 0.0625
    sched.load_state_dict({"last_epoch": 3, "base_lrs": [0.1, 0.5]})
    assert sched.get_last_lr() == [0.0125, 0.0625]
    sched.step()
    assert sched.get_last_lr() == [0.00625, 0.03125]


def test_scheduler_state_dict_holds_numbers_and_no_optimizer():
    opt = _sgd()
    sched = optim.SequentialLR(opt, [optim.LinearLR(opt, total_iters=2),
                                     optim.MultiStepLR(opt, [4], 0.5)], milestones=[2])
    sd = sched.state_dict()
    assert "optimizer" not in sd and sd["last_epoch"] == 0
    assert sd["_schedulers"][1]["milestones"] == [4] and "optimizer" not in sd["_schedulers"][0]
    assert json.loads(json.dumps(sd)) == sd
    assert "lr_lambdas" not in optim.LambdaLR(opt, lambda s: 1.0).state_dict()
    assert "StepLR(step_size=3, gamma=0.5" in repr(optim.StepLR(opt, 3, 0.5))


def test_sequential_lr_loads_all_or_nothing():
    """An inner state that fails to load leaves this scheduler and the inner ones as they
    were (PyTorch's loads its own counters first and stays half loaded)."""
    opt = _sgd()
    sched = optim.SequentialLR(opt, [optim.LinearLR(opt, total_iters=2),
                                     optim.MultiStepLR(opt, [4], 0.5)], milestones=[2])
    for _ in range(3):
        sched.step()
    before = sched.state_dict()
    bad = {**before, "last_epoch": 9, "_milestones": [5],
           "_schedulers": [{**before["_schedulers"][0], "last_epoch": 7},
                           optim.StepLR(opt, 3).state_dict()]}
    with pytest.raises(ValueError, match="MultiStepLR.load_state_dict: expected"):
        sched.load_state_dict(bad)
    assert sched.state_dict() == before


def test_two_schedulers_on_one_optimizer_are_refused_not_overwritten():
    """PyTorch's chainable schedulers compose (ExponentialLR then MultiStepLR, as its docs
    show); closed forms here would let the last to step silently win. The first step that
    finds its lrs changed refuses, before an optimiser step uses a wrong lr."""
    opt = _sgd((1.0,))
    first, second = optim.StepLR(opt, step_size=1, gamma=0.5), optim.ExponentialLR(opt, 0.9)
    first.step()                                       # lr 0.5 ...
    with pytest.raises(RuntimeError, match=r"ExponentialLR.step: group 0's lr is 0.5, but "
                                           r"this scheduler set it to 1.0.*SequentialLR"):
        second.step()                                  # ... which torch would make 0.45


def test_a_change_of_the_lr_by_hand_is_refused_at_the_next_step():
    opt = _sgd()
    sched = optim.CosineAnnealingLR(opt, T_max=10)
    sched.step()
    opt.param_groups[1]["lr"] *= 0.5
    with pytest.raises(RuntimeError, match="group 1's lr is .*something else changed it"):
        sched.step()
    seq_opt = _sgd()
    seq = optim.SequentialLR(seq_opt, [optim.LinearLR(seq_opt, 0.5, total_iters=2),
                                       optim.ExponentialLR(seq_opt, 0.5)], milestones=[2])
    seq.step()
    seq_opt.param_groups[0]["lr"] = 1.0                # just before the milestone
    with pytest.raises(RuntimeError, match="LinearLR.step: group 0's lr is 1.0"):
        seq.step()
    # what a load restores is not a change: the optimiser's lrs come back with its own state
    opt2 = _sgd()
    sched2 = optim.CosineAnnealingLR(opt2, T_max=10)
    opt2.load_state_dict(opt.state_dict())
    sched2.load_state_dict(sched.state_dict())
    sched2.step()


def test_repr_without_hyperparameters():
    opt = _sgd()
    seq = optim.SequentialLR(opt, [optim.LinearLR(opt), optim.StepLR(opt, 2)], [3])
    assert repr(seq) == "SequentialLR(last_epoch=0)"


# ---- scheduler argument errors ----------------------------------------------------------
def _other():
    return _sgd()


@pytest.mark.parametrize("make, error, match", [
    (lambda o: optim.StepLR(o, step_size=0), ValueError,
     r"StepLR: step_size must be an integer >= 1, got 0"),
    (lambda o: optim.StepLR(o, step_size=2.5), TypeError, "step_size must be an integer"),
    (lambda o: optim.StepLR(o, 3, gamma=0.0), ValueError, r"StepLR: gamma must be > 0, got 0"),
    (lambda o: optim.StepLR(o, 3, gamma="0.1"), TypeError, "gamma must be a number > 0"),
    (lambda o: optim.MultiStepLR(o, [5, 3]), ValueError, "strictly increasing, got \\[5, 3\\]"),
    (lambda o: optim.MultiStepLR(o, [2, 2]), ValueError, "strictly increasing"),
    (lambda o: optim.MultiStepLR(o, [-1, 3]), ValueError, r"milestones\[0\] must be an "
                                                          r"integer >= 0, got -1"),
    (lambda o: optim.MultiStepLR(o, 5), TypeError, "milestones must be a list"),
    (lambda o: optim.MultiStepLR(o, [1.5]), TypeError, "must be an integer"),
    (lambda o: optim.ExponentialLR(o, gamma=-0.5), ValueError, "gamma must be > 0"),
    (lambda o: optim.ExponentialLR(o, gamma=float("nan")), ValueError, "gamma must be > 0"),
    (lambda o: optim.CosineAnnealingLR(o, T_max=0), ValueError,
     r"CosineAnnealingLR: T_max must be > 0, got 0"),
    (lambda o: optim.CosineAnnealingLR(o, 10, eta_min=-1e-3), ValueError,
     "eta_min must be >= 0"),
    (lambda o: optim.LinearLR(o, start_factor=0.0), ValueError,
     r"LinearLR: start_factor must be in \(0, 1\], got 0.0"),
    (lambda o: optim.LinearLR(o, start_factor=1.5), ValueError, r"start_factor must be in \(0"),
    (lambda o: optim.LinearLR(o, end_factor=1.5), ValueError, r"end_factor must be in \[0, 1\]"),
    (lambda o: optim.LinearLR(o, total_iters=0), ValueError, "total_iters must be an integer "
                                                             ">= 1"),
    (lambda o: optim.StepLR(o, 3, last_epoch=-2), ValueError, "last_epoch must be an integer"),
    (lambda o: optim.StepLR("opt", 3), TypeError, "optimizer must be a minigrad Optimizer"),
    (lambda o: optim.LambdaLR(o, [lambda s: 1.0]), ValueError, "1 lr_lambdas for 2"),
    (lambda o: optim.SequentialLR(o, [], []), ValueError, "non-empty list"),
    (lambda o: optim.SequentialLR(o, [optim.StepLR(o, 3), optim.StepLR(o, 3)], [2, 4]),
     ValueError, "one milestone fewer than schedulers"),
    (lambda o: optim.SequentialLR(o, [optim.StepLR(o, 3), optim.StepLR(o, 3)], [0]),
     ValueError, r"milestones\[0\] must be an integer >= 1"),
    (lambda o: optim.SequentialLR(o, [optim.StepLR(o, 3), optim.StepLR(_other(), 3)], [2]),
     ValueError, r"schedulers\[1\] \(StepLR\) belongs to another optimiser"),
    (lambda o: optim.SequentialLR(o, [optim.StepLR(o, 3), 0.5], [2]), TypeError,
     r"schedulers\[1\] must be a scheduler"),
    (lambda o: optim.SequentialLR(o, [optim.SequentialLR(o, [optim.StepLR(o, 3)], [])], []),
     TypeError, "not a SequentialLR"),
])
def test_bad_scheduler_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make(_sgd())


def test_loading_another_schedulers_state_is_an_error():
    opt = _sgd()
    with pytest.raises(ValueError, match="expected the state dict of a StepLR"):
        optim.StepLR(opt, 3).load_state_dict(optim.CosineAnnealingLR(opt, 5).state_dict())
    seq = optim.SequentialLR(opt, [optim.StepLR(opt, 3), optim.StepLR(opt, 3)], [2])
    with pytest.raises(ValueError, match="the states of 2 schedulers"):
        seq.load_state_dict({"last_epoch": 3})


# ---- ReduceLROnPlateau --------------------------------------------------------------------
# a loss that improves, stalls, wobbles and improves again; an accuracy that climbs then sticks
LOSSES = [1.0, 0.8, 0.7, 0.7, 0.7, 0.69995, 0.7, 0.71, 0.5, 0.5, 0.5, 0.5, 0.5, 0.49, 0.5,
          0.5, 0.5, 0.5, 0.5, 0.5, 0.3, 0.3, 0.3, 0.3, 0.3, 0.3]
PLATEAUS = {
    "defaults_patience_2": dict(patience=2),
    "abs_threshold_cooldown": dict(factor=0.5, patience=1, threshold=0.05,
                                   threshold_mode="abs", cooldown=2),
    "min_lr_per_group": dict(factor=0.2, patience=0, min_lr=[0.01, 0.05]),
    "max_mode": dict(mode="max", patience=1, factor=0.3),
    "max_mode_abs": dict(mode="max", patience=1, threshold=0.05, threshold_mode="abs"),
}


@pytest.mark.parametrize("kw", PLATEAUS.values(), ids=PLATEAUS)
def test_reduce_lr_on_plateau_matches_torch_step_by_step(kw):
    torch = _torch()
    ours = optim.ReduceLROnPlateau(_sgd(), **kw)
    theirs = torch.optim.lr_scheduler.ReduceLROnPlateau(_torch_sgd(torch), **kw)
    metrics = [1 - x for x in LOSSES] if kw.get("mode") == "max" else LOSSES
    for step, m in enumerate(metrics):
        ours.step(mg.tensor(m) if step % 2 else m)       # a number or a 1-element tensor
        theirs.step(m)
        assert ours.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12), step
    state = theirs.state_dict()                          # a torch state dict loads and resumes
    again = optim.ReduceLROnPlateau(_sgd(ours.get_last_lr()), **kw)
    again.load_state_dict(state)
    for m in metrics[:6]:
        again.step(m)
        theirs.step(m)
        assert again.get_last_lr() == pytest.approx(theirs.get_last_lr(), rel=1e-12)


def test_reduce_lr_on_plateau_by_hand_and_its_errors():
    """patience=1: the second step without an improvement halves the lr; a step that
    improves by less than the relative threshold is no improvement; the state dict holds
    plain numbers, so it saves as JSON and resumes."""
    opt = _sgd((1.0,))
    sched = optim.ReduceLROnPlateau(opt, factor=0.5, patience=1)
    for loss, lr in ((1.0, 1.0), (1.0, 1.0), (0.99995, 0.5), (0.5, 0.5), (0.6, 0.5),
                     (0.6, 0.25)):
        sched.step(loss)
        assert opt.param_groups[0]["lr"] == lr
    state = json.loads(json.dumps(sched.state_dict()))
    resumed = optim.ReduceLROnPlateau(_sgd((0.25,)), factor=0.5, patience=1)
    resumed.load_state_dict(state)
    assert resumed.best == 0.5 and resumed.num_bad_epochs == 0 and resumed.last_epoch == 6
    for call, words in ((lambda: optim.ReduceLROnPlateau(opt, factor=1.0), r"factor must be "
                         r"in \[0, 1\)"),
                        (lambda: optim.ReduceLROnPlateau(opt, mode="up"), "mode must be"),
                        (lambda: optim.ReduceLROnPlateau(opt, min_lr=[0, 0]), "min_lr has 2"),
                        (lambda: resumed.load_state_dict({"lr": 1}), "expected the state")):
        with pytest.raises(ValueError, match=words):
            call()
    # one min_lr serves a group added later, as PyTorch; a list of them cannot
    opt = _sgd((1.0,))
    sched = optim.ReduceLROnPlateau(opt, patience=0, min_lr=0.1)
    listed = optim.ReduceLROnPlateau(opt, patience=0, min_lr=[0.1])
    opt.add_param_group({"params": [nn.Parameter(mg.zeros(1))], "lr": 0.3})
    for _ in range(3):
        sched.step(1.0)
    assert sched.get_last_lr() == [0.1, 0.1] and sched.min_lrs == [0.1, 0.1]
    with pytest.raises(RuntimeError, match="has 2 parameter groups, the scheduler's min_lr "
                                           "list has 1 values"):
        listed.step(1.0)


# ---- OneCycleLR ---------------------------------------------------------------------------
ONE_CYCLES = {
    "two_maxes": dict(max_lr=[1.0, 2.0], total_steps=30),
    "three_phase_linear": dict(max_lr=1.0, epochs=3, steps_per_epoch=7, three_phase=True,
                               anneal_strategy="linear"),
    "no_momentum": dict(max_lr=0.5, total_steps=20, pct_start=0.5, cycle_momentum=False),
}


@pytest.mark.filterwarnings("ignore:Detected call of:UserWarning")   # torch's: no
@pytest.mark.parametrize("adam", [False, True], ids=["sgd_momentum", "adam_beta1"])  # opt.step
@pytest.mark.parametrize("kw", ONE_CYCLES.values(), ids=ONE_CYCLES)
def test_one_cycle_matches_torch_lr_and_momentum_every_step(kw, adam):
    torch = _torch()
    groups = [([nn.Parameter(mg.zeros(1))], [torch.zeros(1, requires_grad=True)], lr)
              for lr in (0.1, 0.5)]
    make = (optim.Adam, torch.optim.Adam) if adam else \
        (lambda g: optim.SGD(g, momentum=0.9), lambda g: torch.optim.SGD(g, momentum=0.9))
    ours = make[0]([{"params": m, "lr": lr} for m, _, lr in groups])
    theirs = make[1]([{"params": t, "lr": lr} for _, t, lr in groups])
    a = optim.OneCycleLR(ours, **kw)
    b = torch.optim.lr_scheduler.OneCycleLR(theirs, **kw)
    key = "betas" if adam else "momentum"
    for step in range(b.total_steps):
        assert _lrs(ours) == pytest.approx(_lrs(theirs), rel=1e-12), step
        assert [g[key] for g in ours.param_groups] == pytest.approx(
            [g[key] for g in theirs.param_groups], rel=1e-12), step
        a.step()
        b.step()
    with pytest.raises(ValueError, match=f"stepped {b.total_steps + 1} times, past "
                                         f"total_steps={b.total_steps}"):
        a.step()


def test_one_cycle_resumes_from_its_state_dict_and_names_bad_arguments():
    opt = optim.SGD([nn.Parameter(mg.zeros(1))], lr=0.1, momentum=0.9)
    sched = optim.OneCycleLR(opt, max_lr=1.0, total_steps=10)
    for _ in range(4):
        sched.step()
    state = json.loads(json.dumps(sched.state_dict()))
    opt2 = optim.SGD([nn.Parameter(mg.zeros(1))], lr=0.1, momentum=0.9)
    opt2.load_state_dict(opt.state_dict())
    again = optim.OneCycleLR(opt2, max_lr=1.0, total_steps=10, last_epoch=3)
    again.load_state_dict(state)
    for _ in range(5):
        sched.step()
        again.step()
        assert _lrs(opt2) == _lrs(opt) and opt2.param_groups[0]["momentum"] == \
            opt.param_groups[0]["momentum"]
    whole = optim.SGD([nn.Parameter(mg.zeros(1))], lr=0.1, momentum=0.9)
    rising = optim.OneCycleLR(whole, max_lr=1.0, total_steps=10, pct_start=1.0)
    for _ in range(10):                                  # a second phase of no steps: its end
        rising.step()                                    # (PyTorch divides by zero there)
    assert rising.get_last_lr() == pytest.approx([1.0 / 25 / 1e4])
    for call, words in (
            (lambda: optim.OneCycleLR(opt, max_lr=1.0), "give total_steps, or epochs and "
                                                        "steps_per_epoch"),
            (lambda: optim.OneCycleLR(opt, max_lr=[1.0, 2.0], total_steps=5),
             "max_lr has 2 values for 1 parameter groups"),
            (lambda: optim.OneCycleLR(opt, max_lr=1.0, total_steps=5, anneal_strategy="exp"),
             "anneal_strategy must be 'cos' or 'linear'")):
        with pytest.raises(ValueError, match=words):
            call()
