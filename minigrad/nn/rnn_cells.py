"""Recurrent cells — RNNCell, GRUCell, LSTMCell: one time step — and the step functions that
RNN, GRU and LSTM (in rnn.py) run over a sequence. Article 2.2.3.1 (before the Transformer:
RNN encoder-decoders).

PyTorch's equations, gate order (GRU r, z, n; LSTM i, f, g, o), parameter names and shapes
(`weight_ih` (gates·H, input_size), `weight_hh` (gates·H, H), `bias_ih`, `bias_hh`) and
initialisation U(-1/√H, 1/√H) of every parameter, so a PyTorch state dict loads by name.
"""
import math

from minigrad import backend, creation, functional as F
from minigrad.grad_mode import autocast_half
from minigrad.nn import init
from minigrad.nn.module import Module, Parameter
from minigrad.ops.rnn_cells import lstm_cell, gru_cell
from minigrad.tensor import Tensor


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
    # r gates W_hn h + b_hn, bias included; the rest is one op (ops/rnn_cells.py)
    return gru_cell(gi, F.linear(h, w_hh, b_hh), h)


def lstm_step(gi, state, w_hh, b_hh):
    """i, f, g, o = σ, σ, tanh, σ of (W_ih x + b_ih + W_hh h + b_hh), split in that order;
    c' = f ⊙ c + i ⊙ g,  h' = o ⊙ tanh(c')"""
    h, c = state
    return lstm_cell(gi + F.linear(h, w_hh, b_hh), c)   # the rest as one op (ops/rnn_cells.py)


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
        if not backend.is_integer(v) or v <= 0:
            raise ValueError(f"{name}: {arg} must be a positive integer, got {v!r}")


def _check_tensor(name, t, what, like=None):
    """The input and the states are floating-point Tensors; a state has the input's dtype
    and device (a mismatch would otherwise surface deep inside a matrix multiply)."""
    if not isinstance(t, Tensor):
        hint = (" (LSTM's state is a tuple (h, c); RNN's and GRU's one tensor)"
                if isinstance(t, (tuple, list)) and what != "input" else "")
        raise TypeError(f"{name}: {what} must be a Tensor, got {type(t).__name__}{hint}")
    if t.dtype.kind != "f":
        raise TypeError(f"{name}: {what} must be floating-point, got dtype {t.dtype}; "
                        f"convert it with .float()")
    if like is not None and (t.dtype != like.dtype or t.device != like.device):
        raise TypeError(f"{name}: {what} is {t.dtype} on {t.device} but the input is "
                        f"{like.dtype} on {like.device}; they must match")


def _check_bias(name, bias):
    """bias is a flag; anything else is most likely an argument in the wrong position."""
    if not isinstance(bias, bool):
        raise TypeError(f"{name}: bias must be True or False, got {bias!r} (an argument in "
                        f"the wrong position? the order is PyTorch's; pass it by name)")


def _uniform_init(module, hidden_size):
    bound = 1.0 / math.sqrt(hidden_size)   # PyTorch: every weight and bias ~ U(-1/√H, 1/√H)
    for p in module.parameters():
        init.uniform_(p, -bound, bound)


# ---- cells ------------------------------------------------------------------------------------
class RNNCellBase(Module):
    """The common base of RNNCell, GRUCell and LSTMCell, as torch.nn.RNNCellBase, with its
    constructor: weight_ih (num_chunks·H, input_size), weight_hh (num_chunks·H, H) and the
    biases, U(-1/√H, 1/√H). As PyTorch's, it has no step of its own: a subclass sets
    `mode` ('RNN_TANH', 'RNN_RELU', 'GRU' or 'LSTM'), which forward runs."""
    mode = None

    def __init__(self, input_size, hidden_size, bias, num_chunks, device=None, dtype=None):
        super().__init__()
        name = type(self).__name__
        _check_sizes(name, input_size, hidden_size)
        _check_bias(name, bias)
        if not backend.is_integer(num_chunks) or isinstance(num_chunks, bool) or \
                num_chunks < 1:
            raise ValueError(f"{name}: num_chunks must be an integer >= 1 (the gates: 1 for "
                             f"RNNCell, 3 GRUCell, 4 LSTMCell), got {num_chunks!r}")
        self.input_size, self.hidden_size, self.bias = input_size, hidden_size, bias
        G = num_chunks * hidden_size
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
        _check_tensor(name, input, "input")
        # the cells are on torch's float16 autocast list: input and state alike (a float32
        # state would meet float16 gates)
        input = autocast_half(input)
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
                s = autocast_half(s)
                _check_tensor(name, s, "hidden state", input)
                want = (B, H) if batched else (H,)
                if s.shape != want:
                    raise ValueError(f"{name}: expected hidden state of shape {want}, got "
                                     f"{s.shape}")
                if not batched:
                    s = s.unsqueeze(0)
            out.append(s)
        return input, (tuple(out) if isinstance(hx, tuple) else out[0]), batched

    def forward(self, input, hx=None):
        if self.mode is None:
            raise NotImplementedError(f"{type(self).__name__}: RNNCellBase has no forward of "
                                      f"its own (as PyTorch's); use RNNCell, GRUCell or "
                                      f"LSTMCell, or set mode in a subclass")
        if hx is not None:                               # one tensor (a tuple is LSTM's)
            _check_tensor(type(self).__name__, autocast_half(hx), "hidden state",
                          autocast_half(input))
        x, h, batched = self._batched(input, hx)
        gi = F.linear(x, self.weight_ih, self.bias_ih)
        h = _STEPS[self.mode](gi, h, self.weight_hh, self.bias_hh)
        return h if batched else h.squeeze(0)

    def extra_repr(self):
        s = f"{self.input_size}, {self.hidden_size}"
        if not self.bias:
            s += ", bias=False"
        if self.mode == "RNN_RELU":
            s += ", nonlinearity=relu"                  # unquoted, as PyTorch's
        return s


_CellBase = RNNCellBase     # the old private name


class RNNCell(RNNCellBase):
    """h' = tanh(W_ih x + b_ih + W_hh h + b_hh) (or relu). forward(input, hx=None) -> h'."""

    def __init__(self, input_size, hidden_size, bias=True, nonlinearity="tanh", device=None,
                 dtype=None):
        mode = _mode("RNN", nonlinearity)
        super().__init__(input_size, hidden_size, bias, 1, device=device, dtype=dtype)
        self.mode, self.nonlinearity = mode, nonlinearity


class GRUCell(RNNCellBase):
    """A gated recurrent unit step (gates r, z, n). forward(input, hx=None) -> h'."""
    mode = "GRU"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 3, device=device, dtype=dtype)


class LSTMCell(RNNCellBase):
    """A long short-term memory step (gates i, f, g, o).
    forward(input, hx=None) with hx = (h, c) -> (h', c')."""
    mode = "LSTM"

    def __init__(self, input_size, hidden_size, bias=True, device=None, dtype=None):
        super().__init__(input_size, hidden_size, bias, 4, device=device, dtype=dtype)

    def forward(self, input, hx=None):
        if hx is None:
            hx = (None, None)
        elif not (isinstance(hx, (tuple, list)) and len(hx) == 2):
            raise ValueError("LSTMCell: hx must be a tuple (h, c)")
        x, (h, c), batched = self._batched(input, tuple(hx))
        gi = F.linear(x, self.weight_ih, self.bias_ih)
        h, c = lstm_step(gi, (h, c), self.weight_hh, self.bias_hh)
        return (h, c) if batched else (h.squeeze(0), c.squeeze(0))
