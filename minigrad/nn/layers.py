"""The basic layers: Linear, Embedding, LayerNorm, RMSNorm, Dropout, the activation
modules, Flatten/Unflatten and Bilinear (the loss modules are losses.py's).
Names, arguments, parameter names/shapes and default initialisation follow PyTorch."""
import math

from minigrad import backend, creation, functional as F
from minigrad.args import int_arg, not_a_tensor, number_arg
from minigrad.autograd import no_grad
from minigrad.nn import init
from minigrad.nn.module import Module, Parameter
from minigrad.tensor import Tensor


def _check_sizes(layer, **sizes):
    """Each size a non-negative integer (0 is allowed, as PyTorch: an empty layer)."""
    for name, n in sizes.items():
        if not backend.is_integer(n) or n < 0:
            raise TypeError(f"{layer}: {name} must be a non-negative integer, got {n!r}")


def add_weight_and_bias(module, weight_shape, bias, device, dtype, bias_size=None):
    """module.weight, zeros of weight_shape, and module.bias, zeros of bias_size (None:
    weight_shape[0]; no bias where bias is False), as Parameters: reset_parameters then
    draws them."""
    module.weight = Parameter(creation.zeros(*weight_shape, device=device, dtype=dtype))
    if bias:
        size = weight_shape[0] if bias_size is None else bias_size
        module.bias = Parameter(creation.zeros(size, device=device, dtype=dtype))
    else:
        module.register_parameter("bias", None)


def kaiming_reset(module):
    """PyTorch's default initialisation of a Linear or convolution layer: the weight
    kaiming_uniform(a=√5), which is U(±1/√fan_in), and the bias the same bound (fan_in =
    weight.shape[1]·∏kernel_size)."""
    init.kaiming_uniform_(module.weight, a=math.sqrt(5))
    if module.bias is not None:
        fan_in = init.fans(module.weight)[0]
        bound = 1 / math.sqrt(fan_in) if fan_in else 0
        init.uniform_(module.bias, -bound, bound)


def add_table(module, layer, _weight, requires_grad, device, dtype):
    """module.weight, the (num_embeddings, embedding_dim) table of an Embedding or
    EmbeddingBag: `_weight` itself (from_pretrained's: no initialisation, and no random
    draws spent on one; a plain tensor becomes the Parameter, its memory shared, as
    PyTorch), else drawn by reset_parameters."""
    shape = (module.num_embeddings, module.embedding_dim)
    if _weight is not None:
        if not isinstance(_weight, Tensor) or _weight.shape != shape:
            got = _weight.shape if isinstance(_weight, Tensor) else type(_weight).__name__
            raise ValueError(f"{layer}: _weight must be a Tensor of shape {shape}, got {got}")
        module.weight = Parameter(_weight, requires_grad=requires_grad)
        return
    module.weight = Parameter(creation.zeros(*shape, device=device, dtype=dtype))
    module.reset_parameters()


def reset_table(module):
    """An embedding table's initialisation, PyTorch's: N(0, 1), the padding row zero."""
    init.normal_(module.weight)
    if module.padding_idx is not None:
        with no_grad():
            module.weight[module.padding_idx] = 0


class Linear(Module):
    """y = x Wᵀ + b, W of shape (out_features, in_features): one fused op, F.linear
    (ops/linear.py), rather than a matmul and an add."""

    def __init__(self, in_features, out_features, bias=True, device=None, dtype=None):
        super().__init__()
        _check_sizes("Linear", in_features=in_features, out_features=out_features)
        self.in_features, self.out_features = in_features, out_features
        add_weight_and_bias(self, (out_features, in_features), bias, device, dtype)
        self.reset_parameters()

    def reset_parameters(self):
        kaiming_reset(self)       # PyTorch's default: U(±1/√in_features), the bias too

    def forward(self, input):
        if not isinstance(input, Tensor):
            raise not_a_tensor(f"Linear({self.in_features}, {self.out_features})", "input",
                               input)
        if input.ndim == 0 or input.shape[-1] != self.in_features:
            raise ValueError(f"Linear({self.in_features}, {self.out_features}): input has "
                             f"shape {input.shape}, expected last dim {self.in_features}")
        return F.linear(input, self.weight, self.bias)

    def extra_repr(self):
        return (f"in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}")


class Embedding(Module):
    """A lookup table: row i is the vector of token i. Weights ~ N(0, 1) as PyTorch; the
    `padding_idx` row starts at zero and gets no gradient."""

    def __init__(self, num_embeddings, embedding_dim, padding_idx=None, max_norm=None,
                 norm_type=2.0, scale_grad_by_freq=False, sparse=False, _weight=None,
                 _freeze=False, device=None, dtype=None):
        super().__init__()
        F._no_sparse(sparse)
        if not isinstance(scale_grad_by_freq, bool):
            raise TypeError(f"Embedding: scale_grad_by_freq must be True or False, got "
                            f"{scale_grad_by_freq!r}")
        self.scale_grad_by_freq, self.sparse = scale_grad_by_freq, sparse
        _check_sizes("Embedding", num_embeddings=num_embeddings, embedding_dim=embedding_dim)
        if max_norm is not None:
            max_norm = number_arg("Embedding", "max_norm", max_norm)
            norm_type = number_arg("Embedding", "norm_type", norm_type)
        self.max_norm, self.norm_type = max_norm, norm_type
        if padding_idx is not None:
            padding_idx = int_arg("Embedding", "padding_idx", padding_idx)
            if not -num_embeddings <= padding_idx < num_embeddings:
                raise ValueError(f"Embedding: padding_idx {padding_idx} is outside the table "
                                 f"of {num_embeddings} rows")
            padding_idx %= num_embeddings
        self.num_embeddings, self.embedding_dim = num_embeddings, embedding_dim
        self.padding_idx = padding_idx
        add_table(self, "Embedding", _weight, not _freeze, device, dtype)

    def reset_parameters(self):
        reset_table(self)

    @classmethod
    def from_pretrained(cls, embeddings, freeze=True, padding_idx=None, max_norm=None,
                        norm_type=2.0, scale_grad_by_freq=False, sparse=False):
        """An Embedding whose table is a copy of `embeddings` (rows, dim) (a Tensor, array
        or PyTorch tensor), frozen (no gradient) unless freeze=False, as PyTorch. The
        padding row keeps its values (only its gradient is withheld)."""
        table = creation.tensor(embeddings) if not isinstance(embeddings, Tensor) else \
            embeddings.detach().clone()
        if table.ndim != 2:
            raise ValueError(f"Embedding.from_pretrained: embeddings must be 2-D (rows, "
                             f"dim), got shape {table.shape}")
        return cls(*table.shape, padding_idx=padding_idx, max_norm=max_norm,
                   norm_type=norm_type, scale_grad_by_freq=scale_grad_by_freq, sparse=sparse,
                   _weight=table, _freeze=freeze)

    def forward(self, input):
        return F.embedding(input, self.weight, self.padding_idx, self.max_norm, self.norm_type,
                           self.scale_grad_by_freq)

    def extra_repr(self):
        pad = f", padding_idx={self.padding_idx}" if self.padding_idx is not None else ""
        pad += f", max_norm={self.max_norm}" if self.max_norm is not None else ""
        pad += ", scale_grad_by_freq=True" if self.scale_grad_by_freq else ""
        return f"{self.num_embeddings}, {self.embedding_dim}{pad}"


class LayerNorm(Module):
    """Normalise over the trailing `normalized_shape` dims, then scale by `weight` (ones)
    and shift by `bias` (zeros). Article 2.2.5.4."""

    def __init__(self, normalized_shape, eps=1e-5, elementwise_affine=True, bias=True,
                 device=None, dtype=None):
        super().__init__()
        self.normalized_shape = _trailing_shape("LayerNorm", normalized_shape)
        self.eps = eps
        self.register_parameter("weight", None)
        self.register_parameter("bias", None)
        if elementwise_affine:
            self.weight = Parameter(creation.ones(self.normalized_shape, device=device,
                                                  dtype=dtype))
            if bias:
                self.bias = Parameter(creation.zeros(self.normalized_shape, device=device,
                                                     dtype=dtype))

    def reset_parameters(self):
        """weight back to ones and bias to zeros (a model-wide re-initialisation's call)."""
        _reset_norm(self)

    def forward(self, input):
        return F.layer_norm(input, self.normalized_shape, self.weight, self.bias, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.weight is not None}, bias={self.bias is not None}")


class RMSNorm(Module):
    """F.rms_norm over the trailing `normalized_shape` dims, scaled by `weight` (ones), as
    torch.nn.RMSNorm; eps None: the input dtype's machine epsilon."""

    def __init__(self, normalized_shape, eps=None, elementwise_affine=True, device=None,
                 dtype=None):
        super().__init__()
        self.normalized_shape = _trailing_shape("RMSNorm", normalized_shape)
        self.eps = eps
        self.register_parameter("weight", None)
        if elementwise_affine:
            self.weight = Parameter(creation.ones(self.normalized_shape, device=device,
                                                  dtype=dtype))

    def reset_parameters(self):
        """weight back to ones."""
        _reset_norm(self)

    def forward(self, x):      # torch.nn.RMSNorm names its input x, unlike the other layers
        return F.rms_norm(x, self.normalized_shape, self.weight, self.eps)

    def extra_repr(self):
        return (f"{self.normalized_shape}, eps={self.eps}, "
                f"elementwise_affine={self.weight is not None}")


def _trailing_shape(layer, shape):
    """normalized_shape as a tuple of sizes: an int (a NumPy one too) is one trailing dim,
    as PyTorch's; anything else but a sequence of ints an error naming it."""
    if backend.is_integer(shape):
        shape = (shape,)
    elif not isinstance(shape, (tuple, list)):
        raise TypeError(f"{layer}: normalized_shape must be an int or a tuple of ints (the "
                        f"trailing dims to normalise), got {type(shape).__name__} {shape!r}")
    _check_sizes(layer, **{f"normalized_shape[{i}]": n for i, n in enumerate(shape)})
    return tuple(int(n) for n in shape)


def _reset_norm(m):
    """LayerNorm's and RMSNorm's reset_parameters: weight ones, bias zeros."""
    if m.weight is not None:
        init.ones_(m.weight)
    if getattr(m, "bias", None) is not None:
        init.zeros_(m.bias)


class Dropout(Module):
    """Zero elements with probability p while training; the identity in eval mode."""

    def __init__(self, p=0.5, inplace=False):
        super().__init__()
        if not 0.0 <= number_arg(type(self).__name__, "p", p) <= 1.0:
            raise ValueError(f"{type(self).__name__}: probability must be in [0, 1], got {p}")
        self.p, self.inplace = p, inplace

    def forward(self, input):
        return F.dropout(input, self.p, self.training, self.inplace)

    def extra_repr(self):
        return f"p={self.p}, inplace={self.inplace}"


class _Activation(Module):
    """An activation module with PyTorch's `inplace` flag: True writes the result into the
    input and returns it, as PyTorch's (F's `inplace`: recorded by autograd in grad mode,
    refused for a leaf that requires grad)."""

    def __init__(self, inplace=False):
        super().__init__()
        self.inplace = inplace

    def extra_repr(self):
        return "inplace=True" if self.inplace else ""


class ReLU(_Activation):
    def forward(self, input):
        return F.relu(input, self.inplace)


class GELU(Module):
    def __init__(self, approximate="none"):
        super().__init__()
        self.approximate = approximate

    def forward(self, input):
        return F.gelu(input, self.approximate)

    def extra_repr(self):
        return f"approximate={self.approximate!r}"


class SiLU(_Activation):
    def forward(self, input):
        return F.silu(input, self.inplace)


class LeakyReLU(_Activation):
    def __init__(self, negative_slope=0.01, inplace=False):
        super().__init__(inplace)
        self.negative_slope = negative_slope

    def forward(self, input):
        return F.leaky_relu(input, self.negative_slope, self.inplace)

    def extra_repr(self):
        return ", ".join([f"negative_slope={self.negative_slope}"] +
                         [super().extra_repr()] * self.inplace)


class Softplus(Module):
    def __init__(self, beta=1.0, threshold=20.0):
        super().__init__()
        self.beta, self.threshold = beta, threshold

    def forward(self, input):
        return F.softplus(input, self.beta, self.threshold)

    def extra_repr(self):
        return f"beta={self.beta}, threshold={self.threshold}"


class ELU(_Activation):
    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(inplace)
        self.alpha = alpha

    def forward(self, input):
        return F.elu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return ", ".join([f"alpha={self.alpha}"] + [super().extra_repr()] * self.inplace)


class Tanh(Module):
    def forward(self, input):
        return input.tanh()


class Sigmoid(Module):
    def forward(self, input):
        return input.sigmoid()


class Identity(Module):
    def forward(self, input):
        return input


class Flatten(Module):
    """Dims start_dim..end_dim merged into one; the default keeps dim 0, the batch."""

    def __init__(self, start_dim=1, end_dim=-1):
        super().__init__()
        self.start_dim, self.end_dim = start_dim, end_dim

    def forward(self, input):
        return input.flatten(self.start_dim, self.end_dim)

    def extra_repr(self):
        return f"start_dim={self.start_dim}, end_dim={self.end_dim}"


class Unflatten(Module):
    """Dim `dim` split into `unflattened_size` (a tuple of ints, one may be -1): the inverse
    of Flatten. PyTorch's named-dim form (a str dim) is not supported."""

    def __init__(self, dim, unflattened_size):
        super().__init__()
        if not backend.is_integer(dim):
            raise TypeError(f"Unflatten: dim must be an int, got {dim!r}")
        if not isinstance(unflattened_size, (tuple, list)) or not all(
                backend.is_integer(s) for s in unflattened_size):
            raise TypeError(f"Unflatten: unflattened_size must be a tuple of ints, got "
                            f"{unflattened_size!r}")
        self.dim, self.unflattened_size = dim, unflattened_size

    def forward(self, input):
        return input.unflatten(self.dim, self.unflattened_size)

    def extra_repr(self):
        return f"dim={self.dim}, unflattened_size={self.unflattened_size}"


class Softmax(Module):
    """dim=None: PyTorch's deprecated implicit choice, with its warning (ops/softmax.py's
    implicit_dim)."""
    def __init__(self, dim=None):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.softmax(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class LogSoftmax(Softmax):
    def forward(self, input):
        return F.log_softmax(input, self.dim)


class Bilinear(Module):
    """y = x1ᵀ·W_o·x2 + b_o for each output o: weight (out, in1, in2) and bias (out,),
    both ~ U(±1/√in1) as PyTorch's."""

    def __init__(self, in1_features, in2_features, out_features, bias=True, device=None,
                 dtype=None):
        super().__init__()
        _check_sizes("Bilinear", in1_features=in1_features, in2_features=in2_features,
                     out_features=out_features)
        self.in1_features, self.in2_features = in1_features, in2_features
        self.out_features = out_features
        add_weight_and_bias(self, (out_features, in1_features, in2_features), bias, device,
                            dtype)
        self.reset_parameters()

    def reset_parameters(self):
        bound = 1 / math.sqrt(self.in1_features) if self.in1_features else 0
        init.uniform_(self.weight, -bound, bound)
        if self.bias is not None:
            init.uniform_(self.bias, -bound, bound)

    def forward(self, input1, input2):
        return F.bilinear(input1, input2, self.weight, self.bias)

    def extra_repr(self):
        return (f"in1_features={self.in1_features}, in2_features={self.in2_features}, "
                f"out_features={self.out_features}, bias={self.bias is not None}")
