"""More of PyTorch's Module methods: set_submodule, to_empty, type, the deprecated
register_backward_hook, and the ones that have nothing to do here (share_memory, compile)
or cannot be done (bfloat16). Module (module.py) inherits them."""
from minigrad.args import type_target


class ModuleMore:
    def set_submodule(self, target, module, strict=False):
        """Put `module` at a dotted path ("encoder.layers.0"), as PyTorch: every step
        before the last must be a sub-module; the last may be new (strict: it must exist)
        but, where it exists, must be a Module too."""
        from minigrad.nn.module import Module
        if not isinstance(target, str) or target == "":
            raise ValueError(f"set_submodule: needs a target name (a dotted path), got "
                             f"{target!r}")
        if not isinstance(module, Module):
            raise ValueError(f"set_submodule: `module` is not an nn.Module, found "
                             f"{type(module).__name__}")
        path, _, name = target.rpartition(".")
        parent = self.get_submodule(path)
        if strict and not hasattr(parent, name):
            raise AttributeError(f"{type(parent).__name__} has no attribute `{name}`")
        if hasattr(parent, name) and not isinstance(getattr(parent, name), Module):
            raise AttributeError(f"`{name}` is not an nn.Module")
        setattr(parent, name, module)

    def to_empty(self, *, device, recurse=True):
        """Move the parameters and buffers to `device` (recurse=False: this module's own
        only); returns self. PyTorch leaves the moved values uninitialised (it is for
        modules built on its "meta" device, which minigrad does not have); minigrad keeps
        them, as to(device)."""
        return self._convert(self.modules() if recurse else (self,), device, None)

    def type(self, dst_type):
        """Cast every parameter and buffer to dst_type (a floating dtype, or a type name
        as Tensor.type takes: "minigrad.DoubleTensor"), integer and boolean buffers too, as
        PyTorch's; returns self. to(dtype) casts only the floating ones."""
        from minigrad import backend
        device, dtype = type_target(dst_type)
        if not backend.is_floating(dtype):
            raise TypeError(f"{type(self).__name__}.type: dst_type must be a floating-point "
                            f"type (float16, float32, float64), got {dtype}; a module's "
                            f"weights cannot become integers")
        return self._convert(self.modules(), device, dtype, every_dtype=True)

    def bfloat16(self):
        raise TypeError(f"{type(self).__name__}.bfloat16: minigrad has no bfloat16 (NumPy "
                        f"and CuPy have none); use half() for float16")

    def share_memory(self):
        """A no-op returning self (PyTorch moves the weights to shared memory for its
        multiprocessing; see Tensor.share_memory_)."""
        return self

    def compile(self, *args, **kwargs):
        """A no-op returning None: minigrad has no compiler (PyTorch's compiles forward in
        place with torch.compile and returns None too); the module runs as it is."""

    def register_backward_hook(self, hook):
        """PyTorch's deprecated backward hook: registered here as a full one
        (register_full_backward_hook), whose grad_input are the gradients of the module's
        inputs. PyTorch's old hook gets those of the last op's inputs instead, which differ
        where forward is more than one op (PyTorch then warns); use
        register_full_backward_hook."""
        return self.register_full_backward_hook(hook)
