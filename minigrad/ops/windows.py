"""Tensor.unfold(dimension, size, step): the windows of `size` elements, `step` apart, along
one dim, as a new last dim (PyTorch's Tensor.unfold; nn.Unfold is ops/conv.py's).

PyTorch returns a view. Here windows that do not overlap (step >= size) are a view too:
strided memory of the input, written through as any view (ops/inplace_views.py). Windows
that overlap (step < size) are a copy, deliberately: one memory location would be several
elements, which minigrad's writes cannot record (PyTorch lets them land in memory order), so
a write into them does not reach the input. Either way the gradient of the input sums the
windows' gradients where they overlap."""
from minigrad.autograd import Function
from minigrad.ops.reduce import normalize_dim


def _windows(a, xp, d, size, step, n):
    """The strided view of array a with dim d cut into n windows of `size`, `step` apart."""
    st = a.strides
    return xp.lib.stride_tricks.as_strided(
        a, shape=a.shape[:d] + (n,) + a.shape[d + 1:] + (size,),
        strides=st[:d] + (st[d] * step,) + st[d + 1:] + (st[d],))


class Unfold(Function):
    """out[..., i, ..., k] = x[..., i * step + k, ...]. Backward: UnfoldBackward."""
    needs_values = False                        # linear: reads shapes only

    def forward(self, x, dim, size, step, n):
        self.shape, self.params = x.shape, (dim, size, step, n)
        out = _windows(x, self.xp, dim, size, step, n)
        return out if step >= size else out.copy()

    def backward(self, g):
        return UnfoldBackward.apply(g, shape=self.shape, params=self.params)


class UnfoldBackward(Function):
    """The windows g (Unfold's output shape) added back into an x-shaped array: where windows
    overlap, their gradients sum. Linear; its gradient is Unfold of the upstream."""
    needs_values = False

    def forward(self, g, shape, params):
        dim, size, step, n = self.params = params
        out = self.xp.zeros(shape, g.dtype)
        if n:
            win = _windows(out, self.xp, dim, size, step, n)
            for k in range(size):               # window offset k: distinct places in out
                win[..., k] += g[..., k]
        return out

    def backward(self, gg):
        dim, size, step, n = self.params
        return Unfold.apply(gg, dim=dim, size=size, step=step, n=n)


def unfold(x, dimension, size, step):
    """Windows of `size` along `dimension`, `step` apart, as a new last dim: shape x.shape
    with dim `dimension` (n) -> (n - size) // step + 1, plus (size,). A 0-d x is one element."""
    op = "unfold"
    for name, v in (("dimension", dimension), ("size", size), ("step", step)):
        if not isinstance(v, int) or isinstance(v, bool):
            raise TypeError(f"{op}: {name} must be an int, got {type(v).__name__}")
    if x.ndim == 0:
        if dimension not in (0, -1):
            raise IndexError(f"{op}: dimension out of range (expected to be in range of "
                             f"[-1, 0], but got {dimension})")
        if size > 1:
            raise RuntimeError(f"{op}: maximum size for tensor at dimension 0 is 1 but size "
                               f"is {size}")
        if size < 0 or step <= 0:
            unfold(x.reshape(1), 0, size, step)     # its error
        return x.reshape(1)[:size]
    d = normalize_dim(dimension, x.ndim, op)
    if size < 0:
        raise RuntimeError(f"{op}: size is {size} but must be >= 0")
    if step <= 0:
        raise RuntimeError(f"{op}: step is {step} but must be > 0")
    if size > x.shape[d]:
        raise RuntimeError(f"{op}: maximum size for tensor at dimension {d} is "
                           f"{x.shape[d]} but size is {size}")
    n = (x.shape[d] - size) // step + 1
    out = Unfold.apply(x, dim=d, size=size, step=step, n=n)
    if step >= size and n and size:             # a view (as_strided's base is not x's array)
        out._version_counter = x._version_counter
    return out
