"""Cache blocking for the fused ops' memory-bound arithmetic.

NumPy runs one pass over a whole array per operation, so a chain of eight elementwise passes
over a 100 MB activation streams it through memory eight times. Running the same chain on
cache-sized pieces, one piece at a time, touches memory once per piece instead. Only the CPU
backend sets a block size; elsewhere (a GPU) the chain runs once on the whole arrays. On
the CPU the pieces of a big array run on every core at once (parallel.py).
"""
from minigrad import parallel


def piece_size(backend, n):
    """Elements per piece of an n-element array: a cache block, twice that from the size at
    which threads run the pieces (parallel.py): fewer, longer passes, as the GIL changes
    hands at every pass of a chain (GELU and layer norm on the small GPT preset's
    activations ~10% faster on 2 threads). The size decides, not the thread count, so the
    pieces, and the results, are the same with threads or without. None: no blocking."""
    block = backend.cache_block
    return block and block * (2 if n >= parallel.MIN_SIZE else 1)


def in_pieces(backend, fn, *arrays):
    """fn(*pieces) on matching pieces of the flattened arrays, which must be C-contiguous
    and of one size (outputs are written through the pieces, which are views)."""
    n = arrays[0].size
    block = piece_size(backend, n)
    if not block or n <= block or any(a.shape != arrays[0].shape for a in arrays):
        return fn(*arrays)
    flats = [a.reshape(-1) for a in arrays]
    parallel.run(fn, [[f[start:start + block] for f in flats] for start in range(0, n, block)],
                 n)


def row_pieces(backend, *arrays):
    """Matching blocks of whole rows (the last axis) of C-contiguous arrays with one leading
    shape (their rows may differ in length: a (R, D) array beside its (R, 1) statistics), as
    a list of argument lists: one, of the arrays themselves, where no blocking applies."""
    first = arrays[0]
    n = first.size
    block = piece_size(backend, n)
    if not block or n <= block or first.ndim == 0 or \
            any(a.shape[:-1] != first.shape[:-1] for a in arrays):
        return [list(arrays)]
    rows = [a.reshape(-1, a.shape[-1]) for a in arrays]
    step = max(1, block // (first.shape[-1] or 1))
    return [[r[start:start + step] for r in rows] for start in range(0, rows[0].shape[0], step)]


def in_row_pieces(backend, fn, *arrays):
    """fn(*pieces) on row_pieces(backend, *arrays), for chains that also reduce along the rows
    (softmax, layer norm)."""
    parallel.run(fn, row_pieces(backend, *arrays), arrays[0].size)


def groups(backend, n, item_size, blocks=1):
    """(start, stop) ranges covering n items of item_size elements each, as many items per
    range as fit in `blocks` cache blocks (at least one); one range when the backend does
    no blocking. For ops that run a chain per group of whole matrices (attention)."""
    block = backend.cache_block
    step = n if not block else max(1, blocks * block // max(item_size, 1))
    return [(lo, min(lo + step, n)) for lo in range(0, n, step)] or [(0, 0)]


def contiguous(xp, a):
    """a as a C-contiguous array (a copy only if needed; a 0-d array stays 0-d, which
    NumPy's ascontiguousarray would make 1-d)."""
    return a if a.ndim == 0 else xp.ascontiguousarray(a)
