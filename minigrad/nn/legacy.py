"""Two of torch.nn's names kept for older code: Container, the deprecated base class whose
work Module now does, and DataParallel as PyTorch's runs it without GPUs (the wrapped
module called as it is). minigrad's data parallelism over processes is
mg.data_parallel.ProcessDataParallel."""
import warnings

from minigrad.nn.module import Module


class Container(Module):
    """PyTorch's deprecated nn.Container: a Module whose keyword arguments become its
    sub-modules (Container(a=Linear(1, 1)) holds `a`). Warns, as PyTorch's (FutureWarning);
    subclass Module instead."""

    def __init__(self, **kwargs):
        super().__init__()
        warnings.warn("`nn.Container` is deprecated. All of its functionality is now "
                      "implemented in `nn.Module`. Subclass that instead.", FutureWarning,
                      stacklevel=2)
        for name, module in kwargs.items():
            self.add_module(name, module)


class DataParallel(Module):
    """torch.nn.DataParallel as PyTorch runs it without GPUs: forward calls the wrapped
    module (`.module`) with the inputs as they are, on one device, no replicas and no split
    of the batch; the state dict's keys start with "module.", as PyTorch's. device_ids is
    [] (PyTorch's value without GPUs) whatever is given; output_device and dim are kept."""

    def __init__(self, module, device_ids=None, output_device=None, dim=0):
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DataParallel: module must be an nn.Module, got "
                            f"{type(module).__name__}")
        self.module = module
        self.device_ids = []
        self.output_device, self.dim = output_device, dim

    def forward(self, *inputs, **kwargs):
        return self.module(*inputs, **kwargs)
