"""The loss curve of a training run: train and val loss against iteration, from metrics.jsonl,
as a PNG. Needs matplotlib (pip install -e ".[plot]"); without it, a clear PlotUnavailable."""
from pathlib import Path

from minitransformer.metrics import read_metrics  # noqa: F401 (the plot's input)


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed."""


def plot_metrics(path, output=None):
    """Write the loss curve of metrics.jsonl at `path` (file or --out directory) to `output`
    (default: loss.png beside it); returns the PNG's path."""
    rows = read_metrics(path)              # bad metrics are named even without matplotlib
    try:
        import matplotlib
        matplotlib.use("Agg")  # files only: no display needed
        import matplotlib.pyplot as plt
    except ImportError:
        raise PlotUnavailable("the loss curve needs matplotlib, which is not installed: "
                              "pip install -e \".[plot]\" (metrics.jsonl holds the numbers)") \
            from None
    path = Path(path)
    folder = path if path.is_dir() else path.parent
    output = Path(output) if output else folder / "loss.png"
    if output.is_dir():                    # a folder: the curve goes inside it
        output = output / "loss.png"
    elif not output.suffix:                # matplotlib would add .png itself; say so here
        output = output.with_suffix(".png")
    iters = [r["iter"] for r in rows]
    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    ax.plot(iters, [r["train_loss"] for r in rows], "o-", label="train")
    ax.plot(iters, [r["val_loss"] for r in rows], "o-", label="val")
    best = min(rows, key=lambda r: r["val_loss"])
    ax.annotate(f"val {best['val_loss']:.3f}", (best["iter"], best["val_loss"]),
                textcoords="offset points", xytext=(-10, 12), ha="right")
    ax.set_xlabel("iteration")
    ax.set_ylabel("cross-entropy loss (nats / character)")
    ax.set_title(f"{folder.name}: loss")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(output)
    plt.close(fig)
    return output
