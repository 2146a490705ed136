"""The Module API: names as PyTorch gives them, state dicts (strict errors listing every
problem by name), devices/dtypes, modes, zero_grad, apply, repr and the containers."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


def _net_class(lib):
    """The same architecture written against minigrad.nn or torch.nn."""
    class Net(lib.Module):
        def __init__(self):
            super().__init__()
            self.emb = lib.Embedding(10, 4, padding_idx=0)
            self.rnn = lib.GRU(4, 5, num_layers=2, batch_first=True, bidirectional=True)
            self.blocks = lib.ModuleList([lib.Sequential(lib.Linear(10, 10), lib.ReLU(),
                                                         lib.LayerNorm(10)) for _ in range(2)])
            self.heads = lib.ModuleDict({"a": lib.Linear(10, 2),
                                         "b": lib.Linear(10, 3, bias=False)})
            self.cell = lib.LSTMCell(10, 6)
    return Net


def test_names_shapes_and_repr_equal_torch():
    torch = pytest.importorskip("torch")
    m, t = _net_class(nn)(), _net_class(torch.nn)()
    assert [(n, p.shape) for n, p in m.named_parameters()] == \
        [(n, tuple(p.shape)) for n, p in t.named_parameters()]
    assert list(m.state_dict()) == list(t.state_dict())
    assert [n for n, _ in m.named_modules()] == [n for n, _ in t.named_modules()]
    assert [n for n, _ in m.named_children()] == [n for n, _ in t.named_children()]
    assert repr(m) == repr(t)
    # and torch's weights load by name, straight from torch tensors
    m.load_state_dict(t.state_dict())
    np.testing.assert_array_equal(m.rnn.weight_hh_l1_reverse.numpy(),
                                  t.rnn.weight_hh_l1_reverse.detach().numpy())


def test_tied_weights_are_one_parameter_under_two_names():
    torch = pytest.importorskip("torch")
    for lib in (nn, torch.nn):
        model = lib.Sequential(lib.Embedding(5, 3), lib.Linear(3, 5, bias=False))
        model[1].weight = model[0].weight
        names = [n for n, _ in model.named_parameters()]
        assert names == ["0.weight"]                       # parameters() yields it once
        assert list(model.state_dict()) == ["0.weight", "1.weight"]   # state has both names


def test_load_state_dict_strict_lists_every_problem_by_name():
    model = nn.Sequential(nn.Linear(3, 4), nn.LayerNorm(4))
    sd = model.state_dict()
    bad = {k: v for k, v in sd.items() if k != "1.bias"}
    bad["0.weight"] = mg.zeros(5, 3)
    bad["2.weight"] = mg.zeros(1)
    with pytest.raises(RuntimeError) as e:
        model.load_state_dict(bad)
    msg = str(e.value)
    assert "missing keys: 1.bias" in msg and "unexpected keys: 2.weight" in msg
    assert "0.weight: checkpoint (5, 3) vs model (4, 3)" in msg
    many = nn.Sequential(*[nn.Linear(2, 2) for _ in range(10)])   # a model's worth: the first
    with pytest.raises(RuntimeError, match=r"missing keys: 0.weight, .*2.bias and 14 more$"):
        many.load_state_dict({})
    # non-strict: missing/unexpected are returned, shape mismatches still refused
    del bad["0.weight"]
    missing, unexpected = model.load_state_dict(bad, strict=False)
    assert missing == ["0.weight", "1.bias"] and unexpected == ["2.weight"]
    with pytest.raises(RuntimeError, match="shape mismatches"):
        model.load_state_dict({"0.weight": mg.zeros(1, 1)}, strict=False)


def test_load_state_dict_names_an_entry_that_is_no_tensor():
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))
    sd = dict(model.state_dict())
    sd["1.bias"] = None                            # as a hand-edited checkpoint may have
    before = model[0].weight.numpy().copy()
    for assign in (False, True):
        with pytest.raises(TypeError, match="entry '1.bias' is not a tensor"):
            model.load_state_dict({**sd, "0.weight": mg.ones(2, 2)}, assign=assign)
    np.testing.assert_array_equal(model[0].weight.numpy(), before)   # nothing loaded


def test_load_state_dict_copies_and_casts():
    model = nn.Linear(2, 2)
    src = nn.Linear(2, 2, dtype=mg.float64)
    model.load_state_dict(src.state_dict())
    assert model.weight.dtype == mg.float32
    np.testing.assert_allclose(model.weight.numpy(), src.weight.numpy(), rtol=1e-6)
    src.weight.data[...] = 7.0                              # the copy is independent
    assert not (model.weight.numpy() == 7).any()


def test_state_dict_shares_memory_until_modified():
    model = nn.Linear(2, 2)
    sd = model.state_dict()
    assert not sd["weight"].requires_grad and sd["weight"]._data is model.weight._data


def test_state_dict_follows_optimizer_steps_and_loads_as_pytorch():
    model = nn.Linear(2, 2)
    sd, snapshot = model.state_dict(), {k: v.clone() for k, v in model.state_dict().items()}
    model(mg.ones(1, 2)).sum().backward()
    mg.optim.Adam(model.parameters(), lr=0.1).step()
    assert (sd["weight"].numpy() == model.weight.numpy()).all()      # followed the step
    assert not (snapshot["weight"].numpy() == model.weight.numpy()).any()
    model.load_state_dict(snapshot)                                  # written in place too
    assert (sd["bias"].numpy() == snapshot["bias"].numpy()).all()


def test_to_moves_dtype_parameters_buffers_and_grads():
    model = nn.Sequential(nn.Linear(2, 3), nn.LayerNorm(3))
    model[1].register_buffer("running", mg.zeros(3))
    model(mg.randn(4, 2)).sum().backward()
    assert model.to(dtype=mg.float64) is model
    assert all(p.dtype == mg.float64 and p.grad.dtype == mg.float64
               for p in model.parameters())
    assert model[1].running.dtype == mg.float64 and "1.running" in model.state_dict()
    assert all(p.device == "cpu" for p in model.to("cpu").parameters())
    assert model.float().to("float32")[0].weight.dtype == mg.float32
    with pytest.raises(ValueError, match="unknown device"):
        model.to("tpu")


def test_to_dtype_casts_only_floating_point_parameters_and_buffers():
    """As PyTorch: .to(dtype)/.double() leave integer and boolean buffers as they are."""
    model = nn.Linear(2, 3)
    model.register_buffer("steps", mg.tensor([3, 4]))
    model.register_buffer("mask", mg.tensor([True, False]))
    for cast in (lambda m: m.to(mg.float64), lambda m: m.to(dtype="float16"),
                 lambda m: m.double(), lambda m: m.to("cpu", mg.float32)):
        cast(model)
        assert model.steps.dtype == mg.int64 and model.steps.tolist() == [3, 4]
        assert model.mask.dtype == mg.bool
    assert model.weight.dtype == mg.float32 and model.double().bias.dtype == mg.float64


def test_train_eval_reach_every_submodule():
    model = _net_class(nn)()
    assert all(m.training for m in model.modules())
    assert model.eval() is model and not any(m.training for m in model.modules())
    model.train()
    assert all(m.training for m in model.modules())


def test_zero_grad():
    model = nn.Linear(3, 2)
    model(mg.randn(2, 3)).sum().backward()
    model.zero_grad(set_to_none=False)
    assert all(p.grad is not None and not p.grad.numpy().any() for p in model.parameters())
    model.zero_grad()
    assert all(p.grad is None for p in model.parameters())


def test_apply_visits_children_first_like_torch():
    torch = pytest.importorskip("torch")
    seen = {}
    for lib in (nn, torch.nn):
        order = []
        _net_class(lib)().apply(lambda m: order.append(type(m).__name__))
        seen[lib] = order
    assert seen[nn] == seen[torch.nn]
    model = nn.Sequential(nn.Linear(2, 2), nn.Linear(2, 2))

    def init_zero(m):
        if isinstance(m, nn.Linear):
            nn.init.zeros_(m.weight)
    model.apply(init_zero)
    assert not any(m.weight.numpy().any() for m in model)


def test_containers():
    a, b, c = nn.Linear(2, 3), nn.ReLU(), nn.Linear(3, 1)
    seq = nn.Sequential(a, b, c)
    assert len(seq) == 3 and seq[0] is a and seq[-1] is c and list(seq) == [a, b, c]
    assert isinstance(seq[1:], nn.ModuleList) and list(seq[1:]) == [b, c]
    assert type(seq[:2]) is nn.Sequential and type(nn.ModuleList([a, b])[:1]) is nn.ModuleList
    np.testing.assert_allclose(seq[:2](mg.ones(1, 2)).numpy(), b(a(mg.ones(1, 2))).numpy())
    x = mg.randn(4, 2)
    np.testing.assert_allclose(seq(x).numpy(), c(b(a(x))).numpy())
    with pytest.raises(IndexError, match="out of range"):
        seq[3]
    ml = nn.ModuleList([a]).append(c).extend([b])
    assert [n for n, _ in ml.named_children()] == ["0", "1", "2"]
    assert [n for n, _ in ml.named_parameters()] == ["0.weight", "0.bias", "1.weight", "1.bias"]
    md = nn.ModuleDict({"enc": a})
    md["dec"] = c
    assert "enc" in md and len(md) == 2 and list(md.keys()) == ["enc", "dec"]
    assert list(md.values()) == [a, c] and dict(md.items())["dec"] is c and list(md) == ["enc",
                                                                                            "dec"]


def test_attribute_registration():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.w = nn.Parameter(mg.ones(2))
            self.sub = nn.Linear(2, 2)
            self.plain = mg.ones(2)          # a plain tensor is neither parameter nor buffer
            self.register_buffer("buf", mg.zeros(2))
            self.register_parameter("maybe", None)
    m = M()
    assert [n for n, _ in m.named_parameters()] == ["w", "sub.weight", "sub.bias"]
    assert list(m.state_dict()) == ["w", "buf", "sub.weight", "sub.bias"]
    assert [n for n, _ in m.named_buffers()] == ["buf"] and m.maybe is None
    with pytest.raises(TypeError, match="cannot assign a Tensor as parameter 'w'"):
        m.w = m.w * 2                         # would silently drop w from the parameters
    with pytest.raises(TypeError, match="as child module 'sub'"):
        m.sub = 3
    m.maybe = None                            # None is fine: an absent optional weight
    del m.w
    m.w = mg.zeros(2)                         # after del, the name is free
    assert "w" not in dict(m.named_parameters())
    del m.sub
    assert [n for n, _ in m.named_parameters()] == []
    with pytest.raises(AttributeError, match="'M' has no attribute 'nope'"):
        m.nope

    class Forgot(nn.Module):
        def __init__(self):
            self.w = nn.Parameter(mg.ones(1))
    with pytest.raises(RuntimeError, match="super"):
        Forgot()
    with pytest.raises(NotImplementedError, match="forward"):
        nn.Module()(1)


def test_parameter():
    p = nn.Parameter(mg.ones(2))
    assert p.requires_grad and p.is_leaf and isinstance(p, mg.Tensor)
    assert not nn.Parameter(mg.ones(2), requires_grad=False).requires_grad
    assert repr(p).startswith("Parameter containing:")


def test_reassigning_a_buffer_keeps_it_a_buffer_as_torch():
    class Running(nn.Module):
        def __init__(self):
            super().__init__()
            self.register_buffer("running", mg.zeros(3))

        def forward(self, x):
            self.running = self.running * 0.9 + x
            return x

    m = Running()
    m(mg.ones(3))
    assert list(m.state_dict()) == ["running"] and [n for n, _ in m.named_buffers()] == [
        "running"]
    assert m.running.tolist() == [1.0, 1.0, 1.0] and "running" not in m.__dict__
    m.running = None                                       # None keeps the slot, as torch
    assert "running" in m._buffers and list(m.state_dict()) == []


def test_shared_modules_and_containers_as_pytorch():
    class M(nn.Module):
        def __init__(self):
            super().__init__()
            self.shared = nn.Linear(2, 2)
            self.again = self.shared              # one module under two names
    m = M()
    # a state dict names every alias (PyTorch's does: loading one of its dicts needs them)
    assert list(m.state_dict()) == ["shared.weight", "shared.bias", "again.weight",
                                    "again.bias"]
    sd = {k: v.numpy() + 1 for k, v in m.state_dict().items()}
    m.load_state_dict(sd)
    np.testing.assert_array_equal(m.again.weight.numpy(), sd["again.weight"])
    assert [n for n, _ in m.named_parameters()] == ["shared.weight", "shared.bias"]
    assert len(list(m.named_modules(remove_duplicate=False))) == 3
    calls = []
    m.apply(calls.append)                         # each module once, as PyTorch
    assert len(calls) == 2
    with pytest.raises(TypeError, match="expected a mapping"):
        m.load_state_dict([1, 2])
    with pytest.raises(TypeError, match="floating-point"):
        nn.Linear(3, 2).to(dtype=mg.int64)        # would truncate the weights to integers
    with pytest.raises(TypeError, match="ModuleList holds Modules, got a int"):
        nn.ModuleList().append(3)
    with pytest.raises(TypeError, match="Sequential holds Modules, got a function"):
        nn.Sequential(nn.Linear(2, 2), lambda x: x)
    with pytest.raises(TypeError, match="ModuleDict holds Modules"):
        nn.ModuleDict()["b"] = 3
    with pytest.raises(TypeError, match="keys must be strings"):
        nn.ModuleDict()[1] = nn.Linear(1, 1)
    with pytest.raises(TypeError, match="indices must be integers"):
        nn.ModuleList([nn.Linear(1, 1)])["0"]


def test_functional_call_follows_tied_weights():
    class Tied(nn.Module):
        def __init__(self):
            super().__init__()
            self.emb, self.head = nn.Linear(3, 3, bias=False), nn.Linear(3, 3, bias=False)
            self.head.weight = self.emb.weight       # as GPT's head and token embedding
        def forward(self, x):
            return self.head(x)
    m, x = Tied(), mg.ones(1, 3)
    before = m(x).numpy()
    out = nn.utils.functional_call(m, {"emb.weight": mg.zeros(3, 3)}, (x,))
    np.testing.assert_array_equal(out.numpy(), 0)     # the head used the new tensor too
    assert m.head.weight is m.emb.weight              # restored, still tied
    np.testing.assert_array_equal(m(x).numpy(), before)
    with pytest.raises(ValueError, match="tied"):
        nn.utils.functional_call(m, {"emb.weight": mg.zeros(3, 3),
                                     "head.weight": mg.ones(3, 3)}, (x,))
    # a name the module lacks is set as an attribute for the call, as PyTorch's
    np.testing.assert_array_equal(
        nn.utils.functional_call(m, {"nope": mg.zeros(3, 3)}, (x,)).numpy(), before)
    assert not hasattr(m, "nope")


def test_functional_call_of_a_parametrized_name_as_mg_func(torch):
    # nn.utils' own copy raised KeyError for a weight_norm's `weight`; it is mg.func's now
    m = nn.utils.parametrizations.weight_norm(nn.Linear(2, 3))
    x, w = mg.ones(1, 2), mg.arange(6.0).reshape(3, 2).requires_grad_()
    for call in (nn.utils.functional_call, mg.func.functional_call):
        out = call(m, {"weight": w}, (x,))
        np.testing.assert_allclose(out.numpy(), (x @ w.T + m.bias).numpy(), rtol=1e-6)
        assert "weight" not in m.__dict__ and nn.utils.parametrize.is_parametrized(m, "weight")
    t = torch.nn.utils.parametrizations.weight_norm(torch.nn.Linear(2, 3))
    tw = torch.arange(6.0).reshape(3, 2)                 # (torch's goes through right_inverse)
    torch.testing.assert_close(torch.nn.utils.stateless.functional_call(
        t, {"weight": tw}, (torch.ones(1, 2),)), torch.ones(1, 2) @ tw.T + t.bias)


def test_apply_visits_children_before_their_parent():
    """PyTorch's order, checked by hand: depth first, each module after its children."""
    inner = nn.Sequential(nn.Linear(2, 2), nn.ReLU())
    model = nn.Sequential(inner, nn.Tanh())
    order = []
    model.apply(lambda m: order.append(m))
    assert order == [inner[0], inner[1], inner, model[1], model]


@pytest.mark.parametrize("change", [
    lambda m: m.load_state_dict({k: v.clone() for k, v in m.state_dict().items()}),
    lambda m: m.to(dtype=mg.float64),
], ids=["load_state_dict", "to_dtype"])
def test_rewriting_weights_invalidates_a_graph_built_before(change):
    """load_state_dict and .to write new values into the parameters: a backward through a
    graph that saved the old values must fail clearly, as after any in-place change."""
    model = nn.Linear(3, 2)
    x = mg.randn(4, 3, requires_grad=True)
    loss = (model(x) ** 2).sum()          # saves the weight for x's gradient
    change(model)
    with pytest.raises(RuntimeError, match="version"):
        loss.backward()


def test_walking_the_module_tree_leaves_no_garbage_cycles():
    """parameters(), train(), zero_grad(), state_dict() run every step: each used to leave a
    reference cycle (a generator recursing into itself) for the garbage collector."""
    import gc
    model = nn.Sequential(nn.Linear(3, 4), nn.Sequential(nn.Linear(4, 2), nn.LayerNorm(2)))
    gc.collect()
    gc.disable()
    try:
        for _ in range(5):
            list(model.parameters()), model.train(), model.eval(), model.zero_grad()
            model.state_dict()
        assert gc.collect() == 0
    finally:
        gc.enable()
    assert [n for n, _ in model.named_modules()] == ["", "0", "1", "1.0", "1.1"]



def test_forward_hooks_record_and_replace():
    """register_forward_hook sees (module, args, output) and may replace the output;
    register_forward_pre_hook may replace the inputs; handles remove them (as PyTorch)."""
    lin = nn.Linear(2, 2, bias=False)
    with mg.no_grad():
        lin.weight[...] = mg.tensor([[1.0, 0.0], [0.0, 2.0]])
    x = mg.tensor([[1.0, 1.0]])
    seen = []
    h1 = lin.register_forward_hook(lambda m, args, out: seen.append((m, args[0], out)))
    y = lin(x)
    assert seen[0][0] is lin and seen[0][1] is x and seen[0][2] is y
    h2 = lin.register_forward_hook(lambda m, args, out: out * 10)
    h3 = lin.register_forward_pre_hook(lambda m, args: args[0] + 1)   # one value: the input
    assert lin(x).tolist() == [[20.0, 40.0]]
    assert seen[1][1].tolist() == [[2.0, 2.0]]           # post-hooks get the replaced input
    for h in (h1, h2, h3):
        h.remove()
    assert lin(x).tolist() == [[1.0, 2.0]] and len(seen) == 2
    with pytest.raises(TypeError, match="register_forward_hook: expected a function"):
        lin.register_forward_hook("not a function")
    assert "weight" in lin.state_dict() and len(lin.state_dict()) == 1   # hooks are not state


def test_forward_hook_collects_activations_of_a_model():
    """The use hooks exist for: record each block's output without touching the model."""
    model = nn.Sequential(nn.Linear(3, 4), nn.Tanh(), nn.Linear(4, 2))
    acts = {}
    for name, m in model.named_children():
        m.register_forward_hook(lambda m, args, out, name=name: acts.update({name: out}))
    out = model(mg.randn(5, 3))
    assert list(acts) == ["0", "1", "2"] and acts["2"] is out and acts["1"].shape == (5, 4)


def test_train_and_eval_go_through_each_childs_own_train():
    class FrozenDropout(nn.Module):                      # keeps its dropout off, as PyTorch
        def __init__(self):                              # lets a child decide
            super().__init__()
            self.drop, self.calls = nn.Dropout(0.5), []

        def train(self, mode=True):
            self.calls.append(mode)
            return super().train(False)
    frozen = FrozenDropout()
    model = nn.Sequential(nn.Linear(2, 2), frozen)
    model.train()
    assert frozen.calls == [True] and not frozen.drop.training and model[0].training
    model.eval()
    assert frozen.calls == [True, False] and not model.training
    with pytest.raises(ValueError, match="mode must be True or False"):
        model.train("no")


def test_state_dict_prefix_keep_vars_and_named_parameters_duplicates_as_torch():
    shared = nn.Linear(2, 2)
    m = nn.Sequential(shared, nn.ReLU(), shared)
    sd = m.state_dict(prefix="enc.")
    assert list(sd) == ["enc.0.weight", "enc.0.bias", "enc.2.weight", "enc.2.bias"]
    assert not isinstance(sd["enc.0.weight"], nn.Parameter)
    assert m.state_dict(keep_vars=True)["0.weight"] is shared.weight
    into = {}
    assert m.state_dict(destination=into) is into and len(into) == 4
    assert [n for n, _ in m.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == \
        ["0.weight", "0.bias", "2.weight", "2.bias"]


class _Scale(nn.Module):
    def forward(self, x, *, scale=1.0):
        if scale is None:
            raise ValueError("no scale")
        return x * scale


def test_forward_hooks_with_kwargs_prepend_and_always_call():
    m, calls = _Scale(), []
    m.register_forward_pre_hook(lambda mod, args, kwargs: (args, {**kwargs, "scale": 3.0}),
                                with_kwargs=True)
    m.register_forward_hook(lambda mod, args, kwargs, out: calls.append(("kw", kwargs)) or
                            out + 1, with_kwargs=True)
    m.register_forward_hook(lambda mod, args, out: calls.append("first"), prepend=True)
    assert m(mg.tensor([2.0]), scale=5.0).item() == 7.0             # 2·3 + 1
    assert calls == ["first", ("kw", {"scale": 3.0})]               # prepended hook first
    always = []
    m2 = _Scale()
    m2.register_forward_hook(lambda mod, args, out: always.append(out), always_call=True)
    m2.register_forward_hook(lambda mod, args, out: always.append("never"))
    with pytest.raises(ValueError, match="no scale"):
        m2(mg.tensor([1.0]), scale=None)
    assert always == [None]                                          # output None, as torch
    bad = _Scale()
    bad.register_forward_pre_hook(lambda mod, args, kwargs: 5, with_kwargs=True)
    with pytest.raises(RuntimeError, match=r"must return None or \(args, kwargs\)"):
        bad(mg.tensor([1.0]))


def test_forward_hook_options_match_torch():
    torch = pytest.importorskip("torch")
    results = []
    for lib in (torch, mg):
        lin = lib.nn.Linear(2, 2)
        order = []
        lin.register_forward_hook(lambda m, a, o: order.append("a"))
        lin.register_forward_hook(lambda m, a, o: order.append("b"), prepend=True)
        lin.register_forward_pre_hook(lambda m, a: order.append("pre-a"))
        lin.register_forward_pre_hook(lambda m, a, k: order.append("pre-b"), prepend=True,
                                      with_kwargs=True)
        lin(lib.ones(1, 2))
        results.append(order)
    assert results[0] == results[1] == ["pre-b", "pre-a", "b", "a"]


class _Counter(nn.Module):
    def __init__(self):
        super().__init__()
        self.step, self.lin = 7, nn.Linear(2, 2)

    def get_extra_state(self):
        return {"step": self.step}

    def set_extra_state(self, state):
        self.step = state["step"]


def test_extra_state_is_saved_and_loaded_as_pytorchs():
    parent = nn.Module()
    parent.c, parent.l = _Counter(), nn.Linear(1, 1)
    sd = parent.state_dict()
    assert list(sd) == ["c._extra_state", "c.lin.weight", "c.lin.bias", "l.weight", "l.bias"]
    fresh = nn.Module()
    fresh.c, fresh.l = _Counter(), nn.Linear(1, 1)
    fresh.c.step = 0
    assert fresh.load_state_dict(sd) == ([], []) and fresh.c.step == 7
    without = {k: v for k, v in sd.items() if "extra" not in k}
    assert fresh.load_state_dict(without, strict=False).missing_keys == ["c._extra_state"]
    with pytest.raises(RuntimeError, match="missing keys: c._extra_state"):
        fresh.load_state_dict(without)
    assert "_extra_state" not in nn.Linear(1, 1).state_dict()      # only where overridden
    with pytest.raises(RuntimeError, match="override it"):
        nn.Linear(1, 1).get_extra_state()


def test_extra_state_matches_torchs_keys():
    torch = pytest.importorskip("torch")

    class TorchCounter(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)

        def get_extra_state(self):
            return {"step": 7}

        def set_extra_state(self, state):
            pass
    tp, mp = torch.nn.Module(), nn.Module()
    tp.c, mp.c = TorchCounter(), _Counter()
    assert list(tp.state_dict()) == list(mp.state_dict())


def test_load_state_dict_assign_puts_the_tensors_themselves_in():
    """assign=True (PyTorch's): no copy, the state dict's dtype, requires_grad kept; a
    buffer is the very tensor; a parameter shared under two names stays shared."""
    from minitransformer import GPT, GPTConfig
    lin = nn.Linear(2, 2)
    lin.weight.requires_grad_(False)
    w = mg.ones(2, 2, dtype=mg.float64)
    assert lin.load_state_dict({"weight": w, "bias": np.zeros(2)}, assign=True) == ([], [])
    assert isinstance(lin.weight, nn.Parameter) and lin.weight._data is w._data
    assert lin.weight.dtype == mg.float64 and not lin.weight.requires_grad
    assert lin.bias.requires_grad and lin.bias.tolist() == [0.0, 0.0]
    bn = nn.BatchNorm1d(2)
    sd = {k: v.clone() for k, v in bn.state_dict().items()}
    bn.load_state_dict(sd, assign=True)
    assert bn.running_mean is sd["running_mean"]
    with pytest.raises(RuntimeError, match=r"shape mismatches: weight: checkpoint \(3, 2\)"):
        lin.load_state_dict({"weight": mg.ones(3, 2), "bias": mg.zeros(2)}, assign=True)
    assert lin.weight._data is w._data                     # refused: nothing changed
    gpt = GPT(GPTConfig(vocab_size=11, block_size=6, n_layer=1, n_head=2, n_embd=8))
    sd = {k: v + 1 for k, v in gpt.state_dict().items()}
    gpt.load_state_dict(sd, assign=True)
    assert gpt.lm_head.weight is gpt.transformer.wte.weight          # still tied
    assert gpt.lm_head.weight._data is sd["transformer.wte.weight"]._data
    assert len(list(gpt.parameters())) == len(list(GPT(gpt.config).parameters()))
