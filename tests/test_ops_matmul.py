"""Matrix product with NumPy's rules: 1-D·1-D, 1-D·N-D, N-D·1-D, 2-D, batched,
broadcast-batched (the backward must sum over broadcast batch dims) and a shared weight;
and F.linear / F.mse_loss, built on it."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from op_helpers import OpCase, check_vs_torch, check_gradcheck, check_double_backward_vs_torch

def _tf():
    import torch.nn.functional
    return torch.nn.functional


MATMUL_SHAPES = [
    ((3,), (3,)),                 # dot product -> scalar
    ((3,), (3, 2)),               # vector @ matrix
    ((3,), (2, 3, 4)),            # vector @ batch of matrices
    ((2, 3), (3,)),               # matrix @ vector
    ((2, 2, 3), (3,)),            # batch of matrices @ vector
    ((2, 3), (3, 4)),             # plain 2-D
    ((2, 2, 3), (2, 3, 4)),       # batched
    ((2, 1, 3, 4), (5, 4, 2)),    # broadcast-batched
    ((3, 4), (2, 4, 2)),          # a shared left matrix
    ((2, 3, 4), (4, 5)),          # (B, T, C) @ (C, O): a shared weight
    ((1, 3), (3, 1)),
]

CASES = [OpCase("matmul", lambda a, b: a @ b, shapes, np_fn=np.matmul)
         for shapes in MATMUL_SHAPES] + [
    OpCase("mg.matmul", lambda a, b: mg.matmul(a, b), ((2, 3), (3, 2)),
           torch_fn=lambda a, b: a.matmul(b)),
    OpCase("x@x.T", lambda a: (a @ a.T), ((3, 2),)),
    OpCase("F.linear", lambda x, w, b: F.linear(x, w, b), ((2, 3, 4), (5, 4), (5,)),
           torch_fn=lambda x, w, b: _tf().linear(x, w, b)),
    OpCase("F.linear_no_bias", lambda x, w: F.linear(x, w), ((3, 4), (2, 4)),
           torch_fn=lambda x, w: _tf().linear(x, w)),
    OpCase("F.mse_loss", lambda a, b: F.mse_loss(a, b), ((2, 3), (2, 3)),
           torch_fn=lambda a, b: _tf().mse_loss(a, b)),
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


def test_matmul_with_array_operand(device):
    """A NumPy array on either side becomes a constant."""
    w = np.arange(6.0, dtype=np.float32).reshape(3, 2)
    x = mg.ones(2, 3, device=device, requires_grad=True)
    np.testing.assert_array_equal((x @ w).numpy(), np.ones((2, 3)) @ w)
    np.testing.assert_array_equal((w.T @ x.T).numpy(), w.T @ np.ones((3, 2)))
    (x @ w).sum().backward()
    np.testing.assert_array_equal(x.grad.numpy(), np.ones((2, 2)) @ w.T)


def test_batched_matmul_with_an_empty_inner_dim_gives_zeros(device):
    # (..., n, 0) @ (0, m): the fold of the batch into rows must not use reshape(-1, 0)
    a = mg.zeros(2, 3, 0, device=device, requires_grad=True)
    b = mg.zeros(0, 4, device=device, requires_grad=True)
    y = a @ b
    assert y.shape == (2, 3, 4) and y.abs().sum().item() == 0.0
    y.sum().backward()
    assert a.grad.shape == (2, 3, 0) and b.grad.shape == (0, 4)
