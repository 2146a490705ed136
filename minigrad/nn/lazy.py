"""Lazy layers, as PyTorch's: LazyLinear(out_features) learns in_features from its first
input. Its weight and bias start as UninitializedParameters (no shape yet); the first
forward materialises them in place (an optimiser built before keeps them), initialises them
as Linear's, and the module becomes a Linear. Loading a state dict materialises them to the
checkpoint's shapes too (and, unlike PyTorch, which leaves in_features 0 until a forward,
makes it a Linear at once)."""
from minigrad import creation
from minigrad.autograd import no_grad
from minigrad.nn.layers import Linear, _check_sizes
from minigrad.nn.module import Module, Parameter
from minigrad.nn.module_state import _shape
from minigrad.tensor import Tensor


class UninitializedParameter(Parameter):
    """A Parameter whose shape is not known yet: reading its shape is an error, as
    PyTorch's; materialize(shape) gives it memory (uninitialised values) and makes it a
    plain Parameter, the same object."""
    __slots__ = ()

    def __init__(self, requires_grad=True, device=None, dtype=None):
        super().__init__(creation.empty(0, device=device, dtype=dtype), requires_grad)

    def _no_shape(self, *args):
        raise RuntimeError("Can't access the shape of an uninitialized parameter. Call "
                           "`forward` (or load_state_dict) to initialize the parameters "
                           "before accessing their attributes.")

    shape = property(_no_shape)
    ndim = property(_no_shape)
    size = numel = _no_shape

    def detach(self):
        return self      # state_dict shows the placeholder itself, as PyTorch's

    def materialize(self, shape, device=None, dtype=None):
        """Memory of `shape` (this placeholder's device and dtype unless given), in place."""
        data = creation.empty(*shape, device=device or self.device, dtype=dtype or self.dtype)
        self._data, self.device = data.data, data.device
        self._version_counter[0] += 1
        self.__class__ = Parameter

    def __repr__(self):
        return "<UninitializedParameter>"


class LazyLinear(Linear):
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

    def has_uninitialized_params(self):
        return any(isinstance(p, UninitializedParameter) for p in self._parameters.values())

    def reset_parameters(self):
        if not self.has_uninitialized_params() and self.in_features != 0:
            super().reset_parameters()

    def initialize_parameters(self, input):
        """in_features from input's last dim; weight and bias materialised and initialised
        as Linear's; the module becomes a Linear."""
        if not isinstance(input, Tensor) or input.ndim == 0:
            raise ValueError(f"LazyLinear: the first input must be a tensor with a feature "
                             f"dim (..., in_features), got "
                             f"{getattr(input, 'shape', type(input).__name__)}")
        with no_grad():
            self.in_features = input.shape[-1]
            self.weight.materialize((self.out_features, self.in_features))
            if self.bias is not None:
                self.bias.materialize((self.out_features,))
            self._become_linear()
            self.reset_parameters()

    def _become_linear(self):
        self.__class__ = self.cls_to_become     # (the load hook then does nothing)

    def forward(self, x):
        if self.has_uninitialized_params():
            self.initialize_parameters(x)
        return Linear.forward(self, x)


def _materialize_from_state(module, state_dict, prefix, *args):
    """load_state_dict's pre hook: each uninitialised parameter takes its entry's shape."""
    if not isinstance(module, LazyLinear):
        return
    for name, p in module._parameters.items():
        key = prefix + name
        if isinstance(p, UninitializedParameter) and key in state_dict:
            p.materialize(_shape(key, state_dict[key]))
    if not module.has_uninitialized_params():
        module.in_features = module.weight.shape[1]
        module._become_linear()
