"""What the fused recurrent scans share (ops/rnn_scan.py's RNNScan and GRUScan,
ops/lstm_scan.py's LSTMScan): a mixin, not an op, kept apart so that both files can
import it without importing each other."""
from minigrad.ops.linear import linear
from minigrad.ops.rows import col_sum
from minigrad.ops.shape import Reshape, stack, unbind


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
