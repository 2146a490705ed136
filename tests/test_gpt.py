"""GPT: shapes, causality, weight tying, initialisation, KV-cache generation, PyTorch parity."""
import math

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minitransformer.gpt import GPT, GPTConfig, KVCache, sample_next
from mt_helpers import gradcheck_module


def tiny_config(**kw):
    cfg = dict(vocab_size=11, block_size=8, n_layer=2, n_head=2, n_embd=16, dropout=0.0,
               bias=True)
    cfg.update(kw)
    return GPTConfig(**cfg)


def make_model(seed=0, **kw):
    mg.manual_seed(seed)
    return GPT(tiny_config(**kw))


def test_forward_shapes_and_loss():
    model = make_model()
    idx = np.random.default_rng(0).integers(0, 11, (3, 8))
    logits, loss = model(mg.tensor(idx))
    assert logits.shape == (3, 8, 11) and loss is None
    logits, loss = model(mg.tensor(idx[:, :5]), mg.tensor(idx[:, 1:6]))
    assert logits.shape == (3, 5, 11) and loss.shape == () and np.isfinite(loss.item())


def test_too_long_context_is_an_error():
    model = make_model()
    with pytest.raises(ValueError, match="block_size 8"):
        model(mg.zeros(1, 9, dtype=mg.int64))


@pytest.mark.parametrize("n_embd,n_head", [(16, 3), (10, 4)])
def test_config_needs_n_embd_divisible_by_n_head(n_embd, n_head):
    with pytest.raises(ValueError, match=r"n_embd \(\d+\) must be divisible by n_head"):
        tiny_config(n_embd=n_embd, n_head=n_head)


def test_config_takes_numpy_integers_as_plain_ints():
    """vocab_size=ids.max() + 1 is a NumPy int: accepted, and kept as a Python int so the
    config still saves as JSON."""
    import json
    cfg = tiny_config(vocab_size=np.int64(11), n_embd=np.int32(16))
    assert type(cfg.vocab_size) is int and type(cfg.n_embd) is int
    assert json.loads(json.dumps(cfg.to_dict()))["vocab_size"] == 11
    with pytest.raises(ValueError, match="n_layer must be a positive integer, got 2.0"):
        tiny_config(n_layer=2.0)


def test_causal_logits_at_t_ignore_later_tokens():
    model = make_model()
    rng = np.random.default_rng(1)
    a = rng.integers(0, 11, (2, 8))
    b = a.copy()
    b[:, 5:] = rng.integers(0, 11, (2, 3))
    la, _ = model(mg.tensor(a))
    lb, _ = model(mg.tensor(b))
    np.testing.assert_array_equal(la.numpy()[:, :5], lb.numpy()[:, :5])   # exactly
    assert not np.allclose(la.numpy()[:, 5:], lb.numpy()[:, 5:])


def test_weight_tying_one_parameter():
    model = make_model()
    assert model.lm_head.weight is model.transformer.wte.weight
    params = list(model.parameters())
    assert sum(p is model.lm_head.weight for p in params) == 1
    names = [n for n, _ in model.named_parameters()]
    assert "transformer.wte.weight" in names and "lm_head.weight" not in names
    # the state dict carries both names, as nanoGPT / PyTorch
    sd = model.state_dict()
    assert "lm_head.weight" in sd and "transformer.wte.weight" in sd
    expected = {"transformer.wpe.weight", "transformer.h.0.ln_1.weight",
                "transformer.h.0.attn.c_attn.weight", "transformer.h.1.attn.c_proj.bias",
                "transformer.h.1.ln_2.bias", "transformer.h.0.mlp.c_fc.weight",
                "transformer.h.1.mlp.c_proj.weight", "transformer.ln_f.weight"}
    assert expected <= set(sd)
    assert sd["transformer.h.0.attn.c_attn.weight"].shape == (48, 16)


def test_gpt2_initialisation_statistics():
    mg.manual_seed(0)
    cfg = GPTConfig(vocab_size=100, block_size=64, n_layer=4, n_head=4, n_embd=128)
    model = GPT(cfg)
    sd = model.state_dict()
    resid_std = 0.02 / math.sqrt(2 * cfg.n_layer)
    for name, t in sd.items():
        w = t.numpy()
        if name.endswith("c_proj.weight"):
            assert abs(w.std() - resid_std) < 0.1 * resid_std, name
        elif name.endswith(".weight") and w.ndim == 2:
            assert abs(w.std() - 0.02) < 0.002, name
            assert abs(w.mean()) < 0.002, name
        elif name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
            assert (w == 1).all(), name
        elif name.endswith(".bias"):
            assert (w == 0).all(), name


def test_loss_at_init_is_about_log_vocab():
    mg.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=65, block_size=32, n_layer=2, n_head=2, n_embd=32))
    rng = np.random.default_rng(0)
    x, y = rng.integers(0, 65, (8, 32)), rng.integers(0, 65, (8, 32))
    _, loss = model(mg.tensor(x), mg.tensor(y))
    assert abs(loss.item() - math.log(65)) < 0.1


def test_tiny_model_overfits_tiny_text():
    from minigrad import optim
    text = "to be or not to be, that is the question. "
    chars = sorted(set(text))
    ids = np.array([chars.index(c) for c in text * 2])
    mg.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=len(chars), block_size=16, n_layer=2, n_head=2, n_embd=32))
    opt = optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    starts = np.arange(0, len(text))            # every window of the (periodic) text
    x = mg.tensor(np.stack([ids[s:s + 16] for s in starts]))
    y = mg.tensor(np.stack([ids[s + 1:s + 17] for s in starts]))
    for _ in range(100):
        _, loss = model(x, y)
        opt.zero_grad()
        loss.backward()
        opt.step()
    assert loss.item() < 0.3


def test_kv_cache_appends_per_layer():
    cfg = tiny_config()
    cache = KVCache(cfg, batch_size=2, device="cpu")
    k = mg.ones(2, 2, 3, 8)
    for layer in range(cfg.n_layer):
        keys, values = cache.append(layer, k, k * 2)
        assert keys.shape == (2, 2, 3, 8)
    assert cache.length == 3
    keys, values = cache.append(0, k[:, :, :1], k[:, :, :1])
    assert keys.shape == (2, 2, 4, 8)


def test_kv_cache_refuses_keys_of_another_batch_layer_or_head_shape():
    """A cache for batch 2 used to take batch-1 keys, broadcast into both rows, and fail
    later inside the attention's reshape; now the cache names what does not fit."""
    model = make_model().eval()
    idx = mg.tensor([[1, 2, 3]])
    for cache in (KVCache(model.config, 2), KVCache(tiny_config(n_layer=1), 1)):
        with mg.no_grad(), pytest.raises(ValueError, match=r"KVCache: made for \d layers"):
            model.hidden_states(idx, cache)
    with pytest.raises(ValueError, match=r"heads=2.*got layer 0, keys \(1, 4, 3, 8\)"):
        KVCache(model.config, 1).append(0, mg.ones(1, 4, 3, 8), mg.ones(1, 4, 3, 8))


def test_cached_logits_equal_full_forward():
    model = make_model()
    model.eval()
    idx = mg.tensor(np.random.default_rng(2).integers(0, 11, (2, 8)))
    full = model.lm_head(model.hidden_states(idx)).numpy()
    cache = KVCache(model.config, 2, "cpu")
    with mg.no_grad():
        parts = [model.lm_head(model.hidden_states(idx[:, :3], cache)).numpy()]
        for t in range(3, 8):
            parts.append(model.lm_head(model.hidden_states(idx[:, t:t + 1], cache)).numpy())
    np.testing.assert_allclose(np.concatenate(parts, axis=1), full, rtol=1e-5, atol=1e-5)


def test_kv_cache_refuses_to_run_where_gradients_are_wanted():
    model = make_model()
    idx = mg.tensor([[1, 2, 3]])
    with pytest.raises(RuntimeError, match="KVCache: .*not differentiable.*mg.no_grad"):
        model.hidden_states(idx, KVCache(model.config, 1))
    with mg.no_grad():
        assert model.hidden_states(idx, KVCache(model.config, 1)).shape == (1, 3, 16)


def test_kv_cache_takes_the_models_dtype():
    model = make_model().to(dtype=mg.float64)
    model.eval()
    idx = mg.tensor(np.random.default_rng(2).integers(0, 11, (2, 8)))
    full = model.lm_head(model.hidden_states(idx)).numpy()
    cache = KVCache(model.config, 2)
    with mg.no_grad():
        parts = [model.lm_head(model.hidden_states(idx[:, :3], cache)).numpy()]
        for t in range(3, 8):
            parts.append(model.lm_head(model.hidden_states(idx[:, t:t + 1], cache)).numpy())
    assert cache.keys[0].dtype == mg.float64 and cache.values[-1].dtype == mg.float64
    np.testing.assert_allclose(np.concatenate(parts, axis=1), full, rtol=1e-12, atol=1e-12)
    mg.manual_seed(5)
    a = model.generate(idx[:, :2], 6, use_cache=True)
    mg.manual_seed(5)
    np.testing.assert_array_equal(a.numpy(), model.generate(idx[:, :2], 6,
                                                            use_cache=False).numpy())


@pytest.mark.parametrize("prompt_len,new,top_k", [(1, 7, None), (3, 20, None), (8, 12, 3),
                                                   (11, 4, None), (2, 15, 1)])
def test_generate_with_cache_equals_without(prompt_len, new, top_k):
    # 1 + 7 fills the block exactly; the others run past block_size (the window slides), the
    # prompt of 11 is longer than the block from the start
    model = make_model(dropout=0.1)   # generate must switch dropout off (eval mode)
    model.train()
    prompt = mg.tensor(np.random.default_rng(3).integers(0, 11, (2, prompt_len)))
    mg.manual_seed(42)
    a = model.generate(prompt, new, temperature=0.8, top_k=top_k, use_cache=True)
    mg.manual_seed(42)
    b = model.generate(prompt, new, temperature=0.8, top_k=top_k, use_cache=False)
    assert a.shape == (2, prompt_len + new)
    np.testing.assert_array_equal(a.numpy(), b.numpy())
    np.testing.assert_array_equal(a.numpy()[:, :prompt_len], prompt.numpy())
    assert model.training  # the mode is restored


def test_stream_gives_generates_tokens_step_by_step_in_the_callers_modes_between():
    """stream yields each step's (B, 1) ids: the same tokens as generate for the same seed;
    its arguments are checked at the call, not at the first step; each step runs as
    inference, and between steps (two streams interleaved) the caller's modes hold."""
    model = make_model(dropout=0.1).train()
    prompt = mg.tensor([[1, 2, 3], [4, 5, 6]])
    mg.manual_seed(7)
    whole = model.generate(prompt, 12, temperature=0.9).numpy()
    mg.manual_seed(7)
    steps = list(model.stream(prompt, 12, temperature=0.9))
    assert all(s.shape == (2, 1) and s.dtype == np.int64 for s in steps)
    np.testing.assert_array_equal(np.concatenate([prompt.numpy(), *steps], 1), whole)
    assert model.training
    with pytest.raises(ValueError, match="top_k must be an integer"):
        model.stream(prompt, 3, top_k=0)
    a, b = model.stream(prompt, 5), model.stream(prompt, 5)
    next(a), next(b)                   # between steps: the caller's modes, not inference's
    assert model.training and mg.is_grad_enabled()
    a.close()
    assert [s.shape for s in b] == [(2, 1)] * 4 and model.training and mg.is_grad_enabled()


def test_generate_top_k_1_is_greedy():
    model = make_model()
    prompt = mg.tensor([[1, 2, 3]])
    out = model.generate(prompt, 1, top_k=1)
    logits, _ = model(prompt)
    assert out.numpy()[0, -1] == logits.numpy()[0, -1].argmax()


def test_generate_rejects_bad_arguments():
    model = make_model()
    with pytest.raises(ValueError, match="temperature"):
        model.generate([[1]], 3, temperature=0)
    with pytest.raises(ValueError, match="top_k"):
        model.generate([[1]], 3, top_k=0)
    for kw, words in ((dict(top_k=2.5), "top_k must be an integer"),
                      (dict(top_k=True), "top_k must be an integer"),
                      (dict(temperature="1"), "temperature must be a finite number"),
                      (dict(max_new_tokens=-1), "max_new_tokens must be an integer >= 0")):
        with pytest.raises(ValueError, match=words):
            model.generate([[1]], **{"max_new_tokens": 3, **kw})
    with pytest.raises(ValueError, match="NaN or inf"):
        sample_next(mg.tensor([[float("nan"), 0.0, 1.0]]))


def test_tiny_temperature_is_greedy_and_modes_are_restored():
    # logits / T overflowed to inf at T = 1e-310 and the NaNs sampled token 0
    model = make_model()
    greedy = model.generate([[1, 2, 3]], 4, top_k=1).tolist()
    assert model.generate([[1, 2, 3]], 4, temperature=1e-310).tolist() == greedy
    model.eval()
    model.transformer.drop.train()              # a submodule in its own mode
    model.generate([[1]], 2)
    assert model.transformer.drop.training and not model.training


def test_load_state_dict_into_a_different_config_fails():
    small = make_model()
    other = make_model(n_embd=32)
    with pytest.raises(RuntimeError, match="shape mismatches"):
        other.load_state_dict(small.state_dict())
    deeper = make_model(n_layer=3)
    with pytest.raises(RuntimeError, match="missing keys"):
        deeper.load_state_dict(small.state_dict())


# ---- PyTorch reference (nanoGPT's model, written out) ------------------------------------
def _torch_gpt(cfg):
    torch = pytest.importorskip("torch")
    nn, F = torch.nn, torch.nn.functional

    class Attn(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd, bias=cfg.bias)
            self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd, bias=cfg.bias)

        def forward(self, x):
            B, T, C = x.shape
            q, k, v = self.c_attn(x).split(cfg.n_embd, dim=2)
            q, k, v = (t.view(B, T, cfg.n_head, C // cfg.n_head).transpose(1, 2)
                       for t in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).reshape(B, T, C))

    class MLP(nn.Module):
        def __init__(self):
            super().__init__()
            self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd, bias=cfg.bias)
            self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd, bias=cfg.bias)

        def forward(self, x):
            return self.c_proj(F.gelu(self.c_fc(x), approximate="tanh"))

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.ln_1 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
            self.attn = Attn()
            self.ln_2 = nn.LayerNorm(cfg.n_embd, bias=cfg.bias)
            self.mlp = MLP()

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class TorchGPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(cfg.vocab_size, cfg.n_embd),
                wpe=nn.Embedding(cfg.block_size, cfg.n_embd),
                h=nn.ModuleList([Block() for _ in range(cfg.n_layer)]),
                ln_f=nn.LayerNorm(cfg.n_embd, bias=cfg.bias)))
            self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight

        def forward(self, idx, targets):
            pos = torch.arange(idx.shape[1])
            x = self.transformer.wte(idx) + self.transformer.wpe(pos)
            for b in self.transformer.h:
                x = b(x)
            logits = self.lm_head(self.transformer.ln_f(x))
            return logits, F.cross_entropy(logits.view(-1, logits.size(-1)), targets.view(-1))

    return torch, TorchGPT()


@pytest.mark.parametrize("bias", [True, False])
def test_matches_pytorch_reimplementation(bias):
    cfg = tiny_config(bias=bias)
    torch, ref = _torch_gpt(cfg)
    model = make_model(bias=bias)
    sd = model.state_dict()
    ref.load_state_dict({k: torch.tensor(v.numpy()) for k, v in sd.items()})
    rng = np.random.default_rng(4)
    x, y = rng.integers(0, 11, (3, 8)), rng.integers(0, 11, (3, 8))
    logits, loss = model(mg.tensor(x), mg.tensor(y))
    loss.backward()
    ref_logits, ref_loss = ref(torch.tensor(x), torch.tensor(y))
    ref_loss.backward()
    np.testing.assert_allclose(logits.numpy(), ref_logits.detach().numpy(), rtol=1e-4, atol=1e-5)
    assert abs(loss.item() - ref_loss.item()) < 1e-5
    ref_params = dict(ref.named_parameters())
    for name, p in model.named_parameters():
        np.testing.assert_allclose(p.grad.numpy(), ref_params[name].grad.numpy(), rtol=1e-3,
                                   atol=1e-6, err_msg=name)


def test_gpt_gradcheck_float64():
    """Every parameter's gradient (tied head, both layer norms, attention, MLP) against
    central differences, without PyTorch."""
    model = make_model(n_layer=1, n_embd=4, block_size=4, vocab_size=5)
    idx = mg.tensor([[1, 4, 0, 2], [3, 3, 1, 0]])
    gradcheck_module(model, idx, targets=mg.tensor([[4, 0, 2, 1], [3, 1, 0, 2]]),
                     output=lambda out: out[1])


def test_dropout_sits_where_nanogpt_puts_it():
    """Under one seed, a training-mode forward equals the model written out by hand with
    F.dropout after the embeddings, on the attention weights, after each sublayer's output
    projection (before the residual add) — and differs from the model without dropout."""
    model = make_model(dropout=0.3, bias=False)
    model.train()
    rng = np.random.default_rng(8)
    with mg.no_grad():          # distinct layer-norm gains, so swapping two norms shows
        for name, p in model.named_parameters():
            if name.endswith(("ln_1.weight", "ln_2.weight", "ln_f.weight")):
                p.data[...] = rng.uniform(0.5, 1.5, p.shape)
    idx = mg.tensor(rng.integers(0, 11, (2, 8)))
    t, (B, T), C, H, p = model.transformer, idx.shape, 16, 2, 0.3

    def by_hand():
        x = F.dropout(t.wte(idx) + t.wpe(mg.arange(T)), p)
        for block in t.h:
            q, k, v = block.attn.c_attn(block.ln_1(x)).split(C, dim=2)
            q, k, v = (u.reshape(B, T, H, C // H).transpose(1, 2) for u in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, dropout_p=p, is_causal=True)
            x = x + F.dropout(block.attn.c_proj(y.transpose(1, 2).reshape(B, T, C)), p)
            h = F.gelu(block.mlp.c_fc(block.ln_2(x)), approximate="tanh")
            x = x + F.dropout(block.mlp.c_proj(h), p)
        return model.lm_head(t.ln_f(x))
    mg.manual_seed(3)
    ours = model(idx)[0].numpy()
    mg.manual_seed(3)
    np.testing.assert_allclose(ours, by_hand().numpy(), rtol=1e-6, atol=1e-6)
    model.eval()
    assert not np.allclose(ours, model(idx)[0].numpy(), atol=1e-3)


def test_cache_fed_in_chunks_equals_full_forward():
    """Several new positions after cached ones: each chunk's queries see the cache and
    their own earlier positions, at their true positions."""
    model = make_model()
    model.eval()
    idx = mg.tensor(np.random.default_rng(2).integers(0, 11, (2, 8)))
    full = model.lm_head(model.hidden_states(idx)).numpy()
    cache = KVCache(model.config, 2)
    with mg.no_grad():
        parts = [model.lm_head(model.hidden_states(idx[:, a:b], cache)).numpy()
                 for a, b in ((0, 3), (3, 5), (5, 8))]
    np.testing.assert_allclose(np.concatenate(parts, axis=1), full, rtol=1e-5, atol=1e-5)


def test_sampling_follows_softmax_of_logits_over_temperature():
    """The sampler's frequencies over many rows against softmax(z / T); top_k keeps exactly
    the k most likely ids."""
    z = np.array([0.0, 1.0, 2.0, 0.5, -1.0])
    logits = mg.tensor(np.tile(z, (40000, 1)))
    for temperature in (0.5, 1.0, 2.0):
        mg.manual_seed(0)
        ids = sample_next(logits, temperature=temperature)[:, 0]
        want = np.exp(z / temperature) / np.exp(z / temperature).sum()
        np.testing.assert_allclose(np.bincount(ids, minlength=5) / len(ids), want, atol=0.01)
    for k, allowed in ((1, {2}), (2, {1, 2}), (3, {1, 2, 3})):
        mg.manual_seed(0)
        assert set(sample_next(logits, top_k=k)[:, 0].tolist()) == allowed


def test_num_parameters_leaves_out_the_position_table_only():
    model = make_model()                     # vocab 11, block 8, 2 layers, 16 dims, bias
    C, V, T = 16, 11, 8
    block = 2 * C + (3 * C * C + 3 * C) + (C * C + C) + 2 * C + (4 * C * C + 4 * C) + \
        (4 * C * C + C)                      # ln_1, c_attn, c_proj, ln_2, c_fc, mlp c_proj
    total = V * C + T * C + 2 * block + 2 * C  # wte (= lm_head), wpe, blocks, ln_f
    assert model.num_parameters(non_embedding=False) == total
    assert model.num_parameters() == total - T * C


def test_generation_past_block_size_reads_the_last_block_tokens():
    model = make_model()
    prompt = np.random.default_rng(5).integers(0, 11, (2, 12))      # longer than block 8
    for use_cache in (True, False):
        out = model.generate(mg.tensor(prompt), 2, top_k=1, use_cache=use_cache).numpy()
        for step in range(2):
            context = out[:, :12 + step][:, -8:]
            logits, _ = model(mg.tensor(context))
            np.testing.assert_array_equal(out[:, 12 + step], logits.numpy()[:, -1].argmax(-1))


def test_gradient_checkpointing_gives_the_same_loss_and_gradients():
    """model.gradient_checkpointing recomputes each block in backward (minigrad.utils.
    checkpoint): with dropout on, the same seed gives the same loss and gradients."""
    x = mg.tensor(np.random.default_rng(0).integers(0, 11, (3, 8)))
    y = mg.tensor(np.random.default_rng(1).integers(0, 11, (3, 8)))
    results = []
    for on in (False, True):
        model = make_model(dropout=0.2)
        model.gradient_checkpointing = on
        mg.manual_seed(5)
        _, loss = model(x, y)
        loss.backward()
        results.append([loss.item()] + [p.grad.numpy() for p in model.parameters()])
    np.testing.assert_allclose(results[1][0], results[0][0], rtol=1e-6)
    for a, b in zip(results[1][1:], results[0][1:]):
        np.testing.assert_allclose(a, b, rtol=1e-5, atol=1e-7)
    with mg.no_grad():                 # evaluation and generation take the plain path
        assert model.generate(x[:, :2], 3).shape == (3, 5)
