"""torch.special's orthogonal polynomials of degree n at x: Chebyshev (T, U, V, W, and their
shifted forms on [0, 1]), Hermite (physicists' H and probabilists' He), Laguerre and
Legendre. Each is its three-term recurrence, run once up to the largest degree asked for,
each element keeping the value at its own degree. x and n broadcast (either may be a
number); n is truncated to an integer, and a negative n gives 0. No gradient, as PyTorch
defines none for these."""
import contextlib

from minigrad import backend
from minigrad.tensor import Tensor
from minigrad.ops.elementwise import _floating
from minigrad.ops.promotion import _pair


def _polynomial(op, input, n, first, step, shifted=False):
    """p_n(x), from p_0 = 1, p_1 = first(x) and p_(k+1) = step(k, x, p_k, p_(k-1))."""
    for name, v in (("input", input), ("n", n)):
        if not isinstance(v, Tensor) and not backend.is_scalar(v):
            raise TypeError(f"{op}: {name} must be a tensor or a number, got "
                            f"{type(v).__name__}")
    if not isinstance(input, Tensor) and not isinstance(n, Tensor):
        raise TypeError(f"{op}: at least one of input and n must be a tensor")
    x, degree = _pair(input, n)
    wide = backend.promote_float(_floating(x).dtype, _floating(degree).dtype)
    x = x.to(dtype=wide)
    xp = x.backend.xp
    shape = backend.broadcast_shapes(x.shape, degree.shape)
    a = xp.broadcast_to(x._data, shape)
    if shifted:
        a = 2 * a - 1                                    # [0, 1] onto [-1, 1]
    k = xp.broadcast_to(xp.trunc(degree._data).astype(backend.int64)
                        if degree.dtype.kind == "f" else degree._data.astype(backend.int64),
                        shape)
    one = xp.ones(shape, wide)
    prev, cur = one, first(a).astype(wide, copy=False)
    out = xp.where(k < 0, 0, xp.where(k == 0, one, cur)).astype(wide, copy=False)
    top = int(Tensor._make(k, x.device).max().item()) if k.size else 0
    # inf and NaN give NaN as PyTorch's (inf - inf), without NumPy's warning (a GPU's array
    # module has no errstate, and warns of none)
    quiet = xp.errstate(invalid="ignore", over="ignore") if hasattr(xp, "errstate") \
        else contextlib.nullcontext()
    with quiet:
        for j in range(1, top):                          # cur is p_j: make p_(j+1)
            prev, cur = cur, step(j, a, cur, prev).astype(wide, copy=False)
            out = xp.where(k == j + 1, cur, out)
    return Tensor._make(out, x.device)



def _chebyshev_step(j, a, cur, prev):
    return 2 * a * cur - prev                            # the same for all four kinds


def chebyshev_polynomial_t(input, n):
    """The Chebyshev polynomial of the first kind Tₙ(x), as torch.special's."""
    return _polynomial("chebyshev_polynomial_t", input, n, lambda a: a,
                       _chebyshev_step)


def chebyshev_polynomial_u(input, n):
    """The Chebyshev polynomial of the second kind Uₙ(x), as torch.special's."""
    return _polynomial("chebyshev_polynomial_u", input, n, lambda a: 2 * a,
                       _chebyshev_step)


def chebyshev_polynomial_v(input, n):
    """The Chebyshev polynomial of the third kind Vₙ(x), as torch.special's."""
    return _polynomial("chebyshev_polynomial_v", input, n, lambda a: 2 * a - 1,
                       _chebyshev_step)


def chebyshev_polynomial_w(input, n):
    """The Chebyshev polynomial of the fourth kind Wₙ(x), as torch.special's."""
    return _polynomial("chebyshev_polynomial_w", input, n, lambda a: 2 * a + 1,
                       _chebyshev_step)


def shifted_chebyshev_polynomial_t(input, n):
    """Tₙ(2x - 1), the shifted Chebyshev polynomial of the first kind."""
    return _polynomial("shifted_chebyshev_polynomial_t", input, n, lambda a: a,
                       _chebyshev_step, shifted=True)


def shifted_chebyshev_polynomial_u(input, n):
    """Uₙ(2x - 1), the shifted Chebyshev polynomial of the second kind."""
    return _polynomial("shifted_chebyshev_polynomial_u", input, n, lambda a: 2 * a,
                       _chebyshev_step, shifted=True)


def shifted_chebyshev_polynomial_v(input, n):
    """Vₙ(2x - 1), the shifted Chebyshev polynomial of the third kind."""
    return _polynomial("shifted_chebyshev_polynomial_v", input, n, lambda a: 2 * a - 1,
                       _chebyshev_step, shifted=True)


def shifted_chebyshev_polynomial_w(input, n):
    """Wₙ(2x - 1), the shifted Chebyshev polynomial of the fourth kind."""
    return _polynomial("shifted_chebyshev_polynomial_w", input, n, lambda a: 2 * a + 1,
                       _chebyshev_step, shifted=True)


def hermite_polynomial_h(input, n):
    """The physicists' Hermite polynomial Hₙ(x): H_(k+1) = 2x·H_k - 2k·H_(k-1)."""
    return _polynomial("hermite_polynomial_h", input, n, lambda a: 2 * a,
                       lambda j, a, cur, prev: 2 * a * cur - 2 * j * prev)


def hermite_polynomial_he(input, n):
    """The probabilists' Hermite polynomial Heₙ(x): He_(k+1) = x·He_k - k·He_(k-1)."""
    return _polynomial("hermite_polynomial_he", input, n, lambda a: a,
                       lambda j, a, cur, prev: a * cur - j * prev)


def laguerre_polynomial_l(input, n):
    """The Laguerre polynomial Lₙ(x): (k + 1)·L_(k+1) = (2k + 1 - x)·L_k - k·L_(k-1)."""
    return _polynomial("laguerre_polynomial_l", input, n, lambda a: 1 - a,
                       lambda j, a, cur, prev: ((2 * j + 1 - a) * cur - j * prev) / (j + 1))


def legendre_polynomial_p(input, n):
    """The Legendre polynomial Pₙ(x): (k + 1)·P_(k+1) = (2k + 1)·x·P_k - k·P_(k-1)."""
    return _polynomial("legendre_polynomial_p", input, n, lambda a: a,
                       lambda j, a, cur, prev: ((2 * j + 1) * a * cur - j * prev) / (j + 1))
