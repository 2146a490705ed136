"""Automatic mixed precision, as torch.amp: `autocast` runs the matrix products in float16
and the ops that need range or precision in float32, and `GradScaler` (amp_scaler.py)
scales the loss so that float16 gradients do not underflow.

While autocast is on, Function.apply (autograd.py) hands each op's inputs to
`_Autocast.cast`, which looks the op's class name up in POLICY, one table for every device:
  HALF   the GEMM/conv family: float32 inputs are cast to float16 (float64 stays float64);
  FLOAT  ops whose float16 result would overflow or lose too much (softmax, the losses,
         exp/log/pow, sums and products, layer norm...): float16 inputs are cast to float32;
  anything else runs as it is: ops with inputs of two float dtypes already compute in the
         widest (float16 + float32 is float32), which is torch's "promote" rule.
Attention (scaled_dot_product_attention, qkv_attention) is on torch's float16 list too,
but cast by its functions (grad_mode.autocast_half), not here: their float16 path computes
in float32 inside, which a cast in apply would turn back into float16 (NaN scores).
So are the listed functions built from several ops that have no class of their own here
(rsqrt, 1 / x, pdist, renorm, most losses: autocast_float32; prelu, the RNN cells and
nn.RNN/GRU/LSTM, inputs, states and weights alike: autocast_half). dot, vdot, tensordot
and inner, built on matmul, are on torch's promote list instead: they run uncast, in the
widest dtype (ops/matmul.py autocast_promote). An explicit dtype= (sum, prod, cumsum,
cumprod, softmax, the norms) wins over the float32 list, as in torch (grad_mode.autocast_off).
The lists follow torch's CUDA autocast lists on both devices (torch's CPU lists differ:
there softmax, for one, stays float16). The casts are ordinary differentiable ops, so a
float32 weight used in float16 gets a float32 gradient."""
import functools

from minigrad import backend
from minigrad.amp_scaler import GradScaler  # noqa: F401  (mg.amp.GradScaler)
from minigrad.grad_mode import _state

HALF, FLOAT = "half", "float"
POLICY = dict.fromkeys(
    ["Linear", "MatMul", "Einsum", "Conv", "ConvTranspose", "DepthwiseConv", "LSTMCell",
     "GRUCell"], HALF)
POLICY.update(dict.fromkeys(
    ["Softmax", "LogSoftmax", "CrossEntropy", "BCEWithLogits", "BinaryCrossEntropy",
     "CTCLoss", "Huber", "LayerNorm", "Cdist", "Exp", "Expm1", "Log", "Log2", "Log10",
     "Log1p", "Pow", "Sum", "NanSum", "Prod", "CumSum", "CumProd", "LogCumSumExp", "Acos",
     "Asin", "Cosh", "Sinh", "Tan", "Erfinv", "Softplus"], FLOAT))

DEVICE_TYPES = ("cpu", "cuda")


class _Autocast:
    """What is on in one thread: device type -> the low-precision dtype (never changed:
    entering or leaving an autocast region puts a new one, or None, in _state.autocast)."""

    __slots__ = ("dtypes",)

    def __init__(self, dtypes):
        self.dtypes = dtypes

    def cast(self, name, inputs, device):
        """`inputs` of op `name` on `device`, cast as POLICY says (the same tuple when
        nothing changes: an op not in the table, or tensors of a device not autocast)."""
        rule = POLICY.get(name)
        if rule is None:
            return inputs
        half = self.dtypes.get(str(device).partition(":")[0])
        if half is None:
            return inputs
        target = half if rule is HALF else backend.float32
        if all(t.dtype == target or t.dtype.kind != "f" or t.dtype == backend.float64
               for t in inputs):
            return inputs
        return tuple(t if t.dtype == target or t.dtype.kind != "f" or
                     t.dtype == backend.float64 else t.to(dtype=target) for t in inputs)


def _low_dtype(dtype, device_type):
    """float16, the one low-precision float minigrad has (NumPy and CuPy have no
    bfloat16); anything else is refused, naming what was given."""
    if dtype is None:
        return backend.float16
    if "bfloat16" in str(dtype):
        raise TypeError(f"autocast: dtype bfloat16 is not available (NumPy and CuPy have no "
                        f"bfloat16); minigrad's autocast runs in float16: pass "
                        f"dtype=mg.float16 or leave dtype out, also on device_type "
                        f"{device_type!r}")
    try:
        dt = backend.dtype(dtype)
    except TypeError:
        dt = None
    if dt != backend.float16:
        raise TypeError(f"autocast: dtype must be float16 (minigrad's only low-precision "
                        f"float), got {dtype!r}")
    return dt


class autocast:
    """Context manager and decorator: inside it, ops on tensors of `device_type` ("cpu" or
    "cuda") run in mixed precision (see the module's docstring); others are untouched, as
    torch.autocast. Per thread, and nests: an inner enabled=False turns it off for that
    device type until its exit restores the outer setting.

    `dtype`: float16, the default on every device type. torch's CPU default is bfloat16,
    which NumPy and CuPy lack, so minigrad uses float16 there too and refuses bfloat16.
    `cache_enabled` is accepted for torch's signature; minigrad keeps no cast cache: a
    float32 weight read by several ops is cast once per op (the same values; only time)."""

    def __init__(self, device_type, dtype=None, enabled=True, cache_enabled=None):
        name = getattr(device_type, "type", device_type)   # an mg.device works too
        try:                            # "cpu", "cuda", or a device a test registered
            name = str(backend.device_name(name)) if isinstance(name, str) else None
        except ValueError:
            name = None
        if name is None:
            raise ValueError(f"autocast: device_type must be one of {list(DEVICE_TYPES)}, "
                             f"got {device_type!r}")
        if not isinstance(enabled, bool):
            raise TypeError(f"autocast: enabled must be a bool, got {enabled!r}")
        self.device_type, self.enabled, self.cache_enabled = name, enabled, cache_enabled
        self.fast_dtype = _low_dtype(dtype, name)
        self._prev = []                  # a stack: one instance may be entered again

    def __enter__(self):
        was = _state.autocast
        dtypes = dict(was.dtypes) if was is not None else {}
        if self.enabled:
            dtypes[self.device_type] = self.fast_dtype
        else:
            dtypes.pop(self.device_type, None)
        self._prev.append(was)
        _state.autocast = _Autocast(dtypes) if dtypes else None
        return self

    def __exit__(self, *exc):
        _state.autocast = self._prev.pop()

    def __call__(self, fn):
        """As a decorator: each call of fn runs in this setting."""
        @functools.wraps(fn)
        def wrapper(*args, **kwargs):
            with autocast(self.device_type, self.fast_dtype, self.enabled,
                          self.cache_enabled):
                return fn(*args, **kwargs)
        return wrapper


def is_autocast_enabled(device_type="cuda"):
    """Whether autocast is on for `device_type` in this thread (torch's default: "cuda")."""
    on = _state.autocast
    return on is not None and device_type in on.dtypes


def get_autocast_dtype(device_type="cuda"):
    """The dtype autocast uses for `device_type`: float16 (minigrad's only one)."""
    on = _state.autocast
    return on.dtypes.get(device_type, backend.float16) if on is not None else backend.float16


class _CudaAmp:
    """mg.cuda.amp: torch.cuda.amp's spellings, the device type fixed to "cuda"."""

    @staticmethod
    def autocast(enabled=True, dtype=None, cache_enabled=None):
        return autocast("cuda", dtype, enabled, cache_enabled)

    class GradScaler(GradScaler):
        def __init__(self, init_scale=2.0 ** 16, growth_factor=2.0, backoff_factor=0.5,
                     growth_interval=2000, enabled=True):
            super().__init__("cuda", init_scale, growth_factor, backoff_factor,
                             growth_interval, enabled)


cuda_amp = _CudaAmp()
