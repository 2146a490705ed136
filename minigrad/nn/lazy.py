"""Lazy layers, as PyTorch's: LazyLinear(out_features) learns in_features from its first
input, LazyConv{1,2,3}d / LazyConvTranspose{1,2,3}d in_channels, LazyBatchNorm{1,2,3}d /
LazyInstanceNorm{1,2,3}d num_features. Their weights start as UninitializedParameters and
their running statistics as UninitializedBuffers (no shape yet); the first forward
materialises them in place (an optimiser built before keeps them), initialises them as the
layer's, and the module becomes that layer (a Linear, Conv2d, BatchNorm1d...). Loading a
state dict materialises them to the checkpoint's shapes too (and, unlike PyTorch, which
leaves the size 0 until a forward, makes the module its layer at once; unlike PyTorch's,
it refuses shapes that differ from the layer's in more than the size it lacks); a
placeholder in the state dict (another lazy layer's) leaves its own a placeholder, as
PyTorch's. A placeholder has no values: reading them (mg.save) is an error."""
from minigrad import creation
from minigrad.autograd import no_grad
from minigrad.nn.batchnorm import BatchNorm1d, BatchNorm2d, BatchNorm3d
from minigrad.nn.conv import (Conv1d, Conv2d, Conv3d, ConvTranspose1d, ConvTranspose2d,
                              ConvTranspose3d)
from minigrad.nn.layers import Linear, _check_sizes
from minigrad.nn.module import Module, Parameter
from minigrad.nn.module_state import _shape, entry
from minigrad.nn.normalization import (InstanceNorm1d, InstanceNorm2d, InstanceNorm3d,
                                       _InstanceNorm)
from minigrad.tensor import Tensor


class _Uninitialized:
    """A placeholder tensor whose shape is not known yet: reading its shape is an error, as
    PyTorch's; materialize(shape) gives it memory (uninitialised values) and makes it a
    plain `becomes`, the same object."""
    __slots__ = ()
    becomes = None

    def _no_shape(self, *args):
        raise RuntimeError("Can't access the shape of an uninitialized parameter or buffer. "
                           "Call `forward` (or load_state_dict) to initialize the parameters "
                           "before accessing their attributes.")

    shape = property(_no_shape)
    ndim = property(_no_shape)
    size = numel = _no_shape

    def detach(self):
        return self      # state_dict shows the placeholder itself, as PyTorch's

    def _no_values(self, *args, **kwargs):
        # (mg.save would write a (0,) tensor, which loads back as a layer of no size)
        raise RuntimeError(f"Can't read the values of an {type(self).__name__}: it has none "
                           f"yet. Call `forward` (or load_state_dict) to initialize it first.")

    numpy = tolist = item = __array__ = _no_values

    def materialize(self, shape, device=None, dtype=None):
        """Memory of `shape` (this placeholder's device and dtype unless given), in place."""
        data = creation.empty(*shape, device=device or self.device, dtype=dtype or self.dtype)
        self._data, self.device = data._data, data.device
        self._version_counter[0] += 1
        self.__class__ = self.becomes

    def __repr__(self):
        return f"<{type(self).__name__}>"


class UninitializedParameter(_Uninitialized, Parameter):
    """A Parameter whose shape is not known yet (a lazy layer's weight)."""
    __slots__ = ()
    becomes = Parameter

    def __init__(self, requires_grad=True, device=None, dtype=None):
        super().__init__(creation.empty(0, device=device, dtype=dtype), requires_grad)


class UninitializedBuffer(_Uninitialized, Tensor):
    """A buffer whose shape is not known yet (a lazy norm layer's running statistics)."""
    __slots__ = ()
    becomes = Tensor

    def __init__(self, requires_grad=False, device=None, dtype=None):
        empty = creation.empty(0, device=device, dtype=dtype)
        super().__init__(empty._data, device=empty.device, requires_grad=requires_grad)

    def to(self, device=None, dtype=None):
        """A placeholder on that device and of that dtype (Module.to replaces buffers)."""
        moved = Tensor.to(self, device, dtype)
        return self if moved is self else UninitializedBuffer(self.requires_grad,
                                                              moved.device, moved.dtype)


class _Lazy:
    """What the lazy layers share: the first forward (or load_state_dict) takes the size
    the layer lacks from its input (or the checkpoint), materialises the placeholders,
    initialises them, and turns the module into cls_to_become."""
    cls_to_become = None

    def _lazy_placeholders(self, device, dtype):
        """The layer's weights and running statistics, made with size 0, swapped for
        placeholders; load_state_dict's hook to materialise them."""
        for store, cls in ((self._parameters, UninitializedParameter),
                           (self._buffers, UninitializedBuffer)):
            for name, t in store.items():
                if t is not None and (cls is UninitializedParameter or
                                      name in ("running_mean", "running_var")):
                    store[name] = cls(device=device, dtype=dtype)
        self.register_load_state_dict_pre_hook(_materialize_from_state)

    def has_uninitialized_params(self):
        return any(isinstance(t, _Uninitialized) for store in (self._parameters, self._buffers)
                   for t in store.values())

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self._size() != 0:
            self.cls_to_become.reset_parameters(self)

    def initialize_parameters(self, input):
        """The missing size from input; the placeholders materialised and initialised as
        the layer's; the module becomes its layer. What a non-strict load gave already
        keeps its values (it must have the layer's shape)."""
        size = self._size_of(input)
        with no_grad():
            self._set_size(size)
            lazy = [(name, t) for store in (self._parameters, self._buffers)
                    for name, t in store.items() if t is not None and
                    (store is self._parameters or name in ("running_mean", "running_var"))]
            wrong = [f"{name} {t.shape}, expected {self._shape_of(name)}" for name, t in lazy
                     if not isinstance(t, _Uninitialized) and t.shape != self._shape_of(name)]
            if wrong:
                self._set_size(0)
                raise ValueError(f"{type(self).__name__}: the state loaded before does not "
                                 f"fit an input of size {size}: " + ", ".join(wrong))
            loaded = [(t, t._data.copy()) for store in (self._parameters, self._buffers)
                      for t in store.values()
                      if t is not None and not isinstance(t, _Uninitialized)]
            for name, t in lazy:
                if isinstance(t, _Uninitialized):
                    t.materialize(self._shape_of(name))
            self.__class__ = self.cls_to_become     # (the load hook then does nothing)
            self.reset_parameters()
            for t, values in loaded:
                t._data[...] = values

    def forward(self, input, *args, **kwargs):
        self.initialize_parameters(input)
        return self.forward(input, *args, **kwargs)


def _materialize_from_state(module, state_dict, prefix, metadata, strict, missing,
                            unexpected, errors):
    """load_state_dict's pre hook: each placeholder takes its entry's shape and values (so a
    load that strict then refuses leaves the checkpoint's values, as PyTorch's, never
    uninitialised memory); with all of them materialised, the module becomes its layer.
    An entry that is itself a placeholder is passed over (its key not reported missing)."""
    stale = module.__dict__.pop("_lazy_forget", None)
    if stale is not None:           # left by a load refused before it ran its post hooks
        stale.remove()
    if not isinstance(module, _Lazy):
        return
    passed_over, found, wrong = [], [], []
    for store in (module._parameters, module._buffers):
        for name, t in store.items():
            key = prefix + name
            if not isinstance(t, _Uninitialized) or key not in state_dict:
                continue
            if isinstance(state_dict[key], _Uninitialized):
                passed_over.append(key)
                del state_dict[key]             # (the hook's own copy of the state dict)
                continue
            shape, want = _shape(key, state_dict[key]), module._shape_of(name)
            # (the size the layer lacks is 0 in `want`; the others must be the checkpoint's)
            if len(shape) != len(want) or any(w not in (0, s) for w, s in zip(want, shape)):
                wrong.append(f"{key}: checkpoint {shape} vs model {_pattern(want)}")
            found.append((key, t, shape))
    if wrong:                   # nothing materialised: the layer stays as it was
        errors.append(f"{type(module).__name__} cannot take the shapes " + ", ".join(wrong))
        return
    for key, t, shape in found:
        t.materialize(shape)
        t._data[...] = t.backend.from_numpy(entry(key, state_dict[key]).astype(t.dtype))
    if passed_over:
        _forget_missing(module, passed_over)
    size = module._size_from_state()
    if not module.has_uninitialized_params() and size is not None:
        module._set_size(size)
        module.__class__ = module.cls_to_become


def _pattern(shape):
    """A shape with the size not known yet (0) written as '?'."""
    return "(" + ", ".join("?" if s == 0 else str(s) for s in shape) + \
        ("," if len(shape) == 1 else "") + ")"


def _forget_missing(module, keys):
    """A post hook, for this load only, that takes `keys` off the missing keys."""
    def forget(module, incompatible):
        module.__dict__.pop("_lazy_forget").remove()
        incompatible.missing_keys[:] = [k for k in incompatible.missing_keys if k not in keys]
    module.__dict__["_lazy_forget"] = module.register_load_state_dict_post_hook(forget)


# ---- LazyLinear ---------------------------------------------------------------------------
class LazyLinear(_Lazy, Linear):
    """Linear(in_features, out_features, bias) with in_features taken from the first
    input's last dim; in_features is 0 until then."""
    cls_to_become = Linear

    def __init__(self, out_features, bias=True, device=None, dtype=None):
        Module.__init__(self)
        _check_sizes("LazyLinear", out_features=out_features)
        self.in_features, self.out_features = 0, out_features
        self.weight = UninitializedParameter(device=device, dtype=dtype)
        if bias:
            self.bias = UninitializedParameter(device=device, dtype=dtype)
        else:
            self.register_parameter("bias", None)
        self.register_load_state_dict_pre_hook(_materialize_from_state)

    def _size(self):
        return self.in_features

    def _set_size(self, n):
        self.in_features = n

    def _size_of(self, input):
        if not isinstance(input, Tensor) or input.ndim == 0:
            raise ValueError(f"LazyLinear: the first input must be a tensor with a feature "
                             f"dim (..., in_features), got "
                             f"{getattr(input, 'shape', type(input).__name__)}")
        return input.shape[-1]

    def _shape_of(self, name):
        return (self.out_features, self.in_features) if name == "weight" else \
            (self.out_features,)

    def _size_from_state(self):
        return None if self.has_uninitialized_params() else self.weight.shape[1]


# ---- convolutions -------------------------------------------------------------------------
class _LazyConv(_Lazy):
    """A convolution layer with in_channels taken from the first input's channel dim (dim 1,
    or 0 unbatched); in_channels is 0 until then. Unlike PyTorch's, out_channels must
    divide by groups at once (PyTorch's finds out at the first forward)."""

    def _size(self):
        return self.in_channels

    def _set_size(self, n):
        self.in_channels = n

    def _size_of(self, input):
        d, name = self._dims, type(self).__name__
        if not isinstance(input, Tensor) or input.ndim not in (d + 1, d + 2):
            raise ValueError(f"{name}: expected a {d + 1}D (unbatched) or {d + 2}D (batched) "
                             f"input, got {getattr(input, 'shape', type(input).__name__)}")
        channels = input.shape[1] if input.ndim == d + 2 else input.shape[0]
        if channels % self.groups:
            raise ValueError(f"{name}: in_channels must be divisible by groups, got "
                             f"{channels} channels and groups={self.groups}")
        return channels

    def _shape_of(self, name):
        if name == "bias":
            return (self.out_channels,)
        pair = (self.in_channels, self.out_channels // self.groups) if self.transposed else \
            (self.out_channels, self.in_channels // self.groups)
        return pair + self.kernel_size

    def _size_from_state(self):
        if self.has_uninitialized_params():
            return None
        return self.weight.shape[0] if self.transposed else self.weight.shape[1] * self.groups


class _LazyConvForward(_LazyConv):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, dilation=1, groups=1,
                 bias=True, padding_mode="zeros", device=None, dtype=None):
        Module.__init__(self)
        self._setup(0, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                    padding_mode, 0, False, device, dtype)
        self._lazy_placeholders(device, dtype)


class _LazyConvTransposed(_LazyConv):
    def __init__(self, out_channels, kernel_size, stride=1, padding=0, output_padding=0,
                 groups=1, bias=True, dilation=1, padding_mode="zeros", device=None,
                 dtype=None):
        Module.__init__(self)
        self._setup(0, out_channels, kernel_size, stride, padding, dilation, groups, bias,
                    padding_mode, output_padding, True, device, dtype)
        self._lazy_placeholders(device, dtype)


class LazyConv1d(_LazyConvForward, Conv1d):
    """Conv1d with in_channels from the first input."""
    cls_to_become = Conv1d


class LazyConv2d(_LazyConvForward, Conv2d):
    """Conv2d with in_channels from the first input."""
    cls_to_become = Conv2d


class LazyConv3d(_LazyConvForward, Conv3d):
    """Conv3d with in_channels from the first input."""
    cls_to_become = Conv3d


class LazyConvTranspose1d(_LazyConvTransposed, ConvTranspose1d):
    """ConvTranspose1d with in_channels from the first input."""
    cls_to_become = ConvTranspose1d


class LazyConvTranspose2d(_LazyConvTransposed, ConvTranspose2d):
    """ConvTranspose2d with in_channels from the first input."""
    cls_to_become = ConvTranspose2d


class LazyConvTranspose3d(_LazyConvTransposed, ConvTranspose3d):
    """ConvTranspose3d with in_channels from the first input."""
    cls_to_become = ConvTranspose3d


# ---- normalisation ------------------------------------------------------------------------
class _LazyNorm(_Lazy):
    """A batch or instance norm layer with num_features taken from the first input's channel
    dim (dim 1; dim 0 of an unbatched instance norm input, where PyTorch's reads dim 1);
    num_features is 0 until then. As PyTorch's, affine and track_running_stats default to
    True for the instance norms too (their documentation says False), and the layer
    becomes its norm at the first forward even with nothing to materialise (then, unlike
    PyTorch's, which keeps 0, num_features is the input's)."""

    def __init__(self, eps=1e-5, momentum=0.1, affine=True, track_running_stats=True,
                 device=None, dtype=None, *, bias=True):
        self.cls_to_become.__init__(self, 0, eps, momentum, affine, track_running_stats,
                                    device, dtype, bias=bias)
        self._lazy_placeholders(device, dtype)

    def _size(self):
        return self.num_features

    def _set_size(self, n):
        self.num_features = n

    def _size_of(self, input):
        if not isinstance(input, Tensor):
            raise TypeError(f"{type(self).__name__}: input must be a Tensor, got "
                            f"{type(input).__name__}")
        self._check_input(input)
        unbatched = isinstance(self, _InstanceNorm) and input.ndim == self.dims + 1
        return input.shape[0] if unbatched else input.shape[1]

    def _shape_of(self, name):
        return (self.num_features,)

    def _size_from_state(self):
        for name in ("weight", "running_mean"):
            t = getattr(self, name)
            if t is not None and not isinstance(t, _Uninitialized):
                return t.shape[0]
        return None


class LazyBatchNorm1d(_LazyNorm, BatchNorm1d):
    """BatchNorm1d with num_features from the first input."""
    cls_to_become = BatchNorm1d


class LazyBatchNorm2d(_LazyNorm, BatchNorm2d):
    """BatchNorm2d with num_features from the first input."""
    cls_to_become = BatchNorm2d


class LazyBatchNorm3d(_LazyNorm, BatchNorm3d):
    """BatchNorm3d with num_features from the first input."""
    cls_to_become = BatchNorm3d


class LazyInstanceNorm1d(_LazyNorm, InstanceNorm1d):
    """InstanceNorm1d with num_features from the first input."""
    cls_to_become = InstanceNorm1d


class LazyInstanceNorm2d(_LazyNorm, InstanceNorm2d):
    """InstanceNorm2d with num_features from the first input."""
    cls_to_become = InstanceNorm2d


class LazyInstanceNorm3d(_LazyNorm, InstanceNorm3d):
    """InstanceNorm3d with num_features from the first input."""
    cls_to_become = InstanceNorm3d
