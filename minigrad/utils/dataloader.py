"""DataLoader, as torch.utils.data's: batches of a map-style dataset in a sampler's order
(in order, shuffled, or `sampler=` / `batch_sampler=` yours), or of an IterableDataset's
items as they come; `batch_size=None` yields the items unbatched.

num_workers=0 (the default) loads in the calling process, below. num_workers > 0 starts
that many worker processes, as PyTorch's: each fetches and collates whole batches, handed
out in the sampler's order (or as they come, in_order=False), the same batches as with 0;
prefetch_factor, persistent_workers, worker_init_fn, timeout and multiprocessing_context
act as PyTorch's, and in a worker get_worker_info() tells an IterableDataset how to shard
its stream (unsharded, each worker yields it all, as PyTorch's). The machinery, and how
workers are seeded, is in utils/dataloader_workers.py. `pin_memory` and
`pin_memory_device` are accepted and do nothing (no page-locked memory on the CPU).
"""
import itertools

from minigrad import backend
from minigrad.utils.data import (IterableDataset, Subset, TensorDataset, default_collate,
                                 default_convert)
from minigrad.utils.sampler import BatchSampler, RandomSampler, SequentialSampler, _rng
from minigrad.utils.dataloader_workers import (WorkerIter, get_worker_info,  # noqa: F401
                                               start_method, warn_in_process)


class DataLoader:
    """Batches of `batch_size` items of `dataset`, in order or shuffled anew each epoch;
    `drop_last` leaves out a last, smaller batch. `generator` (an mg.Generator, an int
    seed or a NumPy Generator) draws the orders; by default the CPU generator that
    mg.manual_seed seeds. The arguments are PyTorch's, in its order."""

    _initialized = False
    # the batching built from these at construction would not see a new value; PyTorch
    # refuses setting them too (the others, `generator` among them, it lets through)
    _FIXED = ("batch_size", "batch_sampler", "sampler", "drop_last", "dataset",
              "persistent_workers")

    def __init__(self, dataset, batch_size=1, shuffle=None, sampler=None, batch_sampler=None,
                 num_workers=0, collate_fn=None, pin_memory=False, drop_last=False, timeout=0,
                 worker_init_fn=None, multiprocessing_context=None, generator=None, *,
                 prefetch_factor=None, persistent_workers=False, pin_memory_device="",
                 in_order=True):
        self._check_workers(num_workers, timeout, prefetch_factor, persistent_workers,
                            multiprocessing_context, worker_init_fn)
        if batch_size is not None and (not backend.is_integer(batch_size) or
                                       isinstance(batch_size, bool) or batch_size < 1):
            raise ValueError(f"DataLoader: batch_size must be a positive integer (or None: "
                             f"no batching), got {batch_size!r}")
        if collate_fn is not None and not callable(collate_fn):
            raise TypeError(f"DataLoader: collate_fn must be a function of a list of items, "
                            f"got {type(collate_fn).__name__}")
        for name, flag in (("shuffle", shuffle), ("drop_last", drop_last)):
            if (flag is not None or name == "drop_last") and (     # shuffle=None: the default
                    flag not in (True, False) or isinstance(flag, str)):   # "no" would be true
                raise TypeError(f"DataLoader: {name} must be True or False, got {flag!r}")
        self._iterable = isinstance(dataset, IterableDataset)
        if self._iterable:
            for name, value in (("shuffle", shuffle), ("sampler", sampler),
                                ("batch_sampler", batch_sampler)):
                if value is not None and value is not False:     # PyTorch's words
                    raise ValueError(f"DataLoader with IterableDataset: expected unspecified "
                                     f"{name} option, but got {name}={value!r}")
        elif not hasattr(dataset, "__getitem__") or (
                sampler is None and batch_sampler is None and not hasattr(dataset, "__len__")):
            raise TypeError(f"DataLoader: the dataset must support len() and indexing (a "
                            f"Dataset, a list), or be an IterableDataset, got "
                            f"{type(dataset).__name__}")
        if sampler is not None and shuffle:
            raise ValueError("DataLoader: sampler option is mutually exclusive with shuffle")
        if batch_sampler is not None:
            if batch_size != 1 or shuffle or sampler is not None or drop_last:
                raise ValueError("DataLoader: batch_sampler option is mutually exclusive with "
                                 "batch_size, shuffle, sampler, and drop_last")
            batch_size, drop_last = None, False
        elif batch_size is None and drop_last:
            raise ValueError("DataLoader: batch_size=None option disables auto-batching and "
                             "is mutually exclusive with drop_last")
        self.dataset, self.batch_size, self.drop_last = dataset, batch_size, bool(drop_last)
        self.shuffle, self.collate_fn = bool(shuffle), collate_fn
        # an int seed makes one generator now, so each epoch draws a new, reproducible order
        self.generator = _rng(generator, "DataLoader")
        if sampler is None and not self._iterable:
            sampler = RandomSampler(dataset, generator=self.generator) if shuffle else \
                SequentialSampler(dataset)
        if batch_size is not None and batch_sampler is None and not self._iterable:
            batch_sampler = BatchSampler(sampler, batch_size, self.drop_last)
        self.sampler, self.batch_sampler = sampler, batch_sampler
        self.num_workers, self.timeout, self.worker_init_fn = num_workers, timeout, \
            worker_init_fn
        self.pin_memory, self.pin_memory_device = bool(pin_memory), pin_memory_device
        self.prefetch_factor, self.persistent_workers = prefetch_factor, persistent_workers
        self.multiprocessing_context, self.in_order = multiprocessing_context, in_order
        if num_workers:
            start_method(multiprocessing_context)        # checked now, as PyTorch's
        self._workers = None                    # persistent_workers: the epochs' iterator
        self._initialized = True

    def __setattr__(self, name, value):
        if self._initialized and name in self._FIXED:
            raise ValueError(f"DataLoader: {name} attribute should not be set after "
                             f"DataLoader is initialized; make a new DataLoader with "
                             f"{name}={value!r}")
        super().__setattr__(name, value)

    @staticmethod
    def _check_workers(num_workers, timeout, prefetch_factor, persistent_workers, context,
                       worker_init_fn):
        """PyTorch's checks of the worker options."""
        if not backend.is_integer(num_workers) or num_workers < 0:
            raise ValueError(f"DataLoader: num_workers option should be a non-negative "
                             f"integer, got {num_workers!r}; num_workers=0 loads in this "
                             f"process")
        if not isinstance(timeout, (int, float)) or timeout < 0:
            raise ValueError(f"DataLoader: timeout option should be non-negative, got "
                             f"{timeout!r}")
        if num_workers == 0 and prefetch_factor is not None:
            raise ValueError("DataLoader: prefetch_factor option could only be specified "
                             "with num_workers > 0; set prefetch_factor to None")
        # 0 would ask for no batch at all: an empty epoch (PyTorch's fails an assert)
        if prefetch_factor is not None and (not backend.is_integer(prefetch_factor) or
                                            isinstance(prefetch_factor, bool) or
                                            prefetch_factor < 1):
            raise ValueError(f"DataLoader: prefetch_factor should be a positive integer (the "
                             f"batches each worker loads ahead), got {prefetch_factor!r}")
        if persistent_workers and num_workers == 0:
            raise ValueError("DataLoader: persistent_workers option needs num_workers > 0")
        if context is not None and num_workers == 0:
            raise ValueError("DataLoader: multiprocessing_context can only be used with "
                             "multi-process loading (num_workers > 0), but got num_workers=0")
        if worker_init_fn is not None and not callable(worker_init_fn):
            raise TypeError(f"DataLoader: worker_init_fn must be a function of the worker "
                            f"id, got {type(worker_init_fn).__name__}")

    def __len__(self):
        return len(_Length(self))

    def __iter__(self):
        context = start_method(self.multiprocessing_context) if self.num_workers else None
        if context is not None:
            return self._worker_iter(context)
        if self.num_workers:
            warn_in_process()               # no fork here, and no context given
        return _InProcessIter(self)

    def _worker_iter(self, context):
        if not self.persistent_workers:
            return WorkerIter(self, context, _Fetch(self), _Length(self))
        if self._workers is None or not self._workers.running:
            self._workers = WorkerIter(self, context, _Fetch(self), _Length(self))
        else:
            self._workers.reset(self)
        return self._workers


class _Length:
    """len() of a loader's epoch: what its iterators keep to answer len(), as PyTorch's
    (an iterator may outlive its loader)."""

    def __init__(self, loader):
        self.iterable, self.dataset = loader._iterable, loader.dataset
        self.batch_size, self.drop_last = loader.batch_size, loader.drop_last
        self.sampler = loader.batch_sampler if loader.batch_sampler is not None else \
            loader.sampler

    def __len__(self):
        if self.iterable:       # the dataset's own length, if it has one (a TypeError if not)
            n = len(self.dataset)
            if self.batch_size is None:
                return n
            return n // self.batch_size if self.drop_last else -(-n // self.batch_size)
        return len(self.sampler)


class _InProcessIter:
    """num_workers=0's batches, made in this process. As PyTorch's, an error making one
    batch (in the dataset or collate_fn) is raised and the next call goes on with the next
    batch, so a loop may skip a bad one (as with workers); the epoch does not end there."""

    def __init__(self, loader):
        self._fetch, self._dataset, self._length = _Fetch(loader), loader.dataset, \
            _Length(loader)
        if loader._iterable:
            self._order, self._items = None, iter(loader.dataset)
        else:
            self._order = iter(loader.sampler if loader.batch_sampler is None
                               else loader.batch_sampler)

    def __iter__(self):
        return self

    def __len__(self):
        return len(self._length)

    def __next__(self):
        if self._order is not None:
            return self._fetch.batch(self._dataset, next(self._order))
        try:
            return self._fetch.next_batch(self._items)
        except StopIteration:
            self._items = iter(())          # ended: the stream is not asked again
            raise


class _Fetch:
    """How a loader makes its batches, where they are made (this process or a worker): a
    map-style dataset's batch at a sampler's indices, or an IterableDataset's next batch."""

    def __init__(self, loader):
        self.iterable, self.batched = loader._iterable, loader.batch_sampler is not None
        self.batch_size, self.drop_last = loader.batch_size, loader.drop_last
        self.collate_fn = loader.collate_fn

    def batch(self, dataset, index):
        """The batch at a batch sampler's `index` list, or (batch_size=None) the item at a
        sampler's index."""
        if not self.batched:
            return (self.collate_fn or default_convert)(dataset[index])
        if self.collate_fn is None:
            rows = _tensor_rows(dataset, index)
            if rows is not None:
                return rows
        # a sampler's keys as they are (a dict's may be strings), NumPy ints made ints
        items = [dataset[int(i) if backend.is_integer(i) else i] for i in index]
        return (self.collate_fn or default_collate)(items)

    def next_batch(self, items):
        """An IterableDataset's next batch from its iterator `items` (StopIteration where
        none is left). The items are taken first, then collated: an error collating one
        batch loses that batch only, as PyTorch's."""
        if self.batch_size is None:
            return (self.collate_fn or default_convert)(next(items))
        batch = list(itertools.islice(items, self.batch_size))
        if not batch or self.drop_last and len(batch) < self.batch_size:
            raise StopIteration
        return (self.collate_fn or default_collate)(batch)


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
