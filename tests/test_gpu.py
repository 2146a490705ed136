"""GPU-only checks (the op suite itself runs on "cuda" through the `device` fixture): moving
tensors, where gradients land, device mixing, and the CuPy-specific paths of the backend.
Skipped with a reason where CuPy or a GPU is missing."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F

pytestmark = [pytest.mark.gpu,
              pytest.mark.skipif(not mg.cuda_is_available(),
                                 reason="needs CuPy and an NVIDIA GPU "
                                        "(pip install -e \".[cuda12]\" on a machine with one)")]


@pytest.fixture
def cupy():
    return pytest.importorskip("cupy")


@pytest.mark.parametrize("dtype", [mg.float32, mg.float64, mg.int64, mg.bool])
def test_round_trip(dtype, cupy):
    host = (np.arange(6).reshape(2, 3) % 2).astype(dtype)
    x = mg.tensor(host)
    g = x.to("cuda")
    assert g.device == "cuda" and isinstance(g._data, cupy.ndarray) and g.dtype == dtype
    back = g.to("cpu")
    assert back.device == "cpu" and isinstance(back._data, np.ndarray)
    np.testing.assert_array_equal(back.numpy(), host)
    np.testing.assert_array_equal(g.numpy(), host)           # .numpy() copies to the host
    assert x.cuda().device == "cuda" and mg.zeros(2, device="cuda:0").device == "cuda"


def test_grads_come_back_on_cuda(cupy):
    x = mg.randn(4, 3, device="cuda", requires_grad=True)
    w = mg.randn(3, 2, device="cuda", requires_grad=True)
    loss = F.cross_entropy(x @ w, mg.tensor([0, 1, 1, 0], device="cuda"))
    loss.backward()
    for t in (x, w):
        assert t.grad.device == "cuda" and isinstance(t.grad._data, cupy.ndarray)
        assert t.grad.dtype == mg.float32


def test_grads_follow_a_move_back_to_the_host(cupy):
    x = mg.randn(2, 3, requires_grad=True)                   # a CPU leaf
    y = (x.to("cuda") * 3).sum()
    assert y.device == "cuda"
    y.backward()
    assert x.grad.device == "cpu" and isinstance(x.grad._data, np.ndarray)
    np.testing.assert_array_equal(x.grad.numpy(), 3.0)


def test_mixed_devices_raise():
    a, b = mg.ones(2), mg.ones(2, device="cuda")
    with pytest.raises(RuntimeError, match="different devices"):
        a + b
    with pytest.raises(RuntimeError, match="cuda"):
        a[mg.tensor([0], device="cuda")]


def test_torch_cuda_names():
    assert mg.cuda.is_available() and mg.cuda.device_count() >= 1
    x = mg.ones(1000, device="cuda") * 2
    mg.cuda.synchronize()
    assert x.sum().item() == 2000.0


def test_cuda_matches_cpu_and_is_seeded():
    mg.manual_seed(3)
    a = mg.randn(100, device="cuda").numpy()
    mg.manual_seed(3)
    np.testing.assert_array_equal(mg.randn(100, device="cuda").numpy(), a)
    x = np.linspace(-6, 6, 101)
    np.testing.assert_allclose(F.gelu(mg.tensor(x, device="cuda")).numpy(),
                               F.gelu(mg.tensor(x)).numpy(), rtol=1e-13, atol=1e-14)


def test_repeated_index_gradients_on_cuda():
    """The gradient of indexing uses the backend's index_add (cupy.add.at or scatter_add)."""
    w = mg.zeros(4, 2, device="cuda", requires_grad=True)
    F.embedding(mg.tensor([[0, 0], [3, 0]], device="cuda"), w).sum().backward()
    assert w.grad.tolist() == [[3.0, 3.0], [0.0, 0.0], [0.0, 0.0], [1.0, 1.0]]
    x = mg.zeros(3, device="cuda", requires_grad=True)
    x[[2, 2, 1]].sum().backward()
    assert x.grad.tolist() == [0.0, 1.0, 2.0]


def test_matmul_precision_sets_cupys_compute_type(cupy, monkeypatch):
    """"high" asks CuPy for TF32 GEMMs on an A100-class GPU (float32 on older ones), and the
    product stays within TF32's rounding of the float32 one; "highest" goes back."""
    from cupy._core import _routines_linalg as linalg
    from minigrad import backend
    monkeypatch.setattr(backend, "_PRECISION", [None])
    a, b = mg.randn(256, 256, device="cuda"), mg.randn(256, 256, device="cuda")
    exact = (a.double() @ b.double()).numpy()
    try:
        mg.set_float32_matmul_precision("high")
        tf32 = int(cupy.cuda.Device().compute_capability) >= 80
        assert cupy._core.get_compute_type(cupy.float32) == (
            linalg.COMPUTE_TYPE_TF32 if tf32 else linalg.COMPUTE_TYPE_DEFAULT)
        # TF32 rounds inputs to 10 mantissa bits: errors ~0.02 here (sums of ~16), max ~0.1
        np.testing.assert_allclose((a @ b).numpy(), exact, rtol=0, atol=0.25)
    finally:
        mg.set_float32_matmul_precision("highest")
    assert cupy._core.get_compute_type(cupy.float32) == linalg.COMPUTE_TYPE_DEFAULT
    np.testing.assert_allclose((a @ b).numpy(), exact, rtol=0, atol=1e-3)


def test_adamw_foreach_on_cuda_matches_the_cpu():
    """The flat (foreach) update GPU parameters get by default equals the CPU's one by one."""
    from minigrad import nn, optim
    rng = np.random.default_rng(0)
    init = [rng.standard_normal(s).astype(np.float32) for s in ((4, 3), (3,), ())]
    runs = []
    for device in ("cpu", "cuda"):
        ps = [nn.Parameter(mg.tensor(a, device=device)) for a in init]
        opt = optim.AdamW([{"params": ps[:1], "weight_decay": 0.1},
                           {"params": ps[1:], "weight_decay": 0.0}], lr=0.01)
        for k in range(3):
            for p, a in zip(ps, init):
                p.grad = mg.tensor(a * (k + 1), device=device)
            opt.step()
        runs.append(([p.numpy() for p in ps], opt))
    assert runs[1][1]._flat and not runs[0][1]._flat
    for c, g in zip(runs[0][0], runs[1][0]):
        np.testing.assert_allclose(g, c, rtol=1e-6, atol=1e-7)


def test_fused_kernels_run_and_match_the_cpu():
    """On a GPU the tanh-GELU, Adam, layer-norm, softmax and dropout chains run as fused
    kernels (backend_kernels.py): they compile (no fallback warning), and agree with the
    CPU's chains (dropout, whose draws differ, with its definition)."""
    import warnings
    from minigrad import backend, nn, optim
    kernels = backend.get("cuda").kernels
    x = np.random.default_rng(0).standard_normal((64, 33)) * 3
    with warnings.catch_warnings():
        # a kernel that fell back warns: an error here (other warnings, such as a CuPy
        # performance note at a first compile, are not this test's business)
        warnings.filterwarnings("error", message="minigrad: the fused CUDA kernel")
        outs = []
        for device in ("cpu", "cuda"):
            t = mg.tensor(x, device=device, requires_grad=True)
            y = F.gelu(t, approximate="tanh")
            (y * y).sum().backward()
            p = nn.Parameter(mg.tensor(x, device=device))
            opt = optim.AdamW([p], lr=0.01, foreach=False)
            p.grad = t.grad
            opt.step()
            ln_in = mg.tensor(x, device=device, requires_grad=True)
            ln_w = mg.tensor(x[0], device=device, requires_grad=True)
            ln = F.layer_norm(ln_in, (33,), ln_w)
            (ln * ln_in).sum().backward()
            sm_in = mg.tensor(x, device=device, requires_grad=True)
            sm = sm_in.softmax(-1)
            (sm * sm_in).sum().backward()
            outs.append((y.numpy(), t.grad.numpy(), p.numpy(), ln.numpy(),
                         ln_in.grad.numpy(), ln_w.grad.numpy(), sm.numpy(),
                         sm_in.grad.numpy()))
        d_in = mg.tensor(x, device="cuda", requires_grad=True)
        d = F.dropout(d_in, 0.25)
        d.sum().backward()
        kept = d.numpy() != 0
        att = F.scaled_dot_product_attention(*(mg.randn(2, 3, 5, 4, device="cuda")
                                               for _ in range(3)), is_causal=True,
                                             dropout_p=0.25)
    assert {"gelu_tanh", "gelu_tanh_grad", "adam", "ln_center_sq", "ln_rstd", "ln_out",
            "ln_grad_t", "ln_grad_x", "softmax_exp", "softmax_div", "dropout",
            "dropout_grad"} <= kernels.worked and not kernels.failed
    assert 0.6 < kept.mean() < 0.9 and np.isfinite(att.numpy()).all()
    np.testing.assert_allclose(d.numpy()[kept], x[kept] / 0.75, rtol=1e-6)
    np.testing.assert_allclose(d_in.grad.numpy(), kept / 0.75, rtol=1e-6)
    for a, b in zip(*outs):
        np.testing.assert_allclose(b, a, rtol=2e-5, atol=2e-5)


def test_cuda_memory_figures_follow_a_real_allocation(cupy):
    """memory_allocated and the peak count a 4 MiB tensor, as torch's would (rounded to
    512 bytes), and the peak stays after it is freed (cuda_memory.py)."""
    mg.cuda.synchronize()
    mg.cuda.reset_peak_memory_stats()
    base = mg.cuda.memory_allocated()
    x = mg.zeros(2 ** 20, device="cuda")                  # 4 MiB of float32
    assert mg.cuda.memory_allocated() - base == 4 * 2 ** 20
    assert mg.cuda.memory_reserved() >= mg.cuda.memory_allocated()
    del x
    assert mg.cuda.memory_allocated() == base
    assert mg.cuda.max_memory_allocated() >= base + 4 * 2 ** 20
    stats = mg.cuda.memory_stats()
    assert stats["allocated_bytes.all.peak"] == mg.cuda.max_memory_allocated()
    assert stats["reserved_bytes.all.peak"] >= stats["reserved_bytes.all.current"]
    mg.cuda.empty_cache()
    assert mg.cuda.memory_reserved() == cupy.get_default_memory_pool().total_bytes()
    free, total = mg.cuda.mem_get_info()
    p = mg.cuda.get_device_properties()
    assert 0 < free <= total == p.total_memory and p.multi_processor_count > 0
    assert mg.cuda.get_device_capability() == (p.major, p.minor) and "MiB" in \
        mg.cuda.memory_summary()


def test_cuda_rng_state_round_trip_and_seed(cupy):
    mg.cuda.manual_seed(11)
    assert mg.cuda.initial_seed() == 11
    state = mg.cuda.get_rng_state()
    a = mg.randn(1000, device="cuda").numpy()
    mg.cuda.set_rng_state(state)
    np.testing.assert_array_equal(mg.randn(1000, device="cuda").numpy(), a)
    mg.cuda.manual_seed(11)
    np.testing.assert_array_equal(mg.randn(1000, device="cuda").numpy(), a)


def test_cuda_events_time_and_streams_run_ops(cupy):
    start, end = mg.cuda.Event(enable_timing=True), mg.cuda.Event(enable_timing=True)
    s = mg.cuda.Stream()
    with mg.cuda.stream(s):
        assert mg.cuda.current_stream() == s
        start.record()
        y = (mg.ones(1000, device="cuda") * 3).sum()
        end.record()
    end.synchronize()
    assert end.query() and start.elapsed_time(end) >= 0 and y.item() == 3000
    assert mg.cuda.current_stream() == mg.cuda.default_stream()


def test_cupy_out_of_memory_is_torchs_error(cupy):
    with pytest.raises(mg.cuda.OutOfMemoryError):
        mg.zeros(2 ** 50, device="cuda")                   # 4 PiB
