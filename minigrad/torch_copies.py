"""torch's top-level view ops' copying twins and its other function spellings of Tensor
methods: mg.view_copy(t, shape) is t.view(shape).clone() (the *_copy family: the same
values as the view, in memory of their own, differentiable), mg.unsafe_split is split
(torch's "unsafe" skips checks on later in-place use of the parts, which minigrad never
makes), mg.fill, mg.detach_, mg.index_put_, and the conjugate bits of a real engine:
is_conj / is_neg are False, resolve_conj / resolve_neg / conj_physical return the tensor
itself (as torch does for a real one).

Left out: the sparse ones (values_copy, indices_copy, crow_indices_copy...) and the
complex ones (view_as_real_copy, view_as_complex_copy): minigrad has neither layout nor
complex dtypes. (as_strided_copy is with as_strided, in ops/as_strided.py.) Every copy is
row-major (contiguous_format), as torch's, whatever the view's layout."""
from minigrad.memory_format import contiguous_format
from minigrad.tensor import Tensor


def _tensor(name, input):
    if not isinstance(input, Tensor):
        raise TypeError(f"mg.{name}: expected a Tensor first, got {type(input).__name__}; "
                        f"make one with mg.tensor(...)")
    return input


def _copy_of(view_name, name=None):
    """mg.<view>_copy(t, ...): t.<view>(...), copied."""
    name = name or f"{view_name}_copy"

    def copy(input, *args, **kwargs):
        view = getattr(_tensor(name, input), view_name)(*args, **kwargs)
        if isinstance(view, (tuple, list)):
            return type(view)(v.clone(memory_format=contiguous_format) for v in view)
        return view.clone(memory_format=contiguous_format)
    copy.__name__ = copy.__qualname__ = name
    copy.__doc__ = f"mg.{name}(t, ...) is t.{view_name}(...).clone(), as torch.{name}."
    return copy


for _view in ("view permute transpose t squeeze unsqueeze select diagonal narrow split "
              "split_with_sizes unbind unfold").split():
    globals()[f"{_view}_copy"] = _copy_of(_view)
del _view
detach_copy = _copy_of("detach")     # (torch 2.13's output still requires grad; here not)


def alias_copy(input):
    """A copy of input (torch.alias_copy: the alias, copied), differentiable."""
    return _tensor("alias_copy", input).clone(memory_format=contiguous_format)


def expand_copy(input, size, *, implicit=False):
    """input.expand(size), copied (`implicit` is torch's tracing flag, ignored)."""
    return _tensor("expand_copy", input).expand(*size).clone(
        memory_format=contiguous_format)


def slice_copy(input, dim=0, start=None, end=None, step=1):
    """input[start:end:step] along dim, copied, as torch.slice_copy."""
    _tensor("slice_copy", input)
    if not isinstance(step, int) or isinstance(step, bool) or step < 1:
        raise ValueError(f"mg.slice_copy: step must be a positive integer, got {step!r}")
    ndim = max(input.ndim, 1)
    if not -ndim <= dim < ndim:
        raise IndexError(f"mg.slice_copy: dim {dim} is out of range for a tensor of "
                         f"{input.ndim} dimensions")
    index = [slice(None)] * (dim % ndim) + [slice(start, end, step)]
    return input[tuple(index)].clone(memory_format=contiguous_format)


def unsafe_chunk(input, chunks, dim=0):
    """chunk: minigrad's parts are never checked for in-place use, unsafe or not."""
    return _tensor("unsafe_chunk", input).chunk(chunks, dim)


def unsafe_split(input, split_size, dim=0):
    return _tensor("unsafe_split", input).split(split_size, dim)


def unsafe_split_with_sizes(input, split_sizes, dim=0):
    return _tensor("unsafe_split_with_sizes", input).split_with_sizes(split_sizes, dim)


def fill(input, value):
    """A new tensor like input, every element `value` (a number or a 0-dim tensor, whose
    gradient is the sum of the output's), as torch.fill. Unlike torch's, the output does
    not require grad through `input` (its gradient there is zero)."""
    _tensor("fill", input)
    if isinstance(value, Tensor):
        if value.ndim:
            raise ValueError(f"mg.fill: value must be a number or a 0-dim tensor, got a "
                             f"tensor of shape {tuple(value.shape)}")
        return value.to(dtype=input.dtype, device=input.device).expand(*input.shape).clone()
    return input.detach().clone().fill_(value)


def detach_(input):
    return _tensor("detach_", input).detach_()


def index_put_(input, indices, values, accumulate=False):
    return _tensor("index_put_", input).index_put_(indices, values, accumulate)


def is_conj(input):
    return _tensor("is_conj", input).is_conj()


def is_neg(input):
    return _tensor("is_neg", input).is_neg()


def resolve_conj(input):
    """input itself: a real tensor has no conjugate bit to resolve (torch returns it too)."""
    return _tensor("resolve_conj", input)


def resolve_neg(input):
    return _tensor("resolve_neg", input)


def conj_physical(input):
    """input itself: the conjugate of a real tensor is the tensor (torch returns it too)."""
    return _tensor("conj_physical", input)


__all__ = [_name for _name, _f in list(globals().items())
           if callable(_f) and getattr(_f, "__module__", None) == __name__
           and not _name.startswith("_")]
