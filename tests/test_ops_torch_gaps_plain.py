"""The PyTorch functions and methods minigrad lacked whose results are plain (comparisons,
logical ops, isclose/allclose/equal, a tensor's stride, type and size), the integer, NaN and
edge behaviour of the differentiable ones (test_ops_torch_gaps.py runs those through the op
suite), and the errors each gives for bad input: what was wrong and what would be valid."""
import numpy as np
import pytest

import minigrad as mg

NAN, INF = float("nan"), float("inf")


def _torch():
    return pytest.importorskip("torch")


def _same(mine, theirs):
    """A minigrad result equals a torch one: shape, dtype and values (NaN equal to NaN;
    floats to a few ulps: the libraries' float32 atan2 may differ in the last bit)."""
    expected = theirs.detach().numpy()
    assert mine.shape == tuple(expected.shape)
    assert str(mine.dtype) == str(theirs.dtype).replace("torch.", "")
    if expected.dtype.kind == "f":
        np.testing.assert_allclose(mine.numpy(), expected, rtol=1e-6, atol=0)
    else:
        np.testing.assert_array_equal(mine.numpy(), expected)


# ---- comparisons and logical ops: bool tensors outside the graph ----------------------------
PAIRS = [([1.0, 2.0, NAN], [[2.0], [1.0]]), ([1, 0, 3], [1.5, 0.0, 3.0]),
         ([True, False, True], [0, 0, 2]), ([[1.0, -1.0]], 0.0)]


@pytest.mark.parametrize("a, b", PAIRS)
@pytest.mark.parametrize("name", ["eq", "ne", "lt", "le", "gt", "ge", "logical_and",
                                  "logical_or", "logical_xor"])
def test_comparisons_and_logical_ops_as_torch(name, a, b, device):
    torch = _torch()
    x = mg.tensor(a, device=device, requires_grad=mg.tensor(a).dtype == mg.float32)
    y = b if isinstance(b, float) else mg.tensor(b, device=device)
    got = getattr(mg, name)(x, y)
    assert got.device == device and not got.requires_grad
    tb = b if isinstance(b, float) and not name.startswith("logical") else torch.tensor(b)
    _same(got.cpu(), getattr(torch, name)(torch.tensor(a), tb))
    if name.startswith("logical"):
        _same(getattr(x, name)(y).cpu(), getattr(torch, name)(
            torch.tensor(a), torch.tensor(b)))


def test_logical_not_of_any_dtype(device):
    torch = _torch()
    for a in ([0.5, 0.0, NAN], [0, 3, -1], [True, False]):
        _same(mg.logical_not(mg.tensor(a, device=device)).cpu(),
              torch.logical_not(torch.tensor(a)))
        _same(mg.tensor(a, device=device).logical_not().cpu(),
              torch.tensor(a).logical_not())


def test_isclose_allclose_as_torch(device):
    torch = _torch()
    a = [1.0, INF, NAN, -INF, 1e-9, 100.0]
    b = [1.0 + 1e-6, INF, NAN, INF, 0.0, 100.001]
    for kw in ({}, {"equal_nan": True}, {"rtol": 0.0, "atol": 1e-8}, {"rtol": 1e-4}):
        for dt in ("float32", "float64"):
            x, y = mg.tensor(a, dtype=dt, device=device), mg.tensor(b, dtype=dt, device=device)
            tx, ty = torch.tensor(a, dtype=getattr(torch, dt)), torch.tensor(
                b, dtype=getattr(torch, dt))
            _same(mg.isclose(x, y, **kw).cpu(), torch.isclose(tx, ty, **kw))
            assert x.allclose(y, **kw) is torch.allclose(tx, ty, **kw)
    x = mg.tensor([[1.0, 2.0]], device=device)                      # broadcasting
    _same(x.isclose(mg.tensor([[1.0], [2.0]], device=device)).cpu(),
          torch.isclose(torch.tensor([[1.0, 2.0]]), torch.tensor([[1.0], [2.0]])))
    i, j = mg.tensor([1, 2, 5], device=device), mg.tensor([1, 3, 3], device=device)
    _same(mg.isclose(i, j, atol=1).cpu(), torch.isclose(torch.tensor([1, 2, 5]),
                                                        torch.tensor([1, 3, 3]), atol=1))
    t, f = mg.tensor([True, False], device=device), mg.tensor([True, True], device=device)
    _same(mg.isclose(t, f).cpu(), torch.isclose(torch.tensor([True, False]),
                                                torch.tensor([True, True])))
    assert mg.allclose(x, x) is True and mg.allclose(x, x + 1) is False


def test_equal_is_a_python_bool_as_torch(device):
    x = mg.tensor([1.0, 2.0], device=device)
    assert mg.equal(x, x.clone()) is True and x.equal(x + 1) is False
    assert mg.equal(x, x[None]) is False                      # shapes differ: not equal
    assert mg.equal(x, mg.tensor([1, 2], device=device)) is True   # values, as PyTorch
    n = mg.tensor([NAN], device=device)
    assert mg.equal(n, n) is False                            # NaN equals nothing


def test_comparison_errors_name_the_problem():
    x = mg.tensor([1.0, 2.0])
    with pytest.raises(TypeError, match=r"isclose: the tensors have dtypes float32 and int64"):
        mg.isclose(x, mg.tensor([1, 2]))
    with pytest.raises(ValueError, match=r"rtol and atol must be non-negative"):
        mg.isclose(x, x, atol=-1.0)
    with pytest.raises(ValueError, match=r"isclose: shapes \(2,\) and \(3,\) do not broadcast"):
        mg.isclose(x, mg.zeros(3))
    with pytest.raises(TypeError, match=r"equal: expected two tensors, got Tensor and list"):
        mg.equal(x, [1.0, 2.0])


# ---- integers, NaN and exact values of the math functions ----------------------------------
def test_math_on_integers_and_exact_values(device):
    torch = _torch()
    i = [1, 2, 10]
    for name in ("tan", "sinh", "cosh", "log2", "log10", "exp2"):
        got = getattr(mg, name)(mg.tensor(i, device=device))
        assert got.dtype == mg.float32, name
        np.testing.assert_allclose(got.numpy(), getattr(torch, name)(torch.tensor(i)).numpy(),
                                   rtol=1e-6, err_msg=name)
    for dtype in (mg.float32, mg.float64):   # exact powers (NumPy's own float32 log10 is not)
        kw = {"dtype": dtype, "device": device}
        assert mg.log10(mg.tensor([100.0, 1000.0, 0.01], **kw)).tolist() == [2.0, 3.0, -2.0]
        assert mg.log2(mg.tensor([8.0, 0.25], **kw)).tolist() == [3.0, -2.0]
    assert mg.exp2(mg.tensor([10.0, -2.0], device=device)).tolist() == [1024.0, 0.25]
    _same(mg.atan2(mg.tensor([1, 2], device=device), mg.tensor([1, -1], device=device)).cpu(),
          torch.atan2(torch.tensor([1, 2]), torch.tensor([1, -1])))
    _same(mg.fmod(mg.tensor([5, -5, 7], device=device), mg.tensor([3, 3, -2], device=device))
          .cpu(), torch.fmod(torch.tensor([5, -5, 7]), torch.tensor([3, 3, -2])))
    _same(mg.tensor([-2.5, 2.5, -0.0], device=device).fmod(2.0).cpu(),
          torch.tensor([-2.5, 2.5, -0.0]).fmod(2.0))
    _same(mg.tensor([-2.5, 1.75], device=device).frac().cpu(), torch.tensor([-2.5, 1.75]).frac())
    with pytest.raises(ZeroDivisionError, match="fmod: integer division by zero"):
        mg.fmod(mg.tensor([1, 2], device=device), 0)
    with pytest.raises(TypeError, match=r"frac: needs a floating-point tensor, got int64"):
        mg.tensor([1, 2], device=device).frac()
    with pytest.raises(TypeError, match="addcdiv: integer tensors are not supported"):
        mg.addcdiv(*(mg.tensor([1, 2], device=device),) * 3)


def test_atan2_gradient_is_zero_at_the_origin(device):
    """θ(0, 0) has no gradient: 0 there, as PyTorch, not 0/0 = NaN (the angle of a zero,
    e.g. padding, vector would poison what feeds it); elsewhere b/r² and -a/r². Second
    derivatives: the formula's away from the origin, and at it the 0 of that constant
    (PyTorch gives NaN there)."""
    f64 = {"dtype": mg.float64, "device": device, "requires_grad": True}
    y, x = mg.tensor([0.0, 1.0], **f64), mg.tensor([0.0, 2.0], **f64)
    gy, gx = mg.grad(mg.atan2(y, x).sum(), [y, x], create_graph=True)
    assert gy.tolist() == [0.0, 0.4] and gx.tolist() == [0.0, -0.2]
    on_axis = mg.tensor([0.0], **f64)                    # y = 0, x = 2: not the origin
    g_axis, = mg.grad(mg.atan2(on_axis, mg.tensor([2.0], dtype=mg.float64,
                                                  device=device)).sum(), [on_axis])
    assert g_axis.tolist() == [0.5]
    ggx, = mg.grad(gy.sum(), [x])                        # d/db b/(a² + b²) = (a² - b²)/r⁴
    np.testing.assert_allclose(ggx.numpy(), [0.0, -3 / 25], rtol=1e-12)


def test_division_ops_take_a_bool_beside_an_integer_as_torch(device):
    """A bool beside an integer counts as 0/1 in //, % and fmod (PyTorch's int64 answer);
    only two bool operands are refused."""
    a, m = mg.tensor([5, 6], device=device), mg.tensor([True, True], device=device)
    assert (a % m).tolist() == [0, 0] and (a // m).tolist() == [5, 6]
    assert mg.fmod(a, m).tolist() == [0, 0] and (m % a).tolist() == [1, 1]
    with pytest.raises(TypeError, match="not implemented for two bool tensors"):
        m // m


def test_lerp_addcmul_addmm_edges(device):
    torch = _torch()
    s, e = mg.tensor([0.1, -3.3], device=device), mg.tensor([0.7, 1e7], device=device)
    assert mg.lerp(s, e, 1.0).tolist() == e.tolist()          # the end exactly, as PyTorch
    assert s.lerp(e, 0.0).tolist() == s.tolist()
    with pytest.raises(TypeError, match=r"lerp: start, end .* share one dtype, got float32, "
                                        r"float64"):
        s.lerp(e.double(), 0.5)
    _same(mg.addcmul(*(mg.tensor([1, 2], device=device),) * 3, value=2).cpu(),
          torch.addcmul(*(torch.tensor([1, 2]),) * 3, value=2))
    with pytest.raises(TypeError, match="addcmul: value must be a number"):
        s.addcmul(s, s, value="2")
    # beta=0: the input is ignored (its NaN does not spread) and gets gradient 0, as PyTorch
    x = mg.tensor([NAN, NAN], device=device, requires_grad=True)
    m = mg.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    out = mg.addmm(x, m, m, beta=0, alpha=0.5)
    out.sum().backward()
    assert out.tolist() == [[3.5, 5.0], [7.5, 11.0]] and x.grad.tolist() == [0.0, 0.0]
    with pytest.raises(ValueError, match=r"addmm: input of shape \(3,\) does not broadcast to "
                                         r"the product's shape \(2, 2\)"):
        mg.addmm(mg.zeros(3), m, m)
    with pytest.raises(ValueError, match=r"mm: needs two matrices"):
        mg.addmm(mg.zeros(2), m[0], m)


# ---- cumprod, median, diff, trace on integers, NaN and ties -------------------------------
def test_integer_and_bool_results_as_torch(device):
    torch = _torch()
    for a in ([1, 2, 3], [True, True, False]):
        _same(mg.cumprod(mg.tensor(a, device=device), 0).cpu(), torch.cumprod(
            torch.tensor(a), 0))
        _same(mg.tensor(a, device=device).diff().cpu(), torch.tensor(a).diff())
    _same(mg.tensor([1.0, 2.0, 3.0], device=device).cumprod(0, dtype=mg.float64).cpu(),
          torch.tensor([1.0, 2.0, 3.0]).cumprod(0, dtype=torch.float64))
    _same(mg.tensor([5, 1, 4, 2], device=device).median().cpu(),
          torch.tensor([5, 1, 4, 2]).median())
    _same(mg.trace(mg.arange(9, device=device).reshape(3, 3).int()).cpu(),
          torch.trace(torch.arange(9).reshape(3, 3).int()))
    _same(mg.diff(mg.tensor([1, 4, 9], device=device), n=5).cpu(),
          torch.diff(torch.tensor([1, 4, 9]), n=5))
    assert mg.diff(mg.tensor([1.0, 4.0], device=device), n=0).tolist() == [1.0, 4.0]


def test_median_with_nan_and_ties_as_torch(device):
    torch = _torch()
    a = [[1.0, NAN, 3.0, NAN], [4.0, 2.0, 5.0, 0.5]]
    values, indices = mg.tensor(a, device=device).median(1)
    t_values, t_indices = torch.tensor(a).median(1)
    _same(values.cpu(), t_values)
    _same(indices.cpu(), t_indices)
    _same(mg.tensor(a, device=device).median().cpu(), torch.tensor(a).median())
    for b in ([1.0, 2.0, 2.0, 3.0], [1.0, NAN, 2.0, NAN]):   # ties / NaNs share the gradient
        x = mg.tensor(b, device=device, requires_grad=True)
        t = torch.tensor(b, requires_grad=True)
        x.median().backward()
        t.median().backward()
        _same(x.grad.cpu(), t.grad)
    x = mg.tensor([[3.0, 1.0, 1.0, 2.0]], device=device, requires_grad=True)
    values, indices = x.median(-1, keepdim=True)               # ties: one index gets it all
    values.sum().backward()
    assert values.tolist() == [[1.0]] and x[0, indices.item()].item() == 1.0
    assert x.grad.tolist()[0][indices.item()] == 1.0 and x.grad.sum().item() == 1.0
    scalar = mg.tensor(2.5, device=device).median(0)
    assert scalar.values.item() == 2.5 and scalar.indices.item() == 0


# ---- views, layout and the tensor's own facts -----------------------------------------------
def test_strides_contiguity_and_sizes_as_torch():
    torch = _torch()
    for make in (lambda m: m.zeros(2, 3), lambda m: m.zeros(2, 3).t(),
                 lambda m: m.zeros(2, 3).expand(4, 2, 3), lambda m: m.zeros(2, 3)[:, 1],
                 lambda m: m.zeros(3, 3).diagonal(), lambda m: m.zeros(2, 3, 4).movedim(0, 2),
                 lambda m: m.zeros(2, 3).unsqueeze(1), lambda m: m.zeros(2, 3).double()):
        x, t = make(mg), make(torch)
        assert x.stride() == t.stride() and x.stride(-1) == t.stride(-1)
        assert x.is_contiguous() == t.is_contiguous()
        assert (x.ndimension(), x.nelement(), x.element_size()) == \
            (t.ndimension(), t.nelement(), t.element_size())
    assert mg.tensor(1.0).stride() == ()
    with pytest.raises(IndexError, match=r"stride: a 0-d tensor has no dim 0"):
        mg.tensor(1.0).stride(0)


def test_type_names_and_conversions(device):
    x = mg.zeros(2, device=device)
    where = "" if device == "cpu" else "cuda."
    assert x.type() == f"minigrad.{where}FloatTensor"
    assert x.double().type() == f"minigrad.{where}DoubleTensor"
    assert x.long().type().endswith("LongTensor") and x.bool().type().endswith("BoolTensor")
    assert x.half().type().endswith("HalfTensor") and x.int().type().endswith("IntTensor")
    assert x.type(mg.float64).dtype == mg.float64 and x.type("float64").dtype == mg.float64
    assert x.type("minigrad.LongTensor").dtype == mg.int64
    assert x.type("torch.DoubleTensor").dtype == mg.float64 and x.type(mg.float32) is x
    with pytest.raises(TypeError, match=r"type: unknown type name 'minigrad.Floats'"):
        x.type("minigrad.Floats")


def test_new_empty_where_and_detach_(device):
    x = mg.ones(2, 3, dtype=mg.float64, device=device, requires_grad=True)
    e = x.new_empty(4, 1)
    assert e.shape == (4, 1) and e.dtype == mg.float64 and e.device == device
    assert not e.requires_grad and x.new_empty((2,)).shape == (2,)
    cond = mg.tensor([True, False, True], device=device)
    assert (x * 2).where(cond, -1.0).tolist() == [[2.0, -1.0, 2.0]] * 2
    y = x * 3
    assert y.detach_() is y and y.is_leaf and not y.requires_grad and y.grad_fn is None
    z = (x * 3).exp()
    z.sum().backward()                                       # its graph ran already: fine
    assert z.detach_().is_leaf
    with pytest.raises(RuntimeError, match=r"detach_: the tensor is a view of another"):
        (x * 2)[0].detach_()


def test_diagonal_is_a_view_that_can_be_written(device):
    torch = _torch()
    m = mg.zeros(3, 4, device=device)
    with mg.no_grad():
        m.diagonal(1).fill_(1.0)
    t = torch.zeros(3, 4)
    t.diagonal(1).fill_(1.0)
    _same(m.cpu(), t)
    _same(mg.zeros(3, 4).diagonal(5), torch.zeros(3, 4).diagonal(5))   # past the edge: empty
    _same(mg.zeros(3, 4).diag(-5), torch.zeros(3, 4).diag(-5))


def test_module_spellings_of_existing_methods(device):
    x = mg.tensor([[4.0, 0.25, 1.0]], device=device)
    assert mg.rsqrt(x).tolist() == [[0.5, 2.0, 1.0]]
    assert mg.swapaxes(x, 0, 1).shape == (3, 1) and mg.swapdims(x, 0, 1).shape == (3, 1)
    assert mg.erf(x).shape == (1, 3) and mg.moveaxis(x, 0, 1).shape == (3, 1)
    assert mg.arctan2 is mg.atan2 and x.arctan2(x).shape == (1, 3)


def test_new_functions_stay_on_the_gpu_stand_in(spy):
    x = mg.tensor([[1.0, NAN], [3.0, 0.5]], device=spy)
    for got in (x == 1.0, mg.logical_xor(x, x > 1), mg.isclose(x, x, equal_nan=True),
                mg.logical_not(x), x.cumprod(1), x.median(0).indices, x.diagonal()):
        assert got.device == spy
    assert mg.allclose(x, x, equal_nan=True) and not mg.equal(x, x)
    assert x.stride() == (2, 1) and x.is_contiguous()
    i = mg.tensor([3, 9], device=spy)
    assert mg.isclose(i, i.flip(0), atol=6).device == spy and mg.allclose(i, i, rtol=0, atol=0)



# ---- found in review: each failed before its fix --------------------------------------------
def test_integer_results_take_integer_scalars_only(device):
    torch = _torch()
    i = mg.tensor([1, 2], device=device)
    with pytest.raises(TypeError, match=r"addcmul: value=0.5, but the tensors are integers"):
        mg.addcmul(i, i, i, value=0.5)                # PyTorch truncates 0.5 to 0
    m = mg.tensor([[1, 2], [3, 4]], device=device)
    with pytest.raises(TypeError, match=r"addmm: beta=0.5, but the matrices are int64"):
        mg.addmm(m, m, m, beta=0.5)
    _same(mg.addcmul(i.float(), i, i, value=0.5).cpu(),          # a float result: fine
          torch.addcmul(torch.tensor([1.0, 2.0]), *(torch.tensor([1, 2]),) * 2, value=0.5))
    f = mg.ones(2, 2, device=device)
    assert mg.addmm(f, f, f, beta=np.float32(0.5)).tolist() == [[2.5, 2.5]] * 2   # NumPy too
    assert mg.tensordot(f, f, dims=np.int64(1)).tolist() == [[2.0, 2.0]] * 2


def test_isclose_compares_integers_exactly(device):
    a = mg.tensor([2 ** 62 + 1, 5], device=device)
    b = mg.tensor([2 ** 62, 5], device=device)
    assert mg.isclose(a, b, rtol=0, atol=0).tolist() == [False, True]   # as PyTorch
    assert mg.isclose(a, b, rtol=0, atol=1).tolist() == [True, True]
    assert not mg.allclose(a, b, rtol=0, atol=0.5)
    u = mg.tensor(np.array([3, 250], np.uint8), device=device)
    assert mg.isclose(u, u.flip(0), rtol=0, atol=246).tolist() == [False, False]


def test_stride_of_a_new_size_1_dim_as_torch():
    torch = _torch()
    for make in (lambda m: m.zeros(3)[None], lambda m: m.zeros(2, 3)[:, None],
                 lambda m: m.zeros(3)[:, None], lambda m: m.zeros(3).expand(1, 3),
                 lambda m: m.zeros(1).expand(1, 4), lambda m: m.zeros(1).expand(4, 1, 1)):
        assert make(mg).stride() == make(torch).stride()     # NumPy gives (0, 1) for x[None]


def test_stride_of_an_empty_tensor_as_torch(torch):
    """NumPy gives an empty array it makes all-0 steps: reported as contiguous ones, each
    dim counted at least 1 (a slice keeps its parent's steps)."""
    assert mg.zeros(0, 3).stride() == (3, 1) and mg.zeros(2, 0, 3).stride() == (3, 3, 1)
    for make in (lambda m: m.zeros(0), lambda m: m.zeros(3, 0), lambda m: m.zeros(0, 1),
                 lambda m: m.zeros(1, 0), lambda m: m.zeros(0, 3) + 1,
                 lambda m: m.zeros(3, 4)[3:], lambda m: m.zeros(3, 4)[:, 1:1],
                 lambda m: m.zeros(4).expand(0, 4), lambda m: m.zeros(0, 3).unsqueeze(1)):
        x, t = make(mg), make(torch)
        assert (x.stride(), x.is_contiguous()) == (t.stride(), t.is_contiguous())


def test_new_empty_takes_dtype_device_requires_grad(device):
    x = mg.ones(2, device=device)
    e = x.new_empty(3, dtype=mg.int64, requires_grad=False)
    assert e.dtype == mg.int64 and e.device == device and e.shape == (3,)
    assert x.new_empty((2,), requires_grad=True).requires_grad
    assert x.new_empty(1, device="cpu").device == "cpu"


def test_a_row_or_diagonal_of_an_expanded_tensor_writes_through(device):
    torch = _torch()
    x, t = mg.zeros(3, device=device), torch.zeros(3)
    with mg.no_grad():
        x.expand(2, 3).select(0, 1).add_(2.0)       # NumPy kept these views read-only
        x.expand(3, 3).diagonal().mul_(3.0)
    t.expand(2, 3).select(0, 1).add_(2.0)
    t.expand(3, 3).diagonal().mul_(3.0)
    _same(x.cpu(), t)
    with pytest.raises(ValueError, match=r"fill_: the tensor is a broadcast view"):
        x.expand(3, 3).t().fill_(1.0)               # elements shared: refused, as before
    frozen = np.zeros(3)
    frozen.flags.writeable = False
    with pytest.raises(ValueError, match=r"fill_: the tensor's memory is read-only"):
        mg.from_numpy(frozen)[1:].fill_(1.0)        # its owner is read-only: stays so

def test_detach_in_place_refuses_while_a_recorded_op_uses_the_tensor():
    x = mg.ones(2, requires_grad=True)
    y = x * 2
    z = y.exp()                               # PyTorch would keep x.grad = 2·e² through y
    with pytest.raises(RuntimeError, match="detach_: results already computed from this "
                                           "tensor would lose their gradient"):
        y.detach_()
    z.sum().backward()                        # refused, so nothing was cut
    np.testing.assert_allclose(x.grad.numpy(), 2 * np.exp(2.0), rtol=1e-6)
    h = x * 3
    (h * h).sum().backward()                  # truncated backprop: after backward released
    assert h.detach_() is h and h.is_leaf and not h.requires_grad   # the ops, it detaches


# ---- bad input: what was wrong and what is valid --------------------------------------------
ERRORS = [
    (lambda: mg.zeros(2, 3).diagonal(0, 1, -1), ValueError,
     r"diagonal: dim1 and dim2 name the same dim \(1 and -1"),
    (lambda: mg.zeros(3).diagonal(), ValueError, r"diagonal: needs .* at least 2 dims"),
    (lambda: mg.zeros(2, 3).diagonal(0, 0, 2), IndexError, r"diagonal: dim 2 out of range"),
    (lambda: mg.zeros(2, 2, 2).diag(), ValueError, r"diag: needs a 1-D tensor .* or a 2-D"),
    (lambda: mg.zeros(2, 2, 2).trace(), ValueError, r"trace: needs a matrix \(2-D\)"),
    (lambda: mg.zeros(2, 3).tile(2, -1), ValueError,
     r"tile: repetitions must be non-negative, got \(2, -1\)"),
    (lambda: mg.zeros(2, 3).select(1, 3), IndexError,
     r"select: index 3 is out of range for dim 1 of size 3 .*valid: -3..2"),
    (lambda: mg.zeros(2, 3).select(2, 0), IndexError, r"select: dim 2 out of range"),
    (lambda: mg.meshgrid(mg.zeros(2), mg.zeros(3), indexing="yx"), ValueError,
     r"meshgrid: indexing must be 'ij' or 'xy', got 'yx'"),
    (lambda: mg.meshgrid(mg.zeros(2, 2)), ValueError,
     r"meshgrid: expects 0-d or 1-D tensors, got shape \(2, 2\) at position 0"),
    (lambda: mg.meshgrid(mg.zeros(2), mg.zeros(2, dtype=mg.float64)), TypeError,
     r"meshgrid: all tensors must share one dtype and device"),
    (lambda: mg.zeros(2, 3).movedim((0, 0), (1, 0)), ValueError,
     r"movedim: source \(0, 0\) names a dim more than once"),
    (lambda: mg.zeros(2, 3).movedim((0, 1), 0), ValueError,
     r"movedim: source \(0, 1\) and destination 0 must have the same number of dims"),
    (lambda: mg.zeros(2, 3, 4).t(), ValueError, r"t: expects a tensor with at most 2 dims"),
    (lambda: mg.zeros(3, 1).broadcast_to(2, 2), ValueError,
     r"expand: cannot expand shape \(3, 1\) to \(2, 2\)"),
    (lambda: mg.hstack([]), TypeError, r"hstack: expected a non-empty sequence of tensors"),
    (lambda: mg.tensordot(mg.zeros(2, 3), mg.zeros(4, 5), 1), ValueError,
     r"tensordot: dims \[1\] of shape \(2, 3\) and \[0\] of shape \(4, 5\) must pair up"),
    (lambda: mg.tensordot(mg.zeros(2, 3), mg.zeros(3), 3), ValueError,
     r"tensordot: dims=3 must lie in 0..1"),
    (lambda: mg.tensordot(mg.zeros(2), mg.zeros(2), "x"), TypeError,
     r"tensordot: dims must be an int or a pair"),
    (lambda: mg.cross(mg.zeros(2, 4), mg.zeros(2, 4)), ValueError,
     r"cross: no dim of size 3 in the shape \(2, 4\); give dim="),
    (lambda: mg.cross(mg.zeros(3, 4), mg.zeros(3, 4), dim=1), ValueError,
     r"cross: dim 1 has size 4 .* needs size 3"),
    (lambda: mg.zeros(3).diff(-1), ValueError, r"diff: n \(the order\) must be a non-negative"),
    (lambda: mg.tensor(1.0).diff(), ValueError, r"diff: needs a tensor with at least 1 dim"),
    (lambda: mg.zeros(2, 3).diff(prepend=mg.zeros(3)), ValueError,
     r"diff: prepend must be a tensor with the input's 2 dims, got \(3,\)"),
    (lambda: mg.zeros(3).median(keepdim=True), TypeError, r"median: keepdim=True needs a dim"),
    (lambda: mg.zeros(0, dtype=mg.int64).median(), ValueError,
     r"median: the integer tensor is empty"),
    (lambda: mg.zeros(2, 0).median(1), ValueError, r"median: dim 1 of shape \(2, 0\) has size 0"),
    (lambda: mg.zeros(3).cumprod(0.5), TypeError, r"cumprod: dim must be an int, got 0.5"),
    (lambda: mg.zeros(3).cumprod(1), IndexError, r"cumprod: dim 1 out of range"),
    (lambda: mg.lerp([1.0], mg.zeros(1), 0.5), TypeError, r"lerp: start and end must be "),
]


@pytest.mark.parametrize("call, error, message", ERRORS,
                         ids=[m.split(":")[0].replace("\\", "") + f"-{i}"
                              for i, (_, _, m) in enumerate(ERRORS)])
def test_bad_input_says_what_is_valid(call, error, message):
    with pytest.raises(error, match=message):
        call()
