"""parallel.py (the fused CPU ops' pieces on several threads) and backend_blas.py (whether
BLAS's idle threads let go of the cores): threads change no result, not a bit."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import minigrad as mg
import minigrad.functional as F
from minigrad import backend, backend_blas, backend_numpy, parallel


@pytest.fixture
def threads(monkeypatch):
    """threads(n): run every parallel.run on n threads, whatever its size (restored after)."""
    monkeypatch.setattr(parallel, "_threads", [None])
    monkeypatch.setattr(parallel, "MIN_SIZE", 0)
    return parallel.set_num_threads


def test_run_splits_pieces_across_threads_in_order(threads):
    threads(2)
    seen = {}

    def piece(i):
        seen[i] = threading.get_ident()
    parallel.run(piece, [(i,) for i in range(6)], size=6)
    assert sorted(seen) == list(range(6))
    main = threading.get_ident()
    assert [seen[i] == main for i in range(6)] == [True] * 3 + [False] * 3
    assert len({seen[i] for i in range(3, 6)}) == 1          # one worker, contiguous run


def test_small_work_stays_on_the_calling_thread(monkeypatch):
    monkeypatch.setattr(parallel, "_threads", [4])
    seen = set()
    parallel.run(lambda i: seen.add(threading.get_ident()), [(i,) for i in range(8)],
                 size=parallel.MIN_SIZE - 1)
    assert seen == {threading.get_ident()}


@pytest.mark.parametrize("where", ["main", "worker"])
def test_an_error_in_a_piece_is_raised_after_all_threads_stop(threads, where):
    threads(2)
    done = []

    def piece(i):
        if (i == 0) == (where == "main"):
            raise ValueError(f"piece {i} failed")
        done.append(i)
    with pytest.raises(ValueError, match="failed"):
        parallel.run(piece, [(0,), (1,)], size=2)
    assert done == [1] if where == "main" else [0]
    parallel.run(lambda i: done.append(i), [(5,), (6,)], size=2)   # the workers still work
    assert sorted(done[-2:]) == [5, 6]


def test_a_piece_that_runs_pieces_runs_them_serially(threads):
    threads(2)
    out = np.zeros(16)

    def outer(lo):
        parallel.run(lambda i: out.__setitem__(i, i), [(i,) for i in range(lo, lo + 8)], 8)
    parallel.run(outer, [(0,), (8,)], size=16)               # no deadlock, all written
    assert np.array_equal(out, np.arange(16))


def test_set_num_threads_checks_its_argument():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="positive integer"):
            mg.set_num_threads(bad)


def test_default_thread_count_follows_whether_blas_lets_go(monkeypatch):
    monkeypatch.setattr(parallel, "_threads", [None])
    monkeypatch.setattr(backend_blas, "lets_go", lambda: (False, "spins"))
    assert mg.get_num_threads() == 1
    monkeypatch.setattr(backend_blas, "lets_go", lambda: (True, ""))
    assert mg.get_num_threads() == max(1, min(parallel.cores(), 8))
    mg.set_num_threads(3)
    assert mg.get_num_threads() == 3


class FakeBlas:
    """A threadpoolctl controller's attributes, as backend_blas reads them."""

    def __init__(self, api="openblas", layer="pthreads", threads=2, timeout=22):
        self.internal_api, self.threading_layer, self.num_threads = api, layer, threads
        self.dynlib = type("Lib", (), {"openblas_thread_timeout": lambda self: timeout})()
        self.calls = []

    def set_num_threads(self, n):
        self.calls.append(n)
        self.num_threads = n


@pytest.mark.parametrize("libs, ok, why", [
    ([], True, ""),
    ([FakeBlas(timeout=22)], True, ""),
    ([FakeBlas(timeout=1)], True, ""),                       # OpenBLAS raises it to 4
    ([FakeBlas(timeout=0)], False, "2^28 cycles"),           # unset: OpenBLAS's default
    ([FakeBlas(timeout=23)], False, "OPENBLAS_THREAD_TIMEOUT=22"),
    ([FakeBlas(timeout=0, threads=1)], True, ""),            # one thread: nothing spins
    ([FakeBlas(api="mkl", layer="intel")], False, "mkl"),
    ([FakeBlas(layer="openmp")], False, "openmp"),
    ([FakeBlas(), FakeBlas(timeout=30)], False, "2^30"),
    (ImportError("no threadpoolctl"), False, "threadpoolctl"),
])
def test_blas_lets_go_only_when_its_idle_threads_stop_soon(libs, ok, why):
    result, reason = backend_blas.lets_go(libs)
    assert result == ok and why in reason


def test_one_thread_holds_blas_to_one_thread_and_restores_it(monkeypatch):
    two, one = FakeBlas(threads=2), FakeBlas(threads=1)
    monkeypatch.setattr(backend_blas, "_libraries", lambda: [two, one])
    with backend_blas.one_thread():
        assert (two.num_threads, one.num_threads) == (1, 1)
    assert (two.calls, one.calls) == ([1, 2], [])
    with pytest.raises(KeyError):
        with backend_blas.one_thread():
            raise KeyError
    assert two.num_threads == 2


def test_the_real_blas_is_read(monkeypatch):
    """Whatever this machine's BLAS is, the check answers (and says why when it is no)."""
    ok, why = backend_blas.lets_go()
    assert ok or why


def _gelu_attention_layer_norm(seed):
    rng = np.random.default_rng(seed)
    x = mg.tensor(rng.standard_normal((3, 5, 8)), requires_grad=True)
    q, k, v = (mg.tensor(rng.standard_normal((4, 3, 6, 4)), requires_grad=True)
               for _ in range(3))
    h = mg.tensor(rng.standard_normal((8, 32, 10)), requires_grad=True)   # 256 rows: 4 runs
    w, b = (mg.tensor(rng.standard_normal(10), requires_grad=True) for _ in range(2))
    allowed = mg.tensor(rng.random((6, 6)) > 0.3)
    bias = mg.tensor(rng.standard_normal((3, 6, 6)))
    mg.manual_seed(seed)
    y = F.gelu(x, approximate="tanh")
    a = F.scaled_dot_product_attention(q, k, v, is_causal=True, dropout_p=0.2)
    m = F.scaled_dot_product_attention(q, k, v, attn_mask=allowed)
    s = F.scaled_dot_product_attention(q, k, v, attn_mask=bias)
    n = F.layer_norm(h, (10,), w, b) + F.layer_norm(h, (10,))
    d = F.dropout(n, 0.3)
    (y.sum() + (a * a).sum() + (m * s).sum() + (n * d).sum()).backward()
    return [t.numpy() for t in (y, a, m, s, n, d, x.grad, q.grad, k.grad, v.grad, h.grad,
                                w.grad, b.grad)]


@pytest.mark.parametrize("block", [7, 64])
def test_threads_change_no_result(threads, block, monkeypatch):
    """GELU, layer norm, dropout and attention (its dropout masks included) on 1 and on 3
    threads, in pieces small enough for every op to have several: bit for bit the same."""
    monkeypatch.setattr(backend.get("cpu"), "cache_block", block)
    threads(1)
    one = _gelu_attention_layer_norm(0)
    threads(3)
    three = _gelu_attention_layer_norm(0)
    for a, b in zip(one, three):
        np.testing.assert_array_equal(a, b)


@pytest.mark.skipif(not hasattr(os, "fork"), reason="needs fork (POSIX)")
def test_a_forked_child_runs_pieces_on_threads_of_its_own(threads):
    threads(2)
    parallel.run(lambda i: None, [(0,), (1,)], size=2)       # the parent's workers exist
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:                                             # the child: it must not hang
        try:
            out = []
            parallel.run(lambda i: out.append(i), [(0,), (1,)], size=2)
            os.write(w, b"ok" if sorted(out) == [0, 1] else b"bad")
        finally:
            os._exit(0)
    os.close(w)
    _, status = os.waitpid(pid, 0)
    assert os.read(r, 2) == b"ok" and status == 0


@pytest.mark.parametrize("first, env, expected", [
    ("import minigrad", {}, "22"),                            # set before NumPy loads
    ("import minitransformer", {}, "22"),
    ("import minigrad", {"OPENBLAS_THREAD_TIMEOUT": "10"}, "10"),   # the user's stands
    ("import numpy; import minigrad", {}, "None"),            # too late: left alone
])
def test_importing_minigrad_first_shortens_openblas_idle_spin(first, env, expected):
    clean = {k: v for k, v in os.environ.items() if k != "OPENBLAS_THREAD_TIMEOUT"}
    out = subprocess.run(
        [sys.executable, "-c", f"{first}; import os; "
                               f"print(os.environ.get('OPENBLAS_THREAD_TIMEOUT'))"],
        env={**clean, **env}, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == expected


@pytest.mark.parametrize("n", [5, 64, 65, 3 * 64 + 7])
def test_a_big_dropout_mask_drawn_in_chunks_is_the_one_draw(threads, monkeypatch, n):
    """keep_mask draws a big mask chunk by chunk (on threads), each chunk from the generator
    advanced to its start: the same bits as one draw, and the generator left where one draw
    leaves it, a 32-bit half kept from an earlier float32 draw included."""
    monkeypatch.setattr(backend_numpy, "MASK_CHUNK", 64)
    cpu = backend.get("cpu")
    for count in (1, 3):
        threads(count)
        monkeypatch.setattr(cpu, "rng", np.random.default_rng(7))
        cpu.rng.random(3, dtype=np.float32)                  # leaves half a draw kept
        mask = cpu.keep_mask((n,), 0.3)
        after = cpu.rng.random(5, dtype=np.float32), cpu.rng.bit_generator.random_raw(3)
        ref = np.random.default_rng(7)
        ref.random(3, dtype=np.float32)
        u = ref.bit_generator.random_raw((n + 1) // 2).view(np.uint32)[:n]
        np.testing.assert_array_equal(mask, u >= np.uint32(round(0.3 * 2 ** 32)))
        np.testing.assert_array_equal(after[0], ref.random(5, dtype=np.float32))
        np.testing.assert_array_equal(after[1], ref.bit_generator.random_raw(3))


def test_an_interrupted_run_retires_its_workers(threads):
    """Ctrl-C in the caller while a worker still runs its pieces: that worker must never be
    handed another job (new ones take its place), and it ends once its pieces are done."""
    threads(2)
    parallel.run(lambda i: None, [(0,), (1,)], size=2)
    old = list(parallel._workers)
    release = threading.Event()

    def piece(i):
        if i == 0:
            raise KeyboardInterrupt                      # the caller's share
        release.wait(5)                                  # the worker's, still running
    with pytest.raises(KeyboardInterrupt):
        parallel.run(piece, [(0,), (1,)], size=2)
    seen = []
    parallel.run(lambda i: seen.append(i), [(0,), (1,)], size=2)
    assert sorted(seen) == [0, 1] and not set(parallel._workers) & set(old)
    release.set()
    names = lambda: sum(t.name == "minigrad-worker" for t in threading.enumerate())  # noqa
    for _ in range(100):                                 # the retired worker ends
        if names() == len(parallel._workers):
            break
        threading.Event().wait(0.02)
    assert names() == len(parallel._workers)


def test_workers_see_the_callers_numpy_error_settings(threads):
    """np.errstate is per thread (a context variable): the workers run in a copy of the
    caller's context, so an overflow raises there as it would on one thread."""
    threads(2)
    big = np.full(8, 1e38, np.float32)

    def piece(i):
        big[i:i + 1] * np.float32(10)
    with np.errstate(over="raise"), pytest.raises(FloatingPointError):
        parallel.run(piece, [(i,) for i in range(8)], size=8)

def test_two_threads_drawing_big_masks_at_once_get_different_draws(threads, monkeypatch):
    """The chunked draw takes its raw numbers from the generator at once, under its lock:
    two masks drawn at the same time differ, and together they are one draw of both."""
    threads(2)
    monkeypatch.setattr(backend_numpy, "MASK_CHUNK", 64)
    cpu = backend.get("cpu")
    n = 64 * 5 + 2
    for seed in range(5):
        monkeypatch.setattr(cpu, "rng", np.random.default_rng(seed))
        masks, barrier = [None, None], threading.Barrier(2)

        def draw(i):
            barrier.wait()
            masks[i] = cpu.keep_mask((n,), 0.5)
        pair = [threading.Thread(target=draw, args=(i,)) for i in range(2)]
        for t in pair:
            t.start()
        for t in pair:
            t.join()
        u = np.random.default_rng(seed).bit_generator.random_raw(n).view(np.uint32)
        both = u >= np.uint32(2 ** 31)
        assert {masks[0].tobytes(), masks[1].tobytes()} == {both[:n].tobytes(),
                                                            both[n:].tobytes()}


def test_keep_mask_fills_an_out_that_is_not_contiguous(threads, monkeypatch):
    threads(2)
    monkeypatch.setattr(backend_numpy, "MASK_CHUNK", 64)
    cpu = backend.get("cpu")
    for seed, view in ((0, lambda a: a.T), (1, lambda a: a[::2, ::2])):
        base = np.zeros((30, 20), bool)
        out = view(base)
        monkeypatch.setattr(cpu, "rng", np.random.default_rng(seed))
        assert cpu.keep_mask(out.shape, 0.5, out=out) is out
        u = np.random.default_rng(seed).bit_generator.random_raw((out.size + 1) // 2)
        want = u.view(np.uint32)[:out.size] >= np.uint32(2 ** 31)
        np.testing.assert_array_equal(out, want.reshape(out.shape))


def test_a_hold_cut_short_is_undone_at_the_next(monkeypatch):
    """A Ctrl-C between one_thread's setting BLAS to one thread and its putting the count
    back (or a fork in that window) leaves BLAS on one thread: the next hold restores it."""
    blas = FakeBlas(threads=1)                           # as an interrupted hold left it
    monkeypatch.setattr(backend_blas, "_libraries", lambda: [blas])
    monkeypatch.setattr(backend_blas, "_held", [4])      # ... with 4 threads to put back
    with backend_blas.one_thread():
        assert blas.num_threads == 1
    assert blas.num_threads == 4 and blas.calls == [4, 1, 4]


def test_the_trainer_says_how_many_threads_and_why_only_one(monkeypatch):
    monkeypatch.setattr(parallel, "_threads", [None])
    monkeypatch.setattr(backend_blas, "lets_go", lambda: (False, "BLAS spins"))
    assert parallel.why_one_thread() == "BLAS spins"
    assert parallel.describe() == "1 thread: BLAS spins"
    mg.set_num_threads(1)                                # chosen: no reason to give
    assert parallel.why_one_thread() == "" and parallel.describe() == "1 thread"
    mg.set_num_threads(2)
    assert parallel.describe() == "2 threads"
