"""Fused layer normalisation (article 2.2.5.4): normalise over the trailing dims with the
biased variance and eps inside the square root, as PyTorch, then scale and shift."""
from minigrad.autograd import Function, is_grad_enabled
from minigrad.tensor import Tensor


class LayerNorm(Function):
    def forward(self, x, *affine, dims, eps):            # y = (x - μ)/√(σ² + ε) · w + b
        xp = self.xp
        self.dims, self.eps = dims, eps
        xc = xp.subtract(x, x.mean(axis=dims, keepdims=True), out=xp.empty_like(x))
        var = xp.square(xc).mean(axis=dims, keepdims=True)
        self.rstd = 1 / xp.sqrt(var + eps)
        xc *= self.rstd                                  # x̂, in place
        self.xhat = xc
        if not affine:
            return xc.copy()                             # x̂ is kept for backward
        y = xc * affine[0]
        if len(affine) == 2:
            y += affine[1]
        return y

    def backward(self, g):
        x, *affine = self.inputs
        if is_grad_enabled():                            # double backward: rebuild as a graph
            xc = x - x.mean(self.dims, keepdim=True)
            rstd = ((xc * xc).mean(self.dims, keepdim=True) + self.eps) ** -0.5
            xhat = xc * rstd
        else:
            xhat, rstd = self.const(self.xhat), self.const(self.rstd)
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
        xp, xhat, dims = self.xp, self.xhat, self.dims
        gx = g * affine[0].data if affine else g.copy()  # ĝ, then dx in place
        gxhat_xhat = xp.multiply(gx, xhat, out=xp.empty_like(gx))
        b = gxhat_xhat.mean(axis=dims, keepdims=True)
        gx -= gx.mean(axis=dims, keepdims=True)
        gx -= xp.multiply(xhat, b, out=gxhat_xhat)
        gx *= self.rstd
        if not affine:
            return (gx,)
        lead = tuple(range(g.ndim - len(dims)))          # sum over the batch dims here
        gw = xp.multiply(g, xhat, out=gxhat_xhat).sum(axis=lead)
        return (gx, gw) if len(affine) == 1 else (gx, gw, g.sum(axis=lead))


def layer_norm(x, normalized_shape, weight=None, bias=None, eps=1e-5):
    if isinstance(normalized_shape, int):
        normalized_shape = (normalized_shape,)
    normalized_shape = tuple(normalized_shape)
    k = len(normalized_shape)
    if x.shape[x.ndim - k:] != normalized_shape or k > x.ndim:
        raise ValueError(f"layer_norm: normalized_shape {normalized_shape} must equal the "
                         f"trailing dims of the input, whose shape is {x.shape}")
    for name, p in (("weight", weight), ("bias", bias)):
        if p is not None and p.shape != normalized_shape:
            raise ValueError(f"layer_norm: {name} has shape {p.shape}, expected "
                             f"{normalized_shape}")
    if weight is None and bias is not None:
        # a bias alone still needs a (constant, unit) scale before it
        weight = Tensor._make(x.backend.xp.ones(normalized_shape, dtype=x.dtype), x.device)
    affine = [p for p in (weight, bias) if p is not None]
    return LayerNorm.apply(x, *affine, dims=tuple(range(x.ndim - k, x.ndim)), eps=eps)
