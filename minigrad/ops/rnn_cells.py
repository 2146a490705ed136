"""The elementwise halves of the LSTM and GRU cells as fused ops (article 2.2.3.1's
recurrent encoders): from the gates' pre-activations (the matrix products stay Linear's),
the new state (the LSTM's in two ops, c' then h' from it). Composed of separate ops a step
is a dozen nodes, each with its own passes and Python cost; nn/rnn_cells.py's step
functions call these."""
from minigrad.autograd import Function
from minigrad.ops.shape import cat


class LSTMCell(Function):
    """The new cell state: i, f, g = σ, σ, tanh of the gates' first three quarters
    (PyTorch's order i, f, g, o); c' = f⊙c + i⊙g. Backward: d(gates) = [dc'⊙g·σ'(i),
    dc'⊙c·σ'(f), dc'⊙i·tanh'(g), 0] (σ' = σ(1 - σ), tanh' = 1 - tanh²), and dc = dc'⊙f.
    h' is LSTMOutput's, a function of c': so a hook or mg.grad on c' sees all of its
    gradient, the part that comes through h' too."""
    fresh_grads = True                                   # see Function.fresh_grads

    def forward(self, gates, c):
        xp = self.xp
        H = c.shape[-1]
        act = xp.empty(gates.shape[:-1] + (3 * H,), gates.dtype)
        act[..., :2 * H] = _sigmoid(xp, gates[..., :2 * H])
        xp.tanh(gates[..., 2 * H:3 * H], out=act[..., 2 * H:])
        self.act = act
        i, f, g = (act[..., k * H:(k + 1) * H] for k in range(3))
        return f * c + i * g

    def backward(self, dc):                               # the reference: Tensor ops
        gates, c = self.inputs
        H = c.shape[-1]
        i, f = (gates[..., k * H:(k + 1) * H].sigmoid() for k in (0, 1))
        g = gates[..., 2 * H:3 * H].tanh()
        return (cat([dc * g * i * (1 - i), dc * c * f * (1 - f), dc * i * (1 - g * g),
                     0 * gates[..., 3 * H:]], -1), dc * f)

    def backward_arrays(self, dc):
        xp, act, c = self.xp, self.act, self.inputs[1]._data
        H = c.shape[-1]
        i, f, g = (act[..., k * H:(k + 1) * H] for k in range(3))
        d = xp.empty(act.shape[:-1] + (4 * H,), act.dtype)
        d[..., 3 * H:] = 0
        xp.multiply(dc, g, out=d[..., :H])
        d[..., :H] *= i * (1 - i)
        xp.multiply(dc, c, out=d[..., H:2 * H])
        d[..., H:2 * H] *= f * (1 - f)
        xp.multiply(dc, i, out=d[..., 2 * H:3 * H])
        d[..., 2 * H:3 * H] *= 1 - g * g
        return d, dc * f


class LSTMOutput(Function):
    """h' = o⊙tanh(c'), o = σ of the gates' last quarter. Backward: d(gates) = [0, 0, 0,
    dh'⊙tanh(c')·σ'(o)], dc' = dh'⊙o⊙(1 - tanh²c')."""
    fresh_grads = True                                   # see Function.fresh_grads

    def forward(self, gates, c_new):
        H = c_new.shape[-1]
        self.o, self.tanh_c = _sigmoid(self.xp, gates[..., 3 * H:]), self.xp.tanh(c_new)
        return self.o * self.tanh_c

    def backward(self, dh):                               # the reference: Tensor ops
        gates, c_new = self.inputs
        H = c_new.shape[-1]
        o, tanh_c = gates[..., 3 * H:].sigmoid(), c_new.tanh()
        return (cat([0 * gates[..., :3 * H], dh * tanh_c * o * (1 - o)], -1),
                dh * o * (1 - tanh_c * tanh_c))

    def backward_arrays(self, dh):
        xp, o, tanh_c = self.xp, self.o, self.tanh_c
        H = o.shape[-1]
        d = xp.zeros(o.shape[:-1] + (4 * H,), o.dtype)
        xp.multiply(dh, tanh_c, out=d[..., 3 * H:])
        d[..., 3 * H:] *= o * (1 - o)
        return d, dh * o * (1 - tanh_c * tanh_c)


def _sigmoid(xp, a):
    """σ(a) without overflow: e^-|a| in both branches, each exact in its own tail."""
    e = xp.exp(-xp.abs(a))
    r = 1 / (1 + e)
    return xp.where(a >= 0, r, e * r)


def lstm_cell(gates, c):
    """(h', c') of one LSTM step from the gates' pre-activations (..., 4H) and c (..., H)."""
    if gates.shape != c.shape[:-1] + (4 * c.shape[-1],) or gates.dtype != c.dtype or \
            gates.device != c.device:
        raise ValueError(f"lstm_cell: gates (..., 4H) and c (..., H) of one dtype and device, "
                         f"got gates {gates.shape} {gates.dtype} on {gates.device} and c "
                         f"{c.shape} {c.dtype} on {c.device}")
    c_new = LSTMCell.apply(gates, c)
    return LSTMOutput.apply(gates, c_new), c_new


class GRUCell(Function):
    """r = σ(gi_r + gh_r), z = σ(gi_z + gh_z), n = tanh(gi_n + r⊙gh_n), h' = (1 - z)⊙n + z⊙h
    from gi = W_ih x + b_ih and gh = W_hh h + b_hh (..., 3H), PyTorch's order r, z, n.
    Backward: dz = dh'⊙(h - n), dn = dh'⊙(1 - z)·(1 - n²), dr = dn⊙gh_n; then
    d(gi) = [dr·σ'(r), dz·σ'(z), dn], d(gh) = [the same two, dn⊙r], dh = dh'⊙z."""
    fresh_grads = True                                   # see Function.fresh_grads

    def forward(self, gi, gh, h):
        xp = self.xp
        H = h.shape[-1]
        rz = _sigmoid(xp, gi[..., :2 * H] + gh[..., :2 * H])
        r, z = rz[..., :H], rz[..., H:]
        n = xp.tanh(gi[..., 2 * H:] + r * gh[..., 2 * H:])
        self.rz, self.n = rz, n
        return n + z * (h - n)

    def backward(self, g):                               # the reference: Tensor ops
        gi, gh, h = self.inputs
        H = h.shape[-1]
        rz = (gi[..., :2 * H] + gh[..., :2 * H]).sigmoid()
        r, z = rz[..., :H], rz[..., H:]
        n = (gi[..., 2 * H:] + r * gh[..., 2 * H:]).tanh()
        dn = g * (1 - z) * (1 - n * n)
        d_rz = cat([dn * gh[..., 2 * H:] * r * (1 - r), g * (h - n) * z * (1 - z)], -1)
        return cat([d_rz, dn], -1), cat([d_rz, dn * r], -1), g * z

    def backward_arrays(self, g):
        xp, rz, n = self.xp, self.rz, self.n
        gh, h = self.inputs[1]._data, self.inputs[2]._data
        H = n.shape[-1]
        r, z = rz[..., :H], rz[..., H:]
        d_gi = xp.empty(rz.shape[:-1] + (3 * H,), rz.dtype)
        dn = d_gi[..., 2 * H:]
        xp.multiply(g, 1 - z, out=dn)
        dn *= 1 - n * n
        xp.multiply(dn, gh[..., 2 * H:], out=d_gi[..., :H])
        d_gi[..., :H] *= r * (1 - r)
        xp.multiply(g, h - n, out=d_gi[..., H:2 * H])
        d_gi[..., H:2 * H] *= z * (1 - z)
        d_gh = d_gi.copy()
        d_gh[..., 2 * H:] *= r
        return d_gi, d_gh, g * z


def gru_cell(gi, gh, h):
    """h' of one GRU step from gi = W_ih x + b_ih, gh = W_hh h + b_hh (..., 3H) and h."""
    if gi.shape != gh.shape or gi.shape != h.shape[:-1] + (3 * h.shape[-1],) or \
            len({gi.dtype, gh.dtype, h.dtype}) != 1:
        raise ValueError(f"gru_cell: gi and gh (..., 3H) and h (..., H) of one dtype, got "
                         f"{gi.shape} {gi.dtype}, {gh.shape} {gh.dtype} and {h.shape} "
                         f"{h.dtype}")
    return GRUCell.apply(gi, gh, h)
