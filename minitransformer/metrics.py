"""metrics.jsonl: one JSON line per evaluation of a training run (iter, train_loss, val_loss,
lr, tokens_per_sec, elapsed_s, and loss_scale in a --dtype float16 run), appended by the
trainer, read by the plot."""
import json
import os
from pathlib import Path

from minitransformer.data import write_atomic


def append_row(path, row):
    """One metrics.jsonl line, on disk (fsync) before the checkpoint that follows it."""
    with open(path, "a", encoding="utf-8") as f:
        f.write(json.dumps(row) + "\n")
        f.flush()
        os.fsync(f.fileno())


def keep_rows_up_to(path, last_iter):
    """A resumed run drops the rows after its checkpoint (it will write them again); a fresh
    run starts a fresh file. Returns how many unreadable lines were dropped (a line cut by
    a crash mid-write is one)."""
    if not path.exists():
        return 0
    if not path.is_file():
        raise ValueError(f"{path} is not a file; move it away to train in {path.parent}")
    keep, bad = [], 0
    if last_iter is not None:
        for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
            try:
                if json.loads(line)["iter"] <= last_iter:
                    keep.append(line)
            except (ValueError, KeyError, TypeError):
                bad += 1
    write_atomic(path, "".join(line + "\n" for line in keep).encode())
    return bad


def read_metrics(path):
    """The rows of a metrics.jsonl file (an --out directory is accepted too)."""
    path = Path(path)
    if path.is_dir():
        path = path / "metrics.jsonl"
    if not path.is_file():
        raise FileNotFoundError(f"no metrics file at {path}; train first (minitransformer "
                                f"train --out DIR writes DIR/metrics.jsonl)")
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{path} is not UTF-8 text (byte {e.start}); pass the metrics.jsonl "
                         f"a training run wrote") from None
    rows = []
    for n, line in enumerate(text.splitlines(), 1):
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
