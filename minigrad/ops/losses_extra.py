"""The last of torch.nn.functional's losses and distances: multilabel_margin_loss,
triplet_margin_with_distance_loss and pdist. Each is composed from differentiable ops, so
gradients of gradients come from those, with PyTorch's arguments (the deprecated
size_average and reduce too, where PyTorch has them), its reductions and its gradient at
each kink."""
from minigrad import backend
from minigrad.args import number_arg
from minigrad.grad_mode import autocast_float32
from minigrad.ops.elementwise import where, minimum
from minigrad.ops.index import raw_index
from minigrad.ops.loss import check_reduction, _reduce
from minigrad.ops.loss_legacy import legacy_reduction
from minigrad.ops.losses_more import _floating_input
from minigrad.ops.norms import pairwise_distance, p_norm
from minigrad.ops.order import _stable_argsort
from minigrad.tensor import Tensor

np = backend.get("cpu").xp          # NumPy: index tables, on the host


def _hinge_counts(x, t, listed, device):
    """The pairs (listed target y_k, non-target i) above the hinge, x[i] > x[y_k] - 1, of
    each row of scores x (N, C) with its targets t (N, K): coef (N, C) holds for a
    non-target the pairs it is in, for a target class minus the pairs it is in (each of its
    listings counted); total (N,) the pairs; both int64. In O(N·C) memory: a row's
    non-target scores and its targets' hinges sorted together, the non-targets after a
    hinge are above it."""
    be = backend.get(device)
    xp, (n, c) = be.xp, x.shape
    times = xp.zeros(n * c, dtype=backend.int64)             # how often each class is listed
    listings = (xp.arange(n)[:, None] * c + xp.where(listed, t, 0))[listed]
    be.index_add(times, listings, xp.ones(listings.shape, dtype=backend.int64))
    times = times.reshape(n, c)
    is_target = times > 0
    # non-targets' scores; a NaN one is above no hinge (torch's 1 - x[y] + NaN > 0 is false)
    others = xp.where(is_target | xp.isnan(x), -xp.inf, x)
    hinges = xp.where(is_target, x - 1, xp.inf)              # targets' x[y] - 1
    # a stable sort puts a non-target equal to a hinge before it: at the hinge it is in no
    # pair (torch's gradient there is 0)
    order = _stable_argsort(xp, xp.concatenate([others, hinges], 1), 1, False)  # (N, 2C)
    is_other = order < c
    weight = xp.take_along_axis(xp.concatenate([xp.zeros_like(times), times], 1), order, 1)
    hinges_below = xp.cumsum(weight, axis=1)                 # listed targets a score is over
    others_above = xp.flip(xp.cumsum(xp.flip(is_other, 1), axis=1), 1)
    counts = xp.empty((n, 2 * c), dtype=backend.int64)       # back in class order
    counts[xp.arange(n)[:, None], order] = xp.where(is_other, hinges_below, others_above)
    pairs_of_target = times * counts[:, c:]
    coef = xp.where(is_target, -pairs_of_target, counts[:, :c])
    return coef, pairs_of_target.sum(1)


def multilabel_margin_loss(input, target, size_average=None, reduce=None, reduction="mean"):
    """Σ_k Σ_{i not a target} max(0, 1 - (x[y_k] - x[i])) / C for each row x of (N, C)
    scores (or one (C,) row), y_k the row's target classes: target has input's shape and
    lists them first, ended by the first -1 (as PyTorch: a class listed twice counts
    twice; the gradient at the hinge is 0). O(N·C) memory: the pairs are counted by
    sorting, not formed."""
    op = "multilabel_margin_loss"
    if size_average is not None or reduce is not None:
        reduction = legacy_reduction(size_average, reduce, op)
    _floating_input(input, op)
    check_reduction(reduction, op)
    if input.ndim > 2 or (input.ndim and input.shape[-1] == 0):
        raise ValueError(f"{op}: expected a non-empty (C,) vector or (N, C) matrix (N may "
                         f"be 0), got shape {input.shape}")
    t = raw_index(target, input, op, "target")
    if not hasattr(t, "dtype") or t.dtype.kind not in "iu":
        raise TypeError(f"{op}: target must hold integer class indices (int64), got "
                        f"{getattr(t, 'dtype', type(target).__name__)}")
    if tuple(t.shape) != input.shape:
        raise ValueError(f"{op}: inconsistent target size: {tuple(t.shape)} for input of "
                         f"size: {input.shape} (target has input's shape)")
    input = autocast_float32(input)     # (on torch's float32 autocast list)
    rows = input.reshape(1, -1) if input.ndim < 2 else input
    t = t.reshape(rows.shape).astype(backend.int64, copy=False)
    xp, c = rows.backend.xp, rows.shape[1]
    if t.size and bool(((t < -1) | (t >= c)).any()):
        raise ValueError(f"{op}: target values must lie in [-1, {c}) (class indices, -1 "
                         f"ending the list), got values from {int(t.min())} to "
                         f"{int(t.max())}")
    listed = xp.cumsum(t == -1, axis=1) == 0                 # (N, K): before the first -1
    coef, total = _hinge_counts(rows._data, t, listed, rows.device)
    # Σ_k Σ_i (1 - x[y_k] + x[i]) over the pairs above the hinge, as Σ_i coef_i x_i (coef
    # counts each x[i] in, and -x[y_k] out, of its pairs) plus the pairs' count; coef sums
    # to 0 over a row, so x less the row's mean of finite scores (a constant) gives the same
    # sum with less rounding, and a score in no pair (coef 0) adds nothing even if ±inf.
    # In float64: x[i] - mean rounds by |x[i] - mean|·eps, which for spread-out scores
    # (±1000 in float32) is far more than the pairs' sum near the hinge (each pair's
    # 1 - x[y] + x[i] alone, as torch forms it, is exact there)
    wide, const = backend.float64, lambda a: Tensor._make(a, rows.device)  # noqa: E731
    x = rows._data.astype(wide)
    centre = xp.where(xp.isfinite(x), x, 0).mean(axis=1, keepdims=True)
    pairs = where(const(coef != 0), rows.to(dtype=wide) - const(centre), 0.0) * \
        const(coef.astype(wide))
    loss = ((pairs.sum(1) + const(total.astype(wide))) / c).to(dtype=rows.dtype)
    if reduction == "none":
        return loss if input.ndim == 2 else loss.reshape(())
    return _reduce(loss, reduction)


def triplet_margin_with_distance_loss(anchor, positive, negative, *, distance_function=None,
                                      margin=1.0, swap=False, reduction="mean"):
    """max(d(a, p) - d(a, n) + margin, 0) for any distance d (a callable of two tensors,
    default pairwise_distance), as PyTorch; swap takes the smaller of d(a, n) and
    d(p, n). margin > 0, the three inputs of one number of dims."""
    op = "triplet_margin_with_distance_loss"
    if not number_arg(op, "margin", margin) > 0:
        raise ValueError(f"{op}: margin must be greater than 0, got {margin}")
    check_reduction(reduction, op)
    for name, x in (("anchor", anchor), ("positive", positive), ("negative", negative)):
        if not isinstance(x, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(x).__name__}")
    if not anchor.ndim == positive.ndim == negative.ndim:
        raise ValueError(f"{op}: the anchor, positive, and negative tensors are expected to "
                         f"have the same number of dimensions, but got: anchor "
                         f"{anchor.ndim}D, positive {positive.ndim}D, and negative "
                         f"{negative.ndim}D inputs")
    if distance_function is None:
        distance_function = pairwise_distance
    elif not callable(distance_function):
        raise TypeError(f"{op}: distance_function must be callable (two tensors -> their "
                        f"distances) or None, got {type(distance_function).__name__}")
    d_pos = distance_function(anchor, positive)
    d_neg = distance_function(anchor, negative)
    if swap:
        d_neg = minimum(d_neg, distance_function(positive, negative))
    return _reduce((margin + d_pos - d_neg).clip(min=0), reduction)


def pdist(input, p=2):
    """The p-norm distance between every pair of rows of an (N, M) input: the N(N-1)/2
    entries above the diagonal of cdist(input, input), row by row, as torch's pdist
    (gradient 0 where two rows are equal)."""
    if not isinstance(input, Tensor) or input.ndim != 2:
        raise ValueError(f"pdist: only supports 2D tensors (N, M), got "
                         f"{getattr(input, 'shape', type(input).__name__)}")
    if not backend.is_floating(input.dtype):
        raise TypeError(f"pdist: only supports floating-point dtypes, got {input.dtype}")
    p = number_arg("pdist", "p", p)
    if not p >= 0:
        raise ValueError(f"pdist: only supports non-negative p values, got {p}")
    i, j = np.triu_indices(input.shape[0], 1)
    be = backend.get(input.device)
    input = autocast_float32(input)     # (on torch's float32 autocast list)
    diff = input[be.from_numpy(i)] - input[be.from_numpy(j)]
    return p_norm(diff, float(p), 1, False, "pdist")
