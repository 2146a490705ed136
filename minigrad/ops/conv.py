"""Convolutions over any number of spatial dims (F.conv1d/2d/3d, their transposes, unfold and
fold): one im2col and one batched GEMM, whatever the dims.

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

from minigrad.args import int_arg
from minigrad.autograd import Function
from minigrad.tensor import Tensor

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
        xp, (x, w) = self.xp, (t.data for t in self.inputs[:2])
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
        xp, (x, w) = self.xp, (t.data for t in self.inputs[:2])
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


# ---- what users call (F.conv2d, F.unfold, ...): PyTorch's arguments, checked ---------------
def conv1d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd("conv1d", 1, input, weight, bias, stride, padding, dilation, groups)


def conv2d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    """The 2-d convolution (PyTorch's cross-correlation) of input (N, C_in, H, W), or
    unbatched (C_in, H, W), with weight (C_out, C_in/groups, kH, kW): each of the `groups`
    slices of the channels meets its own slice of the filters. padding is ints (zeros on
    both sides), 'valid' (none) or 'same' (the output as large as the input; stride 1,
    the odd one more on the right as PyTorch's). conv1d and conv3d are the same, with 1
    and 3 spatial dims."""
    return _conv_nd("conv2d", 2, input, weight, bias, stride, padding, dilation, groups)


def conv3d(input, weight, bias=None, stride=1, padding=0, dilation=1, groups=1):
    return _conv_nd("conv3d", 3, input, weight, bias, stride, padding, dilation, groups)


def conv_transpose1d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_nd("conv_transpose1d", 1, input, weight, bias, stride, padding, dilation,
                    groups, output_padding)


def conv_transpose2d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    """The transposed convolution (conv2d's gradient in its input, as an op) of input
    (N, C_in, H, W) with weight (C_in, C_out/groups, kH, kW): each output size is
    (H - 1)·stride - 2·padding + dilation·(kH - 1) + output_padding + 1, output_padding
    (below stride or dilation) choosing among the sizes a strided conv2d maps to H."""
    return _conv_nd("conv_transpose2d", 2, input, weight, bias, stride, padding, dilation,
                    groups, output_padding)


def conv_transpose3d(input, weight, bias=None, stride=1, padding=0, output_padding=0,
                     groups=1, dilation=1):
    return _conv_nd("conv_transpose3d", 3, input, weight, bias, stride, padding, dilation,
                    groups, output_padding)


def unfold(input, kernel_size, dilation=1, padding=0, stride=1):
    """The sliding windows of input (N, C, H, W), or unbatched (C, H, W), as columns
    (N, C·kH·kW, L), L the number of windows, channel-major (PyTorch's im2col; as
    PyTorch's, 2 spatial dims only)."""
    x, unbatched = _batched("unfold", 2, input)
    kernel, dilation, padding, stride = _window_args("unfold", 2, kernel_size, dilation,
                                                     padding, stride)
    size = x.shape[2:]
    positions = _positions(size, kernel, dilation, padding, stride)
    if min(positions) < 1:
        raise ValueError(f"unfold: input of spatial size {size} with kernel_size={kernel}, "
                         f"dilation={dilation}, padding={padding} has {positions} windows; "
                         f"at least one per dim is needed")
    cols = Unfold.apply(x, win=Window(kernel, stride, dilation, padding, positions, size))
    return cols.squeeze(0) if unbatched else cols


def fold(input, output_size, kernel_size, dilation=1, padding=0, stride=1):
    """unfold's adjoint (col2im): columns (N, C·kH·kW, L), or unbatched (C·kH·kW, L), added
    back into (N, C, *output_size) where each window lies; overlaps sum."""
    if not isinstance(input, Tensor) or input.ndim not in (2, 3):
        raise ValueError(f"fold: expected a 2-D (unbatched) or 3-D (batched) input "
                         f"(N, C·kH·kW, L), got {_shape_of(input)}")
    unbatched = input.ndim == 2
    cols = input.unsqueeze(0) if unbatched else input
    size = _ints("fold", "output_size", output_size, 2, 0)
    kernel, dilation, padding, stride = _window_args("fold", 2, kernel_size, dilation,
                                                     padding, stride)
    positions = _positions(size, kernel, dilation, padding, stride)
    if cols.shape[1] % math.prod(kernel):
        raise ValueError(f"fold: input's dim 1 ({cols.shape[1]}) must be C·kH·kW, divisible "
                         f"by the kernel's {math.prod(kernel)} taps (kernel_size={kernel})")
    if min(positions) < 1 or cols.shape[2] != math.prod(positions):
        raise ValueError(f"fold: output_size={size} with kernel_size={kernel}, dilation="
                         f"{dilation}, padding={padding}, stride={stride} has "
                         f"{' x '.join(map(str, positions))} windows, but the input holds "
                         f"{cols.shape[2]} (its last dim)")
    out = Fold.apply(cols, win=Window(kernel, stride, dilation, padding, positions, size))
    return out.squeeze(0) if unbatched else out


def _conv_nd(op, d, input, weight, bias, stride, padding, dilation, groups,
             output_padding=None):
    """conv{d}d, or conv_transpose{d}d where output_padding is given: arguments checked,
    the geometry worked out, the op applied."""
    transposed = output_padding is not None
    x, unbatched = _batched(op, d, input)
    groups = int_arg(op, "groups", groups, low=1)
    cout = _check_weight(op, d, x, weight, groups, transposed)
    stride = _ints(op, "stride", stride, d, 1)
    dilation = _ints(op, "dilation", dilation, d, 1)
    kernel, size = tuple(weight.shape[2:]), tuple(x.shape[2:])
    if transposed:
        if isinstance(padding, str):
            raise TypeError(f"{op}: padding must be an int or {d} ints, got {padding!r} "
                            f"('same' and 'valid' are conv{d}d's)")
        padding = _ints(op, "padding", padding, d, 0)
        output_padding = _ints(op, "output_padding", output_padding, d, 0)
        if any(p >= max(s, dl) for p, s, dl in zip(output_padding, stride, dilation)):
            raise ValueError(f"{op}: output_padding={output_padding} must be smaller than "
                             f"either stride={stride} or dilation={dilation}, in each dim")
        out = tuple((n - 1) * s - 2 * p + dl * (k - 1) + q + 1 for n, s, p, dl, k, q in
                    zip(size, stride, padding, dilation, kernel, output_padding))
        if min(out, default=1) < 1:
            raise ValueError(f"{op}: the output would have size {out} (input {size}, "
                             f"kernel_size={kernel}, stride={stride}, padding={padding}): "
                             f"the padding is too large")
        win = Window(kernel, stride, dilation, padding, size, out)
    else:
        before, after = _conv_padding(op, padding, kernel, stride, dilation)
        padded = tuple(n + a + b for n, a, b in zip(size, before, after))
        span = tuple(dl * (k - 1) + 1 for k, dl in zip(kernel, dilation))
        if any(p < s for p, s in zip(padded, span)):
            raise ValueError(f"{op}: the kernel spans {span} (kernel_size={kernel}, dilation="
                             f"{dilation}), more than the padded input {padded} (input "
                             f"{size}, padding {tuple(zip(before, after))}); it can't be "
                             f"larger")
        positions = tuple((p - s) // st + 1 for p, s, st in zip(padded, span, stride))
        win = Window(kernel, stride, dilation, before, positions, size)
    inputs = (x, weight)
    if bias is not None:
        if not isinstance(bias, Tensor) or bias.shape != (cout,):
            raise ValueError(f"{op}: bias must have shape ({cout},) (out_channels), got "
                             f"{_shape_of(bias)}")
        inputs += (bias,)
    if any(t.dtype != x.dtype for t in inputs):
        raise TypeError(f"{op}: input, weight and bias have dtypes "
                        f"{', '.join(str(t.dtype) for t in inputs)}; convert them to one "
                        f"first (.float(), .double()), as PyTorch requires")
    op_class = ConvTranspose if transposed else Conv
    if not transposed:
        from minigrad.ops.conv_depthwise import DepthwiseConv, is_depthwise  # (imports Conv)
        op_class = DepthwiseConv if is_depthwise(x, weight, groups) else Conv
    y = op_class.apply(*inputs, groups=groups, win=win)
    return y.squeeze(0) if unbatched else y


def _shape_of(t):
    return f"shape {t.shape}" if isinstance(t, Tensor) else f"a {type(t).__name__}"


def _batched(op, d, input):
    """input with a batch dim (N, C, *spatial), and whether one was added."""
    if not isinstance(input, Tensor) or input.ndim not in (d + 1, d + 2):
        raise ValueError(f"{op}: expected a {d + 1}-D (unbatched) or {d + 2}-D (batched) "
                         f"input, (C, *spatial) or (N, C, *spatial) with {d} spatial dims, "
                         f"got {_shape_of(input)}")
    return (input.unsqueeze(0), True) if input.ndim == d + 1 else (input, False)


def _check_weight(op, d, x, weight, groups, transposed):
    """The weight's shape against the input's channels and groups; C_out."""
    layout = "(in_channels, out_channels/groups, *kernel_size)" if transposed else \
        "(out_channels, in_channels/groups, *kernel_size)"
    if not isinstance(weight, Tensor) or weight.ndim != d + 2:
        raise ValueError(f"{op}: weight must be {d + 2}-D {layout}, got {_shape_of(weight)}")
    if weight.shape[0] % groups or weight.shape[0] < groups:
        what = "in_channels" if transposed else "out_channels"
        raise ValueError(f"{op}: weight.shape[0] ({what}) = {weight.shape[0]} must be a "
                         f"positive multiple of groups={groups} (weight {layout}: "
                         f"{weight.shape})")
    cin = weight.shape[0] if transposed else weight.shape[1] * groups
    if x.shape[1] != cin:
        how = "weight.shape[0]" if transposed else "weight.shape[1] · groups"
        raise ValueError(f"{op}: input has {x.shape[1]} channels (shape {x.shape}), but "
                         f"weight {weight.shape} with groups={groups} expects {cin} ({how})")
    for n in weight.shape[2:]:
        if n < 1:
            raise ValueError(f"{op}: weight {weight.shape} has an empty kernel")
    return weight.shape[1] * groups if transposed else weight.shape[0]


def _ints(op, name, value, d, low):
    """An int or d ints (one per spatial dim; one in a list stands for all), each >= low,
    as a tuple of d."""
    values = tuple(value) if isinstance(value, (tuple, list)) else (value,)
    if len(values) not in (1, d):
        raise ValueError(f"{op}: {name} must be an int or {d} ints (one per spatial dim), "
                         f"got {value!r}")
    values = tuple(int_arg(op, name, v) for v in values) * (d // len(values))
    if min(values) < low:
        raise ValueError(f"{op}: {name} must be >= {low} in each dim, got {value!r}")
    return values


def _window_args(op, d, kernel_size, dilation, padding, stride):
    return (_ints(op, "kernel_size", kernel_size, d, 1), _ints(op, "dilation", dilation, d, 1),
            _ints(op, "padding", padding, d, 0), _ints(op, "stride", stride, d, 1))


def _positions(size, kernel, dilation, padding, stride):
    """How many windows fit along each dim (padding on both sides)."""
    return tuple((n + 2 * p - dl * (k - 1) - 1) // s + 1 for n, k, dl, p, s in
                 zip(size, kernel, dilation, padding, stride))


def _conv_padding(op, padding, kernel, stride, dilation):
    """conv's padding as (before, after) per dim: ints pad both sides, 'valid' none, 'same'
    the kernel's span less one, the odd one after (as PyTorch's)."""
    d = len(kernel)
    if not isinstance(padding, str):
        padding = _ints(op, "padding", padding, d, 0)
        return padding, padding
    if padding == "valid":
        return (0,) * d, (0,) * d
    if padding != "same":
        raise ValueError(f"{op}: padding must be an int, {d} ints, 'valid' or 'same', got "
                         f"{padding!r}")
    if any(s != 1 for s in stride):
        raise ValueError(f"{op}: padding='same' is not supported for strided convolutions "
                         f"(stride={stride}); give the padding as ints")
    total = [dl * (k - 1) for k, dl in zip(kernel, dilation)]
    return tuple(t // 2 for t in total), tuple(t - t // 2 for t in total)
