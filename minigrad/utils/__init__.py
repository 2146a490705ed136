"""minigrad.utils: `minigrad.utils.data` (datasets and batches, as torch.utils.data) and
`minigrad.utils.checkpoint` (activation checkpointing, as torch.utils.checkpoint)."""
from minigrad.utils import checkpoint, data  # noqa: F401
