"""Batches of sequences of different lengths, as torch.nn.utils.rnn (also reachable as
`mg.nn.utils.rnn`): padding them to one length (`pad_sequence`, `unpad_sequence`) and
packing them (`PackedSequence`, `pack_padded_sequence`, `pad_packed_sequence`,
`pack_sequence`, `unpack_sequence`). Article 2.2.3.1: an RNN encoder over a padded batch.

A packed batch keeps only the real steps, time-major: the first step of every sequence,
then the second step of those that have one, and so on, with the sequences sorted longest
first, so that the ones still running at step t are always the first batch_sizes[t]:

    lengths [3, 1, 2] → sorted [3, 2, 1] (sorted_indices [0, 2, 1]), batch_sizes [3, 2, 1],
    data = [a0, c0, b0,  a1, c1,  a2]

RNN, GRU and LSTM run over it with no step ever reading padding, and take each sequence's
final state at its own last step. Every function here is made of differentiable indexing
(a gather whose gradient scatters back), so gradients reach the padded tensors.
Lengths, batch sizes and the index arithmetic live on the host, as PyTorch keeps
batch_sizes on the CPU; the data stays on its device.
"""
from collections import namedtuple

from minigrad import backend, creation
from minigrad.ops.shape import cat
from minigrad.tensor import Tensor

__all__ = ["PackedSequence", "invert_permutation", "pack_padded_sequence",
           "pad_packed_sequence", "pad_sequence", "unpad_sequence", "pack_sequence",
           "unpack_sequence"]


def _host():
    return backend.get("cpu").xp


class PackedSequence(namedtuple("PackedSequence",
                                ["data", "batch_sizes", "sorted_indices", "unsorted_indices"])):
    """A packed batch (see the module's docstring), a named tuple as PyTorch's:
    data (sum of lengths, *) — the real steps, time-major; batch_sizes (T,) int64 on the
    CPU — how many sequences run at each step; sorted_indices — the batch position of each
    sorted sequence (None where the batch came sorted); unsorted_indices — its inverse
    (computed from sorted_indices when not given). Make one with pack_padded_sequence or
    pack_sequence rather than by hand."""
    __slots__ = ()

    def __new__(cls, data, batch_sizes, sorted_indices=None, unsorted_indices=None):
        if unsorted_indices is None and sorted_indices is not None:
            unsorted_indices = invert_permutation(sorted_indices)
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args, **kwargs):
        """The same batch with data as data.to(...) (device and/or dtype); the indices follow
        the data's device, batch_sizes stays on the CPU (as PyTorch)."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        move = (lambda t: None if t is None else t.to(data.device))
        return type(self)(data, self.batch_sizes, move(self.sorted_indices),
                          move(self.unsorted_indices))

    def cpu(self): return self.to("cpu")
    def cuda(self): return self.to("cuda")
    def float(self): return self.to(dtype=backend.float32)
    def double(self): return self.to(dtype=backend.float64)

    @property
    def is_cuda(self):
        return self.data.device == "cuda"


def invert_permutation(permutation):
    """The permutation that undoes `permutation` (an int64 tensor): p[inverse[i]] = i."""
    if permutation is None:
        return None
    return permutation.argsort()


# ---- host-side bookkeeping -------------------------------------------------------------
class LengthsError(ValueError, RuntimeError):
    """Lengths that do not fit the batch (too many or few, below 1, not sorted): a
    ValueError, and a RuntimeError, which PyTorch raises there, so either catch works."""


def _lengths(op, lengths):
    """`lengths` (a list of ints, or a 1-D integer tensor or array on the CPU) as a host
    int64 array. PyTorch wants a 1-D CPU int64 tensor (or a list): lengths are read on the
    host to lay out the batch, so one on a GPU is refused, not silently copied back."""
    if isinstance(lengths, Tensor):
        device, lengths = lengths.device, lengths._data
    elif hasattr(lengths, "shape") and not backend.is_scalar(lengths):    # an array
        device = backend.device_of_array(lengths)
    else:
        device = "cpu"
    if device != "cpu":
        raise RuntimeError(f"{op}: 'lengths' must be on the CPU (a 1-D int64 tensor or a list "
                           f"of ints, as PyTorch's), got a tensor on {device}; pass "
                           f"lengths.cpu()")
    try:
        lengths = _host().asarray(lengths)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: 'lengths' must be a list of ints or a 1-D integer tensor, "
                        f"got {type(lengths).__name__}") from None
    if lengths.dtype.kind == "f" and bool((lengths == lengths.round()).all()):
        lengths = lengths.astype(backend.int64)     # [] reads as float, so does [4., 2.]
    if lengths.dtype.kind not in "iu":
        raise TypeError(f"{op}: 'lengths' must be integers (a list of ints or an int64 "
                        f"tensor), got dtype {lengths.dtype}; a length counts time steps")
    if lengths.ndim != 1:
        raise ValueError(f"{op}: 'lengths' must be 1-D, one length per sequence, got shape "
                         f"{tuple(lengths.shape)}")
    return lengths.astype(backend.int64)


def _batch_sizes(op, sequence):
    """A PackedSequence's batch_sizes as a host int64 array, checked against its data."""
    if not isinstance(sequence, PackedSequence):
        raise TypeError(f"{op}: expected a PackedSequence (from pack_padded_sequence or "
                        f"pack_sequence), got {type(sequence).__name__}")
    data, sizes = sequence.data, sequence.batch_sizes
    if not isinstance(data, Tensor) or data.ndim == 0:
        raise TypeError(f"{op}: the PackedSequence's data must be a tensor (sum of lengths, "
                        f"*), got {getattr(data, 'shape', type(data).__name__)}")
    sizes = backend.to_host(sizes._data if isinstance(sizes, Tensor) else sizes)
    bad = sizes.ndim != 1 or sizes.size == 0 or sizes.dtype.kind not in "iu"
    if not bad:
        bad = bool((sizes < 1).any() or (sizes[1:] > sizes[:-1]).any())
    if bad or int(sizes.sum()) != data.shape[0]:
        raise ValueError(f"{op}: the PackedSequence's batch_sizes {sizes.tolist()} are not "
                         f"those of its data (shape {data.shape}): they must be positive, "
                         f"non-increasing integers that sum to the data's {data.shape[0]} "
                         f"rows")
    return sizes.astype(backend.int64)


def _packed_positions(batch_sizes):
    """For each row of packed data: its time step, and its place in the sorted batch."""
    hx = _host()
    steps = hx.repeat(hx.arange(batch_sizes.size), batch_sizes)
    starts = hx.cumsum(batch_sizes) - batch_sizes
    return steps, hx.arange(steps.size) - hx.repeat(starts, batch_sizes)


def _padded(op, input, batch_first):
    """(T, B) of a padded batch (T, B, *) — (B, T, *) with batch_first."""
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: expected a padded Tensor, got {type(input).__name__}")
    if input.ndim < 2:
        layout = "(B, T, *)" if batch_first else "(T, B, *)"
        raise ValueError(f"{op}: expected padded sequences {layout}, at least 2 dims, got "
                         f"shape {input.shape}")
    T, B = input.shape[:2]
    return (B, T) if batch_first else (T, B)


def _check_count(op, lengths, T, B, shape, empty_ok):
    if lengths.size != B:
        raise LengthsError(f"{op}: got {lengths.size} lengths for a batch of {B} sequences "
                         f"(padded input of shape {shape}); give one length per sequence")
    low = 0 if empty_ok else 1
    for i, n in enumerate(lengths.tolist()):
        if n < low:
            raise LengthsError(f"{op}: every length must be at least {low}"
                             + ("" if empty_ok else " (an empty sequence cannot be packed)")
                             + f", but lengths[{i}] = {n}")
        if n > T:
            raise LengthsError(f"{op}: lengths[{i}] = {n} is longer than the {T} time steps of "
                             f"the padded input (shape {shape}); a length is at most T")


# ---- packing ---------------------------------------------------------------------------
def pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True):
    """Pack a padded batch (T, B, *) — (B, T, *) with batch_first — whose sequence b is
    lengths[b] steps long. With enforce_sorted (the default, as PyTorch) the lengths must
    already be longest first; enforce_sorted=False sorts them here (stably: equal lengths
    keep their order) and records the order in sorted_indices."""
    return _pack(input, lengths, batch_first, enforce_sorted, "pack_padded_sequence")


def _pack(input, lengths, batch_first, enforce_sorted, op):
    T, B = _padded(op, input, batch_first)
    lengths = _lengths(op, lengths)
    if B == 0:
        raise ValueError(f"{op}: the batch is empty (input shape {input.shape}); there is "
                         f"nothing to pack")
    _check_count(op, lengths, T, B, input.shape, empty_ok=False)
    hx = _host()
    order = None
    if not enforce_sorted:
        order = hx.argsort(-lengths, kind="stable")
        lengths = lengths[order]
    elif (lengths[1:] > lengths[:-1]).any():
        raise LengthsError(f"{op}: lengths {lengths.tolist()} must be sorted longest first "
                         f"(non-increasing) when enforce_sorted=True; sort the batch by "
                         f"length, or pass enforce_sorted=False to have it sorted here")
    # batch_sizes[t]: how many sequences are longer than t
    batch_sizes = (lengths[None, :] > hx.arange(int(lengths[0]))[:, None]).sum(1)
    steps, places = _packed_positions(batch_sizes)
    seqs = places if order is None else order[places]   # each packed row's sequence
    data = input[(seqs, steps) if batch_first else (steps, seqs)]
    sorted_indices = None if order is None else \
        Tensor(order.astype(backend.int64), device=input.device)
    return PackedSequence(data, Tensor(batch_sizes.astype(backend.int64)), sorted_indices)


def pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None):
    """Undo packing: (padded, lengths), padded (T, B, *) — (B, T, *) with batch_first — in
    the batch's original order with `padding_value` past each sequence's end, and lengths
    an int64 CPU tensor. T is the longest length, or total_length if given (at least that;
    e.g. to pad back to the length of the input that was packed)."""
    op = "pad_packed_sequence"
    batch_sizes = _batch_sizes(op, sequence)
    data, hx = sequence.data, _host()
    T, B, N = batch_sizes.size, int(batch_sizes[0]), data.shape[0]
    if total_length is not None:
        if not backend.is_integer(total_length) or total_length < T:
            raise ValueError(f"{op}: expected total_length to be an integer at least the "
                             f"length of the longest sequence in the batch, {T}, got "
                             f"total_length={total_length!r}")
        T = int(total_length)
    steps, places = _packed_positions(batch_sizes)
    lengths = (batch_sizes[None, :] > hx.arange(B)[:, None]).sum(1)   # of sorted place b
    if sequence.sorted_indices is not None:              # back to the caller's order
        places = backend.to_host(sequence.sorted_indices._data)[places]
        lengths = lengths[backend.to_host(sequence.unsorted_indices._data)]
    # where[t, b]: the row of data that is step t of sequence b, or N (the padding row)
    where = hx.full((T, B), N, dtype=backend.int64)
    where[steps, places] = hx.arange(N)
    pad_row = creation.full((1,) + data.shape[1:], padding_value, dtype=data.dtype,
                            device=data.device)
    padded = cat([data, pad_row])[where.T if batch_first else where]
    return padded, Tensor(lengths.astype(backend.int64))


def pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right"):
    """Stack sequences (L_i, *) of different lengths into one padded tensor (T, B, *) —
    (B, T, *) with batch_first — T the longest length, `padding_value` filling the rest on
    the right (after each sequence) or on the left (before it). As PyTorch, the result has
    the first sequence's dtype."""
    op = "pad_sequence"
    if padding_side not in ("left", "right"):
        raise ValueError(f"{op}: padding_side must be 'left' or 'right', got "
                         f"{padding_side!r}")
    seqs = list(sequences)
    if not seqs:
        raise ValueError(f"{op}: received an empty list of sequences; give at least one "
                         f"tensor (L, *)")
    first = seqs[0]
    for i, s in enumerate(seqs):
        if not isinstance(s, Tensor):
            raise TypeError(f"{op}: sequence {i} is a {type(s).__name__}, not a Tensor")
        if s.ndim == 0:
            raise ValueError(f"{op}: sequence {i} is 0-d; each sequence is (L, *), its "
                             f"length first")
        if s.shape[1:] != first.shape[1:]:
            raise ValueError(f"{op}: sequence {i} has shape {s.shape} but sequence 0 has "
                             f"{first.shape}; all must share the dims after the length, "
                             f"here (L, {', '.join(map(str, first.shape[1:]))})")
        if s.device != first.device:
            raise RuntimeError(f"{op}: sequence {i} is on {s.device} but sequence 0 on "
                               f"{first.device}; move them to one device first")
    lengths = [s.shape[0] for s in seqs]
    T, total, hx = max(lengths), sum(lengths), _host()
    pad_row = creation.full((1,) + first.shape[1:], padding_value, dtype=first.dtype,
                            device=first.device)
    rows = cat([s if s.dtype == first.dtype else s.to(dtype=first.dtype) for s in seqs]
               + [pad_row])
    # where[b, t]: the row of `rows` that is step t of sequence b, or `total` (padding)
    where, start = hx.full((len(seqs), T), total, dtype=backend.int64), 0
    for b, n in enumerate(lengths):
        where[b, slice(0, n) if padding_side == "right" else slice(T - n, T)] = \
            hx.arange(start, start + n)
        start += n
    return rows[where if batch_first else where.T]


def unpad_sequence(padded_sequences, lengths, batch_first=False):
    """Undo pad_sequence: the list of sequences (lengths[b], *) of a padded batch (T, B, *)
    — (B, T, *) with batch_first. Each is a view of the padded tensor (gradients flow)."""
    op = "unpad_sequence"
    T, B = _padded(op, padded_sequences, batch_first)
    lengths = _lengths(op, lengths)
    _check_count(op, lengths, T, B, padded_sequences.shape, empty_ok=True)
    x = padded_sequences if batch_first else padded_sequences.transpose(0, 1)
    return [x[b, :n] for b, n in enumerate(lengths.tolist())]


def pack_sequence(sequences, enforce_sorted=True):
    """Pack a list of sequences (L_i, *): pad_sequence, then pack_padded_sequence with
    their lengths (longest first unless enforce_sorted=False, as there)."""
    seqs = list(sequences)
    padded = pad_sequence(seqs)
    return _pack(padded, [s.shape[0] for s in seqs], False, enforce_sorted, "pack_sequence")


def unpack_sequence(packed_sequences):
    """Undo pack_sequence: the list of sequences (L_i, *), in the batch's original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)
