"""torch.nn.modules' names: every Module class of minigrad.nn, for code that imports them
from there (`from minigrad.nn.modules import Module, Linear`), and torch.nn.modules.module,
whose global hooks (`nn.modules.module.register_module_forward_hook`, ...) are module.py's."""
import sys as _sys

import minigrad.nn as _nn
from minigrad.nn import module
from minigrad.nn.module import Module

_sys.modules[__name__ + ".module"] = module   # `import minigrad.nn.modules.module`

globals().update({name: value for name, value in vars(_nn).items()
                  if isinstance(value, type) and issubclass(value, Module)})
