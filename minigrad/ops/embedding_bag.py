"""torch.nn.functional.embedding_bag: the rows of a table picked by bags of integer ids,
each bag reduced to one row (sum, mean or max) without the (n, dim) rows of every id being
kept per bag. Composed: the rows are the embedding lookup (ops/embedding.py: padding row and
scale_grad_by_freq as Embedding's), a sum or mean is a scatter-add of them into their bags
(IndexAdd, whose gradient is the gather back), and a max picks each bag's first largest
entry per dim by index; so gradients of gradients come from those ops."""
from minigrad import backend
from minigrad.args import int_arg
from minigrad.ops.embedding import Embedding, _renorm_rows
from minigrad.ops.elementwise import where
from minigrad.ops.index import GetItem, IndexAdd, raw_index
from minigrad.tensor import Tensor

np = backend.get("cpu").xp          # NumPy: the bags' bounds, on the host

_MODES = ("sum", "mean", "max")


def _ids(op, name, value, like):
    """An integer tensor (or array) as a device array, else a TypeError naming it."""
    arr = raw_index(value, like, op, name)
    if not hasattr(arr, "dtype") or arr.dtype.kind not in "iu":
        raise TypeError(f"{op}: {name} must be an integer (int64 or int32) tensor, got "
                        f"{getattr(arr, 'dtype', type(value).__name__)}")
    return arr


def _bags(op, n, offsets, include_last_offset):
    """Host arrays: each id's bag (n,), each bag's first id (B,) and its size (B,), from
    offsets (each bag's start; with include_last_offset one more, the last bag's end)."""
    starts = backend.to_host(offsets).astype(np.int64)
    if starts.ndim != 1:
        raise ValueError(f"{op}: offsets has to be a 1D Tensor, got shape {starts.shape}")
    if not starts.size:
        if n or include_last_offset:
            raise ValueError(f"{op}: offsets must hold at least one entry (the first bag's "
                             f"start, 0); only an empty input may have no bags")
        return starts, starts, starts      # no bags: an empty batch, (0, L) or (0,) ids
    if starts[0] != 0:
        raise ValueError(f"{op}: offsets[0] has to be 0 (the first bag starts at the first "
                         f"id), got {int(starts[0])}")
    if starts[-1] > n:
        raise ValueError(f"{op}: offsets[-1] can not be greater than input's length {n}, "
                         f"got {int(starts[-1])}")
    if (np.diff(starts) < 0).any():
        raise ValueError(f"{op}: offsets must not decrease, got {starts.tolist()}")
    if include_last_offset:
        # ids past the last offset would belong to no bag; PyTorch's CPU kernels then
        # disagree with each other (sum drops them, mean counts them, max reads them)
        if starts[-1] != n:
            raise ValueError(f"{op}: with include_last_offset, offsets[-1] must be the "
                             f"input's length {n} (the last bag's end), got "
                             f"{int(starts[-1])}")
        ends, starts = starts[1:], starts[:-1]
    else:
        ends = np.append(starts[1:], n)
    sizes = ends - starts
    bag = np.repeat(np.arange(starts.size), sizes)
    return bag, starts, sizes


def embedding_bag(input, weight, offsets=None, max_norm=None, norm_type=2,
                  scale_grad_by_freq=False, mode="mean", sparse=False,
                  per_sample_weights=None, include_last_offset=False, padding_idx=None):
    """The bags of ids in `input` reduced over rows of `weight` (num_embeddings, dim), as
    PyTorch: a 2-D input (B, L) is B bags of L ids; a 1-D one is cut into bags at offsets
    (each bag's start; include_last_offset: the last entry is the end). mode 'sum', 'mean'
    or 'max' per bag (an empty bag gives zeros); per_sample_weights (input's shape, mode
    'sum' only) scale each id's row; ids equal to padding_idx are left out of their bag
    (and of its mean's count). Returns (B, dim). scale_grad_by_freq divides each row's
    gradient by how often `input` holds it, as F.embedding's (PyTorch 2.13's CPU kernel
    divides some rows by another row's count, pytorch/pytorch#190063)."""
    op = "embedding_bag"
    if mode not in _MODES:
        raise ValueError(f"{op}: mode has to be one of sum, mean or max, got {mode!r}")
    if not isinstance(weight, Tensor) or weight.ndim != 2:
        raise ValueError(f"{op}: weight has to be a 2D Tensor (num_embeddings, dim), got "
                         f"{getattr(weight, 'shape', type(weight).__name__)}")
    if sparse:
        raise NotImplementedError(f"{op}: sparse gradients are not implemented (dense "
                                  f"gradients only; pass sparse=False)")
    if mode == "max" and scale_grad_by_freq:
        raise ValueError(f"{op}: max mode does not support scaling the gradient by the "
                         f"frequency")
    if per_sample_weights is not None and mode != "sum":
        raise NotImplementedError(f"{op}: per_sample_weights is only supported for "
                                  f"mode='sum' (got mode={mode!r})")
    idx = _ids(op, "input", input, weight)
    if idx.ndim == 2:
        if offsets is not None:
            raise ValueError(f"{op}: if input is 2D, then offsets has to be None, as input "
                             f"is treated as a mini-batch of fixed length sequences")
        b, length = idx.shape
        offsets, include_last_offset = np.arange(b) * length, False
    elif idx.ndim == 1:
        if offsets is None:
            raise ValueError(f"{op}: offsets has to be a 1D Tensor but got None (a 1-D "
                             f"input needs each bag's start)")
        offsets = _ids(op, "offsets", offsets, weight)
    else:
        raise ValueError(f"{op}: input has to be 1D or 2D Tensor, but got Tensor of "
                         f"dimension {idx.ndim}")
    if per_sample_weights is not None:
        if not isinstance(per_sample_weights, Tensor) or \
                per_sample_weights.shape != tuple(idx.shape):
            raise ValueError(f"{op}: per_sample_weights must have the same shape as the "
                             f"input {tuple(idx.shape)}, got "
                             f"{getattr(per_sample_weights, 'shape', per_sample_weights)}")
        if per_sample_weights.dtype != weight.dtype:
            raise TypeError(f"{op}: per_sample_weights must have weight's dtype "
                            f"{weight.dtype}, got {per_sample_weights.dtype}")
        per_sample_weights = per_sample_weights.reshape(-1)
    n_rows = weight.shape[0]
    if padding_idx is not None:
        padding_idx = int_arg(op, "padding_idx", padding_idx)
        if not -n_rows <= padding_idx < n_rows:
            raise ValueError(f"{op}: padding_idx must be within the number of embeddings, "
                             f"{-n_rows} through {n_rows - 1}, but got {padding_idx}")
        padding_idx %= n_rows
    idx = idx.reshape(-1)
    if idx.size and bool(((idx < 0) | (idx >= n_rows)).any()):
        bad = int(idx[(idx < 0) | (idx >= n_rows)][0])
        raise IndexError(f"{op}: index {bad} is out of range for a table of {n_rows} rows "
                         f"(valid: 0..{n_rows - 1})")
    bag, starts, sizes = _bags(op, idx.size, offsets, include_last_offset)
    if max_norm is not None:
        _renorm_rows(weight, idx, max_norm, norm_type)
    be, device = backend.get(weight.device), weight.device
    bag_d = be.from_numpy(bag)
    shape = (starts.size, weight.shape[1])
    if mode == "max":
        return _max_bags(weight, idx, bag, starts, sizes, padding_idx)
    rows = Embedding.apply(weight, indices=idx, padding_idx=padding_idx,
                           scale_by_freq=bool(scale_grad_by_freq))           # (n, dim)
    scale = None if padding_idx is None else (idx != padding_idx).astype(weight.dtype)
    if mode == "mean":
        counted = None if padding_idx is None else backend.to_host(idx) != padding_idx
        kept = np.bincount(bag, weights=counted, minlength=starts.size)
        share = be.from_numpy((1 / np.maximum(kept, 1)).astype(weight.dtype))[bag_d]
        scale = share if scale is None else scale * share
    if scale is not None:
        rows = rows * Tensor._make(scale[:, None], device)
    if per_sample_weights is not None:
        rows = rows * per_sample_weights[:, None]
    return IndexAdd.apply(rows, index=bag_d, shape=shape)


def _max_bags(weight, idx, bag, starts, sizes, padding_idx):
    """Each bag's largest row entries per dim, the first of equals (as PyTorch), picked from
    weight by index so the gradient goes to that entry alone; zeros for a bag with no ids
    (or only padding ones)."""
    be, xp = backend.get(weight.device), weight.backend.xp
    dim, n_bags = weight.shape[1], starts.size
    width = int(sizes.max(initial=0))
    place = np.arange(bag.size) - starts[bag]                  # each id's place in its bag
    values = weight._data[idx]                                  # (n, dim)
    if padding_idx is not None:
        values = xp.where((idx == padding_idx)[:, None], -xp.inf, values)
    dense = xp.full((n_bags, max(width, 1), dim), -xp.inf, dtype=weight.dtype)
    dense[be.from_numpy(bag), be.from_numpy(place)] = values
    first = dense.argmax(axis=1)                               # (B, dim): the place
    picked = xp.zeros((n_bags, dim), dtype=idx.dtype)
    has = xp.zeros((n_bags, dim), dtype=bool)
    if bag.size:
        entry = be.from_numpy(starts)[:, None] + first         # the id's position in input
        entry = xp.minimum(entry, bag.size - 1)                # (an empty bag reads any)
        picked = idx[entry]
        has = (dense > -xp.inf).any(axis=1)                    # (B, dim)
    out = GetItem.apply(weight, index=(picked, xp.arange(dim)))
    return where(Tensor._make(has, weight.device), out, 0.0)
