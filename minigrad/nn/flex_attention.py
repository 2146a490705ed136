"""torch.nn.attention.flex_attention: attention whose scores a user function modifies
(score_mod) and a mask restricts (block_mask), as PyTorch's; importable as
minigrad.nn.attention.flex_attention.

Eager only: the (B, H, L, S) scores are computed densely from Tensor ops (matmul, the
score_mod, where, softmax), so gradients reach q, k, v and any tensor score_mod captures
(a learned bias table), on any device. A BlockMask's blocks give no speed-up here, as
PyTorch's own flex_attention without torch.compile. score_mod(score, b, h, q_idx, kv_idx)
is called once on the whole score tensor with broadcastable index tensors (see
flex_masks.py), the result PyTorch's vmap gives elementwise."""
import math
from typing import NamedTuple

from minigrad import backend
from minigrad.grad_mode import no_grad
from minigrad.ops.elementwise import where
from minigrad.tensor import Tensor
from minigrad.nn.flex_masks import (BlockMask, _indices, and_masks, create_block_mask,  # noqa
                                    create_mask, noop_mask, or_masks)

__all__ = ["BlockMask", "flex_attention", "AuxOutput", "AuxRequest", "create_block_mask",
           "create_mask", "or_masks", "and_masks", "noop_mask"]

_OP = "flex_attention"


class AuxRequest(NamedTuple):
    """Which extra outputs flex_attention returns (return_aux)."""
    lse: bool = False
    max_scores: bool = False


class AuxOutput(NamedTuple):
    """flex_attention's extra outputs: None where not requested. lse is each query's
    logsumexp of its modified, masked scores (natural log), max_scores their maximum; both
    -inf for a query that may attend to nothing."""
    lse: Tensor = None
    max_scores: Tensor = None


def _check(query, key, value, enable_gqa):
    """The inputs' shapes and dtypes, as PyTorch requires them, or an error naming them."""
    ts = (query, key, value)
    if not all(isinstance(t, Tensor) and t.ndim == 4 for t in ts):
        raise ValueError(f"{_OP}: query, key, value must be 4-D Tensors (B, H, L, E), "
                         f"(B, H_kv, S, E), (B, H_kv, S, Ev); got "
                         f"{[getattr(t, 'shape', type(t).__name__) for t in ts]}")
    if not all(backend.is_floating(t.dtype) for t in ts) or \
            not query.dtype == key.dtype == value.dtype:
        raise TypeError(f"{_OP}: query, key, value must share one floating dtype, got "
                        f"{query.dtype}, {key.dtype}, {value.dtype}")
    (B, Hq, _, E), (Bk, Hk, _, Ek) = query.shape, key.shape
    if value.shape[:3] != key.shape[:3] or E != Ek:
        raise ValueError(f"{_OP}: key {key.shape} and value {value.shape} must agree in "
                         f"(B, H_kv, S), and key's E must be query's {E}")
    if Bk != B and Bk != 1:
        raise ValueError(f"{_OP}: key and value's batch size {Bk} must be query's {B}, or 1")
    if Hq != Hk and not enable_gqa:
        raise ValueError(f"{_OP}: query has {Hq} heads and key/value {Hk}; set "
                         f"enable_gqa=True for grouped-query attention")
    if Hk == 0 or Hq % Hk:
        raise ValueError(f"{_OP}: with enable_gqa, query's heads ({Hq}) must be a multiple "
                         f"of key/value's ({Hk})")


def flex_attention(query, key, value, score_mod=None, block_mask=None, scale=None,
                   enable_gqa=False, return_lse=False, kernel_options=None, *,
                   return_aux=None):
    """softmax(mask(score_mod(Q·Kᵀ·scale)))·V, scale 1/√E by default.

    query (B, Hq, L, E), key (B, Hkv, S, E), value (B, Hkv, S, Ev) -> (B, Hq, L, Ev); key
    and value may have batch 1. block_mask: a BlockMask (create_block_mask) for (L, S); its
    mask_mod is evaluated at this call's batch and head indices, as PyTorch's eager path.
    enable_gqa: each key/value head serves Hq/Hkv consecutive query heads. A query whose
    every score is masked (or -inf) gets a zero output and lse -inf, with zero gradients.
    float16 and bfloat16 inputs are computed in float32 (the output cast back, lse float32).
    return_lse=True: (out, lse (B, Hq, L)); return_aux=AuxRequest(...): (out, AuxOutput).
    kernel_options, PyTorch's kernel tuning, is accepted and changes nothing."""
    _check(query, key, value, enable_gqa)
    if return_lse and return_aux is not None:
        raise ValueError(f"{_OP}: give either return_lse or return_aux=AuxRequest(lse=True), "
                         f"not both")
    if return_aux is not None and not isinstance(return_aux, AuxRequest):
        raise TypeError(f"{_OP}: return_aux must be an AuxRequest, got "
                        f"{type(return_aux).__name__}")
    if kernel_options is not None and not isinstance(kernel_options, dict):
        raise TypeError(f"{_OP}: kernel_options must be a dict or None, got "
                        f"{type(kernel_options).__name__}")
    if block_mask is not None and not isinstance(block_mask, BlockMask):
        raise TypeError(f"{_OP}: block_mask must be a BlockMask (create_block_mask), got "
                        f"{type(block_mask).__name__}")
    if score_mod is not None and not callable(score_mod):
        raise TypeError(f"{_OP}: score_mod must be a function (score, b, h, q_idx, kv_idx) "
                        f"-> score, got {type(score_mod).__name__}")
    B, Hq, L, E = query.shape
    S = key.shape[2]
    scale = 1 / math.sqrt(E) if scale is None and E else 1.0 if scale is None else scale
    work = backend.float64 if query.dtype == backend.float64 else backend.float32
    q, k, v = (t.to(dtype=work) for t in (query, key, value))
    if k.shape[1] != Hq:                      # grouped-query: each kv head repeated
        k, v = (t.repeat_interleave(Hq // k.shape[1], dim=1) for t in (k, v))
    scores = (q @ k.mT) * scale              # (B, Hq, L, S); k of batch 1 broadcasts
    if score_mod is not None:
        scores = score_mod(scores, *_indices(B, Hq, L, S, query.device))
        if not isinstance(scores, Tensor):
            raise TypeError(f"{_OP}: score_mod must return a Tensor, got "
                            f"{type(scores).__name__}")
        if scores.shape != (B, Hq, L, S):
            try:
                scores = scores.broadcast_to((B, Hq, L, S))
            except ValueError:
                raise ValueError(f"{_OP}: score_mod returned shape {scores.shape}, which "
                                 f"does not broadcast to the scores' {(B, Hq, L, S)}") from None
        scores = scores.to(dtype=work)
    if block_mask is not None:
        scores = where(block_mask._mask_for(B, Hq, L, S, query.device), scores, -math.inf)
    with no_grad():                          # queries with nothing to attend to
        dead = (scores == -math.inf).all(-1, keepdim=True)
    # their scores set to 0 and their weights to 0 afterwards: no NaN, forward or backward
    live = where(dead, 0.0, scores)
    out = (where(dead, 0.0, live.softmax(-1)) @ v).to(dtype=query.dtype)
    if not return_lse and not (return_aux and (return_aux.lse or return_aux.max_scores)):
        return (out, AuxOutput()) if return_aux is not None else out
    lse = where(dead[..., 0], -math.inf, live.logsumexp(-1))
    if return_aux is None:
        return out, lse
    return out, AuxOutput(lse if return_aux.lse else None,
                          scores.amax(-1) if return_aux.max_scores else None)
