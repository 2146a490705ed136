"""Muon (Jordan et al. 2024, "Muon: an optimizer for hidden layers") — PyTorch's equations:

    B = B + (1 - μ)(g - B)                 (momentum, as torch's lerp; B starts at 0)
    u = g + μ (B - g)  if nesterov  else  B
    O = NS(u)                              (u orthogonalised: its singular values → ~1)
    p = p · (1 - lr · weight_decay)        (decoupled weight decay)
    p = p - lr · r · O,   r = √max(1, rows/cols)      ("original", the default)
                          r = 0.2 √max(rows, cols)    ("match_rms_adamw": AdamW's RMS)

NS is PyTorch's quintic Newton–Schulz iteration with coefficients (a, b, c) = (3.4445,
-4.7750, 2.0315), on X = u / max(‖u‖_F, eps) (transposed so that it is wide), ns_steps
times:  A = X Xᵀ,  X = a X + (b A + c A²) X.  It drives every singular value of X into
roughly [0.7, 1.2] without an SVD, so each step moves all directions of the weight matrix
alike. PyTorch runs it in bfloat16, and so does this (NumPy has no bfloat16: the values
are rounded to it after each operation, the products accumulated in float32, as PyTorch's
CPU kernels do), so the two agree to bfloat16 rounding, not bit for bit.

Muon is for 2-D weights only (hidden layers' matrices); biases, gains and embeddings go
to AdamW, as PyTorch's documentation says.
"""
import math
import numbers


from minigrad import backend
from minigrad.optim.inplace import lerp_
from minigrad.optim.optimizer import Optimizer, check_flags, is_number

np = backend.get("cpu").xp              # NumPy (host scalars and dtypes)

EPS = 1e-7
DEFAULT_A, DEFAULT_B, DEFAULT_C = 3.4445, -4.7750, 2.0315
DEFAULT_NS_STEPS = 5


class Muon(Optimizer):
    """State per parameter, under PyTorch's name: `momentum_buffer` (B). Every parameter
    must be 2-D (refused at construction, as PyTorch's)."""

    def __init__(self, params, lr=1e-3, weight_decay=0.1, momentum=0.95, nesterov=True,
                 ns_coefficients=(DEFAULT_A, DEFAULT_B, DEFAULT_C), eps=EPS,
                 ns_steps=DEFAULT_NS_STEPS, adjust_lr_fn=None):
        if isinstance(ns_coefficients, list):
            ns_coefficients = tuple(ns_coefficients)
        defaults = dict(lr=lr, weight_decay=weight_decay, momentum=momentum,
                        nesterov=nesterov, ns_coefficients=ns_coefficients, eps=eps,
                        ns_steps=ns_steps, adjust_lr_fn=adjust_lr_fn)
        super().__init__(params, defaults)

    def add_param_group(self, group):
        super().add_param_group(group)
        for p in self.param_groups[-1]["params"]:
            if p.ndim != 2:
                self.param_groups.pop()
                raise ValueError(f"Muon only supports 2D parameters whereas we found a "
                                 f"parameter with size: {p.shape}; optimise the others "
                                 f"(biases, gains, embeddings) with AdamW")

    def _validate_options(self, options, where):
        super()._validate_options(options, where)
        name = "Muon"
        for key in ("momentum", "eps"):
            if not is_number(options[key]):
                raise TypeError(f"{name}: {key} must be a number, got {options[key]!r} in "
                                f"{where}")
        if not options["momentum"] >= 0:
            raise ValueError(f"{name}: invalid momentum {options['momentum']!r} in {where} "
                             f"(must be >= 0)")
        check_flags(name, options, where, "nesterov")
        coef = options["ns_coefficients"]
        if not (isinstance(coef, (list, tuple)) and len(coef) == 3 and
                all(is_number(c) for c in coef)):
            raise ValueError(f"{name}: ns_coefficients must be three numbers (a, b, c), got "
                             f"{coef!r} in {where}")
        steps = options["ns_steps"]
        if isinstance(steps, bool) or not isinstance(steps, numbers.Integral) or \
                not 0 <= steps < 100:
            raise ValueError(f"{name}: ns_steps must be an integer in [0, 100), got "
                             f"{steps!r} in {where}")
        if options["adjust_lr_fn"] not in (None, "original", "match_rms_adamw"):
            raise ValueError(f"{name}: adjust_lr_fn must be None, 'original' or "
                             f"'match_rms_adamw', got {options['adjust_lr_fn']!r} in {where}")

    def _update(self, param, g, state, group):
        p, xp = param._data, param.backend.xp
        if "momentum_buffer" not in state:
            state["momentum_buffer"] = xp.zeros_like(p)
        mu, lr = group["momentum"], group["lr"]
        buf, tmp = state["momentum_buffer"], xp.empty_like(p)
        lerp_(xp, buf, g, 1 - mu, tmp)
        if group["nesterov"]:
            update = g.copy()
            lerp_(xp, update, buf, mu, tmp)
        else:
            update = buf
        o = zeropower_via_newtonschulz(xp, update, group["ns_coefficients"],
                                       group["ns_steps"], group["eps"])
        rows, cols = p.shape
        if group["adjust_lr_fn"] == "match_rms_adamw":
            ratio = 0.2 * math.sqrt(max(rows, cols))
        else:
            ratio = math.sqrt(max(1, rows / cols))
        p *= 1 - lr * group["weight_decay"]
        o *= -lr * ratio
        p += o.astype(p.dtype, copy=False)


def bf16(xp, a):
    """float32 values rounded to the nearest bfloat16 (ties to even), kept as float32: the
    low 16 bits of each float32 rounded away (NaN kept)."""
    a = a.astype(np.float32)
    bits = a.view(np.uint32)
    odd = xp.bitwise_and(xp.right_shift(bits, 16), np.uint32(1))
    bits = xp.bitwise_and(xp.add(bits, xp.add(odd, np.uint32(0x7FFF))),
                          np.uint32(0xFFFF0000))
    return xp.where(xp.isnan(a), a, bits.view(np.float32))


def zeropower_via_newtonschulz(xp, g, coefficients, steps, eps):
    """The Newton–Schulz orthogonalisation of the matrix g, as PyTorch's (bfloat16: each
    result rounded to it; float32 products and sums)."""
    if g.ndim != 2:
        raise ValueError(f"Muon: Newton-Schulz needs a 2-D matrix, got shape {g.shape}")
    a, b, c = coefficients
    x = bf16(xp, g)
    tall = g.shape[0] > g.shape[1]
    if tall:
        x = x.T
    norm = bf16(xp, xp.sqrt(xp.sum(x * x)))
    x = bf16(xp, x / xp.maximum(norm, float(bf16(np, np.float32(eps)))))
    for _ in range(steps):
        gram = bf16(xp, x @ x.T)
        gram = bf16(xp, b * gram + c * (gram @ gram))
        x = bf16(xp, a * x + gram @ x)
    return x.T if tall else x
