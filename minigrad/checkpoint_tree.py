"""Nested checkpoints (torch.save's objects) in a .safetensors file, with no pickle.

`flatten` turns an object made of dicts, lists and tuples into flat entries (name -> host
array, named by the object's paths: "model.transformer.wte.weight",
"optimizer.state.0.exp_avg"; where two paths give one name, the later gets "~1", "~2") and a JSON description of the structure, kept in the file's
metadata under TREE_KEY; `unflatten` rebuilds the object. In the JSON, every container and
array is an object with one tag ({"dict": [[key, value], ...]}, {"list": [...]},
{"tuple": [...]}, {"tensor": name}, ...), so dict keys keep their type (int or str) and
their order, and tuples stay tuples; None, bools, ints, strings and finite floats are
themselves, and inf/nan are {"float": "inf"} (the header stays strict JSON).

What comes back: Tensors (a PyTorch tensor's too; a Parameter as a Parameter, with
requires_grad as saved) on the load's device, NumPy arrays and scalars as NumPy's, CuPy
arrays as arrays of the load's device; an OrderedDict as one, another mapping as a dict.

A leaf that is the same object at two places (a Tensor, a NumPy array), or Tensors over the
same memory (`state_dict()`'s tied weights), is stored once and comes back shared: the same
object at both places, or Tensors over one array. Containers are copied at each place.
"""
import json
import math
from collections import OrderedDict
from collections.abc import Mapping

from minigrad import backend
from minigrad.backend import np
from minigrad.creation import from_other_library
from minigrad.tensor import Tensor

TREE_KEY = "__minigrad_tree__"
FORMAT = 1

SAVABLE_DTYPES = ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32", "int64",
                  "uint64", "float16", "float32", "float64", "complex64")

STORABLE = ("dicts (str or int keys), lists, tuples, minigrad/PyTorch tensors, NumPy/CuPy "
            "arrays and NumPy scalars, and Python None, bool, int, float and str")


class TreeError(ValueError):
    """A file whose structure description cannot be rebuilt (damaged or foreign)."""


def is_flat(obj):
    """A plain state dict (str name -> tensor or array), saved as before this module:
    no structure in the metadata, so the file is the same bytes as ever. A Parameter or a
    tensor that requires grad makes it nested (state_dict() holds neither), as a flat file
    has nowhere to say so and would give back a plain Tensor that requires no grad."""
    return isinstance(obj, Mapping) and all(
        isinstance(k, str) and (isinstance(v, Tensor) or hasattr(v, "shape") and
                                hasattr(v, "dtype")) and not _has_grad_state(v)
        for k, v in obj.items())


def _has_grad_state(v):
    """A Parameter (ours) or a tensor (ours or PyTorch's) that requires grad."""
    return getattr(v, "requires_grad", False) is True or \
        isinstance(v, Tensor) and type(v).__name__ == "Parameter"


def host_array(what, t):
    """A tensor or array as a C-contiguous host NumPy array of a dtype .safetensors stores;
    `what` names it in errors."""
    if isinstance(t, Tensor):
        a = t.numpy()
    else:
        try:
            a = backend.plain_array(backend.to_host(from_other_library(t)))  # torch's too
        except TypeError as e:                        # a dtype NumPy lacks (bfloat16)
            raise TypeError(f"mg.save: {what}: {e}") from None
    if a.dtype.name not in SAVABLE_DTYPES:
        raise TypeError(f"mg.save: {what} has dtype {a.dtype}, which .safetensors cannot "
                        f"store (it stores {', '.join(SAVABLE_DTYPES)}); convert it first")
    # safetensors copies from the array's memory as one block: it must be C-contiguous
    # (not ascontiguousarray, which would turn a 0-d array into shape (1,))
    return a if a.flags.c_contiguous else a.copy(order="C")


def flatten(obj):
    """(name -> host array, JSON text of the structure) for a nested object; a TypeError
    naming the path of anything not storable (before anything is written)."""
    f = _Flattener()
    root = f.node(obj, "obj", [], set())
    return f.arrays, json.dumps({"format": FORMAT, "root": root}, allow_nan=False)


class _Flattener:
    def __init__(self):
        self.arrays = {}
        self.taken = {"__metadata__"}    # the format's own name for its metadata block
        self.by_object = {}              # id(leaf) -> its node (the leaf kept alive there)
        self.by_memory = {}              # id(a tensor's array) -> (entry name, array)
        self.objects = 0

    def node(self, x, path, parts, open_ids):
        if x is None or type(x) in (bool, int, str):
            return x
        if type(x) is float:
            return x if math.isfinite(x) else {"float": repr(x)}    # 'inf', '-inf', 'nan'
        if isinstance(x, Mapping) or type(x) in (list, tuple):
            if id(x) in open_ids:
                raise TypeError(f"mg.save: {path} contains itself; a checkpoint must be a "
                                f"tree (a container may appear at two places, not in itself)")
            open_ids = open_ids | {id(x)}
            if type(x) in (list, tuple):
                return {type(x).__name__: [self.node(v, f"{path}[{i}]", parts + [str(i)],
                                                     open_ids) for i, v in enumerate(x)]}
            items = []
            for k, v in x.items():
                if type(k) not in (str, int):
                    raise TypeError(f"mg.save: {path} has the key {k!r} of type "
                                    f"{type(k).__name__}; checkpoint dict keys must be str or "
                                    f"int")
                items.append([k, self.node(v, f"{path}[{k!r}]", parts + [str(k)], open_ids)])
            # an OrderedDict (a state_dict()) stays one; another mapping comes back a dict
            return {"ordered_dict" if type(x) is OrderedDict else "dict": items}
        kind = _leaf_kind(x)
        if kind is None:
            # torch.save pickles a whole Module or optimiser; here its state dict goes in
            hint = (f"; save {path}.state_dict() instead (load it back with "
                    f"load_state_dict)" if callable(getattr(x, "state_dict", None)) else "")
            raise TypeError(f"mg.save: {path} is of type {type(x).__module__}."
                            f"{type(x).__qualname__}, which a checkpoint cannot store (no "
                            f"pickle: files stay safe to load); it stores {STORABLE}{hint}")
        seen = self.by_object.get(id(x))
        if seen is not None:
            return seen[0]
        memory = x._data if isinstance(x, Tensor) else None
        shared = self.by_memory.get(id(memory)) if memory is not None else None
        if shared is not None:
            name = shared[0]
        else:
            name = self.fresh_name(".".join(parts) or "obj")
            self.arrays[name] = host_array(path, x)
            if memory is not None:
                self.by_memory[id(memory)] = (name, memory)
        leaf = {kind: name, "object": self.objects}
        self.objects += 1
        if kind == "tensor" and getattr(x, "requires_grad", False):
            leaf["requires_grad"] = True
        if type(x).__name__ == "Parameter" and isinstance(x, Tensor):
            leaf["parameter"] = True          # another Tensor subclass comes back a Tensor
        self.by_object[id(x)] = (leaf, x)
        return leaf

    def fresh_name(self, name):
        """The path's name, or, where another path already gave it (a key with a "." beside
        nested keys, int 0 beside str "0"), the first free name~n."""
        out, n = name, 0
        while out in self.taken:
            n += 1
            out = f"{name}~{n}"
        self.taken.add(out)
        return out


def _leaf_kind(x):
    if isinstance(x, Tensor) or hasattr(x, "detach") and hasattr(x, "cpu") and \
            hasattr(x, "shape"):
        return "tensor"                               # a PyTorch tensor comes back ours
    if isinstance(x, np.ndarray):
        return "ndarray"
    if isinstance(x, np.generic) and x.dtype.name in SAVABLE_DTYPES:
        return "numpy_scalar"
    if type(x).__module__.startswith("cupy") and hasattr(x, "shape"):
        return "device_array"
    return None


def unflatten(text, host, device):
    """The object whose structure `text` (flatten's JSON) describes, its arrays read from
    `host` (entry name -> host array): Tensors and CuPy arrays on `device`, NumPy arrays
    and scalars as saved. `device` may also be a function (entry name, host array) ->
    (array, its device), called once per entry (mg.load's map_location)."""
    try:
        tree = json.loads(text)
        if tree.get("format") != FORMAT:
            raise TreeError(f"format {tree.get('format')!r}, not {FORMAT} (a newer minigrad "
                            f"wrote it?)")
        return _Rebuilder(host, device if callable(device) else on_device(device)).node(
            tree["root"])
    except (ValueError, TypeError, KeyError, AttributeError, RecursionError) as e:
        raise TreeError(f"its structure ({TREE_KEY!r} in the metadata) is damaged: "
                        f"{type(e).__name__}: {e}") from None


def on_device(device):
    """The placement of every entry on one device: (entry name, host array) -> (array,
    device)."""
    b, name = backend.get(device), backend.device_name(device)
    return lambda entry, a: (b.from_numpy(a), name)


class _Rebuilder:
    def __init__(self, host, place):
        self.host, self.place = host, place
        self.objects = {}                 # the saved object number -> the rebuilt leaf
        self.memory = {}            # entry name -> (device array, its device, version counter)

    def node(self, n):
        if n is None or type(n) in (bool, int, float, str):
            return n
        if type(n) is not dict or not n:
            raise TreeError(f"unknown node {n!r}")
        tag = next(iter(n))
        value = n[tag]
        if tag in ("dict", "ordered_dict"):
            out = (dict if tag == "dict" else OrderedDict)()
            for k, v in value:
                if type(k) not in (str, int):      # save writes no other kind of key
                    raise TreeError(f"a dict key {k!r} of type {type(k).__name__}, not str "
                                    f"or int")
                out[k] = self.node(v)
            return out
        if tag in ("list", "tuple"):
            items = [self.node(v) for v in value]
            return items if tag == "list" else tuple(items)
        if tag == "float":
            return float(value)               # 'inf', '-inf', 'nan'
        obj = self.objects.get(n.get("object"))
        if obj is None:
            obj = self.objects[n["object"]] = self.leaf(tag, value, n)
        return obj

    def leaf(self, kind, name, n):
        if name not in self.host:
            raise KeyError(f"the structure names the entry {name!r}, which the file lacks")
        a = self.host[name]
        if kind == "ndarray":
            return a
        if kind == "numpy_scalar":
            if a.ndim:
                raise TreeError(f"the NumPy scalar {name!r} has shape {a.shape}, not ()")
            return a[()]
        if kind not in ("tensor", "device_array"):
            raise TreeError(f"unknown leaf kind {kind!r}")
        if name not in self.memory:          # one device copy however many leaves share it
            self.memory[name] = self.place(name, a) + ([0],)
        array, device, version = self.memory[name]
        if kind == "device_array":
            return array
        t = Tensor._make(array, device)
        t._version_counter = version          # as detach(): views of one memory
        if n.get("parameter"):
            from minigrad.nn.module import Parameter     # nn needs this module's package
            return Parameter(t, requires_grad=bool(n.get("requires_grad")))
        return t.requires_grad_() if n.get("requires_grad") else t
