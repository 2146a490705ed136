"""The global Module hooks (nn.modules.module.register_module_*): when each runs beside a
module's own hooks, what its return value replaces, and which registrations fire the
registration hooks, as PyTorch 2.13 does (the closed-form expectations were read off it;
the torch tests replay the same sequences on both). Every test removes what it registers
(the `reg` fixture): a global hook left behind would run in every other test."""
from collections import OrderedDict

import pytest

import minigrad as mg
from minigrad import nn
from minigrad.nn import global_hooks
from minigrad.nn.modules import module as M

NAMES = ["forward_pre_hook", "forward_hook", "full_backward_pre_hook", "full_backward_hook",
         "buffer_registration_hook", "module_registration_hook",
         "parameter_registration_hook"]


@pytest.fixture
def reg():
    """reg(M, "forward_hook", hook, **kw): registers a global hook of the library whose
    module namespace is M, and removes it (and every other) when the test ends."""
    handles = []

    def register(mod, name, hook, **kw):
        handles.append(getattr(mod, "register_module_" + name)(hook, **kw))
        return handles[-1]
    yield register
    for h in handles:
        h.remove()
    assert not global_hooks.CALL_HOOKS and not global_hooks.BUFFER_HOOKS and \
        not global_hooks.MODULE_HOOKS and not global_hooks.PARAMETER_HOOKS


@pytest.fixture(params=["minigrad", "torch"])
def libs(request):
    """(tensor library, its nn, its nn.modules.module): a test taking it checks the same
    expectations on PyTorch too (skipped where it is absent)."""
    if request.param == "minigrad":
        return mg, nn, M
    torch = request.getfixturevalue("torch")
    from torch.nn.modules import module as torch_M
    return torch, torch.nn, torch_M


def _double(lib_nn, log):
    class Double(lib_nn.Module):
        def forward(self, x, scale=1.0):
            log.append("fwd")
            return x * 2 * scale
    return Double()


def _bad(lib_nn):
    class Bad(lib_nn.Module):
        def forward(self, x):
            raise ValueError("boom")
    return Bad()


def _note(log, tag, ret=None):
    return lambda *a: (log.append(tag), ret)[1]


# ---- where they live ----------------------------------------------------------------------
def test_they_live_in_nn_modules_module_only_as_in_pytorch():
    import minigrad.nn.modules.module as by_import
    assert by_import is M is nn.module
    for name in NAMES + ["backward_hook"]:
        f = getattr(M, "register_module_" + name)
        assert f is getattr(global_hooks, "register_module_" + name)
        assert not hasattr(nn.modules, f.__name__) and not hasattr(nn, f.__name__)
    assert set(M.__all__) == {"register_module_" + n for n in NAMES + ["backward_hook"]} | \
        {"Module"}


def test_a_hook_must_be_callable(reg):
    with pytest.raises(TypeError, match="register_module_forward_hook: expected a function"):
        reg(M, "forward_hook", 3)


# ---- forward --------------------------------------------------------------------------------
def test_global_forward_hooks_run_before_the_modules_own_and_replace_values(reg, libs):
    lib, lnn, LM = libs
    log = []
    m = _double(lnn, log)
    m.register_forward_pre_hook(lambda mod, a: log.append(("mpre", a[0].item())),
                                prepend=True)
    m.register_forward_hook(lambda mod, a, o: log.append(("mpost", o.item())), prepend=True)
    reg(LM, "forward_pre_hook", lambda mod, a: (log.append("gpre1"), a[0] + 1)[1])
    reg(LM, "forward_pre_hook", lambda mod, a: (log.append("gpre2"), (a[0] * 3,))[1])
    reg(LM, "forward_hook", lambda mod, a, o: (log.append("gpost"), o * 10)[1])
    assert m(lib.ones(1)).item() == 120.0          # ((1 + 1) * 3) * 2 * 10
    assert log == ["gpre1", "gpre2", ("mpre", 6.0), "fwd", "gpost", ("mpost", 120.0)]


def test_with_kwargs_passes_the_keyword_arguments(reg, libs):
    lib, lnn, LM = libs
    log, m = [], _double(lnn, [])
    reg(LM, "forward_hook", lambda mod, a, k, o: log.append((k, o.item())), with_kwargs=True)
    m(lib.ones(1), scale=3.0)
    assert log == [({"scale": 3.0}, 6.0)]


def test_always_call_runs_global_then_own_on_the_output_so_far(reg, libs):
    lib, lnn, LM = libs
    log, b = [], _bad(lnn)
    reg(LM, "forward_hook", lambda mod, a, o: (log.append(("g", o)), "X")[1], always_call=True)
    reg(LM, "forward_hook", lambda mod, a, o: log.append("not always"))
    b.register_forward_hook(lambda mod, a, o: log.append(("own", o)), always_call=True)
    with pytest.raises(ValueError, match="boom"):
        b(lib.ones(1))
    assert log == [("g", None), ("own", "X")]     # each sees what the one before returned


def test_always_call_after_a_hook_raised_sees_the_output(reg, libs):
    lib, lnn, LM = libs
    log = []
    m = _double(lnn, log)
    reg(LM, "forward_hook", lambda mod, a, o: log.append(("ran", o.item())), always_call=True)
    reg(LM, "forward_hook", lambda mod, a, o: {}["missing"])
    reg(LM, "forward_hook", lambda mod, a, o: log.append(("late", o.item())), always_call=True)
    with pytest.raises(KeyError):
        m(lib.ones(1))
    assert log == ["fwd", ("ran", 2.0), ("late", 2.0)]     # the one that ran: not again


def test_always_call_with_kwargs_gets_them_and_its_error_only_warns(reg):
    # (PyTorch calls a global one without the kwargs here, so it always fails and warns)
    log, b = [], _bad(nn)
    reg(M, "forward_hook", lambda mod, a, k, o: log.append((k, o)), with_kwargs=True,
        always_call=True)
    reg(M, "forward_hook", lambda mod, a, o: {}["missing"], always_call=True)
    with pytest.warns(UserWarning, match="always_call=True raised KeyError"):
        with pytest.raises(ValueError, match="boom"):
            b(mg.ones(1))
    assert log == [({}, None)]


def test_nested_modules_each_run_them(reg, libs):
    lib, lnn, LM = libs
    log = []
    seq = lnn.Sequential(lnn.Identity(), lnn.ReLU())
    for name in ("forward_pre_hook", "forward_hook"):
        reg(LM, name, lambda mod, *a, n=name: log.append((n[:-5], type(mod).__name__)))
    seq(lib.ones(1))
    assert log == [("forward_pre", "Sequential"), ("forward_pre", "Identity"),
                   ("forward", "Identity"), ("forward_pre", "ReLU"), ("forward", "ReLU"),
                   ("forward", "Sequential")]


def test_removed_hooks_leave_the_fast_path(reg):
    log, m = [], _double(nn, [])
    h = reg(M, "forward_hook", lambda mod, a, o: log.append(1))
    m(mg.ones(1))
    h.remove()
    h.remove()                                    # twice: nothing more
    assert not global_hooks.CALL_HOOKS
    m(mg.ones(1))
    assert log == [1]


def test_registering_and_removing_during_a_call(reg, libs):
    lib, lnn, LM = libs
    log, handles = [], []
    m = _double(lnn, log)

    def adds_one(mod, a):                         # a pre-hook added by a pre-hook: next call
        log.append("pre")
        if not handles:
            handles.append(reg(LM, "forward_pre_hook", _note(log, "new pre")))
    reg(LM, "forward_pre_hook", adds_one)
    m(lib.ones(1))
    m(lib.ones(1))
    assert log == ["pre", "fwd", "pre", "new pre", "fwd"]
    # a forward hook removed by an earlier one still runs in this call
    log.clear()
    victim = m.register_forward_hook(_note(log, "victim"))

    def remover(*a):
        log.append("remover")
        victim.remove()
    reg(LM, "forward_hook", remover)
    m(lib.ones(1))
    m(lib.ones(1))
    assert log == ["pre", "new pre", "fwd", "remover", "victim",
                   "pre", "new pre", "fwd", "remover"]


def test_a_forward_hook_added_by_forward_runs_unless_the_call_had_no_hooks(reg, libs):
    lib, lnn, LM = libs
    log = []

    class AddsHook(lnn.Module):
        def forward(self, x):
            log.append("fwd")
            self.add_hook()
            return x
    m, handles = AddsHook(), []
    m.add_hook = lambda: handles.append(reg(LM, "forward_hook", _note(log, "new")))
    m(lib.ones(1))                                 # no hooks when called: forward alone
    assert log == ["fwd"]
    for h in handles:
        h.remove()
    log.clear()
    reg(LM, "forward_pre_hook", _note(log, "pre"))
    m(lib.ones(1))
    assert log == ["pre", "fwd", "new"]
    # the module's own too (with only a pre-hook on it, it did not run before)
    for h in handles:
        h.remove()
    log.clear()
    own = AddsHook()
    own.add_hook = lambda: own.register_forward_hook(_note(log, "own new"))
    own.register_forward_pre_hook(_note(log, "own pre"))
    own(lib.ones(1))
    assert log == ["pre", "own pre", "fwd", "own new"]


# ---- backward -------------------------------------------------------------------------------
def _grads(g):
    return [None if t is None else t.tolist() for t in g]


def test_global_backward_hooks_run_first_and_their_replacement_is_seen(reg, libs):
    lib, lnn, LM = libs
    log, m = [], _double(lnn, [])
    reg(LM, "full_backward_pre_hook",
        lambda mod, go: (log.append(("gpre", _grads(go))), (lib.full((2,), 3.0),))[1])
    reg(LM, "full_backward_hook",
        lambda mod, gi, go: (log.append(("gbw", _grads(gi), _grads(go))),
                             (lib.full((2,), 5.0),))[1])
    m.register_full_backward_pre_hook(lambda mod, go: log.append(("mpre", _grads(go))),
                                      prepend=True)
    m.register_full_backward_hook(lambda mod, gi, go: log.append(("mbw", _grads(gi))),
                                  prepend=True)
    x = lib.ones(2, requires_grad=True)
    m(x).sum().backward()
    assert log == [("gpre", [[1.0, 1.0]]), ("mpre", [[3.0, 3.0]]),
                   ("gbw", [[6.0, 6.0]], [[3.0, 3.0]]), ("mbw", [[5.0, 5.0]])]
    assert x.grad.tolist() == [5.0, 5.0]
    with lib.no_grad():                            # no graph: no backward hook is set up
        assert not m(x).requires_grad


def test_the_backward_hooks_of_a_call_are_fixed_when_it_starts(reg, libs):
    lib, lnn, LM = libs
    log, m, x = [], _double(lnn, []), lib.ones(1, requires_grad=True)
    h = reg(LM, "full_backward_hook", _note(log, "bw"))
    y = m(x)
    h.remove()                                    # removed after forward: still runs
    y.sum().backward()
    y = m(x)
    reg(LM, "full_backward_hook", _note(log, "late"))   # added after forward: not yet
    y.sum().backward()
    assert log == ["bw"]
    log.clear()
    added = []                                    # added by a forward pre-hook: not yet

    def adds(*a):
        if not added:
            added.append(reg(LM, "full_backward_pre_hook", _note(log, "bpre")))
    reg(LM, "forward_pre_hook", adds)
    m(x).sum().backward()
    assert log == ["late"]
    m(x).sum().backward()
    assert log == ["late", "bpre", "late"]
    log.clear()                                   # the module's own alike
    own, ran = _double(lnn, []), []
    own.register_full_backward_hook(_note(log, "own"))
    own.register_forward_pre_hook(lambda *a: ran or ran.append(
        own.register_full_backward_hook(_note(log, "own new"))))
    own(x).sum().backward()
    assert log == ["bpre", "late", "own"]


def test_register_module_backward_hook_is_a_full_one(reg):
    seen = []
    reg(M, "backward_hook", lambda mod, gi, go: seen.append((_grads(gi), _grads(go))))
    m = _double(nn, [])
    m(mg.ones(1, requires_grad=True)).sum().backward()
    assert seen == [([[2.0]], [[1.0]])]


# ---- registration -------------------------------------------------------------------------
def _registrations(lib_nn, ones, log):
    """The same registrations, each a way of registering, on either library."""
    class A(lib_nn.Module):
        def __init__(self):
            super().__init__()
            self.w = lib_nn.Parameter(ones(1))
            self.register_parameter("b", None)
            self.register_parameter("c", lib_nn.Parameter(ones(1)))
            self.w = None
            self.w = lib_nn.Parameter(ones(1))
            self.register_buffer("r", ones(1))
            self.register_buffer("n", None)
            self.r = ones(1)                      # a buffer's name: a buffer again
            self.r = None
            self.bb = lib_nn.Buffer(ones(1))
            self.sub = lib_nn.Identity()
            self.sub = None
            self.add_module("s2", lib_nn.Identity())
            self.register_module("s3", None)
            self.t = ones(1)                      # a plain attribute: none
    A()
    log.append("containers")
    lib_nn.Sequential(lib_nn.Identity(), lib_nn.ReLU())
    lib_nn.Sequential(OrderedDict(a=lib_nn.Identity()))
    ml = lib_nn.ModuleList([lib_nn.Identity()])
    ml.append(lib_nn.ReLU())
    ml[0] = lib_nn.Tanh()
    ml.insert(0, lib_nn.Tanh())                   # none, as PyTorch's insert and del
    del ml[0]
    ml += [lib_nn.Tanh()]
    ml[1:]
    md = lib_nn.ModuleDict({"a": lib_nn.Identity()})
    md["b"] = lib_nn.ReLU()
    lib_nn.ParameterList([lib_nn.Parameter(ones(1)), ones(1)]).append(ones(1))
    lib_nn.ParameterDict({"a": ones(1)})
    s = lib_nn.Sequential(lib_nn.Identity())
    s * 2
    s.append(lib_nn.ReLU())
    log.append("layers")
    lib_nn.Linear(2, 3)
    lib_nn.Linear(2, 3, bias=False)
    bn = lib_nn.BatchNorm1d(2)
    log.append("assign")
    bn.load_state_dict(bn.state_dict(), assign=True)
    bn.load_state_dict(bn.state_dict())
    return log


def _recorder(log, kind):
    def hook(module, name, value):
        what = None if value is None else "Parameter" if kind == "par" else \
            "tensor" if kind == "buf" else type(value).__name__
        log.append((kind, type(module).__name__, name, what))
    return hook


def _register_recorders(reg, mod, log):
    for kind, name in (("buf", "buffer"), ("par", "parameter"), ("mod", "module")):
        reg(mod, name + "_registration_hook", _recorder(log, kind))


def test_which_registrations_fire_the_hooks(reg):
    log = []
    _register_recorders(reg, M, log)
    log = _registrations(nn, mg.ones, log)
    a = [("par", "A", "w", "Parameter"), ("par", "A", "c", "Parameter"),
         ("par", "A", "w", "Parameter"), ("buf", "A", "r", "tensor"), ("buf", "A", "n", None),
         ("buf", "A", "r", "tensor"), ("buf", "A", "r", None), ("buf", "A", "bb", "tensor"),
         ("mod", "A", "sub", "Identity"), ("mod", "A", "sub", None),
         ("mod", "A", "s2", "Identity"), ("mod", "A", "s3", None)]
    assert log[:len(a) + 1] == a + ["containers"]
    layers = log[log.index("layers") + 1:log.index("assign")]
    assert layers == [("par", "Linear", "weight", "Parameter"),
                      ("par", "Linear", "bias", "Parameter"),
                      ("par", "Linear", "weight", "Parameter")] + \
        [("par", "BatchNorm1d", n, "Parameter") for n in ("weight", "bias")] + \
        [("buf", "BatchNorm1d", n, "tensor") for n in ("running_mean", "running_var",
                                                       "num_batches_tracked")]
    assert log[log.index("assign") + 1:] == layers[3:]     # assign=True only


def test_a_registration_hook_replaces_what_is_registered(reg, libs):
    lib, lnn, LM = libs
    reg(LM, "buffer_registration_hook", lambda m, n, b: b + 1)
    reg(LM, "buffer_registration_hook", lambda m, n, b: b * 10)     # sees the first's
    reg(LM, "parameter_registration_hook",
        lambda m, n, p: lnn.Parameter(p.detach() * 3))
    reg(LM, "module_registration_hook", lambda m, n, s: lnn.ReLU())
    m = lnn.Module()
    m.register_buffer("r", lib.zeros(1))
    m.w = lnn.Parameter(lib.ones(1))
    m.s = lnn.Identity()
    m.r = lib.zeros(1)
    assert m.r.tolist() == [10.0] and m.w.tolist() == [3.0] and isinstance(m.s, lnn.ReLU)
    assert [n for n, _ in m.named_parameters()] == ["w"]


def test_a_refused_registration_fires_none(reg, libs):
    lib, lnn, LM = libs
    log = []
    _register_recorders(reg, LM, log)
    m = lnn.Module()
    with pytest.raises(KeyError):
        m.register_buffer("a.b", lib.zeros(1))
    with pytest.raises(TypeError):
        m.add_module("x", 3)
    assert log == []


# ---- against PyTorch (the tests taking `libs` check their expectations on it too) ---------
def _backward_story(lib, lib_nn, mod, reg, log):
    def rec(tag, value=None):
        def hook(_, *g):
            log.append((tag, [_grads(x) for x in g]))
            return None if value is None else (lib.full((2,), value),)
        return hook
    m = _double(lib_nn, log)
    reg(mod, "full_backward_pre_hook", rec("gpre", 3.0))
    reg(mod, "full_backward_hook", rec("gbw", 5.0))
    m.register_full_backward_pre_hook(rec("mpre"), prepend=True)
    m.register_full_backward_hook(rec("mbw"), prepend=True)
    x = lib.ones(2, requires_grad=True)
    m(x).sum().backward()
    log.append(x.grad.tolist())
    seq = lib_nn.Sequential(lib_nn.Identity(), lib_nn.ReLU())
    reg(mod, "full_backward_hook", lambda mm, gi, go: log.append(type(mm).__name__))
    seq(lib.ones(2, requires_grad=True)).sum().backward()
    return log


def test_backward_calls_in_nested_modules_match_pytorch(torch, reg):
    from torch.nn.modules import module as torch_M
    ours = _backward_story(mg, nn, M, reg, [])
    theirs = _backward_story(torch, torch.nn, torch_M, reg, [])
    assert ours == theirs and "Sequential" in ours


def test_registrations_match_pytorch(torch, reg):
    from torch.nn.modules import module as torch_M
    ours, theirs = [], []
    _register_recorders(reg, M, ours)
    _registrations(nn, mg.ones, ours)
    _register_recorders(reg, torch_M, theirs)
    _registrations(torch.nn, torch.ones, theirs)
    assert len(theirs) > 40 and ours == theirs
