"""The factories beside zeros/ones/randn: eye, linspace, randperm, empty(_like), full_like,
rand_like, from_numpy, as_tensor, is_tensor, numel. Each on every device, the spy device too
(so none calls NumPy on device data), by hand or NumPy, and against PyTorch where present."""

import math

import numpy as np
import pytest

import minigrad as mg
from minigrad import nn

import spy_backend
from conftest import DEVICES


@pytest.fixture(autouse=True)
def spy():
    spy_backend.register()
    yield
    spy_backend.unregister()


@pytest.fixture(params=DEVICES + ["spy"])
def dev(request):
    return request.param


def _check(t, shape, dtype, device, requires_grad=False):
    assert t.shape == shape and t.dtype == np.dtype(dtype) and t.device == device
    assert t.requires_grad is requires_grad and t.is_leaf


# ---- eye ---------------------------------------------------------------------------------
@pytest.mark.parametrize("n, m", [(3, None), (2, 3), (3, 2), (0, None), (0, 4), (1, 1)])
def test_eye_values_shapes_and_dtype(dev, n, m):
    t = mg.eye(n, m, device=dev)
    _check(t, (n, n if m is None else m), "float32", dev)
    np.testing.assert_array_equal(t.numpy(), np.eye(n, m))


def test_eye_dtypes_and_requires_grad(dev):
    _check(mg.eye(2, dtype="float64", device=dev, requires_grad=True), (2, 2), "float64",
           dev, True)
    np.testing.assert_array_equal(mg.eye(2, 3, dtype=mg.bool, device=dev).numpy(),
                                  [[True, False, False], [False, True, False]])
    assert mg.eye(2, dtype="int64", device=dev).tolist() == [[1, 0], [0, 1]]
    with pytest.raises(RuntimeError, match="floating"):
        mg.eye(2, dtype="int64", requires_grad=True)


def test_eye_errors():
    with pytest.raises(ValueError, match=r"eye: n must be >= 0, got -1"):
        mg.eye(-1)
    with pytest.raises(ValueError, match=r"eye: m must be >= 0, got -2"):
        mg.eye(2, -2)
    for bad in (2.5, True, "3", None):
        with pytest.raises(TypeError, match="eye: n must be an int"):
            mg.eye(bad)
    with pytest.raises(TypeError, match="eye: m must be an int"):
        mg.eye(2, 1.0)
    assert mg.eye(np.int64(2)).shape == (2, 2)          # NumPy ints are ints


# ---- arange ------------------------------------------------------------------------------
def test_arange_float_values_are_start_plus_i_steps_rounded_once(dev):
    """Value i is start + i·step rounded to the dtype once: NumPy's float32 arange steps in
    float32 and drifted (arange(0, 10, 0.1)[-1] was 9.900001); the length is PyTorch's and
    NumPy's, ceil((end - start)/step)."""
    t = mg.arange(0, 10, 0.1, device=dev)
    _check(t, (100,), "float32", dev)
    assert t.tolist() == [float(np.float32(i / 10)) for i in range(100)]
    assert mg.arange(5, 0, -0.7, device=dev).tolist()[-1] == float(np.float32(5 - 7 * 0.7))
    assert mg.arange(1, 2.2, 0.3, dtype="float64", device=dev).tolist() == \
        [1 + i * 0.3 for i in range(5)]
    _check(mg.arange(2.0, 2.0, device=dev), (0,), "float32", dev)    # empty
    with pytest.raises(ValueError, match=r"a step of 1 never gets from 2.0 to 1.0"):
        mg.arange(2.0, 1.0, device=dev)                  # an error, as PyTorch's
    for end in (float("inf"), float("nan")):
        for dtype in (None, "int64"):
            with pytest.raises(ValueError, match=r"arange: start, end and step must be finite"):
                mg.arange(0, end, 0.5, dtype=dtype, device=dev)


def test_arange_into_an_integer_dtype_truncates_each_number_first_as_torch(dev):
    """PyTorch casts start, end and step to an integer dtype before counting (NumPy counted
    with the floats and stepped oddly: arange(-2.5, 2, 1) gave -2, -1, 0, 0, 1); a NumPy
    integer is an integer (int64), not a float."""
    assert mg.arange(-2.5, 2, 1, dtype="int64", device=dev).tolist() == [-2, -1, 0, 1]
    assert mg.arange(0.5, 5, 1.5, dtype="int64", device=dev).tolist() == [0, 1, 2, 3, 4]
    assert mg.arange(5.9, 0, -1.2, dtype="int64", device=dev).tolist() == [5, 4, 3, 2, 1]
    with pytest.raises(ValueError, match="the step truncates to 0 in int64"):
        mg.arange(0, 2.5, 0.5, dtype="int64", device=dev)
    _check(mg.arange(np.int64(3), device=dev), (3,), "int64", dev)


# ---- linspace ----------------------------------------------------------------------------
def test_linspace_values_by_hand(dev):
    t = mg.linspace(0, 1, 5, device=dev)
    _check(t, (5,), "float32", dev)                      # float32 even for int ends
    assert t.tolist() == [0.0, 0.25, 0.5, 0.75, 1.0]
    assert mg.linspace(1, 0, 3, device=dev).tolist() == [1.0, 0.5, 0.0]
    assert mg.linspace(2.5, 9, 1, device=dev).tolist() == [2.5]   # steps=1: [start]
    _check(mg.linspace(0, 1, 0, device=dev), (0,), "float32", dev)
    assert mg.linspace(0, 10, 4, dtype="int64", device=dev).tolist() == [0, 3, 6, 10]
    _check(mg.linspace(-1, 1, 3, dtype="float64", device=dev, requires_grad=True), (3,),
           "float64", dev, True)


@pytest.mark.parametrize("dtype", ["float16", "float32", "float64"])
def test_linspace_ends_exact_and_close_to_numpy(dev, dtype):
    t = mg.linspace(-3.3, 7.1, 1001, dtype=dtype, device=dev).numpy()
    want = np.linspace(-3.3, 7.1, 1001)
    assert t.dtype == np.dtype(dtype)
    assert t[0] == np.dtype(dtype).type(-3.3) and t[-1] == np.dtype(dtype).type(7.1)
    np.testing.assert_allclose(t, want, rtol=0, atol={"float16": 8e-3, "float32": 2e-6,
                                                      "float64": 1e-14}[dtype])


def test_linspace_takes_0d_tensors_and_numpy_scalars():
    assert mg.linspace(mg.tensor(0.0), np.float64(2), 3).tolist() == [0.0, 1.0, 2.0]


def test_linspace_errors():
    with pytest.raises(ValueError, match="linspace: steps must be >= 0, got -1"):
        mg.linspace(0, 1, -1)
    with pytest.raises(TypeError, match="linspace: steps must be an int"):
        mg.linspace(0, 1, 2.5)
    with pytest.raises(TypeError, match="linspace: start and end must be numbers"):
        mg.linspace("0", 1, 3)
    with pytest.raises(TypeError, match="linspace: start and end must be numbers"):
        mg.linspace(mg.tensor([0.0, 1.0]), 1, 3)
    with pytest.raises(TypeError, match="linspace: needs a numeric dtype"):
        mg.linspace(0, 1, 3, dtype="bool")


_LINSPACE_CASES = [(0, 1, 5), (-3.3, 7.1, 11), (1, 0, 6), (0.1, 0.7, 37), (2.7, 9, 1),
                   (5, 5, 3), (0, 1, 0), (0, 1, 2), (933, -115, 11), (-2.47, 3.53, 101),
                   (-99.95, -20.31, 32), (0.83, 43.94, 101), (1e-3, 5e4, 20001),
                   (25453.3, 59999.9, 40000), (-7.5, 3.25, 4097), (65, -16, 11)]


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32"])
def test_linspace_matches_torch_bit_for_bit(torch, dtype):
    # PyTorch rounds start + step*i once (a fused multiply-add): two roundings were 1 ulp
    # off in about one value in ten, e.g. linspace(933, -115, 11)[7] 199.40002, not 199.40001
    for start, end, steps in _LINSPACE_CASES:
        if dtype.startswith("int") and steps > 1000:
            continue
        got = mg.linspace(start, end, steps, dtype=dtype).numpy()
        want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
        assert got.dtype == want.dtype and got.shape == want.shape
        assert got.tobytes() == want.tobytes(), (start, end, steps)
    assert mg.linspace(0, 1, 3).dtype == torch.linspace(0, 1, 3).numpy().dtype


def test_linspace_random_ends_match_torch_bit_for_bit(torch):
    rng = np.random.default_rng(0)
    for dtype in ["float32", "float64"]:
        for start, end in rng.uniform(-100, 100, (40, 2)):
            steps = int(rng.integers(2, 300))
            got = mg.linspace(start, end, steps, dtype=dtype).numpy()
            want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
            assert got.tobytes() == want.tobytes(), (start, end, steps, dtype)


def test_linspace_fma_is_correctly_rounded():
    """linspace's emulated fused multiply-add rounds a·b + c once: checked against exact
    rationals (no PyTorch needed)."""
    from fractions import Fraction
    from minigrad.linspace_rule import fma
    rng = np.random.default_rng(1)
    for dtype in (np.float32, np.float64):
        a, b, c = (rng.uniform(-50, 50, 300).astype(dtype) for _ in range(3))
        b = np.round(b * 40).astype(dtype)                     # linspace's b: an index
        got = fma(np, a, b, c)
        for x, y, z, r in zip(a, b, c, got):
            exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
            lo, hi = np.nextafter(r, dtype(-np.inf)), np.nextafter(r, dtype(np.inf))
            err = abs(Fraction(float(r)) - exact)
            assert err <= abs(Fraction(float(lo)) - exact), (x, y, z)
            assert err <= abs(Fraction(float(hi)) - exact), (x, y, z)
    # ties go to even
    assert fma(np, np.float32([1.0]), np.float32([1.0]), np.float32([2.0 ** -24]))[0] == 1.0
    assert fma(np, np.float32([1.0]), np.float32([1.0]), np.float32([3 * 2.0 ** -24]))[0] == \
        np.float32(1 + 2.0 ** -22)


def test_linspace_fma_near_the_largest_floats_is_correctly_rounded():
    # Dekker's split overflowed past max/4097 and the plain sum (two roundings) stood in
    from fractions import Fraction
    from minigrad.linspace_rule import fma
    for dtype, a, c in ((np.float32, -2.125e37, 3.4e38), (np.float64, -1.1e307, 1.7e308)):
        a, b, c = dtype([a] * 6), np.arange(6, dtype=dtype), dtype([c] * 6)
        for x, y, z, r in zip(a, b, c, fma(np, a, b, c)):
            exact = Fraction(float(x)) * Fraction(float(y)) + Fraction(float(z))
            assert r == dtype(float(exact)), (x, y, z)   # float(): one rounding, to float64
    # linspace(0, 3.4e38, 17)[11] was 2.3374998e38; torch's and the exact value 2.3375e38
    assert mg.linspace(0, 3.4e38, 17).numpy()[11] == np.float32(2.3375e38)


def test_linspace_signed_zeros_and_a_large_int64_start():
    # -0.0 came back +0.0 (torch: -0.0), and steps=1 took an int64 start through a float64
    assert np.signbit(mg.linspace(-0.0, -0.0, 3, dtype="float64").numpy()).tolist() == \
        [False, True, True]                                # torch's [0., -0., -0.]
    assert np.signbit(mg.linspace(-1, -0.0, 3).numpy()[-1])
    assert mg.linspace(2 ** 53 + 1, 0, 1, dtype="int64").tolist() == [2 ** 53 + 1]


def test_linspace_ends_the_dtype_cannot_hold_are_refused():
    # float16/float32 gave NaNs, integer dtypes NumPy's bare OverflowError
    for start, end, steps, dtype in ((0, 70000, 3, "float16"), (0, 1e39, 2, "float32"),
                                     (300, 0, 1, "int8"), (0, math.nan, 2, "int64"),
                                     (0, -7.5, 3, "uint8")):
        with pytest.raises(ValueError, match=f"linspace: .* cannot be converted to {dtype} "
                                             f"without overflow"):
            mg.linspace(start, end, steps, dtype=dtype)
    with pytest.raises(ValueError, match="logspace: end=inf cannot be converted to int64"):
        mg.logspace(0, math.inf, 3, dtype="int64")
    # as PyTorch: steps=0 checks nothing, steps=1 only start (a half's start not at all),
    # inf fits a float dtype, and uint8 takes whole negatives wrapped
    assert mg.linspace(0, 1e39, 0, dtype="int8").tolist() == []
    assert mg.linspace(1, 1e39, 1, dtype="float32").tolist() == [1.0]
    assert mg.linspace(1e5, 0, 1, dtype="float16").tolist() == [math.inf]
    assert np.isnan(mg.linspace(0, math.inf, 2).numpy()).all()     # torch's [nan, nan]
    assert mg.linspace(0, -1, 3, dtype="uint8").tolist() == [0, 127, 255]


def test_linspace_extreme_ends_match_torch_bit_for_bit(torch):
    f32 = float(np.finfo(np.float32).max)
    for start, end, steps, dtype in ((0, 3.4e38, 17, "float32"), (1, -f32, 17, "float32"),
                                     (-1e308, 1.7e308, 9, "float64"), (-1, -5e-324, 5, "float32"),
                                     (0, -255, 4, "uint8"), (-3, -120, 7, "int8"),
                                     (1e-320, -1e-320, 6, "float64"), (0, 0, 3, "float16")):
        got = mg.linspace(start, end, steps, dtype=dtype).numpy()
        want = torch.linspace(start, end, steps, dtype=getattr(torch, dtype)).numpy()
        assert got.tobytes() == want.tobytes(), (start, end, steps, dtype)


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16", "int64", "int32"])
def test_logspace_matches_torch_bit_for_bit(torch, dtype):
    # PyTorch's exponents are float64 sums start + step*i (start cast to the dtype first);
    # float32's came out of a float64 linspace of the uncast ends, a few ulp off
    rng = np.random.default_rng(2)
    for start, end in rng.uniform(0 if dtype.startswith("int") else -4, 4, (25, 2)):
        for steps, base in [(int(rng.integers(2, 120)), float(rng.choice([10, 2, 0.5, 7.3]))),
                            (1, 2.0)]:
            got = mg.logspace(start, end, steps, base, dtype=dtype).numpy()
            want = torch.logspace(start, end, steps, base, dtype=getattr(torch, dtype))
            assert got.tobytes() == want.numpy().tobytes(), (start, end, steps, base)


def test_histogram_of_points_on_the_edges_matches_torch(torch):
    # points exactly on inner edges landed a bin off when an edge was 1 ulp from torch's
    rng = np.random.default_rng(0)
    for _ in range(20):
        lo, hi = sorted(rng.uniform(-10, 10, 2))
        nbins = int(rng.integers(3, 60))
        edges = torch.linspace(lo, hi, nbins + 1).numpy()
        x = np.concatenate([edges, rng.choice(edges, 100),
                            rng.uniform(lo, hi, 50)]).astype(np.float32)
        got = mg.histogram(mg.tensor(x), nbins, range=(float(lo), float(hi)))
        want = torch.histogram(torch.tensor(x), nbins, range=(float(lo), float(hi)))
        assert got.bin_edges.numpy().tobytes() == want.bin_edges.numpy().tobytes()
        np.testing.assert_array_equal(got.hist.numpy(), want.hist.numpy())
        pts = x[:len(x) - len(x) % 2].reshape(-1, 2)
        got = mg.histogramdd(mg.tensor(pts), [nbins, 5], range=[lo, hi, lo, hi])
        want = torch.histogramdd(torch.tensor(pts), [nbins, 5], range=[lo, hi, lo, hi])
        np.testing.assert_array_equal(got.hist.numpy(), want.hist.numpy())


# ---- randperm ----------------------------------------------------------------------------
def test_randperm_is_a_permutation(dev):
    t = mg.randperm(50, device=dev)
    _check(t, (50,), "int64", dev)
    assert sorted(t.tolist()) == list(range(50)) and t.tolist() != list(range(50))
    _check(mg.randperm(0, device=dev), (0,), "int64", dev)
    f = mg.randperm(6, dtype="float32", device=dev, requires_grad=True)
    _check(f, (6,), "float32", dev, True)
    assert sorted(f.tolist()) == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0]
    _check(mg.randperm(3, dtype=None), (3,), "int64", "cpu")     # None: still int64


def test_randperm_reproducible_under_manual_seed():
    mg.manual_seed(7)
    a = mg.randperm(20).tolist()
    mg.manual_seed(7)
    assert mg.randperm(20).tolist() == a
    assert mg.randperm(20).tolist() != a                 # the generator moved on
    mg.manual_seed(7)                                    # the spy device draws as NumPy
    assert mg.randperm(20, device="spy").tolist() == a


def test_randperm_is_uniform_enough():
    mg.manual_seed(0)
    counts = np.zeros((3, 3))
    for _ in range(600):
        counts[np.arange(3), mg.randperm(3).numpy()] += 1
    assert np.all(np.abs(counts - 200) < 50)             # each value at each place ~1/3


def test_randperm_errors():
    with pytest.raises(ValueError, match="randperm: n must be >= 0, got -1"):
        mg.randperm(-1)
    with pytest.raises(TypeError, match="randperm: n must be an int, got float"):
        mg.randperm(3.0)
    with pytest.raises(TypeError, match="randperm: needs a numeric dtype"):
        mg.randperm(3, dtype="bool")
    with pytest.raises(RuntimeError, match="floating"):
        mg.randperm(3, requires_grad=True)               # int64 cannot require grad


# ---- empty, empty_like, full_like, rand_like ---------------------------------------------
def test_empty_and_empty_like(dev):
    for shape_args, shape in [((2, 3), (2, 3)), (((2, 3),), (2, 3)), (([],), ()), ((0,), (0,))]:
        t = mg.empty(*shape_args, device=dev)
        _check(t, shape, "float32", dev)
        assert not t.numpy().any()                       # zeros here (documented)
    _check(mg.empty(2, dtype="int64", device=dev), (2,), "int64", dev)
    _check(mg.empty(2, device=dev, requires_grad=True), (2,), "float32", dev, True)
    x = mg.ones(4, 1, dtype="float64", device=dev)
    _check(mg.empty_like(x), (4, 1), "float64", dev)
    _check(mg.empty_like(x, dtype="float32", device="cpu", requires_grad=True), (4, 1),
           "float32", "cpu", True)
    with pytest.raises(ValueError, match="negative dimension"):
        mg.empty(2, -1)


def test_full_like(dev):
    x = mg.zeros(2, 3, dtype="float64", device=dev)
    t = mg.full_like(x, 7)
    _check(t, (2, 3), "float64", dev)                    # x's dtype, not the value's kind
    assert t.tolist() == [[7.0] * 3] * 2
    i = mg.full_like(mg.zeros(2, dtype="int64", device=dev), 2.7)
    _check(i, (2,), "int64", dev)
    assert i.tolist() == [2, 2]                          # truncated, as PyTorch
    r = mg.full_like(x, 0.5, dtype="float32", device="cpu", requires_grad=True)
    _check(r, (2, 3), "float32", "cpu", True)
    assert mg.full_like(x, True, dtype="bool").tolist() == [[True] * 3] * 2


def test_rand_like(dev):
    x = mg.zeros(200, dtype="float64", device=dev)
    t = mg.rand_like(x)
    _check(t, (200,), "float64", dev)
    v = t.numpy()
    assert v.min() >= 0 and v.max() < 1 and v.std() > 0.2
    _check(mg.rand_like(x, dtype="float32", requires_grad=True), (200,), "float32", dev,
           True)
    mg.manual_seed(3)
    a = mg.rand_like(x).numpy()
    mg.manual_seed(3)
    np.testing.assert_array_equal(mg.rand_like(x).numpy(), a)
    with pytest.raises(TypeError, match="rand: needs a floating dtype"):
        mg.rand_like(mg.zeros(2, dtype="int64"))


def test_like_functions_match_torch():
    torch = pytest.importorskip("torch")
    for dtype in ["float32", "float64", "int64"]:
        x, tx = mg.zeros(2, 3, dtype=dtype), torch.zeros(2, 3, dtype=getattr(torch, dtype))
        for fill in [2.7, 3, True]:
            np.testing.assert_array_equal(mg.full_like(x, fill).numpy(),
                                          torch.full_like(tx, fill).numpy())
        assert mg.empty_like(x).dtype == torch.empty_like(tx).numpy().dtype
    assert mg.eye(3, 2).numpy().tolist() == torch.eye(3, 2).tolist()
    assert mg.eye(3).dtype == torch.eye(3).numpy().dtype
    assert mg.randperm(4).dtype == torch.randperm(4).numpy().dtype
    assert mg.empty(2, 3).shape == tuple(torch.empty(2, 3).shape)


# ---- from_numpy, as_tensor, is_tensor, numel ---------------------------------------------
@pytest.mark.parametrize("dtype", ["float16", "float32", "float64", "int32", "int64", "uint8",
                                   "bool"])
def test_from_numpy_keeps_dtype(dtype):
    a = np.arange(6).reshape(2, 3).astype(dtype)
    t = mg.from_numpy(a)
    _check(t, (2, 3), dtype, "cpu")
    np.testing.assert_array_equal(t.numpy(), a)


def test_from_numpy_shares_memory_both_ways():
    a = np.zeros(4)
    t = mg.from_numpy(a)
    a[1] = 5.0                                           # the array's write: seen by t
    assert t.tolist() == [0.0, 5.0, 0.0, 0.0]
    t[2] = 7.0                                           # the tensor's write: seen by a
    assert a.tolist() == [0.0, 5.0, 7.0, 0.0]
    t.zero_()
    assert not a.any()
    s = np.float32(1) * np.ones((3, 4), np.float32)[:, ::2]   # a strided view shares too
    mg.from_numpy(s)[0, 0] = 9
    assert s[0, 0] == 9
    z = np.array(3.0)                                    # 0-d
    mg.from_numpy(z).zero_()
    assert z == 0


def test_from_numpy_refuses_other_input():
    for bad, name in [([1.0, 2.0], "list"), (3.0, "float"), (mg.zeros(2), "Tensor")]:
        with pytest.raises(TypeError, match=f"from_numpy: expected a numpy.ndarray, got {name}"):
            mg.from_numpy(bad)
    with pytest.raises(TypeError, match="from_numpy: cannot make a tensor of dtype object"):
        mg.from_numpy(np.array([1, "a"], dtype=object))


def test_as_tensor_copies_only_when_it_must():
    x = mg.ones(3, requires_grad=True)
    assert mg.as_tensor(x) is x and mg.as_tensor(x, dtype="float32", device="cpu") is x
    y = mg.as_tensor(x, dtype="float64")                 # converted, still differentiable
    assert y.dtype == np.float64 and y.requires_grad and not y.is_leaf
    y.sum().backward()
    assert x.grad.tolist() == [1.0, 1.0, 1.0]

    a = np.arange(3.0)
    shared = mg.as_tensor(a)                             # same dtype, same device: shared
    a[0] = 9
    assert shared.dtype == np.float64 and shared.tolist() == [9.0, 1.0, 2.0]
    shared[1] = 8
    assert a[1] == 8
    copied = mg.as_tensor(a, dtype="float32")            # another dtype: a copy
    a[2] = -1
    assert copied.tolist() == [9.0, 8.0, 2.0]

    assert mg.as_tensor([1, 2]).dtype == np.int64
    assert mg.as_tensor([1.0, 2]).dtype == np.float32
    assert mg.as_tensor(3).shape == () and mg.as_tensor(True).dtype == np.bool_


def test_as_tensor_devices():
    a = np.arange(3.0)
    t = mg.as_tensor(a, device="spy")                    # another device: a copy there
    assert t.device == "spy" and isinstance(t._data, spy_backend.SpyArray)
    a[0] = 5
    assert t.tolist() == [0.0, 1.0, 2.0]
    d = mg.zeros(2, device="spy")._data
    s = mg.as_tensor(d)                                  # a device array stays where it is
    assert s.device == "spy" and s._data is d
    back = mg.as_tensor(s, device="cpu")
    assert back.device == "cpu" and back.tolist() == [0.0, 0.0]


def test_as_tensor_matches_torch():
    torch = pytest.importorskip("torch")
    for data in ([1, 2], [1.0, 2.0], 3, 2.5, True, np.arange(3, dtype=np.int32)):
        assert mg.as_tensor(data).dtype == torch.as_tensor(data).numpy().dtype


def test_is_tensor_and_numel():
    t = mg.zeros(2, 3)
    assert mg.is_tensor(t) and mg.is_tensor(nn.Parameter(t))
    assert not mg.is_tensor(np.zeros(2)) and not mg.is_tensor([1.0]) and not mg.is_tensor(1)
    assert mg.numel(t) == 6 and mg.numel(mg.tensor(1.0)) == 1 and mg.numel(mg.zeros(0, 4)) == 0
    assert mg.numel(mg.zeros(3, device="spy")) == 3
    with pytest.raises(TypeError, match="numel: expected a Tensor, got list"):
        mg.numel([1, 2])


def test_logspace_powers_are_the_c_librarys():
    # NumPy's SIMD pow differs from libm's (PyTorch's) in the last bit on AVX-512 machines
    got = mg.logspace(-3.7, 3.9, 97, 7.3, dtype="float64").numpy()
    step = (3.9 + 3.7) / 96
    want = [math.pow(7.3, -3.7 + step * i if i < 48 else 3.9 - step * (96 - i))
            for i in range(97)]
    assert got.tolist() == want
    assert mg.logspace(0, 400, 2, dtype="float64").tolist() == [1.0, math.inf]   # no raise
    assert math.isnan(mg.logspace(0.5, 1, 2, -2.0, dtype="float64")[0].item())
