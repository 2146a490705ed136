"""A Module's hooks, as PyTorch's: functions run before forward (they may replace the
inputs) and after it (they may replace the output), e.g. to record activations for a plot;
and backward hooks, which see (and may replace) the gradients of the module's inputs and
outputs, e.g. the gradient of a layer's output for Grad-CAM. `Module` inherits them; a
module without hooks (its own, or global ones: global_hooks.py) calls forward directly."""
import warnings
from collections import OrderedDict

from minigrad.autograd import Function, is_grad_enabled, record_outputs
from minigrad.grad_hooks import HookHandle
from minigrad.nn.global_hooks import CALL_HOOKS, global_hooks


class ForwardHooks:
    def __call__(self, *args, **kwargs):
        d = self.__dict__
        if not d.get("_forward_pre_hooks") and not d.get("_forward_hooks") and not \
                d.get("_backward_hooks") and not d.get("_backward_pre_hooks") and \
                not CALL_HOOKS:                          # the usual case
            return self.forward(*args, **kwargs)
        return _call_with_hooks(self, args, kwargs)

    def register_forward_pre_hook(self, hook, *, prepend=False, with_kwargs=False):
        """hook(module, args) runs before forward; a value it returns replaces the positional
        inputs (a tuple, or one value). with_kwargs=True: hook(module, args, kwargs), which
        may return (args, kwargs). prepend=True runs it before the hooks already there.
        Returns a handle: handle.remove() takes it off."""
        return self._add_hook("_forward_pre_hooks", hook, prepend, "register_forward_pre_hook",
                              _forward_pre_hooks_with_kwargs=with_kwargs)

    def register_forward_hook(self, hook, *, prepend=False, with_kwargs=False,
                              always_call=False):
        """hook(module, args, output) runs after forward, e.g. to record activations; a value
        it returns replaces the output. with_kwargs=True: hook(module, args, kwargs,
        output); always_call=True: it runs even when forward raises (output None).
        Returns a handle: handle.remove() takes it off."""
        return self._add_hook("_forward_hooks", hook, prepend, "register_forward_hook",
                              _forward_hooks_with_kwargs=with_kwargs,
                              _forward_hooks_always_called=always_call)

    def register_full_backward_hook(self, hook, prepend=False):
        """hook(module, grad_input, grad_output) runs when the gradients of the module's
        inputs are computed: grad_input holds one per positional input (None for one that
        is not a tensor; zeros for a tensor the gradient did not reach), grad_output one per
        output (None where there is none). A tuple it returns, one entry per input,
        replaces grad_input. When no input requires grad it runs on grad_input all None,
        as soon as grad_output is known. Returns a handle: handle.remove() takes it off."""
        return self._add_hook("_backward_hooks", hook, prepend,
                              "register_full_backward_hook")

    def register_full_backward_pre_hook(self, hook, prepend=False):
        """hook(module, grad_output) runs when the gradients of the module's outputs are
        computed, before those of its inputs; a tuple it returns replaces grad_output.
        Returns a handle: handle.remove() takes it off."""
        return self._add_hook("_backward_pre_hooks", hook, prepend,
                              "register_full_backward_pre_hook")

    # state-dict hooks, as PyTorch's (module_state.py's state_dict and load_state_dict run
    # them; their signatures are there)
    def register_state_dict_pre_hook(self, hook):
        return self._add_hook("_state_dict_pre_hooks", hook, False,
                              "register_state_dict_pre_hook")

    def register_state_dict_post_hook(self, hook):
        return self._add_hook("_state_dict_hooks", hook, False,
                              "register_state_dict_post_hook")

    def register_load_state_dict_pre_hook(self, hook):
        return self._add_hook("_load_state_dict_pre_hooks", hook, False,
                              "register_load_state_dict_pre_hook")

    def _register_load_state_dict_pre_hook(self, hook, with_module=False):
        """PyTorch's older form: hook(state_dict, prefix, ...) without the module first,
        unless with_module=True."""
        return self.register_load_state_dict_pre_hook(hook if with_module else
                                                      _WithoutModule(hook))

    def register_load_state_dict_post_hook(self, hook):
        return self._add_hook("_load_state_dict_post_hooks", hook, False,
                              "register_load_state_dict_post_hook")

    def _add_hook(self, kind, hook, prepend, caller, **flags):
        """Stores `hook` in the dict `kind` (hook id -> hook, as PyTorch's, so code that reads
        module._forward_pre_hooks finds the hooks themselves); a flag that is set (with_kwargs,
        always_call) marks the id in a dict of its own, PyTorch's names again."""
        if not callable(hook):
            raise TypeError(f"{caller}: expected a function, got {type(hook).__name__}")
        d = self.__dict__
        for name in (kind,) + tuple(flags):              # made on first use: most never are
            if name not in d:
                object.__setattr__(self, name, OrderedDict())
        handle = HookHandle(d[kind], hook, extra=[d[name] for name in flags])
        for name, on in flags.items():
            if on:
                d[name][handle.id] = True
        if prepend:
            d[kind].move_to_end(handle.id, last=False)
        return handle


class _WithoutModule:
    """A hook called without its module (a class, not a lambda: a module pickles)."""

    def __init__(self, hook):
        if not callable(hook):
            raise TypeError(f"_register_load_state_dict_pre_hook: expected a function, got "
                            f"{type(hook).__name__}")
        self.hook = hook

    def __call__(self, module, *args):
        return self.hook(*args)


def _call_with_hooks(module, args, kwargs):
    """A call with hooks, as PyTorch's: the global ones (global_hooks.py) before the
    module's own of each kind. Each loop runs the hooks there are when it starts; the
    backward hooks are those there are before the pre-hooks run."""
    backward_hooks = _hooks(module, "backward", "_backward_hooks")
    backward_pre_hooks = _hooks(module, "backward_pre", "_backward_pre_hooks")
    done, out = set(), None              # done: the always_call hooks that ran
    try:
        for _, (hook, with_kwargs, _) in _entries(module, "forward_pre", "_forward_pre_hooks"):
            args, kwargs = _pre_hook_result(hook, module, args, kwargs, with_kwargs)
        backward = None
        if (backward_hooks or backward_pre_hooks) and is_grad_enabled():
            backward = _BackwardHooks(module, backward_hooks, backward_pre_hooks)
            args = backward.on_inputs(args)
        out = module.forward(*args, **kwargs)
        for hook_id, (hook, with_kwargs, always) in _entries(module, "forward",
                                                             "_forward_hooks"):
            if always:
                done.add(hook_id)
            new = hook(module, args, kwargs, out) if with_kwargs else hook(module, args, out)
            out = out if new is None else new            # None keeps the output
        return out if backward is None else backward.on_output(out)
    except Exception:
        # always_call hooks run even when forward (or a hook) raised, on the output so far,
        # each on what the one before returned, as PyTorch's; an error of theirs is only a
        # warning beside the first one
        for hook_id, (hook, with_kwargs, always) in _entries(module, "forward",
                                                             "_forward_hooks"):
            if always and hook_id not in done:
                try:
                    new = hook(module, args, kwargs, out) if with_kwargs else \
                        hook(module, args, out)
                    out = out if new is None else new
                except Exception as e:                   # noqa: BLE001
                    warnings.warn(f"a forward hook with always_call=True raised {e!r} "
                                  f"while another error was raised in forward",
                                  stacklevel=3)
        raise


def _entries(module, kind, own):
    """(hook id, (hook, with_kwargs, always_call)) of one kind: the global ones, then the
    module's own (hook ids are unique across both)."""
    d = module.__dict__
    with_kwargs = d.get(own + "_with_kwargs", {})
    always = d.get("_forward_hooks_always_called", {}) if own == "_forward_hooks" else {}
    return global_hooks(kind) + [(i, (hook, i in with_kwargs, i in always))
                                 for i, hook in list(d.get(own, {}).items())]


def _hooks(module, kind, own):
    return [entry[0] for _, entry in _entries(module, kind, own)]


def _pre_hook_result(hook, module, args, kwargs, with_kwargs):
    """(args, kwargs) after a forward pre-hook: its return value replaces them (None keeps
    them; a plain hook replaces the positional ones, with a tuple or one value)."""
    if not with_kwargs:
        new = hook(module, args)
        return (args if new is None else new if isinstance(new, tuple) else (new,)), kwargs
    new = hook(module, args, kwargs)
    if new is None:
        return args, kwargs
    if not (isinstance(new, tuple) and len(new) == 2 and isinstance(new[1], dict)):
        raise RuntimeError(f"a forward pre-hook with with_kwargs=True must return None or "
                           f"(args, kwargs), got {type(new).__name__}")
    return (new[0] if isinstance(new[0], tuple) else (new[0],)), new[1]


class _BackwardHooks:
    """One call's backward hooks (PyTorch's BackwardHook). The inputs that require grad are
    replaced by views whose gradients all pass through one node, and so are the outputs: the
    engine hands such a node the gradients of all its outputs at once (Function.output_ids),
    so the hooks see grad_input and grad_output whole, and may replace them."""

    def __init__(self, module, hooks, pre_hooks):
        self.module, self.grad_output, self.has_input_node = module, None, False
        # the hooks there were at forward time, as PyTorch: one removed before backward
        # still runs for this call, one added after it does not
        self.hooks, self.pre_hooks = hooks, pre_hooks

    def on_inputs(self, args):
        # the shape of each tensor argument, for the zeros of one that no gradient reaches
        self.blanks = [(a.shape, a.dtype, a.device) if isinstance(a, Tensor) else None
                       for a in args]
        # a flag, not the node: the node's `run` is a method of this object (a cycle)
        args, node = _through_node(args, self._input_grads)
        self.has_input_node = node is not None
        return args

    def on_output(self, out):
        single = isinstance(out, Tensor)
        if not single and not isinstance(out, tuple):
            warnings.warn(f"{type(self.module).__name__}: backward hooks run only for a module "
                          f"whose output is a Tensor or a tuple, got {type(out).__name__}",
                          stacklevel=4)
            return out
        self.n_out = 1 if single else len(out)
        wrapped, _ = _through_node((out,) if single else out, self._output_grads)
        return wrapped[0] if single else wrapped

    def _output_grads(self, at, grads):
        """The node after the module: the pre hooks, then (if no input needs a gradient)
        the hooks. grads: those of the outputs at positions `at` of the output tuple."""
        module, grad_output = self.module, [None] * self.n_out
        for i, g in zip(at, grads):
            grad_output[i] = g
        grad_output = tuple(grad_output)
        for hook in self.pre_hooks:
            new = hook(module, grad_output)
            if new is not None:
                grad_output = _checked(new, grad_output, hook, "pre hook", "grad_output")
        self.grad_output = grad_output
        if not self.has_input_node:      # no input requires grad: no input node will call
            nothing = (None,) * len(self.blanks)
            for hook in self.hooks:
                new = hook(module, nothing, grad_output)
                if new is not None and any(g is not None for g in new):
                    raise RuntimeError(f"{_name(hook)}: a backward hook of a module none of "
                                       f"whose inputs requires grad must return None (or "
                                       f"None for every input)")
        return tuple(grad_output[i] for i in at)

    def _input_grads(self, at, grads):
        """The node before the module: the hooks, on every positional input's gradient."""
        from minigrad.creation import zeros
        module = self.module
        if self.grad_output is None:     # the gradient came round the outputs (a list, say,
            return grads                 # or a double backward): no hook runs, as PyTorch
        grad_input = [None if b is None else zeros(b[0], dtype=b[1], device=b[2])
                      for b in self.blanks]
        for i, g in zip(at, grads):
            if g is not None:
                grad_input[i] = g
        grad_input = tuple(grad_input)
        for hook in self.hooks:
            new = hook(module, grad_input, self.grad_output)
            if new is not None:
                grad_input = _checked(new, grad_input, hook, "hook", "grad_input")
        return tuple(grad_input[i] for i in at)


class _PassThrough(Function):
    """The node of _through_node: its outputs are its inputs (views of them); backward hands
    their gradients to `run(at, grads)` and passes on what that returns."""
    needs_values = False

    def backward(self, grads):
        return self.run(self.at, grads)


def _through_node(values, run):
    """`values` with each tensor that requires grad replaced by a view of it, all of them the
    outputs of one _PassThrough node (None when there is none)."""
    at = [i for i, v in enumerate(values) if isinstance(v, Tensor) and v.requires_grad]
    if not at:
        return values, None
    node, type_, values = _PassThrough(), type(values), list(values)
    node.run, node.at = run, at
    views = []
    for i in at:
        t = values[i]
        views.append(Tensor._make(t._data.view(), t.device))
        views[-1]._version_counter = t._version_counter       # a view: counts with t
    record_outputs(node, [values[i] for i in at], views)
    for i, v in zip(at, views):
        values[i] = v
    # a named tuple (a PackedSequence, values and indices) stays one, as PyTorch's
    return (tuple(values) if type_ is tuple else type_(*values)), node


def hooks_of(module, kind):
    """The functions of one kind of hook registered on `module` (by _add_hook), in order."""
    return list(module.__dict__.get(kind, {}).values())


def _name(hook):
    return getattr(hook, "__name__", type(hook).__name__)


def _checked(new, old, hook, kind, what):
    """A hook's replacement for `old` (a tuple of gradients): as many, each None or a tensor
    shaped as the one it replaces."""
    new = new if isinstance(new, tuple) else (new,)
    if len(new) != len(old):
        raise RuntimeError(f"backward {kind} {_name(hook)!r} returned {len(new)} {what}, "
                           f"expected {len(old)} (one per entry, None to drop one)")
    for i, (n, o) in enumerate(zip(new, old)):
        if n is not None and (not isinstance(n, Tensor) or
                              (o is not None and n.shape != o.shape)):
            got = n.shape if isinstance(n, Tensor) else type(n).__name__
            raise RuntimeError(f"backward {kind} {_name(hook)!r}: {what}[{i}] must be None or "
                               f"a tensor of shape {None if o is None else o.shape}, got {got}")
    return new


from minigrad.tensor import Tensor  # noqa: E402  (tensor.py imports nn, which imports this)
