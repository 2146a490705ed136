"""In-place shape changes (t_, transpose_/swapdims_/swapaxes_, squeeze_, unsqueeze_,
resize_, resize_as_), as PyTorch's: the tensor becomes another view of its memory, other
views keep their shapes, the version goes up; in a graph, recorded as the view op
(ops/inplace_shape.py)."""
import numpy as np
import pytest

import minigrad as mg

CHANGES = [                                   # (method, arguments, shape of a (1, 2, 1, 3))
    ("t_", (), None),
    ("transpose_", (0, 3), (3, 2, 1, 1)),
    ("swapdims_", (-1, 1), (1, 3, 1, 2)),
    ("swapaxes_", (1, 1), (1, 2, 1, 3)),
    ("squeeze_", (), (2, 3)),
    ("squeeze_", (2,), (1, 2, 3)),
    ("squeeze_", (1,), (1, 2, 1, 3)),          # not a dim of 1: the shape stays
    ("squeeze_", ((0, -2),), (2, 3)),
    ("unsqueeze_", (-1,), (1, 2, 1, 3, 1)),
]


@pytest.mark.parametrize("name, args, shape", CHANGES)
def test_a_shape_change_is_a_new_view_of_the_same_memory(name, args, shape):
    a = mg.arange(6.0).reshape(1, 2, 1, 3)
    if shape is None:                          # t_: a matrix
        a, shape = a.reshape(2, 3), (3, 2)
    row = a.reshape(-1)[:3]                    # a view made before: keeps its shape
    want = getattr(a.numpy().copy(), "transpose" if name == "t_" else "copy")()
    assert getattr(a, name)(*args) is a
    assert a.shape == shape and a._version == 1 and row._version == 1 and a.is_leaf
    if name != "t_":
        want = getattr(mg.arange(6.0).reshape(1, 2, 1, 3), name[:-1])(*args).numpy()
    np.testing.assert_array_equal(a.numpy(), want)
    a[(0,) * a.ndim] = 100.0                   # the same memory as the view's
    assert row.shape == (3,) and row.tolist() == [100.0, 1.0, 2.0]


def test_t_of_one_and_zero_dims_and_the_argument_errors():
    for shape in ((3,), ()):
        x = mg.ones(*shape)
        assert x.t_() is x and x.shape == shape and x._version == 1
    x = mg.ones(2, 3)
    for bad, error, match in ((lambda: mg.ones(2, 3, 4).t_(), ValueError, "at most 2 dims"),
                              (lambda: x.transpose_(0, 2), IndexError, "dim 2 out of range"),
                              (lambda: x.squeeze_(5), IndexError, "dim 5 out of range"),
                              (lambda: x.unsqueeze_(3), IndexError, "dim 3 out of range"),
                              (lambda: x.squeeze_(1.0), TypeError, "must be an int")):
        with pytest.raises(error, match=match):
            bad()
    assert x.shape == (2, 3) and x._version == 0


def test_in_a_graph_the_change_is_recorded_as_its_view_op():
    x = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], requires_grad=True)
    h = x * 2
    v = h[0]                                   # a view of h made before
    seen = []
    h.register_hook(lambda g: seen.append(g.shape))   # the old value's, as torch's
    assert h.t_() is h
    assert h.shape == (3, 2) and h._version == 1 and v._version == 1 and not h.is_leaf
    assert type(h.grad_fn).__name__ == "Permute"          # torch: TBackward0
    assert type(h.grad_fn.inputs[0].grad_fn).__name__ == "Mul"    # the old history
    h.retain_grad()
    w = mg.arange(6.0).reshape(3, 2)
    ((h * w).sum() + 10 * v.sum()).backward()
    assert x.grad.tolist() == [[20.0, 24.0, 28.0], [2.0, 6.0, 10.0]]
    assert h.grad.shape == (3, 2) and seen == [(2, 3)] and v.shape == (3,)


def test_changes_of_views_in_a_graph_and_writes_after_them():
    x = mg.ones(2, 3, requires_grad=True)
    h = x * 1
    w = h[0:1]
    w.squeeze_(0).unsqueeze_(1)                # a view's own shape: h keeps its own
    assert w.shape == (3, 1) and h.shape == (2, 3)
    w.mul_(2)                                  # written into h's memory, through w
    assert h.tolist() == [[2.0] * 3, [1.0] * 3]
    h.sum().backward()
    assert x.grad.tolist() == [[2.0] * 3, [1.0] * 3]
    x.grad = None
    h = x * 1
    v = h[0]
    h.t_()
    h[0, 1] = 5.0                              # x[1, 0]'s place: v does not see it
    (v.sum() + h.sum()).backward()
    assert v.tolist() == [1.0] * 3 and x.grad.tolist() == [[2.0] * 3, [0.0, 1.0, 1.0]]
    x.grad = None
    a, b = (x * 1).unbind(0)                  # (torch refuses unbind's slices; fine here)
    a.unsqueeze_(0)
    (3 * a.sum() + b.sum()).backward()
    assert a.shape == (1, 3) and x.grad.tolist() == [[3.0] * 3, [1.0] * 3]


def test_second_derivative_through_a_change():
    x = mg.tensor([[1.0, 2.0, 3.0], [4.0, 5.0, 6.0]], dtype=mg.float64, requires_grad=True)
    h = x * x
    h.transpose_(0, 1)
    g, = mg.grad((h * h).sum(), x, create_graph=True)        # 4x³
    gg, = mg.grad(g.sum(), x)                                 # 12x²
    np.testing.assert_allclose(gg.numpy(), 12 * x.numpy() ** 2)


def test_refusals_say_why_and_change_nothing():
    x = mg.ones(2, 3, requires_grad=True)
    with pytest.raises(RuntimeError, match="t_: in-place change of a leaf tensor"):
        x.t_()
    for view in (x[0], x.view(3, 2)):
        with pytest.raises(RuntimeError, match="a view of a leaf tensor that requires grad"):
            view.unsqueeze_(0)
    h, e = x * 1, x.exp()
    y = h.sin()                                # ops that saved h's (or e's) values refuse
    h.t_()                                     # their backward, as torch's (the version
    e.t_()                                     # moved)
    for out in (y, e):
        with pytest.raises(RuntimeError, match="modified by an in-place operation"):
            out.sum().backward()
    h = x * 1
    with mg.no_grad(), pytest.raises(RuntimeError, match="would not be recorded"):
        h.t_()                                 # (torch goes on and its backward fails)
    assert x.shape == h.shape == (2, 3) and x._version == h._version == 0
    p = mg.ones(2, 3, requires_grad=True)
    used = (p * 2).sum()
    with mg.no_grad(), pytest.raises(RuntimeError, match="gradient of its old shape"):
        p.t_()
    assert p.shape == (2, 3) and p._version == 0
    used.backward()
    with mg.no_grad():                         # no graph uses it now: as torch
        p.t_()
    assert p.shape == (3, 2) and p.is_leaf and p.grad.shape == (2, 3)


def test_as_torch():
    torch = pytest.importorskip("torch")
    for name, args, _ in CHANGES[1:]:
        t = torch.arange(6.0, requires_grad=True)
        m = mg.arange(6.0, requires_grad=True)
        ht, hm = t.reshape(1, 2, 1, 3) * 1, m.reshape(1, 2, 1, 3) * 1
        getattr(ht, name)(*args)
        getattr(hm, name)(*args)
        assert hm.shape == tuple(ht.shape) and hm._version == ht._version
        weights = np.arange(6.0, dtype=np.float32).reshape(ht.shape)
        (ht * torch.tensor(weights)).sum().backward()
        (hm * mg.tensor(weights)).sum().backward()
        np.testing.assert_array_equal(hm.detach().numpy(), ht.detach().numpy())
        np.testing.assert_array_equal(m.grad.numpy(), t.grad.numpy())


def test_resize_lays_the_memory_out_anew_as_torch():
    a = mg.arange(6.0)
    assert a.resize_(2, 2) is a and a.tolist() == [[0.0, 1.0], [2.0, 3.0]] and a._version == 1
    a.resize_(3, 3)                            # more: new memory, the old values first
    assert a.reshape(-1).tolist()[:6] == [0.0, 1.0, 2.0, 3.0, 4.0, 5.0] and a._version == 2
    t = mg.arange(6.0).reshape(2, 3).t()
    t.resize_(3, 2)                            # the same shape: nothing changes
    assert t.tolist() == [[0.0, 3.0], [1.0, 4.0], [2.0, 5.0]] and t._version == 0
    t.resize_(2, 3)                            # else the memory in order, from the start
    assert t.tolist() == [[0.0, 1.0, 2.0], [3.0, 4.0, 5.0]] and t._version == 1
    base = mg.arange(6.0).reshape(2, 3)
    s = base[:, 1:]                            # from its first element to the memory's end
    s.resize_(5)
    assert s.tolist() == [1.0, 2.0, 3.0, 4.0, 5.0]
    s[0] = 10.0                                # still base's memory
    assert base[0, 1].item() == 10.0
    assert mg.ones(3).resize_(()).shape == () and mg.ones(3).resize_((0,)).shape == (0,)
    r = mg.arange(4).resize_as_(mg.zeros(1, 2, requires_grad=True))
    assert r.tolist() == [[0, 1]] and r.dtype == mg.int64 and not r.requires_grad


def test_resize_refusals():
    x = mg.ones(3, requires_grad=True)
    for requires in (x, x * 1):
        with pytest.raises(RuntimeError, match="cannot resize a tensor that requires grad"):
            requires.resize_(2)
    with mg.no_grad(), pytest.raises(RuntimeError, match="requires grad"):
        x.resize_(2)
    a = mg.arange(6.0)
    view = a[:3]
    with pytest.raises(RuntimeError, match="more memory than the tensor's, which other"):
        a.resize_(10)                          # the view would keep the old memory
    with pytest.raises(RuntimeError, match="more memory"):
        view.resize_(7)
    n = np.arange(4.0)
    with pytest.raises(RuntimeError, match="more memory"):
        mg.from_numpy(n).resize_(5)
    assert a.shape == (6,) and a._version == 0
    for bad, error, match in ((lambda: a.resize_(-1), ValueError, "non-negative"),
                              (lambda: a.resize_(2.0), TypeError, "must be integers"),
                              (lambda: a.resize_as_([1, 2]), TypeError, "expected a Tensor")):
        with pytest.raises(error, match=match):
            bad()


def test_shape_changes_stay_on_the_device(spy):
    x = mg.arange(6.0, device=spy, requires_grad=True)
    h = x.reshape(2, 3) * 1
    h.t_().unsqueeze_(0).squeeze_()
    (h * mg.arange(6.0, device=spy).reshape(3, 2)).sum().backward()
    assert h.device == x.grad.device == spy and h.shape == (3, 2)
    np.testing.assert_array_equal(x.grad.numpy(), [0.0, 2.0, 4.0, 1.0, 3.0, 5.0])
    a = mg.arange(6.0, device=spy).resize_(2, 2)
    assert a.device == spy and a.tolist() == [[0.0, 1.0], [2.0, 3.0]]
