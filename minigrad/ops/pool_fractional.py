"""Fractional max pooling (Graham, 2014), as torch.nn.functional's fractional_max_pool2d and
fractional_max_pool3d: max pools whose output size is any size up to the input's, not the
input's over a stride. Each (sample, channel) plane draws one number u ∈ [0, 1) per spatial
dim (or takes them from `_random_samples`, (N, C, dims)), which places its windows of
kernel_size along that dim: with α = (L - k)/(out - 1), window i starts at
⌊(i + u)·α⌋ - ⌊u·α⌋, and the last at L - k, so the windows cover the input with steps
of ⌊α⌋ or ⌈α⌉ in a pseudo-random order. As pool.py's max pools, each window's first maximum
(in row-major order; a NaN wins, the last NaN) is picked by indexing, whose gradient
scatters g back to it (and is twice differentiable); the index, flat in its plane, is
returned with return_indices."""
import math

from minigrad import backend, creation
from minigrad.ops.pool import _ints, _check_input, _result
from minigrad.tensor import Tensor

_NAMES = {2: ("height", "width"), 3: ("time", "height", "width")}


def _output_sizes(op, x, n, kernel, output_size, output_ratio):
    """The output's spatial sizes: output_size (an int or n of them), or each input size
    times output_ratio (a number or n of them), rounded down, as PyTorch's."""
    if output_size is None and output_ratio is None:
        raise ValueError(f"{op} requires specifying either an output_size or an "
                         f"output_ratio")
    spatial = x.shape[2:]
    if output_size is None:
        ratios = tuple(output_ratio) if isinstance(output_ratio, (tuple, list)) else \
            (output_ratio,)
        if len(ratios) not in (1, n) or not all(backend.is_scalar(r) and
                                                not isinstance(r, bool) for r in ratios):
            raise ValueError(f"{op} requires output_ratio to either be a single number or a "
                             f"tuple of {n}, got {output_ratio!r}")
        ratios = ratios * (n if len(ratios) == 1 else 1)
        output_size = tuple(int(L * r) for L, r in zip(spatial, ratios))
    sizes = _ints(op, "output_size", output_size, n, 0)
    # the windows must fit: out + k - 1 <= L; PyTorch's 3-d pool asks for < L
    reach = 0 if n == 2 else 1
    for name, L, k, out in zip(_NAMES[n], spatial, kernel, sizes):
        if out + k - 1 + reach > L:
            raise ValueError(f"{op}: pool {name} {k} too large relative to input {name} {L} "
                             f"(output_size {out} + kernel_size {k} - 1 must be "
                             f"{'at most' if n == 2 else 'less than'} {L})")
    return sizes


def _samples(op, x, n, samples):
    """The (N, C, n) samples u, drawn from minigrad's generator where not given."""
    if samples is None:
        return creation.rand(x.shape[0], x.shape[1], n, dtype=x.dtype, device=x.device)._data
    want = f"(at least {x.shape[0]}, {x.shape[1]}, {n})"
    if not isinstance(samples, Tensor):         # (a NumPy array's .data is a memoryview)
        raise TypeError(f"{op}: _random_samples must be a Tensor of shape {want}, got "
                        f"{type(samples).__module__}.{type(samples).__qualname__}; wrap it with "
                        f"mg.tensor(...)")
    if samples.dtype != x.dtype:
        raise TypeError(f"{op}: expected _random_samples to have the input's dtype "
                        f"{x.dtype}, got {samples.dtype}")
    if samples.ndim != 3 or samples.shape[0] < x.shape[0] or samples.shape[1:] != \
            (x.shape[1], n):
        raise ValueError(f"{op}: _random_samples must have shape {want} for an input of "
                         f"shape {x.shape}, got {tuple(samples.shape)}")
    if samples.device != x.device:
        raise ValueError(f"{op}: _random_samples is on {samples.device}, the input on "
                         f"{x.device}")
    u = samples._data[:x.shape[0]]
    if not bool(((u >= 0) & (u < 1)).all()):    # (any other u may reach past the input)
        raise ValueError(f"{op}: _random_samples must lie in [0, 1)")
    return u


def _starts(xp, u, length, out, k):
    """Window starts (N, C, out) along a dim of `length` for samples u (N, C): ⌊(i+u)·α⌋ -
    ⌊u·α⌋, α = (length - k)/(out - 1), the last at length - k; in u's dtype, as PyTorch's
    (so a product within rounding of an integer lands on its side)."""
    starts = xp.full(u.shape + (out,), length - k, dtype=backend.int64)
    if out > 1:
        alpha = xp.asarray(length - k, dtype=u.dtype) / xp.asarray(out - 1, dtype=u.dtype)
        i = xp.arange(out - 1).astype(u.dtype)
        u = u[..., None]
        starts[..., :-1] = ((i + u) * alpha).astype(backend.int64) - \
            (u * alpha).astype(backend.int64)
    return starts


def _fractional_max_pool(n, input, kernel_size, output_size, output_ratio, return_indices,
                         _random_samples):
    op = f"fractional_max_pool{n}d"
    x, unbatched = _check_input(op, input, n)
    if not backend.is_floating(x.dtype):
        raise TypeError(f"{op}: needs a floating-point input, got dtype {x.dtype}")
    kernel = _ints(op, "kernel_size", kernel_size, n, 1)
    sizes = _output_sizes(op, x, n, kernel, output_size, output_ratio)
    u = _samples(op, x, n, _random_samples)
    xp, spatial = x.backend.xp, x.shape[2:]
    # per dim, the input places each (output, kernel) place reads, (N, C, out, k), as flat
    # offsets in the plane broadcast to (N, C, *out, *kernel). PyTorch's samples run along
    # (W, H) in 2-D but (T, H, W) in 3-D.
    order = (1, 0) if n == 2 else (0, 1, 2)
    position = 0
    for d, (L, out, k) in enumerate(zip(spatial, sizes, kernel)):
        table = _starts(xp, u[..., order[d]], L, out, k)[..., None] + xp.arange(k)
        shape = [1] * n * 2
        shape[d], shape[n + d] = out, k
        plane = math.prod(spatial[d + 1:])
        position = position + table.reshape(table.shape[:2] + tuple(shape)) * plane
    lead, places = x.shape[:2] + sizes, math.prod(kernel)
    position = xp.broadcast_to(position, lead + kernel).reshape(lead + (places,))
    flat = x._data.reshape(x.shape[:2] + (math.prod(spatial),))
    windows = xp.take_along_axis(flat, position.reshape(x.shape[:2] + (
        math.prod(sizes) * places,)), axis=-1)
    windows = windows.reshape(position.shape)
    # each window's first maximum, or its last NaN (PyTorch's running maximum, which a
    # NaN always takes over); a window of -inf keeps its first place
    best = xp.argmax(windows, axis=-1)
    if places > 1:
        nan = xp.isnan(windows)
        last_nan = windows.shape[-1] - 1 - xp.argmax(nan[..., ::-1], axis=-1)
        best = xp.where(nan.any(axis=-1), last_nan, best)
    picked = xp.take_along_axis(position, best[..., None], axis=-1)[..., 0]
    return _result(x, picked.astype(backend.int64), n, unbatched, return_indices)


def fractional_max_pool2d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """The maximum of each of output_size (or input size × output_ratio) pseudo-randomly
    placed kernel_size windows over the last two dims; _random_samples (N, C, 2) places
    them (drawn from minigrad's generator where not given)."""
    return _fractional_max_pool(2, input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples)


def fractional_max_pool3d(input, kernel_size, output_size=None, output_ratio=None,
                          return_indices=False, _random_samples=None):
    """fractional_max_pool2d over the last three dims; _random_samples (N, C, 3)."""
    return _fractional_max_pool(3, input, kernel_size, output_size, output_ratio,
                                return_indices, _random_samples)


# PyTorch's *_with_indices spellings: (values, indices) always
def fractional_max_pool2d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return fractional_max_pool2d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)


def fractional_max_pool3d_with_indices(input, kernel_size, output_size=None, output_ratio=None,
                                       return_indices=False, _random_samples=None):
    return fractional_max_pool3d(input, kernel_size, output_size, output_ratio, True,
                                 _random_samples)
