"""Every differentiable op, grouped by kind; each is a `Function` with forward and backward
side by side, and a lowercase function that users (and `Tensor`'s methods) call."""
from minigrad.ops import (elementwise, reduce, shape, matmul, linear, softmax,  # noqa: F401
                          loss, layer_norm, attention, random)
