"""Datasets and batches, as torch.utils.data: `Dataset`, `TensorDataset`, `Subset`,
`random_split`, `DataLoader` and its `default_collate`.

    loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)
    for epoch in range(10):
        for xb, yb in loader:      # a new order each epoch, drawn from mg.manual_seed's
            ...                    # generator (or the loader's own `generator`)

A TensorDataset's batch (also through a Subset of one, as random_split makes) is one
indexing of each tensor by the batch's indices (a copy, as PyTorch's), not a stack of single
rows; any other dataset's items are collated one by one.
Loading runs in the calling process: there are no worker processes to start.
"""
import math
import numbers

from minigrad import backend
from minigrad.args import int_arg
from minigrad.tensor import Tensor
from minigrad.creation import tensor as _tensor
from minigrad.ops.shape import stack


class Dataset:
    """A map-style dataset: `dataset[i]` is item i, `len(dataset)` how many there are."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __len__")


class TensorDataset(Dataset):
    """Item i is (t[i] for each tensor): tensors that share their first dim (the samples)."""

    def __init__(self, *tensors):
        if not tensors or not all(isinstance(t, Tensor) and t.ndim >= 1 for t in tensors):
            raise TypeError(f"TensorDataset: needs one or more tensors of at least one dim "
                            f"(samples first), got {[_describe(t) for t in tensors]}")
        if len({t.shape[0] for t in tensors}) > 1:
            raise ValueError(f"TensorDataset: the tensors must have one size in their first "
                             f"dim (one row per sample), got shapes "
                             f"{[t.shape for t in tensors]}")
        self.tensors = tensors

    def __getitem__(self, index):
        return tuple(t[index] for t in self.tensors)

    def __len__(self):
        return self.tensors[0].shape[0]


def _indices(indices):
    """A sequence of indices (a tensor or array: its values)."""
    if hasattr(indices, "tolist"):
        indices = indices.tolist()
    if not hasattr(indices, "__iter__"):
        raise TypeError(f"Subset: indices must be a sequence of ints, got "
                        f"{type(indices).__name__}")
    return indices


class Subset(Dataset):
    """The items of `dataset` at `indices`, in that order."""

    def __init__(self, dataset, indices):
        self.dataset, self.indices = dataset, [int_arg("Subset", "an index", i)
                                               for i in _indices(indices)]

    def __getitem__(self, index):
        if isinstance(index, list):      # several at once, as PyTorch's Subset
            return self.dataset[[self.indices[i] for i in index]]
        return self.dataset[self.indices[index]]

    def __len__(self):
        return len(self.indices)


def random_split(dataset, lengths, generator=None):
    """Subsets of a random permutation of `dataset`, of the given lengths (numbers of items
    that add up to len(dataset), or fractions that add up to 1: floors, then one more item
    for the first subsets until all are placed, as PyTorch)."""
    n = len(dataset)
    lengths = list(lengths)
    if lengths and all(isinstance(x, float) and x >= 0 for x in lengths) and \
            math.isclose(sum(lengths), 1.0) and sum(lengths) <= 1.0:
        counts = [math.floor(n * x) for x in lengths]
        for i in range(n - sum(counts)):
            counts[i % len(counts)] += 1
        lengths = counts
    if not all(backend.is_integer(x) and x >= 0 for x in lengths) or sum(lengths) != n:
        raise ValueError(f"random_split: lengths must be non-negative integers that add up "
                         f"to the dataset's length {n}, or fractions that add up to 1, got "
                         f"{lengths}")
    order = backend.host_rng(generator, "random_split").permutation(n).tolist()
    starts = [sum(lengths[:i]) for i in range(len(lengths))]
    return [Subset(dataset, order[s:s + k]) for s, k in zip(starts, lengths)]


def default_collate(items):
    """A list of items as one batch, as PyTorch's default: tensors stacked (a new first
    dim), numbers and host arrays made a tensor, tuples/lists and dicts collated field by
    field, strings kept as a list."""
    first = items[0]
    if isinstance(first, Tensor):
        return stack(items)
    if isinstance(first, (str, bytes)):
        return list(items)
    if isinstance(first, (numbers.Number, bool)) or hasattr(first, "__array__"):
        return _tensor(backend.to_host(items))
    if isinstance(first, dict):
        return {k: default_collate([item[k] for item in items]) for k in first}
    if isinstance(first, (tuple, list)):
        if len({len(item) for item in items}) > 1:
            raise ValueError(f"default_collate: the items of a batch must have one length, "
                             f"got lengths {sorted({len(item) for item in items})}")
        fields = [default_collate(list(f)) for f in zip(*items)]
        if isinstance(first, tuple) and hasattr(first, "_fields"):    # a namedtuple: kept
            return type(first)(*fields)
        return tuple(fields) if isinstance(first, tuple) else fields
    raise TypeError(f"default_collate: cannot batch items of type {type(first).__name__}; "
                    f"items may be tensors, numbers, NumPy arrays, strings, or tuples, "
                    f"lists and dicts of them (or pass collate_fn=)")


class DataLoader:
    """Batches of `batch_size` items of `dataset`, in order or shuffled anew each epoch;
    `drop_last` leaves out a last, smaller batch. `generator` (an mg.Generator, an int
    seed or a NumPy Generator) draws the orders; by default the CPU generator that mg.manual_seed seeds."""

    def __init__(self, dataset, batch_size=1, shuffle=False, drop_last=False, collate_fn=None,
                 generator=None):
        if not backend.is_integer(batch_size) or batch_size < 1:
            raise ValueError(f"DataLoader: batch_size must be a positive integer, got "
                             f"{batch_size!r}")
        if not hasattr(dataset, "__getitem__") or not hasattr(dataset, "__len__"):
            raise TypeError(f"DataLoader: the dataset must support len() and indexing (a "
                            f"Dataset, a list), got {type(dataset).__name__}")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"DataLoader: collate_fn must be a function of a list of items, "
                            f"got {type(collate_fn).__name__}")
        self.dataset, self.batch_size = dataset, batch_size
        shuffle = False if shuffle is None else shuffle      # None: PyTorch's default
        for name, flag in (("shuffle", shuffle), ("drop_last", drop_last)):
            if flag not in (True, False) or isinstance(flag, str):   # "no" would be true
                raise TypeError(f"DataLoader: {name} must be True or False, got {flag!r}")
        self.shuffle, self.drop_last, self.collate_fn = bool(shuffle), bool(drop_last), \
            collate_fn
        # an int seed makes one generator now, so each epoch draws a new, reproducible order
        self.generator = None if generator is None else backend.host_rng(generator,
                                                                         "DataLoader")

    def __len__(self):
        n = len(self.dataset)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self):
        n = len(self.dataset)
        order = backend.host_rng(self.generator, "DataLoader").permutation(n) \
            if self.shuffle else range(n)
        for start in range(0, len(self) * self.batch_size, self.batch_size):
            yield self._batch(order[start:start + self.batch_size])

    def _batch(self, indices):
        if self.collate_fn is None:
            rows = _tensor_rows(self.dataset, indices)
            if rows is not None:
                return rows
        items = [self.dataset[int(i)] for i in indices]
        return (self.collate_fn or default_collate)(items)


def _tensor_rows(dataset, indices):
    """The batch at `indices` as one gather per tensor, where the items are a
    TensorDataset's rows: of a TensorDataset, or of a Subset of one (random_split's; a
    Subset of a Subset...); None for any other dataset. Not where a subclass has its own
    __getitem__ (an augmentation), which must see every item. The same batch as stacking
    the items one by one (a copy, as PyTorch's), in one step instead of one per item."""
    while isinstance(dataset, Subset) and type(dataset).__getitem__ is Subset.__getitem__:
        indices = [dataset.indices[i] for i in indices]
        dataset = dataset.dataset
    if not isinstance(dataset, TensorDataset) or \
            type(dataset).__getitem__ is not TensorDataset.__getitem__:
        return None
    index = backend.to_host(list(indices)).astype(backend.int64)
    return tuple(t[index] for t in dataset.tensors)


def _describe(t):
    return f"Tensor{t.shape}" if isinstance(t, Tensor) else type(t).__name__
