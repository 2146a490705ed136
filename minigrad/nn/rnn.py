"""Recurrent layers: RNNCell, GRUCell, LSTMCell (one time step) and RNN, GRU, LSTM (whole
sequences, stacked layers, optionally bidirectional). Article 2.2.3.1 (before the
Transformer: RNN encoder-decoders).

Everything follows PyTorch: the gate order (GRU r, z, n; LSTM i, f, g, o), the parameter
names and shapes (`weight_ih_l0` (gates·H, input_size), `weight_hh_l0` (gates·H, H),
`bias_ih_l0`, `bias_hh_l0`, `..._reverse` for the backward direction), the initialisation
U(-1/√H, 1/√H) of every parameter, and the layouts of inputs, outputs and states. So a
PyTorch state dict loads here by name, and the outputs agree.

Each layer is written with ordinary differentiable tensor ops, so autograd derives
backpropagation through time by itself. The input-to-hidden products of all time steps are
one matrix multiply; only the hidden-to-hidden product runs step by step.
"""
import math
import warnings

from minigrad import creation, functional as F
from minigrad.ops.shape import stack, cat
from minigrad.nn import init
from minigrad.nn.module import Module, Parameter


# ---- one time step of each kind: gi = W_ih x + b_ih is computed by the caller ----------------
def rnn_tanh_step(gi, h, w_hh, b_hh):
    """h' = tanh(W_ih x + b_ih + W_hh h + b_hh)"""
    return (gi + F.linear(h, w_hh, b_hh)).tanh()


def rnn_relu_step(gi, h, w_hh, b_hh):
    """h' = relu(W_ih x + b_ih + W_hh h + b_hh)"""
    return (gi + F.linear(h, w_hh, b_hh)).relu()


def gru_step(gi, h, w_hh, b_hh):
    """r = σ(W_ir x + b_ir + W_hr h + b_hr),  z = σ(W_iz x + b_iz + W_hz h + b_hz),
    n = tanh(W_in x + b_in + r ⊙ (W_hn h + b_hn)),  h' = (1 - z) ⊙ n + z ⊙ h"""
    H = h.shape[-1]
    gh = F.linear(h, w_hh, b_hh)
    rz = (gi[..., :2 * H] + gh[..., :2 * H]).sigmoid()   # r and z share one sigmoid
    r, z = rz[..., :H], rz[..., H:]
    n = (gi[..., 2 * H:] + r * gh[..., 2 * H:]).tanh()   # r gates W_hn h + b_hn, bias included
    return (1 - z) * n + z * h


def lstm_step(gi, state, w_hh, b_hh):
    """i, f, g, o = σ, σ, tanh, σ of (W_ih x + b_ih + W_hh h + b_hh), split in that order;
    c' = f ⊙ c + i ⊙ g,  h' = o ⊙ tanh(c')"""
    h, c = state
    H = h.shape[-1]
    gates = gi + F.linear(h, w_hh, b_hh)
    i, f = gates[..., :H].sigmoid(), gates[..., H:2 * H].sigmoid()
    g, o = gates[..., 2 * H:3 * H].tanh(), gates[..., 3 * H:].sigmoid()
    c = f * c + i * g
    return o * c.tanh(), c


_STEPS = {"RNN_TANH": rnn_tanh_step, "RNN_RELU": rnn_relu_step, "GRU": gru_step,
          "LSTM": lstm_step}
_GATES = {"RNN_TANH": 1, "RNN_RELU": 1, "GRU": 3, "LSTM": 4}


def _mode(kind, nonlinearity):
    if kind != "RNN":
        return kind
    if nonlinearity not in ("tanh", "relu"):
        raise ValueError(f"RNN: unknown nonlinearity {nonlinearity!r}; valid: 'tanh', 'relu'")
    return "RNN_" + nonlinearity.upper()


def _check_sizes(name, input_size, hidden_size):
    for arg, v in (("input_size", input_size), ("hidden_size", hidden_size)):
        if not isinstance(v, int) or v <= 0:
            raise ValueError(f"{name}: {arg} must be a positive integer, got {v!r}")


def time_steps(x):
    """[x[0], x[1], ..., x[T-1]] for x of shape (T, ...), found by halving x recursively.
    Why not x[t] directly: the gradient of each x[t] is a zero array of x's full shape with
    one slice filled, so T slices cost O(T²) in backward; halving costs O(T log T)."""
    pieces = [x]
    while any(p.shape[0] > 1 for p in pieces):
        pieces = [half for p in pieces
                  for half in ((p[:p.shape[0] // 2], p[p.shape[0] // 2:]) if p.shape[0] > 1
                               else (p,))]
    return [p[0] for p in pieces]


def _uniform_init(module, hidden_size):
    bound = 1.0 / math.sqrt(hidden_size)   # PyTorch: every weight and bias ~ U(-1/√H, 1/√H)
    for p in module.parameters():
        init.uniform_(p, -bound, bound)


# ---- cells ------------------------------------------------------------------------------------
class _CellBase(Module):
    kind = None

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__()
        name = type(self).__name__
        _check_sizes(name, input_size, hidden_size)
        self.mode = _mode(self.kind, nonlinearity)
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        G = _GATES[self.mode] * hidden_size
        kw = dict(device=device, dtype=dtype)
        self.weight_ih = Parameter(creation.zeros(G, input_size, **kw))
        self.weight_hh = Parameter(creation.zeros(G, hidden_size, **kw))
        if bias:
            self.bias_ih = Parameter(creation.zeros(G, **kw))
            self.bias_hh = Parameter(creation.zeros(G, **kw))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def reset_parameters(self):
        _uniform_init(self, self.hidden_size)

    def _batched(self, input, hx):
        """(input, hx, was_batched) with a batch dim added to unbatched (F,) input."""
        name = type(self).__name__
        if input.ndim not in (1, 2):
            raise ValueError(f"{name}: expected input of shape (batch, {self.input_size}) or "
                             f"({self.input_size},), got shape {input.shape}")
        if input.shape[-1] != self.input_size:
            raise ValueError(f"{name}: expected input feature size {self.input_size}, got "
                             f"{input.shape[-1]} (input shape {input.shape})")
        batched = input.ndim == 2
        if not batched:
            input = input.unsqueeze(0)
        B, H = input.shape[0], self.hidden_size
        states = hx if isinstance(hx, tuple) else (hx,)
        out = []
        for s in states:
            if s is None:
                s = creation.zeros(B, H, dtype=input.dtype, device=input.device)
            else:
                want = (B, H) if batched else (H,)
                if s.shape != want:
                    raise ValueError(f"{name}: expected hidden state of shape {want}, got "
                                     f"{s.shape}")
                if not batched:
                    s = s.unsqueeze(0)
            out.append(s)
        return input, (tuple(out) if isinstance(hx, tuple) else out[0]), batched

    def forward(self, input, hx=None):
        x, h, batched = self._batched(input, hx)
        gi = F.linear(x, self.weight_ih, self.bias_ih)
        h = _STEPS[self.mode](gi, h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity='relu'"
        return s


class RNNCell(_CellBase):
    """h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu). forward(input, hx=None) -> h'."""
    kind = "RNN"


class GRUCell(_CellBase):
    """A gated recurrent unit step (gates r, z, n). forward(input, hx=None) -> h'."""
    kind = "GRU"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, device=device, dtype=dtype)


class LSTMCell(_CellBase):
    """A long short-term memory step (gates i, f, g, o).
    forward(input, hx=None) with hx = (h, c) -> (h', c')."""
    kind = "LSTM"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is None:
            hx = (None, None)
        elif not (isinstance(hx, (tuple, list)) and len(hx) == 2):
            raise ValueError("LSTMCell: hx must be a tuple (h, c)")
        x, (h, c), batched = self._batched(input, tuple(hx))
        gi = F.linear(x, self.weight_ih, self.bias_ih)
        h, c = lstm_step(gi, (h, c), self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))


# ---- whole sequences ----------------------------------------------------------------------------
class _RNNBase(Module):
    kind = None

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, nonlinearity="tanh", device=None,
                 dtype=None):
        super().__init__()
        name = type(self).__name__
        _check_sizes(name, input_size, hidden_size)
        if not isinstance(num_layers, int) or num_layers < 1:
            raise ValueError(f"{name}: num_layers must be an integer >= 1, got {num_layers!r}")
        if not 0.0 <= dropout <= 1.0:
            raise ValueError(f"{name}: dropout must be a probability in [0, 1], got {dropout}")
        if dropout > 0 and num_layers == 1:
            warnings.warn(f"{name}: dropout={dropout} does nothing with num_layers=1 (dropout "
                          f"is applied between layers, not after the last)")
        self.mode = _mode(self.kind, nonlinearity)
        self.input_size, self.hidden_size, self.num_layers = input_size, hidden_size, num_layers
        self.bias, self.batch_first, self.dropout = bias, batch_first, float(dropout)
        self.bidirectional = bidirectional
        D, G = (2 if bidirectional else 1), _GATES[self.mode] * hidden_size
        kw = dict(device=device, dtype=dtype)
        # registered in PyTorch's order: per layer, per direction: w_ih, w_hh, b_ih, b_hh
        for layer in range(num_layers):
            in_size = input_size if layer == 0 else D * hidden_size
            for d in range(D):
                sfx = f"_l{layer}" + ("_reverse" if d else "")
                setattr(self, "weight_ih" + sfx, Parameter(creation.zeros(G, in_size, **kw)))
                setattr(self, "weight_hh" + sfx, Parameter(creation.zeros(G, hidden_size, **kw)))
                if bias:
                    setattr(self, "bias_ih" + sfx, Parameter(creation.zeros(G, **kw)))
                    setattr(self, "bias_hh" + sfx, Parameter(creation.zeros(G, **kw)))
        self.reset_parameters()

    @property
    def num_directions(self):
        return 2 if self.bidirectional else 1

    def reset_parameters(self):
        _uniform_init(self, self.hidden_size)

    def _weights(self, layer, direction):
        sfx = f"_l{layer}" + ("_reverse" if direction else "")
        p = self._parameters
        return (p["weight_ih" + sfx], p["weight_hh" + sfx], p.get("bias_ih" + sfx),
                p.get("bias_hh" + sfx))

    def _check_input(self, input):
        """The input as (T, B, F), and whether it had a batch dim."""
        name = type(self).__name__
        if input.ndim not in (2, 3):
            layout = "(B, T, input_size)" if self.batch_first else "(T, B, input_size)"
            raise ValueError(f"{name}: expected input of 3 dims {layout} or 2 dims "
                             f"(T, input_size) unbatched, got shape {input.shape}")
        if input.shape[-1] != self.input_size:
            raise ValueError(f"{name}: expected input feature size (last dim) "
                             f"{self.input_size}, got {input.shape[-1]} (input shape "
                             f"{input.shape})")
        if input.ndim == 2:
            return input.unsqueeze(1), False
        x = input.transpose(0, 1) if self.batch_first else input
        if x.shape[0] == 0:
            raise ValueError(f"{name}: the input sequence is empty (length 0)")
        return x, True

    def _initial_state(self, hx, batched, B, like, what="h0"):
        LD, H = self.num_layers * self.num_directions, self.hidden_size
        if hx is None:
            return creation.zeros(LD, B, H, dtype=like.dtype, device=like.device)
        want = (LD, B, H) if batched else (LD, H)
        if hx.shape != want:
            raise ValueError(f"{type(self).__name__}: expected {what} of shape {want} "
                             f"(num_layers * num_directions, {'batch, ' if batched else ''}"
                             f"hidden_size), got {hx.shape}")
        return hx if batched else hx.unsqueeze(1)

    def _run(self, x, states):
        """Run every layer and direction over x (T, B, F). `states` is a tuple of initial
        state tensors (h0,) or (h0, c0), each (L·D, B, H). Returns (output, final states)."""
        step, lstm, T = _STEPS[self.mode], self.mode == "LSTM", x.shape[0]
        finals = [[] for _ in states]
        layer_input = x
        for layer in range(self.num_layers):
            outputs = []
            for d in range(self.num_directions):
                w_ih, w_hh, b_ih, b_hh = self._weights(layer, d)
                gi = F.linear(layer_input, w_ih, b_ih)      # all time steps at once
                k = layer * self.num_directions + d
                state = tuple(s[k] for s in states) if lstm else states[0][k]
                gis, ys = time_steps(gi), [None] * T
                for t in (reversed(range(T)) if d else range(T)):
                    state = step(gis[t], state, w_hh, b_hh)
                    ys[t] = state[0] if lstm else state     # outputs in time order
                outputs.append(stack(ys, 0))
                for f, s in zip(finals, state if lstm else (state,)):
                    f.append(s)
            layer_input = outputs[0] if len(outputs) == 1 else cat(outputs, 2)
            if self.dropout and layer < self.num_layers - 1:   # between layers only
                layer_input = F.dropout(layer_input, self.dropout, self.training)
        return layer_input, tuple(stack(f, 0) for f in finals)

    def _output(self, out, batched):
        if not batched:
            return out.squeeze(1)
        return out.transpose(0, 1) if self.batch_first else out

    def forward(self, input, hx=None):
        """input (T, B, F) — (B, T, F) with batch_first — or (T, F); hx: h0 of shape
        (num_layers·num_directions, B, H) or None (zeros). Returns (output, h_n) with output
        (T, B, D·H) (batch first if asked) holding the last layer's h at every step."""
        x, batched = self._check_input(input)
        h0 = self._initial_state(hx, batched, x.shape[1], x)
        out, (h_n,) = self._run(x, (h0,))
        return self._output(out, batched), (h_n if batched else h_n.squeeze(1))

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if self.num_layers != 1:
            s += f", num_layers={self.num_layers}"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity='relu'"
        for name, default in (("bias", True), ("batch_first", False), ("dropout", 0.0),
                              ("bidirectional", False)):
            if getattr(self, name) != default:
                s += f", {name}={getattr(self, name)}"
        return s


class RNN(_RNNBase):
    """Elman RNN, h_t = tanh(W_ih x_t + b_ih + W_hh h_(t-1) + b_hh) (or relu), stacked
    `num_layers` deep. forward(input, h0=None) -> (output, h_n)."""
    kind = "RNN"


class GRU(_RNNBase):
    """Gated recurrent unit layers (gates r, z, n as GRUCell).
    forward(input, h0=None) -> (output, h_n)."""
    kind = "GRU"

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)


class LSTM(_RNNBase):
    """Long short-term memory layers (gates i, f, g, o as LSTMCell).
    forward(input, (h0, c0)=None) -> (output, (h_n, c_n))."""
    kind = "LSTM"

    def __init__(self, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
                 dropout=0.0, bidirectional=False, device=None, dtype=None):
        super().__init__(input_size, hidden_size, num_layers, bias, batch_first, dropout,
                         bidirectional, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        x, batched = self._check_input(input)
        if hx is None:
            hx = (None, None)
        elif not (isinstance(hx, (tuple, list)) and len(hx) == 2):
            raise ValueError("LSTM: the initial state must be a tuple (h0, c0)")
        states = tuple(self._initial_state(s, batched, x.shape[1], x, what)
                       for s, what in zip(hx, ("h0", "c0")))
        out, (h_n, c_n) = self._run(x, states)
        if not batched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return self._output(out, batched), (h_n, c_n)
