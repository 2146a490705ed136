"""Shared fixtures: `device` runs a test on every device this machine has ("cpu" always,
"cuda" where CuPy and a GPU exist, skipped with a reason elsewhere), and `dtype` on both
float dtypes. One parametrised suite, never a copied test file per backend."""
import pytest

import minigrad as mg

_NO_CUDA = ("needs CuPy and an NVIDIA GPU (pip install -e \".[cuda12]\" on a machine with one)")

DEVICES = [
    "cpu",
    pytest.param("cuda", marks=[pytest.mark.gpu,
                                pytest.mark.skipif(not mg.cuda_is_available(), reason=_NO_CUDA)]),
]


@pytest.fixture(params=DEVICES)
def device(request):
    """Every device: the op suite runs once per device, from one test file."""
    return request.param


@pytest.fixture(params=["float32", "float64"])
def dtype(request):
    return request.param


@pytest.fixture
def spy():
    """The spy device for one test: spy_backend.py's stand-in for CuPy, which refuses NumPy
    on device data, so an op that leaks to the host fails loudly."""
    import spy_backend
    spy_backend.register()
    yield "spy"
    spy_backend.unregister()


@pytest.fixture
def torch():
    """PyTorch, the reference, for a test that compares with it: skipped where it is not
    installed (CI installs none), so the file's other tests still run. A file whose helpers
    use torch at module level imports it with a `torch = None` fallback."""
    return pytest.importorskip("torch")
