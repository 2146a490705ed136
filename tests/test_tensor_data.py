"""`t.data` as PyTorch's: a Tensor sharing t's memory outside autograd, with its own count
of in-place changes (so a write through it is hidden from backward, unlike detach()'s), and
`t.data = new` swapping t's array. Ported code's idioms work and match torch."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn


def test_data_is_a_plain_leaf_tensor_sharing_the_memory(device):
    p = nn.Parameter(mg.tensor([1.0, 2.0, 3.0], device=device))
    d = p.data
    assert type(d) is mg.Tensor and d is not p.data          # a new one each time, as torch
    assert not d.requires_grad and d.is_leaf and d.grad_fn is None
    assert (d.device, d.dtype, d.shape) == (p.device, p.dtype, p.shape)
    d[0] = 7.0                                                # seen by p ...
    with mg.no_grad():
        p[2] = 9.0                                            # ... and p's writes by d
    assert p.tolist() == d.tolist() == [7.0, 2.0, 9.0]
    assert p._version == 1 and d._version == 1                # each counts its own writes
    t = mg.ones(2)
    assert t.data.requires_grad_().requires_grad and not t.requires_grad   # a leaf of its own
    y = p * 2                                                 # a non-leaf's: a leaf too
    assert not y.data.requires_grad and y.data.is_leaf and y.data.grad_fn is None
    assert y.data.tolist() == [14.0, 4.0, 18.0]


def _idioms(torch, nn):
    """PyTorch's `.data` idioms, as ported code writes them; the values they leave."""
    torch.manual_seed(0)
    m = nn.Linear(3, 2)
    m.weight.data.normal_(0, 0.02)                            # DCGAN's initialisation
    assert float(m.weight.data.abs().max()) < 0.2 and not m.weight.data.requires_grad
    m.weight.data.fill_(1)
    m.bias.data.zero_()
    p, q = m.weight, torch.ones(2, 3) * 0.5
    m(torch.ones(4, 3)).pow(2).sum().backward()
    p.data.add_(p.grad, alpha=-0.01)                          # a hand-written SGD step
    out = [p.tolist(), m.bias.tolist(), p.data.numpy().tolist(), float(p.data.norm())]
    c = p.data.clone()
    p.data.copy_(q)
    out += [c.tolist(), p.tolist(), p.data.cpu().tolist(), p.requires_grad, p.is_leaf]
    p.data -= 0.25 * p.grad                                   # micrograd's update
    p.data = p.data * 2                                       # re-initialisation
    return out + [p.tolist(), type(p).__name__, p.requires_grad]


def test_data_idioms_match_torch(torch):
    got = _idioms(mg, mg.nn)
    want = _idioms(torch, torch.nn)
    assert got[-2:] == want[-2:] == ["Parameter", True]
    np.testing.assert_allclose(np.array(got[0]), np.array(want[0]), rtol=1e-6)
    for g, w in zip(got[1:-2], want[1:-2]):
        np.testing.assert_allclose(np.array(g, dtype=float), np.array(w, dtype=float),
                                   rtol=1e-5)


def _changed_after_forward(torch, how, leaf=False):
    """b*b's gradient after b's memory changed (doubled) through `how`, or the error."""
    a = torch.ones(3, requires_grad=True)
    b = a if leaf else a * 1
    c = b * b                                                 # saves b
    (b.detach() if how == "detach" else b.data).mul_(2)
    try:
        c.sum().backward()
    except RuntimeError as e:
        return "inplace" in str(e).replace("in-place", "inplace")
    return a.grad.tolist()


@pytest.mark.parametrize("leaf", [False, True])
def test_a_write_through_data_is_hidden_from_backward_as_torch(torch, leaf):
    """`.data` counts its writes apart: backward uses the changed values, as torch's (that
    is what `.data` is for); detach() shares the count, so backward refuses, as torch's."""
    assert _changed_after_forward(mg, "data", leaf) == \
        _changed_after_forward(torch, "data", leaf) == [4.0, 4.0, 4.0]
    assert _changed_after_forward(mg, "detach") is _changed_after_forward(torch, "detach") \
        is True


def test_a_write_through_data_is_hidden_and_one_through_detach_is_not():
    """The same without torch: the version count says which write backward checks."""
    def after(write):
        x = mg.ones(2, requires_grad=True)
        y = x * 1
        z = y * y                                             # saves y
        write(y)
        version = y._version
        z.sum().backward()
        return x.grad.tolist(), version
    assert after(lambda y: y.data.add_(1)) == ([4.0, 4.0], 0)
    with pytest.raises(RuntimeError, match="modified by an in-place operation"):
        after(lambda y: y.detach().add_(1))


def test_assigning_data_swaps_the_array_any_shape_as_torch():
    p = nn.Parameter(mg.ones(3))
    p.data = mg.zeros(2, 2, dtype=mg.float64)                 # shape and dtype may change
    assert type(p) is nn.Parameter and p.requires_grad and p.shape == (2, 2)
    assert p.dtype == mg.float64 and p.sum().item() == 0.0
    other = mg.arange(4.0)
    p.data = other.data                                       # shares other's memory
    other[0] = 5.0
    assert p.tolist() == [5.0, 1.0, 2.0, 3.0]
    p.data = np.full(2, 3.0, np.float32)                      # an array of p's device too
    assert p.tolist() == [3.0, 3.0]
