"""mg.set_float32_matmul_precision: PyTorch's switch for TensorFloat-32 GEMMs on a GPU, the
CuPy call it makes, and the trainer's --matmul-precision (nanoGPT allows TF32)."""
from types import SimpleNamespace

import numpy as np
import pytest

import minigrad as mg
from minigrad import backend
from minitransformer.cli import build_parser
from minitransformer.train import TrainConfig, train

import spy_backend


@pytest.fixture
def precision_state(monkeypatch):
    """Each test starts from a precision never set, and leaves the process as it was."""
    monkeypatch.setattr(backend, "_PRECISION", [None])


@pytest.fixture
def recording_device(monkeypatch, precision_state):
    """A spy device whose backend, like CuPy's, has a precision switch: records each call."""
    calls = []

    def factory():
        b = spy_backend.make_backend("rec")
        b.set_matmul_precision = calls.append
        return b
    monkeypatch.setitem(backend._FACTORIES, "rec", factory)
    monkeypatch.setattr(backend, "_BACKENDS", {k: v for k, v in backend._BACKENDS.items()})
    return calls


def test_default_is_highest_and_values_are_checked(precision_state):
    assert mg.get_float32_matmul_precision() == "highest"
    for p in ("high", "medium", "highest"):
        mg.set_float32_matmul_precision(p)
        assert mg.get_float32_matmul_precision() == p
    with pytest.raises(ValueError, match="'tf32'.*highest, high, medium"):
        mg.set_float32_matmul_precision("tf32")
    assert mg.get_float32_matmul_precision() == "highest"   # a refused value changes nothing


def test_reaches_devices_built_before_and_after(recording_device):
    mg.zeros(1, device="rec")                       # built before: never set, so not called
    assert recording_device == []
    mg.set_float32_matmul_precision("high")
    assert recording_device == ["high"]
    backend._BACKENDS.pop("rec")                    # built after: gets the current value
    mg.zeros(1, device="rec")
    assert recording_device == ["high", "high"]


def test_cpu_results_do_not_change(precision_state):
    """NumPy's BLAS has no TF32: a float32 product is the same under every precision."""
    a, b = mg.randn(64, 32), mg.randn(32, 16)
    ref = (a @ b).numpy()
    mg.set_float32_matmul_precision("medium")
    np.testing.assert_array_equal((a @ b).numpy(), ref)


def _fake_cupy(capability):
    """The parts of CuPy that backend.cupy_matmul_precision uses (CuPy's compute-type codes)."""
    calls = []
    linalg = SimpleNamespace(COMPUTE_TYPE_DEFAULT=1, COMPUTE_TYPE_TF32=7)
    core = SimpleNamespace(_routines_linalg=linalg,
                           set_compute_type=lambda dtype, mode: calls.append((dtype, mode)))
    cuda = SimpleNamespace(Device=lambda: SimpleNamespace(compute_capability=capability))
    return SimpleNamespace(_core=core, cuda=cuda, float32=np.float32), calls


@pytest.mark.parametrize("capability,precision,mode", [
    ("90", "high", 7), ("80", "medium", 7), ("90", "highest", 1),
    ("75", "high", 1),                      # no TF32 before the A100: float32, no warning
])
def test_cupy_compute_type(monkeypatch, capability, precision, mode):
    import sys
    cupy, calls = _fake_cupy(capability)
    monkeypatch.setitem(sys.modules, "cupy._core", cupy._core)
    monkeypatch.setitem(sys.modules, "cupy._core._routines_linalg", cupy._core._routines_linalg)
    backend.cupy_matmul_precision(cupy, precision)
    assert calls == [(np.float32, mode)]


def test_real_cupy_has_the_switch():
    """The private names used exist in the installed CuPy (importable without a GPU)."""
    cupy = pytest.importorskip("cupy", reason="CuPy is not installed")
    from cupy._core import _routines_linalg as linalg
    assert callable(cupy._core.set_compute_type)
    assert linalg.COMPUTE_TYPE_TF32 != linalg.COMPUTE_TYPE_DEFAULT


def test_trainer_flag_config_and_restore(tmp_path, recording_device):
    args = build_parser().parse_args(["train", "--matmul-precision", "highest"])
    assert args.matmul_precision == "highest"
    with pytest.raises(SystemExit):
        build_parser().parse_args(["train", "--matmul-precision", "tf32"])
    assert TrainConfig().matmul_precision == "high"        # nanoGPT allows TF32
    with pytest.raises(ValueError, match="matmul_precision must be one of"):
        TrainConfig(matmul_precision="fast")
    text = tmp_path / "t.txt"
    text.write_text("to be or not to be, that is the question. " * 40)
    mg.zeros(1, device="rec")
    cfg = TrainConfig(data=str(text), out=str(tmp_path / "run"), n_layer=1, n_head=2,
                      n_embd=8, block_size=8, batch_size=2, max_iters=1, eval_interval=1,
                      eval_iters=1, progress=False, plot=False, matmul_precision="medium")
    train(cfg, log=lambda *a: None)
    assert recording_device == ["medium", "highest"]       # set for the run, then restored
    assert mg.get_float32_matmul_precision() == "highest"


@pytest.mark.parametrize("devices", [1, 0])
def test_the_cuda_backend_is_wired_to_cupys_functions(monkeypatch, devices):
    """_cupy_backend with a stand-in CuPy module: each of the Backend's slots gets CuPy's own
    function (erf from cupyx, index_add through cupy.add.at, the host transfers), the precision
    switch and the fused kernels are attached; and with no GPU visible the message says
    what is needed. (The real CuPy is checked on a GPU, in tests/test_gpu.py.)"""
    import sys
    from types import ModuleType
    cupy, _ = _fake_cupy("90")
    module = ModuleType("cupy")
    module.__dict__.update(vars(cupy))
    module.cuda = SimpleNamespace(runtime=SimpleNamespace(getDeviceCount=lambda: devices),
                                  Device=cupy.cuda.Device)
    module.add = SimpleNamespace(at=object())
    module.asnumpy, module.asarray, module.ndarray = object(), object(), np.ndarray
    module.random = np.random
    special = ModuleType("cupyx.scipy.special")
    special.erf = object()
    cupyx, scipy = ModuleType("cupyx"), ModuleType("cupyx.scipy")
    cupyx.scipy, scipy.special = scipy, special
    for name, m in [("cupy", module), ("cupyx", cupyx), ("cupyx.scipy", scipy),
                    ("cupyx.scipy.special", special)]:
        monkeypatch.setitem(sys.modules, name, m)
    if not devices:
        with pytest.raises(RuntimeError, match="needs CuPy and an NVIDIA GPU .*no CUDA device "
                                               "visible.*cuda12"):
            backend._cupy_backend()
        return
    b = backend._cupy_backend()
    assert (b.name, b.xp, b.erf, b.index_add.add_at, b.to_numpy, b.from_numpy) == (
        "cuda", module, special.erf, module.add.at, module.asnumpy, module.asarray)
    assert b.special is special                  # lgamma, digamma, erfinv: cupyx's own
    assert b.kernels.cupy is module and callable(b.set_matmul_precision)
