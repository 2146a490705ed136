"""Fused elementwise kernels for the CUDA backend (CuPy's ElementwiseKernel).

On a GPU each array operation is a kernel launch (microseconds of Python and driver work)
and a trip of its operands through GPU memory. The ops' array code is written as chains of
in-place NumPy-style passes, which the CPU runs piece by piece in cache (ops/blocks.py);
on a GPU the same chain of eight passes is eight launches and eight trips. The chains that
run on every training step are fused here: tanh-GELU forward and backward, the Adam(W)
update, dropout, and the elementwise steps of layer norm and softmax. The ops use a kernel
where the backend has it (CuPy, float32/float64) and their readable chain everywhere else,
and tests check the two agree.

Each body below is plain arithmetic on one element, in the shared subset of CUDA C++ and
Python (`const T` declarations aside), so the tests run the very same text with NumPy on
the CPU (and compile it with nvcc where one is installed): that a kernel computes what its
chain computes is checked without a GPU.
"""
import functools
import warnings

C, A = 0.7978845608028654, 0.044715          # tanh-GELU: tanh(C·(x + A·x³)), C = √(2/π)

# name: (inputs, outputs, body); outputs given as arguments are updated in place. T is the
# first input's dtype; float64 parameters are scalars (Python floats), T, bool and float32
# ones arrays (CuPy broadcasts them against each other)
KERNELS = {
    # w = ½(1 + tanh(c(x + 0.044715x³))) (kept for backward) and y = x·w
    "gelu_tanh": ("T x", "T w, T y", f"""
        const T u = x * (T({C!r}) + T({C * A!r}) * x * x);
        w = T(0.5) + T(0.5) * tanh(u);
        y = x * w;
    """),
    # d = g·(w + 2c·x(1 + 3·0.044715x²)·w(1 - w)): d(x·w)/dx with 1 - t² = 4w(1 - w)
    "gelu_tanh_grad": ("T x, T w, T g", "T d", f"""
        const T q = x * (T({2 * C!r}) + T({6 * A * C!r}) * x * x);
        d = g * (w + q * w * (T(1) - w));
    """),
    # layer norm (ops/layer_norm.py): the row statistics are matrix-vector products; these
    # are the elementwise steps between them, mu and r broadcasting as (R, 1) columns
    "ln_center_sq": ("T x, T mu", "T sq", """
        const T c = x - mu;
        sq = c * c;
    """),
    "ln_rstd": ("T var, float64 eps", "T r", """
        r = T(1) / sqrt(var + T(eps));
    """),
    "ln_out": ("T x, T mu, T r, T w, T b", "T y", """
        y = (x - mu) * r * w + b;
    """),
    "ln_grad_t": ("T g, T x, T mu", "T t", """
        t = g * (x - mu);
    """),
    # mt = mean(g⊙(x - μ)) per row; r²·mt is backward's c1 (ops/layer_norm.py)
    "ln_grad_x": ("T g, T w, T mg, T x, T mu, T mt, T r", "T d", """
        d = r * (g * w - mg - (x - mu) * (r * r * mt));
    """),
    # softmax along rows (ops/softmax.py's stable_softmax): e = exp(x - m), m the row's max
    # raised to the lowest finite value, which gives what the chain's "shift by 0 where the
    # max is -inf" gives: a row of -inf gives zeros (and one holding +inf NaN, as PyTorch);
    # then p = e / Σe, 0 where Σe is 0
    "softmax_exp": ("T x, T m, float64 big", "T e", """
        e = exp(x - fmax(m, -T(big)));
    """),
    "softmax_div": ("T e, T den", "T p", """
        p = e / (den + T(den == T(0)));
    """),
    # dropout (ops/random.py): keep where the uniform draw u >= p (as the backend's
    # keep_mask), and y = x·keep·scale; its backward d = g·keep·scale
    "dropout": ("T x, float32 u, float64 p, float64 scale", "bool keep, T y", """
        keep = u >= float(p);
        y = x * T(keep) * T(scale);
    """),
    "dropout_grad": ("T g, bool keep, float64 scale", "T d", """
        d = g * T(keep) * T(scale);
    """),
    # one Adam step in place (optim/adam.py's equations): l2 is Adam's weight decay folded
    # into the gradient, decay AdamW's factor 1 - lr·λ; step = lr/(1 - β1ᵗ),
    # root = √(1 - β2ᵗ); c1 = 1 - β1 and c2 = 1 - β2, taken in double by the caller and
    # rounded once, as the array chain's `tmp *= 1 - beta2` (in float32, 1 - float32(0.999)
    # is 1.3e-5 off 0.001: every step's v would be that much smaller); c2·g before ·g, as
    # PyTorch's addcmul, so a large g does not overflow as g² would
    "adam": ("T g, float64 l2, float64 c1, float64 b2, float64 c2, float64 eps, float64 step, "
             "float64 root, float64 decay", "T p, T m, T v", """
        const T gg = g + T(l2) * p;
        m = m + T(c1) * (gg - m);
        v = T(b2) * v + (T(c2) * gg) * gg;
        p = p * T(decay) - T(step) * (m / (sqrt(v) / T(root) + T(eps)));
    """),
}


@functools.cache                # parsed once per kernel: the check runs on every call
def _t_positions(name):
    """Where kernel `name` takes a T array among its inputs, then outputs (a call passes the
    outputs to update in place, or none)."""
    params = ", ".join(KERNELS[name][:2]).split(", ")
    return [i for i, p in enumerate(params) if p.split()[0] == "T"]


class Kernels:
    """The fused kernels of one CuPy backend, compiled on first use. kernels(name, *args)
    returns the kernel's outputs, or None where the op should run its array chain instead:
    for a dtype other than float32/float64, for T arrays of two dtypes, or when the kernel
    failed the first time it ran (a compiler or driver that refuses it: said once, as a
    warning, and not tried again; a kernel that has worked raises its errors as they
    come)."""

    DTYPES = ("float32", "float64")

    def __init__(self, cupy):
        self.cupy, self.built, self.worked, self.failed = cupy, {}, set(), set()

    def __call__(self, name, *args):
        if name in self.failed or str(args[0].dtype) not in self.DTYPES:
            return None
        if any(args[i].dtype != args[0].dtype for i in _t_positions(name) if i < len(args)):
            return None             # CuPy binds T to one dtype; the chain promotes as NumPy
        try:
            kernel = self.built.get(name)
            if kernel is None:
                kernel = self.built[name] = self.cupy.ElementwiseKernel(
                    *KERNELS[name][:2], KERNELS[name][2], "minigrad_" + name)
            out = kernel(*args)
        except Exception as e:
            if name in self.worked:
                raise
            self.failed.add(name)
            warnings.warn(f"minigrad: the fused CUDA kernel {name!r} failed ({type(e).__name__}:"
                          f" {e}); its op runs unfused from now on (slower, same results)",
                          RuntimeWarning, stacklevel=3)
            return None
        self.worked.add(name)
        return out
