"""The elementwise part of huber_loss and smooth_l1_loss as one op: from d = input - target,
½d² where |d| < δ, else δ(|d| - ½δ) (Huber), or that over β (smooth L1, δ = β), each side
as PyTorch computes it. Composed of abs/where/multiply ops it was eight nodes and as many
passes, with `where`'s stall on an unpredictable mask on top."""
from minigrad.autograd import Function


class Huber(Function):
    """Forward picks each side by 0/1 arithmetic, not `where`: the quadratic side is
    computed on c = clip(d, -δ, δ), finite where it is not taken, so 0·(its value) is 0.
    dloss/dd = clip(d, -δ, δ) (over β for smooth L1): d inside, ±δ outside; the second
    derivative is 1 strictly inside and 0 from |d| = δ on, as PyTorch's."""
    fresh_grads = True                                   # see Function.fresh_grads

    def forward(self, d, delta, smooth):
        xp = self.xp
        self.delta, self.smooth = delta, smooth
        c = xp.clip(d, -delta, delta)
        near = xp.abs(d) < delta
        quad = c * c
        quad *= 0.5
        far = xp.abs(d)
        far -= 0.5 * delta
        if smooth:                  # PyTorch's ½d²/β and |d| - ½β
            quad /= delta
        else:                       # PyTorch's ½d² and δ(|d| - ½δ)
            far *= delta
        quad *= near
        far *= ~near
        quad += far
        return quad

    def backward(self, g):                               # the reference, Tensor ops
        from minigrad.ops.activations import hardtanh    # (activations imports loss)
        c = hardtanh(self.inputs[0], -self.delta, self.delta)   # its gradient: 0 at ±δ
        return g * (c / self.delta if self.smooth else c)

    def backward_arrays(self, g):
        c = self.xp.clip(self.inputs[0]._data, -self.delta, self.delta)
        if self.smooth:
            c /= self.delta
        c *= g
        return (c,)


def huber(d, delta, smooth=False):
    """Huber's loss of each element of d (smooth=True: smooth L1 with β = delta, > 0)."""
    return Huber.apply(d, delta=float(delta), smooth=smooth)
