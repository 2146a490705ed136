"""Ported scripts: small PyTorch programs in the style of well-known tutorials (nanoGPT, the
60-minute blitz CNN, the VAE example; an LSTM/GRU tagger, a seq2seq nn.Transformer and
DCGAN are in test_ported_scripts_more.py), run as a user ports them: `import minigrad as
torch` (here the library comes in as the argument `torch`). Each runs a few steps on
small random data; under PyTorch too, from minigrad's initial weights, the losses agree
step by step.

Where a line differs from the tutorial, a comment says why (minigrad deliberately differs:
`torch.save` writes .safetensors, bfloat16 only a name)."""
import inspect
import math
import os
import time
from contextlib import nullcontext
from dataclasses import dataclass

import numpy as np
import pytest

import minigrad
from port_helpers import _compare, _host, _libs, _load, _state


# ---- (a) nanoGPT: model.py and train.py -------------------------------------------------
def _gpt_classes(torch, nn, F):
    class CausalSelfAttention(nn.Module):
        def __init__(self, config):
            super().__init__()
            assert config.n_embd % config.n_head == 0
            self.c_attn = nn.Linear(config.n_embd, 3 * config.n_embd, bias=config.bias)
            self.c_proj = nn.Linear(config.n_embd, config.n_embd, bias=config.bias)
            self.attn_dropout = nn.Dropout(config.dropout)
            self.resid_dropout = nn.Dropout(config.dropout)
            self.n_head, self.n_embd, self.dropout = config.n_head, config.n_embd, config.dropout
            self.flash = hasattr(torch.nn.functional, "scaled_dot_product_attention") and \
                config.flash
            if not self.flash:
                self.register_buffer("bias", torch.tril(torch.ones(config.block_size,
                                     config.block_size)).view(1, 1, config.block_size,
                                                              config.block_size))

        def forward(self, x):
            B, T, C = x.size()
            q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
            k = k.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            q = q.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            v = v.view(B, T, self.n_head, C // self.n_head).transpose(1, 2)
            if self.flash:
                y = torch.nn.functional.scaled_dot_product_attention(
                    q, k, v, attn_mask=None, dropout_p=self.dropout if self.training else 0,
                    is_causal=True)
            else:
                att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
                att = att.masked_fill(self.bias[:, :, :T, :T] == 0, float("-inf"))
                att = self.attn_dropout(F.softmax(att, dim=-1))
                y = att @ v
            y = y.transpose(1, 2).contiguous().view(B, T, C)
            return self.resid_dropout(self.c_proj(y))

    class Block(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.ln_1 = nn.LayerNorm(config.n_embd, bias=config.bias)
            self.attn = CausalSelfAttention(config)
            self.ln_2 = nn.LayerNorm(config.n_embd, bias=config.bias)
            self.mlp = nn.Sequential(nn.Linear(config.n_embd, 4 * config.n_embd, bias=config.bias),
                                     nn.GELU(),
                                     nn.Linear(4 * config.n_embd, config.n_embd, bias=config.bias),
                                     nn.Dropout(config.dropout))

        def forward(self, x):
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    @dataclass
    class GPTConfig:
        block_size: int = 1024
        vocab_size: int = 50304
        n_layer: int = 12
        n_head: int = 12
        n_embd: int = 768
        dropout: float = 0.0
        bias: bool = True
        flash: bool = True

    class GPT(nn.Module):
        def __init__(self, config):
            super().__init__()
            self.config = config
            self.transformer = nn.ModuleDict(dict(
                wte=nn.Embedding(config.vocab_size, config.n_embd),
                wpe=nn.Embedding(config.block_size, config.n_embd),
                drop=nn.Dropout(config.dropout),
                h=nn.ModuleList([Block(config) for _ in range(config.n_layer)]),
                ln_f=nn.LayerNorm(config.n_embd, bias=config.bias)))
            self.lm_head = nn.Linear(config.n_embd, config.vocab_size, bias=False)
            self.transformer.wte.weight = self.lm_head.weight      # weight tying
            self.apply(self._init_weights)
            for pn, p in self.named_parameters():
                if pn.endswith("c_proj.weight"):
                    torch.nn.init.normal_(p, mean=0.0, std=0.02 / math.sqrt(2 * config.n_layer))

        def get_num_params(self, non_embedding=True):
            n_params = sum(p.numel() for p in self.parameters())
            return n_params - (self.transformer.wpe.weight.numel() if non_embedding else 0)

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            b, t = idx.size()
            pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
            x = self.transformer.drop(self.transformer.wte(idx) + self.transformer.wpe(pos))
            for block in self.transformer.h:
                x = block(x)
            x = self.transformer.ln_f(x)
            if targets is not None:
                logits = self.lm_head(x)
                return logits, F.cross_entropy(logits.view(-1, logits.size(-1)),
                                               targets.view(-1), ignore_index=-1)
            return self.lm_head(x[:, [-1], :]), None

        def crop_block_size(self, block_size):
            self.config.block_size = block_size
            self.transformer.wpe.weight = nn.Parameter(self.transformer.wpe.weight[:block_size])
            for block in self.transformer.h:
                if hasattr(block.attn, "bias"):
                    block.attn.bias = block.attn.bias[:, :, :block_size, :block_size]

        def configure_optimizers(self, weight_decay, learning_rate, betas, device_type):
            param_dict = {pn: p for pn, p in self.named_parameters() if p.requires_grad}
            decay_params = [p for n, p in param_dict.items() if p.dim() >= 2]
            nodecay_params = [p for n, p in param_dict.items() if p.dim() < 2]
            optim_groups = [{"params": decay_params, "weight_decay": weight_decay},
                            {"params": nodecay_params, "weight_decay": 0.0}]
            fused_available = "fused" in inspect.signature(torch.optim.AdamW).parameters
            use_fused = fused_available and device_type == "cuda"
            extra_args = dict(fused=True) if use_fused else dict()
            return torch.optim.AdamW(optim_groups, lr=learning_rate, betas=betas, **extra_args)

        def estimate_mfu(self, fwdbwd_per_iter, dt):
            N, cfg = self.get_num_params(), self.config
            L, H, Q, T = cfg.n_layer, cfg.n_head, cfg.n_embd // cfg.n_head, cfg.block_size
            flops_per_iter = (6 * N + 12 * L * H * Q * T) * T * fwdbwd_per_iter
            return flops_per_iter * (1.0 / dt) / 312e12

        @torch.no_grad()
        def generate(self, idx, max_new_tokens, temperature=1.0, top_k=None):
            for _ in range(max_new_tokens):
                bs = self.config.block_size
                idx_cond = idx if idx.size(1) <= bs else idx[:, -bs:]
                logits, _ = self(idx_cond)
                logits = logits[:, -1, :] / temperature
                if top_k is not None:
                    v, _ = torch.topk(logits, min(top_k, logits.size(-1)))
                    logits[logits < v[:, [-1]]] = -float("Inf")
                probs = F.softmax(logits, dim=-1)
                idx = torch.cat((idx, torch.multinomial(probs, num_samples=1)), dim=1)
            return idx
    return GPTConfig, GPT


def nanogpt(torch, nn, F, data_mod, init=None, flash=True, dtype="float32", ckpt_dir=None):
    GPTConfig, GPT = _gpt_classes(torch, nn, F)
    torch.manual_seed(1337)
    data = np.random.default_rng(0).integers(0, 32, size=2000)
    block_size, batch_size, device, device_type = 16, 4, "cpu", "cpu"

    def get_batch(split, i):
        ix = np.random.default_rng(i).integers(0, len(data) - block_size, size=batch_size)
        x = torch.stack([torch.from_numpy(data[j:j + block_size]) for j in ix])
        y = torch.stack([torch.from_numpy(data[j + 1:j + 1 + block_size]) for j in ix])
        return x, y
    ptdtype = {"float32": torch.float32, "bfloat16": torch.bfloat16,
               "float16": torch.float16}[dtype]
    ctx = nullcontext() if dtype == "float32" else \
        torch.amp.autocast(device_type=device_type, dtype=ptdtype)
    model_args = dict(n_layer=2, n_head=2, n_embd=32, block_size=block_size, bias=False,
                      vocab_size=32, dropout=0.0, flash=flash)
    model = GPT(GPTConfig(**model_args))
    _load(torch, model, init)
    model.to(device)
    state0 = _state(model)
    scaler = torch.amp.GradScaler(device_type, enabled=(dtype == "float16"))
    optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), device_type)
    warmup_iters, lr_decay_iters, learning_rate, min_lr = 2, 10, 1e-3, 1e-4

    def get_lr(it):
        if it < warmup_iters:
            return learning_rate * (it + 1) / (warmup_iters + 1)
        if it > lr_decay_iters:
            return min_lr
        decay_ratio = (it - warmup_iters) / (lr_decay_iters - warmup_iters)
        return min_lr + 0.5 * (1.0 + math.cos(math.pi * decay_ratio)) * (learning_rate - min_lr)

    @torch.no_grad()
    def estimate_loss():
        out = {}
        model.eval()
        for split in ["train", "val"]:
            losses = torch.zeros(2)
            for k in range(2):
                X, Y = get_batch(split, 100 + k)
                with ctx:
                    logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out
    iter_num, best_val_loss, accum, losses = 0, 1e9, 2, []
    X, Y = get_batch("train", 0)
    t0 = time.time()
    while iter_num < 4:
        for param_group in optimizer.param_groups:
            param_group["lr"] = get_lr(iter_num)
        if iter_num % 2 == 0:
            val = estimate_loss()["val"]
            if val < best_val_loss and ckpt_dir:
                best_val_loss = val
                checkpoint = {"model": model.state_dict(), "optimizer": optimizer.state_dict(),
                              "model_args": model_args, "iter_num": iter_num,
                              "best_val_loss": best_val_loss}
                torch.save(checkpoint, os.path.join(ckpt_dir, "ckpt.pt"))
        for micro_step in range(accum):
            with ctx:
                logits, loss = model(X, Y)
                loss = loss / accum
            X, Y = get_batch("train", iter_num * 10 + micro_step + 1)
            scaler.scale(loss).backward()
        scaler.unscale_(optimizer)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(optimizer)
        scaler.update()
        optimizer.zero_grad(set_to_none=True)
        t1 = time.time()
        dt, t0 = t1 - t0, t1
        losses.append(loss.item() * accum)
        assert model.estimate_mfu(batch_size * accum, dt + 1e-9) > 0
        iter_num += 1
    if ckpt_dir:                                          # resume, then sample
        checkpoint = torch.load(os.path.join(ckpt_dir, "ckpt.pt"), map_location="cpu")
        model = GPT(GPTConfig(**checkpoint["model_args"]))
        state_dict = checkpoint["model"]
        for k in list(state_dict):
            if k.startswith("_orig_mod."):
                state_dict[k[len("_orig_mod."):]] = state_dict.pop(k)
        model.load_state_dict(state_dict)
        optimizer = model.configure_optimizers(0.1, 1e-3, (0.9, 0.95), device_type)
        optimizer.load_state_dict(checkpoint["optimizer"])
        assert checkpoint["iter_num"] in (0, 2) and checkpoint["best_val_loss"] < 4
        model.crop_block_size(8)
        model.eval()
        out = model.generate(torch.zeros((1, 1), dtype=torch.long), 10, temperature=0.8, top_k=5)
        assert tuple(out.shape) == (1, 11) and 0 <= int(out.min()) and int(out.max()) < 32
    return state0, losses


def test_nanogpt_trains_resumes_and_samples(tmp_path):
    for flash in (True, False):         # SDPA, and the masked path with the "bias" buffer
        losses = nanogpt(*_libs(minigrad), flash=flash, ckpt_dir=str(tmp_path))[1]
        assert np.isfinite(losses).all() and losses[-1] < losses[0]


def test_nanogpt_under_float16_autocast_and_grad_scaler():
    losses = nanogpt(*_libs(minigrad), dtype="float16")[1]
    assert np.isfinite(losses).all() and losses[-1] < losses[0]


@pytest.mark.parametrize("flash", [True, False])
def test_nanogpt_matches_torch(torch, flash, tmp_path):
    _compare(torch, nanogpt, flash=flash, ckpt_dir=str(tmp_path))


# ---- (b) the 60-minute blitz CNN classifier ---------------------------------------------
def blitz_cnn(torch, nn, F, data_mod, init=None):
    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(3, 6, 5)
            self.pool = nn.MaxPool2d(2, 2)
            self.conv2 = nn.Conv2d(6, 16, 5)
            self.fc1 = nn.Linear(16 * 5 * 5, 120)
            self.fc2 = nn.Linear(120, 84)
            self.fc3 = nn.Linear(84, 10)

        def forward(self, x):
            x = self.pool(F.relu(self.conv1(x)))
            x = self.pool(F.relu(self.conv2(x)))
            # the tutorial's two spellings, old and new
            x = x.view(-1, 16 * 5 * 5) if self.training else torch.flatten(x, 1)
            return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))
    torch.manual_seed(0)
    net = Net()
    _load(torch, net, init)
    state0 = _state(net)
    rng = np.random.default_rng(0)
    trainset = data_mod.TensorDataset(torch.from_numpy(_host(rng, 16, 3, 32, 32)),
                                      torch.from_numpy(rng.integers(0, 10, 16)))
    trainloader = data_mod.DataLoader(trainset, batch_size=4, shuffle=False, num_workers=0)
    criterion = nn.CrossEntropyLoss()
    optimizer = torch.optim.SGD(net.parameters(), lr=0.001, momentum=0.9)
    losses = []
    for epoch in range(2):
        running_loss = 0.0
        for i, data in enumerate(trainloader, 0):
            inputs, labels = data
            optimizer.zero_grad()
            loss = criterion(net(inputs), labels)
            loss.backward()
            optimizer.step()
            running_loss += loss.item()
            losses.append(loss.item())
    net.eval()
    correct, total, per_class = 0, 0, {str(c): 0 for c in range(10)}
    with torch.no_grad():
        for images, labels in trainloader:
            outputs = net(images)
            _, predicted = torch.max(outputs.data, 1)
            total += labels.size(0)
            correct += (predicted == labels).sum().item()
            for label, prediction in zip(labels, predicted):
                per_class[str(int(label))] += int(label == prediction)
    assert total == 16 and sum(per_class.values()) == correct
    return state0, losses + [correct / total]


def test_blitz_cnn_trains():
    losses = blitz_cnn(*_libs(minigrad))[1]
    assert np.isfinite(losses).all() and 0 <= losses[-1] <= 1


def test_blitz_cnn_matches_torch(torch):
    _compare(torch, blitz_cnn)


# ---- (c) the VAE example ----------------------------------------------------------------
def vae(torch, nn, F, data_mod, init=None):
    class VAE(nn.Module):
        def __init__(self):
            super().__init__()
            self.fc1, self.fc21, self.fc22 = nn.Linear(64, 32), nn.Linear(32, 8), nn.Linear(32, 8)
            self.fc3, self.fc4 = nn.Linear(8, 32), nn.Linear(32, 64)

        def encode(self, x):
            h1 = F.relu(self.fc1(x))
            return self.fc21(h1), self.fc22(h1)

        def reparameterize(self, mu, logvar, eps=None):
            std = torch.exp(0.5 * logvar)
            eps = torch.randn_like(std) if eps is None else eps   # given: to compare
            return mu + eps * std

        def decode(self, z):
            return torch.sigmoid(self.fc4(F.relu(self.fc3(z))))

        def forward(self, x, eps=None):
            mu, logvar = self.encode(x.view(-1, 64))
            return self.decode(self.reparameterize(mu, logvar, eps)), mu, logvar

    def loss_function(recon_x, x, mu, logvar):
        BCE = F.binary_cross_entropy(recon_x, x.view(-1, 64), reduction="sum")
        KLD = -0.5 * torch.sum(1 + logvar - mu.pow(2) - logvar.exp())
        return BCE + KLD
    torch.manual_seed(1)
    model = VAE()
    _load(torch, model, init)
    state0 = _state(model)
    optimizer = torch.optim.Adam(model.parameters(), lr=1e-3)
    x = torch.from_numpy(np.random.default_rng(0).random((20, 1, 8, 8)).astype(np.float32))
    train_loader = data_mod.DataLoader(data_mod.TensorDataset(x, torch.zeros(20)), batch_size=10)
    losses = []
    model.train()
    for epoch in range(3):
        train_loss = 0
        for batch_idx, (data, _) in enumerate(train_loader):
            eps = torch.from_numpy(_host(np.random.default_rng(epoch * 10 + batch_idx), 10, 8))
            optimizer.zero_grad()
            recon_batch, mu, logvar = model(data, eps)
            loss = loss_function(recon_batch, data, mu, logvar)
            loss.backward()
            train_loss += loss.item()
            optimizer.step()
            losses.append(loss.item() / len(data))
    assert train_loss / len(train_loader.dataset) > 0
    model.eval()
    with torch.no_grad():
        recon, mu, logvar = model(x)                     # eps from randn_like
        assert math.isfinite(loss_function(recon, x, mu, logvar).item())
        sample = model.decode(torch.randn(4, 8)).cpu()
        comparison = torch.cat([x[:2], recon.view(20, 1, 8, 8)[:2], sample.view(4, 1, 8, 8)])
        assert tuple(comparison.shape) == (8, 1, 8, 8)
    return state0, losses


def test_vae_trains():
    losses = vae(*_libs(minigrad))[1]
    assert np.isfinite(losses).all() and losses[-1] < losses[0]


def test_vae_matches_torch(torch):
    _compare(torch, vae)
