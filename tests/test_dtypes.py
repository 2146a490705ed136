"""mg.finfo / iinfo / get_default_dtype / set_default_dtype / promote_types (dtypes.py), as
PyTorch's."""
import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn

DTYPES = ["bool", "uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"]


@pytest.fixture
def default_float64():
    mg.set_default_dtype(mg.float64)
    yield
    mg.set_default_dtype(mg.float32)


def test_finfo_and_iinfo_give_the_limits():
    assert mg.finfo(mg.float16).min == -65504 and mg.finfo(mg.float16).max == 65504
    assert mg.finfo().eps == np.float32(2 ** -23)                 # the default dtype's
    assert mg.finfo("float64").tiny == 2.0 ** -1022 and mg.finfo(mg.float64).bits == 64
    assert mg.iinfo(mg.int64).max == 2 ** 63 - 1 and mg.iinfo(np.uint8).min == 0
    x = mg.tensor([[0.0, 1.0]]).masked_fill(mg.tensor([[True, True]]), mg.finfo(mg.float32).min)
    assert np.isfinite(mg.nn.functional.softmax(x, -1).numpy()).all()   # why masks use it
    with pytest.raises(TypeError, match="use mg.iinfo"):
        mg.finfo(mg.int32)
    with pytest.raises(TypeError, match="use mg.finfo"):
        mg.iinfo(mg.float32)
    with pytest.raises(TypeError, match="unknown dtype"):
        mg.finfo("quad")


def test_set_default_dtype_reaches_every_new_float(default_float64):
    assert mg.get_default_dtype() == mg.float64
    made = {"tensor": mg.tensor([1.0]), "zeros": mg.zeros(2), "randn": mg.randn(2),
            "rand": mg.rand(2), "full": mg.full((2,), 1.5), "arange": mg.arange(0.5, 2),
            "linspace": mg.linspace(0, 1, 3), "int + float": mg.tensor([1, 2]) + 0.5,
            "int / int": mg.tensor([1, 2]) / 2, "normal": mg.normal(0.0, 1.0, (2,)),
            "Linear": nn.Linear(2, 3).weight, "LayerNorm": nn.LayerNorm(3).weight,
            "Embedding": nn.Embedding(3, 2).weight, "GRU": nn.GRU(2, 3).weight_ih_l0}
    assert {k: str(v.dtype) for k, v in made.items()} == {k: "float64" for k in made}
    assert mg.tensor([1, 2]).dtype == mg.int64                    # integers keep theirs
    assert mg.zeros(2, dtype=mg.float32).dtype == mg.float32      # a dtype given wins


def test_set_default_dtype_refuses_integers():
    with pytest.raises(TypeError, match="only floating dtypes"):
        mg.set_default_dtype(mg.int64)
    assert mg.get_default_dtype() == mg.float32


def test_promote_types_follows_torch():
    torch = pytest.importorskip("torch")
    for a in DTYPES:
        for b in DTYPES:
            want = str(torch.promote_types(getattr(torch, a), getattr(torch, b)))
            assert str(mg.promote_types(a, np.dtype(b))) == want.removeprefix("torch."), \
                (a, b)
            assert mg.promote_types(getattr(torch, a), getattr(torch, b)) == \
                mg.promote_types(a, b)


def test_is_floating_point():
    assert mg.is_floating_point(mg.zeros(1, dtype=mg.float16))
    assert not mg.is_floating_point(mg.tensor([1]))


@pytest.mark.parametrize("name", ["uint8", "int8", "int16", "short"])
def test_every_integer_dtype_goes_by_its_torch_name(name):
    assert mg.zeros(2, dtype=name).dtype == np.dtype("int16" if name == "short" else name)
    torch = pytest.importorskip("torch")
    assert mg.zeros(2, dtype=getattr(torch, name)).dtype == mg.zeros(2, dtype=name).dtype


def test_finfo_without_a_dtype_is_the_defaults(default_float64):
    assert mg.finfo().bits == 64


def test_bfloat16_is_a_name_that_is_refused_wherever_it_is_used():
    """nanoGPT builds {'float32': torch.float32, 'bfloat16': torch.bfloat16, ...} before it
    picks one: the name must exist; using it is refused, saying what to use instead."""
    table = {"float32": mg.float32, "bfloat16": mg.bfloat16, "float16": mg.float16}
    assert table["float16"] == mg.float16 and "bfloat16" in repr(mg.bfloat16)
    x = mg.ones(2)
    uses = [lambda: mg.zeros(2, dtype=mg.bfloat16), lambda: x.to(mg.bfloat16),
            lambda: x.to("bfloat16"), lambda: x.to("cpu", mg.bfloat16),
            lambda: x.type(mg.bfloat16), lambda: mg.tensor([1.0], dtype="bfloat16"),
            lambda: mg.finfo(mg.bfloat16), lambda: mg.set_default_dtype(mg.bfloat16),
            lambda: mg.nn.Linear(2, 2, dtype=mg.bfloat16), lambda: x.sum(dtype=mg.bfloat16)]
    for use in uses:
        with pytest.raises(TypeError, match="bfloat16 is not available.*mg.float16"):
            use()
    with pytest.raises(TypeError, match="bfloat16"):
        mg.autocast("cpu", dtype=mg.bfloat16)
