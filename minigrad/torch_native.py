"""torch's top-level ATen spellings of layers and norms, with ATen's signatures and
tuple returns: native_layer_norm / native_batch_norm / native_group_norm return the
output with the mean and the reciprocal standard deviation they normalised with,
native_dropout the output and its keep mask, convolution dispatches to conv or
conv_transpose by `transposed`, and constant_pad_nd, norm_except_dim, frobenius_norm and
nuclear_norm map onto F.pad and the linalg norms. The outputs are F's (the same fast
paths and gradients); the statistics are computed beside them.

Left out: torch.native_norm, which torch runs on sparse tensors only."""
from minigrad import functional as F
from minigrad import linalg
from minigrad.grad_mode import no_grad
from minigrad.tensor import Tensor


def _tensor(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"mg.{name}: expected a Tensor first, got {type(input).__name__}")
    return input


def _mean_rstd(x, dims, eps):
    """x's mean and 1/sqrt(biased variance + eps) over dims, kept."""
    mean = x.mean(dims, keepdim=True)
    var = ((x - mean) ** 2).mean(dims, keepdim=True)
    return mean, (var + eps).rsqrt()


def native_layer_norm(input, normalized_shape, weight, bias, eps):
    """(F.layer_norm(...), mean, rstd), mean and rstd of shape input.shape[:-k] + (1,)*k
    for k normalised dims (not differentiable, as torch's)."""
    _tensor("native_layer_norm", input)
    shape = (normalized_shape,) if isinstance(normalized_shape, int) else tuple(normalized_shape)
    out = F.layer_norm(input, shape, weight, bias, eps)
    with no_grad():
        mean, rstd = _mean_rstd(input, tuple(range(input.ndim - len(shape), input.ndim)), eps)
    return out, mean, rstd


def native_batch_norm(input, weight, bias, running_mean, running_var, training, momentum,
                      eps):
    """(F.batch_norm(...), save_mean, save_invstd): in training the batch's per-channel
    mean and 1/sqrt(biased var + eps), shape (C,); in evaluation two empty tensors, as
    torch's. The running statistics are updated in training, as F.batch_norm's."""
    _tensor("native_batch_norm", input)
    if input.ndim < 2:
        raise ValueError(f"mg.native_batch_norm: expected input of (N, C, ...), got shape "
                         f"{tuple(input.shape)}")
    out = F.batch_norm(input, running_mean, running_var, weight, bias, training, momentum,
                       eps)
    with no_grad():
        if not training:
            empty = input.new_zeros(0)
            return out, empty, empty.clone()
        dims = (0,) + tuple(range(2, input.ndim))
        mean, rstd = _mean_rstd(input, dims, eps)
    return out, mean.reshape(-1), rstd.reshape(-1)


def native_group_norm(input, weight, bias, N, C, HxW, group, eps):
    """(F.group_norm(...), mean, rstd), mean and rstd of shape (N, group), differentiable
    (as torch's)."""
    _tensor("native_group_norm", input)
    if N * C * HxW != input.numel() or input.ndim < 2 or tuple(input.shape[:2]) != (N, C):
        raise ValueError(f"mg.native_group_norm: N={N}, C={C}, HxW={HxW} do not describe an "
                         f"input of shape {tuple(input.shape)}")
    if group < 1 or C % group:
        raise ValueError(f"mg.native_group_norm: group={group} must divide C={C}")
    out = F.group_norm(input, group, weight, bias, eps)
    mean, rstd = _mean_rstd(input.reshape(N, group, -1), 2, eps)
    return out, mean.reshape(N, group), rstd.reshape(N, group)


def native_dropout(input, p, train):
    """(output, mask): in training each element kept (mask True) with probability 1 - p
    and scaled by 1/(1 - p); otherwise the input (copied) and a mask of all True."""
    _tensor("native_dropout", input)
    if not 0 <= p <= 1:
        raise ValueError(f"mg.native_dropout: p must be in [0, 1], got {p}")
    if not train:
        return input.clone(), input.new_ones(input.shape, dtype="bool")
    from minigrad.creation import rand
    keep = rand(*input.shape, dtype=input.dtype, device=input.device) >= p
    scale = 0.0 if p == 1 else 1.0 / (1.0 - p)     # (p = 1 keeps nothing: 0, not 0·inf)
    return input * keep.to(dtype=input.dtype) * scale, keep


def convolution(input, weight, bias, stride, padding, dilation, transposed, output_padding,
                groups):
    """torch.convolution: F.conv{1,2,3}d, or F.conv_transpose{1,2,3}d when `transposed`,
    chosen by weight's dimensions (3, 4 or 5); every argument given, as ATen's."""
    _tensor("convolution", input)
    d = getattr(weight, "ndim", 0) - 2
    if d not in (1, 2, 3):
        raise ValueError(f"mg.convolution: weight must have 3, 4 or 5 dimensions (1d, 2d, "
                         f"3d), got shape {tuple(getattr(weight, 'shape', ()))}")
    # (ATen takes lists; an int or "same"/"valid" goes on to F as F's conv takes it)
    stride, padding, dilation, output_padding = (
        tuple(v) if isinstance(v, (list, tuple)) else v
        for v in (stride, padding, dilation, output_padding))
    if transposed:
        return getattr(F, f"conv_transpose{d}d")(input, weight, bias, stride, padding,
                                                 output_padding, groups, dilation)
    if any(output_padding) if isinstance(output_padding, tuple) else output_padding:
        raise ValueError(f"mg.convolution: output_padding {output_padding} is for a "
                         f"transposed convolution only")
    return getattr(F, f"conv{d}d")(input, weight, bias, stride, padding, dilation, groups)


def constant_pad_nd(input, pad, value=0):
    """F.pad(input, pad, "constant", value)."""
    return F.pad(_tensor("constant_pad_nd", input), tuple(pad), "constant", value)


def norm_except_dim(v, pow=2, dim=0):
    """The pow-norm of v over every dimension but `dim`, kept (weight norm's g); dim=-1:
    over all of v, a 0-dim tensor. Other negative dims count from the end, as torch's
    (-2 keeps the last dim but one)."""
    _tensor("norm_except_dim", v)
    if dim == -1:
        return linalg.vector_norm(v, pow)
    if not -v.ndim <= dim < v.ndim:
        raise IndexError(f"mg.norm_except_dim: dim {dim} is out of range for a tensor of "
                         f"{v.ndim} dimensions (-1: over all of it)")
    dim %= v.ndim
    return linalg.vector_norm(v, pow, tuple(i for i in range(v.ndim) if i != dim),
                             keepdim=True)


def frobenius_norm(input, dim, keepdim=False):
    """The 2-norm over dim (one or more dims), as torch.frobenius_norm."""
    return linalg.vector_norm(_tensor("frobenius_norm", input), 2, dim, keepdim)


def nuclear_norm(input, dim=None, keepdim=False):
    """The sum of singular values of each matrix: over the last two dims without dim
    (nuclear_norm(A) or nuclear_norm(A, keepdim); a batch of matrices gives one per
    matrix, as torch's), or over dim (two dims)."""
    _tensor("nuclear_norm", input)
    if isinstance(dim, bool):                      # torch's overload nuclear_norm(A, keepdim)
        dim, keepdim = None, dim
    if dim is None:
        if input.ndim < 2:
            raise ValueError(f"mg.nuclear_norm: expected matrices (at least 2 dims), got "
                             f"shape {tuple(input.shape)}")
        dim = (-2, -1)
    return linalg.matrix_norm(input, "nuc", tuple(dim), keepdim)


__all__ = [_name for _name, _f in list(globals().items())
           if callable(_f) and getattr(_f, "__module__", None) == __name__
           and not _name.startswith("_")]
