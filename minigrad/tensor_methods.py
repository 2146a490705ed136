"""The Tensor's method spellings of the ops (x.exp(), x.sum(dim), x.reshape(...)): PyTorch's
names, each a one-line call into the op in `minigrad/ops/` that implements it. `Tensor`
(tensor.py) inherits them; its own file keeps the data, autograd state and operators."""
from minigrad.args import dim_arg as _dim, keepdim_arg as _kd, shape_args as _shape_args

ops = None      # the package minigrad.ops, bound by tensor.py once Tensor exists: the ops
                # import Tensor, and Tensor's class statement needs this file first


class TensorMethods:
    __slots__ = ()          # Tensor's own __slots__ stay the only attributes

    # ---- elementwise functions --------------------------------------------------------
    def exp(self): return ops.elementwise.exp(self)
    def log(self): return ops.elementwise.log(self)
    def sqrt(self): return ops.elementwise.sqrt(self)
    def abs(self): return ops.elementwise.abs(self)
    def tanh(self): return ops.elementwise.tanh(self)
    def sigmoid(self): return ops.elementwise.sigmoid(self)
    def relu(self): return ops.elementwise.relu(self)
    def erf(self): return ops.elementwise.erf(self)
    def sin(self): return ops.math.sin(self)
    def cos(self): return ops.math.cos(self)
    def log1p(self): return ops.math.log1p(self)
    def expm1(self): return ops.math.expm1(self)
    # piecewise constant: gradient 0 (as PyTorch); integers come back unchanged
    def sign(self): return ops.math.sign(self)
    def floor(self): return ops.math.floor(self)
    def ceil(self): return ops.math.ceil(self)
    def trunc(self): return ops.math.trunc(self)
    def round(self, *, decimals=0): return ops.math.round(self, decimals=decimals)
    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return ops.math.nan_to_num(self, nan, posinf, neginf)
    def gelu(self, approximate="none"): return ops.gelu.gelu(self, approximate)
    def maximum(self, o): return ops.elementwise.maximum(self, o)
    def minimum(self, o): return ops.elementwise.minimum(self, o)
    def clip(self, min=None, max=None): return ops.elementwise.clip(self, min, max)
    clamp = clip
    def masked_fill(self, mask, value): return ops.elementwise.masked_fill(self, mask, value)
    def softmax(self, dim=-1): return ops.softmax.softmax(self, dim)
    def multinomial(self, num_samples, replacement=False):
        from minigrad.creation import multinomial       # creation.py imports this module
        return multinomial(self, num_samples, replacement)
    def log_softmax(self, dim=-1): return ops.softmax.log_softmax(self, dim)

    # ---- reductions (dim/keepdim as PyTorch; axis/keepdims accepted too) ----------------
    def sum(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return ops.reduce.sum(self, _dim(dim, axis), _kd(keepdim, keepdims))

    def mean(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return ops.reduce.mean(self, _dim(dim, axis), _kd(keepdim, keepdims))

    def var(self, dim=None, keepdim=False, *, correction=1, unbiased=None, axis=None,
            keepdims=None):
        if unbiased is not None:
            correction = 1 if unbiased else 0
        return ops.reduce.var(self, _dim(dim, axis), _kd(keepdim, keepdims), correction)

    def std(self, dim=None, keepdim=False, *, correction=1, unbiased=None, axis=None,
            keepdims=None):
        if unbiased is not None:
            correction = 1 if unbiased else 0
        return ops.reduce.std(self, _dim(dim, axis), _kd(keepdim, keepdims), correction)

    def max(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """Without dim: the largest element. With dim: a (values, indices) named tuple, as
        PyTorch (`.values`, `.indices`, or unpack it)."""
        return ops.reduce.extremum("max", self, _dim(dim, axis), _kd(keepdim, keepdims))

    def min(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        return ops.reduce.extremum("min", self, _dim(dim, axis), _kd(keepdim, keepdims))

    def amax(self, dim=None, keepdim=False): return ops.reduce.amax("max", self, dim, keepdim)
    def amin(self, dim=None, keepdim=False): return ops.reduce.amax("min", self, dim, keepdim)
    def prod(self, dim=None, keepdim=False): return ops.reduce.prod(self, dim, keepdim)
    def norm(self, p="fro", dim=None, keepdim=False): return ops.norms.norm(self, p, dim, keepdim)
    def logsumexp(self, dim, keepdim=False): return ops.reduce.logsumexp(self, dim, keepdim)
    def cumsum(self, dim): return ops.reduce.cumsum(self, dim)
    def any(self, dim=None, keepdim=False): return ops.reduce.logical("any", self, dim, keepdim)
    def all(self, dim=None, keepdim=False): return ops.reduce.logical("all", self, dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        return ops.reduce.arg("argmax", self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return ops.reduce.arg("argmin", self, dim, keepdim)

    # ---- shape ------------------------------------------------------------------------
    def reshape(self, *shape): return ops.shape.reshape(self, _shape_args(shape, "reshape"))
    def view(self, *shape): return ops.shape.view(self, _shape_args(shape, "view"))
    def flatten(self, start_dim=0, end_dim=-1): return ops.shape.flatten(self, start_dim, end_dim)
    def unflatten(self, dim, sizes): return ops.shape.unflatten(self, dim, sizes)
    def permute(self, *dims): return ops.shape.permute(self, _shape_args(dims, "permute"))
    def transpose(self, dim0, dim1): return ops.shape.transpose(self, dim0, dim1)
    swapaxes = transpose
    def squeeze(self, dim=None): return ops.shape.squeeze(self, dim)
    def unsqueeze(self, dim): return ops.shape.unsqueeze(self, dim)
    def expand(self, *shape): return ops.shape.expand(self, _shape_args(shape, "expand"))
    def expand_as(self, other): return ops.shape.expand(self, other.shape)
    def view_as(self, other): return ops.shape.view(self, other.shape)
    def reshape_as(self, other): return ops.shape.reshape(self, other.shape)
    def flip(self, *dims): return ops.shape.flip(self, _shape_args(dims, "flip"))
    def repeat(self, *sizes): return ops.shape.repeat(self, _shape_args(sizes, "repeat"))
    def roll(self, shifts, dims=None): return ops.shape.roll(self, shifts, dims)
    def tril(self, diagonal=0): return ops.shape.tril(self, diagonal)
    def triu(self, diagonal=0): return ops.shape.triu(self, diagonal)
    def split(self, split_size, dim=0): return ops.shape.split(self, split_size, dim)
    def chunk(self, chunks, dim=0): return ops.shape.chunk(self, chunks, dim)
    def unbind(self, dim=0): return ops.shape.unbind(self, dim)
    def __getitem__(self, index): return ops.index.getitem(self, index)
    def gather(self, dim, index): return ops.index.gather(self, dim, index)
    def index_select(self, dim, index): return ops.index.index_select(self, dim, index)
    def masked_select(self, mask): return ops.index.masked_select(self, mask)
    def sort(self, dim=-1, descending=False): return ops.index.sort(self, dim, descending)
    def argsort(self, dim=-1, descending=False): return self.sort(dim, descending)[1]
    def nonzero(self, as_tuple=False): return ops.index.nonzero(self, as_tuple)
    def topk(self, k, dim=-1, largest=True, sorted=True):
        return ops.index.topk(self, k, dim, largest, sorted)
    def narrow(self, dim, start, length): return ops.shape.narrow(self, dim, start, length)
    def scatter(self, dim, index, src=None, *, value=None, reduce=None):
        return ops.scatter.scatter(self, dim, index, src, value=value, reduce=reduce)
    def scatter_add(self, dim, index, src): return ops.scatter.scatter_add(self, dim, index, src)
    def index_add(self, dim, index, source, *, alpha=1):
        return ops.scatter.index_add(self, dim, index, source, alpha=alpha)
    def repeat_interleave(self, repeats=None, dim=None, *, output_size=None):
        return ops.repeat.repeat_interleave(self, repeats, dim, output_size=output_size)
    def unique(self, sorted=True, return_inverse=False, return_counts=False, dim=None):
        return ops.repeat.unique(self, sorted, return_inverse, return_counts, dim)

