"""Module conveniences beside the core API: buffers, add_module/register_module,
requires_grad_, cpu/cuda/half, get_submodule/get_parameter, and the containers' new home."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import backend, nn, optim

import spy_backend


def _net_class(lib):
    """The same nesting written against minigrad.nn or torch.nn."""
    class Block(lib.Module):
        def __init__(self):
            super().__init__()
            self.linear = lib.Linear(3, 3)
            self.register_buffer("running", mg.zeros(3) if lib is nn else _torch().zeros(3))

    class Net(lib.Module):
        def __init__(self):
            super().__init__()
            self.layers = lib.ModuleList([Block(), Block()])
            self.head = lib.Linear(3, 2, bias=False)
            self.scale = lib.Parameter(mg.ones(1) if lib is nn else _torch().ones(1))
    return Net


def _torch():
    import torch
    return torch


# ---- buffers ------------------------------------------------------------------------------
def test_buffers_recurse_prefix_and_duplicates():
    m = _net_class(nn)()
    names = ["layers.0.running", "layers.1.running"]
    assert [n for n, _ in m.named_buffers()] == names
    assert [b for b in m.buffers()] == [m.layers[0].running, m.layers[1].running]
    assert list(m.buffers(recurse=False)) == []
    assert [n for n, _ in m.layers[0].named_buffers(prefix="b")] == ["b.running"]
    m.layers[1].running = m.layers[0].running           # one buffer under two names
    assert len(list(m.buffers())) == 1
    assert [n for n, _ in m.named_buffers(remove_duplicate=False)] == names


# ---- add_module / register_module ---------------------------------------------------------
def test_add_module_registers_like_an_attribute():
    m = nn.Module()
    lin = nn.Linear(2, 2)
    m.add_module("block-1", lin)                          # not an identifier: fine
    m.register_module("0", nn.ReLU())
    m.add_module("empty", None)
    assert m.get_submodule("block-1") is lin
    assert [n for n, _ in m.named_children()] == ["block-1", "0"]
    assert list(m.state_dict()) == ["block-1.weight", "block-1.bias"]
    other = nn.Linear(2, 2)
    m.add_module("block-1", other)                        # replacing a child is allowed
    assert m.get_submodule("block-1") is other


def test_add_module_validates_names_as_torch():
    m = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="add_module: int is not a Module subclass"):
        m.add_module("x", 3)
    with pytest.raises(TypeError, match="add_module: module name should be a string, got int"):
        m.add_module(1, nn.ReLU())
    with pytest.raises(KeyError, match="module name can.*t contain"):
        m.add_module("a.b", nn.ReLU())
    with pytest.raises(KeyError, match="module name can.*t be empty string"):
        m.add_module("", nn.ReLU())
    for taken in ("weight", "training", "forward"):     # a parameter, a flag, a method
        with pytest.raises(KeyError, match=f"attribute '{taken}' already exists"):
            m.add_module(taken, nn.ReLU())


def test_add_module_errors_match_torch():
    torch = pytest.importorskip("torch")
    for name, module in [("x", 3), (1, "relu"), ("a.b", "relu"), ("", "relu"),
                         ("weight", "relu")]:
        errors = []
        for lib in (nn, torch.nn):
            child = lib.ReLU() if module == "relu" else module
            with pytest.raises(Exception) as e:
                lib.Linear(2, 2).add_module(name, child)
            errors.append(e.type)
        assert errors[0] is errors[1]


# ---- requires_grad_ -----------------------------------------------------------------------
def test_requires_grad_freezes_and_an_optimiser_skips_frozen_parameters():
    m = _net_class(nn)()
    assert m.layers[0].requires_grad_(False) is m.layers[0]
    frozen = list(m.layers[0].parameters())
    assert all(not p.requires_grad for p in frozen)
    assert all(p.requires_grad for p in m.head.parameters())
    before = [p.numpy().copy() for p in m.parameters()]
    opt = optim.SGD(m.parameters(), lr=0.1)
    x = mg.ones(4, 3)
    for block in m.layers:
        x = block.linear(x)
    (m.head(x) * m.scale).sum().backward()
    assert all(p.grad is None for p in frozen)
    opt.step()
    for p, old in zip(m.parameters(), before):
        assert np.array_equal(p.numpy(), old) == any(p is q for q in frozen)
    m.requires_grad_()                                    # default True: unfreeze
    assert all(p.requires_grad for p in m.parameters())


# ---- devices and dtypes -------------------------------------------------------------------
def test_cpu_returns_self_and_half_casts():
    m = nn.Linear(2, 3)
    assert m.cpu() is m and m.weight.device == "cpu"
    assert m.half() is m and m.weight.dtype == np.float16 and m.bias.dtype == np.float16
    assert m.float().weight.dtype == np.float32 and m.double().bias.dtype == np.float64


def test_cuda_moves_to_the_gpu_backend_and_back(monkeypatch):
    """No GPU here: the spy array library stands in for CuPy as the "cuda" backend (undone
    after the test), which also proves the move never computes with NumPy on device data."""
    monkeypatch.setitem(backend._BACKENDS, "cuda", spy_backend.make_backend("cuda"))
    m = nn.Sequential(nn.Linear(2, 3), nn.LayerNorm(3))
    w = m[0].weight
    assert m.cuda() is m
    assert all(p.device == "cuda" and isinstance(p._data, spy_backend.SpyArray)
               for p in m.parameters())
    assert m[0].weight is w                               # moved in place, as PyTorch
    out = m(mg.ones(4, 2, device="cuda"))
    assert out.device == "cuda" and out.shape == (4, 3)
    assert m.cpu() is m and all(p.device == "cpu" for p in m.parameters())
    assert m.cuda(0) is m and m[0].bias.device == "cuda"  # a GPU index: the one GPU


@pytest.mark.gpu
@pytest.mark.skipif(not mg.cuda_is_available(), reason="needs CuPy and an NVIDIA GPU")
def test_cuda_on_a_real_gpu():
    m = nn.Linear(2, 3)
    assert m.cuda() is m and m.weight.device == "cuda"
    assert m(mg.ones(1, 2, device="cuda")).device == "cuda"
    assert m.cpu() is m and m.weight.device == "cpu"


# ---- get_submodule / get_parameter --------------------------------------------------------
def test_get_submodule_and_get_parameter():
    m = _net_class(nn)()
    assert m.get_submodule("") is m
    assert m.get_submodule("layers") is m.layers
    assert m.get_submodule("layers.1.linear") is m.layers[1].linear
    assert m.get_parameter("layers.1.linear.weight") is m.layers[1].linear.weight
    assert m.get_parameter("scale") is m.scale
    assert m.layers.get_parameter("0.linear.bias") is m.layers[0].linear.bias


@pytest.mark.parametrize("call, target, message", [
    ("get_submodule", "layers.5", "ModuleList has no attribute `5`"),
    ("get_submodule", "nothing.linear", "Net has no attribute `nothing`"),
    ("get_submodule", "layers.0.linear.weight", "`weight` is not an nn.Module"),
    ("get_submodule", "training", "`training` is not an nn.Module"),
    ("get_parameter", "layers.0.linear.missing", "Linear has no attribute `missing`"),
    ("get_parameter", "layers.0.running", "`running` is not an nn.Parameter"),
    ("get_parameter", "head.bias", "`bias` is not an nn.Parameter"),    # bias=False: None
    ("get_parameter", "layers.9.linear.weight", "ModuleList has no attribute `9`"),
    ("get_parameter", "layers", "`layers` is not an nn.Parameter"),
])
def test_get_errors_name_the_missing_step(call, target, message):
    with pytest.raises(AttributeError) as e:
        getattr(_net_class(nn)(), call)(target)
    assert str(e.value) == message
    torch = pytest.importorskip("torch")                  # PyTorch's words, exactly
    with pytest.raises(AttributeError) as t:
        getattr(_net_class(torch.nn)(), call)(target)
    assert str(t.value) == message


def test_dotted_names_round_trip_named_parameters():
    m = _net_class(nn)()
    assert all(m.get_parameter(n) is p for n, p in m.named_parameters())
    assert all(m.get_submodule(n) is s for n, s in m.named_modules())


# ---- the containers' own file -------------------------------------------------------------
def test_containers_live_in_their_own_module():
    from minigrad.nn import containers
    assert nn.ModuleList is containers.ModuleList and nn.Sequential is containers.Sequential
    assert nn.ModuleDict is containers.ModuleDict
    s = containers.Sequential(nn.Linear(2, 2), nn.ReLU())
    assert s.get_submodule("0") is s[0] and isinstance(s[0:1], containers.Sequential)
    with pytest.raises(TypeError, match="ModuleList holds Modules"):
        containers.ModuleList([lambda x: x])


def test_reassigning_a_child_or_parameter_keeps_its_place():
    """As PyTorch: m.a = new keeps a's position, so state_dict and parameters() keep their
    order (an optimiser's state is matched to parameters by position)."""
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.a, self.b = nn.Linear(2, 2), nn.Linear(2, 2)
            self.w, self.v = nn.Parameter(mg.ones(1)), nn.Parameter(mg.ones(1))
    m = Net()
    m.a, m.w = nn.Linear(2, 2), nn.Parameter(mg.zeros(1))
    assert list(m.state_dict()) == ["w", "v", "a.weight", "a.bias", "b.weight", "b.bias"]
    m.a = None
    assert [n for n, _ in m.named_children()] == ["b"]


@pytest.mark.parametrize("call,error,match", [
    (lambda m: m.register_buffer("bias", mg.ones(2)), KeyError, "attribute 'bias' already"),
    (lambda m: m.register_buffer("x", 5), TypeError, "cannot assign 'int' object to buffer"),
    (lambda m: m.register_buffer("a.b", None), KeyError, "contain"),
    (lambda m: m.register_buffer("", None), KeyError, "empty"),
    (lambda m: m.register_buffer(3, None), TypeError, "buffer name should be a string"),
    (lambda m: m.register_parameter("w", mg.ones(2)), TypeError, "Parameter or None"),
    (lambda m: m.register_parameter("training", None), KeyError, "already exists"),
])
def test_register_buffer_and_parameter_check_as_pytorch(call, error, match):
    with pytest.raises(error, match=match):
        call(nn.Linear(2, 2))


def test_non_persistent_buffers_move_but_stay_out_of_state_dict():
    """register_buffer(..., persistent=False), as PyTorch: for state the module rebuilds
    itself (a causal mask); loading a state dict without it is not 'missing keys'."""
    class Masked(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(2, 2)
            self.register_buffer("mask", mg.ones(2, 2), persistent=False)
            self.register_buffer("count", mg.zeros(1))
    m = Masked()
    assert list(m.state_dict()) == ["count", "lin.weight", "lin.bias"]   # own state first
    assert [n for n, _ in m.named_buffers()] == ["mask", "count"]
    Masked().load_state_dict(m.state_dict())                      # strict: nothing missing
    m.register_buffer("mask", mg.ones(2, 2))                      # persistent again
    assert "mask" in m.state_dict()
    m.register_buffer("mask", mg.ones(2, 2), persistent=False)
    del m.mask
    m.register_buffer("mask", mg.zeros(1))
    assert "mask" in m.state_dict()
    torch = pytest.importorskip("torch")

    class TorchMasked(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = torch.nn.Linear(2, 2)
            self.register_buffer("mask", torch.ones(2, 2), persistent=False)
            self.register_buffer("count", torch.zeros(1))
    assert list(TorchMasked().state_dict()) == list(Masked().state_dict())


def test_assigning_a_parameter_checks_its_name_as_register_parameter():
    m = nn.Linear(2, 2)
    with pytest.raises(KeyError, match="contain"):
        setattr(m, "x.y", nn.Parameter(mg.ones(1)))
    with pytest.raises(KeyError, match="attribute 'forward' already exists"):
        m.forward = nn.Parameter(mg.ones(1))
    m.extra = None                                   # a plain attribute gives its name up
    m.extra = nn.Parameter(mg.ones(1))
    assert [n for n, _ in m.named_parameters()] == ["weight", "bias", "extra"]


def test_softmax_without_dim_takes_pytorchs_implicit_dim_and_warns():
    x = mg.tensor(np.random.default_rng(0).standard_normal((2, 3, 4)))
    import minigrad.functional as F
    for fn in (F.softmax, F.log_softmax):                 # the functions too
        with pytest.warns(UserWarning, match="Implicit dimension choice.*dim=0"):
            np.testing.assert_array_equal(fn(x).numpy(), fn(x, 0).numpy())
    s = mg.tensor(1.5, requires_grad=True)                # 0-d: dim 0, a softmax of 1
    s.softmax(0).backward()
    assert s.softmax(0).item() == 1.0 and s.grad.tolist() == 0.0
    for cls, fn in ((nn.Softmax, "softmax"), (nn.LogSoftmax, "log_softmax")):
        with pytest.warns(UserWarning, match="Implicit dimension choice.*dim=0"):
            got = cls()(x)                                 # a 3-D input: dim 0
        np.testing.assert_array_equal(got.numpy(), getattr(x, fn)(0).numpy())
        with pytest.warns(UserWarning, match="dim=1"):
            cls()(x.reshape(2, 3, 2, 2))
        assert repr(cls()) == f"{cls.__name__}(dim=None)"


def test_embedding_makes_a_plain_weight_its_parameter_and_checks_its_shape():
    e = nn.Embedding(4, 3, _weight=mg.ones(4, 3))
    assert [n for n, _ in e.named_parameters()] == ["weight"] and e.weight.requires_grad
    assert not nn.Embedding(4, 3, _weight=mg.ones(4, 3), _freeze=True).weight.requires_grad
    with pytest.raises(ValueError, match="_weight must be a Tensor of shape .*got ndarray"):
        nn.Embedding(4, 3, _weight=np.ones((4, 3)))
    table = nn.Parameter(mg.ones(4, 3))
    frozen = nn.Embedding(4, 3, _weight=table, _freeze=True)       # its memory, frozen
    assert not frozen.weight.requires_grad and table.requires_grad
    assert np.shares_memory(frozen.weight.numpy(), table.numpy())
    assert not nn.Embedding.from_pretrained(mg.ones(4, 3)).weight.requires_grad
    assert nn.Embedding.from_pretrained(mg.ones(4, 3), freeze=False).weight.requires_grad
    with pytest.raises(ValueError, match=r"_weight must be a Tensor of shape \(5, 3\), got "
                                         r"\(4, 3\)"):
        nn.Embedding(5, 3, _weight=nn.Parameter(mg.ones(4, 3)))


def test_module_repr_and_attributes_before_init_as_pytorch():
    class Block(nn.Module):
        def __init__(self):
            self.hidden = 2                      # a plain value before super().__init__()
            super().__init__()
            self.fc = nn.Linear(2, 2)

        def extra_repr(self):
            return "hidden=2\nmore=1"
    assert repr(Block()) == ("Block(\n  hidden=2\n  more=1\n  (fc): Linear(in_features=2, "
                             "out_features=2, bias=True)\n)")

    class Early(nn.Module):
        def __init__(self):
            self.fc = nn.Linear(2, 2)
            super().__init__()
    with pytest.raises(RuntimeError, match=r"must call super\(\).__init__\(\) before "
                                           r"assigning parameters or submodules"):
        Early()
    class One(nn.Module):                        # one extra line and a child
        def __init__(self):
            super().__init__()
            self.act = nn.ReLU()

        def extra_repr(self):
            return "k=1"
    assert repr(One()) == "One(\n  k=1\n  (act): ReLU()\n)"
    seq = nn.Sequential(nn.ReLU())
    assert seq.insert(0, nn.Tanh()) is seq and isinstance(seq[0], nn.Tanh)


def test_to_gives_buffers_new_tensors_and_leaves_the_callers_alone():
    w = mg.tensor([1.0, 2.0])
    crit = nn.CrossEntropyLoss(weight=w).double()
    assert w.dtype == mg.float32 and crit.weight.dtype == mg.float64
    mask = mg.ones(3)
    a, b = nn.Module(), nn.Module()
    a.register_buffer("m", mask)
    b.register_buffer("m", mask)
    a.half()
    assert b.m.dtype == mg.float32 and a.m.dtype == mg.float16 and mask.dtype == mg.float32
    lin = nn.Linear(2, 2)
    weight = lin.weight
    lin.double()
    assert lin.weight is weight and weight.dtype == mg.float64    # parameters: in place


@pytest.mark.parametrize("zero", ["module", "optimizer"])
def test_zero_grad_without_none_zeroes_the_same_grad_tensor(zero):
    m = nn.Linear(2, 1)
    opt = mg.optim.SGD(m.parameters(), lr=0.1)
    m(mg.ones(1, 2)).sum().backward()
    g = m.weight.grad
    (m if zero == "module" else opt).zero_grad(set_to_none=False)
    assert g is m.weight.grad and g.sum().item() == 0.0
    m(mg.ones(1, 2)).sum().backward()
    assert g.sum().item() == 2.0                       # backward accumulates into it again


def test_zero_grad_of_a_grad_with_a_graph_gives_a_plain_zero_leaf():
    from minigrad.nn.module import zero_grads
    w = nn.Parameter(mg.ones(2))
    g, = mg.grad((w * w).sum(), [w], create_graph=True)
    w.grad = g
    zero_grads([w], set_to_none=False)
    assert w.grad is not g and w.grad._ctx is None and w.grad.sum().item() == 0.0
    assert g.sum().item() == 4.0                       # the graph's tensor is untouched


def test_a_shared_batch_norm_may_lack_num_batches_tracked_under_both_names():
    class Shared(nn.Module):
        def __init__(self):
            super().__init__()
            self.a = nn.BatchNorm1d(3)
            self.b = self.a
    sd = {k: v for k, v in Shared().state_dict().items() if "num_batches" not in k}
    assert Shared().load_state_dict(sd) == ([], [])


def test_zero_grad_counts_a_write_to_the_grad():
    p = nn.Parameter(mg.ones(2))
    (p * 2).sum().backward()
    before = p.grad._version
    optim.SGD([p], lr=0.1).zero_grad(set_to_none=False)
    assert p.grad._version > before            # a graph that saved the grad sees the change


# ---- PyTorch's signatures and listings -----------------------------------------------------
def test_named_modules_takes_memo_first_as_pytorch():
    m = nn.Sequential(nn.Linear(1, 1), nn.ReLU())
    assert [n for n, _ in m.named_modules(None, "net")] == ["net", "net.0", "net.1"]
    memo = {m[0]}                                # a module in memo is left out, as PyTorch
    assert [n for n, _ in m.named_modules(memo, "p")] == ["p", "p.1"]
    assert memo == {m, m[0], m[1]}               # and each one yielded is added
    assert [n for n, _ in m.named_parameters(prefix="q")] == ["q.0.weight", "q.0.bias"]


def test_dir_lists_parameters_buffers_and_children():
    m = nn.Sequential(nn.BatchNorm1d(2))         # PyTorch's dir: not the positional "0"
    assert {"weight", "running_mean", "forward"} <= set(dir(m[0])) and "0" not in dir(m)
    m.head = nn.Linear(2, 1)
    assert "head" in dir(m)


def test_a_tensor_over_a_child_module_names_the_module_not_data():
    m = nn.Sequential(nn.Linear(1, 1))
    with pytest.raises(TypeError, match="child module '0'.*del it first") as e:
        setattr(m, "0", mg.ones(1))
    assert ".data" not in str(e.value)


def test_get_submodule_refuses_a_target_that_is_not_a_string():
    m = nn.Sequential(nn.Linear(1, 1))          # 0 was taken for "": the whole model
    for get in (m.get_submodule, m.get_parameter, m.get_buffer):
        with pytest.raises(TypeError, match="string.*got int 0"):
            get(0)
    assert m.get_submodule("0") is m[0]
