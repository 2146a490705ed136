"""PyTorch's functions and methods that minigrad lacked, the differentiable ones: tan, sinh,
cosh, log2, log10, exp2, atan2, fmod, frac, lerp, addcmul, addcdiv, addmm, cross, tensordot,
cumprod (also with zeros in the input), median, diagonal/diag/trace, movedim, t,
broadcast_to, tile, select, hstack/vstack, meshgrid and diff. Each through the op suite: vs
torch in float32/float64, float64 gradcheck + gradgradcheck with a NumPy forward, double
backward vs torch, and the spy device (the stand-in for CuPy). Plain results and errors are
in test_ops_torch_gaps_plain.py."""
import numpy as np
import pytest

import minigrad as mg
from op_helpers import (OpCase, unary, check_vs_torch,
                        check_outputs_on_spy,
                        check_gradcheck, check_double_backward_vs_torch)


def _torch(name, *args, **kw):
    """torch.name(*tensors, *args, **kw), for cases whose minigrad spelling is mg.name."""
    def fn(*xs):
        import torch
        return getattr(torch, name)(*xs, *args, **kw)
    return fn


def _like(x, values):
    """A constant beside x (a minigrad or a torch tensor) of its dtype."""
    if isinstance(x, mg.Tensor):
        return mg.tensor(values, dtype=x.dtype, device=x.device)
    import torch
    return torch.tensor(values, dtype=x.dtype)


def _with_zeros(shape, where, domain="real"):
    """A constant that, subtracted from the case's input, makes it exactly 0 at `where` (the
    inputs are drawn from a fixed seed, so their values are known here): the function is
    then differentiated at those zeros, and a finite difference moves them off 0."""
    a = OpCase("", None, (shape,), domain=domain).arrays()[0]
    c = np.zeros(shape)
    for i in where:
        c[i] = a[i]
    return c


def _np_cumprod_zeros(c, axis):
    return lambda a: np.cumprod(a - c, axis)


Z1 = _with_zeros((3, 4), [(0, 1), (1, 0), (2, 3)])               # one zero per row
Z2 = _with_zeros((2, 5), [(0, 1), (0, 3), (1, 0), (1, 4)])       # two zeros per row
Z3 = _with_zeros((4, 2), [(0, 0), (2, 0), (3, 1)])               # along dim 0


def _np_median(a, axis):
    a = np.sort(a, axis)
    k = (a.shape[axis] - 1) // 2
    return np.take(a, k, axis)


def _np_diag1(a, k):
    return np.diag(a, k)


CASES = (
    unary("tan", lambda x: x.tan(), np_fn=np.tan, domain="unit")
    + unary("sinh", lambda x: x.sinh(), [(), (2, 3)], np_fn=np.sinh)
    + unary("cosh", lambda x: mg.cosh(x), [(), (2, 3)], np_fn=np.cosh,
            torch_fn=_torch("cosh"))
    + unary("log2", lambda x: x.log2(), [(), (2, 3)], np_fn=np.log2, domain="positive")
    + unary("log10", lambda x: mg.log10(x), [(2, 3)], np_fn=np.log10, domain="positive",
            torch_fn=_torch("log10"))
    + unary("exp2", lambda x: x.exp2(), [(), (2, 3)], np_fn=np.exp2)
    + unary("frac", lambda x: x.frac(), [(2, 3)], np_fn=lambda a: a - np.trunc(a))
    + [OpCase("atan2", lambda a, b: a.atan2(b), ((2, 3), (2, 3)), np_fn=np.arctan2,
              domain=("real", "nonzero")),
       OpCase("atan2_bcast", lambda a, b: mg.atan2(a, b), ((3,), (2, 1)), np_fn=np.arctan2,
              torch_fn=_torch("atan2"), domain=("nonzero", "real")),
       OpCase("fmod", lambda a, b: a.fmod(b), ((2, 3), (3,)), np_fn=np.fmod,
              domain=("real", "nonzero")),
       OpCase("fmod_scalar", lambda a: mg.fmod(a * 3, 1.5), ((2, 3),),
              np_fn=lambda a: np.fmod(a * 3, 1.5), torch_fn=lambda a: (a * 3).fmod(1.5)),
       OpCase("lerp", lambda s, e, w: s.lerp(e, w), ((2, 3), (2, 3), (2, 3)),
              np_fn=lambda s, e, w: s + w * (e - s)),
       OpCase("lerp_bcast", lambda s, e, w: mg.lerp(s, e, w), ((2, 3), (3,), (2, 1)),
              np_fn=lambda s, e, w: s + w * (e - s), torch_fn=_torch("lerp")),
       OpCase("lerp_low", lambda s, e: s.lerp(e, 0.25), ((2, 3), (2, 3)),
              np_fn=lambda s, e: s + 0.25 * (e - s)),
       OpCase("lerp_high", lambda s, e: s.lerp(e, 0.75), ((2, 3), (2, 3)),
              np_fn=lambda s, e: s + 0.75 * (e - s)),
       OpCase("addcmul", lambda x, a, b: x.addcmul(a, b, value=0.5), ((2, 3), (3,), (2, 1)),
              np_fn=lambda x, a, b: x + 0.5 * a * b),
       OpCase("addcdiv", lambda x, a, b: mg.addcdiv(x, a, b, value=-2), ((2, 3), (2, 3), (3,)),
              np_fn=lambda x, a, b: x - 2 * a / b, torch_fn=_torch("addcdiv", value=-2),
              domain=("real", "real", "nonzero")),
       OpCase("addmm", lambda x, m, n: mg.addmm(x, m, n), ((3,), (2, 4), (4, 3)),
              np_fn=lambda x, m, n: x + m @ n, torch_fn=_torch("addmm")),
       OpCase("addmm_scaled", lambda x, m, n: x.addmm(m, n, beta=0.5, alpha=-2),
              ((2, 3), (2, 4), (4, 3)), np_fn=lambda x, m, n: 0.5 * x - 2 * (m @ n)),
       OpCase("cross", lambda a, b: a.cross(b, dim=1), ((4, 3), (4, 3)),
              np_fn=lambda a, b: np.cross(a, b, axis=1)),
       OpCase("cross_bcast", lambda a, b: mg.cross(a, b, dim=-1), ((1, 3), (2, 3)),
              np_fn=lambda a, b: np.cross(a, b), torch_fn=_torch("cross", dim=-1)),
       OpCase("cross_first_dim_of_3", lambda a, b: mg.cross(a, b), ((2, 3, 3), (2, 3, 3)),
              np_fn=lambda a, b: np.cross(a, b, axis=1), torch_fn=_torch("cross", dim=1)),
       OpCase("tensordot", lambda a, b: mg.tensordot(a, b, ([1, 0], [0, 2])),
              ((3, 4, 2), (4, 5, 3)), np_fn=lambda a, b: np.tensordot(a, b, ([1, 0], [0, 2])),
              torch_fn=_torch("tensordot", dims=([1, 0], [0, 2]))),
       OpCase("tensordot_int", lambda a, b: mg.tensordot(a, b, 1), ((2, 3), (3, 4)),
              np_fn=lambda a, b: np.tensordot(a, b, 1), torch_fn=_torch("tensordot", dims=1)),
       OpCase("tensordot_outer", lambda a, b: mg.tensordot(a, b, 0), ((2, 3), (4,)),
              np_fn=lambda a, b: np.tensordot(a, b, 0), torch_fn=_torch("tensordot", dims=0)),
       OpCase("cumprod", lambda x: x.cumprod(1), ((3, 4),), np_fn=lambda a: np.cumprod(a, 1)),
       OpCase("cumprod_1d", lambda x: mg.cumprod(x, -1), ((5,),), np_fn=np.cumprod,
              torch_fn=_torch("cumprod", -1)),
       OpCase("cumprod_0d", lambda x: x.cumprod(0), ((),), np_fn=lambda a: a),
       OpCase("cumprod_zero", lambda x: (x - _like(x, Z1)).cumprod(1), ((3, 4),),
              np_fn=_np_cumprod_zeros(Z1, 1)),
       OpCase("cumprod_zeros", lambda x: (x - _like(x, Z2)).cumprod(-1), ((2, 5),),
              np_fn=_np_cumprod_zeros(Z2, -1)),
       OpCase("cumprod_zeros_dim0", lambda x: (x - _like(x, Z3)).cumprod(0), ((4, 2),),
              np_fn=_np_cumprod_zeros(Z3, 0)),
       OpCase("median", lambda x: x.median(1), ((3, 5),),
              np_fn=lambda a: (_np_median(a, 1), np.argsort(a, 1)[:, 2])),
       OpCase("median_even_keepdim", lambda x: mg.median(x, 0, keepdim=True), ((4, 3),),
              torch_fn=_torch("median", 0, keepdim=True),
              np_fn=lambda a: (_np_median(a, 0)[None], np.argsort(a, 0)[1:2])),
       OpCase("median_all", lambda x: x.median(), ((3, 4),),
              np_fn=lambda a: _np_median(a.reshape(-1), 0)),
       OpCase("diagonal", lambda x: x.diagonal(), ((3, 4),), np_fn=np.diagonal),
       OpCase("diagonal_offsets", lambda x: (x.diagonal(1), mg.diagonal(x, -2)), ((3, 4),),
              np_fn=lambda a: (np.diagonal(a, 1), np.diagonal(a, -2)),
              torch_fn=lambda x: (x.diagonal(1), x.diagonal(-2))),
       OpCase("diagonal_dims", lambda x: x.diagonal(1, -1, 0), ((3, 2, 4),),
              np_fn=lambda a: np.diagonal(a, 1, 2, 0)),
       OpCase("diag_make", lambda x: (x.diag(), x.diag(1), mg.diag(x, -2)), ((3,),),
              np_fn=lambda a: (np.diag(a), np.diag(a, 1), np.diag(a, -2)),
              torch_fn=lambda x: (x.diag(), x.diag(1), x.diag(-2))),
       OpCase("diag_take", lambda x: x.diag(-1), ((3, 4),), np_fn=lambda a: np.diag(a, -1)),
       OpCase("diagonal_of_diag", lambda x: x.diag().diagonal() * x, ((3,),),
              np_fn=lambda a: a * a),
       OpCase("trace", lambda x: x.trace(), ((3, 4),), np_fn=np.trace),
       OpCase("movedim", lambda x: x.movedim((0, 1), (2, 0)), ((2, 3, 4),),
              np_fn=lambda a: np.moveaxis(a, (0, 1), (2, 0))),
       OpCase("movedim_int", lambda x: mg.movedim(x, -1, 0), ((2, 3, 4),),
              np_fn=lambda a: np.moveaxis(a, -1, 0), torch_fn=_torch("movedim", -1, 0)),
       OpCase("t", lambda x: (x.t(), mg.t(x[0])), ((2, 3),), np_fn=lambda a: (a.T, a[0]),
              torch_fn=lambda x: (x.t(), x[0].t())),
       OpCase("broadcast_to", lambda x: x.broadcast_to((2, 3, 4)), ((3, 1),),
              np_fn=lambda a: np.broadcast_to(a, (2, 3, 4))),
       OpCase("broadcast_to_keep", lambda x: mg.broadcast_to(x, (2, -1)), ((3,),),
              np_fn=lambda a: np.broadcast_to(a, (2, 3)), torch_fn=_torch("broadcast_to",
                                                                          (2, -1))),
       OpCase("tile", lambda x: x.tile((2,)), ((2, 3),), np_fn=lambda a: np.tile(a, 2)),
       OpCase("tile_more", lambda x: mg.tile(x, (2, 1, 3)), ((2, 3),),
              np_fn=lambda a: np.tile(a, (2, 1, 3)), torch_fn=_torch("tile", (2, 1, 3))),
       OpCase("select", lambda x: (x.select(1, -1), mg.select(x, 0, 1)), ((2, 3, 4),),
              np_fn=lambda a: (a[:, -1], a[1]), torch_fn=lambda x: (x.select(1, -1),
                                                                    x.select(0, 1))),
       OpCase("hstack", lambda a, b: mg.hstack([a, b]), ((2, 3), (2, 1)),
              np_fn=lambda a, b: np.hstack([a, b]), torch_fn=lambda a, b: _torch("hstack")(
                  [a, b])),
       OpCase("hstack_1d", lambda a, b: mg.hstack((a, b)), ((3,), ()),
              np_fn=lambda a, b: np.hstack([a, b]), torch_fn=lambda a, b: _torch("hstack")(
                  [a, b])),
       OpCase("vstack", lambda a, b: mg.vstack([a, b]), ((3,), (2, 3)),
              np_fn=lambda a, b: np.vstack([a, b]), torch_fn=lambda a, b: _torch("vstack")(
                  [a, b])),
       OpCase("meshgrid_ij", lambda a, b: mg.meshgrid(a, b, indexing="ij"), ((3,), (4,)),
              np_fn=lambda a, b: np.meshgrid(a, b, indexing="ij"),
              torch_fn=lambda a, b: _torch("meshgrid", indexing="ij")(a, b)),
       OpCase("meshgrid_xy", lambda a, b, c: mg.meshgrid([a, b, c], indexing="xy"),
              ((2,), (3,), ()), np_fn=lambda a, b, c: np.meshgrid(a, b, c),
              torch_fn=lambda a, b, c: _torch("meshgrid", indexing="xy")(a, b, c)),
       OpCase("diff", lambda x: x.diff(), ((2, 5),), np_fn=lambda a: np.diff(a)),
       OpCase("diff_n2_dim0", lambda x: mg.diff(x, 2, 0), ((4, 3),),
              np_fn=lambda a: np.diff(a, 2, 0), torch_fn=_torch("diff", 2, 0)),
       OpCase("diff_prepend_append", lambda x, p, q: x.diff(2, 1, prepend=p, append=q),
              ((2, 4), (2, 1), (2, 2)),
              np_fn=lambda x, p, q: np.diff(x, 2, 1, prepend=p, append=q),
              torch_fn=lambda x, p, q: x.diff(2, 1, prepend=p, append=q))]
)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vs_torch(case, device, dtype):
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case, device):
    check_gradcheck(case, device)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_double_backward_vs_torch(case, device):
    check_double_backward_vs_torch(case, device)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_on_the_gpu_stand_in(case, spy):
    """Forward and backward on the spy device (no NumPy behind the backend's back), the
    values as NumPy's formula, every gradient on the device."""
    check_outputs_on_spy(case, spy)


@pytest.mark.parametrize("name", ["fmod", "remainder"])
def test_quotient_stays_in_the_graph_so_second_derivatives_are_zero(name):
    """d/db of a mod b is -q, q the integer quotient: a step function of a and b, so its own
    derivatives are 0 (PyTorch's), not a cut in the graph ("does not require grad")."""
    a = mg.tensor([5.3, -2.7, 7.1], dtype=mg.float64, requires_grad=True)
    b = mg.tensor([1.5, 0.8, -2.2], dtype=mg.float64, requires_grad=True)
    _, gb = mg.grad(getattr(mg, name)(a, b).sum(), [a, b], create_graph=True)
    quotient = {"fmod": [3, -3, -3], "remainder": [3, -4, -4]}[name]
    assert gb.numpy().tolist() == [-q for q in quotient] and gb.requires_grad
    for g in mg.grad((gb * gb).sum(), [a, b]):
        assert g.numpy().tolist() == [0.0, 0.0, 0.0]


def test_float32_log2_and_log10_are_rounded_as_torch(torch):
    """Computed in float64 and rounded once (ops/math.py): in float32 PyTorch's to the bit
    on nearly every input, and never an ulp apart (NumPy's own float32 log10 is off on
    about half of them, log10(100) 2.0000002)."""
    x = np.random.default_rng(0).uniform(1e-3, 1e3, 10000).astype(np.float32)
    for name in ("log2", "log10"):
        ours = getattr(mg, name)(mg.tensor(x)).numpy()
        theirs = getattr(torch, name)(torch.from_numpy(x)).numpy()
        assert (ours != theirs).mean() < 0.01, name
        np.testing.assert_array_max_ulp(ours, theirs, maxulp=1)
    assert mg.tensor(100.0).log10().item() == torch.tensor(100.0).log10().item() == 2.0
