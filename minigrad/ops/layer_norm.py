"""Fused layer normalisation (article 2.2.5.4): normalise over the trailing dims with the
biased variance and eps inside the square root, as PyTorch, then scale and shift."""
import math

from minigrad import backend, parallel
from minigrad.args import not_a_tensor, number_arg, same_float_params
from minigrad.autograd import Function
from minigrad.ops.blocks import contiguous, in_row_pieces, row_pieces
from minigrad.ops.rows import col_sum
from minigrad.tensor import Tensor


class LayerNorm(Function):
    """Forward and the fast backward work on rows (R, D), D the normalised elements, piece by
    piece on the CPU (ops/blocks.py) so each piece's passes stay in cache."""
    fresh_grads = True                                   # see Function.fresh_grads

    def forward(self, x, *affine, dims, eps):            # y = (x - μ)/√(σ² + ε) · w + b
        xp = self.xp
        self.dims, self.eps = dims, eps
        out_dtype = x.dtype
        # float16 statistics overflow (σ² of values ~300 passes 65504): compute in float32
        # and return float16, as PyTorch
        dt = backend.float32 if x.dtype == backend.float16 else x.dtype
        x = contiguous(xp, x).astype(dt, copy=False)
        lead = x.shape[:x.ndim - len(dims)]
        rows = x.reshape(-1, math.prod(x.shape[d] for d in dims))
        y = xp.empty(rows.shape, dt)
        # only the row statistics are kept for backward, which rebuilds x̂ from x (the graph
        # keeps x anyway): a saved x̂ would cost a copy of x in memory and one more pass
        mean, rstd = xp.empty((rows.shape[0], 1), dt), xp.empty((rows.shape[0], 1), dt)
        w = affine[0].reshape(-1).astype(dt, copy=False) if affine else None
        b = affine[1].reshape(-1).astype(dt, copy=False) if len(affine) == 2 else None

        to_mean = _mean_vector(xp, rows.shape[1], dt)

        def normalise(xr, yr, mr, rr):
            _row_dot(xp, xr, to_mean, out=mr)            # μ
            xp.subtract(xr, mr, out=yr)                  # x - μ
            _row_dot(xp, xp.square(yr), to_mean, out=rr)  # σ²
            rr += eps
            xp.sqrt(rr, out=rr)
            xp.divide(1, rr, out=rr)                     # 1/√(σ² + ε)
            yr *= rr                                     # x̂
            if w is not None:
                yr *= w
            if b is not None:
                yr += b
        be = backend.get(self.device)
        fused = _fused_forward(be.kernels, xp, rows, to_mean, w, b, eps)
        if fused is None:
            in_row_pieces(be, normalise, rows, y, mean, rstd)
        else:
            y, mean, rstd = fused
        self.mean = mean.reshape(lead + (1,) * len(dims))
        self.rstd = rstd.reshape(lead + (1,) * len(dims))
        return y.reshape(x.shape).astype(out_dtype, copy=False)

    def backward(self, g):              # the reference: runs only under create_graph=True,
        x, *affine = self.inputs        # so x̂ is rebuilt as a graph of x
        if x.dtype == backend.float16:                   # its squares overflow (see forward)
            x, g = x.float(), g.float()                  # the engine casts gx back
            affine = [p.float() for p in affine]
        xc = x - x.mean(self.dims, keepdim=True)
        rstd = ((xc * xc).mean(self.dims, keepdim=True) + self.eps) ** -0.5
        xhat = xc * rstd
        gxhat = g * affine[0] if affine else g
        # dx = rstd · (ĝ - mean(ĝ) - x̂ · mean(ĝ ⊙ x̂)), ĝ the gradient w.r.t. x̂
        gx = rstd * (gxhat - gxhat.mean(self.dims, keepdim=True)
                     - xhat * (gxhat * xhat).mean(self.dims, keepdim=True))
        grads = [gx]
        if affine:
            grads.append(g * xhat)                       # the engine sums over leading dims
            if len(affine) == 2:
                grads.append(g)
        return tuple(grads)

    def backward_arrays(self, g):                        # the same on arrays, in place
        x, *affine = self.inputs
        xp = self.xp
        d = math.prod(x.shape[k] for k in self.dims)
        mean, rstd = self.mean.reshape(-1, 1), self.rstd.reshape(-1, 1)
        dt = rstd.dtype                                  # float32 for float16 (see forward)
        xs = contiguous(xp, x._data).reshape(-1, d).astype(dt, copy=False)
        g = contiguous(xp, g).reshape(-1, d).astype(dt, copy=False)
        w = affine[0]._data.reshape(-1).astype(dt, copy=False) if affine else None
        fused = _fused_backward(backend.get(self.device).kernels, xp, g, xs, mean, rstd, w)
        if fused is not None:
            return self._grads(*fused)
        gx = xp.empty(g.shape, g.dtype)
        # row means of ĝ = g⊙w and of ĝ⊙x̂ straight from g and g⊙x̂: mean(g⊙w) = g·(w/d)
        to_mean = _mean_vector(xp, d, g.dtype) if w is None else (w / d).reshape(d, 1)
        pieces = row_pieces(backend.get(self.device), g, xs, mean, rstd, gx)
        # Σ g⊙x̂ and Σ g over rows, summed in order within each of a few runs of pieces and
        # then over the runs: the runs may go to different threads (parallel.py), and their
        # number, set by the shape alone, keeps the bits the same for any thread count and
        # the partial sums small (wide rows are a piece each)
        runs = min(len(pieces), 16, max(1, g.shape[0] // 64))
        bounds = [len(pieces) * j // runs for j in range(runs + 1)]
        sums = xp.zeros((runs, 2, d), g.dtype) if w is not None else None
        bias = len(affine) == 2

        def grad(gr, xr, mr, rr, out, sums):
            xc = xp.subtract(xr, mr)                     # x - μ; x̂ = (x - μ)·r
            t = xp.multiply(gr, xc)                      # g⊙(x - μ)
            if sums is not None:
                sums[0] += xp.matmul(rr.reshape(1, -1), t)[0]
                if bias:                                 # Σ g: the bias's gradient
                    sums[1] += col_sum(xp, gr)
            mean_g = _row_dot(xp, gr, to_mean)           # mean(ĝ)
            c1 = rr * rr * _row_dot(xp, t, to_mean)      # r·mean(ĝ⊙x̂)
            # dx = r·(ĝ - mean(ĝ) - x̂·mean(ĝ⊙x̂)) = r·(ĝ - mean(ĝ) - (x - μ)·c1)
            if w is None:
                out[...] = gr                            # ĝ = g
            else:
                xp.multiply(gr, w, out=out)              # ĝ = g⊙w
            out -= mean_g
            out -= xp.multiply(xc, c1, out=t)
            out *= rr

        def run(j):
            for piece in pieces[bounds[j]:bounds[j + 1]]:
                grad(*piece, None if sums is None else sums[j])
        parallel.run(run, [(j,) for j in range(runs)], g.size)
        sums = None if sums is None else sums[0] if runs == 1 else sums.sum(0)
        return self._grads(gx, sums)

    def _grads(self, gx, sums):
        """(dx, dw, db) in the inputs' shapes from dx's rows and (Σ g⊙x̂, Σ g)."""
        x, *affine = self.inputs
        gx = gx.reshape(x.shape)
        if not affine:
            return (gx,)
        shape = affine[0].shape
        gw = sums[0].reshape(shape)
        return (gx, gw) if len(affine) == 1 else (gx, gw, sums[1].reshape(shape))


def _fused_forward(kernels, xp, rows, to_mean, w, b, eps):
    """(y, μ, 1/σ) of rows (R, D) in four GPU launches, the row sums as matrix-vector
    products and the rest as fused kernels (backend_kernels.py); None without them."""
    if not kernels:
        return None
    mean = xp.matmul(rows, to_mean)
    sq = kernels("ln_center_sq", rows, mean)             # (x - μ)²
    rstd = None if sq is None else kernels("ln_rstd", xp.matmul(sq, to_mean), eps)
    d = rows.shape[1]
    w = backend.filled(xp, (d,), 1, rows.dtype) if w is None else w
    b = backend.filled(xp, (d,), 0, rows.dtype) if b is None else b
    y = None if rstd is None else kernels("ln_out", rows, mean, rstd, w, b)
    return None if y is None else (y, mean, rstd)


def _fused_backward(kernels, xp, g, x, mean, rstd, w):
    """backward_arrays' dx (and Σ g⊙x̂, Σ g over rows) with fused GPU kernels: the same
    formula, dx = r·(ĝ - mean(ĝ) - (x - μ)·r²·mean(ĝ⊙(x - μ))); None without them."""
    t = kernels("ln_grad_t", g, x, mean) if kernels else None     # g⊙(x - μ)
    if t is None:
        return None
    d = x.shape[1]
    to_mean = _mean_vector(xp, d, g.dtype) if w is None else (w / d).reshape(d, 1)
    gx = kernels("ln_grad_x", g, backend.filled(xp, (d,), 1, g.dtype) if w is None else w,
                 xp.matmul(g, to_mean), x, mean, xp.matmul(t, to_mean), rstd)
    if gx is None:
        return None
    return gx, None if w is None else (xp.matmul(rstd.reshape(1, -1), t)[0], col_sum(xp, g))


WIDE_ROW = 1 << 15


def _row_dot(xp, a, col, out=None):
    """a @ col, (r, d) @ (d, 1): each row's mean (col = 1/d) or weighted mean, as one
    matrix-vector product. BLAS keeps one running float32 sum per row, which drifts over
    very wide rows (the mean of 4·10⁶ values near 1e3 came out 3e-4 off, so x̂ 0.5 off);
    such rows are summed by NumPy instead, pairwise (their elements are contiguous)."""
    if a.shape[-1] < WIDE_ROW or not backend.is_numpy(xp):
        return xp.matmul(a, col, out=out)
    return xp.sum(a * col.reshape(-1), axis=-1, keepdims=True, out=out)


def _mean_vector(xp, d, dtype):
    """A (d, 1) column of 1/d: rows @ it is each row's mean, as one matrix-vector product
    (BLAS), which runs ~4x faster than NumPy's mean over a short last axis. Kept between
    calls (backend.filled): on a GPU each fill is a launch."""
    return backend.filled(xp, (d, 1), 1 / d, dtype)


def layer_norm(input, normalized_shape, weight=None, bias=None, eps=1e-5):
    eps = number_arg("layer_norm", "eps", eps)
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    if not isinstance(input, Tensor):
        raise not_a_tensor("layer_norm", "input", input)
    if not backend.is_floating(input.dtype):
        raise TypeError(f"layer_norm: needs a floating-point input, got dtype {input.dtype}; "
                        f"convert with .float() first")
    k = len(normalized_shape)
    if not k:
        raise ValueError("layer_norm: normalized_shape must name at least one trailing dim, "
                         "got ()")
    if input.shape[input.ndim - k:] != normalized_shape or k > input.ndim:
        raise ValueError(f"layer_norm: normalized_shape {normalized_shape} must equal the "
                         f"trailing dims of the input, whose shape is {input.shape}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is None:
            continue
        if not isinstance(p, Tensor):
            raise not_a_tensor("layer_norm", name, p)
        if p.shape != normalized_shape:
            raise ValueError(f"layer_norm: {name} has shape {p.shape}, expected "
                             f"{normalized_shape}")
        if p.dtype != input.dtype:
            same_float_params("layer_norm", input, **{name: p})
    if weight is None and bias is not None:
        # a bias alone still needs a (constant, unit) scale before it
        weight = Tensor._make(input.backend.xp.ones(normalized_shape, dtype=input.dtype), input.device)
    if math.prod(normalized_shape) == 0:     # nothing to normalise: an empty output (the
        y = input * 1                            # fused op's rows would be reshape(-1, 0))
        y = y if weight is None else y * weight
        return y if bias is None else y + bias
    affine = [p for p in (weight, bias) if p is not None]
    return LayerNorm.apply(input, *affine, dims=tuple(range(input.ndim - k, input.ndim)), eps=eps)
