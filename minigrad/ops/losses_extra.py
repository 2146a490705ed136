"""The last of torch.nn.functional's losses and distances: multilabel_margin_loss,
triplet_margin_with_distance_loss and pdist. Each is composed from differentiable ops, so
gradients of gradients come from those, with PyTorch's arguments (less the deprecated
size_average and reduce), its reductions and its gradient at each kink."""
from minigrad import backend
from minigrad.args import number_arg
from minigrad.ops.elementwise import where, relu, minimum
from minigrad.ops.index import gather, raw_index
from minigrad.ops.loss import check_reduction, _reduce
from minigrad.ops.losses_more import _floating_input
from minigrad.ops.norms import pairwise_distance, p_norm
from minigrad.tensor import Tensor

np = backend.get("cpu").xp          # NumPy: index tables, on the host


def multilabel_margin_loss(input, target, reduction="mean"):
    """Σ_k Σ_{i not a target} max(0, 1 - (x[y_k] - x[i])) / C for each row x of (N, C)
    scores (or one (C,) row), y_k the row's target classes: target has input's shape and
    lists them first, ended by the first -1 (as PyTorch: a class listed twice counts
    twice; the gradient at the hinge is 0)."""
    op = "multilabel_margin_loss"
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
    rows = input.reshape(1, -1) if input.ndim < 2 else input
    t = t.reshape(rows.shape).astype(backend.int64, copy=False)
    xp, c = rows.backend.xp, rows.shape[1]
    if t.size and bool(((t < -1) | (t >= c)).any()):
        raise ValueError(f"{op}: target values must lie in [-1, {c}) (class indices, -1 "
                         f"ending the list), got values from {int(t.min())} to "
                         f"{int(t.max())}")
    listed = xp.cumsum(t == -1, axis=1) == 0                 # (N, K): before the first -1
    labels = xp.where(listed, t, 0)
    is_target = xp.zeros(rows.shape, dtype=bool)
    n_index = xp.arange(rows.shape[0])[:, None]
    is_target[xp.broadcast_to(n_index, labels.shape)[listed], labels[listed]] = True
    own = gather(rows, 1, labels)                             # (N, K): x[y_k]
    hinge = relu(1 - own[:, :, None] + rows[:, None, :])      # (N, K, C)
    counts = listed[:, :, None] & ~is_target[:, None, :]
    loss = where(Tensor._make(counts, rows.device), hinge, 0.0).sum((1, 2)) / c
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
    diff = input[be.from_numpy(i)] - input[be.from_numpy(j)]
    return p_norm(diff, float(p), 1, False, "pdist")
