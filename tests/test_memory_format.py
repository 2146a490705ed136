"""Memory formats (minigrad/memory_format.py): strides and is_contiguous against PyTorch's
for many layouts, clone's preserve_format rule, contiguous / to / the *_like factories /
mg.empty / Module.to with memory_format, the *_copy functions' row-major outputs, ops
on channels_last inputs giving the same values and gradients, a leaf's .grad laid out as
the leaf, interpolate's output layout, and pickles keeping the layout."""
import copy
import pickle

import numpy as np
import pytest

import minigrad as mg
import minigrad.nn as nn
import minigrad.nn.functional as F

FORMATS = ("contiguous_format", "channels_last", "channels_last_3d", "preserve_format")

# layouts built alike in both libraries from a row-major tensor t of `shape`
LAYOUTS = {
    "rowmajor4": ((2, 3, 4, 5), lambda L, t: t),
    "channels_last": ((2, 3, 4, 5), lambda L, t: t.contiguous(memory_format=L.channels_last)),
    "nhwc_permute": ((2, 4, 5, 3), lambda L, t: t.permute(0, 3, 1, 2)),
    "transpose_hw": ((2, 3, 4, 5), lambda L, t: t.transpose(2, 3)),
    "cl_transpose": ((2, 3, 4, 5), lambda L, t: t.contiguous(
        memory_format=L.channels_last).transpose(0, 1)),
    "stepped": ((2, 3, 4, 6), lambda L, t: t[:, :, :, ::2]),
    "cl_stepped": ((2, 3, 4, 6), lambda L, t: t.contiguous(
        memory_format=L.channels_last)[:, :, ::2]),
    "expanded": ((2, 3, 1, 5), lambda L, t: t.expand(2, 3, 4, 5)),
    "expanded_c": ((2, 1, 4, 5), lambda L, t: t.expand(2, 3, 4, 5)),
    "n111": ((4, 1, 1, 1), lambda L, t: t),
    "nc11": ((2, 3, 1, 1), lambda L, t: t),
    "nc11_cl": ((2, 3, 1, 1), lambda L, t: t.contiguous(memory_format=L.channels_last)),
    "n1hw_cl": ((2, 1, 4, 5), lambda L, t: t.contiguous(memory_format=L.channels_last)),
    "1c1w_t": ((1, 3, 1, 4), lambda L, t: t.transpose(1, 3)),
    "size1_transposed": ((2, 1, 3), lambda L, t: t.transpose(0, 1)),
    "matrix_t": ((3, 4), lambda L, t: t.t()),
    "rows_stepped": ((6, 4), lambda L, t: t[::2]),
    "cols_stepped": ((4, 6), lambda L, t: t[:, ::2]),
    "cl3d": ((2, 3, 2, 4, 5), lambda L, t: t.contiguous(memory_format=L.channels_last_3d)),
    "ndhwc_permute": ((2, 2, 4, 5, 3), lambda L, t: t.permute(0, 4, 1, 2, 3)),
    "t_stepped": ((4, 6), lambda L, t: t.t()[::2]),             # non-dense: order kept
    "perm_stepped": ((2, 3, 4, 6), lambda L, t: t.permute(0, 2, 1, 3)[..., ::2]),
    "cl_expanded": ((2, 3, 1, 5), lambda L, t: t.contiguous(
        memory_format=L.channels_last).expand(2, 3, 4, 5)),
    "vector": ((5,), lambda L, t: t),
    "scalar": ((), lambda L, t: t),
}


def _pair(torch, name):
    shape, make = LAYOUTS[name]
    n = int(np.prod(shape))
    values = np.arange(n, dtype=np.float32).reshape(shape)
    return make(mg, mg.tensor(values)), make(torch, torch.tensor(values)), torch


def _fmt(lib, name):
    return getattr(lib, name)


def test_constants_type_repr_and_pickle():
    assert [repr(_fmt(mg, f)) for f in FORMATS] == [f"minigrad.{f}" for f in FORMATS]
    assert all(isinstance(_fmt(mg, f), mg.memory_format) for f in FORMATS)
    assert pickle.loads(pickle.dumps(mg.channels_last)) is mg.channels_last
    assert copy.deepcopy(mg.preserve_format) is mg.preserve_format


@pytest.mark.parametrize("name", LAYOUTS)
def test_strides_and_is_contiguous_match_torch(torch, name):
    x, tx, _ = _pair(torch, name)
    assert x.stride() == tx.stride()
    for f in FORMATS:
        assert x.is_contiguous(memory_format=_fmt(mg, f)) == \
            tx.is_contiguous(memory_format=_fmt(torch, f)), f
    assert x.dim_order() == tx.dim_order()


@pytest.mark.parametrize("name", LAYOUTS)
def test_clone_and_like_factories_lay_out_as_torch(torch, name):
    x, tx, _ = _pair(torch, name)
    formats = ["preserve_format", "contiguous_format"] + \
        {4: ["channels_last"], 5: ["channels_last_3d"]}.get(x.ndim, [])
    for f in formats:
        out, want = x.clone(memory_format=_fmt(mg, f)), tx.clone(memory_format=_fmt(torch, f))
        assert out.stride() == want.stride(), f
        np.testing.assert_array_equal(out.numpy(), tx.numpy())
        for like in ("empty_like", "zeros_like", "ones_like", "rand_like", "randn_like"):
            got = getattr(mg, like)(x, memory_format=_fmt(mg, f))
            assert got.stride() == getattr(torch, like)(
                tx, memory_format=_fmt(torch, f)).stride(), (f, like)
        got = mg.full_like(x, 7.0, memory_format=_fmt(mg, f))
        assert got.stride() == want.stride() and (got.numpy() == 7).all()
    assert x.clone().stride() == tx.clone().stride()                # the default: preserve
    assert mg.zeros_like(x).stride() == torch.zeros_like(tx).stride()
    assert mg.clone(x).stride() == torch.clone(tx).stride()


@pytest.mark.parametrize("name", LAYOUTS)
def test_contiguous_and_to_match_torch(torch, name):
    x, tx, _ = _pair(torch, name)
    formats = ["contiguous_format"] + {4: ["channels_last"],
                                        5: ["channels_last_3d"]}.get(x.ndim, [])
    for f in formats:
        out, want = x.contiguous(memory_format=_fmt(mg, f)), \
            tx.contiguous(memory_format=_fmt(torch, f))
        assert (out is x) == (want is tx) and out.stride() == want.stride(), f
        out, want = x.to(memory_format=_fmt(mg, f)), tx.to(memory_format=_fmt(torch, f))
        assert (out is x) == (want is tx) and out.stride() == want.stride(), f
        np.testing.assert_array_equal(out.numpy(), tx.numpy())
        out = x.to(mg.float64, memory_format=_fmt(mg, f))   # a new copy: f's own strides
        assert out.stride() == tx.to(torch.float64, memory_format=_fmt(torch, f)).stride()
    assert x.to(memory_format=mg.preserve_format) is x
    out, want = x.to(mg.float64), tx.to(torch.float64)          # a copy keeps the layout
    assert out.stride() == want.stride()


def test_flipped_input_clones_row_major():
    """Where minigrad differs on purpose: PyTorch has no negative strides; a flipped view's
    preserve_format copy is laid out as a non-dense input's (row-major here)."""
    x = mg.randn(2, 3, 4, 5).contiguous(memory_format=mg.channels_last)
    f = x[:, :, ::-1]                              # (a view here; PyTorch refuses the step)
    assert f.stride()[2] < 0
    assert f.clone().stride() == (60, 20, 5, 1)
    assert mg.empty_like(f).stride() == (60, 20, 5, 1)
    np.testing.assert_array_equal(f.clone().numpy(), f.numpy())
    assert not f.is_contiguous(memory_format=mg.channels_last) and not f.is_contiguous()


def test_empty_with_memory_format():
    assert mg.empty(2, 3, 4, 5, memory_format=mg.channels_last).stride() == (60, 1, 15, 3)
    assert mg.empty(2, 3, 2, 4, 5, memory_format=mg.channels_last_3d).stride() == \
        (120, 1, 60, 15, 3)
    e = mg.empty((2, 3, 4, 5), memory_format=mg.contiguous_format, requires_grad=True)
    assert e.is_leaf and e.requires_grad and e.is_contiguous()
    with pytest.raises(RuntimeError, match="preserve_format"):
        mg.empty(2, 3, 4, 5, memory_format=mg.preserve_format)


def test_errors_name_the_format_and_rank():
    x = mg.randn(2, 3, 4)
    for call in (lambda: x.contiguous(memory_format=mg.channels_last),
                 lambda: x.clone(memory_format=mg.channels_last),
                 lambda: x.to(memory_format=mg.channels_last),
                 lambda: mg.empty_like(x, memory_format=mg.channels_last),
                 lambda: mg.zeros_like(x[:0], memory_format=mg.channels_last),
                 lambda: mg.empty(2, 3, 4, memory_format=mg.channels_last)):
        with pytest.raises(RuntimeError, match="required rank 4 tensor to use channels_last"):
            call()
    with pytest.raises(RuntimeError, match="required rank 5 tensor to use channels_last_3d"):
        mg.randn(2, 3, 4, 5).contiguous(memory_format=mg.channels_last_3d)
    with pytest.raises(RuntimeError, match="preserve memory format is unsupported"):
        x.contiguous(memory_format=mg.preserve_format)
    with pytest.raises(TypeError, match="memory_format must be one of"):
        x.clone(memory_format="channels_last")
    with pytest.raises(TypeError, match="Linear.to: memory_format must be one of"):
        nn.Linear(2, 3).to(memory_format="channels_last")    # (even with no 4-D weight)
    with pytest.raises(TypeError, match="zeros_like: input must be a Tensor, got list"):
        mg.zeros_like([1.0, 2.0])


def test_module_to_channels_last():
    m = nn.Sequential(nn.Conv2d(3, 4, 3), nn.BatchNorm2d(4), nn.Linear(3, 2))
    w = m[0].weight
    opt = mg.optim.SGD(m.parameters(), lr=0.1)
    before = w.detach().numpy().copy()
    assert m.to(memory_format=mg.channels_last) is m
    assert m[0].weight is w and w.stride() == (27, 1, 9, 3)     # in place, as torch's
    assert w.is_contiguous(memory_format=mg.channels_last)
    np.testing.assert_array_equal(w.numpy(), before)
    assert m[2].weight.stride() == (3, 1) and m[0].bias.stride() == (1,)
    m(mg.randn(2, 3, 5, 5)).sum().backward()
    opt.step()
    assert w.grad.shape == w.shape
    with pytest.raises(RuntimeError, match="required rank 4"):
        nn.Conv3d(2, 2, 3).to(memory_format=mg.channels_last)


def test_copy_functions_are_row_major(torch):
    x = mg.randn(2, 3, 4, 5).contiguous(memory_format=mg.channels_last)
    tx = torch.tensor(x.numpy()).contiguous(memory_format=torch.channels_last)
    cases = [("permute_copy", ((0, 2, 3, 1),)), ("alias_copy", ()), ("detach_copy", ()),
             ("transpose_copy", (1, 2)), ("narrow_copy", (0, 0, 1)),
             ("expand_copy", ((2, 3, 4, 5),)), ("slice_copy", (3, 0, 4, 2))]
    for name, args in cases:
        out, want = getattr(mg, name)(x, *args), getattr(torch, name)(tx, *args)
        assert out.stride() == want.stride() == out.contiguous().stride(), name
        np.testing.assert_allclose(out.numpy(), want.numpy())
    assert [p.stride() for p in mg.unbind_copy(x, 1)] == \
        [p.stride() for p in torch.unbind_copy(tx, 1)]
    assert x.narrow_copy(0, 0, 1).stride() == (60, 20, 5, 1)
    assert mg.as_strided_copy(x, (2, 3, 4, 5), (60, 1, 15, 3)).stride() == (60, 20, 5, 1)


def test_internal_copies_stay_row_major():
    """repeat and repeat_interleave copy a view of x where they cannot reshape it: always
    row-major, as PyTorch's, whatever x's layout."""
    x = mg.randn(2, 3).t()
    assert x.repeat(1, 1).stride() == (2, 1)
    assert x.repeat_interleave(1, dim=0).stride() == (2, 1)


def _cl(t):
    return t.detach().contiguous(memory_format=mg.channels_last).requires_grad_(True)


def test_ops_on_channels_last_give_the_same_values_and_gradients():
    mg.manual_seed(0)
    x = mg.randn(2, 3, 6, 6, requires_grad=True)
    w = mg.randn(4, 3, 3, 3, requires_grad=True)
    y = mg.randn(2, 3, 6, 6, requires_grad=True)

    def f(x, w, y):
        h = F.conv2d(x + y, w, padding=1)
        h = F.batch_norm(h, None, None, training=True)
        return F.max_pool2d(h, 2)
    ref = f(x, w, y)
    ref.backward(mg.ones_like(ref) * mg.arange(ref.numel()).reshape(ref.shape))
    xc, wc, yc = _cl(x), _cl(w), _cl(y)
    assert xc.stride() == (108, 1, 18, 3)
    out = f(xc, wc, yc)
    out.backward(mg.ones_like(out) * mg.arange(out.numel()).reshape(out.shape))
    np.testing.assert_allclose(out.numpy(), ref.numpy(), rtol=1e-5, atol=1e-5)
    for a, b in ((xc, x), (wc, w), (yc, y)):
        np.testing.assert_allclose(a.grad.numpy(), b.grad.numpy(), rtol=1e-4, atol=1e-4)


def test_layout_copies_are_differentiable():
    x = mg.randn(2, 3, 2, 3, dtype=mg.float64, requires_grad=True)
    assert mg.gradcheck(lambda t: t.clone(memory_format=mg.channels_last) * t, (x,))
    assert mg.gradcheck(lambda t: t.contiguous(memory_format=mg.channels_last).sum(1), (x,))
    assert mg.gradcheck(lambda t: t.permute(0, 2, 3, 1).clone().exp(), (x,))


def test_channels_last_tensor_in_place_and_copies():
    x = mg.arange(120.0).reshape(2, 3, 4, 5).contiguous(memory_format=mg.channels_last)
    want = np.arange(120.0).reshape(2, 3, 4, 5)
    x.add_(1)
    x[:, 0] = 0
    want = want + 1
    want[:, 0] = 0
    np.testing.assert_array_equal(x.numpy(), want)
    assert x.is_contiguous(memory_format=mg.channels_last)
    for y in (copy.deepcopy(x), pickle.loads(pickle.dumps(x))):
        np.testing.assert_array_equal(y.numpy(), want)
        assert y.stride() == x.stride()                 # laid out as it was, as torch's
    t = mg.arange(12.0).reshape(3, 4).t()
    assert pickle.loads(pickle.dumps(t)).stride() == (1, 4)
    p = pickle.loads(pickle.dumps(nn.Parameter(x.clone())))
    assert type(p) is nn.Parameter and p.stride() == x.stride() and p.requires_grad


@pytest.mark.filterwarnings("ignore:Using backward\\(\\) with create_graph")
def test_leaf_grad_is_laid_out_as_the_leaf(torch):
    """As PyTorch's: a dense leaf's .grad has its strides (channels_last stays so), any
    other leaf's is row-major; create_graph's too; a second backward adds in place."""
    values = np.arange(120.0).reshape(2, 3, 4, 5)
    leaves = [lambda L, t: t.contiguous(memory_format=L.channels_last),
              lambda L, t: t.permute(0, 2, 3, 1), lambda L, t: t[:, :, ::2],
              lambda L, t: t[:, :1].expand(2, 3, 4, 5)]
    for make in leaves:
        for create_graph in (False, True):
            x = make(mg, mg.tensor(values)).detach().requires_grad_()
            tx = make(torch, torch.tensor(values)).detach().requires_grad_()
            for leaf, lib in ((x, mg), (tx, torch)):
                w = lib.arange(float(leaf.shape[-1]))
                (leaf.contiguous() * w).sum().backward(create_graph=create_graph)
            assert x.grad.stride() == tx.grad.stride()
            np.testing.assert_array_equal(x.grad.detach().numpy(), tx.grad.detach().numpy())
    x = mg.randn(2, 3, 4, 5).contiguous(memory_format=mg.channels_last).requires_grad_()
    (x * x).sum().backward()
    held = x.grad
    (x * 2).sum().backward()
    assert x.grad is held and held.is_contiguous(memory_format=mg.channels_last)


def test_channels_last_weights_train_channels_last():
    """Module.to(memory_format=channels_last): the weight's gradient (each backward's) and
    an optimiser's step keep the layout."""
    m = nn.Conv2d(3, 4, 3).to(memory_format=mg.channels_last)
    opt = mg.optim.Adam(m.parameters(), lr=0.1)
    for _ in range(2):
        opt.zero_grad()
        m(mg.randn(2, 3, 5, 5)).sum().backward()
        assert m.weight.grad.stride() == (27, 1, 9, 3)
        opt.step()
    assert m.weight.stride() == (27, 1, 9, 3)


@pytest.mark.parametrize("mode", ["nearest", "nearest-exact", "bilinear", "bicubic"])
def test_interpolate_lays_out_as_torch(torch, mode):
    """In the input's suggested format (indexing along H left NumPy's own order before)."""
    values = np.random.default_rng(0).standard_normal((2, 3, 4, 5)).astype(np.float32)
    for fmt in ("contiguous_format", "channels_last"):
        x = mg.tensor(values).contiguous(memory_format=_fmt(mg, fmt))
        tx = torch.tensor(values).contiguous(memory_format=_fmt(torch, fmt))
        for kw in ({"scale_factor": 2}, {"size": (4, 5)}, {"size": (3, 7)}):
            out, want = F.interpolate(x, mode=mode, **kw), \
                torch.nn.functional.interpolate(tx, mode=mode, **kw)
            assert out.stride() == want.stride(), (fmt, kw)
            np.testing.assert_allclose(out.numpy(), want.numpy(), rtol=1e-5, atol=1e-5)


def test_interpolate_of_a_row_major_input_is_row_major():
    x = mg.randn(2, 3, 4, 5)
    for mode in ("nearest", "bilinear"):
        out = F.interpolate(x, scale_factor=2, mode=mode)
        assert out.is_contiguous() and out.view(2, -1).shape == (2, 240)
    out = F.interpolate(mg.randn(2, 3, 2, 3, 4), scale_factor=2, mode="trilinear")
    assert out.is_contiguous()
    x = mg.randn(2, 3, 4, 5, requires_grad=True)
    assert mg.gradcheck(lambda t: F.interpolate(t.contiguous(memory_format=mg.channels_last),
                                                scale_factor=2, mode="bilinear"),
                        (x.detach().double().requires_grad_(),))
