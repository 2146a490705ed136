"""Attention masks (article 2.2.3.4 掩码注意力机制): causal, padding, and their combination.

THE CONVENTION, used everywhere in minitransformer (the same as PyTorch's
`F.scaled_dot_product_attention`): a mask is a boolean tensor, **True = may attend**,
False = this key is hidden from this query. A mask broadcasts against the attention scores,
whose shape is (batch, heads, queries, keys):

    causal_mask(T)                  (T, T)        query t sees keys 0..t
    padding_mask(tokens, pad_id)    (B, 1, 1, S)  every query sees the non-pad keys
    lengths_mask(lengths, S)        (B, 1, 1, S)  the same, from sequence lengths
    combine_masks(a, b, ...)        a & b & ...   (None means "no mask" and is skipped)

(Careful when comparing with `torch.nn.Transformer*` layers: their boolean masks mean the
opposite, True = NOT allowed; pass `~mask` to them.)

A mask may also be a boolean NumPy array: it is moved to the device of the scores it masks.

The article describes a mask as a vector of 1s (valid) and 0s (ignored); here 1 is True.
A hidden key gets exactly zero weight: its score is set to -inf before the softmax.
"""
import operator

import numpy as np

import minigrad as mg
from minigrad import Tensor, backend

from minitransformer.tokens import as_token_tensor


def causal_mask(size, key_size=None, device="cpu"):
    """(size, key_size) boolean, True on and below the diagonal: query i may attend to key j
    only when j <= i, so position i never sees the future (article 2.2.3.4 掩码注意力机制; the
    decoder's masked self-attention, 2.2.4.2). `key_size` defaults to `size`."""
    key_size = size if key_size is None else key_size
    try:                                                 # ints, NumPy ints: not 2.5
        size, key_size = operator.index(size), operator.index(key_size)
    except TypeError:
        raise TypeError(f"causal_mask: sizes must be integers, got {size!r}, "
                        f"{key_size!r}") from None
    if size < 0 or key_size < 0:
        raise ValueError(f"causal_mask: sizes must be non-negative, got {size}, {key_size}")
    queries = mg.arange(size, device=device).reshape(size, 1)
    keys = mg.arange(key_size, device=device).reshape(1, key_size)
    return keys <= queries


def key_padding(tokens, pad_id):
    """(B, S) boolean, True where a token is real (not `pad_id`; every token when pad_id is
    None): the padding mask before it is shaped for multi-head scores. Additive (Bahdanau)
    attention uses it as is."""
    tokens = as_token_tensor(tokens, where="key_padding")
    if tokens.ndim != 2:
        raise ValueError(f"key_padding: tokens must be (batch, length), got shape "
                         f"{tokens.shape}")
    if pad_id is None:
        return mg.ones(tokens.shape, dtype=mg.bool, device=tokens.device)
    if not backend.is_integer(pad_id):
        raise TypeError(f"key_padding: pad_id must be a token id (an integer) or None, got "
                        f"{pad_id!r}")
    return tokens != pad_id


def padding_mask(tokens, pad_id):
    """(B, 1, 1, S) boolean from a (B, S) batch of token ids: True at real tokens, False at
    `pad_id`. Broadcasts over heads and queries, so no query ever attends to padding."""
    keep = key_padding(tokens, pad_id)
    B, S = keep.shape
    return keep.reshape(B, 1, 1, S)


def lengths_mask(lengths, max_len=None, device="cpu"):
    """(B, 1, 1, max_len) boolean: True at positions < lengths[b] (real tokens, padding on
    the right). `max_len` defaults to the longest length."""
    lengths = as_token_tensor(lengths, device, "lengths_mask", "lengths")
    if lengths.ndim != 1:
        raise ValueError(f"lengths_mask: lengths must be 1-D (batch,), got shape "
                         f"{lengths.shape}")
    longest = int(lengths.max().item()) if lengths.numel() else 0
    max_len = longest if max_len is None else max_len
    if not backend.is_integer(max_len) or max_len < 0:
        raise ValueError(f"lengths_mask: max_len must be an integer >= 0, got {max_len!r}")
    if lengths.numel() and (int(lengths.min().item()) < 0 or longest > max_len):
        raise ValueError(f"lengths_mask: lengths must be in 0..max_len={max_len}, got "
                         f"{lengths.tolist()}")
    B = lengths.shape[0]
    positions = mg.arange(max_len, device=lengths.device).reshape(1, max_len)
    return (positions < lengths.reshape(B, 1)).reshape(B, 1, 1, max_len)


def combine_masks(*masks):
    """The logical AND of boolean masks that broadcast together (e.g. a decoder's causal
    mask with its target padding mask, (T, T) & (B, 1, 1, T) -> (B, 1, T, T)). None entries
    are skipped; all None gives None. NumPy masks join the tensors' device."""
    device = next((m.device for m in masks if isinstance(m, Tensor)), "cpu")
    out = None
    for m in masks:
        if m is None:
            continue
        m = as_mask(m, device, "combine_masks")
        if m.dtype != mg.bool:
            raise TypeError(f"combine_masks: masks must be boolean (True = may attend), got "
                            f"dtype {m.dtype}")
        out = m if out is None else out & m
    return out


def as_mask(mask, device, where):
    """`mask` as a Tensor on `device` (the scores'): a NumPy array is moved there; a Tensor
    on another device is an error naming `where` and both devices. None stays None."""
    if mask is None:
        return None
    if isinstance(mask, np.ndarray):
        return mg.tensor(mask, device=device)
    if not isinstance(mask, Tensor):
        raise TypeError(f"{where}: a mask must be a boolean minigrad Tensor or NumPy array, "
                        f"got {type(mask).__name__}")
    if mask.device != device:
        raise RuntimeError(f"{where}: the mask is on {mask.device} but the attention runs on "
                           f"{device}; move it with mask.to({device!r})")
    return mask


def check_mask(mask, scores_shape, device, where):
    """`mask` as a boolean Tensor on `device` that broadcasts to `scores_shape` (batch,
    heads, queries, keys), or a clear error; `where` names the caller. None stays None."""
    mask = as_mask(mask, device, where)
    if mask is None:
        return None
    if mask.dtype != mg.bool:
        raise TypeError(f"{where}: attn_mask must be boolean (True = may attend), got dtype "
                        f"{mask.dtype}")
    shape = mask.shape
    fits = len(shape) <= len(scores_shape) and all(
        m in (1, s) for m, s in zip(reversed(shape), reversed(scores_shape)))
    if not fits:
        raise ValueError(f"{where}: attn_mask of shape {shape} cannot broadcast to the "
                         f"attention scores' shape {tuple(scores_shape)} (batch, heads, "
                         f"queries, keys); use e.g. (queries, keys) or (batch, 1, 1, keys)")
    return mask
