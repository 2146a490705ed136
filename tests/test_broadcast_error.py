"""Shapes that do not broadcast raise autograd.BroadcastError: a ValueError that is also
PyTorch's RuntimeError, so code written for PyTorch (`except RuntimeError`) catches it."""
import pytest

import minigrad as mg


def test_broadcast_mismatch_is_a_runtime_error_and_a_value_error():
    for op in (lambda a, b: a * b, lambda a, b: a + b, mg.maximum):
        with pytest.raises(RuntimeError, match=r"input shapes: \(2, 3\), \(3, 2\)"):
            op(mg.ones(2, 3), mg.ones(3, 2))
        with pytest.raises(ValueError, match="broadcast"):
            op(mg.ones(2, 3), mg.ones(3, 2))


def test_torch_raises_a_runtime_error_too(torch):
    with pytest.raises(RuntimeError):
        torch.ones(2, 3) * torch.ones(3, 2)
