"""Variable-length batches (minigrad/nn/packed.py, `mg.nn.utils.rnn`): pad_sequence,
pack_padded_sequence, pad_packed_sequence, pack_sequence, unpad/unpack, and RNN/GRU/LSTM
over a PackedSequence. Without torch: literal small examples, float64 gradchecks, the
property that defines packing (a sequence's outputs and final state are those it has run
alone, whatever the other sequences and the padding hold) and the errors. Where torch is
installed: values and gradients of every function and packed layer against it."""
import numpy as np
import pytest

import minigrad as mg
from minigrad import nn
from minigrad.nn.utils.rnn import (PackedSequence, invert_permutation, pack_padded_sequence,
                                   pad_packed_sequence, pad_sequence, unpad_sequence,
                                   pack_sequence, unpack_sequence)
from nn_helpers import copy_weights, gradcheck_module


def _x(*shape, seed=0):
    return np.random.default_rng(seed).standard_normal(shape)


def _steps(T, B):
    """x[t, b] = 10·b + t + 1 (T, B, 1): each element says which sequence and step it is."""
    return mg.tensor([[[10.0 * b + t + 1] for b in range(B)] for t in range(T)])


# ---- literal examples ------------------------------------------------------------------
def test_pack_padded_sequence_by_hand():
    x = _steps(3, 3)
    p = pack_padded_sequence(x, [3, 2, 1])
    assert isinstance(p, PackedSequence) and p._fields == (
        "data", "batch_sizes", "sorted_indices", "unsorted_indices")
    assert p.data[:, 0].tolist() == [1, 11, 21, 2, 12, 3]
    assert p.batch_sizes.tolist() == [3, 2, 1] and p.batch_sizes.dtype == mg.int64
    assert p.sorted_indices is None and p.unsorted_indices is None
    # unsorted: sequence 1 is the shortest, 2 the middle one
    p = pack_padded_sequence(x, mg.tensor([3, 1, 2]), enforce_sorted=False)
    assert p.data[:, 0].tolist() == [1, 21, 11, 2, 22, 3]
    assert p.batch_sizes.tolist() == [3, 2, 1]
    assert p.sorted_indices.tolist() == [0, 2, 1] and p.unsorted_indices.tolist() == [0, 2, 1]
    # batch_first reads (B, T, *); equal lengths keep their order (a stable sort)
    p = pack_padded_sequence(x.transpose(0, 1), [2, 3, 2], batch_first=True,
                             enforce_sorted=False)
    assert p.sorted_indices.tolist() == [1, 0, 2]
    assert p.data[:, 0].tolist() == [11, 1, 21, 12, 2, 22, 13]
    assert p.batch_sizes.tolist() == [3, 3, 1]


def test_pad_packed_sequence_by_hand():
    x = _steps(3, 3)
    p = pack_padded_sequence(x, [3, 1, 2], enforce_sorted=False)
    padded, lengths = pad_packed_sequence(p, padding_value=-1.0)
    assert lengths.tolist() == [3, 1, 2] and lengths.dtype == mg.int64
    assert padded[..., 0].tolist() == [[1, 11, 21], [2, -1, 22], [3, -1, -1]]
    padded, _ = pad_packed_sequence(p, batch_first=True, total_length=4)
    assert padded[..., 0].tolist() == [[1, 2, 3, 0], [11, 0, 0, 0], [21, 22, 0, 0]]


def test_pad_sequence_by_hand():
    a, b = mg.tensor([1.0, 2.0, 3.0]), mg.tensor([4.0])
    assert pad_sequence([a, b]).tolist() == [[1, 4], [2, 0], [3, 0]]
    assert pad_sequence([a, b], batch_first=True, padding_value=9).tolist() == \
        [[1, 2, 3], [4, 9, 9]]
    assert pad_sequence([a, b], batch_first=True, padding_side="left").tolist() == \
        [[1, 2, 3], [0, 0, 4]]
    # trailing dims are kept; an empty sequence is all padding; the dtype is the first's
    out = pad_sequence([mg.ones(2, 3), mg.zeros(0, 3, dtype=mg.float64)], batch_first=True,
                       padding_value=5)
    assert out.shape == (2, 2, 3) and out.dtype == mg.float32
    assert out[1].tolist() == [[5] * 3] * 2
    ids = pad_sequence([mg.tensor([3, 4]), mg.tensor([5])], batch_first=True)
    assert ids.dtype == mg.int64 and ids.tolist() == [[3, 4], [5, 0]]


def test_unpad_unpack_and_pack_sequence_by_hand():
    a, b, c = mg.tensor([1.0, 2.0]), mg.tensor([3.0, 4.0, 5.0]), mg.tensor([6.0])
    padded = pad_sequence([a, b, c])
    assert [s.tolist() for s in unpad_sequence(padded, [2, 3, 1])] == [[1, 2], [3, 4, 5], [6]]
    assert [s.tolist() for s in unpad_sequence(padded.T, mg.tensor([2, 3, 1]),
                                               batch_first=True)] == [[1, 2], [3, 4, 5], [6]]
    p = pack_sequence([a, b, c], enforce_sorted=False)
    assert p.data.tolist() == [3, 1, 6, 4, 2, 5] and p.batch_sizes.tolist() == [3, 2, 1]
    assert [s.tolist() for s in unpack_sequence(p)] == [[1, 2], [3, 4, 5], [6]]
    p = pack_sequence([b, a, c])
    assert p.data.tolist() == [3, 1, 6, 4, 2, 5] and p.sorted_indices is None


def test_packed_sequence_tuple_to_and_inverse():
    p = pack_sequence([mg.ones(3, 2), mg.ones(1, 2)], enforce_sorted=False)
    data, batch_sizes, sorted_indices, unsorted_indices = p      # a named tuple
    assert repr(p).startswith("PackedSequence(data=tensor(")
    q = p.double()
    assert q.data.dtype == mg.float64 and q.batch_sizes is p.batch_sizes
    assert p.to(mg.float32) is p and not p.is_cuda
    made = PackedSequence(data, batch_sizes, mg.tensor([2, 0, 1]))
    assert made.unsorted_indices.tolist() == [1, 2, 0]
    assert invert_permutation(mg.tensor([1, 2, 0])).tolist() == [2, 0, 1]
    assert invert_permutation(None) is None


def test_gradients_reach_the_padded_input():
    x = _steps(3, 3).requires_grad_()
    p = pack_padded_sequence(x, [1, 3, 2], enforce_sorted=False)
    (p.data * mg.arange(1, 7).reshape(6, 1)).sum().backward()
    # each packed row's weight lands at its (step, sequence); padding gets none
    assert x.grad[..., 0].tolist() == [[3, 1, 2], [0, 4, 5], [0, 6, 0]]
    seqs = [mg.tensor([1.0, 2.0], requires_grad=True), mg.tensor([3.0], requires_grad=True)]
    out = pad_sequence(seqs, padding_side="left")
    (out * mg.tensor([[1.0, 2.0], [3.0, 4.0]])).sum().backward()
    assert seqs[0].grad.tolist() == [1, 3] and seqs[1].grad.tolist() == [4]


def test_float64_gradcheck_of_every_function():
    x = mg.randn(4, 3, 2, dtype=mg.float64, requires_grad=True)

    def round_trip(x):
        p = pack_padded_sequence(x, [2, 4, 1], enforce_sorted=False)
        return p.data, pad_packed_sequence(p, batch_first=True, padding_value=0.5)[0]
    assert mg.gradcheck(round_trip, [x])
    seqs = [mg.randn(n, 2, dtype=mg.float64, requires_grad=True) for n in (3, 1, 2)]
    assert mg.gradcheck(lambda *s: (pad_sequence(s), pad_sequence(s, True, 1.0, "left"),
                                    pack_sequence(s, enforce_sorted=False).data,
                                    unpack_sequence(pack_sequence(s, False)),
                                    unpad_sequence(pad_sequence(s), [3, 1, 2])), seqs)


# ---- the recurrent layers over a packed batch ------------------------------------------
class _Packed(nn.Module):
    """module(pack(x, lengths), states) -> (padded output, final states): a packed run as a
    function of tensors, for gradcheck."""
    def __init__(self, rnn, lengths):
        super().__init__()
        self.rnn, self.lengths = rnn, lengths

    def forward(self, x, *states):
        p = pack_padded_sequence(x, self.lengths, self.rnn.batch_first, enforce_sorted=False)
        out, hn = self.rnn(p, (states if len(states) == 2 else states[0]) if states else None)
        return pad_packed_sequence(out, self.rnn.batch_first)[0], hn


def test_lstm_over_a_packed_batch_gradcheck():
    mg.manual_seed(0)
    lstm = nn.LSTM(2, 2, num_layers=2, bidirectional=True)
    gradcheck_module(_Packed(lstm, [2, 3, 1]), mg.randn(3, 3, 2), mg.randn(4, 3, 2),
                     mg.randn(4, 3, 2))


@pytest.mark.parametrize("name", ["RNN", "GRU"])
def test_rnn_and_gru_over_a_packed_batch_gradcheck(name):
    mg.manual_seed(0)
    rnn = getattr(nn, name)(2, 2, bidirectional=True, batch_first=True)
    gradcheck_module(_Packed(rnn, [1, 3]), mg.randn(2, 3, 2), mg.randn(2, 2, 2))


def _alone(module, x, b, n, states):
    """Sequence b's output (n, D·H) and final states, run by itself (a batch of one)."""
    xb = x[b:b + 1, :n] if module.batch_first else x[:n, b:b + 1]
    sb = tuple(s[:, b:b + 1] for s in states)
    out, hn = module(xb, (sb if len(sb) == 2 else sb[0]) if sb else None)
    hn = hn if isinstance(hn, tuple) else (hn,)
    return (out[0] if module.batch_first else out[:, 0]), [h[:, 0] for h in hn]


@pytest.mark.parametrize("name", ["RNN", "GRU", "LSTM"])
@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("with_state", [False, True])
def test_a_sequence_runs_as_if_alone(name, batch_first, with_state):
    """The property that defines packing: each sequence's outputs and h_n (c_n) are what it
    gives run alone, at its own length; the other sequences and the padding values change
    nothing. (Reverse direction included: its final state is at the sequence's first step.)"""
    mg.manual_seed(0)
    module = getattr(nn, name)(3, 4, num_layers=2, bidirectional=True,
                               batch_first=batch_first).double()
    lengths, T = [2, 4, 1, 3], 4
    x = mg.tensor(_x(4, T, 3) if batch_first else _x(T, 4, 3))
    states = tuple(mg.tensor(_x(4, 4, 4, seed=s)) for s in range(1 + (name == "LSTM"))) \
        if with_state else ()
    run = _Packed(module, lengths)
    out, hn = run(x, *states)
    hn = hn if isinstance(hn, tuple) else (hn,)
    for b, n in enumerate(lengths):
        want_out, want_hn = _alone(module, x, b, n, states)
        got = out[b] if batch_first else out[:, b]
        np.testing.assert_allclose(got[:n].numpy(), want_out.numpy(), rtol=1e-12, atol=1e-12)
        assert not got[n:].numpy().any()                     # padding: zeros
        for h, want in zip(hn, want_hn):
            np.testing.assert_allclose(h[:, b].numpy(), want.numpy(), rtol=1e-12, atol=1e-12)
    # new padding values, and the other sequences replaced: sequence 0 is unchanged
    y = x.numpy().copy()
    mask = np.arange(T)[:, None] >= np.array(lengths)[None, :]
    y[mask.T if batch_first else mask] = 1e3
    y[(slice(1, None),) if batch_first else (slice(None), slice(1, None))] *= -2
    out2, hn2 = run(mg.tensor(y), *states)
    hn2 = hn2 if isinstance(hn2, tuple) else (hn2,)
    first = (lambda t: t[0]) if batch_first else (lambda t: t[:, 0])
    np.testing.assert_allclose(first(out2).numpy(), first(out).numpy(), rtol=1e-12, atol=1e-12)
    for h, h2 in zip(hn, hn2):
        np.testing.assert_allclose(h2[:, 0].numpy(), h[:, 0].numpy(), rtol=1e-12, atol=1e-12)


def test_packed_output_and_gradients_of_padding():
    mg.manual_seed(0)
    gru = nn.GRU(2, 3, bidirectional=True)
    x = mg.randn(4, 3, 2, requires_grad=True)
    out, h = gru(pack_padded_sequence(x, [4, 2, 3], enforce_sorted=False))
    assert isinstance(out, PackedSequence) and out.data.shape == (9, 6) and h.shape == (2, 3, 3)
    assert out.batch_sizes is not None and out.sorted_indices.tolist() == [0, 2, 1]
    (out.data.sum() + h.sum()).backward()
    g = x.grad.numpy()
    assert not g[2:, 1].any() and not g[3:, 2].any() and g[:2, 1].all()


@pytest.mark.parametrize("name", ["GRU", "LSTM"])
def test_packed_layers_on_every_device(device, name):
    """The same outputs and gradients on each device as on the CPU."""
    mg.manual_seed(0)
    cpu = getattr(nn, name)(2, 3, num_layers=2, bidirectional=True)
    on = getattr(nn, name)(2, 3, num_layers=2, bidirectional=True).to(device)
    on.load_state_dict(cpu.state_dict())
    x = mg.randn(4, 3, 2)
    results = []
    for module, xd in ((cpu, x.clone().requires_grad_()),
                       (on, x.to(device).requires_grad_())):
        out, hn = module(pack_padded_sequence(xd, [2, 4, 1], enforce_sorted=False))
        hn = hn[0] if isinstance(hn, tuple) else hn
        padded = pad_packed_sequence(out, padding_value=0.25)[0]
        ((padded * padded).sum() + hn.sum()).backward()
        assert padded.device == hn.device == device
        results.append([padded.numpy(), hn.numpy(), xd.grad.numpy(),
                        module.weight_hh_l1_reverse.grad.numpy()])
    for a, b in zip(*results):
        np.testing.assert_allclose(b, a, rtol=1e-4, atol=1e-5)


def test_packed_layers_stay_on_the_device(spy):
    """Data and indices on the device (the spy stand-in for CuPy), batch_sizes and lengths
    on the host, the same numbers as on the CPU."""
    mg.manual_seed(0)
    lstm = nn.LSTM(2, 3, bidirectional=True)
    x = mg.randn(3, 3, 2)
    want, (want_h, _) = lstm(pack_padded_sequence(x, [1, 3, 2], enforce_sorted=False))
    p = pack_padded_sequence(x, [1, 3, 2], enforce_sorted=False).to(spy)
    assert p.sorted_indices.device == p.unsorted_indices.device == spy
    out, (h, c) = lstm.to(spy)(p)
    assert out.data.device == h.device == spy and out.batch_sizes.device == "cpu"
    padded, lengths = pad_packed_sequence(out)
    assert padded.device == spy and lengths.device == "cpu"
    np.testing.assert_allclose(padded.numpy(), pad_packed_sequence(want)[0].numpy(),
                               rtol=1e-6)
    np.testing.assert_allclose(h.numpy(), want_h.numpy(), rtol=1e-6)


# ---- errors ----------------------------------------------------------------------------
def test_bad_lengths_raise_clear_errors():
    x = mg.randn(4, 3, 2)
    cases = [
        (lambda: pack_padded_sequence(x, [2, 3, 1]), ValueError,
         r"lengths \[2, 3, 1\] must be sorted longest first.*enforce_sorted=False"),
        (lambda: pack_padded_sequence(x, [3, 2, 0]), ValueError,
         r"at least 1 \(an empty sequence cannot be packed\), but lengths\[2\] = 0"),
        (lambda: pack_padded_sequence(x, [3, -1, 2], enforce_sorted=False), ValueError,
         r"lengths\[1\] = -1"),
        (lambda: pack_padded_sequence(x, [5, 2, 1]), ValueError,
         r"lengths\[0\] = 5 is longer than the 4 time steps"),
        (lambda: pack_padded_sequence(x, [4, 2, 1], batch_first=True), ValueError,
         r"got 3 lengths for a batch of 4 sequences"),
        (lambda: pack_padded_sequence(x, [3, 2]), ValueError, "got 2 lengths for a batch of 3"),
        (lambda: pack_padded_sequence(x, mg.tensor([3.5, 2.0, 1.0])), TypeError,
         "must be integers.*got dtype float32"),
        (lambda: pack_padded_sequence(x, [3.5, 2, 1]), TypeError, "must be integers"),
        (lambda: pack_padded_sequence(x, mg.tensor([[3, 2, 1]])), ValueError,
         r"must be 1-D.*shape \(1, 3\)"),
        (lambda: pack_padded_sequence(x, "321"), TypeError, "must be integers"),
        (lambda: pack_padded_sequence(mg.randn(4), [4]), ValueError,
         r"expected padded sequences \(T, B, \*\).*shape \(4,\)"),
        (lambda: pack_padded_sequence(mg.randn(4, 0, 2), []), ValueError, "batch is empty"),
        (lambda: unpad_sequence(x, [3, 5, 1]), ValueError, r"lengths\[1\] = 5 is longer"),
        (lambda: unpad_sequence(x, [3, 2]), ValueError, "got 2 lengths for a batch of 3"),
        (lambda: pack_sequence([mg.ones(2, 1), mg.ones(3, 1)]), ValueError,
         r"pack_sequence: lengths \[2, 3\] must be sorted"),
        (lambda: pack_sequence([mg.ones(2, 1), mg.ones(0, 1)]), ValueError,
         r"pack_sequence: every length must be at least 1"),
    ]
    for fn, kind, match in cases:
        with pytest.raises(kind, match=match):
            fn()


def test_lengths_on_a_gpu_are_refused(spy):
    x = mg.randn(4, 2, 1)
    with pytest.raises(RuntimeError, match=r"'lengths' must be on the CPU.*got a tensor on "
                                           r"spy.*lengths.cpu\(\)"):
        pack_padded_sequence(x, mg.tensor([3, 2], device=spy))


def test_bad_sequences_and_packed_batches_raise_clear_errors():
    p = pack_sequence([mg.ones(3, 2), mg.ones(1, 2)])
    cases = [
        (lambda: pad_sequence([mg.ones(3, 2), mg.ones(2, 3)]), ValueError,
         r"sequence 1 has shape \(2, 3\) but sequence 0 has \(3, 2\).*\(L, 2\)"),
        (lambda: pad_sequence([mg.ones(3, 2), mg.ones(2)]), ValueError, "sequence 1 has shape"),
        (lambda: pad_sequence([]), ValueError, "empty list of sequences"),
        (lambda: pad_sequence([mg.ones(()), mg.ones(())]), ValueError, "sequence 0 is 0-d"),
        (lambda: pad_sequence([mg.ones(2), [1.0]]), TypeError, "sequence 1 is a list"),
        (lambda: pad_sequence([mg.ones(2)], padding_side="middle"), ValueError,
         "padding_side must be 'left' or 'right', got 'middle'"),
        (lambda: pad_packed_sequence(p, total_length=2), ValueError,
         r"total_length to be an integer at least the length of the longest.*3.*=2"),
        (lambda: pad_packed_sequence(mg.ones(3, 2)), TypeError, "expected a PackedSequence"),
        (lambda: pad_packed_sequence(PackedSequence(mg.ones(3, 2), mg.tensor([2, 2]))),
         ValueError, r"batch_sizes \[2, 2\] are not those of its data"),
        (lambda: pad_packed_sequence(PackedSequence(mg.ones(3, 2), mg.tensor([1, 2]))),
         ValueError, "non-increasing"),
    ]
    for fn, kind, match in cases:
        with pytest.raises(kind, match=match):
            fn()


def test_layers_refuse_bad_packed_input():
    lstm = nn.LSTM(2, 3)
    p = pack_sequence([mg.ones(3, 2), mg.ones(1, 2)])
    with pytest.raises(ValueError, match=r"expected h0 of shape \(1, 2, 3\).*got \(1, 3, 3\)"):
        lstm(p, (mg.zeros(1, 3, 3), mg.zeros(1, 3, 3)))
    with pytest.raises(ValueError, match="expected input feature size .*2, got 5"):
        lstm(pack_sequence([mg.ones(3, 5)]))
    with pytest.raises(ValueError, match=r"data must be \(sum of lengths, input_size\)"):
        lstm(pack_sequence([mg.ones(3, 1, 2)]))
    with pytest.raises(ValueError, match="dtype float64 does not match"):
        lstm(p.double())
    with pytest.raises(ValueError, match="batch_sizes"):
        lstm(PackedSequence(mg.ones(3, 2), mg.tensor([2])))


# ---- against PyTorch -------------------------------------------------------------------
def _torch():
    return pytest.importorskip("torch")


def _pair(torch, a):
    """The same float64 array as a minigrad and a torch leaf that want gradients."""
    return (mg.tensor(a, dtype=mg.float64, requires_grad=True),
            torch.tensor(a, dtype=torch.float64, requires_grad=True))


def _compare(torch, outs, leaves, tol=1e-10):
    """outs: [(minigrad tensor, torch tensor)]: equal values, and equal gradients of every
    leaf pair under one random weighting of all outputs."""
    rng = np.random.default_rng(3)
    m_loss = t_loss = 0
    for m, t in outs:
        assert m.shape == tuple(t.shape)
        np.testing.assert_allclose(m.numpy(), t.detach().numpy(), rtol=tol, atol=tol)
        if t.dtype.is_floating_point:
            w = rng.standard_normal(m.shape)
            m_loss = m_loss + (m * mg.tensor(w)).sum()
            t_loss = t_loss + (t * torch.tensor(w)).sum()
    m_loss.backward()
    t_loss.backward()
    for m, t in leaves:
        np.testing.assert_allclose(m.grad.numpy(), t.grad.numpy(), rtol=tol, atol=tol)


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("lengths, enforce_sorted", [([4, 3, 1], True), ([4, 3, 3, 1], True),
                                                     ([1, 4, 2], False), ([3, 1, 2, 4], False)])
@pytest.mark.parametrize("tail", [(), (2, 3)])
def test_pack_and_pad_packed_match_torch(batch_first, lengths, enforce_sorted, tail):
    torch = _torch()
    R = torch.nn.utils.rnn
    B, T = len(lengths), 5
    m, t = _pair(torch, _x(*((B, T) if batch_first else (T, B)), *tail))
    mp = pack_padded_sequence(m, lengths, batch_first, enforce_sorted)
    tp = R.pack_padded_sequence(t, torch.tensor(lengths), batch_first, enforce_sorted)
    assert mp.batch_sizes.tolist() == tp.batch_sizes.tolist()
    for a, b in ((mp.sorted_indices, tp.sorted_indices), (mp.unsorted_indices,
                                                          tp.unsorted_indices)):
        assert (a is None) == (b is None) and (a is None or a.tolist() == b.tolist())
    outs = [(mp.data, tp.data)]
    for kw in (dict(), dict(padding_value=-2.0, total_length=6)):
        (mo, ml), (to, tl) = pad_packed_sequence(mp, batch_first, **kw), \
            R.pad_packed_sequence(tp, batch_first, **kw)
        assert ml.tolist() == tl.tolist()
        outs.append((mo, to))
    _compare(torch, outs, [(m, t)])


@pytest.mark.parametrize("batch_first", [False, True])
@pytest.mark.parametrize("padding_side", ["right", "left"])
def test_pad_sequence_and_friends_match_torch(batch_first, padding_side):
    torch = _torch()
    R = torch.nn.utils.rnn
    pairs = [_pair(torch, _x(n, 2, seed=n)) for n in (2, 4, 1)]
    ms, ts = [p[0] for p in pairs], [p[1] for p in pairs]
    outs = [(pad_sequence(ms, batch_first, 0.5, padding_side),
             R.pad_sequence(ts, batch_first, 0.5, padding_side))]
    mk, tk = pack_sequence(ms, enforce_sorted=False), R.pack_sequence(ts, enforce_sorted=False)
    assert mk.sorted_indices.tolist() == tk.sorted_indices.tolist()
    outs.append((mk.data, tk.data))
    outs += list(zip(unpack_sequence(mk), R.unpack_sequence(tk)))
    padded_m, padded_t = pad_sequence(ms, batch_first), R.pad_sequence(ts, batch_first)
    outs += list(zip(unpad_sequence(padded_m, [2, 4, 1], batch_first),
                     R.unpad_sequence(padded_t, torch.tensor([2, 4, 1]), batch_first)))
    _compare(torch, outs, pairs)


LAYERS = [("RNN", dict(), [5, 3, 2], True, False),
          ("RNN", dict(nonlinearity="relu", bidirectional=True, batch_first=True), [2, 5, 4],
           False, True),
          ("GRU", dict(num_layers=2, bidirectional=True), [3, 5, 1, 4], False, False),
          ("GRU", dict(batch_first=True), [5, 4, 4], True, True),
          ("LSTM", dict(), [5, 2, 1], True, True),
          ("LSTM", dict(num_layers=2), [1, 5, 3], False, True),
          ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True), [4, 1, 5, 2],
           False, True),
          ("LSTM", dict(num_layers=2, bidirectional=True), [2, 4, 5], False, False),
          ("LSTM", dict(proj_size=2), [5, 2, 1], True, True),
          ("LSTM", dict(num_layers=2, bidirectional=True, batch_first=True, proj_size=3),
           [4, 1, 5, 2], False, True)]


@pytest.mark.parametrize("name, kw, lengths, enforce_sorted, with_state", LAYERS, ids=str)
def test_packed_layers_match_torch(name, kw, lengths, enforce_sorted, with_state):
    torch = _torch()
    R = torch.nn.utils.rnn
    torch.manual_seed(0)
    tm = getattr(torch.nn, name)(3, 4, **kw).double()
    mm = getattr(nn, name)(3, 4, **kw).double()
    copy_weights(tm, mm)
    bf, B, T = kw.get("batch_first", False), len(lengths), 5
    LD = kw.get("num_layers", 1) * (2 if kw.get("bidirectional") else 1)
    mx, tx = _pair(torch, _x(*((B, T) if bf else (T, B)), 3))
    leaves = [(mx, tx)]
    m_state = t_state = None
    if with_state:
        sizes = (kw.get("proj_size") or 4, 4)[:1 + (name == "LSTM")]   # h's, c's
        leaves += [_pair(torch, _x(LD, B, n, seed=s)) for s, n in enumerate(sizes)]
        m_state, t_state = (tuple(p[k] for p in leaves[1:]) for k in (0, 1))
        if name != "LSTM":
            m_state, t_state = m_state[0], t_state[0]
    m_out, m_hn = mm(pack_padded_sequence(mx, lengths, bf, enforce_sorted), m_state)
    t_out, t_hn = tm(R.pack_padded_sequence(tx, torch.tensor(lengths), bf, enforce_sorted),
                     t_state)
    assert isinstance(m_out, PackedSequence)
    assert m_out.batch_sizes.tolist() == t_out.batch_sizes.tolist()
    outs = [(m_out.data, t_out.data), (pad_packed_sequence(m_out, bf)[0],
                                       R.pad_packed_sequence(t_out, bf)[0])]
    outs += list(zip(m_hn, t_hn)) if name == "LSTM" else [(m_hn, t_hn)]
    _compare(torch, outs, leaves)
    for (n, mp), (_, tp) in zip(mm.named_parameters(), tm.named_parameters()):
        np.testing.assert_allclose(mp.grad.numpy(), tp.grad.numpy(), rtol=1e-10, atol=1e-10,
                                   err_msg=n)


def test_lengths_errors_are_runtime_errors_too_and_whole_floats_are_lengths():
    """PyTorch raises RuntimeError for lengths that do not fit; here they are both that and
    a ValueError. Lengths given as whole floats (PyTorch reads them as int64) are lengths."""
    x = mg.randn(4, 3, 2)
    for bad in ([2, 3, 1], [3, 2], [3, 2, 0], [5, 2, 1]):
        with pytest.raises(RuntimeError):
            pack_padded_sequence(x, bad)
    assert pack_padded_sequence(x, [4.0, 2.0, 3.0], enforce_sorted=False).batch_sizes \
        .tolist() == [3, 3, 2, 1]
    with pytest.raises(TypeError, match="'lengths' must be integers"):
        pack_padded_sequence(x, [2.5, 2, 1])
