"""Dropout: the one op that draws random numbers (from the device's seeded generator)."""
from minigrad import backend
from minigrad.args import number_arg
from minigrad.autograd import Function
from minigrad.ops.blocks import contiguous, in_pieces


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
    if not 0.0 <= number_arg("dropout", "p", p) <= 1.0:
        raise ValueError(f"dropout: probability must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    if not backend.is_floating(x.dtype):
        raise TypeError(f"dropout: needs a floating-point tensor, got {x.dtype}")
    return Dropout.apply(x, p=p)
