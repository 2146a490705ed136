"""torch's top-level switches and queries that a port meets outside the math: mg.compile
(eager: the model comes back as it is), set_warn_always, the inter-op thread count,
typename, is_storage, is_inference_mode_enabled and is_inference.

set_default_device / get_default_device and `with mg.device(...)` live in
backend_device.py (exported from minigrad/__init__.py).
"""
from minigrad.grad_mode import is_inference_mode_enabled  # noqa: F401
from minigrad.tensor import Tensor

_COMPILE_MODES = ("default", "reduce-overhead", "max-autotune",
                  "max-autotune-no-cudagraphs", "lite")


def _check_compile(fullgraph, dynamic, backend, mode, options, disable, name,
                   recompile_limit, isolate_recompiles):
    """torch.compile's arguments, checked for their types (then unused)."""
    if name is not None and not isinstance(name, str):
        raise TypeError(f"mg.compile: name must be None or a str, got {name!r}")
    if recompile_limit is not None and (isinstance(recompile_limit, bool) or
                                        not isinstance(recompile_limit, int)):
        raise TypeError(f"mg.compile: recompile_limit must be None or an int, got "
                        f"{recompile_limit!r}")
    for arg, value in (("fullgraph", fullgraph), ("disable", disable),
                       ("isolate_recompiles", isolate_recompiles)):
        if not isinstance(value, bool):
            raise TypeError(f"mg.compile: {arg} must be a bool, got {value!r}")
    if dynamic is not None and not isinstance(dynamic, bool):
        raise TypeError(f"mg.compile: dynamic must be None, True or False, got {dynamic!r}")
    if backend is not None and not isinstance(backend, str) and not callable(backend):
        raise TypeError(f"mg.compile: backend must be a name (\"inductor\", ...) or a "
                        f"callable, got {type(backend).__name__}")
    if mode is not None and mode not in _COMPILE_MODES:
        raise ValueError(f"mg.compile: unknown mode {mode!r}; valid: None, "
                         f"{', '.join(map(repr, _COMPILE_MODES))}")
    if options is not None and not isinstance(options, dict):
        raise TypeError(f"mg.compile: options must be a dict, got {type(options).__name__}")
    if mode is not None and options is not None:
        raise ValueError("mg.compile: give mode or options, not both (as torch.compile)")


def compile(model=None, *, fullgraph=False, dynamic=None, backend="inductor",  # noqa: A001
            mode=None, options=None, name=None, disable=False, recompile_limit=None,
            isolate_recompiles=False, shapes_spec=None):
    """torch.compile's signature (PyTorch 2.13's); minigrad runs eagerly and has no
    compiler, so `model` (a module or function) comes back unchanged and runs as it did.
    As a decorator too: `@mg.compile` or `@mg.compile(mode="max-autotune")`. The
    arguments are checked, then ignored."""
    settings = dict(fullgraph=fullgraph, dynamic=dynamic, backend=backend, mode=mode,
                    options=options, name=name, disable=disable,
                    recompile_limit=recompile_limit, isolate_recompiles=isolate_recompiles)
    _check_compile(**settings)
    if model is None:                        # @mg.compile(...): the decorator
        return lambda fn: compile(fn, **settings, shapes_spec=shapes_spec)
    if not callable(model):
        raise TypeError(f"mg.compile: expected a module or a function to compile, got "
                        f"{type(model).__name__}")
    return model


_settings = {"warn_always": False, "interop_threads": 1}


def set_warn_always(b):
    """Recorded, as torch's flag (minigrad's warnings follow Python's own filters)."""
    if not isinstance(b, bool):
        raise TypeError(f"set_warn_always: expected a bool, got {type(b).__name__} {b!r}")
    _settings["warn_always"] = b


def is_warn_always_enabled():
    return _settings["warn_always"]


def set_num_interop_threads(n):
    """Recorded only: minigrad runs no inter-op thread pool (mg.set_num_threads sets the
    threads an op's own work uses)."""
    if isinstance(n, bool) or not isinstance(n, int) or n < 1:
        raise ValueError(f"set_num_interop_threads: expected a positive integer, got {n!r}")
    _settings["interop_threads"] = n


def get_num_interop_threads():
    return _settings["interop_threads"]


def typename(obj):
    """A tensor's type string (t.type(): 'minigrad.FloatTensor'); else, as torch.typename,
    the qualified name of what has one (a class, a function: "math.sqrt", a module:
    "os") and of the class of anything else ("int", "minigrad.nn.layers.Linear")."""
    if isinstance(obj, Tensor):
        return obj.type()
    if hasattr(obj, "__qualname__") or hasattr(obj, "__name__"):
        module = getattr(obj, "__module__", None)
        qualname = getattr(obj, "__qualname__", None) or obj.__name__
    else:
        module, qualname = type(obj).__module__, type(obj).__qualname__
    return qualname if module in (None, "", "builtins") else f"{module}.{qualname}"


def is_storage(obj):
    """False: minigrad has no storages (a tensor's data is its array)."""
    return False


def is_inference(input):
    """False: minigrad's inference_mode is no_grad and makes no inference tensors."""
    if not isinstance(input, Tensor):
        raise TypeError(f"mg.is_inference: expected a Tensor, got {type(input).__name__}")
    return input.is_inference()


__all__ = [_name for _name, _f in list(globals().items())
           if callable(_f) and getattr(_f, "__module__", None) == __name__
           and not _name.startswith("_")] + ["is_inference_mode_enabled"]
