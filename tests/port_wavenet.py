"""makemore part 5, "building a WaveNet" (Karpathy), ported: his hand-written Linear,
BatchNorm1d (over dims (0, 1) of a 3-D input, running buffers updated under no_grad), Tanh,
Embedding, FlattenConsecutive and Sequential, a hierarchical model of them trained on a few
names, `lossi` averaged in rows, the split losses in eval mode, and sampling. For
test_ported_scripts_four.py: returns (initial weights, losses)."""
import random

from port_helpers import _Draws
from port_makemore import WORDS


def wavenet(torch, nn, F, data_mod, init=None, max_steps=12):
    words = list(WORDS)
    chars = sorted(list(set("".join(words))))
    stoi = {s: i + 1 for i, s in enumerate(chars)}
    stoi["."] = 0
    itos = {i: s for s, i in stoi.items()}
    vocab_size = len(itos)
    block_size = 8                   # how many characters predict the next one

    def build_dataset(words):
        X, Y = [], []
        for w in words:
            context = [0] * block_size
            for ch in w + ".":
                ix = stoi[ch]
                X.append(context)
                Y.append(ix)
                context = context[1:] + [ix]          # crop and append
        X = torch.tensor(X)
        Y = torch.tensor(Y)
        return X, Y
    random.Random(42).shuffle(words)                  # (the original seeds `random` itself)
    n1 = int(0.8 * len(words))
    n2 = int(0.9 * len(words))
    Xtr, Ytr = build_dataset(words[:n1])              # 80%
    Xdev, Ydev = build_dataset(words[n1:n2])          # 10%
    Xte, Yte = build_dataset(words[n2:])              # 10%

    class Linear:
        def __init__(self, fan_in, fan_out, bias=True):
            self.weight = torch.randn((fan_in, fan_out)) / fan_in ** 0.5   # Kaiming-like
            self.bias = torch.zeros(fan_out) if bias else None

        def __call__(self, x):
            self.out = x @ self.weight
            if self.bias is not None:
                self.out += self.bias
            return self.out

        def parameters(self):
            return [self.weight] + ([] if self.bias is None else [self.bias])

    class BatchNorm1d:
        def __init__(self, dim, eps=1e-5, momentum=0.1):
            self.eps = eps
            self.momentum = momentum
            self.training = True
            # parameters (trained with backprop)
            self.gamma = torch.ones(dim)
            self.beta = torch.zeros(dim)
            # buffers (trained with a running 'momentum update')
            self.running_mean = torch.zeros(dim)
            self.running_var = torch.ones(dim)

        def __call__(self, x):
            if self.training:
                if x.ndim == 2:
                    dim = 0
                elif x.ndim == 3:
                    dim = (0, 1)
                xmean = x.mean(dim, keepdim=True)       # batch mean
                xvar = x.var(dim, keepdim=True)         # batch variance
            else:
                xmean = self.running_mean
                xvar = self.running_var
            xhat = (x - xmean) / torch.sqrt(xvar + self.eps)   # normalize to unit variance
            self.out = self.gamma * xhat + self.beta
            if self.training:
                with torch.no_grad():
                    self.running_mean = (1 - self.momentum) * self.running_mean + \
                        self.momentum * xmean
                    self.running_var = (1 - self.momentum) * self.running_var + \
                        self.momentum * xvar
            return self.out

        def parameters(self):
            return [self.gamma, self.beta]

    class Tanh:
        def __call__(self, x):
            self.out = torch.tanh(x)
            return self.out

        def parameters(self):
            return []

    class Embedding:
        def __init__(self, num_embeddings, embedding_dim):
            self.weight = torch.randn((num_embeddings, embedding_dim))

        def __call__(self, IX):
            self.out = self.weight[IX]
            return self.out

        def parameters(self):
            return [self.weight]

    class FlattenConsecutive:
        def __init__(self, n):
            self.n = n

        def __call__(self, x):
            B, T, C = x.shape
            x = x.view(B, T // self.n, C * self.n)
            if x.shape[1] == 1:
                x = x.squeeze(1)
            self.out = x
            return self.out

        def parameters(self):
            return []

    class Sequential:
        def __init__(self, layers):
            self.layers = layers

        def __call__(self, x):
            for layer in self.layers:
                x = layer(x)
            self.out = x
            return self.out

        def parameters(self):
            # the parameters of all layers, stretched out into one list
            return [p for layer in self.layers for p in layer.parameters()]
    torch.manual_seed(42)            # seed rng for reproducibility
    n_embd = 10                      # the dimensionality of the character embedding vectors
    n_hidden = 32                    # the number of neurons in the hidden layer of the MLP
    model = Sequential([
        Embedding(vocab_size, n_embd),
        FlattenConsecutive(2), Linear(n_embd * 2, n_hidden, bias=False), BatchNorm1d(n_hidden),
        Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False),
        BatchNorm1d(n_hidden), Tanh(),
        FlattenConsecutive(2), Linear(n_hidden * 2, n_hidden, bias=False),
        BatchNorm1d(n_hidden), Tanh(),
        Linear(n_hidden, vocab_size),
    ])
    with torch.no_grad():            # parameter init
        model.layers[-1].weight *= 0.1      # the last layer less confident
    parameters = model.parameters()
    if init is not None:
        for i, p in enumerate(parameters):
            p.data = torch.tensor(init[f"p{i}"])
    state0 = {f"p{i}": p.numpy().copy() for i, p in enumerate(parameters)}
    assert sum(p.nelement() for p in parameters) == vocab_size * 10 + 20 * 32 + 64 * 32 * 2 + \
        32 * 2 * 3 + 32 * vocab_size + vocab_size
    for p in parameters:
        p.requires_grad = True
    draw = _Draws(torch, init, state0, "ix")        # PyTorch's run takes minigrad's batches
    batch_size = 32
    lossi = []
    for i in range(max_steps):
        # minibatch construct
        ix = draw(lambda: torch.randint(0, Xtr.shape[0], (batch_size,)))
        Xb, Yb = Xtr[ix], Ytr[ix]    # batch X, Y
        # forward pass
        logits = model(Xb)
        loss = F.cross_entropy(logits, Yb)     # loss function
        # backward pass
        for p in parameters:
            p.grad = None
        loss.backward()
        # update: simple SGD
        lr = 0.1 if i < max_steps * 3 // 4 else 0.01    # step learning rate decay
        for p in parameters:
            p.data += -lr * p.grad
        if i % 4 == 0:               # track stats
            assert "/" in f"{i:7d}/{max_steps:7d}: {loss.item():.4f}"
        lossi.append(loss.log10().item())
    curve = torch.tensor(lossi).view(-1, 4).mean(1)      # (the lecture's rows of 1000)
    # the lecture's look at the shapes through the layers, on 4 examples
    ix = draw(lambda: torch.randint(0, Xtr.shape[0], (4,)))
    Xb, Yb = Xtr[ix], Ytr[ix]
    logits = model(Xb)
    shapes = [(layer.__class__.__name__, tuple(layer.out.shape)) for layer in model.layers]
    assert shapes[:3] == [("Embedding", (4, 8, n_embd)), ("FlattenConsecutive", (4, 4, 20)),
                          ("Linear", (4, 4, n_hidden))]
    assert shapes[-5][1] == (4, 64) and shapes[-1] == ("Linear", (4, vocab_size))
    e = torch.randn(4, 8, 10)        # goal: want this to be (4, 4, 20), consecutive pairs
    explicit = torch.cat([e[:, ::2, :], e[:, 1::2, :]], dim=2)
    assert tuple(explicit.shape) == (4, 4, 20) and (e.view(4, 4, 20) == explicit).all()
    assert tuple((torch.randn(4, 5, 80) @ torch.randn(80, 200) + torch.randn(200)).shape) == \
        (4, 5, 200)                  # a matmul over the last dim, the batch dims as they are
    e = torch.randn(32, 4, 68)       # the batch norm of 3-D input, over dims 0 and 1
    emean = e.mean((0, 1), keepdim=True)     # 1, 1, 68
    evar = e.var((0, 1), keepdim=True)       # 1, 1, 68
    ehat = (e - emean) / torch.sqrt(evar + 1e-5)
    assert tuple(ehat.shape) == (32, 4, 68) and tuple(emean.shape) == (1, 1, 68)
    assert tuple(model.layers[3].running_mean.shape) == (1, 1, n_hidden)
    for layer in model.layers:       # put layers into eval mode (needed for batchnorm)
        layer.training = False

    @torch.no_grad()                 # this decorator disables gradient tracking inside
    def split_loss(split):
        x, y = {"train": (Xtr, Ytr), "val": (Xdev, Ydev), "test": (Xte, Yte)}[split]
        logits = model(x)
        loss = F.cross_entropy(logits, y)
        return loss.item()
    losses = lossi + curve.tolist() + [split_loss("train"), split_loss("val")]
    for _ in range(3):               # sample from the model
        out = []
        context = [0] * block_size   # initialize with all ...
        while len(out) < 20:
            logits = model(torch.tensor([context]))      # forward pass the neural net
            probs = F.softmax(logits, dim=1)
            ix = torch.multinomial(probs, num_samples=1).item()   # sample from the distribution
            context = context[1:] + [ix]                 # shift the context window
            out.append(ix)
            if ix == 0:              # the special 'end' token: break
                break
        assert isinstance("".join(itos[i] for i in out), str)
    return state0, losses
