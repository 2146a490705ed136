"""More of torch.nn.init: dirac_ (a convolution that passes its input through), sparse_
(a matrix with a fixed fraction of zeros in each column, Martens 2010), and PyTorch's old
spellings without the trailing underscore, which warn (FutureWarning, as PyTorch's) and
call the in-place ones."""
import functools
import math
import warnings

from minigrad import backend
from minigrad.args import int_arg, number_arg
from minigrad.nn.init import _check_float, _fill


def dirac_(tensor, groups=1):
    """The Dirac delta in a 3-, 4- or 5-D convolution weight (out, in/groups, *kernel), as
    torch.nn.init.dirac_: zeros but for a 1 at the kernel's centre (size//2 in each dim)
    joining output channel i of each group to input channel i of it, for i below
    min(out/groups, in/groups). A convolution with it (padding that keeps the size) returns
    its input on those channels; the output channels beyond them are 0."""
    if tensor.ndim not in (3, 4, 5):
        raise ValueError(f"init.dirac_: only tensors with 3, 4 or 5 dims (a conv1d/2d/3d "
                         f"weight) are supported, got shape {tensor.shape}")
    groups = int_arg("init.dirac_", "groups", groups, low=1)
    if tensor.shape[0] % groups:
        raise ValueError(f"init.dirac_: dim 0 ({tensor.shape[0]}, the output channels) must "
                         f"be divisible by groups={groups}")
    per_group = tensor.shape[0] // groups
    values = backend.get("cpu").xp.zeros(tensor.shape)
    centre = tuple(n // 2 for n in tensor.shape[2:])
    for g in range(groups):
        for i in range(min(per_group, tensor.shape[1])):
            values[(g * per_group + i, i) + centre] = 1
    return _fill(tensor, values)


def sparse_(tensor, sparsity, std=0.01, generator=None):
    """A 2-D tensor drawn from N(0, std²), then in each column ceil(sparsity · rows) entries,
    at rows chosen at random, set to 0, as torch.nn.init.sparse_."""
    _check_float(tensor, "sparse_")
    if tensor.ndim != 2:
        raise ValueError(f"init.sparse_: only 2-D tensors are supported, got shape "
                         f"{tensor.shape}")
    sparsity = number_arg("init.sparse_", "sparsity", sparsity)
    if not 0 <= sparsity <= 1:
        raise ValueError(f"init.sparse_: sparsity is the fraction of each column set to 0, "
                         f"in [0, 1]; got {sparsity}")
    if not std >= 0:
        raise ValueError(f"init.sparse_: std must be >= 0, got {std}")
    rows, cols = tensor.shape
    rng = backend.host_rng(generator, "init")
    values = rng.normal(0.0, std, (rows, cols))
    zeros = math.ceil(sparsity * rows)
    for c in range(cols):
        values[rng.permutation(rows)[:zeros], c] = 0
    return _fill(tensor, values)


def _deprecated(name, fn):
    @functools.wraps(fn)
    def old(*args, **kwargs):
        warnings.warn(f"`nn.init.{name}` is now deprecated in favor of `nn.init.{name}_`.",
                      FutureWarning, stacklevel=2)
        return fn(*args, **kwargs)
    old.__name__ = old.__qualname__ = name
    return old
