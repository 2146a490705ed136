"""torch.use_deterministic_algorithms for code ported from PyTorch: minigrad's CPU ops are
deterministic already (no atomics, fixed reduction orders), so the flag is only recorded and
reported back; it changes no op."""
_state = {"enabled": False, "warn_only": False}


def use_deterministic_algorithms(mode, *, warn_only=False):
    """Record the flag, as torch's (which minigrad, deterministic on CPU, needs no more)."""
    if not isinstance(mode, bool):
        raise TypeError(f"use_deterministic_algorithms: mode must be a bool, got "
                        f"{type(mode).__name__}")
    _state.update(enabled=mode, warn_only=bool(warn_only))


def are_deterministic_algorithms_enabled():
    return _state["enabled"]


def is_deterministic_algorithms_warn_only_enabled():
    return _state["enabled"] and _state["warn_only"]
