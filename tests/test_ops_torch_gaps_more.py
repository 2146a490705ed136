"""More of PyTorch's differentiable functions, through the op suite: take_along_dim,
broadcast_tensors, tensor_split, logcumsumexp, cummax/cummin, nansum/nanmean, xlogy, logit,
var_mean/std_mean, aminmax, kthvalue, diag_embed, rot90, cdist, lgamma, digamma, polygamma
and erfinv. Each against torch in float32/float64 (values, dtypes, gradients), float64
gradcheck + gradgradcheck with a NumPy/SciPy forward (no torch needed), second derivatives
against torch where torch has them, and the spy device (the stand-in for CuPy). Literal
values, ties, NaN, integers, the non-differentiable ones (count_nonzero, bincount,
searchsorted, bucketize) and errors are in test_ops_torch_gaps_more_plain.py."""
import math

import numpy as np
import pytest
from scipy import special

import minigrad as mg
import op_helpers
from op_helpers import (OpCase, unary, check_vs_torch,
                        check_outputs_on_spy,
                        check_gradcheck, check_double_backward_vs_torch)

NAN = float("nan")


def _torch(name, *args, **kw):
    """torch.name(*tensors, *args, **kw), for cases whose minigrad spelling is mg.name."""
    def fn(*xs):
        import torch
        return getattr(torch, name)(*xs, *args, **kw)
    return fn


def _ints(x, values):
    """An int64 constant beside x, a minigrad or a torch tensor."""
    if isinstance(x, mg.Tensor):
        return mg.tensor(values, dtype=mg.int64, device=x.device)
    import torch
    return torch.tensor(values, dtype=torch.int64)


def _mask(x, values):
    """A bool constant beside x, a minigrad or a torch tensor."""
    if isinstance(x, mg.Tensor):
        return mg.tensor(values, device=x.device)
    import torch
    return torch.tensor(values)


IDX = [[2, 0, 0, 3], [1, 1, 0, 2], [3, 2, 1, 0]]                 # (3, 4): along dim 1
IDX_B = np.array([[[0, 3], [2, 2], [1, 0], [3, 1], [0, 0]]])   # (1, 5, 2): broadcasts
HOLES = [[True, False, False, True], [False, False, False, False], [True, True, True, False]]


def _np_running_index(a, axis, better):
    """cummax/cummin's indices, one step at a time (the last index reaching the extreme)."""
    a = np.moveaxis(a, axis, -1)
    out = np.zeros(a.shape, np.int64)
    for pos in np.ndindex(a.shape[:-1]):
        best = 0
        for i in range(a.shape[-1]):
            if better(a[pos][i], a[pos][best]) or a[pos][i] == a[pos][best]:
                best = i
            out[pos + (i,)] = best
    return np.moveaxis(out, -1, axis)


def _np_cummax(a, axis):
    return np.maximum.accumulate(a, axis), _np_running_index(a, axis, np.greater)


def _np_cummin(a, axis):
    return np.minimum.accumulate(a, axis), _np_running_index(a, axis, np.less)


def _np_kthvalue(a, k, axis, keepdim=False):
    order = np.argsort(a, axis, kind="stable")
    idx = np.take(order, [k - 1], axis)
    values = np.take_along_axis(a, idx, axis)
    return (values, idx) if keepdim else (values.squeeze(axis), idx.squeeze(axis))


def _np_diag_embed(a, offset=0, dim1=-2, dim2=-1):
    n, k = a.shape[-1], abs(offset)
    out = np.zeros(a.shape[:-1] + (n + k, n + k))
    rows = np.arange(n) + max(-offset, 0)
    out[..., rows, rows + offset] = a
    return np.moveaxis(out, (-2, -1), (dim1 % (a.ndim + 1), dim2 % (a.ndim + 1)))


def _np_cdist(a, b, p):
    diff = a[..., :, None, :] - b[..., None, :, :]
    return np.linalg.norm(diff, ord=p, axis=-1)


def _np_logit(a, eps=None):
    return special.logit(a if eps is None else np.clip(a, eps, 1 - eps))


def _cdist_case(name, p, shapes=((2, 4, 3), (3, 1, 5, 3))):
    return OpCase(name, lambda a, b: mg.cdist(a, b, p), shapes,
                  np_fn=lambda a, b: _np_cdist(a, b, p),
                  torch_fn=_torch("cdist", p=p, compute_mode="donot_use_mm_for_euclid_dist"))


CASES = (
    [OpCase("take_along_dim", lambda x: x.take_along_dim(_ints(x, IDX), 1), ((3, 4),),
            np_fn=lambda a: np.take_along_axis(a, np.array(IDX), 1)),
     OpCase("take_along_dim_bcast", lambda x: mg.take_along_dim(x, _ints(x, IDX_B), 2),
            ((3, 1, 4),), np_fn=lambda a: np.take_along_axis(a, IDX_B, 2),
            torch_fn=lambda x: x.take_along_dim(_ints(x, IDX_B), 2)),
     OpCase("take_along_dim_flat", lambda x: x.take_along_dim(_ints(x, [5, 0, 5])), ((2, 3),),
            np_fn=lambda a: a.reshape(-1)[[5, 0, 5]]),
     OpCase("take_along_argsort", lambda x: x.take_along_dim(x.argsort(0), 0), ((4, 3),),
            np_fn=lambda a: np.sort(a, 0)),
     OpCase("broadcast_tensors", lambda a, b, c: mg.broadcast_tensors(a, b, c),
            ((3, 1), (2, 1, 4), ()), np_fn=lambda *xs: np.broadcast_arrays(*xs),
            torch_fn=_torch("broadcast_tensors")),
     OpCase("tensor_split_sections", lambda x: x.tensor_split(3, 1), ((2, 7),),
            np_fn=lambda a: np.array_split(a, 3, 1)),
     OpCase("tensor_split_indices", lambda x: mg.tensor_split(x, [1, -1, 9], dim=-1),
            ((2, 5),), np_fn=lambda a: (a[:, :1], a[:, 1:-1], a[:, -1:9], a[:, 9:]),
            torch_fn=_torch("tensor_split", [1, -1, 9], dim=-1)),
     OpCase("logcumsumexp", lambda x: x.logcumsumexp(1), ((3, 4),),
            np_fn=lambda a: np.logaddexp.accumulate(a, 1)),
     OpCase("logcumsumexp_dim0_large", lambda x: mg.logcumsumexp(x * 300, -2), ((4, 3),),
            np_fn=lambda a: np.logaddexp.accumulate(a * 300, 0),
            torch_fn=lambda x: (x * 300).logcumsumexp(-2)),
     OpCase("logcumsumexp_1d", lambda x: x.logcumsumexp(0), ((6,),),
            np_fn=lambda a: np.logaddexp.accumulate(a)),
     OpCase("cummax", lambda x: x.cummax(1), ((3, 5),), np_fn=lambda a: _np_cummax(a, 1)),
     OpCase("cummin_dim0", lambda x: mg.cummin(x, 0), ((4, 3),),
            np_fn=lambda a: _np_cummin(a, 0), torch_fn=_torch("cummin", 0)),
     OpCase("cummax_ties", lambda x: x.clip(-0.5, 0.5).cummax(-1), ((3, 6),),
            np_fn=lambda a: _np_cummax(np.clip(a, -0.5, 0.5), 1)),
     OpCase("cummin_ties", lambda x: x.clip(-0.5, 0.5).cummin(-1), ((3, 6),),
            np_fn=lambda a: _np_cummin(np.clip(a, -0.5, 0.5), 1)),
     OpCase("nansum", lambda x: x.masked_fill(_mask(x, HOLES), NAN).nansum(1), ((3, 4),),
            np_fn=lambda a: np.nansum(np.where(HOLES, NAN, a), 1)),
     OpCase("nansum_all", lambda x: mg.nansum(x.masked_fill(_mask(x, HOLES), NAN)),
            ((3, 4),), np_fn=lambda a: np.nansum(np.where(HOLES, NAN, a)),
            torch_fn=lambda x: x.masked_fill(_mask(x, HOLES), NAN).nansum()),
     OpCase("nanmean", lambda x: x.masked_fill(_mask(x, HOLES), NAN).nanmean(0, True),
            ((3, 4),), np_fn=lambda a: np.nanmean(np.where(HOLES, NAN, a), 0, keepdims=True)),
     OpCase("nanmean_dims", lambda x: mg.nanmean(x.masked_fill(_mask(x, HOLES), NAN), (0, 1)),
            ((3, 4),), np_fn=lambda a: np.nanmean(np.where(HOLES, NAN, a)),
            torch_fn=lambda x: x.masked_fill(_mask(x, HOLES), NAN).nanmean((0, 1))),
     OpCase("xlogy", lambda x, y: x.xlogy(y), ((2, 3), (3,)), np_fn=special.xlogy,
            domain=("real", "positive")),
     OpCase("xlogy_zeros", lambda x, y: mg.xlogy(x.clip(min=0), y), ((2, 3), (2, 3)),
            np_fn=lambda a, b: special.xlogy(np.clip(a, 0, None), b),
            torch_fn=lambda x, y: x.clip(min=0).xlogy(y), domain=("nonzero", "positive")),
     OpCase("xlogy_numbers", lambda y: mg.xlogy(2.0, y) + mg.xlogy(y, 3), ((2, 3),),
            np_fn=lambda b: special.xlogy(2.0, b) + special.xlogy(b, 3),
            torch_fn=lambda y: _torch("xlogy")(2.0, y) + y.xlogy(3), domain="positive"),
     OpCase("logit", lambda x: ((x + 1) / 2).logit(), ((2, 3),),
            np_fn=lambda a: _np_logit((a + 1) / 2), domain="unit"),
     OpCase("logit_eps", lambda x: mg.logit((x + 1) / 2, eps=0.2), ((3, 4),),
            np_fn=lambda a: _np_logit((a + 1) / 2, 0.2), torch_fn=lambda x: (
                (x + 1) / 2).logit(eps=0.2), domain="unit"),
     OpCase("var_mean", lambda x: mg.var_mean(x, 1), ((3, 4),),
            np_fn=lambda a: (a.var(1, ddof=1), a.mean(1)), torch_fn=_torch("var_mean", 1)),
     OpCase("var_mean_biased_keepdim", lambda x: mg.var_mean(x, (0, 2), correction=0,
                                                             keepdim=True), ((2, 3, 2),),
            np_fn=lambda a: (a.var((0, 2), keepdims=True), a.mean((0, 2), keepdims=True)),
            torch_fn=_torch("var_mean", (0, 2), correction=0, keepdim=True)),
     OpCase("std_mean", lambda x: mg.std_mean(x), ((3, 4),),
            np_fn=lambda a: (a.std(ddof=1), a.mean()), torch_fn=_torch("std_mean")),
     OpCase("std_mean_unbiased_false", lambda x: mg.std_mean(x, 0, False), ((3, 4),),
            np_fn=lambda a: (a.std(0), a.mean(0)), torch_fn=_torch("std_mean", 0, False)),
     OpCase("aminmax", lambda x: x.aminmax(), ((3, 4),), np_fn=lambda a: (a.min(), a.max())),
     OpCase("aminmax_dim", lambda x: mg.aminmax(x, dim=-1, keepdim=True), ((3, 4),),
            np_fn=lambda a: (a.min(-1, keepdims=True), a.max(-1, keepdims=True)),
            torch_fn=_torch("aminmax", dim=-1, keepdim=True)),
     OpCase("aminmax_ties", lambda x: x.clip(-0.5, 0.5).aminmax(dim=0), ((4, 3),),
            np_fn=lambda a: (np.clip(a, -.5, .5).min(0), np.clip(a, -.5, .5).max(0))),
     OpCase("kthvalue", lambda x: x.kthvalue(2, 1), ((3, 5),),
            np_fn=lambda a: _np_kthvalue(a, 2, 1)),
     OpCase("kthvalue_dim0_keepdim", lambda x: mg.kthvalue(x, 4, 0, True), ((4, 3),),
            np_fn=lambda a: _np_kthvalue(a, 4, 0, True), torch_fn=_torch("kthvalue", 4, 0, True)),
     OpCase("kthvalue_0d", lambda x: x.kthvalue(1), ((),), np_fn=lambda a: (a, 0)),
     OpCase("diag_embed", lambda x: x.diag_embed(), ((2, 3),), np_fn=_np_diag_embed),
     OpCase("diag_embed_offset_dims", lambda x: (mg.diag_embed(x, 1, 0, 2),
                                                 mg.diag_embed(x, -2, 2, 0)), ((2, 3),),
            np_fn=lambda a: (_np_diag_embed(a, 1, 0, 2), _np_diag_embed(a, -2, 2, 0)),
            torch_fn=lambda x: (x.diag_embed(1, 0, 2), x.diag_embed(-2, 2, 0))),
     OpCase("rot90", lambda x: (x.rot90(), x.rot90(2), x.rot90(-1), x.rot90(4)), ((2, 3),),
            np_fn=lambda a: (np.rot90(a), np.rot90(a, 2), np.rot90(a, -1), a),
            torch_fn=lambda x: (x.rot90(), x.rot90(2), x.rot90(-1), x.rot90(4))),
     OpCase("rot90_dims", lambda x: mg.rot90(x, 3, [2, 0]), ((2, 3, 4),),
            np_fn=lambda a: np.rot90(a, 3, (2, 0)), torch_fn=_torch("rot90", 3, [2, 0])),
     _cdist_case("cdist", 2.0),
     _cdist_case("cdist_p1", 1.0),
     _cdist_case("cdist_inf", math.inf),
     _cdist_case("cdist_p0", 0.0),
     _cdist_case("cdist_p_half", 0.5),
     _cdist_case("cdist_p3", 3.0, ((4, 2), (3, 2))),
     OpCase("erfinv", lambda x: x.erfinv(), ((2, 3),), np_fn=special.erfinv, domain="unit"),
     OpCase("digamma_negative", lambda x: (x - 2.6).digamma(), ((2, 3),),
            np_fn=lambda a: special.digamma(a - 2.6), domain="unit"),
     OpCase("lgamma_negative", lambda x: mg.lgamma(x - 2.6), ((2, 3),),
            np_fn=lambda a: special.gammaln(a - 2.6), domain="unit",
            torch_fn=lambda x: (x - 2.6).lgamma())]
    + unary("lgamma", lambda x: x.lgamma(), [(), (2, 3)], np_fn=special.gammaln,
            domain="positive")
    + unary("digamma", lambda x: mg.digamma(x), [(2, 3)], np_fn=special.digamma,
            domain="positive", torch_fn=_torch("digamma"))
    + [OpCase(f"polygamma{n}", lambda x, n=n: x.polygamma(n), ((2, 3),), domain="positive",
              np_fn=lambda a, n=n: special.polygamma(n, a)) for n in (0, 1, 2)]
    + [OpCase("polygamma3", lambda x: mg.polygamma(3, x), ((3,),), domain="positive",
              np_fn=lambda a: special.polygamma(3, a),
              torch_fn=lambda x: _torch("polygamma")(3, x))]
)

# PyTorch has no second derivative of cdist (its _cdist_backward has none)
NO_TORCH_SECOND_ORDER = {"cdist", "cdist_p1", "cdist_inf", "cdist_p0", "cdist_p_half",
                         "cdist_p3"}


# PyTorch's trigamma (polygamma(1), digamma's derivative) is good to ~5e-10 in float64;
# SciPy's, which these use, to an ulp or two (measured against mpmath): float64 compares
# to 1e-8 wherever torch's trigamma enters, values or gradients
THROUGH_TRIGAMMA = {"digamma", "digamma_negative", "polygamma0", "polygamma1", "lgamma",
                    "lgamma_negative"}


def _torch_tolerance(case, monkeypatch):
    if case.name in THROUGH_TRIGAMMA:
        monkeypatch.setitem(op_helpers.TOL, "float64", 1e-8)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_vs_torch(case, device, dtype, monkeypatch):
    _torch_tolerance(case, monkeypatch)
    check_vs_torch(case, device, dtype)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_gradcheck(case, device):
    check_gradcheck(case, device)


@pytest.mark.parametrize("case", [c for c in CASES if c.name not in NO_TORCH_SECOND_ORDER],
                         ids=str)
def test_double_backward_vs_torch(case, device, monkeypatch):
    _torch_tolerance(case, monkeypatch)
    check_double_backward_vs_torch(case, device)


@pytest.mark.parametrize("case", CASES, ids=str)
def test_on_the_gpu_stand_in(case, spy):
    """Forward and backward on the spy device (no NumPy behind the backend's back), the
    values as NumPy's formula, every gradient on the device."""
    check_outputs_on_spy(case, spy)
