"""Tensor basics: creation and dtype rules, conversion (.numpy, .item, .to), and the small
protocol methods a user touches (repr, len, bool, float)."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F


def test_dtype_rules(device):
    assert mg.tensor([1.0, 2.0], device=device).dtype == mg.float32     # Python floats
    assert mg.tensor(3.0, device=device).dtype == mg.float32
    assert mg.tensor([1, 2], device=device).dtype == mg.int64           # Python ints
    assert mg.tensor([True, False], device=device).dtype == mg.bool
    for dt in (np.float64, np.float32, np.int32, np.int64, np.bool_):   # arrays keep theirs
        assert mg.tensor(np.zeros(2, dt), device=device).dtype == np.dtype(dt)
    assert mg.tensor([1, 2], dtype="float64", device=device).dtype == mg.float64
    assert mg.tensor([1.5], dtype=mg.int64, device=device).tolist() == [1]
    assert mg.float64 == np.dtype("float64") and mg.int64 == np.dtype("int64")
    for name in ("float", "double", "long", "int", "half", "bool"):
        assert mg.zeros(1, dtype=name).dtype == mg.backend.dtype(name)


def test_tensor_copies_its_source(device):
    a = np.ones(3, dtype=np.float32)
    t = mg.tensor(a, device=device, requires_grad=True)
    with mg.no_grad():
        t[0] = 5.0
    assert a[0] == 1.0                                   # a new tensor, as torch.tensor
    u = mg.tensor(t, device=device)
    assert not u.requires_grad and u.is_leaf
    with mg.no_grad():
        u[1] = 7.0
    assert t.tolist() == [5.0, 1.0, 1.0]


def test_factories(device):
    assert mg.zeros(2, 3, device=device).shape == (2, 3)
    assert mg.ones((2, 3), device=device).tolist() == [[1.0] * 3] * 2
    assert mg.full((2,), 7.0, device=device).tolist() == [7.0, 7.0]
    assert mg.arange(4, device=device).tolist() == [0, 1, 2, 3]
    assert mg.arange(4, device=device).dtype == mg.int64
    assert mg.arange(0, 1, 0.5, device=device).dtype == mg.float32
    assert mg.arange(1, 7, 2, dtype=mg.float64, device=device).tolist() == [1.0, 3.0, 5.0]
    r = mg.randn(3, 4, device=device, requires_grad=True)
    assert r.requires_grad and r.dtype == mg.float32 and r.device == device
    u = mg.rand(1000, dtype=mg.float64, device=device).numpy()
    assert u.min() >= 0 and u.max() < 1
    i = mg.randint(0, 5, (100,), device=device).numpy()
    assert i.dtype == np.int64 and i.min() >= 0 and i.max() < 5
    j = mg.randint(3, (200,), device=device).numpy()          # randint(high, size), as torch
    assert j.dtype == np.int64 and j.min() == 0 and j.max() == 2 and j.shape == (200,)
    assert mg.randint(2, 4, size=(2, 3), device=device).shape == (2, 3)
    x = mg.randn(2, 3, dtype=mg.float64, device=device)
    for like in (mg.zeros_like(x), mg.ones_like(x), mg.randn_like(x)):
        assert like.shape == (2, 3) and like.dtype == mg.float64 and like.device == device


def test_manual_seed_reproducible(device):
    mg.manual_seed(42)
    a = mg.randn(5, device=device).numpy()
    mg.manual_seed(42)
    np.testing.assert_array_equal(mg.randn(5, device=device).numpy(), a)
    assert not np.array_equal(mg.randn(5, device=device).numpy(), a)


def test_conversions(device):
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    h = x.numpy()
    assert isinstance(h, np.ndarray) and h.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert isinstance(x.sum().numpy(), np.ndarray) and x.sum().numpy().shape == ()
    assert x.sum().item() == 10.0 and float(x[0, 1]) == 2.0 and int(x[1, 1]) == 4
    assert len(x) == 2 and x.tolist() == [[1.0, 2.0], [3.0, 4.0]]
    assert x.to(device) is x and x.to("float32") is x and x.contiguous() is x
    assert x.to("float64").dtype == mg.float64 and x.to(mg.float64).dtype == mg.float64
    assert x.double().dtype == mg.float64 and x.long().dtype == mg.int64
    assert x.bool().dtype == mg.bool and x.double().float().dtype == mg.float32
    assert x.cpu().device == "cpu" and isinstance(x.cpu()._data, np.ndarray)
    assert bool(mg.tensor([1.0], device=device)) and not bool(mg.tensor(0.0, device=device))


def test_repr():
    # the dtype is named unless it is PyTorch's default (float32, int64, bool): NumPy's
    # defaults differ, and a float64 tensor printed bare would read as float32
    assert repr(mg.tensor([1.0, 2.0])) == "tensor([1., 2.])"
    assert repr(mg.tensor([1.0, 2.0], dtype="float64")) == "tensor([1., 2.], dtype=float64)"
    assert repr(mg.tensor([1, 2])) == "tensor([1, 2])"
    assert repr(mg.tensor([1, 2], dtype="int32")) == "tensor([1, 2], dtype=int32)"
    assert repr(mg.tensor([True])) == "tensor([ True])"
    wide = repr(mg.full((2, 4), -1.2345678e-09))        # NumPy wraps its dtype to a new line
    assert wide.endswith("e-09]])") and "dtype" not in wide
    assert repr(mg.ones(1, dtype="float64", requires_grad=True)) == \
        "tensor([1.], dtype=float64, requires_grad=True)"
    assert "requires_grad=True" in repr(mg.ones(2, requires_grad=True))
    assert "grad_fn=Mul" in repr(mg.ones(2, requires_grad=True) * 2)
    # rows indented under "tensor(", one more than NumPy's under "array(", as PyTorch's
    assert repr(mg.zeros(2, 1, 2)) == "tensor([[[0., 0.]],\n\n        [[0., 0.]]])"
    assert repr(mg.arange(6).view(2, 3)) == "tensor([[0, 1, 2],\n        [3, 4, 5]])"


def test_protocol_errors():
    with pytest.raises(RuntimeError, match="ambiguous"):
        bool(mg.ones(2))
    with pytest.raises(TypeError, match="0-d"):
        len(mg.tensor(1.0))
    with pytest.raises(RuntimeError, match="detach"):
        (mg.ones(2, requires_grad=True) * 2).requires_grad_(False)


def test_numpy_array_on_the_left_defers_to_tensor(device):
    x = mg.ones(2, device=device, requires_grad=True)
    y = np.array([2.0, 3.0], dtype=np.float32) * x
    assert isinstance(y, mg.Tensor) and y.requires_grad and y.tolist() == [2.0, 3.0]


def test_zero_and_setitem_under_no_grad(device):
    x = mg.ones(2, 3, device=device, requires_grad=True)
    (x * 2).sum().backward()
    x.grad.zero_()
    assert x.grad.tolist() == [[0.0] * 3] * 2
    s = x.sum()
    with mg.no_grad():
        s.detach().zero_()                                # a 0-d result is an array too


def test_assigning_data_swaps_the_array_as_torch(device):
    # PyTorch's re-initialisation idiom; a Tensor used to be stored as the raw array and
    # broke the parameter far from here (its forward, the optimiser, mg.save)
    m = mg.nn.Linear(3, 2).to(device)
    before = m.weight.numpy().copy()
    m.weight.data = m.weight * 0.5
    assert isinstance(m.weight._data, type(mg.zeros(1, device=device)._data))
    np.testing.assert_allclose(m.weight.numpy(), before * 0.5)
    new = mg.zeros(2, 3, device=device)
    m.weight.data = new                                   # shares new's memory, as PyTorch
    new[0, 0] = 7.0
    assert m.weight.tolist()[0][0] == 7.0
    opt = mg.optim.SGD(m.parameters(), lr=0.1)
    m(mg.ones(4, 3, device=device)).sum().backward()
    opt.step()                                            # the parameter still works
    m.weight.data = m.weight._data * 2                    # a raw array of its device too
    with pytest.raises(TypeError, match="requires grad, so its data must be floating"):
        m.weight.data = mg.tensor([[1, 2, 3], [4, 5, 6]], device=device)
    if device == "cpu":                                  # an ndarray subclass: its extras
        with pytest.raises(TypeError, match="got a MaskedArray"):   # would be dropped
            m.weight.data = np.ma.masked_array(np.zeros((2, 3), np.float32))
    for bad, words in [([1.0, 2.0], "got a list"), (3.0, "got a float")]:
        with pytest.raises(TypeError, match=f"assign a Tensor or a {device} array \\({words}"):
            m.weight.data = bad
    if device != "cpu":
        with pytest.raises(TypeError, match=f"on cpu.*\\.to\\('{device}'\\)"):
            m.weight.data = mg.zeros(2, 3)


def test_keep_freed_host_memory_reports_whether_it_applied():
    import sys
    applied = mg.keep_freed_host_memory()
    assert isinstance(applied, bool)
    if sys.platform.startswith("linux"):
        import platform
        assert applied == (platform.libc_ver()[0] == "glibc")


def test_iterating_gives_the_rows_and_a_0d_tensor_refuses(device):
    x = mg.tensor([[1.0, 2.0], [3.0, 4.0]], device=device)
    assert [r.tolist() for r in x] == [[1.0, 2.0], [3.0, 4.0]]
    with pytest.raises(TypeError, match="iteration over a 0-d tensor"):
        list(mg.tensor(1.0, device=device))


def test_a_list_of_tensors_becomes_one_tensor_of_their_values(device):
    t = mg.tensor([mg.tensor(1.0, device=device), mg.tensor(2.0, device=device)])
    assert t.dtype == mg.float32 and t.tolist() == [1.0, 2.0]
    t64 = mg.tensor([mg.tensor(1.0, dtype=mg.float64, device=device)] * 2)
    assert t64.dtype == mg.float64                      # their dtype, as torch.tensor
    rows = mg.tensor((mg.ones(2, device=device), mg.zeros(2, device=device)))
    assert rows.shape == (2, 2) and rows.tolist() == [[1.0, 1.0], [0.0, 0.0]]
    with pytest.raises(ValueError, match=r"one shape.*\(2,\).*\(3,\)"):
        mg.tensor([mg.ones(2), mg.ones(3)])


def test_clamp_with_tensor_bounds(device):
    x = mg.tensor([1.0, 5.0, 2.5], device=device, requires_grad=True)
    lo = mg.tensor(2.0, dtype=mg.float64, device=device)
    y = x.clamp(lo, mg.tensor([3.0, 3.0, 3.0], device=device))
    assert y.dtype == mg.float32 and y.tolist() == [2.0, 3.0, 2.5]
    y.sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 1.0]
    assert mg.clamp(x, max=mg.tensor(0.0, device=device)).tolist() == [0.0, 0.0, 0.0]


def test_clamp_bounds_that_require_grad_get_it_as_torch(device):
    # a learned range: each bound's gradient is where it is the result (it had none)
    x = mg.tensor([1.0, 5.0, 2.5, 2.0], dtype="float64", device=device, requires_grad=True)
    lo = mg.tensor([2.0, 2.0, 2.0, 2.0], dtype="float64", device=device, requires_grad=True)
    hi = mg.tensor(3.0, dtype="float64", device=device, requires_grad=True)
    y = x.clamp(lo, hi)
    assert y.tolist() == [2.0, 3.0, 2.5, 2.0]
    (y * mg.tensor([1.0, 2.0, 3.0, 4.0], dtype="float64", device=device)).sum().backward()
    assert x.grad.tolist() == [0.0, 0.0, 3.0, 4.0]      # a tie with min goes to x, as PyTorch
    assert lo.grad.tolist() == [1.0, 0.0, 0.0, 0.0] and hi.grad.item() == 2.0
    away = mg.tensor([1.0, 5.0, 2.5, 2.2], dtype="float64", device=device,
                     requires_grad=True)                 # no ties: differentiable everywhere
    assert mg.gradcheck(lambda x, lo, hi: x.clamp(lo, hi), [away, lo, hi])
    assert mg.gradcheck(lambda x, hi: mg.clamp(x, max=hi), [away, hi])
    with pytest.raises(ValueError, match="at least one"):
        x.clamp()
    nan = mg.tensor([float("nan"), 0.0], dtype="float64", device=device, requires_grad=True)
    lo.grad = None
    nan.clamp(lo[:2]).sum().backward()                   # no gradient at a NaN, as PyTorch
    assert nan.grad.tolist() == [0.0, 0.0] and lo.grad.tolist() == [0.0, 1.0, 0.0, 0.0]


def test_np_asarray_of_a_tensor():
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    a = np.asarray(x)
    assert isinstance(a, np.ndarray) and a.dtype == np.float32 and a.tolist() == [1.0, 2.0]
    assert np.asarray(x, dtype=np.float64).dtype == np.float64
    assert np.asarray([mg.tensor(1.0), mg.tensor(2.0)]).tolist() == [1.0, 2.0]



def test_full_takes_its_dtype_from_the_value_as_torch(device):
    assert mg.full((2,), 7, device=device).dtype == mg.int64
    assert mg.full((2,), True, device=device).dtype == mg.bool
    assert mg.full((2,), 7.0, device=device).dtype == mg.float32
    assert mg.full((2,), 7, dtype=mg.float64, device=device).dtype == mg.float64


def test_method_spellings_match_the_operators(device):
    """x.add(y), x.mul(y), ... are the operators under PyTorch's method names: same values,
    same gradients."""
    a = mg.tensor([1.0, -2.0, 3.0], device=device, dtype=mg.float64, requires_grad=True)
    b = mg.tensor([0.5, 4.0, -1.0], device=device, dtype=mg.float64, requires_grad=True)
    pairs = [(a.add(b), a + b), (a.sub(b), a - b), (a.mul(b), a * b), (a.div(b), a / b),
             (a.pow(2), a ** 2), (a.matmul(b), a @ b), (a.neg(), -a), (a.square(), a * a),
             (a.add(2.0), a + 2.0), (a.view_as(b), a.reshape(3)),
             (a.reshape_as(mg.zeros(3, 1)), a.reshape(3, 1))]
    for got, want in pairs:
        np.testing.assert_array_equal(got.numpy(), want.numpy())
        ga = mg.grad(got.sum(), [a], allow_unused=True)[0]
        wa = mg.grad(want.sum(), [a], allow_unused=True)[0]
        np.testing.assert_array_equal(ga.numpy(), wa.numpy())
    with pytest.raises(ValueError, match="cannot view"):
        a.view_as(mg.zeros(2, 2))


def test_in_place_operators_write_into_the_tensor(device):
    """x += y changes x itself (as PyTorch): a hand-written SGD step over a list of
    parameters updates them, a view's change reaches its base, and the version count moves
    (so a graph that saved x notices)."""
    w = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    (w * w).sum().backward()                             # grad 2w = [2, 4]
    with mg.no_grad():
        for p in [w]:
            p -= 0.1 * p.grad
    assert w.tolist() == pytest.approx([0.8, 1.6]) and w._version == 1 and w.requires_grad
    x = mg.tensor([1.0, 2.0, 3.0], device=device)
    v = x[1:]
    v *= 10
    v /= 2
    v += mg.tensor([1.0, 1.0], device=device)
    x **= 2
    assert x.tolist() == [1.0, 121.0, 256.0] and x._version == v._version == 4
    one = x[0]                                           # an element is a 0-d view too
    one += 1
    assert x.tolist()[0] == 2.0
    i = mg.tensor([1, 2], device=device)
    i *= 3
    assert i.tolist() == [3, 6] and i.dtype == mg.int64
    f = mg.zeros(2, device=device)
    f += mg.ones(2, dtype=mg.float64, device=device)      # a wider float is cast down
    assert f.dtype == mg.float32 and f.tolist() == [1.0, 1.0]


def test_in_place_operators_in_grad_mode(device):
    """Where a tensor requires grad (in grad mode), x += y binds x to a new tensor, as
    x = x + y, when this name alone holds x: `loss += term` works as in PyTorch, with x's
    shape and dtype kept. Held elsewhere too (another name, a list, a function's caller),
    the write is recorded in place (ops/inplace_autograd.py), so every holder sees it, and
    with a view of it alive, into its memory, so the view sees it too; refused for a leaf
    that requires grad."""
    w = mg.tensor([1.0, 2.0], device=device, requires_grad=True)
    loss = 0
    for k in (1.0, 2.0):
        loss += (w * k).sum()
    loss *= 2
    loss.backward()
    assert loss.item() == 18.0 and w.grad.tolist() == [6.0, 6.0]
    acc = mg.zeros(2, device=device)
    acc += w.double()                                    # a constant += a graph tensor
    assert acc.requires_grad and acc.dtype == mg.float32   # x's dtype, as in place
    with pytest.raises(RuntimeError, match=r"leaf tensor that requires grad.*x = x \+ y"):
        w += 1

    h = w * 2
    other, held = h, [h]                                 # another name, a list
    h *= 10
    assert other is h and held[0] is h and h.tolist() == [20.0, 40.0]
    _imul(h)                                             # the caller of a function sees it
    assert held[0].tolist() == [200.0, 400.0]
    del other, held
    view = h[:1]                                         # a view of its memory: written
    h *= 2                                               # into it (ops/inplace_views.py)
    assert view.tolist() == [400.0] and h.tolist() == [400.0, 800.0]
    h *= 0.5
    del view
    y = h * 3                                            # an op that used it keeps
    h *= 2                                               # the old value (recorded: y holds h)
    h *= 0.5
    assert y.tolist() == [600.0, 1200.0]
    del y
    h *= 0.1                                             # nothing else: rebound
    assert h.tolist() == [20.0, 40.0] and h.requires_grad
    h += h                                               # y is x: not another holder
    assert h.tolist() == [40.0, 80.0]
    w.grad = None
    h.sum().backward()
    assert w.grad.tolist() == [40.0, 40.0]
    h2 = mg.tensor([1.0, 2.0, 3.0], device=device, requires_grad=True) * 1
    with pytest.raises(ValueError, match=r"result has shape \(2, 3\)"):
        h2 += mg.ones(2, 3, device=device)
    i = mg.zeros(3, dtype=mg.int64, device=device)
    with pytest.raises(TypeError, match="cannot hold"):
        i += w.sum()


def _imul(h):
    h *= 10


def test_in_place_operators_refuse_what_they_cannot_do(device):
    i = mg.tensor([1, 2], device=device)
    with pytest.raises(TypeError, match="float32, which x of dtype int64 cannot hold"):
        i += 0.5
    with pytest.raises(TypeError, match="cannot hold"):
        i /= 2
    z = mg.zeros(2, device=device)
    with pytest.raises(ValueError, match=r"result has shape \(3, 2\), but x has shape \(2,\)"):
        z += mg.ones(3, 2, device=device)
    e = mg.zeros(1, 2, device=device).expand(3, 2)
    with pytest.raises(ValueError, match="broadcast view"):
        e += 1
    # t[i] = v and zero_() say the same (setitem's words were about shapes; on a GPU the
    # write would have reached every element sharing the memory)
    with pytest.raises(ValueError, match=r"setitem: the tensor is a broadcast view.*clone"):
        e[0, 0] = 5.0
    with pytest.raises(ValueError, match=r"zero_: the tensor is a broadcast view"):
        e.zero_()
    assert e.tolist() == [[0.0, 0.0]] * 3


def test_numpy_array_on_the_left():
    """array (op) tensor is the tensor op, as tensor (op) array; array += tensor writes into
    the array; another NumPy function of a tensor gives an array of its values. micrograd's
    `p.data += -lr * p.grad` writes into p's memory, as PyTorch's."""
    x = mg.tensor([1.0, 2.0], requires_grad=True)
    a = np.array([3.0, 4.0], dtype=np.float32)
    for got, want in ((a + x, [4.0, 6.0]), (a - x, [2.0, 2.0]), (a * x, [3.0, 8.0]),
                      (a / x, [3.0, 2.0]), (a ** x, [3.0, 16.0]), (a @ x, 11.0)):
        assert isinstance(got, mg.Tensor) and got.requires_grad and got.tolist() == want
    assert (a > x).tolist() == [True, True] and (a == x).tolist() == [False, False]
    g = mg.grad((a * x).sum(), x)[0]
    assert g.tolist() == [3.0, 4.0]
    data = x._data
    x.data += -0.5 * g                                   # stays the same array
    assert x._data is data and x.tolist() == [-0.5, 0.0]
    a += mg.tensor([1.0, 1.0])
    assert a.tolist() == [4.0, 5.0]
    e = np.exp(mg.tensor([0.0]))
    assert isinstance(e, np.ndarray) and e.tolist() == [1.0]
    with pytest.raises(TypeError, match="cannot write into a Tensor through out="):
        np.add(a, a, out=mg.zeros(2))


def test_changing_an_index_mask_or_target_after_forward_keeps_the_gradient_right(device):
    """Ops keep copies of their non-differentiable arguments (indices, masks, conditions,
    targets): changing the caller's tensor or array in place before backward does not move
    the gradient (PyTorch refuses that backward; silently using the new values would be
    wrong)."""
    x = mg.tensor([3.0, 1.0, 2.0], device=device, requires_grad=True)
    idx, mask = mg.tensor([0, 0], device=device), np.array([True, False, False])
    cond = mg.tensor([True, False, True], device=device)
    logits = mg.tensor([[2.0, 0.0, 0.0]], device=device, requires_grad=True)
    target = mg.tensor([0], device=device)
    y = ((x[idx] ** 2).sum() + (x.masked_fill(mg.tensor(mask, device=device), 0.0) ** 2).sum()
         + (mg.where(cond, x, 0.0) ** 2).sum() + x.gather(0, idx).sum()
         + F.embedding(idx, x[:, None]).sum() + F.cross_entropy(logits, target))
    with mg.no_grad():
        idx += 2
        cond[...] = False
        target[0] = 2
    mask[:] = True
    y.backward()
    # x[idx]²: 2·3·2 at 0; masked x²: 2x at 1, 2; where: 2x at 0, 2; gather, embedding: 2 each
    assert x.grad.tolist() == [12.0 + 6.0 + 2.0 + 2.0, 2.0, 4.0 + 4.0]
    assert logits.grad.numpy()[0, 0] < 0                 # the target is still class 0
    v = mg.tensor([1.0, 2.0], device=device)
    e = v[mg.tensor(1, device=device)]                   # a 0-d integer index is an int: a view
    with mg.no_grad():
        v[1] = 7.0
    assert e.item() == 7.0


def test_bitwise_operators_follow_the_dtype(device):
    """&, |, ^, ~ are logical on bool tensors and bitwise on integer ones (as PyTorch), also
    with a NumPy array or a Python int on the left; float tensors are refused. Comparisons of
    0-d tensors give 0-d tensors (not NumPy scalars), which can be written in place."""
    i = mg.tensor([5, 6], device=device)
    assert (i & 3).tolist() == [1, 2] and (i | 3).tolist() == [7, 7]
    assert (i ^ 3).tolist() == [6, 5] and (~i).tolist() == [-6, -7]
    assert (3 & i).tolist() == [1, 2] and (np.array([2, 3]) & mg.tensor([1, 1])).tolist() == [0, 1]
    b = mg.tensor([True, False], device=device)
    assert (b & True).tolist() == [True, False] and (~b).tolist() == [False, True]
    assert (b ^ mg.tensor([True, True], device=device)).tolist() == [False, True]
    with pytest.raises(TypeError, match="& needs bool or integer tensors, got float32"):
        mg.tensor([1.0], device=device) & 1
    with pytest.raises(TypeError, match="~ needs bool or integer"):
        ~mg.tensor([1.0], device=device)
    c = mg.tensor([1.0, 2.0], device=device)[0] > 0
    assert c.shape == () and "tensor(True" in repr(c)
    c.zero_()
    assert c.item() is False and mg.tensor([1.0, 3.0]).argmax(dim=0).shape == ()


def test_the_constructor_of_a_tensor_is_an_alias_that_counts_writes_with_it():
    """mg.Tensor(t) shares t's memory (as PyTorch's Tensor(t)), so a write through it is a
    write to t: a graph that saved t refuses to backward. mg.tensor(t) is a copy."""
    w = mg.tensor([[1.0, 2.0]], requires_grad=True)
    c = mg.tensor([[3.0, 4.0]])
    y = (w * c).sum()
    alias = mg.Tensor(c)
    alias.mul_(0)
    assert c.tolist() == [[0.0, 0.0]] and c._version == alias._version == 1
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.backward()
    copy = mg.tensor(c)
    copy.add_(1)
    assert c.tolist() == [[0.0, 0.0]] and c._version == 1 and copy._version == 1
    converted = mg.Tensor(c, dtype=mg.float64)           # a conversion is a new array
    converted.add_(1)
    assert c._version == 1
