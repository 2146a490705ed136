"""The inverse of max pooling, as torch.nn.functional's max_unpool1d/2d/3d: each pooled value
written back at the place its max_pool found it (the flat index within its plane that
return_indices gave), zeros elsewhere; and the *_with_indices spellings of the max pools.
Unpooling is one op, MaxUnpool, whose gradient reads g at those places (indexing, whose own
gradient is the scatter back: gradients of gradients work)."""
import math

from minigrad import backend
from minigrad.autograd import Function
from minigrad.ops import pool, pool_more
from minigrad.ops.index import GetItem
from minigrad.tensor import Tensor


class MaxUnpool(Function):
    """zeros(shape) with x written at index (a place written twice keeps the last, as
    PyTorch's CPU loop); its gradient is g read at index, for an overwritten input too
    (as PyTorch's: there it is not the derivative, which is 0)."""
    needs_values = False                                 # see Function.needs_values

    def forward(self, x, index, shape):
        self.index = index
        out = self.xp.zeros(shape, dtype=x.dtype)
        out[index] = x
        return out

    def backward(self, g):
        return (GetItem.apply(g, index=self.index),)


def _output_size(op, n, spatial, kernel, stride, padding, output_size):
    """PyTorch's unpooled size: (L - 1)·s - 2p + k per dim, or output_size (n sizes, or
    n + 2 with the batch and channel dims first) within a stride of that."""
    default = tuple((L - 1) * s - 2 * p + k for L, s, p, k in
                    zip(spatial, stride, padding, kernel))
    if output_size is None:
        return default
    try:
        sizes = list(output_size)
    except TypeError:
        raise TypeError(f"{op}: output_size must be a sequence of {n} or {n + 2} sizes "
                        f"(e.g. the pooled input's .shape), got {output_size!r}") from None
    if len(sizes) == n + 2:
        sizes = sizes[2:]
    if len(sizes) != n:
        raise ValueError(f"{op}: output_size should be a sequence containing {n} or {n + 2} "
                         f"elements, but it has a length of '{len(sizes)}'")
    for d, (size, want, s) in enumerate(zip(sizes, default, stride)):
        if not backend.is_integer(size) or not want - s < size < want + s:
            raise ValueError(f"{op}: invalid output_size {tuple(output_size)} (dim {d} must "
                             f"be between {want - s} and {want + s}, exclusive)")
    return tuple(int(size) for size in sizes)


def _max_unpool(n, input, indices, kernel_size, stride, padding, output_size):
    op = f"max_unpool{n}d"
    x, unbatched = pool._check_input(op, input, n)
    if not isinstance(indices, Tensor) or indices.dtype != backend.int64:
        got = indices.dtype if isinstance(indices, Tensor) else type(indices).__name__
        raise TypeError(f"{op}: indices must be an int64 tensor (max_pool's return_indices), "
                        f"got {got}")
    if indices.shape != input.shape:
        raise ValueError(f"{op}: expected indices of the input's shape {input.shape}, got "
                         f"{indices.shape}")
    kernel = pool._ints(op, "kernel_size", kernel_size, n, 1)
    stride = kernel if stride is None or stride == [] or stride == () else \
        pool._ints(op, "stride", stride, n, 1)
    padding = pool._ints(op, "padding", padding, n, 0)
    out = _output_size(op, n, x.shape[2:], kernel, stride, padding, output_size)
    xp, planes, plane = x.backend.xp, x.shape[0] * x.shape[1], math.prod(out)
    # explicit sizes: -1 cannot be inferred for an empty batch (N = 0)
    flat = indices._data.reshape(planes, math.prod(x.shape[2:]))
    bad = (flat < 0) | (flat >= plane)
    if flat.size and bool(bad.any()):
        raise IndexError(f"{op}: found an invalid max index: {int(flat[bad][0])} (output "
                         f"volumes are of size {'x'.join(map(str, out))})")
    index = (xp.arange(planes)[:, None], flat)
    y = MaxUnpool.apply(x.reshape(planes, flat.shape[1]), index=index, shape=(planes, plane))
    y = y.reshape(x.shape[:2] + out)
    return y[0] if unbatched else y


def max_unpool1d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_pool1d undone: (N, C, L_out) (or (C, L_out)) with input's values at `indices`
    (max_pool1d's, with the same kernel_size, stride and padding), zeros elsewhere."""
    return _max_unpool(1, input, indices, kernel_size, stride, padding, output_size)


def max_unpool2d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_unpool1d over the last two dims."""
    return _max_unpool(2, input, indices, kernel_size, stride, padding, output_size)


def max_unpool3d(input, indices, kernel_size, stride=None, padding=0, output_size=None):
    """max_unpool1d over the last three dims."""
    return _max_unpool(3, input, indices, kernel_size, stride, padding, output_size)


# ---- PyTorch's *_with_indices: the max pools that always return (values, indices) -------
def max_pool1d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return pool.max_pool1d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool2d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return pool.max_pool2d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def max_pool3d_with_indices(input, kernel_size, stride=None, padding=0, dilation=1,
                            ceil_mode=False, return_indices=False):
    return pool.max_pool3d(input, kernel_size, stride, padding, dilation, ceil_mode, True)


def adaptive_max_pool1d_with_indices(input, output_size, return_indices=False):
    return pool_more.adaptive_max_pool1d(input, output_size, True)


def adaptive_max_pool2d_with_indices(input, output_size, return_indices=False):
    return pool_more.adaptive_max_pool2d(input, output_size, True)


def adaptive_max_pool3d_with_indices(input, output_size, return_indices=False):
    return pool_more.adaptive_max_pool3d(input, output_size, True)
