"""Pooling, as torch.nn.functional's max, average, Lp and adaptive pools over the last 1, 2
or 3 dims of an (N, C, *spatial) input or an unbatched (C, *spatial) one: one N-d
implementation for every dim count. This file holds the window geometry and the max pools;
the average, Lp and adaptive pools are pool_more.py's.

A pool reduces each window one spatial dim at a time, last dim first, on the whole grid of
the padded input: along a dim, every place of the grid is combined with the k - 1 places
after it (a window's next places), by shifted slices of the flattened array. Each of those
is one pass over contiguous memory, where reading the windows through a strided view runs
NumPy's inner loops over a row of windows at a time (several times slower); the grid's
places that start no window cost a little more work, and after each dim only its window
starts are kept. A box's sum and its maximum are separable so.
- max pool reduces each window to its maximum; where a gradient or the indices are wanted,
  it then finds the maximum's first place in the window (as PyTorch; a NaN wins, the last
  NaN) by comparing each place of the windows' strided view with it, one pass per place
  over the output (carrying the places through the separable reduction instead took
  1.2-2.3x as long), and picks x at those places by indexing, whose gradient is the
  scatter of g back to them
  (ops/index.py's GetItem and IndexAdd: a fast path, and twice differentiable); without a
  gradient or indices to return it reduces the values only;
- avg pool sums each window and divides; its gradient spreads g/divisor back over the
  windows (AvgPoolSpread: the same shifted adds, the other way), a linear op whose own
  gradient is the avg pool again.
The reference for both is the strided view of the windows, (..., *out, *kernel)
(Windows.view; _first_max), which the tests hold the grid's results to.
Adaptive pools have windows of varying sizes, [⌊i·L/out⌋, ⌈(i+1)·L/out⌉) along each dim: the
average is a product with a constant (out, L) averaging matrix per dim; the max, where the
sizes divide the input's, is max pool's (kernel = stride = the ratio), else the maximum of
windows gathered by index (a short window padded by repeating its last element, which
leaves its first maximum, and its last NaN, where they were), its place found by matching
as max pool's, held to _first_max over those windows (pool_more.py)."""
import itertools
import math

from minigrad import backend
from minigrad.autograd import is_grad_enabled
from minigrad.ops.index import GetItem
from minigrad.tensor import Tensor

np = backend.get("cpu").xp          # NumPy: the windows' small tables, on the host

_DIMS = {1: "(C, L) or (N, C, L)", 2: "(C, H, W) or (N, C, H, W)",
         3: "(C, D, H, W) or (N, C, D, H, W)"}


# ---- arguments ---------------------------------------------------------------------------
def _ints(op, name, value, n, low):
    """kernel_size=3 or (3, 2): a tuple of n ints, each >= low (PyTorch's _pair / _triple;
    a 1-tuple stands for all n)."""
    items = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if not all(backend.is_integer(v) and not isinstance(v, bool) for v in items) or \
            len(items) not in (1, n):
        raise TypeError(f"{op}: {name} must be an int or a tuple of {n} ints, got {value!r}")
    items = tuple(int(v) for v in items) * (n if len(items) == 1 else 1)
    if any(v < low for v in items):
        raise ValueError(f"{op}: {name} must be {'positive' if low else 'non-negative'}, "
                         f"got {value!r}")
    return items


def _check_input(op, x, n, empty_channels=False):
    """x as (N, C, *spatial), and whether it came unbatched; PyTorch's shapes and errors.
    Only the batch may be empty, and with empty_channels the channels too (the empty
    result of an empty input: PyTorch's adaptive pools allow some of these)."""
    if not isinstance(x, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(x).__name__}")
    if x.ndim not in (n + 1, n + 2):
        raise ValueError(f"{op}: expected a {n + 1}D or {n + 2}D input, {_DIMS[n]}, got "
                         f"shape {x.shape}")
    if 0 in x.shape[x.ndim - n - (0 if empty_channels else 1):]:
        what = "spatial dims" if empty_channels else "dims other than the batch"
        raise ValueError(f"{op}: expected an input whose {what} are not empty, got shape "
                         f"{x.shape}")
    return (x, False) if x.ndim == n + 2 else (x.unsqueeze(0), True)


def _out_size(L, k, s, p, d, ceil_mode):
    """PyTorch's output length: ⌊ or ⌈(L + 2p - d·(k-1) - 1)/s⌉ + 1, and with ceil_mode no
    window that starts in the right padding."""
    span = L + 2 * p - d * (k - 1) - 1
    out = (-(-span // s) if ceil_mode else span // s) + 1
    if ceil_mode and (out - 1) * s >= L + p:
        out -= 1
    return out


class Windows:
    """Where a pool's windows lie along each spatial dim: kernel k, stride s, padding p,
    dilation d, the output length, and the padded length the windows reach (2p more, plus
    what ceil_mode's last window needs)."""

    def __init__(self, op, spatial, kernel, stride, padding, dilation, ceil_mode):
        self.spatial, self.kernel, self.stride = spatial, kernel, stride
        self.padding, self.dilation = padding, dilation
        for k, p, d in zip(kernel, padding, dilation):
            if p > (d * (k - 1) + 1) // 2:
                raise ValueError(f"{op}: pad should be at most half of effective kernel size, "
                                 f"but got pad={p}, kernel_size={k} and dilation={d}")
        self.out = tuple(_out_size(*a, ceil_mode) for a in zip(spatial, kernel, stride,
                                                               padding, dilation))
        if min(self.out) < 1:
            raise ValueError(f"{op}: input of spatial size {spatial} is too small for the "
                             f"windows (kernel_size={kernel}, stride={stride}, padding="
                             f"{padding}, dilation={dilation}): the output size would be "
                             f"{self.out}")
        self.padded = tuple(max(L + 2 * p, (o - 1) * s + d * (k - 1) + 1) for L, p, o, s, d, k
                            in zip(spatial, padding, self.out, stride, dilation, kernel))

    def view(self, xp, x, fill):
        """(..., *out, *kernel): every window of x (..., *spatial), padded with fill."""
        return self.windows(xp, self.grid(xp, x, fill))

    def windows(self, xp, grid):
        """(..., *out, *kernel): every window of the padded grid (..., *padded), a view."""
        n = len(self.spatial)
        reach = tuple(d * (k - 1) + 1 for k, d in zip(self.kernel, self.dilation))
        axes = tuple(range(grid.ndim - n, grid.ndim))
        w = xp.lib.stride_tricks.sliding_window_view(grid, reach, axis=axes)
        return w[(Ellipsis,) + tuple(slice(0, (o - 1) * s + 1, s) for o, s in
                                     zip(self.out, self.stride)) +
                 tuple(slice(None, None, d) for d in self.dilation)]

    def grid(self, xp, x, fill, dtype=None):
        """x (..., *spatial) padded with fill to (..., *padded), C-contiguous (the grid the
        shifted slices run on; x itself where it already is one)."""
        n = len(self.spatial)
        dtype = x.dtype if dtype is None else dtype
        if self.padded == self.spatial:
            return xp.ascontiguousarray(x, dtype=dtype)
        padded = xp.full(x.shape[:-n] + self.padded, fill, dtype=dtype)
        padded[self._inside()] = x
        return padded

    def reduce(self, xp, grid, combine):
        """(..., *out): combine(flat, step, k) reduces each place of a flat C-contiguous grid
        with its k - 1 next places `step` elements apart (a window's along one dim), one
        spatial dim at a time from the last; after each, only that dim's window starts are
        kept, so the next dims run on less. (A place whose window runs off the end of its
        row reads the next row: a result no window start keeps.)"""
        n = len(self.spatial)
        for d in reversed(range(n)):
            flat = grid.reshape(-1)
            if self.kernel[d] > 1:
                step = self.dilation[d] * math.prod(grid.shape[grid.ndim - n + d + 1:])
                flat = combine(flat, step, self.kernel[d])
            grid = xp.ascontiguousarray(self.starts_along(flat.reshape(grid.shape), d))
        return grid

    def starts_along(self, a, d):
        """a's window starts along spatial dim d (of its last n)."""
        o, s = self.out[d], self.stride[d]
        return a[(Ellipsis, slice(0, (o - 1) * s + 1, s)) + (slice(None),) *
                 (len(self.spatial) - 1 - d)]

    def _inside(self):
        """The index of the input's own elements in the padded array."""
        return (Ellipsis,) + tuple(slice(p, p + L) for p, L in zip(self.padding, self.spatial))

    def tables(self):
        """Per dim, the input coordinate that each (output, kernel) place reads: o·s - p + k·d
        (outside [0, L) in the padding)."""
        return [np.arange(o)[:, None] * s - p + np.arange(k)[None, :] * d for o, s, p, k, d in
                zip(self.out, self.stride, self.padding, self.kernel, self.dilation)]

    def sums(self, xp, x, dtype):
        """Each window's sum (..., *out) in dtype."""
        def add(flat, step, k):
            total = flat.copy()
            for j in range(1, k):
                total[:flat.size - j * step] += flat[j * step:]
            return total
        return self.reduce(xp, self.grid(xp, x, 0, dtype), add)

    def spread(self, xp, g):
        """The transpose of summing each window: every window's g added back over it, the
        overlaps adding up (the gradient of that sum), cropped to the input's shape. As
        `sums` the other way round: from the first dim, g put at the window starts along
        it, then each place added to the k - 1 after it."""
        n = len(self.spatial)
        for d in range(n):
            lead = g.ndim - n + d
            full = xp.zeros(g.shape[:lead] + (self.padded[d],) + g.shape[lead + 1:], g.dtype)
            self.starts_along(full, d)[...] = g
            flat = full.reshape(-1)
            total = flat.copy() if self.kernel[d] > 1 else flat
            step = self.dilation[d] * math.prod(full.shape[lead + 1:])
            for j in range(1, self.kernel[d]):
                total[j * step:] += flat[:flat.size - j * step]
            g = total.reshape(full.shape)
        return g[self._inside()]

    def divisor(self, count_include_pad):
        """How many elements each window averages, (*out) on the host: those in the input,
        or with count_include_pad those in the padded input too, never ceil_mode's
        overhang (as PyTorch)."""
        div = np.ones(())
        for L, k, s, p, o in zip(self.spatial, self.kernel, self.stride, self.padding,
                                 self.out):
            lo, hi = (0, L + 2 * p) if count_include_pad else (p, p + L)
            start = np.arange(o) * s                     # in padded coordinates
            div = np.multiply.outer(div, np.minimum(start + k, hi) - np.maximum(start, lo))
        return div


# ---- max pools ---------------------------------------------------------------------------
def _first_max(xp, windows, tables, spatial):
    """Flat positions in (..., *spatial) of each window's first maximum, (..., *out):
    windows (..., *out, *kernel) and per dim a table (out, kernel) of input coordinates.
    As PyTorch's loop over a window's places in the input, in order, from its first one: a
    running maximum taken over by a greater value or by a NaN (so a tie keeps the first,
    the last NaN wins, and a window of -inf keeps its first place in the input, which
    with padding and dilation need not be its first place). A window wholly in the
    padding (dilation can skip the input) has, as PyTorch's, the place after the padding
    its dilation reaches: past the input (its value is the fill: _max_pool)."""
    n = len(spatial)
    out, kernel = windows.shape[-2 * n:-n], windows.shape[-n:]
    places = list(itertools.product(*(range(k) for k in kernel)))
    inside = [(t >= 0) & (t < L) for t, L in zip(tables, spatial)]     # (out, kernel)
    padded = not all(m.all() for m in inside)
    if padded:                   # (*out, *kernel) on the device: which places read x
        reads = np.ones((1,) * 2 * n, dtype=bool)
        for d, m in enumerate(inside):
            shape = [1] * 2 * n
            shape[d], shape[n + d] = m.shape
            reads = reads & m.reshape(shape)
        reads = xp.asarray(reads)
    best = windows[(Ellipsis,) + places[0]]
    k = xp.zeros(best.shape, dtype=backend.int64)        # which place holds it
    if padded:                   # -1: no place in the input seen yet (padding's fill)
        k = xp.where(reads[(Ellipsis,) + places[0]], k, -1)
    for j, place in enumerate(places[1:], 1):
        value = windows[(Ellipsis,) + place]
        better = value > best
        if value.dtype.kind == "f":
            better = xp.logical_or(better, xp.isnan(value))
        if padded:               # the window's first place in the input starts it
            better = xp.logical_or(better, xp.logical_and(k < 0, reads[(Ellipsis,) + place]))
        best = xp.where(better, value, best)
        k = xp.where(better, j, k)
    position = 0
    for d in range(n):
        k_d = (k // math.prod(kernel[d + 1:])) % kernel[d]
        o_d = xp.arange(out[d]).reshape((-1,) + (1,) * (n - 1 - d))
        coord = xp.asarray(tables[d])[o_d, k_d]
        if padded:               # k = -1: PyTorch's place, the window's first one >= 0
            coord = xp.where(k < 0, xp.asarray(_first_place(tables[d]))[o_d], coord)
        position = position + coord * math.prod(spatial[d + 1:])
    return position.astype(backend.int64)


def _first_place(table):
    """Per window along a dim (its row of the (out, kernel) table), the first place of its
    progression o·s - p + k·d that is >= 0: its first place in the input if it has one
    (else past the input, where PyTorch puts a window wholly in the padding)."""
    start = table[:, 0]
    step = table[0, 1] - start[0] if table.shape[1] > 1 else 1            # the dilation
    return start - np.minimum(start, 0) // step * step


def _grid_max(xp, geo, x, fill, where, host=False):
    """Each window's maximum (..., *out) and, with `where`, the flat place in (...,
    *spatial) of its first maximum (else None): _first_max's answer. The maxima come from
    the grid's separable reduction (xp.maximum: a NaN wins); the places from matching them
    (_place_of_max), and a window whose maximum is the padding's fill holds it at its first
    place in the input (_first_max's rule), where it has padding. host: x is in host memory,
    so a NaN can be looked for before paying for the NaNs' places."""
    grid = geo.grid(xp, x, fill)

    def running_max(flat, step, k):
        best = flat.copy()
        for j in range(1, k):              # (a NaN wins; a tie keeps best)
            end = flat.size - j * step
            xp.maximum(flat[j * step:], best[:end], out=best[:end])
        return best
    best = geo.reduce(xp, grid, running_max)
    if not where:
        return best, None
    place = _place_of_max(xp, geo.windows(xp, grid), best, host)
    # flat place = the window's start + the place's offset, each a sum over the dims of a
    # coordinate times the plane below it (small tables, made on the host)
    planes = [math.prod(geo.spatial[d + 1:]) for d in range(len(geo.spatial))]
    offsets = np.zeros(())
    for k, dl, plane in zip(geo.kernel, geo.dilation, planes):
        offsets = np.add.outer(offsets, np.arange(k) * dl * plane)
    tables, start, first = geo.tables(), np.zeros(()), np.zeros(())
    for t, plane in zip(tables, planes):
        start = np.add.outer(start, t[:, 0] * plane)
        first = np.add.outer(first, _first_place(t) * plane)
    position = xp.asarray(start.astype(backend.int64)) + \
        xp.asarray(offsets.reshape(-1).astype(backend.int64))[place]
    if any(((t < 0) | (t >= L)).any() for t, L in zip(tables, geo.spatial)):
        # all of such a window's input places hold the fill: the first of them is its max
        position = xp.where(best == fill, xp.asarray(first.astype(backend.int64)), position)
    return best, position


def _place_of_max(xp, windows, best, host):
    """Where in each window of `windows` (..., *out, *kernel) (row-major over the kernel)
    its maximum `best` (..., *out) lies, as _first_max: the first place equal to it (a tie
    keeps the first), and in a window holding a NaN the last NaN. The first of the K places
    equal to best has the largest K - j, so a product and a maximum per place find it (one
    pass over the windows each, where a running first maximum needs several, and `where`
    with a mask of mixed values runs ~20x slower); the NaNs' places the same way, only
    where there are NaNs."""
    places = list(itertools.product(*map(range, windows.shape[best.ndim:])))
    count = backend.dtype("int16" if len(places) < 2 ** 15 else "int64")
    score, found = xp.zeros(best.shape, count), xp.empty(best.shape, bool)
    scored = xp.empty(best.shape, count)           # (buffers: one allocation, not K)
    for j, at in enumerate(places):
        xp.equal(windows[(Ellipsis,) + at], best, out=found)
        xp.maximum(score, xp.multiply(found, count.type(len(places) - j), out=scored),
                   out=score)
    place = count.type(len(places)) - score
    if best.dtype.kind == "f" and not (host and not xp.isnan(best).any()):
        last = xp.zeros(best.shape, count)            # the last NaN's place + 1, or 0
        for j, at in enumerate(places):
            xp.isnan(windows[(Ellipsis,) + at], out=found)
            xp.maximum(last, xp.multiply(found, count.type(j + 1), out=scored), out=last)
        place = xp.where(last > 0, last - 1, place)
    return place


def _empty_windows(tables, spatial):
    """(*out) on the host: the windows wholly in the padding (no place in the input)."""
    empty = np.zeros((), dtype=bool)
    for t, L in zip(tables, spatial):
        empty = np.logical_or.outer(empty, ~((t >= 0) & (t < L)).any(1))
    return empty


def _pick(x, position, n):
    """x's values at `position` ((..., *out) flat places in each (..., *spatial) plane),
    differentiably: indexing, whose gradient scatters g back to those places."""
    xp = x.backend.xp
    plane = math.prod(x.shape[-n:])
    lead = x.shape[:-n]
    first = (xp.arange(math.prod(lead)) * plane).reshape(lead + (1,) * n)
    return GetItem.apply(x.reshape(-1), index=position + first)


def _max_pool(n, input, kernel_size, stride, padding, dilation, ceil_mode, return_indices):
    op = f"max_pool{n}d"
    x, unbatched = _check_input(op, input, n)
    kernel = _ints(op, "kernel_size", kernel_size, n, 1)
    stride = kernel if stride is None or stride == [] or stride == () else \
        _ints(op, "stride", stride, n, 1)
    geo = Windows(op, x.shape[2:], kernel, stride, _ints(op, "padding", padding, n, 0),
                  _ints(op, "dilation", dilation, n, 1), ceil_mode)
    xp = x.backend.xp
    fill = -xp.inf if backend.is_floating(x.dtype) else backend.value_range(x.dtype)[0]
    where = return_indices or (x.requires_grad and is_grad_enabled())
    values, position = _grid_max(xp, geo, x._data, fill, where, x.backend.host)
    if not where:                        # nothing to pick by: the maxima are the answer
        out = Tensor._make(values, x.device)
        return out[0] if unbatched else out
    empty = _empty_windows(geo.tables(), geo.spatial)
    return _result(x, position, n, unbatched, return_indices,
                   (empty, fill) if empty.any() else None)


def _result(x, position, n, unbatched, return_indices, empty=None):
    """The picked values and their indices; empty: (mask, fill) for windows wholly in the
    padding, which pick nothing (the fill, gradient 0) and whose index is past the input."""
    xp = x.backend.xp
    if empty is None:
        out = _pick(x, position, n)
    else:
        plane = math.prod(x.shape[-n:])
        out = _pick(x, xp.minimum(position, plane - 1), n).masked_fill(
            Tensor._make(xp.asarray(empty[0]), x.device), empty[1])
    indices = Tensor._make(position, x.device)
    if unbatched:
        out, indices = out[0], indices[0]
    return (out, indices) if return_indices else out


def max_pool1d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """The maximum of each window of kernel_size along the last dim (stride: kernel_size
    unless given; padding: -inf at both ends; dilation: the gap between window elements);
    with return_indices also where each lies (flat in its plane, as PyTorch)."""
    return _max_pool(1, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool2d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """max_pool1d over the last two dims (an int or an (h, w) pair each)."""
    return _max_pool(2, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


def max_pool3d(input, kernel_size, stride=None, padding=0, dilation=1, ceil_mode=False,
               return_indices=False):
    """max_pool1d over the last three dims."""
    return _max_pool(3, input, kernel_size, stride, padding, dilation, ceil_mode,
                     return_indices)


# the average, Lp and adaptive pools are pool_more.py's
