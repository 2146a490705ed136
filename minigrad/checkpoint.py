"""Checkpoints in the `.safetensors` format (the ecosystem's weight format), written
atomically so that a crash mid-save never destroys the previous checkpoint.

    mg.save(model.state_dict(), "model.safetensors", metadata={"step": "1000"})
    model.load_state_dict(mg.load("model.safetensors"))
    tensors, metadata = mg.load("model.safetensors", with_metadata=True)

Tensor names are the state dict's names, so a file saved here loads into PyTorch with
`safetensors.torch.load_file` (and the other way round). Dtypes are kept as they are
(float32 by default; float64, int64, bool, float16 stay what they are).
"""
import json
import os
import secrets
import stat
from collections.abc import Mapping

import safetensors
import safetensors.numpy
from safetensors import safe_open

from minigrad import backend
from minigrad.creation import from_other_library
from minigrad.tensor import Tensor


class CheckpointError(ValueError):
    """A checkpoint file that cannot be read: corrupted, truncated, or not .safetensors."""


def save(state_dict, path, metadata=None):
    """Write `state_dict` (name -> Tensor; a Module's state_dict(), or any flat dict of
    tensors/arrays) to `path` as .safetensors. `metadata` is a dict of strings; other
    JSON-able values are stored as their JSON text (read them back with json.loads).

    Atomic: the file is written to a temporary file in the same directory, flushed to
    disk, then renamed over `path` (os.replace), so `path` is always either the old
    checkpoint or the complete new one. A symbolic link at `path` stays a link: the file it
    points to is the one replaced. A replaced file keeps its permission bits."""
    if hasattr(state_dict, "state_dict") and callable(state_dict.state_dict):
        state_dict = state_dict.state_dict()  # a Module was passed
    if not isinstance(state_dict, Mapping):
        raise TypeError(f"mg.save: expected a dict of name -> tensor (or a Module), got a "
                        f"{type(state_dict).__name__}; a single tensor goes in as "
                        f"mg.save({{'x': t}}, path)")
    arrays = {name: _host_array(name, t) for name, t in state_dict.items()}
    meta = _string_metadata(metadata)
    path = os.path.realpath(os.fspath(path))  # through symlinks: replace the target file
    directory = os.path.dirname(path)
    # a fresh name beside the target (same file system, so the rename is atomic); made
    # with os.open so the file gets the usual permissions (the umask's), not mkstemp's 0600
    # (the name cut to 200 bytes: a file name may not pass 255)
    stem = os.fsdecode(os.fsencode(os.path.basename(path))[:200].decode("utf-8", "ignore")
                       .encode("utf-8"))
    tmp = os.path.join(directory, f".{stem}.{secrets.token_hex(6)}.tmp")
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"mg.save: cannot write {path!r}: the directory {directory!r} "
                                f"does not exist (create it first)")
    if os.path.isdir(path):     # refused before writing, not by the rename at the end
        raise IsADirectoryError(f"mg.save: {path!r} is a directory; give the path of a file "
                                f"in it, such as {os.path.join(path, 'model.safetensors')!r}")
    os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    try:
        # the replaced file's permission bits, else the umask's; set after writing, as
        # safetensors writes its file 0600
        mode = stat.S_IMODE(os.stat(path if os.path.exists(path) else tmp).st_mode)
        _write_safetensors(arrays, tmp, meta)
        os.chmod(tmp, mode)
        with open(tmp, "rb+") as f:  # the rename must not overtake the data on disk
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.remove(tmp)
        raise
    _fsync_directory(directory)  # make the rename itself durable


def load(path, device="cpu", with_metadata=False, map_location=None):
    """Read a .safetensors file into {name: Tensor} on `device` (dtypes as stored; PyTorch's
    name, map_location, is taken too). With `with_metadata=True`, returns (tensors, metadata
    dict)."""
    path = os.fspath(path)
    device = device if map_location is None else map_location
    if os.path.isdir(path):
        raise IsADirectoryError(f"mg.load: {path!r} is a directory, not a .safetensors file")
    try:
        with safe_open(path, framework="np") as f:
            meta = dict(f.metadata() or {})
            host = {name: _read_tensor(f, path, name) for name in f.keys()}
    except (FileNotFoundError, IsADirectoryError, PermissionError, CheckpointError):
        raise
    except (safetensors.SafetensorError, OSError, ValueError) as e:
        _refuse_torch_file(path)
        raise CheckpointError(f"mg.load: {path!r} is corrupted or truncated (not a complete "
                              f".safetensors file): {e}") from None
    b = backend.get(device)
    tensors = {}
    for name, a in host.items():
        if not a.flags.writeable:  # a view of the file's bytes: take our own copy
            a = a.copy()
        tensors[name] = Tensor._make(b.from_numpy(a), backend.device_name(device))
    return (tensors, meta) if with_metadata else tensors


def _read_tensor(f, path, name):
    try:
        return f.get_tensor(name)
    except TypeError as e:                    # a dtype NumPy lacks: bfloat16, the float8s
        raise CheckpointError(
            f"mg.load: {path!r} stores {name!r} as {f.get_slice(name).get_dtype()}, a dtype "
            f"NumPy (and so minigrad) does not have ({e}); save the weights as float32 "
            f"instead, e.g. in PyTorch: safetensors.torch.save_file({{k: v.float() for k, v "
            f"in state_dict.items()}}, path)") from None


def _refuse_torch_file(path):
    """A file safetensors could not read: if torch.save wrote it (a zip archive, or before
    PyTorch 1.6 a pickle), say so rather than 'corrupted'."""
    try:
        with open(path, "rb") as f:
            head = f.read(9)
    except OSError:
        return                                           # load's own errors say it
    # a pickle starts 0x80 then its protocol (2 to 5); a safetensors file starts with its
    # header's length, which may begin 0x80 too, but then its header (JSON) begins at byte
    # 8 with "{"
    pickle = head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05") \
        and head[8:9] != b"{"
    if head[:4] == b"PK\x03\x04" or pickle:
        raise CheckpointError(f"mg.load: {path!r} is a PyTorch file (torch.save's zip or "
                              f"pickle), not .safetensors; in PyTorch, save the state dict "
                              f"with safetensors.torch.save_file(model.state_dict(), path) "
                              f"and load that")


def load_metadata(path):
    """Only the metadata dict of a .safetensors file (reads the header, not the tensors)."""
    path = os.fspath(path)
    try:
        with safe_open(path, framework="np") as f:
            return dict(f.metadata() or {})
    except (FileNotFoundError, IsADirectoryError, PermissionError):
        raise
    except (safetensors.SafetensorError, OSError, ValueError) as e:
        raise CheckpointError(f"mg.load_metadata: {path!r} is corrupted or truncated (not a "
                              f"complete .safetensors file): {e}") from None


def strip_prefix(tensors, prefix):
    """The entries whose name starts with `prefix`, with the prefix removed: picks one
    module's weights (e.g. "model.") out of a checkpoint that also holds other things."""
    return {k[len(prefix):]: v for k, v in tensors.items() if k.startswith(prefix)}


# ---- helpers --------------------------------------------------------------------------------
def _write_safetensors(arrays, path, metadata):
    """The one place that writes bytes (tests replace it to simulate a crash mid-save).
    safetensors reports a failed write (a full disk) as its own error: an OSError here."""
    try:
        safetensors.numpy.save_file(arrays, path, metadata=metadata)
    except safetensors.SafetensorError as e:
        raise OSError(f"mg.save: writing {path!r} failed: {e}") from None


_SAVABLE = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
            "float16", "float32", "float64", "complex64")


def _host_array(name, t):
    if not isinstance(name, str):
        raise TypeError(f"mg.save: tensor names must be strings, got {name!r}")
    if name == "__metadata__":
        raise ValueError("mg.save: the name '__metadata__' is reserved by the .safetensors "
                         "format for the metadata block; rename that tensor (put strings "
                         "in `metadata` instead)")
    if isinstance(t, Tensor):
        a = t.numpy()
    elif hasattr(t, "shape") and hasattr(t, "dtype"):
        try:
            a = backend.to_host(from_other_library(t))     # a PyTorch tensor too
        except TypeError as e:                             # a dtype NumPy lacks (bfloat16)
            raise TypeError(f"mg.save: entry {name!r}: {e}") from None
    else:
        raise TypeError(f"mg.save: entry {name!r} is of type {type(t).__name__}, not a "
                        f"tensor; put numbers and strings in `metadata` instead (an "
                        f"optimiser's state: tensors, metadata = optimizer.flat_state_dict())")
    if a.dtype.name not in _SAVABLE:
        raise TypeError(f"mg.save: entry {name!r} has dtype {a.dtype}, which .safetensors "
                        f"cannot store (it stores {', '.join(_SAVABLE)}); convert it first")
    # safetensors copies from the array's memory as one block: it must be C-contiguous
    # (not ascontiguousarray, which would turn a 0-d array into shape (1,))
    return a if a.flags.c_contiguous else a.copy(order="C")


def _string_metadata(metadata):
    if metadata is None:
        return None
    out = {}
    for k, v in metadata.items():
        if not isinstance(k, str):
            raise TypeError(f"mg.save: metadata keys must be strings, got {k!r}")
        if isinstance(v, str):
            out[k] = v
            continue
        try:
            out[k] = json.dumps(v)
        except TypeError:
            raise TypeError(f"mg.save: metadata[{k!r}] is of type {type(v).__name__}, which is "
                            f"neither a string nor JSON-serialisable") from None
    return out


def _fsync_directory(directory):
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:  # e.g. Windows cannot open directories; the rename is still atomic
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
