"""Training text: Tiny Shakespeare by default (downloaded once, checked by sha256, cached), or any
UTF-8 text given by path; the 90% / 10% train / val split and random (x, y) batches, as nanoGPT.

Where the text comes from, first match wins: an explicit path (`--data`), the environment
variable MINITRANSFORMER_DATA, the cached download, a fresh download.
"""
import errno
import hashlib
import os
import secrets
import urllib.error
import urllib.request
from pathlib import Path

import numpy as np

import minigrad as mg

# the address nanoGPT's data/shakespeare_char/prepare.py downloads from
TINY_SHAKESPEARE_URL = ("https://raw.githubusercontent.com/karpathy/char-rnn/master/data/"
                        "tinyshakespeare/input.txt")
TINY_SHAKESPEARE_SHA256 = "86c4e6aa9db7c042ec79f339dcb96d42b0075e16b8fc2e86bf0ca57e2dc565ed"
TINY_SHAKESPEARE_FILE = "tinyshakespeare.txt"
DATA_ENV = "MINITRANSFORMER_DATA"
CACHE_ENV = "MINITRANSFORMER_CACHE"

# where a copy may already lie: this repository's sibling shared/ folder (CI, sandboxes)
_KNOWN_COPIES = [Path(__file__).resolve().parents[1].parent / "shared" / "data" /
                 TINY_SHAKESPEARE_FILE]


class DataError(RuntimeError):
    """The training text cannot be found, fetched or used; the message says what to do."""


def cache_dir():
    """$MINITRANSFORMER_CACHE, else $XDG_CACHE_HOME/minitransformer, else
    ~/.cache/minitransformer."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV])
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "minitransformer"


def sha256_of(data):
    return hashlib.sha256(data).hexdigest()


def download(url, dest, sha256, timeout=30.0):
    """Fetch url into dest if its sha256 matches; written atomically (a temp file in the same
    folder, then os.replace), so dest is either absent or complete and verified."""
    dest = Path(dest)
    try:
        with urllib.request.urlopen(url, timeout=timeout) as response:
            payload = response.read()
    except (urllib.error.URLError, OSError) as e:  # no network, refused, timeout, HTTP error
        raise DataError(_offline_message(url, dest, e)) from None
    got = sha256_of(payload)
    if got != sha256:
        raise DataError(f"download of {url} has sha256 {got}, expected {sha256}; the file may "
                        f"be corrupted or changed upstream. Nothing was cached. Pass --data PATH "
                        f"(or set {DATA_ENV}) to use a text you trust.")
    dest.parent.mkdir(parents=True, exist_ok=True)
    write_atomic(dest, payload)
    return dest


def write_atomic(path, payload):
    """Write bytes to path so a reader sees the old file or the whole new one, never half,
    even after a power loss: the data is on disk before the rename (fsync of the file), and
    the rename is on disk before this returns (fsync of the directory)."""
    path = Path(path)
    tmp = path.parent / f".{path.name}.{secrets.token_hex(6)}.tmp"
    fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)  # the umask's permissions
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if tmp.exists():
            tmp.unlink()
        raise
    fsync_directory(path.parent)


def fsync_directory(path):
    """Make the renames and deletions of entries in directory `path` durable (POSIX; where a
    directory cannot be opened, e.g. on Windows, the rename is already durable)."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError as e:  # a file system that cannot sync a directory says so; others are errors
        if e.errno not in (errno.EINVAL, errno.ENOTSUP):
            raise
    finally:
        os.close(fd)


def _offline_message(url, dest, error):
    lines = [f"could not download Tiny Shakespeare from {url} "
             f"({type(error).__name__}: {getattr(error, 'reason', error)}).",
             f"Pass --data PATH to any UTF-8 text (or set {DATA_ENV}=PATH), or put a copy of "
             f"the file at {dest} (checked against sha256 {TINY_SHAKESPEARE_SHA256[:16]}…)."]
    for copy in _KNOWN_COPIES:
        if copy.is_file():
            lines.append(f"A copy exists at {copy}: --data {copy}")
    return "\n".join(lines)


def tiny_shakespeare_path(url=TINY_SHAKESPEARE_URL, sha256=TINY_SHAKESPEARE_SHA256):
    """The cached Tiny Shakespeare file, downloaded on first use."""
    dest = cache_dir() / TINY_SHAKESPEARE_FILE
    if not dest.is_file():
        return download(url, dest, sha256)
    if sha256_of(dest.read_bytes()) == sha256:
        return dest
    try:
        return download(url, dest, sha256)
    except DataError as e:               # say why the file already there was not used
        raise DataError(f"the cached {dest} does not match its sha256 (a partial or "
                        f"different file), and a fresh copy could not be fetched:\n{e}") \
            from None


def resolve_data_path(path=None):
    """The path of the training text: `path`, else $MINITRANSFORMER_DATA, else Tiny
    Shakespeare from the cache (downloading it on first use)."""
    if path:
        return Path(path)
    if os.environ.get(DATA_ENV):
        path = Path(os.environ[DATA_ENV])
        if not path.exists():
            raise DataError(f"{DATA_ENV}={path} names a file that does not exist; fix or unset "
                            f"it, or pass --data PATH")
        return path
    return tiny_shakespeare_path()


def read_text(path):
    """The UTF-8 text of a file, or a DataError saying what is wrong with it."""
    path = Path(path)
    if not path.exists():
        raise DataError(f"data file {path} does not exist; pass --data PATH to a UTF-8 text file")
    if not path.is_file():
        raise DataError(f"data path {path} is not a file; pass --data PATH to a UTF-8 text file")
    raw = path.read_bytes()
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DataError(f"data file {path} is not UTF-8 text: byte {raw[e.start]:#04x} at "
                        f"offset {e.start} cannot be decoded ({e.reason}); convert it with e.g. "
                        f"`iconv -f latin1 -t utf-8`") from None
    # a byte-order mark, which some editors write first, is not a character of the text
    text = text.removeprefix("\ufeff")
    if not text:
        raise DataError(f"data file {path} is empty; a character model needs text to learn from")
    return text


def load_text(path=None):
    """(text, path) of the training corpus; see resolve_data_path."""
    p = resolve_data_path(path)
    return read_text(p), p


def train_val_split(ids, train_fraction=0.9):
    """First 90% for training, the last 10% for validation (nanoGPT's split, so losses compare)."""
    ids = np.asarray(ids, dtype=np.int64)
    n = int(train_fraction * len(ids))
    return ids[:n], ids[n:]


def check_split(name, ids, block_size):
    """A split must hold one block plus its next-token target."""
    if len(ids) < block_size + 1:
        raise DataError(f"the {name} split has {len(ids)} tokens but one example needs "
                        f"block_size + 1 = {block_size + 1}; use a longer text (the val split is "
                        f"its last 10%, so at least ~{10 * (block_size + 1) + 10} characters) or a "
                        f"smaller --block-size")


def get_batch(ids, batch_size, block_size, rng, device="cpu"):
    """x, y int64 tensors (batch_size, block_size): x random windows of `ids` chosen by the
    NumPy Generator `rng`, y the same windows shifted one token on."""
    # Host NumPy on purpose: the corpus lives on the host, and only the batch goes to the
    # device; a NumPy generator's state saves in a checkpoint and is the same on any device.
    check_split("chosen", ids, block_size)
    starts = rng.integers(0, len(ids) - block_size, size=batch_size)
    rows = starts[:, None] + np.arange(block_size)
    return (mg.tensor(ids[rows], device=device), mg.tensor(ids[rows + 1], device=device))
