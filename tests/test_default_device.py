"""The default device: mg.set_default_device / get_default_device and `with mg.device(d):`
send factories (and so new layers' parameters) to d when given no device=, as PyTorch's;
ops on existing tensors stay where their inputs are. The spy device (tests/spy_backend.py)
stands in for "cuda"."""
import threading
import warnings

import numpy as np
import pytest

import minigrad as mg
import spy_backend
from minigrad import backend, nn
from test_backend_seam import OPS, _arrays, _flat, _run


@pytest.fixture(autouse=True)
def spy():
    spy_backend.register()
    yield "spy"
    mg.set_default_device(None)
    spy_backend.unregister()


def _on_spy(t):
    return t.device == "spy" and isinstance(t._data, spy_backend.SpyArray)


FACTORIES = {
    "zeros": lambda: mg.zeros(2, 3), "ones": lambda: mg.ones(2), "empty": lambda: mg.empty(2),
    "full": lambda: mg.full((2,), 1.5), "rand": lambda: mg.rand(2),
    "randn": lambda: mg.randn(2), "randint": lambda: mg.randint(0, 5, (3,)),
    "arange": lambda: mg.arange(4), "arange_float": lambda: mg.arange(0.5, 2),
    "linspace": lambda: mg.linspace(0, 1, 5), "logspace": lambda: mg.logspace(0, 2, 3),
    "eye": lambda: mg.eye(3), "randperm": lambda: mg.randperm(4),
    "tensor": lambda: mg.tensor([1.0, 2.0]), "scalar_tensor": lambda: mg.scalar_tensor(2),
    "as_tensor": lambda: mg.as_tensor(np.zeros(2)), "asarray": lambda: mg.asarray([1, 2]),
    "hann_window": lambda: mg.hann_window(4), "kaiser_window": lambda: mg.kaiser_window(4),
    "tril_indices": lambda: mg.tril_indices(3, 3), "empty_strided":
    lambda: mg.empty_strided((2, 2), (2, 1)), "normal": lambda: mg.normal(0.0, 1.0, (2,)),
}


@pytest.mark.parametrize("name", FACTORIES)
def test_factories_without_device_land_on_the_default(name):
    mg.set_default_device("spy")
    assert _on_spy(FACTORIES[name]())
    mg.set_default_device(None)
    assert FACTORIES[name]().device == "cpu"


def test_an_explicit_device_wins_over_the_default():
    with mg.device("spy"):
        assert mg.zeros(2, device="cpu").device == "cpu"
        assert mg.tensor([1.0], device="cpu").device == "cpu"
        assert mg.randn(2, device="cpu").device == "cpu"


def test_get_default_device_and_reset():
    assert mg.get_default_device() == "cpu" and mg.get_default_device().type == "cpu"
    mg.set_default_device("spy")
    d = mg.get_default_device()
    assert d == "spy" and d is mg.device("spy")
    mg.set_default_device(None)                          # None: back to the CPU, as torch
    assert mg.get_default_device() == "cpu" and mg.zeros(1).device == "cpu"


def test_the_context_manager_nests_and_restores_on_exceptions():
    d = mg.device("spy")
    with d as entered:
        assert entered is d and mg.get_default_device() == "spy"
        with mg.device("cpu"):
            assert mg.zeros(1).device == "cpu"
        with d:                                          # the same Device again
            assert _on_spy(mg.zeros(1))
        assert _on_spy(mg.zeros(1))
    assert mg.get_default_device() == "cpu"
    with pytest.raises(KeyError):
        with d:
            raise KeyError("inside")
    assert mg.zeros(1).device == "cpu"
    # the block's end restores what was before it, whatever set_default_device did inside
    # (PyTorch's too)
    mg.set_default_device("spy")
    with mg.device("cpu"):
        assert mg.zeros(1).device == "cpu"
        mg.set_default_device("cpu")
    assert _on_spy(mg.zeros(1))
    with mg.device("cpu"):
        mg.set_default_device("spy")
        assert _on_spy(mg.zeros(1))
    assert _on_spy(mg.zeros(1))


def test_a_tensors_device_is_a_context_manager_too():
    x = mg.zeros(1, device="spy")
    with x.device:
        assert _on_spy(mg.ones(2))
    assert mg.ones(2).device == "cpu"


def test_the_default_is_per_thread():
    mg.set_default_device("spy")
    seen = []
    worker = threading.Thread(target=lambda: seen.append(
        (mg.get_default_device(), mg.zeros(1).device)))
    worker.start()
    worker.join()
    assert seen == [("cpu", "cpu")] and _on_spy(mg.zeros(1))


def test_an_unknown_device_is_refused_when_set():
    with pytest.raises(ValueError, match="unknown device 'tpu'"):
        mg.set_default_device("tpu")
    assert mg.get_default_device() == "cpu"


def test_the_meta_device_is_refused_saying_minigrad_has_none():
    # torch.func's ensembling tutorial: copy.deepcopy(model).to('meta')
    with pytest.raises(ValueError, match="unknown device 'meta'.*no 'meta' device"):
        mg.nn.Linear(2, 2).to("meta")
    with pytest.raises(ValueError, match="no 'meta' device"):
        mg.zeros(2, device="meta")


def test_cuda_without_cupy_fails_at_first_use(monkeypatch):
    """As PyTorch: setting "cuda" is accepted, the first tensor made there says what is
    missing."""
    def no_cupy():
        raise RuntimeError("device 'cuda' needs CuPy and an NVIDIA GPU (ImportError: ...)")
    monkeypatch.setitem(backend._FACTORIES, "cuda", no_cupy)
    monkeypatch.delitem(backend._BACKENDS, "cuda", raising=False)
    mg.set_default_device("cuda")
    assert mg.get_default_device() == "cuda"
    with pytest.raises(RuntimeError, match="needs CuPy"):
        mg.zeros(2)
    with pytest.raises(RuntimeError, match="needs CuPy"):
        nn.Linear(2, 2)
    assert (mg.ones(2, device="cpu") + 1).device == "cpu"     # ops are unaffected


def test_copies_follow_the_default_as_torch(torch):
    """torch.tensor, as_tensor and asarray of a CPU tensor or array go to the default
    device; from_numpy, frombuffer, *_like, new_* and the Generator stay where they were."""
    c, a = torch.zeros(2, device="cpu"), np.zeros(2)
    torch.set_default_device("meta")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")          # torch.tensor(t)'s advice to clone
            copied = torch.tensor(c).device.type
        expect = {"tensor": copied, "as_tensor": torch.as_tensor(c).device.type,
                  "asarray": torch.asarray(c).device.type,
                  "from_numpy": torch.from_numpy(a).device.type,
                  "zeros_like": torch.zeros_like(c).device.type,
                  "empty_like": torch.empty_like(c).device.type,   # (no draw: torch's
                  # generator is left as other tests expect it)
                  "new_zeros": c.new_zeros(2).device.type,
                  "generator": torch.Generator().device.type,
                  "Tensor": torch.Tensor([1.0]).device.type}
    finally:
        torch.set_default_device(None)
    x, b = mg.zeros(2, device="cpu"), np.zeros(2)
    with mg.device("spy"):
        got = {"tensor": mg.tensor(x).device, "as_tensor": mg.as_tensor(x).device,
               "asarray": mg.asarray(x).device, "from_numpy": mg.from_numpy(b).device,
               "zeros_like": mg.zeros_like(x).device,
               "empty_like": mg.empty_like(x).device,
               "new_zeros": x.new_zeros(2).device, "generator": mg.Generator().device,
               "Tensor": mg.Tensor([1.0]).device}
    assert {k: v.replace("spy", "meta") for k, v in got.items()} == expect
    assert mg.frombuffer(bytearray(8), dtype=mg.float32).device == "cpu"
    with mg.device("spy"):
        assert mg.randint_like(x, 3).device == mg.randn_like(x).device == "cpu"


def test_without_a_default_copies_keep_their_own_device():
    s = mg.zeros(2, device="spy")
    assert _on_spy(mg.tensor(s)) and mg.as_tensor(s) is s and mg.asarray(s) is s
    assert _on_spy(mg.tensor(s._data))
    mg.set_default_device("cpu")             # set, even to the CPU: copies go there
    assert mg.tensor(s).device == "cpu" and mg.as_tensor(s).device == "cpu"


def test_new_layers_parameters_land_on_the_default():
    with mg.device("spy"):
        layers = [nn.Linear(3, 2), nn.Conv2d(1, 2, 3), nn.LayerNorm(3), nn.Embedding(4, 3),
                  nn.BatchNorm1d(3), nn.LSTM(3, 2), nn.MultiheadAttention(4, 2),
                  nn.LazyLinear(2)]
        for layer in layers:
            for name, t in [*layer.named_parameters(), *layer.named_buffers()]:
                assert _on_spy(t), f"{type(layer).__name__}.{name} on {t.device}"
        y = layers[0](mg.randn(4, 3))                   # and they run there
        assert _on_spy(y) and _on_spy(layers[-1](y)) and _on_spy(layers[-1].weight)
    assert nn.Linear(3, 2).weight.device == "cpu"


def test_collate_follows_the_default_as_torch():
    """torch's default_collate makes numbers and arrays a tensor on the default device
    and stacks tensors where they are."""
    from minigrad.utils.data import default_collate
    with mg.device("spy"):
        assert _on_spy(default_collate([1, 2])) and _on_spy(default_collate([0.5, 1.5]))
        assert _on_spy(default_collate([np.zeros(2), np.ones(2)]))
        cpu = [mg.zeros(2, device="cpu"), mg.ones(2, device="cpu")]
        assert default_collate(cpu).device == "cpu"


def _case_ids(ops):
    return [op[0] for op in ops]


@pytest.mark.parametrize("op", OPS, ids=_case_ids(OPS))
def test_ops_on_cpu_tensors_stay_on_the_cpu(op):
    """Every op of the seam's table, forward, backward and double backward, on CPU tensors
    with the default device elsewhere: the constants ops build beside their inputs follow
    the inputs, never the default."""
    name, fn, shapes = op[:3]
    arrays = _arrays(shapes, op[3] if len(op) > 3 else "real")
    with mg.device("spy"):
        results = _run(fn, arrays, "cpu")
    for what, ts in zip(("output", "grad", "grad of grad", ".grad"), results):
        for i, t in enumerate(_flat(ts)):
            assert t.device == "cpu" and isinstance(t._data, np.ndarray), \
                f"{name}: {what} {i} on {t.device}"


def test_what_torch_makes_on_the_cpu_or_the_default_here_too(torch):
    """block_diag() of nothing is a CPU tensor in PyTorch (an op, not a factory);
    clip_grad_norm_ and get_total_norm of no tensors are a 0 made on the default device."""
    torch.set_default_device("meta")
    try:
        expect = [torch.block_diag().device.type,
                  torch.nn.utils.clip_grad_norm_([], 1.0).device.type,
                  torch.nn.utils.get_total_norm([]).device.type]
    finally:
        torch.set_default_device(None)
    with mg.device("spy"):
        got = [mg.block_diag().device, nn.utils.clip_grad_norm_([], 1.0).device,
               nn.utils.get_total_norm([]).device]
    assert [d.replace("spy", "meta") for d in got] == expect


def test_a_cpu_attention_mask_is_not_copied_to_the_default_device():
    from minigrad.nn.transformer import _is_causal_mask
    mask = nn.Transformer.generate_square_subsequent_mask(3, device="cpu")
    with mg.device("spy"), spy_backend.counted() as n:
        assert _is_causal_mask(mask, 3)
    assert n["launch"] == 0


def test_the_meta_device_is_refused_saying_how_to_get_shapes():
    # minigrad has no meta device (every op would need a shape rule): a clear refusal
    for make in (lambda: mg.device("meta"), lambda: mg.zeros(2, device="meta"),
                 lambda: mg.set_default_device("meta")):
        with pytest.raises(ValueError, match="no 'meta' device.*one-sample cpu input"):
            make()
    assert str(mg.get_default_device()) == "cpu"
