"""PyTorch's "Tensors" basics tutorial and the "Introduction to PyTorch Tensors" video
series' cells, ported: creation, attributes, indexing, joining, arithmetic with out=,
in-place ops, the NumPy bridge, broadcasting, copies and views. For
test_ported_scripts_six.py: returns (random draws, values seen)."""
import math

import numpy as np

from port_helpers import _Draws


def tensors_basics(torch, nn, F, data_mod, init=None):
    state0, seen = {}, []
    draw = _Draws(torch, init, state0, "r")
    # -- initializing a tensor
    data = [[1, 2], [3, 4]]
    x_data = torch.tensor(data)
    np_array = np.array(data)
    x_np = torch.from_numpy(np_array)
    assert x_np.dtype == torch.int64 and x_data.dtype == torch.int64
    x_ones = torch.ones_like(x_data)
    x_rand = draw(lambda: torch.rand_like(x_data, dtype=torch.float))
    assert x_ones.dtype == torch.int64 and x_rand.dtype == torch.float32
    seen += x_ones.flatten().tolist() + x_rand.flatten().tolist()
    shape = (2, 3,)
    rand_tensor = draw(lambda: torch.rand(shape))
    ones_tensor, zeros_tensor = torch.ones(shape), torch.zeros(shape)
    seen += [rand_tensor.sum().item(), ones_tensor.sum().item(), zeros_tensor.sum().item()]
    # -- attributes
    tensor = draw(lambda: torch.rand(3, 4))
    assert tensor.shape == torch.Size([3, 4]) and tensor.dtype == torch.float32
    assert str(tensor.device) == "cpu"
    # -- indexing and slicing, joining
    tensor = torch.ones(4, 4)
    seen += tensor[0].tolist() + tensor[:, 0].tolist() + tensor[..., -1].tolist()
    tensor[:, 1] = 0
    seen += tensor.flatten().tolist()
    t1 = torch.cat([tensor, tensor, tensor], dim=1)
    assert t1.shape == (4, 12)
    seen += t1.sum(0).tolist()
    # -- arithmetic: three ways each
    y1 = tensor @ tensor.T
    y2 = tensor.matmul(tensor.T)
    y3 = draw(lambda: torch.rand_like(y1))
    torch.matmul(tensor, tensor.T, out=y3)
    z1 = tensor * tensor
    z2 = tensor.mul(tensor)
    z3 = draw(lambda: torch.rand_like(tensor))
    torch.mul(tensor, tensor, out=z3)
    assert torch.equal(y1, y2) and torch.equal(y1, y3) and torch.equal(z1, z2)
    assert torch.equal(z1, z3)
    seen += y3.flatten().tolist() + z3.flatten().tolist()
    agg = tensor.sum()
    agg_item = agg.item()
    assert isinstance(agg_item, float) and agg_item == 12.0
    tensor.add_(5)
    seen += tensor[0].tolist()
    # -- bridge with NumPy: memory shared both ways
    t = torch.ones(5)
    n = t.numpy()
    t.add_(1)
    assert (n == 2).all()
    n = np.ones(5)
    t = torch.from_numpy(n)
    np.add(n, 1, out=n)
    assert t.dtype == torch.float64
    seen += t.tolist()
    # ---- "Introduction to PyTorch Tensors" (the video series)
    x = torch.empty(3, 4)
    assert type(x).__name__ == "Tensor" and x.shape == (3, 4)
    zeros, ones = torch.zeros(2, 3), torch.ones(2, 3)
    torch.manual_seed(1729)
    random = draw(lambda: torch.rand(2, 3))
    seen += [zeros.sum().item(), ones.sum().item(), random.sum().item()]
    x = torch.empty(2, 2, 3)
    empty_like_x = torch.empty_like(x)
    zeros_like_x = torch.zeros_like(x)
    ones_like_x = torch.ones_like(x)
    rand_like_x = draw(lambda: torch.rand_like(x))
    assert empty_like_x.shape == zeros_like_x.shape == ones_like_x.shape == rand_like_x.shape
    some_constants = torch.tensor([[3.1415926, 2.71828], [1.61803, 0.0072897]])
    some_integers = torch.tensor((2, 3, 5, 7, 11, 13, 17, 19))
    more_integers = torch.tensor(((2, 4, 6), [3, 5, 7]))
    seen += some_constants.flatten().tolist() + some_integers.tolist()
    seen += more_integers.flatten().tolist()
    a = torch.ones((2, 3), dtype=torch.int16)
    b = draw(lambda: torch.rand((2, 3), dtype=torch.float64) * 20.)
    c = b.to(torch.int32)
    assert a.dtype == torch.int16 and b.dtype == torch.float64 and c.dtype == torch.int32
    seen += c.flatten().tolist()
    # math and logic
    ones = torch.zeros(2, 2) + 1
    twos = torch.ones(2, 2) * 2
    threes = (torch.ones(2, 2) * 7 - 1) / 2
    fours = twos ** 2
    sqrt2s = twos ** 0.5
    powers2 = twos ** torch.tensor([[1, 2], [3, 4]])
    fives = ones + fours
    dozens = threes * fours
    for v in (ones, twos, threes, fours, sqrt2s, powers2, fives, dozens):
        seen += v.flatten().tolist()
    # broadcasting
    rand = draw(lambda: torch.rand(2, 4))
    doubled = rand * (torch.ones(1, 4) * 2)
    seen += (doubled / rand).flatten().tolist()
    a = torch.ones(4, 3, 2)
    b = a * draw(lambda: torch.rand(3, 2))     # 3rd and 2nd dims identical to a's
    c = a * draw(lambda: torch.rand(3, 1))     # 3rd dim = 1, 2nd dim identical to a's
    d = a * draw(lambda: torch.rand(1, 2))     # 3rd dim identical to a's, 2nd dim = 1
    seen += [b.sum().item(), c.sum().item(), d.sum().item()]
    a = torch.rand(2, 3)
    try:
        a * torch.rand(3, 2)                  # dims don't line up: an error
    except RuntimeError:
        seen.append(-1.0)
    # more math
    a = draw(lambda: torch.rand(2, 4) * 2 - 1)
    seen += torch.abs(a).flatten().tolist() + torch.ceil(a).flatten().tolist()
    seen += torch.floor(a).flatten().tolist() + torch.clamp(a, -0.5, 0.5).flatten().tolist()
    angles = torch.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
    sines = torch.sin(angles)
    inverses = torch.asin(sines)
    seen += sines.tolist() + inverses.tolist()
    b = torch.tensor([1, 5, 11])
    c = torch.tensor([2, 7, 10])
    seen += torch.bitwise_xor(b, c).tolist()
    d = torch.tensor([[1., 2.], [3., 4.]])
    e = torch.ones(1, 2)
    seen += [float(v) for v in torch.eq(d, e).flatten().tolist()]
    seen += [torch.max(d).item(), torch.mean(d).item(), torch.prod(d).item()]
    seen += [float(v) for v in torch.unique(torch.tensor([1, 2, 1, 2, 1, 2])).tolist()]
    std, mean = torch.std_mean(d)
    seen += [std.item(), mean.item()]
    v1 = torch.tensor([1., 0., 0.])
    v2 = torch.tensor([0., 1., 0.])
    m1 = draw(lambda: torch.rand(2, 2))
    m2 = torch.tensor([[3., 0.], [0., 3.]])
    seen += torch.linalg.cross(v2, v1).tolist()
    m3 = torch.linalg.matmul(m1, m2)
    seen += (m3 - 3 * m1).abs().flatten().tolist()
    U, S, V = torch.svd(m3)
    seen += S.tolist() + (U @ torch.diag(S) @ V.T - m3).abs().flatten().tolist()
    # altering tensors in place
    a = torch.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
    seen += torch.sin(a).tolist() + a.tolist()
    b = torch.tensor([0, math.pi / 4, math.pi / 2, 3 * math.pi / 4])
    b.sin_()
    seen += b.tolist()
    a = torch.ones(2, 2)
    b = draw(lambda: torch.rand(2, 2))
    seen += a.add_(b).flatten().tolist() + b.mul_(b).flatten().tolist()
    a = draw(lambda: torch.rand(2, 2))
    b = draw(lambda: torch.rand(2, 2))
    c = torch.zeros(2, 2)
    old_id = id(c)
    d = torch.matmul(a, b, out=c)
    assert c is d and id(c) == old_id
    torch.add(a, b, out=c)
    assert id(c) == old_id
    seen += c.flatten().tolist()
    torch.rand(2, 2, out=c)
    assert id(c) == old_id
    # copying
    a = torch.ones(2, 2)
    b = a
    a[0][1] = 561
    seen += b.flatten().tolist()
    a = torch.ones(2, 2)
    b = a.clone()
    assert b is not a and torch.eq(a, b).all()
    a[0][1] = 561
    seen += b.flatten().tolist()
    a = draw(lambda: torch.rand(2, 2)).requires_grad_()
    b = a.clone()
    c = a.detach().clone()
    assert b.requires_grad and not c.requires_grad and a.requires_grad
    # manipulating shapes
    a = torch.rand(3, 226, 226)
    b = a.unsqueeze(0)
    assert b.shape == (1, 3, 226, 226)
    c = torch.rand(1, 1, 1, 1, 1)
    assert c.shape == (1, 1, 1, 1, 1)
    a = torch.rand(1, 20)
    b = a.squeeze(0)
    c = torch.rand(2, 2)
    d = c.squeeze(0)
    assert b.shape == (20,) and d.shape == (2, 2)
    a = torch.ones(4, 3, 2)
    c = a * torch.rand(3, 1)
    a = torch.ones(4, 3, 2)
    b = torch.rand(3)
    c = b.unsqueeze(1)
    assert c.shape == (3, 1) and (a * c).shape == (4, 3, 2)
    batch_me = torch.rand(3, 226, 226)
    batch_me.unsqueeze_(0)
    assert batch_me.shape == (1, 3, 226, 226)
    batch_me.squeeze_(0)
    assert batch_me.shape == (3, 226, 226)
    output3d = torch.rand(6, 20, 20)
    input1d = output3d.reshape(6 * 20 * 20)
    assert input1d.shape == (2400,) and torch.reshape(output3d, (6 * 20 * 20,)).shape == \
        (2400,)
    output3d[0, 0, 0] = 7.0
    assert input1d[0].item() == 7.0               # reshape of a contiguous tensor: a view
    # NumPy bridge, again
    numpy_array = np.ones((2, 3))
    pytorch_tensor = torch.from_numpy(numpy_array)
    pytorch_rand = torch.rand(2, 3)
    numpy_rand = pytorch_rand.numpy()
    numpy_array[1, 1] = 23
    pytorch_rand[1, 1] = 17
    assert numpy_rand[1, 1] == 17
    seen += pytorch_tensor.flatten().tolist()
    assert str(pytorch_tensor.dtype) == "torch.float64" or "float64" in str(pytorch_tensor.dtype)
    assert torch.unsqueeze(torch.tensor([1., 2.]), 1).shape == (2, 1)
    return state0, seen
