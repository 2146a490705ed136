"""minigrad.utils.data as torch.utils.data: every sample once per epoch, a new reproducible
order each epoch when shuffled, PyTorch's batch structure and dtypes, random_split's
lengths; TensorDataset batches are one indexing per tensor, on the tensors' device."""
import numpy as np
import pytest

import minigrad as mg
from minigrad.utils.data import (DataLoader, Dataset, IterableDataset, TensorDataset, Subset,
                                 random_split, default_collate)


def _epoch(loader):
    return [b[1].tolist() for b in loader]


def test_shuffled_epochs_cover_every_sample_once(device):
    X = mg.arange(20.0, device=device).reshape(10, 2)
    y = mg.arange(10, device=device)
    loader = DataLoader(TensorDataset(X, y), batch_size=4, shuffle=True)
    mg.manual_seed(0)
    first, second = _epoch(loader), _epoch(loader)
    assert [len(b) for b in first] == [4, 4, 2] and len(loader) == 3
    for epoch in (first, second):
        assert sorted(sum(epoch, [])) == list(range(10))
    assert first != second                               # a new order each epoch
    mg.manual_seed(0)
    assert _epoch(loader) == first                       # the same seed, the same orders
    for xb, yb in loader:                                # rows stay paired with labels
        assert xb.device == device and xb.shape[1] == 2
        assert xb[:, 0].tolist() == [2.0 * i for i in yb.tolist()]


def test_generator_seed_and_drop_last():
    ds = TensorDataset(mg.arange(10))
    a = DataLoader(ds, batch_size=3, shuffle=True, drop_last=True, generator=7)
    b = DataLoader(ds, batch_size=3, shuffle=True, drop_last=True, generator=7)
    mg.manual_seed(1)
    orders_a = [[t.tolist() for (t,) in a] for _ in range(2)]
    mg.manual_seed(2)                                    # the loader's own generator decides
    assert orders_a == [[t.tolist() for (t,) in b] for _ in range(2)]
    assert len(a) == 3 and all(len(x) == 3 for x in orders_a[0])
    assert [t.tolist() for (t,) in DataLoader(ds, batch_size=4)] == [[0, 1, 2, 3], [4, 5, 6, 7],
                                                                     [8, 9]]


def test_a_batch_is_a_copy():
    X = mg.zeros(4, 2)
    (xb,) = next(iter(DataLoader(TensorDataset(X), batch_size=2)))
    xb += 1
    assert X.tolist() == [[0.0, 0.0]] * 4


def test_default_collate_as_torch():
    torch = pytest.importorskip("torch")
    items = [(np.full(3, i, np.float32), i, 0.5 * i, {"id": i, "name": f"s{i}"},
              [i, -i]) for i in range(4)]
    got = next(iter(DataLoader(items, batch_size=4)))
    want = next(iter(torch.utils.data.DataLoader(items, batch_size=4)))
    assert isinstance(got, tuple) and len(got) == len(want)
    for g, w in [(got[0], want[0]), (got[1], want[1]), (got[2], want[2]),
                 (got[3]["id"], want[3]["id"])]:
        assert str(g.dtype) == str(w.dtype).replace("torch.", "") and g.shape == tuple(w.shape)
        np.testing.assert_array_equal(g.numpy(), w.numpy())
    assert got[3]["name"] == want[3]["name"]
    assert [t.tolist() for t in got[4]] == [t.tolist() for t in want[4]]  # field by field
    stacked = default_collate([mg.ones(2, 3), mg.zeros(2, 3)])
    assert stacked.shape == (2, 2, 3)


def test_default_collate_dtypes_and_shapes_as_torch(torch):
    from torch.utils.data import default_collate as t_collate
    for items in ([1, 2.5], [2.5, 1], [True, 2], [True, False], [3, 4], [1.0, 2.0]):
        assert str(default_collate(items).dtype) == str(t_collate(items).dtype)[6:], items
    arrays = [np.zeros(2), np.zeros(3)]
    with pytest.raises(RuntimeError):
        t_collate(arrays)
    with pytest.raises(ValueError, match=r"one shape.*\(2,\), \(3,\)"):
        default_collate(arrays)                          # not NumPy's "inhomogeneous"


def test_a_sampler_s_keys_reach_the_dataset_as_they_are(torch):
    table = {"a": 1, "b": 2, "c": 3}                     # a map-style dataset keyed by name
    for kw in (dict(sampler=["c", "a", "b"], batch_size=2), dict(batch_sampler=[["b", "c"]]),
               dict(sampler=[np.int64(0)], batch_size=1)):
        ds = [7] if "sampler" in kw and kw["sampler"][0] == 0 else table
        want = [b.tolist() for b in torch.utils.data.DataLoader(ds, **kw)]
        assert [b.tolist() for b in DataLoader(ds, **kw)] == want


def test_a_namedtuple_stays_one_and_a_subset_takes_a_list_of_indices():
    from collections import namedtuple
    Pair = namedtuple("Pair", "x y")
    batch = default_collate([Pair(mg.ones(2), 1), Pair(mg.zeros(2), 2)])
    assert isinstance(batch, Pair) and batch.x.shape == (2, 2) and batch.y.tolist() == [1, 2]
    data = TensorDataset(mg.arange(5.0))
    assert Subset(data, [4, 2, 0])[[0, 2]][0].tolist() == [4.0, 0.0]


class Squares(Dataset):
    def __len__(self):
        return 5

    def __getitem__(self, i):
        return mg.tensor([float(i)]), i * i


def test_a_tensor_dataset_subclass_with_its_own_getitem_is_called_per_item():
    """The one-gather shortcut is for TensorDataset's own rows: a subclass that transforms
    its items (augmentation) gets every item through its __getitem__, as PyTorch; one that
    does not override it keeps the shortcut."""
    class Scaled(TensorDataset):
        def __getitem__(self, i):
            x, y = super().__getitem__(i)
            return x * 100, y

    class Plain(TensorDataset):
        pass
    x, y = mg.arange(4.0).reshape(2, 2), mg.tensor([0, 1])
    xb, yb = next(iter(DataLoader(Scaled(x, y), batch_size=2)))
    assert xb.tolist() == [[0.0, 100.0], [200.0, 300.0]] and yb.tolist() == [0, 1]
    assert next(iter(DataLoader(Plain(x, y), batch_size=2)))[0].tolist() == x.tolist()


def test_a_dataset_subclass_and_subset():
    xb, yb = next(iter(DataLoader(Squares(), batch_size=5)))
    assert xb.shape == (5, 1) and yb.tolist() == [0, 1, 4, 9, 16]
    sub = Subset(Squares(), [4, 0])
    assert len(sub) == 2 and sub[0][1] == 16


@pytest.mark.parametrize("n, lengths", [(10, [7, 3]), (10, [0.7, 0.3]), (11, [0.5, 0.5]),
                                        (7, [0.2, 0.3, 0.5]), (5, [5, 0])])
def test_random_split_lengths_as_torch(n, lengths):
    torch = pytest.importorskip("torch")
    parts = random_split(range(n), lengths, generator=0)
    want = torch.utils.data.random_split(range(n), lengths)
    assert [len(p) for p in parts] == [len(w) for w in want]
    assert sorted(i for p in parts for i in p) == list(range(n))


def test_random_split_takes_a_tensor_or_array_of_lengths():
    assert [len(p) for p in random_split(range(6), mg.tensor([2, 4]))] == [2, 4]
    halves = random_split(range(6), np.array([0.5, 0.5], dtype=np.float32))
    assert [len(p) for p in halves] == [3, 3]


def test_on_the_gpu_stand_in(spy):
    X = mg.arange(6.0, device=spy).reshape(3, 2)
    (xb,) = next(iter(DataLoader(TensorDataset(X), batch_size=2, shuffle=True)))
    assert xb.device == spy and xb.shape == (2, 2)


@pytest.mark.parametrize("call, error, words", [
    (lambda: DataLoader([1, 2], batch_size=0), ValueError, ["batch_size", "positive"]),
    (lambda: DataLoader(iter([1, 2])), TypeError, ["len()", "indexing"]),
    (lambda: DataLoader([1], generator="x"), TypeError, ["generator", "int seed"]),
    (lambda: DataLoader([1], collate_fn=3), TypeError, ["collate_fn"]),
    (lambda: TensorDataset(mg.ones(3), mg.ones(4)), ValueError, ["(3,)", "(4,)"]),
    (lambda: TensorDataset(mg.tensor(1.0)), TypeError, ["at least one dim"]),
    (lambda: random_split(range(5), [2, 2]), ValueError, ["add up", "5"]),
    (lambda: random_split(range(5), [0.5, 0.6]), ValueError, ["fractions"]),
    (lambda: next(iter(DataLoader([object()]))), TypeError, ["cannot batch", "object"]),
    (lambda: next(iter(DataLoader([(1, 2), (3,)], batch_size=2))), ValueError,
     ["one length"]),
])
def test_bad_input(call, error, words):
    with pytest.raises(error) as e:
        call()
    for w in words:
        assert w in str(e.value), (w, str(e.value))


def test_a_subset_of_a_tensor_dataset_batches_as_item_by_item():
    """Through Subsets of a TensorDataset (random_split's, and a Subset of one) a batch is one
    gather per tensor: the same batches, order, dtypes and seeded shuffles as collating the
    items one by one (which an explicit collate_fn still does), and still a copy."""
    X = mg.arange(60.0).reshape(20, 3)
    y = mg.arange(20) * 7
    b = mg.tensor(np.arange(20) % 2 == 0)
    train, rest = random_split(TensorDataset(X, y, b), [13, 7], generator=3)
    nested = Subset(rest, [6, 0, 3, 3, 5])
    for ds in (train, rest, nested):
        for kw in (dict(batch_size=4), dict(batch_size=5, shuffle=True, drop_last=True),
                   dict(batch_size=64, shuffle=True, generator=11)):
            mg.manual_seed(2)
            fast = [batch for _ in range(2) for batch in DataLoader(ds, **kw)]
            mg.manual_seed(2)
            slow = [batch for _ in range(2)
                    for batch in DataLoader(ds, collate_fn=default_collate, **kw)]
            assert len(fast) == len(slow)
            for f, s in zip(fast, slow):
                assert isinstance(f, tuple) and len(f) == 3
                for ft, st in zip(f, s):
                    assert ft.dtype == st.dtype and ft.shape == st.shape
                    assert ft.tolist() == st.tolist()
    assert next(iter(DataLoader(nested, batch_size=5)))[1].tolist() == [
        rest[i][1].item() for i in (6, 0, 3, 3, 5)]
    (xb, _, _), = [next(iter(DataLoader(train, batch_size=13)))]
    xb += 1000
    assert X.max().item() == 59.0


def test_a_subset_of_an_augmenting_dataset_still_sees_every_item():
    class Scaled(TensorDataset):
        def __getitem__(self, i):
            x, = super().__getitem__(i)
            return (x * 100,)

    class Picky(Subset):                                 # its own __getitem__: per item
        def __getitem__(self, i):
            return (super().__getitem__(i)[0] + 1,)
    sub = Subset(Scaled(mg.arange(4.0)), [3, 1])
    assert next(iter(DataLoader(sub, batch_size=2)))[0].tolist() == [300.0, 100.0]
    picky = Picky(TensorDataset(mg.arange(4.0)), [3, 1])
    assert next(iter(DataLoader(picky, batch_size=2)))[0].tolist() == [4.0, 2.0]


def test_the_batching_attributes_are_fixed_after_construction_as_torch(torch):
    # setting batch_size used to be silently ignored: the BatchSampler kept the old one
    data = list(range(10))
    ours, theirs = DataLoader(data, batch_size=2), torch.utils.data.DataLoader(data, batch_size=2)
    for name, value in (("batch_size", 5), ("batch_sampler", None), ("sampler", None),
                        ("drop_last", True), ("dataset", [1]), ("persistent_workers", False)):
        with pytest.raises(ValueError, match=f"{name} attribute should not be set"):
            setattr(theirs, name, value)
        with pytest.raises(ValueError, match=f"{name} attribute should not be set after "
                                             f"DataLoader is initialized; make a new"):
            setattr(ours, name, value)
    for name, value in (("generator", None), ("collate_fn", None), ("timeout", 1)):
        setattr(theirs, name, value)                    # the others may change, as in torch
        setattr(ours, name, value)
    assert len(ours) == 5 and next(iter(ours)).tolist() == [0, 1]


class _Flaky:
    """Item i is i, but fetching item 1 raises (a plain class: torch's loader takes it too)."""

    def __len__(self):
        return 5

    def __getitem__(self, i):
        if i == 1:
            raise ValueError("item 1 is bad")
        return i


def _skipping(it):
    """The batches of iterator `it` as lists, "E" for each that raised (and was skipped)."""
    out = []
    while True:
        try:
            batch = next(it)
        except StopIteration:
            return out
        except ValueError:
            batch = "E"
        out.append(batch.tolist() if hasattr(batch, "tolist") else batch)


def test_a_loop_may_skip_a_batch_that_raised_and_go_on_as_torch(torch):
    # num_workers=0: the epoch goes on after an error in the dataset or collate_fn (it was
    # silently cut short there), as PyTorch's and as with workers
    def collate(items):
        if items[0] == 2:
            raise ValueError("batch [2, 3] is bad")
        return items

    class TorchStream(torch.utils.data.IterableDataset):
        def __iter__(self):
            return iter(range(7))

    class Stream(IterableDataset):
        def __iter__(self):
            return iter(range(7))

    for kw in (dict(batch_size=None), dict(batch_size=2)):
        want = _skipping(iter(torch.utils.data.DataLoader(_Flaky(), **kw)))
        assert _skipping(iter(DataLoader(_Flaky(), **kw))) == want == \
            ([0, "E", 2, 3, 4] if kw["batch_size"] is None else ["E", [2, 3], [4]])
    want = _skipping(iter(torch.utils.data.DataLoader(TorchStream(), 2, collate_fn=collate)))
    assert _skipping(iter(DataLoader(Stream(), 2, collate_fn=collate))) == want == \
        [[0, 1], "E", [4, 5], [6]]


def test_an_iterator_has_its_loader_s_length_as_torch_s():
    for kw, n in ((dict(batch_size=3), 3), (dict(batch_size=3, drop_last=True), 2),
                  (dict(batch_size=None), 7)):
        loader = DataLoader(list(range(7)), **kw)
        it = iter(loader)
        assert len(it) == len(loader) == n
        next(it)
        assert len(it) == n                  # the epoch's length, as PyTorch's
