"""cross_entropy against targets of class probabilities (PyTorch's since 1.10: soft labels,
distillation, mixup), composed of differentiable ops: its gradients in the logits, the
target and the class weight, and gradients of gradients, come from those ops. The fused op
in loss.py stays the path of class-index targets."""
from minigrad import backend
from minigrad.tensor import Tensor
from minigrad.ops.promotion import lift
from minigrad.ops.softmax import log_softmax


def is_probabilities(shape, target):
    """Whether target is one of class probabilities for an input (logits) of this shape:
    it has the same shape (PyTorch's rule; a class-index target has one dim less)."""
    if isinstance(target, list):
        target = backend.to_host(target)
    return len(shape) > 0 and tuple(getattr(target, "shape", ())) == tuple(shape)


def probability_cross_entropy(input, target, weight, ignore_index, reduction, eps):
    """loss = -Σ_c w_c·q_c·log softmax(input)_c over the class dim (dim 1, or 0 for an
    unbatched (C,) input), q = (1-ε)·target + ε/C, as PyTorch. 'mean' divides by the number
    of losses (N·d1···), not by the weights (unlike class-index targets), as PyTorch. The
    result has the dtypes' promoted one; a float16 loss is computed in float32."""
    op = "cross_entropy"
    target = lift(target, input)
    if input.dtype.kind != "f":
        raise TypeError(f"{op}: the input must be floating-point, got {input.dtype}")
    if target.dtype.kind != "f":
        raise TypeError(f"{op}: a target of the input's shape {input.shape} holds class "
                        f"probabilities and must be floating-point, got {target.dtype}; give "
                        f"class indices of shape {_index_shape(input)} instead, or .float()")
    if ignore_index >= 0:          # a negative one can name no class: PyTorch lets it by
        raise ValueError(f"{op}: ignore_index={ignore_index} is not supported with targets "
                         f"of class probabilities (as PyTorch); leave it at -100")
    cdim = 1 if input.ndim > 1 else 0
    c = input.shape[cdim]
    dtype = backend.promote_float(input.dtype, target.dtype)
    if weight is not None:
        if not isinstance(weight, Tensor) or weight.shape != (c,) \
                or weight.dtype.kind != "f" or weight.device != input.device:
            got = (f"shape {weight.shape}, dtype {weight.dtype}, device {weight.device!r}"
                   if isinstance(weight, Tensor) else type(weight).__name__)
            raise TypeError(f"{op}: weight must be a floating tensor of shape ({c},) (one "
                            f"per class) on the input's device {input.device!r}, got {got}")
        dtype = backend.promote_float(dtype, weight.dtype)
        # (C,) along the class dim: (C, 1, ..., 1) against (N, C, d1, ...)
        weight = weight.reshape(c, *[1] * (input.ndim - 2)) if input.ndim > 2 else weight
    inner = backend.float32 if dtype == backend.float16 else dtype   # as softmax's
    q = target.to(dtype=inner)
    if eps:
        q = q * (1 - eps) + eps / c
    if weight is not None:
        q = q * weight.to(dtype=inner)
    loss = -(log_softmax(input.to(dtype=inner), cdim) * q).sum(cdim)
    if reduction != "none":
        loss = loss.sum() if reduction == "sum" else loss.mean()
    return loss.to(dtype=dtype)


def _index_shape(input):
    return () if input.ndim == 1 else (input.shape[0], *input.shape[2:])
