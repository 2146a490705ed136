"""torch.nn.parameter's names, where PyTorch code imports them from:
`from minigrad.nn.parameter import Parameter`."""
from minigrad.nn.buffer import Buffer  # noqa: F401
from minigrad.nn.lazy import UninitializedBuffer, UninitializedParameter  # noqa: F401
from minigrad.nn.module import Parameter  # noqa: F401
