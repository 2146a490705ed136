"""Leftovers of the Tensor-method hunt against torch: 0-d integer tensors where an int goes
(topk's k, chunk's chunks, split's sizes, roll's shifts, narrow's start/length, repeat's
and repeat_interleave's counts), memory_format= on the dtype casts, Module.to's
non_blocking, and Tensor.norm's p='nuc' (and 'fro' over a pair of dims)."""
import inspect
import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

CASTS = {"float": "float32", "double": "float64", "half": "float16", "int": "int32",
         "long": "int64", "bool": "bool", "short": "int16", "char": "int8", "byte": "uint8"}


def _n(v, lib=mg):
    return lib.tensor(v)                       # 0-d int64 (or bool/float for the refusals)


# ---- 0-d integer tensors as ints ---------------------------------------------------------
def test_0d_integer_tensor_as_int_closed_form():
    x = mg.arange(5.)
    assert x.topk(_n(2)).values.tolist() == [4., 3.]
    assert mg.topk(x, _n(2), largest=False).indices.tolist() == [0, 1]
    assert x.kthvalue(_n(2)).values.item() == 1.
    assert [c.tolist() for c in x.chunk(_n(2))] == [[0., 1., 2.], [3., 4.]]
    assert [c.tolist() for c in x.split(_n(2))] == [[0., 1.], [2., 3.], [4.]]
    assert [c.tolist() for c in x.split([_n(2), _n(3)])] == [[0., 1.], [2., 3., 4.]]
    assert [c.tolist() for c in mg.split(x, [_n(1), 4])] == [[0.], [1., 2., 3., 4.]]
    assert x.roll(_n(2)).tolist() == [3., 4., 0., 1., 2.]
    m = mg.arange(6.).view(2, 3)
    assert m.roll((_n(1), _n(1)), (_n(0), 1)).tolist() == [[5., 3., 4.], [2., 0., 1.]]
    assert x.narrow(0, _n(1), _n(2)).tolist() == [1., 2.]
    assert x.narrow(_n(0), _n(-2), 2).tolist() == [3., 4.]
    assert mg.arange(2.).repeat_interleave(_n(2)).tolist() == [0., 0., 1., 1.]
    assert mg.arange(2.).repeat(_n(2), _n(1)).tolist() == [[0., 1.], [0., 1.]]
    assert mg.arange(2.).repeat((_n(2),)).tolist() == [0., 1., 0., 1.]
    assert x.topk(np.int64(1)).values.tolist() == [4.]        # a NumPy integer too


@pytest.mark.parametrize("bad", [mg.tensor(True), mg.tensor(2.)], ids=["bool", "float"])
def test_bool_and_float_0d_tensors_stay_refused(bad):
    x = mg.arange(5.)
    for call in (lambda: x.topk(bad), lambda: x.kthvalue(bad), lambda: x.chunk(bad),
                 lambda: x.split(bad), lambda: x.split([bad, 3]), lambda: x.roll(bad),
                 lambda: x.narrow(0, bad, 2), lambda: x.narrow(0, 1, bad),
                 lambda: x.repeat(bad), lambda: x.repeat_interleave(bad)):
        with pytest.raises((TypeError, ValueError)):
            call()


def test_0d_integer_tensor_as_int_as_torch(torch):
    def run(L):
        k, x, m = L.tensor(2), L.arange(5.), L.arange(12.).view(3, 4)
        return [x.topk(k).values, x.topk(k).indices, x.kthvalue(k).values, *x.chunk(k),
                *m.split(k, 1), *x.split([k, L.tensor(3)]), x.roll(k), m.roll((k, L.tensor(1)),
                                                                              (0, 1)),
                x.narrow(0, L.tensor(1), k), x.repeat_interleave(k), m.repeat(k, L.tensor(1))]
    for a, b in zip(run(mg), run(torch)):
        assert a.shape == tuple(b.shape) and a.tolist() == b.tolist()
        assert str(a.dtype) == str(b.dtype).replace("torch.", "")


# ---- memory_format= on the dtype casts -----------------------------------------------------
@pytest.mark.parametrize("cast", sorted(CASTS))
def test_casts_take_memory_format(cast):
    x = mg.arange(120.).view(2, 3, 4, 5)
    y = getattr(x, cast)(memory_format=mg.channels_last)
    assert str(y.dtype) == CASTS[cast] and y.stride() == (60, 1, 15, 3)
    assert np.array_equal(y.numpy(), x.numpy().astype(CASTS[cast]))
    xc = x.contiguous(memory_format=mg.channels_last)
    assert getattr(xc, cast)().stride() == (60, 1, 15, 3)            # preserve_format
    assert getattr(xc, cast)(memory_format=mg.contiguous_format).stride() == (60, 20, 5, 1)
    with pytest.raises(RuntimeError, match="rank 4"):
        getattr(mg.ones(3), cast)(memory_format=mg.channels_last)
    with pytest.raises(TypeError, match="memory_format"):
        getattr(x, cast)(memory_format="channels_last")
    with pytest.raises(TypeError):
        getattr(x, cast)(mg.channels_last)              # keyword only, as torch's


def test_cast_to_same_dtype_is_self_unless_the_layout_changes():
    x = mg.randn(2, 3, 4, 5, requires_grad=True)
    assert x.float() is x and x.float(memory_format=mg.contiguous_format) is x
    y = x.float(memory_format=mg.channels_last)
    assert y is not x and y.stride() == (60, 1, 15, 3)
    y.double(memory_format=mg.channels_last).sum().backward()
    assert x.grad.dtype == mg.float32 and np.array_equal(x.grad.numpy(), np.ones((2, 3, 4, 5)))


@pytest.mark.parametrize("cast", sorted(CASTS))
def test_casts_take_memory_format_as_torch(torch, cast):
    def run(L, fmt):
        x = L.arange(120.).view(2, 3, 4, 5)
        return [getattr(x, cast)(memory_format=getattr(L, fmt)),
                getattr(x.contiguous(memory_format=L.channels_last), cast)(
                    memory_format=getattr(L, fmt))]
    for fmt in ("channels_last", "contiguous_format", "preserve_format"):
        for a, b in zip(run(mg, fmt), run(torch, fmt)):
            assert a.stride() == b.stride() and str(a.dtype) == str(b.dtype)[6:]
            assert np.array_equal(a.numpy(), b.numpy())


# ---- Module.to(non_blocking=) --------------------------------------------------------------
def test_module_to_takes_non_blocking():
    m = nn.Linear(2, 2)
    assert m.to("cpu", non_blocking=True) is m and m.weight.dtype == mg.float32
    assert m.to("cpu", mg.float64, True).weight.dtype == mg.float64
    assert m.to(mg.float32, True).weight.dtype == mg.float32          # shifted, as torch's
    assert m.to(mg.zeros(1, dtype=mg.float64), True).weight.dtype == mg.float64
    assert m.to(device="cpu", dtype=mg.float32, non_blocking=False).weight.dtype == mg.float32
    assert m.to(non_blocking=True, memory_format=mg.channels_last) is m
    with pytest.raises(TypeError, match="non_blocking must be a bool"):
        m.to("cpu", non_blocking=3)
    with pytest.raises(TypeError):
        m.to("cpu", copy=True)                          # torch's Module.to takes no copy
    assert m.cpu() is m


def test_module_to_cuda_cpu_signatures_as_torch(torch):
    for name in ("cuda", "cpu"):
        assert list(inspect.signature(getattr(nn.Module, name)).parameters) == \
            list(inspect.signature(getattr(torch.nn.Module, name)).parameters)
    for L in (mg, torch):                 # Module.to's accepted forms, as torch's _parse_to
        m = L.nn.Linear(2, 2)
        m.to("cpu", L.float64, True)
        m.to(L.float32, non_blocking=True)
        assert m.weight.dtype == L.float32


# ---- Tensor.norm: 'nuc', and 'fro' over a pair of dims -------------------------------------
def test_norm_nuc_and_fro_closed_form():
    assert mg.tensor([[3., 0.], [0., -4.]]).norm(p="nuc").item() == pytest.approx(7.)
    assert mg.tensor([[1., 2.], [2., 4.]]).norm("nuc").item() == pytest.approx(5.)   # rank 1
    b = mg.stack([mg.eye(3), 2 * mg.eye(3)])                   # dims (1, 2): each matrix
    n = b.norm(p="nuc", dim=(1, 2), keepdim=True)
    assert n.shape == (2, 1, 1) and n.reshape(-1).tolist() == pytest.approx([3., 6.])
    # dims (0, 2): row r of both, [e_r; 2 e_r], rank 1 with singular value √(1 + 4)
    assert mg.norm(b, "nuc", (0, 2)).tolist() == pytest.approx([math.sqrt(5.)] * 3)
    assert mg.zeros(0, 3).norm(p="nuc").item() == 0.
    assert mg.eye(2).norm(p="nuc", dtype=mg.float64).dtype == mg.float64
    x = mg.arange(24.).view(2, 3, 4)
    fro = x.norm(p="fro", dim=(0, 2))
    assert fro.tolist() == pytest.approx([math.sqrt(sum(v * v for v in range(24)
                                                        if v // 4 % 3 == r)) for r in range(3)])
    for bad, err in [(lambda: x.norm(p="nuc"), "2-D"), (lambda: mg.ones(3).norm(p="nuc"),
                                                       "at least 2 dims"),
                     (lambda: x.norm(p="nuc", dim=1), "pair"),
                     (lambda: x.norm(p="nuc", dim=(1, 1)), "twice"),
                     (lambda: x.norm(p="fro", dim=(0, 1, 2)), "at most 2")]:
        with pytest.raises(ValueError, match=err):
            bad()
    with pytest.raises(TypeError, match="floating"):
        mg.eye(2, dtype=mg.int64).norm(p="nuc")


def test_norm_nuc_gradcheck():
    g = mg.Generator().manual_seed(0)
    a = mg.randn(3, 4, generator=g, dtype=mg.float64, requires_grad=True)
    b = mg.randn(2, 3, 4, generator=g, dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(lambda t: t.norm(p="nuc"), [a])
    assert mg.gradcheck(lambda t: t.norm(p="nuc", dim=(0, 2), keepdim=True), [b])
    assert mg.gradcheck(lambda t: t.norm(p="fro", dim=(-1, 0)), [b])


def test_norm_nuc_and_fro_as_torch(torch):
    v = np.random.default_rng(0).standard_normal((2, 3, 4))
    for p, dim, keepdim, dtype in [("nuc", None, False, None), ("nuc", (1, 2), False, None),
                                   ("nuc", [2, 0], True, None), ("nuc", None, True, "float64"),
                                   ("fro", (0, 2), False, None), ("fro", (-1, -2), True, None),
                                   ("fro", None, False, "float64")]:
        def run(L):
            x = L.tensor(v[0] if dim is None and p == "nuc" else v, dtype=L.float32,
                         requires_grad=True)
            out = x.norm(p=p, dim=dim, keepdim=keepdim,
                         dtype=None if dtype is None else getattr(L, dtype))
            out.sum().backward()
            return out, x.grad
        (a, ga), (b, gb) = run(mg), run(torch)
        assert a.shape == tuple(b.shape) and str(a.dtype) == str(b.dtype)[6:]
        np.testing.assert_allclose(a.detach().numpy(), b.detach().numpy(), rtol=1e-5)
        np.testing.assert_allclose(ga.numpy(), gb.numpy(), rtol=1e-4, atol=1e-6)
