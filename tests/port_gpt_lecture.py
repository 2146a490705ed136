"""Karpathy's "Let's build GPT: from scratch" lecture, ported: the bigram model, the
self-attention "mathematical trick" cells, then gpt.py (heads, multi-head attention,
feed-forward, blocks, estimate_loss, generate). For test_ported_scripts_six.py: returns
(initial weights, losses)."""
from port_helpers import _Draws, _drawn, _load, _state, _weights

TEXT = ("First Citizen:\nBefore we proceed any further, hear me speak.\n\nAll:\nSpeak, speak.\n\n"
        "First Citizen:\nYou are all resolved rather to die than to famish?\n\nAll:\n"
        "Resolved. resolved.\n\nFirst Citizen:\nFirst, you know Caius Marcius is chief enemy "
        "to the people.\n\nAll:\nWe know't, we know't.\n")


def trick(torch, nn, F, data_mod, init=None):
    """The cells before gpt.py: a weighted aggregation of the past three ways, equal."""
    torch.manual_seed(1337)
    B, T, C = 4, 8, 2
    state0 = {}
    x = _drawn(torch, init, state0, "x", lambda: torch.randn(B, T, C))
    xbow = torch.zeros((B, T, C))                  # version 1: loops
    for b in range(B):
        for t in range(T):
            xprev = x[b, :t + 1]                   # (t, C)
            xbow[b, t] = torch.mean(xprev, 0)
    wei = torch.tril(torch.ones(T, T))             # version 2: matrix multiply
    wei = wei / wei.sum(1, keepdim=True)
    xbow2 = wei @ x                                # (B, T, T) @ (B, T, C) -> (B, T, C)
    tril = torch.tril(torch.ones(T, T))            # version 3: softmax
    wei = torch.zeros((T, T))
    wei = wei.masked_fill(tril == 0, float('-inf'))
    wei = F.softmax(wei, dim=-1)
    xbow3 = wei @ x
    a = torch.tril(torch.ones(3, 3))               # the toy example
    a = a / torch.sum(a, 1, keepdim=True)
    b = _drawn(torch, init, state0, "b", lambda: torch.randint(0, 10, (3, 2)).float())
    c = a @ b
    # version 4: self-attention, one head
    head_size = 16
    key, query, value = (nn.Linear(C, head_size, bias=False) for _ in range(3))
    k, q = key(x), query(x)
    wei = q @ k.transpose(-2, -1) * head_size ** -0.5
    wei = wei.masked_fill(tril == 0, float('-inf'))
    wei = F.softmax(wei, dim=-1)
    out = wei @ value(x)
    return state0, [float(torch.allclose(xbow, xbow2)), float(torch.allclose(xbow, xbow3)),
                  float(torch.allclose(xbow2, xbow3)), float(torch.allclose(c[0], b[0])),
                  float(tuple(out.shape) == (B, T, head_size)), wei[0, 0, 0].item(), wei.sum(-1).mean().item(),
                  float((wei[0].triu(1) == 0).all())]


def gpt(torch, nn, F, data_mod, init=None, max_iters=12, dropout=0.2):
    batch_size, block_size, eval_interval, eval_iters = 4, 8, 4, 3
    learning_rate, n_embd, n_head, n_layer = 1e-3, 16, 4, 2
    torch.manual_seed(1337)
    text = TEXT
    chars = sorted(list(set(text)))
    vocab_size = len(chars)
    stoi = {ch: i for i, ch in enumerate(chars)}
    itos = {i: ch for i, ch in enumerate(chars)}
    encode = lambda s: [stoi[c] for c in s]           # noqa: E731  (as the lecture)
    decode = lambda l: ''.join([itos[i] for i in l])  # noqa: E731,E741
    data = torch.tensor(encode(text), dtype=torch.long)
    n = int(0.9 * len(data))
    train_data, val_data = data[:n], data[n:]
    assert decode(encode("hii there")) == "hii there"
    state0 = {}
    draw = _Draws(torch, init, state0, "ix")

    def get_batch(split):
        data = train_data if split == 'train' else val_data
        ix = draw(lambda: torch.randint(len(data) - block_size, (batch_size,)))
        x = torch.stack([data[i:i + block_size] for i in ix])
        y = torch.stack([data[i + 1:i + block_size + 1] for i in ix])
        return x, y

    @torch.no_grad()
    def estimate_loss(model):
        out = {}
        model.eval()
        for split in ['train', 'val']:
            losses = torch.zeros(eval_iters)
            for k in range(eval_iters):
                X, Y = get_batch(split)
                logits, loss = model(X, Y)
                losses[k] = loss.item()
            out[split] = losses.mean()
        model.train()
        return out

    class BigramLanguageModel(nn.Module):
        def __init__(self, vocab_size):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, vocab_size)

        def forward(self, idx, targets=None):
            logits = self.token_embedding_table(idx)   # (B, T, C)
            if targets is None:
                return logits, None
            B, T, C = logits.shape
            logits = logits.view(B * T, C)
            targets = targets.view(B * T)
            return logits, F.cross_entropy(logits, targets)

        def generate(self, idx, max_new_tokens):
            for _ in range(max_new_tokens):
                logits, loss = self(idx)
                logits = logits[:, -1, :]
                probs = F.softmax(logits, dim=-1)
                idx_next = draw(lambda: torch.multinomial(probs, num_samples=1))
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    class Head(nn.Module):
        """ one head of self-attention """

        def __init__(self, head_size):
            super().__init__()
            self.key = nn.Linear(n_embd, head_size, bias=False)
            self.query = nn.Linear(n_embd, head_size, bias=False)
            self.value = nn.Linear(n_embd, head_size, bias=False)
            self.register_buffer('tril', torch.tril(torch.ones(block_size, block_size)))
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            B, T, C = x.shape
            k = self.key(x)
            q = self.query(x)
            wei = q @ k.transpose(-2, -1) * k.shape[-1]**-0.5
            wei = wei.masked_fill(self.tril[:T, :T] == 0, float('-inf'))
            wei = F.softmax(wei, dim=-1)
            wei = self.dropout(wei)
            v = self.value(x)
            return wei @ v

    class MultiHeadAttention(nn.Module):
        def __init__(self, num_heads, head_size):
            super().__init__()
            self.heads = nn.ModuleList([Head(head_size) for _ in range(num_heads)])
            self.proj = nn.Linear(head_size * num_heads, n_embd)
            self.dropout = nn.Dropout(dropout)

        def forward(self, x):
            out = torch.cat([h(x) for h in self.heads], dim=-1)
            return self.dropout(self.proj(out))

    class FeedFoward(nn.Module):                       # (sic, as gpt.py spells it)
        def __init__(self, n_embd):
            super().__init__()
            self.net = nn.Sequential(nn.Linear(n_embd, 4 * n_embd), nn.ReLU(),
                                     nn.Linear(4 * n_embd, n_embd), nn.Dropout(dropout))

        def forward(self, x):
            return self.net(x)

    class Block(nn.Module):
        def __init__(self, n_embd, n_head):
            super().__init__()
            head_size = n_embd // n_head
            self.sa = MultiHeadAttention(n_head, head_size)
            self.ffwd = FeedFoward(n_embd)
            self.ln1 = nn.LayerNorm(n_embd)
            self.ln2 = nn.LayerNorm(n_embd)

        def forward(self, x):
            x = x + self.sa(self.ln1(x))
            x = x + self.ffwd(self.ln2(x))
            return x

    class GPTLanguageModel(nn.Module):
        def __init__(self):
            super().__init__()
            self.token_embedding_table = nn.Embedding(vocab_size, n_embd)
            self.position_embedding_table = nn.Embedding(block_size, n_embd)
            self.blocks = nn.Sequential(*[Block(n_embd, n_head=n_head) for _ in range(n_layer)])
            self.ln_f = nn.LayerNorm(n_embd)
            self.lm_head = nn.Linear(n_embd, vocab_size)
            self.apply(self._init_weights)

        def _init_weights(self, module):
            if isinstance(module, nn.Linear):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)
                if module.bias is not None:
                    torch.nn.init.zeros_(module.bias)
            elif isinstance(module, nn.Embedding):
                torch.nn.init.normal_(module.weight, mean=0.0, std=0.02)

        def forward(self, idx, targets=None):
            B, T = idx.shape
            tok_emb = self.token_embedding_table(idx)
            pos_emb = self.position_embedding_table(torch.arange(T, device=idx.device))
            x = tok_emb + pos_emb
            x = self.blocks(x)
            x = self.ln_f(x)
            logits = self.lm_head(x)
            if targets is None:
                loss = None
            else:
                B, T, C = logits.shape
                logits = logits.view(B * T, C)
                targets = targets.view(B * T)
                loss = F.cross_entropy(logits, targets)
            return logits, loss

        def generate(self, idx, max_new_tokens):
            for _ in range(max_new_tokens):
                idx_cond = idx[:, -block_size:]
                logits, loss = self(idx_cond)
                logits = logits[:, -1, :]
                probs = F.softmax(logits, dim=-1)
                idx_next = draw(lambda: torch.multinomial(probs, num_samples=1))
                idx = torch.cat((idx, idx_next), dim=1)
            return idx

    losses = []
    for name, model in [("bigram", BigramLanguageModel(vocab_size)),
                        ("gpt", GPTLanguageModel())]:
        _load(torch, model, _weights(init), name + ".")
        state0.update(_state(model, name + "."))
        m = model
        if name == "gpt":
            losses.append(sum(p.numel() for p in m.parameters()) / 1e6)
        optimizer = torch.optim.AdamW(model.parameters(), lr=learning_rate)
        for iter in range(max_iters):
            if iter % eval_interval == 0 or iter == max_iters - 1:
                ls = estimate_loss(model)
                losses += [ls['train'].item(), ls['val'].item()]
            xb, yb = get_batch('train')
            logits, loss = model(xb, yb)
            optimizer.zero_grad(set_to_none=True)
            loss.backward()
            optimizer.step()
            losses.append(loss.item())
        context = torch.zeros((1, 1), dtype=torch.long)
        out = m.generate(context, max_new_tokens=12)
        text_out = decode(out[0].tolist())
        assert len(text_out) == 13 and text_out[0] == chars[0]
        losses += [float(i) for i in out[0].tolist()]
    return state0, losses
