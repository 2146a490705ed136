"""Recurrent layers over whole sequences: RNN, GRU, LSTM — stacked layers, optionally
bidirectional, dropout between layers. Article 2.2.3.1 (before the Transformer: RNN
encoder-decoders). The one-step cells are in rnn_cells.py (re-exported here).

Everything follows PyTorch: parameter names and shapes (`weight_ih_l0` (gates·H, input_size),
`weight_hh_l0` (gates·H, H), `bias_ih_l0`, `bias_hh_l0`, `..._reverse` for the backward
direction), the initialisation U(-1/√H, 1/√H), and the layouts: input (T, B, F), or
(B, T, F) with batch_first, or (T, F) unbatched; states (num_layers·num_directions, B, H).
An LSTM with proj_size P > 0 projects each step's h to P features (`weight_hr_l0` (P, H)):
its h0, h_n and output then have P features per direction (c stays H), and `weight_hh_l0`
is (4H, P).

The reference runs each layer with the step functions, ordinary differentiable tensor ops,
so autograd derives backpropagation through time by itself. Padded input runs each layer
and direction as one op instead (ops/rnn_scan.py: the time loop on raw arrays, and
backpropagation through time by hand), tested to match it. Either way the input-to-hidden
products of all time steps are one matrix multiply (the LSTM's op makes it itself, laid out
for its loop); only the hidden-to-hidden product runs step by step.

The input may also be a PackedSequence (packed.py): a batch of sequences of different
lengths, run without any step reading padding, each sequence's final state taken at its
own last step (in reverse: its first), as PyTorch.
"""
import warnings

from minigrad import backend, creation, functional as F
from minigrad.grad_mode import autocast_half
from minigrad.ops.rnn_scan import rnn_layer
from minigrad.ops.shape import stack, cat, unbind, split
from minigrad.nn.module import Module, Parameter
from minigrad.nn import parametrize
from minigrad.nn.packed import PackedSequence, _batch_sizes
from minigrad.nn.rnn_cells import (RNNCell, GRUCell, LSTMCell, rnn_tanh_step,  # noqa: F401
                                   rnn_relu_step, gru_step, lstm_step, _STEPS, _GATES, _mode,
                                   _check_sizes, _check_bias, _check_tensor, _uniform_init)

time_steps = unbind  # the old name (minigrad.nn.rnn.time_steps), kept for one release


# ---- whole sequences ----------------------------------------------------------------------------
class RNNBase(Module):
    """The common base of RNN, GRU and LSTM, as torch.nn.RNNBase, with its constructor:
    mode 'LSTM', 'GRU', 'RNN_TANH' or 'RNN_RELU' makes (and runs: PyTorch's has no forward
    of its own) that layer, with its parameters and state-dict names."""
    # padded input runs each layer and direction as one op (ops/rnn_scan.py); False runs
    # the step functions one node per step instead (the reference, which packed input uses)
    fused = True

    def __init__(self, mode, input_size, hidden_size, num_layers=1, bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, proj_size=0,
                 device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        if mode not in _GATES:
            raise ValueError(f"{name}: unrecognized RNN mode {mode!r}; valid: "
                             f"{', '.join(map(repr, _GATES))}")
        _check_sizes(name, input_size, hidden_size)
        _check_bias(name, bias)
        _check_proj_size(name, mode, proj_size, hidden_size, isinstance(self, (RNN, GRU)))
        if not backend.is_integer(num_layers) or num_layers < 1:
            raise ValueError(f"{name}: num_layers must be an integer >= 1, got {num_layers!r}")
        if not isinstance(dropout, (int, float)) or not 0.0 <= dropout <= 1.0:
            raise ValueError(f"{name}: dropout must be a probability in [0, 1], got {dropout!r}")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"{name}: dropout={dropout} does nothing with num_layers=1 (dropout "
                          f"is applied between layers, not after the last)")
        self.mode = mode
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional, self.proj_size = bidirectional, proj_size or 0
        D, G = (2 if bidirectional else 1), _GATES[self.mode] * hidden_size
        P = proj_size or hidden_size               # the features of h
        kw = dict(device=device, dtype=dtype)
        # registered in PyTorch's order: per layer, per direction: w_ih, w_hh, b_ih, b_hh
        # (and w_hr)
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else D * P
            for d in range(D):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                setattr(self, "weight_ih" + sfx, Parameter(creation.zeros(G, in_size, **kw)))
                setattr(self, "weight_hh" + sfx, Parameter(creation.zeros(G, P, **kw)))
                if bias:
                    setattr(self, "bias_ih" + sfx, Parameter(creation.zeros(G, **kw)))
                    setattr(self, "bias_hh" + sfx, Parameter(creation.zeros(G, **kw)))
                if proj_size:
                    setattr(self, "weight_hr" + sfx,
                            Parameter(creation.zeros(proj_size, hidden_size, **kw)))
        self.reset_parameters()

    @property
    def num_directions(self):
        return 2 if self.bidirectional else 1

    def reset_parameters(self):
        _uniform_init(self, self.hidden_size)

    def flatten_parameters(self):
        """PyTorch's packs the weights into one block for cuDNN; minigrad has none to pack:
        a no-op, so that code written for PyTorch (which calls it in forward) runs."""

    def _state_sizes(self):
        """The features of each state: h's (proj_size, if any, else hidden_size), and the
        LSTM's c (hidden_size)."""
        H = self.hidden_size
        return (self.proj_size or H, H)[:2 if self.mode == "LSTM" else 1]

    def _weights(self, layer, direction):
        """w_ih, w_hh, b_ih, b_hh, w_hr of one layer and direction (None where absent)."""
        sfx = f"_l{layer}" + ("_reverse" if direction else "")
        # attribute access, not _parameters: a parametrized weight (weight_norm, ...) is not
        # there, and is computed (once per forward: _forward caches it). Not getattr's
        # default: an AttributeError raised inside a parametrization must not read as "no bias".
        # A pruned weight (nn.utils.prune) is a plain attribute, in __dict__
        return tuple(getattr(self, n) if n in self._parameters or n in self.__dict__ or
                     parametrize.is_parametrized(self, n) else None
                     for n in (name + sfx for name in
                               ("weight_ih", "weight_hh", "bias_ih", "bias_hh", "weight_hr")))

    def _check_input(self, input):
        """The input as (T, B, F), and whether it had a batch dim."""
        name = type(self).__name__
        _check_tensor(name, input, "input")
        if input.ndim not in (2, 3):
            layout = "(B, T, input_size)" if self.batch_first else "(T, B, input_size)"
            raise ValueError(f"{name}: expected input of 3 dims {layout} or 2 dims "
                             f"(T, input_size) unbatched, got shape {input.shape}")
        self._check_features(input)
        batched = input.ndim == 3
        x = input.transpose(0, 1) if batched and self.batch_first else input
        if x.shape[0] == 0:
            raise ValueError(f"{name}: the input sequence is empty (length 0)")
        return (x, True) if batched else (x.unsqueeze(1), False)

    def _check_features(self, x):
        """x's last dim is input_size and its dtype the weights'."""
        name = type(self).__name__
        if x.shape[-1] != self.input_size:
            raise ValueError(f"{name}: expected input feature size (last dim) "
                             f"{self.input_size}, got {x.shape[-1]} (input shape {x.shape})")
        weight = self.weight_ih_l0
        if x.dtype != weight.dtype:
            raise ValueError(f"{name}: input dtype {x.dtype} does not match the weights' "
                             f"{weight.dtype}; convert one (input.to(dtype) or "
                             f"module.to(dtype=...)), as PyTorch requires")

    def _check_packed(self, packed):
        """A PackedSequence's data (N, input_size) and its batch sizes as a list of ints."""
        name = type(self).__name__
        batch_sizes = _batch_sizes(name, packed).tolist()
        _check_tensor(name, packed.data, "input.data")
        if packed.data.ndim != 2:
            raise ValueError(f"{name}: a PackedSequence's data must be (sum of lengths, "
                             f"input_size), got shape {packed.data.shape}")
        self._check_features(packed.data)
        return packed.data, batch_sizes

    def _initial_state(self, hx, batched, B, like, what, size):
        """The given state as (L·D, B, size), checked; None stays None (zeros, made by
        _run)."""
        LD = self.num_layers * self.num_directions
        if hx is None:
            return None
        _check_tensor(type(self).__name__, hx, what, like)
        want = (LD, B, size) if batched else (LD, size)
        if hx.shape != want:
            which = "proj_size" if size != self.hidden_size else "hidden_size"
            raise ValueError(f"{type(self).__name__}: expected {what} of shape {want} "
                             f"(num_layers * num_directions, {'batch, ' if batched else ''}"
                             f"{which}), got {hx.shape}")
        return hx if batched else hx.unsqueeze(1)

    def _run(self, x, states, batch_sizes=None):
        """Run every layer and direction over x: (T, B, F), or a packed batch's data (N, F)
        with its batch_sizes (a list of ints). `states` is a tuple of initial state tensors
        (h0,) or (h0, c0), each (L·D, B, H) or None for zeros (h's H is proj_size, if
        any). Returns (output, final states), the output (T, B, D·H) or, packed, (N, D·H)."""
        B = x.shape[1] if batch_sizes is None else batch_sizes[0]
        finals = [[] for _ in states]
        layer_input = x
        for layer in range(self.num_layers):
            outputs = []
            for d in range(self.num_directions):
                w_ih, w_hh, b_ih, b_hh, w_hr = (autocast_half(w)
                                                for w in self._weights(layer, d))
                k = layer * self.num_directions + d
                initial = tuple(s[k] if s is not None else creation.zeros(
                    B, size, dtype=x.dtype, device=x.device)
                    for s, size in zip(states, self._state_sizes()))
                if batch_sizes is None and self.fused:     # gi = W_ih x + b_ih in the op
                    ys, final = rnn_layer(self.mode, layer_input, initial, w_ih, w_hh, b_ih,
                                          b_hh, reverse=d == 1, w_hr=w_hr)
                else:
                    gi = F.linear(layer_input, w_ih, b_ih)      # all time steps at once
                    if batch_sizes is None:
                        ys, final = self._scan(unbind(gi), [gi.shape[1]] * gi.shape[0],
                                               initial, w_hh, b_hh, d == 1, w_hr)
                        ys = stack(ys, 0)
                    else:
                        ys, final = self._scan(split(gi, batch_sizes), batch_sizes, initial,
                                               w_hh, b_hh, d == 1, w_hr)
                        ys = cat(ys, 0)                     # packed again, time-major
                outputs.append(ys)
                for f, s in zip(finals, final):
                    f.append(s)
            layer_input = outputs[0] if len(outputs) == 1 else cat(outputs, -1)
            if self.dropout and layer < self.num_layers - 1:   # between layers only
                layer_input = F.dropout(layer_input, self.dropout, self.training)
        return layer_input, tuple(stack(f, 0) for f in finals)

    def _scan(self, gis, batch_sizes, initial, w_hh, b_hh, reverse, w_hr=None):
        """One direction of one layer: the step function over `gis` (W_ih x_t + b_ih of each
        step t, batch_sizes[t] rows), from the states `initial` ((h,) or (h, c), each
        (B, H)), each step's h projected by w_hr if given (h = W_hr (o ⊙ tanh c), (B, P)).
        Returns the h of every step, in time order, and the final states.

        A packed batch is sorted longest first, so the sequences running at step t are the
        first batch_sizes[t] rows. Forward, rows drop off the end as their sequences end,
        and what they hold then is their final state; in reverse, rows join at the end as
        their sequences begin, from their initial state. (Padded input: every batch size is
        B, and neither happens.)"""
        step, lstm, T = _STEPS[self.mode], self.mode == "LSTM", len(gis)
        ys, ended, state = [None] * T, [], initial
        rows = batch_sizes[-1] if reverse else batch_sizes[0]
        if rows < state[0].shape[0]:
            state = tuple(s[:rows] for s in state)
        for t in (reversed(range(T)) if reverse else range(T)):
            n = batch_sizes[t]
            if n < rows:             # forward: sequences n..rows-1 ended at step t - 1
                ended.append(tuple(s[n:rows] for s in state))
                state = tuple(s[:n] for s in state)
            elif n > rows:           # reverse: sequences rows..n-1 begin at step t
                state = tuple(cat([s, s0[rows:n]]) for s, s0 in zip(state, initial))
            rows = n
            state = step(gis[t], state, w_hh, b_hh) if lstm else \
                (step(gis[t], state[0], w_hh, b_hh),)
            if w_hr is not None:
                state = (F.linear(state[0], w_hr), state[1])
            ys[t] = state[0]
        ended.append(state)          # the longest sequences, which are the first rows
        if len(ended) == 1:
            return ys, state
        return ys, tuple(cat(parts, 0) for parts in zip(*reversed(ended)))

    def _output(self, out, batched):
        if not batched:
            return out.squeeze(1)
        return out.transpose(0, 1) if self.batch_first else out

    def forward(self, input, hx=None):
        """input (T, B, F) — (B, T, F) with batch_first — or (T, F), or a PackedSequence;
        hx: h0 of shape (num_layers·num_directions, B, H) or None (zeros) — the LSTM's a
        tuple (h0, c0). Returns (output, h_n) (the LSTM's (output, (h_n, c_n))) with output
        (T, B, D·H) (batch first if asked) holding the last layer's h at every step — for
        packed input, a PackedSequence of them."""
        if self.mode != "LSTM":
            out, (h_n,) = self._forward(input, (hx,), ("h0",))
            return out, h_n
        if hx is None:
            hx = (None, None)
        elif not (isinstance(hx, (tuple, list)) and len(hx) == 2):
            raise ValueError(f"{type(self).__name__}: the initial state must be a tuple "
                             f"(h0, c0)")
        out, (h_n, c_n) = self._forward(input, tuple(hx), ("h0", "c0"))
        return out, (h_n, c_n)

    @parametrize.cached()
    def _forward(self, input, hx, names):
        """forward for every kind: the initial states hx (a tuple, each a tensor or None,
        named `names`) checked, the layers run, the results in the input's layout. Each
        parametrized weight is computed once (PyTorch's computes it at each of several
        accesses, so a spectral_norm weight in training mode takes several power-iteration
        steps per forward there, one here)."""
        packed = isinstance(input, PackedSequence)
        if packed:
            (x, batch_sizes), batched = self._check_packed(input), True
            B = batch_sizes[0]
        else:
            (x, batched), batch_sizes = self._check_input(input), None
            B = x.shape[1]
        # torch's autocast runs RNNs in float16: input, states and weights (_run) alike
        x, hx = autocast_half(x), tuple(autocast_half(s) for s in hx)
        states = tuple(self._initial_state(s, batched, B, x, what, size)
                       for s, what, size in zip(hx, names, self._state_sizes()))
        if packed and input.sorted_indices is not None:
            # a given state is in the caller's batch order, the packed rows longest first
            states = tuple(None if s is None else s.index_select(1, input.sorted_indices)
                           for s in states)
        out, finals = self._run(x, states, batch_sizes)
        if packed:
            if input.unsorted_indices is not None:
                finals = tuple(f.index_select(1, input.unsorted_indices) for f in finals)
            return PackedSequence(out, input.batch_sizes, input.sorted_indices,
                                  input.unsorted_indices), finals
        if not batched:
            finals = tuple(f.squeeze(1) for f in finals)
        return self._output(out, batched), finals

    def extra_repr(self):
        # PyTorch's: no nonlinearity (an RNN's relu shows in .nonlinearity and .mode only)
        s = f"{self.input_size}, {self.hidden_size}"
        if self.proj_size:                        # (PyTorch's place for it)
            s += f", proj_size={self.proj_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        for name, default in (("bias", True), ("batch_first", False), ("dropout", 0.0),
                              ("bidirectional", False)):
            if getattr(self, name) != default:
                s += f", {name}={getattr(self, name)}"
        return s


def _check_proj_size(name, mode, proj_size, hidden_size, rnn_or_gru):
    """proj_size: the LSTM's, 0 (none) or a size below hidden_size; the other modes take
    none: RNNBase 0 (PyTorch's builds a GRU or RNN with a proj_size > 0 that cannot run;
    refused here), RNN and GRU (and their subclasses) not even 0 (None: not given), as
    PyTorch."""
    if mode != "LSTM":
        if proj_size is not None and (proj_size != 0 or rnn_or_gru):
            raise ValueError(f"{name}: proj_size argument is only supported for LSTM, not RNN "
                             f"or GRU")
        return
    if not backend.is_integer(proj_size):
        raise TypeError(f"{name}: proj_size must be an integer (0 for no projection), got "
                        f"{proj_size!r}")
    if proj_size < 0:
        raise ValueError(f"{name}: proj_size should be a positive integer or zero to disable "
                         f"projections, got {proj_size}")
    if proj_size >= hidden_size:
        raise ValueError(f"{name}: proj_size has to be smaller than hidden_size "
                         f"({hidden_size}), got {proj_size}")


_RNNBase = RNNBase          # the old private name


class RNN(RNNBase):
    """Elman RNN, h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh) (or relu), stacked
    `num_layers` deep. forward(input, h0=None) -> (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, nonlinearity="tanh", bias=True,
                 batch_first=False, dropout=0.0, bidirectional=False, device=None,
                 dtype=None, *, proj_size=None):  # PyTorch's order: nonlinearity before bias
        super().__init__(_mode("RNN", nonlinearity), input_size, hidden_size, num_layers, bias,
                         batch_first, dropout, bidirectional, proj_size, device, dtype)
        self.nonlinearity = nonlinearity


class GRU(RNNBase):
    """Gated recurrent unit layers (gates r, z, n as GRUCell).
    forward(input, h0=None) -> (output, h_n)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None, *, proj_size=None):
        super().__init__("GRU", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device, dtype)


class LSTM(RNNBase):
    """Long short-term memory layers (gates i, f, g, o as LSTMCell), each step's h projected
    to proj_size features by weight_hr if proj_size > 0 (h = W_hr (o ⊙ tanh c)).
    forward(input, (h0, c0)=None) -> (output, (h_n, c_n)); h0 and h_n (L·D, B, proj_size or
    hidden_size), c0 and c_n (L·D, B, hidden_size)."""

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None):
        super().__init__("LSTM", input_size, hidden_size, num_layers, bias, batch_first,
                         dropout, bidirectional, proj_size, device=device, dtype=dtype)
