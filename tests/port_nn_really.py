"""PyTorch's "What is torch.nn really?", ported, refactoring by refactoring: logistic
regression from raw tensors (log_softmax and the negative log-likelihood by hand, the
update under no_grad), then F.cross_entropy, nn.Module with nn.Parameter, nn.Linear,
optim, TensorDataset, DataLoader, validation, get_data/fit, the CNN, nn.Sequential with a
Lambda layer, WrappedDataLoader, AdaptiveAvgPool2d and the device. The data is MNIST's
shape, random (2000 images of 784 pixels; MNIST itself is a download). For
test_ported_scripts_five.py: returns (initial weights, losses)."""
import math

import numpy as np

from port_helpers import _Draws, _Replayed, _load, _state


def _mnist_shaped(n_train=2000, n_valid=500, seed=0):
    """(x_train, y_train, x_valid, y_valid) as the tutorial's pickle holds them: float32
    pixels in [0, 1) of 784 each, most of them 0 as MNIST's, int64 labels 0..9. The label
    depends on the pixels (the brightest of ten stripes), so there is something to learn."""
    rng = np.random.default_rng(seed)
    x = rng.random((n_train + n_valid, 784), dtype=np.float32)
    x *= rng.random(x.shape) < 0.15
    y = x[:, :780].reshape(-1, 10, 78).sum(-1).argmax(-1).astype(np.int64)
    return x[:n_train], y[:n_train], x[n_train:], y[n_train:]


def nn_really(torch, nn, F, data_mod, init=None, cnn_steps=8):
    optim = torch.optim                # the tutorial's `from torch import optim`
    TensorDataset, DataLoader = data_mod.TensorDataset, data_mod.DataLoader
    torch.manual_seed(0)
    state0, out = {}, []
    draw = _Draws(torch, init, state0, "w")    # PyTorch's run takes minigrad's randn
    x_train, y_train, x_valid, y_valid = _mnist_shaped()
    x_train, y_train, x_valid, y_valid = map(
        torch.tensor, (x_train, y_train, x_valid, y_valid)
    )
    n, c = x_train.shape
    print(x_train, y_train)
    print(x_train.shape)
    assert (n, c) == (2000, 784) and (y_train.min().item(), y_train.max().item()) == (0, 9)

    # ---- neural net from scratch (no torch.nn) ----
    weights = draw(lambda: torch.randn(784, 10) / math.sqrt(784))   # Xavier initialisation
    weights.requires_grad_()
    bias = torch.zeros(10, requires_grad=True)

    def log_softmax(x):
        return x - x.exp().sum(-1).log().unsqueeze(-1)

    def model(xb):
        return log_softmax(xb @ weights + bias)
    bs = 64                                    # batch size
    xb = x_train[0:bs]                         # a mini-batch from x
    preds = model(xb)                          # predictions
    print(preds[0], preds.shape)
    assert tuple(preds[0].shape) == (10,) and tuple(preds.shape) == (64, 10)

    def nll(input, target):
        return -input[range(target.shape[0]), target].mean()
    loss_func = nll
    yb = y_train[0:bs]
    out.append(loss_func(preds, yb).item())

    def accuracy(out, yb):
        preds = torch.argmax(out, dim=1)
        return (preds == yb).float().mean()
    out.append(accuracy(preds, yb).item())
    print(loss_func(preds, yb), accuracy(preds, yb))
    lr = 0.5                                   # learning rate
    epochs = 2                                 # how many epochs to train for
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            start_i = i * bs
            end_i = start_i + bs
            xb = x_train[start_i:end_i]
            yb = y_train[start_i:end_i]
            pred = model(xb)
            loss = loss_func(pred, yb)
            loss.backward()
            with torch.no_grad():
                weights -= weights.grad * lr
                bias -= bias.grad * lr
                weights.grad.zero_()
                bias.grad.zero_()
    out += [loss_func(model(xb), yb).item(), accuracy(model(xb), yb).item()]

    # ---- torch.nn.functional ----
    loss_func = F.cross_entropy

    def model(xb):
        return xb @ weights + bias
    out += [loss_func(model(xb), yb).item(), accuracy(model(xb), yb).item()]

    # ---- nn.Module ----
    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.weights = nn.Parameter(torch.randn(784, 10) / math.sqrt(784))
            self.bias = nn.Parameter(torch.zeros(10))

        def forward(self, xb):
            return xb @ self.weights + self.bias
    model = Mnist_Logistic()
    _load(torch, model, init, "logistic.")
    state0.update(_state(model, "logistic."))
    out.append(loss_func(model(xb), yb).item())

    def fit():
        for epoch in range(epochs):
            for i in range((n - 1) // bs + 1):
                start_i = i * bs
                end_i = start_i + bs
                xb = x_train[start_i:end_i]
                yb = y_train[start_i:end_i]
                pred = model(xb)
                loss = loss_func(pred, yb)
                loss.backward()
                with torch.no_grad():
                    for p in model.parameters():
                        p -= p.grad * lr
                    model.zero_grad()
    fit()
    out.append(loss_func(model(xb), yb).item())

    # ---- nn.Linear; optim ----
    class Mnist_Logistic(nn.Module):
        def __init__(self):
            super().__init__()
            self.lin = nn.Linear(784, 10)

        def forward(self, xb):
            return self.lin(xb)
    keys = iter(range(100))

    def get_model():
        model = Mnist_Logistic()
        key = f"linear{next(keys)}."
        _load(torch, model, init, key)
        state0.update(_state(model, key))
        return model, optim.SGD(model.parameters(), lr=lr)
    model, opt = get_model()
    out.append(loss_func(model(xb), yb).item())
    train_ds = TensorDataset(x_train, y_train)
    for epoch in range(epochs):
        for i in range((n - 1) // bs + 1):
            xb, yb = train_ds[i * bs: i * bs + bs]
            pred = model(xb)
            loss = loss_func(pred, yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
    out.append(loss_func(model(xb), yb).item())

    # ---- DataLoader; validation ----
    train_dl = DataLoader(train_ds, batch_size=bs, shuffle=True)
    # PyTorch's generator shuffles otherwise: its run takes minigrad's order (port_helpers)
    orders = iter(range(100))

    def shuffled(ds, bs):
        return DataLoader(ds, batch_size=bs, sampler=_Replayed(
            init, state0, f"order{next(orders)}.", data_mod.RandomSampler(ds)))
    train_dl = shuffled(train_ds, bs)
    valid_ds = TensorDataset(x_valid, y_valid)
    valid_dl = DataLoader(valid_ds, batch_size=bs * 2)
    model, opt = get_model()
    for epoch in range(epochs):
        model.train()
        for xb, yb in train_dl:
            pred = model(xb)
            loss = loss_func(pred, yb)
            loss.backward()
            opt.step()
            opt.zero_grad()
        model.eval()
        with torch.no_grad():
            valid_loss = sum(loss_func(model(xb), yb) for xb, yb in valid_dl)
        out.append((valid_loss / len(valid_dl)).item())

    # ---- fit() and get_data() ----
    def loss_batch(model, loss_func, xb, yb, opt=None):
        loss = loss_func(model(xb), yb)
        if opt is not None:
            loss.backward()
            opt.step()
            opt.zero_grad()
        return loss.item(), len(xb)

    def fit(epochs, model, loss_func, opt, train_dl, valid_dl, max_steps=None):
        for epoch in range(epochs):
            model.train()
            for step, (xb, yb) in enumerate(train_dl):
                if step == max_steps:           # (the runs here are short)
                    break
                loss_batch(model, loss_func, xb, yb, opt)
            model.eval()
            with torch.no_grad():
                losses, nums = zip(
                    *[loss_batch(model, loss_func, xb, yb) for xb, yb in valid_dl]
                )
            val_loss = np.sum(np.multiply(losses, nums)) / np.sum(nums)
            out.append(float(val_loss))

    def get_data(train_ds, valid_ds, bs):
        return (
            DataLoader(train_ds, batch_size=bs, shuffle=True),
            DataLoader(valid_ds, batch_size=bs * 2),
        )
    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    train_dl = shuffled(train_ds, bs)           # (minigrad's order, as above)
    model, opt = get_model()
    fit(epochs, model, loss_func, opt, train_dl, valid_dl)

    # ---- a CNN ----
    class Mnist_CNN(nn.Module):
        def __init__(self):
            super().__init__()
            self.conv1 = nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1)
            self.conv2 = nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1)
            self.conv3 = nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1)

        def forward(self, xb):
            xb = xb.view(-1, 1, 28, 28)
            xb = F.relu(self.conv1(xb))
            xb = F.relu(self.conv2(xb))
            xb = F.relu(self.conv3(xb))
            xb = F.avg_pool2d(xb, 4)
            return xb.view(-1, xb.size(1))
    lr = 0.1

    def loaded(model, key):
        _load(torch, model, init, key)
        state0.update(_state(model, key))
        return model
    model = loaded(Mnist_CNN(), "cnn.")
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    fit(1, model, loss_func, opt, shuffled(train_ds, bs), valid_dl, cnn_steps)

    # ---- nn.Sequential, with a Lambda layer ----
    class Lambda(nn.Module):
        def __init__(self, func):
            super().__init__()
            self.func = func

        def forward(self, x):
            return self.func(x)

    def preprocess(x):
        return x.view(-1, 1, 28, 28)
    model = nn.Sequential(
        Lambda(preprocess),
        nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.AvgPool2d(4),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    model = loaded(model, "seq.")
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    fit(1, model, loss_func, opt, shuffled(train_ds, bs), valid_dl, cnn_steps)

    # ---- wrapping the DataLoader; AdaptiveAvgPool2d; the device ----
    def preprocess(x, y):
        return x.view(-1, 1, 28, 28), y

    class WrappedDataLoader:
        def __init__(self, dl, func):
            self.dl = dl
            self.func = func

        def __len__(self):
            return len(self.dl)

        def __iter__(self):
            for b in self.dl:
                yield (self.func(*b))
    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    train_dl = WrappedDataLoader(shuffled(train_ds, bs), preprocess)
    valid_dl = WrappedDataLoader(valid_dl, preprocess)
    model = nn.Sequential(
        nn.Conv2d(1, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 16, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.Conv2d(16, 10, kernel_size=3, stride=2, padding=1),
        nn.ReLU(),
        nn.AdaptiveAvgPool2d(1),
        Lambda(lambda x: x.view(x.size(0), -1)),
    )
    model = loaded(model, "adaptive.")
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    fit(1, model, loss_func, opt, train_dl, valid_dl, cnn_steps)
    print(torch.cuda.is_available())
    dev = torch.device(
        "cuda") if torch.cuda.is_available() else torch.device("cpu")
    dev = torch.device("cpu")                   # (the tests compare on the CPU)

    def preprocess(x, y):
        return x.view(-1, 1, 28, 28).to(dev), y.to(dev)
    train_dl, valid_dl = get_data(train_ds, valid_ds, bs)
    train_dl = WrappedDataLoader(shuffled(train_ds, bs), preprocess)
    valid_dl = WrappedDataLoader(valid_dl, preprocess)
    model.to(dev)
    opt = optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    fit(1, model, loss_func, opt, train_dl, valid_dl, cnn_steps)
    return state0, out
