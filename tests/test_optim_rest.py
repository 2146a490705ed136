"""The rest of torch.optim: Rprop, ASGD, Adafactor, Muon and LBFGS, and the schedulers
MultiplicativeLR and ChainedScheduler, against PyTorch where it is installed (skipped
elsewhere) and by their definitions without it: trajectories, state dicts both ways,
defaults and bad arguments. (SparseAdam needs sparse gradients, which minigrad lacks.)"""
import warnings

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim
from minigrad.optim import lr_scheduler
from minigrad.optim.muon import zeropower_via_newtonschulz
from optim_helpers import init_and_grads, run_steps


def _torch():
    return pytest.importorskip("torch")


SHAPES = [(2, 3, 4), (3, 4), (4,), ()]
MATRICES = [(3, 5), (6, 4)]

# name -> (shapes, options): each run in minigrad and PyTorch with the same options
KINDS = {
    "rprop": (SHAPES, "Rprop", dict(lr=0.05)),
    "rprop-options": (SHAPES, "Rprop", dict(lr=0.05, etas=(0.3, 1.5), step_sizes=(1e-3, 0.2),
                                            maximize=True)),
    "asgd": (SHAPES, "ASGD", dict(lr=0.05, lambd=0.01, weight_decay=0.1)),
    "asgd-averaging": (SHAPES, "ASGD", dict(lr=0.05, lambd=0.01, alpha=0.5, t0=5)),
    "adafactor": (SHAPES, "Adafactor", dict()),
    "adafactor-options": (SHAPES, "Adafactor", dict(lr=0.05, beta2_decay=-0.5,
                                                    eps=(1e-20, 1e-2), d=1.5,
                                                    weight_decay=0.1, maximize=True)),
    "muon": (MATRICES, "Muon", dict(lr=0.02)),
    "muon-options": (MATRICES, "Muon", dict(lr=0.02, nesterov=False, momentum=0.5,
                                            weight_decay=0.01, ns_steps=3,
                                            adjust_lr_fn="match_rms_adamw")),
}


def _pair(torch, kind, dtype, steps):
    """minigrad's and PyTorch's parameters and optimisers after `steps` equal steps."""
    shapes, name, options = KINDS[kind]
    init, grads = init_and_grads(shapes, steps)
    mp = [nn.Parameter(mg.tensor(a, dtype=dtype)) for a in init]
    tp = [torch.tensor(a.astype(dtype), requires_grad=True) for a in init]
    mo, to = getattr(optim, name)(mp, **options), getattr(torch.optim, name)(tp, **options)
    run_steps(mo, mp, grads)
    for gs in grads:
        for q, g in zip(tp, gs):
            q.grad = torch.tensor(g.astype(dtype))
        to.step()
    return mp, mo, tp, to


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("kind", sorted(KINDS))
def test_trajectories_match_pytorch(kind, dtype):
    torch = _torch()
    mp, _, tp, _ = _pair(torch, kind, dtype, steps=30)
    # Muon's Newton-Schulz runs in bfloat16 in both: the same roundings, but the float64
    # gradient reaches bfloat16 through float32 here
    rtol = (1e-7 if kind.startswith("muon") else 1e-12) if dtype == "float64" else 2e-6
    for p, q in zip(mp, tp):
        assert p.dtype == getattr(mg, dtype)
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=rtol, atol=rtol)


def _to_torch(torch, sd):
    """minigrad's state dict with its tensors as PyTorch's."""
    def conv(v):
        return torch.tensor(v.numpy()) if isinstance(v, mg.Tensor) else \
            [conv(a) for a in v] if isinstance(v, list) else v
    return {"state": {i: {k: conv(v) for k, v in s.items()} for i, s in sd["state"].items()},
            "param_groups": sd["param_groups"]}


@pytest.mark.parametrize("kind", ["rprop", "asgd-averaging", "adafactor", "muon"])
def test_state_dicts_go_both_ways_and_continue_the_same_steps(kind):
    torch = _torch()
    mp, mo, tp, to = _pair(torch, kind, "float64", steps=6)
    theirs, ours = to.state_dict(), mo.state_dict()
    assert {k for k in theirs["param_groups"][0]} - {"foreach", "differentiable",
                                                      "capturable"} <= \
        set(ours["param_groups"][0])
    for i, s in theirs["state"].items():
        assert set(s) == set(ours["state"][i])
    # PyTorch's state into a fresh minigrad optimiser and ours into a fresh PyTorch one
    shapes, name, _ = KINDS[kind]
    mp2 = [nn.Parameter(mg.tensor(q.detach().numpy().copy())) for q in tp]
    tp2 = [torch.tensor(p.numpy().copy(), requires_grad=True) for p in mp]
    mo2, to2 = getattr(optim, name)(mp2), getattr(torch.optim, name)(tp2)
    mo2.load_state_dict(theirs)
    to2.load_state_dict(_to_torch(torch, ours))
    _, grads = init_and_grads(shapes, 4, seed=1)
    run_steps(mo2, mp2, grads)
    for gs in grads:
        for q, g in zip(tp2, gs):
            q.grad = torch.tensor(g)
        to2.step()
    rtol = 1e-7 if kind == "muon" else 1e-12
    for p, q in zip(mp2, tp2):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=rtol, atol=rtol)
    assert mo2.state_dict()["state"][0].get("step", 10) == 10


@pytest.mark.parametrize("name,shape", [("Rprop", (3,)), ("ASGD", (3,)),
                                        ("Adafactor", (3,)), ("Muon", (3, 3)),
                                        ("LBFGS", (3,))])
def test_defaults_are_pytorchs(name, shape):
    torch = _torch()
    ours = getattr(optim, name)([nn.Parameter(mg.zeros(*shape))]).param_groups[0]
    theirs = getattr(torch.optim, name)([torch.zeros(shape, requires_grad=True)]
                                        ).param_groups[0]
    for k, v in theirs.items():
        if k not in ("params", "foreach", "differentiable", "capturable"):
            assert ours[k] == v, k


def test_rprop_by_its_definition():
    """Steps grow by η+ while the sign holds, shrink by η- and stand still on a flip."""
    p = nn.Parameter(mg.tensor([1.0, 1.0], dtype=mg.float64))
    opt = optim.Rprop([p], lr=0.1, etas=(0.5, 2.0), step_sizes=(0.01, 0.3))
    for g, want in [([1.0, 1.0], [0.9, 0.9]), ([1.0, -1.0], [0.7, 0.9]),
                    ([1.0, -1.0], [0.4, 0.95]), ([1.0, 1.0], [0.1, 0.95])]:
        p.grad = mg.tensor(g, dtype=mg.float64)
        opt.step()
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-12)
    np.testing.assert_allclose(opt.state[p]["step_size"], [0.3, 0.025])


def test_asgd_averages_the_iterates_after_t0():
    p = nn.Parameter(mg.tensor([0.0], dtype=mg.float64))
    opt = optim.ASGD([p], lr=0.5, lambd=0.0, t0=2)
    seen = []
    for g in [1.0, -2.0, 3.0, 0.5, -1.0]:
        p.grad = mg.tensor([g], dtype=mg.float64)
        opt.step()
        seen.append(p.numpy()[0])
    # mu = 1 up to step t0 + 1 (ax follows p), then 1/(t - t0): the mean from there on
    np.testing.assert_allclose(opt.state[p]["ax"], [np.mean(seen[2:])], rtol=1e-12)
    assert opt.state[p]["mu"] == pytest.approx(1 / 3)
    assert opt.state[p]["eta"] == np.float32(0.5)       # float32, as PyTorch's


def test_asgd_keeps_eta_and_mu_in_the_default_dtype():
    """PyTorch's eta and mu are 0-d tensors of the default dtype: not rounded to float32
    under set_default_dtype(float64)."""
    old = mg.get_default_dtype()
    mg.set_default_dtype(mg.float64)
    try:
        p = nn.Parameter(mg.tensor([1.0], dtype=mg.float64))
        opt = optim.ASGD([p], lr=0.1, lambd=0.1, alpha=0.5, t0=0)
        for _ in range(3):
            p.grad = mg.tensor([0.5], dtype=mg.float64)
            opt.step()
    finally:
        mg.set_default_dtype(old)
    assert opt.state[p]["eta"] == 0.1 / (1 + 0.1 * 0.1 * 3) ** 0.5
    assert opt.state[p]["mu"] == 1 / 3


def test_adafactor_factors_a_matrix_and_not_a_vector():
    w, b = nn.Parameter(mg.ones(2, 3, 4)), nn.Parameter(mg.ones(4))
    opt = optim.Adafactor([w, b])
    w.grad, b.grad = mg.ones(2, 3, 4), mg.ones(4)
    opt.step()
    assert opt.state[w]["row_var"].shape == (2, 3, 1)
    assert opt.state[w]["col_var"].shape == (2, 1, 4)
    assert set(opt.state[b]) == {"step", "variance"}
    # a gradient of ones: v = 1, update = 1 with RMS 1; α = max(1e-3, RMS(p)=1)·min(lr, 1)
    np.testing.assert_allclose(w.numpy(), np.full((2, 3, 4), 1 - 0.01), rtol=1e-6)


def test_muon_newton_schulz_is_pytorchs_in_bfloat16():
    torch = _torch()
    from torch.optim._muon import _zeropower_via_newtonschulz
    rng = np.random.default_rng(0)
    for shape in [(4, 6), (6, 4), (16, 8)]:
        g = rng.standard_normal(shape).astype(np.float32)
        want = _zeropower_via_newtonschulz(torch.tensor(g), (3.4445, -4.7750, 2.0315), 5,
                                           1e-7).float().numpy()
        got = zeropower_via_newtonschulz(np, g, optim.Muon.__init__.__defaults__[4], 5, 1e-7)
        np.testing.assert_array_equal(got, want)


def test_muon_orthogonalises_without_pytorch():
    rng = np.random.default_rng(0)
    o = zeropower_via_newtonschulz(np, rng.standard_normal((8, 5)).astype(np.float32),
                                   (3.4445, -4.7750, 2.0315), 5, 1e-7)
    s = np.linalg.svd(o, compute_uv=False)
    assert o.shape == (8, 5) and np.all((s > 0.6) & (s < 1.3))


@pytest.mark.parametrize("make,error,match", [
    (lambda ps: optim.Rprop(ps, etas=(1.5, 1.2)), ValueError, "invalid etas"),
    (lambda ps: optim.Rprop(ps, step_sizes=1e-6), TypeError, "step_sizes must be a pair"),
    (lambda ps: optim.Rprop(ps, capturable=True), ValueError, "capturable=True"),
    (lambda ps: optim.ASGD(ps, lr=-1.0), ValueError, "invalid learning rate"),
    (lambda ps: optim.ASGD(ps, t0="5"), TypeError, "t0 must be a number"),
    (lambda ps: optim.Adafactor(ps, beta2_decay=0.5), ValueError, "beta2_decay"),
    (lambda ps: optim.Adafactor(ps, d=0.5), ValueError, "invalid d"),
    (lambda ps: optim.Adafactor(ps, eps=(-1.0, 1e-3)), ValueError, "invalid eps"),
    (lambda ps: optim.Muon(ps), ValueError, "Muon only supports 2D parameters"),
    (lambda ps: optim.LBFGS(ps, line_search_fn="armijo"), ValueError, "strong_wolfe"),
    (lambda ps: optim.LBFGS(ps, history_size=0), ValueError, "history_size"),
    (lambda ps: optim.LBFGS([{"params": ps[:1]}, {"params": ps[1:]}]), ValueError,
     "per-parameter options"),
])
def test_bad_arguments_are_refused(make, error, match):
    ps = [nn.Parameter(mg.zeros(3)), nn.Parameter(mg.zeros(2))]
    with pytest.raises(error, match=match):
        make(ps)


def test_muon_refuses_bad_options_on_matrices():
    w = [nn.Parameter(mg.zeros(3, 3))]
    with pytest.raises(ValueError, match="adjust_lr_fn"):
        optim.Muon(w, adjust_lr_fn="sqrt")
    with pytest.raises(ValueError, match="ns_steps"):
        optim.Muon(w, ns_steps=100)
    with pytest.raises(ValueError, match="momentum"):
        optim.Muon(w, momentum=-0.1)


# ---- LBFGS ------------------------------------------------------------------------------
def _rosenbrock(x, y):
    return ((1 - x) ** 2).sum() + 10 * ((y - x * x) ** 2).sum()


def _lbfgs_pair(torch, dtype, steps, **options):
    rng = np.random.default_rng(0)
    x0, y0 = rng.standard_normal(3).astype(dtype), rng.standard_normal(3).astype(dtype)
    mp = [nn.Parameter(mg.tensor(x0)), nn.Parameter(mg.tensor(y0))]
    tp = [torch.tensor(x0, requires_grad=True), torch.tensor(y0, requires_grad=True)]
    mo, to = optim.LBFGS(mp, **options), torch.optim.LBFGS(tp, **options)
    losses = []
    for _ in range(steps):
        losses.append((float(mo.step(_closure(mo, mp))),
                       float(to.step(_closure(to, tp)).detach())))
    return mp, mo, tp, to, losses


def _closure(opt, ps):
    def closure():
        opt.zero_grad()
        loss = _rosenbrock(*ps)
        loss.backward()
        return loss
    return closure


@pytest.mark.parametrize("dtype", ["float64", "float32"])
@pytest.mark.parametrize("options", [
    dict(), dict(line_search_fn="strong_wolfe"), dict(history_size=2, max_iter=7, lr=0.5),
    dict(history_size=3, line_search_fn="strong_wolfe", max_eval=9, tolerance_change=1e-6)],
    ids=["fixed", "wolfe", "short-history", "wolfe-max-eval"])
def test_lbfgs_matches_pytorch(options, dtype):
    torch = _torch()
    # float32: PyTorch fuses some multiply-adds, so the last bits differ, and Rosenbrock's
    # valley grows them: one step (up to max_iter iterations) there, four in float64
    steps, rtol = (4, 1e-9) if dtype == "float64" else (1, 1e-5)
    mp, mo, tp, to, losses = _lbfgs_pair(torch, dtype, steps, **options)
    for p, q in zip(mp, tp):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=rtol, atol=rtol)
    np.testing.assert_allclose(*zip(*losses), rtol=rtol)
    ours, theirs = mo.state[mp[0]], to.state[tp[0]]
    assert (ours["func_evals"], ours["n_iter"]) == (theirs["func_evals"], theirs["n_iter"])


def test_lbfgs_state_dicts_go_both_ways():
    torch = _torch()
    options = dict(history_size=3, line_search_fn="strong_wolfe", max_iter=4)
    mp, mo, tp, to, _ = _lbfgs_pair(torch, "float64", 2, **options)
    theirs, ours = to.state_dict(), mo.state_dict()
    assert set(theirs["state"][0]) == set(ours["state"][0]) and list(ours["state"]) == [0]
    assert len(ours["state"][0]["old_dirs"]) == len(theirs["state"][0]["old_dirs"])
    mp2 = [nn.Parameter(mg.tensor(q.detach().numpy().copy())) for q in tp]
    tp2 = [torch.tensor(p.numpy().copy(), requires_grad=True) for p in mp]
    mo2, to2 = optim.LBFGS(mp2, **options), torch.optim.LBFGS(tp2, **options)
    mo2.load_state_dict(theirs)
    to2.load_state_dict(_to_torch(torch, ours))
    for _ in range(2):
        mo2.step(_closure(mo2, mp2))
        to2.step(_closure(to2, tp2))
    for p, q in zip(mp2, tp2):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-9, atol=1e-12)
    assert mo2.state[mp2[0]]["n_iter"] == to2.state[tp2[0]]["n_iter"]


def test_lbfgs_minimises_a_quadratic_without_pytorch():
    a = np.array([[3.0, 1.0], [1.0, 2.0]])
    x = nn.Parameter(mg.tensor([4.0, -3.0], dtype=mg.float64))
    opt = optim.LBFGS([x], line_search_fn="strong_wolfe")

    def closure():
        opt.zero_grad()
        loss = (x @ mg.tensor(a) @ x) / 2 - x.sum()
        loss.backward()
        return loss
    for _ in range(3):
        opt.step(closure)
    np.testing.assert_allclose(x.numpy(), np.linalg.solve(a, [1.0, 1.0]), atol=1e-4)
    saved = opt.state_dict()
    with pytest.raises(TypeError, match="closure is required"):
        opt.step(None)
    with pytest.raises(TypeError, match="no flat form"):
        opt.flat_state_dict()
    other = optim.LBFGS([x], line_search_fn="strong_wolfe")
    other.load_state_dict(saved)
    assert other.state[x]["n_iter"] == opt.state[x]["n_iter"]


# ---- MultiplicativeLR and ChainedScheduler -------------------------------------------
def _factor(epoch):
    return 0.9 if epoch % 3 else 1.1


SCHEDULES = {
    "multiplicative": lambda L, o: L.MultiplicativeLR(o, _factor),
    "multiplicative-per-group": lambda L, o: L.MultiplicativeLR(o, [_factor, lambda e: 0.97]),
    "sequential-first": lambda L, o: L.SequentialLR(
        o, [L.MultiplicativeLR(o, _factor), L.ExponentialLR(o, 0.9)], milestones=[5]),
    "sequential-second": lambda L, o: L.SequentialLR(
        o, [L.ExponentialLR(o, 0.9), L.MultiplicativeLR(o, _factor)], milestones=[5]),
    "chained-doc": lambda L, o: L.ChainedScheduler(
        [L.ConstantLR(o, factor=0.1, total_iters=3), L.ExponentialLR(o, 0.9)], o),
    "chained-many": lambda L, o: L.ChainedScheduler(
        [L.LinearLR(o, 0.1, total_iters=6), L.StepLR(o, 4, 0.5), L.MultiplicativeLR(o, _factor),
         L.PolynomialLR(o, 30, 2.0), L.MultiStepLR(o, [3, 7, 8])]),
    "chained-cosine": lambda L, o: L.ChainedScheduler(
        [L.CosineAnnealingLR(o, 10), L.ExponentialLR(o, 0.9)]),
}


def _lrs(opt, sched, steps):
    out = [[g["lr"] for g in opt.param_groups]]
    for _ in range(steps):
        sched.step()
        out.append([g["lr"] for g in opt.param_groups])
    return np.array(out)


def _two_groups(lib):
    if lib is optim:
        return optim.SGD([{"params": [nn.Parameter(mg.zeros(2))], "lr": lr}
                          for lr in (0.05, 0.2)], lr=1.0)
    return lib.SGD([{"params": [__import__("torch").zeros(2, requires_grad=True)], "lr": lr}
                    for lr in (0.05, 0.2)], lr=1.0)


@pytest.mark.parametrize("kind", sorted(SCHEDULES))
def test_schedules_match_pytorch(kind):
    torch = _torch()
    mo, to = _two_groups(optim), _two_groups(torch.optim)
    build = SCHEDULES[kind]
    ms, ts = build(lr_scheduler, mo), build(torch.optim.lr_scheduler, to)
    steps = 10 if kind == "chained-cosine" else 25    # (within T_max: a product there)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        np.testing.assert_allclose(_lrs(mo, ms, steps), _lrs(to, ts, steps), rtol=1e-14)
    assert ms.get_last_lr() == [g["lr"] for g in mo.param_groups]


def test_multiplicative_and_chained_without_pytorch():
    opt = _two_groups(optim)
    sched = lr_scheduler.MultiplicativeLR(opt, lambda e: 0.5)
    np.testing.assert_allclose(_lrs(opt, sched, 3)[:, 0], [0.05, 0.025, 0.0125, 0.00625])
    opt = _two_groups(optim)
    chain = lr_scheduler.ChainedScheduler([lr_scheduler.StepLR(opt, 2, 0.5),
                                           lr_scheduler.ExponentialLR(opt, 0.9)])
    got = _lrs(opt, chain, 4)[:, 1]
    np.testing.assert_allclose(got, [0.2 * 0.5 ** (e // 2) * 0.9 ** e for e in range(5)])


def test_a_pytorch_chained_state_dict_loads_and_continues():
    torch = _torch()
    def build(L, o):
        return L.ChainedScheduler([L.ConstantLR(o, factor=0.1, total_iters=6),
                                   L.MultiplicativeLR(o, _factor), L.ExponentialLR(o, 0.9)], o)
    mo, to = _two_groups(optim), _two_groups(torch.optim)
    ms, ts = build(lr_scheduler, mo), build(torch.optim.lr_scheduler, to)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _lrs(mo, ms, 4), _lrs(to, ts, 4)
        mo2 = _two_groups(optim)
        ms2 = build(lr_scheduler, mo2)
        mo2.load_state_dict(to.state_dict())
        ms2.load_state_dict(ts.state_dict())
        np.testing.assert_allclose(_lrs(mo2, ms2, 6), _lrs(to, ts, 6), rtol=1e-14)
    assert set(ms2.state_dict()) == set(ts.state_dict()) == {"_last_lr", "_schedulers"}


def test_chained_scheduler_refuses_what_it_cannot_chain():
    opt, other = _two_groups(optim), _two_groups(optim)
    with pytest.raises(ValueError, match="at least one scheduler"):
        lr_scheduler.ChainedScheduler([])
    with pytest.raises(ValueError, match="ReduceLROnPlateau"):
        lr_scheduler.ChainedScheduler([lr_scheduler.ReduceLROnPlateau(opt)], opt)
    with pytest.raises(ValueError, match="same optimizer"):
        lr_scheduler.ChainedScheduler([lr_scheduler.ExponentialLR(opt, 0.9),
                                       lr_scheduler.ExponentialLR(other, 0.9)])
    with pytest.raises(ValueError, match="expected 2 lr_lambdas"):
        lr_scheduler.MultiplicativeLR(opt, [_factor])
    with pytest.raises(TypeError, match="must be a function"):
        lr_scheduler.MultiplicativeLR(opt, 0.9)
    # the chained ones are stepped by the chain, not on their own
    first = lr_scheduler.ExponentialLR(opt, 0.9)
    chain = lr_scheduler.ChainedScheduler([first, lr_scheduler.StepLR(opt, 2)])
    chain.step()
    first.step()
    with pytest.raises(RuntimeError, match="something else changed it"):
        chain.step()


@pytest.mark.parametrize("kind", ["rprop", "asgd-averaging", "adafactor", "muon"])
def test_the_spy_device_takes_the_cpus_steps(spy, kind):
    """No NumPy call on device data (the spy device refuses them, as CuPy): the same
    numbers as on the CPU."""
    shapes, name, options = KINDS[kind]
    init, grads = init_and_grads(shapes, 5)
    runs = []
    for device in ("cpu", spy):
        ps = [nn.Parameter(mg.tensor(a, device=device)) for a in init]
        run_steps(getattr(optim, name)(ps, **options), ps, grads)
        runs.append([p.numpy() for p in ps])
    for a, b in zip(*runs):
        np.testing.assert_allclose(b, a, rtol=1e-12, atol=1e-12)


def test_lbfgs_on_the_spy_device(spy):
    runs = []
    for device in ("cpu", spy):
        ps = [nn.Parameter(mg.tensor([0.5, -1.0], device=device)),
              nn.Parameter(mg.tensor([2.0, 0.3], device=device))]
        opt = optim.LBFGS(ps, line_search_fn="strong_wolfe", history_size=3)
        for _ in range(2):
            opt.step(_closure(opt, ps))
        runs.append([p.numpy() for p in ps])
    for a, b in zip(*runs):
        np.testing.assert_allclose(b, a, rtol=1e-12)
