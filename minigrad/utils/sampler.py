"""Samplers, as torch.utils.data's: iterables of dataset indices (or, BatchSampler, of lists
of them) that a DataLoader's `sampler=` / `batch_sampler=` take.

Random samplers draw from their `generator` (an mg.Generator, a NumPy Generator, or an int
seed: one generator made at construction, so each epoch draws anew and reproducibly) or, by
default, from the CPU generator that mg.manual_seed seeds. The numbers are minigrad's own,
not PyTorch's.
"""
from minigrad import backend
from minigrad.backend import np


class Sampler:
    """An iterable of indices into a dataset; a subclass defines __iter__ (and __len__ where
    it knows its length). `data_source` is accepted as PyTorch's, and unused."""

    def __init__(self, data_source=None):
        pass

    def __iter__(self):
        raise NotImplementedError(f"{type(self).__name__} must define __iter__")


class SequentialSampler(Sampler):
    """0, 1, ..., len(data_source) - 1."""

    def __init__(self, data_source):
        self.data_source = data_source

    def __iter__(self):
        return iter(range(len(self.data_source)))

    def __len__(self):
        return len(self.data_source)


def _rng(generator, op):
    """The generator a sampler keeps: an int seed makes one now (each epoch then draws a
    new, reproducible order); an mg.Generator is kept itself, not its NumPy generator of
    the moment, so its manual_seed / set_state later still decide the next epoch's order."""
    if generator is None or not backend.is_integer(generator):
        backend.host_rng(generator, op)               # checked now, looked up each epoch
        return generator
    return backend.host_rng(generator, op)


def _positive_int(op, name, value):
    if not backend.is_integer(value) or isinstance(value, bool) or value <= 0:
        raise ValueError(f"{op}: {name} should be a positive integer value, but got "
                         f"{name}={value!r}")
    return int(value)


def _bool(op, name, value, error=TypeError):
    if value not in (True, False) or isinstance(value, str):
        raise error(f"{op}: {name} should be a boolean value, but got {name}={value!r}")
    return bool(value)


class RandomSampler(Sampler):
    """The indices in a random order: each once (a permutation; `num_samples` more than
    len(data_source) takes whole permutations, then part of one, as PyTorch), or, with
    `replacement`, `num_samples` independent draws (default len(data_source))."""

    def __init__(self, data_source, replacement=False, num_samples=None, generator=None):
        self.data_source = data_source
        self.replacement = _bool("RandomSampler", "replacement", replacement)
        self._num_samples = None if num_samples is None else \
            _positive_int("RandomSampler", "num_samples", num_samples)
        self.generator = _rng(generator, "RandomSampler")
        if self.num_samples == 0:                     # as PyTorch: refused now
            raise ValueError("RandomSampler: num_samples should be a positive integer value, "
                             "but got num_samples=0 (the data_source is empty)")

    @property
    def num_samples(self):
        return len(self.data_source) if self._num_samples is None else self._num_samples

    def __iter__(self):
        n, k = len(self.data_source), self.num_samples
        if n == 0:                                    # emptied since: nothing to draw from
            if k:
                raise ValueError(f"RandomSampler: cannot draw num_samples={k} from an empty "
                                 f"data_source")
            return
        rng = backend.host_rng(self.generator, "RandomSampler")
        if self.replacement:            # drawn 32 at a time, as PyTorch: num_samples may be
            for start in range(0, k, 32):    # endless in effect (minGPT's int(1e10))
                yield from rng.integers(0, n, size=min(32, k - start)).tolist()
            return
        for _ in range(k // n):
            yield from rng.permutation(n).tolist()
        if k % n:
            yield from rng.permutation(n)[:k % n].tolist()

    def __len__(self):
        return self.num_samples


class SubsetRandomSampler(Sampler):
    """The given `indices`, in a random order (each once)."""

    def __init__(self, indices, generator=None):
        self.indices = indices.tolist() if hasattr(indices, "tolist") else indices
        self.generator = _rng(generator, "SubsetRandomSampler")

    def __iter__(self):
        order = backend.host_rng(self.generator, "SubsetRandomSampler").permutation(
            len(self.indices))
        return iter([self.indices[i] for i in order.tolist()])

    def __len__(self):
        return len(self.indices)


class WeightedRandomSampler(Sampler):
    """`num_samples` indices in 0..len(weights)-1, index i drawn with probability
    weights[i] / sum(weights) (weights need not add up to 1); without `replacement` each at
    most once. Bad weights are refused here, not at the first epoch as PyTorch."""

    def __init__(self, weights, num_samples, replacement=True, generator=None):
        op = "WeightedRandomSampler"
        self.num_samples = _positive_int(op, "num_samples", num_samples)
        self.replacement = _bool(op, "replacement", replacement)
        w = backend.to_host(weights.tolist() if hasattr(weights, "tolist") else list(weights))
        if w.ndim != 1 or w.dtype.kind not in "biuf":
            raise ValueError(f"{op}: weights should be a 1d sequence of numbers, but given "
                             f"weights have shape {tuple(w.shape)} and dtype {w.dtype}")
        w = w.astype(np.float64)
        if not (np.isfinite(w).all() and (w >= 0).all() and w.sum() > 0):
            raise ValueError(f"{op}: weights must be finite, non-negative and not all zero, "
                             f"got {w.tolist()}")
        if not self.replacement and self.num_samples > int((w > 0).sum()):
            raise ValueError(f"{op}: cannot draw num_samples={self.num_samples} without "
                             f"replacement from {int((w > 0).sum())} non-zero weights")
        self.weights = w
        self.generator = _rng(generator, op)

    def __iter__(self):
        rng = backend.host_rng(self.generator, "WeightedRandomSampler")
        p = self.weights / self.weights.sum()
        return iter(rng.choice(len(p), size=self.num_samples, replace=self.replacement,
                               p=p).tolist())

    def __len__(self):
        return self.num_samples


class BatchSampler(Sampler):
    """Lists of `batch_size` indices from `sampler`, in its order; `drop_last` leaves out a
    last, smaller list."""

    def __init__(self, sampler, batch_size, drop_last):
        self.sampler = sampler
        self.batch_size = _positive_int("BatchSampler", "batch_size", batch_size)
        self.drop_last = _bool("BatchSampler", "drop_last", drop_last, ValueError)

    def __iter__(self):
        batch = []
        for index in self.sampler:
            batch.append(index)
            if len(batch) == self.batch_size:
                yield batch
                batch = []
        if batch and not self.drop_last:
            yield batch

    def __len__(self):
        n = len(self.sampler)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)


class DistributedSampler(Sampler):
    """Rank `rank`'s share of the dataset's indices when `num_replicas` processes each train
    on their own, as torch.utils.data.distributed.DistributedSampler: the (shuffled) indices,
    padded by repeating from the start until every rank gets as many (or, drop_last, cut to
    a multiple of num_replicas), and then every num_replicas-th from position `rank`, so the
    shares are disjoint (but for the padding) and together cover the dataset.

    minigrad has no process group: num_replicas and rank must be given. shuffle=True orders
    by a permutation seeded with seed + epoch (set_epoch(epoch) before each epoch gives a new
    order, the same on every rank): minigrad's own permutation, not PyTorch's randperm, so
    the shares have PyTorch's sizes and structure but not its indices. shuffle=False gives
    PyTorch's indices exactly."""

    def __init__(self, dataset, num_replicas=None, rank=None, shuffle=True, seed=0,
                 drop_last=False):
        op = "DistributedSampler"
        if num_replicas is None or rank is None:
            raise ValueError(f"{op}: minigrad has no distributed process group to ask: give "
                             f"num_replicas (the number of processes) and rank (this one's, "
                             f"0..num_replicas-1), got num_replicas={num_replicas!r}, "
                             f"rank={rank!r}")
        self.num_replicas = _positive_int(op, "num_replicas", num_replicas)
        if not backend.is_integer(rank) or isinstance(rank, bool) or \
                not 0 <= rank < self.num_replicas:
            raise ValueError(f"{op}: Invalid rank {rank!r}, rank should be in the interval "
                             f"[0, {self.num_replicas - 1}]")
        if not backend.is_integer(seed) or isinstance(seed, bool) or seed < 0:
            raise ValueError(f"{op}: seed should be a non-negative integer, got {seed!r}")
        self.dataset, self.rank, self.seed, self.epoch = dataset, int(rank), int(seed), 0
        self.shuffle = _bool(op, "shuffle", shuffle)
        self.drop_last = _bool(op, "drop_last", drop_last)
        n, r = len(dataset), self.num_replicas
        # drop_last: the largest multiple of r that fits; else the smallest that holds all
        self.num_samples = n // r if self.drop_last else -(-n // r)
        self.total_size = self.num_samples * r

    def set_epoch(self, epoch):
        """The epoch whose order the next iteration gives (seed + epoch seeds it)."""
        if not backend.is_integer(epoch) or isinstance(epoch, bool) or epoch < 0:
            raise ValueError(f"DistributedSampler.set_epoch: epoch should be a non-negative "
                             f"integer, got {epoch!r}")
        self.epoch = int(epoch)

    def __iter__(self):
        n = len(self.dataset)
        if self.shuffle:
            indices = backend.host_rng(self.seed + self.epoch, "DistributedSampler") \
                .permutation(n).tolist()
        else:
            indices = list(range(n))
        if self.drop_last:
            indices = indices[:self.total_size]
        elif indices:                                 # repeat from the start, as often as needed
            pad = self.total_size - n
            indices += (indices * -(-pad // n))[:pad]
        return iter(indices[self.rank:self.total_size:self.num_replicas])

    def __len__(self):
        return self.num_samples
