"""The loss curve of a training run: train and val loss against iteration, from metrics.jsonl,
as a PNG. Needs matplotlib (pip install -e ".[plot]"); without it, a clear PlotUnavailable."""
import json
from pathlib import Path


class PlotUnavailable(RuntimeError):
    """matplotlib is not installed."""


def read_metrics(path):
    """The rows of a metrics.jsonl file (an --out directory is accepted too)."""
    path = Path(path)
    if path.is_dir():
        path = path / "metrics.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"no metrics file at {path}; train first (minitransformer "
                                f"train --out DIR writes DIR/metrics.jsonl)")
    rows = []
    for n, line in enumerate(path.read_text().splitlines(), 1):
        if not line.strip():
            continue
        try:
            row = json.loads(line)
        except ValueError as e:
            raise ValueError(f"{path}, line {n}, is not valid JSON ({e})") from None
        missing = [k for k in ("iter", "train_loss", "val_loss")
                   if not isinstance(row, dict) or not isinstance(row.get(k), (int, float))]
        if missing:
            raise ValueError(f"{path}, line {n}, lacks a number for {', '.join(missing)} "
                             f"(each line is one evaluation written by minitransformer train)")
        rows.append(row)
    if not rows:
        raise ValueError(f"{path} has no evaluations yet")
    return rows


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
