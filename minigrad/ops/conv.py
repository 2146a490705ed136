"""Convolutions over any number of spatial dims (F.conv1d/2d/3d, their transposes, unfold and
fold) as ops: one im2col and one batched GEMM, whatever the dims. What users call
(F.conv2d, F.unfold, ...), the arguments checked and the Window worked out from them, is
ops/conv_functional.py.

im2col reads every window of the zero-padded input through a strided view (as_strided: no
loop over positions) and copies it once into columns (N, C·∏K, L), PyTorch's unfold layout,
L the number of output positions. A convolution is then, per group g, one matrix product
W_g (C_out/g, C_in/g·∏K) · cols_g, all groups and samples in one batched matmul (the
weight gradient's GEMM sums over samples and positions at once). col2im (fold), im2col's
adjoint, adds each column back where its window came from, one strided slice add per
kernel tap. So:
    conv:            Y = W ⋆ X + b     dX = col2im(Wᵀ·dY)   dW = Σₙ dY·im2col(X)ᵀ   db = Σ dY
    conv_transpose:  Y = col2im(Wᵀ·X)  dX = W ⋆ dY          dW = Σₙ X·im2col(dY)ᵀ
(a transposed convolution is a convolution's input gradient as an op, with the same weight
layout). The GEMM parts below are written once and run on Tensors in `backward` (unfold and
fold are ops, each the other's gradient, so double backward works) and on raw arrays in
`forward` and `backward_arrays`.

A `Window` holds the geometry, per spatial dim: kernel K, stride s, dilation d, padding p
(zeros before the input; what lies after only decides how many windows fit), positions O
(windows) and size S (of the unpadded input): window j, tap k reads input index j·s + k·d − p.
The same Window describes a convolution S → O and its transpose O → S.
"""
import collections
import functools
import itertools
import math

from minigrad.autograd import Function

Window = collections.namedtuple("Window", "kernel stride dilation padding positions size")


def _reach(win):
    """How far into the padded input the last window reaches, per dim."""
    return [(o - 1) * s + (k - 1) * d + 1 for k, s, d, o in
            zip(win.kernel, win.stride, win.dilation, win.positions)]


def _im2col(xp, x, win, batch_last=False):
    """x (N, C, *S) -> columns (N, C·∏K, ∏O): each window's values, channel-major; with
    batch_last, (C·∏K, N·∏O) instead (for the weight gradient's GEMM, which sums over N
    and O at once)."""
    n, c = x.shape[:2]
    after = [max(r - p - s, 0) for r, p, s in zip(_reach(win), win.padding, x.shape[2:])]
    if any(win.padding) or any(after):
        padded = xp.zeros((n, c) + tuple(p + s + a for p, s, a in
                                         zip(win.padding, x.shape[2:], after)), x.dtype)
        padded[(slice(None),) * 2 + tuple(slice(p, p + s) for p, s in
                                          zip(win.padding, x.shape[2:]))] = x
        x = padded
    st = x.strides[2:]           # (bytes): a tap steps d elements, a window s elements
    taps = tuple(t * d for t, d in zip(st, win.dilation))
    windows = tuple(t * s for t, s in zip(st, win.stride))
    rows, positions = c * math.prod(win.kernel), math.prod(win.positions)
    if batch_last:
        view = xp.lib.stride_tricks.as_strided(
            x, shape=(c,) + win.kernel + (n,) + win.positions,
            strides=(x.strides[1],) + taps + (x.strides[0],) + windows)
        return view.reshape(rows, n * positions)
    view = xp.lib.stride_tricks.as_strided(x, shape=(n, c) + win.kernel + win.positions,
                                           strides=x.strides[:2] + taps + windows)
    return view.reshape(n, rows, positions)


def _col2im(xp, cols, win):
    """im2col's adjoint: columns (N, C·∏K, ∏O) added back into (N, C, *S) where each
    window came from (overlapping windows sum); what fell on the padding is dropped."""
    n, c = cols.shape[0], cols.shape[1] // math.prod(win.kernel)
    blocks = cols.reshape((n, c) + win.kernel + win.positions)
    full = tuple(max(p + s, r) for p, s, r in zip(win.padding, win.size, _reach(win)))
    out = xp.zeros((n, c) + full, cols.dtype)
    every = (slice(None),) * 2
    for tap in itertools.product(*map(range, win.kernel)):    # one strided add per tap
        where = tuple(slice(t * d, t * d + (o - 1) * s + 1, s) for t, d, o, s in
                      zip(tap, win.dilation, win.positions, win.stride))
        out[every + where] += blocks[every + tap]
    if full == win.size:
        return out
    return xp.ascontiguousarray(out[every + tuple(slice(p, p + s) for p, s in
                                                  zip(win.padding, win.size))])


# ---- the GEMMs, on Tensors (backward) or arrays (forward, backward_arrays) alike ----------
def _conv(x, w, groups, win, im2col):
    """Y = W ⋆ X: per group, W_g (C_out/g, C_in/g·∏K) · im2col(X)_g; -> (N, C_out, *O)."""
    cols = im2col(x, win)                                         # (N, C_in·∏K, L)
    n, rows, positions = cols.shape
    y = w.reshape(groups, w.shape[0] // groups, rows // groups) @ cols.reshape(
        n, groups, rows // groups, positions)                     # (N, g, C_out/g, L)
    return y.reshape((n, w.shape[0]) + win.positions)


def _conv_transpose(y, w, groups, win, col2im):
    """conv's adjoint in X: col2im(Wᵀ · Y), per group; Y (N, C_out, *O) -> (N, C_in, *S)."""
    n, cout = y.shape[:2]
    per_group = math.prod(w.shape[1:])                            # C_in/g·∏K
    cols = w.reshape(groups, cout // groups, per_group).swapaxes(-1, -2) @ y.reshape(
        n, groups, cout // groups, math.prod(win.positions))      # (N, g, C_in/g·∏K, L)
    return col2im(cols.reshape(n, groups * per_group, cols.shape[-1]), win)


def _weight_grad(x, gy, w_shape, groups, win, im2col_t):
    """conv's gradient in W: dY_g · im2col(X)_gᵀ, one GEMM per group that sums over the
    samples and positions together (im2col_t(X) is (C_in·∏K, N·L); dY is copied to
    (C_out, N·L), as large as the output: no (N, *W.shape) products to sum afterwards)."""
    cols = im2col_t(x, win)                                       # (C_in·∏K, N·L)
    rows, columns = cols.shape
    per_group = (groups, w_shape[0] // groups, columns)
    gy = gy.reshape(gy.shape[0], w_shape[0], math.prod(win.positions)).swapaxes(0, 1)
    gw = gy.reshape(per_group) @ cols.reshape(groups, rows // groups, columns).swapaxes(-1, -2)
    return gw.reshape(w_shape)


def _unfold(x, win):
    return Unfold.apply(x, win=win)


def _unfold_t(x, win):
    """unfold(x) as (C·∏K, N·L), _weight_grad's layout, in Tensor ops."""
    cols = _unfold(x, win)
    return cols.swapaxes(0, 1).reshape(cols.shape[1], cols.shape[0] * cols.shape[2])


def _fold(cols, win):
    return Fold.apply(cols, win=win)


class _Convolution:
    """What the ops Conv and ConvTranspose share (a mixin, not an op): the bias and its
    gradient."""
    fresh_grads = True                                   # see Function.fresh_grads

    def forward(self, x, w, *b, groups, win):
        self.groups, self.win = groups, win
        y = self.compute(x, w, self.xp)
        if b:                                            # (into the GEMM's fresh output)
            y += b[0].reshape((b[0].shape[0],) + (1,) * len(win.kernel))
        return y

    def _bias_grad(self, gx, gw, g):
        """(gx, gw) and, where there is a bias, db = Σ dY over all but the channels."""
        if len(self.inputs) == 2:
            return gx, gw
        gb = g.sum((0,) + tuple(range(2, g.ndim))) if self.needs_input_grad[2] else None
        return gx, gw, gb


class Conv(_Convolution, Function):
    """y = W ⋆ x + b: the convolution (a cross-correlation, as PyTorch's), W (C_out, C_in/g,
    *K)."""

    def compute(self, x, w, xp):
        return _conv(x, w, self.groups, self.win, functools.partial(_im2col, xp))

    def backward(self, g):                          # Tensor ops: twice differentiable
        x, w = self.inputs[:2]
        need = self.needs_input_grad
        gx = ConvTranspose.apply(g, w, groups=self.groups, win=self.win) if need[0] else None
        gw = _weight_grad(x, g, w.shape, self.groups, self.win, _unfold_t) if need[1] else None
        return self._bias_grad(gx, gw, g)

    def backward_arrays(self, g):                   # the same on arrays
        xp, (x, w) = self.xp, (t._data for t in self.inputs[:2])
        need = self.needs_input_grad
        gx = _conv_transpose(g, w, self.groups, self.win, functools.partial(_col2im, xp)) \
            if need[0] else None
        gw = _weight_grad(x, g, w.shape, self.groups, self.win,
                          functools.partial(_im2col, xp, batch_last=True)) if need[1] else None
        return self._bias_grad(gx, gw, g)


class ConvTranspose(_Convolution, Function):
    """y = Wᵀ ⋆ x + b, conv's input gradient as an op: W (C_in, C_out/g, *K), as PyTorch's
    (the layout of the conv it is the transpose of)."""

    def compute(self, x, w, xp):
        return _conv_transpose(x, w, self.groups, self.win, functools.partial(_col2im, xp))

    def backward(self, g):
        x, w = self.inputs[:2]
        need = self.needs_input_grad
        gx = Conv.apply(g, w, groups=self.groups, win=self.win) if need[0] else None
        gw = _weight_grad(g, x, w.shape, self.groups, self.win, _unfold_t) if need[1] else None
        return self._bias_grad(gx, gw, g)

    def backward_arrays(self, g):
        xp, (x, w) = self.xp, (t._data for t in self.inputs[:2])
        need = self.needs_input_grad
        gx = _conv(g, w, self.groups, self.win, functools.partial(_im2col, xp)) \
            if need[0] else None
        gw = _weight_grad(g, x, w.shape, self.groups, self.win,
                          functools.partial(_im2col, xp, batch_last=True)) if need[1] else None
        return self._bias_grad(gx, gw, g)


class Unfold(Function):
    """im2col as an op (F.unfold): linear, so its gradient is fold, and fold's is unfold."""
    needs_values = False                            # (a linear map: reads no values)
    fresh_grads = True                              # (col2im's new array; not fold's)

    def forward(self, x, win):
        self.win = win
        cols = _im2col(self.xp, x, win)
        # a 1×1 window without padding is a reshape of x: a copy, as PyTorch's unfold
        return cols.copy() if self.xp.may_share_memory(cols, x) else cols

    def backward(self, g):
        return _fold(g, self.win)

    def backward_arrays(self, g):
        return (_col2im(self.xp, g, self.win),)


class Fold(Function):
    """col2im as an op (F.fold), unfold's adjoint."""
    needs_values = False

    def forward(self, cols, win):
        self.win = win
        return _col2im(self.xp, cols, win)

    def backward(self, g):
        return _unfold(g, self.win)

    def backward_arrays(self, g):
        return (_im2col(self.xp, g, self.win),)
