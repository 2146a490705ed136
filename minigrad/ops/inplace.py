"""In-place changes of a tensor: `t[i] = v`, `zero_()`, `x += y` (with -=, *=, /=, **=) and
the trailing-underscore methods (`add_`, `mul_`, `clamp_` ...).
Each writes into the tensor's memory, so every view of it sees the change (as PyTorch), and
counts itself in the version shared by those views (autograd then refuses a backward that
would read the old values). In grad mode, where the tensor or the value written requires
grad, autograd records the change instead (ops/inplace_autograd.py; into memory that
views share, ops/inplace_views.py), as PyTorch does."""
import math
import sys
import traceback

from minigrad import backend
from minigrad.args import check_fill_value, check_numbers, refuse_complex
from minigrad.autograd import is_grad_enabled
from minigrad.tensor import Tensor
from minigrad.ops import index as _index
from minigrad.ops.elementwise import lift
from minigrad.ops.inplace_autograd import (IndexPut, memory_held_outside,
                                             needs_recording, record, shares_memory)

_KIND_ORDER = {"b": 0, "u": 1, "i": 1, "f": 2, "c": 3}   # what an in-place result may cast to


def check_allowed(t, op):
    """Refuse to change a tensor that requires grad while the graph is being recorded."""
    if t.requires_grad and is_grad_enabled():
        what = "a leaf tensor" if t.is_leaf else "a tensor"
        raise RuntimeError(f"{op}: in-place change of {what} that requires grad; do it "
                           f"under mg.no_grad() (e.g. to initialise a weight) or build a "
                           f"new tensor (x * 0, mg.where, mg.cat)")


def fill_random(t, op, fill):
    """t.normal_(), t.bernoulli_() ...: fill(target) draws t's new values into target: t
    itself, or, where autograd records the change (grad mode, t requires grad), a new
    tensor written as t[...] = it, as PyTorch's: values with no gradient, so t's old
    history gets zeros. Refused for a leaf that requires grad (checked before the draw)."""
    if not needs_recording(t):
        check_writable(t, op)
        return fill(t)
    if t.is_leaf:
        check_allowed(t, op)
    drawn = Tensor._make(t.backend.xp.empty(t.shape, t.dtype), t.device)
    fill(drawn)
    return setitem(t, ..., drawn, op) or t


def check_writable(t, op):
    """Refuse to write into a broadcast view (expand): its elements share memory. A view of
    one that picks distinct elements (a row, the diagonal) NumPy still marks read-only; it is
    written through, as in PyTorch, where the memory's owner may be written (NumPy checks)."""
    a = t._data
    if backend.shares_elements(a):
        raise ValueError(f"{op}: the tensor is a broadcast view (expand), whose elements "
                         f"share memory, so it cannot be written; clone() it first")
    if not getattr(a.flags, "writeable", True):       # (CuPy has no read-only arrays)
        try:
            if a.base is None:                        # an owner made read-only on purpose
                raise ValueError
            a.flags.writeable = True
        except ValueError:
            raise ValueError(f"{op}: the tensor's memory is read-only (a read-only NumPy "
                             f"array, a constant, a file's bytes), so it cannot be written; "
                             f"clone() it first") from None


def check_copy_shape(t, src):
    """copy_'s source broadcasts to t's shape, as PyTorch's: no dims added to t (t[...] =
    src drops a source's extra leading 1s; copy_ refuses them)."""
    shape = getattr(src, "shape", None)
    if shape is None:                            # a list or a number: setitem's rules
        return
    try:
        fits = len(shape) <= t.ndim and backend.broadcast_shapes(tuple(shape), t.shape) == \
            t.shape
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"copy_: the source's shape {tuple(shape)} does not broadcast to the "
                         f"tensor's {t.shape} (as PyTorch, copy_ adds no dims to the tensor)")


def _counted(t):
    t._version_counter[0] += 1
    return t


def fill(t, value, op):
    if isinstance(value, Tensor):          # 0-d, as PyTorch; its array stays on the device
        if value.ndim or value.device != t.device:
            raise ValueError(f"{op}: a tensor value must be 0-d and on {t.device} (got "
                             f"shape {value.shape} on {value.device}); for more, write "
                             f"t[...] = value")
        if needs_recording(t, value):
            return setitem(t, ..., value, op) or t
        value = value._data
    elif not backend.is_scalar(value) or value is None:
        refuse_complex(op, value)
        raise TypeError(f"{op}: the value must be a number or a 0-d tensor, got "
                        f"{type(value).__name__}")
    else:
        value = check_fill_value(op, value, t.dtype)
    if needs_recording(t):
        return setitem(t, ..., value, op) or t
    check_writable(t, op)
    t._data[...] = value
    return _counted(t)


def setitem(t, index, value, op="setitem"):
    index = _index.raw_index(index, t, op)
    _index.check_index(t, index, op)
    recorded = needs_recording(t, value)
    if not recorded:
        check_writable(t, op)
    elif not backend.is_floating(t.dtype):
        # (PyTorch writes the values and silently drops their gradient, e.g. an integer
        # buffer's copy_(w): here that loss is an error that says how to mean it)
        raise TypeError(f"{op}: the value requires grad, but the tensor is {t.dtype}, which "
                        f"has no gradient; write value.detach() (or under mg.no_grad())")
    v = value if isinstance(value, Tensor) else None
    if v is not None:
        if value.device != t.device:
            raise RuntimeError(f"{op}: value on {value.device}, tensor on {t.device}; "
                               f"move it with .to({t.device!r}) first")
        value = value._data
    elif not backend.is_scalar(value):          # a list or host array: to this device first
        try:
            host = backend.to_host(value)
        except TypeError as e:                  # None, a string: words that name no op
            raise TypeError(f"{op}: {e}") from None
        value = t.backend.from_numpy(check_numbers(host, value))
    elif t.dtype.kind in "iu" and backend.is_integer(value):
        # PyTorch's rule: above the dtype's highest is an error, below its lowest wraps
        # (u8[0] = -1 writes 255)
        highest = backend.value_range(t.dtype)[1]
        if value > highest:
            raise OverflowError(f"{op}: {value} does not fit {t.dtype} (at most {highest})")
        value = lift(value, t)._data
    elif t.dtype != backend.float16:
        # NaN, ±inf or 1e300 into an integer tensor, 1e300 into float32: PyTorch's errors
        check_fill_value(op, value, t.dtype)
    elif abs(value) >= 65520:     # float16 takes any number, as PyTorch's setitem: from
        value = math.inf if value > 0 else -math.inf  # 65520 it rounds to inf (NumPy warns)
    parts = _index.ints_first(index)            # PyTorch's order of ints and arrays
    # write refers to these, not to t: a recorded write keeps it in t's node, and a cycle
    # through t would hold t's memory until the garbage collector runs
    xp, shape = t.backend.xp, t.shape

    def write(a, value):
        target = a if parts is None else a[parts[0]]   # a view: writes through
        at = index if parts is None else parts[1]
        try:
            try:
                target[at] = value
            except ValueError:  # leading 1s the part lacks, as PyTorch drops them: t[1] = [5.]
                ones = _leading_ones(value, target[at].ndim)   # (NumPy does so only for
                if not ones:                                    # parts that are arrays)
                    raise
                target[at] = value.reshape(value.shape[ones:])
        except ValueError:  # NumPy's words ("setting an array element with a sequence")
            raise ValueError(f"{op}: a value of shape {tuple(xp.shape(value))} "
                             f"cannot be assigned to the part of shape "
                             f"{tuple(target[at].shape)} that the index selects (tensor of "
                             f"shape {shape}); the value must broadcast to that part") \
                from None
    if not recorded:
        write(t._data, value)
        _counted(t)
        return
    # recorded: t with t[index] = value, out of place (IndexPut), then adopted by t
    if v is None:
        v = Tensor._make(t.backend.xp.asarray(value), t.device)
    written = t._data.copy()
    write(written, v._data)                      # a bad value fails here, as setitem's

    def select(g):
        return g[index] if parts is None else g[parts[0]][parts[1]]
    # t as the value (t.copy_(t), t[...] = t) is its old value, as in method(); `value`
    # (then t's own array) let go, or _check_recordable would see t's memory held outside
    value = None
    record(t, op, lambda old: IndexPut.apply(old, old if v is t else v, write=write,
                                             select=select, written=written),
           lambda result: None)


def index_fill(t, dim, index, value):
    """t.index_fill_(dim, index, value): the slices of t along dim at `index` (integers,
    1-D or 0-d; negatives count from the end) set to a number or a 0-d tensor, as
    PyTorch's."""
    from minigrad.ops.reduce import normalize_dim
    d = normalize_dim(dim, max(t.ndim, 1), "index_fill_")
    idx = _index.raw_index(index, t, "index_fill_", "index")
    if getattr(idx, "dtype", None) is None or idx.dtype.kind not in "iu" or idx.ndim > 1:
        raise TypeError(f"index_fill_: index must be a 1-D or 0-d tensor of integers, got "
                        f"{getattr(idx, 'dtype', type(idx).__name__)} of shape "
                        f"{tuple(getattr(idx, 'shape', ()))}")
    if isinstance(value, Tensor) and value.ndim:
        raise ValueError(f"index_fill_: the value must be a number or a 0-d tensor, got "
                         f"shape {value.shape}; for more, write t[..., index] = value")
    if not isinstance(value, Tensor):      # as fill_: no float16 overflow written as inf
        value = check_fill_value("index_fill_", value, t.dtype)
    if t.ndim == 0:                        # one slice: index 0 (or -1), as PyTorch
        bad = idx[(idx < -1) | (idx > 0)].reshape(-1)
        if bad.size:
            raise IndexError(f"index_fill_: index {int(bad[0])} is out of range for a 0-d "
                             f"tensor (valid: -1..0)")
        return fill(t, value, "index_fill_") if idx.size else t
    return setitem(t, (slice(None),) * d + (idx.reshape(-1),), value, "index_fill_") or t


def fill_diagonal(t, value, wrap=False):
    """t.fill_diagonal_(value, wrap=False): the main diagonal (t[i, i, ..., i]) set to a
    number, as PyTorch's: t has 2 dims or more, all of one length beyond 2; a tall
    matrix's diagonal starts again below itself (every N+1 rows) only with wrap=True."""
    if t.ndim < 2 or (t.ndim > 2 and len(set(t.shape)) != 1):
        raise ValueError(f"fill_diagonal_: the tensor must have 2 dims, or more all of "
                         f"equal length; got shape {t.shape}")
    if isinstance(value, Tensor) and value.ndim == 0:     # a number, as PyTorch takes it
        value = value.item()
    if not backend.is_scalar(value):
        raise TypeError(f"fill_diagonal_: the value must be a number (or a 0-d tensor), got "
                        f"{type(value).__name__}")
    value = check_fill_value("fill_diagonal_", value, t.dtype)   # as fill_ (float16: no inf)
    xp, n = t.backend.xp, min(t.shape)
    if t.ndim == 2 and wrap:
        rows = xp.arange(t.shape[0])
        rows = rows[rows % (t.shape[1] + 1) < t.shape[1]]   # the gap row after each block
        where = (rows, rows % (t.shape[1] + 1))
    else:
        where = (xp.arange(n),) * t.ndim
    return setitem(t, where, value, "fill_diagonal_") or t


def _leading_ones(value, ndim):
    """How many leading dims of size 1 `value` has beyond `ndim` dims."""
    shape = getattr(value, "shape", ())
    n = 0
    while n < len(shape) - ndim and shape[n] == 1:
        n += 1
    return n


def update(x, what, op, o):
    """x {what} o, e.g. x += o: op(x, o) written into x. Where a tensor requires grad (in
    grad mode) and x is held by this name alone, x is rebound to op(x, o), as `x = x + o`
    would (`loss += term`: no write to record); held elsewhere too (a list, another name),
    the write is recorded (ops/inplace_autograd.py), so every holder sees it."""
    grad_mode = needs_recording(x, o)
    if grad_mode and x.requires_grad and x.is_leaf:
        raise RuntimeError(f"x {what} y: x is a leaf tensor that requires grad; change it "
                           f"under mg.no_grad() (e.g. a hand-written optimiser step), or "
                           f"write x = x {what[:-1]} y")
    if grad_mode and (sys.getrefcount(x) > _SOLE_OWNER_REFS[o is x] or   # x += x: o holds x
                      shares_memory(x) or           # a view, or viewed
                      memory_held_outside(x)):      # (a NumPy array: refused there)
        return method(x, f"x {what} y", op, o)
    result = op(x, o)
    try:
        _check_result(x, result, f"x {what} y")
    except (TypeError, ValueError) as e:
        # result's graph used x: the error, if kept, must not keep it, or a later write
        # of x is refused (see ops/inplace_autograd.py's _drop_locals)
        traceback.clear_frames(e.__traceback__)
        result = None
        raise
    if grad_mode:                                # Python binds x to the result
        result = result if result.dtype == x.dtype else result.to(dtype=x.dtype)
        if x._retains_grad:                      # still "x" to its user: as PyTorch's x,
            result.retain_grad()                 # it keeps the gradient of its new value
        return result
    check_writable(x, f"x {what} y")
    return _write(x, result)


def method(x, name, op, *args):
    """x.add_(y), x.clamp_(lo, hi) ...: op(x, *args) written into x's memory, seen through
    every view of it; recorded by autograd where x or an argument requires grad (in grad
    mode)."""
    if needs_recording(x, *args):
        # x as an argument too (x.mul_(x), x += x) is its old value: the new one would be
        # an input of its own node, a cycle that loses that input's gradient
        return record(x, name, lambda old: op(old, *(old if a is x else a for a in args)),
                      lambda result: _check_result(x, result, name))
    check_writable(x, name)
    result = op(x, *args)
    _check_result(x, result, name)
    return _write(x, result)


def _check_result(x, result, what):
    if result.shape != x.shape:
        raise ValueError(f"{what}: the result has shape {result.shape}, but x has shape "
                         f"{x.shape}; an in-place op cannot change x's shape")
    if _KIND_ORDER[result.dtype.kind] > _KIND_ORDER[x.dtype.kind]:
        raise TypeError(f"{what}: the result is {result.dtype}, which x of dtype "
                        f"{x.dtype} cannot hold; convert x first (x = x.float())")


def _write(x, result):
    x._data[...] = result._data                    # through any views of this memory
    return _counted(x)


class _Probe:
    def __iadd__(self, o):
        return _references(self, "+=", None, o)


def _references(x, what, op, o):                 # called as update() is, from an __iadd__
    return sys.getrefcount(x)


def _sole_owner_refs(self_update):
    """The count update() sees for an x one name alone holds, measured by making the same
    calls (x += o, __iadd__, a function of (x, what, op, o)) on a probe that one name holds."""
    probe = _Probe()
    if self_update:
        probe += probe                           # now the count update() would see
    else:
        probe += None
    return probe


# How many references sys.getrefcount sees in update() for an x that one name alone holds:
# that name, the interpreter's stack, __iadd__'s self, update's x and getrefcount's own
# argument (5 on CPython 3.11), and more for x += x, where y is x too. Measured on this
# interpreter, as it differs between versions.
_SOLE_OWNER_REFS = {False: _sole_owner_refs(False), True: _sole_owner_refs(True)}
