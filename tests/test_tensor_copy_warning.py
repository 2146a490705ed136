"""mg.tensor(t) and t.new_tensor(t) of a tensor warn, as PyTorch's: the copy is cut from
the graph, which t.detach().clone() says plainly (the "Neural Transfer" tutorial's
Normalization does torch.tensor(mean) of a tensor and sees the warning)."""
import warnings

import pytest

import minigrad as mg


def test_tensor_of_a_tensor_warns_and_copies():
    src = mg.ones(2, requires_grad=True)
    with pytest.warns(UserWarning, match="detach"):
        t = mg.tensor(src)
    assert not t.requires_grad and t.tolist() == [1.0, 1.0]
    with pytest.warns(UserWarning, match="detach"):
        mg.ones(3).new_tensor(src)


def test_tensor_of_other_data_is_quiet():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        mg.tensor([1.0, 2.0])
        mg.tensor(mg.ones(2).numpy())
        mg.asarray(mg.ones(2))
        mg.as_tensor(mg.ones(2))
        mg.FloatTensor([1.0])
        mg.scalar_tensor(2.0)
