"""What a PyTorch user expects of torch.optim beyond SGD/Adam/AdamW: RMSprop (plain,
momentum, centered, weight decay) and Adam/AdamW with amsgrad, against PyTorch where it is
installed (skipped elsewhere) and by their equations without it, on every device and every
Adam path (one by one, flat, and where a fused kernel exists); state-dict round trips; bad
arguments. The scheduler classes are in test_optim_schedulers.py."""
import numpy as np
import pytest

import minigrad as mg
from optim_helpers import init_and_grads, run_steps
from minigrad import backend, nn, optim

import spy_backend


def _torch():
    return pytest.importorskip("torch")


# ---- RMSprop and AMSGrad against PyTorch -------------------------------------------------
SHAPES = [(3, 4), (4,), (2, 3)]


def _init_and_grads(steps=10, seed=0):
    return init_and_grads(SHAPES, steps, seed)


_steps = run_steps


def _run(make, device="cpu", dtype="float64", steps=10, init_grads=None):
    """Parameters and optimiser after `steps` steps of `make`'s optimiser on fixed grads."""
    init, grads = init_grads or _init_and_grads(steps)
    ps = [nn.Parameter(mg.tensor(a, dtype=dtype, device=device)) for a in init]
    opt = make(ps)
    _steps(opt, ps, grads[:steps])
    return ps, opt


def _run_torch(torch, make, dtype, steps=10):
    init, grads = _init_and_grads(steps)
    tdtype = getattr(torch, dtype)
    ps = [torch.tensor(a, dtype=tdtype, requires_grad=True) for a in init]
    opt = make(ps)
    for step in grads:
        for p, g in zip(ps, step):
            p.grad = torch.tensor(g, dtype=tdtype)
        opt.step()
    return [p.detach().numpy() for p in ps]


# (params, module) -> optimiser, for module = minigrad.optim and torch.optim alike
OPTIMIZERS = {
    "rmsprop": lambda ps, m: m.RMSprop(ps),
    "rmsprop_momentum": lambda ps, m: m.RMSprop(ps, lr=0.01, momentum=0.9),
    "rmsprop_centered": lambda ps, m: m.RMSprop(ps, lr=0.01, alpha=0.9, centered=True),
    "rmsprop_weight_decay": lambda ps, m: m.RMSprop(ps, lr=0.02, weight_decay=0.1, eps=1e-4),
    "rmsprop_all": lambda ps, m: m.RMSprop(ps, lr=0.01, alpha=0.95, weight_decay=0.05,
                                           momentum=0.5, centered=True),
    "adam_amsgrad": lambda ps, m: m.Adam(ps, lr=0.05, betas=(0.9, 0.99), amsgrad=True),
    "adam_amsgrad_l2": lambda ps, m: m.Adam(ps, lr=0.05, betas=(0.8, 0.9), weight_decay=0.1,
                                            amsgrad=True),
    "adamw_amsgrad": lambda ps, m: m.AdamW(ps, lr=0.05, weight_decay=0.1, amsgrad=True),
}


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("make", OPTIMIZERS.values(), ids=OPTIMIZERS)
def test_optimizer_matches_torch_after_10_steps(make, dtype, device):
    torch = _torch()
    ours, _ = _run(lambda ps: make(ps, optim), device, dtype)
    theirs = _run_torch(torch, lambda ps: make(ps, torch.optim), dtype)
    tol = 1e-12 if dtype == "float64" else 1e-6
    for p, q in zip(ours, theirs):
        assert p.dtype == dtype and p.device == device
        np.testing.assert_allclose(p.numpy(), q, rtol=tol, atol=tol)


@pytest.mark.parametrize("make", OPTIMIZERS.values(), ids=OPTIMIZERS)
def test_state_dict_round_trip_midway_equals_an_uninterrupted_run(make, device, tmp_path):
    """Five steps, the state saved (into a .safetensors checkpoint and back) and loaded into
    a new optimiser over copies of the parameters, five more: as ten without a stop."""
    init_grads = _init_and_grads(10)
    whole, _ = _run(lambda ps: make(ps, optim), device, init_grads=init_grads)
    half, opt = _run(lambda ps: make(ps, optim), device, steps=5, init_grads=init_grads)
    tensors, meta = opt.flat_state_dict()
    mg.save(tensors, tmp_path / "opt.safetensors", metadata=meta)
    ps = [nn.Parameter(mg.tensor(p.numpy(), device=device)) for p in half]
    opt2 = make(ps, optim)
    opt2.load_flat_state_dict(*mg.load(tmp_path / "opt.safetensors", with_metadata=True))
    _steps(opt2, ps, init_grads[1][5:])
    for p, q in zip(whole, ps):
        np.testing.assert_array_equal(q.numpy(), p.numpy())


def test_amsgrad_state_is_kept_and_saved():
    _, opt = _run(lambda ps: optim.AdamW(ps, lr=0.05, amsgrad=True), steps=3)
    sd = opt.state_dict()
    assert set(sd["state"][0]) == {"step", "exp_avg", "exp_avg_sq", "max_exp_avg_sq"}
    for s in sd["state"].values():     # the max is at least the current second moment
        assert (s["max_exp_avg_sq"].numpy() >= s["exp_avg_sq"].numpy()).all()
    assert "optimizer.state.2.max_exp_avg_sq" in opt.flat_state_dict()[0]
    assert sd["param_groups"][0]["amsgrad"] is True
    plain = _run(lambda ps: optim.AdamW(ps, lr=0.05), steps=3)[1]
    assert "max_exp_avg_sq" not in plain.state_dict()["state"][0]


class _WithoutAmsgrad:
    """minigrad.optim's Adam and AdamW with amsgrad switched off, for OPTIMIZERS' lines."""
    Adam = staticmethod(lambda ps, **kw: optim.Adam(ps, **{**kw, "amsgrad": False}))
    AdamW = staticmethod(lambda ps, **kw: optim.AdamW(ps, **{**kw, "amsgrad": False}))


@pytest.mark.parametrize("name", [n for n in OPTIMIZERS if "amsgrad" in n])
def test_amsgrad_changes_the_result(name):
    """The test data make AMSGrad's max differ from the current moment, by far more than the
    tolerances (else the torch comparisons could not tell amsgrad from plain Adam)."""
    a = _run(lambda ps: OPTIMIZERS[name](ps, optim))[0]
    b = _run(lambda ps: OPTIMIZERS[name](ps, _WithoutAmsgrad))[0]
    assert max(np.abs(p.numpy() - q.numpy()).max() for p, q in zip(a, b)) > 2e-5


# ---- AMSGrad on every path: flat (foreach) and where a fused kernel exists ---------------
@pytest.fixture
def kernel_spy(monkeypatch):
    """The spy device with a `kernels` hook that records what is asked and declines (so the
    array chain runs): a fused Adam kernel has no v_max, so amsgrad must never ask for it."""
    asked = []

    def kernels(name, *args):
        asked.append(name)
        return None

    def factory():
        b = spy_backend.make_backend("kspy")
        b.kernels = kernels
        return b
    monkeypatch.setitem(backend._FACTORIES, "kspy", factory)
    monkeypatch.setattr(backend, "_BACKENDS", dict(backend._BACKENDS))
    return asked


@pytest.mark.parametrize("foreach", [None, True, False])
@pytest.mark.parametrize("cls", [optim.Adam, optim.AdamW])
def test_amsgrad_takes_no_fused_kernel_and_any_path_matches_one_by_one(kernel_spy, cls,
                                                                        foreach):
    ref_ps, ref = _run(lambda ps: cls(ps, lr=0.05, amsgrad=True, foreach=False))
    ps, opt = _run(lambda ps: cls(ps, lr=0.05, amsgrad=True, foreach=foreach), device="kspy")
    assert "adam" not in kernel_spy
    assert bool(opt._flat) == (foreach is not False)         # the flat path ran (default on)
    for p, q in zip(ref_ps, ps):
        np.testing.assert_array_equal(q.numpy(), p.numpy())
    for s, t in zip(ref.state_dict()["state"].values(), opt.state_dict()["state"].values()):
        for k in ("exp_avg", "exp_avg_sq", "max_exp_avg_sq"):
            np.testing.assert_array_equal(t[k].numpy(), s[k].numpy())
    _run(lambda ps: cls(ps, lr=0.05, foreach=foreach), device="kspy", steps=1)
    assert "adam" in kernel_spy                              # the hook does see plain Adam


def test_amsgrad_switched_on_midway_goes_on_every_path():
    """amsgrad switched on by loading a state dict: the flat arrays are rebuilt with a third,
    and the flat path still equals one by one."""
    out = []
    for foreach in (False, True):
        init_grads = _init_and_grads(6)
        ps, opt = _run(lambda ps: optim.AdamW(ps, lr=0.05, foreach=foreach), steps=3,
                       init_grads=init_grads)
        for g in opt.param_groups:
            g["amsgrad"] = True
        _steps(opt, ps, init_grads[1][3:])
        assert all("max_exp_avg_sq" in opt.state[p] for p in ps)
        assert bool(opt._flat) == foreach
        out.append([p.numpy() for p in ps])
    for a, b in zip(*out):
        np.testing.assert_array_equal(b, a)


# ---- by their equations, without torch --------------------------------------------------
def _rmsprop_by_hand(p, grads, lr, alpha, eps, wd, momentum, centered):
    v, mean, buf = np.zeros_like(p), np.zeros_like(p), np.zeros_like(p)
    for g in grads:
        g = g + wd * p
        v = alpha * v + (1 - alpha) * g * g
        if centered:
            mean = alpha * mean + (1 - alpha) * g
            d = np.sqrt(v - mean * mean) + eps
        else:
            d = np.sqrt(v) + eps
        if momentum:
            buf = momentum * buf + g / d
            p = p - lr * buf
        else:
            p = p - lr * g / d
        yield p


@pytest.mark.parametrize("kw", [dict(), dict(momentum=0.7), dict(centered=True),
                                dict(weight_decay=0.3, momentum=0.5, centered=True)], ids=str)
def test_rmsprop_by_hand(kw):
    """Distinct alpha and a large eps, so that misplacing either shows."""
    rng = np.random.default_rng(1)
    p0 = rng.standard_normal(5)
    grads = [rng.standard_normal(5) * s for s in (1.0, 0.1, 3.0, 0.5)]
    p = nn.Parameter(mg.tensor(p0, dtype=mg.float64))
    opt = optim.RMSprop([p], lr=0.1, alpha=0.8, eps=0.1, **kw)
    want = _rmsprop_by_hand(p0, grads, 0.1, 0.8, 0.1, kw.get("weight_decay", 0.0),
                            kw.get("momentum", 0.0), kw.get("centered", False))
    for g, w in zip(grads, want):
        p.grad = mg.tensor(g, dtype=mg.float64)
        opt.step()
        np.testing.assert_allclose(p.numpy(), w, rtol=1e-12)


def test_amsgrad_by_hand():
    rng = np.random.default_rng(2)
    p0 = rng.standard_normal(4)
    grads = [rng.standard_normal(4) * s for s in (3.0, 0.1, 1.0, 0.05)]
    p = nn.Parameter(mg.tensor(p0, dtype=mg.float64))
    opt = optim.Adam([p], lr=0.1, betas=(0.8, 0.9), eps=0.1, amsgrad=True)
    want, m, v, v_max = p0, 0.0, 0.0, 0.0
    for t, g in enumerate(grads, start=1):
        m = 0.8 * m + 0.2 * g
        v = 0.9 * v + 0.1 * g * g
        v_max = np.maximum(v_max, v)                       # the largest v so far
        want = want - 0.1 / (1 - 0.8 ** t) * m / (np.sqrt(v_max / (1 - 0.9 ** t)) + 0.1)
        p.grad = mg.tensor(g, dtype=mg.float64)
        opt.step()
        np.testing.assert_allclose(p.numpy(), want, rtol=1e-12)


@pytest.mark.parametrize("kw", [dict(), dict(momentum=0.9, centered=True)], ids=str)
def test_rmsprop_0d_parameter_steps_as_a_1_element_one(kw):
    scalar, vector = nn.Parameter(mg.tensor(1.5)), nn.Parameter(mg.tensor([1.5]))
    opts = optim.RMSprop([scalar], **kw), optim.RMSprop([vector], **kw)
    for g in (0.3, -1.0, 2.0):
        scalar.grad, vector.grad = mg.tensor(g), mg.tensor([g])
        for o in opts:
            o.step()
    assert scalar.shape == () and scalar.numpy().item() == vector.numpy()[0]


def test_rmsprop_state_names_are_torchs():
    _, opt = _run(lambda ps: optim.RMSprop(ps, momentum=0.9, centered=True), steps=2)
    assert set(opt.state_dict()["state"][1]) == {"step", "square_avg", "grad_avg",
                                                 "momentum_buffer"}
    _, plain = _run(lambda ps: optim.RMSprop(ps), steps=2)
    assert set(plain.state_dict()["state"][1]) == {"step", "square_avg"}


# ---- optimiser argument errors ----------------------------------------------------------
@pytest.mark.parametrize("make, error, match", [
    (lambda p: optim.RMSprop([p], alpha=1.5), ValueError, r"invalid alpha 1.5 .*\[0, 1\]"),
    (lambda p: optim.RMSprop([p], alpha=-0.1), ValueError, "invalid alpha"),
    (lambda p: optim.RMSprop([p], alpha="0.9"), TypeError, "alpha must be a number"),
    (lambda p: optim.RMSprop([p], eps=-1e-8), ValueError,
     r"invalid eps -1e-08 in defaults \(must be >= 0\)"),
    (lambda p: optim.RMSprop([p], momentum=-0.9), ValueError, "invalid momentum"),
    (lambda p: optim.RMSprop([p], lr=-0.01), ValueError, "learning rate"),
    (lambda p: optim.RMSprop([p], weight_decay=-1), ValueError, "weight_decay"),
    (lambda p: optim.RMSprop([p], centered="yes"), ValueError, "centered must be True or False"),
    (lambda p: optim.RMSprop([{"params": [p], "momentum": -1}]), ValueError,
     "invalid momentum -1 in group 0"),
    (lambda p: optim.Adam([p], amsgrad="yes"), ValueError, "amsgrad must be True or False"),
    (lambda p: optim.AdamW([p], amsgrad=None), ValueError, "amsgrad must be True or False"),
    # numbers checked as numbers, not a bare "'<' not supported between 'str' and 'int'"
    (lambda p: optim.Adam([p], eps="1e-8"), ValueError, r"invalid eps '1e-8' .*a number"),
    (lambda p: optim.Adam([p], eps=float("nan")), ValueError, r"invalid eps nan"),
    (lambda p: optim.AdamW([p], betas="ab"), ValueError, r"invalid betas 'ab' .*two numbers"),
    (lambda p: optim.Adam([p], betas=None), ValueError, r"invalid betas None"),
    (lambda p: optim.Adam([p], betas=(0.9,)), ValueError, r"invalid betas \(0.9,\)"),
])
def test_bad_optimizer_arguments(make, error, match):
    with pytest.raises(error, match=match):
        make(nn.Parameter(mg.zeros(2)))


def test_amsgrad_is_adams_sixth_positional_argument_as_torch():
    p = nn.Parameter(mg.zeros(2))
    assert optim.Adam([p], 1e-3, (0.9, 0.999), 1e-8, 0.0, True).param_groups[0]["amsgrad"]
    assert optim.AdamW([p], 1e-3, (0.9, 0.999), 1e-8, 0.0, True).param_groups[0]["amsgrad"]
