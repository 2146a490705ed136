"""Adagrad, Adadelta, Adamax, NAdam (also decoupled, and its momentum_decay) and RAdam (also
decoupled): against PyTorch step by step where it is installed (skipped elsewhere), by their
equations without it, their state-dict round trips (ours, and PyTorch's both ways), and bad
arguments refused on PyTorch's conditions. The schedulers are in
test_optim_schedulers_extra.py."""
import json

import numpy as np
import pytest

import minigrad as mg
from optim_helpers import init_and_grads, run_steps
from minigrad import nn, optim


def _torch():
    return pytest.importorskip("torch")


SHAPES = [(3, 4), (4,), ()]


def _init_and_grads(steps=12, seed=0):
    return init_and_grads(SHAPES, steps, seed)


_steps = run_steps


def _params(init, dtype="float64", device="cpu"):
    return [nn.Parameter(mg.tensor(a, dtype=dtype, device=device)) for a in init]


# (params, module) -> optimiser, for module = minigrad.optim and torch.optim alike
OPTIMIZERS = {
    "adagrad": lambda ps, m: m.Adagrad(ps),
    "adagrad_all": lambda ps, m: m.Adagrad(ps, lr=0.1, lr_decay=0.05, weight_decay=0.1,
                                           initial_accumulator_value=0.5, eps=1e-6),
    "adagrad_max": lambda ps, m: m.Adagrad(ps, lr=0.05, maximize=True),
    "adadelta": lambda ps, m: m.Adadelta(ps),
    "adadelta_all": lambda ps, m: m.Adadelta(ps, lr=0.5, rho=0.6, eps=1e-4, weight_decay=0.1,
                                             maximize=True),
    "adamax": lambda ps, m: m.Adamax(ps),
    "adamax_all": lambda ps, m: m.Adamax(ps, lr=0.05, betas=(0.3, 0.9), eps=1e-6,
                                         weight_decay=0.1, maximize=True),
    "nadam": lambda ps, m: m.NAdam(ps),
    "nadam_l2": lambda ps, m: m.NAdam(ps, lr=0.01, betas=(0.6, 0.99), weight_decay=0.1,
                                      momentum_decay=0.02),
    "nadamw": lambda ps, m: m.NAdam(ps, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True,
                                    maximize=True),
    "radam": lambda ps, m: m.RAdam(ps),
    "radam_l2": lambda ps, m: m.RAdam(ps, lr=0.01, betas=(0.8, 0.9), weight_decay=0.1,
                                      eps=1e-6),
    "radamw": lambda ps, m: m.RAdam(ps, lr=0.01, weight_decay=0.1, decoupled_weight_decay=True,
                                    maximize=True),
}


@pytest.mark.parametrize("make", OPTIMIZERS.values(), ids=OPTIMIZERS)
def test_matches_torch_step_by_step(make, dtype):
    torch = _torch()
    init, grads = _init_and_grads()
    ours = _params(init, dtype)
    theirs = [torch.tensor(a, dtype=getattr(torch, dtype), requires_grad=True) for a in init]
    mo, to = make(ours, optim), make(theirs, torch.optim)
    tol = 1e-12 if dtype == "float64" else 1e-6
    for step in grads:
        for p, q, g in zip(ours, theirs, step):
            p.grad, q.grad = mg.tensor(g, dtype=dtype), torch.tensor(g, dtype=q.dtype)
        mo.step()
        to.step()
        for p, q in zip(ours, theirs):
            assert p.dtype == dtype
            np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=tol, atol=tol)


def _torch_groups(ps):
    """Two groups with their own options, as one gives biases no weight decay."""
    return [{"params": [ps[0], ps[2]], "weight_decay": 0.1, "lr": 0.02},
            {"params": [ps[1]], "weight_decay": 0.0}]


GROUPED = {
    "adagrad": lambda g, m: m.Adagrad(g, lr=0.1, lr_decay=0.01),
    "adadelta": lambda g, m: m.Adadelta(g, rho=0.8),
    "adamax": lambda g, m: m.Adamax(g, lr=0.01, betas=(0.8, 0.95)),
    "nadam": lambda g, m: m.NAdam(g, lr=0.01, decoupled_weight_decay=True),
    "radam": lambda g, m: m.RAdam(g, lr=0.01),
}


@pytest.mark.parametrize("make", GROUPED.values(), ids=GROUPED)
def test_param_groups_and_an_lr_change_match_torch(make):
    torch = _torch()
    init, grads = _init_and_grads()
    ours = _params(init)
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    mo, to = make(_torch_groups(ours), optim), make(_torch_groups(theirs), torch.optim)
    for k, step in enumerate(grads):
        if k == 6:                                 # as a schedule would, between steps
            for g in mo.param_groups + to.param_groups:
                g["lr"] *= 0.5
        for p, q, g in zip(ours, theirs, step):
            p.grad, q.grad = mg.tensor(g), torch.tensor(g)
        mo.step()
        to.step()
        for p, q in zip(ours, theirs):
            np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("make", OPTIMIZERS.values(), ids=OPTIMIZERS)
@pytest.mark.parametrize("via", ["dict", "json", "checkpoint"])
def test_state_dict_round_trip_continues_identically(make, via, tmp_path):
    """Five steps, the state saved and loaded into a new optimiser over copies of the
    parameters, seven more: to the bit as twelve without a stop."""
    init, grads = _init_and_grads()
    whole = _params(init)
    _steps(make(whole, optim), whole, grads)
    half = _params(init)
    opt = make(half, optim)
    _steps(opt, half, grads[:5])
    ps = _params([p.numpy() for p in half])
    again = make(ps, optim)
    if via == "dict":
        again.load_state_dict(opt.state_dict())
    elif via == "json":                # the flat form: tensors by name, the rest as JSON
        tensors, meta = opt.flat_state_dict()
        again.load_flat_state_dict(tensors, json.loads(json.dumps(meta)))
    else:
        tensors, meta = opt.flat_state_dict()
        mg.save(tensors, tmp_path / "opt.safetensors", metadata=meta)
        again.load_flat_state_dict(*mg.load(tmp_path / "opt.safetensors", with_metadata=True))
    _steps(again, ps, grads[5:])
    for p, q in zip(whole, ps):
        np.testing.assert_array_equal(q.numpy(), p.numpy())


STATE_NAMES = {"adagrad": {"step", "sum"}, "adadelta": {"step", "square_avg", "acc_delta"},
               "adamax": {"step", "exp_avg", "exp_inf"},
               "nadam": {"step", "mu_product", "exp_avg", "exp_avg_sq"},
               "radam": {"step", "exp_avg", "exp_avg_sq"}}


@pytest.mark.parametrize("kind", sorted(STATE_NAMES))
def test_state_names_are_torchs(kind):
    ps = _params(_init_and_grads()[0])
    opt = OPTIMIZERS[kind](ps, optim)
    _steps(opt, ps, _init_and_grads(2)[1])
    state = opt.state_dict()["state"]
    assert set(state) == {0, 1, 2}
    assert all(set(s) == STATE_NAMES[kind] for s in state.values())
    assert state[0]["step"] == 2 and isinstance(state[0]["step"], int)


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_a_torch_state_dict_loads_and_continues_as_torch(kind):
    """Four steps in PyTorch, its weights and optimiser state into minigrad (whose optimiser
    was built with the defaults: the options come with the state), then eight more in each."""
    torch = _torch()
    make = OPTIMIZERS[kind]
    init, grads = _init_and_grads()
    theirs = [torch.tensor(a, requires_grad=True) for a in init]
    to = make(theirs, torch.optim)
    for step in grads[:4]:
        for q, g in zip(theirs, step):
            q.grad = torch.tensor(g)
        to.step()
    ours = _params([q.detach().numpy().copy() for q in theirs])
    mo = getattr(optim, type(to).__name__)(ours)
    mo.load_state_dict(to.state_dict())
    assert mo.param_groups[0]["lr"] == to.param_groups[0]["lr"]
    for step in grads[4:]:
        for p, q, g in zip(ours, theirs, step):
            p.grad, q.grad = mg.tensor(g), torch.tensor(g)
        mo.step()
        to.step()
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert mo.state_dict()["state"][0]["step"] == 12


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_our_state_dict_loads_into_torch_and_continues_as_ours(kind):
    torch = _torch()
    make = OPTIMIZERS[kind]
    init, grads = _init_and_grads()
    ours = _params(init)
    mo = make(ours, optim)
    _steps(mo, ours, grads[:4])
    saved = mo.state_dict()
    state = {i: {k: torch.tensor(v.numpy()) if isinstance(v, mg.Tensor) else v
                 for k, v in s.items()} for i, s in saved["state"].items()}
    theirs = [torch.tensor(p.numpy().copy(), requires_grad=True) for p in ours]
    to = getattr(torch.optim, type(mo).__name__)(theirs)
    to.load_state_dict({"state": state, "param_groups": saved["param_groups"]})
    for step in grads[4:]:
        for p, q, g in zip(ours, theirs, step):
            p.grad, q.grad = mg.tensor(g), torch.tensor(g)
        mo.step()
        to.step()
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("kind, make, call", [
    ("adagrad", lambda ps, m: m.Adagrad(ps, 0.1, 0.01, 0.1, 0.5, 1e-6, None),
     "Adagrad(ps, lr, lr_decay, weight_decay, initial_accumulator_value, eps, foreach)"),
    ("adadelta", lambda ps, m: m.Adadelta(ps, 0.5, 0.8, 1e-5, 0.1, None),
     "Adadelta(ps, lr, rho, eps, weight_decay, foreach)"),
    ("adamax", lambda ps, m: m.Adamax(ps, 0.01, (0.8, 0.9), 1e-7, 0.1, None),
     "Adamax(ps, lr, betas, eps, weight_decay, foreach)"),
    ("nadam", lambda ps, m: m.NAdam(ps, 0.01, (0.8, 0.9), 1e-7, 0.1, 0.01, True),
     "NAdam(ps, lr, betas, eps, weight_decay, momentum_decay, decoupled_weight_decay)"),
    ("radam", lambda ps, m: m.RAdam(ps, 0.01, (0.8, 0.9), 1e-7, 0.1, True),
     "RAdam(ps, lr, betas, eps, weight_decay, decoupled_weight_decay)"),
], ids=lambda x: x if isinstance(x, str) and "(" not in x else "")
def test_positional_arguments_in_torchs_order(kind, make, call):
    torch = _torch()
    init, grads = _init_and_grads(4)
    ours, theirs = _params(init), [torch.tensor(a, requires_grad=True) for a in init]
    mo, to = make(ours, optim), make(theirs, torch.optim)
    for step in grads:
        for p, q, g in zip(ours, theirs, step):
            p.grad, q.grad = mg.tensor(g), torch.tensor(g)
        mo.step()
        to.step()
    for p, q in zip(ours, theirs):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-12)
    assert {k: v for k, v in mo.param_groups[0].items() if k != "params"}.items() <= \
        to.param_groups[0].items(), call


# ---- by their equations, without torch --------------------------------------------------
def _adagrad(p, grads, lr=0.01, lr_decay=0.0, weight_decay=0.0, initial_accumulator_value=0.0,
             eps=1e-10, maximize=False):
    s = np.full_like(p, initial_accumulator_value)
    for t, g in enumerate(grads, start=1):
        g = (-g if maximize else g) + weight_decay * p
        s = s + g * g
        p = p - lr / (1 + (t - 1) * lr_decay) * g / (np.sqrt(s) + eps)
        yield p


def _adadelta(p, grads, lr=1.0, rho=0.9, eps=1e-6, weight_decay=0.0, maximize=False):
    v, a = np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        g = (-g if maximize else g) + weight_decay * p
        v = rho * v + (1 - rho) * g * g
        delta = np.sqrt(a + eps) / np.sqrt(v + eps) * g
        a = rho * a + (1 - rho) * delta * delta
        p = p - lr * delta
        yield p


def _adamax(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
            maximize=False):
    (b1, b2), m, u = betas, np.zeros_like(p), np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        g = (-g if maximize else g) + weight_decay * p
        m = b1 * m + (1 - b1) * g
        u = np.maximum(b2 * u, np.abs(g) + eps)
        p = p - lr / (1 - b1 ** t) * m / u
        yield p


def _nadam(p, grads, lr=2e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
           momentum_decay=4e-3, decoupled_weight_decay=False, maximize=False):
    """Πₜ kept as PyTorch keeps it: a float32 number."""
    (b1, b2), m, v, prod = betas, np.zeros_like(p), np.zeros_like(p), np.float32(1.0)
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        mu = b1 * (1 - 0.5 * 0.96 ** (t * momentum_decay))
        mu_next = b1 * (1 - 0.5 * 0.96 ** ((t + 1) * momentum_decay))
        prod = prod * np.float32(mu)
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        d = np.sqrt(v / (1 - b2 ** t)) + eps
        p = p - lr * (1 - mu) / (1 - float(prod)) * g / d \
            - lr * mu_next / (1 - float(prod) * mu_next) * m / d
        yield p


def _radam(p, grads, lr=1e-3, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.0,
           decoupled_weight_decay=False, maximize=False):
    (b1, b2), m, v = betas, np.zeros_like(p), np.zeros_like(p)
    rho_inf = 2 / (1 - b2) - 1
    for t, g in enumerate(grads, start=1):
        g = -g if maximize else g
        if decoupled_weight_decay:
            p = p * (1 - lr * weight_decay)
        else:
            g = g + weight_decay * p
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat = m / (1 - b1 ** t)
        rho = rho_inf - 2 * t * b2 ** t / (1 - b2 ** t)
        if rho > 5:
            r = np.sqrt((rho - 4) * (rho - 2) * rho_inf / ((rho_inf - 4) * (rho_inf - 2) * rho))
            p = p - lr * m_hat * r * np.sqrt(1 - b2 ** t) / (np.sqrt(v) + eps)
        else:
            p = p - lr * m_hat
        yield p


BY_HAND = {
    "adagrad": (optim.Adagrad, _adagrad, {}),
    "adagrad_all": (optim.Adagrad, _adagrad, dict(lr=0.1, lr_decay=0.5, weight_decay=0.2,
                                                  initial_accumulator_value=0.3, eps=0.01,
                                                  maximize=True)),
    "adadelta": (optim.Adadelta, _adadelta, {}),
    "adadelta_all": (optim.Adadelta, _adadelta, dict(lr=0.5, rho=0.5, eps=0.01,
                                                     weight_decay=0.2, maximize=True)),
    "adamax": (optim.Adamax, _adamax, {}),
    "adamax_all": (optim.Adamax, _adamax, dict(lr=0.1, betas=(0.7, 0.6), eps=0.01,
                                               weight_decay=0.2, maximize=True)),
    "nadam": (optim.NAdam, _nadam, {}),
    "nadam_l2": (optim.NAdam, _nadam, dict(lr=0.1, betas=(0.7, 0.8), eps=0.01,
                                           weight_decay=0.2, momentum_decay=0.5)),
    "nadamw": (optim.NAdam, _nadam, dict(lr=0.1, weight_decay=0.2, decoupled_weight_decay=True,
                                         maximize=True)),
    # β2 = 0.8: ρ∞ = 9 and ρₜ passes 5 at step 7 (of 8), so both branches run
    "radam_l2": (optim.RAdam, _radam, dict(lr=0.1, betas=(0.7, 0.8), eps=0.01,
                                           weight_decay=0.2)),
    "radamw": (optim.RAdam, _radam, dict(lr=0.1, betas=(0.7, 0.8), weight_decay=0.2,
                                         decoupled_weight_decay=True, maximize=True)),
}


@pytest.mark.parametrize("name", sorted(BY_HAND))
def test_by_their_equations(name, device):
    cls, by_hand, kw = BY_HAND[name]
    init, grads = _init_and_grads(8)
    ps = _params(init, device=device)
    opt = cls(ps, **kw)
    wants = [by_hand(a, [step[i] for step in grads], **kw) for i, a in enumerate(init)]
    for step in grads:
        _steps(opt, ps, [step])
        for p, want in zip(ps, wants):
            np.testing.assert_allclose(p.numpy(), next(want), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(BY_HAND))
def test_on_a_device_the_step_stays_there_to_the_bit(name, spy):
    """On the spy device (CuPy's stand-in, which refuses NumPy on its arrays): the same
    numbers as on the CPU, and not one read back to the host (a GPU would sync on each)."""
    import spy_backend
    cls, _, kw = BY_HAND[name]
    init, grads = _init_and_grads(8)
    out = []
    for device in ("cpu", spy):
        ps = _params(init, device=device)
        opt = cls(ps, **kw)
        with spy_backend.counted() as n:
            _steps(opt, ps, grads)
        out.append([p.numpy() for p in ps])
    assert n["sync"] == 0
    for a, b in zip(*out):
        np.testing.assert_array_equal(b, a)


def _one_step(cls, p, g, **kw):
    param = nn.Parameter(mg.tensor(p, dtype=mg.float64))
    param.grad = mg.tensor(g, dtype=mg.float64)
    cls([param], **kw).step()
    return param.numpy()


def test_first_steps_by_hand():
    """Numbers worked out on paper from each first step (m, v, sums all start at 0)."""
    p, g = np.array([1.0, -2.0]), np.array([0.5, -4.0])
    # Adagrad: s = g², so the first step is lr·g/(|g| + eps) = lr·sign(g), as Adamax's
    np.testing.assert_allclose(_one_step(optim.Adagrad, p, g, lr=0.1, eps=0.0), [0.9, -1.9],
                               rtol=1e-15)
    np.testing.assert_allclose(_one_step(optim.Adamax, p, g, lr=0.1, eps=0.0), [0.9, -1.9],
                               rtol=1e-15)
    # lr_decay counts from the second step: a fresh optimiser's first step ignores it
    np.testing.assert_allclose(_one_step(optim.Adagrad, p, g, lr=0.1, eps=0.0, lr_decay=9.0),
                               [0.9, -1.9], rtol=1e-15)
    # Adadelta, eps 0.01, rho 0.5: v = g²/2, Δ = √0.01 / √(v + 0.01) · g
    delta = 0.1 / np.sqrt(g * g / 2 + 0.01) * g
    np.testing.assert_allclose(_one_step(optim.Adadelta, p, g, rho=0.5, eps=0.01), p - delta,
                               rtol=1e-14)
    # RAdam: ρ₁ = 1 (< 5), so its first step is momentum SGD's: p - lr·m/(1-β1) = p - lr·g
    np.testing.assert_allclose(_one_step(optim.RAdam, p, g, lr=0.1), [0.95, -1.6], rtol=1e-15)
    # NAdam, momentum_decay 0: μ = β1/2 always, so with β1 = 0.5, μ = 0.25, Π₁ = 0.25, and
    # d = |g| + eps: p - lr·(0.75/0.75 + 0.25·0.5/(1 - 0.0625))·sign(g)
    want = p - 0.1 * (1 + 0.125 / 0.9375) * np.sign(g)
    np.testing.assert_allclose(_one_step(optim.NAdam, p, g, lr=0.1, betas=(0.5, 0.999),
                                         momentum_decay=0.0, eps=0.0), want, rtol=1e-15)


def test_adagrad_state_exists_from_construction_as_torchs():
    a, b = nn.Parameter(mg.zeros(2)), nn.Parameter(mg.zeros(3))
    opt = optim.Adagrad([{"params": [a]}, {"params": [b], "initial_accumulator_value": 0.5}],
                        initial_accumulator_value=0.25)
    state = opt.state_dict()["state"]
    assert state[0]["step"] == 0 and state[0]["sum"].numpy().tolist() == [0.25, 0.25]
    # each group's own initial value (PyTorch's uses the constructor's for every group)
    assert state[1]["sum"].numpy().tolist() == [0.5] * 3
    late = nn.Parameter(mg.zeros(1))
    opt.add_param_group({"params": [late], "initial_accumulator_value": 2.0})
    assert not opt.state[late]                      # a group added later: at its first step
    late.grad = mg.ones(1)
    opt.step()
    assert opt.state[late]["sum"].tolist() == [3.0] and opt.state[late]["step"] == 1
    assert opt.state[a]["step"] == 0                # no gradient: no step


def test_adagrad_sums_a_torch_state_without_every_parameter():
    """A state dict missing a parameter's state (PyTorch saved it before that one was made,
    or it was saved sparse): that parameter starts from the initial sum at its first step."""
    a, b = nn.Parameter(mg.zeros(2)), nn.Parameter(mg.zeros(2))
    opt = optim.Adagrad([a, b], initial_accumulator_value=1.0)
    saved = opt.state_dict()
    del saved["state"][1]
    opt.load_state_dict(saved)
    assert not opt.state[b]
    a.grad = b.grad = mg.ones(2)
    opt.step()
    assert opt.state[b]["sum"].tolist() == [2.0, 2.0]


def test_nadam_keeps_its_mu_product_in_float32_as_torch():
    ps = _params(_init_and_grads()[0])
    opt = optim.NAdam(ps, momentum_decay=0.1)
    _steps(opt, ps, _init_and_grads(6)[1])
    prod64, prod32 = 1.0, np.float32(1.0)
    for t in range(1, 7):
        mu = 0.9 * (1 - 0.5 * 0.96 ** (t * 0.1))
        prod64, prod32 = prod64 * mu, prod32 * np.float32(mu)
    got = opt.state[ps[0]]["mu_product"]
    assert isinstance(got, float) and got == float(prod32) and got != prod64
    # a 0-d parameter's mu_product loads as a number too (not as an array like its param)
    saved = opt.state_dict()
    saved["state"][2]["mu_product"] = mg.tensor(np.float32(got))
    opt.load_state_dict(saved)
    assert isinstance(opt.state[ps[2]]["mu_product"], float)


def test_radam_steps_without_the_second_moment_until_rho_passes_5():
    """With β2 = 0.8 (ρ∞ = 9) ρₜ = 1, 1.89, 2.70, 3.45, 4.13, 4.74, then 5.28 at step 7: up
    to step 6 the step is lr·m̂, whatever eps is; from step 7 eps matters."""
    init, grads = _init_and_grads(7)
    runs = []
    for eps in (1e-8, 10.0):
        ps = _params(init)
        opt = optim.RAdam(ps, lr=0.1, betas=(0.9, 0.8), eps=eps)
        runs.append([])
        for step in grads:
            _steps(opt, ps, [step])
            runs[-1].append(ps[0].numpy().copy())
    for k in range(6):
        np.testing.assert_array_equal(runs[0][k], runs[1][k])
    assert np.abs(runs[0][6] - runs[1][6]).min() > 1e-3


@pytest.mark.parametrize("kind", sorted(STATE_NAMES))
def test_a_0d_parameter_steps_as_a_1_element_one(kind):
    init, grads = _init_and_grads(5)
    scalar = nn.Parameter(mg.tensor(init[2]))
    vector = nn.Parameter(mg.tensor(init[2].reshape(1)))
    for p in (scalar, vector):
        opt = OPTIMIZERS[kind]([p], optim)
        for step in grads:
            p.grad = mg.tensor(step[2].reshape(p.shape))
            opt.step()
        assert opt.state[p]["step"] == 5
    assert scalar.shape == () and scalar.numpy() == vector.numpy()[0]


@pytest.mark.parametrize("kind", sorted(OPTIMIZERS))
def test_a_step_is_in_place_and_leaves_the_gradient_alone(kind):
    ps = _params(_init_and_grads()[0])
    arrays, versions = [p._data for p in ps], [p._version for p in ps]
    opt = OPTIMIZERS[kind](ps, optim)
    for p in ps:
        p.grad = mg.ones(*p.shape, dtype=mg.float64)
    opt.step()
    for p, a, v in zip(ps, arrays, versions):
        assert p._data is a and p._version == v + 1
        assert (p.grad.numpy() == 1).all()


@pytest.mark.parametrize("kind", sorted(STATE_NAMES))
def test_maximize_ascends_exactly_as_descending_the_negated_gradient(kind):
    init, grads = _init_and_grads(6)
    up, down = _params(init), _params(init)
    make = OPTIMIZERS[kind]
    opt_up = type(make(up, optim))(up, maximize=True)
    opt_down = type(make(down, optim))(down)
    _steps(opt_up, up, grads)
    _steps(opt_down, down, [[-g for g in step] for step in grads])
    for p, q in zip(up, down):
        np.testing.assert_array_equal(p.numpy(), q.numpy())
    assert opt_up.param_groups[0]["maximize"] is True


@pytest.mark.parametrize("cls", [optim.Adagrad, optim.Adadelta, optim.Adamax, optim.NAdam,
                                 optim.RAdam])
def test_foreach_is_taken_and_changes_nothing(cls):
    init, grads = _init_and_grads(4)
    out = []
    for foreach in (None, True, False):
        ps = _params(init)
        _steps(cls(ps, foreach=foreach), ps, grads)
        out.append([p.numpy() for p in ps])
    for a, b in zip(out[0], out[1] + out[2]):
        np.testing.assert_array_equal(a, b)
    with pytest.raises(TypeError, match=f"{cls.__name__}: foreach must be None, True or False"):
        cls(_params(init), foreach="yes")


@pytest.mark.parametrize("cls, option, value", [
    (optim.Adagrad, "differentiable", True), (optim.Adagrad, "fused", True),
    (optim.Adadelta, "capturable", True), (optim.Adadelta, "differentiable", True),
    (optim.Adamax, "capturable", True), (optim.NAdam, "capturable", True),
    (optim.NAdam, "differentiable", True), (optim.RAdam, "capturable", True),
    (optim.RAdam, "differentiable", True), (optim.SGD, "fused", True),
    (optim.SGD, "differentiable", True), (optim.Adam, "capturable", True),
    (optim.AdamW, "differentiable", True), (optim.AdamW, "capturable", True)])
def test_torch_only_options_are_taken_off_and_refused_on(cls, option, value):
    p = nn.Parameter(mg.zeros(2))
    off = {"fused": None} if option == "fused" else {option: False}
    cls([p], **off)
    with pytest.raises(ValueError, match=f"{cls.__name__}: {option}={value!r} is an option of "
                                         f"PyTorch's"):
        cls([p], **{option: value})


@pytest.mark.parametrize("cls", [optim.Adam, optim.AdamW])
def test_adam_takes_fused_either_way_with_the_same_steps(cls):
    """fused=True (nanoGPT's configure_optimizers passes it where the signature has it) is
    taken: the step already runs fused where the device can; the numbers are unchanged."""
    out = []
    for fused in (None, False, True):
        p = nn.Parameter(mg.tensor([1.0, -2.0, 3.0]))
        opt = cls([p], lr=0.1, fused=fused, capturable=False, differentiable=False)
        for _ in range(2):
            p.grad = mg.tensor([0.5, 1.0, -1.5])
            opt.step()
        out.append(p.numpy())
    np.testing.assert_array_equal(out[0], out[1])
    np.testing.assert_array_equal(out[0], out[2])
    with pytest.raises(TypeError, match=f"{cls.__name__}: fused must be None, True or False"):
        cls([p], fused="yes")


def test_a_torch_state_with_torch_only_options_on_is_refused():
    p = nn.Parameter(mg.zeros(2))
    opt = optim.NAdam([p])
    saved = opt.state_dict()
    saved["param_groups"][0]["capturable"] = True
    with pytest.raises(ValueError, match="capturable=True, an option of PyTorch's"):
        opt.load_state_dict(saved)


# ---- bad arguments: refused where PyTorch refuses them ----------------------------------
# (class name, keyword arguments, error, match); `torch_too`: PyTorch raises the same error
BAD = [
    ("Adagrad", dict(lr=-0.1), ValueError, r"invalid learning rate -0.1"),
    ("Adagrad", dict(lr_decay=-1e-3), ValueError, r"invalid lr_decay -0.001 in defaults "
                                                  r"\(must be >= 0\)"),
    ("Adagrad", dict(weight_decay=-1.0), ValueError, "invalid weight_decay -1.0"),
    ("Adagrad", dict(initial_accumulator_value=-0.5), ValueError,
     r"invalid initial_accumulator_value -0.5 .*>= 0"),
    ("Adagrad", dict(eps=-1e-10), ValueError, r"invalid eps -1e-10 .*>= 0"),
    ("Adagrad", dict(eps=float("nan")), ValueError, "invalid eps nan"),
    ("Adadelta", dict(rho=1.5), ValueError, r"Adadelta: invalid rho 1.5 in defaults \(must be "
                                            r"in \[0, 1\]\)"),
    ("Adadelta", dict(rho=-0.1), ValueError, "invalid rho -0.1"),
    ("Adadelta", dict(eps=-1.0), ValueError, "invalid eps -1.0"),
    ("Adadelta", dict(lr=float("nan")), ValueError, "invalid learning rate nan"),
    ("Adamax", dict(betas=(1.0, 0.999)), ValueError, r"Adamax: invalid beta parameter at "
                                                     r"index 0: 1.0 .*\[0, 1\)"),
    ("Adamax", dict(betas=(0.9, -0.1)), ValueError, "invalid beta parameter at index 1: -0.1"),
    ("Adamax", dict(eps=-1e-8), ValueError, "invalid eps"),
    ("NAdam", dict(momentum_decay=-4e-3), ValueError, r"NAdam: invalid momentum_decay -0.004 "
                                                      r"in defaults \(must be >= 0\)"),
    ("NAdam", dict(betas=(0.9, 1.0)), ValueError, "invalid beta parameter at index 1: 1.0"),
    ("NAdam", dict(weight_decay=-0.1), ValueError, "invalid weight_decay"),
    ("RAdam", dict(betas=(-0.5, 0.9)), ValueError, "invalid beta parameter at index 0: -0.5"),
    ("RAdam", dict(eps=-1.0), ValueError, "invalid eps -1.0"),
    ("RAdam", dict(lr=-1.0), ValueError, "invalid learning rate -1.0"),
    # what PyTorch would fail on with a bare comparison error, named here
    ("Adagrad", dict(lr_decay="0.1"), TypeError, r"lr_decay must be a number >= 0, got '0.1'"),
    ("Adadelta", dict(rho=None), TypeError, r"rho must be a number in \[0, 1\], got None"),
    ("Adamax", dict(betas=0.9), TypeError, r"betas must be a pair of numbers"),
    ("NAdam", dict(betas=("0.9", 0.99)), TypeError, r"betas\[0\] must be a number"),
    ("RAdam", dict(betas=(0.9,)), TypeError, r"betas must be a pair .*got \(0.9,\)"),
    ("NAdam", dict(decoupled_weight_decay="yes"), TypeError,
     "decoupled_weight_decay must be True or False, got 'yes'"),
    ("RAdam", dict(maximize=1), TypeError, "maximize must be True or False"),
]


@pytest.mark.parametrize("name, kw, error, match", BAD,
                         ids=[f"{n}-{next(iter(kw))}" for n, kw, _, _ in BAD])
def test_bad_arguments_are_named(name, kw, error, match):
    with pytest.raises(error, match=match):
        getattr(optim, name)([nn.Parameter(mg.zeros(2))], **kw)


@pytest.mark.parametrize("name, kw", [(n, kw) for n, kw, e, _ in BAD if e is ValueError],
                         ids=[f"{n}-{next(iter(kw))}" for n, kw, e, _ in BAD if e is ValueError])
def test_torch_refuses_the_same_values(name, kw):
    torch = _torch()
    with pytest.raises(ValueError):
        getattr(torch.optim, name)([torch.zeros(2, requires_grad=True)], **kw)


@pytest.mark.parametrize("name, kw", [
    ("Adagrad", dict(lr=0.0, lr_decay=0.0, eps=0.0, initial_accumulator_value=0.0)),
    ("Adadelta", dict(rho=0.0, eps=0.0)), ("Adadelta", dict(rho=1.0)),
    ("Adamax", dict(betas=(0.0, 0.0), eps=0.0)), ("NAdam", dict(momentum_decay=0.0)),
    ("RAdam", dict(betas=[0.0, 0.5]))])
def test_the_edges_of_the_ranges_are_taken_as_by_torch(name, kw):
    opt = getattr(optim, name)([nn.Parameter(mg.zeros(2))], **kw)
    if "betas" in kw:
        assert opt.param_groups[0]["betas"] == tuple(kw["betas"])


def test_a_bad_group_option_names_its_group():
    p, q = nn.Parameter(mg.zeros(2)), nn.Parameter(mg.zeros(2))
    with pytest.raises(ValueError, match="Adadelta: invalid rho 2 in group 1"):
        optim.Adadelta([{"params": [p]}, {"params": [q], "rho": 2}])
    with pytest.raises(ValueError, match="unknown option.*'momentum'.*valid:"):
        optim.RAdam([{"params": [p], "momentum": 0.9}])


def test_nadam_keeps_its_momentum_product_in_the_default_dtype():
    """PyTorch keeps Πₜ as a 0-d tensor of the default dtype: float32 rounding by default,
    none under set_default_dtype(float64)."""
    def product_after(steps):
        p = nn.Parameter(mg.ones(2, dtype=mg.float64))
        opt = optim.NAdam([p])
        for _ in range(steps):
            p.grad = mg.ones(2, dtype=mg.float64)
            opt.step()
        return opt.state[p]["mu_product"]
    mus = [0.9 * (1 - 0.5 * 0.96 ** (t * 4e-3)) for t in (1, 2, 3)]
    exact = mus[0] * mus[1] * mus[2]
    assert product_after(3) != exact and abs(product_after(3) - exact) < 1e-7
    old = mg.get_default_dtype()
    mg.set_default_dtype(mg.float64)
    try:
        assert product_after(3) == exact
    finally:
        mg.set_default_dtype(old)
