"""A PyTorch optimiser's state dict loads into minigrad's optimiser of the same kind, and the
two then take the same steps; options only PyTorch has load where they are off and are
refused where they are on. Tests that run PyTorch skip where it is absent."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim

SHAPES = [(3, 4), (4,), ()]

KINDS = {
    "adamw": (lambda ps: optim.AdamW(ps), lambda t, ps: t.optim.AdamW(
        ps, lr=0.01, betas=(0.8, 0.95), weight_decay=0.1)),
    "adam-amsgrad": (lambda ps: optim.Adam(ps), lambda t, ps: t.optim.Adam(
        ps, lr=0.02, amsgrad=True, weight_decay=0.01)),
    "sgd": (lambda ps: optim.SGD(ps, lr=1.0), lambda t, ps: t.optim.SGD(
        ps, lr=0.1, momentum=0.9, nesterov=True, weight_decay=0.01)),
    "rmsprop": (lambda ps: optim.RMSprop(ps), lambda t, ps: t.optim.RMSprop(
        ps, lr=0.01, momentum=0.5, centered=True)),
}


def grads(steps, seed=0):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s) for s in SHAPES] for _ in range(steps)]


@pytest.mark.parametrize("kind", sorted(KINDS))
def test_a_torch_state_dict_continues_the_same_steps(kind):
    """Three steps in PyTorch, then its weights and optimiser state into minigrad (options
    too: minigrad's optimiser was built with its defaults), then two more steps in each."""
    torch = pytest.importorskip("torch")
    make_mg, make_torch = KINDS[kind]
    rng = np.random.default_rng(1)
    tp = [torch.tensor(rng.standard_normal(s), requires_grad=True) for s in SHAPES]
    to = make_torch(torch, tp)
    before, after = grads(3), grads(2, seed=1)
    for gs in before:
        for p, g in zip(tp, gs):
            p.grad = torch.tensor(g)
        to.step()
    mp = [nn.Parameter(mg.tensor(p.detach().numpy().copy())) for p in tp]
    mo = make_mg(mp)
    mo.load_state_dict(to.state_dict())
    assert mo.param_groups[0]["lr"] == to.param_groups[0]["lr"]
    for gs in after:
        for p, q, g in zip(mp, tp, gs):
            p.grad, q.grad = mg.tensor(g), torch.tensor(g)
        mo.step()
        to.step()
    for p, q in zip(mp, tp):
        np.testing.assert_allclose(p.numpy(), q.detach().numpy(), rtol=1e-12, atol=1e-12)
    state = mo.state_dict()["state"]
    if "step" in state[0]:
        assert state[0]["step"] == 5 and isinstance(state[0]["step"], int)


class FakeTorchTensor:
    """What load_state_dict sees of a torch.Tensor: detach().cpu().numpy()."""
    def __init__(self, a):
        self.a = np.asarray(a)

    def detach(self):
        return self

    def cpu(self):
        return self

    def numpy(self):
        return self.a


def torch_like_adamw_state(**options):
    group = dict(lr=0.01, betas=(0.9, 0.999), eps=1e-8, weight_decay=0.01, amsgrad=False,
                 maximize=False, foreach=None, capturable=False, differentiable=False,
                 fused=None, decoupled_weight_decay=True, params=[0])
    group.update(options)
    state = {0: {"step": FakeTorchTensor(np.float32(4.0)),
                 "exp_avg": FakeTorchTensor(np.ones(3)), "exp_avg_sq": FakeTorchTensor(
                     np.full(3, 2.0))}}
    return {"state": state, "param_groups": [group]}


def test_torch_format_loads_without_torch():
    p = nn.Parameter(mg.zeros(3, dtype=mg.float64))
    opt = optim.AdamW([p], lr=0.5)
    opt.load_state_dict(torch_like_adamw_state())
    s = opt.state[p]
    assert s["step"] == 4 and isinstance(s["step"], int)
    np.testing.assert_array_equal(s["exp_avg_sq"], np.full(3, 2.0))
    assert opt.param_groups[0]["lr"] == 0.01
    assert not {"capturable", "differentiable", "fused"} & set(opt.param_groups[0])
    assert opt.param_groups[0]["maximize"] is False


def test_a_torch_state_with_maximize_on_loads_and_ascends():
    p = nn.Parameter(mg.zeros(3, dtype=mg.float64))
    opt = optim.AdamW([p], lr=0.5)
    opt.load_state_dict(torch_like_adamw_state(maximize=True))
    assert opt.param_groups[0]["maximize"] is True


@pytest.mark.parametrize("option,value", [("capturable", True), ("differentiable", True),
                                          ("fused", True)])
def test_a_torch_only_option_that_is_on_is_refused_and_nothing_changes(option, value):
    p = nn.Parameter(mg.zeros(3, dtype=mg.float64))
    opt = optim.AdamW([p], lr=0.5)
    with pytest.raises(ValueError, match=f"{option}={value!r}, an option of PyTorch's"):
        opt.load_state_dict(torch_like_adamw_state(**{option: value}))
    assert opt.param_groups[0]["lr"] == 0.5 and not opt.state


def test_unknown_or_invalid_options_are_refused():
    p = nn.Parameter(mg.zeros(3, dtype=mg.float64))
    opt = optim.SGD([p], lr=0.5)
    with pytest.raises(ValueError, match="unknown option 'betas'.*another kind of optimiser"):
        opt.load_state_dict(torch_like_adamw_state())
    opt = optim.AdamW([p], lr=0.5)
    with pytest.raises(ValueError, match="invalid learning rate -1"):
        opt.load_state_dict(torch_like_adamw_state(lr=-1.0))
    assert opt.param_groups[0]["lr"] == 0.5


def test_a_zero_d_parameter_keeps_its_zero_d_state_arrays():
    p = nn.Parameter(mg.tensor(1.0, dtype=mg.float64))
    opt = optim.Adam([p])
    p.grad = mg.tensor(0.5, dtype=mg.float64)
    opt.step()
    saved = opt.state_dict()
    other = optim.Adam([p])
    other.load_state_dict(saved)
    assert other.state[p]["step"] == 1 and other.state[p]["exp_avg"].shape == ()


def test_torch_states_with_one_cycle_values_and_parameter_names_load():
    """PyTorch's OneCycleLR writes max_lr, min_lr and the momenta into each group, and an
    optimiser built from named_parameters() saves param_names: such state dicts load."""
    torch = pytest.importorskip("torch")
    lin = torch.nn.Linear(2, 3)
    theirs = torch.optim.SGD(lin.named_parameters(), lr=0.1, momentum=0.9)
    torch.optim.lr_scheduler.OneCycleLR(theirs, 0.5, total_steps=10)
    lin(torch.ones(1, 2)).sum().backward()
    theirs.step()
    ours = optim.SGD(nn.Linear(2, 3).named_parameters(), lr=0.1, momentum=0.9)
    ours.load_state_dict(theirs.state_dict())
    group = ours.param_groups[0]
    assert group["param_names"] == ["weight", "bias"] and group["max_lr"] == 0.5
    assert group["lr"] == pytest.approx(theirs.param_groups[0]["lr"], rel=1e-15)
    np.testing.assert_allclose(ours.state[group["params"][0]]["momentum_buffer"],
                               lin.weight.grad.numpy(), rtol=1e-6)


def test_a_torch_state_dict_with_a_tensor_lr_loads(torch):
    """PyTorch takes lr as a 0-d tensor, and saves it so: it loads as its number."""
    theirs = torch.optim.Adam([torch.ones(3, dtype=torch.float64, requires_grad=True)],
                              lr=torch.tensor(0.25, dtype=torch.float64))
    ours = optim.Adam([nn.Parameter(mg.zeros(3, dtype=mg.float64))])
    ours.load_state_dict(theirs.state_dict())
    assert ours.param_groups[0]["lr"] == 0.25 and type(ours.param_groups[0]["lr"]) is float
