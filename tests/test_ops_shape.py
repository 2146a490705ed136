"""Ops that move elements: reshape view transpose permute swapaxes squeeze unsqueeze expand
flatten .T, cat stack split chunk, tril triu, clone and dtype changes."""
import numpy as np
import pytest

import minigrad as mg
from op_helpers import OpCase, check_vs_torch, check_gradcheck, check_double_backward_vs_torch


def _torch():
    import torch
    return torch


CASES = [
    OpCase("reshape", lambda x: x.reshape(6), ((2, 3),)),
    OpCase("reshape-1", lambda x: x.reshape(-1, 2), ((2, 3),)),
    OpCase("reshape_tuple", lambda x: x.reshape((3, 1, 2)), ((2, 3),)),
    OpCase("reshape_scalar", lambda x: x.reshape(1, 1), ((),)),
    OpCase("view", lambda x: x.view(3, 2), ((2, 3),)),
    OpCase("transpose", lambda x: x.transpose(0, 1), ((2, 3),)),
    OpCase("transpose_neg", lambda x: x.transpose(-1, -3), ((2, 3, 4),)),
    OpCase("transpose_reshape", lambda x: x.transpose(0, 1).reshape(-1), ((2, 3),)),
    OpCase("permute", lambda x: x.permute(2, 0, 1), ((2, 3, 4),)),
    OpCase("permute_tuple", lambda x: x.permute((1, 2, 0)), ((2, 3, 4),)),
    OpCase("swapaxes", lambda x: x.swapaxes(0, 2), ((2, 3, 4),)),
    OpCase("squeeze", lambda x: x.squeeze(), ((2, 1, 3, 1),)),
    OpCase("squeeze_dim", lambda x: x.squeeze(1), ((2, 1, 3, 1),)),
    OpCase("squeeze_not_1", lambda x: x.squeeze(0), ((2, 1, 3, 1),)),
    OpCase("unsqueeze0", lambda x: x.unsqueeze(0), ((2, 3),)),
    OpCase("unsqueeze-1", lambda x: x.unsqueeze(-1), ((2, 3),)),
    OpCase("unsqueeze_scalar", lambda x: x.unsqueeze(0), ((),)),
    OpCase("expand", lambda x: x.expand(2, 3), ((1, 3),)),
    OpCase("expand_new_dims", lambda x: x.expand(4, 2, 3), ((2, 1),)),
    OpCase("expand-1", lambda x: x.expand(2, -1, 3), ((2, 1),)),
    OpCase("expand_tuple", lambda x: x.expand((3, 2)), ((),)),
    OpCase("flatten", lambda x: x.flatten(), ((2, 3, 4),)),
    OpCase("flatten1", lambda x: x.flatten(1), ((2, 3, 4),)),
    OpCase("flatten01", lambda x: x.flatten(0, 1), ((2, 3, 4),)),
    OpCase("T", lambda x: x.T, ((2, 3),)),
    OpCase("T3d", lambda x: x.T, ((2, 3, 4),), torch_fn=lambda x: x.permute(2, 1, 0)),
    OpCase("mT", lambda x: x.mT, ((2, 3, 4),)),
    OpCase("clone", lambda x: x.clone() * 1.0, ((2, 3),)),
    OpCase("double", lambda x: x.double() * 2, ((2, 3),)),
    OpCase("tril", lambda x: x.tril(), ((3, 4),), np_fn=np.tril),
    OpCase("triu1", lambda x: x.triu(1), ((3, 4),), np_fn=lambda a: np.triu(a, 1)),
    OpCase("mg.tril-1", lambda x: mg.tril(x, -1), ((2, 3, 3),),
           torch_fn=lambda x: x.tril(-1), np_fn=lambda a: np.tril(a, -1)),
    OpCase("mg.triu", lambda x: mg.triu(x), ((2, 3, 3),), torch_fn=lambda x: x.triu()),
    # cat / stack / split / chunk
    OpCase("cat0", lambda a, b: mg.cat([a, b]), ((2, 3), (1, 3)),
           torch_fn=lambda a, b: _torch().cat([a, b]),
           np_fn=lambda a, b: np.concatenate([a, b])),
    OpCase("cat1", lambda a, b: mg.cat([a, b], dim=1), ((2, 3), (2, 2)),
           torch_fn=lambda a, b: _torch().cat([a, b], dim=1)),
    OpCase("cat-1x3", lambda a, b, c: mg.cat((a, b, c), dim=-1), ((2, 1, 2), (2, 1, 1), (2, 1, 3)),
           torch_fn=lambda a, b, c: _torch().cat((a, b, c), dim=-1)),
    OpCase("cat_same_twice", lambda a: mg.cat([a, a * 2], 0), ((2, 3),),
           torch_fn=lambda a: _torch().cat([a, a * 2], 0)),
    OpCase("stack0", lambda a, b: mg.stack([a, b]), ((2, 3), (2, 3)),
           torch_fn=lambda a, b: _torch().stack([a, b]), np_fn=lambda a, b: np.stack([a, b])),
    OpCase("stack1", lambda a, b: mg.stack([a, b], dim=1), ((2, 3), (2, 3)),
           torch_fn=lambda a, b: _torch().stack([a, b], dim=1)),
    OpCase("stack-1", lambda a, b, c: mg.stack([a, b, c], -1), ((2, 3),) * 3,
           torch_fn=lambda a, b, c: _torch().stack([a, b, c], -1)),
    OpCase("split", lambda x: x.split(2, dim=1), ((2, 5),)),
    OpCase("split_sizes", lambda x: x.split([1, 3], dim=1), ((2, 4),)),
    OpCase("mg.split", lambda x: mg.split(x, 1), ((2, 3),), torch_fn=lambda x: x.split(1)),
    OpCase("chunk", lambda x: x.chunk(3, dim=1), ((2, 5),)),
    OpCase("mg.chunk", lambda x: mg.chunk(x, 2, -1), ((2, 3, 4),),
           torch_fn=lambda x: x.chunk(2, -1)),
    OpCase("unbind", lambda x: mg.unbind(x), ((5, 2),), torch_fn=lambda x: x.unbind()),
    OpCase("unbind1", lambda x: x.unbind(1), ((2, 3, 4),)),
    OpCase("unbind-1", lambda x: mg.unbind(x, -1), ((2, 3),),
           torch_fn=lambda x: _torch().unbind(x, -1)),
]


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case, device):
    check_gradcheck(case, device)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_double_backward_vs_torch(case, device):
    check_double_backward_vs_torch(case, device)


def test_view_ops_share_data_and_keep_shape_semantics(device):
    x = mg.arange(24, dtype=mg.float32, device=device).reshape(2, 3, 4)
    assert x.reshape(4, 6).shape == (4, 6) and x.view(-1).shape == (24,)
    assert x.transpose(0, 2).shape == (4, 3, 2) and x.permute(1, 2, 0).shape == (3, 4, 2)
    assert x.T.shape == (4, 3, 2) and x.mT.shape == (2, 4, 3)
    assert x.flatten(1).shape == (2, 12) and x.unsqueeze(1).shape == (2, 1, 3, 4)
    assert x[:, :1].squeeze().shape == (2, 4) and x.expand(5, 2, 3, 4).shape == (5, 2, 3, 4)
    assert [p.shape for p in x.split(2, dim=2)] == [(2, 3, 2), (2, 3, 2)]
    assert [p.shape for p in x.chunk(2, dim=1)] == [(2, 2, 4), (2, 1, 4)]
    assert mg.stack([x, x], dim=-1).shape == (2, 3, 4, 2)
    assert x.size() == (2, 3, 4) and x.size(1) == 3 and x.dim() == 3 and x.numel() == 24
    np.testing.assert_array_equal(x.T.numpy(), np.arange(24.0).reshape(2, 3, 4).T)


def test_view_shares_memory_or_refuses_and_contiguous_copies_as_torch(device):
    x = mg.zeros(2, 3, device=device)
    v = x.view(3, 2)
    v[0, 0] = 5.0                                        # a view: the write shows in x
    assert x.tolist()[0][0] == 5.0 and x.view_as(v).shape == (3, 2)
    with pytest.raises(RuntimeError, match=r"cannot be viewed as \(6,\).*\.reshape"):
        x.T.view(6)                                      # it would have been a silent copy
    assert x.T.reshape(6).tolist() == [5.0, 0.0, 0.0, 0.0, 0.0, 0.0]
    assert x.contiguous() is x                           # already C-contiguous: itself
    c = x.T.contiguous()
    c[0, 0] = 7.0                                        # a copy: x keeps its 5
    assert x.tolist()[0][0] == 5.0 and c.view(6).shape == (6,)
    a = mg.randn(2, 3, device=device, requires_grad=True)
    (a.T.contiguous() * mg.arange(2.0, device=device)).sum().backward()
    assert a.grad.tolist() == [[0.0] * 3, [1.0] * 3]


def test_cat_and_stack_promote_as_torch(device):
    i, f = mg.tensor([1], device=device), mg.tensor([1.5], device=device)
    assert mg.cat([i, f]).dtype == mg.float32 and mg.stack([i, f]).dtype == mg.float32
    assert mg.cat([f, mg.tensor([2.0], dtype="float64", device=device)]).dtype == mg.float64
    assert mg.cat([i, mg.tensor([2], dtype="int32", device=device)]).dtype == mg.int64
    h = mg.tensor([0.5], dtype="float16", device=device, requires_grad=True)
    g = mg.tensor([0.25], device=device, requires_grad=True)
    mg.cat([h, g]).sum().backward()                      # the casts are differentiable
    assert h.grad.dtype == mg.float16 and g.grad.dtype == mg.float32


def test_tril_triu_on_boolean(device):
    ones = mg.ones(3, 3, dtype=mg.bool, device=device)
    np.testing.assert_array_equal(ones.tril().numpy(), np.tril(np.ones((3, 3), bool)))
    np.testing.assert_array_equal(mg.triu(ones, 1).numpy(), np.triu(np.ones((3, 3), bool), 1))


def test_tril_triu_zero_outside_the_triangle_even_where_it_is_infinite(device):
    """full(-inf).triu(1) is the causal mask (0 on and below the diagonal, as PyTorch's),
    and an infinite gradient outside the triangle gives a zero one, not 0 * inf = NaN."""
    m = mg.full((3, 3), -np.inf, device=device).triu(1)
    np.testing.assert_array_equal(m.numpy(), np.triu(np.full((3, 3), -np.inf), 1))
    assert not np.isnan(mg.full((2, 3), np.inf, device=device).tril(-1).numpy()).any()
    x = mg.tensor(np.full((3, 3), 4.0), device=device, requires_grad=True)
    with np.errstate(divide="ignore"):
        x.triu(1).sqrt().sum().backward()      # sqrt'(0) = inf below the diagonal
    np.testing.assert_array_equal(x.grad.numpy(), np.triu(np.full((3, 3), 0.25), 1))


def test_dtype_change_is_differentiable(device):
    """The gradient of a dtype change comes back in the input's dtype, at every node."""
    x = mg.randn(2, 3, dtype=mg.float64, device=device, requires_grad=True)
    h = x.float()
    y = h * 3
    assert y.dtype == mg.float32
    gh, gx = mg.grad((y * mg.ones(2, 3, dtype=mg.float64, device=device)).sum(), [h, x])
    assert gh.dtype == mg.float32 and gx.dtype == mg.float64
    np.testing.assert_array_equal(gx.numpy(), np.full((2, 3), 3.0))
    assert x.to("float32").dtype == mg.float32 and x.to(mg.float32).dtype == mg.float32
    assert x.long().dtype == mg.int64 and not x.long().requires_grad


def test_unbind_slices_and_halves(device):
    a = np.arange(42.0).reshape(7, 3, 2)
    x = mg.tensor(a, device=device, requires_grad=True)
    for dim in (0, 1, -1):
        pieces = mg.unbind(x, dim)
        assert isinstance(pieces, tuple) and len(pieces) == a.shape[dim]
        for p, ref in zip(pieces, np.moveaxis(a, dim, 0)):
            np.testing.assert_array_equal(p.numpy(), ref)
    assert mg.unbind(mg.zeros(0, 3, device=device)) == ()
    with pytest.raises(IndexError, match="unbind"):
        mg.unbind(mg.tensor(1.0, device=device))
    # one node for all the slices, which are views of x (they count its in-place changes)
    pieces = mg.unbind(x, 1)
    assert len({id(p._ctx) for p in pieces}) == 1 and pieces[0]._ctx.inputs[0] is x
    assert all(p._version_counter is x._version_counter for p in pieces)
    with mg.no_grad():
        assert all(p._ctx is None and not p.requires_grad for p in mg.unbind(x))


def test_unbind_of_a_1d_tensor_and_iteration_give_0d_views(device):
    """A 1-d tensor's elements (also by iterating) are 0-d views, as PyTorch's: they see
    x's in-place changes and may be written; and each may be backpropagated on its own
    (the unbind node holds nothing to free)."""
    x = mg.tensor([1.0, 2.0, 3.0], device=device)
    a, b, c = x
    assert a.shape == () and isinstance(a._data, type(x._data)) and repr(a).startswith("tensor(")
    with mg.no_grad():
        x.mul_(10)
        a.fill_(7)
    assert b.item() == 20.0 and x.cpu().tolist() == [7.0, 20.0, 30.0]
    w = mg.tensor([[1.0, 2.0], [3.0, 4.0]], device=device, requires_grad=True)
    for row in w:                                        # a backward per row, as PyTorch
        (row * row).sum().backward()
    assert w.grad.cpu().tolist() == [[2.0, 4.0], [6.0, 8.0]]


def test_unbind_backward_is_linear_under_create_graph(device):
    """Backward gets every slice's gradient at once and stacks them (zeros for the slices
    the loss does not use): second derivatives of products of the slices are right."""
    a = mg.tensor([1.0, 2.0, 3.0, 4.0], device=device, requires_grad=True)
    u = a.unbind(0)
    g, = mg.grad(u[0] * u[1] * u[2], a, create_graph=True)   # u[3] unused: zeros
    assert g.cpu().tolist() == [6.0, 3.0, 2.0, 0.0]
    h, = mg.grad(g.sum(), a)
    assert h.cpu().tolist() == [5.0, 4.0, 3.0, 0.0]
    x = mg.randn(500, 3, device=device, requires_grad=True)
    g, = mg.grad(sum(r.sum() for r in x.unbind(0)[::7]), x, create_graph=True)
    assert g.cpu().numpy()[::7].all() and not g.cpu().numpy()[1::7].any()


def test_empty_tensors_as_torch(device):
    x = mg.zeros(0, 3, device=device, requires_grad=True)
    assert x.reshape(-1, 3).shape == (0, 3) and x.reshape(3, -1).shape == (3, 0)
    t = mg.tensor([1.0, 2.0, 3.0], device=device)
    assert t[[]].shape == (0,) and mg.ones(2, 3, device=device)[[]].shape == (0, 3)
    for fn in (lambda v: v.softmax(-1), lambda v: v.log_softmax(-1)):
        e = mg.zeros(2, 0, device=device, requires_grad=True)
        y = fn(e)
        assert y.shape == (2, 0) and y.dtype == mg.float32
        y.sum().backward()
        assert e.grad.shape == (2, 0)


def test_split_and_chunk_sizes(device):
    x = mg.arange(6, device=device)
    assert [p.tolist() for p in x.split([4, 2])] == [[0, 1, 2, 3], [4, 5]]
    assert [p.tolist() for p in x.split([6, 0])] == [[0, 1, 2, 3, 4, 5], []]
    assert [p.tolist() for p in x.chunk(4)] == [[0, 1], [2, 3], [4, 5]]
    with pytest.raises(ValueError, match="non-negative"):
        x.split([7, -1])                                 # sums to 6, but -1 is no size


def test_flatten_refuses_start_after_end(device):
    x = mg.zeros(3, 2, 4, device=device)
    assert x.flatten(1, -1).shape == (3, 8) and x.flatten(-1, -1).shape == (3, 2, 4)
    with pytest.raises(ValueError, match=r"flatten: start_dim -2 comes after end_dim 0"):
        x.flatten(-2, 0)                                 # was (3, 1, 2, 4): a new dim


def test_split_and_chunk_of_an_empty_dim_give_empty_pieces_as_torch(device):
    x = mg.zeros(2, 0, device=device, requires_grad=True)
    assert [p.shape for p in x.split(2, dim=1)] == [(2, 0)]
    assert [p.shape for p in x.chunk(3, dim=-1)] == [(2, 0)] * 3
    sum(p.sum() for p in x.chunk(3, dim=1)).backward()
    assert x.grad.shape == (2, 0)
