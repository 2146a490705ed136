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
the initial state h0 (B, H) (and c0 for the LSTM), W_hh (G·H, H) and b_hh (G·H,) or none.
Outputs: h of every step in time order (T, B, H), and the final state(s) (B, H). Reverse
runs from the last step to the first. The saved arrays are kept in the order the steps
run (the LSTM's also feature-major: see LSTMScan).
"""
from minigrad.autograd import Function, record_outputs
from minigrad.ops.activations import _overflow_quietly
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
        n = len(self.finals)
        gi, state, w_hh = ins[0], tuple(ins[1:1 + n]), ins[1 + n]
        b_hh = ins[2 + n] if len(ins) > 2 + n else None
        step, T = _STEPS[self.mode], gi.shape[0]
        gis, ys = unbind(gi), [None] * T
        for t in (reversed(range(T)) if self.reverse else range(T)):
            state = step(gis[t], state, w_hh, b_hh) if n == 2 else \
                (step(gis[t], state[0], w_hh, b_hh),)
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
        hs[0] = h0
        with _overflow_quietly(xp):                 # e⁻ᵃ = inf: σ = 0, as it should
            for t in range(T):
                g, a, nt, h = gh[t], rz[t], n[t], hs[t + 1]
                xp.matmul(hs[t], w, out=g)
                if b is not None:
                    g += b
                xp.add(pre[t, :, :2 * H], g[:, :2 * H], out=a)      # -a
                xp.exp(a, out=a)
                a += 1
                xp.divide(1, a, out=a)                             # σ(a)
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
    as ops/rnn_cells.py's LSTMCell and LSTMOutput. σ(a) = 1/(1 + e⁻ᵃ): the σ gates' rows
    are negated once (not (1 + tanh(a/2))/2: see GRUScan).

    Laid out feature-major, each step's gates (4H, B) and states (H, B), so that every gate
    is one contiguous block: batch-major, a gate is every row's slice of H, and an array
    call on that runs a loop per row, several times slower at these sizes."""
    finals = ("h", "c")

    def forward(self, gi, h0, c0, w_hh, b_hh):
        xp = self.xp
        T, B, G = gi.shape
        H = G // 4
        sign = xp.full(G, -1, gi.dtype)
        sign[2 * H:3 * H] = 1
        pre = self._in_order(gi) if b_hh is None else self._in_order(gi) + b_hh
        # the σ rows negated, then transposed: (T, G, B) in running order (a transposing
        # multiply by a column of signs would run a short loop per element row, slower)
        pre = xp.ascontiguousarray((pre * sign).swapaxes(1, 2))
        w = w_hh * sign[:, None]
        act = xp.empty((T, G, B), gi.dtype)
        hs, cs, tanh_c = (xp.empty((n, H, B), gi.dtype) for n in (T + 1, T + 1, T))
        hs[0], cs[0] = h0.T, c0.T
        ig = xp.empty((H, B), gi.dtype)
        with _overflow_quietly(xp):                 # e⁻ᵃ = inf: σ = 0, as it should
            for t in range(T):
                a, c = act[t], cs[t + 1]
                xp.matmul(w, hs[t], out=a)
                a += pre[t]
                for s in (a[:2 * H], a[3 * H:]):        # σ = 1/(1 + e⁻ᵃ) of -a
                    xp.exp(s, out=s)
                    s += 1
                    xp.divide(1, s, out=s)
                xp.tanh(a[2 * H:3 * H], out=a[2 * H:3 * H])
                xp.multiply(a[H:2 * H], cs[t], out=c)
                xp.multiply(a[:H], a[2 * H:3 * H], out=ig)
                c += ig
                xp.tanh(c, out=tanh_c[t])
                xp.multiply(a[3 * H:], tanh_c[t], out=hs[t + 1])
        self.act, self.hs, self.cs, self.tanh_c = act, hs, cs, tanh_c
        ys = hs[:0:-1] if self.reverse else hs[1:]        # batch-major copies (as _outputs)
        return tuple(xp.ascontiguousarray(a.swapaxes(-1, -2)) for a in (ys, hs[T], cs[T]))

    def backward_arrays(self, grads):
        """dc' += dh'⊙o(1 - tanh²c'); d(gates) = [dc'⊙g·σ'(i), dc'⊙c·σ'(f),
        dc'⊙i(1 - g²), dh'⊙tanh c'·σ'(o)]; dc = dc'⊙f, dh = W_hhᵀ d(gates) (feature-major
        as forward)."""
        xp, act, cs, tanh_c = self.xp, self.act, self.cs, self.tanh_c
        w_t = xp.ascontiguousarray(self.inputs[3].data.T)
        T, G, B = act.shape
        H = G // 4
        i, f, g, o = (act[:, k * H:(k + 1) * H] for k in range(4))
        g_ys = None if grads[0] is None else xp.ascontiguousarray(grads[0].swapaxes(1, 2))
        dys = None if g_ys is None else self._in_order(g_ys)
        # dh and dc are added into: copies (with B or H 1, a transpose made contiguous is
        # the given gradient's own memory, which another op may share)
        dh, dc = (xp.zeros((H, B), act.dtype) if g is None else g.T.copy() for g in grads[1:])
        # every step's local derivatives at once: d(gates)_t = [dc', dc', dc', dh'] ⊙ k_t
        k = xp.empty((T, 4, H, B), act.dtype)
        xp.multiply(i, 1 - i, out=k[:, 0])
        k[:, 0] *= g
        xp.multiply(f, 1 - f, out=k[:, 1])
        k[:, 1] *= cs[:-1]
        xp.multiply(g, g, out=k[:, 2])
        xp.subtract(1, k[:, 2], out=k[:, 2])
        k[:, 2] *= i
        xp.multiply(o, 1 - o, out=k[:, 3])
        k[:, 3] *= tanh_c
        k_c = tanh_c * tanh_c                            # dc' from dh': o(1 - tanh²c')
        xp.subtract(1, k_c, out=k_c)
        k_c *= o
        d_gates = xp.empty((T, G, B), act.dtype)
        d4 = d_gates.reshape(T, 4, H, B)
        tmp = xp.empty((H, B), act.dtype)
        for t in reversed(range(T)):
            if dys is not None:
                dh += dys[t]
            xp.multiply(dh, k_c[t], out=tmp)
            dc += tmp
            xp.multiply(k[t, :3], dc, out=d4[t, :3])
            xp.multiply(k[t, 3], dh, out=d4[t, 3])
            dc *= f[t]
            dh = xp.matmul(w_t, d_gates[t])
        need = self.needs_input_grad
        # back to batch-major and time order; W_hh's gradient Σ_t d(gates)_t h_(t-1)ᵀ
        d_gi = xp.ascontiguousarray(self._in_order(d_gates).swapaxes(1, 2))
        rows = d_gi.reshape(T * B, G)
        d_w = d_b = None
        if need[3]:
            h_prev = xp.ascontiguousarray(self._in_order(self.hs[:-1]).swapaxes(1, 2))
            d_w = xp.matmul(rows.T, h_prev.reshape(T * B, H))
        if len(need) > 4 and need[4]:
            d_b = col_sum(xp, rows)
        return (d_gi if need[0] else None, xp.ascontiguousarray(dh.T),
                xp.ascontiguousarray(dc.T), d_w) + ((d_b,) if len(need) > 4 else ())


_SCANS = {"RNN_TANH": RNNScan, "RNN_RELU": RNNScan, "GRU": GRUScan, "LSTM": LSTMScan}


def rnn_scan(mode, gi, state, w_hh, b_hh=None, reverse=False):
    """One direction of one layer ("RNN_TANH", "RNN_RELU", "GRU" or "LSTM") over gi
    (T, B, G·H) from `state`, (h0,) or (h0, c0) each (B, H). Returns (h of every step
    (T, B, H), final states (h_n,) or (h_n, c_n))."""
    cls = _SCANS[mode]
    if gi.ndim != 3 or w_hh.ndim != 2:
        raise ValueError(f"rnn_scan: gi must be (T, B, gates·H) and W_hh (gates·H, H), got "
                         f"{gi.shape} and {w_hh.shape}")
    T, B, G = gi.shape
    H = w_hh.shape[-1]
    want = {"gi": (T, B, G), "w_hh": (G, H), "b_hh": (G,), "state": (B, H)}
    for what, t in [("gi", gi), ("w_hh", w_hh), ("b_hh", b_hh)] + [("state", s) for s in state]:
        if t is not None and (t.shape != want[what] or t.dtype != gi.dtype or
                              t.device != gi.device):
            raise ValueError(f"rnn_scan: {what} must be {want[what]} {gi.dtype} on "
                             f"{gi.device} (gi {gi.shape}, W_hh {w_hh.shape}), got {t.shape} "
                             f"{t.dtype} on {t.device}")
    gates = {"GRU": 3, "LSTM": 4}.get(mode, 1)
    if len(state) != len(cls.finals) or G != gates * H:
        raise ValueError(f"rnn_scan: {mode} takes {len(cls.finals)} state tensor(s) and W_hh "
                         f"({gates}·H, H), got {len(state)} and W_hh {w_hh.shape}")
    inputs = [gi, *state, w_hh] + ([] if b_hh is None else [b_hh])
    fn = cls()
    fn.mode, fn.reverse, fn.device, fn.xp = mode, reverse, gi.device, gi.backend.xp
    arrays = fn.forward(gi.data, *(s.data for s in state), w_hh.data,
                        None if b_hh is None else b_hh.data)
    outs = [Tensor._make(a, gi.device) for a in arrays]
    record_outputs(fn, inputs, outs)
    return outs[0], tuple(outs[1:])
