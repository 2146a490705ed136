"""One direction of one recurrent layer over a whole padded sequence as one op (article
2.2.3.1's RNN encoders): RNN (tanh or relu), GRU, LSTM.

The readable reference is nn/rnn_cells.py's step functions run once per time step, which
records several nodes per step, each with its own forward and backward bookkeeping in
Python: for short, narrow layers that bookkeeping, not the arithmetic, is the cost. Here
the time loop runs on raw arrays, saving what backpropagation through time needs, and
`backward_arrays` is that backpropagation by hand: each step's local derivatives computed
for all steps at once before the loop, so the loop itself is a few array calls and one
matrix product per step, and W_hh's gradient one matrix product over every step after it.
`backward` (used only under create_graph=True) runs the step functions again and lets
autograd differentiate them, so gradients of gradients follow the reference.

Inputs: gi = W_ih x + b_ih of every step (T, B, G·H) (the caller's one matrix product),
the initial state h0 (B, H) (and c0 for the LSTM), W_hh (G·H, H) and b_hh (G·H,) or none;
or, through rnn_layer, the layer's input x (T, B, F) with W_ih (G·H, F) and b_ih, which
the LSTM's op multiplies itself (ops/lstm_scan.py's LSTMScan), and for the LSTM W_hr
(P, H), which projects each step's h to P features (h0, the outputs' h and W_hh's columns
are then P).
Outputs: h of every step in time order (T, B, H), and the final state(s) (B, H). Reverse
runs from the last step to the first.
The RNN's and GRU's saved arrays are kept in the order the steps run, the LSTM's in time
order, feature-major. What the three ops share is ops/rnn_scan_base.py's _Scan.
"""
from minigrad import profiler
from minigrad.autograd import Function, record_outputs
from minigrad.ops.activations import _overflow_quietly
from minigrad.ops.linear import linear
from minigrad.ops.lstm_scan import LSTMScan
from minigrad.ops.rnn_scan_base import _Scan
from minigrad.tensor import Tensor


class RNNScan(_Scan, Function):
    """h_t = tanh(gi_t + W_hh h_(t-1) + b_hh) (or relu). Backward: da_t = dh_t·(1 - h_t²)
    (relu: [h_t > 0]), dh_(t-1) = da_t W_hh."""
    finals = ("h",)

    def forward(self, gi, h0, w_hh, b_hh):
        xp = self.xp
        T, B, H = gi.shape
        pre = self._in_order(gi) if b_hh is None else self._in_order(gi) + b_hh
        w = xp.ascontiguousarray(w_hh.T)
        hs = xp.empty((T + 1, B, H), gi.dtype)
        hs[0] = h0
        for t in range(T):
            h = hs[t + 1]
            xp.matmul(hs[t], w, out=h)
            h += pre[t]
            if self.mode == "RNN_TANH":
                xp.tanh(h, out=h)
            else:
                xp.maximum(h, 0, out=h)
        self.hs = hs
        return self._outputs(hs, hs[T])

    def backward_arrays(self, grads):
        xp, hs, w_hh = self.xp, self.hs, self.inputs[2]._data
        dys, (dh,) = self._start(grads[0], grads[1:])
        after = hs[1:]
        # every step's derivative at once (relu: not where h <= 0; a NaN passes, as Relu's)
        k = 1 - after * after if self.mode == "RNN_TANH" else (~(after <= 0)).astype(hs.dtype)
        da = xp.empty(k.shape, k.dtype)
        for t in reversed(range(len(k))):
            if dys is not None:
                dh += dys[t]
            xp.multiply(dh, k[t], out=da[t])
            dh = xp.matmul(da[t], w_hh)
        need = self.needs_input_grad
        return (self._in_order(da) if need[0] else None, dh) + \
            self._weight_grads(da, need[2:] + (False,))


class GRUScan(_Scan, Function):
    """r, z = σ(gi_rz + gh_rz), n = tanh(gi_n + r⊙gh_n), h' = n + z⊙(h - n) with gh =
    W_hh h + b_hh, as ops/rnn_cells.py's GRUCell. σ(a) = 1/(1 + e⁻ᵃ): the r and z columns
    of gi and W_hh are negated once, so the step takes one exp for both gates. (Not
    (1 + tanh(a/2))/2, which rounds σ(-20) to 0 in float32 and σ(-40) in float64, where
    PyTorch's σ and the step functions' are ~1e-9 and ~1e-18, and so every gradient
    through the gate; e⁻ᵃ overflows to inf only where σ is below the smallest normal
    number, and gives 0 there.)"""
    finals = ("h",)

    def forward(self, gi, h0, w_hh, b_hh):
        xp = self.xp
        T, B, G = gi.shape
        H = G // 3
        sign = xp.ones(G, gi.dtype)
        sign[:2 * H] = -1
        pre, w = self._in_order(gi) * sign, xp.ascontiguousarray((w_hh * sign[:, None]).T)
        b = None if b_hh is None else b_hh * sign
        hs, gh = xp.empty((T + 1, B, H), gi.dtype), xp.empty((T, B, G), gi.dtype)
        rz, n = xp.empty((T, B, 2 * H), gi.dtype), xp.empty((T, B, H), gi.dtype)
        ones = xp.ones((B, 2 * H), gi.dtype)       # (an array: a Python 1 costs ~1 µs a call)
        hs[0] = h0
        with _overflow_quietly(xp):                 # e⁻ᵃ = inf: σ = 0, as it should
            for t in range(T):
                g, a, nt, h = gh[t], rz[t], n[t], hs[t + 1]
                xp.matmul(hs[t], w, out=g)
                if b is not None:
                    g += b
                xp.add(pre[t, :, :2 * H], g[:, :2 * H], out=a)      # -a
                xp.exp(a, out=a)
                a += ones
                xp.divide(ones, a, out=a)                          # σ(a)
                xp.multiply(a[:, :H], g[:, 2 * H:], out=nt)
                nt += pre[t, :, 2 * H:]
                xp.tanh(nt, out=nt)
                xp.subtract(hs[t], nt, out=h)
                h *= a[:, H:]
                h += nt
        self.hs, self.gh_n, self.rz, self.n = hs, gh[..., 2 * H:], rz, n
        return self._outputs(hs, hs[T])

    def backward_arrays(self, grads):
        """dz = dh'⊙(h - n)·σ'(z), dn = dh'⊙(1 - z)(1 - n²), dr = dn⊙gh_n·σ'(r);
        d(gi) = [dr, dz, dn], d(gh) = [dr, dz, dn⊙r], dh = d(gh) W_hh + dh'⊙z."""
        xp, hs, w_hh = self.xp, self.hs, self.inputs[2]._data
        rz, n = self.rz, self.n
        T, B, H = n.shape
        r, z = rz[..., :H], rz[..., H:]
        dys, (dh,) = self._start(grads[0], grads[1:])
        # every step's local derivatives at once: d(gi)_t = dh'_t ⊙ k_gi_t, d(gh)_t likewise
        k_gi = xp.empty((T, B, 3, H), n.dtype)
        k_n = k_gi[:, :, 2]
        xp.multiply(1 - z, 1 - n * n, out=k_n)
        xp.multiply(k_n * self.gh_n, r * (1 - r), out=k_gi[:, :, 0])
        xp.multiply(hs[:-1] - n, z * (1 - z), out=k_gi[:, :, 1])
        k_gh = k_gi.copy()
        k_gh[:, :, 2] *= r
        d_gi, d_gh = xp.empty((T, B, 3 * H), n.dtype), xp.empty((T, B, 3 * H), n.dtype)
        d_gi4, d_gh4 = d_gi.reshape(T, B, 3, H), d_gh.reshape(T, B, 3, H)
        for t in reversed(range(T)):
            if dys is not None:
                dh += dys[t]
            d = dh[:, None]
            xp.multiply(k_gi[t], d, out=d_gi4[t])
            xp.multiply(k_gh[t], d, out=d_gh4[t])
            carry = dh * z[t]
            dh = xp.matmul(d_gh[t], w_hh)
            dh += carry
        need = self.needs_input_grad
        return (self._in_order(d_gi) if need[0] else None, dh) + \
            self._weight_grads(d_gh, need[2:] + (False,))


_SCANS = {"RNN_TANH": RNNScan, "RNN_RELU": RNNScan, "GRU": GRUScan, "LSTM": LSTMScan}


def rnn_scan(mode, gi, state, w_hh, b_hh=None, reverse=False):
    """One direction of one layer ("RNN_TANH", "RNN_RELU", "GRU" or "LSTM") over gi
    (T, B, G·H) from `state`, (h0,) or (h0, c0) each (B, H). Returns (h of every step
    (T, B, H), final states (h_n,) or (h_n, c_n))."""
    if gi.ndim != 3 or w_hh.ndim != 2:
        raise ValueError(f"rnn_scan: gi must be (T, B, gates·H) and W_hh (gates·H, H), got "
                         f"{gi.shape} and {w_hh.shape}")
    _check("rnn_scan", mode, {"gi": gi}, state, w_hh, b_hh)
    return _record(mode, reverse, {"gi": gi}, state, w_hh, b_hh)


def rnn_layer(mode, x, state, w_ih, w_hh, b_ih=None, b_hh=None, reverse=False, w_hr=None):
    """rnn_scan of gi = x W_ihᵀ + b_ih, x (T, B, F) the layer's input, W_ih (G·H, F). The
    LSTM's is one op, which lays gi out for its time loop as it makes it (LSTMScan), and
    may project h by W_hr (P, H); the others' loops take gi as Linear makes it."""
    if w_hr is not None and mode != "LSTM":
        raise ValueError(f"rnn_layer: only the LSTM projects h (W_hr), not {mode}")
    if mode != "LSTM":
        return rnn_scan(mode, linear(x, w_ih, b_ih), state, w_hh, b_hh, reverse)
    if x.ndim != 3 or w_ih.ndim != 2 or w_hh.ndim != 2 or x.shape[-1] != w_ih.shape[-1] or \
            (w_hr is not None and w_hr.ndim != 2):
        raise ValueError(f"rnn_layer: x must be (T, B, F), W_ih (gates·H, F), W_hh "
                         f"(gates·H, H or P) and W_hr (P, H), got {x.shape}, {w_ih.shape}, "
                         f"{w_hh.shape} and {None if w_hr is None else w_hr.shape}")
    _check("rnn_layer", mode, {"x": x}, state, w_hh, b_hh, w_ih, b_ih, w_hr)
    return _record(mode, reverse, {"x": x}, state, w_hh, b_hh, w_ih, b_ih, w_hr)


def _check(op, mode, first, state, w_hh, b_hh, w_ih=None, b_ih=None, w_hr=None):
    """Shapes, dtypes and devices, with errors that name them (before the arrays')."""
    (name, x), = first.items()
    T, B = x.shape[:2]
    G = x.shape[2] if w_ih is None else w_ih.shape[0]
    P, H = (w_hh.shape[-1],) * 2 if w_hr is None else w_hr.shape   # h's features, c's
    want = {"gi": (T, B, G), "x": x.shape, "w_hh": (G, P), "w_ih": (G, x.shape[-1]),
            "b_hh": (G,), "b_ih": (G,), "w_hr": (P, H)}
    given = [(name, x), ("w_hh", w_hh), ("b_hh", b_hh), ("w_ih", w_ih), ("b_ih", b_ih),
             ("w_hr", w_hr)]
    for (what, t), shape in zip(given + [("state", s) for s in state],
                                [want[n] for n, _ in given] + [(B, P), (B, H)]):
        if t is not None and (t.shape != shape or t.dtype != x.dtype or
                              t.device != x.device):
            raise ValueError(f"{op}: {what} must be {shape} {x.dtype} on "
                             f"{x.device} ({name} {x.shape}, W_hh {w_hh.shape}), got "
                             f"{t.shape} {t.dtype} on {t.device}")
    gates, n = {"GRU": 3, "LSTM": 4}.get(mode, 1), len(_SCANS[mode].finals)
    if len(state) != n or G != gates * H:
        raise ValueError(f"{op}: {mode} takes {n} state tensor(s) and W_hh "
                         f"({gates}·H, H), got {len(state)} and W_hh {w_hh.shape}")


def _record(mode, reverse, first, state, w_hh, b_hh, w_ih=None, b_ih=None, w_hr=None):
    """Run the op and record it: `first` {"gi": gi} or {"x": x}; the inputs that are None
    are left out of the graph (the op's `names` say which it has)."""
    (name, x), = first.items()
    named = {name: x, **dict(zip(("h0", "c0"), state)), "w_hh": w_hh, "b_hh": b_hh,
             "w_ih": w_ih, "b_ih": b_ih, "w_hr": w_hr}
    fn = _SCANS[mode]()
    fn.mode, fn.reverse, fn.device, fn.xp = mode, reverse, x.device, x.backend.xp
    fn.names = tuple(n for n, t in named.items() if t is not None)
    data = [None if t is None else t._data for t in named.values()]
    # forward(gi or x, h0, [c0], w_hh, b_hh, and the LSTM's w_ih, b_ih, w_hr where given),
    # None for a missing b_hh
    extra = {n: named[n]._data for n in ("w_ih", "b_ih", "w_hr") if named[n] is not None}
    if profiler.active is None:
        outs = fn.forward(*data[:-3], **extra)
    else:               # timed as one event, as Function.apply's ops (not made by apply)
        outs = profiler.active.run(type(fn).__name__, "forward", x.device,
                                   [t for t in named.values() if t is not None],
                                   lambda: fn.forward(*data[:-3], **extra))
    outs = [Tensor._make(a, x.device) for a in outs]
    record_outputs(fn, [named[n] for n in fn.names], outs)
    return outs[0], tuple(outs[1:])
