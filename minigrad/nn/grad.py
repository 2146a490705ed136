"""torch.nn.grad: the gradients of a convolution in its input and in its weight, given the
gradient of its output (what conv{1,2,3}d's backward computes), as functions of their own.
The input's is the transposed convolution of grad_output (conv_transpose{d}d), with the
output_padding that gives back the input's size; the weight's is autograd's gradient of a
convolution in its weight (mg.grad). Both are made of differentiable ops, so they can be
differentiated again (in grad_output, the weight or the input)."""
from minigrad.autograd import enable_grad, grad, is_grad_enabled
from minigrad.creation import zeros
from minigrad.ops import conv_functional as C
from minigrad.tensor import Tensor

_CONV = {1: C.conv1d, 2: C.conv2d, 3: C.conv3d}
_TRANSPOSED = {1: C.conv_transpose1d, 2: C.conv_transpose2d, 3: C.conv_transpose3d}


def conv1d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """The gradient of conv1d(input, weight, ...) in `input`, whose shape is `input_size`,
    given grad_output, the gradient of its output."""
    return _input("conv1d_input", 1, input_size, weight, grad_output, stride, padding,
                  dilation, groups)


def conv1d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1,
                  groups=1):
    """The gradient of conv1d(input, weight, ...) in `weight`, whose shape is
    `weight_size`, given grad_output, the gradient of its output."""
    return _weight("conv1d_weight", 1, input, weight_size, grad_output, stride, padding,
                   dilation, groups)


def conv2d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """conv1d_input's, for conv2d."""
    return _input("conv2d_input", 2, input_size, weight, grad_output, stride, padding,
                  dilation, groups)


def conv2d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1,
                  groups=1):
    """conv1d_weight's, for conv2d."""
    return _weight("conv2d_weight", 2, input, weight_size, grad_output, stride, padding,
                   dilation, groups)


def conv3d_input(input_size, weight, grad_output, stride=1, padding=0, dilation=1, groups=1):
    """conv1d_input's, for conv3d."""
    return _input("conv3d_input", 3, input_size, weight, grad_output, stride, padding,
                  dilation, groups)


def conv3d_weight(input, weight_size, grad_output, stride=1, padding=0, dilation=1,
                  groups=1):
    """conv1d_weight's, for conv3d."""
    return _weight("conv3d_weight", 3, input, weight_size, grad_output, stride, padding,
                   dilation, groups)


def _size(op, name, size, d):
    """A shape given as ints (a tuple, list or a tensor's .shape), batched or not."""
    try:
        size = tuple(int(n) for n in size)
    except (TypeError, ValueError):
        raise TypeError(f"{op}: {name} must be a shape (a sequence of ints), got "
                        f"{size!r}") from None
    if len(size) not in (d + 1, d + 2) or min(size) < 0:
        raise ValueError(f"{op}: {name} must be (N, C, *spatial) or (C, *spatial) with {d} "
                         f"spatial dims, got {size}")
    return size


def _tensors(op, **tensors):
    for name, t in tensors.items():
        if not isinstance(t, Tensor):
            raise TypeError(f"{op}: {name} must be a Tensor, got {type(t).__name__}")


def _input(op, d, input_size, weight, grad_output, stride, padding, dilation, groups):
    _tensors(op, weight=weight, grad_output=grad_output)
    size = _size(op, "input_size", input_size, d)
    stride, padding, dilation = (C._ints(op, name, v, d, low) for name, v, low in (
        ("stride", stride, 1), ("padding", padding, 0), ("dilation", dilation, 1)))
    if grad_output.ndim != len(size):
        raise ValueError(f"{op}: grad_output has {grad_output.ndim} dims (shape "
                         f"{grad_output.shape}) but input_size {size} has {len(size)}")
    channels = weight.shape[1] * groups if weight.ndim == d + 2 else None
    if channels is not None and size[-d - 1] != channels:
        raise ValueError(f"{op}: input_size {size} has {size[-d - 1]} channels, but weight "
                         f"{weight.shape} with groups={groups} takes {channels} "
                         f"(weight.shape[1] · groups)")
    if len(size) == d + 2 and size[0] != grad_output.shape[0]:
        raise ValueError(f"{op}: input_size {size} has batch {size[0]}, grad_output "
                         f"{grad_output.shape} has {grad_output.shape[0]}")
    kernel, out = weight.shape[2:], grad_output.shape[-d:]
    # the size conv gives for each input size, and the smallest input giving `out`
    conv_out = tuple((n + 2 * p - dl * (k - 1) - 1) // s + 1 for n, k, s, p, dl in
                     zip(size[-d:], kernel, stride, padding, dilation))
    if conv_out != tuple(out):
        raise ValueError(f"{op}: a conv{d}d of an input of spatial size {size[-d:]} with "
                         f"kernel {tuple(kernel)}, stride={stride}, padding={padding}, "
                         f"dilation={dilation} has output size {conv_out}, but grad_output "
                         f"has {tuple(out)}")
    smallest = ((m - 1) * s - 2 * p + dl * (k - 1) + 1 for m, k, s, p, dl in
                zip(out, kernel, stride, padding, dilation))
    output_padding = tuple(n - m for n, m in zip(size[-d:], smallest))  # each < stride
    return _TRANSPOSED[d](grad_output, weight, None, stride, padding, output_padding, groups,
                          dilation)


def _weight(op, d, input, weight_size, grad_output, stride, padding, dilation, groups):
    _tensors(op, input=input, grad_output=grad_output)
    size = _size(op, "weight_size", weight_size, d)
    if len(size) != d + 2:
        raise ValueError(f"{op}: weight_size must be (out_channels, in_channels/groups, "
                         f"*kernel_size) with {d} kernel dims, got {size}")
    weight = zeros(*size, dtype=input.dtype, device=input.device, requires_grad=True)
    with enable_grad():         # (called under no_grad too, as PyTorch's may be)
        y = _CONV[d](input, weight, None, stride, padding, dilation, groups)
    if y.shape != grad_output.shape:
        raise ValueError(f"{op}: a conv{d}d of input {input.shape} with a weight of shape "
                         f"{size} (stride={stride}, padding={padding}, dilation={dilation}, "
                         f"groups={groups}) has output shape {y.shape}, but grad_output "
                         f"has {grad_output.shape}")
    again = is_grad_enabled() and (input.requires_grad or grad_output.requires_grad)
    return grad(y, weight, grad_output, create_graph=again)[0]
