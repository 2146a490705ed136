"""makemore part 4, "becoming a backprop ninja" (Karpathy), ported: a char-level MLP with a
hand-written batch norm and cross-entropy, every intermediate's gradient derived by hand
and `cmp`-checked against autograd's, then trained on the hand-written backward and
sampled. For test_ported_scripts_three.py: returns (initial weights, losses, checks)."""
import random

from port_helpers import _drawn

# ---- (a) makemore part 4: becoming a backprop ninja -------------------------------------
WORDS = ["emma", "olivia", "ava", "isabella", "sophia", "mia", "amelia", "harper", "evelyn",
         "abigail", "emily", "ella", "elizabeth", "camila", "luna", "sofia", "avery", "mila",
         "aria", "scarlett", "penelope", "layla", "chloe", "victoria", "madison", "eleanor"]


def makemore(torch, nn, F, data_mod, init=None):
    words = list(WORDS)
    chars = sorted(list(set("".join(words))))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    itos = {i: s for s, i in stoi.items()}
    vocab_size = len(itos)
    block_size = 3

    def build_dataset(words):
        X, Y = [], []
        for w in words:
            context = [0] * block_size
            for ch in w + ".":
                ix = stoi[ch]
                X.append(context)
                Y.append(ix)
                context = context[1:] + [ix]
        return torch.tensor(X), torch.tensor(Y)
    random.Random(42).shuffle(words)                    # (the original seeds `random` itself)
    n1 = int(0.8 * len(words))
    Xtr, Ytr = build_dataset(words[:n1])
    Xdev, Ydev = build_dataset(words[n1:])
    checks = []

    def cmp(s, dt, t):
        ex = torch.all(dt == t.grad).item()
        app = torch.allclose(dt, t.grad)
        maxdiff = (dt - t.grad).abs().max().item()
        checks.append((s, ex, app, maxdiff))
    n_embd, n_hidden = 10, 64
    g = torch.Generator().manual_seed(2147483647)
    C = torch.randn((vocab_size, n_embd), generator=g)
    W1 = torch.randn((n_embd * block_size, n_hidden), generator=g) * (5 / 3) / \
        ((n_embd * block_size) ** 0.5)
    b1 = torch.randn(n_hidden, generator=g) * 0.1
    W2 = torch.randn((n_hidden, vocab_size), generator=g) * 0.1
    b2 = torch.randn(vocab_size, generator=g) * 0.1
    bngain = torch.randn((1, n_hidden)) * 0.1 + 1.0
    bnbias = torch.randn((1, n_hidden)) * 0.1
    parameters = [C, W1, b1, W2, b2, bngain, bnbias]
    names = ["C", "W1", "b1", "W2", "b2", "bngain", "bnbias"]
    if init is not None:
        for p, name in zip(parameters, names):
            p.data = torch.tensor(init[name])
    state0 = {name: p.numpy().copy() for name, p in zip(names, parameters)}
    assert sum(p.nelement() for p in parameters) == (vocab_size * 11 + 30 * 64 + 64
                                                     + 64 * vocab_size + 128)
    for p in parameters:
        p.requires_grad = True
    batch_size = 32
    n = batch_size
    ix = _drawn(torch, init, state0, "ix",
                lambda: torch.randint(0, Xtr.shape[0], (batch_size,), generator=g))
    Xb, Yb = Xtr[ix], Ytr[ix]
    # the forward pass, "chunkated" into steps that can be backpropagated one at a time
    emb = C[Xb]
    embcat = emb.view(emb.shape[0], -1)
    hprebn = embcat @ W1 + b1
    bnmeani = 1 / n * hprebn.sum(0, keepdim=True)
    bndiff = hprebn - bnmeani
    bndiff2 = bndiff ** 2
    bnvar = 1 / (n - 1) * (bndiff2).sum(0, keepdim=True)       # Bessel's correction
    bnvar_inv = (bnvar + 1e-5) ** -0.5
    bnraw = bndiff * bnvar_inv
    hpreact = bngain * bnraw + bnbias
    h = torch.tanh(hpreact)
    logits = h @ W2 + b2
    logit_maxes = logits.max(1, keepdim=True).values
    norm_logits = logits - logit_maxes
    counts = norm_logits.exp()
    counts_sum = counts.sum(1, keepdims=True)
    counts_sum_inv = counts_sum ** -1
    probs = counts * counts_sum_inv
    logprobs = probs.log()
    loss = -logprobs[range(n), Yb].mean()
    for p in parameters:
        p.grad = None
    for t in [logprobs, probs, counts, counts_sum, counts_sum_inv, norm_logits, logit_maxes,
              logits, h, hpreact, bnraw, bnvar_inv, bnvar, bndiff2, bndiff, hprebn, bnmeani,
              embcat, emb]:
        t.retain_grad()
    loss.backward()
    losses = [loss.item()]
    # exercise 1: backprop through the whole thing manually
    dlogprobs = torch.zeros_like(logprobs)
    dlogprobs[range(n), Yb] = -1.0 / n
    dprobs = (1.0 / probs) * dlogprobs
    dcounts_sum_inv = (counts * dprobs).sum(1, keepdim=True)
    dcounts = counts_sum_inv * dprobs
    dcounts_sum = (-counts_sum ** -2) * dcounts_sum_inv
    dcounts += torch.ones_like(counts) * dcounts_sum
    dnorm_logits = counts * dcounts
    dlogits = dnorm_logits.clone()
    dlogit_maxes = (-dnorm_logits).sum(1, keepdim=True)
    dlogits += F.one_hot(logits.max(1).indices, num_classes=logits.shape[1]) * dlogit_maxes
    dh = dlogits @ W2.T
    dW2 = h.T @ dlogits
    db2 = dlogits.sum(0)
    dhpreact = (1.0 - h ** 2) * dh
    dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
    dbnraw = bngain * dhpreact
    dbnbias = dhpreact.sum(0, keepdim=True)
    dbndiff = bnvar_inv * dbnraw
    dbnvar_inv = (bndiff * dbnraw).sum(0, keepdim=True)
    dbnvar = (-0.5 * (bnvar + 1e-5) ** -1.5) * dbnvar_inv
    dbndiff2 = (1.0 / (n - 1)) * torch.ones_like(bndiff2) * dbnvar
    dbndiff += (2 * bndiff) * dbndiff2
    dhprebn = dbndiff.clone()
    dbnmeani = (-dbndiff).sum(0)
    dhprebn += 1.0 / n * (torch.ones_like(hprebn) * dbnmeani)
    dembcat = dhprebn @ W1.T
    dW1 = embcat.T @ dhprebn
    db1 = dhprebn.sum(0)
    demb = dembcat.view(emb.shape)
    dC = torch.zeros_like(C)
    for k in range(Xb.shape[0]):
        for j in range(Xb.shape[1]):
            ix = Xb[k, j]
            dC[ix] += demb[k, j]
    for name, dt, t in [("logprobs", dlogprobs, logprobs), ("probs", dprobs, probs),
                        ("counts_sum_inv", dcounts_sum_inv, counts_sum_inv),
                        ("counts_sum", dcounts_sum, counts_sum), ("counts", dcounts, counts),
                        ("norm_logits", dnorm_logits, norm_logits),
                        ("logit_maxes", dlogit_maxes, logit_maxes), ("logits", dlogits, logits),
                        ("h", dh, h), ("W2", dW2, W2), ("b2", db2, b2),
                        ("hpreact", dhpreact, hpreact), ("bngain", dbngain, bngain),
                        ("bnbias", dbnbias, bnbias), ("bnraw", dbnraw, bnraw),
                        ("bnvar_inv", dbnvar_inv, bnvar_inv), ("bnvar", dbnvar, bnvar),
                        ("bndiff2", dbndiff2, bndiff2), ("bndiff", dbndiff, bndiff),
                        ("bnmeani", dbnmeani, bnmeani), ("hprebn", dhprebn, hprebn),
                        ("embcat", dembcat, embcat), ("W1", dW1, W1), ("b1", db1, b1),
                        ("emb", demb, emb), ("C", dC, C)]:
        cmp(name, dt, t)
    # exercise 2: cross entropy's backward in one go
    loss_fast = F.cross_entropy(logits, Yb)
    assert abs(loss_fast.item() - loss.item()) < 1e-5
    dlogits = F.softmax(logits, 1)
    dlogits[range(n), Yb] -= 1
    dlogits /= n
    cmp("logits", dlogits, logits)
    # exercise 3: batch norm's backward in one go
    hpreact_fast = bngain * (hprebn - hprebn.mean(0, keepdim=True)) / \
        torch.sqrt(hprebn.var(0, keepdim=True, unbiased=True) + 1e-5) + bnbias
    assert (hpreact_fast - hpreact).abs().max().item() < 1e-5
    dhprebn = bngain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(0) - n / (n - 1) * bnraw
                                        * (dhpreact * bnraw).sum(0))
    cmp("hprebn", dhprebn, hprebn)
    # exercise 4: train with the manual backward, no loss.backward()
    with torch.no_grad():
        for i in range(10):
            ix = _drawn(torch, init, state0, f"ix{i}",
                        lambda: torch.randint(0, Xtr.shape[0], (batch_size,), generator=g))
            Xb, Yb = Xtr[ix], Ytr[ix]
            emb = C[Xb]
            embcat = emb.view(emb.shape[0], -1)
            hprebn = embcat @ W1 + b1
            bnmean = hprebn.mean(0, keepdim=True)
            bnvar = hprebn.var(0, keepdim=True, unbiased=True)
            bnvar_inv = (bnvar + 1e-5) ** -0.5
            bnraw = (hprebn - bnmean) * bnvar_inv
            hpreact = bngain * bnraw + bnbias
            h = torch.tanh(hpreact)
            logits = h @ W2 + b2
            loss = F.cross_entropy(logits, Yb)
            dlogits = F.softmax(logits, 1)
            dlogits[range(n), Yb] -= 1
            dlogits /= n
            dh, dW2, db2 = dlogits @ W2.T, h.T @ dlogits, dlogits.sum(0)
            dhpreact = (1.0 - h ** 2) * dh
            dbngain = (bnraw * dhpreact).sum(0, keepdim=True)
            dbnbias = dhpreact.sum(0, keepdim=True)
            dhprebn = bngain * bnvar_inv / n * (n * dhpreact - dhpreact.sum(0) - n / (n - 1)
                                                * bnraw * (dhpreact * bnraw).sum(0))
            dembcat, dW1, db1 = dhprebn @ W1.T, embcat.T @ dhprebn, dhprebn.sum(0)
            demb = dembcat.view(emb.shape)
            dC = torch.zeros_like(C)
            dC.index_add_(0, Xb.view(-1), demb.view(-1, n_embd))
            grads = [dC, dW1, db1, dW2, db2, dbngain, dbnbias]
            lr = 0.1 if i < 8 else 0.01                # step learning rate decay
            for p, grad in zip(parameters, grads):
                p.data += -lr * grad
            losses.append(loss.item())
    with torch.no_grad():                  # calibrate the batch norm at the end of training
        emb = C[Xtr]
        embcat = emb.view(emb.shape[0], -1)
        hpreact = embcat @ W1 + b1
        bnmean = hpreact.mean(0, keepdim=True)
        bnvar = hpreact.var(0, keepdim=True, unbiased=True)

    @torch.no_grad()
    def split_loss(split):
        x, y = {"train": (Xtr, Ytr), "val": (Xdev, Ydev)}[split]
        emb = C[x]
        embcat = emb.view(emb.shape[0], -1)
        hpreact = embcat @ W1 + b1
        hpreact = bngain * (hpreact - bnmean) * (bnvar + 1e-5) ** -0.5 + bnbias
        logits = torch.tanh(hpreact) @ W2 + b2
        return F.cross_entropy(logits, y).item()
    losses += [split_loss("train"), split_loss("val")]
    g = torch.Generator().manual_seed(2147483647 + 10)
    for _ in range(3):                     # sample from the model
        out, context = [], [0] * block_size
        while len(out) < 20:
            emb = C[torch.tensor([context])]
            embcat = emb.view(emb.shape[0], -1)
            hpreact = bngain * (embcat @ W1 + b1 - bnmean) * (bnvar + 1e-5) ** -0.5 + bnbias
            probs = F.softmax(torch.tanh(hpreact) @ W2 + b2, dim=1)
            ix = torch.multinomial(probs, num_samples=1, replacement=True, generator=g).item()
            context = context[1:] + [ix]
            out.append(ix)
            if ix == 0:
                break
        assert all(c in itos for c in out) and isinstance(ix, int)
    return state0, losses, checks
