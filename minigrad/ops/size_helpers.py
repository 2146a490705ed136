"""PyTorch's small shape helpers missing elsewhere: Tensor.sum_to_size, mg.broadcast_shapes
and mg.vander (composed of existing ops, so their gradients are those ops')."""
from minigrad import backend


def sum_to_size(x, *size):
    """x summed over the dims that `size` broadcasts to x's shape (PyTorch's sum_to_size:
    `size` must be expandable to x.shape)."""
    if len(size) == 1 and isinstance(size[0], (tuple, list)):
        size = size[0]
    size = tuple(size)
    if not all(isinstance(n, int) and not isinstance(n, bool) for n in size):
        raise TypeError(f"sum_to_size: size must be ints, got {size!r}")
    lead = x.ndim - len(size)
    if lead < 0 or any(n != 1 and n != m for n, m in zip(size, x.shape[lead:])):
        raise RuntimeError(f"sum_to_size: size {list(size)} is not expandable to size "
                           f"{list(x.shape)} (each of its dims must equal x's, counted from "
                           f"the last, or be 1)")
    dims = tuple(range(lead)) + tuple(lead + i for i, n in enumerate(size)
                                      if n == 1 and x.shape[lead + i] != 1)
    out = x.sum(dims, keepdim=True) if dims else x
    return out.reshape(size) if lead else out


def broadcast_shapes(*shapes):
    """The shape tensors of these shapes broadcast to, as torch.broadcast_shapes (an int is
    a 1-D shape); no tensors made."""
    norm = []
    for i, s in enumerate(shapes):
        s = (s,) if isinstance(s, int) and not isinstance(s, bool) else s
        if not isinstance(s, (tuple, list)) or \
                not all(isinstance(n, int) and not isinstance(n, bool) for n in s):
            raise TypeError(f"broadcast_shapes: argument {i} must be a shape (a tuple of "
                            f"ints, or an int), got {s!r}")
        if any(n < 0 for n in s):
            raise ValueError(f"broadcast_shapes: argument {i}, {tuple(s)}, has a negative "
                             f"length; lengths must be >= 0")
        norm.append(tuple(s))
    out = []
    for k in range(1, max((len(s) for s in norm), default=0) + 1):
        m = 1
        for i, s in enumerate(norm):
            n = s[-k] if k <= len(s) else 1
            if n != 1 and m != 1 and n != m:
                raise RuntimeError(f"broadcast_shapes: a dim of length {n} at {-k} cannot "
                                   f"broadcast with length {m}: argument {i} had {s}; dims "
                                   f"counted from the last must be equal or 1")
            m = n if m == 1 else m
        out.append(m)
    return tuple(reversed(out))


def vander(x, N=None, increasing=False):
    """The Vandermonde matrix of 1-D x: column j is x ** (N - 1 - j) (torch.vander's
    decreasing powers; x ** j with increasing=True; N defaults to len(x)). Integers and bools give int64, as PyTorch."""
    if x.ndim != 1:
        raise RuntimeError(f"vander: x must be a one-dimensional tensor, got shape {x.shape}")
    n = x.shape[0] if N is None else N
    if not isinstance(n, int) or isinstance(n, bool):
        raise TypeError(f"vander: N must be an int or None, got {type(N).__name__}")
    if n < 0:
        raise RuntimeError(f"vander: N must be non-negative, got {N}")
    if not backend.is_floating(x.dtype):
        x = x.to(dtype=backend.int64)
    if n == 0:
        return x.new_zeros((x.shape[0], 0))
    # cumulative products of x, not x ** j: exact for integers, and a gradient at x = 0
    cols = [x.new_ones(x.shape)] + [x] * (n - 1)
    from minigrad.ops.shape import stack
    from minigrad.ops.cumulative import cumprod
    powers = cumprod(stack(cols, 1), 1)
    return powers if increasing else powers.flip(1)
