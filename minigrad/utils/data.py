"""Datasets and batches, as torch.utils.data. Here: the datasets (`Dataset`,
`IterableDataset`, `TensorDataset`, `StackDataset`, `ConcatDataset`, `ChainDataset`,
`Subset`, `random_split`) and `default_collate` / `default_convert`; the samplers live in
utils/sampler.py and `DataLoader` in utils/dataloader.py, all importable from here (and
from PyTorch's submodules: minigrad.utils.data.dataloader, .dataset, .sampler, .distributed).

    loader = DataLoader(TensorDataset(X, y), batch_size=64, shuffle=True)
    for epoch in range(10):
        for xb, yb in loader:      # a new order each epoch, drawn from mg.manual_seed's
            ...                    # generator (or the loader's own `generator`)

A TensorDataset's batch (also through a Subset of one, as random_split makes) is one
indexing of each tensor by the batch's indices (a copy, as PyTorch's), not a stack of single
rows; any other dataset's items are collated one by one.
DataLoader(num_workers=N) loads in N worker processes (utils/dataloader_workers.py).
"""
import bisect
import math
import numbers
from collections.abc import Mapping

from minigrad import backend
from minigrad.backend import np
from minigrad.args import int_arg
from minigrad.tensor import Tensor
from minigrad.creation import tensor as _tensor
from minigrad.ops.shape import stack


class Dataset:
    """A map-style dataset: `dataset[i]` is item i, `len(dataset)` how many there are."""

    def __getitem__(self, index):
        raise NotImplementedError(f"{type(self).__name__} must define __getitem__")

    def __len__(self):
        # a TypeError, as len() of an object without one: list(loader) asks for a length
        # hint and takes a TypeError as "unknown" (a stream of no length), nothing else
        raise TypeError(f"{type(self).__name__} has no len(): a map-style dataset must "
                        f"define __len__")

    def __add__(self, other):
        return ConcatDataset([self, other])


class IterableDataset(Dataset):
    """A stream of items: `iter(dataset)` yields them (no indexing). A DataLoader batches
    them as they come; it takes no shuffle, sampler or batch_sampler for one."""

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")

    def __add__(self, other):
        return ChainDataset([self, other])


class StackDataset(Dataset):
    """Item i is (d[i] for each dataset), or, from keywords, {name: d[i]}: datasets of one
    length side by side (inputs and targets kept apart)."""

    def __init__(self, *args, **kwargs):
        if args and kwargs:
            raise ValueError("StackDataset: give the datasets either as arguments (items are "
                             "tuples) or as keywords (items are dicts), not both")
        if not args and not kwargs:
            raise ValueError("StackDataset: needs at least one dataset")
        self.datasets = args or kwargs
        lengths = {len(d) for d in (args or kwargs.values())}
        if len(lengths) > 1:
            raise ValueError(f"StackDataset: the datasets must have one length, got lengths "
                             f"{sorted(lengths)}")
        self._length = lengths.pop()

    def __getitem__(self, index):
        if isinstance(self.datasets, dict):
            return {k: d[index] for k, d in self.datasets.items()}
        return tuple(d[index] for d in self.datasets)

    def __len__(self):
        return self._length


class ConcatDataset(Dataset):
    """The items of several map-style datasets, one after the other; `cumulative_sizes[k]`
    is how many items datasets 0..k hold."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        if not self.datasets:
            raise ValueError("ConcatDataset: datasets should not be an empty iterable")
        for d in self.datasets:
            if isinstance(d, IterableDataset):
                raise TypeError("ConcatDataset does not support IterableDataset (chain "
                                "streams with ChainDataset)")
        self.cumulative_sizes = []
        for d in self.datasets:
            self.cumulative_sizes.append(len(d) + (self.cumulative_sizes[-1]
                                                   if self.cumulative_sizes else 0))

    def __len__(self):
        return self.cumulative_sizes[-1]

    def __getitem__(self, index):
        index = int_arg("ConcatDataset", "an index", index)
        n = len(self)
        if not -n <= index < n:
            raise IndexError(f"ConcatDataset: index {index} is out of range for {n} items")
        index %= n
        k = bisect.bisect_right(self.cumulative_sizes, index)
        return self.datasets[k][index - (self.cumulative_sizes[k - 1] if k else 0)]


class ChainDataset(IterableDataset):
    """The items of several iterable datasets, one stream after the other (each is
    iterated anew on each pass)."""

    def __init__(self, datasets):
        self.datasets = list(datasets)
        for d in self.datasets:
            if not isinstance(d, IterableDataset):
                raise TypeError(f"ChainDataset only supports IterableDataset, got "
                                f"{type(d).__name__} (join map-style ones with "
                                f"ConcatDataset)")

    def __iter__(self):
        for d in self.datasets:
            yield from d

    def __len__(self):
        return sum(len(d) for d in self.datasets)


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
    # a tensor or array of lengths: its values (not 0-d tensors, nor NumPy float32s that
    # are not floats), as PyTorch takes a tensor of them
    lengths = lengths.tolist() if hasattr(lengths, "tolist") else list(lengths)
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
    dim), numbers and host arrays made a tensor, tuples/lists and dicts (any mapping, its
    type kept) collated field by field, strings kept as a list. Unlike PyTorch's, a batch of
    tuples is a tuple (PyTorch's is a list), as a TensorDataset's one-gather batch is."""
    first = items[0]
    if isinstance(first, Tensor):
        return stack(items)
    if isinstance(first, (str, bytes)):
        return list(items)
    if isinstance(first, int):         # ints and bools: the dtype tensor() infers, as
        return _tensor(list(items))    # PyTorch's (a float among ints: float32)
    if isinstance(first, numbers.Number) and not hasattr(first, "__array__"):
        return _tensor(backend.to_host(items))         # floats: float64, as PyTorch's
    if hasattr(first, "__array__"):
        shapes = [tuple(getattr(a, "shape", ())) for a in items]
        if len(set(shapes)) > 1:
            raise ValueError(f"default_collate: the arrays of a batch must have one shape, "
                             f"got shapes {shapes}")
        return _tensor(backend.to_host(items))
    if isinstance(first, Mapping):
        return _same_mapping(first, {k: default_collate([item[k] for item in items])
                                     for k in first})
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


def default_convert(item):
    """An item as DataLoader(batch_size=None) yields it: host arrays and NumPy scalars made
    tensors (inside tuples, lists and mappings too), everything else as it is."""
    if isinstance(item, Tensor) or isinstance(item, (str, bytes)):
        return item
    if hasattr(item, "__array__") and not isinstance(item, numbers.Number) or \
            isinstance(item, np.generic):
        array = backend.to_host(item)
        return item if array.dtype.kind in "USO" else _tensor(array)
    if isinstance(item, Mapping):
        return _same_mapping(item, {k: default_convert(v) for k, v in item.items()})
    if isinstance(item, tuple) and hasattr(item, "_fields"):
        return type(item)(*(default_convert(v) for v in item))
    if isinstance(item, (tuple, list)):
        return type(item)(default_convert(v) for v in item)
    return item


def _same_mapping(like, fields):
    """`fields` as a mapping of like's type (an OrderedDict stays one), else a dict."""
    try:
        return type(like)(fields)
    except TypeError:                    # a mapping type not built from a dict
        return fields


def _describe(t):
    return f"Tensor{t.shape}" if isinstance(t, Tensor) else type(t).__name__


# the samplers and the loader, under their torch.utils.data names (imported last: they use
# the datasets above)
from minigrad.utils.sampler import (Sampler, SequentialSampler, RandomSampler,  # noqa: E402,F401
                                    SubsetRandomSampler, WeightedRandomSampler, BatchSampler,
                                    DistributedSampler)
from minigrad.utils.dataloader import DataLoader, get_worker_info  # noqa: E402,F401

# torch.utils.data's submodules, importable (minGPT's trainer: `from torch.utils.data.dataloader
# import DataLoader`): .dataloader and .sampler are the modules above, .dataset and
# .distributed modules of their names
import sys as _sys  # noqa: E402
import types as _types  # noqa: E402
from minigrad.utils import dataloader, sampler  # noqa: E402
dataset = _types.ModuleType(__name__ + ".dataset", "torch.utils.data.dataset's names.")
dataset.__dict__.update(
    Dataset=Dataset, IterableDataset=IterableDataset, TensorDataset=TensorDataset,
    StackDataset=StackDataset, ConcatDataset=ConcatDataset, ChainDataset=ChainDataset,
    Subset=Subset, random_split=random_split)
distributed = _types.ModuleType(__name__ + ".distributed", "torch.utils.data.distributed's names.")
distributed.DistributedSampler = DistributedSampler
for _m in (dataloader, sampler, dataset, distributed):
    _sys.modules[f"{__name__}.{_m.__name__.rsplit('.', 1)[1]}"] = _m
