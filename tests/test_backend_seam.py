"""THE SEAM: every op reaches its array library only through `minigrad.backend`.

DESIGN.md: only backend.py imports NumPy/CuPy, and a CPU-side test proves every op goes
through the seam, so the GPU path cannot silently fall back to NumPy. This is that test: a
fake "spy" device (tests/spy_backend.py) whose arrays refuse NumPy exactly as CuPy's do runs
every op forward, backward and double backward; every output and gradient must be a spy
array and equal what the CPU computes. A completeness check makes sure no op is left out,
and a static check that no other file in minigrad/ imports numpy or cupy.
"""
import ast
import re
from pathlib import Path

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
import spy_backend
from minigrad import backend, nn
from minigrad.autograd import Function
from minigrad.ops.gamma_sample import standard_gamma
from minigrad.ops.rnn_cells import lstm_cell, gru_cell
from minigrad.ops.rnn_scan import rnn_scan, rnn_layer
from minigrad.nn.utils.rnn import (pack_padded_sequence, pad_packed_sequence, pad_sequence,
                                   pack_sequence)

PACKAGE = Path(mg.__file__).resolve().parent
_IDX, _MASK = np.array([0, 2, 0]), np.array([True, False, True])
_IDS = np.array([[0, 2, 2], [3, 0, 1]])
_BOOL_ATTN = np.tri(3, 4, 1, dtype=bool)


def _t(a, x):
    return mg.tensor(a, device=x.device)


def _put(h, index, value):
    """h[index] = value, recorded by autograd (ops/inplace_autograd.py's IndexPut)."""
    h[index] = value
    return h


def _put_at(h, v):
    """The node of a write into views of h (ops/inplace_views.py's Put): at positions, and
    all of h. On the spy device no array views another, so no write gets there itself."""
    from minigrad.ops.inplace_views import Put
    base = h * 1
    pos = (_t(np.array([0, 1, 1]), h)._data, _t(np.array([2, 0, 1]), h)._data)
    part = Put.apply(base, v, into=base._data.copy(), pos=pos)
    return Put.apply(part * h, into=base._data.copy(), pos=None)


def _flex(q, k, v, bias):
    """flex_attention with a captured bias, a mask hiding every key from query 0, GQA."""
    from minigrad.nn.attention.flex_attention import flex_attention, create_block_mask
    mask = create_block_mask(lambda b, h, i, j: (i > 0) & (j <= i + 1), None, None, 3, 4)
    out, lse = flex_attention(q, k, v, lambda s, b, h, i, j: s + bias[i - j + 3], mask,
                              enable_gqa=True, return_lse=True)
    return out, lse[:, :, 1:]


def _seeded(fn):
    def call(*xs):
        mg.manual_seed(5)
        return fn(*xs)
    return call


# name, fn of float64 tensors, input shapes, value domain ("pos": positive)
OPS = [
    ("add", lambda a, b: a + b, [(2, 3), (3,)]), ("sub", lambda a, b: a - b, [(2, 1), (3,)]),
    ("mul", lambda a, b: a * b, [(2, 3), ()]), ("div", lambda a, b: a / b, [(3,), (2, 3)], "pos"),
    ("pow", lambda a, b: a ** b, [(2, 3), (3,)], "pos"),
    ("scalars", lambda a: (2 - a) * 3 / a + 2 ** a + a ** 2, [(2, 3)], "pos"),
    ("neg", lambda a: -a, [(3,)]), ("exp", lambda a: a.exp(), [(3,)]),
    ("log", lambda a: a.log(), [(3,)], "pos"), ("sqrt", lambda a: a.sqrt(), [(3,)], "pos"),
    ("abs", lambda a: a.abs(), [(3,)]), ("tanh", lambda a: a.tanh(), [(3,)]),
    ("flip", lambda a: a.flip(0, 2), [(2, 3, 2)]), ("cumsum", lambda a: a.cumsum(1), [(2, 3)]),
    ("sigmoid", lambda a: a.sigmoid(), [(3,)]), ("relu", lambda a: a.relu(), [(2, 3)]),
    ("erf", lambda a: a.erf(), [(3,)]), ("gelu", lambda a: F.gelu(a), [(3,)]),
    ("gelu_tanh", lambda a: F.gelu(a, approximate="tanh"), [(3,)]),
    ("fused_activations", lambda a: (F.leaky_relu(a, 0.2), F.hardtanh(a, -0.5, 1.5),
                                     F.relu6(a * 4), F.elu(a, 0.7), F.selu(a),
                                     F.softplus(a, 2.0, 1.5), F.logsigmoid(a),
                                     F.celu(a, 0.5), F.celu(a, -2.0), F.hardswish(a * 4)),
     [(2, 3)]),
    ("maximum", lambda a, b: a.maximum(b), [(2, 3), (3,)]),
    ("minimum", lambda a, b: mg.minimum(a, b), [(2, 3), ()]),
    ("clip", lambda a: a.clip(-0.3, 0.3) + a.clip(min=0.1), [(2, 3)]),
    ("mod_floordiv", lambda a, b: (a % b, a // b, 2.5 % a, a % 1.5,
                                   a.div(b, rounding_mode="trunc")), [(2, 3), (3,)], "pos"),
    ("clip_bounds", lambda a, lo, hi: a.clip(lo, hi) + a.clip(max=hi), [(2, 3), (3,), (2, 1)]),
    ("where", lambda a, b: mg.where(_MASK, a, b), [(2, 3), (3,)]),
    ("where_tensor", lambda a: mg.where(_t(_MASK, a), a, 0.5), [(2, 3)]),
    ("masked_fill", lambda a: a.masked_fill(_t(_MASK, a), -1.0), [(2, 3)]),
    ("dot", lambda a, b: a @ b, [(3,), (3,)]), ("vecmat", lambda a, b: a @ b, [(3,), (2, 3, 4)]),
    ("matvec", lambda a, b: a @ b, [(2, 3), (3,)]),
    ("bmm_bcast", lambda a, b: a @ b, [(2, 1, 3, 4), (5, 4, 2)]),
    ("shared_weight", lambda a, b: mg.matmul(a, b), [(2, 3, 4), (4, 2)]),
    ("linear", lambda a, w, b: (F.linear(a, w, b), F.linear(a, w)), [(2, 3, 4), (5, 4), (5,)]),
    ("sum", lambda a: a.sum() + a.sum(1, keepdim=True).sum(), [(2, 3)]),
    ("mean_var_std", lambda a: (a.mean(0), a.var(1), a.std(), a.var(correction=0)), [(2, 3)]),
    ("max_min", lambda a: (a.max(), a.min(dim=1), a.max(0, keepdim=True)), [(2, 3)]),
    ("shape_ops", lambda a: (a.reshape(6), a.view(3, 2), a.T, a.mT, a.flatten(),
                             a.unsqueeze(0).squeeze(), a.transpose(0, 1), a.permute(1, 0),
                             a.swapaxes(0, 1), a[:1].expand(4, 3), a.clone()), [(2, 3)]),
    ("memory_format", lambda a: (a.clone(memory_format=mg.channels_last),
                                 a.contiguous(mg.channels_last).permute(0, 2, 1, 3).clone(),
                                 a.to(memory_format=mg.channels_last) * 2,
                                 mg.zeros_like(a.contiguous(mg.channels_last))),
     [(2, 3, 4, 5)]),
    ("getitem", lambda a: (a[1], a[:, 1:], a[..., None], a[_IDX], a[[1, 1]], a[:, _MASK],
                           a[_t(_IDX, a)], a[0, 2]), [(3, 3)]),
    ("setitem_recorded", lambda a, b: _put(a * 1, (slice(None), _t(_IDX, a)), b * 2),
     [(2, 4), (3,)]),
    ("put_into_views", _put_at, [(2, 3), (3,)]),
    ("gather_sort_topk", lambda a: (a.gather(1, _t(_IDS[:, :2].T, a)), a.sort(0)[0],
                                    a.sort(1, descending=True)[0], a.topk(2)[0]), [(3, 4)]),
    ("cat_stack", lambda a, b: (mg.cat([a, b], 1), mg.stack([a, a], -1)), [(2, 3), (2, 1)]),
    ("unbind", lambda a: a.unbind(1)[::2], [(2, 3)]),
    ("lstm_cell", lambda gates, c: lstm_cell(gates, c), [(2, 8), (2, 2)]),
    ("gru_cell", lambda gi, gh, h: gru_cell(gi, gh, h), [(2, 6), (2, 6), (2, 2)]),
    ("rnn_scans", lambda gi, h, c, w, b: (
        rnn_scan("RNN_TANH", gi[..., :2], (h,), w[:2], b[:2]),
        rnn_scan("RNN_RELU", gi[..., :2], (h,), w[:2], reverse=True),
        rnn_scan("GRU", gi[..., :6], (h,), w[:6], b[:6], reverse=True),
        rnn_scan("LSTM", gi, (h, c), w, b)), [(3, 2, 8), (2, 2), (2, 2), (8, 2), (8,)]),
    ("rnn_layers", lambda x, h, c, wi, w, b: (
        rnn_layer("LSTM", x, (h, c), wi, w, b, b),
        rnn_layer("LSTM", x, (h, c), wi, w, reverse=True),
        rnn_layer("LSTM", x, (h[:, :1], c), wi, w[:, :1], b, w_hr=c[:1]),   # projected
        rnn_layer("GRU", x, (h,), wi[:6], w[:6], b[:6], b[:6])),
     [(3, 2, 5), (2, 2), (2, 2), (8, 5), (8, 2), (8,)]),
    ("huber_smooth_l1", lambda a, b: (F.huber_loss(a, b, delta=0.5),
                                      F.smooth_l1_loss(a, b, beta=0.5)), [(2, 3), (2, 3)]),
    ("split_chunk", lambda a: a.split(2, dim=1) + a.chunk(2) + mg.split(a, [1, 3], 1),
     [(2, 4)]),
    ("tril_triu", lambda a: (a.tril(), mg.triu(a, 1)), [(3, 4)]),
    ("astype", lambda a: a.float() * 2, [(3,)]),
    ("softmax", lambda a: (a.softmax(-1), F.log_softmax(a, 0)), [(2, 3)]),
    ("cross_entropy", lambda a: (F.cross_entropy(a, _IDX), F.cross_entropy(
        a, _t(np.array([1, -100, 2]), a), label_smoothing=0.1, reduction="none"),
        F.cross_entropy(a, a.detach().softmax(1), a[0].detach(), label_smoothing=0.1)),
     [(3, 4)]),
    ("bce", lambda a, b: F.binary_cross_entropy(a.sigmoid(), b.sigmoid(), reduction="none"),
     [(2, 3), (2, 3)]),
    ("bce_with_logits", lambda a, b, w: (F.binary_cross_entropy_with_logits(
        a, b.sigmoid(), reduction="none"), F.binary_cross_entropy_with_logits(
        a, b.sigmoid(), pos_weight=w.exp())), [(2, 3), (2, 3), (3,)]),
    ("layer_norm", lambda a, w, b: (F.layer_norm(a, (3,), w, b), F.layer_norm(a, 3)),
     [(2, 3), (3,), (3,)]),
    ("embedding", lambda w: F.embedding(_t(_IDS, w), w, padding_idx=0), [(4, 3)]),
    ("dropout", _seeded(lambda a: F.dropout(a, 0.5)), [(3, 4)]),
    ("sdpa", lambda q, k, v: (F.scaled_dot_product_attention(q, k, v, attn_mask=_BOOL_ATTN),
                              F.scaled_dot_product_attention(q, k, v, is_causal=True),
                              F.scaled_dot_product_attention(q, k, v, attn_mask=np.ones(
                                  (3, 4)))), [(2, 3, 2), (2, 4, 2), (2, 4, 3)]),
    ("sdpa_dropout", _seeded(lambda q, k, v: F.scaled_dot_product_attention(
        q, k, v, dropout_p=0.3)), [(2, 3, 2), (2, 4, 2), (2, 4, 3)]),
    ("attention_with_weights", lambda q, k, v: F.attention_with_weights(q, k, v, _BOOL_ATTN),
     [(2, 3, 2), (2, 4, 2), (2, 4, 3)]),
    ("flex_attention", lambda q, k, v, bias: _flex(q, k, v, bias),
     [(1, 2, 3, 2), (1, 1, 4, 2), (1, 1, 4, 3), (7,)]),
    ("qkv_attention", _seeded(lambda a: (F.qkv_attention(a, 2, is_causal=True),
                                         F.qkv_attention(a, 1, dropout_p=0.3))), [(2, 3, 12)]),
    ("to_cpu_and_back", lambda a: (a.to("cpu") * 2).to(a.device), [(2, 3)]),
    ("sin_cos_log1p_expm1", lambda a: (a.sin(), mg.cos(a), a.log1p(), a.expm1()), [(2, 3)],
     "pos"),
    ("step", lambda a: (a.sign(), a.floor(), a.ceil(), a.trunc(), a.round(),
                        mg.round(a * 10, decimals=-1), a.round(decimals=2)), [(2, 3)]),
    ("nan_to_num", lambda a: (mg.where(_t(_MASK, a), a, float("inf")).nan_to_num(posinf=9.0),
                              mg.where(_t(_MASK, a), float("nan"), a).nan_to_num(1.0),
                              mg.where(_t(_MASK, a), -a, -float("inf")).nan_to_num(
                                  neginf=-3.0)), [(2, 3)]),
    ("prod", lambda a: (a.prod(), a.prod(1), mg.prod(a, 0, keepdim=True),
                        (a * _t(_MASK.astype(float), a)).prod(1)), [(2, 3)]),
    ("amax_amin", lambda a: (a.amax(), a.amin((0, 1)), a.amax(1, keepdim=True)), [(2, 3)]),
    ("norms", lambda a, b: (a.norm(), a.norm(1, 1), a.norm(float("inf"), 0), a.norm(3, 1),
                            a.norm(0), F.normalize(a), F.cosine_similarity(a, b)),
     [(2, 3), (3,)]),
    ("index_shape_more", lambda a: (a.index_select(1, _t(_IDX, a)), a.masked_select(
        _t(_MASK, a)), a.roll(1, 1), a.roll((1, -1), (0, 1)), a.unflatten(1, (3, 1)),
        F.pad(a, (1, 2, -1, 0), value=0.5)), [(2, 3)]),
    ("einsum", lambda a, b, c: (mg.einsum("ij,jk->ik", a, b), mg.einsum("ii->i", c),
                                mg.einsum("...ij->j", a), mg.einsum("ij,ij", a[:1], a),
                                mg.einsum("ii,ij,jk->", c, c, b)), [(2, 3), (3, 4), (3, 3)]),
    ("linalg", lambda a, b: (mg.linalg.inv(a + 4 * _t(np.eye(3), a)), a.det(), mg.logdet(
        a + 4 * _t(np.eye(3), a)), mg.linalg.solve(a + 4 * _t(np.eye(3), a), b),
        mg.linalg.cholesky(a @ a.mT + 3 * _t(np.eye(3), a)), a.matrix_power(-2),
        mg.kron(a, b[:2, :1]), a.mv(b[:, 0]), mg.inner(a, b.mT), b[:, 0].vdot(a[0])),
     [(3, 3), (3, 2)]),
    ("linalg_decomp", lambda a, b: (
        *mg.linalg.qr(a), *mg.linalg.eigh(a + a.mT), *mg.linalg.svd(a[:, :2]),
        mg.linalg.eigvalsh(a + a.mT), mg.linalg.svdvals(a), mg.linalg.cond(a),
        mg.linalg.pinv(a[:2]), mg.linalg.pinv(a + a.mT, hermitian=True),
        *mg.linalg.lstsq(a[:, :2], b, driver="gels"),        # (the GPU's one driver)
        mg.linalg.matrix_rank(a), mg.linalg.qr(a.detach(), mode="r").R + a,
        mg.linalg.solve_triangular(a + 4 * _t(np.eye(3), a), b, upper=False),
        mg.linalg.matrix_exp(a)), [(3, 3), (3, 2)]),
    ("linalg_lu", lambda a, b: (
        *mg.linalg.lu_factor(a + 4 * _t(np.eye(3), a)), *mg.linalg.lu(a[:2]),
        mg.linalg.lu_solve(*mg.linalg.lu_factor_ex(a + 4 * _t(np.eye(3), a))[:2], b),
        mg.linalg.lu_solve(a + 4 * _t(np.eye(3), a), _t(np.array([3, 2, 3], np.int32), a), b.mT,
                           left=False, adjoint=True),
        mg.cholesky_solve(b, (a + 4 * _t(np.eye(3), a)).tril()),
        mg.cholesky_inverse((a + 4 * _t(np.eye(3), a)).triu(), upper=True)), [(3, 3), (3, 2)]),
    ("linalg_ex", lambda a, b: (
        *mg.linalg.cholesky_ex(a @ a.mT + 3 * _t(np.eye(3), a)), *mg.linalg.cholesky_ex(
            mg.stack([a @ a.mT + 3 * _t(np.eye(3), a), -a @ a.mT]), upper=True),
        *mg.linalg.inv_ex(mg.stack([a + 4 * _t(np.eye(3), a), a * 0])),
        *mg.linalg.solve_ex(mg.stack([a + 4 * _t(np.eye(3), a), a * 0]), b),
        *mg.linalg.solve_ex(a + 4 * _t(np.eye(3), a), b.mT, left=False)), [(3, 3), (3, 2)]),
    ("linalg_householder", lambda a, t: (
        mg.linalg.householder_product(a, t), mg.orgqr(a[:, :2], t[:1]),
        mg.linalg.householder_product(a, t[:0])), [(4, 3), (2,)]),
    ("linalg_ldl", lambda a, b: (
        *mg.linalg.ldl_factor_ex(mg.stack([a + a.mT, a * 0, a @ a.mT]).detach()),
        mg.linalg.ldl_solve(*mg.linalg.ldl_factor((a + a.mT).detach()), b.detach()) + b,
        mg.linalg.ldl_factor(mg.stack([a.detach() * 0.01 + _t(np.ones((3, 3)) - np.eye(3), a),
                                       a.detach() + 9 * _t(np.eye(3), a)])).LD[0] + a),
     [(3, 3), (3, 2)]),
    ("index_stats_more", lambda a, s: (
        a.take(_t(np.array([[0, 5], [-1, 2]]), a)), a.index_copy(1, _t(_IDX[:2], a), s[:, :2]),
        a.index_put((_t(_IDX[:2] % 2, a), _t(_IDX[1:], a)), s[0, :2], accumulate=True),
        a.masked_scatter(_t(_MASK, a), s.flatten()), a.index_fill(1, _t(_IDX[:1], a), 2.0),
        *(a.scatter_reduce(1, _t(_IDS[:, :3] % 3, a), s, r, include_self=i)
          for r in ("sum", "prod", "mean", "amax", "amin") for i in (True, False)),
        a.quantile(0.3, 1), mg.nanquantile(a, _t(np.array([0.2, 0.9]), a)),
        a.nanmedian(1).values, a.nanmedian(), a.mode(1).values, a.cov(), mg.corrcoef(a.mT),
        a.dist(s, 3)), [(2, 3), (2, 3)]),
    ("scatter_narrow_repeat", lambda a, s: (
        a.scatter(1, _t(np.array([[2, 0, 1], [1, 2, 0]]), a), s),
        a.scatter(0, _t(np.array([[1, 0, 1]]), a), 0.5),
        a.scatter_add(1, _t(np.array([[0, 2], [2, 2]]), a), s), a.index_add(1, _t(_IDX, a), s),
        a.narrow(1, -2, 2), a.repeat_interleave(_t(np.array([1, 0, 2]), a), dim=1),
        a.repeat_interleave(2)), [(2, 3), (2, 3)]),
    ("trig_logs_exp2", lambda a: ((a / 2).tan(), a.sinh(), mg.cosh(a), a.log2(), mg.log10(a),
                                  a.exp2()), [(2, 3)], "pos"),
    ("atan2_fmod", lambda a, b: (mg.atan2(a, b), a.fmod(b), mg.fmod(a, 0.3)), [(2, 3), (3,)],
     "pos"),
    ("diagonals", lambda a, v: (a.diagonal(1), a.diagonal(0, -1, 0), v.diag(-1), a.trace()),
     [(3, 4), (3,)]),
    ("unfold_sum_to_size_vander", lambda a, v: (  # overlapping windows (a copy), a view
        a.unfold(1, 3, 1), a.unfold(0, 1, 2), a.sum_to_size(1, 4), a.mH, mg.vander(v, N=4)),
     [(3, 4), (3,)]),
    ("as_strided", lambda a: (  # overlapping windows (index_add), stride 0, a scatter
        a.as_strided((3, 3), (1, 1)), a.as_strided((2, 2), (0, 2), 1),
        a.as_strided_scatter(a[:2] * 2, (2,), (2,)),
        a.view(2, 3).t().as_strided_scatter(a[:2] * 3, (2,), (3,), 1)), [(6,)]),
    ("pack_pad", lambda a, b: (  # host-side lengths, device-side data and indices
        pad_packed_sequence(pack_padded_sequence(a, [3, 1, 2], enforce_sorted=False),
                            padding_value=0.5)[0],
        pad_sequence([a[:, 0], b], batch_first=True, padding_side="left"),
        pack_sequence([b, a[:2, 1]], enforce_sorted=False).data), [(3, 3, 2), (1, 2)]),
    ("cumprod_median", lambda a: (a.cumprod(1), (a * _t(_MASK.astype(float), a)).cumprod(1),
                                  a.median(1)[0], a.median()), [(2, 3)]),
    ("special", lambda a, b: (a.lgamma(), mg.digamma(a), a.polygamma(2), (a / 3).erfinv(),
                              mg.xlogy(a, b), b.xlogy(2.0), (a / 3).logit(),
                              (a / 3).logit(eps=0.4)), [(2, 3), (3,)], "pos"),
    ("special_more", lambda a, b: (   # ops/special_more.py and polynomials.py (mg.special)
        mg.special.erfcx(a), mg.special.ndtr(a), mg.special.log_ndtr(a),
        mg.special.ndtri(a / 3), mg.special.i0e(a), mg.special.i1e(a), mg.special.i1(a),
        mg.special.entr(a), mg.special.xlog1py(a, b), mg.special.zeta(a.detach() + 1, b),
        mg.special.bessel_j0(a), mg.special.modified_bessel_k1(a),
        mg.special.spherical_bessel_j0(a), mg.special.legendre_polynomial_p(a, 3),
        mg.special.chebyshev_polynomial_w(b, mg.tensor([1, 4, 2], device=b.device))),
        [(2, 3), (3,)], "pos"),
    ("standard_gamma", _seeded(lambda a: standard_gamma(a * 3)), [(2, 3)], "pos"),
    ("running", lambda a: (a.logcumsumexp(1), mg.logcumsumexp(a, 0), a.cummax(1),
                           mg.cummin(a, 0)), [(2, 5)]),
    ("statistics", lambda a: (mg.where(_t(_MASK, a), a, float("nan")).nansum(1),
                               mg.nanmean(mg.where(_t(_MASK, a), float("nan"), a), 1),
                               a.count_nonzero(0), mg.var_mean(a, 1), mg.std_mean(a),
                               a.aminmax(), a.aminmax(dim=0), a.kthvalue(2),
                               mg.bincount(_t(np.array([1, 1, 0]), a), a[0] * 2)), [(3, 3)]),
    ("order_layout", lambda a, b: (a.take_along_dim(_t(_IDS, a), 1), mg.take_along_dim(
        a, _t(_IDX, a)), mg.searchsorted(b.sort()[0], a), mg.bucketize(a, b.sort()[0], right=True),
        mg.broadcast_tensors(a, b[:1]), a.tensor_split(3, 1), a.rot90(), mg.rot90(a, -1, (1, 0)),
        b.diag_embed(1), mg.diag_embed(a, -1, 0, 2)), [(2, 4), (4,)]),
    ("cdist", lambda a, b: (mg.cdist(a, b), mg.cdist(a, b, 1.0), mg.cdist(a, b, float("inf")),
                            mg.cdist(a, b, 0.5), mg.cdist(a[0], b[0, :2], 3.0)),
     [(2, 3, 2), (1, 4, 2)]),
    ("inverse_trig_erfc_sinc", lambda a: (a.asin(), mg.acos(a), a.atan(), mg.asinh(a),
                                          (a + 2).acosh(), a.atanh(), a.erfc(), a.sinc(),
                                          (a * 0).sinc(), a.deg2rad()), [(2, 3)], "unit"),
    ("hypot_copysign_logaddexp", lambda a, b: (mg.hypot(a, b), a.copysign(b), mg.logaddexp(
        a, b), a.logaddexp2(b), mg.fmax(a, b), a.fmin(b), mg.heaviside(a * 0, b),
        (a.abs() + 0.5).float_power(b), mg.ldexp(a, b)), [(2, 3), (3,)]),
    ("conv", lambda x, w: (F.conv2d(x, w, w[:, 0, 0, 0], padding=1, groups=2),
                           F.conv_transpose2d(x, w, stride=2, output_padding=1),
                           F.fold(F.unfold(x, 2, padding=1), (3, 4), 2, padding=1)),
     [(2, 4, 3, 4), (4, 2, 2, 2)]),
    # (a batch of 64x64 images: rows long enough for the shifted forward; on a device the
    # backward is the general path's)
    ("nn_grad_cross_map_lrn", lambda x, w, go: (   # nn/grad.py, nn/lrn_cross_map.py
        nn.grad.conv2d_input(x.shape, w, go, stride=2, padding=1, groups=2),
        nn.grad.conv2d_weight(x, w.shape, go, stride=2, padding=1, groups=2),
        nn.CrossMapLRN2d(2, 0.3, 0.6, 1.5)(x)), [(1, 2, 4, 3), (2, 1, 2, 2), (1, 2, 3, 2)]),
    ("conv_depthwise", lambda x, w: F.conv2d(x, w, w[:, 0, 0, 0], padding=1, groups=2),
     [(1, 2, 64, 64), (4, 1, 3, 2)]),
    ("pool", lambda a: (F.max_pool2d(a, 2, 1, 1), F.avg_pool2d(a, 3, 2, 1, True),
                        F.adaptive_max_pool2d(a, 3), F.adaptive_max_pool2d(a, (2, 5)),
                        F.lp_pool1d(a[0] * a[0] + 1, 2, 2)),
     [(1, 2, 4, 5)]),
    ("ctc", lambda a: F.ctc_loss(a.log_softmax(-1), mg.tensor([[1, 2], [1, 1]], device=a.device),
                                 [4, 3], [2, 2]), [(4, 2, 3)]),
    ("max_unpool", lambda a: F.max_unpool2d(*F.max_pool2d(a, 2, return_indices=True), 2),
     [(1, 2, 4, 4)]),
    ("interpolate_bicubic_area_antialias", lambda a: (
        F.interpolate(a, scale_factor=1.5, mode="bicubic"),
        F.interpolate(a, size=(2, 3), mode="area"),
        F.interpolate(a, size=(2, 3), mode="bilinear", antialias=True),
        F.interpolate(a, scale_factor=(2, 0.5), mode="bicubic", align_corners=True,
                      antialias=True),
        F.interpolate(a, size=(5, 2), mode="lanczos", antialias=True)), [(1, 2, 3, 4)]),
    ("older_spellings", lambda a, w, b: (    # F.upsample*, F.conv_tbc (composites)
        F.upsample_bilinear(a, scale_factor=2), F.upsample_nearest(a, size=(3, 5)),
        F.conv_tbc(a[0], w, b, 1)), [(1, 2, 3, 4), (2, 4, 3), (3,)]),
    ("nearest_exact_bicubic_fractional", lambda a, g: (
        F.interpolate(a, scale_factor=1.5, mode="nearest-exact"),
        F.grid_sample(a, g, "bicubic", "reflection", False),
        F.grid_sample(a, g * 0.6, "bicubic", "zeros", True),
        F.fractional_max_pool2d(a, 2, (2, 3), return_indices=True, _random_samples=_t(
            np.array([[[0.3, 0.7], [0.6, 0.1]]]), a)),
        F.fractional_max_pool3d(a, (1, 2, 2), (1, 1, 2), _random_samples=_t(
            np.array([[[0.2, 0.5, 0.9]]]), a))), [(1, 2, 3, 4), (1, 2, 3, 2)]),
    ("torch_extra", lambda a, b: (   # ops/torch_extra.py (igamma: no derivative in a)
        mg.frexp(a)[0], mg.nextafter(a, b), mg.i0(a - 1), mg.igamma(b.detach(), a),
        mg.igammac(a.detach(), b), mg.angle(a - 1), mg.select_scatter(a, b[0], 0, 1),
        mg.slice_scatter(a, b[:, 1:], 1, 1), mg.diagonal_scatter(a, b[0, :2], 1)),
     [(2, 3), (2, 3)], "pos"),
    ("torch_toplevel_rest", lambda a, b: (   # torch_native.py, torch_segments.py
        *mg.native_group_norm(a, None, None, 2, 2, 3, 2, 1e-5), mg.norm_except_dim(a, 2, 1),
        mg.native_layer_norm(a, [3], b[0], None, 1e-5)[0], mg.constant_pad_nd(a, [1, 1], 0.5),
        mg.segment_reduce(a, "max", lengths=_t(np.array([1, 0, 1]), a)).nan_to_num(0, 9, -9),
        mg.segment_reduce(a, "mean", lengths=_t(np.array([2]), a), initial=0.5),
        mg.segment_reduce(a, "min", lengths=_t(np.array([[1, 1], [2, 0]]), a), axis=1)),
     [(2, 2, 3), (2, 3)]),
]


@pytest.fixture(scope="module", autouse=True)
def spy():
    spy_backend.register()
    yield "spy"
    spy_backend.unregister()


def _arrays(shapes, domain):
    rng = np.random.default_rng(0)
    low, high = {"pos": (0.5, 2), "unit": (-0.9, 0.9)}.get(domain, (-2, 2))
    return [rng.uniform(low, high, s) for s in shapes]


def _flat(out):
    if isinstance(out, (tuple, list)):
        return [t for o in out for t in _flat(o)]
    return [out]


def _run(fn, arrays, device):
    """Outputs, first gradients (create_graph) and second gradients, as tensors."""
    xs = [mg.tensor(a, dtype=mg.float64, device=device, requires_grad=True) for a in arrays]
    outs = _flat(fn(*xs))
    rng = np.random.default_rng(1)
    loss = sum((o * mg.tensor(rng.standard_normal(o.shape), device=device)).sum()
               for o in outs if o.requires_grad)
    grads = [g for g in mg.grad(loss, xs, create_graph=True, allow_unused=True) if g is not None]
    s = sum((g * mg.tensor(rng.standard_normal(g.shape), device=device)).sum() for g in grads)
    second = [g for g in mg.grad(s, xs, allow_unused=True) if g is not None] \
        if getattr(s, "requires_grad", False) else []
    fresh = [mg.tensor(a, dtype=mg.float64, device=device, requires_grad=True) for a in arrays]
    sum(o.sum() for o in _flat(fn(*fresh)) if o.requires_grad).backward()
    return outs, grads, second, [x.grad for x in fresh]


def _case_ids(ops):
    return [op[0] for op in ops]


@pytest.mark.parametrize("op", OPS, ids=_case_ids(OPS))
def test_every_op_stays_on_the_device(op):
    name, fn, shapes = op[:3]
    arrays = _arrays(shapes, op[3] if len(op) > 3 else "real")
    on_spy, on_cpu = _run(fn, arrays, "spy"), _run(fn, arrays, "cpu")
    for what, spy_ts, cpu_ts in zip(("output", "grad", "grad of grad", ".grad"), on_spy, on_cpu):
        assert len(spy_ts) == len(cpu_ts)
        for i, (s, c) in enumerate(zip(spy_ts, cpu_ts)):
            assert s is not None, f"{name}: {what} {i} missing"
            assert s.device == "spy", f"{name}: {what} {i} on {s.device}"
            assert isinstance(s._data, spy_backend.SpyArray), \
                f"{name}: {what} {i} is a {type(s._data).__name__}, not a spy array"
            np.testing.assert_allclose(s.numpy(), c.numpy(), rtol=1e-12, atol=1e-12,
                                       err_msg=f"{name} {what} {i}: spy != cpu")


def test_no_op_is_left_out(monkeypatch):
    """Every Function defined in minigrad.ops is exercised by the table above."""
    used = set()
    apply = Function.apply.__func__

    def recording_apply(cls, *inputs, **params):
        used.add(cls)
        return apply(cls, *inputs, **params)
    monkeypatch.setattr(Function, "apply", classmethod(recording_apply))
    from minigrad import autograd, ops                   # nodes of several outputs (unbind)
    for module in vars(ops).values():
        if getattr(module, "record_outputs", None) is autograd.record_outputs:
            monkeypatch.setattr(module, "record_outputs", lambda fn, *args: used.add(
                type(fn)) or autograd.record_outputs(fn, *args))
    for op in OPS:
        _run(op[1], _arrays(op[2], op[3] if len(op) > 3 else "real"), "spy")

    def subclasses(c):
        return set(c.__subclasses__()).union(*(subclasses(s) for s in c.__subclasses__()))
    defined = {c for c in subclasses(Function) if c.__module__.startswith("minigrad.ops")}
    missing = sorted(c.__name__ for c in defined - used)
    assert not missing, f"ops never run on the spy device: {missing}; add them to OPS"


def test_factories_comparisons_and_indices_stay_on_the_device():
    made = [mg.zeros(2, device="spy"), mg.ones(2, 3, device="spy"),
            mg.full((2,), 3.0, device="spy"), mg.arange(4, device="spy"),
            mg.randn(2, device="spy"), mg.rand(2, device="spy"),
            mg.randint(0, 3, (4,), device="spy"), mg.tensor([1.0, 2.0], device="spy")]
    x = mg.randn(2, 3, device="spy", requires_grad=True)
    made += [mg.zeros_like(x), mg.ones_like(x), mg.randn_like(x), x < 0, x >= x, x == 1.0,
             ~(x > 0), (x > 0) & (x < 1), (x > 0) | (x < 1), x.argmax(), x.argmin(dim=1),
             x.max(dim=1)[1], x.detach(), mg.multinomial(x.softmax(-1), 2),
             mg.multinomial(x.exp(), 4, replacement=True), F.one_hot(x.argmax(dim=1), 3),
             x.argsort(1), (x > 0).nonzero(), *(x > 0).nonzero(as_tuple=True)]
    for t in made:
        assert t.device == "spy" and isinstance(t._data, spy_backend.SpyArray), repr(t)
    with mg.no_grad():
        x[0, 1] = 5.0
        x[_t(_MASK[:2], x)] = 0.0
    assert x.numpy()[0].tolist() == [0.0] * 3
    assert x.sum().item() == x.numpy().sum() and float(x[0, 0]) == x.numpy()[0, 0]
    assert "device='spy'" in repr(x)


def test_to_device_round_trip_sends_gradients_home():
    x = mg.randn(2, 3, device="spy", requires_grad=True)
    h = x.to("cpu")
    assert isinstance(h._data, np.ndarray) and h.device == "cpu"
    (h * 2).sum().backward()
    assert isinstance(x.grad._data, spy_backend.SpyArray) and x.grad.device == "spy"
    np.testing.assert_array_equal(x.grad.numpy(), 2.0)
    with pytest.raises(RuntimeError, match="different devices"):
        x + mg.ones(2, 3)


def test_gradcheck_runs_on_the_device():
    x = mg.randn(2, 3, dtype=mg.float64, device="spy", requires_grad=True)
    w = mg.randn(3, dtype=mg.float64, device="spy", requires_grad=True)
    assert mg.gradcheck(lambda a, b: F.layer_norm(a, (3,), b).tanh(), [x, w])
    assert mg.gradgradcheck(lambda a, b: (a * b).softmax(-1), [x, w])


def test_the_spy_really_refuses_numpy():
    """The wall is real: NumPy on spy data, or a host array in a spy op, fails loudly."""
    a = spy_backend.make_backend().from_numpy(np.ones(3))
    for leak in (lambda: np.exp(a), lambda: np.concatenate([a, a]), lambda: np.asarray(a),
                 lambda: a + np.ones(3), lambda: np.ones(3) * a, lambda: a[np.array([0])]):
        with pytest.raises(TypeError):
            leak()


def test_only_backend_imports_numpy_or_cupy():
    offenders = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.name == "backend.py" and path.parent == PACKAGE:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) else []
            for n in names:
                if n.split(".")[0] in ("numpy", "cupy", "cupyx", "scipy"):
                    offenders.append(f"{path.relative_to(PACKAGE.parent)}:{node.lineno} "
                                     f"imports {n}")
    assert not offenders, "only minigrad/backend.py may import an array library:\n" + \
        "\n".join(offenders)


def test_no_removed_cupy_function_is_called():
    """STYLE.md: CuPy removed `cupyx.scatter_add`; cupy.add.at (CuPy >= 13, which pyproject
    requires) is the one scatter-add."""
    for path in sorted(PACKAGE.rglob("*.py")):
        assert not re.search(r"cupyx\s*\.\s*scatter_add", path.read_text()), path


@pytest.mark.parametrize("dtype", ["int64", "int32", "int8", "uint8", "bool", "float16"])
def test_scatter_adds_of_every_dtype_get_past_cupys_add_at(spy, dtype):
    """cupy.add.at takes int32, uint32, uint64 and the floats only (the spy's add.at too):
    int64, PyTorch's default integer, goes through uint64 (the same bits, the same
    wrap-around), bool and the narrow ints through int32; the results are the host's."""
    big = np.iinfo(dtype).max if dtype not in ("bool", "float16") else 1
    target = np.array([big, 0, 1, 0]).astype(dtype)
    values = np.array([1, 1, 1, 1] if dtype != "float16" else [0.25] * 4).astype(dtype)
    index = np.array([0, 0, 2, 2])

    def run(device):
        t = mg.tensor(target, device=device)
        idx, src = mg.tensor(index, device=device), mg.tensor(values, device=device)
        return [t.index_add(0, idx, src).cpu().tolist(),
                t.scatter_add(0, idx, src).cpu().tolist()]
    assert run(spy) == run("cpu")


def test_float16_scatter_adds_sum_in_float32_on_the_device(spy):
    """As on the CPU (test_float16.py): 20,000 adds of 0.1 make 2000, not float16's 256."""
    idx = mg.zeros(20000, dtype=mg.int64, device=spy)
    src = mg.full((20000,), 0.1, dtype=mg.float16, device=spy)
    got = mg.zeros(2, dtype=mg.float16, device=spy).index_add(0, idx, src).cpu().tolist()
    assert got[1] == 0.0 and abs(got[0] - 2000) < 2


def test_a_cupy_array_is_recognised_before_cuda_was_asked_for(monkeypatch):
    """A CuPy array made by the user first (mg.tensor(cupy.ones(3))) builds the "cuda"
    backend on the spot instead of being an unknown array type. Here the spy stands in for
    CuPy: an array class from a module named cupy, and a "cuda" factory that makes a spy."""
    class CupyLikeArray(spy_backend.SpyArray):
        __slots__ = ()
    CupyLikeArray.__module__ = "cupy._core.core"
    monkeypatch.setattr(backend, "_BACKENDS", {k: v for k, v in backend._BACKENDS.items()
                                               if k != "cuda"})
    monkeypatch.setitem(backend._FACTORIES, "cuda", lambda: spy_backend.make_backend("cuda"))
    a = CupyLikeArray(np.arange(3.0))
    assert backend.device_of_array(a) == "cuda" and "cuda" in backend._BACKENDS
    t = mg.tensor(a)
    assert t.device == "cuda" and t.numpy().tolist() == [0.0, 1.0, 2.0]


# ---- host syncs: a GPU stalls whenever a device value is read on the host ------------------
@pytest.mark.parametrize("norm_type", [2.0, 1.0, float("inf")])
def test_clip_grad_norm_reads_nothing_back(norm_type):
    """The total norm and the clipping coefficient stay on the device (a sync per parameter
    would stall a GPU every step); only error_if_nonfinite=True reads the norm, once."""
    rng = np.random.default_rng(0)
    grads = [rng.standard_normal(s) * 3 for s in ((3, 2), (4,), (2, 2, 2), (0,))]
    spy_params = [nn.Parameter(mg.zeros(g.shape, device="spy")) for g in grads]
    cpu_params = [nn.Parameter(mg.zeros(g.shape)) for g in grads]
    for s, c, g in zip(spy_params, cpu_params, grads):
        s.grad, c.grad = mg.tensor(g, device="spy").float(), mg.tensor(g).float()
    with spy_backend.counted() as n:
        total = nn.utils.clip_grad_norm_(spy_params, 1.0, norm_type)
    assert n["sync"] == 0 and total.device == "spy" and total.shape == ()
    np.testing.assert_allclose(float(total),      # float32 sums, grouped as each device's
                               float(nn.utils.clip_grad_norm_(cpu_params, 1.0, norm_type)),
                               rtol=1e-6)
    for s, c in zip(spy_params, cpu_params):
        np.testing.assert_allclose(s.grad.numpy(), c.grad.numpy(), rtol=1e-6)
    with spy_backend.counted() as n:
        nn.utils.clip_grad_norm_(spy_params, 1.0, norm_type, error_if_nonfinite=True)
    assert n["sync"] == 1


def test_embedding_and_cross_entropy_check_their_indices_with_one_read():
    w = mg.randn(5, 3, device="spy", requires_grad=True)
    ids = mg.tensor(_IDS, device="spy")
    with spy_backend.counted() as n:
        F.embedding(ids, w)
    assert n["sync"] == 1                               # one .any() over the whole range check
    logits = mg.randn(3, 4, device="spy", requires_grad=True)
    for target in (np.array([1, -100, 3]), np.array([-100] * 3)):
        with spy_backend.counted() as n:
            loss = F.cross_entropy(logits, mg.tensor(target, device="spy"))
            loss.backward()
        assert n["sync"] == 1                           # the target check; the mean needs none
    assert np.isnan(float(loss))                        # no target counts: nan, as PyTorch


def test_getitem_gathers_once_and_checks_each_array_index_with_one_read():
    x = mg.randn(4, 3, device="spy", requires_grad=True)
    rows, cols = mg.tensor([0, 3, 3], device="spy"), mg.tensor([2, 0, 1], device="spy")
    mask = mg.tensor(_MASK, device="spy")
    for index, gathers, reads in [((rows,), 1, 1), ((rows, cols), 1, 2),
                                  ((slice(None), cols), 1, 1), ((slice(None), mask), 1, 0),
                                  ((1, slice(1, None)), 0, 0)]:
        with spy_backend.counted() as n:
            x[index]
        assert (n["gather"], n["sync"]) == (gathers, reads), index


def test_setitem_moves_host_values_and_checks_array_indices():
    """On a device, a host array or list as the value goes there first (CuPy refuses a host
    ndarray in setitem), and out-of-range integer indices raise (CuPy would wrap them)."""
    x = mg.zeros(3, 4, device="spy")
    x[0] = np.arange(4)
    x[1] = [1, 2, 3, 4]
    x[mg.tensor([2], device="spy")] = mg.ones(4, device="spy")
    np.testing.assert_array_equal(x.numpy(), [[0, 1, 2, 3], [1, 2, 3, 4], [1, 1, 1, 1]])
    with pytest.raises(IndexError, match="setitem: index 3 is out of range for dim 0"):
        x[mg.tensor([0, 3], device="spy")] = 0.0
    with pytest.raises(RuntimeError, match="setitem: value on cpu, tensor on spy"):
        x[0] = mg.ones(4)


def test_a_gpt_training_step_stays_on_the_device():
    """A whole GPT step (dropout on) runs through the seam: no NumPy on device data, and the
    only values read back are the three index checks (two embeddings, the targets)."""
    from minitransformer.gpt import GPT, GPTConfig
    cfg = GPTConfig(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=8, dropout=0.1)
    model = GPT(cfg).to("spy")
    opt = model.configure_optimizers(weight_decay=0.1, learning_rate=1e-3, betas=(0.9, 0.99))
    x = mg.tensor(np.random.default_rng(0).integers(0, 11, (3, 8)), device="spy")
    with spy_backend.counted() as n:
        _, loss = model(x, x)
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
    assert n["sync"] == 3
    assert all(p.device == "spy" and p.grad.device == "spy" for p in model.parameters())
    assert np.isfinite(float(loss))


def test_the_cpu_backend_runs_without_scipy(monkeypatch):
    """SciPy is a dependency, but a bare machine running the source may lack it: the CPU
    backend's erf then falls back to math.erf per element (exact), and the scatter-add to
    np.add.at; the results are the same."""
    import sys
    from scipy.special import erf
    from minigrad import backend_numpy
    x32 = np.linspace(-4, 4, 9, dtype=np.float32)
    target, index, values = np.zeros((4, 2)), np.array([1, 3, 1]), np.ones((3, 2))
    with monkeypatch.context() as m:
        m.setitem(sys.modules, "scipy.special", None)     # `import scipy.special` fails
        m.setitem(sys.modules, "scipy.sparse", None)
        slow_erf = backend_numpy.host_erf()
        backend_numpy.host_index_add(target, index, values)
    assert slow_erf(x32).dtype == np.float32 and slow_erf(np.arange(3)).dtype == np.float64
    np.testing.assert_allclose(slow_erf(x32), erf(x32), rtol=1e-6)
    np.testing.assert_allclose(slow_erf(x32.astype(np.float64)), erf(x32.astype(np.float64)),
                               rtol=1e-15)
    np.testing.assert_array_equal(target, [[0, 0], [2, 2], [0, 0], [1, 1]])


def test_kept_constants_are_reused_read_only_and_bounded(monkeypatch):
    """backend.constant: what the fused ops need on every call (a column of ones, the causal
    mask) is made once; NumPy's copy cannot be written; the least recently used go first; a
    constant made of another (the causal bias of the causal mask) does not deadlock."""
    monkeypatch.setattr(backend, "_CONSTANTS", {})
    made = []

    def make():
        made.append(1)
        return np.ones(3)
    a = backend.constant(np, "k", make)
    assert backend.constant(np, "k", make) is a and len(made) == 1
    with pytest.raises(ValueError, match="read-only"):
        a[0] = 2
    assert backend.filled(np, (2, 1), 0.5, "float32").tolist() == [[0.5], [0.5]]
    for i in range(backend._MAX_CONSTANTS):
        backend.constant(np, i, lambda: np.zeros(1))
        backend.constant(np, "k", make)                  # used again: stays
    assert len(backend._CONSTANTS) == backend._MAX_CONSTANTS and len(made) == 1
    assert (np, 0) not in backend._CONSTANTS
    outer = backend.constant(np, "outer", lambda: backend.constant(np, "inner", make) * 2)
    assert outer.tolist() == [2.0] * 3
    # kept by bytes too: a long context's causal mask is made each time, not kept
    backend.constant(np, "big", lambda: np.zeros(backend._MAX_CONSTANT_BYTES // 4 + 1, bool))
    assert (np, "big") not in backend._CONSTANTS
    for i in range(8):
        backend.constant(np, ("mid", i), lambda: np.zeros(backend._MAX_CONSTANT_BYTES // 4,
                                                          bool))
    assert sum(a.nbytes for a in backend._CONSTANTS.values()) <= backend._MAX_CONSTANT_BYTES
    # values are keyed exactly: -0.0 is not 0.0
    assert np.signbit(backend.filled(np, (2,), -0.0, "float32")).all()
    assert not np.signbit(backend.filled(np, (2,), 0.0, "float32")).any()
