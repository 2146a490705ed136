"""Spatial transformers (Jaderberg et al. 2015), as torch.nn.functional's affine_grid and
grid_sample: affine_grid maps each output place's normalised coordinates through an affine
matrix θ, grid_sample reads the input at any such grid of places in [-1, 1] (bilinear,
nearest or bicubic in 2-D, trilinear or nearest in 3-D), with PyTorch's padding modes and
align_corners. Both are composed of differentiable ops: a place is unnormalised and folded
into the input (clip for 'border', reflection for 'reflection'), then each of its 2ⁿ
neighbours is picked by indexing (whose gradient adds back into the input) and weighted by
the distances along each dim (whose gradient reaches the grid); bicubic weighs 4×4
neighbours of the unfolded place by Keys' cubic convolution (A = -0.75, as PyTorch), each
neighbour folded in by itself. Gradients of gradients come from those ops."""
import contextlib
import itertools
import math
import warnings

from minigrad import backend
from minigrad.args import int_arg
from minigrad.linspace_rule import linspace_values
from minigrad.ops.elementwise import where
from minigrad.ops.index import GetItem
from minigrad.tensor import Tensor

np = backend.get("cpu").xp          # NumPy: the base grid, on the host

_MODES = ("bilinear", "nearest", "bicubic")
_CUBIC_A = -0.75                    # Keys' cubic convolution parameter, PyTorch's
_PADDING = ("zeros", "border", "reflection")


def _align_corners(align_corners):
    """None means False, with PyTorch's warning that the default changed in 1.3."""
    if align_corners is None:
        warnings.warn("Default grid_sample and affine_grid behavior has changed to "
                      "align_corners=False since 1.3.0. Please specify align_corners=True if "
                      "the old behavior is desired. See the documentation of grid_sample for "
                      "details.", UserWarning, stacklevel=3)
        return False
    return bool(align_corners)


# ---- affine_grid -------------------------------------------------------------------------
def _steps(n, align_corners, dtype):
    """The normalised coordinates of n places: -1 and 1 the centres of the end places
    (align_corners) or their outer edges; a single place is 0. Computed as PyTorch's, in
    theta's dtype (its linspace, then · (n - 1) / n rounded twice): the identity θ then
    puts each place exactly where PyTorch's does, at a pixel's centre or a rounding off it,
    and grid_sample's floor, whose side decides the grid's gradient, falls alike."""
    if n == 1:
        return np.zeros(1, dtype)
    c = linspace_values(np, -1, 1, n, dtype)
    return c if align_corners else c * dtype.type(n - 1) / dtype.type(n)


def affine_grid(theta, size, align_corners=None):
    """The (N, H, W, 2) grid of θ·(x, y, 1) for each output place (x along W, y along H, in
    [-1, 1]), θ (N, 2, 3) and size (N, C, H, W); or (N, D, H, W, 3) from θ (N, 3, 4) and
    size (N, C, D, H, W). Differentiable in θ."""
    op = "affine_grid"
    align_corners = _align_corners(align_corners)
    if not isinstance(theta, Tensor) or not backend.is_floating(theta.dtype):
        raise ValueError(f"{op}: expected theta to have floating point type, but got "
                         f"{getattr(theta, 'dtype', type(theta).__name__)}")
    size = tuple(int_arg(op, "size", s) for s in size)
    if len(size) not in (4, 5):
        raise NotImplementedError(f"{op}: only supports 4D and 5D sizes, for 2D and 3D "
                                  f"affine transforms, respectively. Got size {size}.")
    n = len(size) - 2
    if theta.ndim != 3 or theta.shape[1:] != (n, n + 1):
        raise ValueError(f"{op}: expected a batch of {n}D affine matrices of shape "
                         f"Nx{n}x{n + 1} for size {size}. Got {theta.shape}.")
    if theta.shape[0] != size[0]:
        raise ValueError(f"{op}: theta holds {theta.shape[0]} matrices, but size asks for a "
                         f"batch of {size[0]}")
    if min(size) <= 0:
        raise ValueError(f"{op}: expected non-zero, positive output size. Got {size}")
    spatial = size[2:]
    if align_corners and min(spatial) == 1:
        warnings.warn("Since version 1.3.0, affine_grid behavior has changed for unit-size "
                      "grids when align_corners=True. This is not an intended use case of "
                      "affine_grid. See the documentation of affine_grid for details.",
                      UserWarning, stacklevel=2)
    # (x, y[, z], 1) per place, x the last dim's coordinate
    dtype = np.dtype(theta.dtype)
    axes = np.meshgrid(*[_steps(s, align_corners, dtype) for s in spatial], indexing="ij")
    base = np.stack(list(axes[::-1]) + [np.ones(spatial, dtype)], -1).reshape(1, -1, n + 1)
    base = theta.backend.xp.asarray(base, dtype=theta.dtype)
    # θ·(x, y, 1) as Σ_k base_k·θ[:, :, k] left to right, each product and sum rounded:
    # PyTorch's values, which a BLAS matmul (fusing or reordering) misses by an ulp; near
    # the identity θ an ulp moves a place across a pixel centre, so grid_sample's floor,
    # and with it θ's gradient, changes side
    grid = Tensor._make(base[..., 0:1], theta.device) * theta[:, None, :, 0]
    for k in range(1, n):
        grid = grid + Tensor._make(base[..., k:k + 1], theta.device) * theta[:, None, :, k]
    grid = grid + theta[:, None, :, n]                        # (N, places, n); 1·θ exact
    return grid.reshape((size[0],) + spatial + (n,))


# ---- grid_sample -------------------------------------------------------------------------
def _unnormalise(c, size, align_corners):
    """[-1, 1] to the input's index coordinates: -1 and 1 the centres of the end places
    (align_corners) or their outer edges."""
    if align_corners:
        return (c + 1) * ((size - 1) / 2)
    return ((c + 1) * size - 1) / 2


def _reflect(x, twice_low, twice_high):
    """x folded back into [low, high] by reflection at both ends, as often as needed (the
    gradient's sign flips with each fold)."""
    if twice_low == twice_high:
        return x * 0.0
    low, span = twice_low / 2, (twice_high - twice_low) / 2
    y = (x - low).abs()
    flips = Tensor._make(x.backend.xp.floor(y._data / span), x.device)   # a step: constant
    extra = y - flips * span                                            # fmod(y, span)
    even = Tensor._make(flips._data % 2 == 0, x.device)
    return where(even, extra + low, (span - extra) + low)


def _source(c, size, padding_mode, align_corners):
    """The input coordinate a grid coordinate reads, after padding_mode."""
    return _fold(_unnormalise(c, size, align_corners), size, padding_mode, align_corners)


def _fold(x, size, padding_mode, align_corners):
    """An input coordinate x folded in as padding_mode says."""
    if padding_mode == "zeros":
        return x                         # (a NaN or ±inf one lies outside: pick says so)
    if padding_mode == "reflection":
        x = _reflect(x, 0, 2 * (size - 1)) if align_corners else \
            _reflect(x, -1, 2 * size - 1)
    # a NaN place (an infinite one reflected is NaN too) reads the first element, as
    # PyTorch's, with no gradient
    x = where(Tensor._make(x.backend.xp.isnan(x._data), x.device), 0.0, x)
    return x.clip(0, size - 1)


def _check_grid_sample(input, grid, mode, padding_mode):
    op = "grid_sample"
    if mode not in _MODES:
        raise ValueError(f"{op}: expected mode to be 'bilinear', 'nearest' or 'bicubic', "
                         f"but got: {mode!r}")
    if padding_mode not in _PADDING:
        raise ValueError(f"{op}: expected padding_mode to be 'zeros', 'border', or "
                         f"'reflection', but got: {padding_mode!r}")
    for name, t in (("input", input), ("grid", grid)):
        if not isinstance(t, Tensor) or not backend.is_floating(t.dtype):
            raise TypeError(f"{op}: {name} must be a floating-point Tensor, got "
                            f"{getattr(t, 'dtype', type(t).__name__)}")
    if input.dtype != grid.dtype:
        raise TypeError(f"{op}: input and grid must have one dtype, got {input.dtype} and "
                        f"{grid.dtype}")
    if input.ndim not in (4, 5) or grid.ndim != input.ndim:
        raise ValueError(f"{op}: expected a 4D input (N, C, H, W) with a 4D grid (N, H_out, "
                         f"W_out, 2), or 5D ones (N, C, D, H, W) and (N, D_out, H_out, "
                         f"W_out, 3); got input {input.shape} and grid {grid.shape}")
    n = input.ndim - 2
    if mode == "bicubic" and n != 2:
        raise ValueError(f"{op}: bicubic interpolation only supports 4D input, got input "
                         f"{input.shape}")
    if grid.shape[0] != input.shape[0]:
        raise ValueError(f"{op}: expected grid and input to have same batch size, but got "
                         f"input with sizes {input.shape} and grid with sizes {grid.shape}")
    if grid.shape[-1] != n:
        raise ValueError(f"{op}: expected grid to have size {n} in last dimension, but got "
                         f"grid with sizes {grid.shape}")
    if 0 in input.shape[2:]:
        raise ValueError(f"{op}: expected input to have non-empty spatial dimensions, but "
                         f"input has sizes {input.shape}")


def grid_sample(input, grid, mode="bilinear", padding_mode="zeros", align_corners=None):
    """output[n, c, *place] = input[n, c] read at grid[n, *place] (N, *out, n_dims): (x, y)
    in [-1, 1] along (W, H) for a 4D input, (x, y, z) along (W, H, D) for a 5D one; mode
    'bilinear' (trilinear in 3-D) blends the 2ⁿ neighbours, 'nearest' takes the nearest
    (ties to even, as PyTorch), 'bicubic' (4D only) blends the 4×4 neighbours by cubic
    convolution; padding_mode says what lies outside: 'zeros', 'border'
    (the edge values) or 'reflection'. Gradients to input and grid (zero to the grid for
    'nearest'), as PyTorch's."""
    _check_grid_sample(input, grid, mode, padding_mode)
    align_corners = _align_corners(align_corners)
    xp = input.backend.xp
    quiet = xp.errstate(invalid="ignore", over="ignore") if hasattr(xp, "errstate") else \
        contextlib.nullcontext()          # (a NaN or inf place is read as outside: no warning)
    with quiet:
        return _sample(input, grid, mode, padding_mode, align_corners)


def _sample(input, grid, mode, padding_mode, align_corners):
    """grid_sample's work, its arguments checked."""
    xp, device = input.backend.xp, input.device
    n_dims = input.ndim - 2
    batch, channels, spatial = input.shape[0], input.shape[1], input.shape[2:]
    out_spatial = grid.shape[1:-1]
    places = math.prod(out_spatial)
    g = grid.reshape(batch, 1, places, n_dims)
    # per input dim (D, H, W order), the coordinate: the grid's last entry reads W; bicubic
    # folds each neighbour in, not the place
    fold = "zeros" if mode == "bicubic" else padding_mode
    coords = [_source(g[..., n_dims - 1 - k], spatial[k], fold, align_corners)
              for k in range(n_dims)]
    flat_input = input.reshape(batch, channels, math.prod(spatial))     # (N or C may be 0)
    strides = [math.prod(spatial[k + 1:]) for k in range(n_dims)]
    rows = xp.arange(batch).reshape(batch, 1, 1)
    chans = xp.arange(channels).reshape(1, channels, 1)

    def pick(indices):
        """input at integer places (each (N, 1, P)), 0 outside, as (N, C, P), and where
        the place lies inside."""
        inside = xp.ones(indices[0].shape, dtype=bool)
        flat = 0
        for k, i in enumerate(indices):
            inside &= (i >= 0) & (i < spatial[k])          # (False for NaN)
            i = xp.where(inside, i, 0)                     # no NaN or inf cast to int
            flat = flat + xp.clip(i, 0, spatial[k] - 1).astype(backend.int64) * strides[k]
        values = GetItem.apply(flat_input, index=(rows, chans, flat))
        return values, Tensor._make(inside, device)

    if mode == "nearest":
        indices = [xp.rint(c._data) for c in coords]
        values, inside = pick(indices)
        out = where(inside, values, 0.0)
        if grid.requires_grad:           # no gradient to the grid, but zeros, as PyTorch
            out = out + where(Tensor._make(xp.zeros((), bool), device), grid.sum(), 0.0)
    elif mode == "bicubic":
        floors = [xp.floor(c._data) for c in coords]
        weights = [_cubic_weights(c - Tensor._make(f, device)) for c, f in zip(coords, floors)]
        out = 0
        for (i, wy), (j, wx) in itertools.product(enumerate(weights[0]),
                                                  enumerate(weights[1])):
            taps = [_fold(Tensor._make(f + (k - 1), device), size, padding_mode,
                          align_corners)._data
                    for f, k, size in zip(floors, (i, j), spatial)]
            values, inside = pick(taps)
            # the value masked, not the weight: a NaN or infinite place gives NaN, as
            # PyTorch's (its weights are NaN)
            out = out + where(inside, values, 0.0) * (wy * wx)
    else:
        floors = [xp.floor(c._data) for c in coords]
        fracs = [c - Tensor._make(f, device) for c, f in zip(coords, floors)]
        out = 0
        for corner in itertools.product((0, 1), repeat=n_dims):
            values, inside = pick([f + b for f, b in zip(floors, corner)])
            weight = 1
            for frac, b in zip(fracs, corner):
                weight = weight * (frac if b else 1 - frac)
            out = out + values * where(inside, weight, 0.0)
    return out.reshape((batch, channels) + out_spatial)


def _cubic_weights(t):
    """The weights of the neighbours at -1, 0, 1, 2 of a place t ∈ [0, 1) past the second:
    Keys' kernel at distances 1 + t, t, 1 - t, 2 - t (t a Tensor or a host array)."""
    return (_keys_far(t + 1), _keys_near(t), _keys_near(1 - t), _keys_far(2 - t))


def _keys_near(x, a=_CUBIC_A):
    """Keys' cubic convolution kernel at a distance x within 1: (a+2)x³ - (a+3)x² + 1."""
    return ((a + 2) * x - (a + 3)) * x * x + 1


def _keys_far(x, a=_CUBIC_A):
    """Keys' kernel at a distance x in [1, 2]: ax³ - 5ax² + 8ax - 4a (0 beyond)."""
    return ((a * x - 5 * a) * x + 8 * a) * x - 4 * a
