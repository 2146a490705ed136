"""nn.MultiheadAttention with PyTorch's signature: its arguments, its parameters by name (a
PyTorch state dict loads), its masks and its (output, weights) result, so code written for
torch.nn.MultiheadAttention runs as it is. The article's lesson version, batch-first with
True-means-attend masks, is minitransformer/attention.py; both attend through
F.scaled_dot_product_attention. The attention itself is F.multi_head_attention_forward's
(ops/multi_head_attention.py): this module holds the parameters and calls it.

Masks, as PyTorch's: a boolean attn_mask or key_padding_mask is True where attending is NOT
allowed (the opposite of SDPA's); a float one is added to the scores. Two differences: a
query row whose every key is masked gets zero weights and a zero output here, where
PyTorch's gives NaN; and with add_bias_kv or add_zero_attn, is_causal=True with
need_weights=False keeps to the attn_mask given (the added key visible to every query, as
with need_weights=True), where PyTorch's attends by the hint alone and so hides that key
from queries 0..L-1.

Also torch.nn.attention's `sdpa_kernel(backends)` and `SDPBackend`: minigrad's attention has
one path, so the context manager only checks its argument and, inside it, reports through
mg.backends.cuda.*_sdp_enabled() the kernels it names, as PyTorch's does.

Its submodules flex_attention (nn/flex_attention.py) and bias (nn/attention_bias.py) are
registered below, so `import minigrad.nn.attention.flex_attention` works as torch's.
"""
import contextlib
import enum
import sys

from minigrad import backends as _backends
from minigrad.args import int_arg, number_arg, tensor_args
from minigrad.creation import empty
from minigrad.nn import init
from minigrad.nn.layers import Linear
from minigrad.nn.module import Module, Parameter
from minigrad.ops.multi_head_attention import attend


class SDPBackend(enum.IntEnum):
    """The attention kernels PyTorch can choose among (their values as its)."""
    ERROR = -1
    MATH = 0
    FLASH_ATTENTION = 1
    EFFICIENT_ATTENTION = 2
    CUDNN_ATTENTION = 3
    OVERRIDEABLE = 4


_SWITCH = {SDPBackend.MATH: "math", SDPBackend.FLASH_ATTENTION: "flash",
           SDPBackend.EFFICIENT_ATTENTION: "mem_efficient", SDPBackend.CUDNN_ATTENTION: "cudnn"}


@contextlib.contextmanager
def sdpa_kernel(backends, set_priority=False):
    """Within it, only the kernels named are enabled (mg.backends.cuda.*_sdp_enabled());
    restored on exit. It changes no result: minigrad's attention has one path."""
    named = list(backends) if isinstance(backends, (list, tuple)) else [backends]
    for b in named:
        if not isinstance(b, SDPBackend):
            raise TypeError(f"sdpa_kernel: backends must be an SDPBackend or a list of them "
                            f"(SDPBackend.{', SDPBackend.'.join(SDPBackend.__members__)}); "
                            f"got {type(b).__name__} {b!r}")
    sdp = _backends.cuda._sdp
    saved = dict(sdp)
    sdp.update({kind: key in named for key, kind in _SWITCH.items()})
    try:
        yield
    finally:
        sdp.update(saved)


class MultiheadAttention(Module):
    """Multi-head attention (article 2.2.3.3): the query, key and value projected, split
    into heads, each head's scaled dot-product attention, the heads joined and projected.

    forward(query, key, value, key_padding_mask=None, need_weights=True, attn_mask=None,
    average_attn_weights=True, is_causal=False) -> (output, weights or None), shaped
    (L, N, E) or, with batch_first=True, (N, L, E); unbatched (L, E) inputs too. The
    weights are (N, L, S) averaged over the heads, or (N, heads, L, S)."""

    def __init__(self, embed_dim, num_heads, dropout=0.0, bias=True, add_bias_kv=False,
                 add_zero_attn=False, kdim=None, vdim=None, batch_first=False, device=None,
                 dtype=None):
        super().__init__()
        if not (isinstance(embed_dim, int) and isinstance(num_heads, int) and embed_dim > 0
                and num_heads > 0 and embed_dim % num_heads == 0):
            raise ValueError(f"MultiheadAttention: embed_dim ({embed_dim!r}) must be a positive "
                             f"multiple of num_heads ({num_heads!r}): each head gets "
                             f"embed_dim // num_heads dims")
        if not 0.0 <= number_arg("MultiheadAttention", "dropout", dropout) <= 1.0:
            raise ValueError(f"MultiheadAttention: dropout must be in [0, 1], got {dropout}")
        self.embed_dim, self.num_heads = embed_dim, num_heads
        self.head_dim = embed_dim // num_heads
        for name, d in (("kdim", kdim), ("vdim", vdim)):
            if d is not None:                    # (0 means embed_dim, as PyTorch's `or`)
                int_arg("MultiheadAttention", name, d, low=0)
        self.kdim, self.vdim = kdim or embed_dim, vdim or embed_dim
        self._qkv_same_embed_dim = self.kdim == embed_dim and self.vdim == embed_dim
        self.dropout, self.batch_first, self.add_zero_attn = dropout, batch_first, add_zero_attn
        kw = dict(device=device, dtype=dtype)
        if self._qkv_same_embed_dim:                 # one (3E, E) matrix, as PyTorch
            self.in_proj_weight = Parameter(empty(3 * embed_dim, embed_dim, **kw))
            self.q_proj_weight = self.k_proj_weight = self.v_proj_weight = None
        else:
            self.in_proj_weight = None
            self.q_proj_weight = Parameter(empty(embed_dim, embed_dim, **kw))
            self.k_proj_weight = Parameter(empty(embed_dim, self.kdim, **kw))
            self.v_proj_weight = Parameter(empty(embed_dim, self.vdim, **kw))
        self.in_proj_bias = Parameter(empty(3 * embed_dim, **kw)) if bias else None
        self.out_proj = Linear(embed_dim, embed_dim, bias=bias, device=device, dtype=dtype)
        if add_bias_kv:                              # a learned key and value appended
            self.bias_k = Parameter(empty(1, 1, embed_dim, **kw))
            self.bias_v = Parameter(empty(1, 1, embed_dim, **kw))
        else:
            self.bias_k = self.bias_v = None
        self._reset_parameters()

    def _reset_parameters(self):
        """PyTorch's initialisation: Xavier-uniform projections, zero biases."""
        for w in (self.in_proj_weight, self.q_proj_weight, self.k_proj_weight,
                  self.v_proj_weight):
            if w is not None:
                init.xavier_uniform_(w)
        if self.in_proj_bias is not None:
            init.zeros_(self.in_proj_bias)
            init.zeros_(self.out_proj.bias)
        for b in (self.bias_k, self.bias_v):
            if b is not None:
                init.xavier_normal_(b)

    def forward(self, query, key, value, key_padding_mask=None, need_weights=True,
                attn_mask=None, average_attn_weights=True, is_causal=False):
        tensor_args("MultiheadAttention", query=query, key=key, value=value)
        unbatched = query.ndim == 2
        self._check_inputs(query, key, value, unbatched)
        if self.batch_first and not unbatched:       # (N, L, E) -> (L, N, E)
            query, key, value = (t.transpose(0, 1) for t in (query, key, value))
        sep = not self._qkv_same_embed_dim
        out, weights = attend(
            query, key, value, self.embed_dim, self.num_heads, self.in_proj_weight,
            self.in_proj_bias, self.bias_k, self.bias_v, self.add_zero_attn, self.dropout,
            self.out_proj.weight, self.out_proj.bias, self.training, key_padding_mask,
            need_weights, attn_mask, sep, self.q_proj_weight, self.k_proj_weight,
            self.v_proj_weight, None, None, average_attn_weights, is_causal,
            op="MultiheadAttention")
        if self.batch_first and not unbatched:
            out = out.transpose(0, 1)
        return out, weights

    def _check_inputs(self, query, key, value, unbatched):
        """The inputs' shapes as the caller gave them, or an error naming them all."""
        ts, dims = (query, key, value), (self.embed_dim, self.kdim, self.vdim)
        if unbatched:
            fits = all(t.ndim == 2 for t in ts) and key.shape[0] == value.shape[0]
        else:
            b = 0 if self.batch_first else 1         # the batch dim; the other is the length
            fits = all(t.ndim == 3 for t in ts) and key.shape[1 - b] == value.shape[1 - b] \
                and query.shape[b] == key.shape[b] == value.shape[b]
        if not fits or any(t.shape[-1] != d for t, d in zip(ts, dims)):
            E, kd, vd = dims
            form = "(N, L, E)" if self.batch_first else "(L, N, E)"
            raise ValueError(f"MultiheadAttention: query, key, value must be (L, {E}), "
                             f"(S, {kd}), (S, {vd}), or batched as {form} (batch_first="
                             f"{self.batch_first}) with one batch size N; got {query.shape}, "
                             f"{key.shape}, {value.shape}")


# torch.nn.attention's submodules, under their PyTorch names (this module is not a package)
from minigrad.nn import attention_bias as bias, flex_attention  # noqa: E402
sys.modules[__name__ + ".bias"] = bias
sys.modules[__name__ + ".flex_attention"] = flex_attention
