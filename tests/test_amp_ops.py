"""Autocast's result dtypes op by op (minigrad/amp.py follows torch's CUDA lists, in
torch/testing/_internal/autocast_test_lists.py): the float32 list's norms, the products
on the "promote" list, an explicit dtype= kept, and ops on no list left alone. Where
torch's CPU autocast gives the CUDA answer too, the test asks torch; elsewhere it states
the dtype the CUDA list gives."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F

H = mg.float16


def _pair(shape=(3, 4)):
    rng = np.random.default_rng(0)
    return rng.uniform(0.5, 1.5, shape).astype(np.float32)


def test_rms_norm_is_float32():
    x = mg.tensor(_pair()).half()
    with mg.autocast("cpu", dtype=H):
        y = F.rms_norm(x, (4,), mg.ones(4).half())
    assert y.dtype == mg.float32       # "rms_norm" is on torch's CUDA torch_fp32 list
    np.testing.assert_allclose(y.numpy(), F.rms_norm(x.float(), (4,)).numpy(), rtol=1e-6)


@pytest.mark.parametrize("ord", ["fro", "nuc", 2, -2])
def test_matrix_norm_is_float32(ord):
    # linalg_matrix_norm is on torch's CUDA float32 list (fp32_set_opt_dtype), as vector_norm;
    # the singular-value ones were refused before (svdvals takes no float16)
    x = mg.tensor(_pair()).half()
    with mg.autocast("cpu", dtype=H):
        assert mg.linalg.matrix_norm(x, ord).dtype == mg.float32
        assert mg.linalg.norm(x, ord).dtype == mg.float32


@pytest.mark.parametrize("op", ["tensordot", "dot"])
def test_promote_list_keeps_float32(torch, op):
    a, b = _pair((4,)), _pair((4,))
    dims = {"dims": 1} if op == "tensordot" else {}
    with mg.autocast("cpu", dtype=H):
        got = getattr(mg, op)(mg.tensor(a), mg.tensor(b), **dims)
    with torch.autocast("cpu", dtype=torch.float16):
        want = getattr(torch, op)(torch.tensor(a), torch.tensor(b), **dims)
    assert str(got.dtype) == str(want.dtype).removeprefix("torch.")
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=1e-6)


def test_promote_list_mixed_and_inner():
    # torch's CUDA torch_need_autocast_promote list: dot, vdot, tensordot (inner is tensordot
    # there): float16 with float32 computes in float32, float32 alone stays float32
    a, b = mg.tensor(_pair()), mg.tensor(_pair())
    v, w = a[0], b[0]
    with mg.autocast("cpu", dtype=H):
        for got in (mg.tensordot(a.half(), b, ([1], [1])), mg.inner(a, b), mg.inner(a.half(), b),
                    mg.dot(v.half(), w), mg.vdot(v, w), mg.dot(v, w)):
            assert got.dtype == mg.float32
        assert mg.tensordot(a.half(), b.half(), ([1], [1])).dtype == H
        assert (a @ b.T).dtype == H             # matmul itself stays on the float16 list


_EXPLICIT = {
    "sum": (lambda m, x: m.sum(x, dtype=m.float16)),
    "sum_method": (lambda m, x: x.sum(1, dtype=m.float16)),
    "softmax": (lambda m, x: m.softmax(x, 1, dtype=m.float16)),
    "softmax_method": (lambda m, x: x.softmax(1, dtype=m.float16)),
    "log_softmax": (lambda m, x: m.log_softmax(x, 1, dtype=m.float16)),
    "cumsum": (lambda m, x: m.cumsum(x, 0, dtype=m.float16)),
    "cumprod": (lambda m, x: m.cumprod(x, 0, dtype=m.float16)),
    "prod": (lambda m, x: m.prod(x, dtype=m.float16)),
}


@pytest.mark.parametrize("name", sorted(_EXPLICIT))
def test_explicit_dtype_wins(torch, name):
    x = _pair()
    with mg.autocast("cpu", dtype=H):
        got = _EXPLICIT[name](mg, mg.tensor(x))
    with torch.autocast("cpu", dtype=torch.float16):
        want = _EXPLICIT[name](torch, torch.tensor(x))
    assert got.dtype == H and want.dtype == torch.float16
    np.testing.assert_allclose(got.numpy(), want.numpy(), rtol=2e-3)


def test_explicit_dtype_wins_for_norms_and_nansum():
    # torch's CUDA list sets float32 only where no dtype is given (fp32_set_opt_dtype)
    x = mg.tensor(_pair()).half()
    with mg.autocast("cpu", dtype=H):
        assert mg.linalg.vector_norm(x, dtype=H).dtype == H
        assert mg.linalg.matrix_norm(x, 1, dtype=H).dtype == H
        assert x.norm(dtype=H).dtype == H
        assert x.float().nansum(dtype=H).dtype == H
        assert mg.linalg.vector_norm(x).dtype == mg.float32     # none given: float32


def test_trace_keeps_float16():
    # trace is on none of torch's CUDA lists: float16 in, float16 out (torch's CPU autocast
    # differs here, giving float32)
    x = mg.tensor(_pair((3, 3)), requires_grad=True)
    with mg.autocast("cpu", dtype=H):
        t = x.half().trace()
        assert t.dtype == H
        assert x.half().sum().dtype == mg.float32                # sum alone: float32 list
    t.backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.eye(3, dtype=np.float32))
