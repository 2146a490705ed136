"""Dropout: the one op that draws random numbers (from the device's seeded generator), and
the dropout of whole channels and alpha dropout, composed with its masks."""
import warnings

from minigrad import backend
from minigrad.args import not_a_tensor, number_arg
from minigrad.autograd import Function
from minigrad.ops.blocks import contiguous, in_pieces
from minigrad.tensor import Tensor


def _masked(xp, x, keep, scale, out):
    """out = x·keep·scale, in place in out (returned)."""
    xp.multiply(x, keep, out=out)
    out *= scale
    return out


class Dropout(Function):
    needs_values = False                                 # see Function.needs_values
    fresh_grads = True                                   # see Function.fresh_grads
    def forward(self, x, p):                             # y = x ⊙ m / (1-p), m ~ Bernoulli(1-p)
        be = backend.get(self.device)
        self.scale = 1 / (1 - p)
        if be.kernels and str(x.dtype) in be.kernels.DTYPES:     # one GPU kernel
            fused = be.kernels("dropout", x, be.uniform(x.shape), p, self.scale)
            if fused is not None:
                self.keep, y = fused
                return y
        # the mask is kept as booleans (a quarter of a float32 mask's memory); drawn whole, in
        # order, then applied piece by piece (on every core for big arrays: ops/blocks.py)
        self.keep = be.keep_mask(x.shape, p)
        return self._apply(x)
    def backward(self, g): return g * self.const(self.keep.astype(g.dtype) * self.scale)
    def backward_arrays(self, g):
        kernels = backend.get(self.device).kernels
        d = kernels("dropout_grad", g, self.keep, self.scale) if kernels else None
        return (self._apply(g) if d is None else d,)

    def _apply(self, a):                                 # a·keep·scale, a new array
        xp, be = self.xp, backend.get(self.device)
        if not be.cache_block:                           # (a GPU: whole arrays as they are)
            return _masked(xp, a, self.keep, self.scale, xp.empty(a.shape, a.dtype))
        a = contiguous(xp, a)
        out = xp.empty(a.shape, a.dtype)                 # (a is floating: dropout checks)
        in_pieces(be, lambda x, k, o: _masked(xp, x, k, self.scale, o), a, self.keep, out)
        return out


def dropout(x, p=0.5, training=True):
    """Zero each element with probability p and scale the rest by 1/(1-p) (identity when
    not training, so evaluation needs no rescaling)."""
    p = number_arg("dropout", "p", p)  # a one-element tensor too, as PyTorch
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"dropout: probability must be in [0, 1], got {p}")
    if not isinstance(x, Tensor):
        raise not_a_tensor("dropout", "input", x)
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    if not backend.is_floating(x.dtype):
        raise TypeError(f"dropout: needs a floating-point tensor, got {x.dtype}")
    return Dropout.apply(x, p=p)


def channel_dropout(x, p, training, spatial):
    """Dropout of whole channels (F.dropout1d/2d/3d): each channel of each sample of an
    (N, C, *spatial) input (or an unbatched (C, *spatial) one) zeroed with probability p,
    the rest scaled by 1/(1-p). As PyTorch, dropout2d and dropout3d take other dim counts
    with a warning, and then drop along dims 0 and 1 (for a 2D input, single values)."""
    op = f"dropout{spatial}d"
    p = number_arg(op, "p", p)  # a one-element tensor too, as PyTorch
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"{op}: probability must be in [0, 1], got {p}")
    if not isinstance(x, Tensor):
        raise not_a_tensor(op, "input", x)
    # (dropout2d reads a 3D input as (N, C, L), not as an unbatched (C, H, W): PyTorch's)
    unbatched = x.ndim == spatial + 1 and spatial != 2
    if x.ndim != spatial + 2 and not unbatched:
        if spatial == 1 or x.ndim < 2:
            raise ValueError(f"{op}: expected a {spatial + 1}D or {spatial + 2}D input, (C, "
                             f"*spatial) or (N, C, *spatial), got shape {x.shape}")
        warnings.warn(f"{op}: received a {x.ndim}D input; as PyTorch, its values are dropped "
                      f"in groups along the dims after the first two, read as (N, C, ...) "
                      f"(dropout1d is for (N, C, L) inputs, dropout for single values)",
                      UserWarning, stacklevel=4)
    if not training or p == 0.0:
        return x
    if not backend.is_floating(x.dtype):
        raise TypeError(f"{op}: needs a floating-point tensor, got {x.dtype}")
    kept = 1 if unbatched else 2                         # the sample and channel dims
    shape = x.shape[:kept] + (1,) * (x.ndim - kept)
    keep = backend.get(x.device).keep_mask(shape, p)
    scale = 0.0 if p == 1.0 else 1 / (1 - p)
    return x * Tensor._make(keep.astype(x.dtype) * scale, x.device)


# SELU's saturation value -λα: alpha dropout sets dropped values to it
_SELU_FLOOR = -1.0507009873554805 * 1.6732632423543772


def alpha_dropout(x, p=0.5, training=False):
    """Dropout for self-normalising networks (SELU's; Klambauer et al. 2017): each value
    set with probability p to SELU's floor -λα rather than 0, then y = a·x' + b with a, b
    chosen to keep a zero-mean, unit-variance input so: a = ((1-p)(1 + p·(λα)²))^-½,
    b = a·λα·p. The identity when not training, as PyTorch (whose default is training=False)."""
    p = number_arg("alpha_dropout", "p", p)  # a one-element tensor too, as PyTorch
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"alpha_dropout: probability must be in [0, 1], got {p}")
    if not isinstance(x, Tensor):
        raise not_a_tensor("alpha_dropout", "input", x)
    if not training or p == 0.0:
        return x
    if not backend.is_floating(x.dtype):
        raise TypeError(f"alpha_dropout: needs a floating-point tensor, got {x.dtype}")
    if p == 1.0:
        return x * 0.0
    keep = backend.get(x.device).keep_mask(x.shape, p).astype(x.dtype)
    a = ((1 - p) * (1 + p * _SELU_FLOOR ** 2)) ** -0.5
    shift = (1 - keep) * (a * _SELU_FLOOR) - a * _SELU_FLOOR * p   # a·floor where dropped, + b
    return x * Tensor._make(keep * a, x.device) + Tensor._make(shift, x.device)
