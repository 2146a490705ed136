"""PyTorch's `out=` argument on the top-level functions (mg.matmul(a, b, out=c),
mg.add(a, b, out=c), mg.rand(2, 2, out=c)): the result written into an existing tensor,
which keeps its identity. Only the top-level spellings take it: the operators and
methods the engine calls stay one call deep."""
import functools
import warnings

from minigrad import autograd
from minigrad.dtypes import can_cast
from minigrad.tensor import Tensor


def write_out(name, result, out, inputs=()):
    """`result` copied into `out` (resized to result's shape, cast to its dtype) and
    `out` returned, with PyTorch's checks: out= records no graph, so it is refused where
    autograd would be needed."""
    if not isinstance(out, Tensor):
        raise TypeError(f"mg.{name}: out= must be a Tensor, got {type(out).__name__}")
    if autograd.is_grad_enabled() and (out.requires_grad or any(
            isinstance(t, Tensor) and t.requires_grad for t in inputs)):
        raise RuntimeError(f"mg.{name}(): functions with out=... arguments don't support "
                           f"automatic differentiation, but one of the arguments requires "
                           f"grad; call it under mg.no_grad() or drop out=")
    if result.device != out.device:
        raise RuntimeError(f"mg.{name}: out= is on {out.device}, the result on "
                           f"{result.device}; give an out= on the same device")
    if not can_cast(result.dtype, out.dtype):
        raise RuntimeError(f"mg.{name}: result type {result.dtype} can't be cast to the "
                           f"desired output type {out.dtype} (out=); give an out= of a "
                           f"dtype that holds it")
    with autograd.no_grad():
        if out.shape != result.shape:
            if out.numel() != 0:          # as PyTorch: allowed, but a warning
                warnings.warn(f"mg.{name}: an output with one or more elements was resized "
                              f"since it had shape {tuple(out.shape)}, which does not match "
                              f"the required output shape {tuple(result.shape)}",
                              UserWarning, stacklevel=3)
            out.resize_(result.shape)
        out.copy_(result)
    return out


def with_out(function, name=None):
    """`function` taking out= as well: without it, the function's own result."""
    name = name or function.__name__

    @functools.wraps(function)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return function(*args, **kwargs)
        tensors = [a for a in args if isinstance(a, Tensor)]
        for a in args:                     # cat and stack take a sequence of tensors
            if isinstance(a, (list, tuple)):
                tensors += [t for t in a if isinstance(t, Tensor)]
        return write_out(name, function(*args, **kwargs), out, tensors)
    return wrapper


def creation_with_out(function, name=None):
    """A creation function (rand, zeros, ...) taking out=: the values drawn or made in
    out's dtype and on out's device, then written into it."""
    name = name or function.__name__

    @functools.wraps(function)
    def wrapper(*args, out=None, **kwargs):
        if out is None:
            return function(*args, **kwargs)
        if not isinstance(out, Tensor):
            raise TypeError(f"mg.{name}: out= must be a Tensor, got {type(out).__name__}")
        kwargs.setdefault("dtype", out.dtype)
        kwargs.setdefault("device", out.device)
        return write_out(name, function(*args, **kwargs), out)
    return wrapper
