"""The GPU side of the backend seam: the "cuda" device's Backend assembled from CuPy (which
backend.py imports only when a tensor first asks for "cuda"), and the scatter-add that gets
past the dtypes cupy.add.at refuses."""
from minigrad import backend


def cupy_backend(cupy, special):
    """The "cuda" device's Backend from the CuPy module and cupyx.scipy.special (which
    backend.py imports, the seam's one importer of array libraries): CuPy's functions, its
    erf and special functions, the float32 GEMMs' precision switch and the fused kernels."""
    b = backend.Backend("cuda", cupy, special.erf, widened_index_add(cupy, cupy.add.at),
                        cupy.asnumpy, cupy.asarray, special)
    b.set_matmul_precision = lambda precision: backend.cupy_matmul_precision(cupy, precision)
    from minigrad.backend_kernels import Kernels
    b.kernels = Kernels(cupy)
    b.synchronize = lambda: cupy.cuda.Device().synchronize()
    return b


ADD_AT_DTYPES = ("int32", "uint32", "uint64", "float16", "float32", "float64")


def widened_index_add(xp, add_at):
    """index_add through an add.at that takes only ADD_AT_DTYPES (CuPy's): int64, PyTorch's
    default integer, through uint64, its two's-complement twin (the same bits, the same
    wrap-around), and the narrower integers and bool through int32 and back (a bool sum is
    then True where any is). float16 adds up in float32, rounded once, as on the CPU."""
    def index_add(target, index, values):
        dt = target.dtype
        values = xp.asarray(values)
        if dt == backend.float16:
            wide = target.astype(backend.float32)
            add_at(wide, index, values.astype(backend.float32))
            target[...] = wide
            return None
        if dt.name in ADD_AT_DTYPES:
            return add_at(target, index, values.astype(dt, copy=False))
        if dt == backend.int64:
            return add_at(target.view("uint64"), index,
                          values.astype(backend.int64, copy=False).view("uint64"))
        wide = target.astype(backend.int32)
        add_at(wide, index, values.astype(backend.int32))
        target[...] = wide.astype(dt)
    index_add.add_at = add_at                  # which add.at it wraps (tests ask)
    return index_add
