"""minigrad.utils: `minigrad.utils.data` (datasets and batches, as torch.utils.data)."""
from minigrad.utils import data  # noqa: F401
