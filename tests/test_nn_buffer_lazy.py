"""nn.Buffer (nn/buffer.py, registered by Module.__setattr__) and the lazy layers (nn/lazy.py:
LazyLinear, LazyConv*/LazyConvTranspose*, LazyBatchNorm*/LazyInstanceNorm*) with their
UninitializedParameters and UninitializedBuffers, as torch's: registration and persistence,
state dicts, materialisation at the first forward or at load_state_dict (lazy into lazy,
partial, refused), an optimiser built before, .to() before, mg.save, reprs and errors."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn, optim


def test_buffer_registers_itself_with_its_persistence():
    m = nn.Module()
    b = nn.Buffer(mg.ones(2), persistent=False)
    m.x = b
    assert m.x is b and dict(m.named_buffers()) == {"x": b}
    assert list(m.state_dict()) == []                   # not persistent
    m.y = nn.Buffer(mg.ones(3))
    m.y = mg.zeros(3)                                   # a buffer stays a buffer
    assert list(m.state_dict()) == ["y"] and not m.y.numpy().any()
    m.x = nn.Buffer(mg.ones(2))                         # now persistent, in its place
    assert list(m.state_dict()) == ["x", "y"]
    m.to(dtype="float64")
    assert m.x.dtype == mg.float64


def test_buffer_shares_memory_and_keeps_requires_grad():
    t = mg.ones(3, requires_grad=True)
    b = nn.Buffer(t)
    assert b.requires_grad and b._data is t._data
    assert nn.Buffer().shape == (0,) and nn.Buffer().dtype == mg.float32
    assert nn.Buffer(mg.ones(1)).persistent and not nn.Buffer(persistent=False).persistent


def test_buffer_errors_as_torch():
    m = nn.Module()
    m.p = nn.Parameter(mg.ones(2))
    with pytest.raises(TypeError, match="cannot assign a Buffer as parameter 'p'"):
        m.p = nn.Buffer(mg.ones(2))
    m.child = nn.Linear(2, 2)
    with pytest.raises(TypeError, match="child module 'child'"):
        m.child = nn.Buffer(mg.ones(2))
    with pytest.raises(TypeError, match="data must be a Tensor"):
        nn.Buffer([1.0, 2.0])


def test_lazy_linear_materialises_at_the_first_forward():
    m = nn.LazyLinear(3)
    assert repr(m) == "LazyLinear(in_features=0, out_features=3, bias=True)"
    assert m.has_uninitialized_params() and m.in_features == 0
    assert repr(m.weight) == "<UninitializedParameter>"
    with pytest.raises(RuntimeError, match="uninitialized parameter"):
        m.weight.shape
    opt = optim.SGD(m.parameters(), lr=0.1)             # built before: keeps them
    weight = m.weight
    y = m(mg.ones(2, 5))
    assert type(m) is nn.Linear and repr(m) == "Linear(in_features=5, out_features=3, bias=True)"
    assert m.weight is weight and type(weight) is nn.Parameter and weight.shape == (3, 5)
    assert np.abs(weight.numpy()).max() <= 1 / np.sqrt(5) and weight.numpy().std() > 0
    before = weight.numpy().copy()
    y.sum().backward()
    opt.step()
    np.testing.assert_allclose(weight.numpy(), before - 0.1 * 2)


def test_lazy_linear_state_dict_load_as_torch(torch):
    assert repr(nn.LazyLinear(3, bias=False)) == repr(torch.nn.LazyLinear(3, bias=False))
    sd = nn.LazyLinear(3).state_dict()
    assert list(sd) == ["weight", "bias"] and repr(sd["weight"]) == "<UninitializedParameter>"
    t = torch.nn.Linear(4, 3)
    m = nn.Sequential(nn.LazyLinear(3))
    m.load_state_dict({"0." + k: v for k, v in t.state_dict().items()})
    assert type(m[0]) is nn.Linear and m[0].in_features == 4
    x = np.random.default_rng(0).standard_normal((2, 4)).astype(np.float32)
    np.testing.assert_allclose(m(mg.tensor(x)).numpy(), t(torch.tensor(x)).detach().numpy(),
                               rtol=1e-6, atol=1e-6)     # (an output near 0: rtol alone fails)


def test_lazy_linear_takes_the_dtype():
    d = nn.Sequential(nn.LazyLinear(4), nn.ReLU(), nn.LazyLinear(2)).to(dtype="float64")
    assert d(mg.ones(3, 7, dtype="float64")).dtype == mg.float64
    assert d[0].weight.dtype == d[2].weight.dtype == mg.float64
    assert nn.LazyLinear(2, dtype=mg.float64)(mg.ones(1, 3, dtype="float64")).shape == (1, 2)


def test_lazy_linear_errors():
    with pytest.raises(ValueError, match="feature dim"):
        nn.LazyLinear(3)(mg.tensor(1.0))
    with pytest.raises(TypeError, match="out_features"):
        nn.LazyLinear(-1)
    # Adagrad makes its state when built: from a placeholder, refused then, as PyTorch's
    # (it used to make a (0,) sum and fail at the first step with a bare broadcast error)
    with pytest.raises(RuntimeError, match="uninitialized parameter"):
        mg.optim.Adagrad(nn.LazyLinear(3).parameters())


# ---- lazy convolutions and norms -----------------------------------------------------------
LAZY = [
    (lambda nn: nn.LazyConv1d(4, 3, padding=1, groups=2), (2, 6, 5)),
    (lambda nn: nn.LazyConv2d(3, (2, 3), stride=2, bias=False), (4, 5, 6)),
    (lambda nn: nn.LazyConv3d(2, 2, padding_mode="reflect", padding=1), (1, 3, 3, 2, 4)),
    (lambda nn: nn.LazyConvTranspose1d(4, 3, stride=2, output_padding=1), (2, 6, 5)),
    (lambda nn: nn.LazyConvTranspose2d(4, 2, groups=2), (1, 2, 3, 3)),
    (lambda nn: nn.LazyConvTranspose3d(2, (1, 2, 2), dilation=2), (1, 3, 2, 3, 3)),
    (lambda nn: nn.LazyBatchNorm1d(), (5, 3)),
    (lambda nn: nn.LazyBatchNorm2d(momentum=None, affine=False), (2, 3, 4, 4)),
    (lambda nn: nn.LazyBatchNorm3d(eps=1e-3), (2, 4, 2, 3, 2)),
    (lambda nn: nn.LazyInstanceNorm1d(), (2, 3, 5)),
    (lambda nn: nn.LazyInstanceNorm2d(affine=False, momentum=0.3), (2, 4, 3, 3)),
    (lambda nn: nn.LazyInstanceNorm3d(track_running_stats=False), (2, 3, 2, 2, 3))]


@pytest.mark.parametrize("make, shape", LAZY)
def test_lazy_layers_materialise_and_load_as_torch(make, shape):
    """The repr before and after the first forward, the layer it becomes, the state dict's
    entries and shapes; then torch's state dict loaded into a fresh one (which becomes its
    layer at once) gives torch's outputs and running statistics."""
    torch = pytest.importorskip("torch")
    x = np.random.default_rng(0).standard_normal(shape)
    mine, theirs = make(nn), make(torch.nn)
    assert repr(mine) == repr(theirs)
    assert [repr(v) for v in mine.state_dict().values()] == \
        [repr(v) for v in theirs.state_dict().values()]
    mine(mg.tensor(x, dtype="float32"))
    theirs(torch.tensor(x, dtype=torch.float32))
    assert type(mine).__name__ == type(theirs).__name__ and repr(mine) == repr(theirs)
    assert {k: tuple(v.shape) for k, v in mine.state_dict().items()} == \
        {k: tuple(v.shape) for k, v in theirs.state_dict().items()}
    fresh = make(nn).to(dtype="float64")
    fresh.load_state_dict(theirs.double().state_dict())
    assert repr(fresh) == repr(theirs)
    out = fresh(mg.tensor(x))
    np.testing.assert_allclose(out.numpy(), theirs(torch.tensor(x)).detach().numpy(),
                               rtol=1e-10, atol=1e-12)
    for k, v in theirs.state_dict().items():
        np.testing.assert_allclose(fresh.state_dict()[k].numpy(), v.numpy(), rtol=1e-10)


def test_lazy_norm_materialises_in_place_with_dtype_and_optimiser():
    m = nn.LazyBatchNorm1d(dtype=mg.float64)
    assert repr(m.running_mean) == "<UninitializedBuffer>" and m.has_uninitialized_params()
    with pytest.raises(RuntimeError, match="uninitialized parameter or buffer"):
        m.running_var.shape
    opt = optim.SGD(m.parameters(), lr=0.1)             # built before: keeps them
    weight = m.weight
    m.to(dtype="float32")                               # buffers replaced: placeholders still
    assert isinstance(m.running_mean, nn.UninitializedBuffer)
    x = np.random.default_rng(1).standard_normal((6, 2)) * 3 + 1
    y = m(mg.tensor(x, dtype="float32"))
    assert type(m) is nn.BatchNorm1d and m.weight is weight and weight.shape == (2,)
    assert m.running_mean.dtype == mg.float32 and type(m.running_mean) is mg.Tensor
    np.testing.assert_allclose(m.running_mean.numpy(), 0.1 * x.mean(0), rtol=1e-5)
    assert int(m.num_batches_tracked) == 1
    (y * mg.tensor(np.arange(12.0).reshape(6, 2), dtype="float32")).sum().backward()
    opt.step()
    assert not np.allclose(weight.numpy(), 1)


def test_lazy_layers_take_an_unbatched_inputs_channels():
    """An unbatched (C, L) input has its channels at dim 0 (torch's lazy instance norm reads
    dim 1, then refuses its own input)."""
    m = nn.LazyInstanceNorm1d()
    assert m(mg.randn(3, 5)).shape == (3, 5) and m.num_features == 3
    c = nn.LazyConvTranspose2d(2, 3)
    assert c(mg.randn(4, 5, 5)).shape == (2, 7, 7) and c.in_channels == 4


@pytest.mark.parametrize("call, error, words", [
    (lambda: nn.LazyConv2d(4, 3)(mg.randn(6, 6)), ValueError,
     r"expected a 3D \(unbatched\) or 4D \(batched\) input"),
    (lambda: nn.LazyConv2d(4, 3, groups=2)(mg.randn(5, 6, 6)), ValueError,
     "in_channels must be divisible by groups"),
    (lambda: nn.LazyConv1d(6, 3, groups=4), ValueError, "out_channels=6 must be divisible"),
    (lambda: nn.LazyConvTranspose1d(2, 3, padding_mode="reflect"), ValueError,
     "only padding_mode='zeros'"),
    (lambda: nn.LazyBatchNorm1d()(mg.randn(4, 3, 2, 2)), ValueError, "expected 2D or 3D"),
    (lambda: nn.LazyBatchNorm2d(momentum=2.0), ValueError, "momentum must be in")])
def test_lazy_layer_errors(call, error, words):
    with pytest.raises(error, match=words):
        call()


def test_lazy_layer_takes_another_lazy_layers_state_as_torch():
    """A placeholder in the state dict leaves the layer's own a placeholder (its key not
    missing), as torch's; the rest of the model loads."""
    src = nn.Sequential(nn.LazyConv1d(2, 3), nn.Linear(2, 2))
    dst = nn.Sequential(nn.LazyConv1d(2, 3), nn.Linear(2, 2))
    assert dst.load_state_dict(src.state_dict()) == ([], [])
    assert type(dst[0]) is nn.LazyConv1d and isinstance(dst[0].weight, nn.UninitializedParameter)
    np.testing.assert_array_equal(dst[1].weight.numpy(), src[1].weight.numpy())
    assert not dst[0].__dict__.get("_load_state_dict_post_hooks")   # (for that load only)
    with pytest.raises(RuntimeError, match="missing keys: 0.weight, 0.bias"):
        dst.load_state_dict(src[1].state_dict(prefix="1."))          # a later load: as ever
    assert dst(mg.randn(1, 4, 4)).shape == (1, 2, 2) and dst[0].in_channels == 4


def test_refused_strict_load_leaves_the_checkpoints_values():
    """A load that strict refuses after the layer took its shapes leaves it the checkpoint's
    values, as torch's (copied before it refuses), not uninitialised memory."""
    weight, bias = mg.randn(3, 4), mg.randn(3)
    m = nn.LazyLinear(3)
    with pytest.raises(RuntimeError, match="unexpected keys: extra"):
        m.load_state_dict({"weight": weight, "bias": bias, "extra": mg.ones(1)})
    assert type(m) is nn.Linear
    np.testing.assert_array_equal(m.weight.numpy(), weight.numpy())
    np.testing.assert_array_equal(m.bias.numpy(), bias.numpy())


@pytest.mark.parametrize("make, state, words", [
    (lambda: nn.LazyLinear(3), {"weight": mg.zeros(5, 4), "bias": mg.zeros(5)},
     r"weight: checkpoint \(5, 4\) vs model \(3, \?\), bias: checkpoint \(5,\) vs model "
     r"\(3,\)"),
    (lambda: nn.LazyLinear(3), {"weight": mg.zeros(0), "bias": mg.zeros(3)},
     r"weight: checkpoint \(0,\) vs model \(3, \?\)$"),
    (lambda: nn.LazyConv2d(4, 3, groups=2), {"weight": mg.zeros(4, 3, 3, 2),
                                             "bias": mg.zeros(4)},
     r"checkpoint \(4, 3, 3, 2\) vs model \(4, \?, 3, 3\)"),
    (lambda: nn.LazyConvTranspose1d(4, 3, groups=2), {"weight": mg.zeros(6, 4, 3),
                                                      "bias": mg.zeros(4)},
     r"checkpoint \(6, 4, 3\) vs model \(\?, 2, 3\)")])
def test_lazy_load_refuses_shapes_the_layer_cannot_take(make, state, words):
    """Shapes other than the layer's (but for the size it lacks) are refused, as a built
    layer's are (torch's takes them: a 'Linear(out_features=3)' with 5 outputs); nothing
    is materialised."""
    m = make()
    with pytest.raises(RuntimeError, match=f"{type(m).__name__} cannot take the shapes .*"
                                           + words):
        m.load_state_dict(state)
    assert type(m) is make().__class__ and m.has_uninitialized_params()
    assert m.bias is not None and isinstance(m.bias, nn.UninitializedParameter)


def test_placeholders_have_no_values_to_save(tmp_path):
    """mg.save of a lazy model before its first forward is an error (it wrote (0,) tensors,
    which loaded back as a layer of size 0), as reading a placeholder is in torch."""
    m = nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d())
    with pytest.raises(RuntimeError, match="values of an UninitializedParameter"):
        mg.save(m.state_dict(), str(tmp_path / "m.safetensors"))
    with pytest.raises(RuntimeError, match="values of an UninitializedBuffer"):
        m[1].running_mean.numpy()
    m(mg.randn(2, 4))
    mg.save(m.state_dict(), str(tmp_path / "m.safetensors"))
    fresh = nn.Sequential(nn.LazyLinear(3), nn.LazyBatchNorm1d())
    fresh.load_state_dict(mg.load(str(tmp_path / "m.safetensors")))
    assert repr(fresh) == repr(m)


def test_first_forward_keeps_what_a_non_strict_load_gave():
    """A non-strict load that leaves a placeholder (a checkpoint without the bias): the first
    forward initialises that one and keeps the loaded ones (torch's fails with an
    AttributeError), which must fit the input."""
    weight = mg.randn(3, 4)
    m = nn.LazyLinear(3)
    assert m.load_state_dict({"weight": weight}, strict=False).missing_keys == ["bias"]
    with pytest.raises(ValueError, match=r"weight \(3, 4\), expected \(3, 5\)"):
        m(mg.ones(2, 5))
    assert m(mg.ones(2, 4)).shape == (2, 3) and type(m) is nn.Linear
    np.testing.assert_array_equal(m.weight.numpy(), weight.numpy())
    assert 0 < np.abs(m.bias.numpy()).max() <= 0.5
    bn = nn.LazyBatchNorm1d()
    bn.load_state_dict({"running_mean": mg.ones(2)}, strict=False)
    bn(mg.tensor([[1.0, 2.0], [3.0, 4.0]]))
    np.testing.assert_allclose(bn.running_mean.numpy(), [0.9 + 0.2, 0.9 + 0.3], rtol=1e-6)
