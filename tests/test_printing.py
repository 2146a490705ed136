"""mg.set_printoptions (minigrad/printing.py): tensors print with the options set, NumPy's
own arrays as before; a summarised tensor's repr names no shape."""
import numpy as np
import pytest

import minigrad as mg


# ---- mg.set_printoptions --------------------------------------------------------------------
@pytest.fixture
def printing():
    from minigrad import printing
    saved = dict(printing._options)
    yield printing
    printing._options.clear()
    printing._options.update(saved)


def test_set_printoptions_changes_how_tensors_print_not_numpy(printing):
    before = repr(np.arange(20.0))
    mg.set_printoptions(precision=2)
    assert repr(mg.tensor([0.123456])) == "tensor([0.12])"
    mg.set_printoptions(threshold=5, edgeitems=1)
    assert repr(mg.arange(20.0)) == "tensor([ 0., ..., 19.])"
    mg.set_printoptions(sci_mode=True)
    assert "e+03" in repr(mg.tensor([1234.5]))
    mg.set_printoptions(profile="full", sci_mode=False)
    assert "..." not in repr(mg.arange(2000.0)) and "e+" not in repr(mg.tensor([1234.5]))
    assert repr(np.arange(20.0)) == before                 # NumPy's own printing untouched


def test_a_summarised_tensor_prints_no_shape_field(printing):
    """NumPy 2 adds `shape=(...)` to a summarised array's repr; a tensor's has none, as
    torch's."""
    text = repr(mg.arange(2000))
    assert "..." in text and "shape" not in text and text.endswith("])")
    assert repr(mg.arange(2000.0, requires_grad=True)).endswith(", requires_grad=True)")


@pytest.mark.parametrize("kw, words", [(dict(profile="long"), "profile"),
                                       (dict(precision=-1), "precision"),
                                       (dict(threshold=1.5), "threshold")])
def test_set_printoptions_errors(printing, kw, words):
    with pytest.raises(ValueError, match=words):
        mg.set_printoptions(**kw)


def test_a_summarised_tensor_whose_shape_numpy_wraps_to_its_own_line_prints_none(printing):
    """With a full last line NumPy 2 puts `shape=(...)` on a line of its own."""
    mg.set_printoptions(linewidth=40)
    text = repr(mg.arange(2000.0) * 1e6)
    assert "..." in text and "shape" not in text and text.endswith("])")


def test_set_printoptions_without_sci_mode_resets_it_as_torch(printing):
    """torch's set_printoptions sets sci_mode on every call: one that does not give it goes
    back to the automatic choice."""
    mg.set_printoptions(sci_mode=True)
    mg.set_printoptions(precision=2)
    assert repr(mg.tensor([1.5, 2.5])) == "tensor([1.5, 2.5])"     # (NumPy trims zeros)
