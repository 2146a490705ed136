"""The Tensor's method spellings of the ops (x.exp(), x.sum(dim), x.reshape(...)): PyTorch's
names, each a one-line call into the op in `minigrad/ops/` that implements it. `Tensor`
(tensor.py) inherits them; its own file keeps the data, autograd state and in-place
operators, tensor_operators.py the other operators."""
from minigrad.args import dim_arg as _dim, keepdim_arg as _kd, shape_args as _shape_args
from minigrad.args import type_name as _type_name, type_target as _type_target
from minigrad.args import cast_to as _cast, spread_args
from minigrad import memory_format as _mf
from minigrad.tensor_more import TensorMore

def _other(other, op):
    """The tensor argument of t.view_as(other) and its kin, or an error naming it."""
    if not isinstance(other, TensorMethods):
        raise TypeError(f"{op}: expected a Tensor, got {type(other).__name__}")
    return other


ops = None      # the package minigrad.ops, bound by tensor.py once Tensor exists: the ops
                # import Tensor, and Tensor's class statement needs this file first


class TensorMethods(TensorMore):    # (tensor_more.py: unfold, sum_to_size, mH...)
    __slots__ = ()          # Tensor's own __slots__ stay the only attributes

    # ---- elementwise functions --------------------------------------------------------
    def exp(self): return ops.elementwise.exp(self)
    def log(self): return ops.elementwise.log(self)
    def sqrt(self): return ops.elementwise.sqrt(self)
    def abs(self): return ops.elementwise.abs(self)
    absolute = abs
    def tanh(self): return ops.elementwise.tanh(self)
    def sigmoid(self): return ops.elementwise.sigmoid(self)
    def relu(self): return ops.elementwise.relu(self)
    def erf(self): return ops.elementwise.erf(self)
    def sin(self): return ops.math.sin(self)
    def cos(self): return ops.math.cos(self)
    def tan(self): return ops.math.tan(self)
    def sinh(self): return ops.math.sinh(self)
    def cosh(self): return ops.math.cosh(self)
    # the rest of torch's elementwise math (ops/math_extra.py), shape helpers
    # (ops/shape_extra.py) and bitwise ops (ops/bitwise.py)
    def asin(self): return ops.math_extra.asin(self)
    def acos(self): return ops.math_extra.acos(self)
    def atan(self): return ops.math_extra.atan(self)
    def asinh(self): return ops.math_extra.asinh(self)
    def acosh(self): return ops.math_extra.acosh(self)
    def atanh(self): return ops.math_extra.atanh(self)
    arcsin, arccos, arctan, arcsinh, arccosh, arctanh = asin, acos, atan, asinh, acosh, atanh
    def erfc(self): return ops.math_extra.erfc(self)
    def sinc(self): return ops.math_extra.sinc(self)
    def deg2rad(self): return ops.math_extra.deg2rad(self)
    def rad2deg(self): return ops.math_extra.rad2deg(self)
    def hypot(self, other): return ops.math_extra.hypot(self, other)
    def copysign(self, other): return ops.math_extra.copysign(self, other)
    def logaddexp(self, other): return ops.math_extra.logaddexp(self, other)
    def logaddexp2(self, other): return ops.math_extra.logaddexp2(self, other)
    def fmax(self, other): return ops.math_extra.fmax(self, other)
    def fmin(self, other): return ops.math_extra.fmin(self, other)
    def heaviside(self, values): return ops.math_extra.heaviside(self, values)
    def float_power(self, exponent): return ops.math_extra.float_power(self, exponent)
    def ldexp(self, other): return ops.math_extra.ldexp(self, other)
    def positive(self): return ops.math_extra.positive(self)
    def sgn(self): return ops.math_extra.sgn(self)
    def fix(self): return ops.math_extra.fix(self)
    def signbit(self): return ops.math_extra.signbit(self)
    def isposinf(self): return ops.math_extra.isposinf(self)
    def isneginf(self): return ops.math_extra.isneginf(self)
    def bitwise_and(self, other): return ops.bitwise.bitwise_and(self, other)
    def bitwise_or(self, other): return ops.bitwise.bitwise_or(self, other)
    def bitwise_xor(self, other): return ops.bitwise.bitwise_xor(self, other)
    def bitwise_not(self): return ops.bitwise.bitwise_not(self)
    def bitwise_left_shift(self, other): return ops.bitwise.bitwise_left_shift(self, other)
    def bitwise_right_shift(self, other): return ops.bitwise.bitwise_right_shift(self, other)
    def __lshift__(self, other): return ops.bitwise.bitwise_left_shift(self, other)
    def __rlshift__(self, other): return ops.bitwise.bitwise_left_shift(other, self)
    def __rshift__(self, other): return ops.bitwise.bitwise_right_shift(self, other)
    def __rrshift__(self, other): return ops.bitwise.bitwise_right_shift(other, self)
    # x &= y ... written into x, as PyTorch's (without these Python would rebind x to x & y,
    # and another name for x, or a view of it, would not see the change)
    def __iand__(self, o): return ops.inplace.update(self, "&=", ops.bitwise.bitwise_and, o)
    def __ior__(self, o): return ops.inplace.update(self, "|=", ops.bitwise.bitwise_or, o)
    def __ixor__(self, o): return ops.inplace.update(self, "^=", ops.bitwise.bitwise_xor, o)
    def __ilshift__(self, o):
        return ops.inplace.update(self, "<<=", ops.bitwise.bitwise_left_shift, o)
    def __irshift__(self, o):
        return ops.inplace.update(self, ">>=", ops.bitwise.bitwise_right_shift, o)
    def gcd(self, other): return ops.bitwise.gcd(self, other)
    def lcm(self, other): return ops.bitwise.lcm(self, other)
    def ravel(self): return ops.shape_extra.ravel(self)
    def fliplr(self): return ops.shape_extra.fliplr(self)
    def flipud(self): return ops.shape_extra.flipud(self)
    def hsplit(self, sections): return ops.shape_extra.hsplit(self, sections)
    def vsplit(self, sections): return ops.shape_extra.vsplit(self, sections)
    def dsplit(self, sections): return ops.shape_extra.dsplit(self, sections)
    def split_with_sizes(self, split_sizes, dim=0):
        return ops.shape_extra.split_with_sizes(self, split_sizes, dim)
    def diagflat(self, offset=0): return ops.shape_extra.diagflat(self, offset)
    # about the tensor (torch's spellings; minigrad has one GPU, "cuda", and no complex)
    is_cuda = property(lambda self: self.device == "cuda")
    is_cpu = property(lambda self: self.device == "cpu")
    itemsize = property(lambda self: self.dtype.itemsize)            # bytes per element
    nbytes = property(lambda self: self.numel() * self.dtype.itemsize)  # of the elements
    def get_device(self): return ops.shape_extra.get_device(self)
    def is_signed(self): return ops.shape_extra.is_signed(self)
    def is_complex(self): return ops.shape_extra.is_complex(self)
    def is_nonzero(self): return ops.shape_extra.is_nonzero(self)
    def is_same_size(self, other): return ops.shape_extra.is_same_size(self, other)
    def log1p(self): return ops.math.log1p(self)
    def expm1(self): return ops.math.expm1(self)
    def log2(self): return ops.math.log2(self)
    def log10(self): return ops.math.log10(self)
    def exp2(self): return ops.math.exp2(self)
    def atan2(self, other): return ops.math.atan2(self, other)
    arctan2 = atan2
    def fmod(self, other): return ops.math.fmod(self, other)
    def frac(self): return ops.math.frac(self)
    def lerp(self, end, weight): return ops.math.lerp(self, end, weight)
    def addcmul(self, tensor1, tensor2, *, value=1):
        return ops.math.addcmul(self, tensor1, tensor2, value=value)
    def addcdiv(self, tensor1, tensor2, *, value=1):
        return ops.math.addcdiv(self, tensor1, tensor2, value=value)
    def addmm(self, mat1, mat2, *, beta=1, alpha=1):
        return ops.matmul.addmm(self, mat1, mat2, beta=beta, alpha=alpha)
    def cross(self, other, dim=None): return ops.matmul.cross(self, other, dim)
    # linear algebra (ops/linalg.py, linalg_decomp.py, linalg_solvers.py, linalg_lu.py,
    # linalg_householder.py),
    # indexing (ops/index_more.py), statistics (ops/statistics_more.py): imported by
    # minigrad/__init__.py
    def mv(self, vec): return ops.linalg.mv(self, vec)
    def inner(self, other): return ops.linalg.inner(self, other)
    def vdot(self, other): return ops.linalg.vdot(self, other)
    def kron(self, other): return ops.linalg.kron(self, other)
    def matrix_power(self, n): return ops.linalg.matrix_power(self, n)
    def det(self): return ops.linalg.det(self)
    def logdet(self): return ops.linalg.logdet(self)
    def slogdet(self): return ops.linalg.slogdet(self)
    def inverse(self): return ops.linalg.inv(self)
    def cholesky(self, upper=False): return ops.linalg.cholesky(self, upper)
    def qr(self, some=True): return ops.linalg_decomp.qr_some(self, some)
    def svd(self, some=True, compute_uv=True):
        return ops.linalg_decomp.svd_v(self, some, compute_uv)
    def pinverse(self, rcond=1e-15): return ops.linalg_solvers.pinverse(self, rcond)
    def matrix_exp(self): return ops.linalg_solvers.matrix_exp(self)
    def orgqr(self, input2): return ops.linalg_householder.orgqr(self, input2)
    def lu(self, pivot=True, get_infos=False):
        return ops.linalg_lu.lu_legacy(self, pivot, get_infos)
    def lu_solve(self, LU_data, LU_pivots):
        return ops.linalg_lu.lu_solve_legacy(self, LU_data, LU_pivots)
    def cholesky_solve(self, input2, upper=False):
        return ops.linalg_lu.cholesky_solve(self, input2, upper)
    def cholesky_inverse(self, upper=False): return ops.linalg_lu.cholesky_inverse(self, upper)
    def take(self, index): return ops.index_more.take(self, index)
    def argwhere(self): return ops.index_more.argwhere(self)
    def index_copy(self, dim, index, source):
        return ops.index_more.index_copy(self, dim, index, source)
    def index_copy_(self, dim, index, source):
        return ops.inplace.method(self, "index_copy_", lambda x, s: ops.index_more.index_copy(
            x, dim, index, s), source)
    def index_put(self, indices, values, accumulate=False):
        return ops.index_more.index_put(self, indices, values, accumulate)
    def index_put_(self, indices, values, accumulate=False):
        return ops.inplace.method(self, "index_put_", lambda x, v: ops.index_more.index_put(
            x, indices, v, accumulate), values)
    def masked_scatter(self, mask, source):
        return ops.index_more.masked_scatter(self, mask, source)
    def masked_scatter_(self, mask, source):
        return ops.inplace.method(self, "masked_scatter_", lambda x, s: ops.index_more
                                  .masked_scatter(x, mask, s), source)
    def scatter_reduce(self, dim, index, src, reduce, *, include_self=True):
        return ops.index_more.scatter_reduce(self, dim, index, src, reduce,
                                             include_self=include_self)
    def scatter_reduce_(self, dim, index, src, reduce, *, include_self=True):
        return ops.inplace.method(self, "scatter_reduce_", lambda x, s: ops.index_more
                                  .scatter_reduce(x, dim, index, s, reduce,
                                                  include_self=include_self), src)
    def index_fill(self, dim, index, value):
        return ops.index_more.index_fill(self, dim, index, value)
    def quantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return ops.statistics_more.quantile(self, q, dim, keepdim, interpolation=interpolation)
    def nanquantile(self, q, dim=None, keepdim=False, *, interpolation="linear"):
        return ops.statistics_more.nanquantile(self, q, dim, keepdim,
                                               interpolation=interpolation)
    def nanmedian(self, dim=None, keepdim=False):
        return ops.statistics_more.nanmedian(self, dim, keepdim)
    def mode(self, dim=-1, keepdim=False): return ops.statistics_more.mode(self, dim, keepdim)
    def cov(self, *, correction=1, fweights=None, aweights=None):
        return ops.statistics_more.cov(self, correction=correction, fweights=fweights,
                                       aweights=aweights)
    def corrcoef(self): return ops.statistics_more.corrcoef(self)
    def dist(self, other, p=2): return ops.statistics_more.dist(self, other, p)
    def histc(self, bins=100, min=0, max=0): return ops.statistics_more.histc(self, bins, min, max)
    def register_post_accumulate_grad_hook(self, hook):
        """Call hook(tensor) after backward() has accumulated this leaf's .grad (as
        PyTorch's; mg.grad accumulates nothing, so it calls none). Returns a handle."""
        from minigrad.grad_hooks import register_post_accumulate_grad_hook
        return register_post_accumulate_grad_hook(self, hook)
    # special functions (ops/special.py)
    def lgamma(self): return ops.special.lgamma(self)
    def digamma(self): return ops.special.digamma(self)
    def polygamma(self, n): return ops.special.polygamma(n, self)
    def erfinv(self): return ops.special.erfinv(self)
    def xlogy(self, other): return ops.special.xlogy(self, other)
    def logit(self, eps=None): return ops.special.logit(self, eps)
    # torch's remaining functions that are also its methods (ops/torch_extra*.py,
    # ops/shape_extra.py, ops/matmul.py)
    def frexp(self): return ops.torch_extra.frexp(self)
    def nextafter(self, other): return ops.torch_extra.nextafter(self, other)
    def i0(self): return ops.torch_extra.i0(self)
    def igamma(self, other): return ops.torch_extra.igamma(self, other)
    def igammac(self, other): return ops.torch_extra.igammac(self, other)
    def mvlgamma(self, p): return ops.torch_extra.mvlgamma(self, p)
    def renorm(self, p, dim, maxnorm): return ops.torch_extra.renorm(self, p, dim, maxnorm)
    def angle(self): return ops.torch_extra.angle(self)
    def conj(self): return ops.torch_extra.conj(self)
    def isreal(self): return ops.torch_extra.isreal(self)
    real = property(lambda self: ops.torch_extra.real(self))              # itself
    imag = property(lambda self: ops.torch_extra.imag(self))              # an error
    def select_scatter(self, src, dim, index):
        return ops.torch_extra_index.select_scatter(self, src, dim, index)
    def slice_scatter(self, src, dim=0, start=None, end=None, step=1):
        return ops.torch_extra_index.slice_scatter(self, src, dim, start, end, step)
    def diagonal_scatter(self, src, offset=0, dim1=0, dim2=1):
        return ops.torch_extra_index.diagonal_scatter(self, src, offset, dim1, dim2)
    def put(self, index, source, accumulate=False):
        return ops.torch_extra_index.put(self, index, source, accumulate)
    def index_reduce(self, dim, index, source, reduce, *, include_self=True):
        return ops.torch_extra_index.index_reduce(self, dim, index, source, reduce,
                                            include_self=include_self)
    def unique_consecutive(self, return_inverse=False, return_counts=False, dim=None):
        return ops.torch_extra_index.unique_consecutive(self, return_inverse, return_counts, dim)
    def histogram(self, bins=100, *, range=None, weight=None, density=False):
        return ops.torch_extra_index.histogram(self, bins, range=range, weight=weight,
                                         density=density)
    def msort(self): return ops.shape_extra.msort(self)
    def adjoint(self): return ops.shape_extra.adjoint(self)
    def addmv(self, mat, vec, *, beta=1, alpha=1):
        return ops.matmul.addmv(self, mat, vec, beta=beta, alpha=alpha)
    def addr(self, vec1, vec2, *, beta=1, alpha=1):
        return ops.matmul.addr(self, vec1, vec2, beta=beta, alpha=alpha)
    def addbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return ops.matmul.addbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    def baddbmm(self, batch1, batch2, *, beta=1, alpha=1):
        return ops.matmul.baddbmm(self, batch1, batch2, beta=beta, alpha=alpha)
    def ger(self, vec2): return ops.matmul.outer(self, vec2)
    # piecewise constant: gradient 0 (as PyTorch); integers come back unchanged
    def sign(self): return ops.math.sign(self)
    def floor(self): return ops.math.floor(self)
    def ceil(self): return ops.math.ceil(self)
    def trunc(self): return ops.math.trunc(self)
    def round(self, *, decimals=0): return ops.math.round(self, decimals=decimals)
    def nan_to_num(self, nan=0.0, posinf=None, neginf=None):
        return ops.math.nan_to_num(self, nan, posinf, neginf)
    def gelu(self, approximate="none"): return ops.gelu.gelu(self, approximate)
    def maximum(self, other): return ops.elementwise.maximum(self, other)
    def minimum(self, other): return ops.elementwise.minimum(self, other)
    def clip(self, min=None, max=None): return ops.elementwise.clip(self, min, max)
    clamp = clip
    def clamp_min(self, min): return ops.elementwise.clip(self, min, None)
    def clamp_max(self, max): return ops.elementwise.clip(self, None, max)
    def masked_fill(self, mask, value): return ops.elementwise.masked_fill(self, mask, value)
    def where(self, condition, other): return ops.elementwise.where(condition, self, other)
    # logical ops: nonzero is True, any dtype in, bool out, outside the graph (as PyTorch)
    def logical_not(self): return ops.elementwise.logical_not(self)
    def logical_and(self, other): return ops.elementwise.compare("logical_and", self, other)
    def logical_or(self, other): return ops.elementwise.compare("logical_or", self, other)
    def logical_xor(self, other): return ops.elementwise.compare("logical_xor", self, other)
    def isclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return ops.math.isclose(self, other, rtol, atol, equal_nan)
    def allclose(self, other, rtol=1e-05, atol=1e-08, equal_nan=False):
        return ops.math.allclose(self, other, rtol, atol, equal_nan)
    def equal(self, other): return ops.math.equal(self, other)
    def softmax(self, dim=-1, dtype=None):
        return ops.softmax.in_dtype(ops.softmax.Softmax, self, dim, dtype, "softmax")
    def multinomial(self, num_samples, replacement=False, *, generator=None):
        from minigrad.creation import multinomial       # creation.py imports this module
        return multinomial(self, num_samples, replacement, generator=generator)
    def bernoulli(self, p=None, *, generator=None):
        from minigrad.draws import bernoulli
        return bernoulli(self, p, generator=generator)
    def log_softmax(self, dim=-1, dtype=None):
        return ops.softmax.in_dtype(ops.softmax.LogSoftmax, self, dim, dtype, "log_softmax")

    # ---- reductions (dim/keepdim as PyTorch; axis/keepdims accepted too) ----------------
    # dtype= (sum, mean, prod, cumsum, softmax): the input cast to it first, as PyTorch
    def sum(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
        return ops.reduce.sum_as(self, _dim(dim, axis), _kd(keepdim, keepdims), dtype)

    def mean(self, dim=None, keepdim=False, *, dtype=None, axis=None, keepdims=None):
        return ops.reduce.mean(_cast(self, dtype), _dim(dim, axis), _kd(keepdim, keepdims))

    def var(self, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
            keepdims=None):
        """As torch's: var(dim, unbiased, keepdim), var(unbiased), var(dim, correction=); std too"""
        dim, correction = spread_args("var", dim, unbiased, correction)
        return ops.statistics.var(self, _dim(dim, axis), _kd(keepdim, keepdims), correction)

    def std(self, dim=None, unbiased=None, keepdim=False, *, correction=None, axis=None,
            keepdims=None):
        dim, correction = spread_args("std", dim, unbiased, correction)
        return ops.statistics.std(self, _dim(dim, axis), _kd(keepdim, keepdims), correction)

    def max(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        """Without dim: the largest element. With dim: a (values, indices) named tuple, as
        PyTorch (`.values`, `.indices`, or unpack it). With a tensor: the elementwise
        maximum (as t.max(other) in PyTorch)."""
        if isinstance(dim, TensorMethods):
            return ops.elementwise.maximum(self, dim)
        return ops.reduce.extremum("max", self, _dim(dim, axis), _kd(keepdim, keepdims))

    def min(self, dim=None, keepdim=False, *, axis=None, keepdims=None):
        if isinstance(dim, TensorMethods):
            return ops.elementwise.minimum(self, dim)
        return ops.reduce.extremum("min", self, _dim(dim, axis), _kd(keepdim, keepdims))

    def amax(self, dim=None, keepdim=False): return ops.reduce.amax("max", self, dim, keepdim)
    def amin(self, dim=None, keepdim=False): return ops.reduce.amax("min", self, dim, keepdim)
    def prod(self, dim=None, keepdim=False, *, dtype=None):
        return ops.reduce.prod(self, dim, keepdim, dtype=dtype)
    def norm(self, p="fro", dim=None, keepdim=False, *, dtype=None):
        return ops.norms.norm(self, p, dim, keepdim, dtype=dtype)
    def logsumexp(self, dim, keepdim=False): return ops.reduce.logsumexp(self, dim, keepdim)
    def cumsum(self, dim, *, dtype=None): return ops.reduce.cumsum(self, dim, dtype=dtype)
    def cumprod(self, dim, *, dtype=None): return ops.cumulative.cumprod(self, dim, dtype=dtype)
    def diff(self, n=1, dim=-1, prepend=None, append=None):
        return ops.cumulative.diff(self, n, dim, prepend, append)
    def logcumsumexp(self, dim): return ops.cumulative.logcumsumexp(self, dim)
    def cummax(self, dim): return ops.cumulative.cummax(self, dim)
    def cummin(self, dim): return ops.cumulative.cummin(self, dim)
    def nansum(self, dim=None, keepdim=False, *, dtype=None):
        return ops.statistics.nansum(self, dim, keepdim, dtype=dtype)
    def nanmean(self, dim=None, keepdim=False, *, dtype=None):
        return ops.statistics.nanmean(self, dim, keepdim, dtype=dtype)
    def count_nonzero(self, dim=None): return ops.statistics.count_nonzero(self, dim)
    def aminmax(self, *, dim=None, keepdim=False):
        return ops.statistics.aminmax(self, dim=dim, keepdim=keepdim)
    def bincount(self, weights=None, minlength=0):
        return ops.statistics.bincount(self, weights, minlength)
    def kthvalue(self, k, dim=-1, keepdim=False):
        return ops.order.kthvalue(self, k, dim, keepdim)
    def median(self, dim=None, keepdim=False):
        """Without dim: the lower median. With dim: a (values, indices) named tuple."""
        return ops.order.median(self, dim, keepdim)
    def any(self, dim=None, keepdim=False): return ops.reduce.logical("any", self, dim, keepdim)
    def all(self, dim=None, keepdim=False): return ops.reduce.logical("all", self, dim, keepdim)

    def argmax(self, dim=None, keepdim=False):
        return ops.reduce.arg("argmax", self, dim, keepdim)

    def argmin(self, dim=None, keepdim=False):
        return ops.reduce.arg("argmin", self, dim, keepdim)

    # ---- shape ------------------------------------------------------------------------
    def reshape(self, *shape): return ops.shape.reshape(self, _shape_args(shape, "reshape"))
    def view(self, *shape, dtype=None): return ops.shape_extra.view(self, shape, dtype)
    def flatten(self, start_dim=0, end_dim=-1): return ops.shape.flatten(self, start_dim, end_dim)
    def unflatten(self, dim, sizes): return ops.shape.unflatten(self, dim, sizes)
    def permute(self, *dims): return ops.shape.permute(self, _shape_args(dims, "permute"))
    def transpose(self, dim0, dim1): return ops.shape.transpose(self, dim0, dim1)
    swapdims = transpose
    def swapaxes(self, axis0, axis1): return self.transpose(axis0, axis1)  # NumPy's names
    def t(self): return ops.layout.t(self)
    def movedim(self, source, destination): return ops.layout.movedim(self, source, destination)
    moveaxis = movedim
    def broadcast_to(self, *shape):
        return ops.layout.broadcast_to(self, _shape_args(shape, "broadcast_to"))
    def tile(self, *dims): return ops.layout.tile(self, _shape_args(dims, "tile"))
    def select(self, dim, index): return ops.layout.select(self, dim, index)
    def diagonal(self, offset=0, dim1=0, dim2=1):
        return ops.layout.diagonal(self, offset, dim1, dim2)
    def diag(self, diagonal=0): return ops.layout.diag(self, diagonal)
    def trace(self): return ops.layout.trace(self)
    def diag_embed(self, offset=0, dim1=-2, dim2=-1):
        return ops.layout.diag_embed(self, offset, dim1, dim2)
    def rot90(self, k=1, dims=(0, 1)): return ops.layout.rot90(self, k, dims)
    def tensor_split(self, indices_or_sections=None, dim=0, *, indices=None, sections=None):
        return ops.layout.tensor_split(self, indices_or_sections, dim, indices=indices,
                                       sections=sections)
    def squeeze(self, dim=None): return ops.shape.squeeze(self, dim)
    def unsqueeze(self, dim): return ops.shape.unsqueeze(self, dim)
    def expand(self, *shape): return ops.shape.expand(self, _shape_args(shape, "expand"))
    def expand_as(self, other): return ops.shape.expand(self, _other(other, "expand_as").shape)
    def view_as(self, other): return ops.shape.view(self, _other(other, "view_as").shape)
    def reshape_as(self, other):
        return ops.shape.reshape(self, _other(other, "reshape_as").shape)
    def flip(self, *dims): return ops.shape.flip(self, _shape_args(dims, "flip"))
    def repeat(self, *sizes): return ops.shape.repeat(self, _shape_args(sizes, "repeat"))
    def roll(self, shifts, dims=None): return ops.shape.roll(self, shifts, dims)
    def tril(self, diagonal=0): return ops.shape.tril(self, diagonal)
    def triu(self, diagonal=0): return ops.shape.triu(self, diagonal)
    def split(self, split_size, dim=0): return ops.shape.split(self, split_size, dim)
    def chunk(self, chunks, dim=0): return ops.shape.chunk(self, chunks, dim)
    def unbind(self, dim=0): return ops.shape.unbind(self, dim)
    def __getitem__(self, index): return ops.index.getitem(self, index)
    def gather(self, dim, index, *, sparse_grad=False):
        return ops.index.gather(self, dim, index, sparse_grad=sparse_grad)
    def take_along_dim(self, indices, dim=None):
        return ops.order.take_along_dim(self, indices, dim)
    def index_select(self, dim, index): return ops.index.index_select(self, dim, index)
    def masked_select(self, mask): return ops.index.masked_select(self, mask)
    def sort(self, dim=-1, descending=False, *, stable=False):
        return ops.order.sort(self, dim, descending, stable=stable)
    def argsort(self, dim=-1, descending=False, *, stable=False):
        return self.sort(dim, descending, stable=stable)[1]
    def nonzero(self, as_tuple=False): return ops.index.nonzero(self, as_tuple)
    def topk(self, k, dim=-1, largest=True, sorted=True):
        return ops.order.topk(self, k, dim, largest, sorted)
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

    # ---- about the tensor itself (PyTorch's spellings) ----------------------------------
    def ndimension(self): return self.ndim
    def nelement(self): return self.numel()
    def element_size(self): return self.dtype.itemsize                  # bytes per element
    def is_contiguous(self, memory_format=None): return _mf.is_laid_out(self, memory_format)

    def stride(self, dim=None):
        """Steps in elements between neighbours along each dim (0 along an expanded dim),
        as PyTorch's; or along one dim. A dim of size 1 has no neighbours: where NumPy gives
        it 0 (x[None]), PyTorch's rule is used, the step of the dim after it times its size
        (at least 1). So are all dims of an empty array NumPy made (its steps are all 0):
        zeros(0, 3) gives (3, 1), as PyTorch's; a transposed one's order is not known."""
        steps = [s // self.dtype.itemsize for s in self._data.strides]
        free = self._data.size == 0 and not any(steps)
        for d in reversed(range(self.ndim)):
            if (free or self.shape[d] == 1) and steps[d] == 0:
                steps[d] = steps[d + 1] * max(self.shape[d + 1], 1) if d + 1 < self.ndim else 1
        steps = tuple(steps)
        if dim is None:
            return steps
        if self.ndim == 0:
            raise IndexError(f"stride: a 0-d tensor has no dim {dim}; stride() gives ()")
        return steps[ops.reduce.normalize_dim(dim, self.ndim, "stride")]

    def type(self, dtype=None):
        """Without dtype the type's name, 'minigrad.FloatTensor' (PyTorch: 'torch.Float-
        Tensor'); with a dtype, or such a name, the tensor converted to it (self if no change)."""
        if dtype is None:
            return _type_name(self)
        device, dtype = _type_target(dtype)
        return self.to(device, dtype)

