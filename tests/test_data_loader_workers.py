"""DataLoader(num_workers > 0): real worker processes, as torch.utils.data's (the machinery
is minigrad/utils/dataloader_workers.py). Small datasets and two workers: each test takes a
fraction of a second."""
import collections
import multiprocessing
import os
import pickle
import random
import signal
import time

import pytest

import minigrad as mg
from minigrad import parallel
from minigrad.backend import np
from minigrad.utils import dataloader_workers
from minigrad.utils.data import (DataLoader, Dataset, IterableDataset, TensorDataset,
                                 get_worker_info)

pytestmark = pytest.mark.skipif(not dataloader_workers.can_fork(),
                                reason="worker processes are forked (Linux)")


class Items(Dataset):
    """Item i is i; `bad` an index whose fetch raises, `exit` one whose fetch ends the
    worker (os._exit), `kill` one that kills it (SIGKILL), `slow` one that takes 0.3 s."""

    def __init__(self, n, bad=None, exit=None, kill=None, slow=None, error=ValueError):
        self.n, self.bad, self.exit, self.kill, self.slow = n, bad, exit, kill, slow
        self.error = error

    def __len__(self):
        return self.n

    def __getitem__(self, i):
        if i == self.bad:
            raise self.error(f"item {i} is bad")
        if i in (self.exit, self.kill) and get_worker_info() is None:
            raise RuntimeError("not in a worker process: this one stays")
        if i == self.exit:
            os._exit(3)
        if i == self.kill:
            os.kill(os.getpid(), signal.SIGKILL)
        if i == self.slow:
            time.sleep(0.3)
        return i


class Held(Items):
    """Items whose item `held` waits (at most 10 s) for the event `until` to be set."""

    def __init__(self, n, held, until):
        super().__init__(n)
        self.held, self.until = held, until

    def __getitem__(self, i):
        if i == self.held:
            self.until.wait(10)
        return i


class Shards(IterableDataset):
    """0..n-1, each worker its share (every num_workers-th item), or all of it unsharded."""

    def __init__(self, n, shard=True):
        self.n, self.shard = n, shard

    def __iter__(self):
        info = get_worker_info()
        if info is None or not self.shard:
            return iter(range(self.n))
        return iter(range(info.id, self.n, info.num_workers))


class Draws(Dataset):
    """Item i: (the worker's id, its seed, a draw of mg.rand, of random, of worker_init)."""

    def __len__(self):
        return 4

    def __getitem__(self, i):
        info = get_worker_info()
        return info.id, info.seed, mg.rand(1).item(), random.random(), _INIT[0]


_INIT = [None]


def _init(worker_id):
    _INIT[0] = 100 + worker_id


def _values(loader):
    return [b.tolist() if isinstance(b, mg.Tensor) else b for b in loader]


def _reaped(pids):
    """Whether no process has these ids any more (ended and waited for: no zombies)."""
    for pid in pids:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            continue
        return False
    return True


def test_the_same_batches_as_num_workers_0():
    ds = TensorDataset(mg.arange(20), mg.arange(20).float() / 2)
    for kw in (dict(batch_size=3, shuffle=True, generator=7), dict(batch_size=4, drop_last=True),
               dict(batch_size=None), dict(batch_size=3, collate_fn=lambda items: len(items))):
        plain = [_values(b) if isinstance(b, tuple) else b for b in DataLoader(ds, **kw)]
        workers = list(DataLoader(ds, num_workers=2, **kw))
        assert [_values(b) if isinstance(b, tuple) else b for b in workers] == plain, kw
    x, y = workers_batch = next(iter(DataLoader(ds, batch_size=3, num_workers=2)))
    assert isinstance(x, mg.Tensor) and x.dtype == mg.int64 and y.dtype == mg.float32
    assert type(workers_batch) is tuple and not x.requires_grad
    # mg.manual_seed's generator (no generator=): the same order from the same seed
    mg.manual_seed(3)
    plain = _values(DataLoader(list(range(10)), batch_size=3, shuffle=True))
    mg.manual_seed(3)
    assert _values(DataLoader(list(range(10)), batch_size=3, shuffle=True, num_workers=2)) == plain


def test_the_same_batches_as_torch_workers(torch):
    items = list(range(11))
    want = [b.tolist() for b in torch.utils.data.DataLoader(items, batch_size=3, num_workers=2)]
    assert _values(DataLoader(items, batch_size=3, num_workers=2)) == want


def test_an_iterable_dataset_shards_by_worker_info_as_torch(torch):
    got = _values(DataLoader(Shards(10), batch_size=2, num_workers=2))
    assert sorted(sum(got, [])) == list(range(10))                  # each item once
    assert got == [[0, 2], [1, 3], [4, 6], [5, 7], [8], [9]]        # the workers in turn

    class TorchShards(torch.utils.data.IterableDataset):
        def __iter__(self):
            info = torch.utils.data.get_worker_info()
            return iter(range(info.id, 10, info.num_workers))
    want = torch.utils.data.DataLoader(TorchShards(), batch_size=2, num_workers=2)
    assert got == [b.tolist() for b in want]
    # unsharded, each worker yields the whole stream, as PyTorch's
    got = sum(_values(DataLoader(Shards(5, shard=False), batch_size=2, num_workers=2)), [])
    assert sorted(got) == sorted(list(range(5)) * 2)
    assert get_worker_info() is None                                 # in this process


def test_in_order_false_hands_out_batches_as_they_come():
    # item 0 waits (in worker 0) until this process has its first batch: no race with
    # worker 1, however slow the machine
    ready = multiprocessing.get_context("fork").Event()
    ready.set()
    ds = Held(4, held=0, until=ready)
    assert _values(DataLoader(ds, batch_size=1, num_workers=2)) == [[0], [1], [2], [3]]
    ready.clear()
    it = iter(DataLoader(ds, batch_size=1, num_workers=2, in_order=False))
    first = next(it).tolist()
    ready.set()
    assert first == [1] and sorted([first] + _values(it)) == [[0], [1], [2], [3]]


def test_worker_init_fn_runs_once_in_each_worker_with_its_id():
    got = list(DataLoader(Draws(), batch_size=None, num_workers=2, worker_init_fn=_init))
    assert {(w, init) for w, _, _, _, init in got} == {(0, 100), (1, 101)}
    assert _INIT[0] is None                                # it ran in the workers only


def test_each_worker_has_its_own_seed_and_runs_repeat():
    def run():
        mg.manual_seed(0)
        return list(DataLoader(Draws(), batch_size=None, num_workers=2))
    first = run()
    assert first == run()                                     # reproducible from the seed
    (w0, s0, r0, p0, _), (w1, s1, r1, p1, _) = first[:2]
    assert (w0, w1) == (0, 1) and s1 == s0 + 1                # seed = base_seed + id
    assert r0 != r1 and p0 != p1          # mg's and Python's draws differ between workers
    assert first[2][2] != r0                # and go on within a worker (one seed, not one
    mg.manual_seed(1)                       # per batch)
    assert list(DataLoader(Draws(), batch_size=None, num_workers=2))[0][1] != s0


def test_an_error_in_a_worker_is_raised_here_with_its_traceback_and_worker():
    loader = DataLoader(Items(6, bad=3), batch_size=2, num_workers=2)
    with pytest.raises(ValueError, match="in DataLoader worker process 1") as e:
        list(loader)
    assert "item 3 is bad" in str(e.value) and "Traceback" in str(e.value)
    assert "__getitem__" in str(e.value)                    # the worker's own frames
    it = iter(loader)                   # the other batches still come, as PyTorch's
    assert next(it).tolist() == [0, 1]
    with pytest.raises(ValueError):
        next(it)
    assert next(it).tolist() == [4, 5]

    class Local(Exception):             # a type that does not pickle: a RuntimeError
        pass
    with pytest.raises(RuntimeError, match="Caught Local in DataLoader worker process 0"):
        list(DataLoader(Items(2, bad=0, error=Local), num_workers=2))
    with pytest.raises(KeyError, match="worker process"):
        list(DataLoader(Items(2, bad=1, error=KeyError), num_workers=2))


def test_an_error_in_worker_init_fn_is_raised_here():
    def init(worker_id):
        raise ZeroDivisionError(f"no init for {worker_id}")
    with pytest.raises(ZeroDivisionError, match="worker process 0(.|\n)*no init for 0"):
        list(DataLoader(Items(4), num_workers=2, worker_init_fn=init))


def test_a_batch_that_cannot_be_pickled_is_an_error_not_a_hang():
    loader = DataLoader(Items(2), num_workers=2, collate_fn=lambda items: lambda: items)
    with pytest.raises(Exception, match="worker process 0"):
        list(loader)


@pytest.mark.parametrize("kw, how", [(dict(exit=4), "exited with code 3"),
                                     (dict(kill=4), "was killed by signal SIGKILL")])
def test_a_worker_that_dies_is_an_error_naming_it_not_a_hang(kw, how):
    start, got = time.monotonic(), []
    it = iter(DataLoader(Items(8, **kw), batch_size=2, num_workers=2, timeout=10))
    pids = it.pids
    with pytest.raises(RuntimeError, match=f"DataLoader worker 0 \\(pid {pids[0]}\\) {how}"):
        for batch in it:
            got.append(batch.tolist())
    assert got == [[0, 1], [2, 3]][:len(got)]           # what came before, in order
    assert time.monotonic() - start < 5 and _reaped(pids)      # the other worker stopped too
    assert list(it) == []


def test_timeout_ends_a_wait_for_a_slow_worker():
    loader = DataLoader(Items(2, slow=0), batch_size=1, num_workers=1, timeout=0.1)
    with pytest.raises(RuntimeError, match="timed out after 0.1 seconds"):
        list(loader)
    assert _values(DataLoader(Items(2, slow=0), num_workers=1, timeout=5)) == [[0], [1]]


def test_workers_end_when_the_iterator_is_exhausted_or_dropped():
    loader = DataLoader(list(range(8)), batch_size=2, num_workers=2)
    it = iter(loader)
    pids = it.pids
    assert len(set(pids)) == 2 and os.getpid() not in pids and not _reaped(pids)
    assert _values(it) == [[0, 1], [2, 3], [4, 5], [6, 7]] and _reaped(pids)
    it = iter(loader)
    next(it)
    pids = it.pids
    del it                                                  # dropped mid-epoch
    assert _reaped(pids)
    assert not [p for p in multiprocessing.active_children() if p.pid in pids]


def test_persistent_workers_serve_every_epoch_on_the_same_processes():
    ds = list(range(10))

    def persistent():
        return DataLoader(ds, batch_size=3, shuffle=True, generator=5, num_workers=2,
                          persistent_workers=True)
    loader = persistent()
    it = iter(loader)
    pids = it.pids
    epochs = [_values(it), _values(loader), _values(loader)]
    assert iter(loader) is it and it.pids == pids and not _reaped(pids)
    assert epochs[0] == _values(DataLoader(ds, batch_size=3, shuffle=True, generator=5))
    assert epochs[0] != epochs[1] != epochs[2]                # a new order each epoch
    assert [_values(persistent()) for _ in range(2)] == [epochs[0]] * 2   # and run to run
    again = persistent()
    assert [_values(again) for _ in range(3)] == epochs
    # an epoch left half read: the next starts afresh, with all its batches
    next(iter(again))
    assert sorted(sum(_values(again), [])) == ds
    # an iterable dataset's stream starts again each epoch
    stream = DataLoader(Shards(5), batch_size=2, num_workers=2, persistent_workers=True)
    assert _values(stream) == _values(stream) == [[0, 2], [1, 3], [4]]
    del loader, it
    assert _reaped(pids)
    # without persistent_workers, each epoch starts new ones
    loader = DataLoader(ds, num_workers=2)
    assert iter(loader).pids != iter(loader).pids


def test_prefetch_factor_sets_how_many_batches_are_asked_for_ahead():
    it = iter(DataLoader(list(range(12)), num_workers=2, prefetch_factor=1))
    assert it._sent == 2                           # one per worker
    next(it)
    assert it._sent == 3                           # one more for each one handed out
    it = iter(DataLoader(list(range(12)), num_workers=2))
    assert it._sent == 4                           # PyTorch's default: 2 per worker


def test_an_error_collating_a_stream_s_batch_loses_that_batch_only():
    # the worker takes the items, then collates them: its stream goes on after the error
    # (it ended there), as PyTorch's and as num_workers=0; the iterator has len() too
    def collate(items):
        if items[0] == 2:
            raise ValueError("batch [2, 3] is bad")
        return items

    it, got = iter(DataLoader(Shards(7), batch_size=2, num_workers=1, collate_fn=collate)), []
    while len(got) < 9:                                  # (bounded: never a hang)
        try:
            got.append(next(it))
        except StopIteration:
            break
        except ValueError:
            got.append("E")
    assert got == [[0, 1], "E", [4, 5], [6]]
    assert len(iter(DataLoader(list(range(7)), batch_size=3, num_workers=2))) == 3


def test_pin_memory_is_accepted_and_changes_nothing():
    got = _values(DataLoader(list(range(5)), batch_size=2, num_workers=2, pin_memory=True))
    assert got == [[0, 1], [2, 3], [4]]


def test_multiprocessing_context_is_checked_and_honoured():
    with pytest.raises(ValueError, match="valid start method in .*'fork'.* got "
                                         "multiprocessing_context='nope'"):
        DataLoader([1], num_workers=1, multiprocessing_context="nope")
    with pytest.raises(TypeError, match="multiprocessing_context"):
        DataLoader([1], num_workers=1, multiprocessing_context=3)
    ctx = multiprocessing.get_context("fork")
    loader = DataLoader(list(range(3)), num_workers=1, multiprocessing_context=ctx)
    assert _values(loader) == [[0], [1], [2]]


def test_without_fork_loading_runs_here_with_a_warning(monkeypatch):
    monkeypatch.setattr(dataloader_workers, "can_fork", lambda: False)
    loader = DataLoader(Shards(4), batch_size=3, num_workers=2)
    with pytest.warns(RuntimeWarning, match="loading runs in this process"):
        assert _values(loader) == [[0, 1, 2], [3]]      # one stream, read once


def test_worker_info_is_read_only_and_tensors_pickle():
    info = dataloader_workers.WorkerInfo(id=0, num_workers=2, seed=5, dataset=None)
    with pytest.raises(RuntimeError, match="read-only"):
        info.id = 1
    # batches cross as pickles: a tensor comes back a leaf with its values and dtype
    t = (mg.arange(6).reshape(2, 3).float() * 2)[:, 1]
    back = pickle.loads(pickle.dumps(t))
    assert back.tolist() == [2.0, 8.0] and back.dtype == mg.float32 and back.grad_fn is None


Pair = collections.namedtuple("Pair", "index half")


class Rich(Dataset):
    """Items of every kind default_collate takes: a dict of a NumPy array, a string, a
    namedtuple and a list."""

    def __len__(self):
        return 5

    def __getitem__(self, i):
        return {"x": np.full((2,), i, dtype=np.float32), "name": f"item{i}",
                "pair": Pair(i, i / 2), "list": [i, -i]}


def _plain(batch):
    """A batch as plain Python values, its containers' types kept."""
    if isinstance(batch, mg.Tensor):
        return batch.tolist()
    if isinstance(batch, dict):
        return {k: _plain(v) for k, v in batch.items()}
    if isinstance(batch, (list, tuple)):
        return type(batch).__name__, [_plain(v) for v in batch]
    return batch


def test_items_of_every_kind_are_collated_in_the_workers_as_in_process():
    for batch_size in (2, None):
        want = [_plain(b) for b in DataLoader(Rich(), batch_size=batch_size)]
        got = [_plain(b) for b in DataLoader(Rich(), batch_size=batch_size, num_workers=2)]
        assert got == want and got[0] != []
    assert got[1]["pair"] == ("Pair", [1, 0.5]) and got[1]["name"] == "item1"


def test_a_batch_with_a_grad_fn_is_refused_as_torch():
    # rebuilt here as a leaf, it would silently cut the graph back to the dataset's tensor
    # (PyTorch: "Cowardly refusing to serialize non-leaf tensor which requires_grad")
    weights = mg.arange(6).float().requires_grad_()
    loader = DataLoader(TensorDataset(weights), batch_size=2, num_workers=1)
    with pytest.raises(RuntimeError, match="grad_fn(.|\n)*detach"):
        next(iter(loader))
    assert next(iter(DataLoader(TensorDataset(weights.detach()), batch_size=2,
                                num_workers=1)))[0].tolist() == [0.0, 1.0]


class Heavy(Dataset):
    """Items made by an op big enough for minigrad's threads (parallel.py: dropout's mask)
    and by a matmul."""

    def __len__(self):
        return 2

    def __getitem__(self, i):
        kept = mg.nn.functional.dropout(mg.ones(1 << 20), 0.5).count_nonzero().item()
        return mg.tensor([float(0 < kept < 1 << 20), (mg.ones(64, 64) @ mg.ones(64, 64))[0, 0]])


def test_workers_forked_after_this_process_ran_its_threads():
    with parallel.threads(2):
        mg.nn.functional.dropout(mg.ones(1 << 21), 0.5)     # the thread pool has run
        (mg.ones(128, 128) @ mg.ones(128, 128)).sum()       # and BLAS's threads
        ran = len(parallel._workers)
        got = _values(DataLoader(Heavy(), batch_size=None, num_workers=2, timeout=20))
        mg.nn.functional.dropout(mg.ones(1 << 21), 0.5)     # no deadlock here after
    assert ran >= 1 and got == [[1.0, 64.0]] * 2


def test_breaking_out_of_an_epoch_then_starting_another():
    for persistent in (False, True):
        loader = DataLoader(list(range(8)), batch_size=2, num_workers=2,
                            persistent_workers=persistent)
        for batch in loader:
            if batch[0] == 2:
                break
        assert _values(loader) == [[0, 1], [2, 3], [4, 5], [6, 7]]
    before, pids = {p.pid for p in multiprocessing.active_children()}, []
    with pytest.raises(KeyboardInterrupt):             # Ctrl-C: the workers end with the
        for batch in DataLoader(list(range(8)), num_workers=2):      # iterator
            pids = [p.pid for p in multiprocessing.active_children() if p.pid not in before]
            raise KeyboardInterrupt
    assert len(pids) == 2 and _reaped(pids)
