"""The LSTM's recurrent scan: one direction of one layer over a whole padded sequence as
one op (article 2.2.3.1's RNN encoders). ops/rnn_scan.py has the RNN's and GRU's, and
rnn_scan and rnn_layer, which check, run and record all three.

Fused for the same reason as those: the reference, nn/rnn_cells.py's step functions, is
several nodes a step, and for short, narrow layers their Python bookkeeping costs more than
the arithmetic. Here the time loop runs on raw arrays (feature-major, about ten array calls
a step) and `backward_arrays` is backpropagation through time by hand.
"""
from itertools import repeat

from minigrad.autograd import Function
from minigrad.ops.activations import _overflow_quietly
from minigrad.ops.rnn_scan_base import _Scan
from minigrad.ops.rows import col_sum


class LSTMScan(_Scan, Function):
    """i, f, g, o = σ, σ, tanh, σ of gi + W_hh h + b_hh; c' = f⊙c + i⊙g, h' = o⊙tanh(c'),
    as ops/rnn_cells.py's LSTMCell and LSTMOutput, then h' = W_hr h' if W_hr is given (the
    projection: P features). σ(a) = 1/(1 + e⁻ᵃ): the σ gates' rows are negated once (not
    (1 + tanh(a/2))/2: see rnn_scan.py's GRUScan).

    Laid out feature-major, each step's gates (4H, B) and states (H, B), so that every gate
    is one contiguous block: batch-major, a gate is every row's slice of H, and an array
    call on that runs a loop per row, several times slower at these sizes. Inside, the
    gates run in the order o, i, f, g (_oifg), and each step's row of `act` is
    [o, i, f, g, c]: the three σ are one block, and [i, f]⊙[g, c] one product, so a step
    is ten array calls, not fourteen (at small sizes each call's ~1 µs is the cost).

    Given W_ih (rnn_layer), the op makes gi = W_ih x + b_ih itself, as one matrix product
    gate-major (4H, T·B), and its backward takes dx, dW_ih and dW_hh from d(gates) in that
    layout with one product each. Moving whole columns of B between (4H, T, B) and the
    loop's (T, 4H, B) copies contiguous runs; transposing gi from Linear's (T, B, 4H), and
    d(gi) back, are element-by-element strided copies, 5-15 times slower in NumPy."""
    finals = ("h", "c")

    def forward(self, x, h0, c0, w_hh, b_hh=None, w_ih=None, b_ih=None, w_hr=None):
        """x: gi (T, B, 4H), or with w_ih the layer's input (T, B, F)."""
        xp = self.xp
        T, B = x.shape[:2]
        G, P = w_hh.shape                           # P: h's features (H unprojected)
        H = G // 4
        bias = [b for b in (b_ih, b_hh) if b is not None]
        bias = _signed(xp, sum(bias[1:], bias[0]), H) if bias else None
        # the pre-activations (T, G, B), gates in the order o, i, f, g, the σ rows negated
        if w_ih is None:                            # gi given (rnn_scan): a strided copy
            pre = _signed(xp, x.reshape(T * B, G).T, H)
        else:                                       # (G, T·B), one product
            pre = xp.matmul(_signed(xp, w_ih, H), x.reshape(T * B, x.shape[-1]).T)
        if bias is not None:
            pre += bias[:, None]
        pre = xp.ascontiguousarray(pre.reshape(G, T, B).swapaxes(0, 1))
        w = _signed(xp, w_hh, H)
        # act[r] = [o, i, f, g, c] (5H, B), hs[r] = h (P, B), in time order: step t reads
        # row t and writes c and h to row t + 1 (in reverse, reads row t + 1 and writes row
        # t), so that c0 and h0 are the first row the steps read and the final states the
        # last they write
        act, hs = xp.empty((T + 1, 5 * H, B), x.dtype), xp.empty((T + 1, P, B), x.dtype)
        tanh_c, ic_fc = xp.empty((T, H, B), x.dtype), xp.empty((2 * H, B), x.dtype)
        # with a projection, each step's o⊙tanh c' (W_hr's gradient needs them)
        raw = None if w_hr is None else xp.empty((T, H, B), x.dtype)
        ones = xp.ones((3 * H, B), x.dtype)         # (an array: a Python 1 costs ~1 µs a call)
        read, write = self._rows()
        first, last = (T, 0) if self.reverse else (0, T)
        hs[first], act[first, 4 * H:] = h0.T, c0.T
        steps = (act[read], act[write], pre, hs[read], hs[write], tanh_c)
        with _overflow_quietly(xp):                 # e⁻ᵃ = inf: σ = 0, as it should
            for a, a_new, p, h, h_new, t_c, r in zip(
                    *map(self._in_order, steps),
                    repeat(None) if raw is None else self._in_order(raw)):
                gates, s, g = a[:4 * H], a[:3 * H], a[3 * H:4 * H]
                xp.matmul(w, h, out=gates)
                gates += p
                xp.exp(s, out=s)                        # σ = 1/(1 + e⁻ᵃ) of -a
                s += ones
                xp.divide(ones, s, out=s)
                xp.tanh(g, out=g)
                xp.multiply(a[H:3 * H], a[3 * H:], out=ic_fc)     # [i⊙g, f⊙c]
                c = a_new[4 * H:]
                xp.add(ic_fc[:H], ic_fc[H:], out=c)
                xp.tanh(c, out=t_c)
                if r is None:
                    xp.multiply(a[:H], t_c, out=h_new)
                else:
                    xp.multiply(a[:H], t_c, out=r)
                    xp.matmul(w_hr, r, out=h_new)
        self.act, self.hs, self.tanh_c, self.raw = act, hs, tanh_c, raw
        # batch-major copies (as _outputs; with B or H 1 the transpose is contiguous, and
        # ascontiguousarray would hand out the saved arrays themselves)
        return tuple(a.swapaxes(-1, -2).copy() for a in (hs[write], hs[last], act[last, 4 * H:]))

    def _rows(self):
        """The rows of the (T + 1)-row arrays that the steps read, and those they write,
        each in time order."""
        inner, outer = slice(1, None), slice(None, -1)
        return (inner, outer) if self.reverse else (outer, inner)

    def backward_arrays(self, grads):
        """dc' = dc + dh'⊙o(1 - tanh²c'); d(gates) = [dh'⊙tanh c'·σ'(o), dc'⊙g·σ'(i),
        dc'⊙c·σ'(f), dc'⊙i(1 - g²)]; dc = dc'⊙f, dh = W_hhᵀ d(gates) (feature-major and
        o, i, f, g, as forward). With a projection the dh' of these is W_hrᵀ dh'."""
        xp, act, tanh_c, raw = self.xp, self.act, self.tanh_c, self.raw
        ins = dict(zip(self.names, self.inputs))
        T, H, B = tanh_c.shape
        G, P = 4 * H, self.hs.shape[1]
        read, _ = self._rows()
        a = act[read]                                    # what each step read, time order
        o, i, g, f = a[:, :H], a[:, H:2 * H], a[:, 3 * H:4 * H], a[:, 2 * H:3 * H]
        # every step's local derivatives at once: [dc' from dh', d_o] = dh'⊙k_a and
        # [d_i, d_f, d_g, dc] = dc'⊙k_b
        k_a, k_b = xp.empty((T, 2, H, B), act.dtype), xp.empty((T, 4, H, B), act.dtype)
        sig = xp.subtract(1, a[:, :3 * H])                   # σ'(o, i, f) = σ(1 - σ)
        sig *= a[:, :3 * H]
        xp.multiply(sig[:, :H], tanh_c, out=k_a[:, 1])       # tanh c'·σ'(o)
        xp.multiply(sig[:, H:].reshape(T, 2, H, B), a[:, 3 * H:].reshape(T, 2, H, B),
                    out=k_b[:, :2])                          # [g·σ'(i), c·σ'(f)]
        xp.multiply(tanh_c, tanh_c, out=k_a[:, 0])
        xp.subtract(1, k_a[:, 0], out=k_a[:, 0])
        k_a[:, 0] *= o                                       # o(1 - tanh²c')
        xp.multiply(g, g, out=k_b[:, 2])
        xp.subtract(1, k_b[:, 2], out=k_b[:, 2])
        k_b[:, 2] *= i                                       # i(1 - g²)
        k_b[:, 3] = f
        # each step's row of d: [dc', d_o, d_i, d_f, d_g, dc], so d(gates) is d[:, 1:5]
        d = xp.empty((T, 6, H, B), act.dtype)
        dys = None if grads[0] is None else xp.ascontiguousarray(grads[0].swapaxes(1, 2))
        # dh and dc are added into: copies (with B or H 1, a transpose made contiguous is
        # the given gradient's own memory, which another op may share)
        dh, dc = (xp.zeros((n, B), act.dtype) if gr is None else gr.T.copy()
                  for gr, n in zip(grads[1:], (P, H)))
        w_t = xp.ascontiguousarray(_oifg(xp, ins["w_hh"]._data, H).T)
        back = slice(None) if self.reverse else slice(None, None, -1)  # last step first
        steps = (d, d[:, 1:5].reshape(T, G, B), k_a, k_b)
        # with a projection, each step's dh' (P, B), for W_hr's gradient
        d_proj = None if raw is None else xp.empty((T, P, B), act.dtype)
        w_hr_t = None if raw is None else xp.ascontiguousarray(ins["w_hr"]._data.T)
        for t_d, t_gates, t_ka, t_kb, t_dy, t_dp in zip(
                *(a[back] for a in steps), repeat(None) if dys is None else dys[back],
                repeat(None) if raw is None else d_proj[back]):
            if t_dy is not None:
                dh += t_dy
            if t_dp is not None:                         # h' = W_hr r: dr = W_hrᵀ dh'
                t_dp[...] = dh
                dh = xp.matmul(w_hr_t, dh)
            xp.multiply(t_ka, dh, out=t_d[:2])
            t_dc = t_d[0]
            t_dc += dc
            xp.multiply(t_kb, t_dc, out=t_d[2:])
            dh, dc = xp.matmul(w_t, t_gates), t_d[5]
        need = dict(zip(self.names, self.needs_input_grad))
        # copies: with B or H 1, dc.T is contiguous, a view of all of d
        found = {"h0": dh.T.copy(), "c0": dc.T.copy()}
        # d(gates) gate-major (G, T·B), i, f, g, o as given: the weights' gradients
        # Σ_t d(gates)_t [x_t, h_(t-1)]ᵀ are then one product each
        rows = xp.empty((4, H, T, B), act.dtype)
        rows[:3] = d[:, 2:5].transpose(1, 2, 0, 3)
        rows[3] = d[:, 1].swapaxes(0, 1)
        rows = rows.reshape(G, T * B)
        x = ins.get("x", ins.get("gi"))._data
        if need.get("gi"):                               # (T, B, G), a strided copy
            found["gi"] = xp.ascontiguousarray(rows.T).reshape(T, B, G)
        if need.get("x"):
            found["x"] = xp.matmul(rows.T, ins["w_ih"]._data).reshape(x.shape)
        if need.get("w_ih"):
            found["w_ih"] = xp.matmul(rows, x.reshape(T * B, x.shape[-1]))
        if need["w_hh"]:
            h_read = xp.ascontiguousarray(self.hs[read].swapaxes(0, 1)).reshape(P, T * B)
            found["w_hh"] = xp.matmul(rows, h_read.T)
        if need.get("w_hr"):                             # Σ_t dh'_t (o⊙tanh c')_tᵀ
            d_proj, raw = (xp.ascontiguousarray(a.swapaxes(0, 1)) for a in (d_proj, raw))
            found["w_hr"] = xp.matmul(d_proj.reshape(P, T * B), raw.reshape(H, T * B).T)
        if need.get("b_ih") or need.get("b_hh"):
            found["b_hh"] = col_sum(xp, rows.T)
            found["b_ih"] = found["b_hh"].copy()
        return tuple(found.get(name) if need[name] else None for name in self.names)


def _oifg(xp, a, H):
    """The rows of a (4H, ...) array (a weight, a bias) in LSTMScan's gate order o, i, f, g
    (PyTorch's i, f, g, o turned by one gate; a copy)."""
    return xp.concatenate((a[3 * H:], a[:3 * H]))


def _signed(xp, a, H):
    """_oifg(a) with the σ gates' rows negated (the forward's σ = 1/(1 + e⁻ᵃ) of -a)."""
    a = _oifg(xp, a, H)
    a[:3 * H] *= -1
    return a
