"""More of torch.nn.utils: skip_init, and the sub-module paths PyTorch code imports from
(`torch.nn.utils.clip_grad`, `.convert_parameters`, `.stateless`, `.init`,
`.memory_format`, `.fusion`), registered under minigrad.nn.utils by nn/utils.py."""
import inspect
import sys
import types
import warnings

from minigrad.func_call import functional_call as _functional_call
from minigrad.nn import init


def skip_init(module_cls, *args, **kwargs):
    """module_cls(*args, **kwargs) built without its initialisation, as
    torch.nn.utils.skip_init: every nn.init function the constructor calls (as all of
    minigrad's modules' reset_parameters do) draws and writes nothing, so no random numbers
    are spent and the parameters keep the values they are made with (zeros; the ones of
    a norm layer's weight). (PyTorch builds the
    module on its "meta" device and leaves the values uninitialised: use them only after
    writing them.) As PyTorch's, module_cls must take a `device` argument."""
    from minigrad.nn.module import Module
    if not (isinstance(module_cls, type) and issubclass(module_cls, Module)):
        raise RuntimeError(f"skip_init: expected a Module class, got {module_cls!r}")
    if "device" not in inspect.signature(module_cls).parameters:
        raise RuntimeError(f"skip_init: {module_cls.__name__} must take a 'device' argument "
                           f"to skip initialisation")
    before = getattr(init._skipping, "on", False)
    init._skipping.on = True
    try:
        return module_cls(*args, **kwargs)
    finally:
        init._skipping.on = before


def clip_grad_norm(parameters, max_norm, norm_type=2.0, error_if_nonfinite=False,
                   foreach=None):
    """PyTorch's deprecated spelling of clip_grad_norm_ (warns, FutureWarning)."""
    from minigrad.nn.utils import clip_grad_norm_
    warnings.warn("`torch.nn.utils.clip_grad_norm` is now deprecated in favor of "
                  "`torch.nn.utils.clip_grad_norm_`.", FutureWarning, stacklevel=2)
    return clip_grad_norm_(parameters, max_norm, norm_type, error_if_nonfinite, foreach)


def stateless_functional_call(module, parameters_and_buffers, args=None, kwargs=None, *,
                              tie_weights=True, strict=False):
    """torch.nn.utils.stateless.functional_call: mg.func.functional_call, with PyTorch's
    deprecation warning (FutureWarning)."""
    warnings.warn("`torch.nn.utils.stateless.functional_call` is deprecated as of PyTorch "
                  "2.0; use `torch.func.functional_call` instead (minigrad: "
                  "mg.func.functional_call), a drop-in replacement.", FutureWarning,
                  stacklevel=2)
    return _functional_call(module, parameters_and_buffers, args, kwargs,
                            tie_weights=tie_weights, strict=strict)


def convert_conv2d_weight_memory_format(module, memory_format):
    """Returns `module` unchanged: PyTorch rewrites conv weights to a memory format
    (channels_last), and NumPy/CuPy arrays here have one layout, so there is nothing to
    convert."""
    return module


def convert_conv3d_weight_memory_format(module, memory_format):
    """Returns `module` unchanged (see convert_conv2d_weight_memory_format)."""
    return module


def register(package, **paths):
    """Each of `paths` (name -> {member: value}) as a module `package.name`, importable and
    an attribute of `package`."""
    parent = sys.modules[package]
    for name, members in paths.items():
        m = types.ModuleType(f"{package}.{name}", f"torch.nn.utils.{name}'s names.")
        m.__dict__.update(members)
        sys.modules[m.__name__] = m
        setattr(parent, name, m)
