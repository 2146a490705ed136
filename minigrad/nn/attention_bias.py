"""torch.nn.attention.bias (importable as minigrad.nn.attention.bias): causal masks for
queries and keys of different lengths, given to F.scaled_dot_product_attention as attn_mask.

causal_upper_left(L, S): query i attends to keys 0..i (is_causal's mask). causal_lower_right
(L, S): the diagonal ends at the bottom-right corner, query i attends to keys 0..i+S-L (the
last query sees every key: decoding with a cache of S-L earlier keys). With L > S the first
L-S queries of the lower-right mask see no key: they get zero outputs (as PyTorch's SDPA),
so PyTorch's warning of NaNs there is not given. A CausalBias is not a Tensor here, as it is
in PyTorch: SDPA recognises it (_sdpa_args) instead of PyTorch's __torch_function__."""
import enum
import numbers

from minigrad import backend
from minigrad.creation import ones

__all__ = ["causal_upper_left", "causal_lower_right", "CausalVariant", "CausalBias"]


class CausalVariant(enum.IntEnum):
    """Where the causal diagonal starts (values as PyTorch's)."""
    UPPER_LEFT = 1
    LOWER_RIGHT = 2


class CausalBias:
    """A causal mask of seq_len_q queries by seq_len_kv keys, kept as its description."""

    def __init__(self, variant, seq_len_q, seq_len_kv):
        if not isinstance(variant, CausalVariant):
            raise TypeError(f"CausalBias: variant must be a CausalVariant (UPPER_LEFT, "
                            f"LOWER_RIGHT), got {type(variant).__name__} {variant!r}")
        for name, n in (("seq_len_q", seq_len_q), ("seq_len_kv", seq_len_kv)):
            if not isinstance(n, numbers.Integral) or isinstance(n, bool) or n < 0:
                raise ValueError(f"CausalBias: {name} must be a non-negative int, got {n!r}")
        # NumPy integers (sizes read off arrays) as Python ints: tril's offset needs one
        self.variant, self.seq_len_q, self.seq_len_kv = variant, int(seq_len_q), int(seq_len_kv)

    def _upper_left(self, device=None):
        return ones(self.seq_len_q, self.seq_len_kv, dtype=backend.bool_, device=device).tril()

    def _lower_right(self, device=None):
        return ones(self.seq_len_q, self.seq_len_kv, dtype=backend.bool_, device=device).tril(
            self.seq_len_kv - self.seq_len_q)

    def _materialize(self, device=None):
        """The boolean (seq_len_q, seq_len_kv) mask, True where a query may attend."""
        if self.variant == CausalVariant.UPPER_LEFT:
            return self._upper_left(device)
        return self._lower_right(device)

    def _sdpa_args(self, query, key, is_causal):
        """(attn_mask, is_causal) for scaled_dot_product_attention: its fast is_causal path
        where the mask is the upper-left one, the materialised mask otherwise."""
        if is_causal:
            raise ValueError("scaled_dot_product_attention: a CausalBias attn_mask is causal "
                             "already; do not also pass is_causal=True")
        L, S = query.shape[-2], key.shape[-2]
        if (L, S) != (self.seq_len_q, self.seq_len_kv):
            raise ValueError(f"scaled_dot_product_attention: the CausalBias is for "
                             f"{self.seq_len_q} queries and {self.seq_len_kv} keys, got {L} "
                             f"and {S}")
        if self.variant == CausalVariant.UPPER_LEFT or L == S:
            return None, True
        return self._materialize(query.device), False

    def __repr__(self):
        return repr(self._materialize())


def _sizes(name, size):
    if len(size) != 2:
        raise ValueError(f"{name}: takes two sizes (seq_len_q, seq_len_kv), got {size!r}")
    return size


def causal_upper_left(*size):
    """The upper-left causal CausalBias for (seq_len_q, seq_len_kv)."""
    return CausalBias(CausalVariant.UPPER_LEFT, *_sizes("causal_upper_left", size))


def causal_lower_right(*size):
    """The lower-right causal CausalBias for (seq_len_q, seq_len_kv)."""
    return CausalBias(CausalVariant.LOWER_RIGHT, *_sizes("causal_lower_right", size))
