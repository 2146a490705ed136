"""More activation modules — GLU, Hardtanh, ReLU6, LogSigmoid, Mish, Softsign, SELU, the
learnable PReLU, CELU, Hardswish, Hardsigmoid, Hardshrink, Softshrink, Tanhshrink,
Threshold, Softmin and RReLU — and the distance modules CosineSimilarity and
PairwiseDistance. Each is its function in minigrad.functional; names, arguments, reprs and
parameter names follow PyTorch."""
from minigrad import creation, functional as F
from minigrad.autograd import no_grad
from minigrad.nn.layers import _Activation, _check_sizes, Softmax
from minigrad.nn.module import Module, Parameter


class GLU(Module):
    """a·σ(b), a and b the halves of the input along `dim`."""

    def __init__(self, dim=-1):
        super().__init__()
        self.dim = dim

    def forward(self, input):
        return F.glu(input, self.dim)

    def extra_repr(self):
        return f"dim={self.dim}"


class Hardtanh(_Activation):
    """x limited to [min_val, max_val]; PyTorch's module asks max_val > min_val."""

    def __init__(self, min_val=-1.0, max_val=1.0, inplace=False):
        super().__init__(inplace)
        if not max_val > min_val:
            raise ValueError(f"{type(self).__name__}: max_val must be greater than min_val, "
                             f"got min_val={min_val}, max_val={max_val}")
        self.min_val, self.max_val = min_val, max_val

    def forward(self, input):
        return F.hardtanh(input, self.min_val, self.max_val, self.inplace)

    def extra_repr(self):
        return ", ".join([f"min_val={self.min_val}, max_val={self.max_val}"] +
                         [super().extra_repr()] * self.inplace)


class ReLU6(Hardtanh):
    """min(max(x, 0), 6)."""

    def __init__(self, inplace=False):
        super().__init__(0.0, 6.0, inplace)

    def extra_repr(self):
        return _Activation.extra_repr(self)


class LogSigmoid(Module):
    def forward(self, input):
        return F.logsigmoid(input)


class Mish(_Activation):
    def forward(self, input):
        return F.mish(input, self.inplace)


class Softsign(Module):
    def forward(self, input):
        return F.softsign(input)


class SELU(_Activation):
    def forward(self, input):
        return F.selu(input, self.inplace)


class PReLU(Module):
    """x where x > 0, else weight·x, with a learned `weight`: one slope for all channels
    (num_parameters=1) or one per channel (dim 1 of the input), each starting at `init`."""

    def __init__(self, num_parameters=1, init=0.25, device=None, dtype=None):
        super().__init__()
        _check_sizes("PReLU", num_parameters=num_parameters)
        self.num_parameters, self.init = num_parameters, init
        self.weight = Parameter(creation.zeros(num_parameters, device=device, dtype=dtype))
        self.reset_parameters()

    def reset_parameters(self):
        with no_grad():
            self.weight.fill_(self.init)

    def forward(self, input):
        return F.prelu(input, self.weight)

    def extra_repr(self):
        return f"num_parameters={self.num_parameters}"


class CosineSimilarity(Module):
    """F.cosine_similarity(x1, x2, dim, eps)."""

    def __init__(self, dim=1, eps=1e-8):
        super().__init__()
        self.dim, self.eps = dim, eps

    def forward(self, x1, x2):
        return F.cosine_similarity(x1, x2, self.dim, self.eps)


class PairwiseDistance(Module):
    """F.pairwise_distance(x1, x2, p, eps, keepdim): the p-norm of x1 - x2 + eps over the
    last dim."""

    def __init__(self, p=2.0, eps=1e-6, keepdim=False):
        super().__init__()
        self.norm, self.eps, self.keepdim = p, eps, keepdim

    def forward(self, x1, x2):
        return F.pairwise_distance(x1, x2, self.norm, self.eps, self.keepdim)


class CELU(_Activation):
    """x where x > 0, else α(e^(x/α) - 1)."""

    def __init__(self, alpha=1.0, inplace=False):
        super().__init__(inplace)
        self.alpha = alpha

    def forward(self, input):
        return F.celu(input, self.alpha, self.inplace)

    def extra_repr(self):
        return ", ".join([f"alpha={self.alpha}"] + [super().extra_repr()] * self.inplace)


class _NoInplaceRepr(_Activation):
    """Takes `inplace` but leaves it out of the repr, as PyTorch's Hardswish and
    Hardsigmoid."""

    def extra_repr(self):
        return ""


class Hardswish(_NoInplaceRepr):
    """x·relu6(x + 3)/6."""

    def forward(self, input):
        return F.hardswish(input, self.inplace)


class Hardsigmoid(_NoInplaceRepr):
    """relu6(x + 3)/6."""

    def forward(self, input):
        return F.hardsigmoid(input, self.inplace)


class _Shrink(Module):
    def __init__(self, lambd=0.5):
        super().__init__()
        self.lambd = lambd

    def extra_repr(self):
        return f"{self.lambd}"


class Hardshrink(_Shrink):
    """0 where |x| ≤ λ, else x."""

    def forward(self, input):
        return F.hardshrink(input, self.lambd)


class Softshrink(_Shrink):
    """x moved towards 0 by λ, 0 where |x| ≤ λ."""

    def forward(self, input):
        return F.softshrink(input, self.lambd)


class Tanhshrink(Module):
    def forward(self, input):
        return F.tanhshrink(input)


class Threshold(_Activation):
    """x where x > threshold, else value."""

    def __init__(self, threshold, value, inplace=False):
        super().__init__(inplace)
        self.threshold, self.value = threshold, value

    def forward(self, input):
        return F.threshold(input, self.threshold, self.value, self.inplace)

    def extra_repr(self):
        return ", ".join([f"threshold={self.threshold}, value={self.value}"] +
                         [super().extra_repr()] * self.inplace)


class Softmin(Softmax):
    """softmax(-x) along dim."""

    def forward(self, input):
        return F.softmin(input, self.dim)


class RReLU(_Activation):
    """x where x > 0, else a·x: a drawn from U(lower, upper) per element while training,
    the mean slope (lower + upper)/2 in eval mode."""

    def __init__(self, lower=1.0 / 8, upper=1.0 / 3, inplace=False):
        super().__init__(inplace)
        self.lower, self.upper = lower, upper

    def forward(self, input):
        return F.rrelu(input, self.lower, self.upper, self.training, self.inplace)

    def extra_repr(self):
        return ", ".join([f"lower={self.lower}, upper={self.upper}"] +
                         [super().extra_repr()] * self.inplace)
