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
the LSTM's op multiplies itself (see LSTMScan), and for the LSTM W_hr (P, H), which
projects each step's h to P features (h0, the outputs' h and W_hh's columns are then P).
Outputs: h of every step in time order (T, B, H), and the final state(s) (B, H). Reverse
runs from the last step to the first.
The RNN's and GRU's saved arrays are kept in the order the steps run, the LSTM's in time
order, feature-major.
"""
from itertools import repeat

from minigrad.autograd import Function, record_outputs
from minigrad.ops.activations import _overflow_quietly
from minigrad.ops.linear import linear
from minigrad.ops.rows import col_sum
from minigrad.ops.shape import Reshape, stack, unbind
from minigrad.tensor import Tensor


class _Scan:
    """What the three ops share (a mixin: not an op of its own): the arrays in running
    order, the outputs, the reference backward."""
    fresh_grads = True                                   # see Function.fresh_grads
    mode = None

    def _in_order(self, a):
        """A (T, ...) array in the order the steps run (a view)."""
        return a[::-1] if self.reverse else a

    def _outputs(self, hs, *finals):
        """h of every step in time order, and the final states: copies, so that an in-place
        change of an output cannot reach what backward saved (hs[0] is h0)."""
        ys = hs[:0:-1] if self.reverse else hs[1:]
        return (ys.copy(),) + tuple(f.copy() for f in finals)

    def _start(self, dys, finals):
        """The gradients of the outputs as arrays to add into: dh of the final state plus
        nothing yet (dys in running order, or None), for backward_arrays' loop."""
        xp, hs = self.xp, self.hs
        starts = tuple(xp.zeros(hs.shape[1:], hs.dtype) if g is None else g.copy()
                       for g in finals)
        return (None if dys is None else self._in_order(dys)), starts

    def _weight_grads(self, d_gh, need):
        """dW_hh = Σ_t d(gh)_tᵀ h_(t-1) over every step at once, and db_hh = Σ d(gh)."""
        xp, hs = self.xp, self.hs
        T, B, G = d_gh.shape
        rows = d_gh.reshape(T * B, G)
        d_w = xp.matmul(rows.T, hs[:-1].reshape(T * B, hs.shape[2])) if need[0] else None
        d_b = col_sum(xp, rows) if need[1] else None
        return (d_w, d_b)[:len(self.inputs) - 1 - len(self.finals)]

    def backward(self, grads):                           # the reference: the step functions
        from minigrad.autograd import grad
        from minigrad.nn.rnn_cells import _STEPS         # (nn imports ops: imported here)
        # each input behind a node of its own, so that the inner grad stops there and does
        # not run the inputs' hooks or retain_grad, which this outer pass runs once
        ins = [Reshape.apply(t, shape=t.shape) if t.requires_grad else t for t in self.inputs]
        p = dict(zip(self.names, ins))
        gi = p["gi"] if "gi" in p else linear(p["x"], p["w_ih"], p.get("b_ih"))
        state = tuple(p[s] for s in ("h0", "c0") if s in p)
        w_hh, b_hh = p["w_hh"], p.get("b_hh")
        step, T, n = _STEPS[self.mode], gi.shape[0], len(self.finals)
        gis, ys = unbind(gi), [None] * T
        for t in (reversed(range(T)) if self.reverse else range(T)):
            state = step(gis[t], state, w_hh, b_hh) if n == 2 else \
                (step(gis[t], state[0], w_hh, b_hh),)
            if "w_hr" in p:                              # the LSTM's projection
                state = (linear(state[0], p["w_hr"]), state[1])
            ys[t] = state[0]
        pairs = [(o, g) for o, g in zip((stack(ys, 0),) + state, grads) if g is not None]
        want = [t for t in ins if t.requires_grad]
        found = iter(grad([o for o, _ in pairs], want, [g for _, g in pairs],
                          create_graph=True, allow_unused=True))
        return tuple(next(found) if t.requires_grad else None for t in ins)


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
        xp, hs, w_hh = self.xp, self.hs, self.inputs[2].data
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
        xp, hs, w_hh = self.xp, self.hs, self.inputs[2].data
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


class LSTMScan(_Scan, Function):
    """i, f, g, o = σ, σ, tanh, σ of gi + W_hh h + b_hh; c' = f⊙c + i⊙g, h' = o⊙tanh(c'),
    as ops/rnn_cells.py's LSTMCell and LSTMOutput, then h' = W_hr h' if W_hr is given (the
    projection: P features). σ(a) = 1/(1 + e⁻ᵃ): the σ gates' rows are negated once (not
    (1 + tanh(a/2))/2: see GRUScan).

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
        w_t = xp.ascontiguousarray(_oifg(xp, ins["w_hh"].data, H).T)
        back = slice(None) if self.reverse else slice(None, None, -1)  # last step first
        steps = (d, d[:, 1:5].reshape(T, G, B), k_a, k_b)
        # with a projection, each step's dh' (P, B), for W_hr's gradient
        d_proj = None if raw is None else xp.empty((T, P, B), act.dtype)
        w_hr_t = None if raw is None else xp.ascontiguousarray(ins["w_hr"].data.T)
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
        x = ins.get("x", ins.get("gi")).data
        if need.get("gi"):                               # (T, B, G), a strided copy
            found["gi"] = xp.ascontiguousarray(rows.T).reshape(T, B, G)
        if need.get("x"):
            found["x"] = xp.matmul(rows.T, ins["w_ih"].data).reshape(x.shape)
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
    data = [None if t is None else t.data for t in named.values()]
    # forward(gi or x, h0, [c0], w_hh, b_hh, and the LSTM's w_ih, b_ih, w_hr where given),
    # None for a missing b_hh
    extra = {n: named[n].data for n in ("w_ih", "b_ih", "w_hr") if named[n] is not None}
    outs = fn.forward(*data[:-3], **extra)
    outs = [Tensor._make(a, x.device) for a in outs]
    record_outputs(fn, [named[n] for n in fn.names], outs)
    return outs[0], tuple(outs[1:])
