"""PyTorch's trailing-underscore methods (add_, mul_, clamp_, masked_fill_, normal_ ...) and
add/sub's alpha=: each writes its out-of-place op's result into the tensor's memory, seen by
every view and counted in the version; in grad mode, where the tensor or an argument
requires grad, autograd records them instead (tests/test_inplace_autograd.py)."""
import re

import numpy as np
import pytest

import minigrad as mg

X = [[1.5, -2.0, 0.25], [3.0, 0.5, -0.75]]
# (method, its arguments, the same result out of place)
CASES = [
    ("add_", (2.0,), lambda x: x + 2.0),
    ("add_", ([1.0, 2.0, 3.0],), lambda x: x + np.array([1.0, 2.0, 3.0])),
    ("sub_", (0.5,), lambda x: x - 0.5),
    ("mul_", (3.0,), lambda x: x * 3.0),
    ("div_", (4.0,), lambda x: x / 4.0),
    ("pow_", (2,), lambda x: x ** 2),
    ("neg_", (), lambda x: -x),
    ("abs_", (), np.abs),
    ("exp_", (), np.exp),
    ("relu_", (), lambda x: np.maximum(x, 0)),
    ("clamp_", (-1.0, 1.0), lambda x: np.clip(x, -1, 1)),
    ("clip_", (None, 0.0), lambda x: np.minimum(x, 0)),
]


def _arg(a, device):
    return mg.tensor(a, device=device) if isinstance(a, list) else a


@pytest.mark.parametrize("name, args, want", CASES, ids=[f"{c[0]}{i}" for i, c in
                                                         enumerate(CASES)])
def test_writes_the_out_of_place_result_into_the_tensor(name, args, want, device):
    base = mg.tensor(X, device=device)
    row = base[1]                                       # a view: it must see the write
    x = mg.tensor(X, device=device)
    out = getattr(x, name)(*(_arg(a, device) for a in args))
    assert out is x and x._version == 1
    np.testing.assert_allclose(x.numpy(), want(np.array(X, np.float32)), rtol=1e-6)
    getattr(row, name)(*(_arg(a, device) for a in args))
    np.testing.assert_allclose(base.numpy()[1], want(np.array(X[1], np.float32)), rtol=1e-6)
    assert base._version == 1                           # the view's write counts for base


def test_same_as_torch():
    torch = pytest.importorskip("torch")
    for name, args, _ in CASES + [("sqrt_", (), None), ("log_", (), None)]:
        a = np.abs(np.array(X)) if name in ("sqrt_", "log_") else np.array(X)
        t, m = torch.tensor(a), mg.tensor(a)
        getattr(t, name)(*(torch.tensor(v, dtype=torch.float64) if isinstance(v, list) else v
                           for v in args))
        getattr(m, name)(*(mg.tensor(v, dtype=mg.float64) if isinstance(v, list) else v
                           for v in args))
        np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-12, err_msg=name)
    t, m = torch.tensor(X), mg.tensor(X)
    t.add_(torch.ones(3), alpha=-0.5).sub_(2.0, alpha=3)
    m.add_(mg.ones(3), alpha=-0.5).sub_(2.0, alpha=3)
    np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=1e-6)


def test_masked_fill_in_place(device):
    x = mg.tensor(X, device=device)
    assert x.masked_fill_(x < 0, 0.0) is x
    assert x.tolist() == [[1.5, 0.0, 0.25], [3.0, 0.5, 0.0]]
    with pytest.raises(ValueError, match="mask of shape"):
        x.masked_fill_(mg.ones(3, 3, dtype=mg.bool, device=device), 1.0)


def test_alpha_out_of_place_is_differentiable():
    a = mg.tensor([1.0, 2.0], dtype=mg.float64, requires_grad=True)
    b = mg.tensor([0.5, -1.0], dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(lambda a, b: a.add(b, alpha=2.5), (a, b))
    assert mg.gradcheck(lambda a, b: a.sub(b, alpha=-3), (a, b))
    a.sub(b, alpha=3).sum().backward()
    assert a.grad.tolist() == [1.0, 1.0] and b.grad.tolist() == [-3.0, -3.0]
    assert mg.add(a, b, alpha=2).tolist() == [2.0, 0.0]
    with pytest.raises(TypeError, match="alpha must be a number, got str"):
        a.add(b, alpha="2")


def test_alpha_scales_a_list_as_a_tensor_not_by_repeating_it(device):
    """o·alpha of a Python list repeated the list ([3.0] * 2 is [3.0, 3.0]): a wrong sum,
    or a broadcast error. As torch, x.add([3.0], alpha=2) is x + 6."""
    x = mg.tensor([1.0, 2.0], device=device)
    assert x.add([3.0], alpha=2).tolist() == [7.0, 8.0]
    assert x.sub((1.0, 2.0), alpha=3).tolist() == [-2.0, -4.0]
    assert x.add_([3.0], alpha=2) is x and x.tolist() == [7.0, 8.0]


def test_an_integer_tensor_takes_an_integer_alpha_only(device):
    """As torch: a float alpha would silently make add's result float (and index_add's, or
    torch truncates it to an integer); an integer alpha keeps the dtype."""
    i = mg.tensor([1, 2], device=device)
    for call in (lambda: i.add(mg.tensor([1, 1], device=device), alpha=0.5),
                 lambda: i.sub_(1, alpha=2.0),
                 lambda: i.index_add(0, mg.tensor([0], device=device),
                                     mg.tensor([3], device=device), alpha=0.5)):
        with pytest.raises(TypeError, match=r"alpha=.* for a tensor of dtype int64 alpha "
                                            r"must be an integer"):
            call()
    assert i.add(mg.tensor([1, 1], device=device), alpha=3).tolist() == [4, 5]
    assert i.dtype == mg.int64 and i._version == 0


def test_scatter_in_place_takes_reduce_as_scatter_does():
    x = mg.ones(3)
    x.scatter_(0, mg.tensor([0, 0, 2]), mg.full((3,), 2.0), reduce="multiply")
    assert x.tolist() == [4.0, 1.0, 2.0]                  # position 0 twice
    x.scatter_(0, mg.tensor([1]), 5.0, reduce="add")
    assert x.tolist() == [4.0, 6.0, 2.0]
    with pytest.raises(ValueError, match="reduce must be 'add' or 'multiply'"):
        x.scatter_(0, mg.tensor([0]), mg.ones(1), reduce="mean")


def test_a_parameter_changes_only_under_no_grad(device):
    w = mg.ones(2, 3, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match=r"add_: in-place change of a leaf tensor that "
                                           r"requires grad; do it under mg.no_grad\(\)"):
        w.add_(1.0)
    with mg.no_grad():                                   # a hand-written SGD step
        w.add_(mg.full((2, 3), 2.0, device=device), alpha=-0.5)
    assert w.tolist() == [[0.0] * 3] * 2 and w.requires_grad and w.is_leaf


def test_recorded_where_a_gradient_flows(device):
    """A write into a non-leaf, or of a value that requires grad into a plain tensor, is
    recorded by autograd, as PyTorch's (ops/inplace_autograd.py); a leaf that requires grad
    still refuses (test_a_parameter_changes_only_under_no_grad)."""
    w = mg.ones(3, device=device, requires_grad=True)
    h = w * 2
    assert h.mul_(3.0) is h and h.tolist() == [6.0] * 3 and h._version == 1
    x = mg.ones(3, device=device)
    x.add_(w, alpha=2.0)                                 # x now has a history
    assert not x.is_leaf and x.tolist() == [3.0] * 3
    (h + x).sum().backward()
    assert w.grad.tolist() == [8.0] * 3                  # 2·3 through h, 2 through x


def test_a_failed_recorded_write_kept_as_an_error_leaves_the_tensor_writable(device):
    """The error of a write that failed (a bad shape: in the op, in the check of its
    result, in x += y's rebinding) is kept, as pytest.raises or a notebook keeps the last
    one: its frames must not hold the tensor or its memory, or the next write is refused."""
    w = mg.ones(3, device=device, requires_grad=True)
    h = w * 2
    kept = []
    for bad in (mg.ones(2, device=device), mg.ones(2, 3, device=device)):
        with pytest.raises(ValueError) as info:
            h.add_(bad)
        kept.append(info)
        assert h.tolist() == [2.0] * 3 and h._version == 0
    g = w * 2
    with pytest.raises(ValueError) as info:
        g += mg.ones(2, 3, device=device)                # rebound (held by this name alone)
    kept.append(info)
    h.add_(mg.ones(3, device=device))
    g.mul_(2.0)
    (h + g).sum().backward()
    assert h.tolist() == [3.0] * 3 and w.grad.tolist() == [6.0] * 3


def test_a_write_into_a_saved_input_stops_backward(device):
    w = mg.ones(3, device=device, requires_grad=True)
    x = mg.tensor([1.0, 2.0, 3.0], device=device)
    y = (x * w).sum()                                    # saves x for w's gradient
    x.mul_(10.0)
    with pytest.raises(RuntimeError, match="modified by an in-place"):
        y.backward()


def test_dtype_and_shape_rules(device):
    i = mg.tensor([1, 2], device=device)
    with pytest.raises(TypeError, match="div_: the result is float32, which x of dtype int64"):
        i.div_(2)
    assert i.mul_(3).tolist() == [3, 6] and i.dtype == mg.int64
    with pytest.raises(ValueError, match=r"add_: the result has shape \(2, 3\), but x has "
                                         r"shape \(3,\)"):
        mg.ones(3, device=device).add_(mg.ones(2, 3, device=device))
    with pytest.raises(ValueError, match="broadcast view"):
        mg.ones(3, device=device).expand(2, 3).add_(1.0)


def test_random_fills(device):
    w = mg.zeros(200, 100, device=device, requires_grad=True)
    with pytest.raises(RuntimeError, match="normal_: in-place change of a leaf"):
        w.normal_()
    with mg.no_grad():
        assert w.normal_(0.0, 0.02, generator=0) is w
    assert abs(w.numpy().std() - 0.02) < 0.001 and abs(w.numpy().mean()) < 0.001
    again = mg.zeros(200, 100, device=device)
    np.testing.assert_array_equal(again.normal_(0.0, 0.02, generator=0).numpy(), w.numpy())
    u = mg.zeros(1000, device=device).uniform_(-0.1, 0.1)
    assert -0.1 <= u.numpy().min() < -0.09 and 0.09 < u.numpy().max() <= 0.1
    with pytest.raises(TypeError, match="floating-point"):
        mg.zeros(3, dtype=mg.int64, device=device).normal_()
    with pytest.raises(ValueError, match="uniform_: the tensor is a broadcast view"):
        mg.zeros(3, device=device).expand(2, 3).uniform_()     # (the op named, not setitem)


def test_in_place_methods_stay_on_the_device(spy):
    x = mg.tensor(X, device=spy)
    x.add_(mg.ones(3, device=spy), alpha=2).mul_(0.5).clamp_(-1, 1).exp_()
    x.masked_fill_(x > 2, 0.0)
    want = np.exp(np.clip((np.array(X, np.float32) + 2) * 0.5, -1, 1))
    np.testing.assert_allclose(x.numpy(), np.where(want > 2, 0, want), rtol=1e-6)


def test_scatter_and_index_add_in_place_as_torch(device):
    torch = pytest.importorskip("torch")
    idx = [[0, 1, 2, 0], [2, 0, 1, 1]]
    src = np.arange(8.0, dtype=np.float32).reshape(2, 4)
    t, m = torch.zeros(3, 4), mg.zeros(3, 4, device=device)
    t.scatter_(0, torch.tensor(idx[:1]), torch.tensor(src[:1], dtype=torch.float32))
    m.scatter_(0, mg.tensor(idx[:1], device=device), mg.tensor(src[:1], device=device))
    t.scatter_(1, torch.tensor([[3], [0], [1]]), value=-1.0)
    m.scatter_(1, mg.tensor([[3], [0], [1]], device=device), value=-1.0)
    t.scatter_add_(0, torch.tensor(idx), torch.tensor(src, dtype=torch.float32))
    m.scatter_add_(0, mg.tensor(idx, device=device), mg.tensor(src, device=device))
    t.index_add_(1, torch.tensor([3, 3]), torch.ones(3, 2), alpha=0.5)
    m.index_add_(1, mg.tensor([3, 3], device=device), mg.ones(3, 2, device=device), alpha=0.5)
    np.testing.assert_array_equal(m.numpy(), t.numpy())
    assert m._version == 4
    with pytest.raises(TypeError, match="either src"):
        m.scatter_(0, mg.tensor(idx[:1], device=device), 1.0, value=2.0)
    w = mg.zeros(3, 4, device=device, requires_grad=True)      # recorded: w gets its part
    m.scatter_add_(0, mg.tensor(idx, device=device), w[:2] * 2)
    m.sum().backward()
    assert w.grad.tolist() == [[2.0] * 4] * 2 + [[0.0] * 4]


# ops whose gradient reads no input or output values (+, -, sum, reshape, relu's saved mask):
# changing an input in place after them is fine, as in PyTorch, which checks only what an
# op saved; the BatchNorm pattern (use a buffer, then update it in place) relies on it
RELAXED = [lambda x, b: x + b, lambda x, b: x - b, lambda x, b: -x + b.sum(),
           lambda x, b: (x.reshape(3, 1) + b).sum(1), lambda x, b: x.relu() * 1 + b,
           lambda x, b: x.reshape(1, 3).expand(2, 3).sum(0) + b,
           lambda x, b: x.clamp(0, 1) + b, lambda x, b: x.flip(0)[:3] + b.unsqueeze(0)[0],
           lambda x, b: x.abs() + b.cumsum(0),
           lambda x, b: x.max(0).values + b.reshape(1, 3).T.T[0], lambda x, b: x.amax() + b.double().float()]
STRICT = [lambda x, b: x * b, lambda x, b: x / b, lambda x, b: (x * b).exp(),
          lambda x, b: x ** b, lambda x, b: (x + 1) * b.reshape(3)]


@pytest.mark.parametrize("fn", RELAXED, ids=range(len(RELAXED)))
def test_a_change_that_no_gradient_reads_is_allowed_as_in_torch(fn, device):
    torch = pytest.importorskip("torch")
    values = np.array([0.25, 0.75, 2.0])
    x = mg.tensor(values, device=device, requires_grad=True)
    b = mg.tensor(values[::-1].copy(), device=device)   # no grad: a buffer
    tx = torch.tensor(values, requires_grad=True)
    tb = torch.tensor(values[::-1].copy())
    y, ty = fn(x, b), fn(tx, tb)
    b.mul_(10.0)                                          # the buffer's in-place update
    tb.mul_(10.0)
    y.sum().backward()
    ty.sum().backward()
    np.testing.assert_allclose(x.grad.numpy(), tx.grad.numpy())


@pytest.mark.parametrize("fn", [lambda x: x[0], lambda x: x[[1, 1]], lambda x: x.sort(1)[0],
                                lambda x: x.gather(1, mg.tensor([[2], [0]], device=x.device)),
                                lambda x: x.sign(), lambda x: x.floor()],
                         ids=["slice", "repeated index", "sort", "gather", "sign", "floor"])
def test_a_change_of_the_indexed_tensor_itself_is_allowed(fn, device):
    """Indexing, sorting, gathering and the step functions read only indices and shapes in
    backward: x changed in place (under no_grad) after them leaves their gradient right,
    so it is not refused, as in PyTorch."""
    x = mg.tensor([[0.5, -1.5, 2.0], [3.0, 0.25, -4.0]], device=device, requires_grad=True)
    want = mg.tensor(x.numpy(), requires_grad=True)
    fn(want).sum().backward()
    y = fn(x)
    with mg.no_grad():
        x.zero_()
    y.sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), want.grad.numpy())


@pytest.mark.parametrize("fn", STRICT, ids=range(len(STRICT)))
def test_a_change_that_a_gradient_reads_still_raises(fn, device):
    x = mg.tensor([0.25, 0.75, 2.0], device=device, requires_grad=True)
    b = mg.tensor([1.0, 2.0, 3.0], device=device)
    y = fn(x, b)
    b.mul_(10.0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()


def test_setitem_refuses_a_number_the_dtype_cannot_hold_as_pytorch():
    """x[i] = nan (or inf) into an integer tensor, or 1e300 into float32: PyTorch's error,
    not NumPy's garbage (-2⁶³) or a message about shapes."""
    x, f = mg.tensor([1, 2]), mg.zeros(2)
    for t, v in ((x, float("nan")), (x, float("inf")), (f, 1e300)):
        with pytest.raises(ValueError, match=re.escape(f"setitem: value {v!r} cannot be "
                                                       f"converted to {t.dtype}")):
            t[0] = v
    x[0], f[0], f[1] = 2.7, float("nan"), float("inf")      # truncated; NaN and inf fit
    assert x.tolist() == [2, 2] and np.isnan(f.numpy()[0]) and f.numpy()[1] == np.inf
    h = mg.zeros(3, dtype=mg.float16)                       # float16 rounds or overflows,
    h[0], h[1], h[2] = 1e5, 65505.0, 1e300                  # as PyTorch's setitem
    assert h.tolist() == [np.inf, 65504.0, np.inf]


# the twins (tensor_inplace._TWINS): each name with arguments PyTorch takes, on X (made
# positive where the function wants it)
_P = [[0.5, 0.75, 0.25], [0.125, 0.5, 0.875]]
TWINS = [
    ("sigmoid_", ()), ("tanh_", ()), ("sin_", ()), ("cos_", ()), ("tan_", ()), ("sinh_", ()),
    ("cosh_", ()), ("exp2_", ()), ("expm1_", ()), ("log1p_", (), _P), ("log2_", (), _P),
    ("log10_", (), _P), ("erf_", ()), ("erfinv_", (), _P), ("lgamma_", (), _P),
    ("digamma_", (), _P), ("polygamma_", (1,), _P), ("logit_", (), _P), ("reciprocal_", ()),
    ("rsqrt_", (), _P), ("square_", ()), ("sign_", ()), ("floor_", ()), ("ceil_", ()),
    ("trunc_", ()), ("round_", ()), ("frac_", ()), ("nan_to_num_", ()), ("clamp_min_", (0.1,)),
    ("clamp_max_", (0.1,)), ("lerp_", ([1.0, 2.0, 3.0], 0.25)),
    ("addcmul_", ([1.0, 2.0, 3.0], [2.0, 0.5, -1.0]), X, {"value": 0.5}),
    ("addcdiv_", ([1.0, 2.0, 3.0], [2.0, 0.5, -1.0]), X, {"value": -2.0}),
    ("atan2_", ([1.0, -2.0, 3.0],)), ("arctan2_", ([1.0, -2.0, 3.0],)),
    ("fmod_", (0.75,)), ("remainder_", (0.75,)), ("floor_divide_", (0.75,)),
    ("true_divide_", (4.0,)), ("divide_", (4.0,)), ("divide_", (4.0,), X,
                                                    {"rounding_mode": "floor"}),
    ("multiply_", (3.0,)), ("subtract_", (1.0,), X, {"alpha": 2}), ("negative_", ()),
    ("absolute_", ()), ("xlogy_", ([1.0, 2.0, 3.0],), _P), ("cumsum_", (1,)),
    ("cumprod_", (0,)), ("tril_", ()), ("triu_", (1,)), ("eq_", (0.5,)), ("ne_", (0.5,)),
    ("lt_", (0.5,)), ("le_", (0.5,)), ("gt_", (0.5,)), ("ge_", (0.5,)), ("less_", (0.5,)),
    ("less_equal_", (0.5,)), ("greater_", (0.5,)), ("greater_equal_", (0.5,)),
    ("not_equal_", (0.5,)), ("logical_not_", ()), ("logical_and_", ([1.0, 0.0, 2.0],)),
    ("logical_or_", ([1.0, 0.0, 0.0],)), ("logical_xor_", ([1.0, 0.0, 2.0],)),
]


def _twin_case(case):
    name, args = case[:2]
    data = case[2] if len(case) > 2 else X
    return name, args, data, (case[3] if len(case) > 3 else {})


@pytest.mark.parametrize("case", TWINS, ids=[f"{c[0]}{i}" for i, c in enumerate(TWINS)])
def test_every_in_place_twin_writes_what_torch_writes(case):
    """x.f_(...) is x.f(...) written into x: the same values as PyTorch's, through a view
    of x too, counted in x's version."""
    torch = pytest.importorskip("torch")
    name, args, data, kwargs = _twin_case(case)
    t = torch.tensor(data, dtype=torch.float64)
    getattr(t, name)(*(torch.tensor(a, dtype=torch.float64) if isinstance(a, list) else a
                       for a in args), **kwargs)
    m = mg.tensor(data, dtype=mg.float64)
    view = m[:]
    assert getattr(m, name)(*(mg.tensor(a, dtype=mg.float64) if isinstance(a, list) else a
                              for a in args), **kwargs) is m
    # (torch's trigamma is off by 3e-10 at 0.5, where the exact value is π²/2: ours is not)
    rtol = 1e-9 if name == "polygamma_" else 1e-12
    np.testing.assert_allclose(m.numpy(), t.numpy(), rtol=rtol, atol=1e-15)
    np.testing.assert_array_equal(view.numpy(), m.numpy())
    assert m._version == 1 and m.dtype == mg.float64


SMOOTH = ("sigmoid_ tanh_ sin_ cos_ tan_ sinh_ cosh_ exp2_ expm1_ log1p_ log2_ log10_ erf_ "
          "erfinv_ lgamma_ digamma_ polygamma_ logit_ reciprocal_ rsqrt_ square_ clamp_min_ "
          "clamp_max_ lerp_ addcmul_ addcdiv_ atan2_ arctan2_ fmod_ remainder_ true_divide_ "
          "divide_ multiply_ subtract_ negative_ absolute_ xlogy_ cumsum_ cumprod_ tril_ "
          "triu_ floor_ sign_ round_").split()


@pytest.mark.parametrize("case", [c for c in TWINS if c[0] in SMOOTH],
                         ids=lambda c: c[0])
def test_twins_are_recorded_with_torchs_gradients(case):
    """A twin on a tensor with a history is recorded: the gradients that reach the leaves
    (x, and an argument that requires grad) are PyTorch's."""
    torch = pytest.importorskip("torch")
    name, args, data, kwargs = _twin_case(case)
    grads = []
    for lib in (torch, mg):
        x = lib.tensor(data, dtype=lib.float64, requires_grad=True)
        others = [lib.tensor(a, dtype=lib.float64, requires_grad=True)
                  for a in args if isinstance(a, list)]
        it = iter(others)
        h = x * 1.0
        getattr(h, name)(*(next(it) if isinstance(a, list) else a for a in args), **kwargs)
        (h * lib.tensor([1.0, -2.0, 0.5], dtype=lib.float64)).sum().backward()
        grads.append([x.grad.numpy()] + [o.grad.numpy() for o in others])
    for ours, theirs in zip(grads[1], grads[0]):
        np.testing.assert_allclose(ours, theirs, rtol=1e-9, atol=1e-12)


def test_twins_keep_the_rules_of_in_place_writes():
    w = mg.ones(3, requires_grad=True)
    with pytest.raises(RuntimeError, match="lerp_: in-place change of a leaf"):
        w.lerp_(mg.zeros(3), 0.5)
    with mg.no_grad():                                    # an EMA of weights
        w.lerp_(mg.zeros(3), 0.25)
    assert w.tolist() == [0.75] * 3
    with pytest.raises(TypeError, match="sigmoid_: the result is float32, which x of dtype "
                                        "int64 cannot hold"):
        mg.tensor([1, 2]).sigmoid_()
    with pytest.raises(ValueError, match="cannot change x's shape"):
        mg.ones(3).addcmul_(mg.ones(2, 3), mg.ones(3))


def test_index_fill_and_fill_diagonal_as_torch(device):
    torch = pytest.importorskip("torch")
    for shape, wrap in (((7, 3), True), ((7, 3), False), ((3, 5), True), ((2, 2, 2), False),
                        ((1, 1), False), ((8, 3), True)):
        m = mg.zeros(*shape, device=device)
        assert m.fill_diagonal_(1.5, wrap=wrap) is m
        np.testing.assert_array_equal(m.numpy(), torch.zeros(*shape).fill_diagonal_(
            1.5, wrap=wrap).numpy(), err_msg=f"{shape} {wrap}")
    for dim, index, value in ((1, [-1, 0], 5.0), (0, 1, 2.0), (0, [0, 0], -1.0)):
        m = mg.arange(12, dtype=mg.float32, device=device).reshape(3, 4)
        m.index_fill_(dim, mg.tensor(index, device=device), value)
        t = torch.arange(12, dtype=torch.float32).reshape(3, 4)
        t.index_fill_(dim, torch.tensor(index), value)
        np.testing.assert_array_equal(m.numpy(), t.numpy())
    m = mg.ones(2, 3, device=device).index_fill_(-1, mg.tensor([2], device=device),
                                                 mg.tensor(7.0, device=device))
    assert m.tolist() == [[1.0, 1.0, 7.0]] * 2
    for lib in (torch, mg):                               # recorded: filled places get 0
        a = lib.ones(3, 3, requires_grad=True)
        h = a * 2
        h.fill_diagonal_(0.0).index_fill_(0, lib.tensor([0, 0]), 0.0)
        h.sum().backward()
        assert a.grad.tolist() == [[0.0] * 3, [2.0, 0.0, 2.0], [2.0, 2.0, 0.0]]


def test_index_fill_and_fill_diagonal_say_what_was_wrong():
    x = mg.zeros(3, 4)
    for call, error, words in (
            (lambda: x.index_fill_(1, mg.tensor([4]), 5.0), IndexError, "out of range"),
            (lambda: x.index_fill_(0, mg.tensor([[1]]), 2.0), TypeError, "1-D or 0-d"),
            (lambda: x.index_fill_(0, mg.tensor([1.0]), 2.0), TypeError, "integers"),
            (lambda: x.index_fill_(0, mg.tensor([1]), mg.tensor([2.0])), ValueError, "0-d"),
            (lambda: mg.zeros(2, 3, 3).fill_diagonal_(1), ValueError, "equal length"),
            (lambda: mg.zeros(3).fill_diagonal_(1), ValueError, "2 dims"),
            (lambda: x.fill_diagonal_(mg.ones(2)), TypeError, "a number"),
            (lambda: x.cumsum_(0, dtype=mg.float64), TypeError, "dtype=float64 differs")):
        with pytest.raises(error, match=words):
            call()
    assert x.tolist() == [[0.0] * 4] * 3
    assert x.fill_diagonal_(mg.tensor(2.0)).diagonal().tolist() == [2.0] * 3   # 0-d: a number


def test_index_fill_and_fill_diagonal_refuse_what_fill_refuses():
    """As PyTorch: a 0-d tensor's one slice is index 0 (or -1), and a float16 tensor holds
    no 1e6; refused as fill_ refuses it, not written (the 0-d tensor filled, inf)."""
    t = mg.tensor(1.0)
    with pytest.raises(IndexError, match="index 1 is out of range for a 0-d"):
        t.index_fill_(0, mg.tensor([1]), 2.0)
    assert t.item() == 1.0 and t.index_fill_(0, mg.tensor([-1]), 2.0).item() == 2.0
    h = mg.zeros(3, 3, dtype=mg.float16)
    for call in (lambda: h.index_fill_(0, mg.tensor([0]), 1e6),
                 lambda: h.fill_diagonal_(-7e4)):
        with pytest.raises(ValueError, match="float16 without overflow"):
            call()
    assert h.tolist() == [[0.0] * 3] * 3
    u = mg.zeros(2, 2, dtype=mg.uint8)                    # -1 still wraps to 255
    assert u.fill_diagonal_(-1).index_fill_(1, mg.tensor([1]), -2).tolist() == \
        [[255, 254], [0, 254]]
