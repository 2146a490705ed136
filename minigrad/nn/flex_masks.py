"""The masks of torch.nn.attention.flex_attention: mask_mod functions, their combinators, and
BlockMask. A mask_mod(b, h, q_idx, kv_idx) -> bool says whether query q_idx of batch b and
head h may attend to key kv_idx. Where PyTorch vmaps it over every position, it is called
here once with broadcastable index tensors, b (B,1,1,1), h (1,H,1,1), q_idx (1,1,L,1) and
kv_idx (1,1,1,S), so it must be written with elementwise Tensor ops (comparisons, &, |,
indexing a captured tensor by an index), as PyTorch's vmap needs too.

A BlockMask keeps the dense boolean mask; its block metadata (BLOCK_SIZE, to_dense(),
sparsity()) describes that mask in PyTorch's block terms, but nothing skips blocks: minigrad's
flex_attention is eager and computes every score."""
import inspect
import numbers

from minigrad import backend
from minigrad.creation import arange, ones, zeros
from minigrad.grad_mode import no_grad
from minigrad.tensor import Tensor

__all__ = ["BlockMask", "create_block_mask", "create_mask", "and_masks", "or_masks",
           "noop_mask"]


def noop_mask(b, h, q_idx, kv_idx):
    """The mask_mod that allows every position."""
    return ones((), dtype=backend.bool_, device=b.device)


def _combine(op, name, mods):
    if not all(callable(m) for m in mods):
        raise TypeError(f"{name}: every argument must be a mask_mod function, got "
                        f"{[type(m).__name__ for m in mods]}")

    def mask_mod(b, h, q_idx, kv_idx):
        out = noop_mask(b, h, q_idx, kv_idx) if op == "and" else \
            zeros((), dtype=backend.bool_, device=b.device)
        for m in mods:
            out = out & m(b, h, q_idx, kv_idx) if op == "and" else out | m(b, h, q_idx, kv_idx)
        return out
    return mask_mod


def and_masks(*mask_mods):
    """The mask_mod allowing a position where every one of mask_mods does (all: none given)."""
    return _combine("and", "and_masks", mask_mods)


def or_masks(*mask_mods):
    """The mask_mod allowing a position where any one of mask_mods does (none: none given)."""
    return _combine("or", "or_masks", mask_mods)


def _indices(B, H, L, S, device):
    """(b, h, q_idx, kv_idx): int64 aranges shaped to broadcast to (B, H, L, S)."""
    return tuple(arange(n, device=device).reshape([n if i == d else 1 for i in range(4)])
                 for d, n in enumerate((B, H, L, S)))


def _is_score_mod(fn):
    """Whether fn takes five positional arguments (a score_mod) rather than four."""
    try:
        params = inspect.signature(fn).parameters.values()
    except (TypeError, ValueError):          # a builtin: taken as a mask_mod
        return False
    return sum(p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD) and
               p.default is p.empty for p in params) == 5


def _evaluate_mask(mask_mod, B, H, L, S, device, op):
    """mask_mod over the (B, H, L, S) grid: a bool Tensor of that shape, no graph."""
    with no_grad():
        out = mask_mod(*_indices(B, H, L, S, device))
        return _full_bool(out, (B, H, L, S), op, "mask_mod")


def _full_bool(out, shape, op, what):
    if not isinstance(out, Tensor) or out.dtype != backend.bool_:
        kind = out.dtype if isinstance(out, Tensor) else type(out).__name__
        raise TypeError(f"{op}: {what} must return a boolean Tensor (built from its index "
                        f"tensors with comparisons, &, |), got {kind}")
    try:
        return out.broadcast_to(shape).clone() if out.shape != shape else out
    except ValueError:
        raise ValueError(f"{op}: {what} returned shape {out.shape}, which does not broadcast "
                         f"to (B, H, Q_LEN, KV_LEN) = {shape}") from None


def _is_int(n):
    """Whether n is an integer: a Python int or a NumPy one (a size read off an array)."""
    return isinstance(n, numbers.Integral) and not isinstance(n, bool)


def _lengths(op, *ns):
    """Q_LEN and KV_LEN as Python ints."""
    for name, n in zip(("Q_LEN", "KV_LEN"), ns):
        if not _is_int(n) or n < 0:
            raise ValueError(f"{op}: {name} must be a non-negative int, got {n!r}")
    return tuple(int(n) for n in ns)


def _batch(op, name, n):
    """B or H: None broadcasts (1)."""
    if n is None:
        return 1
    if not _is_int(n) or n < 1:
        raise ValueError(f"{op}: {name} must be a positive int or None (broadcast), got {n!r}")
    return int(n)


def create_mask(mod_fn, B, H, Q_LEN, KV_LEN, device=None):
    """The dense (B, H, Q_LEN, KV_LEN) boolean mask of a mask_mod, or of a score_mod (True
    where it leaves the score above -inf, scores of 0 given); B or H None: 1."""
    op = "create_mask"
    B, H = _batch(op, "B", B), _batch(op, "H", H)
    Q_LEN, KV_LEN = _lengths(op, Q_LEN, KV_LEN)
    if not _is_score_mod(mod_fn):
        return _evaluate_mask(mod_fn, B, H, Q_LEN, KV_LEN, device, op)
    with no_grad():
        out = mod_fn(zeros(B, H, Q_LEN, KV_LEN, device=device),
                     *_indices(B, H, Q_LEN, KV_LEN, device))
        return _full_bool(out != -float("inf"), (B, H, Q_LEN, KV_LEN), op, "score_mod")


def create_block_mask(mask_mod, B, H, Q_LEN, KV_LEN, device=None, BLOCK_SIZE=128,
                      _compile=False, separate_full_blocks=True, compute_dq_write_order=False,
                      dq_kv_order=True):
    """A BlockMask of mask_mod over (B, H, Q_LEN, KV_LEN), B or H None broadcasting (1).
    BLOCK_SIZE (an int, or (q, kv)) sets the blocks to_dense() and sparsity() count; the
    other arguments, about PyTorch's compiled kernels, are accepted and change nothing."""
    op = "create_block_mask"
    if not callable(mask_mod) or _is_score_mod(mask_mod):
        raise TypeError(f"{op}: requires a mask_mod(b, h, q_idx, kv_idx) function, got "
                        f"{'a score_mod' if callable(mask_mod) else type(mask_mod).__name__}")
    B, H = _batch(op, "B", B), _batch(op, "H", H)
    Q_LEN, KV_LEN = _lengths(op, Q_LEN, KV_LEN)
    dense = _evaluate_mask(mask_mod, B, H, Q_LEN, KV_LEN, device, op)
    return BlockMask(dense, BLOCK_SIZE, mask_mod)


def _sliced_mask_mod(b, h, q_idx, kv_idx):
    raise RuntimeError("the mask_mod of a sliced BlockMask is not available: it no longer "
                       "matches the batch and head indices; create the BlockMask anew")


class BlockMask:
    """A flex_attention mask: the dense boolean mask (B, H, Q_LEN, KV_LEN), B and H 1 where
    they broadcast, with PyTorch's BLOCK_SIZE, shape, sparsity(), to_dense() (the blocks
    holding any allowed position), mask_mod and slicing by batch and head."""

    def __init__(self, dense, BLOCK_SIZE=128, mask_mod=None):
        if _is_int(BLOCK_SIZE):
            BLOCK_SIZE = (BLOCK_SIZE, BLOCK_SIZE)
        if not (isinstance(BLOCK_SIZE, tuple) and len(BLOCK_SIZE) == 2 and
                all(_is_int(n) and n > 0 for n in BLOCK_SIZE)):
            raise ValueError(f"BlockMask: BLOCK_SIZE must be a positive int or a pair of them "
                             f"(q, kv), got {BLOCK_SIZE!r}")
        self.dense, self.BLOCK_SIZE = dense, tuple(int(n) for n in BLOCK_SIZE)
        self.mask_mod = _sliced_mask_mod if mask_mod is None else mask_mod
        self.seq_lengths = tuple(dense.shape[-2:])

    @property
    def shape(self):
        return tuple(self.dense.shape)

    def numel(self):
        return self.dense.numel()

    def _blocks(self):
        """The (B, H, q blocks, kv blocks) array: whether each block allows any position."""
        d = self.dense._data
        xp, (bq, bk) = self.dense.backend.xp, self.BLOCK_SIZE
        B, H, L, S = d.shape
        nq, nk = -(-L // bq), -(-S // bk)
        padded = xp.zeros((B, H, nq * bq, nk * bk), dtype=bool)   # the last blocks partial
        padded[:, :, :L, :S] = d
        return padded.reshape(B, H, nq, bq, nk, bk).any(axis=(3, 5))

    def to_dense(self):
        """The block-level mask (B, H, ceil(Q_LEN/BLOCK_SIZE[0]), ceil(KV_LEN/BLOCK_SIZE[1]))
        as int32: 1 for a block holding any allowed position, as PyTorch's."""
        return Tensor._make(self._blocks().astype(backend.int32), self.dense.device)

    def sparsity(self):
        """The percentage of the positions in blocks PyTorch would skip (every position
        masked): negative where the blocks overhang short sequences, as PyTorch's."""
        computed = int(self._blocks().sum()) * self.BLOCK_SIZE[0] * self.BLOCK_SIZE[1]
        return 100 * (1 - computed / self.numel()) if self.numel() else 0.0

    def __getitem__(self, index):
        """The mask of some batches and heads: an int keeps its dim (as PyTorch's)."""
        index = index if isinstance(index, tuple) else (index,)
        if len(index) > 2 or not all(isinstance(i, (int, slice)) for i in index):
            raise IndexError(f"BlockMask: index the batch and head dims with ints or slices, "
                             f"got {index!r}")
        index = tuple(slice(i, i + 1 or None) if isinstance(i, int) else i for i in index)
        return BlockMask(self.dense[index], self.BLOCK_SIZE, None)

    def to(self, device):
        return BlockMask(self.dense.to(device), self.BLOCK_SIZE, self.mask_mod)

    def _mask_for(self, B, H, L, S, device):
        """The boolean mask flex_attention applies to scores (B, H, L, S): mask_mod evaluated
        at the call's own batch and head indices, as PyTorch's eager flex_attention; a
        sliced mask (its mask_mod gone) broadcasts its dense mask. On the queries' device."""
        if (L, S) != self.seq_lengths:
            raise ValueError(f"flex_attention: block_mask was created for (Q_LEN, KV_LEN) = "
                             f"{self.seq_lengths}, but query and key have {L} and {S} positions;"
                             f" create it for these lengths")
        if self.mask_mod is not _sliced_mask_mod:
            return _evaluate_mask(self.mask_mod, B, H, L, S, device, "flex_attention")
        try:
            return self.dense.to(device).broadcast_to((B, H, L, S))
        except ValueError:
            raise ValueError(f"flex_attention: block_mask of shape {self.shape} does not "
                             f"broadcast to the batch and heads {(B, H)}") from None

    def to_string(self, grid_size=(20, 20), limit=4):
        """Each (batch, head)'s blocks (to_dense()) drawn in at most grid_size cells, as
        PyTorch's: █ where all are computed, ░ some, blank none; the first `limit` of them."""
        d = self._blocks()
        rows, cols = (grid_size, grid_size) if isinstance(grid_size, int) else grid_size
        B, H, L, S = d.shape
        rs, cs = max(1, -(-L // rows)), max(1, -(-S // cols))
        out = []
        for n, (b, h) in enumerate((b, h) for b in range(B) for h in range(H)):
            if n == limit:
                out.append("...\n(to_string(limit=N) prints more, or index the BlockMask)")
                break
            lines = [f"({b}, {h})"]
            for r in range(0, L, rs):
                cells = (d[b, h, r:r + rs, c:c + cs] for c in range(0, S, cs))
                lines.append("".join(2 * ("█" if x.all() else "░" if x.any() else " ")
                                     for x in cells))
            out.append("\n".join(lines) + "\n")
        return "\n".join(out)

    def __str__(self):
        return f"BlockMask(shape={self.shape}, sparsity={self.sparsity():.2f}%, \n" \
               f"{self.to_string().strip()}\n)"

    def __repr__(self):
        name = getattr(self.mask_mod, "__name__", self.mask_mod)
        return (f"BlockMask(shape={self.shape}, BLOCK_SIZE={self.BLOCK_SIZE}, "
                f"sparsity={self.sparsity():.2f}%, mask_mod={name})")
