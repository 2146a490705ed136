"""Optimisers against PyTorch step by step, their state round-trip, errors, clipping and
learning-rate schedules. Tests marked by `torch` are skipped where PyTorch is absent."""
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim


def _torch():
    return pytest.importorskip("torch")


SHAPES = [(3, 4), (4,), (2, 3)]


def _params_and_grads(steps, seed=0, dtype=np.float64):
    rng = np.random.default_rng(seed)
    init = [rng.standard_normal(s).astype(dtype) for s in SHAPES]
    grads = [[rng.standard_normal(s).astype(dtype) for s in SHAPES] for _ in range(steps)]
    return init, grads


def _run_pair(make_mg, make_torch, steps=5, dtype=np.float64, groups=None, lr_change=None):
    """Run the same grads through a minigrad and a torch optimiser; compare after each step."""
    torch = _torch()
    init, grads = _params_and_grads(steps, dtype=dtype)
    mp = [nn.Parameter(mg.tensor(a.copy())) for a in init]
    tp = [torch.tensor(a.copy(), requires_grad=True) for a in init]
    mo = make_mg(groups(mp) if groups else mp)
    to = make_torch(groups(tp) if groups else tp)
    tol = 1e-12 if dtype == np.float64 else 1e-6
    for k in range(steps):
        if lr_change and k == lr_change[0]:
            for g in mo.param_groups:
                g["lr"] = lr_change[1]
            for g in to.param_groups:
                g["lr"] = lr_change[1]
        for p, q, g in zip(mp, tp, grads[k]):
            p.grad = mg.tensor(g)
            q.grad = torch.tensor(g)
        mo.step()
        to.step()
        for p, q in zip(mp, tp):
            assert p.dtype == dtype
            np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=tol, atol=tol)
    return mo, mp


SGD_CASES = [dict(lr=0.1), dict(lr=0.1, momentum=0.9), dict(lr=0.05, momentum=0.9, dampening=0.3),
             dict(lr=0.1, momentum=0.9, nesterov=True), dict(lr=0.1, weight_decay=0.01),
             dict(lr=0.1, momentum=0.8, nesterov=True, weight_decay=0.1)]


@pytest.mark.parametrize("kw", SGD_CASES, ids=str)
def test_sgd_matches_torch(kw):
    torch = _torch()
    _run_pair(lambda p: optim.SGD(p, **kw), lambda p: torch.optim.SGD(p, **kw))


ADAM_CASES = [dict(), dict(lr=0.01, betas=(0.8, 0.99), eps=1e-6), dict(lr=0.01, weight_decay=0.1),
              dict(lr=0.01, betas=(0.0, 0.5))]


@pytest.mark.parametrize("kw", ADAM_CASES, ids=str)
def test_adam_matches_torch(kw):
    torch = _torch()
    _run_pair(lambda p: optim.Adam(p, **kw), lambda p: torch.optim.Adam(p, **kw))


@pytest.mark.parametrize("kw", [dict(), dict(lr=0.01, weight_decay=0.1), dict(weight_decay=0)],
                         ids=str)
def test_adamw_matches_torch(kw):
    torch = _torch()
    _run_pair(lambda p: optim.AdamW(p, **kw), lambda p: torch.optim.AdamW(p, **kw))


def test_float32_matches_torch():
    torch = _torch()
    _run_pair(lambda p: optim.AdamW(p, lr=0.01), lambda p: torch.optim.AdamW(p, lr=0.01),
              dtype=np.float32)
    _run_pair(lambda p: optim.SGD(p, lr=0.1, momentum=0.9),
              lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), dtype=np.float32)


def test_param_groups_and_lr_change_match_torch():
    torch = _torch()

    def groups(ps):  # decay the matrices, not the vector (as one does for biases/norms)
        return [{"params": [ps[0], ps[2]], "weight_decay": 0.1},
                {"params": [ps[1]], "weight_decay": 0.0, "lr": 0.05}]
    _run_pair(lambda p: optim.AdamW(p, lr=0.01), lambda p: torch.optim.AdamW(p, lr=0.01),
              groups=groups, lr_change=(3, 0.002))
    _run_pair(lambda p: optim.SGD(p, lr=0.1, momentum=0.9),
              lambda p: torch.optim.SGD(p, lr=0.1, momentum=0.9), groups=groups)


def test_param_groups_fill_defaults():
    a, b = nn.Parameter(mg.zeros(2)), nn.Parameter(mg.zeros(3))
    opt = optim.Adam([{"params": [a]}, {"params": b, "lr": 0.5}], lr=0.1, weight_decay=0.2)
    assert opt.param_groups[0]["lr"] == 0.1 and opt.param_groups[1]["lr"] == 0.5
    assert all(g["weight_decay"] == 0.2 for g in opt.param_groups)
    assert opt.param_groups[1]["params"] == [b]


def test_params_without_grad_are_skipped():
    a, b = nn.Parameter(mg.ones(2)), nn.Parameter(mg.ones(2))
    opt = optim.SGD([a, b], lr=1.0)
    a.grad = mg.ones(2)
    opt.step()
    assert a.numpy().tolist() == [0.0, 0.0] and b.numpy().tolist() == [1.0, 1.0]


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: optim.Adam(ps, lr=0.1),
                                  lambda ps: optim.AdamW(ps, lr=0.1)])
def test_step_updates_in_place_and_leaves_grads_untouched(make):
    # as PyTorch: a state_dict() taken before step() follows the parameters
    p = nn.Parameter(mg.ones(3))
    before, version = p._data, p._version
    snapshot = {"p": p.detach()}
    p.grad = mg.ones(3)
    g = p.grad._data
    make([p]).step()
    assert p._data is before and (snapshot["p"].numpy() < 1).all()
    assert (g == 1).all() and (p.numpy() < 1).all()
    assert p._version == version + 1                      # counted as an in-place change


def test_zero_grad():
    a, b = nn.Parameter(mg.ones(2)), nn.Parameter(mg.ones(2))
    a.grad = b.grad = mg.ones(2)             # one gradient array held by two parameters
    shared = a.grad._data
    opt = optim.SGD([a, b], lr=0.1)
    opt.zero_grad(set_to_none=False)
    assert a.grad.numpy().tolist() == [0, 0] and (shared == 1).all()
    opt.zero_grad()
    assert a.grad is None and b.grad is None


def test_training_reduces_loss_with_closure():
    mg.manual_seed(0)
    model = nn.Linear(3, 1)
    x, y = mg.randn(16, 3), mg.randn(16, 1)
    opt = optim.Adam(model.parameters(), lr=0.05)

    def closure():
        opt.zero_grad()
        loss = ((model(x) - y) ** 2).mean()
        loss.backward()
        return loss
    first = float(opt.step(closure))
    for _ in range(50):
        last = float(opt.step(closure))
    assert last < first


# ---- state dict ---------------------------------------------------------------------------
@pytest.mark.parametrize("make", [lambda p: optim.SGD(p, lr=0.1, momentum=0.9, nesterov=True),
                                  lambda p: optim.Adam(p, lr=0.01, weight_decay=0.1),
                                  lambda p: optim.AdamW(p, lr=0.01)], ids=["sgd", "adam", "adamw"])
@pytest.mark.parametrize("via", ["dict", "checkpoint"])
def test_state_dict_round_trip_continues_identically(make, via, tmp_path):
    init, grads = _params_and_grads(6)
    pa = [nn.Parameter(mg.tensor(a.copy())) for a in init]
    opt_a = make([{"params": pa[:2]}, {"params": pa[2:], "lr": 0.003}])
    for k in range(3):
        for p, g in zip(pa, grads[k]):
            p.grad = mg.tensor(g)
        opt_a.step()
    pb = [nn.Parameter(mg.tensor(p.numpy().copy())) for p in pa]
    opt_b = make([{"params": pb[:2]}, {"params": pb[2:]}])
    if via == "dict":
        opt_b.load_state_dict(opt_a.state_dict())
    else:
        tensors, meta = opt_a.flat_state_dict()
        mg.save(tensors, tmp_path / "opt.safetensors", metadata=meta)
        loaded, meta2 = mg.load(tmp_path / "opt.safetensors", with_metadata=True)
        opt_b.load_flat_state_dict(loaded, meta2)
    assert opt_b.param_groups[1]["lr"] == 0.003
    for k in range(3, 6):
        for opt, ps in ((opt_a, pa), (opt_b, pb)):
            for p, g in zip(ps, grads[k]):
                p.grad = mg.tensor(g)
            opt.step()
    for p, q in zip(pa, pb):
        np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_state_dict_is_a_snapshot_and_indexes_params():
    p = nn.Parameter(mg.ones(2))
    opt = optim.Adam([p], lr=0.1)
    p.grad = mg.ones(2)
    opt.step()
    sd = opt.state_dict()
    assert sd["state"][0]["step"] == 1 and sd["param_groups"][0]["params"] == [0]
    saved = sd["state"][0]["exp_avg"].numpy().copy()
    opt.step()
    np.testing.assert_array_equal(sd["state"][0]["exp_avg"].numpy(), saved)


def test_load_state_dict_mismatches_are_errors():
    a, b = nn.Parameter(mg.ones(2)), nn.Parameter(mg.ones(3))
    sd = optim.SGD([a, b], lr=0.1).state_dict()
    with pytest.raises(ValueError, match="parameter groups"):
        optim.SGD([{"params": [a]}, {"params": [b]}], lr=0.1).load_state_dict(sd)
    with pytest.raises(ValueError, match="group 0 has 2 parameters"):
        optim.SGD([a], lr=0.1).load_state_dict(sd)


# ---- errors -------------------------------------------------------------------------------
@pytest.mark.parametrize("make, match", [
    (lambda p: optim.SGD([], lr=0.1), "empty parameter list"),
    (lambda p: optim.Adam([p, p]), "more than once"),
    (lambda p: optim.Adam([{"params": [p]}, {"params": [p]}]), "more than once"),
    (lambda p: optim.SGD([p], lr=-0.1), "learning rate"),
    (lambda p: optim.Adam([{"params": [p], "lr": -1}]), "learning rate -1 in group 0"),
    (lambda p: optim.lr_scheduler.noam(10, 512, warmup_steps=0), "must be positive"),
    (lambda p: optim.lr_scheduler.warmup_cosine(5, 1e-3, 1e-4, -1, 100), "warmup_steps must be >= 0"),
    (lambda p: optim.lr_scheduler.step_decay(-1, 0.1, 10), "step >= 0"),
    (lambda p: optim.lr_scheduler.set_lr(optim.SGD([p], lr=0.1), -1), "must be >= 0"),
    (lambda p: optim.Adam([p], betas=(0.9, 1.0)), "betas"),
    (lambda p: optim.Adam([p], betas=(-0.1, 0.9)), "betas"),
    (lambda p: optim.AdamW([p], weight_decay=-0.01), "weight_decay"),
    (lambda p: optim.SGD([p], lr=0.1, weight_decay=-1), "weight_decay"),
    (lambda p: optim.SGD([p], lr=0.1, nesterov=True), "nesterov"),
    (lambda p: optim.SGD([p], lr=0.1, momentum=-0.5), "momentum"),
    (lambda p: optim.Adam([p], eps=-1.0), "eps"),
    (lambda p: optim.Adam([{"params": [p], "beta": 0.9}]), "unknown option"),
    (lambda p: optim.Adam([{"params": []}]), "empty"),
])
def test_bad_arguments_raise_value_error(make, match):
    with pytest.raises(ValueError, match=match):
        make(nn.Parameter(mg.zeros(2)))


@pytest.mark.parametrize("make, match", [
    (lambda p: optim.SGD([p], lr="0.1"), "lr must be a number, got '0.1'"),
    (lambda p: optim.AdamW([p], weight_decay=None), "weight_decay must be a number"),
    (lambda p: optim.lr_scheduler.LambdaLR(optim.SGD([p], lr=0.1), 0.5),
     "lr_lambda must be a function"),
])
def test_bad_option_types_raise_type_error(make, match):
    with pytest.raises(TypeError, match=match):
        make(nn.Parameter(mg.zeros(2)))


def test_bad_param_types_raise_type_error():
    with pytest.raises(TypeError, match="single Tensor"):
        optim.SGD(nn.Parameter(mg.zeros(2)), lr=0.1)
    with pytest.raises(TypeError, match="expected a Tensor"):
        optim.SGD([1.0], lr=0.1)
    x = mg.ones(2, requires_grad=True)
    with pytest.raises(ValueError, match="leaf"):
        optim.SGD([x * 2], lr=0.1)


def test_misfits_found_at_step_and_load_are_named():
    """A group that is not a dict, a gradient of another shape (set by hand), state for a
    parameter no group has, a flat state without its metadata, an option JSON cannot hold;
    and the repr lists each group's options."""
    p = nn.Parameter(mg.zeros(2))
    opt = optim.Adam([p], lr=0.01)
    with pytest.raises(TypeError, match="a parameter group must be a dict with a 'params'"):
        opt.add_param_group([p])
    with pytest.raises(RuntimeError, match=r"assigned grad has shape \(3,\), but the "
                                           r"tensor's is \(2,\)"):
        p.grad = mg.ones(3)                               # refused as it is set, as PyTorch
    p.grad = mg.ones(2)
    p.data = mg.zeros(3)                                  # the parameter changed under it
    with pytest.raises(RuntimeError, match=r"gradient \(2,\) on cpu does not match parameter "
                                           r"\(3,\)"):
        opt.step()
    p.data, p.grad = mg.zeros(2), mg.ones(2)
    opt.step()
    sd = opt.state_dict()
    sd["state"][5] = sd["state"].pop(0)
    with pytest.raises(ValueError, match="state for parameter 5, which no group has"):
        optim.Adam([p], lr=0.01).load_state_dict(sd)
    tensors, _ = opt.flat_state_dict()
    with pytest.raises(KeyError, match="metadata has no 'optimizer.meta' entry"):
        optim.Adam([p], lr=0.01).load_flat_state_dict(tensors, {})
    odd = optim.Adam([p], lr=0.01)
    odd.param_groups[0]["note"] = object()
    with pytest.raises(TypeError, match="an option is not JSON-serialisable"):
        odd.flat_state_dict()
    assert repr(opt).startswith("Adam (\n  group 0: 1 params, lr=0.01")


# ---- clipping -----------------------------------------------------------------------------
@pytest.mark.parametrize("max_norm, norm_type", [(1.0, 2.0), (100.0, 2.0), (0.5, float("inf")),
                                                 (2.0, 1.0)])
def test_clip_grad_norm_matches_torch(max_norm, norm_type):
    torch = _torch()
    _, grads = _params_and_grads(1)
    mp = [nn.Parameter(mg.zeros(s, dtype=mg.float64)) for s in SHAPES]
    tp = [torch.zeros(s, dtype=torch.float64, requires_grad=True) for s in SHAPES]
    for p, q, g in zip(mp, tp, grads[0]):
        p.grad, q.grad = mg.tensor(g), torch.tensor(g)
    norm = optim.clip_grad_norm_(mp, max_norm, norm_type)
    tnorm = torch.nn.utils.clip_grad_norm_(tp, max_norm, norm_type)
    assert isinstance(norm, mg.Tensor)
    assert float(norm) == pytest.approx(float(tnorm), rel=1e-12)
    for p, q in zip(mp, tp):
        np.testing.assert_allclose(p.grad.numpy(), q.grad.numpy(), rtol=1e-12)


def test_clip_grad_norm_of_order_0_counts_the_nonzero_elements():
    a, b = nn.Parameter(mg.ones(3)), nn.Parameter(mg.ones(2))
    a.grad, b.grad = mg.tensor([0.0, 2.0, 0.0]), mg.tensor([1.0, -4.0])
    norm = nn.utils.clip_grad_norm_([a, b], max_norm=1.5, norm_type=0)
    assert norm.item() == 3.0                            # three nonzero gradient elements
    np.testing.assert_allclose(a.grad.numpy(), [0.0, 1.0, 0.0], rtol=1e-5)


def test_clip_grad_norm_does_not_scale_shared_grads_twice():
    a, b = nn.Parameter(mg.ones(4)), nn.Parameter(mg.ones(4))
    a.grad = b.grad = mg.ones(4)             # one gradient array held by two parameters
    norm = nn.utils.clip_grad_norm_([a, b], max_norm=1.0)
    assert float(norm) == pytest.approx(math.sqrt(8))
    expected = 1.0 / (math.sqrt(8) + 1e-6)
    np.testing.assert_allclose(a.grad.numpy(), expected, rtol=1e-6)
    np.testing.assert_allclose(b.grad.numpy(), expected, rtol=1e-6)


def test_clip_grad_norm_nonfinite_and_empty():
    p = nn.Parameter(mg.zeros(2))
    assert float(optim.clip_grad_norm_([p], 1.0)) == 0.0      # no grads: norm 0
    p.grad = mg.tensor([float("inf"), 1.0])
    with pytest.raises(RuntimeError, match="total norm"):
        optim.clip_grad_norm_([p], 1.0, error_if_nonfinite=True)


@pytest.mark.parametrize("foreach", [False, True])
def test_clip_grad_norm_within_the_norm_leaves_the_gradients_alone(foreach):
    # coef is 1 there and g·1 is g: the host skips the pass; NaN and clipping still multiply
    a, b = nn.Parameter(mg.zeros(3)), nn.Parameter(mg.zeros(2))
    a.grad, b.grad = mg.tensor([0.3, -0.0, 0.4]), mg.tensor([0.0, 0.0])
    before = [a.grad._data, b.grad._data]
    norm = nn.utils.clip_grad_norm_([a, b], max_norm=1.0, foreach=foreach)
    assert float(norm) == pytest.approx(0.5)
    assert a.grad._data is before[0] and b.grad._data is before[1]
    assert np.signbit(a.grad.numpy()[1])                 # -0.0 stays -0.0, as g·1 keeps it
    a.grad = mg.tensor([float("nan"), 1.0, 1.0])
    nn.utils.clip_grad_norm_([a, b], max_norm=1.0, foreach=foreach)
    assert np.isnan(a.grad.numpy()).all() and np.isnan(b.grad.numpy()).all()   # as PyTorch
    a.grad, b.grad = mg.tensor([3.0, 0.0, 4.0]), mg.tensor([0.0, 0.0])
    nn.utils.clip_grad_norm_([a, b], max_norm=1.0, foreach=foreach)
    np.testing.assert_allclose(a.grad.numpy(), [0.6, 0.0, 0.8], rtol=1e-5)


def test_clip_grad_value():
    p = nn.Parameter(mg.zeros(3))
    p.grad = mg.tensor([-3.0, 0.5, 2.0])
    optim.clip_grad_value_([p], 1.0)
    assert p.grad.numpy().tolist() == [-1.0, 0.5, 1.0]


# ---- schedules ----------------------------------------------------------------------------
def test_warmup_cosine_key_steps():
    kw = dict(max_lr=1.0, min_lr=0.1, warmup_steps=10, decay_steps=110)
    assert optim.warmup_cosine(0, **kw) == pytest.approx(1 / 11)
    assert optim.warmup_cosine(9, **kw) == pytest.approx(10 / 11)
    assert optim.warmup_cosine(10, **kw) == pytest.approx(1.0)      # the peak
    assert optim.warmup_cosine(60, **kw) == pytest.approx(0.55)     # half way: the mean
    assert optim.warmup_cosine(110, **kw) == pytest.approx(0.1)
    assert optim.warmup_cosine(10_000, **kw) == 0.1
    lrs = [optim.warmup_cosine(s, **kw) for s in range(10, 111)]
    assert all(x >= y for x, y in zip(lrs, lrs[1:]))                # monotone decay
    with pytest.raises(ValueError, match="decay_steps"):
        optim.warmup_cosine(0, 1.0, 0.1, warmup_steps=10, decay_steps=5)


def test_noam_key_steps():
    d, w = 512, 4000
    peak = optim.noam(w, d, w)
    assert peak == pytest.approx(512 ** -0.5 * 4000 ** -0.5)
    assert optim.noam(0, d, w) == optim.noam(1, d, w) > 0
    assert optim.noam(w // 2, d, w) == pytest.approx(peak / 2)      # linear warmup
    assert optim.noam(4 * w, d, w) == pytest.approx(peak / 2)       # inverse-sqrt decay
    assert optim.noam(w, d, w, factor=2.0) == pytest.approx(2 * peak)


def test_step_decay_key_steps():
    assert [optim.step_decay(s, 1.0, 10, 0.5) for s in (0, 9, 10, 25)] == [1, 1, 0.5, 0.25]
    with pytest.raises(ValueError, match="step_size"):
        optim.step_decay(0, 1.0, 0)


def test_set_lr():
    opt = optim.SGD([{"params": [nn.Parameter(mg.zeros(1))]},
                     {"params": [nn.Parameter(mg.zeros(1))], "lr": 5.0}], lr=1.0)
    optim.set_lr(opt, 0.25)
    assert [g["lr"] for g in opt.param_groups] == [0.25, 0.25]


def test_lambda_lr_matches_torch():
    torch = _torch()
    fns = [lambda s: optim.warmup_cosine(s, 1.0, 0.1, 3, 10), lambda s: 0.9 ** s]
    mopt = optim.SGD([{"params": [nn.Parameter(mg.zeros(1))]},
                      {"params": [nn.Parameter(mg.zeros(1))], "lr": 0.5}], lr=0.1)
    topt = torch.optim.SGD([{"params": [torch.zeros(1, requires_grad=True)]},
                            {"params": [torch.zeros(1, requires_grad=True)], "lr": 0.5}],
                           lr=0.1)
    ms, ts = optim.LambdaLR(mopt, fns), torch.optim.lr_scheduler.LambdaLR(topt, fns)
    for _ in range(12):
        assert ms.get_last_lr() == pytest.approx(ts.get_last_lr(), rel=1e-12)
        assert [g["lr"] for g in mopt.param_groups] == pytest.approx(
            [g["lr"] for g in topt.param_groups])
        mopt.step(), topt.step(), ms.step(), ts.step()
    state = ms.state_dict()
    again = optim.LambdaLR(mopt, fns)
    again.load_state_dict(state)
    assert again.last_epoch == ms.last_epoch and again.base_lrs == [0.1, 0.5]
    with pytest.raises(ValueError, match="lr_lambdas"):
        optim.LambdaLR(mopt, [fns[0]])


def test_sgd_momentum_and_nesterov_by_hand():
    """Without PyTorch: buf = g on the first step, then μ·buf + g; Nesterov steps along
    g + μ·buf, plain momentum along buf."""
    grads = [np.array([0.5, 1.0]), np.array([-1.0, 2.0]), np.array([0.25, -0.5])]
    for nesterov in (False, True):
        p = nn.Parameter(mg.tensor([1.0, -2.0], dtype=mg.float64))
        opt = optim.SGD([p], lr=0.1, momentum=0.9, nesterov=nesterov)
        want, buf = np.array([1.0, -2.0]), None
        for g in grads:
            p.grad = mg.tensor(g, dtype=mg.float64)
            opt.step()
            buf = g if buf is None else 0.9 * buf + g
            want = want - 0.1 * (g + 0.9 * buf if nesterov else buf)
            np.testing.assert_allclose(p.numpy(), want, rtol=1e-12)


def test_clip_grad_norm_p_norm_by_hand():
    a, b = (nn.Parameter(mg.zeros(2, dtype=mg.float64)) for _ in range(2))
    a.grad, b.grad = mg.tensor([3.0, -4.0], dtype=mg.float64), mg.tensor([0.0, 12.0],
                                                                          dtype=mg.float64)
    total = optim.clip_grad_norm_([a, b], 1.0, norm_type=3.0)
    want = (27 + 64 + 1728) ** (1 / 3)
    assert float(total) == pytest.approx(want, rel=1e-12)
    np.testing.assert_allclose(a.grad.numpy(), np.array([3.0, -4.0]) / (want + 1e-6),
                               rtol=1e-9)


# ---- Adam / AdamW by their equations, without torch ------------------------------------------
def _adam_by_hand(p, grads, lr, b1, b2, eps, wd, decoupled):
    m = v = np.zeros_like(p)
    for t, g in enumerate(grads, start=1):
        if wd and not decoupled:
            g = g + wd * p                          # Adam: L2 folded into the gradient
        if wd and decoupled:
            p = p * (1 - lr * wd)                   # AdamW: decay the weights first
        m = b1 * m + (1 - b1) * g
        v = b2 * v + (1 - b2) * g * g
        m_hat, v_hat = m / (1 - b1 ** t), v / (1 - b2 ** t)
        p = p - lr * m_hat / (np.sqrt(v_hat) + eps)  # eps outside the square root
        yield p


@pytest.mark.parametrize("make, wd, decoupled", [
    (lambda ps: optim.Adam(ps, lr=0.1, betas=(0.8, 0.9), eps=0.1), 0.0, False),
    (lambda ps: optim.Adam(ps, lr=0.1, betas=(0.8, 0.9), eps=0.1, weight_decay=0.3), 0.3, False),
    (lambda ps: optim.AdamW(ps, lr=0.1, betas=(0.8, 0.9), eps=0.1, weight_decay=0.3), 0.3, True),
    (lambda ps: optim.AdamW(ps, lr=0.1, betas=(0.8, 0.9), eps=0.1), 0.01, True),  # the default
], ids=["adam", "adam_l2", "adamw", "adamw_default_decay"])
def test_adam_and_adamw_by_hand(make, wd, decoupled):
    """Distinct betas, a large eps and a few steps, so that swapping β1/β2, dropping either
    bias correction, moving eps, or coupling the decay wrongly each change the result."""
    rng = np.random.default_rng(0)
    p0 = rng.standard_normal(5)
    grads = [rng.standard_normal(5) * s for s in (1.0, 0.1, 3.0, 0.5)]
    p = nn.Parameter(mg.tensor(p0, dtype=mg.float64))
    opt = make([p])
    for g, want in zip(grads, _adam_by_hand(p0, grads, 0.1, 0.8, 0.9, 0.1, wd, decoupled)):
        p.grad = mg.tensor(g, dtype=mg.float64)
        opt.step()
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("shape", [(2,), ()])
def test_sgd_dampening_and_weight_decay_by_hand(shape):
    """PyTorch: the first step's buffer is the gradient itself (no dampening), later ones
    μ·buf + (1 - dampening)·g; weight decay adds λ·p to the gradient. A 0-d parameter (a
    learnable scale) too: there g + λ·p is a NumPy scalar, and a buffer kept as one stayed
    frozen at its first value."""
    grads = [np.array([0.5, 1.0]), np.array([-1.0, 2.0]), np.array([0.25, -0.5])]
    grads = [g[:shape[0]] if shape else g[0] for g in grads]
    init = np.array([1.0, -2.0])[:shape[0]] if shape else np.array(1.0)
    p = nn.Parameter(mg.tensor(init, dtype=mg.float64))
    opt = optim.SGD([p], lr=0.1, momentum=0.9, dampening=0.3, weight_decay=0.2)
    want, buf = init, None
    for g in grads:
        p.grad = mg.tensor(g, dtype=mg.float64)
        opt.step()
        d = g + 0.2 * want
        buf = d if buf is None else 0.9 * buf + 0.7 * d
        want = want - 0.1 * buf
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-12)
    saved = opt.state_dict()["state"][0]["momentum_buffer"]       # a tensor, as any state
    assert saved.shape == shape
    np.testing.assert_allclose(saved.numpy(), buf, rtol=1e-12)


def test_clip_grad_norm_leaves_small_gradients_alone_and_uses_absolute_values():
    a = nn.Parameter(mg.zeros(2, dtype=mg.float64))
    a.grad = mg.tensor([0.3, -0.4], dtype=mg.float64)           # norm 0.5 < max_norm
    assert float(optim.clip_grad_norm_([a], 1.0)) == pytest.approx(0.5)
    np.testing.assert_allclose(a.grad.numpy(), [0.3, -0.4], rtol=1e-12)  # never scaled up
    a.grad = mg.tensor([1.0, -4.0], dtype=mg.float64)           # inf-norm: the largest |g|
    assert float(optim.clip_grad_norm_([a], 2.0, norm_type="inf")) == pytest.approx(4.0)
    np.testing.assert_allclose(a.grad.numpy(), np.array([1.0, -4.0]) * 2 / (4 + 1e-6),
                               rtol=1e-9)


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: optim.Adam(ps, lr=0.1)], ids=["sgd", "adam"])
def test_stepping_twice_on_one_gradient_leaves_it_untouched(make):
    """The optimiser's state is its own memory: a second step() on the same .grad (no new
    backward) neither changes the gradient nor sees it changed."""
    p = nn.Parameter(mg.tensor([1.0, -2.0], dtype=mg.float64))
    q = nn.Parameter(mg.tensor([1.0, -2.0], dtype=mg.float64))
    opt_p, opt_q = make([p]), make([q])
    g = np.array([0.5, 1.5])
    p.grad = mg.tensor(g, dtype=mg.float64)
    for _ in range(3):
        opt_p.step()                                       # the same gradient every step
        q.grad = mg.tensor(g, dtype=mg.float64)            # a fresh copy every step
        opt_q.step()
    assert p.grad.numpy().tolist() == [0.5, 1.5]
    np.testing.assert_array_equal(p.numpy(), q.numpy())


def test_a_parameter_without_gradient_is_skipped_not_the_rest_of_its_group():
    a, b, c = (nn.Parameter(mg.ones(2)) for _ in range(3))
    opt = optim.SGD([a, b, c], lr=1.0)
    c.grad = mg.ones(2)                                    # a and b have none
    opt.step()
    assert a.numpy().tolist() == b.numpy().tolist() == [1.0, 1.0]
    assert c.numpy().tolist() == [0.0, 0.0]


@pytest.mark.parametrize("make", [lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9),
                                  lambda ps: optim.Adam(ps, lr=0.1)], ids=["sgd", "adam"])
def test_a_float32_gradient_of_a_float64_parameter_is_used_in_float64(make):
    """Assigning one is refused (as PyTorch); one the parameter's dtype change left behind
    (p.data cast after backward) is used in the parameter's dtype."""
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(4).astype(np.float32) for _ in range(3)]
    p, q = (nn.Parameter(mg.tensor(np.ones(4), dtype=mg.float64)) for _ in range(2))
    with pytest.raises(RuntimeError, match="assigned grad has dtype float32, but the "
                                           "tensor's is float64"):
        p.grad = mg.tensor(grads[0])
    opt_p, opt_q = make([p]), make([q])
    p.data = p.data.float()                                # ones: exact in either
    p.grad = mg.tensor(grads[0])                          # a float32 gradient left behind
    p.data = p.data.double()
    q.grad = mg.tensor(grads[0].astype(np.float64))       # the same values, float64
    for r in (p, q):             # the library's own rewrites of a grad keep working on it
        nn.utils.clip_grad_norm_([r], 100.0)
        nn.utils.clip_grad_value_([r], 100.0)
    opt_p.step()
    opt_q.step()
    opt_p.zero_grad(set_to_none=False)
    assert p.grad.dtype == mg.float32 and p.grad.tolist() == [0.0] * 4
    assert p.dtype == mg.float64
    np.testing.assert_array_equal(p.numpy(), q.numpy())
    for s, t in zip(opt_p.state_dict()["state"][0].values(),
                    opt_q.state_dict()["state"][0].values()):
        if isinstance(s, mg.Tensor):
            assert s.dtype == mg.float64


def test_loaded_optimizer_state_is_a_copy_of_the_state_dict():
    p = nn.Parameter(mg.ones(3))
    opt = optim.Adam([p], lr=0.1)
    p.grad = mg.ones(3)
    opt.step()
    sd = opt.state_dict()
    saved = {k: v.numpy().copy() for k, v in sd["state"][0].items() if isinstance(v, mg.Tensor)}
    opt2 = optim.Adam([p], lr=0.1)
    opt2.load_state_dict(sd)
    p.grad = mg.full((3,), 5.0)
    opt2.step()                                            # must not write into sd
    for k, v in saved.items():
        np.testing.assert_array_equal(sd["state"][0][k].numpy(), v)


def test_options_come_back_with_their_types_through_a_checkpoint(tmp_path):
    p = nn.Parameter(mg.ones(2))
    opt = optim.Adam([p], lr=0.1, betas=(0.8, 0.95))
    tensors, meta = opt.flat_state_dict()
    opt2 = optim.Adam([p], lr=0.5)
    opt2.load_flat_state_dict(tensors, meta)
    assert opt2.param_groups[0]["betas"] == (0.8, 0.95)   # a tuple again, not JSON's list
    assert opt2.param_groups[0]["lr"] == 0.1


def test_nan_learning_rate_is_refused():
    with pytest.raises(ValueError, match="learning rate"):
        optim.SGD([nn.Parameter(mg.ones(1))], lr=float("nan"))


def test_lambda_lr_by_hand():
    """PyTorch's counting: construction applies f(0), each step() the next epoch; one lambda
    per group; base lrs are the groups' initial lrs (kept in the group, so a second
    scheduler on the same optimiser starts from them too); state round-trips."""
    a, b = nn.Parameter(mg.zeros(1)), nn.Parameter(mg.zeros(1))
    opt = optim.SGD([{"params": [a]}, {"params": [b], "lr": 0.5}], lr=0.1)
    sched = optim.LambdaLR(opt, [lambda s: s + 1, lambda s: 0.5 ** s])
    assert sched.get_last_lr() == pytest.approx([0.1, 0.5])
    sched.step()
    assert sched.get_last_lr() == pytest.approx([0.2, 0.25])
    sched.step()
    assert [g["lr"] for g in opt.param_groups] == pytest.approx([0.3, 0.125])
    again = optim.LambdaLR(opt, lambda s: 1.0)
    assert again.base_lrs == [0.1, 0.5]
    resumed = optim.LambdaLR(opt, [lambda s: s + 1, lambda s: 0.5 ** s])
    resumed.load_state_dict(sched.state_dict())
    resumed.step()
    assert resumed.last_epoch == 3
    assert resumed.get_last_lr() == pytest.approx([0.4, 0.0625])


@pytest.mark.parametrize("make", [lambda ps: optim.Adam(ps, lr=0.1),
                                  lambda ps: optim.AdamW(ps, lr=0.1),
                                  lambda ps: optim.SGD(ps, lr=0.1, momentum=0.9)])
def test_a_0d_parameter_steps_as_a_1_element_one(make):
    """A scalar parameter (a temperature, a gate) takes the same steps as a (1,) one (Adam
    broke on it: NumPy turns 0-d arithmetic results into scalars)."""
    scalar, vector = nn.Parameter(mg.tensor(1.5)), nn.Parameter(mg.tensor([1.5]))
    opts = make([scalar]), make([vector])
    for g in (0.3, -1.0, 2.0):
        scalar.grad, vector.grad = mg.tensor(g), mg.tensor([g])
        for o in opts:
            o.step()
    assert scalar.shape == () and scalar.numpy().item() == vector.numpy()[0]


def test_clip_grad_norm_of_order_minus_inf_is_the_smallest_magnitude():
    """(It was 1.0: Σ|g|^-inf raised to -1/inf.) As PyTorch, min over every element."""
    ps = [nn.Parameter(mg.zeros(3)), nn.Parameter(mg.zeros(2)), nn.Parameter(mg.zeros(0))]
    for p, g in zip(ps, ([1.0, -0.5, 2.0], [3.0, 4.0], [])):
        p.grad = mg.tensor(g)
    for foreach in (False, True):
        assert nn.utils.clip_grad_norm_(ps, 10.0, -np.inf, foreach=foreach).item() == 0.5


def test_state_is_indexed_by_the_parameter_as_torch():
    p = nn.Parameter(mg.ones(3))
    opt = optim.Adam([p], lr=0.1)
    (p * p).sum().backward()
    opt.step()
    assert set(opt.state[p]) >= {"exp_avg", "exp_avg_sq"} and p in opt.state
    restored = optim.Adam([p], lr=0.1)
    restored.load_state_dict(opt.state_dict())
    np.testing.assert_array_equal(restored.state[p]["exp_avg"], opt.state[p]["exp_avg"])


def test_state_of_a_parameter_not_yet_stepped_reads_empty_as_torch():
    """opt.state is a defaultdict(dict), as PyTorch's: opt.state[p] before the first step is
    {}, and reading it leaves the state dict and the first step as they were."""
    p = nn.Parameter(mg.ones(3))
    opt = optim.AdamW([p], lr=0.1)
    assert opt.state[p] == {} and opt.state_dict()["state"] == {}
    (p * p).sum().backward()
    opt.step()
    assert opt.state[p]["step"] == 1
    restored = optim.AdamW([p], lr=0.1)
    restored.load_state_dict(opt.state_dict())
    assert restored.state[nn.Parameter(mg.ones(1))] == {}


MAXIMIZE_CASES = {
    "sgd": (lambda o, p: o.SGD(p, lr=0.1, momentum=0.9, weight_decay=0.1, maximize=True)),
    "adam": (lambda o, p: o.Adam(p, lr=0.01, weight_decay=0.1, amsgrad=True, maximize=True)),
    "adam-foreach": (lambda o, p: o.Adam(p, lr=0.01, foreach=True, maximize=True)),
    "adamw": (lambda o, p: o.AdamW(p, lr=0.01, maximize=True)),
    "rmsprop": (lambda o, p: o.RMSprop(p, lr=0.01, momentum=0.5, centered=True,
                                       maximize=True)),
}


@pytest.mark.parametrize("make", MAXIMIZE_CASES.values(), ids=MAXIMIZE_CASES)
def test_maximize_ascends_as_torch(make):
    """maximize=True: the gradient negated before weight decay and momentum see it, as
    PyTorch's; .grad itself is left as it was."""
    torch = _torch()
    mo, mp = _run_pair(lambda p: make(optim, p), lambda p: make(torch.optim, p))
    assert mo.param_groups[0]["maximize"] is True
    kept = mp[0].grad.numpy().copy()
    mo.step()
    np.testing.assert_array_equal(mp[0].grad.numpy(), kept)


def test_sgd_takes_torchs_positional_order_and_keywords():
    """SGD(params, lr, momentum, dampening, weight_decay, nesterov), as torch.optim.SGD: a
    fifth positional argument is the weight decay (it was nesterov here once)."""
    torch = _torch()
    _run_pair(lambda p: optim.SGD(p, 0.1, 0.9, 0.0, 0.01, True, foreach=False),
              lambda p: torch.optim.SGD(p, 0.1, 0.9, 0.0, 0.01, True, foreach=False))
    _run_pair(lambda p: optim.RMSprop(p, 0.01, 0.9, 1e-8, 0.1, 0.5, True, False, True, True),
              lambda p: torch.optim.RMSprop(p, 0.01, 0.9, 1e-8, 0.1, 0.5, True, False, True,
                                            True))
    with pytest.raises(ValueError, match="capturable=True is an option of PyTorch's"):
        optim.RMSprop([nn.Parameter(mg.zeros(1))], capturable=True)


def test_named_parameters_build_an_optimiser_as_torch():
    model = nn.Linear(2, 3)
    opt = optim.AdamW(model.named_parameters(), lr=0.1)
    assert opt.param_groups[0]["param_names"] == ["weight", "bias"]
    assert opt.param_groups[0]["params"] == [model.weight, model.bias]
    groups = optim.SGD([{"params": [("w", model.weight)]}, {"params": [("b", model.bias)],
                                                           "lr": 0.5}], lr=0.1)
    assert [g["param_names"] for g in groups.param_groups] == [["w"], ["b"]]
    assert groups.state_dict()["param_groups"][1]["param_names"] == ["b"]
    again = optim.SGD([dict(g) for g in groups.param_groups])   # a copy of the groups
    assert [g["param_names"] for g in again.param_groups] == [["w"], ["b"]]
    for bad in ([("w", model.weight), model.bias],
                [{"params": [model.weight]}, {"params": [model.bias], "param_names": ["b"]}],
                [{"params": [model.weight], "param_names": ["w"]}, {"params": [model.bias]}],
                [{"params": [model.weight]}, {"params": [("b", model.bias)]}],
                [{"params": [("w", model.weight)]}, {"params": [model.bias]}]):
        with pytest.raises(ValueError, match="mixes named .* and bare tensors"):
            optim.SGD(bad, lr=0.1)


def test_option_types_and_group_dicts_are_named():
    p = nn.Parameter(mg.zeros(2))
    for kw, words in ((dict(momentum="0.9"), "momentum must be a number, got '0.9'"),
                      (dict(momentum=0.9, dampening="0.1"), "dampening must be a number"),
                      (dict(maximize=1), "maximize must be True or False, got 1"),
                      (dict(foreach="yes"), "foreach must be None, True or False")):
        with pytest.raises(TypeError, match=words):
            optim.SGD([p], lr=0.1, **kw)
    with pytest.raises(ValueError, match="2 param_names for 1 parameters"):
        optim.SGD([{"params": [p], "param_names": ["a", "b"]}], lr=0.1)
    with pytest.raises(TypeError, match="'params' entry, got a dict without one"):
        optim.SGD([{"lr": 0.1}], lr=0.1)
    p.grad = mg.tensor([3.0, -3.0])
    nn.utils.clip_grad_value_([p], 1.0, foreach=True)           # PyTorch's keyword, taken
    np.testing.assert_array_equal(p.grad.numpy(), [1.0, -1.0])


def test_named_groups_leave_the_callers_dict_alone_and_pairs_of_tensors_are_refused():
    model = nn.Linear(2, 3)
    group = {"params": list(model.named_parameters()), "lr": 0.5}
    optim.SGD([group], lr=0.1)
    assert set(group) == {"params", "lr"}                      # no param_names added to it
    with pytest.raises(TypeError, match="item 0 is a tuple"):  # two tensors, not a name
        optim.SGD([(model.weight, model.bias)], lr=0.1)
    with pytest.raises(TypeError, match="foreach must be None, True or False"):
        optim.RMSprop(model.parameters(), foreach="yes")


def test_an_optimiser_subclass_of_its_own_gets_maximize_off():
    """A user's Optimizer with its own defaults (no maximize) steps as before."""
    class Plain(optim.Optimizer):
        def __init__(self, params, lr):
            super().__init__(params, dict(lr=lr))

        def _update(self, param, g, state, group):
            param.data -= group["lr"] * g
    p = nn.Parameter(mg.tensor([1.0, 2.0]))
    opt = Plain([p], lr=0.5)
    p.grad = mg.tensor([2.0, 2.0])
    opt.step()
    assert p.tolist() == [0.0, 1.0] and opt.param_groups[0]["maximize"] is False


@pytest.mark.parametrize("make, after", [(lambda ps: optim.Adam(ps, lr=1e-2), 0.94384765625),
                                         (lambda ps: optim.RMSprop(ps, lr=1e-2),
                                          0.89013671875)])
def test_a_gradient_whose_square_overflows_does_not_freeze_the_parameter(make, after):
    """v gets (1-β2)·g·g in that order, as PyTorch's addcmul: g² alone overflows float16 at
    g = 300 (v = inf, and every later step m/√inf = 0). The values are PyTorch's."""
    p = nn.Parameter(mg.ones(1, dtype=mg.float16))
    opt = make([p])
    for g in [300.0] + [1.0] * 20:
        p.grad = mg.tensor([g], dtype=mg.float16)
        opt.step()
    assert p.item() == after
    q = nn.Parameter(mg.ones(1))                 # float32: a gradient of 1e20 still steps
    opt = make([q])
    q.grad = mg.tensor([1e20])
    opt.step()
    state = opt.state[q]
    assert np.isfinite(state.get("exp_avg_sq", state.get("square_avg"))).all()
    assert q.item() < 1.0
