"""Demo 01 — minigrad basics: a small MLP learns to separate two interleaving half-moons.

Everything a training loop needs, in one page: a generated dataset (no downloads), a model
built from `nn` layers, a loss from `functional`, `backward()`, and the Adam optimiser.
It prints the loss and the training accuracy as it goes, reaches 100% training accuracy,
and, when matplotlib is installed, saves a picture of the learned decision boundary.

    python demos/01_mlp_classifier.py            # from the repo root
    python demos/01_mlp_classifier.py --steps 300 --hidden 16 --no-plot
"""
import argparse
import os
import sys
import time

import numpy as np

sys.path[:0] = [os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."),
               os.path.dirname(os.path.abspath(__file__))]
from plotting import save_figure  # noqa: E402
import minigrad as mg  # noqa: E402
import minigrad.functional as F  # noqa: E402
from minigrad import nn, optim  # noqa: E402
from minitransformer.argtypes import (positive_int, non_negative_int,  # noqa: E402
                                      positive_float)


def make_moons(n=200, noise=0.1, seed=0):
    """Two interleaving half circles (class 0 on top, class 1 below), with Gaussian noise:
    X of shape (n, 2), float32, standardised; y of shape (n,), int64 labels."""
    rng = np.random.default_rng(seed)
    n0 = n // 2
    t0, t1 = rng.uniform(0, np.pi, n0), rng.uniform(0, np.pi, n - n0)
    top = np.stack([np.cos(t0), np.sin(t0)], 1)
    bottom = np.stack([1 - np.cos(t1), 0.5 - np.sin(t1)], 1)
    X = np.concatenate([top, bottom]) + rng.normal(0, noise, (n, 2))
    X = (X - X.mean(0)) / X.std(0)   # zero mean, unit variance: easier for the optimiser
    y = np.concatenate([np.zeros(n0), np.ones(n - n0)]).astype(np.int64)
    return X.astype(np.float32), y


class MLP(nn.Module):
    """x -> Linear -> tanh -> Linear -> tanh -> Linear -> class scores (logits)."""

    def __init__(self, hidden=32, classes=2):
        super().__init__()
        self.net = nn.Sequential(nn.Linear(2, hidden), nn.Tanh(),
                                 nn.Linear(hidden, hidden), nn.Tanh(),
                                 nn.Linear(hidden, classes))

    def forward(self, x):
        return self.net(x)


def accuracy(model, X, y):
    with mg.no_grad():  # evaluation builds no graph
        predicted = model(X).argmax(dim=1).numpy()
    return float((predicted == y).mean())


def train(steps=500, hidden=32, lr=0.02, seed=0, log_every=50, n=200, noise=0.1):
    """Full-batch training; returns (model, X, y, final accuracy)."""
    mg.manual_seed(seed)
    X_np, y_np = make_moons(n, noise, seed)
    X, y = mg.tensor(X_np), mg.tensor(y_np)
    model = MLP(hidden)
    opt = optim.Adam(model.parameters(), lr=lr)
    for step in range(1, steps + 1):
        logits = model(X)                       # forward: (n, 2) class scores
        loss = F.cross_entropy(logits, y)       # mean -log softmax(logits)[true class]
        opt.zero_grad()                         # forget the previous step's gradients
        loss.backward()                         # d loss / d every parameter
        opt.step()                              # the Adam update
        if step % log_every == 0 or step == 1 or step == steps:
            acc = float((logits.argmax(dim=1).numpy() == y_np).mean())  # before this update
            print(f"step {step:4d}  loss {loss.item():.4f}  train accuracy {acc:6.1%}")
    return model, X_np, y_np, accuracy(model, X, y_np)


def plot_decision_boundary(model, X, y, path):
    """Colour the plane by the predicted class and draw the data on top."""
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only: works without a display
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed: skipping the plot (pip install -e \".[plot]\")")
        return None
    pad = 0.5
    xs = np.linspace(X[:, 0].min() - pad, X[:, 0].max() + pad, 200)
    ys = np.linspace(X[:, 1].min() - pad, X[:, 1].max() + pad, 200)
    gx, gy = np.meshgrid(xs, ys)
    grid = mg.tensor(np.stack([gx.ravel(), gy.ravel()], 1).astype(np.float32))
    with mg.no_grad():
        prob = model(grid).softmax(dim=1).numpy()[:, 1].reshape(gx.shape)
    fig, ax = plt.subplots(figsize=(5, 4.5))
    ax.contourf(gx, gy, prob, levels=20, cmap="RdBu", alpha=0.6)
    ax.contour(gx, gy, prob, levels=[0.5], colors="k", linewidths=1)
    ax.scatter(X[:, 0], X[:, 1], c=y, cmap="RdBu", edgecolors="k", s=18)
    ax.set_title("MLP decision boundary (two moons)")
    return save_figure(fig, path, "the decision boundary")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--steps", type=positive_int, default=500, help="Adam steps (full batch)")
    p.add_argument("--hidden", type=positive_int, default=32, help="units in each hidden layer")
    p.add_argument("--lr", type=positive_float, default=0.02, help="Adam's learning rate")
    p.add_argument("--seed", type=non_negative_int, default=0, help="seeds the data and the weights")
    p.add_argument("--out", default=os.path.join("out", "01_decision_boundary.png"),
                   help="the PNG to write")
    p.add_argument("--no-plot", action="store_true", help="do not save the PNG")
    args = p.parse_args(argv)
    print("Demo 01 — minigrad: an MLP classifier (Linear + tanh, cross-entropy, Adam) "
          "on two moons")
    start = time.time()
    model, X, y, acc = train(args.steps, args.hidden, args.lr, args.seed)
    print(f"final training accuracy {acc:.1%} after {args.steps} steps "
          f"({time.time() - start:.1f} s)")
    if not args.no_plot:
        plot_decision_boundary(model, X, y, args.out)
    return acc


if __name__ == "__main__":
    main()
