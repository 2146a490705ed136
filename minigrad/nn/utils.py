"""Gradient clipping: `clip_grad_norm_` (as torch.nn.utils) and `clip_grad_value_`; all
parameters as one vector and back (`parameters_to_vector`, `vector_to_parameters`); and
`functional_call`; `get_total_norm` and `clip_grads_with_norm_`, clip_grad_norm_'s two
halves; `fuse_conv_bn_eval`, `fuse_linear_bn_eval` and their `_weights` forms (fusion.py).
`utils.prune` is prune.py (as torch.nn.utils.prune). `utils.parametrize` and
`utils.parametrizations` are parametrize.py and parametrizations.py (weight_norm,
spectral_norm, orthogonal), whose old hook-based spellings (`utils.weight_norm`, ...) come
from there too. `utils.rnn` is packed.py (padding and
packing variable-length batches), by PyTorch's name: `mg.nn.utils.rnn.pack_padded_sequence`,
`from minigrad.nn.utils.rnn import ...`. skip_init, the deprecated clip_grad_norm, the
memory-format no-ops, and the sub-module paths (`utils.clip_grad`, `.stateless`, ...) are
utils_more.py's.

Gradients are rescaled by assigning a new tensor (p.grad = p.grad * coef), never in place:
plain backward() stores a fresh array in each .grad, but a gradient stored with
create_graph=True, or assigned by hand, may be an array that another tensor holds too, and
scaling it in place would scale it once per holder."""
import sys

from minigrad import backend, creation
from minigrad.args import number_arg
from minigrad.autograd import no_grad
from minigrad.func_call import functional_call as _functional_call
from minigrad.ops.shape import cat
from minigrad.tensor import Tensor
from minigrad.nn import packed as rnn
from minigrad.nn import fusion, parametrize, parametrizations, prune, utils_more
from minigrad.nn.utils_more import (skip_init, clip_grad_norm,  # noqa: F401
                                    convert_conv2d_weight_memory_format,
                                    convert_conv3d_weight_memory_format)
from minigrad.nn.fusion import (fuse_conv_bn_eval, fuse_conv_bn_weights,  # noqa: F401
                                fuse_linear_bn_eval, fuse_linear_bn_weights)
from minigrad.nn.parametrizations import (old_weight_norm as weight_norm,  # noqa: F401
                                          old_spectral_norm as spectral_norm,
                                          remove_weight_norm, remove_spectral_norm)

# so that `import minigrad.nn.utils.rnn` (.parametrize, .parametrizations) finds them
for _name, _m in (("rnn", rnn), ("parametrize", parametrize),
                  ("parametrizations", parametrizations), ("fusion", fusion),
                  ("prune", prune)):
    sys.modules[f"{__name__}.{_name}"] = _m


def _with_grads(parameters):
    if isinstance(parameters, Tensor):
        parameters = [parameters]
    return [p for p in parameters if p.grad is not None]


@no_grad()
def clip_grad_norm_(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                    foreach=None):
    """Scale all gradients together so that their global norm (the norm of the vector of all
    gradient elements) is at most `max_norm`. Returns the norm before clipping, as a 0-d
    tensor (float(...) gives the number).

        coef = min(1, max_norm / (total_norm + 1e-6));  g ← g · coef

    `foreach` (PyTorch's name): take the norm of all gradients concatenated, in a few array
    operations, instead of one norm per gradient and their sum (a few per parameter); on a
    GPU each operation is a kernel launch. The concatenation is then scaled once, and each
    .grad becomes a view of its part of it (where the gradients share a dtype). None
    (default): on for GPU gradients, off on the CPU. Either way the result is the same up to
    rounding (the sums are ordered differently).
    """
    params = _with_grads(parameters)
    max_norm = float(number_arg("clip_grad_norm_", "max_norm", max_norm))
    if not params:
        return creation.tensor(0.0)         # on the default device, as PyTorch's
    total, flat = _total_norm("clip_grad_norm_", [p.grad for p in params], norm_type,
                              error_if_nonfinite, foreach)
    # the concatenation is ours, to scale in place, where it has every gradient's dtype
    # (not float16's float32) and no parameter is listed twice (PyTorch's per-gradient
    # multiply scales one twice)
    if flat is not None and (len({id(p) for p in params}) < len(params) or
                             any(p.grad.dtype != flat.dtype for p in params)):
        flat = None
    _scale(params, clip_coefficient(total.backend.xp, total._data, max_norm), flat)
    return total


@no_grad()
def get_total_norm(tensors, norm_type=2.0, error_if_nonfinite=False, foreach=None):
    """The norm of order norm_type of all the tensors' elements as one vector (a 0-d
    tensor), as torch.nn.utils.get_total_norm: clip_grad_norm_'s first half, for
    gradients. float16 tensors are summed in float32 (their squares overflow) and give a
    float32 norm; `foreach` as in clip_grad_norm_."""
    tensors = [tensors] if isinstance(tensors, Tensor) else list(tensors)
    if not tensors:
        return creation.tensor(0.0)         # on the default device, as PyTorch's
    return _total_norm("get_total_norm", tensors, norm_type, error_if_nonfinite, foreach)[0]


@no_grad()
def clip_grads_with_norm_(parameters, max_norm, total_norm, foreach=None):
    """Scale every gradient by min(1, max_norm / (total_norm + 1e-6)), as
    torch.nn.utils.clip_grads_with_norm_: clip_grad_norm_'s second half, given the total
    norm (from get_total_norm, perhaps of more gradients than these). Returns None."""
    params = _with_grads(parameters)
    max_norm = float(number_arg("clip_grads_with_norm_", "max_norm", max_norm))
    if not params:
        return
    first = params[0].grad
    if isinstance(total_norm, Tensor):
        total_norm = total_norm.to(first.device)._data
    elif backend.is_scalar(total_norm):
        total_norm = first.backend.xp.asarray(float(total_norm), dtype=backend.float32)
    else:
        raise TypeError(f"clip_grads_with_norm_: total_norm must be a tensor or a number "
                        f"(as get_total_norm returns), got {type(total_norm).__name__}")
    _scale(params, clip_coefficient(first.backend.xp, total_norm, max_norm), None)


def _total_norm(op, tensors, norm_type, error_if_nonfinite, foreach):
    """(the norm as a 0-d tensor, the concatenation of the tensors' arrays if `foreach`
    made one, else None), everything on the device (no sync per tensor)."""
    norm_type = float(number_arg(op, "norm_type", norm_type)) \
        if norm_type != "inf" else float("inf")
    for t in tensors:
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: expected tensors, got a {type(t).__name__} among them")
    first = tensors[0]
    xp, dtype = first.backend.xp, first.dtype
    # float16 squares overflow (a norm above 256 would be inf and zero every gradient):
    # float16 gradients are summed in float32, and a float16 norm is returned as float32
    arrays = [g.astype(backend.float32) if g.dtype == backend.float16 else g
              for g in (t._data for t in tensors)]
    if dtype == backend.float16:
        dtype = backend.float32
    flat = None
    if foreach if foreach is not None else not first.backend.host:
        arrays = [xp.concatenate([g.reshape(-1) for g in arrays])]
        flat = arrays[0]
    total = _norm_of(xp, arrays, norm_type, dtype)
    if error_if_nonfinite and not bool(xp.isfinite(total)):   # the one sync, when asked
        raise RuntimeError(f"{op}: the total norm of order {norm_type} of the "
                           f"gradients is {float(total)}, so they cannot be clipped; pass "
                           f"error_if_nonfinite=False to clip anyway")
    return Tensor._make(total, first.device), flat


def _scale(params, coef, flat):
    """Each .grad times coef (a 0-d array); `flat`, where given, the concatenation of the
    gradients, ours to scale in place."""
    # within the norm the factor is 1 and g·1 is g to the bit: the host skips the multiply (a
    # pass over every gradient); a GPU always multiplies, as deciding would need a sync
    if params[0].grad.backend.host and coef >= 1:
        return
    if flat is not None:     # one multiply, then each .grad a view of its part (no launch)
        flat *= coef.astype(flat.dtype)
        start = 0
        for p in params:
            n = p.grad.numel()
            p._grad = Tensor._make(flat[start:start + n].reshape(p.grad.shape), p.grad.device)
            start += n
        return
    coefs = {}                                           # the factor in each grad dtype, once
    for p in params:
        c = coefs.get(p.grad.dtype)
        if c is None:
            c = coefs[p.grad.dtype] = coef.astype(p.grad.dtype)
        p._grad = Tensor._make(p.grad._data * c, p.grad.device)


def _norm_of(xp, grads, norm_type, dtype):
    """The norm of order norm_type of the arrays `grads` as one vector (a 0-d array of
    dtype), computed on their device: no sync."""
    if norm_type == float("inf"):
        total = xp.max(xp.stack([xp.abs(g).max() if g.size else xp.zeros((), dtype=g.dtype)
                                 for g in grads]))
    elif norm_type == -float("inf"):                     # the smallest |g|
        total = xp.min(xp.stack([xp.abs(g).min() for g in grads if g.size] or
                                [xp.full((), float("inf"), dtype)]))
    elif norm_type == 0.0:
        # how many elements are nonzero: the 0-"norm" of all elements as one vector, as the
        # other orders. (PyTorch takes it of the per-gradient counts, so it counts the
        # gradients that have a nonzero element; for every p > 0 the two agree)
        total = sum(xp.count_nonzero(g) for g in grads)
    elif norm_type == 2.0:
        total = xp.sqrt(sum(squared_norm(xp, g) for g in grads))
    else:
        total = sum(xp.sum(xp.abs(g) ** norm_type) for g in grads) ** (1.0 / norm_type)
    return xp.asarray(total).astype(dtype)


def squared_norm(xp, g):
    """Σg² of one gradient array (a 0-d array), as a BLAS dot product: one pass, no g*g
    temporary. (float16 gradients come here cast to float32: their squares overflow.)"""
    g = g.reshape(-1)
    return xp.vdot(g, g)


def clip_coefficient(xp, total, max_norm):
    """The factor that brings a total norm down to max_norm, at most 1 (a 0-d array)."""
    return xp.minimum(max_norm / (total + 1e-6), 1.0)


@no_grad()
def clip_grad_value_(parameters, clip_value, foreach=None):
    """Clamp every gradient element into [-clip_value, clip_value]. (`foreach`: PyTorch's
    choice of loop; one loop here, the same numbers.)"""
    clip_value = float(clip_value)
    for p in _with_grads(parameters):
        p._grad = Tensor._make(p.grad.backend.xp.clip(p.grad._data, -clip_value, clip_value),
                               p.grad.device)


def _same_device(params, op):
    """The parameters as a list, all on one device (PyTorch's check)."""
    params = [params] if isinstance(params, Tensor) else list(params)
    for p in params:
        if not isinstance(p, Tensor):
            raise TypeError(f"{op}: expected an iterable of tensors, got a "
                            f"{type(p).__name__} among them")
        if p.device != params[0].device:
            raise TypeError(f"{op}: found parameters on different devices ("
                            f"{params[0].device} and {p.device}); move them to one first")
    return params


def parameters_to_vector(parameters):
    """Every parameter flattened and concatenated, in order, into one 1-D tensor, as
    torch.nn.utils.parameters_to_vector. It is computed from the parameters (reshape and
    cat), so a gradient of it reaches each of them."""
    params = _same_device(parameters, "parameters_to_vector")
    if not params:
        raise ValueError("parameters_to_vector: got no parameters")
    return cat([p.reshape(-1) for p in params])


@no_grad()
def vector_to_parameters(vec, parameters):
    """Copy consecutive slices of the 1-D tensor `vec` into the parameters, in order: the
    inverse of parameters_to_vector, as torch.nn.utils.vector_to_parameters. The values are
    written into each parameter's own memory (PyTorch instead makes each parameter a view of
    vec), so the parameters stay the tensors that optimisers and state dicts hold, and a
    later change of vec does not reach them."""
    if not isinstance(vec, Tensor):
        raise TypeError(f"vector_to_parameters: expected a Tensor, got "
                        f"{type(vec).__name__}")
    params = _same_device(parameters, "vector_to_parameters")
    total = sum(p.numel() for p in params)
    if vec.ndim != 1 or vec.numel() != total:
        raise ValueError(f"vector_to_parameters: expected a 1-D vector of {total} elements "
                         f"(the {len(params)} parameters together), got shape {vec.shape}")
    start = 0
    for p in params:
        p.copy_(vec[start:start + p.numel()].reshape(p.shape))
        start += p.numel()


def functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                    tie_weights=True, strict=False):
    """module(*args, **kwargs) with the named parameters and buffers replaced, as
    torch.nn.utils.stateless.functional_call: mg.func.functional_call itself (a tied weight
    replaced under every name, a parametrized name such as a weight_norm's `weight`
    replaced as the tensor given, the module's own put back afterwards)."""
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


utils_more.register(__name__, clip_grad=dict(
    clip_grad_norm_=clip_grad_norm_, clip_grad_value_=clip_grad_value_,
    clip_grad_norm=clip_grad_norm, get_total_norm=get_total_norm,
    clip_grads_with_norm_=clip_grads_with_norm_),
    convert_parameters=dict(parameters_to_vector=parameters_to_vector,
                            vector_to_parameters=vector_to_parameters),
    stateless=dict(functional_call=utils_more.stateless_functional_call),
    init=dict(skip_init=skip_init),
    memory_format=dict(convert_conv2d_weight_memory_format=convert_conv2d_weight_memory_format,
                       convert_conv3d_weight_memory_format=convert_conv3d_weight_memory_format))
