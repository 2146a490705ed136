"""CrossMapLRN2d, PyTorch's (from Lua Torch's SpatialCrossMapLRN): local response
normalisation across the channels of a 4-D input, as LocalResponseNorm but with PyTorch's
own window, reproduced here value for value:

    y_c = x_c · (k + α/size · s_c)^-β,   s_c = Σ x_j² over j in [c - P + 1, c + P - 1]
                                                 (inside 0 .. C-1), P = (size - 1)//2 + 1,
                                          plus x_0² when c >= P.

The window is `size` channels wide for an odd size and size + 1 for an even one, and the
extra x_0² is PyTorch's running sum never taking channel 0 back out (its loop removes
channel c - P only for c > P). PyTorch's backward is written by hand and is not the
gradient of that forward (torch.autograd.gradcheck fails on it, and with size=1 it
raises); minigrad's is autograd's, the exact gradient of the values above."""
from minigrad.args import int_arg, number_arg
from minigrad.nn.module import Module
from minigrad.ops.pad import pad
from minigrad.ops.shape import cat
from minigrad.tensor import Tensor


def cross_map_lrn2d(input, size, alpha=1e-4, beta=0.75, k=1.0):
    """CrossMapLRN2d's forward as a function (see the module docstring)."""
    op = "CrossMapLRN2d"
    if not isinstance(input, Tensor):
        raise TypeError(f"{op}: input must be a Tensor, got {type(input).__name__}")
    if input.ndim != 4:
        raise ValueError(f"{op}: expected a 4-D input (N, C, H, W), got {input.ndim}-D "
                         f"(shape {input.shape})")
    size = int_arg(op, "size", size, low=1)
    alpha, beta, k = (number_arg(op, name, v) for name, v in
                      (("alpha", alpha), ("beta", beta), ("k", k)))
    channels, reach = input.shape[1], (size - 1) // 2       # reach = P - 1
    squares = input * input
    padded = pad(squares, (0, 0, 0, 0, reach, reach))
    total = padded[:, 0:channels]
    for i in range(1, 2 * reach + 1):
        total = total + padded[:, i:i + channels]
    if channels > reach + 1:                  # PyTorch's running sum keeps x_0² from c = P
        total = cat([total[:, :reach + 1], total[:, reach + 1:] + squares[:, :1]], 1)
    return input * (total * (alpha / size) + k) ** -beta


class CrossMapLRN2d(Module):
    """Local response normalisation across channels of (N, C, H, W), as
    torch.nn.CrossMapLRN2d (its window and values: see cross_map_lrn2d)."""

    def __init__(self, size, alpha=1e-4, beta=0.75, k=1):
        super().__init__()
        self.size, self.alpha, self.beta, self.k = size, alpha, beta, k

    def forward(self, input):
        return cross_map_lrn2d(input, self.size, self.alpha, self.beta, self.k)

    def extra_repr(self):
        return f"{self.size}, alpha={self.alpha}, beta={self.beta}, k={self.k}"
