"""Every differentiable op, grouped by kind; each is a `Function` with forward and backward
side by side, and a lowercase function that users (and `Tensor`'s methods) call."""
from minigrad.ops import (elementwise, reduce, shape, index, matmul, linear,  # noqa: F401
                          softmax, loss, layer_norm, attention, random, inplace,
                          activations, gelu, math, norms, pad, einsum, scatter, repeat,
                          layout, cumulative, promotion, embedding, special, statistics,
                          order)
from minigrad.ops import math_extra, bitwise, shape_extra, inplace_shape  # noqa: F401
from minigrad.ops import torch_extra, torch_extra_index, calculus  # noqa: F401
