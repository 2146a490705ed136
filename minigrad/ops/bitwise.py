"""Bitwise ops on integer and bool tensors, as PyTorch's: bitwise_and/or/xor/not (the
operators & | ^ ~, ops/elementwise.py), the shifts << and >>, gcd and lcm. Their results
are integers, outside the graph; floats are refused, as PyTorch refuses them."""
from minigrad import backend
from minigrad.tensor import Tensor
from minigrad.ops.elementwise import bitwise, invert
from minigrad.ops.promotion import _pair


def bitwise_and(input, other): return bitwise("bitwise_and", input, other)
def bitwise_or(input, other): return bitwise("bitwise_or", input, other)
def bitwise_xor(input, other): return bitwise("bitwise_xor", input, other)
def bitwise_not(input): return invert(input)


def _integers(op, a, b):
    """Both operands' arrays in their common integer dtype (a Python int is weak: it takes
    the tensor's), and that dtype. Floats are refused, and two bools (one beside an integer
    counts as 0/1), as PyTorch."""
    if not isinstance(a, Tensor) and not isinstance(b, Tensor):
        raise TypeError(f"{op}: expected a Tensor, got {type(a).__name__} and "
                        f"{type(b).__name__}")
    given = [str(t.dtype) if isinstance(t, Tensor) else type(t).__name__ for t in (a, b)]
    a, b = _pair(a, b, op)
    if a.dtype.kind not in "iub" or b.dtype.kind not in "iub" or \
            a.dtype == b.dtype == backend.bool_:            # (given: before promotion)
        raise TypeError(f"{op}: needs integer tensors (one may be bool), as PyTorch; got "
                        f"{given[0]} and {given[1]}; convert with .long() first")
    if a.device != b.device:
        raise RuntimeError(f"{op}: tensors on different devices ({a.device}, {b.device})")
    dtype = backend.promote_float(a.dtype, b.dtype)   # (NumPy's promote_types)
    return a._data.astype(dtype, copy=False), b._data.astype(dtype, copy=False), dtype, a


def _shift(op, a, b, left):
    """a shifted by b bits, as PyTorch: a shift outside [0, the dtype's bits) moves every
    bit out, leaving 0, or -1 for a negative number shifted right (its sign). NumPy's
    shifts do so too, but CuPy's are C's, undefined there: so the amounts are clamped."""
    a, s, dtype, like = _integers(op, a, b)
    xp, bits = like.backend.xp, 8 * dtype.itemsize
    inside = (s >= 0) & (s < bits)
    signed_right = not left and dtype.kind == "i"
    # outside: a signed right shift by bits - 1 is the sign; the rest are replaced by 0
    s = xp.where(inside, s, bits - 1 if signed_right else 0).astype(dtype, copy=False)
    out = (xp.left_shift if left else xp.right_shift)(a, s)
    if not signed_right:
        out = xp.where(inside, out, 0).astype(dtype, copy=False)
    return Tensor._make(xp.asarray(out), like.device)


def bitwise_left_shift(input, other): return _shift("bitwise_left_shift (<<)", input, other, left=True)
def bitwise_right_shift(input, other): return _shift("bitwise_right_shift (>>)", input, other, left=False)


def gcd(input, other):
    """The greatest common divisor, ≥ 0 (gcd(0, 0) = 0), as torch.gcd."""
    input, other, _, like = _integers("gcd", input, other)
    xp = like.backend.xp
    return Tensor._make(xp.asarray(xp.gcd(input, other)), like.device)


def lcm(input, other):
    """The least common multiple, ≥ 0 (0 where either is 0), as torch.lcm."""
    input, other, _, like = _integers("lcm", input, other)
    xp = like.backend.xp
    return Tensor._make(xp.asarray(xp.lcm(input, other)), like.device)
