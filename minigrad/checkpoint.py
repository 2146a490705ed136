"""Checkpoints in the `.safetensors` format (the ecosystem's weight format), written
atomically so that a crash mid-save never destroys the previous checkpoint.

    mg.save(model.state_dict(), "model.safetensors", metadata={"step": "1000"})
    model.load_state_dict(mg.load("model.safetensors"))
    tensors, metadata = mg.load("model.safetensors", with_metadata=True)

Tensor names are the state dict's names, so a file saved here loads into PyTorch with
`safetensors.torch.load_file` (and the other way round). Dtypes are kept as they are
(float32 by default; float64, int64, bool, float16 stay what they are).

Nested objects save too, as torch.save's: nanoGPT's checkpoint
{"model": model.state_dict(), "optimizer": optimizer.state_dict(), "iter_num": 3000, ...}
goes in as it is and comes back equal (minigrad/checkpoint_tree.py: the tensors are entries
named by their path, "optimizer.state.0.exp_avg", the rest JSON in the metadata; no pickle,
so loading stays safe).
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
from minigrad.checkpoint_tree import (TREE_KEY, TreeError, flatten, host_array, is_flat,
                                      on_device, unflatten)
from minigrad.tensor import Tensor


class CheckpointError(ValueError):
    """A checkpoint file that cannot be read: corrupted, truncated, or not .safetensors."""


def save(obj, path, metadata=None):
    """Write `obj` to `path` (or to a file object opened 'wb', as torch.save takes: `with
    open(p, "wb") as f: mg.save(model, f)`) as .safetensors. `obj` is a state dict (name -> Tensor or
    array; a Module or optimiser stands for its state_dict()), or, as torch.save takes,
    any nesting of dicts (str or int keys), lists and tuples whose leaves are tensors,
    NumPy/CuPy arrays, NumPy scalars, None, bools, ints, floats (inf and nan too) and
    strings; anything else (a set, bytes, a class's instance, a function) is refused, naming
    where it is, before anything is written. `metadata` is a dict of strings; other JSON-able
    values are stored as their JSON text (read them back with json.loads); with a nested
    object it is kept beside the structure, whose key (TREE_KEY) it may not use.

    A flat state dict makes the same file as ever (no structure in it: it loads as
    {name: Tensor}, also with safetensors.torch.load_file); one holding a Parameter or a
    tensor that requires grad is saved as nested, so that these come back as they were. In a nested object a tensor at
    two places (or two Tensors over one memory: tied weights) is stored once, under the
    first place's name, and comes back shared (checkpoint_tree.py).

    Atomic: the file is written to a temporary file in the same directory, flushed to
    disk, then renamed over `path` (os.replace), so `path` is always either the old
    checkpoint or the complete new one. A symbolic link at `path` stays a link: the file it
    points to is the one replaced. A replaced file keeps its permission bits. A file object
    is the caller's: the bytes are written at its position, no more."""
    if hasattr(obj, "state_dict") and callable(obj.state_dict):
        obj = obj.state_dict()  # a Module (or an optimiser) was passed
    meta = _string_metadata(metadata)
    # (a flat file's too: load would read a value there as a structure)
    if meta and TREE_KEY in meta:
        raise ValueError(f"mg.save: the metadata key {TREE_KEY!r} is reserved for a "
                         f"nested object's structure; use another name")
    if is_flat(obj):
        arrays = {name: _flat_entry(name, t) for name, t in obj.items()}
    else:
        arrays, tree = flatten(obj)
        meta = dict(meta or {}, **{TREE_KEY: tree})
    if _file_object(path, "write", "save", "wb"):
        _write_safetensors(arrays, path, meta)
        return
    path = os.path.realpath(os.fspath(path))  # through symlinks: replace the target file
    directory = os.path.dirname(path)
    # a fresh name beside the target (same file system, so the rename is atomic); made
    # with os.open so the file gets the usual permissions (the umask's), not mkstemp's 0600
    # (the name cut to 200 bytes: a file name may not pass 255)
    stem = os.fsdecode(os.fsencode(os.path.basename(path))[:200].decode("utf-8", "ignore")
                       .encode("utf-8"))
    tmp = os.path.join(directory, f".{stem}.{secrets.token_hex(6)}.tmp")
    if os.path.exists(directory) and not os.path.isdir(directory):
        raise NotADirectoryError(f"mg.save: cannot write {path!r}: {directory!r} is a file, "
                                 f"not a directory")
    if not os.path.isdir(directory):
        raise FileNotFoundError(f"mg.save: cannot write {path!r}: the directory {directory!r} "
                                f"does not exist (create it first)")
    if os.path.isdir(path):     # refused before writing, not by the rename at the end
        raise IsADirectoryError(f"mg.save: {path!r} is a directory; give the path of a file "
                                f"in it, such as {os.path.join(path, 'model.safetensors')!r}")
    try:
        os.close(os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666))
    except OSError as e:   # name the file asked for, not our temporary one
        raise type(e)(e.errno, f"mg.save: cannot write {path!r}: creating a file in "
                               f"{directory!r} failed ({e.strerror}); the save needs write "
                               f"permission there, as it writes beside the file, then "
                               f"renames") from None
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


def load(path, device=None, with_metadata=False, map_location=None, *, weights_only=None,
         mmap=None):
    """Read a .safetensors file (a path, or a file object opened 'rb', as torch.load takes,
    read from its position to its end): a flat file as {name: Tensor}, a nested one (see `save`) as
    the object saved, equal to it: dict keys of their types in their order, tuples as
    tuples, Tensors (dtypes as stored) on the CPU or where `map_location` puts them, NumPy
    arrays and scalars as NumPy's, CuPy arrays as arrays of that device (NumPy's on the
    CPU). With `with_metadata=True`, returns (object, metadata dict), the metadata without
    the structure's key.

    map_location takes torch.load's forms. A .safetensors file holds host bytes and records
    no device, so every tensor's saved location is 'cpu' (whatever device it was saved
    from): a device ('cuda', mg.device(...), torch.device('cuda')) puts every tensor there;
    a dict maps locations (str) to devices (str): {'cpu': 'cuda'} moves all, {'cuda:0':
    'cpu'} (a GPU checkpoint's habit) leaves them on the CPU; a callable fn(tensor,
    location) is called once per stored tensor (tied tensors share one call) with the CPU
    Tensor (PyTorch passes an untyped storage; minigrad has none) and 'cpu', and returns that
    tensor moved (a Tensor of its shape and dtype, e.g. tensor.to('cuda')) or None (it stays
    on the CPU). `device` is the same argument under minigrad's older name (so torch.load's
    second positional, map_location, lands there too); giving both is an error unless they
    name one device. weights_only (True, False or None) changes nothing, as no file can run
    code here (there is no pickle); mmap is accepted and ignored (the arrays are read into
    memory of their own); either goes with any map_location, as in PyTorch."""
    for name, flag in (("weights_only", weights_only), ("mmap", mmap)):
        if flag not in (None, True, False):
            raise TypeError(f"mg.load: {name} must be True, False or None, got {flag!r}")
    place = _placement(device, map_location)      # refused as such, before reading
    if _file_object(path, "read", "load", "rb"):
        meta, host = _read_bytes(path)
        path = getattr(path, "name", "the file object")        # for the errors below
    else:
        path = os.fspath(path)
        meta, host = _read_path(path)
    # a view of the file's bytes: take our own copy
    host = {name: a if a.flags.writeable else a.copy() for name, a in host.items()}
    tree = meta.pop(TREE_KEY, None)
    if tree is not None:
        try:
            obj = unflatten(tree, host, place)
        except TreeError as e:
            raise CheckpointError(f"mg.load: {path!r}: {e}") from None
        return (obj, meta) if with_metadata else obj
    tensors = {name: Tensor._make(*place(name, a)) for name, a in host.items()}
    return (tensors, meta) if with_metadata else tensors


def _read_path(path):
    """(metadata, {name: host array}) of the .safetensors file at path."""
    if os.path.isdir(path):
        raise IsADirectoryError(f"mg.load: {path!r} is a directory, not a .safetensors file")
    try:
        with safe_open(path, framework="np") as f:
            meta = dict(f.metadata() or {})
            return meta, {name: _read_tensor(f, path, name) for name in f.keys()}
    except (FileNotFoundError, IsADirectoryError, PermissionError, CheckpointError):
        raise
    except (safetensors.SafetensorError, OSError, ValueError) as e:
        try:
            with open(path, "rb") as f:
                head = f.read(9)
        except OSError:
            head = b""                                    # the error below says it
        _refuse_torch_file(repr(path), head)
        raise CheckpointError(f"mg.load: {path!r} is corrupted or truncated (not a complete "
                              f".safetensors file): {e}") from None


def _read_bytes(file):
    """(metadata, {name: host array}) of the .safetensors bytes read from a file object:
    the metadata from the header (8 bytes of its length, then JSON), the arrays by
    safetensors, in name order as a file's."""
    data = file.read()
    name = repr(file.name) if hasattr(file, "name") else "the file object"
    if not isinstance(data, (bytes, bytearray, memoryview)):
        raise TypeError(f"mg.load: reading {name} gave {type(data).__name__}, not bytes; "
                        f"open the file in binary mode, open(path, 'rb')")
    data = bytes(data)
    try:
        n = int.from_bytes(data[:8], "little")
        meta = dict(json.loads(data[8:8 + n]).get("__metadata__") or {})
        host = safetensors.numpy.load(data)
    except (safetensors.SafetensorError, ValueError, AttributeError, TypeError) as e:
        _refuse_torch_file(name, data[:9])
        raise CheckpointError(f"mg.load: {name} is corrupted or truncated (not a complete "
                              f".safetensors file): {e}") from None
    return meta, {name: host[name] for name in sorted(host)}


def _file_object(target, method, op, mode):
    """Whether save's or load's target is a file object (it has `method`, and is no path);
    one not opened in binary mode is refused."""
    if isinstance(target, (str, bytes, os.PathLike)) or not hasattr(target, method):
        return False
    if "b" not in getattr(target, "mode", "b"):
        raise TypeError(f"mg.{op}: the file object is open in text mode "
                        f"({target.mode!r}); a .safetensors file is bytes: open(path, "
                        f"{mode!r})")
    return True


SAVED_LOCATION = "cpu"      # every tensor's, to map_location: a file records no device


def _placement(device, map_location):
    """load's device / map_location as one function (entry name, host array) -> (array,
    device), checked before the file is read."""
    if device is not None and map_location is not None and not _same_device(device,
                                                                            map_location):
        raise ValueError(f"mg.load: device={device!r} and map_location={map_location!r} "
                         f"disagree; they are one argument under two names (torch.load's "
                         f"is map_location): give one")
    where = map_location if map_location is not None else device
    if where is None:
        where = SAVED_LOCATION
    if isinstance(where, Mapping):
        for k, v in where.items():
            if not isinstance(k, str) or not isinstance(v, str):
                raise TypeError(f"mg.load: a map_location dict maps saved locations to devices, "
                                f"both strings (e.g. {{'cuda:0': 'cpu'}}), got {k!r}: {v!r}")
            _device_name(v, f"map_location[{k!r}]")
        where = where.get(SAVED_LOCATION, SAVED_LOCATION)
    elif callable(where):
        return _calling(where)
    elif not isinstance(where, str) and not hasattr(where, "type"):
        raise TypeError(f"mg.load: map_location must be a device ('cpu', 'cuda', "
                        f"mg.device(...)), a dict of locations to devices or a function "
                        f"(tensor, location) -> tensor or None; got {type(where).__name__}")
    _device_name(where, "map_location")
    return on_device(where)


def _device_name(device, what):
    try:
        return backend.device_name(device)
    except ValueError as e:
        raise ValueError(f"mg.load: {what}: {e}") from None


def _same_device(a, b):
    """Whether two arguments name one device (dicts and functions never do)."""
    try:
        return backend.device_name(a) == backend.device_name(b)
    except (ValueError, TypeError):
        return False


def _calling(fn):
    """The placement by a map_location function: fn(CPU tensor, 'cpu') -> that tensor moved,
    or None (it stays)."""
    host, cpu = backend.get("cpu"), backend.device_name("cpu")

    def place(entry, a):
        t = Tensor._make(host.from_numpy(a), cpu)
        out = fn(t, SAVED_LOCATION)
        if out is None:
            return t._data, cpu
        if not isinstance(out, Tensor):
            raise TypeError(f"mg.load: map_location returned {type(out).__name__} for "
                            f"{entry!r}; it must return a minigrad Tensor (the one it was "
                            f"given, moved: tensor.to('cuda')) or None (it stays on the CPU)")
        if out.shape != t.shape or out.dtype != t.dtype:
            raise ValueError(f"mg.load: map_location returned a tensor of shape {out.shape} "
                             f"and dtype {out.dtype} for {entry!r}, stored as {t.shape} "
                             f"{t.dtype}; it may move the tensor, not change it")
        return out._data, out.device
    return place


def _read_tensor(f, path, name):
    try:
        return f.get_tensor(name)
    except TypeError as e:                    # a dtype NumPy lacks: bfloat16, the float8s
        raise CheckpointError(
            f"mg.load: {path!r} stores {name!r} as {f.get_slice(name).get_dtype()}, a dtype "
            f"NumPy (and so minigrad) does not have ({e}); save the weights as float32 "
            f"instead, e.g. in PyTorch: safetensors.torch.save_file({{k: v.float() for k, v "
            f"in state_dict.items()}}, path)") from None


def _refuse_torch_file(what, head):
    """A file safetensors could not read (`what`: its name, quoted), whose first 9 bytes
    are `head`: if torch.save
    wrote it (a zip archive, or before PyTorch 1.6 a pickle), say so rather than
    'corrupted'."""
    # a pickle starts 0x80 then its protocol (2 to 5); a safetensors file starts with its
    # header's length, which may begin 0x80 too, but then its header (JSON) begins at byte
    # 8 with "{"
    pickle = head[:1] == b"\x80" and head[1:2] in (b"\x02", b"\x03", b"\x04", b"\x05") \
        and head[8:9] != b"{"
    if head[:4] == b"PK\x03\x04" or pickle:
        raise CheckpointError(f"mg.load: {what} is a PyTorch file (torch.save's zip or "
                              f"pickle), not .safetensors; in PyTorch, save the state dict "
                              f"with safetensors.torch.save_file(model.state_dict(), path) "
                              f"and load that")


def load_metadata(path):
    """Only the metadata dict of a .safetensors file (reads the header, not the tensors);
    a nested object's structure (under TREE_KEY) is left out, as mg.load's metadata."""
    path = os.fspath(path)
    try:
        with safe_open(path, framework="np") as f:
            meta = dict(f.metadata() or {})
            meta.pop(TREE_KEY, None)
            return meta
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
    """The one place that writes bytes (tests replace it to simulate a crash mid-save), to
    a path or a file object. safetensors reports a failed write (a full disk) as its own
    error: an OSError here."""
    try:
        if hasattr(path, "write"):
            path.write(safetensors.numpy.save(arrays, metadata=metadata))
        else:
            safetensors.numpy.save_file(arrays, path, metadata=metadata)
    except safetensors.SafetensorError as e:
        if "header too large" in str(e):   # not the disk's fault: the format's 100 MB limit
            raise ValueError(
                "mg.save: the object's names, metadata and non-tensor values (strings, "
                "numbers, lists of them) make a .safetensors header over the format's limit "
                "of 100 MB; store large data as arrays (np.asarray(a_long_list)), which "
                "have no such limit") from None
        raise OSError(f"mg.save: writing {path!r} failed: {e}") from None


def _flat_entry(name, t):
    """An entry of a flat state dict as its host array (the names checked)."""
    if name == "__metadata__":
        raise ValueError("mg.save: the name '__metadata__' is reserved by the .safetensors "
                         "format for the metadata block; rename that tensor (put strings "
                         "in `metadata` instead)")
    return host_array(f"entry {name!r}", t)


def _string_metadata(metadata):
    if metadata is None:
        return None
    if not isinstance(metadata, Mapping):
        raise TypeError(f"mg.save: metadata must be a dict of strings, got "
                        f"{type(metadata).__name__}")
    out = {}
    for k, v in metadata.items():
        if not isinstance(k, str):
            raise TypeError(f"mg.save: metadata keys must be strings, got {k!r}")
        if isinstance(v, str):
            out[k] = v
            continue
        try:
            out[k] = json.dumps(v)
        except (TypeError, ValueError):       # ValueError: a list that holds itself
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
