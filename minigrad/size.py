"""`mg.Size`, PyTorch's torch.Size: the type of `t.shape` and `t.size()`, a tuple of ints
with `numel()`. It prints as the tuple it is, so messages and lessons show shapes as
(2, 3); `mg.Size([2, 3]) == (2, 3)`, and slicing or adding gives a plain tuple."""


class Size(tuple):
    __slots__ = ()

    def numel(self):
        """The number of elements a tensor of this shape holds (1 for ())."""
        n = 1
        for s in self:
            n *= s
        return n

    def __repr__(self):
        return tuple.__repr__(self)
