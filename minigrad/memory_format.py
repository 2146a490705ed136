"""PyTorch's memory formats: mg.contiguous_format (row-major), mg.channels_last (a 4-D
NCHW tensor whose memory is NHWC), mg.channels_last_3d (5-D NCDHW in NDHWC memory) and
mg.preserve_format (keep the input's layout), of type mg.memory_format.

NumPy and CuPy arrays hold such layouts as they are: NHWC memory seen through a transpose
with NCHW's shape, so x.stride() and x.is_contiguous(memory_format=...) answer as PyTorch's,
and ops (layout-agnostic) give the same values either way.

preserve_format, as PyTorch's: a dense input (every element its own place, no gaps) keeps
its strides; any other (a broadcast view, a stepped slice) gets dense strides with its dims
in the order its own strides give them (a stepped channels_last slice stays channels_last,
a stepped transpose a transpose). Where minigrad differs: a view with a negative stride
(x[:, ::-1]; PyTorch has none) comes out row-major; a tensor of no elements is always laid
out row-major (NumPy gives its strides as all 0, so no other layout can be told); and a
size-1 dim's stride, which no element uses, may differ from PyTorch's (so may, through
it, the order PyTorch gives a copy of a broadcast view that has such a dim).

Through ops, as PyTorch's: a leaf's .grad is laid out as the leaf where that is dense
(leaf_grad), and interpolate's output in the input's suggested format. Other ops' outputs
are laid out as NumPy leaves them: elementwise ops of channels_last operands, batch_norm,
slices and views keep channels_last as PyTorch's do, but conv, pooling and pad give
row-major outputs where PyTorch's stay channels_last, and softmax, cumsum and tril keep
channels_last where PyTorch's are row-major. The values are the same either way; a
.view() that needs a layout may be refused where PyTorch's is not (.reshape() takes any)."""
import functools
import inspect

from minigrad.autograd import Function
from minigrad.grad_mode import is_grad_enabled


class memory_format:
    """One of PyTorch's memory formats (the module's four constants are all there are)."""
    __slots__ = ("_name",)

    def __init__(self, name):
        self._name = name

    def __repr__(self): return f"minigrad.{self._name}"
    def __reduce__(self): return self._name      # pickles as the module's constant


contiguous_format = memory_format("contiguous_format")
preserve_format = memory_format("preserve_format")
channels_last = memory_format("channels_last")
channels_last_3d = memory_format("channels_last_3d")
_INNER_FIRST = {channels_last: (1, 3, 2, 0), channels_last_3d: (1, 4, 3, 2, 0)}


def check(fmt, op, rank=None):
    """fmt (None: preserve_format), after checking its type and, given the tensor's rank,
    that channels_last is for 4-D (channels_last_3d 5-D), with PyTorch's message."""
    fmt = preserve_format if fmt is None else fmt
    if not isinstance(fmt, memory_format):
        raise TypeError(f"{op}: memory_format must be one of mg.contiguous_format, "
                        f"mg.preserve_format, mg.channels_last, mg.channels_last_3d; got "
                        f"{type(fmt).__name__} {fmt!r}")
    need = len(_INNER_FIRST.get(fmt, ()))
    if rank is not None and need and rank != need:
        raise RuntimeError(f"required rank {need} tensor to use {fmt._name} format "
                           f"({op} got a tensor of {rank} dims)")
    return fmt


def strides_for(shape, fmt):
    """The strides (elements) of a dense tensor of `shape` in format fmt."""
    out, step = [0] * len(shape), 1
    for d in _INNER_FIRST.get(fmt, range(len(shape) - 1, -1, -1)):
        out[d] = step
        step *= max(shape[d], 1)
    return tuple(out)


def is_laid_out(x, fmt):
    """x.is_contiguous(memory_format=fmt), as PyTorch's: the strides (size-1 dims' not
    counted) are those of fmt; preserve_format asks for row-major."""
    fmt = check(fmt, "is_contiguous")
    if fmt not in _INNER_FIRST:
        return bool(x._data.flags.c_contiguous)
    if x.ndim != len(_INNER_FIRST[fmt]):
        return False
    sizes, strides, step = x.shape, x.stride(), 1
    for d in _INNER_FIRST[fmt]:
        if sizes[d] != 1:
            if strides[d] != step:
                return False
            step *= sizes[d]
    return True


def suggest(sizes, strides):
    """PyTorch's suggest_memory_format: channels_last (channels_last_3d) for a 4-D (5-D)
    tensor whose strides grow along C, W, H, N (C, W, H, D, N), else contiguous_format.
    Ambiguous layouts (size-1 or empty dims, a broadcast C) count as row-major."""
    fmt = {4: channels_last, 5: channels_last_3d}.get(len(sizes))
    if fmt is None or strides[1] == 0:
        return contiguous_format
    low = 0                               # the least stride the next dim out may have
    for d in _INNER_FIRST[fmt]:
        if sizes[d] == 0 or strides[d] < low:
            return contiguous_format
        if d == 0 and strides[1] == low:  # N followed by size-1 dims only: say NCHW
            return contiguous_format
        low = strides[d] * max(sizes[d], 1)
    return fmt


def _dense(sizes, strides):
    """Whether the elements fill a block of memory, each its own place, with no negative
    stride (size-1 dims' strides not counted)."""
    step = 1
    for stride, n in sorted((s, n) for s, n in zip(strides, sizes) if n > 1):
        if stride != step:
            return False
        step *= n
    return True


def _dense_in_order(sizes, strides):
    """Dense strides keeping the order in memory of a non-dense layout's dims, as PyTorch
    orders them: a stable insertion sort, innermost first, from row-major's order, where a
    stride of 0 (a broadcast dim) is compared with none (so keeps its row-major place) and
    of two equal strides the smaller dim goes inside."""
    def outside(a, b):                 # 1: dim a goes outside dim b; -1: inside; 0: unknown
        if strides[a] == 0 or strides[b] == 0:
            return 0
        if strides[a] != strides[b]:
            return 1 if strides[a] > strides[b] else -1
        return 1 if sizes[a] > sizes[b] else 0
    order = list(range(len(sizes) - 1, -1, -1))
    for i in range(1, len(order)):
        j = i
        for k in range(i - 1, -1, -1):
            c = outside(order[k], order[j])
            if c < 0:
                break
            if c > 0:
                order[k], order[j], j = order[j], order[k], k
    out, step = [0] * len(sizes), 1
    for d in order:
        out[d] = step
        step *= max(sizes[d], 1)
    return tuple(out)


def target_strides(x, fmt, op):
    """The strides a copy of x in format fmt gets (preserve: see the module's docstring)."""
    fmt = check(fmt, op, x.ndim)
    if fmt is not preserve_format:
        return strides_for(x.shape, fmt)
    strides = x.stride()
    if _dense(x.shape, strides):
        return strides
    if min(strides, default=0) < 0:                  # a flipped view: row-major
        return strides_for(x.shape, contiguous_format)
    return _dense_in_order(x.shape, strides)


def empty_array(xp, shape, dtype, strides):
    """An uninitialised array of `shape` laid out with dense strides `strides`: one of the
    dims' order, transposed (a size-1 dim goes inside a dim of its stride: the stride
    PyTorch's layout gives it)."""
    if 0 in shape:
        return xp.empty(shape, dtype)
    outer_first = sorted(range(len(shape)), key=lambda d: (-strides[d], shape[d] == 1))
    root = xp.empty(tuple(shape[d] for d in outer_first), dtype)
    if outer_first == sorted(outer_first):
        return root
    return root.transpose(tuple(outer_first.index(d) for d in range(len(shape))))


class CloneAs(Function):
    """A copy laid out with `strides` (dense). Backward: the gradient as it is."""
    needs_values = False

    def forward(self, a, strides):
        out = empty_array(self.xp, a.shape, a.dtype, strides)
        out[...] = a
        return out

    def backward(self, g): return g


def leaf_grad(g, t, copy):
    """g as leaf t's first .grad, laid out as PyTorch's: in t's strides where t is dense and
    not row-major (a channels_last weight's gradient is channels_last), else row-major. A
    copy (differentiable in grad mode) where `copy` (g is not the engine's own array alone)
    or g is laid out otherwise; else g itself."""
    from minigrad.tensor import Tensor
    strides = None if t._data.flags.c_contiguous else t.stride()
    if strides is not None and not _dense(t.shape, strides):
        strides = None                           # (a broadcast or stepped leaf: row-major)
    if strides is None:
        if not copy and g._data.flags.c_contiguous:
            return g
        if is_grad_enabled():
            from minigrad.ops.shape import clone as plain
            return plain(g)
        return Tensor._make(g.backend.xp.ascontiguousarray(g._data) if not copy else
                            g._data.copy(), g.device)
    if not copy and g.stride() == strides:
        return g
    if is_grad_enabled():
        return CloneAs.apply(g, strides=strides)
    out = empty_array(g.backend.xp, g.shape, g.dtype, strides)
    out[...] = g._data
    return Tensor._make(out, g.device)


def _row_major(x):
    """Whether x's strides are exactly the row-major ones (NumPy's C flag ignores the
    strides of size-1 dims, which torch's preserve_format keeps)."""
    return x._data.flags.c_contiguous and 1 not in x._data.shape


def clone(x, fmt=None, op="clone"):
    """x copied (differentiable) in format fmt (None: preserve_format)."""
    if (fmt is None or fmt is preserve_format or fmt is contiguous_format) and \
            _row_major(x):                  # row-major either way: the plain copy (and
        from minigrad.ops.shape import clone as plain   # its fast path), no layout work
        return plain(x)
    return CloneAs.apply(x, strides=target_strides(x, fmt, op))


def contiguous(x, fmt=None):
    """x.contiguous(memory_format=fmt): x itself where laid out so, else a copy."""
    fmt = contiguous_format if fmt is None else fmt
    if fmt is contiguous_format and x._data.flags.c_contiguous:
        return x                  # (the common case, at once; size-1 dims ignored, as torch)
    if fmt is preserve_format:
        raise RuntimeError("preserve memory format is unsupported by the contiguous "
                           "operator; use contiguous_format or channels_last(_3d)")
    fmt = check(fmt, "contiguous", x.ndim)
    return x if is_laid_out(x, fmt) else clone(x, fmt, "contiguous")


def to(x, out, fmt):
    """The end of x.to(..., memory_format=fmt): `out` is x converted (x if nothing
    changed). As PyTorch's, x itself stays where fmt is preserve_format or suggest() of its
    strides already names fmt; otherwise the result is laid out in fmt (a converted copy
    with preserve_format: as x.clone() would be)."""
    if fmt is preserve_format and (out is x or _row_major(x)):
        return out               # (a conversion of a row-major x is row-major: no layout work)
    fmt = check(fmt, "to")
    if out is not x and fmt is preserve_format:   # (the conversion's copy: not recorded;
        return relaid(out, x, fmt, "to") if out._data.size else out  # a lazy placeholder
    if fmt is preserve_format or (out is x and suggest(x.shape, x.stride()) is fmt):
        return out
    return clone(x, fmt, "to") if out is x else relaid(out, out, fmt, "to")


def relaid(t, like, fmt, op):
    """Fresh tensor t (a *_like factory's result, a conversion's copy) in the layout a copy
    of `like` in fmt would have: its values moved there, t keeps its place in any graph."""
    if not t._data.size:                         # no elements: no layout (see above)
        return t
    strides = target_strides(like, fmt, op)
    if t.stride() != strides:
        out = empty_array(t.backend.xp, t.shape, t.dtype, strides)
        out[...] = t._data
        t._data = out
    return t


def laid_out_new(t, fmt, op):
    """Fresh tensor t (mg.empty's) laid out in fmt (None: row-major; not preserve_format,
    as PyTorch: there is no input to preserve)."""
    if fmt is preserve_format:
        raise RuntimeError(f"{op}: unsupported memory format preserve_format (there is no "
                           f"input to preserve); use contiguous_format or channels_last")
    fmt = check(contiguous_format if fmt is None else fmt, op, t.ndim)
    return relaid(t, t, fmt, op)


# ---- the memory_format keyword of the factories (creation.py) ---------------------------
def _with_keyword(fn, default):
    """fn's signature with a keyword-only memory_format=default added."""
    sig = inspect.signature(fn)
    ps = [p for p in sig.parameters.values() if p.kind != p.VAR_KEYWORD]
    ps.append(inspect.Parameter("memory_format", inspect.Parameter.KEYWORD_ONLY,
                                default=default))
    ps += [p for p in sig.parameters.values() if p.kind == p.VAR_KEYWORD]
    return sig.replace(parameters=ps)


def like_factory(fn):
    """fn (a *_like factory) taking PyTorch's memory_format (default preserve_format: the
    layout of a copy of the input)."""
    first = next(iter(inspect.signature(fn).parameters))

    @functools.wraps(fn)
    def factory(*args, memory_format=preserve_format, **kwargs):
        like = args[0] if args else kwargs.get(first)
        if not hasattr(like, "shape"):
            raise TypeError(f"{fn.__name__}: {first} must be a Tensor, got "
                            f"{type(like).__name__}")
        check(memory_format, fn.__name__, len(like.shape))
        return relaid(fn(*args, **kwargs), like, memory_format, fn.__name__)
    factory.__signature__ = _with_keyword(fn, preserve_format)
    return factory


def new_factory(fn):
    """fn (mg.empty) taking PyTorch's memory_format (default contiguous_format)."""
    @functools.wraps(fn)
    def factory(*args, memory_format=contiguous_format, **kwargs):
        return laid_out_new(fn(*args, **kwargs), memory_format, fn.__name__)
    factory.__signature__ = _with_keyword(fn, contiguous_format)
    return factory
