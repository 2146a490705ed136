"""The CPU side of the backend seam: the "cpu" device's Backend assembled from NumPy (as
backend.py, the seam's one importer of array libraries, imported it) and SciPy where it is
installed, with what the host does its own way: dropout masks from the generator's raw
bits, and the scatter-add as a sparse product."""
import math

from minigrad import backend, parallel

np = backend.np


class HostBackend(backend.Backend):
    """NumPy's functions; SciPy's erf and special functions (math.erf and None without
    SciPy); arrays in host memory; fused ops' passes run piece by piece in cache."""

    def __init__(self):
        super().__init__("cpu", np, host_erf(), host_index_add, lambda a: a, np.asarray,
                         backend.scipy_module("special"))
        self.cache_block = 1 << 16        # 256 KiB of float32: a few pieces fit in L2
        self.host = True

    def keep_mask(self, shape, p, out=None):
        """Booleans, each True with probability 1 - p (dropout's mask): 32 bits of NumPy's
        raw 64-bit draws per element compared with p·2³², about twice as fast as drawing
        floats and exact to 2⁻³² (how many random bits a raw draw holds differs between
        generators, so a GPU draws uniform floats instead)."""
        direct = out is not None and out.flags.c_contiguous   # out.reshape(-1): a view
        flat = out.reshape(-1) if direct else np.empty(math.prod(shape), bool)
        threshold = np.uint32(min(round(p * 2 ** 32), 2 ** 32 - 1))
        _keep_mask_bits(self.rng.bit_generator, threshold, flat)
        if out is None:
            return flat.reshape(shape)
        if not direct:
            np.copyto(out, flat.reshape(shape))
        return out


MASK_CHUNK = 1 << 20    # mask elements drawn at a time (even: two per 64-bit draw)


def _keep_mask_bits(bits, threshold, flat):
    """flat[i] = (the i-th 32-bit half of the generator's raw 64-bit draws) >= threshold. A
    big mask from a PCG64 generator is drawn in chunks, each from a copy of the generator
    advanced to the chunk's start (as if the draws before it had been made): the very bits
    of one draw, a chunk's raw draws held per thread, and the chunks on every core
    (parallel.py). The draws are taken from the generator at once, under its lock, so two
    threads drawing at a time get different masks."""
    n = flat.size
    if n <= MASK_CHUNK or not isinstance(bits, (np.random.PCG64, np.random.PCG64DXSM)):
        u = bits.random_raw((n + 1) // 2).view(np.uint32)[:n]
        np.greater_equal(u, threshold, out=flat)
        return
    with bits.lock:
        start = bits.state
        end = _advanced(bits, start, (n + 1) // 2).state
        # advance() drops a 32-bit half kept from an earlier draw (rng.random(dtype=
        # float32)), which random_raw leaves alone: it stays
        end.update({k: start[k] for k in ("has_uint32", "uinteger")})
        bits.state = end

    def chunk(i):
        m = min(MASK_CHUNK, n - i)
        u = _advanced(bits, start, i // 2).random_raw((m + 1) // 2).view(np.uint32)[:m]
        np.greater_equal(u, threshold, out=flat[i:i + m])
    parallel.run(chunk, [(i,) for i in range(0, n, MASK_CHUNK)], n)


def _advanced(bits, state, draws):
    """A new generator of bits's kind at `state`, then `draws` raw draws further."""
    copy = type(bits)(0)
    copy.state = state
    copy.advance(draws)
    return copy


def host_index_add(target, index, values):
    """target[index] += values with repeated indices summed, as np.add.at, which runs one
    element at a time (~7 ns each: 40 ms of an embedding gradient per small-preset step).
    For one integer array indexing the first axis this is a product with a sparse 0/1
    matrix, S[index[j], j] = 1, which SciPy runs ~15x faster (each row's values are summed
    in order, then added to the target). float16 values add up in float32, rounded once,
    as PyTorch's: one at a time in float16, 20,000 adds of 0.1 stall at 256."""
    if target.dtype == np.float16:
        wide = target.astype(np.float32)
        host_index_add(wide, index, np.asarray(values, dtype=np.float32))
        target[...] = wide
        return None
    if _slices_then_one_array(index, target.ndim):
        axis, rows = len(index) - 1, index[-1]
        if target.size // max(target.shape[axis], 1) >= 4096:
            # big slices along a later axis (interpolation's gradient: a few places per
            # output, each a whole (N, C, ...) slice): one strided add per index entry,
            # in order, so repeats add up; np.add.at was ~6x slower
            at = (slice(None),) * axis
            for j, row in enumerate(rows.tolist()):
                target[at + (row,)] += values[at + (j,)]
            return None
    sparse = backend.scipy_module("sparse")
    if sparse is None or not (
            isinstance(index, np.ndarray) and index.dtype.kind in "iu" and target.ndim
            and values.shape == index.shape + target.shape[1:] and values.dtype.kind == "f"
            and target.flags.c_contiguous):
        return np.add.at(target, index, values)
    rows, n = index.reshape(-1), target.shape[0]
    if rows.size == 0:
        return None
    rows = np.where(rows < 0, rows + n, rows)            # -1 and n-1 are one row
    hit, width = None, math.prod(target.shape[1:])
    # a big table: only the rows hit, found by a sort (~log2(rows) steps a value), where the
    # product's dense result costs the table's size (a 1-wide one, as max pool's gradient
    # into a flattened input, is cheap to fill: 4x as many places as values, as a 3x3
    # stride-2 pool's, was 2-6x faster dense)
    if n * width > rows.size * (width + math.log2(rows.size + 1)):
        hit, rows = np.unique(rows, return_inverse=True)
    elif width == 1:
        # a 1-wide table filled densely: bincount sums each row's values in order (in
        # float64, rounded once), 2-3x faster than the product
        flat = target.reshape(n)
        flat += np.bincount(rows, weights=values.reshape(-1), minlength=n)
        return None
    # column j of S holds its one 1 at row rows[j]: compressed columns need no sorting
    pick = sparse.csc_matrix((np.ones(rows.size, values.dtype), rows,
                              np.arange(rows.size + 1)),
                             shape=(n if hit is None else hit.size, rows.size))
    sums = pick @ values.reshape(rows.size, -1)
    flat = target.reshape(n, -1)
    if hit is None:
        flat += sums
    else:
        flat[hit] += sums
    return None


def _slices_then_one_array(index, ndim):
    """index is (:, ..., :, rows): whole slices, then one 1-D integer array, not on the
    first axis (that one is the sparse product's)."""
    return (isinstance(index, tuple) and 1 < len(index) <= ndim
            and all(isinstance(i, slice) and i == slice(None) for i in index[:-1])
            and isinstance(index[-1], np.ndarray) and index[-1].ndim == 1
            and index[-1].dtype.kind in "iu")


def host_erf():
    """SciPy's erf (full float64 precision; NumPy has none); without SciPy math.erf element
    by element, exact and slow, so everything still runs: only the exact GELU (and,
    through np.add.at, the embedding gradient) is slower."""
    special = backend.scipy_module("special")
    if special is not None:
        return special.erf
    one = np.frompyfunc(math.erf, 1, 1)
    return lambda a: one(a).astype(a.dtype if a.dtype.kind == "f" else np.float64)
