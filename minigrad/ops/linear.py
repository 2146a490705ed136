"""The linear layer y = x·Wᵀ + b as one op (PyTorch's addmm), W shaped (out, in).

Composed from matmul and add, the bias add writes a second array as large as the output and
its backward sums the bias gradient with a reduction over rows. Fused, the bias goes into
the GEMM's fresh output in place, all leading dims fold into the rows of one GEMM, and the
bias gradient is one matrix-vector product (a ones vector times the rows), which BLAS runs
several times faster than NumPy's reduction over the leading axis.
"""
import math

from minigrad.args import not_a_tensor
from minigrad.autograd import Function
from minigrad.ops.matmul import check_same_float, gemm
from minigrad.ops.rows import col_sum
from minigrad.tensor import Tensor


class Linear(Function):
    fresh_grads = True                                   # see Function.fresh_grads
    def forward(self, x, w, *b):                     # y = x·Wᵀ (+ b)
        rows = _rows(x)                              # (..., in) -> (rows, in)
        y = gemm(self.xp, rows, w.T)
        if b:
            y += b[0]
        return y.reshape(x.shape[:-1] + (w.shape[0],))

    def backward(self, g):                           # Tensor ops: twice differentiable
        x, w = self.inputs[:2]
        need = self.needs_input_grad                 # (x is data for a first layer: no dX)
        gx = g @ w if need[0] else None              # dX = G·W
        gw = _rows(g).mT @ _rows(x) if need[1] else None   # dW = Gᵀ·X
        return (gx, gw, g)[:len(self.inputs)]        # db = G (the engine sums)

    def backward_arrays(self, g):                    # the same on arrays
        xp = self.xp
        x, w = self.inputs[0]._data, self.inputs[1]._data
        need = self.needs_input_grad
        g2 = _rows(g)
        gx = gemm(xp, g2, w).reshape(x.shape) if need[0] else None
        gw = gemm(xp, g2.T, _rows(x)) if need[1] else None
        if len(self.inputs) == 2:
            return gx, gw
        return gx, gw, col_sum(xp, g2) if need[2] else None   # db = Σ of G's rows


def _rows(a):
    """An array or tensor (..., n) as rows (r, n); -1 would be ambiguous when n is 0 (a
    zero-size layer such as nn.Linear(0, 2), which PyTorch allows)."""
    return a.reshape(math.prod(a.shape[:-1]), a.shape[-1])


def linear(input, weight, bias=None):
    """x @ weightᵀ + bias, with weight shaped (out_features, in_features) as PyTorch."""
    if not isinstance(input, Tensor) or not isinstance(weight, Tensor):
        raise not_a_tensor("linear", "weight" if isinstance(input, Tensor) else "input",
                           weight if isinstance(input, Tensor) else input)
    if input.dtype != weight.dtype:
        _check_dtypes(input, weight)
    if weight.ndim == 1:                 # PyTorch's too: x·w, one output per row, no dim
        return _vector_linear(input, weight, bias)
    if weight.ndim != 2:
        raise ValueError(f"linear: weight must be 2-D (out_features, in_features), got shape "
                         f"{weight.shape}")
    if input.ndim == 0 or input.shape[-1] != weight.shape[-1]:
        raise ValueError(f"linear: input's last dim is {input.shape[-1] if input.ndim else None} "
                         f"(shape {input.shape}) but weight {weight.shape} expects "
                         f"in_features={weight.shape[-1]}")
    if bias is None:
        return Linear.apply(input, weight)
    if not isinstance(bias, Tensor):
        raise not_a_tensor("linear", "bias", bias)
    check_same_float("linear", weight, bias, autocast=True)
    if bias.shape != (weight.shape[0],):
        # PyTorch adds any bias that broadcasts to the output (addmm's rule); not fused
        _check_bias(bias, input.shape[:-1] + (weight.shape[0],))
        return Linear.apply(input, weight) + bias
    return Linear.apply(input, weight, bias)


def _check_dtypes(input, weight):
    """input and weight of different dtypes: refused where PyTorch refuses them, an
    integer input (token ids meant for an Embedding would otherwise be cast) or float32
    with float64; float16 with float32 passes under autocast (check_same_float)."""
    if (input.dtype.kind == "f") != (weight.dtype.kind == "f"):
        raise TypeError(f"linear: input has dtype {input.dtype} but weight {weight.dtype}; "
                        f"convert the input first (.float()), as PyTorch requires")
    check_same_float("linear", input, weight, autocast=True)


def _check_bias(bias, out_shape):
    """A bias that broadcasts to the output's shape without growing it (addmm's rule)."""
    if bias.ndim > len(out_shape) or any(b not in (1, o) for b, o in
                                         zip(bias.shape[::-1], out_shape[::-1])):
        raise ValueError(f"linear: bias has shape {bias.shape}, expected ({out_shape[-1]},) "
                         f"(out_features), or a shape that broadcasts to the output's "
                         f"{out_shape}")


def _vector_linear(input, weight, bias):
    """linear with a 1-D weight (in_features,): input·weight (+ bias), the last dim gone."""
    if input.ndim == 0 or input.shape[-1] != weight.shape[0]:
        raise ValueError(f"linear: input's last dim (shape {input.shape}) must match the 1-D "
                         f"weight's {weight.shape[0]} (in_features)")
    y = input @ weight
    if bias is None:
        return y
    if not isinstance(bias, Tensor):
        raise not_a_tensor("linear", "bias", bias)
    check_same_float("linear", weight, bias, autocast=True)
    _check_bias(bias, y.shape)
    return y + bias


def bilinear(input1, input2, weight, bias=None):
    """y_o = x1ᵀ·W_o·x2 + b_o, as torch.nn.functional.bilinear: weight (out, in1, in2),
    inputs (*, in1) and (*, in2) with the same leading dims. Composed of differentiable ops:
    x1 times W laid out as (in1, out·in2) in one GEMM, then each W_o·… dotted with x2."""
    op = "bilinear"
    given = {"input1": input1, "input2": input2, "weight": weight}
    if bias is not None:
        given["bias"] = bias
    for name, t in given.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")
    if len({t.dtype for t in given.values()}) > 1:     # (x1·W·x2 would promote silently)
        raise TypeError(f"{op}: {', '.join(given)} have dtypes "
                        f"{', '.join(str(t.dtype) for t in given.values())}; convert them to "
                        f"one first (.float(), .double()), as PyTorch requires")
    if weight.ndim != 3:
        raise ValueError(f"{op}: weight must be 3-D (out_features, in1_features, "
                         f"in2_features), got shape {weight.shape}")
    out, in1, in2 = weight.shape
    for name, x, n in (("input1", input1, in1), ("input2", input2, in2)):
        if x.ndim == 0 or x.shape[-1] != n:
            raise ValueError(f"{op}: {name} has shape {x.shape}, but weight {weight.shape} "
                             f"expects its last dim to be {n}")
    if input1.shape[:-1] != input2.shape[:-1]:
        raise ValueError(f"{op}: input1 {input1.shape} and input2 {input2.shape} must have "
                         f"the same leading dims")
    if bias is not None and bias.shape != (out,):
        raise ValueError(f"{op}: bias has shape {bias.shape}, expected ({out},) "
                         f"(out_features)")
    lead = input1.shape[:-1]
    u = _rows(input1) @ weight.permute(1, 0, 2).reshape(in1, out * in2)   # x1ᵀ·W_o, all o
    y = (u.reshape(lead + (out, in2)) * input2.unsqueeze(-2)).sum(-1)
    return y if bias is None else y + bias
