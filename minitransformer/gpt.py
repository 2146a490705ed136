"""GPT: a decoder-only character (or token) language model, in the spirit of nanoGPT's model.py.

Token + learned position embeddings, pre-norm blocks (causal multi-head self-attention with one
fused qkv projection, then a 4x GELU MLP, each inside a residual connection), a final layer norm
and an output head tied to the token embedding. Parameter names are nanoGPT's (and so GPT-2's
in Hugging Face layout, less the Conv1D transpose), so a state dict maps by name.

Generation keeps a KV cache: the keys and values of past positions are stored per layer, so each
new token costs one position instead of the whole context.
"""
import math
import numbers
from dataclasses import dataclass, asdict

import numpy as np

import minigrad as mg
import minigrad.functional as F
from minigrad import backend, nn
from minigrad.utils.checkpoint import checkpoint

from minitransformer.inference import inference
from minitransformer.tokens import as_token_tensor


@dataclass
class GPTConfig:
    """The GPT's shape (nanoGPT's GPTConfig; the shape defaults are its Shakespeare GPU
    model's, 6 layers of 6 heads and 384 dims over 256 positions; dropout 0, as its GPTConfig
    default: that run sets 0.2, which the trainer's `small` preset does)."""
    vocab_size: int = 65
    block_size: int = 256     # the longest context the model sees (learned positions)
    n_layer: int = 6
    n_head: int = 6
    n_embd: int = 384
    dropout: float = 0.0
    bias: bool = True         # biases in Linear layers and LayerNorms, as GPT-2

    def __post_init__(self):
        for name in ("vocab_size", "block_size", "n_layer", "n_head", "n_embd"):
            value = getattr(self, name)
            if not backend.is_integer(value) or value < 1:
                raise ValueError(f"GPTConfig: {name} must be a positive integer, got {value!r}")
            setattr(self, name, int(value))              # a NumPy int too, as a JSON number
        if self.n_embd % self.n_head:
            raise ValueError(f"GPTConfig: n_embd ({self.n_embd}) must be divisible by n_head "
                             f"({self.n_head}) so each head gets n_embd/n_head dims; e.g. "
                             f"n_head in {_divisors(self.n_embd)}")
        if not 0.0 <= self.dropout < 1.0:
            raise ValueError(f"GPTConfig: dropout must be in [0, 1), got {self.dropout}")

    def to_dict(self):
        return asdict(self)

    @classmethod
    def from_dict(cls, d):
        return cls(**d)


def _divisors(n):
    return [d for d in range(1, n + 1) if n % d == 0 and d <= 64]


class KVCache:
    """What generation keeps between steps: the keys and values of every position seen so
    far, per layer. A new token's query needs the keys and values of all earlier positions,
    and those do not change, so with the cache each step runs the model on the one new
    position instead of the whole context. Preallocated to block_size positions per layer;
    `length` positions are filled, and a forward with a cache appends its positions.
    dtype and device default to those of the first keys stored: the model's."""

    def __init__(self, config, batch_size, device=None, dtype=None):
        head_size = config.n_embd // config.n_head
        self.shape = (batch_size, config.n_head, config.block_size, head_size)
        self.device, self.dtype = device, dtype
        self.keys = [None] * config.n_layer        # allocated by the first append
        self.values = [None] * config.n_layer
        self.capacity, self.length = config.block_size, 0

    def append(self, layer, k, v):
        """Store k, v (B, nh, T, hs) after the cached positions; return all keys and values
        so far. `length` moves on once the last layer has stored its part."""
        B, nh, _, hs = self.shape
        if not (0 <= layer < len(self.keys) and k.ndim == 4 and k.shape == v.shape and
                (k.shape[0], k.shape[1], k.shape[3]) == (B, nh, hs)):
            # else a batch of 1 would broadcast into every row of a bigger cache, silently
            raise ValueError(f"KVCache: made for {len(self.keys)} layers and keys (batch={B}, "
                             f"heads={nh}, positions, {hs}); got layer {layer}, keys "
                             f"{k.shape} and values {v.shape}: build the cache with the "
                             f"model's config and the batch size of its input")
        if self.keys[layer] is None:
            device = k.device if self.device is None else self.device
            dtype = k.dtype if self.dtype is None else self.dtype
            self.keys[layer] = mg.zeros(self.shape, device=device, dtype=dtype)
            self.values[layer] = mg.zeros(self.shape, device=device, dtype=dtype)
        if mg.is_grad_enabled() and (k.requires_grad or v.requires_grad):
            # a write into the preallocated cache that autograd recorded would be refused
            # from the second step on (the first step's views of the cache used it): say
            # so here, once, with what to do instead
            raise RuntimeError("KVCache: decoding with a cache is for generation and is not "
                               "differentiable; run it under mg.no_grad() (generate() does), "
                               "or call the model without a cache to train")
        start, end = self.length, self.length + k.shape[2]
        if end > self.capacity:
            raise ValueError(f"KVCache: {end} positions do not fit its {self.capacity} "
                             f"(block_size); crop the context, or start a new cache")
        self.keys[layer][:, :, start:end] = k
        self.values[layer][:, :, start:end] = v
        if layer == len(self.keys) - 1:
            self.length = end
        return self.keys[layer][:, :, :end], self.values[layer][:, :, :end]

    def reset(self):
        self.length = 0


class CausalSelfAttention(nn.Module):
    """Multi-head self-attention where position t attends to positions <= t (article 2.2.3.4).
    One Linear `c_attn` makes queries, keys and values together; `c_proj` mixes the heads."""

    def __init__(self, config, layer_index=0):
        super().__init__()
        self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout
        self.layer_index = layer_index
        self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
        self.resid_dropout = nn.Dropout(config.dropout)

    # without a KV cache on the CPU (training, evaluation) the same arithmetic runs as one
    # op, F.qkv_attention: eleven ops fewer around the attention, ~2 ms of a baby step's
    # ~37; the lines below are what it does, and run with a cache and on a GPU
    fused_qkv = True

    def forward(self, x, cache=None):
        B, T, C = x.shape
        qkv = self.c_attn(x)
        dropout_p = self.dropout if self.training else 0.0
        if cache is None and self.fused_qkv and qkv.backend.host:
            return self.resid_dropout(self.c_proj(
                F.qkv_attention(qkv, self.n_head, dropout_p, is_causal=True)))
        q, k, v = qkv.split(self.n_embd, dim=2)
        # (B, T, C) -> (B, nh, T, hs): each head attends on its own slice of the channels
        q, k, v = (t.reshape(B, T, self.n_head, C // self.n_head).transpose(1, 2)
                   for t in (q, k, v))
        if cache is None:
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=dropout_p, is_causal=True)
        else:
            past = cache.length
            k, v = cache.append(self.layer_index, k, v)
            # the T new queries sit at positions past..past+T-1 and see every key up to theirs
            mask = None
            if T > 1:
                query_pos = mg.arange(past, past + T, device=x.device).reshape(T, 1)
                mask = mg.arange(past + T, device=x.device).reshape(1, past + T) <= query_pos
            y = F.scaled_dot_product_attention(q, k, v, attn_mask=mask, dropout_p=dropout_p)
        y = y.transpose(1, 2).reshape(B, T, C)  # re-assemble the heads side by side
        return self.resid_dropout(self.c_proj(y))


class MLP(nn.Module):
    """The position-wise feed-forward network (article 2.2.5.1 前馈神经网络), GPT's form:
    Linear(C, 4C) -> GELU -> Linear(4C, C) -> Dropout.

    The GELU is GPT-2's tanh approximation (nanoGPT uses the exact erf form; the two differ
    by < 1e-3). NumPy has no vectorised erf and SciPy's runs ~30x slower than tanh, so on the
    CPU the exact form would cost about a fifth of every training step."""

    def __init__(self, config):
        super().__init__()
        self.c_fc = nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias)
        self.c_proj = nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias)
        self.dropout = nn.Dropout(config.dropout)

    def forward(self, x):
        return self.dropout(self.c_proj(F.gelu(self.c_fc(x), approximate="tanh")))


class Block(nn.Module):
    """A Transformer decoder block, pre-norm: x + attn(ln_1(x)), then x + mlp(ln_2(x)).
    Each sublayer sits in a residual connection (article 2.2.5.3 残差连接) with layer
    normalisation (2.2.5.4 层归一化) applied to its input, not after the add as in the
    paper (see minitransformer.sublayer for the two wirings)."""

    def __init__(self, config, layer_index=0):
        super().__init__()
        self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.attn = CausalSelfAttention(config, layer_index)
        self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
        self.mlp = MLP(config)

    def forward(self, x, cache=None):
        x = x + self.attn(self.ln_1(x), cache)
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """Decoder-only Transformer language model, nanoGPT's: token + learned position
    embedding, pre-norm blocks, causal MHA, weight tying."""

    def __init__(self, config):
        super().__init__()
        self.config = config
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(config.vocab_size, config.n_embd),
            wpe=nn.Embedding(config.block_size, config.n_embd),
            drop=nn.Dropout(config.dropout),
            h=nn.ModuleList([Block(config, i) for i in range(config.n_layer)]),
            ln_f=nn.LayerNorm(config.n_embd, bias=config.bias),
        ))
        self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
        # weight tying: the output head scores a hidden state against every token's embedding
        self.transformer.wte.weight = self.lm_head.weight
        # True: each block's activations are recomputed in backward instead of kept
        # (minigrad.utils.checkpoint), so training holds one (B, T, C) per block: the same
        # gradients, about a third more compute, a fraction of the memory
        self.gradient_checkpointing = False
        self._init_weights()

    def _init_weights(self):
        """GPT-2's initialisation: N(0, 0.02) for every Linear and Embedding weight, zero
        biases, and the residual projections scaled by 1/√(2·n_layer) so the residual stream's
        variance does not grow with depth."""
        for module in self.modules():
            if isinstance(module, (nn.Linear, nn.Embedding)):
                nn.init.normal_(module.weight, 0.0, 0.02)
            if isinstance(module, nn.Linear) and module.bias is not None:
                nn.init.zeros_(module.bias)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * self.config.n_layer))

    def num_parameters(self, non_embedding=True):
        """Parameter count; the position embedding is left out by default (as nanoGPT), the
        token embedding counts because it is also the output head."""
        n = sum(p.numel() for p in self.parameters())
        return n - self.transformer.wpe.weight.numel() if non_embedding else n

    @property
    def device(self):
        return self.lm_head.weight.device

    def hidden_states(self, idx, cache=None):
        """The final-layer-norm outputs (B, T, n_embd) of token ids idx (B, T). With a cache,
        idx are the next positions after the cached ones."""
        B, T = idx.shape
        past = cache.length if cache is not None else 0
        if past + T > self.config.block_size:
            raise ValueError(f"GPT: {past + T} positions (cached {past} + new {T}) exceed "
                             f"block_size {self.config.block_size}; crop the context to the last "
                             f"{self.config.block_size} tokens")
        pos = mg.arange(past, past + T, device=self.device)
        x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
        recompute = self.gradient_checkpointing and cache is None and mg.is_grad_enabled()
        for block in self.transformer.h:
            x = checkpoint(block, x, use_reentrant=False) if recompute else block(x, cache)
        return self.transformer.ln_f(x)

    def forward(self, idx, targets=None):
        """idx (B, T) token ids -> (logits (B, T, vocab), loss or None). With targets (B, T)
        the loss is the mean cross-entropy of predicting each next token."""
        idx = as_token_tensor(idx, self.device, "GPT")
        if idx.ndim != 2 or 0 in idx.shape:
            raise ValueError(f"GPT.forward: idx must be (batch, time) token ids, at least one "
                             f"of each, got shape {idx.shape}")
        logits = self.lm_head(self.hidden_states(idx))
        loss = None
        if targets is not None:
            targets = as_token_tensor(targets, self.device, "GPT")
            if targets.shape != idx.shape:
                raise ValueError(f"GPT.forward: targets {targets.shape} must match idx "
                                 f"{idx.shape}")
            loss = F.cross_entropy(logits.reshape(-1, logits.shape[-1]), targets.reshape(-1))
        return logits, loss

    def configure_optimizers(self, weight_decay, learning_rate, betas=(0.9, 0.99), eps=1e-8):
        """AdamW with weight decay on the matrices (every ≥2-D weight: Linear weights and
        embeddings) and none on biases and layer-norm gains, as nanoGPT."""
        from minigrad import optim
        params = list(self.parameters())
        decay = [p for p in params if p.ndim >= 2]
        no_decay = [p for p in params if p.ndim < 2]
        groups = [{"params": decay, "weight_decay": weight_decay},
                  {"params": no_decay, "weight_decay": 0.0}]
        return optim.AdamW(groups, lr=learning_rate, betas=tuple(betas), eps=eps)

    def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True):
        """Append max_new_tokens sampled tokens to idx (B, T) and return the (B, T + new) ids.

        Each step samples from softmax(logits / temperature), restricted to the top_k most
        likely tokens if given, with one uniform draw per sequence from minigrad's CPU
        generator (seeded by mg.manual_seed): with or without the cache, the same seed gives
        the same tokens. The context is cropped to the last block_size tokens. Past that
        length the window slides by one every step, so every token changes position and the
        cached keys and values (which include their positions) no longer apply: each step
        then recomputes the window, exactly as without the cache."""
        idx = self._generation_prompt(idx, max_new_tokens, temperature, top_k)
        steps = [mg.tensor(ids, device=self.device)
                 for ids in self._steps(idx, max_new_tokens, temperature, top_k, use_cache)]
        return mg.cat([idx, *steps], dim=1)

    def stream(self, idx, max_new_tokens, temperature=1.0, top_k=None, use_cache=True):
        """generate's tokens as they are sampled (the same tokens for the same seed): an
        iterator of each step's new ids, a (B, 1) int64 NumPy array, so a caller can show
        a sample as it grows. Each step runs as inference (no graph, dropout off); between
        steps the caller's own modes hold."""
        idx = self._generation_prompt(idx, max_new_tokens, temperature, top_k)
        return self._steps(idx, max_new_tokens, temperature, top_k, use_cache)

    def _generation_prompt(self, idx, max_new_tokens, temperature, top_k):
        """The arguments checked (a clear error now, not at the first step) and idx as a
        token tensor on the model's device."""
        if not (isinstance(temperature, numbers.Real) and not isinstance(temperature, bool)
                and temperature > 0 and math.isfinite(temperature)):   # NaN fails `> 0`
            raise ValueError(f"generate: temperature must be a finite number > 0, got "
                             f"{temperature!r} (use top_k=1 for greedy decoding)")
        for name, n, low in (("top_k", top_k, 1), ("max_new_tokens", max_new_tokens, 0)):
            if n is not None and (not backend.is_integer(n) or n < low):
                raise ValueError(f"generate: {name} must be an integer >= {low}"
                                 f"{' or None' if name == 'top_k' else ''}, got {n!r}")
        idx = as_token_tensor(idx, self.device, "GPT.generate")
        if idx.ndim != 2 or idx.shape[1] < 1:
            raise ValueError(f"generate: idx must be (batch, time) with at least one token, "
                             f"got shape {idx.shape}")
        return idx

    def _steps(self, idx, max_new_tokens, temperature, top_k, use_cache):
        block = self.config.block_size
        cache = KVCache(self.config, idx.shape[0]) if use_cache else None
        for step in range(max_new_tokens):
            # inference for each step, not across the yield: the caller's code between
            # steps runs in its own modes (gradients on, dropout as the model had it)
            with inference(self):
                if cache is None or idx.shape[1] > block:  # no cache, or a sliding window
                    h = self.hidden_states(idx[:, -block:])
                elif step == 0:                            # the prompt fills the cache
                    h = self.hidden_states(idx, cache)
                else:                                      # one new position
                    h = self.hidden_states(idx[:, -1:], cache)
                next_id = sample_next(self.lm_head(h[:, -1, :]), temperature, top_k)
                if step + 1 < max_new_tokens:              # the next step's context
                    idx = mg.cat([idx, mg.tensor(next_id, device=self.device)], dim=1)
            yield next_id


def sample_next(logits, temperature=1.0, top_k=None):
    """Sample one token id per row of logits (B, vocab) -> int64 array (B, 1). Done on the
    host in float64 by inverting the cumulative distribution at one uniform draw per row."""
    # Host NumPy on purpose: B x vocab numbers per step, drawn from minigrad's CPU generator,
    # so a seed gives the same tokens on every device (the logits come over once per step).
    u = mg.rand(logits.shape[0], dtype=mg.float64).numpy()
    z = logits.numpy().astype(np.float64)
    if not np.isfinite(z).all():
        raise ValueError("sample_next: the logits hold NaN or inf (a diverged model?); "
                         "cannot sample from them")
    with np.errstate(over="ignore"):     # at a tiny T the others go to -inf: weight 0
        z = (z - z.max(axis=-1, keepdims=True)) / temperature   # the max is 0: exp(z) <= 1
    if top_k is not None and top_k < z.shape[-1]:
        kth = np.sort(z, axis=-1)[:, -top_k][:, None]
        z = np.where(z < kth, -np.inf, z)
    p = np.exp(z)
    cdf = np.cumsum(p, axis=-1)
    ids = (cdf < u[:, None] * cdf[:, -1:]).sum(axis=-1)
    return np.minimum(ids, z.shape[-1] - 1).astype(np.int64)[:, None]
