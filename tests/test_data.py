"""data.py: the downloader (against a local HTTP server), text checks, split and batches."""
import hashlib
import http.server
import os
import socket
import threading

import numpy as np
import pytest

from minitransformer import data
from minitransformer.data import DataError

PAYLOAD = "ROMEO:\nBut soft, what light through yonder window breaks?\n".encode()


@pytest.fixture
def server():
    """A small file served on 127.0.0.1; yields its URL."""
    class Handler(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            if self.path != "/input.txt":
                self.send_error(404)
                return
            self.send_response(200)
            self.send_header("Content-Length", str(len(PAYLOAD)))
            self.end_headers()
            self.wfile.write(PAYLOAD)

        def log_message(self, *args):
            pass

    httpd = http.server.HTTPServer(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}/input.txt"
    httpd.shutdown()
    httpd.server_close()


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv(data.CACHE_ENV, str(tmp_path / "cache"))
    monkeypatch.delenv(data.DATA_ENV, raising=False)
    return tmp_path / "cache"


def _point_default_at(monkeypatch, url, sha):
    monkeypatch.setattr(data, "TINY_SHAKESPEARE_URL", url)
    monkeypatch.setattr(data, "TINY_SHAKESPEARE_SHA256", sha)
    monkeypatch.setattr(data.tiny_shakespeare_path, "__defaults__", (url, sha))


def test_download_good_checksum_is_cached(server, cache, monkeypatch):
    _point_default_at(monkeypatch, server, hashlib.sha256(PAYLOAD).hexdigest())
    text, path = data.load_text()
    assert text == PAYLOAD.decode() and path == cache / data.TINY_SHAKESPEARE_FILE
    assert path.read_bytes() == PAYLOAD
    assert [p.name for p in cache.iterdir()] == [data.TINY_SHAKESPEARE_FILE]  # no temp left
    # second use: served from the cache, even with the server gone
    _point_default_at(monkeypatch, "http://127.0.0.1:9/gone", hashlib.sha256(PAYLOAD).hexdigest())
    assert data.load_text()[0] == PAYLOAD.decode()


def test_download_bad_checksum_caches_nothing(server, cache, monkeypatch):
    _point_default_at(monkeypatch, server, "0" * 64)
    with pytest.raises(DataError, match="sha256") as e:
        data.load_text()
    assert "--data" in str(e.value)
    assert not (cache / data.TINY_SHAKESPEARE_FILE).exists()
    assert not cache.exists() or not any(cache.iterdir())


def _closed_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_server_down_gives_the_offline_message(cache, monkeypatch):
    url = f"http://127.0.0.1:{_closed_port()}/input.txt"
    _point_default_at(monkeypatch, url, hashlib.sha256(PAYLOAD).hexdigest())
    with pytest.raises(DataError) as e:
        data.load_text()
    msg = str(e.value)
    assert "could not download" in msg and "--data PATH" in msg
    assert str(cache / data.TINY_SHAKESPEARE_FILE) in msg  # where a copy may be put
    assert not (cache / data.TINY_SHAKESPEARE_FILE).exists()


def test_real_defaults_are_nanogpts():
    assert data.TINY_SHAKESPEARE_URL == ("https://raw.githubusercontent.com/karpathy/char-rnn/"
                                         "master/data/tinyshakespeare/input.txt")
    assert data.TINY_SHAKESPEARE_SHA256.startswith("86c4e6aa9db7")


def test_explicit_path_and_env_var(tmp_path, cache, monkeypatch):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("from the flag")
    b.write_text("from the environment")
    monkeypatch.setenv(data.DATA_ENV, str(b))
    assert data.load_text()[0] == "from the environment"
    assert data.load_text(a)[0] == "from the flag"


def test_missing_empty_and_non_utf8_files(tmp_path):
    with pytest.raises(DataError, match="does not exist"):
        data.read_text(tmp_path / "nope.txt")
    (tmp_path / "empty.txt").write_bytes(b"")
    with pytest.raises(DataError, match="empty"):
        data.read_text(tmp_path / "empty.txt")
    (tmp_path / "latin1.txt").write_bytes("caf\xe9 au lait".encode("latin-1"))
    with pytest.raises(DataError, match=r"not UTF-8.*0xe9 at offset 3"):
        data.read_text(tmp_path / "latin1.txt")
    with pytest.raises(DataError, match="not a file"):
        data.read_text(tmp_path)
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbf" + "caf\xe9".encode("latin-1"))
    with pytest.raises(DataError, match=r"0xe9 at offset 6"):        # counted in the file
        data.read_text(tmp_path / "bom.txt")


def test_a_byte_order_mark_is_not_part_of_the_text(tmp_path):
    """Some editors start a UTF-8 file with a byte-order mark: it is dropped, not made a
    character of the vocabulary; one alone is an empty file."""
    (tmp_path / "bom.txt").write_bytes(b"\xef\xbb\xbfHello \xef\xbb\xbf")
    assert data.read_text(tmp_path / "bom.txt") == "Hello \ufeff"   # only the first
    (tmp_path / "only.txt").write_bytes(b"\xef\xbb\xbf")
    with pytest.raises(DataError, match="empty"):
        data.read_text(tmp_path / "only.txt")


def test_split_is_first_90_percent_then_last_10():
    train, val = data.train_val_split(np.arange(1000))
    assert len(train) == 900 and len(val) == 100 and train[-1] == 899 and val[0] == 900


def test_batches_are_shifted_windows_from_the_seeded_generator():
    ids = np.arange(100)
    x, y = data.get_batch(ids, 4, 8, np.random.default_rng(0))
    assert x.shape == y.shape == (4, 8) and x.dtype == np.int64
    np.testing.assert_array_equal(y.numpy(), x.numpy() + 1)
    assert (np.diff(x.numpy(), axis=1) == 1).all()
    x2, _ = data.get_batch(ids, 4, 8, np.random.default_rng(0))
    np.testing.assert_array_equal(x.numpy(), x2.numpy())


def test_text_shorter_than_one_example_is_an_error():
    with pytest.raises(DataError, match="block_size \\+ 1 = 9"):
        data.check_split("val", np.arange(8), 8)
    data.check_split("val", np.arange(9), 8)


def test_env_var_pointing_nowhere_is_named(tmp_path, cache, monkeypatch):
    monkeypatch.setenv(data.DATA_ENV, str(tmp_path / "gone.txt"))
    with pytest.raises(DataError, match="MINITRANSFORMER_DATA=.*does not exist"):
        data.load_text()


@pytest.mark.skipif(not os.path.isdir("/proc/self/fd"), reason="names fsync'd files via /proc")
def test_write_atomic_makes_the_rename_durable(tmp_path, monkeypatch):
    """The file is fsync'd before the rename and its directory after it (else a power loss
    could undo the rename)."""
    events, real_fsync, real_replace = [], os.fsync, os.replace

    def fsync(fd):
        events.append(("fsync", os.readlink(f"/proc/self/fd/{fd}")))
        real_fsync(fd)

    def replace(a, b):
        events.append(("replace", str(b)))
        real_replace(a, b)
    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    target = tmp_path.resolve() / "f.txt"
    data.write_atomic(target, b"new")
    monkeypatch.undo()
    assert target.read_bytes() == b"new"
    assert [e[0] for e in events] == ["fsync", "replace", "fsync"]
    assert events[1:] == [("replace", str(target)), ("fsync", str(tmp_path.resolve()))]


def test_a_corrupted_cached_copy_is_downloaded_again(server, cache, monkeypatch):
    _point_default_at(monkeypatch, server, hashlib.sha256(PAYLOAD).hexdigest())
    cache.mkdir()
    (cache / data.TINY_SHAKESPEARE_FILE).write_bytes(PAYLOAD[:10])    # a truncated copy
    text, path = data.load_text()
    assert text == PAYLOAD.decode() and path.read_bytes() == PAYLOAD


def test_batches_reach_the_last_window():
    """With 10 tokens and blocks of 8 there are exactly two (input, target) windows: both
    are drawn, and nothing past the end."""
    x, y = data.get_batch(np.arange(10), 200, 8, np.random.default_rng(0))
    assert set(x.numpy()[:, 0].tolist()) == {0, 1}
    np.testing.assert_array_equal(y.numpy(), x.numpy() + 1)


def test_a_failed_write_leaves_the_old_file_and_no_temp_file(tmp_path, monkeypatch):
    target = tmp_path / "f.txt"
    target.write_bytes(b"old")

    def replace(a, b):
        raise OSError("disk full")
    monkeypatch.setattr(os, "replace", replace)
    with pytest.raises(OSError, match="disk full"):
        data.write_atomic(target, b"new")
    monkeypatch.undo()
    assert target.read_bytes() == b"old" and os.listdir(tmp_path) == ["f.txt"]
