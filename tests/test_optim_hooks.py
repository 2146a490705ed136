"""Optimizer hooks (step, state_dict, load_state_dict; per optimiser and global), each
compared with PyTorch's on the same sequence of calls."""
import copy
import importlib
import pickle

import numpy as np
import pytest

import minigrad as mg
from minigrad import optim
from minigrad.optim import optimizer as mg_optimizer


def _torch_global(torch):
    return importlib.import_module("torch.optim.optimizer")     # no attribute until imported


def _params(lib, value=1.0):
    p = lib.nn.Parameter(lib.tensor([value, 2.0]))
    p.grad = lib.tensor([1.0, 1.0])
    return p


def _step_log(lib, make, glob):
    """The order and arguments the step hooks see over three calls of step."""
    p = _params(lib)
    opt = make(lib)([p], lr=0.1)
    log = []

    def hook(tag):
        def h(o, args, kwargs):
            assert o is opt and args[0] is opt
            log.append((tag, len(args), sorted(kwargs), lib.is_grad_enabled()))
        return h
    handles = [glob.register_optimizer_step_pre_hook(hook("gpre")),
               glob.register_optimizer_step_post_hook(hook("gpost")),
               opt.register_step_post_hook(hook("post")),
               opt.register_step_pre_hook(hook("pre"))]
    try:
        opt.step()
        opt.step(None)
        opt.step(closure=None)
        handles[1].remove()
        handles[3].remove()
        opt.step()
    finally:
        for h in handles:
            h.remove()
    opt.step()                                   # all removed: nothing logged
    return log


@pytest.mark.parametrize("make", [lambda lib: lib.optim.SGD, lambda lib: lib.optim.Adam])
def test_step_hooks_order_args_and_removal_as_torch(torch, make):
    mine = _step_log(mg, make, mg_optimizer)
    assert mine == _step_log(torch, make, _torch_global(torch))
    assert mine[:4] == [("gpre", 1, [], True), ("pre", 1, [], True), ("post", 1, [], True),
                        ("gpost", 1, [], True)]


def _lbfgs_log(lib):
    q = lib.nn.Parameter(lib.tensor([1.0, -2.0]))
    opt = lib.optim.LBFGS([q], max_iter=2)
    log = []
    opt.register_step_pre_hook(lambda o, a, k: log.append(("pre", len(a), sorted(k))))
    opt.register_step_post_hook(lambda o, a, k: log.append(("post", len(a), sorted(k))))

    def closure():
        opt.zero_grad()
        loss = (q * q).sum()
        loss.backward()
        return loss
    opt.step(closure)
    opt.step(closure=closure)
    return log, q.detach().numpy()


def test_step_hooks_run_for_lbfgs_which_has_its_own_step(torch):
    log, q = _lbfgs_log(mg)
    tlog, tq = _lbfgs_log(torch)
    assert log == tlog == [("pre", 2, []), ("post", 2, []), ("pre", 1, ["closure"]),
                           ("post", 1, ["closure"])]
    np.testing.assert_allclose(q, tq, rtol=1e-5, atol=1e-6)


def _replaced_closure(lib, glob):
    p = _params(lib)
    opt = lib.optim.SGD([p], lr=0.1)
    seen = []

    def pre(o, args, kwargs):
        return args, {"closure": lambda: 7.0}
    h = opt.register_step_pre_hook(pre)
    g = glob.register_optimizer_step_post_hook(
        lambda o, a, k: seen.append(k["closure"]()))     # post-hooks see the new arguments
    try:
        out = opt.step()
    finally:
        g.remove()
    h.remove()
    return out, seen, opt.step()


def test_pre_hook_replaces_the_closure_as_torch(torch):
    assert _replaced_closure(mg, mg_optimizer) == \
        _replaced_closure(torch, _torch_global(torch)) == (7.0, [7.0], None)


def test_pre_hook_returning_something_else_is_refused():
    opt = optim.SGD([_params(mg)], lr=0.1)
    opt.register_step_pre_hook(lambda o, a, k: 3)
    with pytest.raises(RuntimeError, match="must return None or a tuple"):
        opt.step()
    with pytest.raises(TypeError, match="expected a function, got int"):
        opt.register_step_post_hook(3)


def test_ema_post_hook_follows_the_parameters():
    p = _params(mg)
    opt = optim.SGD([p], lr=0.5)
    ema = {"w": p.detach().numpy().copy()}

    def update_ema(o, args, kwargs):
        w = o.param_groups[0]["params"][0].detach().numpy()
        ema["w"] = 0.9 * ema["w"] + 0.1 * w
    with opt.register_step_post_hook(update_ema):
        opt.step()
        opt.step()
    opt.step()                                  # the with block removed it
    # steps: [1, 2] -> [0.5, 1.5] -> [0, 1]; ema after two: 0.9(0.9x0 + 0.1x1) + 0.1x2
    np.testing.assert_allclose(ema["w"], [0.9 * 0.95 + 0.1 * 0.0, 0.9 * 1.95 + 0.1 * 1.0])


def test_post_hook_does_not_run_when_the_step_raises():
    opt = optim.SGD([_params(mg)], lr=0.1)
    ran = []
    opt.register_step_post_hook(lambda *a: ran.append(1))

    def closure():
        raise ValueError("boom")
    with pytest.raises(ValueError, match="boom"):
        opt.step(closure)
    assert ran == []


def _state_dict_hooks(lib):
    p = _params(lib)
    opt = lib.optim.SGD([p], lr=0.1, momentum=0.9)
    opt.step()
    log = []
    opt.register_state_dict_pre_hook(lambda o: log.append("pre1"))
    opt.register_state_dict_pre_hook(lambda o: log.append("pre0"), prepend=True)

    def edit(o, sd):
        log.append(("post", sorted(sd)))
        sd["param_groups"][0]["lr"] = 0.25             # in place
    opt.register_state_dict_post_hook(edit)
    h = opt.register_state_dict_post_hook(lambda o, sd: {**sd, "extra": 1}, prepend=True)
    sd = opt.state_dict()
    h.remove()
    sd2 = opt.state_dict()
    return log, sorted(sd), sd["param_groups"][0]["lr"], sorted(sd2), opt.defaults["lr"]


def test_state_dict_hooks_as_torch(torch):
    mine = _state_dict_hooks(mg)
    assert mine == _state_dict_hooks(torch)
    assert mine[0][:3] == ["pre0", "pre1", ("post", ["extra", "param_groups", "state"])]


def _load_hooks(lib):
    p = _params(lib)
    opt = lib.optim.SGD([p], lr=0.1)
    sd = opt.state_dict()
    log = []

    def pre(o, d):
        log.append(("pre", d is sd))                  # a shallow copy of the given dict
        d["added"] = 1
    opt.register_load_state_dict_pre_hook(pre)
    opt.register_load_state_dict_pre_hook(lambda o, d: log.append("pre0"), prepend=True)

    def replace(o, d):
        d = copy.deepcopy({k: v for k, v in d.items() if k != "added"})
        d["param_groups"][0]["lr"] = 0.7
        return d
    opt.register_load_state_dict_pre_hook(replace)
    opt.register_load_state_dict_post_hook(lambda o: log.append(("post", o.param_groups[0]["lr"])))
    opt.register_load_state_dict_post_hook(lambda o: log.append("post0"), prepend=True)
    opt.load_state_dict(sd)
    return log, opt.param_groups[0]["lr"], sorted(sd), sd["param_groups"][0]["lr"]


def test_load_state_dict_hooks_as_torch(torch):
    mine = _load_hooks(mg)
    assert mine == _load_hooks(torch)
    assert mine == (["pre0", ("pre", False), "post0", ("post", 0.7)], 0.7,
                    ["param_groups", "state"], 0.1)


def test_state_dict_hooks_wrap_lbfgs_whole_state():
    q = mg.nn.Parameter(mg.tensor([1.0, -2.0]))
    opt = optim.LBFGS([q], max_iter=2)

    def closure():
        opt.zero_grad()
        loss = (q * q).sum()
        loss.backward()
        return loss
    opt.step(closure)
    seen = []
    opt.register_state_dict_post_hook(lambda o, sd: seen.append(sorted(sd["state"][0])))
    opt.register_load_state_dict_post_hook(lambda o: seen.append("loaded"))
    opt.load_state_dict(opt.state_dict())
    assert "d" in seen[0] and "old_dirs" in seen[0] and seen[1] == "loaded"


def test_state_dict_hook_returning_no_dict_is_refused():
    opt = optim.SGD([_params(mg)], lr=0.1)
    h = opt.register_state_dict_post_hook(lambda o, sd: 5)
    with pytest.raises(TypeError, match=r"returned 5 \(int\)"):
        opt.state_dict()
    h.remove()
    opt.register_load_state_dict_pre_hook(lambda o, sd: [sd])
    with pytest.raises(TypeError, match=r"\(list\)"):
        opt.load_state_dict(opt.state_dict())


def _copied_hook_counts(lib):
    opt = lib.optim.Adam([_params(lib)], lr=0.1)
    ran = []
    opt.register_step_pre_hook(lambda *a: ran.append("pre"))
    opt.register_state_dict_pre_hook(lambda o: ran.append("sd"))
    for twin in (copy.deepcopy(opt), pickle.loads(pickle.dumps(opt))):
        twin.step()
        twin.load_state_dict(twin.state_dict())
    opt.step()
    return ran


def test_copies_and_pickles_drop_the_hooks_as_torch(torch):
    assert _copied_hook_counts(mg) == _copied_hook_counts(torch) == ["pre"]


def test_a_hook_may_remove_itself_while_the_hooks_run():
    # PyTorch raises "OrderedDict mutated during iteration" here; minigrad runs the rest
    opt = optim.SGD([_params(mg)], lr=0.1)
    ran, handles = [], {}

    def once(o, a, k):
        handles["once"].remove()
        ran.append("once")
    handles["once"] = opt.register_step_pre_hook(once)
    opt.register_step_pre_hook(lambda *a: ran.append("next"))
    opt.step()
    opt.step()
    assert ran == ["once", "next", "next"]
