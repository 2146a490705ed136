"""Fused softmax and log-softmax: one op each, with the hand-derived backward (faster and
more stable than composing exp/sum/div, and what real frameworks do)."""
import warnings

from minigrad import backend
from minigrad.args import cast_to
from minigrad.autograd import Function
from minigrad.grad_mode import _state, autocast_float32, autocast_off
from minigrad.ops.reduce import accurate_sum, normalize_dim
from minigrad.ops.rows import row_max, row_sum


def stable_softmax(xp, x, axis, out=None, into=None, kernels=None):
    """softmax along `axis`, shifted by the max for stability. A row that is all -inf (every
    position masked) gives zeros, not NaN. With out=x it works in x's memory (for callers
    that own x); otherwise one new array and no other full-size temporaries. `into`, if
    given, receives the result instead of `out`, which is then only scratch. `kernels`
    (a GPU backend's, backend_kernels.py): the same in four launches instead of nine."""
    last = axis in (-1, x.ndim - 1)                     # rows.py: the fast row reductions
    if kernels and last:
        e = kernels("softmax_exp", x, row_max(xp, x), float(backend.value_range(x.dtype)[1]),
                    xp.empty_like(x) if out is None else out)
        if e is not None:                                # (x may be gone: e took its place)
            den, target = row_sum(xp, e), e if into is None else into
            p = kernels("softmax_div", e, den, target)
            return p if p is not None else xp.divide(e, xp.where(den == 0, 1, den), out=target)
    m = row_max(xp, x) if last else x.max(axis=axis, keepdims=True)
    m = xp.where(m == -xp.inf, 0, m)        # all -inf: zeros; a +inf or NaN: NaN, as PyTorch
    e = xp.subtract(x, m, out=xp.empty_like(x) if out is None else out)
    xp.exp(e, out=e)
    den = row_sum(xp, e) if last else accurate_sum(xp, e, axis, keepdims=True)
    return xp.divide(e, xp.where(den == 0, 1, den), out=e if into is None else into)


def log_softmax_array(xp, x, axis):
    """x - log Σ eˣ along `axis`, shifted by the max so exp cannot overflow (softmax.py's
    LogSoftmax and loss.py's CrossEntropy share it)."""
    m = x.max(axis=axis, keepdims=True)
    z = x - xp.where(m == -xp.inf, 0, m)    # (as stable_softmax)
    return z - xp.log(accurate_sum(xp, xp.exp(z), axis, keepdims=True))


class Softmax(Function):
    reads_inputs = False                                 # see Function.reads_inputs
    fresh_grads = True                                   # see Function.fresh_grads
    def forward(self, x, dim):                           # yᵢ = eˣⁱ / Σⱼ eˣʲ
        self.dim = dim
        return stable_softmax(self.xp, x, dim, kernels=backend.get(self.device).kernels)
    def backward(self, g):                               # dx = y ⊙ (g - Σ g⊙y)
        y = self.output()
        return y * (g - (g * y).sum(self.dim, keepdim=True))

    def backward_arrays(self, g):
        y = self.output()._data
        d = g * y
        dot = row_sum(self.xp, d) if self.dim == y.ndim - 1 else \
            accurate_sum(self.xp, d, self.dim, keepdims=True)
        d -= y * dot                                     # y⊙g - y⊙Σ(g⊙y)
        return (d,)


class LogSoftmax(Function):
    reads_inputs = False                                 # see Function.reads_inputs
    fresh_grads = True                                   # see Function.fresh_grads
    def forward(self, x, dim):                           # yᵢ = xᵢ - log Σⱼ eˣʲ
        self.dim = dim
        return log_softmax_array(self.xp, x, dim)
    def backward(self, g):                               # dx = g - softmax(x) Σ g
        return g - self.output().exp() * g.sum(self.dim, keepdim=True)

    def backward_arrays(self, g):
        return (g - self.xp.exp(self.output()._data) * accurate_sum(self.xp, g, self.dim,
                                                                    keepdims=True),)


def softmax(input, dim=None, *, dtype=None):
    """Softmax along dim; `dtype` casts x first (as PyTorch: float16 logits softmaxed in
    float32 with dtype=mg.float32)."""
    return in_dtype(Softmax, input, implicit_dim(input, dim, "softmax"), dtype, "softmax")


def log_softmax(input, dim=None, *, dtype=None):
    return in_dtype(LogSoftmax, input, implicit_dim(input, dim, "log_softmax"), dtype,
                    "log_softmax")


def in_dtype(op, x, dim, dtype, name):
    """along_dim of x converted to dtype= first (None: x as it is). A dtype asked for wins
    over autocast's float32 list, as torch's: softmax(x, dim, dtype=mg.float16) is float16."""
    if dtype is None:
        return along_dim(op, x, dim, name)
    if _state.autocast is None:
        return along_dim(op, cast_to(x, dtype), dim, name)
    return autocast_off(along_dim, op, cast_to(x, dtype), dim, name)


def implicit_dim(x, dim, name):
    """dim, or for None PyTorch's deprecated implicit choice, with its warning: dim 0 for
    a 0-, 1- or 3-D input (an unbatched image's channels), else dim 1."""
    if dim is not None:
        return dim
    dim = 0 if x.ndim in (0, 1, 3) else 1
    warnings.warn(f"Implicit dimension choice for {name} has been deprecated (PyTorch's "
                  f"rule picks dim={dim} here). Give dim=X.", UserWarning, stacklevel=3)
    return dim


def along_dim(op, x, dim, name):
    """op (Softmax or LogSoftmax) along one given dim: the functions' work once their dim
    is settled, and the Tensor methods' (which make no implicit choice: their dim defaults
    to -1, where PyTorch's methods require one)."""
    dim = normalize_dim(dim, x.ndim, name)
    x = autocast_float32(x)
    if not backend.is_floating(x.dtype):
        raise TypeError(f"{name}: needs a floating-point tensor, got dtype {x.dtype}; "
                        f"convert with .float() first")
    if x.numel() == 0:  # nothing to normalise: an empty result, as PyTorch
        return x.clone()
    if x.dtype == backend.float16:      # float32 inside, as PyTorch: in float16 each weight
        # is 2⁻¹¹·|x - max| off (5e-3 relative for logits of a few units), and so its gradient
        return op.apply(x.to(dtype=backend.float32), dim=dim).to(dtype=x.dtype)
    return op.apply(x, dim=dim)
