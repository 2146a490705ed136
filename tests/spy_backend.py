"""A fake array library for the seam test: the "spy" device.

Its arrays wrap NumPy arrays but are not ndarrays and, exactly like CuPy's, refuse NumPy's
protocols: `np.exp(spy)` raises (`__array_ufunc__ = None`), `np.concatenate([spy])` raises
(`__array_function__`), `np.asarray(spy)` raises (`__array__`), and mixing a host ndarray into
a spy operation raises. So an op that calls NumPy directly on device data, or slips a host
array in, fails loudly here instead of silently running on the CPU when the device is a GPU.

Only what the engine is allowed to use exists: the ndarray methods and `xp` functions listed
below (CuPy has them all). Anything else is an AttributeError naming what was asked for.
"""
import collections
import contextlib
import types

import numpy as np
import scipy.special
from scipy.special import erf as _host_erf

from minigrad import backend, backend_cupy


# What tests may count: "sync" is every device-to-host read (bool/int/float/item/tolist of an
# array, to_numpy); "gather" every indexing with an array (advanced indexing, a copy);
# "launch" every call that on CuPy would launch a kernel: every array operation but views,
# allocations and conversions that return their input (the fused kernels count apart);
# "wait" every wait for the device's queued work (Backend.synchronize, as CuPy's).
COUNTS = {"sync": 0, "gather": 0, "launch": 0, "wait": 0}
NO_LAUNCH = {"reshape", "transpose", "swapaxes", "squeeze", "broadcast_to", "expand_dims",
             "moveaxis", "broadcast_shapes", "empty", "empty_like", "may_share_memory",
             "as_strided", "sliding_window_view"}


def _count(what):
    COUNTS[what] += 1


@contextlib.contextmanager
def counted():
    """with counted() as n: ...  — afterwards n["sync"], n["gather"] hold what the block did."""
    start, done = dict(COUNTS), {}
    yield done
    done.update({k: COUNTS[k] - start[k] for k in COUNTS})


_Flags = collections.namedtuple("Flags", "c_contiguous f_contiguous owndata")


class SpyArray:
    __slots__ = ("a", "__weakref__")
    __array_ufunc__ = None                  # NumPy ufuncs on a spy array raise TypeError

    def __init__(self, a):
        if not isinstance(a, np.ndarray):
            raise TypeError(f"SpyArray wraps an ndarray, got {type(a).__name__}")
        self.a = a

    def __array__(self, *args, **kwargs):
        raise TypeError("spy array: implicit conversion to a NumPy array refused "
                        "(an op used NumPy on device data; go through backend.to_numpy)")

    def __array_function__(self, func, types, args, kwargs):
        raise TypeError(f"spy array: numpy.{func.__name__} called on device data "
                        f"(use the backend's xp)")

    shape = property(lambda self: self.a.shape)
    dtype = property(lambda self: self.a.dtype)
    ndim = property(lambda self: self.a.ndim)
    size = property(lambda self: self.a.size)
    nbytes = property(lambda self: self.a.nbytes)
    strides = property(lambda self: self.a.strides)
    # CuPy's flags: these three only (no `writeable`)
    flags = property(lambda self: _Flags(self.a.flags.c_contiguous, self.a.flags.f_contiguous,
                                         self.a.flags.owndata))
    T = property(lambda self: SpyArray(self.a.T))
    # CuPy's MemoryPointer: .ptr, the address of the array's first element
    data = property(lambda self: types.SimpleNamespace(
        ptr=self.a.__array_interface__["data"][0]))
    # every result is a new wrapper, so no spy array is the base of another: Function.apply
    # finds no views here (and version counts are not shared between them)
    base = property(lambda self: None)

    def __len__(self): return len(self.a)
    def __repr__(self): return "spy(" + repr(self.a) + ")"

    def _read(self, convert):               # a value crosses to the host: a sync on a GPU
        _count("sync")
        return convert(self.a)

    def __bool__(self): return self._read(bool)
    def __int__(self): return self._read(int)
    def __float__(self): return self._read(float)
    def __index__(self): return self._read(lambda a: a.__index__())
    def item(self): return self._read(lambda a: a.item())
    def tolist(self): return self._read(lambda a: a.tolist())

    def __getitem__(self, index):
        items = index if isinstance(index, tuple) else (index,)
        if any(isinstance(i, SpyArray) for i in items):
            _count("gather")
            _count("launch")
        return wrap(self.a[unwrap(index)])

    def __setitem__(self, index, value):
        _count("launch")
        self.a[unwrap(index)] = unwrap(value)
    __hash__ = None


def unwrap(x, allow_host=False):
    """Spy arrays to ndarrays, recursively; a host ndarray here is a leak unless allowed."""
    if isinstance(x, SpyArray):
        return x.a
    if isinstance(x, np.ndarray):
        if allow_host:
            return x
        raise TypeError(f"spy device: a host NumPy array of shape {x.shape} was mixed into a "
                        f"device operation (move it with backend.from_numpy first)")
    if isinstance(x, (tuple, list)):
        return type(x)(unwrap(i, allow_host) for i in x)
    return x                                # Python/NumPy scalars, slices, None, dtypes


def wrap(r):
    """NumPy results as spy arrays; a NumPy scalar becomes a 0-d array (as CuPy gives)."""
    if isinstance(r, np.ndarray):
        return SpyArray(r)
    if isinstance(r, np.generic):
        return SpyArray(np.asarray(r))
    if isinstance(r, (tuple, list)) and any(isinstance(i, (np.ndarray, np.generic)) for i in r):
        return type(r)(wrap(i) for i in r)
    return r


def _launched(name, inputs, result):
    """Count a launch unless `name` only views or allocates, or returned its input as is."""
    if name not in NO_LAUNCH and not any(result is a for a in inputs):
        _count("launch")
    return result


def _operator(name):
    def op(self, other):
        if isinstance(other, (SpyArray, np.ndarray, int, float, bool, complex, np.generic)):
            _count("launch")
            return wrap(getattr(self.a, name)(unwrap(other)))
        return NotImplemented               # a Tensor on the other side handles it
    op.__name__ = name
    return op


def _inplace(name):
    def op(self, other):
        _count("launch")
        getattr(self.a, name)(unwrap(other))
        return self
    return op


def _method(name):
    def method(self, *args, **kwargs):
        return wrap(_launched(name, [self.a], getattr(self.a, name)(
            *unwrap(args), **{k: unwrap(v) for k, v in kwargs.items()})))
    method.__name__ = name
    return method


for _n in ("add sub mul truediv floordiv mod pow matmul and or xor lt le gt ge eq ne").split():
    setattr(SpyArray, f"__{_n}__", _operator(f"__{_n}__"))
    if _n not in ("lt", "le", "gt", "ge", "eq", "ne"):
        setattr(SpyArray, f"__r{_n}__", _operator(f"__r{_n}__"))
for _n in ("iadd isub imul itruediv".split()):
    setattr(SpyArray, f"__{_n}__", _inplace(f"__{_n}__"))
for _n in ("neg pos abs invert".split()):
    setattr(SpyArray, f"__{_n}__", _method(f"__{_n}__"))
for _n in ("reshape transpose swapaxes squeeze sum prod mean var std max min argmax argmin "
           "any all astype copy fill view").split():
    setattr(SpyArray, _n, _method(_n))

# the array-module functions the engine may call (all exist in CuPy)
FUNCTIONS = set("""exp log log1p expm1 sqrt square tanh sin cos abs sign maximum minimum clip
copyto where matmul swapaxes transpose moveaxis reshape broadcast_to broadcast_shapes concatenate
stack expand_dims squeeze zeros ones full empty zeros_like ones_like full_like empty_like
arange tri tril triu isfinite isnan isinf take_along_axis ascontiguousarray
logical_not logical_and logical_or less less_equal greater greater_equal equal not_equal
add subtract multiply divide power negative sum mean max min argmax argmin vdot
cumsum searchsorted flip bitwise_and bitwise_or bitwise_xor invert count_nonzero
floor ceil trunc rint nan_to_num may_share_memory remainder floor_divide
argwhere einsum unique repeat
tan sinh cosh log2 log10 exp2 arctan2 fmod diagonal cumprod isclose logical_xor
logaddexp""".split())

# linear algebra (cupy.linalg has these), and what ops/linalg.py and index_put also use
FUNCTIONS |= {"eye", "nonzero"}
LINALG_FUNCTIONS = ("inv", "det", "slogdet", "solve", "cholesky", "svd")
LINALG_FUNCTIONS += ("qr", "eigh", "eigvalsh")          # ops/linalg_decomp.py's
# the rest of the elementwise math, and the shifts, gcd and lcm (CuPy has these)
FUNCTIONS |= set("""arcsin arccos arctan arcsinh arccosh arctanh hypot copysign signbit
logaddexp2 left_shift right_shift gcd lcm""".split())
# ops/torch_extra.py's frexp and nextafter (CuPy has both)
FUNCTIONS |= {"frexp", "nextafter"}

# the special functions CuPy has in cupyx.scipy.special (the Backend's `special`)
SPECIAL_FUNCTIONS = ("gammaln", "digamma", "polygamma", "erfinv", "erfc",
                     "i0", "i1", "gammainc", "gammaincc",      # (ops/torch_extra.py's)
                     "erfcx", "ndtr", "log_ndtr", "ndtri", "i0e", "i1e", "zeta",
                     "j0", "j1", "y0", "y1", "k0", "k1", "k0e", "k1e")   # special_more.py's


def _function(fn, allow_host=False):
    def call(*args, **kwargs):
        args = unwrap(args, allow_host)
        return wrap(_launched(fn.__name__, args, fn(
            *args, **{k: unwrap(v, allow_host) for k, v in kwargs.items()})))
    call.__name__ = fn.__name__
    return call


class _Generator:
    def __init__(self, seed):
        self.g = np.random.default_rng(seed)

    def __getattr__(self, name):
        if name not in ("random", "standard_normal", "integers", "normal", "uniform",
                        "permutation", "choice"):
            raise AttributeError(f"spy random generator has no {name!r}")
        return _function(getattr(self.g, name))


class _Random:
    @staticmethod
    def default_rng(seed=None):
        return _Generator(seed)


class _UfuncWithoutReduce:
    """As CuPy's ufuncs other than add and multiply: callable, but `.reduce` raises."""
    def __init__(self, name):
        self.call, self.name = _function(getattr(np, name)), name

    def __call__(self, *args, **kwargs):
        return self.call(*args, **kwargs)

    def reduce(self, *args, **kwargs):
        raise NotImplementedError(f"`cupy_{self.name}.reduce` is not supported yet")


class SpyModule:
    """The spy device's `xp`: NumPy's functions behind the spy arrays' wall. Missing, as in
    CuPy 13: put_along_axis; ufunc.reduce other than add and multiply; argsort's `kind`."""
    fmax, fmin = _UfuncWithoutReduce("fmax"), _UfuncWithoutReduce("fmin")
    ndarray = SpyArray
    nan, inf, pi, e, newaxis = np.nan, np.inf, np.pi, np.e, None
    float16, float32, float64 = np.float16, np.float32, np.float64
    int32, int64, bool_ = np.int32, np.int64, np.bool_
    random = _Random()
    # host -> device transfers are legitimate (cupy.asarray(host) is how data gets there)
    asarray = staticmethod(_function(np.asarray, allow_host=True))
    array = staticmethod(_function(np.array, allow_host=True))

    @staticmethod
    def argsort(a, axis=-1, kind=None):
        if kind is not None:                             # CuPy: always stable, no `kind`
            raise ValueError(f"spy argsort: kind={kind!r} is not accepted (as CuPy's)")
        return _function(np.argsort)(a, axis=axis, kind="stable")

    def __getattr__(self, name):
        if name in FUNCTIONS:
            return _function(getattr(np, name))
        raise AttributeError(f"the spy array module has no {name!r}: the engine used an "
                             f"array function the Backend does not promise; add it to the "
                             f"Backend in minigrad/backend.py or use one that exists")


def _plain(fn):
    """fn with a named tuple's result (slogdet's, svd's) as a plain tuple, as CuPy's."""
    def call(*args):
        r = fn(*args)
        return tuple(r) if isinstance(r, tuple) else r
    call.__name__ = fn.__name__
    return call


def as_strided(x, shape=None, strides=None):
    """cupy.lib.stride_tricks.as_strided: a view of x's memory with other strides (CuPy's
    takes only these arguments: NumPy's subok and writeable are not there)."""
    return np.lib.stride_tricks.as_strided(x, shape, strides)


# cupy.lib.stride_tricks has as_strided (im2col's strided view, ops/conv.py) and, since
# CuPy 13, sliding_window_view (the pools' window views, ops/pool.py)
SpyModule.lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(
    as_strided=_function(as_strided),
    sliding_window_view=_function(np.lib.stride_tricks.sliding_window_view)))
SpyModule.linalg = types.SimpleNamespace(**{n: _function(_plain(getattr(np.linalg, n)))
                                            for n in LINALG_FUNCTIONS})


def make_backend(name="spy"):
    def add_at(target, index, values):      # CuPy's add.at: only some dtypes
        if target.dtype.name not in backend_cupy.ADD_AT_DTYPES or values.dtype != target.dtype:
            raise TypeError(f"spy add.at: takes {backend_cupy.ADD_AT_DTYPES} only (as CuPy's), "
                            f"got {target.dtype} += {values.dtype}")
        np.add.at(unwrap(target), unwrap(index), unwrap(values))
    index_add = backend_cupy.widened_index_add(SpyModule(), add_at)

    def to_numpy(a):
        if not isinstance(a, SpyArray):
            raise TypeError(f"spy to_numpy: expected a spy array, got {type(a).__name__}")
        _count("sync")
        return a.a.copy()

    def from_numpy(h):
        return SpyArray(np.array(h))        # a transfer is a copy

    special = types.SimpleNamespace(**{n: _function(getattr(scipy.special, n))
                                       for n in SPECIAL_FUNCTIONS})
    b = backend.Backend(name, SpyModule(), lambda a: wrap(_host_erf(unwrap(a))),
                        index_add, to_numpy, from_numpy, special)
    b.synchronize = lambda: _count("wait")
    return b


def register(name="spy"):
    backend.register_device(name, lambda: make_backend(name))


def unregister(name="spy"):
    backend._FACTORIES.pop(name, None)
    backend._BACKENDS.pop(name, None)
