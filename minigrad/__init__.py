"""minigrad: a tensor autograd engine on NumPy (CPU) and CuPy (GPU).

    import minigrad as mg
    x = mg.tensor([[1., 2.], [3., 4.]], requires_grad=True)
    (x @ x.T).relu().sum().backward()
    x.grad
"""
import os as _os
import sys as _sys

# OpenBLAS's idle threads spin ~0.1 s after every matmul unless told otherwise, on the cores
# minigrad's own threads need for big elementwise work (parallel.py, backend_blas.py); ~1.5 ms
# is plenty between a training step's matmuls. OpenBLAS reads this once, as NumPy loads it.
if "numpy" not in _sys.modules:
    _os.environ.setdefault("OPENBLAS_THREAD_TIMEOUT", "22")

from minigrad import backend  # noqa: E402
from minigrad.backend import (float16, float32, float64, int32, int64,  # noqa: F401,E402
                              cuda_is_available)
from minigrad.host_memory import keep_freed_host_memory  # noqa: F401
from minigrad.parallel import set_num_threads, get_num_threads  # noqa: F401
from minigrad.backend import (set_float32_matmul_precision,  # noqa: F401
                              get_float32_matmul_precision)
from minigrad.backend import set_default_device, get_default_device  # noqa: F401
from minigrad.backend import bool_ as bool  # noqa: A001  (PyTorch's spelling: mg.bool)
uint8, int8, int16 = (backend.dtype(n) for n in ("uint8", "int8", "int16"))
from minigrad.tensor import Tensor  # noqa: F401
from minigrad.size import Size  # noqa: F401,E402
from minigrad.autograd import no_grad, enable_grad, is_grad_enabled, grad  # noqa: F401
from minigrad.autograd import set_grad_enabled, inference_mode  # noqa: F401
from minigrad.creation import (tensor, zeros, ones, full, arange, randn, rand,  # noqa: F401
                               randint, zeros_like, ones_like, randn_like, multinomial)
from minigrad.creation import (as_tensor, from_numpy, is_tensor, numel, empty,  # noqa: F401
                               eye, linspace, randperm, rand_like, full_like, empty_like)
from minigrad.ops.elementwise import (exp, log, sqrt, tanh, sigmoid, relu, maximum,  # noqa
                                      minimum, clip, where, masked_fill, erf)
from minigrad.ops.shape import cat, stack, split, chunk, unbind, tril, triu, flip  # noqa
from minigrad.ops.shape import roll, unflatten  # noqa: F401
from minigrad.ops.math import (sin, cos, log1p, expm1, sign, floor, ceil, trunc,  # noqa
                               round, nan_to_num, remainder, floor_divide, div)
from minigrad.ops.math import (tan, sinh, cosh, log2, log10, exp2, atan2, fmod, frac,  # noqa
                               lerp, addcmul, addcdiv, isclose, allclose, equal)
from minigrad.ops.math_extra import (asin, acos, atan, asinh, acosh, atanh, arcsin,  # noqa
                                     arccos, arctan, arcsinh, arccosh, arctanh, erfc, sinc,
                                     deg2rad, rad2deg, hypot, copysign, logaddexp, logaddexp2,
                                     fmax, fmin, signbit, isposinf, isneginf, positive,
                                     heaviside, float_power, sgn, fix, ldexp)
from minigrad.ops.bitwise import (bitwise_and, bitwise_or, bitwise_xor, bitwise_not,  # noqa
                                  bitwise_left_shift, bitwise_right_shift, gcd, lcm)
from minigrad.ops.shape_extra import (ravel, fliplr, flipud, hsplit, vsplit, dsplit,  # noqa
                                      split_with_sizes, diagflat, is_same_size, is_signed,
                                      is_complex, is_nonzero, get_device)
from minigrad.ops.layout import (movedim, t, broadcast_to, tile, select, diagonal,  # noqa
                                 diag, trace, hstack, vstack, meshgrid)
from minigrad.ops.layout import broadcast_tensors, tensor_split, rot90, diag_embed  # noqa
from minigrad.ops.norms import norm, cdist  # noqa: F401
from minigrad.ops.matmul import matmul, mm, bmm, dot, outer, addmm, tensordot, cross  # noqa
from minigrad.ops.reduce import cumsum, logsumexp, prod  # noqa: F401
from minigrad.ops.cumulative import cumprod, diff, logcumsumexp, cummax, cummin  # noqa
from minigrad.ops.statistics import (nansum, nanmean, count_nonzero, var_mean,  # noqa
                                      std_mean, aminmax, bincount)
from minigrad.ops.special import lgamma, digamma, polygamma, erfinv, xlogy, logit  # noqa
from minigrad.ops.order import kthvalue, take_along_dim, searchsorted, bucketize  # noqa
from minigrad.ops.index import gather, index_select, masked_select  # noqa
from minigrad.ops.order import sort, topk  # noqa: F401
from minigrad.ops.order import median  # noqa: F401
from minigrad.ops.einsum import einsum  # noqa: F401
from minigrad.ops.linalg import (mv, inner, vdot, kron, matrix_power, det,  # noqa: F401
                                 logdet, slogdet, cholesky, inv as inverse)
from minigrad.ops.index_more import (take, argwhere, index_copy, index_put,  # noqa: F401
                                     masked_scatter, scatter_reduce, index_fill)
from minigrad.ops.statistics_more import (quantile, nanquantile, nanmedian, mode,  # noqa
                                          cov, corrcoef, dist, histc)
from minigrad.ops.linalg_decomp import svd_v as svd, qr_some as qr  # noqa: F401
from minigrad.ops.linalg_solvers import pinverse, matrix_exp  # noqa: F401
from minigrad.ops.linalg_householder import orgqr, ormqr  # noqa: F401
from minigrad.tensor_more import strided  # noqa: F401  (the one layout: x.layout)
from minigrad.memory_format import (memory_format, contiguous_format,  # noqa: F401
                                    preserve_format, channels_last, channels_last_3d)
from minigrad.ops.linalg_lu import (lu_unpack, cholesky_solve, cholesky_inverse,  # noqa
                                    lu_legacy as lu, lu_solve_legacy as lu_solve)
from minigrad.ops.torch_extra import (frexp, nextafter, i0, igamma, igammac,  # noqa
                                      mvlgamma, renorm, angle, real, imag, conj, isreal)
from minigrad.ops.size_helpers import broadcast_shapes, vander  # noqa: F401
from minigrad.ops.as_strided import (as_strided, as_strided_copy,  # noqa: F401
                                     as_strided_scatter, empty_strided)
from minigrad.printing import set_printoptions  # noqa: F401
from minigrad.ops.torch_extra_index import (select_scatter, slice_scatter,  # noqa: F401
                                            diagonal_scatter, put, index_reduce, isin,
                                            unique_consecutive, histogram, unravel_index)
from minigrad.ops.calculus import trapezoid, trapz, cumulative_trapezoid, gradient  # noqa
from minigrad.ops.shape_extra import (atleast_1d, atleast_2d, atleast_3d,  # noqa: F401
                                      column_stack, dstack, block_diag, cartesian_prod,
                                      combinations, msort, adjoint)
from minigrad.ops.matmul import (addmv, addr, addbmm, baddbmm, chain_matmul,  # noqa
                                 outer as ger)
from minigrad.ops.norms import pdist, pairwise_distance, cosine_similarity  # noqa: F401
from minigrad.creation_extra import (logspace, hann_window, hamming_window,  # noqa: F401
                                     blackman_window, bartlett_window, kaiser_window,
                                     tril_indices, triu_indices, scalar_tensor, asarray,
                                     frombuffer, randint_like)
from minigrad.draws import binomial, poisson  # noqa: F401
from minigrad.dtypes import result_type, can_cast  # noqa: F401
from minigrad import linalg  # noqa: F401,E402
from minigrad import special  # noqa: F401,E402
from minigrad.gradcheck import gradcheck, gradgradcheck, GradcheckError  # noqa: F401
_sys.modules["minigrad.autograd.gradcheck"] = _sys.modules["minigrad.gradcheck"]  # torch's path
from minigrad.generator import (Generator, get_rng_state, set_rng_state,  # noqa: F401
                                initial_seed, seed)
from minigrad.draws import normal, bernoulli  # noqa: F401
from minigrad.dtypes import (finfo, iinfo, get_default_dtype, set_default_dtype,  # noqa
                             promote_types, is_floating_point)
from minigrad import functional, viz, nn, optim, utils, cuda, profiler  # noqa: F401
from minigrad import amp  # noqa: F401,E402
from minigrad import accelerator  # noqa: F401,E402
from minigrad import backends  # noqa: F401,E402
from minigrad.amp import autocast, is_autocast_enabled, get_autocast_dtype  # noqa
from minigrad import func, distributions  # noqa: F401,E402
from minigrad.anomaly import is_anomaly_enabled, is_anomaly_check_nan_enabled  # noqa
from minigrad.checkpoint import save, load, load_metadata  # noqa: F401
from minigrad.legacy_types import CPU_TYPES as _CPU_TYPES, CUDA_TYPES as _CUDA_TYPES  # noqa
globals().update(_CPU_TYPES)             # mg.FloatTensor, mg.LongTensor ... (torch's names)
for _name, _type in _CUDA_TYPES.items():
    setattr(cuda, _name, _type)          # mg.cuda.FloatTensor ...
del _name, _type

clamp = clip
arctan2, moveaxis = atan2, movedim
divide = true_divide = div
row_stack = vstack


def concat(tensors, dim=0):
    """torch.concat: cat's other name."""
    return cat(tensors, dim)


def concatenate(tensors, axis=0):
    """torch.concatenate: cat with NumPy's argument name."""
    return cat(tensors, axis)


def rsub(input, other, *, alpha=1):
    """other - alpha·input, as torch.rsub (input a tensor; other a tensor or a number)."""
    if not isinstance(input, Tensor):
        raise TypeError(f"mg.rsub: expected a Tensor first, got {type(input).__name__}")
    from minigrad.tensor_inplace import times_alpha
    # (with a number other, input is scaled on its own: alpha is checked all the same, an
    # integer input taking an integer alpha only, as PyTorch)
    scaled = times_alpha(other if isinstance(other, Tensor) else input, input, alpha, "rsub")
    return other - scaled


def device(name):
    """A device by name, as torch.device: mg.device("cuda").type == "cuda" (a str too);
    `with mg.device("cuda"):` makes it the default device inside the block."""
    return backend.device_name(name)


def manual_seed(seed):
    """Seed every random draw (randn, rand, dropout, init) on every device."""
    backend.manual_seed(seed)


def sum(input, dim=None, keepdim=False, *, dtype=None):  # noqa: A001
    return input.sum(dim, keepdim, dtype=dtype)


def mean(input, dim=None, keepdim=False, *, dtype=None):
    return input.mean(dim, keepdim, dtype=dtype)


def amax(input, dim=None, keepdim=False): return input.amax(dim, keepdim)
def amin(input, dim=None, keepdim=False): return input.amin(dim, keepdim)
def isnan(input): return input.isnan()
def isinf(input): return input.isinf()
def isfinite(input): return input.isfinite()


def _as_function(name):
    def function(input, *args, **kwargs):
        if not isinstance(input, Tensor):
            raise TypeError(f"mg.{name}: expected a Tensor first, got {type(input).__name__}"
                            f"; make one with mg.tensor(...)")
        if name in ("max", "min") and "other" in kwargs:   # torch.max(a, other=b)
            return (maximum if name == "max" else minimum)(input, kwargs.pop("other"))
        return getattr(input, name)(*args, **kwargs)
    function.__name__ = function.__qualname__ = name
    function.__doc__ = f"mg.{name}(t, ...) is t.{name}(...), as torch.{name}."
    return function


# PyTorch's functions that are its tensors' methods under another spelling
for _name in ("max min argmax argmin abs neg add sub mul div pow sqrt square sin cos "
              "softmax log_softmax reshape transpose permute squeeze unsqueeze flatten "
              "all any clone detach masked_select outer argsort nonzero narrow scatter "
              "scatter_add index_add repeat_interleave unique rsqrt swapaxes swapdims "
              "eq ne lt le gt ge logical_not logical_and logical_or logical_xor var std "
              "absolute negative multiply subtract greater greater_equal less less_equal "
              "not_equal reciprocal clamp_min clamp_max").split():
    if _name not in globals():
        globals()[_name] = _as_function(_name)

# ... and its in-place functions (torch.relu_(t) is t.relu_()), and F's in-place activations
for _name in ("abs_ acos_ acosh_ arccos_ arccosh_ arcsin_ arcsinh_ arctan_ arctanh_ asin_ "
              "asinh_ atan_ atanh_ ceil_ clamp_ clamp_max_ clamp_min_ clip_ cos_ cosh_ "
              "deg2rad_ erf_ erfc_ exp2_ exp_ expm1_ fill_ fix_ floor_ frac_ gcd_ lcm_ "
              "ldexp_ log10_ log1p_ log2_ log_ logit_ nan_to_num_ neg_ negative_ rad2deg_ "
              "reciprocal_ relu_ round_ rsqrt_ sigmoid_ sin_ sinc_ sinh_ sqrt_ square_ tan_ "
              "tanh_ trunc_ xlogy_ zero_ i0_ addmv_").split():
    globals()[_name] = _as_function(_name)
from minigrad.functional import selu_, celu_, rrelu_, threshold_  # noqa: E402,F401
del _name

# torch's top-level spellings of nn.functional ops (mg.conv2d, mg.dropout, ...), with torch's
# top-level signatures
from minigrad.torch_functional_aliases import *  # noqa: E402,F401,F403
from minigrad.deterministic import (use_deterministic_algorithms,  # noqa: E402,F401
                                    are_deterministic_algorithms_enabled,
                                    is_deterministic_algorithms_warn_only_enabled)
from minigrad.func import vmap  # noqa: E402,F401  (torch.vmap is torch.func.vmap)
from minigrad.amp_scaler import GradScaler  # noqa: E402,F401  (torch.GradScaler)
from minigrad.torch_runtime import *  # noqa: E402,F401,F403  (compile, typename, ...)
from minigrad.torch_copies import *  # noqa: E402,F401,F403  (view_copy, fill, ...)
from minigrad.torch_native import *  # noqa: E402,F401,F403  (native_layer_norm, ...)
from minigrad.torch_segments import segment_reduce, histogramdd, nonzero_static  # noqa
from minigrad import testing, random  # noqa: E402,F401
# torch's dtype names and constants; last, as mg.float and mg.int shadow the builtins here
from minigrad.torch_names import (float, double, half, long, int, short, dtype,  # noqa
                                  bfloat16, pi, e, inf, nan, newaxis)

# out= on the top-level functions (mg.matmul(a, b, out=c)): the function wrapped here only,
# so the operators and methods stay one call deep
from minigrad.out_arg import with_out as _with_out, creation_with_out as _creation_out  # noqa
for _name in ("add sub mul div matmul mm bmm cat stack multiply subtract divide "
              "true_divide maximum minimum").split():
    globals()[_name] = _with_out(globals()[_name], _name)
for _name in "rand randn zeros ones".split():
    globals()[_name] = _creation_out(globals()[_name], _name)
del _name
