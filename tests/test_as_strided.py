"""as_strided over a tensor's storage (ops/as_strided.py): values and gradients as
PyTorch's, overlapping windows, views versus copies, as_strided_, as_strided_scatter,
as_strided_copy and empty_strided."""
import numpy as np
import pytest

import minigrad as mg

D = mg.float64
# (input maker, size, stride, storage_offset): contiguous, a view's storage (offset before
# the view's first element), a transposed input, sliding windows, stride 0, interleaved
CASES = [
    (lambda t: t, (2, 2), (3, 1), None),
    (lambda t: t[1:], (2, 3), (1, 2), 0),
    (lambda t: t[1:, 1:], (3,), (1,), None),
    (lambda t: t.t(), (3, 2), (1, 3), 1),
    (lambda t: t, (4, 3), (2, 1), 1),                 # overlapping sliding windows
    (lambda t: t, (2, 3, 2), (0, 2, 1), 3),           # a stride-0 (broadcast) dim
    (lambda t: t, (2, 2), (2, 3), 0),                 # interleaved, not overlapping
    (lambda t: t, (0, 3), (5, 1), 12),                # no elements, offset at the end
]


def _grad_pair(make, size, stride, offset, lib, base):
    """(values, base's gradient) of make(base * 1).as_strided(...) for a fixed weight."""
    out = make(base * 1).as_strided(size, stride, offset)
    w = lib.arange(1.0, out.numel() + 1, dtype=lib.float64).reshape(out.shape)
    (out * w).sum().backward()
    return out.detach().numpy(), base.grad.numpy()


@pytest.mark.parametrize("case", CASES, ids=[str(c[1:]) for c in CASES])
def test_values_and_gradients_as_torch(torch, case):
    make, size, stride, offset = case
    a = np.arange(12.0).reshape(3, 4) / 7
    mine = _grad_pair(make, size, stride, offset, mg, mg.tensor(a, requires_grad=True))
    ref = _grad_pair(make, size, stride, offset, torch,
                     torch.tensor(a, requires_grad=True))
    for m, r in zip(mine, ref):
        np.testing.assert_allclose(m, r, rtol=1e-12)


def test_gradient_of_a_broadcast_input_is_shared_as_torch(torch):
    """x's elements sharing a place (an expanded x) split the place's gradient."""
    def run(lib):
        b = lib.tensor([1.0, 2.0], dtype=lib.float64, requires_grad=True)
        b.expand(3, 2).as_strided((2, 2), (0, 1)).pow(2).sum().backward()
        return b.grad.numpy()
    np.testing.assert_allclose(run(mg), run(torch))


GRADCHECKED = [c for i, c in enumerate(CASES[:7]) if i != 1]   # (1 reads outside x: no grad)


@pytest.mark.parametrize("case", GRADCHECKED, ids=[str(c[1:]) for c in GRADCHECKED])
def test_gradcheck(case):
    make, size, stride, offset = case
    x = mg.tensor(np.random.default_rng(0).standard_normal((3, 4)), requires_grad=True)
    assert mg.gradcheck(lambda t: make(t * 1).as_strided(size, stride, offset).sin(), (x,))


def test_second_derivative_through_overlapping_windows():
    x = mg.tensor(np.linspace(-1, 1, 6), requires_grad=True)
    g, = mg.grad((x.as_strided((4, 3), (1, 1)) ** 3).sum(), (x,), create_graph=True)
    assert mg.gradcheck(lambda t: mg.grad((t.as_strided((4, 3), (1, 1)) ** 3).sum(), (t,),
                                          create_graph=True)[0], (x,))
    # each element appears in min(i + 1, 3, 6 - i) windows: d²/dx² of Σ x³ there
    np.testing.assert_allclose(mg.grad(g.sum(), (x,))[0].numpy(),
                               6 * x.detach().numpy() * np.array([1, 2, 3, 3, 2, 1]))


def test_distinct_windows_are_a_view_written_through_as_torch(torch):
    def run(lib):
        base = lib.arange(6.0, dtype=lib.float64, requires_grad=True)
        h = base * 1
        v = h.as_strided((2, 2), (1, 3))          # h[0], h[3], h[1], h[4]
        v.mul_(10)
        (h * lib.arange(6.0, dtype=lib.float64)).sum().backward()
        return h.detach().numpy(), base.grad.numpy()
    for m, r in zip(run(mg), run(torch)):
        np.testing.assert_allclose(m, r)
    x = mg.zeros(4)
    x.as_strided((2,), (2,), 1).fill_(1.0)           # no graph: straight into the memory
    np.testing.assert_array_equal(x.numpy(), [0, 1, 0, 1])


def test_overlapping_windows_are_a_copy_and_broadcast_ones_refuse_writes():
    x = mg.arange(5.0)
    w = x.as_strided((3, 3), (1, 1))
    w.add_(1.0)                                      # a copy: x keeps its values
    np.testing.assert_array_equal(x.numpy(), np.arange(5.0))
    b = x.as_strided((2, 3), (0, 1))
    assert b._version_counter is x._version_counter  # a view, as expand's
    with pytest.raises(ValueError, match="broadcast view"):
        b.add_(1.0)


def test_a_view_of_a_view_reads_the_first_ones_storage():
    h = mg.arange(10.0)
    v = h[2:].as_strided((2, 2), (2, 1))             # offset 2 (v's): h[2], h[3], h[4], h[5]
    np.testing.assert_array_equal(v.as_strided((3,), (1,), 0).numpy(), [0, 1, 2])
    assert v.storage_offset() == 2


def test_errors_as_torch():
    x = mg.arange(4.0)
    with pytest.raises(RuntimeError, match="requiring a storage size of 28 are out of "
                                           "bounds for storage of size 16"):
        x.as_strided((2,), (1,), 5)
    with pytest.raises(RuntimeError, match="Negative strides"):
        x.as_strided((2,), (-1,))
    with pytest.raises(RuntimeError, match="mismatch in length of strides and shape"):
        x.as_strided((2, 2), (1,))
    with pytest.raises(RuntimeError, match="invalid storage offset -1"):
        x.as_strided((2,), (1,), -1)
    with pytest.raises(RuntimeError, match="negative dimension"):
        x.as_strided((-1,), (1,))
    with pytest.raises(TypeError, match="size must be a sequence of ints"):
        x.as_strided((2.0,), (1,))
    assert x.as_strided((0,), (1,), 7).shape == (0,)   # no elements need no storage


def test_top_level_and_copy():
    x = mg.arange(6.0)
    np.testing.assert_array_equal(mg.as_strided(x, (2, 2), (1, 2)).numpy(),
                                  [[0, 2], [1, 3]])
    c = mg.as_strided_copy(x[1:], (2,), (1,), 0)
    x.add_(1.0)
    np.testing.assert_array_equal(c.numpy(), [0, 1])


def test_as_strided_in_place_as_torch(torch):
    def run(lib):
        t = lib.arange(6.0)
        v = t[1:]
        assert v.as_strided_((2, 2), (1, 2), 1) is v
        v.mul_(-1)                                   # still t's memory
        return v.numpy().copy(), t.numpy().copy(), v.stride()
    mine, ref = run(mg), run(torch)
    for m, r in zip(mine[:2], ref[:2]):
        np.testing.assert_array_equal(m, r)
    assert tuple(mine[2]) == tuple(ref[2])


def test_as_strided_in_place_in_a_graph_and_its_refusals():
    base = mg.arange(6.0, dtype=D, requires_grad=True)
    h = base * 2
    h.as_strided_((2,), (3,), 1)                     # recorded as the view op
    (h * h).sum().backward()
    np.testing.assert_allclose(base.grad.numpy(), [0, 8, 0, 0, 32, 0])
    with pytest.raises(RuntimeError, match="leaf tensor that requires grad"):
        base.as_strided_((2,), (1,))
    with pytest.raises(RuntimeError, match="share memory"):
        mg.zeros(4).as_strided_((2, 2), (1, 1))


def test_as_strided_scatter_as_torch(torch):
    """Values as PyTorch's (a transposed x: its memory order, its storage); src's gradient as PyTorch's, x's the weights where x was kept, 0 where src went
    (PyTorch 2.13 gives the reverse, its own gradcheck failing, and refuses a non-contiguous
    x that requires grad: not compared)."""
    a = np.arange(12.0).reshape(3, 4)
    for make, size, stride, offset in [(lambda t: t, (2, 2), (1, 4), 1),
                                       (lambda t: t.t(), (3,), (4,), 0),
                                       (lambda t: t[1:], (2,), (1,), None)]:
        src = -np.arange(1.0, 1 + np.prod(size)).reshape(size)
        ref = make(torch.tensor(a)).as_strided_scatter(torch.tensor(src), size, stride, offset)
        x, s = mg.tensor(a, requires_grad=True), mg.tensor(src, requires_grad=True)
        out = make(x * 1).as_strided_scatter(s * 1, size, stride, offset)
        np.testing.assert_array_equal(out.detach().numpy(), ref.numpy())
        w = np.arange(out.numel(), dtype=float).reshape(out.shape)
        (out * mg.tensor(w)).sum().backward()
        kept = out.detach().numpy() == make(mg.tensor(a)).numpy()
        np.testing.assert_array_equal(make(x.grad).numpy(), np.where(kept, w, 0))
        np.testing.assert_array_equal(np.sort(s.grad.numpy(), None),
                                      np.sort(w[~kept], None))
    ts = torch.tensor(src, requires_grad=True)
    torch.tensor(a).as_strided_scatter(ts, size, stride, offset).mul(
        torch.tensor(np.arange(12.0).reshape(3, 4))).sum().backward()
    s = mg.tensor(src, requires_grad=True)
    mg.tensor(a).as_strided_scatter(s, size, stride, offset).mul(
        mg.tensor(np.arange(12.0).reshape(3, 4))).sum().backward()
    np.testing.assert_array_equal(s.grad.numpy(), ts.grad.numpy())


SCATTER_VIEWS = [(lambda t: t[1:], (2, 2), (1, 4), 1),        # places before the view
                 (lambda t: t[1:], (3,), (2,), 5),             # past the view's own size
                 (lambda t: t[:, 1:], (2, 2), (1, 3), 1),      # a place off the slice
                 (lambda t: t[:, ::2], (3,), (2,), 0),
                 (lambda t: t.t()[1:], (3,), (2,), 0),
                 (lambda t: t[:, 1:], (2,), (1,), None)]      # the slice's own offset


@pytest.mark.parametrize("case", SCATTER_VIEWS, ids=[f"{i}-{c[1:]}" for i, c in enumerate(SCATTER_VIEWS)])
def test_as_strided_scatter_counts_places_in_the_storage_as_torch(torch, case):
    """A view's or strided slice's places and offset count in its storage, as as_strided's
    (PyTorch's too): places that hold none of x's elements are dropped, src's values
    there get no gradient."""
    make, size, stride, offset = case
    a = np.arange(12.0).reshape(3, 4)
    src = -np.arange(1.0, 1 + np.prod(size)).reshape(size)
    ref = make(torch.tensor(a)).as_strided_scatter(torch.tensor(src), size, stride, offset)
    x, s = mg.tensor(a, requires_grad=True), mg.tensor(src, requires_grad=True)
    out = make(x).as_strided_scatter(s, size, stride, offset)
    np.testing.assert_array_equal(out.detach().numpy(), ref.numpy())
    w = np.arange(1.0, out.numel() + 1).reshape(out.shape)
    (out * mg.tensor(w)).sum().backward()
    kept = out.detach().numpy() >= 0                 # (src's values are all negative)
    want = mg.zeros(3, 4, dtype=D)
    make(want).copy_(mg.tensor(np.where(kept, w, 0)))
    np.testing.assert_array_equal(x.grad.numpy(), want.numpy())
    got = {v: wi for v, wi in zip(out.detach().numpy()[~kept], w[~kept])}
    np.testing.assert_array_equal(s.grad.numpy(), np.vectorize(lambda v: got.get(v, 0))(src))
    assert mg.gradcheck(lambda t, u: make(t).as_strided_scatter(u, size, stride, offset),
                        (x, s))


def test_as_strided_scatter_gradcheck_and_errors():
    x = mg.tensor(np.random.default_rng(1).standard_normal((2, 3)), requires_grad=True)
    s = mg.tensor([0.5, -0.25], dtype=D, requires_grad=True)
    assert mg.gradcheck(lambda a, b: mg.as_strided_scatter(a, b, (2,), (2,), 1) ** 2,
                        (x, s))
    with pytest.raises(RuntimeError, match="single memory location"):
        x.as_strided_scatter(s, (2,), (0,))
    with pytest.raises(RuntimeError, match="src size = \\[2\\], slice size = \\[3\\]"):
        x.as_strided_scatter(s, (3,), (1,))


def test_empty_strided_follows_the_strides(torch):
    e = mg.empty_strided((2, 3), (1, 2), dtype=D, requires_grad=True)
    assert e.stride() == torch.empty_strided((2, 3), (1, 2)).stride() == (1, 2)
    assert e.dtype == D and e.requires_grad and e.is_leaf
    assert mg.empty_strided((3, 2), (1, 1)).shape == (3, 2)    # overlapping: contiguous
    with pytest.raises(RuntimeError, match="mismatch in length"):
        mg.empty_strided((2, 3), (1,))
    with pytest.raises(RuntimeError, match="^empty_strided: Negative strides"):
        mg.empty_strided((2, 2), (-1, 1))


def test_goes_through_the_device_backend(spy):
    x = mg.arange(6.0, dtype=D, device=spy, requires_grad=True)
    y = x.as_strided((4, 3), (1, 1))
    y.sum().backward()
    assert y.device == spy and x.grad.device == spy
    np.testing.assert_array_equal(x.grad.numpy(), [1, 2, 3, 3, 2, 1])
