"""The embedding lookup (a Transformer's token embeddings): rows of a table picked by
integer ids, the padding row's gradient held at zero, and PyTorch's max_norm
renormalisation of the rows picked."""
import math

from minigrad.args import int_arg, not_a_tensor, number_arg
from minigrad.autograd import Function
from minigrad.ops.index import IndexAdd, raw_index
from minigrad.tensor import Tensor


class Embedding(Function):
    """weight[indices] with the gradient of the `padding_idx` row held at zero (as PyTorch).
    scale_by_freq: each row's gradient divided by how often the batch picked it (PyTorch's
    scale_grad_by_freq: a frequent token's row then moves as much as a rare one's; under
    create_graph the scaling is part of the gradient's graph, so a second derivative is
    scaled too, where PyTorch's double backward is the plain gather)."""
    fresh_grads = True                                   # see Function.fresh_grads
    # backward reads the indices, not the table: max_norm's renormalisation, or a padding
    # row zeroed, between forward and backward is fine (a table used twice a step)
    needs_values = False
    def forward(self, weight, indices, padding_idx, scale_by_freq):
        self.indices, self.padding_idx, self.shape = indices, padding_idx, weight.shape
        self.scale_by_freq = scale_by_freq
        return weight[indices]
    def backward(self, g):
        xp, idx = self.xp, self.indices
        weight = None
        if self.padding_idx is not None:
            weight = (idx != self.padding_idx).astype(g.dtype)
        if self.scale_by_freq:
            count = xp.bincount(idx.reshape(-1), minlength=self.shape[0])[idx]
            weight = (1 / count if weight is None else weight / count).astype(g.dtype)
        if weight is not None:
            g = g * self.const(weight[..., None])
        return IndexAdd.apply(g, index=idx, shape=self.shape)


def embedding(indices, weight, padding_idx=None, max_norm=None, norm_type=2.0,
              scale_grad_by_freq=False):
    """Rows of `weight` picked by integer `indices` (any shape): out[..., :] = weight[i].
    max_norm: each picked row whose norm_type-norm exceeds it is first scaled down to it,
    in place in weight and outside autograd, as PyTorch's. scale_grad_by_freq: each row's
    gradient over the number of times `indices` holds it."""
    if not isinstance(weight, Tensor):
        raise not_a_tensor("embedding", "weight", weight)
    idx = raw_index(indices, weight, "embedding", "indices")
    if not hasattr(idx, "dtype") or idx.dtype.kind not in "iu":
        raise TypeError(f"embedding: indices must be an integer tensor, got "
                        f"{getattr(idx, 'dtype', type(idx).__name__)}")
    if weight.ndim != 2:
        raise ValueError(f"embedding: weight must be a 2-D table (rows, dim), got shape "
                         f"{weight.shape}")
    n = weight.shape[0]
    if padding_idx is not None:          # a negative padding_idx counts from the end
        padding_idx = int_arg("embedding", "padding_idx", padding_idx)
        if not -n <= padding_idx < n:
            raise ValueError(f"embedding: padding_idx {padding_idx} is outside the table of "
                             f"{n} rows (valid: {-n}..{n - 1}, or None)")
        padding_idx %= n
    out_of_range = (idx < 0) | (idx >= n)
    if idx.size and bool(out_of_range.any()):          # one check, one device sync
        bad = int(idx[out_of_range][0])
        raise IndexError(f"embedding: index {bad} is out of range for a table of {n} rows "
                         f"(valid: 0..{n - 1})")
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    if not isinstance(scale_grad_by_freq, bool):
        raise TypeError(f"embedding: scale_grad_by_freq must be True or False, got "
                        f"{scale_grad_by_freq!r}")
    return Embedding.apply(weight, indices=idx, padding_idx=padding_idx,
                           scale_by_freq=scale_grad_by_freq)


def _renorm_rows(weight, idx, max_norm, norm_type):
    """torch.embedding_renorm_: the rows idx picks, each whose norm passes max_norm scaled
    by max_norm / (norm + 1e-7), in weight's own memory (counted as a write)."""
    max_norm = number_arg("embedding", "max_norm", max_norm)
    norm_type = number_arg("embedding", "norm_type", norm_type)
    if not max_norm > 0 or not norm_type > 0:
        raise ValueError(f"embedding: max_norm and norm_type must be > 0, got {max_norm} and "
                         f"{norm_type}")
    xp, w = weight.backend.xp, weight._data
    rows = xp.unique(idx.reshape(-1))
    picked = w[rows]
    if norm_type == math.inf:
        norms = xp.abs(picked).max(axis=-1)
    else:
        norms = (xp.abs(picked) ** norm_type).sum(axis=-1) ** (1.0 / norm_type)
    scale = xp.where(norms > max_norm, max_norm / (norms + 1e-7), 1.0).astype(w.dtype)
    w[rows] = picked * scale[:, None]
    weight._version_counter[0] += 1
