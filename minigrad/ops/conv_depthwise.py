"""Depthwise convolution (F.conv1d/2d/3d with groups == in_channels, MobileNet's depthwise
layers): each input channel c is filtered alone by its m filters, output channels c·m + j
(m the channel multiplier, usually 1). The general path (ops/conv.py) runs it as a GEMM per
group of one row by the kernel's T taps, after copying the input T times (im2col); here
each tap is one multiply pass and one add over the whole (shifted) input instead:

    y[c·m+j]      = Σₜ w[c·m+j, t] · shiftₜ(x[c])
    dx[c]         = Σₜ Σⱼ shiftₜ⁻¹(w[c·m+j, t] · dy[c·m+j])
    dw[c·m+j, t]  = Σ dy[c·m+j] · shiftₜ(x[c])        (over samples and positions)

The passes run on the zero-padded input in channel-major layout (C, N·∏Q): each channel's
samples one after another, one long contiguous row, where a tap's shift is a flat offset.
(NumPy's elementwise loops over many short rows, or over a strided view's, ran 3-6x
slower.) An output place's window never leaves its sample's plane; places that start no
window read across its end, results that no output keeps. With a stride s the padded grid
is split into its s phases per dim (grid place q·s + r is phase r's place q), so a tap reads
one phase at a flat offset too, and only the output's own places are computed (in the
backward: a strided forward, and one on short rows, is the general path's, which was as
fast or faster there: DepthwiseConv.min_row).

The places that start no window hold dy = 0 in the backward; a product with an inf or NaN
there (of w for dx, of x for dw) would be NaN where the general path has none, so on the
host a non-finite weight, or a NaN in dw, sends the backward to the general path (and on
a device, where checking would wait for it, the backward is the general path's). The
Tensor-level backward (create_graph, double backward) is Conv's general one; the general
path is also the reference the tests hold this one to."""
import itertools
import math

from minigrad import backend
from minigrad.ops.blocks import groups
from minigrad.ops.conv import Conv


def is_depthwise(x, weight, groups):
    """Whether conv(x, weight, groups) takes this path: one input channel per group (more
    than one group) and at most 2 filters each (with 4, the general path's GEMM, which
    shares its im2col between them, was faster), a non-empty batch, float32 or float64
    (NumPy's native arithmetic; the general path keeps other dtypes' accumulation). A
    weight of no filters is the general path's (an empty output; here a bare reshape
    error)."""
    return groups > 1 and groups == x.shape[1] and groups <= weight.shape[0] <= 2 * groups \
        and x.shape[0] > 0 and x.dtype in (backend.float32, backend.float64)


class Taps:
    """The phase grids and each tap's (phase, flat offset) for a conv's Window."""

    def __init__(self, win):
        self.win = win
        reach = [(o - 1) * s + (k - 1) * d + 1 for k, s, d, o in
                 zip(win.kernel, win.stride, win.dilation, win.positions)]
        # phase places per dim: the padded input (and what the last window reaches), ÷ s
        self.places = tuple(-(-max(p + n, r) // s) for p, n, r, s in
                            zip(win.padding, win.size, reach, win.stride))
        self.phases = list(itertools.product(*map(range, win.stride)))
        self.taps = []                       # per tap, row-major: (phase number, offset)
        for tap in itertools.product(*map(range, win.kernel)):
            at = [t * d for t, d in zip(tap, win.dilation)]
            phase = tuple(a % s for a, s in zip(at, win.stride))
            offset = sum(a // s * math.prod(self.places[i + 1:])
                         for i, (a, s) in enumerate(zip(at, win.stride)))
            self.taps.append((self.phases.index(phase), offset))

    def _inside(self, phase):
        """For a phase: its places that hold input (slices of the phase grid), and where
        those lie in the input (strided slices)."""
        grid, image = [], []
        for r, q, s, p, n in zip(phase, self.places, self.win.stride, self.win.padding,
                                 self.win.size):
            first, stop = -(-(p - r) // s), min(-(-(p + n - r) // s), q)
            grid.append(slice(first, stop))
            image.append(slice(first * s + r - p, n, s))
        return tuple(grid), tuple(image)

    def split(self, xp, x):
        """x (N, C, *S) zero-padded, as phase rows (phases, C, N·∏Q)."""
        n, c = x.shape[:2]
        out = xp.zeros((len(self.phases), c, n) + self.places, x.dtype)
        x = x.swapaxes(0, 1)
        every = (slice(None),) * 2
        for i, phase in enumerate(self.phases):
            grid, image = self._inside(phase)
            out[(i,) + every + grid] = x[every + image]
        return out.reshape(len(self.phases), c, -1)

    def join(self, xp, rows, out):
        """split's adjoint on the input's places: phase rows (phases, C, N·∏Q) into out
        (N, C, *S), what lies in the padding dropped."""
        n, c = out.shape[:2]
        grids = rows.reshape((len(self.phases), c, n) + self.places).swapaxes(1, 2)
        every = (slice(None),) * 2
        for i, phase in enumerate(self.phases):
            grid, image = self._inside(phase)
            out[every + image] = grids[(i,) + every + grid]

    def place(self, xp, g):
        """g (N, C_out, *O) on the output's grid: rows (C_out, N·∏Q), zero where no output
        lies (so a shifted pass spreads nothing from there)."""
        n, c = g.shape[:2]
        out = xp.zeros((c, n) + self.places, g.dtype)
        out[(Ellipsis,) + tuple(slice(o) for o in self.win.positions)] = g.swapaxes(0, 1)
        return out.reshape(c, -1)

    def crop(self, xp, rows, out):
        """The output's places of rows (C_out, N·∏Q) into out (N, C_out, *O)."""
        grid = rows.reshape((rows.shape[0], out.shape[0]) + self.places)
        inside = (Ellipsis,) + tuple(slice(o) for o in self.win.positions)
        out[...] = grid[inside].swapaxes(0, 1)


def _shifted_sum(xp, rows, wt, taps):
    """Σₜ wt[:, :, t] · shiftₜ(rows): (C, m, L) from phase rows (phases, C, L) and the
    weights (C, m, T); the first tap (phase 0, offset 0) writes every place."""
    size = rows.shape[-1]
    y = rows[0, :, None] * wt[:, :, :1]
    part = xp.empty_like(y)
    for k, (phase, offset) in enumerate(taps[1:], 1):
        end = size - offset
        xp.multiply(rows[phase, :, None, offset:], wt[:, :, k:k + 1], out=part[..., :end])
        xp.add(y[..., :end], part[..., :end], out=y[..., :end])
    return y


class DepthwiseConv(Conv):
    """Conv with groups == in_channels: forward and the fast backward by shifted passes
    (this module's docstring), a block of channels at a time (all of a block's passes run
    while its rows are in cache: 2-3x faster than each pass over the whole arrays); the
    Tensor-level backward is Conv's."""

    def _blocks(self, c, m, taps, n):
        """Channel ranges whose rows (m of them per channel) fill about two cache blocks."""
        be = backend.get(self.device)
        return groups(be, c, n * math.prod(taps.places) * m, blocks=2)

    # rows shorter than this (N·∏Q places per channel: a small batch of small images) run
    # the forward by the general path: NumPy's per-row cost dominates the shifted passes
    # there (8x8 images, 16 samples: 1.3x the general path's time; 16x16: 0.66x). So does
    # a strided one: splitting the input into phases cost what the passes saved (0.8-1.7x
    # the general path's time for 32x32 images, stride 2); its backward gains still.
    min_row = 4096

    def compute(self, x, w, xp):
        taps, (n, c) = Taps(self.win), x.shape[:2]
        if n * math.prod(taps.places) < self.min_row or max(self.win.stride) > 1:
            return super().compute(x, w, xp)
        m = w.shape[0] // c
        wt = w.reshape(c, m, len(taps.taps))                          # (C, m, T)
        y = xp.empty((n, c * m) + self.win.positions, x.dtype)
        for lo, hi in self._blocks(c, m, taps, n):
            rows = taps.split(xp, x[:, lo:hi])                        # (phases, c, L)
            out = _shifted_sum(xp, rows, wt[lo:hi], taps.taps)        # (c, m, L)
            taps.crop(xp, out.reshape((hi - lo) * m, -1), y[:, lo * m:hi * m])
        return y

    def backward_arrays(self, g):
        xp, (x, w) = self.xp, (t._data for t in self.inputs[:2])
        # (inf or NaN weights: the general path; a device: too, see the module docstring)
        need = self.needs_input_grad
        if not backend.get(self.device).host or not xp.isfinite(w).all() or \
                not (need[0] or need[1]):
            return super().backward_arrays(g)
        taps, (n, c) = Taps(self.win), x.shape[:2]
        m = w.shape[0] // c
        wt = w.reshape(c, m, len(taps.taps))                          # (C, m, T)
        gx = xp.empty(x.shape, x.dtype) if need[0] else None
        gw = xp.empty(wt.shape, w.dtype) if need[1] else None
        for lo, hi in self._blocks(c, m, taps, n):
            gy = taps.place(xp, g[:, lo * m:hi * m]).reshape(hi - lo, m, -1)  # (c, m, L)
            size = gy.shape[-1]
            if need[0]:                    # dx: each tap's w · dy, shifted back
                rows = xp.zeros((len(taps.phases), hi - lo, size), x.dtype)
                part = xp.empty((hi - lo, size), x.dtype)
                for k, (phase, offset) in enumerate(taps.taps):
                    end = size - offset
                    for j in range(m):
                        xp.multiply(gy[:, j, :end], wt[lo:hi, j, k:k + 1], out=part[:, :end])
                        xp.add(rows[phase, :, offset:], part[:, :end],
                               out=rows[phase, :, offset:])
                taps.join(xp, rows, gx[:, lo:hi])
            if need[1]:                    # dw: Σ dy · shifted x, per tap
                rows = taps.split(xp, x[:, lo:hi])
                for k, (phase, offset) in enumerate(taps.taps):
                    gw[lo:hi, :, k] = xp.matmul(gy[..., :size - offset],
                                                rows[phase, :, offset:, None])[..., 0]
        if need[1]:
            if xp.isnan(gw).any():         # dy = 0 met an inf or NaN of x? (or dy's own NaN)
                return super().backward_arrays(g)
            gw = gw.reshape(w.shape)
        return self._bias_grad(gx, gw, g)
