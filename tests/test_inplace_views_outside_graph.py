"""A recorded write into a view made outside the graph, of a tensor that needs no grad
(ops/inplace_views.py, autograd._note_view_base): makemore's hand-written backward does
`dC[ix] += demb[k, j]`, dC a zeros_like, demb needing grad. As PyTorch's, the base then
requires grad and the view reads its new values; what PyTorch refuses stays refused."""
import pytest

import minigrad as mg


def _w(n=3, value=1.0, device="cpu"):
    return mg.full((n,), value, dtype=mg.float64, device=device, requires_grad=True)


def test_an_augmented_index_write_makes_the_base_a_function_of_the_value(device):
    w, d = _w(device=device), mg.zeros(4, 3, dtype=mg.float64, device=device)
    d[mg.tensor(2, device=device)] += w * 3        # a 0-d index: a view, as PyTorch's
    d[1] += w
    assert d.requires_grad and d.grad_fn is not None and d.tolist()[1:3] == [[1.0] * 3,
                                                                            [3.0] * 3]
    (d * mg.arange(4, dtype=mg.float64, device=device).view(4, 1)).sum().backward()
    assert w.grad.tolist() == [7.0] * 3            # 1·1 + 2·3


def test_the_view_written_reads_the_base_new_values(device):
    w, d = _w(value=2.0, device=device), mg.ones(2, 3, dtype=mg.float64, device=device)
    v = d.t()[1:]                                    # columns 1 and 2, transposed
    v.mul_(w[:2].unsqueeze(1))
    assert v.grad_fn is not None and d.tolist() == [[1.0, 2.0, 2.0]] * 2
    (v.sum() + d.sum()).backward()                  # v's path and d's
    assert w.grad.tolist() == [4.0, 4.0, 0.0]             # 2 rows, twice


def test_the_whole_memory_viewed_and_the_gradient_checks():
    d = mg.zeros(2, 3, dtype=mg.float64)
    v = d.view(6)                                    # all of d, in d's order
    w = mg.arange(6, dtype=mg.float64).requires_grad_()
    v += w * w
    assert d.tolist() == [[0.0, 1.0, 4.0], [9.0, 16.0, 25.0]]
    assert mg.autograd.grad(d.sum(), w)[0].tolist() == [0.0, 2.0, 4.0, 6.0, 8.0, 10.0]

    def f(w):
        d = mg.zeros(2, 3, dtype=mg.float64)
        d[0] += w.exp()
        return d * w.sum()
    assert mg.gradcheck(f, (mg.randn(3, dtype=mg.float64, requires_grad=True),))


def test_an_op_that_saved_the_view_refuses_backward_as_torchs():
    w, w2, d = _w(), _w(), mg.ones(2, 3, dtype=mg.float64)
    v = d[1]
    y = v * w2                                      # saved v's old values
    v += w
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        y.sum().backward()
    w, w2, d = _w(), _w(), mg.ones(2, 3, dtype=mg.float64)
    v = d[1]
    y = v + w2                                      # read none: its gradient still goes
    v.mul_(w * 3)
    (y.sum() + d.sum()).backward()
    assert w2.grad.tolist() == [1.0] * 3 and w.grad.tolist() == [3.0] * 3


def test_what_pytorch_refuses_or_the_graph_cannot_follow_stays_refused():
    d = mg.zeros(2, 3, dtype=mg.float64)
    v = d[1]
    d.requires_grad_()                              # a view of a leaf that requires grad
    with pytest.raises(RuntimeError, match="a view of a leaf tensor that requires grad"):
        v += _w()
    h = mg.ones(2, 3, dtype=mg.float64, requires_grad=True) * 2
    with mg.no_grad():
        v = h[1]
    with pytest.raises(RuntimeError, match="view made under no_grad"):
        v += _w()
    d = mg.zeros(2, 3, dtype=mg.float64)
    other, v = d[0], d[1]                           # another view, the graph unaware of it
    with pytest.raises(RuntimeError, match="another view alive"):
        v += _w()
    assert d.tolist() == [[0.0] * 3] * 2 and not d.requires_grad and other._version == 0
    a = d.detach()
    v = a[1]                                        # d holds the memory too: unreached
    with pytest.raises(RuntimeError, match="the graph does not lead to"):
        v += _w()


def test_against_torch(torch):
    for lib in (mg, torch):
        w = lib.tensor([1.0, 2.0, 3.0], dtype=lib.float64, requires_grad=True)
        dC, idx = lib.zeros(4, 3, dtype=lib.float64), [[0, 2], [2, 3]]
        demb = w * lib.ones(2, 2, 3, dtype=lib.float64)
        for k in range(2):
            for j in range(2):
                ix = lib.tensor(idx[k][j])
                dC[ix] += demb[k, j] * (k + 1)
        (dC * dC).sum().backward()
        if lib is mg:
            mine = (dC.tolist(), w.grad.tolist())
    assert mine == (dC.tolist(), w.grad.tolist())


def test_a_view_made_under_no_grad_still_refuses_a_recorded_write():
    # as PyTorch ("A view was created in no_grad mode..."): the base is not named for it,
    # and a grad-mode view made after it does not open that memory to writes again
    d, w = mg.zeros(4, 3), mg.ones(3, requires_grad=True)
    with mg.no_grad():
        v = d[1]
    later = d[2]
    for view in (v, later):
        with pytest.raises(RuntimeError, match="a view made under no_grad"):
            view += w
    assert not d.requires_grad and d.tolist() == [[0.0] * 3] * 4
