"""torch.nn.modules' names: every Module class of minigrad.nn, for code that imports them
from there (`from minigrad.nn.modules import Module, Linear`)."""
import minigrad.nn as _nn
from minigrad.nn.module import Module

globals().update({name: value for name, value in vars(_nn).items()
                  if isinstance(value, type) and issubclass(value, Module)})
