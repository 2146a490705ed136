"""Hooks for every Module at once, as PyTorch's torch.nn.modules.module.register_module_*:
to trace, profile or debug a whole model without touching its code (print each layer's
output shape, count calls). They behave as a module's own hooks (hooks.py), and run before
those of each module. Registration hooks see each parameter, buffer and sub-module as it is
registered, and may replace it (cast it, wrap it). Each register_* returns a handle whose
remove() takes the hook off.

The call hooks live in one dict, so a module's call (hooks.py) asks `if CALL_HOOKS` once,
the only price they cost when there are none."""
from collections import OrderedDict

from minigrad.grad_hooks import HookHandle

# hook id -> (kind, hook, with_kwargs, always_call), kinds "forward_pre", "forward",
# "backward_pre", "backward", in the order registered
CALL_HOOKS = OrderedDict()
# hook id -> hook(module, name, value), for each kind of thing registered
BUFFER_HOOKS, MODULE_HOOKS, PARAMETER_HOOKS = OrderedDict(), OrderedDict(), OrderedDict()


def global_hooks(kind):
    """(hook id, (hook, with_kwargs, always_call)) of the global call hooks of one kind, in
    order: the entries of a module's own hook dicts (hooks.py), so both run in one loop."""
    return [(i, entry[1:]) for i, entry in list(CALL_HOOKS.items()) if entry[0] == kind]


def registered(hooks, module, name, value):
    """`value` after the registration hooks: each sees what the one before returned (None
    keeps it), as PyTorch; the result is stored as it is, unchecked."""
    for hook in list(hooks.values()):
        new = hook(module, name, value)
        value = value if new is None else new
    return value


def _add(store, entry, caller):
    hook = entry[1] if store is CALL_HOOKS else entry
    if not callable(hook):
        raise TypeError(f"{caller}: expected a function, got {type(hook).__name__}")
    return HookHandle(store, entry)


def register_module_forward_pre_hook(hook):
    """hook(module, args) runs before every module's forward, before the module's own
    pre-hooks; a value it returns replaces the positional inputs (a tuple, or one value)."""
    return _add(CALL_HOOKS, ("forward_pre", hook, False, False),
                "register_module_forward_pre_hook")


def register_module_forward_hook(hook, *, with_kwargs=False, always_call=False):
    """hook(module, args, output) runs after every module's forward, before the module's
    own forward hooks; a value it returns replaces the output. with_kwargs=True:
    hook(module, args, kwargs, output); always_call=True: it runs even when forward (or a
    hook) raises, on the output so far (None if forward did not return). PyTorch calls an
    always_call hook with with_kwargs=True without the kwargs when forward raised (so it
    fails, and only warns); here it gets them, as a module's own hook does."""
    return _add(CALL_HOOKS, ("forward", hook, bool(with_kwargs), bool(always_call)),
                "register_module_forward_hook")


def register_module_full_backward_pre_hook(hook):
    """hook(module, grad_output) runs for every module, before the module's own backward
    pre-hooks; a tuple it returns replaces grad_output (Module.register_full_backward_pre_hook
    says more)."""
    return _add(CALL_HOOKS, ("backward_pre", hook, False, False),
                "register_module_full_backward_pre_hook")


def register_module_full_backward_hook(hook):
    """hook(module, grad_input, grad_output) runs for every module, before the module's own
    backward hooks; a tuple it returns replaces grad_input (Module.register_full_backward_hook
    says more). Which hooks a call runs is fixed when forward starts, as PyTorch."""
    return _add(CALL_HOOKS, ("backward", hook, False, False),
                "register_module_full_backward_hook")


def register_module_backward_hook(hook):
    """PyTorch's deprecated form, registered as a full backward hook, as
    Module.register_backward_hook is (module_more.py says why)."""
    return register_module_full_backward_hook(hook)


def register_module_buffer_registration_hook(hook):
    """hook(module, name, buffer) runs whenever a buffer is registered (register_buffer,
    `self.name = nn.Buffer(...)`, assigning to a buffer's name, load_state_dict with
    assign=True), None included; a value it returns is registered instead."""
    return _add(BUFFER_HOOKS, hook, "register_module_buffer_registration_hook")


def register_module_module_registration_hook(hook):
    """hook(module, name, submodule) runs whenever a sub-module is registered (add_module,
    `self.name = module`, None assigned to a sub-module's name, containers' append, ...); a
    value it returns is registered instead."""
    return _add(MODULE_HOOKS, hook, "register_module_module_registration_hook")


def register_module_parameter_registration_hook(hook):
    """hook(module, name, param) runs whenever a Parameter is registered (register_parameter,
    `self.name = Parameter(...)`, parameter containers, load_state_dict with assign=True),
    not for None, as PyTorch; a value it returns is registered instead."""
    return _add(PARAMETER_HOOKS, hook, "register_module_parameter_registration_hook")
