"""minigrad.utils.data's samplers, iterable and combined datasets, and DataLoader's sampler=,
batch_sampler=, batch_size=None and worker options' checks, as torch.utils.data (the batches'
structure, lengths and errors; the random draws are minigrad's own, reproducible from
mg.manual_seed or generator=)."""
from collections import OrderedDict, namedtuple

import numpy as np
import pytest

import minigrad as mg
from minigrad.utils import data
from minigrad.utils.data import (DataLoader, Dataset, IterableDataset, TensorDataset,
                                 ConcatDataset, ChainDataset, StackDataset, Sampler,
                                 SequentialSampler, RandomSampler, SubsetRandomSampler,
                                 WeightedRandomSampler, BatchSampler, DistributedSampler,
                                 default_collate, default_convert)


class Stream(IterableDataset):
    def __init__(self, n, sized=False):
        self.n, self.sized = n, sized

    def __iter__(self):
        return iter(range(self.n))

    def __len__(self):
        if not self.sized:
            raise TypeError("Stream has no len()")
        return self.n


def _values(loader):
    return [b.tolist() if isinstance(b, mg.Tensor) else b for b in loader]


def test_the_modules_and_the_data_spellings_are_one():
    from minigrad.utils import sampler, dataloader
    assert data.RandomSampler is sampler.RandomSampler and data.DataLoader is dataloader.DataLoader
    assert mg.utils.data.BatchSampler is BatchSampler and data.get_worker_info() is None


@pytest.mark.parametrize("kw", [dict(batch_size=2), dict(batch_size=2, drop_last=True),
                                dict(batch_size=None), dict(batch_size=3)])
def test_an_iterable_dataset_is_batched_as_it_comes(torch, kw):
    class TStream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(5))
    got = _values(DataLoader(Stream(5), **kw))
    want = [b.tolist() if hasattr(b, "tolist") else b
            for b in torch.utils.data.DataLoader(TStream(), **kw)]
    assert got == want
    sized = DataLoader(Stream(5, sized=True), **kw)
    assert len(sized) == len(torch.utils.data.DataLoader(
        torch.utils.data.TensorDataset(torch.arange(5)), **kw)) == len(got)
    with pytest.raises(TypeError):
        len(DataLoader(Stream(5), **kw))                 # no len(), as PyTorch


def test_a_stream_without_len_can_be_listed_and_chained(torch):
    class Bare(IterableDataset):                         # no __len__ of its own
        def __iter__(self):
            return iter(range(5))

    class TBare(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(5))
    # list() asks for a length hint: "no length" must be a TypeError, as len() of PyTorch's
    assert _values(DataLoader(Bare(), batch_size=2)) == \
        [b.tolist() for b in torch.utils.data.DataLoader(TBare(), batch_size=2)]
    assert list(ChainDataset([Bare(), Bare()])) == list(torch.utils.data.ChainDataset(
        [TBare(), TBare()]))
    with pytest.raises(TypeError, match="Bare"):
        len(Bare())


@pytest.mark.parametrize("kw, name", [(dict(shuffle=True), "shuffle"),
                                      (dict(sampler=[0]), "sampler"),
                                      (dict(batch_sampler=[[0]]), "batch_sampler")])
def test_an_iterable_dataset_refuses_orders_as_torch(torch, kw, name):
    class TStream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(5))
    with pytest.raises(ValueError) as want:
        torch.utils.data.DataLoader(TStream(), **kw)
    with pytest.raises(ValueError) as got:
        DataLoader(Stream(5), **kw)
    assert str(want.value) in str(got.value)
    assert _values(DataLoader(Stream(3), shuffle=False)) == [[0], [1], [2]]


@pytest.mark.parametrize("kw", [
    dict(sampler=[0], shuffle=True), dict(batch_sampler=[[0]], batch_size=2),
    dict(batch_sampler=[[0]], shuffle=True), dict(batch_sampler=[[0]], sampler=[0]),
    dict(batch_sampler=[[0]], drop_last=True), dict(batch_sampler=[[0]], batch_size=None),
    dict(batch_size=None, drop_last=True), dict(num_workers=-1), dict(timeout=-1),
    dict(prefetch_factor=2), dict(persistent_workers=True),
    dict(multiprocessing_context="spawn"), dict(batch_size=0)])
def test_loader_option_errors_as_torch(torch, kw):
    with pytest.raises(ValueError) as want:
        torch.utils.data.DataLoader(list(range(5)), **kw)
    with pytest.raises(ValueError) as got:
        DataLoader(list(range(5)), **kw)
    words = str(want.value).split(" option")[0].split(" should")[0]   # the option's name
    assert words in str(got.value), (str(got.value), str(want.value))


def test_prefetch_factor_0_is_refused_not_an_empty_epoch():
    # no batch asked for ahead would be no batch at all (PyTorch's fails an assert at iter)
    with pytest.raises(ValueError, match="prefetch_factor should be a positive integer"):
        DataLoader(list(range(4)), num_workers=2, prefetch_factor=0)


def test_worker_init_fn_must_be_callable():
    # the worker processes themselves: tests/test_data_loader_workers.py
    with pytest.raises(TypeError, match="worker_init_fn"):
        DataLoader(TensorDataset(mg.arange(7)), num_workers=1, worker_init_fn=3)


def test_sampler_and_batch_sampler(torch):
    items = list(range(10, 20))
    assert _values(DataLoader(items, sampler=[3, 1, 1], batch_size=2)) == [[13, 11], [11]]
    assert _values(DataLoader(items, batch_sampler=[[0, 9], [5]])) == [[10, 19], [15]]
    bs = BatchSampler(SequentialSampler(range(7)), 3, drop_last=False)
    tbs = torch.utils.data.BatchSampler(torch.utils.data.SequentialSampler(range(7)), 3, False)
    assert list(bs) == list(tbs) and len(bs) == len(tbs) == 3
    bs = BatchSampler(range(7), 3, drop_last=True)
    assert list(bs) == [[0, 1, 2], [3, 4, 5]] and len(bs) == 2
    loader = DataLoader(items, batch_sampler=bs)
    assert len(loader) == 2 and loader.batch_size is None and not loader.drop_last
    ds = TensorDataset(mg.arange(10) * 2)                    # the one-gather path too
    assert [t.tolist() for (t,) in DataLoader(ds, batch_sampler=[[4, 1]])] == [[8, 2]]
    assert [t.tolist() for (t,) in DataLoader(ds, sampler=SubsetRandomSampler([7], 0))] == [[14]]


def test_batch_size_none_yields_items_as_they_are(torch):
    items = [(np.arange(2), 3, "a"), (np.arange(2) + 1, 4, "b")]
    got = list(DataLoader(items, batch_size=None))
    want = list(torch.utils.data.DataLoader(items, batch_size=None))
    assert len(got) == len(want) == len(DataLoader(items, batch_size=None)) == 2
    for g, w in zip(got, want):
        assert isinstance(g[0], mg.Tensor) and g[0].tolist() == w[0].tolist()
        assert g[1:] == tuple(w[1:])                      # numbers and strings unchanged
    mg.manual_seed(0)
    first = list(DataLoader(list(range(6)), batch_size=None, shuffle=True))
    assert sorted(first) == list(range(6))
    mg.manual_seed(0)
    assert list(DataLoader(list(range(6)), batch_size=None, shuffle=True)) == first


def test_random_sampler_is_reproducible_and_as_torch_in_shape(torch):
    perm = RandomSampler(range(6), generator=3)
    a, b = list(perm), list(perm)
    assert sorted(a) == sorted(b) == list(range(6)) and a != b     # a new order each epoch
    assert list(RandomSampler(range(6), generator=3)) == a
    mg.manual_seed(5)
    c = list(RandomSampler(range(6)))
    mg.manual_seed(5)
    assert list(RandomSampler(range(6))) == c
    many = list(RandomSampler(range(4), num_samples=10, generator=0))
    assert len(many) == 10 and sorted(many[:8]) == sorted(list(range(4)) * 2)
    assert len(set(many[8:])) == 2                        # part of a third permutation
    drawn = list(RandomSampler(range(3), replacement=True, num_samples=50, generator=0))
    assert len(drawn) == 50 and set(drawn) == {0, 1, 2}
    assert len(RandomSampler(range(4), num_samples=9)) == len(
        torch.utils.data.RandomSampler(range(4), num_samples=9)) == 9
    sub = SubsetRandomSampler(mg.tensor([5, 7, 9]), generator=1)
    assert sorted(sub) == [5, 7, 9] and len(sub) == 3


def test_an_mg_generator_reseeded_before_each_epoch_repeats_the_order(torch):
    g, tg = mg.Generator(), torch.Generator()
    loader = DataLoader(list(range(8)), batch_size=8, shuffle=True, generator=g)
    samplers = [RandomSampler(range(8), generator=g), SubsetRandomSampler(range(8), g),
                WeightedRandomSampler([1.0] * 8, 8, generator=g)]
    tloader = torch.utils.data.DataLoader(list(range(8)), batch_size=8, shuffle=True,
                                          generator=tg)
    assert loader.generator is g and tloader.generator is tg     # kept, as PyTorch's
    def epoch(it):
        return [b.tolist() if hasattr(b, "tolist") else b for b in it]
    for it, reseed in [(loader, g)] + [(s, g) for s in samplers] + [(tloader, tg)]:
        reseed.manual_seed(1)
        first = epoch(it)
        reseed.manual_seed(1)                             # the seed set now decides
        assert epoch(it) == first
        assert epoch(it) != first                         # and the next epoch moves on


def test_an_empty_data_source_is_refused_as_torch(torch):
    with pytest.raises(ValueError, match="num_samples=0"):
        torch.utils.data.DataLoader([], shuffle=True)
    with pytest.raises(ValueError, match="num_samples=0"):
        DataLoader([], shuffle=True)                      # not a ZeroDivisionError later
    source = [1, 2, 3]
    sampler = RandomSampler(source, replacement=True, num_samples=4)
    source.clear()                                        # emptied since
    with pytest.raises(ValueError, match="empty data_source"):
        list(sampler)
    whole = RandomSampler(source + [1])
    whole.data_source = []                                # its length follows the source
    assert list(whole) == [] and len(whole) == 0


def test_weighted_random_sampler():
    w = WeightedRandomSampler([0.0, 1.0, 3.0], num_samples=4000, generator=0)
    counts = np.bincount(list(w), minlength=3)
    assert counts[0] == 0 and 2.6 < counts[2] / counts[1] < 3.4 and len(w) == 4000
    assert list(WeightedRandomSampler(mg.tensor([1.0, 2.0]), 5, generator=4)) == \
        list(WeightedRandomSampler(np.array([1.0, 2.0]), 5, generator=4))
    once = list(WeightedRandomSampler([1, 1, 5, 0], 3, replacement=False, generator=0))
    assert sorted(once) == [0, 1, 2]


@pytest.mark.parametrize("call, error, words", [
    (lambda: RandomSampler(range(3), replacement=1.5), TypeError, ["replacement", "boolean"]),
    (lambda: RandomSampler(range(3), num_samples=0), ValueError, ["num_samples", "positive"]),
    (lambda: BatchSampler(range(3), 0, False), ValueError, ["batch_size", "positive"]),
    (lambda: BatchSampler(range(3), 2, "no"), ValueError, ["drop_last", "boolean"]),
    (lambda: WeightedRandomSampler([[1.0]], 2), ValueError, ["1d", "(1, 1)"]),
    (lambda: WeightedRandomSampler([1.0, -1.0], 2), ValueError, ["non-negative"]),
    (lambda: WeightedRandomSampler([0.0, 0.0], 2), ValueError, ["not all zero"]),
    (lambda: WeightedRandomSampler([1.0, 0.0], 2, replacement=False), ValueError,
     ["without replacement", "1 non-zero"]),
    (lambda: iter(Sampler()).__next__(), NotImplementedError, ["__iter__"]),
    (lambda: ConcatDataset([]), ValueError, ["empty"]),
    (lambda: ConcatDataset([Stream(2)]), TypeError, ["IterableDataset", "ChainDataset"]),
    (lambda: ChainDataset([[1, 2]]), TypeError, ["IterableDataset", "ConcatDataset"]),
    (lambda: StackDataset([1], b=[2]), ValueError, ["not both"]),
    (lambda: StackDataset([1], [2, 3]), ValueError, ["one length", "[1, 2]"]),
    (lambda: ConcatDataset([[1], [2]])[2], IndexError, ["index 2", "2 items"]),
    (lambda: DataLoader(iter([1, 2])), TypeError, ["IterableDataset"]),
    (lambda: DistributedSampler(range(5)), ValueError, ["no distributed process group",
                                                        "num_replicas", "rank"]),
    (lambda: DistributedSampler(range(5), 2, 2), ValueError, ["Invalid rank 2", "[0, 1]"]),
    (lambda: DistributedSampler(range(5), 2, -1), ValueError, ["Invalid rank -1"]),
    (lambda: DistributedSampler(range(5), 0, 0), ValueError, ["num_replicas", "positive"]),
    (lambda: DistributedSampler(range(5), 2, 0, seed=-1), ValueError, ["seed", "-1"]),
    (lambda: DistributedSampler(range(5), 2, 0).set_epoch(1.5), ValueError, ["epoch"]),
])
def test_bad_input(call, error, words):
    with pytest.raises(error) as e:
        call()
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_concat_chain_and_stack_datasets_as_torch(torch):
    tu = torch.utils.data
    cat, tcat = ConcatDataset([[1, 2], [], [3]]), tu.ConcatDataset([[1, 2], [], [3]])
    assert [cat[i] for i in range(-3, 3)] == [tcat[i] for i in range(-3, 3)]
    assert cat.cumulative_sizes == tcat.cumulative_sizes and len(cat) == 3

    class Items(Dataset):
        def __init__(self, xs):
            self.xs = xs

        def __getitem__(self, i):
            return self.xs[i]

        def __len__(self):
            return len(self.xs)
    both = Items([1]) + Items([2, 3])
    assert isinstance(both, ConcatDataset) and [both[i] for i in range(3)] == [1, 2, 3]
    chain = Stream(2, sized=True) + Stream(3, sized=True)
    assert isinstance(chain, ChainDataset) and list(chain) == [0, 1, 0, 1, 2] and len(chain) == 5
    assert _values(DataLoader(chain, batch_size=2)) == [[0, 1], [0, 1], [2]]
    st = StackDataset(x=[1, 2], y=["a", "b"])
    assert st[1] == tu.StackDataset(x=[1, 2], y=["a", "b"])[1] and len(st) == 2
    assert StackDataset([1, 2], [3, 4])[0] == (1, 3)
    batch = next(iter(DataLoader(st, batch_size=2)))
    assert batch["x"].tolist() == [1, 2] and batch["y"] == ["a", "b"]


def test_collate_and_convert_keep_mapping_and_namedtuple_types(torch):
    Pair = namedtuple("Pair", "a b")
    items = [OrderedDict(p=Pair(1, "s"), q={"r": 2.5}) for _ in range(3)]
    got = default_collate(items)
    want = torch.utils.data.default_collate(items)
    assert type(got) is type(want) is OrderedDict and isinstance(got["p"], Pair)
    assert got["p"].a.tolist() == want["p"].a.tolist() and got["p"].b == list(want["p"].b)
    assert str(got["q"]["r"].dtype) == str(want["q"]["r"].dtype).replace("torch.", "")
    conv = default_convert(OrderedDict(a=np.float32(1.5), b=[np.zeros(2)], c="s", d=3))
    tconv = torch.utils.data.default_convert(OrderedDict(a=np.float32(1.5), b=[np.zeros(2)],
                                                         c="s", d=3))
    assert type(conv) is OrderedDict and conv["a"].dtype == mg.float32
    assert conv["b"][0].tolist() == tconv["b"][0].tolist() and conv["c"] == "s" and conv["d"] == 3
    assert default_convert(np.array(["x"])).tolist() == ["x"]          # strings stay an array


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (2, 5, False),
                                                  (9, 3, False), (9, 3, True), (7, 2, True)])
def test_distributed_sampler_without_shuffle_is_torch_s(torch, n, replicas, drop_last):
    from torch.utils.data.distributed import DistributedSampler as TDS
    for rank in range(replicas):
        s = DistributedSampler(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        t = TDS(range(n), replicas, rank, shuffle=False, drop_last=drop_last)
        assert list(s) == list(t) and len(s) == len(t)


@pytest.mark.parametrize("n,replicas,drop_last", [(10, 3, False), (10, 3, True), (2, 5, False)])
def test_distributed_sampler_shuffled_shares_are_disjoint_and_padded(n, replicas, drop_last):
    """One permutation (seed + epoch) on every rank: the shares split it (padded by its
    first entries, or cut), and set_epoch changes it; the same seed and epoch repeat it."""
    def shares(epoch, seed=0):
        out = []
        for rank in range(replicas):
            s = DistributedSampler(range(n), replicas, rank, seed=seed, drop_last=drop_last)
            s.set_epoch(epoch)
            out.append(list(s))
        return out
    a = shares(0)
    size = n // replicas if drop_last else -(-n // replicas)
    assert all(len(x) == size for x in a)
    # rank r takes positions r, r + replicas, ... of the padded order: interleave them back
    order = [a[i % replicas][i // replicas] for i in range(size * replicas)]
    if drop_last:
        assert len(set(order)) == len(order) == size * replicas
    else:
        assert sorted(set(order)) == list(range(n))
        assert order[n:] == (order[:n] * replicas)[:len(order) - n]     # padding repeats
    assert shares(0) == a
    if n > 2:                                 # (2 items have 2 orders: a new one may repeat)
        assert shares(1) != a and shares(1) == shares(0, seed=1)   # seeded by seed + epoch


def test_an_endless_sampler_with_replacement_draws_as_it_goes():
    """minGPT's trainer: RandomSampler(replacement=True, num_samples=int(1e10)) drew all 10^10
    indices at its first epoch (an 80 GB array); now 32 at a time, as PyTorch."""
    sampler = RandomSampler(range(5), replacement=True, num_samples=int(1e10), generator=0)
    loader = DataLoader(list(range(5)), sampler=sampler, batch_size=4)
    it = iter(loader)
    batches = [next(it).tolist() for _ in range(20)]
    assert len(loader) == 2_500_000_000 and all(0 <= i < 5 for b in batches for i in b)
    assert sorted(set(i for b in batches for i in b)) == [0, 1, 2, 3, 4]
    assert len(list(RandomSampler(range(3), replacement=True, num_samples=70))) == 70


def test_torch_utils_data_submodules_import():
    """`from torch.utils.data.dataloader import DataLoader` (minGPT's trainer) and the other
    submodules PyTorch's names live in."""
    from minigrad.utils.data.dataloader import DataLoader as D, default_collate
    from minigrad.utils.data.dataset import Dataset as S, random_split
    from minigrad.utils.data.sampler import RandomSampler as R
    from minigrad.utils.data.distributed import DistributedSampler as DS
    assert (D, S, R, DS) == (DataLoader, Dataset, RandomSampler, data.DistributedSampler)
    assert default_collate is data.default_collate and random_split is data.random_split
    assert mg.utils.data.dataloader.DataLoader is DataLoader
    for sub, names in _SUBMODULES:
        for name in names.split():
            assert getattr(getattr(data, sub), name) is getattr(data, name), (sub, name)


_SUBMODULES = [("dataloader", "DataLoader default_collate get_worker_info"),
               ("dataset", "Dataset IterableDataset TensorDataset StackDataset ConcatDataset "
                           "ChainDataset Subset random_split"),
               ("sampler", "Sampler SequentialSampler RandomSampler BatchSampler "
                           "SubsetRandomSampler WeightedRandomSampler"),
               ("distributed", "DistributedSampler")]


def test_the_submodules_hold_torchs_names(torch):
    for sub, names in _SUBMODULES:
        for name in names.split():
            assert getattr(getattr(torch.utils.data, sub), name) is \
                getattr(torch.utils.data, name), (sub, name)
