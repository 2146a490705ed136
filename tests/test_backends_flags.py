"""mg.backends, as torch.backends: the flags scripts written for PyTorch set (nanoGPT's
`torch.backends.cuda.matmul.allow_tf32 = True`), and torch.nn.attention's sdpa_kernel."""
import copy

import pytest

import minigrad as mg
from minigrad import backend
from minigrad.nn.attention import SDPBackend, sdpa_kernel

import spy_backend

B = mg.backends


@pytest.fixture(autouse=True)
def flag_state(monkeypatch):
    """Each test starts from a precision never set and the default flags, and leaves the
    process as it was."""
    monkeypatch.setattr(backend, "_PRECISION", [None])
    monkeypatch.setattr(backend, "_PRECISION_SET", [False])
    monkeypatch.setattr("minigrad.backends._GLOBAL_FP32", ["none"])
    saved = [(d, dict(d)) for d in (B.cuda._sdp, B.cudnn._flags, B.cuda.matmul._flags)]
    yield
    for d, old in saved:
        d.clear()
        d.update(old)


def test_allow_tf32_is_the_float32_matmul_precision():
    assert B.cuda.matmul.allow_tf32 is False
    B.cuda.matmul.allow_tf32 = True
    assert mg.get_float32_matmul_precision() == "high"
    assert B.cuda.matmul.fp32_precision == "tf32"
    B.cuda.matmul.allow_tf32 = False
    assert mg.get_float32_matmul_precision() == "highest"
    assert B.cuda.matmul.fp32_precision == "ieee"
    with pytest.raises(TypeError, match="allow_tf32 must be a bool, got int"):
        B.cuda.matmul.allow_tf32 = 1


def test_allow_tf32_reaches_a_device_backends_switch(monkeypatch):
    calls = []

    def factory():
        b = spy_backend.make_backend("rec")
        b.set_matmul_precision = calls.append
        return b
    monkeypatch.setitem(backend._FACTORIES, "rec", factory)
    monkeypatch.setattr(backend, "_BACKENDS", dict(backend._BACKENDS))
    mg.zeros(1, device="rec")
    B.cuda.matmul.allow_tf32 = True
    B.cuda.matmul.allow_tf32 = False
    assert calls == ["high", "highest"]


def test_setting_the_precision_shows_on_allow_tf32_as_torchs(torch):
    try:
        for p in ("high", "medium", "highest"):
            torch.set_float32_matmul_precision(p)
            mg.set_float32_matmul_precision(p)
            assert B.cuda.matmul.allow_tf32 == torch.backends.cuda.matmul.allow_tf32
            assert B.cuda.matmul.fp32_precision == torch.backends.cuda.matmul.fp32_precision
    finally:
        torch.set_float32_matmul_precision("highest")


@pytest.mark.parametrize("steps,want", [          # want: what PyTorch 2.13 reads (run)
    (("global tf32", "global none"), "ieee"),         # (PyTorch: "none", in effect ieee)
    (("matmul ieee", "global tf32"), "ieee"),
    (("allow_tf32 True", "global ieee"), "tf32"),
    (("legacy high", "global ieee"), "tf32"),
    (("matmul ieee", "matmul none", "global tf32"), "tf32"),
    (("global tf32", "matmul ieee", "global none", "matmul none"), "ieee")])
def test_the_global_fp32_precision_moves_only_unset_matmuls_as_torchs(steps, want):
    """backends.fp32_precision reaches the matmuls only while their own precision is
    unset ("none"): one set by cuda.matmul's flags or set_float32_matmul_precision stays."""
    for step in steps:
        _mg_step(step)
    assert B.cuda.matmul.fp32_precision == want


def _mg_step(step):
    where, value = step.split()
    if where == "global":
        B.fp32_precision = value
    elif where == "matmul":
        B.cuda.matmul.fp32_precision = value
    elif where == "allow_tf32":
        B.cuda.matmul.allow_tf32 = value == "True"
    else:
        mg.set_float32_matmul_precision(value)


def test_fp32_precision_the_matmul_one_and_the_global_one():
    B.cuda.matmul.fp32_precision = "tf32"
    assert mg.get_float32_matmul_precision() == "high" and B.cuda.matmul.allow_tf32
    B.cuda.matmul.fp32_precision = "ieee"
    assert mg.get_float32_matmul_precision() == "highest"
    B.fp32_precision = "tf32"                     # the matmuls' own setting stays
    assert B.fp32_precision == "tf32" and mg.get_float32_matmul_precision() == "highest"
    B.cuda.matmul.fp32_precision = "none"         # back to following the global
    assert B.cuda.matmul.fp32_precision == "tf32"
    with pytest.raises(ValueError, match="unknown precision 'bf16'; valid: none, ieee, tf32"):
        B.fp32_precision = "bf16"
    with pytest.raises(ValueError, match="unknown precision 'fast'"):
        B.cuda.matmul.fp32_precision = "fast"
    assert B.fp32_precision == "tf32"             # a refused value changes nothing


def test_cudnn_flags_are_recorded_and_read_back():
    assert (B.cudnn.enabled, B.cudnn.allow_tf32, B.cudnn.benchmark,
            B.cudnn.deterministic) == (True, True, False, False)
    B.cudnn.benchmark = True
    B.cudnn.allow_tf32 = False
    assert B.cudnn.benchmark is True and B.cudnn.allow_tf32 is False
    with pytest.raises(TypeError, match="backends.cudnn.benchmark must be a bool, got str"):
        B.cudnn.benchmark = "yes"
    assert copy.deepcopy(B.cudnn).benchmark is True    # a copy is built, not a recursion


def test_cudnn_deterministic_is_apart_from_use_deterministic_algorithms():
    B.cudnn.deterministic = True                  # as torch's: neither sets the other
    assert mg.are_deterministic_algorithms_enabled() is False
    B.cudnn.deterministic = False
    mg.use_deterministic_algorithms(True)
    try:
        assert B.cudnn.deterministic is False
    finally:
        mg.use_deterministic_algorithms(False)


def test_is_available(monkeypatch):
    for up in (True, False):
        monkeypatch.setattr(backend, "cuda_is_available", lambda up=up: up)
        assert B.cudnn.is_available() is up and B.cuda.is_built() is up
    assert not (B.mps.is_available() or B.mkldnn.is_available() or B.openmp.is_available())
    assert B.mps.is_built() is False and B.cudnn.version() is None


@pytest.mark.parametrize("group, name, valid", [
    (B.cuda.matmul, "alow_tf32", "allow_tf32"),
    (B.cudnn, "benchmrk", "benchmark"),
    (B.cuda, "allow_tf32", "matmul's"),
    (B, "alow_tf32", "fp32_precision"),
])
def test_a_misspelt_flag_raises_naming_the_valid_ones(group, name, valid):
    with pytest.raises(AttributeError, match=rf"\.{name} is not a flag; valid: .*{valid}"):
        setattr(group, name, True)
    assert not hasattr(group, name)
    with pytest.raises(AttributeError, match="cuda.matmul has no attribute 'alow_tf32'"):
        B.cuda.matmul.alow_tf32


def test_sdp_switches_are_recorded():
    assert (B.cuda.flash_sdp_enabled() and B.cuda.mem_efficient_sdp_enabled()
            and B.cuda.math_sdp_enabled() and B.cuda.cudnn_sdp_enabled())
    B.cuda.enable_flash_sdp(False)
    B.cuda.enable_cudnn_sdp(False)
    assert not B.cuda.flash_sdp_enabled() and not B.cuda.cudnn_sdp_enabled()
    assert B.cuda.math_sdp_enabled()
    with pytest.raises(TypeError, match="enable_math_sdp's argument must be a bool"):
        B.cuda.enable_math_sdp("no")


def test_sdpa_kernel_enables_the_named_kernels_inside_it_as_torchs(torch):
    TB = torch.nn.attention.SDPBackend
    assert {k: int(v) for k, v in SDPBackend.__members__.items()} == \
        {k: int(v) for k, v in TB.__members__.items()}
    for chosen in ([SDPBackend.MATH], [SDPBackend.FLASH_ATTENTION, SDPBackend.CUDNN_ATTENTION],
                   [SDPBackend.ERROR]):
        theirs = [TB.__members__[b.name] for b in chosen]
        with sdpa_kernel(chosen), torch.nn.attention.sdpa_kernel(theirs):
            for f in ("flash", "mem_efficient", "math", "cudnn"):
                assert (getattr(B.cuda, f"{f}_sdp_enabled")()
                        == getattr(torch.backends.cuda, f"{f}_sdp_enabled")()), (chosen, f)
    assert B.cuda.flash_sdp_enabled() and B.cuda.math_sdp_enabled()   # restored


def test_sdpa_kernel_refuses_what_is_not_a_backend_and_leaves_attention_as_it_was():
    with pytest.raises(TypeError, match=r"SDPBackend or a list of them \(SDPBackend.ERROR.*"
                                        r"got str 'math'"):
        with sdpa_kernel("math"):
            pass
    m = mg.nn.MultiheadAttention(4, 2)          # the module file still holds the layer
    x = mg.randn(3, 1, 4)
    out, _ = m(x, x, x)
    with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
        out2, _ = m(x, x, x)
    assert (out.numpy() == out2.numpy()).all()
