"""The one seam between minigrad and an array library.

A *device* names where a tensor's array lives: "cpu" is NumPy, "cuda" is CuPy. Every other
file asks this module for the array module (`xp`) of a device instead of importing NumPy or
CuPy itself, so a CPU-only install imports cleanly and a GPU tensor can never be computed on
by NumPy behind the user's back. CuPy is imported lazily, the first time "cuda" is asked for.
Each device's Backend is assembled from the library this module hands it: the CPU's in
backend_numpy.py, the GPU's in backend_cupy.py.
"""
import functools
import importlib
import numbers
import threading

import numpy as np


# dtypes: NumPy's dtype objects are the library's dtypes (CuPy uses the same ones).
float16, float32, float64 = np.dtype("float16"), np.dtype("float32"), np.dtype("float64")
int32, int64, bool_ = np.dtype("int32"), np.dtype("int64"), np.dtype("bool")
uint8 = np.dtype("uint8")
DTYPE_CLASS = np.dtype
DEFAULT_FLOAT = float32

_DTYPE_NAMES = {"float16": float16, "half": float16, "float32": float32, "float": float32,
                "float64": float64, "double": float64, "int32": int32, "int": int32,
                "int64": int64, "long": int64, "bool": bool_, "int16": np.dtype("int16"),
                "short": np.dtype("int16"), "int8": np.dtype("int8"), "uint8": uint8}


_TENSOR_DTYPES = frozenset(np.dtype(c) for c in "?bhilqBHILQefd")   # (uint16..64: arrays')


class UnavailableDtype(str):
    """A dtype PyTorch has and NumPy and CuPy lack (bfloat16): a name that exists, so that
    code listing dtypes runs (nanoGPT's {'bfloat16': torch.bfloat16, ...}[dtype]), and
    that is refused, with what to use instead, wherever a dtype is taken."""
    def __repr__(self): return f"minigrad.{self}"


def dtype(d):
    """Normalise a dtype given as a name, a NumPy dtype or a NumPy scalar type."""
    if d is None:
        return None
    if type(d).__module__ == "torch":           # torch.float64: by its name, as a string
        d = str(d).removeprefix("torch.")
    if d == "bfloat16":                         # (mg.bfloat16 is that string too)
        raise TypeError("dtype bfloat16 is not available: NumPy and CuPy have no bfloat16; "
                        "use mg.float16 (mixed precision: mg.autocast with "
                        "mg.amp.GradScaler) or mg.float32")
    if hasattr(d, "shape") and not isinstance(d, (type, np.dtype)):   # a tensor, an array
        # or a NumPy number, whose dtype NumPy would read: a mistake, not a dtype
        raise TypeError(f"a dtype is needed (mg.float32, 'float64', ...), got a "
                        f"{type(d).__name__}; for a tensor's dtype, pass t.dtype")
    if isinstance(d, str):
        if d not in _DTYPE_NAMES:
            raise TypeError(f"unknown dtype {d!r}; valid: {sorted(_DTYPE_NAMES)}")
        return _DTYPE_NAMES[d]
    try:
        found = np.dtype(d)
    except TypeError:
        raise TypeError(f"unknown dtype {d!r}; valid: {sorted(_DTYPE_NAMES)}") from None
    if found not in _TENSOR_DTYPES:     # complex64, object, '>f4', longdouble: ops fail
        raise TypeError(f"dtype {found} cannot be a tensor's: tensors are bool, integer or "
                        f"floating-point (at most 64 bits, this machine's byte order); "
                        f"valid: {sorted(_DTYPE_NAMES)}")
    return found


def promote_float(a, b):
    """The wider of two floating dtypes."""
    return np.promote_types(a, b)


def is_numpy(xp):
    """Whether an array module is NumPy itself (for the few NumPy-only fast paths)."""
    return xp is np


def is_floating(d):
    return np.dtype(d).kind == "f"


def value_range(d):
    """(lowest, highest) finite value of a dtype, as Python numbers."""
    return _value_range(np.dtype(d))


@functools.lru_cache(maxsize=None)       # asked for every integer operand (ops' lift)
def _value_range(d):
    if d.kind == "b":
        return 0, 1
    info = np.iinfo(d) if d.kind in "iu" else np.finfo(d)
    return (int(info.min), int(info.max)) if d.kind in "iu" else (float(info.min),
                                                                   float(info.max))


def machine_eps(d):
    """The float dtype's machine epsilon (1.19e-7 for float32), as a Python float."""
    return float(np.finfo(d).eps)


def is_integer(n):
    """A Python or NumPy integer, not a bool (True is an int to Python, never a size here)."""
    return isinstance(n, numbers.Integral) and not isinstance(n, bool)


def is_scalar(x):
    """A real Python or NumPy number or bool: a weak, dtype-less constant (not a NumPy
    complex: cast to the tensor's dtype, np.complex64(1j) would lose its imaginary part)."""
    return isinstance(x, (bool, int, float, np.bool_, np.integer, np.floating))


def python_scalar(x):
    """A NumPy scalar as the Python scalar it holds (np.int64(1) -> 1; np.longdouble, whose
    item() is itself, as a float: ops look for floats); others unchanged."""
    if isinstance(x, np.generic):
        x = x.item()
        return float(x) if isinstance(x, np.floating) else x
    return x


def broadcast_shapes(*shapes):
    """The shape that broadcasting gives (a ValueError if none): shape arithmetic on the
    host, the same for every device (CuPy has no broadcast_shapes of its own)."""
    return tuple(np.broadcast_shapes(*shapes))


class Backend:
    """What the engine needs from one array library: the module itself plus the few
    functions whose spelling differs between NumPy and CuPy."""

    def __init__(self, name, xp, erf, index_add, to_numpy, from_numpy, special=None):
        self.name, self.xp = name, xp
        self.erf = erf                  # elementwise error function, full precision
        # scipy.special on the CPU, cupyx.scipy.special on a GPU (ops/special.py's source);
        # None without SciPy: those ops then say what to install
        self.special = special
        self.index_add = index_add      # target[index] += values, repeated indices summed
        self.to_numpy = to_numpy        # device array -> host NumPy array
        self.from_numpy = from_numpy    # host NumPy array -> device array
        self.rng = xp.random.default_rng(0)
        # elements per piece when a fused op runs a chain of elementwise passes piece by
        # piece so each piece stays in the CPU's cache (None: whole arrays, as on a GPU)
        self.cache_block = None
        # arrays in host memory: an op may read a value back to branch on it (on a GPU
        # that would wait for the device)
        self.host = False
        # how the library's float32 GEMMs may round (see set_float32_matmul_precision);
        # None where there is no choice (NumPy's BLAS always computes in float32)
        self.set_matmul_precision = None
        # fused elementwise kernels (backend_kernels.py) where the library compiles them
        # (CuPy); None: the ops run their array chains
        self.kernels = None
        # wait for the device's queued work (CuPy's kernels run asynchronously); None where
        # every call finishes its work before it returns (NumPy)
        self.synchronize = None

    def uniform(self, shape):
        """float32 draws from [0, 1): what a GPU's dropout masks are made of (keep_mask; the
        fused dropout kernel compares them with p itself)."""
        return self.rng.random(shape, dtype=self.xp.float32)

    def keep_mask(self, shape, p, out=None):
        """Booleans, each True with probability 1 - p (dropout's mask), from uniform floats
        (the host's Backend draws them from raw bits: backend_numpy.py)."""
        return self.xp.greater_equal(self.uniform(shape), p, out=out)


def scipy_module(name):
    """scipy.<name> (special, sparse), or None where SciPy is missing: a dependency, but a
    bare machine running the source with PYTHONPATH=. may lack it (backend_numpy.py then
    falls back)."""
    try:
        return importlib.import_module("scipy." + name)
    except ImportError:
        return None


def _numpy_backend():
    from minigrad.backend_numpy import HostBackend     # (it builds on this module)
    return HostBackend()


def _cupy_backend():
    try:
        import cupy
        import cupyx.scipy.special
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise RuntimeError("no CUDA device visible")
    except Exception as e:  # ImportError, or a CUDA driver/runtime error
        raise RuntimeError(
            f"device 'cuda' needs CuPy and an NVIDIA GPU ({type(e).__name__}: {e}). "
            "Install the extra matching your CUDA: pip install -e \".[cuda12]\" or \".[cuda13]\"; "
            "or use device='cpu'") from None
    from minigrad.backend_cupy import cupy_backend     # (it builds on this module)
    return cupy_backend(cupy, cupyx.scipy.special)


def cupy_matmul_precision(cupy, precision):
    """CuPy's compute type for float32 GEMMs: TensorFloat-32 tensor cores (inputs rounded
    to 10 mantissa bits, float32 sums; ~8x the float32 rate on an A100 or H100) unless
    "highest", and float32 on GPUs older than the A100 (compute capability 8.0), which have
    no TF32, as PyTorch does. CuPy's own switch is the CUPY_TF32 environment variable, read
    once at its first float32 GEMM; set_compute_type changes it at any time."""
    from cupy._core import _routines_linalg as linalg
    tf32 = precision != "highest" and int(cupy.cuda.Device().compute_capability) >= 80
    cupy._core.set_compute_type(cupy.float32, linalg.COMPUTE_TYPE_TF32 if tf32
                                else linalg.COMPUTE_TYPE_DEFAULT)


_FACTORIES = {"cpu": _numpy_backend, "cuda": _cupy_backend}
_BACKENDS = {}
_SEED = [0]
_DEVICE_SEEDS = {}                       # a device's own seed (mg.cuda.manual_seed's)
_CPU_SEED = [0]                          # initial_seed()'s: _SEED, or a restored state's
_PRECISION = [None]                      # None: never set, each library's own default
# whether the precision was set for the matmuls themselves (this function, or
# backends.cuda.matmul's flags): then backends.fp32_precision, the global one, leaves it
_PRECISION_SET = [False]
MATMUL_PRECISIONS = ("highest", "high", "medium")


def set_float32_matmul_precision(precision):
    """PyTorch's switch for float32 matrix products: "highest" computes them in float32;
    "high" and "medium" let a GPU use TensorFloat-32 tensor cores (PyTorch's "medium" may
    go down to bfloat16; here both mean TF32). On the CPU every GEMM stays float32."""
    if precision not in MATMUL_PRECISIONS:
        raise ValueError(f"set_float32_matmul_precision: unknown precision {precision!r}; "
                         f"valid: {', '.join(MATMUL_PRECISIONS)}")
    _PRECISION_SET[0] = True
    _apply_precision(precision)


def _apply_precision(precision):
    """The precision in effect, without marking it set (mg.backends' global follows)."""
    _PRECISION[0] = precision
    for b in _BACKENDS.values():
        if b.set_matmul_precision is not None:
            b.set_matmul_precision(precision)


def get_float32_matmul_precision():
    """The precision last set ("highest", as PyTorch, if never)."""
    return _PRECISION[0] or "highest"


def started():
    """The Backends built so far (a device's is built when it first makes a tensor), each
    once: "cuda" and "cuda:0" share one."""
    return list({id(b): b for b in _BACKENDS.values()}.values())


def register_device(name, factory):
    """Add a device whose Backend is built by `factory()` (tests use it to prove the seam)."""
    _FACTORIES[name] = factory
    _BACKENDS.pop(name, None)


class Device(str):
    """A device's name, "cpu" or "cuda", that also answers torch.device's questions
    (`t.device.type`, `t.device.index`). A str, so `t.device == "cuda"`, f-strings and JSON
    work as with the plain name."""
    __slots__ = ()

    @property
    def type(self):
        return str.__str__(self)

    @property
    def index(self):
        return None                 # one GPU: "cuda:0" is "cuda" (torch.device("cuda"))

    def __enter__(self):             # `with mg.device("cuda"):` (backend_device.py)
        return enter_device(self)

    def __exit__(self, *exc):
        exit_device()


_DEVICES = {}                       # name -> its one Device


def device_name(device):
    """The Device of a name ("cpu", "cuda", "cuda:0") or of a torch.device-like object."""
    if device is None:
        device = "cpu"
    found = _DEVICES.get(device) if isinstance(device, str) else None
    if found is not None and found in _FACTORIES:
        return found
    name = str(device)
    if name.startswith("cuda:"):    # a single-GPU library: "cuda:0" means "cuda"
        name = "cuda"
    elif name == "cpu:0":           # PyTorch's name for the one CPU device
        name = "cpu"
    if name not in _FACTORIES:
        why = ("; minigrad has no 'meta' device (tensors with a shape and no data: every op "
               "would need a shape rule): keep the module or tensor on 'cpu', and to learn a "
               "model's shapes run it on a one-sample cpu input under no_grad()"
               if name.split(":")[0] == "meta" else "")
        raise ValueError(f"unknown device {name!r}; valid devices: {sorted(_FACTORIES)}{why}")
    return _DEVICES.setdefault(name, Device(name))


def get(device):
    """The Backend of a device, built on first use and seeded with the current seed."""
    b = _BACKENDS.get(device)
    if b is None:
        name = device_name(device)
        b = _BACKENDS.get(name)
        if b is None:
            b = _BACKENDS[name] = _FACTORIES[name]()
            b.rng = b.xp.random.default_rng(device_seed(name))
            if _PRECISION[0] is not None and b.set_matmul_precision is not None:
                b.set_matmul_precision(_PRECISION[0])    # set before the device's first use
    return b


_CONSTANTS = {}                          # (xp, key) -> array, oldest first (dicts keep order)
_MAX_CONSTANTS = 64
_MAX_CONSTANT_BYTES = 16 * 2 ** 20       # all of them together; one may take a quarter
_CONSTANTS_LOCK = threading.Lock()


def constant(xp, key, make):
    """The array `make()` builds, kept by (xp, key) and reused: the constants the fused ops
    need on every call (a column of ones to sum rows with, the causal mask), each of which
    would otherwise cost a GPU kernel launch or two per call. Callers never write into it
    (NumPy's copy is made read-only to make sure). The most recently used are kept, at most
    64 and 16 MiB (a larger one, such as a long context's causal mask, is made each time)."""
    k = (xp, key)
    with _CONSTANTS_LOCK:
        a = _CONSTANTS.pop(k, None)
        if a is not None:
            _CONSTANTS[k] = a            # (re)inserted last: the most recently used
            return a
    a = make()                           # outside the lock: make may ask for a constant
    if a.nbytes > _MAX_CONSTANT_BYTES // 4:
        return a
    if xp is np:
        a.flags.writeable = False
    with _CONSTANTS_LOCK:
        while _CONSTANTS and (len(_CONSTANTS) >= _MAX_CONSTANTS or a.nbytes + sum(
                c.nbytes for c in _CONSTANTS.values()) > _MAX_CONSTANT_BYTES):
            del _CONSTANTS[next(iter(_CONSTANTS))]
        _CONSTANTS[k] = a
    return a


def filled(xp, shape, value, dtype):
    """A kept constant array of `shape` filled with `value` (see `constant`; the value is
    keyed by its repr, so -0.0 is not 0.0 and an array value is keyed too)."""
    dtype = np.dtype(dtype)
    return constant(xp, ("full", shape, repr(value), dtype.str),
                    lambda: xp.full(shape, value, dtype))


def cuda_is_available():
    try:
        get("cuda")
        return True
    except RuntimeError:
        return False


def device_of_array(a):
    """Which device a raw array belongs to."""
    if isinstance(a, np.ndarray):
        return device_name("cpu")
    if type(a).__module__.startswith("cupy"):  # a CuPy array made before minigrad asked for
        get("cuda")                              # "cuda": build that backend now
        return device_name("cuda")
    for name, b in _BACKENDS.items():
        if name != "cpu" and isinstance(a, b.xp.ndarray):
            return device_name(name)
    what = f"{type(a).__module__}.{type(a).__name__}"
    if hasattr(a, "detach") and hasattr(a, "cpu"):      # PyTorch's: copied by mg.tensor only
        raise TypeError(f"a {what} cannot enter a minigrad op; convert it first with "
                        f"mg.tensor(t) (a copy) or mg.as_tensor(t)")
    raise TypeError(f"cannot make a tensor from a {what}; give a Python scalar or (nested) "
                    f"list, a NumPy or CuPy array or a minigrad Tensor (mg.tensor also "
                    f"takes a PyTorch tensor)")


def plain_array(a, share=False):
    """A tensor's host array as a plain ndarray of native byte order: a subclass (np.matrix,
    np.memmap) as an ndarray view of its memory (np.matrix would keep rows 2-D); a masked
    array refused (its mask would be lost: the masked values would count); a big-endian
    array converted (a copy), or refused where the memory is to be shared (from_numpy).
    Any other array (a device's) as it is."""
    if not isinstance(a, np.ndarray):
        return a
    if isinstance(a, np.ma.MaskedArray):
        raise TypeError("cannot make a tensor of a masked array: its mask would be lost; fill "
                        "the masked values first (a.filled(value)), or pass a.data")
    a = np.asarray(a)
    if not a.dtype.isnative:
        if share:
            raise TypeError(f"from_numpy: the array is of byte order {a.dtype.str!r} (not this "
                            f"machine's), so its memory cannot be shared; give "
                            f"a.astype(a.dtype.newbyteorder('=')), or use mg.tensor(a)")
        a = a.astype(a.dtype.newbyteorder("="))
    return a


def to_host(a):
    """An array of any device, or a Python scalar or list, as a host NumPy array."""
    if isinstance(a, np.ndarray):
        return a
    if isinstance(a, (list, tuple, int, float, bool, np.generic)):
        return np.asarray(a)
    return get(device_of_array(a)).to_numpy(a)


def host_rng(generator=None, op="random"):
    """The host generator a draw uses: the CPU's, seeded by mg.manual_seed (None), or
    `generator`: an mg.Generator, a NumPy Generator (np.random.default_rng(seed)) or an int
    seed for a fresh one."""
    if generator is None:
        return get("cpu").rng
    if is_integer(generator) and generator >= 0:
        return np.random.default_rng(generator)
    generator = getattr(generator, "rng", generator)     # mg.Generator's NumPy one
    if isinstance(generator, (np.random.Generator, np.random.RandomState)):
        return generator
    raise TypeError(f"{op}: generator must be None, an mg.Generator, a non-negative int "
                    f"seed or a NumPy Generator (np.random.default_rng(seed)), got "
                    f"{generator!r}")


def manual_seed(seed):
    """Seed every device's generator (those built later start from the same seed)."""
    if not is_integer(seed) or not 0 <= seed < 2 ** 64:       # as torch's (64 bits)
        raise ValueError(f"manual_seed: the seed must be a non-negative integer below "
                         f"2**64, got {seed!r}")
    seed = int(seed)            # a NumPy integer too: get_rng_state packs it, as torch's
    _SEED[0] = _CPU_SEED[0] = seed
    _DEVICE_SEEDS.clear()
    for b in _BACKENDS.values():
        b.rng = b.xp.random.default_rng(seed)


# where arrays' elements lie in memory: backend_memory.py (re-exported here, where ops look)
from minigrad.backend_memory import shares_elements, view_positions, memory_from  # noqa: E402,F401
# the default device (set_default_device, `with device:`) and a device's own seed:
# backend_device.py
from minigrad.backend_device import (default_device, chosen_default_device,  # noqa: E402,F401
                                     set_default_device, get_default_device,
                                     enter_device, exit_device, device_seed, set_device_seed,
                                     current_seed, set_cpu_seed)
