"""GELU (article 2.2.5.1's FFN activation in GPT): the exact x·Φ(x) with Φ from erf, and
GPT-2's tanh approximation ½x(1 + tanh(√(2/π)(x + 0.044715x³))), which GPT uses. The tanh
form's forward and fast backward run as chains of in-place passes, piece by piece on the
CPU (ops/blocks.py), and as one fused kernel each on a GPU (backend_kernels.py)."""
import math

from minigrad import backend
from minigrad.autograd import Function
from minigrad.ops.blocks import in_pieces, contiguous
from minigrad.ops.elementwise import tanh, erf, exp, _floating


def _tanh_gelu(xp, x, w, y):
    """w = ½(1 + tanh(c(x + 0.044715x³))) and y = x·w, written into w and y in place."""
    c = Gelu.C
    xp.multiply(x, x, out=w)
    w *= Gelu.A * c
    w += c
    w *= x
    xp.tanh(w, out=w)
    w *= 0.5
    w += 0.5
    xp.multiply(x, w, out=y)


def _tanh_gelu_grad(xp, x, w, g, d):
    """d = g·(w + 2c·x·w(1 - w)(1 + 3·0.044715x²)) in place: the derivative of x·w written
    with w = ½(1+t), using 1 - t² = 4w(1 - w), which takes three passes fewer than with t."""
    c = Gelu.C
    q = xp.multiply(x, x, out=xp.empty_like(x))
    q *= 6 * Gelu.A * c
    q += 2 * c
    q *= x                                               # 2c·x(1 + 3·0.044715x²)
    xp.subtract(1, w, out=d)
    d *= w
    d *= q
    d += w
    d *= g


class Gelu(Function):
    """GELU: exact x·Φ(x) (erf form), or GPT-2's tanh approximation. The tanh form, which
    GPT uses, runs in place and piece by piece (ops/blocks.py): it is all memory traffic."""
    fresh_grads = True                                   # see Function.fresh_grads
    C, A = math.sqrt(2 / math.pi), 0.044715          # tanh form: tanh(C·(x + A·x³))

    def forward(self, a, approximate):
        self.approximate = approximate
        xp = self.xp
        if approximate == "tanh":                        # ½x(1 + tanh(c(x + 0.044715x³)))
            be = backend.get(self.device)
            fused = be.kernels("gelu_tanh", a) if be.kernels else None  # one GPU kernel
            if fused is not None:
                self.w, y = fused
                return y
            x = contiguous(xp, a)
            self.w, y = xp.empty(x.shape, x.dtype), xp.empty(x.shape, x.dtype)
            in_pieces(be, lambda *p: _tanh_gelu(xp, *p), x, self.w, y)
            return y
        cdf = backend.get(self.device).erf(a * (1 / math.sqrt(2))).astype(a.dtype, copy=False)
        cdf += 1
        cdf *= 0.5
        self.cdf = cdf                                   # Φ(x)
        return a * cdf                                   # x·Φ(x)

    def backward(self, g):
        x = self.inputs[0]
        if self.approximate == "tanh":   # ½(1+t) + ½x(1-t²)·c(1 + 3·0.044715x²)
            t = tanh(self.C * (x + self.A * x * x * x))
            return g * (0.5 * (1 + t) + 0.5 * x * (1 - t * t) * self.C * (1 + 3 * self.A * x * x))
        cdf = 0.5 * (1 + erf(x * (1 / math.sqrt(2))))    # Φ(x)
        pdf = exp(-0.5 * x * x) * (1 / math.sqrt(2 * math.pi))
        return g * (cdf + x * pdf)                       # d(x·Φ(x)) = Φ(x) + x·φ(x)

    def backward_arrays(self, g):                        # the same, reusing forward's w / Φ
        xp = self.xp
        if self.approximate == "tanh":
            be = backend.get(self.device)
            fused = be.kernels("gelu_tanh_grad", self.inputs[0]._data, self.w, g) \
                if be.kernels else None
            if fused is not None:
                return (fused,)
            x, g = contiguous(xp, self.inputs[0]._data), contiguous(xp, g)
            d = xp.empty(x.shape, x.dtype)
            in_pieces(be, lambda *p: _tanh_gelu_grad(xp, *p), x, self.w, g, d)
            return (d,)
        x = self.inputs[0]._data
        d = xp.multiply(x, x, out=xp.empty_like(x))
        d *= -0.5
        xp.exp(d, out=d)
        d *= x
        d *= 1 / math.sqrt(2 * math.pi)                  # x·φ(x)
        d += self.cdf
        d *= g
        return (d,)


def gelu(input, approximate="none"):
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    input = _floating(input)
    if input.dtype == backend.float16:   # float32 inside, as PyTorch: the tanh form's x³ leaves
        # float16's range from |x| > 40, and the erf form's Φ(x) rounds to 0 from x = -3.9
        return Gelu.apply(input.to(dtype=backend.float32), approximate=approximate) \
            .to(dtype=input.dtype)
    return Gelu.apply(input, approximate=approximate)
