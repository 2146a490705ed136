"""linspace's values, bit for bit as PyTorch's (CPU and CUDA): value i is start + step·i
for the first half and end - step·(steps-1-i) for the second, each rounded once (PyTorch's
kernels are compiled to fused multiply-adds), so both ends are exact. NumPy and CuPy have
no fma, so `fma` builds a correctly rounded one from error-free sums and products."""
from minigrad import backend


def _two_sum(a, b):
    """s, e with s = fl(a + b) and s + e == a + b exactly (Knuth)."""
    s = a + b
    bb = s - a
    return s, (a - (s - bb)) + (b - bb)


def _split(xp, a):
    """hi + lo == a, each with half of a's mantissa bits (Dekker), so their products are
    exact."""
    c = a.dtype.type(4097.0 if a.dtype.itemsize == 4 else 134217729.0)   # 2^12+1, 2^27+1
    t = c * a
    hi = t - (t - a)
    return hi, a - hi


def fma(xp, a, b, c):
    """a·b + c rounded once, elementwise (arrays of one float dtype, float32 or float64).
    Boldo & Melquiond's emulation: the exact product as ph + pl, c + ph as th + tl, then
    th plus tl + pl rounded to odd (so that the last rounding is not a double rounding)."""
    ph = a * b
    (ah, al), (bh, bl) = _split(xp, a), _split(xp, b)
    pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl
    th, tl = _two_sum(c, ph)
    v, err = _two_sum(tl, pl)
    bits = v.view("uint32" if v.dtype.itemsize == 4 else "uint64")
    even = (bits & 1) == 0
    toward = xp.where(err > 0, v.dtype.type("inf"), v.dtype.type("-inf"))
    v = xp.where((err != 0) & even, xp.nextafter(v, toward), v)
    return th + v


def linspace_values(xp, start, end, steps, d):
    """PyTorch's linspace of `steps` (>= 1) values in dtype d: the ends cast to d first
    (an integer dtype truncates them); the step in d (float64 for integer dtypes, whose
    values are then truncated); float16 rounds every operation to half, as its kernel."""
    i = xp.arange(steps)
    first = i < steps // 2
    k = xp.where(first, i, steps - 1 - i)
    if d == backend.float16:
        h, f = backend.float16, backend.float32
        # (the ends via float32, as PyTorch's Scalar to half: 31208.0003 -> 31200, a tie)
        lo, hi = (xp.asarray(v, dtype=f).astype(h).astype(f) for v in (start, end))
        if steps == 1:
            return lo.reshape(1).astype(h)
        count = f.type(h.type(steps - 1))          # PyTorch's half / int makes the int a half
        step = ((hi - lo).astype(h).astype(f) / count).astype(h).astype(f)
        off = (step * k.astype(h).astype(f)).astype(h).astype(f)       # k as a half too
        return xp.where(first, lo + off, hi - off).astype(h)
    work = d if backend.is_floating(d) else backend.float64
    lo, hi = (xp.asarray(d.type(v), dtype=work) for v in (start, end))
    if steps == 1:
        return lo.reshape(1).astype(d)
    step = (hi - lo) / work.type(steps - 1)
    sign = xp.where(first, work.type(1), work.type(-1))
    base = xp.where(first, lo, hi)
    step_k, base = xp.broadcast_to(step, k.shape) * sign, xp.broadcast_to(base, k.shape)
    with _quiet(xp):
        exact = fma(xp, step_k, k.astype(work), base)
        # near the dtype's largest values the split overflows: there the plain sum
        # (infinite ends give inf or NaN there, as PyTorch's)
        return xp.where(xp.isfinite(exact), exact, base + step_k * k.astype(work)).astype(d)


def _quiet(xp):
    """NumPy's errstate without its warnings (a GPU's array module has no errstate)."""
    import contextlib
    return xp.errstate(all="ignore") if hasattr(xp, "errstate") else contextlib.nullcontext()
