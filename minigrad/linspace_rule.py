"""linspace's values, bit for bit as PyTorch's (CPU and CUDA): value i is start + step·i
for the first half and end - step·(steps-1-i) for the second, each rounded once (PyTorch's
kernels are compiled to fused multiply-adds), so both ends are exact. NumPy and CuPy have
no fma, so `fma` builds a correctly rounded one from error-free sums and products."""
import math

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
    ph, pl = _two_prod(xp, a, b)
    th, tl = _two_sum(c, ph)
    v, err = _two_sum(tl, pl)
    bits = v.view("uint32" if v.dtype.itemsize == 4 else "uint64")
    even = (bits & 1) == 0
    toward = xp.where(err > 0, v.dtype.type("inf"), v.dtype.type("-inf"))
    v = xp.where((err != 0) & even, xp.nextafter(v, toward), v)
    out = th + v
    # an exact zero's sign is the plain sum's (-0 only from -0 + -0); th + v loses it
    return xp.where(out == 0, ph + c, out)


def _two_prod(xp, a, b):
    """ph, pl with ph = fl(a·b) and ph + pl == a·b exactly. Dekker's split multiplies by
    2^s + 1, which overflows for |a| near the dtype's largest values: such an a is scaled
    down by 2^-(s+2) first and the two parts scaled back (powers of two: all exact)."""
    s = 12 if a.dtype.itemsize == 4 else 27
    big = xp.abs(a) > a.dtype.type(2.0 ** ((127 if a.dtype.itemsize == 4 else 1023) - s - 2))
    scale = None
    if bool(big.any()):                 # (rare: the common case skips the two scalings)
        scale = xp.where(big, a.dtype.type(2.0 ** (s + 2)), a.dtype.type(1))
        a = a / scale
    ph = a * b
    (ah, al), (bh, bl) = _split(xp, a), _split(xp, b)
    pl = ((ah * bh - ph) + ah * bl + al * bh) + al * bl
    return (ph, pl) if scale is None else (ph * scale, pl * scale)


def linspace_values(xp, start, end, steps, d):
    with _quiet(xp):                      # inf ends give inf or NaN, as PyTorch's
        return _values(xp, start, end, steps, d)


def _values(xp, start, end, steps, d):
    """PyTorch's linspace of `steps` values in dtype d: the ends cast to d first
    (an integer dtype truncates them); the step in d (float64 for integer dtypes, whose
    values are then truncated); float16 rounds every operation to half, as its kernel."""
    start, end = checked_ends("linspace", start, end, steps, d)
    if steps == 0:
        return xp.zeros(0, dtype=d)
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
    if steps == 1:                  # (an int64 start past 2**53 not through a float64)
        return xp.asarray([start], dtype=d)
    work = d if backend.is_floating(d) else backend.float64
    lo, hi = (xp.asarray(d.type(v), dtype=work) for v in (start, end))
    step = (hi - lo) / work.type(steps - 1)
    sign = xp.where(first, work.type(1), work.type(-1))
    base = xp.where(first, lo, hi)
    step_k, base = xp.broadcast_to(step, k.shape) * sign, xp.broadcast_to(base, k.shape)
    exact = fma(xp, step_k, k.astype(work), base)
    # where the sum overflows or an end is infinite: the plain sum (inf or NaN, as PyTorch's)
    return xp.where(xp.isfinite(exact), exact, base + step_k * k.astype(work)).astype(d)


def checked_ends(op, start, end, steps, d):
    """start and end as values of dtype d, refused as PyTorch refuses them where they do
    not fit it (NaN or inf for an integer dtype, a finite float past the dtype's largest):
    both ends for steps >= 2, start alone for steps = 1 (but a half's not at all: it becomes
    inf), neither for none. An integer dtype truncates
    them; an unsigned one takes -max .. -1 too, wrapped (PyTorch's uint8 -1 is 255)."""
    out = []
    for name, v in (("start", start), ("end", end))[:2 if steps >= 2 else steps]:
        low, high = backend.value_range(d)
        if d == backend.float16 and steps == 1:
            low, high = -math.inf, math.inf         # (PyTorch's half fill: inf, no error)
        try:
            finite = math.isfinite(v)
        except OverflowError:                       # an int past float64's range
            finite = True
        if backend.is_floating(d):
            fits = not finite or low <= v <= high
        else:
            low = -high if low == 0 else low          # (an unsigned dtype: whole negatives)
            fits = finite and low <= v <= high and (v >= 0 or -low != high or v == math.trunc(v))
        if not fits:
            raise ValueError(f"{op}: {name}={v!r} cannot be converted to {d} without "
                             f"overflow (it holds {low} .. {high}); give ends the dtype can "
                             f"hold, or a wider dtype")
        if not backend.is_floating(d):
            v = math.trunc(v) % (high + 1) if v < 0 and -low == high else math.trunc(v)
        out.append(v)
    return tuple(out + [start, end][len(out):])


def _quiet(xp):
    """NumPy's errstate without its warnings (a GPU's array module has no errstate)."""
    import contextlib
    return xp.errstate(all="ignore") if hasattr(xp, "errstate") else contextlib.nullcontext()
